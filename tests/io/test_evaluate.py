"""Fields read at points (dolfinx_mbs.io.evaluate) against interpolated closed forms.

Quadratic polynomials lie in the P2 spaces of quadrilaterals and hexahedra, and linear ones in
P1, so interpolation reproduces them and the values anywhere in the mesh are the closed form's
to round-off, on any number of ranks.
"""

import dolfinx.mesh as dm
import numpy as np
import pytest
from dolfinx import fem
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import compat

COMM = MPI.COMM_WORLD


def quadratic(x):
    """A vector field in P2 of quadrilaterals and hexahedra."""
    return np.vstack([1.0 + x[0] ** 2 - 2.0 * x[1], x[0] * x[1] + 0.5 * x[1] ** 2,
                      x[0] * x[1] * x[2] - x[2]])


def points_inside(dim, n=17):
    """Points spread over the unit box (the same on every rank), corners and an edge included."""
    rng = np.random.default_rng(7)
    p = rng.uniform(0.0, 1.0, (n, 3))
    p[:, dim:] = 0.0
    p[0], p[1] = 0.0, 1.0
    p[1, dim:] = 0.0
    p[2, 1:] = 0.0  # on an edge
    return p


@pytest.mark.parametrize("dim", [2, 3])
def test_vector_field_at_points(dim):
    """P2 displacement of the quadratic, read at points.

    The values at points inside cells, at corners and on edges are the closed form's to 1e-13,
    on every rank.
    """
    mesh = (dm.create_unit_square(COMM, 3, 4, dm.CellType.quadrilateral) if dim == 2 else
            dm.create_unit_cube(COMM, 2, 3, 2, dm.CellType.hexahedron))
    u = fem.Function(compat.vector_space(mesh, 2))
    u.interpolate(lambda x: quadratic(x)[:dim])
    p = points_inside(dim)
    got = mbs.io.evaluate(u, p[:, :dim])
    assert got.shape == (len(p), dim)
    assert np.abs(got - quadratic(p.T)[:dim].T).max() <= 1e-13
    # the same array on every rank
    assert all(np.array_equal(got, g) for g in COMM.allgather(got))
    one = mbs.io.evaluate(u, p[5])  # one point: its values
    assert one.shape == (dim,) and np.abs(one - quadratic(p[5:6].T)[:dim, 0]).max() <= 1e-13


def test_scalar_field_and_a_body():
    """A P1 scalar field (linear: exact), and a body's displacement set to the quadratic."""
    mesh = dm.create_unit_cube(COMM, 2, 2, 3, dm.CellType.tetrahedron)
    V = fem.functionspace(mesh, ("Lagrange", 1)) if hasattr(fem, "functionspace") else \
        fem.FunctionSpace(mesh, ("Lagrange", 1))
    f = fem.Function(V)
    f.interpolate(lambda x: 1.0 + 2.0 * x[0] - 3.0 * x[1] + 0.5 * x[2])
    p = points_inside(3)
    got = mbs.io.evaluate(f, p)
    assert got.shape == (len(p),)
    assert np.abs(got - (1.0 + 2.0 * p[:, 0] - 3.0 * p[:, 1] + 0.5 * p[:, 2])).max() <= 1e-13
    box = dm.create_box(COMM, [np.zeros(3), np.ones(3)], [2, 2, 2], dm.CellType.hexahedron)
    body = mbs.Body(box, mbs.materials.LinearElastic(E=1e9, nu=0.3, density=1.0),
                    mbs.frames.ConstantSpin(rate=1.0), degree=2)
    body.u.interpolate(quadratic)
    assert np.abs(mbs.io.evaluate(body.u, p) - quadratic(p.T).T).max() <= 1e-13


def test_point_outside_the_mesh():
    """A point outside: a ValueError on every rank naming the point and the mesh's extent."""
    mesh = dm.create_rectangle(COMM, [np.zeros(2), np.array([2.0, 0.5])], [4, 2],
                               dm.CellType.quadrilateral)
    u = fem.Function(compat.vector_space(mesh, 1), name="u")
    with pytest.raises(ValueError, match=r"point \[2.5, 0.25\] lies in no cell of the mesh "
                                         r"of 'u' \(the mesh spans \[0, 2\] x \[0, 0.5\]\)"):
        mbs.io.evaluate(u, [(1.0, 0.25), (2.5, 0.25)])
    with pytest.raises(ValueError, match=r"points must be finite, got \[nan, 0.0\]"):
        mbs.io.evaluate(u, [(np.nan, 0.0)])
    with pytest.raises(ValueError, match=r"points must be .* of 2 \(or 3\) coordinates"):
        mbs.io.evaluate(u, [(1.0, 0.0, 0.0, 0.0)])
