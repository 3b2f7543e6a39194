"""Small bodies of every cell kind in a general moving frame, and the assembled comparisons the
form tests use."""

import numpy as np
from dolfinx import fem
from dolfinx import mesh as dmesh
from dolfinx.fem import petsc as fpetsc
from mpi4py import MPI
from petsc4py import PETSc

import dolfinx_mbs as mbs


def mat(a):
    A = fpetsc.assemble_matrix(fem.form(a))
    A.assemble()
    return A


def vec(L):
    b = fpetsc.assemble_vector(fem.form(L))
    b.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
    return b


def rel_mat(A, B):
    D = A.copy()
    D.axpy(-1.0, B, structure=PETSc.Mat.Structure.DIFFERENT_NONZERO_PATTERN)
    return D.norm(PETSc.NormType.FROBENIUS) / B.norm(PETSc.NormType.FROBENIUS)


def rel_vec(a, b):
    return (a - b).norm() / b.norm()


def general_frame():
    Rz = lambda t: mbs.frames.rotation_about((0, 0, 1), 0.8 * t**2)  # noqa: E731
    Rx = lambda t: mbs.frames.rotation_about((1, 0.5, 0), 0.3 * np.sin(2 * t))  # noqa: E731
    return mbs.frames.Prescribed(rotation=lambda t: Rz(t) @ Rx(t),
                                 origin=lambda t: (np.cos(t), t**2, np.sin(3 * t)))


CASES = [
    (3, dmesh.CellType.tetrahedron, 1),
    (3, dmesh.CellType.hexahedron, 2),
    (2, dmesh.CellType.triangle, 2),
    (2, dmesh.CellType.quadrilateral, 1),
]


def make_body(dim, cell, degree, stiffening=None):
    comm = MPI.COMM_WORLD
    if dim == 3:
        mesh = dmesh.create_box(comm, [np.array([0.1, -0.2, 0.0]), np.array([1.0, 0.3, 0.2])],
                                [4, 3, 2], cell)
        mat_ = mbs.materials.LinearElastic(E=2.0e11, nu=0.3, density=7800.0)
        frame = general_frame()
    else:
        mesh = dmesh.create_rectangle(comm, [np.array([0.1, -0.2]), np.array([1.0, 0.3])],
                                      [5, 3], cell)
        mat_ = mbs.materials.PlaneStress(E=7.0e10, nu=0.33, density=2700.0, thickness=0.01)
        frame = mbs.frames.Planar(theta=lambda t: 0.7 * t**2 + 0.2 * t,
                                  origin=lambda t: (np.cos(t), t**2))
    body = mbs.Body(mesh, mat_, frame, degree=degree, stiffening=stiffening)
    state = frame.state(0.9)
    assert np.all(np.abs(state.alpha[2]) > 0.1) and np.abs(state.omega[2]) > 0.1
    body.set_state(state)
    return body
