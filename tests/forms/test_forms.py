"""The direct moving-frame forms against the energy routes (Lagrange, Gibbs-Appell, Hamilton,
Kane) differentiated by UFL, and their algebraic properties."""

import numpy as np
import pytest
import ufl
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import forms as F
from tests.models.formcases import CASES, make_body, mat, rel_mat, rel_vec, vec


@pytest.fixture(params=CASES, ids=["tet1", "hex2", "tri2", "quad1"])
def body(request):
    return make_body(*request.param)


def test_frame_coupling_is_the_cross_products_of_the_acceleration():
    """The W of forms.frame_coupling against docs/theory.md section 1's terms 2 omega x y,
    omega x (omega x y) and alpha x y, as numbers; and the UFL matrices it gives for
    constants hold the same numbers."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        w, a, y = rng.standard_normal((3, 3)) * rng.uniform(0.1, 10.0, (3, 1))
        W = F.frame_coupling(w, a)
        scale = (1.0 + np.dot(w, w) + np.linalg.norm(a)) * np.linalg.norm(y)
        assert np.abs(W["gyroscopic"] @ y - 2.0 * np.cross(w, y)).max() < 1e-14 * scale
        assert np.abs(W["spin_softening"] @ y - np.cross(w, np.cross(w, y))).max() < 1e-14 * scale
        assert np.abs(W["angular_acceleration"] @ y - np.cross(a, y)).max() < 1e-14 * scale
        assert sorted(W) == ["angular_acceleration", "gyroscopic", "spin_softening"]
    zero = F.frame_coupling()
    assert all(not np.any(Z) for Z in zero.values())

    mesh = dmesh.create_unit_square(MPI.COMM_WORLD, 2, 2)
    w, a = np.array([0.3, -1.7, 2.2]), np.array([-0.9, 0.5, 1.3])
    Wn = F.frame_coupling(w, a)
    Wu = F.frame_coupling(fem.Constant(mesh, w), fem.Constant(mesh, a))
    weights = rng.standard_normal((3, 3, 3))
    keys = sorted(Wn)
    integrand = sum(weights[k, i, j] * Wu[key][i, j]
                    for k, key in enumerate(keys) for i in range(3) for j in range(3))
    got = MPI.COMM_WORLD.allreduce(
        fem.assemble_scalar(fem.form(integrand * ufl.dx(domain=mesh))), op=MPI.SUM)
    want = sum(np.sum(weights[k] * Wn[key]) for k, key in enumerate(keys))
    assert got == pytest.approx(want, rel=1e-13)


def test_unit_spin_cases_sum_to_spin_softening():
    """sum_ij omega_i omega_j W_ij = W_omega: the six unit cases in 3D (the one of planar
    motion in 2D), with the weights Body.prestress_coefficient uses."""
    assert list(F.unit_spin_cases(3)) == [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
    assert list(F.unit_spin_cases(2)) == [(2, 2)]
    rng = np.random.default_rng(3)
    for gdim in (3, 2):
        for _ in range(20):
            w = rng.standard_normal(3) * rng.uniform(0.1, 10.0)
            if gdim == 2:
                w[:2] = 0.0
            S = sum(w[i] * w[j] * Wij for (i, j), Wij in F.unit_spin_cases(gdim).items())
            ref = F.frame_coupling(w)["spin_softening"]
            assert np.abs(S - ref).max() < 1e-14 * np.dot(w, w)
            assert np.abs(S - (np.outer(w, w) - np.dot(w, w) * np.eye(3))).max() \
                < 1e-14 * np.dot(w, w)
    with pytest.raises(ValueError, match="gdim"):
        F.unit_spin_cases(1)


def direct(body):
    u, v = body.trial_test()
    r, m = body.rho, body.material
    return {
        "mass": F.mass(r, u, v),
        "gyroscopic": F.gyroscopic(r, body.omega, u, v),
        "stiffness": F.stiffness(m, u, v) + F.spin_softening(r, body.omega, u, v)
        + F.angular_acceleration(r, body.alpha, u, v),
        "load": F.centrifugal_load(r, body.omega, body.X, v)
        + F.euler_load(r, body.alpha, body.X, v) + F.base_acceleration_load(r, body.a_O, v),
    }


def route_args(body):
    fs = [fem.Function(body.V) for _ in range(3)]
    for f in fs:  # values must not matter: the residuals are linear in them
        f.x.array[:] = np.random.default_rng(1).standard_normal(f.x.array.shape)
    u, v = body.trial_test()
    return fs, v, u


def test_lagrange_and_gibbs_appell_equal_direct(body):
    (uf, ud, udd), test, trial = route_args(body)
    d = direct(body)
    fm = F.FrameMotion(body.omega, body.alpha, body.v_O, body.a_O)
    lag = F.lagrange_route(body.rho, body.material, fm, body.X, uf, ud, udd, test, trial)
    ga = F.gibbs_appell_route(body.rho, body.material, fm, body.X, uf, ud, udd, test, trial)
    for route in (lag, ga):
        for k in ("mass", "gyroscopic", "stiffness"):
            assert rel_mat(mat(route[k]), mat(d[k])) < 1e-12, k
        assert rel_vec(vec(route["load"]), vec(d["load"])) < 1e-12


def test_kane_equals_lagrange_gibbs_appell_and_hamilton(body):
    """Kane's equations (partial velocities and the time derivative of v, by UFL) give the
    operators of the three other routes at a general frame state (omega, alpha, v_O, a_O all
    nonzero). Hamilton's second-order equivalent is formed from two hamilton_route calls:
    M u'' + 2 G_p u' + (K + K_w + G_p') u = -(pi_0' + h), with G_p' and pi_0' the route's own
    G_p and pi_0 at (alpha, v_O' = a_O - omega x v_O), as both are linear in (omega, v_O)."""
    s = body.frame.state(0.9)   # the state make_body set
    gd = body.gdim
    for w in (s.omega, s.alpha) if gd == 3 else (s.omega[2:], s.alpha[2:]):
        assert np.all(np.abs(w) > 1e-2)
    assert np.all(np.abs(s.v_O[:gd]) > 1e-2) and np.all(np.abs(s.a_O[:gd]) > 1e-2)
    (uf, ud, udd), test, trial = route_args(body)
    a = (body.rho, body.material)
    fm = F.FrameMotion(body.omega, body.alpha, body.v_O, body.a_O)
    kane = F.kane_route(*a, fm, body.X, uf, ud, udd, test, trial)
    lag = F.lagrange_route(*a, fm, body.X, uf, ud, udd, test, trial)
    ga = F.gibbs_appell_route(*a, fm, body.X, uf, ud, udd, test, trial)
    h = F.hamilton_route(*a, fm, body.X, uf, ud, test, trial)
    dvO = body.a_O - ufl.cross(body.omega, body.v_O)
    # (omega, v_O) -> (alpha, v_O'): hamilton_route reads only the velocities
    hdot = F.hamilton_route(*a, fm._replace(omega=body.alpha, v_O=dvO), body.X, uf, ud, test,
                            trial)
    Kk = {k: mat(kane[k]) for k in ("mass", "gyroscopic", "stiffness")}
    qk = vec(kane["load"])
    for route in (lag, ga):
        for k in Kk:
            assert rel_mat(Kk[k], mat(route[k])) < 1e-12, k
        assert rel_vec(qk, vec(route["load"])) < 1e-12
    assert rel_mat(Kk["mass"], mat(h["mass"])) < 1e-12
    G = mat(h["momentum_coupling"])
    G.scale(2.0)
    assert rel_mat(Kk["gyroscopic"], G) < 1e-12
    K = mat(h["stiffness"])
    K.axpy(1.0, mat(hdot["momentum_coupling"]),
           structure=PETSc.Mat.Structure.DIFFERENT_NONZERO_PATTERN)
    assert rel_mat(Kk["stiffness"], K) < 1e-12
    q = vec(hdot["momentum_offset"]) + vec(h["momentum_load"])
    assert rel_vec(qk, -q) < 1e-12


def test_kane_body_force_is_an_active_force(body):
    """A body force f enters Kane's generalized active force as int f.v_r: the load is the
    frame's inertia load plus int f.v (forms.gravity_load, written directly)."""
    (uf, ud, udd), test, trial = route_args(body)
    f3 = fem.Constant(body.mesh, np.array([3.0, -2.0, 5.0]))
    f = F.planar(f3, body.gdim)
    args = (body.rho, body.material, F.FrameMotion(body.omega, body.alpha, body.v_O, body.a_O),
            body.X, uf, ud, udd, test, trial)
    with_f = vec(F.kane_route(*args, body_force=f)["load"])
    without = vec(F.kane_route(*args)["load"])
    assert rel_vec(with_f, without + vec(F.gravity_load(1.0, f3, test))) < 1e-12


def test_hamilton_route_equals_direct(body):
    (uf, ud, _), test, trial = route_args(body)
    h = F.hamilton_route(body.rho, body.material,
                         F.FrameMotion(body.omega, body.alpha, body.v_O, body.a_O), body.X, uf,
                         ud, test, trial)
    u, v = trial, test
    r = body.rho
    assert rel_mat(mat(h["mass"]), mat(F.mass(r, u, v))) < 1e-12
    Gp = mat(h["momentum_coupling"])
    G = mat(F.gyroscopic(r, body.omega, u, v))
    G.scale(0.5)
    assert rel_mat(Gp, G) < 1e-12
    assert rel_mat(Gp, mat(F.momentum_coupling(r, body.omega, u, v))) < 1e-12
    Kh = F.stiffness(body.material, u, v) + F.spin_softening(r, body.omega, u, v)
    assert rel_mat(mat(h["stiffness"]), mat(Kh)) < 1e-12
    pi0 = F.momentum_offset(r, body.omega, body.v_O, body.X, v)
    assert rel_vec(vec(h["momentum_offset"]), vec(pi0)) < 1e-12
    hh = F.momentum_load(r, body.omega, body.v_O, body.X, v)
    assert rel_vec(vec(h["momentum_load"]), vec(hh)) < 1e-12


def test_hamilton_momentum_rate_recovers_second_order_load(body):
    """dp/dt = -h at rest in the frame, so M u'' = -(d(pi_0)/dt + h) must equal the load q of the
    second-order form (docs/theory.md section 4: the omega x v_O terms cancel)."""
    s = body.frame.state(0.9)   # the state make_body set
    v = ufl.TestFunction(body.V)
    r = body.rho
    dvO = s.a_O - np.cross(s.omega, s.v_O)
    c_dvO = fem.Constant(body.mesh, dvO)
    # pi_0 = int rho (v_O + omega x X).v  =>  d/dt pi_0 = int rho (dv_O/dt + alpha x X).v
    dpi0 = F.momentum_offset(r, body.alpha, c_dvO, body.X, v)
    lhs = vec(dpi0) + vec(F.momentum_load(r, body.omega, body.v_O, body.X, v))
    q = vec(F.frame_inertia_load(r, body.omega, body.alpha, body.a_O, body.X, v))
    assert rel_vec(-lhs, q) < 1e-12


def test_operator_symmetries(body):
    u, v = body.trial_test()
    r = body.rho
    for form in (F.gyroscopic(r, body.omega, u, v), F.angular_acceleration(r, body.alpha, u, v)):
        A = mat(form)
        At = A.copy()
        At.transpose()
        assert rel_mat(At, A) == pytest.approx(2.0, abs=1e-12) or A.norm() == 0  # skew
        S = A.copy()
        S.axpy(1.0, At, structure=PETSc.Mat.Structure.DIFFERENT_NONZERO_PATTERN)
        assert S.norm() <= 1e-13 * A.norm()
    Kw = mat(F.spin_softening(r, body.omega, u, v))
    assert Kw.isSymmetric(1e-12 * Kw.norm())


@pytest.mark.serial
def test_spin_softening_is_minus_omega_squared_mass_in_2d_and_nsd_in_3d():
    for dim, cell, deg in CASES:
        b = make_body(dim, cell, deg)
        u, v = b.trial_test()
        Kw = mat(F.spin_softening(b.rho, b.omega, u, v))
        M = mat(F.mass(b.rho, u, v))
        if dim == 2:  # omega x (omega x u) = -omega_z^2 u for planar motion
            M.scale(-b.omega.value[2] ** 2)
            assert rel_mat(Kw, M) < 1e-13
        else:
            ev = np.linalg.eigvalsh(Kw.convert("dense").getDenseArray())
            assert ev.max() <= 1e-12 * abs(ev).max()
            # null space: motion along omega; w^2 = |omega|^2 is the only other eigenvalue of
            # the pencil (K_w, M) with multiplicity 2n/3
            lam = np.linalg.eigvals(np.linalg.solve(M.convert("dense").getDenseArray(),
                                                    Kw.convert("dense").getDenseArray()))
            w2 = np.dot(b.omega.value, b.omega.value)
            assert np.allclose(np.sort(lam.real)[: 2 * len(lam) // 3], -w2, rtol=1e-9)


def test_mass_total_and_load_resultants(body):
    """Rigid translation e_x: u^T M u is the total mass; the load resultant is -m a_G
    (the acceleration of the centre of mass, by a quadrature of the body's coordinates)."""
    V = body.V
    v = ufl.TestFunction(V)
    e = fem.Function(V)
    e.x.array[:] = 0.0
    e.x.array[0::body.gdim] = 1.0
    M = mat(F.mass(body.rho, ufl.TrialFunction(V), v))
    y = M.createVecLeft()
    ev = e.vector if hasattr(e, "vector") else e.x.petsc_vec
    M.mult(ev, y)
    mass = y.dot(ev)
    vol = MPI.COMM_WORLD.allreduce(
        fem.assemble_scalar(fem.form(body.rho * ufl.dx(domain=body.mesh))), op=MPI.SUM)
    assert mass == pytest.approx(vol, rel=1e-12)
    q = vec(F.frame_inertia_load(body.rho, body.omega, body.alpha, body.a_O, body.X, v))
    res_x = q.dot(ev)
    s = body.frame.state(0.9)   # the state make_body set
    xc = np.array([MPI.COMM_WORLD.allreduce(
        fem.assemble_scalar(fem.form(body.rho * body.X[i] * ufl.dx)), op=MPI.SUM) / vol
        for i in range(body.gdim)] + [0.0] * (3 - body.gdim))
    aG = s.a_O + np.cross(s.alpha, xc) + np.cross(s.omega, np.cross(s.omega, xc))
    assert res_x == pytest.approx(-vol * aG[0], rel=1e-10)
