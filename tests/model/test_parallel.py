"""Parallel consistency: the same model on all ranks of COMM_WORLD and, as a reference, on a
single process (COMM_SELF) gives the same frequencies and static norms."""

import numpy as np
import ufl
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs


def blade(comm):
    """A twisted-free 3D cantilever with a general spin axis through an offset hub."""
    mesh = dmesh.create_box(comm, [np.array([0.2, 0.0, 0.0]), np.array([1.2, 0.25, 0.15])],
                            [10, 3, 2], dmesh.CellType.hexahedron)
    frame = mbs.frames.ConstantSpin(axis=(0.2, 0.1, 1.0), rate=40.0, origin=(0.0, 0.05, 0.0))
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=70e9, nu=0.33, density=2700.0),
                    frame, degree=2)
    model = mbs.Model([body], gravity=(0.0, -9.81, 0.0))
    model.clamp(body, lambda x: np.isclose(x[0], 0.2))
    body.add_traction((0.0, 0.0, 1.0e4), where=lambda x: np.isclose(x[0], 1.2))
    return model, body


def run(comm):
    model, body = blade(comm)
    u, = model.solve_static(t=0.0)
    l2 = comm.allreduce(fem.assemble_scalar(fem.form(ufl.inner(u, u) * ufl.dx)), op=MPI.SUM)
    energy = comm.allreduce(fem.assemble_scalar(fem.form(ufl.inner(
        body.material.stress(ufl.sym(ufl.grad(u))), ufl.sym(ufl.grad(u))) * ufl.dx)),
        op=MPI.SUM)
    w = model.natural_frequencies(n=4)
    wg = model.natural_frequencies(n=4, gyroscopic=True)
    return np.array([np.sqrt(l2), energy]), w, wg


def test_world_equals_self():
    s_w, w_w, g_w = run(MPI.COMM_WORLD)
    s_s, w_s, g_s = run(MPI.COMM_SELF)
    assert np.allclose(s_w, s_s, rtol=1e-10, atol=0), (s_w, s_s)
    assert np.allclose(w_w, w_s, rtol=1e-10, atol=0), (w_w, w_s)
    assert np.allclose(g_w, g_s, rtol=1e-8, atol=0), (g_w, g_s)
    # the Coriolis coupling changes the frequencies of a blade spinning about a skew axis
    assert np.max(np.abs(g_w / w_w - 1)) > 1e-6
