"""The stationary frame's forms (docs/theory.md section 9) against their derivation from the kinetic
energy by UFL (Lagrange's equations), and the identities they rest on."""

import numpy as np
import pytest
import ufl
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI
from petsc4py import PETSc

import dolfinx_mbs as mbs
from dolfinx_mbs import compat
from dolfinx_mbs.forms import stationary as S
from tests.models.formcases import mat, rel_mat, vec

AXIS = np.array([0.2, -0.3, 1.0]) / np.linalg.norm([0.2, -0.3, 1.0])
CENTER = np.array([0.05, -0.02, 0.3])


@pytest.fixture(params=[(dmesh.CellType.tetrahedron, 2), (dmesh.CellType.hexahedron, 1)],
                ids=["tet2", "hex1"])
def space(request):
    cell, degree = request.param
    mesh = dmesh.create_box(MPI.COMM_WORLD, [np.array([-0.2, -0.3, 0.0]),
                                             np.array([0.3, 0.2, 1.0])], [3, 3, 4], cell)
    return compat.vector_space(mesh, degree)


def test_lagrange_route_gives_the_direct_forms(space):
    """The operators of Lagrange's equations of T = int rho/2 |Omega w + u' + Omega d_theta u|^2,
    differentiated by UFL, are the direct forms to round-off: M, Omega g_s, k - Omega^2 k_theta
    + Omega' c_theta, and the loads up to the boundary term of the integration by parts."""
    mesh = space.mesh
    rho = 7800.0
    law = mbs.materials.LinearElastic(E=2.0e11, nu=0.3, density=rho)
    Om, dOm = 37.0, -5.5
    spin = fem.Constant(mesh, compat.scalar_type(Om))
    rate = fem.Constant(mesh, compat.scalar_type(dOm))
    x = ufl.SpatialCoordinate(mesh)
    u, ud, udd = (fem.Function(space) for _ in range(3))
    v, du = ufl.TestFunction(space), ufl.TrialFunction(space)
    route = S.lagrange_route(rho, law, S.Spin(spin, rate), AXIS, CENTER, x, u, ud, udd, v, du)
    assert rel_mat(mat(route["mass"]), mat(mbs.forms.mass(rho, du, v))) < 1e-13
    G = mat(Om * S.gyroscopic(rho, AXIS, CENTER, x, du, v))
    assert rel_mat(mat(route["gyroscopic"]), G) < 1e-13
    K = mat(mbs.forms.stiffness(law, du, v)
            + Om**2 * S.circumferential_softening(rho, AXIS, CENTER, x, du, v)
            + dOm * S.spin_acceleration(rho, AXIS, CENTER, x, du, v))
    assert rel_mat(mat(route["stiffness"]), K) < 1e-13
    n = ufl.FacetNormal(mesh)
    q = vec(Om**2 * S.centrifugal_load(rho, AXIS, CENTER, x, v)
            + dOm * S.torque_load(rho, AXIS, CENTER, x, v)
            + Om**2 * S.axisymmetry_boundary_term(rho, AXIS, CENTER, x, v, n))
    assert (vec(route["load"]) - q).norm() < 1e-12 * q.norm()
    # the boundary term is not small on a box: the identity is not an accident of a small term
    bt = vec(S.axisymmetry_boundary_term(rho, AXIS, CENTER, x, v, n))
    assert bt.norm() > 0.1 * vec(S.centrifugal_load(rho, AXIS, CENTER, x, v)).norm()


def test_gyroscopic_skew_softening_symmetric_negative(space):
    mesh = space.mesh
    x = ufl.SpatialCoordinate(mesh)
    v, du = ufl.TestFunction(space), ufl.TrialFunction(space)
    G = mat(S.gyroscopic(2.0, AXIS, CENTER, x, du, v))
    Gt = G.transpose(PETSc.Mat())
    Gt.axpy(1.0, G)
    assert Gt.norm(PETSc.NormType.FROBENIUS) < 1e-13 * G.norm(PETSc.NormType.FROBENIUS)
    Kt = mat(S.circumferential_softening(2.0, AXIS, CENTER, x, du, v))
    assert Kt.isSymmetric(1e-12 * Kt.norm(PETSc.NormType.INFINITY))
    f = fem.Function(space)
    f.interpolate(lambda p: np.vstack([np.sin(3 * p[0]), p[1] * p[2], np.cos(p[2])]))
    y = Kt.createVecLeft()
    Kt.mult(f.x.petsc_vec if hasattr(f.x, "petsc_vec") else f.vector, y)
    assert y.dot(f.x.petsc_vec if hasattr(f.x, "petsc_vec") else f.vector) < 0.0


def test_centrifugal_load_is_the_rotating_frames():
    """The stationary frame's centrifugal load per Omega^2 is the rotating frame's q_omega at
    omega = Omega a (so one prestress serves both descriptions)."""
    mesh = dmesh.create_box(MPI.COMM_WORLD, [np.array([-0.2, -0.3, 0.0]),
                                             np.array([0.3, 0.2, 1.0])], [3, 3, 4])
    V = compat.vector_space(mesh, 2)
    x = ufl.SpatialCoordinate(mesh)
    v = ufl.TestFunction(V)
    Om = 12.0
    a = vec(Om**2 * S.centrifugal_load(3.0, AXIS, np.zeros(3), x, v))
    b = vec(mbs.forms.centrifugal_load(3.0, ufl.as_vector(list(Om * AXIS)), x, v))
    assert (a - b).norm() < 1e-13 * b.norm()


def test_disk_matrices_against_a_rigid_body_spun_and_tilted():
    """The rigid disk's Lagrange equations (forms.stationary.disk_matrices) against Euler's
    equations of the spinning rigid body, dH/dt = M with H = J omega: a tilt whirling
    forward at w with the axis through (cos wt, sin wt) * eps needs the moment of
    I_d w^2 - I_p Omega w per unit tilt."""
    Md, Gd = S.disk_matrices(3.0, 0.5, 0.3)
    Om, w, eps = 40.0, 17.0, 1e-6
    # theta_1, theta_2 of the axis tilt n = a + theta x a = (theta_2, -theta_1, 1)
    # forward whirl of n: (n_x, n_y) = eps (cos wt, sin wt) -> theta = eps (-sin wt, cos wt)
    t = 0.3
    th = eps * np.array([-np.sin(w * t), np.cos(w * t)])
    thd = eps * w * np.array([-np.cos(w * t), -np.sin(w * t)])
    thdd = -w**2 * th
    Q = Md[3:5, 3:5] @ thdd + Om * Gd[3:5, 3:5] @ thd
    # Euler: the moment that keeps this whirl, M = I_d n x n'' + I_p Omega n', as a moment
    # vector; projected on theta's directions (the generalized force)
    n = np.array([th[1], -th[0], 1.0])
    nd = np.array([thd[1], -thd[0], 0.0])
    ndd = np.array([thdd[1], -thdd[0], 0.0])
    M = 0.3 * np.cross(n, ndd) + 0.5 * Om * nd
    assert np.allclose(Q, M[:2], rtol=1e-6, atol=1e-9 * eps * w**2)
    # the whirl frequency relation: Q = (I_d w^2 - I_p Omega w) * (restoring direction)
    k = 0.3 * w**2 - 0.5 * Om * w
    assert np.allclose(Q, -k * th, rtol=1e-9)
