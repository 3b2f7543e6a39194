"""Bad input to cyclic models: a clear error on every rank (run under mpirun -n 2 as well),
and nothing left behind that changes the next answer."""

import numpy as np
import pytest

import dolfinx_mbs as mbs
from tests.models.wheels import (
    BORE,
    HIGH,
    LOW,
    RADII,
    STEEL,
    THICKNESS,
    annular_sector,
    sector_model,
)


@pytest.fixture(scope="module")
def sector6():
    return annular_sector(6, (2, 2, 1), RADII, THICKNESS)


def _body(msh, sector, frame=None):
    frame = frame if frame is not None else mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=10.0)
    return mbs.Body(msh, mbs.materials.LinearElastic(**STEEL), frame, cyclic=sector)


@pytest.mark.parametrize("n", [1, -3, 1.5, "6", True])
def test_sector_count(sector6, n):
    _, tags = sector6
    with pytest.raises(ValueError, match="n_sectors must be an integer >= 2"):
        mbs.cyclic.Sector(n, low=(tags, LOW), high=(tags, HIGH))


def test_faces_given(sector6):
    _, tags = sector6
    with pytest.raises(ValueError, match="give both cut faces"):
        mbs.cyclic.Sector(6, low=(tags, LOW))
    with pytest.raises(TypeError, match="high must be"):
        mbs.cyclic.Sector(6, low=(tags, LOW), high=3)
    with pytest.raises(TypeError, match="the tag of low must be an integer"):
        mbs.cyclic.Sector(6, low=(tags, "low"), high=(tags, HIGH))


@pytest.mark.parametrize("k", [-1, 4, 1.5, True])
def test_harmonic_out_of_range(k):
    model, *_ = sector_model(6, cells=(2, 2, 1), degree=1)
    with pytest.raises(ValueError, match=r"harmonic must be an integer in 0\.\.3 .*N=6"):
        model.natural_frequencies(n=2, harmonic=k)
    with pytest.raises(ValueError, match=r"harmonic must be an integer in 0\.\.3"):
        model.campbell([0.0, 10.0, 20.0], n=2, harmonics=[1, k])
    # the model is left as it was: the next answer is a fresh model's
    w = model.natural_frequencies(n=4, harmonic=1)
    fresh, *_ = sector_model(6, cells=(2, 2, 1), degree=1)
    np.testing.assert_allclose(w, fresh.natural_frequencies(n=4, harmonic=1), rtol=1e-10)


def test_harmonics_words():
    model, *_ = sector_model(6, cells=(2, 2, 1), degree=1)
    with pytest.raises(ValueError, match="harmonics must be 'all'"):
        model.campbell([0.0, 10.0, 20.0], n=2, harmonics="some")
    with pytest.raises(ValueError, match="no harmonic index"):
        model.campbell([0.0, 10.0, 20.0], n=2, harmonics=[])


def test_faces_that_do_not_match(sector6):
    msh, tags = sector6
    # the bore is no turned low face: the high face is named with the largest distance
    with pytest.raises(ValueError, match=r"high cut face does not match the low face turned by "
                                         r"360/6 = 60 degrees.*largest distance .* is "
                                         r"\d\.\d+e-\d+ m"):
        mbs.Model([_body(msh, mbs.cyclic.Sector(6, low=(tags, LOW), high=(tags, BORE)))])
    # a sector of 6 taken for one of 5
    with pytest.raises(ValueError, match="360/5 = 72 degrees"):
        mbs.Model([_body(msh, mbs.cyclic.Sector(5, low=(tags, LOW), high=(tags, HIGH)))])
    # low and high swapped
    with pytest.raises(ValueError, match="they match with low and high swapped"):
        mbs.Model([_body(msh, mbs.cyclic.Sector(6, low=(tags, HIGH), high=(tags, LOW)))])
    # a face that holds nothing
    with pytest.raises(ValueError, match="low cut face: it holds no node"):
        mbs.Model([_body(msh, mbs.cyclic.Sector(6, low=(tags, 99), high=(tags, HIGH)))])


def test_low_face_with_extra_nodes(sector6):
    """A low face larger than the turned high face is named as the low face."""
    msh, tags = sector6
    sector = mbs.cyclic.Sector(6, low=lambda x: np.isclose(x[1], 0.0) | np.isclose(
        np.hypot(x[0], x[1]), RADII[0]), high=(tags, HIGH))
    with pytest.raises(ValueError, match="low cut face does not match the high face"):
        mbs.Model([_body(msh, sector)])


def test_axis_not_the_spin_axis(sector6):
    msh, tags = sector6
    sector = mbs.cyclic.Sector(6, low=(tags, LOW), high=(tags, HIGH))
    with pytest.raises(ValueError, match="is not the frame's spin axis"):
        _body(msh, sector, mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=10.0))
    with pytest.raises(ValueError, match="is not the frame's spin axis"):
        _body(msh, sector, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=10.0,
                                                   origin=(0.01, 0.0, 0.0)))
    with pytest.raises(ValueError, match="its frame must spin about the sector's axis"):
        _body(msh, sector, mbs.frames.Stationary((0, 0, 1), 10.0))
    with pytest.raises(TypeError, match="cyclic must be a dolfinx_mbs.cyclic.Sector"):
        _body(msh, "sector")
    # the same line, the other sense, is the spin axis
    _body(msh, sector, mbs.frames.ConstantSpin(axis=(0, 0, -1), rate=10.0))


def test_not_cyclic_and_mixed(sector6):
    msh, tags = sector6
    plain = mbs.Body(msh, mbs.materials.LinearElastic(**STEEL),
                     mbs.frames.ConstantSpin(rate=1.0))
    model = mbs.Model([plain])
    model.clamp(plain, facets=(tags, BORE))
    for call in (lambda: model.natural_frequencies(n=2, harmonic=1),
                 lambda: model.campbell([0.0, 1.0, 2.0], harmonics="all"),
                 lambda: model.expand([plain.u], harmonic=0)):
        with pytest.raises(ValueError, match="the model is not cyclic"):
            call()
    sector = mbs.cyclic.Sector(6, low=(tags, LOW), high=(tags, HIGH))
    with pytest.raises(ValueError, match="must all be sectors of the wheel"):
        mbs.Model([_body(msh, sector), mbs.Body(msh, mbs.materials.LinearElastic(**STEEL),
                                                mbs.frames.ConstantSpin(rate=10.0))])


def test_expand_wrong_length():
    model, body, *_ = sector_model(6, cells=(2, 2, 1), degree=1)
    with pytest.raises(ValueError, match="takes 2 entries"):
        model.expand([body.u], harmonic=2)
    with pytest.raises(ValueError, match=r"harmonic must be an integer in 0\.\.3"):
        model.expand([body.u], harmonic=5)
