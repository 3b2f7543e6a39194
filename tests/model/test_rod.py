"""Seed 003's rotating rod against the closed forms of docs/theory.md section 6."""

import numpy as np
import pytest
from mpi4py import MPI

from tests.models.rodmodel import ROD, axial_rod, rod_exact, tip_displacement

W1 = np.pi / (2 * ROD["L"]) * np.sqrt(ROD["E"] / ROD["rho"])  # first axial frequency at rest


def errors(n, omega, dim, degree, cell=None):
    model, body = axial_rod(MPI.COMM_WORLD, n, omega, dim, cell, degree)
    model.solve_static()
    tip_ex, w_ex = rod_exact(omega)
    tip = tip_displacement(body)
    w = model.natural_frequencies(n=3)
    return abs(tip / tip_ex - 1.0), np.abs(w / w_ex - 1.0)


@pytest.mark.parametrize("dim,cell", [(3, "hex"), (3, "tet"), (2, "quad"), (2, "tri")])
def test_modest_mesh_within_0p1_percent(dim, cell):
    """P2, 10 elements: elongation and first three axial frequencies within 0.1 %, at the seed's
    spin (15 rad/s) and at half the first frequency (spin softening matters)."""
    for omega in (15.0, 0.5 * W1):
        e_tip, e_w = errors(10, omega, dim, 2, cell)
        assert e_tip < 1e-3 and np.all(e_w < 1e-3), (omega, e_tip, e_w)


@pytest.mark.parametrize("degree,ns,rate", [(1, (8, 16, 32), 2.0), (2, (2, 4, 8), 4.0)])
def test_convergence_rate(degree, ns, rate):
    """Frequencies converge at O(h^2p) (eigenvalues), elongation at least at O(h^(p+1))."""
    omega = 0.5 * W1
    res = [errors(n, omega, 3, degree) for n in ns]
    e_w1 = np.array([r[1][0] for r in res])
    e_w3 = np.array([r[1][2] for r in res])
    r1 = np.log2(e_w1[:-1] / e_w1[1:])
    r3 = np.log2(e_w3[:-1] / e_w3[1:])
    assert np.all(r1 > 0.9 * 2 * degree), r1
    assert np.all(r3 > 0.9 * 2 * degree), r3
    e_tip = np.array([r[0] for r in res])
    rt = np.log2(e_tip[:-1] / e_tip[1:])
    assert np.all(rt > 0.9 * (degree + 1)), (e_tip, rt)


def test_divergence_speed():
    """As the spin approaches w1(0) the first frequency goes to zero: w1^2 = w1(0)^2 - W^2, to
    the discretisation error of w1(0)^2; above it the first mode is divergent (negative)."""
    for frac in (0.9, 0.99, 0.999, 1.01):
        omega = frac * W1
        model, _ = axial_rod(MPI.COMM_WORLD, 10, omega, 3, None, 2)
        w = model.natural_frequencies(n=2)
        _, w_ex = rod_exact(omega, 2)
        err = abs(np.sign(w[0]) * w[0]**2 - np.sign(w_ex[0]) * w_ex[0]**2) / W1**2
        assert err < 1e-5, (frac, w, w_ex, err)
        assert abs(w[1] / w_ex[1] - 1.0) < 1e-3, (frac, w, w_ex)
        assert np.sign(w[0]) == np.sign(1.0 - frac)


def test_gyroscopic_option_axial_rod():
    """With transverse motion clamped, the Coriolis coupling has nothing to act on: the
    quadratic eigenproblem gives the same frequencies as the symmetric one."""
    model, _ = axial_rod(MPI.COMM_WORLD, 6, 0.5 * W1, 3, None, 2)
    w0 = model.natural_frequencies(n=3)
    w1 = model.natural_frequencies(n=3, gyroscopic=True)
    assert np.allclose(w0, w1, rtol=1e-7)


