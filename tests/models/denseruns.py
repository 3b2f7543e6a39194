"""Two small runs the steppers are compared on: seed 003's axial rod under a tip load, and a 3D
beam spun up about a skew axis with damping, prestress and a traction."""

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.rodmodel import ROD, axial_rod

COMM = MPI.COMM_WORLD
TIP = (ROD["L"], 0.0, 0.0)


def seed_rod(n=5, degree=1):
    model, body = axial_rod(COMM, n, 15.0, 3, None, degree)
    body.add_traction(lambda t: (1000.0 / ROD["A"] * np.sin(200.0 * t), 0.0, 0.0),
                      where=lambda x: np.isclose(x[0], ROD["L"]))
    return model


def spun_up_beam():
    mesh = dmesh.create_box(COMM, [np.zeros(3), np.array([1.0, 0.1, 0.06])], [5, 1, 1],
                            dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=7e10, nu=0.3, density=2700.0, rayleigh=(0.5, 2e-5))
    frame = mbs.frames.SpinUp(axis=(0.2, 0.3, 1.0), final_rate=60.0, ramp_time=0.02,
                              origin=(-0.1, 0.05, 0.0))
    body = mbs.Body(mesh, mat, frame, degree=1, stiffening="prestress")
    body.add_traction(lambda t: (0.0, 2e5 * np.sin(300.0 * t), 1e5 * t),
                      where=lambda x: np.isclose(x[0], 1.0))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model
