"""Two models with reduced bases worth testing: a 3D hub spin-up with gravity and damping, and two
2D strips tied in a general planar frame."""

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

COMM = MPI.COMM_WORLD


def spun_up_3d():
    mesh = dmesh.create_box(COMM, [np.zeros(3), np.array([1.0, 0.12, 0.08])], [6, 2, 2],
                            dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=7e10, nu=0.3, density=2700.0, rayleigh=(0.3, 1e-5))
    frame = mbs.frames.SpinUp(axis=(0.2, 0.3, 1.0), final_rate=40.0, ramp_time=1.0,
                              origin=(-0.2, 0.1, 0.0))
    body = mbs.Body(mesh, mat, frame, degree=1, stiffening="prestress")
    model = mbs.Model([body], gravity=(0.0, -9.81, 0.0))
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model


def tied_2d():
    frame = mbs.frames.Planar(theta=lambda t: 0.7 * t**2 + 0.2 * t,
                              origin=lambda t: (0.1 * np.cos(t), 0.05 * t**2))
    mat = mbs.materials.PlaneStress(E=7e10, nu=0.33, density=2700.0, thickness=0.01)
    meshes = [dmesh.create_rectangle(COMM, [np.array([x0, 0.0]), np.array([x0 + 0.5, 0.1])],
                                     [4, 2], dmesh.CellType.quadrilateral) for x0 in (0.0, 0.5)]
    a, b = (mbs.Body(m, mat, frame, degree=2, stiffening="prestress", name=n)
            for m, n in zip(meshes, "ab"))
    model = mbs.Model([a, b])
    model.clamp(a, lambda x: np.isclose(x[0], 0.0))
    model.tie(a, b, lambda x: np.isclose(x[0], 0.5))
    return model
