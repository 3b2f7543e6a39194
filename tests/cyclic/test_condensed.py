"""All harmonic indices from one factorization of the sector (``Model.harmonic_frequencies``,
:mod:`dolfinx_mbs.cyclic.condensed`) against the whole wheel meshed as one body and against each
index's own two-copy system; where the method does not apply it says so and the two-copy
systems give the same numbers."""

import numpy as np
import pytest

import dolfinx_mbs as mbs
from tests.models.wheels import sector_model, union_below, wheel_model


@pytest.mark.parametrize("n_sectors, rate, stiff", [(6, 0.0, None), (7, 2500.0, "prestress")])
def test_condensed_is_the_wheels(n_sectors, rate, stiff):
    """Every frequency of the whole wheel below the sector lists' common top, to 1e-8, at rest
    (N even: k = N/2 real) and spinning with prestress and spin softening (N odd); each index
    equal to its two-copy system's to 1e-9."""
    model, body, sector, msh = sector_model(n_sectors, rate, stiffening=stiff)
    s = model.harmonic_frequencies(n=6)
    assert s.method == ("condensed",) * len(sector.harmonics) and s.reason is None
    np.testing.assert_array_equal(s.harmonic, list(sector.harmonics))
    per_k = {int(k): w for k, w in zip(s.harmonic, s.frequencies)}
    union, cut = union_below(per_k, n_sectors)
    wheel = mbs.cyclic.WheelMesh(msh, sector)
    wmodel, _ = wheel_model(wheel, rate, stiffening=stiff)
    whole = wmodel.natural_frequencies(n=len(union) + 2)
    assert len(union) >= 2 * n_sectors
    assert np.all(whole[len(union):] > cut * (1 + 1e-9))
    np.testing.assert_allclose(whole[: len(union)], union, rtol=1e-8)
    for k in (1, n_sectors // 2):
        np.testing.assert_allclose(s[k], model.natural_frequencies(n=6, harmonic=k),
                                   rtol=1e-9)


def test_subset_odd_n_and_repeat():
    """A list of indices in any order, n odd (a pair cut in half), called twice: the same
    numbers as the two-copy systems (1e-9)."""
    model, body, sector, msh = sector_model(6, 2000.0, stiffening="prestress")
    a = model.harmonic_frequencies(n=5, harmonics=[3, 1])
    b = model.harmonic_frequencies(n=5, harmonics=[1, 3])
    np.testing.assert_array_equal(a.harmonic, [1, 3])
    np.testing.assert_array_equal(a.frequencies, b.frequencies)
    ref = model.harmonic_frequencies(n=5, harmonics=[1, 3], method="two-copy")
    assert ref.method == ("two-copy", "two-copy")
    np.testing.assert_allclose(a.frequencies, ref.frequencies, rtol=1e-9)
    assert a.frequencies.shape == (2, 5)


def test_where_it_does_not_apply():
    """Nonlinear strain: the two-copy systems answer (``method``, ``reason`` say so), with
    their numbers; ``method="condensed"`` refuses it by name; the refusal leaves nothing that
    changes the next answer."""
    model, body, sector, msh = sector_model(6, 3000.0, stiffening="nonlinear")
    s = model.harmonic_frequencies(n=4, harmonics=[0, 2])
    assert s.method == ("two-copy", "two-copy") and "nonlinear" in s.reason
    with pytest.raises(ValueError, match="condensed method does not apply: nonlinear"):
        model.harmonic_frequencies(n=4, harmonics=[0, 2], method="condensed")
    again = model.harmonic_frequencies(n=4, harmonics=[0, 2])
    np.testing.assert_allclose(again.frequencies, s.frequencies, rtol=1e-10)  # (2 ranks: 4e-13)
    np.testing.assert_allclose(s[2], model.natural_frequencies(n=4, harmonic=2), rtol=1e-12)


def test_free_sector_falls_back():
    """An unclamped wheel (free motions in k = 0 and k = 1): not condensed, the two-copy
    systems deflate the free motions."""
    from tests.models.wheels import HIGH, LOW, RADII, STEEL, THICKNESS, annular_sector

    msh, tags = annular_sector(6, (3, 2, 1), RADII, THICKNESS)
    sector = mbs.cyclic.Sector(6, low=(tags, LOW), high=(tags, HIGH))
    body = mbs.Body(msh, mbs.materials.LinearElastic(**STEEL),
                    mbs.frames.ConstantSpin(rate=0.0), degree=2, cyclic=sector)
    model = mbs.Model([body])
    s = model.harmonic_frequencies(n=4, harmonics=[0, 1, 2])
    assert s.method[:2] == ("two-copy", "two-copy")
    for k in (0, 1, 2):
        np.testing.assert_allclose(s[k], model.natural_frequencies(n=4, harmonic=k),
                                   rtol=1e-8)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=0), "n must be a positive integer"),
    (dict(n=2.5), "n must be a positive integer"),
    (dict(method="complex"), "method must be"),
    (dict(harmonics=4), "harmonic"),
    (dict(harmonics="some"), "harmonics must be"),
])
def test_bad_input(kwargs, match):
    """Bad arguments: a clear error naming them, on every rank."""
    model, *_ = sector_model(6)
    with pytest.raises(ValueError, match=match):
        model.harmonic_frequencies(**kwargs)


