"""Seed 003's rod: its data, mesh and closed forms, and the rod as an axial-only model.

The model has nu = 0 and its transverse components clamped.
"""

import dolfinx.mesh as dmesh
import numpy as np
from mpi4py import MPI

import dolfinx_mbs as mbs

# seed 003's rod: L = 1 m, 1 kg, A = 0.2 cm^2, E = 210 GPa
ROD = dict(L=1.0, A=0.2e-4, E=210e9, mass=1.0)
ROD["rho"] = ROD["mass"] / (ROD["A"] * ROD["L"])
ROD["side"] = float(np.sqrt(ROD["A"]))


def rod_mesh(comm, n, dim=3, cell="hex"):
    """The rod along x from 0 to L: square section in 3D, a strip of width `side` in 2D."""
    L, a = ROD["L"], ROD["side"]
    if dim == 3:
        ct = dmesh.CellType.hexahedron if cell == "hex" else dmesh.CellType.tetrahedron
        return dmesh.create_box(comm, [np.array([0.0, 0.0, 0.0]), np.array([L, a, a])],
                                [n, 1, 1], ct)
    ct = dmesh.CellType.quadrilateral if cell == "quad" else dmesh.CellType.triangle
    return dmesh.create_rectangle(comm, [np.array([0.0, 0.0]), np.array([L, a])], [n, 1], ct)


def rod_exact(omega, n_modes=3):
    """Closed forms (docs/theory.md section 6): tip elongation and axial frequencies."""
    E, rho, L = ROD["E"], ROD["rho"], ROD["L"]
    beta = omega * np.sqrt(rho / E)
    tip = np.tan(beta * L) / beta - L if omega > 0 else 0.0
    k = (2 * np.arange(1, n_modes + 1) - 1) * np.pi / (2 * L)
    w2 = E / rho * k**2 - omega**2
    return tip, np.sign(w2) * np.sqrt(np.abs(w2))


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
