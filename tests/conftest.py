import gc

import dolfinx.mesh as dmesh
import numpy as np
import pytest
from mpi4py import MPI


def pytest_collection_modifyitems(config, items):
    if MPI.COMM_WORLD.size > 1:
        skip = pytest.mark.skip(reason="serial-only test")
        for item in items:
            if "serial" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def collective_cleanup():
    """Collective PETSc destructors must run on every rank at the same point. petsc4py defers
    the destruction of collected objects of parallel communicators to
    ``PETSc.garbage_cleanup(comm)``; this cleans those of COMM_WORLD. Those made on a model's
    meshes' and spaces' communicators are destroyed when the next model is made
    (:mod:`dolfinx_mbs.lifetime`; before, they stayed until the process ended, ~12
    communicators a model, and the Makefile split the 2-rank suite into processes)."""
    yield
    gc.collect()
    from petsc4py import PETSc

    if hasattr(PETSc, "garbage_cleanup"):
        PETSc.garbage_cleanup()
    MPI.COMM_WORLD.Barrier()


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
