"""Builds seed 003's rod as an axial-only model (nu = 0, transverse components clamped)."""

import numpy as np
from conftest import ROD, rod_mesh
from mpi4py import MPI

import dolfinx_mbs as mbs


def axial_rod(comm, n, omega, dim=3, cell=None, degree=2):
    cell = cell or ("hex" if dim == 3 else "quad")
    mesh = rod_mesh(comm, n, dim, cell)
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=omega)
    if dim == 3:
        mat = mbs.materials.LinearElastic(E=ROD["E"], nu=0.0, density=ROD["rho"])
    else:
        mat = mbs.materials.PlaneStress(E=ROD["E"], nu=0.0, density=ROD["rho"],
                                        thickness=ROD["side"])
    body = mbs.Body(mesh, mat, frame, degree=degree)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=range(1, dim))
    return model, body


def tip_displacement(body):
    """Mean u_x over the nodes at x = L, on every rank."""
    V = body.V
    n = V.dofmap.index_map.size_local
    x = V.tabulate_dof_coordinates()[:n]
    at_tip = np.isclose(x[:, 0], ROD["L"])
    bs = V.dofmap.index_map_bs
    vals = body.u.x.array[: n * bs].reshape(n, bs)[at_tip, 0]
    s = body.comm.allreduce(vals.sum(), op=MPI.SUM)
    c = body.comm.allreduce(len(vals), op=MPI.SUM)
    return s / c
