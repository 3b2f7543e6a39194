"""The sector meshes of dolfinx_mbs.meshes.sectors against closed forms: their volumes and
tagged areas (second-order cells follow the round surfaces), the cut faces matched node for
node by a turn of 2 pi / N (the pairing of dolfinx_mbs.cyclic.Sector at 1e-10 of the
extent), and bad arguments."""

import math

import numpy as np
import pytest
import ufl
from dolfinx import fem
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

COMM = MPI.COMM_WORLD
Q = {"quadrature_degree": 6}


def total(form):
    return COMM.allreduce(fem.assemble_scalar(fem.form(form)), op=MPI.SUM)


def _pairs(msh, ft, n):
    """The sector's pairing (raises when the cut faces do not match to 1e-10)."""
    sector = mbs.cyclic.Sector(n, low=(ft, meshes.LOW), high=(ft, meshes.HIGH), tol=1e-10)
    body = mbs.Body(msh, mbs.materials.LinearElastic(E=1.0, nu=0.3, density=1.0),
                    mbs.frames.ConstantSpin(rate=0.0), cyclic=sector)
    model = mbs.Model([body])
    return model.wheel.pairs[0]


@pytest.mark.parametrize("kind", ["tetrahedra", "hexahedra"])
def test_disk_sector(kind):
    n, ri, ro, t = 10, 0.05, 0.2, 0.02
    args = {"size": 0.02} if kind == "tetrahedra" else {"cells": (4, 3, 1)}
    msh, _, ft = meshes.disk_sector(COMM, n_sectors=n, inner_radius=ri, outer_radius=ro,
                                    thickness=t, **args)
    assert mbs.compat.geometry_degree(msh) == 2
    dx = ufl.Measure("dx", domain=msh, metadata=Q)
    ds = ufl.Measure("ds", domain=msh, subdomain_data=ft, metadata=Q)
    one = fem.Constant(msh, 1.0)
    exact = math.pi * (ro ** 2 - ri ** 2) * t / n
    assert total(one * dx) == pytest.approx(exact, rel=1e-5)
    assert total(one * ds(meshes.BORE)) == pytest.approx(2 * math.pi * ri * t / n, rel=1e-5)
    for tag in (meshes.LOW, meshes.HIGH):
        assert total(one * ds(tag)) == pytest.approx((ro - ri) * t, rel=1e-12)
    p = _pairs(msh, ft, n)
    assert p.n_high > 0


def test_straight_cells_are_polygons():
    """order=1: the round surfaces become polygons, the volume falls short."""
    n, ri, ro, t = 10, 0.05, 0.2, 0.02
    msh, _, ft = meshes.disk_sector(COMM, n_sectors=n, inner_radius=ri, outer_radius=ro,
                                    thickness=t, cells=(4, 3, 1), order=1)
    assert mbs.compat.geometry_degree(msh) == 1
    vol = total(fem.Constant(msh, 1.0) * ufl.dx(domain=msh))
    exact = math.pi * (ro ** 2 - ri ** 2) * t / n
    chord = 3 / (2 * math.pi / n) * math.sin(2 * math.pi / n / 3)   # polygon of 3 sides
    assert vol == pytest.approx(exact * chord, rel=1e-10)


def test_bladed_sector():
    n, ri, ro, t = 24, 0.05, 0.2, 0.02
    L, c, tb = 0.1, 0.03, 0.004
    msh, _, ft = meshes.bladed_sector(COMM, n_sectors=n, inner_radius=ri, outer_radius=ro,
                                      thickness=t, blade_length=L, blade_chord=c,
                                      blade_thickness=tb, stagger_degrees=30.0)
    ds = ufl.Measure("ds", domain=msh, subdomain_data=ft, metadata=Q)
    one = fem.Constant(msh, 1.0)
    assert total(one * ds(meshes.BLADE_TIP)) == pytest.approx(c * tb, rel=1e-10)
    for tag in (meshes.LOW, meshes.HIGH):
        assert total(one * ds(tag)) == pytest.approx((ro - ri) * t, rel=1e-12)
    # the blade's tip lies at r = rim + length, its corners turned by the stagger
    x = msh.geometry.x
    b = math.radians(30.0)
    corner = math.hypot(ro + L, tb / 2 * math.cos(b) + c / 2 * math.sin(b))
    assert COMM.allreduce(float(np.hypot(x[:, 0], x[:, 1]).max(initial=0.0)),
                          op=MPI.MAX) == pytest.approx(corner, rel=1e-9)
    assert _pairs(msh, ft, n).n_high > 0


@pytest.mark.parametrize("kwargs, match", [
    ({"n_sectors": 1}, "n_sectors must be an integer >= 2"),
    ({"inner_radius": 0.3}, r"outer_radius \(0.25\) must exceed inner_radius"),
    ({"thickness": -1.0}, "thickness"),
    ({"order": 3}, "order must be 1 or 2"),
])
def test_disk_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        meshes.disk_sector(COMM, **kwargs)


def test_blade_errors():
    with pytest.raises(ValueError, match="blade_thickness .* must be thinner than the sector"):
        meshes.bladed_sector(COMM, n_sectors=24, blade_thickness=0.1)
    with pytest.raises(ValueError, match="stagger_degrees must lie in"):
        meshes.bladed_sector(COMM, stagger_degrees=95.0)