def test_not_cyclic():
    """A model that is not cyclic is refused by name."""
    from tests.models.wheels import RADII, STEEL, THICKNESS, annular_sector

    msh, _ = annular_sector(6, (2, 2, 1), RADII, THICKNESS)
    model = mbs.Model([mbs.Body(msh, mbs.materials.LinearElastic(**STEEL),
                                mbs.frames.ConstantSpin(rate=0.0), degree=1)])
    with pytest.raises(ValueError, match="harmonic_frequencies: the model is not cyclic"):
        model.harmonic_frequencies()


def test_paired_restores_a_missing_member():
    """A two-copy index's eigenvalues come in equal pairs: a list missing one member of a
    pair (what a Krylov solve returned once, k = 4 of the bladed sector: 2222.19 Hz once and
    2230.73 Hz) is completed, a complete list kept, divergent lists left alone."""
    from dolfinx_mbs.modal.eigen import paired

    a, b, c, e = 1.0, 2.0, 3.0, 3.01
    np.testing.assert_array_equal(paired([a, a, b, b, c, e], 6), [a, a, b, b, c, c])
    np.testing.assert_array_equal(paired([a, a * (1 + 1e-12), b, b, c, c], 5),
                                  [a, a, b, b, c])
    np.testing.assert_array_equal(paired([-1.0, a, a], 3), [-1.0, a, a])


def test_per_index_equals_condensed_on_a_bladed_sector():
    """The bladed sector of the benchmark (coarse, spinning with prestress): every index one
    at a time (two-copy systems) equals every index at once (the condensed complex form) to
    1e-9, pairs included."""
    from mpi4py import MPI

    from dolfinx_mbs import meshes

    mesh, _, facets = meshes.bladed_sector(MPI.COMM_WORLD, n_sectors=24, size=0.03,
                                           blade_size=0.012)
    sector = mbs.cyclic.Sector(24, low=(facets, meshes.LOW), high=(facets, meshes.HIGH))
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0),
                    mbs.frames.ConstantSpin(rate=1000.0), degree=2, stiffening="prestress",
                    cyclic=sector)
    model = mbs.Model([body])
    model.clamp(body, facets=(facets, meshes.BORE))
    s = model.harmonic_frequencies(n=6)
    assert set(s.method) == {"condensed"}
    for k in range(13):
        np.testing.assert_allclose(model.natural_frequencies(n=6, harmonic=k), s[k],
                                   rtol=1e-9)