def test_clamp_on_tagged_facets_equals_predicate():
    from dolfinx import mesh as dmesh

    import dolfinx_mbs as mbs
    from tests.models.rodmodel import rod_mesh

    ws = []
    for how in ("facets", "where"):
        mesh = rod_mesh(MPI.COMM_WORLD, 6, 3, "tet")
        body = mbs.Body(mesh, mbs.materials.LinearElastic(E=ROD["E"], nu=0.3, density=ROD["rho"]),
                        mbs.frames.ConstantSpin(axis=(0, 1, 1), rate=300.0), degree=1)
        model = mbs.Model([body])
        if how == "facets":
            mesh.topology.create_connectivity(2, 3)
            f = dmesh.locate_entities_boundary(mesh, 2, lambda x: np.isclose(x[0], 0.0))
            tags = dmesh.meshtags(mesh, 2, np.sort(f).astype(np.int32), np.full(len(f), 7, np.int32))
            model.clamp(body, facets=(tags, 7))
        else:
            model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        ws.append(model.natural_frequencies(n=4, gyroscopic=True))
    assert np.allclose(ws[0], ws[1], rtol=1e-9)


def test_two_bodies_in_one_model():
    """Two unconnected rods in one model (different spins, 3D and 2D): the model's spectrum is
    the union of the single-body spectra and each static solution is the single-body one."""
    om_a, om_b = 0.3 * W1, 0.6 * W1
    _, wa = rod_exact(om_a, 3)
    _, wb = rod_exact(om_b, 3)
    ma, a = axial_rod(MPI.COMM_WORLD, 8, om_a, 3, None, 2)
    mb, b = axial_rod(MPI.COMM_WORLD, 8, om_b, 2, None, 2)
    wa_fe = ma.natural_frequencies(n=3)
    wb_fe = mb.natural_frequencies(n=3)
    ma.solve_static()
    mb.solve_static()
    tips = [tip_displacement(a), tip_displacement(b)]
    import dolfinx_mbs as mbs
    both = mbs.Model([a, b])
    for body in (a, b):
        both.clamp(body, lambda x: np.isclose(x[0], 0.0))
        both.clamp(body, lambda x: np.full(x.shape[1], True), components=range(1, body.gdim))
    w = both.natural_frequencies(n=6)
    assert np.allclose(w, np.sort(np.concatenate([wa_fe, wb_fe])), rtol=1e-9)
    assert np.allclose(np.sort(w), np.sort(np.concatenate([wa, wb])), rtol=1e-3)
    a.u.x.array[:] = 0.0
    b.u.x.array[:] = 0.0
    both.solve_static()
    assert np.allclose([tip_displacement(a), tip_displacement(b)], tips, rtol=1e-10)


def test_static_solve_refuses_unstable_spin():
    """Above the divergence speed the static equilibrium is unstable: the static solve refuses
    it and counts the negative directions, the same number as the negative spin-softened
    eigenvalues of the modal solve (w1(0) = W1, w2(0) = 3 W1 for the clamped-free rod); below
    it the solve goes through."""
    import re

    for frac, negative in ((0.99, 0), (1.01, 1), (3.05, 2)):
        model, _ = axial_rod(MPI.COMM_WORLD, 10, frac * W1, 3, None, 2)
        w = model.natural_frequencies(n=3)
        assert np.sum(w < 0) == negative, (frac, w)
        if negative == 0:
            model.solve_static()
            continue
        with pytest.raises(RuntimeError, match="negative eigenvalue") as err:
            model.solve_static()
        assert int(re.search(r"has (\d+) negative", str(err.value)).group(1)) == negative


def test_static_solve_refuses_a_body_held_at_one_corner():
    """A spinning bar held at one corner node only: the clamp removes translations, but the
    bar can swing about the corner, which spin softening makes unstable (before: a finite
    answer of metres on a 1 m bar)."""
    from dolfinx import mesh as dmesh

    import dolfinx_mbs as mbs

    mesh = dmesh.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0, 0.1, 0.1])],
                            [10, 2, 2], dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=70e9, nu=0.3, density=2700.0)
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=100.0))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0) & np.isclose(x[1], 0) & np.isclose(x[2], 0))
    with pytest.raises(RuntimeError, match="negative eigenvalue.*one corner"):
        model.solve_static()
