"""A thin annular plate clamped at its bore, from a sector of 12 (curved second-order
hexahedra of dolfinx_mbs.meshes.disk_sector, one through the thickness), against Kirchhoff's
characteristic determinant in Bessel functions (tests/models/plates.py) for n = 0 ... 6 nodal
diameters, h/a = 0.01: the lowest frequency of each harmonic index k = n.

The CI mesh (8 x 6 cells in r and theta, 2e3 dofs) is within 1.5 %: its discretization error,
0.9 % measured, falls as the square of the cell size (0.32 % with 16 x 12 cells, the slow test,
which holds the issue's 1 %; docs/validation.md section 10 has both tables)."""

import numpy as np
import pytest

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes
from tests.models.plates import frequencies, roots, shooting_root

A, B, H = 1.0, 0.5, 0.01
E, NU, RHO = 210e9, 0.3, 7850.0
N = 12


def test_determinant_against_shooting():
    """The determinant's roots against the plate's ODE integrated from the clamped edge (no
    Bessel function), to 1e-9."""
    for n in (0, 1, 3, 6):
        for r in roots(n, B / A, NU, 2):
            assert shooting_root(n, B / A, NU, r) == pytest.approx(r, rel=1e-9)


def plate(cells):
    msh, _, ft = meshes.disk_sector(n_sectors=N, inner_radius=B, outer_radius=A,
                                    thickness=H, cells=cells)
    sector = mbs.cyclic.Sector(N, low=(ft, meshes.LOW), high=(ft, meshes.HIGH))
    body = mbs.Body(msh, mbs.materials.LinearElastic(E=E, nu=NU, density=RHO),
                    mbs.frames.ConstantSpin(rate=0.0), degree=2, cyclic=sector)
    model = mbs.Model([body])
    model.clamp(body, facets=(ft, meshes.BORE))
    return model


def lowest_errors(cells):
    model = plate(cells)
    out = []
    for k in range(7):
        w = model.natural_frequencies(n=1, harmonic=k)[0]
        out.append(w / frequencies(k, A, B, H, E, NU, RHO, 1)[0] - 1.0)
    return np.array(out)


def test_plate_coarse():
    err = lowest_errors((8, 6, 1))
    assert np.all(np.abs(err) < 0.015), err


@pytest.mark.slow
def test_plate_within_one_percent():
    err = lowest_errors((16, 12, 1))
    assert np.all(np.abs(err) < 0.01), err
