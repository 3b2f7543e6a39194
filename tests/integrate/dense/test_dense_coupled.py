"""The dense path of models with computed frames (issue 41): the coupled equations stepped in
small arrays from the bodies' inertia invariants projected once
(:mod:`dolfinx_mbs.systems.coupled_dense`, :mod:`dolfinx_mbs.integrate.dense.coupled`,
:mod:`dolfinx_mbs.integrate.dense.coupled_kernels`).

The references are independent code paths: the TS path's rows
(:meth:`~dolfinx_mbs.systems.coupled.CoupledSystem.evaluate`, the bodies' PETSc operators) for
the kernels' residual, central differences of the residual for their Jacobian, and whole runs
of the TS path (PETSc TS with the bordered Newton) with its Newton tolerances tightened to
round-off (its defaults stop at an estimated 1e-9 of each block a step, which left 1e-7 of the
peak after 50 steps): the same scheme, so the histories agree to round-off. The kernels run
compiled (numba, where installed) and as NumPy code; both are checked (``backend``).
Measured (one rank): hinge angle 1.8e-11 rad, tip 1.8e-10 of its peak (reduced strip),
7.6e-12 (the strip's 246 dofs); with nonlinear strain (6 Craig-Bampton modes) 7e-14 rad and
4e-12 of the tip's peak, the projected tensors against the assembled force, tangent and energy
6e-14, 2e-14, 9e-14.
"""

import math

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.integrate.dense import coupled as dcoupled
from dolfinx_mbs.integrate.dense import coupled_kernels
from dolfinx_mbs.systems.coupled_dense import DenseCoupled
from tests.models.freebox import box, free_box
from tests.models.rigidref import pendulum_period

COMM = MPI.COMM_WORLD
TIGHT = {"snes_stol": 1e-16, "snes_rtol": 1e-16}
#: the dense path's Newton to round-off too (its default is the TS path's snes_stol, 1e-9),
#: where the two paths are held to each other
DENSE_TIGHT = {"snes_stol": 1e-16}
BACKENDS = [pytest.param(True, id="compiled",
                         marks=pytest.mark.skipif(not coupled_kernels.COMPILED,
                                                  reason="numba is not installed")),
            pytest.param(False, id="numpy")]


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """The dense kernels, compiled or as NumPy code, for every dense run of the test."""
    K = coupled_kernels.variant(request.param)
    orig = dcoupled.DenseCoupledStepper.__init__

    def init(self, system, run, compiled=None, **kw):
        orig(self, system, run, compiled=request.param, **kw)
    monkeypatch.setattr(dcoupled.DenseCoupledStepper, "__init__", init)
    return K


def _strip(frame, L=1.0, H=0.05, n=(6, 2), E=1e7, rho=1000.0, stiffening=None, name="beam",
           comm=COMM):
    msh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                 list(n), dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=E, nu=0.3, density=rho, thickness=0.01)
    return mbs.Body(msh, mat, frame, degree=2, stiffening=stiffening, name=name)


def _hub_beam(reduce=True, torque=None, comm=COMM, stiffening="prestress", method=None):
    """A strip with prestress on a hinge off the origin, a disk off the axis, gravity, a torque
    of the state and time (the coupled tests' Jacobian model; ``torque``: another one)."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0.1, 0.05, 0), angle=0.3, rate=2.0,
                           name="hub")
    body = _strip(hub, stiffening=stiffening, comm=comm)
    disk = mbs.RigidBody(mass=2.0, inertia=np.diag([0.1, 0.2, 0.3]), frame=hub,
                         centre=(0.1, 0.2, 0), name="disk")
    model = mbs.Model([body, disk], gravity=(0, -9.81, 0))
    model.attach(body, lambda x: x[0] < 1e-8)
    model.apply_torque(hub, torque or (lambda t, s: -3.0 * s.rate + 0.5 * math.sin(s.angle)
                                       + 0.1 * t))
    if reduce:
        if method is None:
            model.reduce(body, modes=6)
        else:
            model.reduce(body, modes=6, method=method)
    return model, body


def _box_in_spinning_parent():
    """A 3D box reduced to 5 modes on a hinge about (0, 1, 1) in a frame spinning about x,
    with a disk and gravity (the coupled tests' parent model)."""
    parent = mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=3.0)
    hub = mbs.frames.Hinge(axis=(0, 1, 1), origin=(0.2, 0.0, 0.1), angle=0.4, rate=-1.0,
                           parent=parent, name="pitch")
    body = box(hub, n=(3, 1, 1))
    disk = mbs.RigidBody(mass=2.0, inertia=np.diag([0.1, 0.2, 0.25]), frame=hub,
                         centre=(0.3, 0.1, 0.0), name="disk")
    model = mbs.Model([body, disk], gravity=(0, 0, -9.81))
    model.attach(body, lambda x: x[0] < -0.5 + 1e-8)
    model.apply_torque(hub, lambda t, s: -2.0 * s.rate + 0.3 * math.cos(3 * t))
    model.reduce(body, modes=5)
    return model, body


def _free_strip():
    """The strip reduced to 5 modes on a planar Free frame, moving and turning, a disk on it,
    gravity, a torque of time and a force of the state at a point (global components)."""
    sat = mbs.frames.Free(position=(0.1, 0.2, 0), velocity=(0.3, -0.2, 0),
                          angular_velocity=(0, 0, 1.5), name="sat")
    body = _strip(sat)
    disk = mbs.RigidBody(mass=2.0, inertia=np.diag([0.1, 0.2, 0.3]), frame=sat,
                         centre=(0.1, 0.2, 0), name="disk")
    model = mbs.Model([body, disk], gravity=(0, -9.81, 0))
    model.attach(body, lambda x: x[0] < 0.2)
    model.apply_torque(sat, lambda t, s: np.array([0.0, 0.0, 0.3 * math.cos(2 * t)]))
    model.apply_force(sat, lambda t, s: np.array([1.0, -0.5, 0.0]) * s.omega[2],
                      point=(0.5, 0.0, 0.0), local=False)
    model.reduce(body, modes=5)
    return model, body


def _free_box():
    """The tumbling free box (tests/models/freebox.py) reduced to 5 modes."""
    model, body = free_box()
    model.reduce(body, modes=5)
    return model, body


MODELS = {"hub-beam": lambda: _hub_beam(), "full strip": lambda: _hub_beam(reduce=False),
          "parent": _box_in_spinning_parent, "free 2D": _free_strip, "free 3D": _free_box,
          "nonlinear": lambda: _hub_beam(stiffening="nonlinear", method="craig-bampton")}


def _compare(a, b, frame="hub"):
    tip = np.abs(a.probes).max()
    return (np.abs(a.frames[frame].angle - b.frames[frame].angle).max(),
            np.abs(a.probes - b.probes).max() / tip,
            np.abs(a.energy["total"] - b.energy["total"]).max()
            / np.abs(a.energy["total"]).max(),
            np.abs(a.momentum["angular"] - b.momentum["angular"]).max()
            / np.abs(a.momentum["angular"]).max())


def _state(system, dense, seed):
    """A random state (y, y') the same on every rank, and the TS path's vectors of it (q, v,
    v')."""
    rng = np.random.default_rng(seed)
    n, N = dense.n, dense.N
    y = rng.normal(size=N) * 1e-2
    yd = rng.normal(size=N) * 1e-1
    y[2 * n:] += system.initial_unknowns()
    vecs = []
    for part in (y[:n], y[n:2 * n], yd[n:2 * n]):
        x = system.create_reduced_vec()
        r0, r1 = x.getOwnershipRange()
        x.array[:] = part[r0:r1]
        vecs.append(x)
    return (y, yd, *vecs)


def _kernel(K, dense, loads, t, y, yd, shift, jac=True):
    p = dense.plan
    F, J = np.zeros(p.N), np.zeros((p.N, p.N))
    Q = loads.at(t, y[2 * p.n:])[0]
    DQ = loads.derivative(t, y[2 * p.n:])
    K.residual(p.arrays(), dense.parent_states(t), y, yd, shift, Q, DQ, jac, F, J)
    return F, J


@pytest.mark.parametrize("which", list(MODELS))
def test_kernel_rows_against_the_sparse_rows(backend, which):
    """The kernels' residual at a random state equals the TS path's rows (the bodies' PETSc
    operators, rigid bodies' own forces, the frames' jets; a free frame's momentum balance
    and auxiliary rows): elastic rows and frame rows."""
    model = MODELS[which]()[0]
    system = model.coupled_system()
    dense = DenseCoupled(system)
    loads = dcoupled.FrameLoads(system, dense)
    y, yd, q, v, vd = _state(system, dense, 3)
    t, n = 0.37, dense.n
    F, _ = _kernel(backend, dense, loads, t, y, yd, 1.0, jac=False)
    Fv = system.create_reduced_vec()
    Ff, _ = system.evaluate(t, q, v, vd, y[2 * n:], yd[2 * n:], Fv)
    from dolfinx_mbs.integrate.dense.operators import gather_vector
    el = gather_vector(Fv, COMM)
    scale = max(np.abs(el).max(), np.abs(Ff).max())
    assert np.abs(F[n:2 * n] - el).max() < 1e-10 * scale
    assert np.abs(F[2 * n:] - Ff).max() < 1e-10 * scale
    assert np.array_equal(F[:n], yd[:n] - y[n:2 * n])
    for x in (Fv, q, v, vd):
        x.destroy()


@pytest.mark.parametrize("which", ["hub-beam", "parent", "free 2D", "free 3D", "nonlinear"])
def test_kernel_jacobian_against_differences(backend, which):
    """J = dF/dy + s dF/dy' of the kernels against central differences of their residual
    (the loads' derivative included, by differences as the TS path has it)."""
    model = MODELS[which]()[0]
    system = model.coupled_system()
    dense = DenseCoupled(system)
    loads = dcoupled.FrameLoads(system, dense)
    y, yd, *vecs = _state(system, dense, 5)
    t, s = 0.21, 37.0
    _, J = _kernel(backend, dense, loads, t, y, yd, s)
    d = np.random.default_rng(9).normal(size=dense.N)
    h = 1e-6
    Fp, _ = _kernel(backend, dense, loads, t, y + h * d, yd + s * h * d, s, jac=False)
    Fm, _ = _kernel(backend, dense, loads, t, y - h * d, yd - s * h * d, s, jac=False)
    Jd = (Fp - Fm) / (2 * h)
    assert np.abs(J @ d - Jd).max() < 1e-6 * np.abs(Jd).max()
    for x in vecs:
        x.destroy()


def test_nonlinear_tensors_against_the_assembled_terms():
    """The nonlinear strain's projected tensors (H, C: ``nonlinear_tensors``, polarization of
    the assembled tangent) against the TS path's assembled force, tangent and energy at a
    random q of tip deflection 0.2 L (``nonlinear_reduced``, ``nonlinear_energy``):
    f_n = (1/2 H(q) + 1/6 C(q, q)) q, K_n = H(q) + 1/2 C(q, q), U_n = q.(1/6 H(q) + 1/24
    C(q, q)) q. First, that the assembled tangent is the derivative of the assembled force
    (central differences of the cubic force, extrapolated: exact to round-off), which makes
    the polarization exact."""
    from dolfinx_mbs.integrate.dense.operators import gather_matrix, gather_vector
    model, _ = _hub_beam(stiffening="nonlinear", method="craig-bampton")
    system = model.coupled_system()
    dense = DenseCoupled(system)
    inv = dense.inv[0]
    base = system.elastic_base
    n = dense.n
    assert inv.n == n and inv.H is not None and inv.C is not None
    rng = np.random.default_rng(11)
    q = rng.normal(size=n)
    umax = COMM.allreduce(np.abs(dense._T_local @ q).max(initial=0.0), op=MPI.MAX)
    q *= 0.2 / umax
    x = system.create_reduced_vec()
    r0, r1 = x.getOwnershipRange()

    def assembled(qq, tangent=False):
        x.array[:] = qq[r0:r1]
        f, K = base.nonlinear_reduced(0.0, x, force=not tangent, tangent=tangent)
        return gather_matrix(K, COMM) if tangent else gather_vector(f, COMM)
    f_ref, K_ref = assembled(q), assembled(q, tangent=True)
    x.array[:] = q[r0:r1]
    U_ref = base.nonlinear_energy(0.0, x)
    # the tangent is the force's derivative: central differences of a cubic, Richardson
    d = rng.normal(size=n) * np.abs(q).max()
    h = 1e-2

    def diff(hh):
        return (assembled(q + hh * d) - assembled(q - hh * d)) / (2 * hh)
    Kd = (4.0 * diff(h / 2) - diff(h)) / 3.0
    assert np.abs(K_ref @ d - Kd).max() < 1e-9 * np.abs(Kd).max()
    # the tensors' formulas
    Hq = np.einsum("i,iab->ab", q, inv.H)
    iu, ju = np.triu_indices(n)
    Cq = np.einsum("p,pab->ab", q[iu] * q[ju], inv.C)
    f_n = (0.5 * Hq + Cq / 6.0) @ q
    K_n = Hq + 0.5 * Cq
    U_n = q @ (Hq / 6.0 + Cq / 24.0) @ q
    ef = np.abs(f_n - f_ref).max() / np.abs(f_ref).max()
    eK = np.abs(K_n - K_ref).max() / np.abs(K_ref).max()
    eU = abs(U_n - U_ref) / abs(U_ref)
    assert ef < 1e-12 and eK < 1e-12 and eU < 1e-12, (ef, eK, eU)
    # the nonlinear terms are not small here: against the linear force K q
    Kq = inv.K @ q
    assert np.abs(f_ref).max() > 1e-2 * np.abs(Kq).max()
    x.destroy()


def _tet_block():
    """A P2 tetrahedral block with an orthotropic law in turned axes and nonlinear strain on a
    hinge, clamped at one end, reduced to 3 modes and the derivatives of 2."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), name="hub")
    msh = dmesh.create_box(COMM, [np.array([0.0, -0.1, -0.05]), np.array([1.0, 0.1, 0.05])],
                           [4, 1, 1], dmesh.CellType.tetrahedron)
    mat = mbs.materials.Orthotropic(E=(2e7, 1e7, 5e6), nu=(0.3, 0.25, 0.2),
                                    G=(4e6, 3e6, 2e6), density=1000.0,
                                    axes=mbs.frames.rotation_about((1, 1, 0), 0.5))
    body = mbs.Body(msh, mat, hub, degree=2, stiffening="nonlinear", name="block")
    model = mbs.Model([body])
    model.attach(body, lambda x: x[0] < 1e-8)
    model.reduce(body, modes=3, derivatives=2)
    return model


def _stiffened_reduced(case):
    """(coupled system, its DenseCoupled) of the stiffened reduced strip of quadrilaterals or
    the orthotropic block of tetrahedra (the point terms' tests)."""
    if case.startswith("quad"):
        model, _ = _hub_beam(stiffening="nonlinear", method="craig-bampton")
    else:
        model = _tet_block()
    system = model.coupled_system()
    return system, DenseCoupled(system)


@pytest.mark.parametrize("case", ["quadrilateral Q2", "tetrahedron P2 orthotropic"])
def test_point_tensors_against_the_polarized(case):
    """The nonlinear strain's tensors summed at the rule's points (``point_tensors``: the
    strain's terms evaluated once at the nonlinear forms' quadrature points, the law fitted
    at each) against the polarization of the assembled tangent (``polarized_tensors``, a
    second formulation): on the strip of quadrilaterals (a rule of degree 3 p, exact for none
    of the integrands: the same rule as FFCx's gives the same numbers) and an orthotropic
    P2 block of tetrahedra (a law with all its couplings, the rule exact)."""
    from dolfinx_mbs import compat
    from dolfinx_mbs.systems import coupled_dense
    if not compat.EXPRESSIONS_KEPT:
        pytest.skip("the point route is this DOLFINx's polarization")
    system, dense = _stiffened_reduced(case)
    T = dense._T_local
    (cols,) = dense._columns(T)
    p = system.parts[0]
    H, C = dense.inv[0].H, dense.inv[0].C
    H0, C0 = coupled_dense.polarized_tensors(system, p, T[:, cols])
    assert H.shape == H0.shape and C.shape == C0.shape
    eH = np.abs(H - H0).max() / np.abs(H0).max()
    eC = np.abs(C - C0).max() / np.abs(C0).max()
    assert eH < 1e-11 and eC < 1e-11, (eH, eC)
    # direct as the dense path asks: the same arrays
    H1, C1 = coupled_dense.point_tensors(p.body, T[p.slice, cols], COMM)
    assert np.array_equal(H1, H) and np.array_equal(C1, C)


@pytest.mark.parametrize("case", ["quadrilateral Q2", "tetrahedron P2 orthotropic"])
def test_linear_tangent_at_the_points_against_the_assembled_force(case):
    """The part of the nonlinear tangent linear in the displacement, L(a) b, summed at the
    rule's points (``StrainPoints.linear_tangent``: the modal derivatives' loads) against the
    assembled force's excess polarized (L(a) a = f(a) + f(-a), L(a) b from a + b: a second
    formulation), on the reduced fields of the two models of the tensors' test."""
    from dolfinx_mbs import compat
    from dolfinx_mbs.assembly.strain_points import StrainPoints
    if not compat.EXPRESSIONS_KEPT:
        pytest.skip("the point route is this DOLFINx's force polarization")
    system, dense = _stiffened_reduced(case)
    p = system.parts[0]
    Tb = dense._T_local[p.slice]
    pairs = [(0, 0), (0, 2), (1, 1), (1, 2)]
    L = StrainPoints(p.body, COMM).linear_tangent(Tb, pairs)
    asm = system.elastic_assembly
    u = system.elastic_space.create_vec()

    def even(a):
        out = 0.0
        for sign in (1.0, -1.0):
            u.array[:] = 0.0
            u.array[p.slice] = sign * a
            out = out + asm.nonlinear_terms(u, force=True, tangent=False)[0].getArray(
                readonly=True)[p.slice]
        return out
    with asm.nonlinear_state_kept():
        for c, (i, j) in enumerate(pairs):
            a, b = Tb[:, i], Tb[:, j]
            ref = even(a) if i == j else 0.5 * (even(a + b) - even(a) - even(b))
            big = COMM.allreduce(np.abs(ref).max(initial=0.0), op=MPI.MAX)
            err = COMM.allreduce(np.abs(L[:, c] - ref).max(initial=0.0), op=MPI.MAX)
            assert big > 0.0 and err < 1e-11 * big, ((i, j), err, big)
    u.destroy()


def test_dense_solves_of_a_matrix_and_its_transpose(backend):
    """The kernels' factors solve A x = b and A^T x = b (the Maggi stages' multipliers use
    the transposed solve of B_d's factors): against NumPy, with pivoting (a zero leading
    entry)."""
    rng = np.random.default_rng(4)
    for n in (1, 2, 7, 29):
        A = rng.normal(size=(n, n))
        if n > 1:
            A[0, 0] = 0.0
        b = rng.normal(size=n)
        LU = A.copy()
        piv = np.zeros(n, dtype=np.int64 if coupled_kernels.COMPILED and backend is
                       coupled_kernels else np.int32)
        assert backend._factor(LU, piv)
        x, y = b.copy(), b.copy()
        backend._back_in(LU, piv, x)
        backend._back_in_t(LU, piv, y)
        scale = np.abs(b).max() * np.linalg.cond(A)
        assert np.abs(x - np.linalg.solve(A, b)).max() < 1e-13 * scale, n
        assert np.abs(y - np.linalg.solve(A.T, b)).max() < 1e-13 * scale, n


def test_polarization_pairs_cover_every_index_set():
    """The pairs assembled for C_ij (i < j within three groups): every set of four distinct
    indices holds one of them (so symmetry gives every C_ijkl), with about n^2 / 6 pairs
    where all would be n (n - 1) / 2."""
    import itertools

    from dolfinx_mbs.systems.coupled_dense import _polarization_pairs
    for n in range(1, 17):
        pairs = set(_polarization_pairs(n))
        assert all(i < j < n for i, j in pairs)
        for quad in itertools.combinations(range(n), 4):
            assert any(pr in pairs for pr in itertools.combinations(quad, 2)), (n, quad)
    assert len(_polarization_pairs(9)) == 9 and len(_polarization_pairs(16)) == 35


@pytest.mark.parametrize("formulation", ["second-order", "first-order"])
def test_nonlinear_dense_equals_ts(backend, formulation):
    """The hub-beam with nonlinear strain, reduced to 6 Craig-Bampton modes: the dense path
    (the projected tensors) equals the TS path (the tangent assembled at every Newton
    iterate); the nonlinear strain changes the tip's history (against the linear strip)."""
    out = {}
    for stepper, stiffening in (("ts", "nonlinear"), ("dense", "nonlinear"),
                                ("linear", None)):
        model, body = _hub_beam(stiffening=stiffening, method="craig-bampton")
        out[stepper] = model.integrate(
            t_end=0.3, dt=0.01, formulation=formulation,
            stepper="ts" if stepper == "ts" else "dense", probes=[(body, (1.0, 0.0))],
            progress=False, spectral_radius=0.8 if formulation == "second-order" else None,
            options=TIGHT if stepper == "ts" else DENSE_TIGHT)
    assert out["dense"].stepper == "dense" and out["ts"].stepper == "ts"
    angle, tip, energy, ang = _compare(out["ts"], out["dense"])
    assert angle < 1e-9 and tip < 1e-9 and energy < 1e-9 and ang < 1e-9, (angle, tip, energy,
                                                                           ang)
    el = out["ts"].energy["elastic"]
    assert np.abs(el - out["dense"].energy["elastic"]).max() < 1e-9 * np.abs(el).max()
    tip_nl, tip_lin = out["dense"].probes[:, 0, 1], out["linear"].probes[:, 0, 1]
    effect = np.abs(tip_nl - tip_lin).max() / np.abs(tip_lin).max()
    assert effect > 1e-3, effect


@pytest.mark.skipif(not coupled_kernels.COMPILED, reason="numba is not installed")
@pytest.mark.parametrize("which", ["parent", "nonlinear", "hub-beam", "free 2D", "free 3D"])
def test_compiled_and_numpy_kernels_agree(which):
    """The compiled kernels (loops) and the NumPy ones (array products) give the same rows,
    Jacobian and monitors to round-off."""
    model, _ = MODELS[which]()
    system = model.coupled_system()
    dense = DenseCoupled(system)
    loads = dcoupled.FrameLoads(system, dense)
    y, yd, *vecs = _state(system, dense, 7)
    out = {}
    for compiled in (True, False):
        K = coupled_kernels.variant(compiled)
        F, J = _kernel(K, dense, loads, 0.1, y, yd, 12.0)
        mon = np.zeros((2, 10))
        p = dense.plan
        K.monitors(p.arrays(), dense.parent_states(0.1)[None], np.array([y, y[::-1]]), mon)
        out[compiled] = (F, J, mon)
    for a, b in zip(out[True], out[False]):
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max()
    for x in vecs:
        x.destroy()


@pytest.mark.parametrize("formulation", ["second-order", "first-order"])
def test_dense_equals_ts_on_the_hub_beam(backend, formulation):
    """A torque of the state: the steps' loads at every Newton iterate (from Python)."""
    out = {}
    for stepper in ("ts", "dense"):
        model, body = _hub_beam()
        out[stepper] = model.integrate(
            t_end=0.5, dt=0.01, formulation=formulation, stepper=stepper,
            probes=[(body, (1.0, 0.0))], progress=False,
            spectral_radius=0.8 if formulation == "second-order" else None,
            options=TIGHT if stepper == "ts" else DENSE_TIGHT)
    assert out["dense"].stepper == "dense" and out["ts"].stepper == "ts"
    assert out["dense"].ts_type == out["ts"].ts_type
    angle, tip, energy, ang = _compare(out["ts"], out["dense"])
    assert angle < 1e-9 and tip < 1e-9 and energy < 1e-9 and ang < 1e-9, (angle, tip, energy,
                                                                           ang)
    assert np.abs(out["ts"].energy["work"] - out["dense"].energy["work"]).max() < 1e-9
    assert np.abs(out["ts"].frames["hub"].torque - out["dense"].frames["hub"].torque).max() \
        < 1e-9


@pytest.mark.parametrize("formulation", ["second-order", "first-order"])
def test_torque_of_time_alone_stepped_in_the_kernels(backend, formulation, monkeypatch):
    """A torque of time alone: whole stretches of steps in one kernel call, its value at each
    stage known before it is solved; equal to the TS path, and to the same run with the
    torque called at every Newton iterate (the kernel's steps against Python's)."""
    def torque(t, s):
        return 20.0 * math.sin(8.0 * t)
    out = {}
    for stepper in ("ts", "dense", "python"):
        if stepper == "python":
            monkeypatch.setattr(dcoupled.FrameLoads, "probe", lambda self, t: None)
        model, body = _hub_beam(torque=torque)
        out[stepper] = model.integrate(
            t_end=0.4, dt=0.01, formulation=formulation,
            stepper="ts" if stepper == "ts" else "dense", probes=[(body, (1.0, 0.0))],
            progress=False, spectral_radius=0.8 if formulation == "second-order" else None,
            options=TIGHT if stepper == "ts" else DENSE_TIGHT)
    for other, tol in (("ts", 1e-9), ("python", 1e-11)):
        angle, tip, energy, ang = _compare(out[other], out["dense"])
        assert angle < tol and tip < tol and energy < tol and ang < tol, (other, angle, tip,
                                                                          energy, ang)


def test_newton_tolerance(monkeypatch):
    """The dense path's Newton stops at the TS path's update tolerance (``snes_stol``, 1e-9 by
    default: fewer iterations than to round-off, the motion to 1e-7 of the round-off run's),
    read from ``options`` as the TS path reads it; an option the dense path does not read
    sends "auto" to the TS path and is refused by "dense" (naming it); a bad tolerance is
    refused, and leaves the next run as it was."""
    def torque(t, s):
        return 20.0 * math.sin(8.0 * t)
    seen = []
    real = dcoupled.DenseCoupledStepper.destroy

    def destroy(self):
        seen.append(self.iterations)
        real(self)
    monkeypatch.setattr(dcoupled.DenseCoupledStepper, "destroy", destroy)

    def run(**kw):
        model, body = _hub_beam(torque=torque)
        return model.integrate(t_end=0.4, dt=0.01, probes=[(body, (1.0, 0.0))],
                               progress=False, spectral_radius=0.8, **kw)
    loose, tight = run(stepper="dense"), run(stepper="dense", options=DENSE_TIGHT)
    assert loose.stepper == tight.stepper == "dense"
    assert seen[0] < 0.85 * seen[1], seen
    assert max(_compare(tight, loose)) < 1e-7
    ts = run(stepper="ts", options=TIGHT)
    assert max(_compare(ts, loose)) < 1e-7
    with pytest.raises(ValueError, match=r"snes_stol.*\[0, 1\)"):
        run(stepper="dense", options={"snes_stol": "tight"})
    with pytest.raises(ValueError, match="snes_stol"):
        run(stepper="dense", options={"snes_stol": 2.0})
    with pytest.raises(ValueError, match="PETSc options.*ksp_type"):
        run(stepper="dense", options={"snes_stol": 1e-12, "ksp_type": "gmres"})
    assert run(options={"ksp_type": "preonly"}).stepper == "ts"
    again = run(stepper="dense", options=DENSE_TIGHT)
    # the same run to the bit on one rank; on several, DOLFINx 0.5.2's runs are not
    # repeatable to the bit (two identical runs in one process differed by 4.6e-11 in one
    # launch of three), while a tolerance left behind by the failed calls would show as
    # loose against tight does (8.7e-10)
    assert max(_compare(tight, again)) <= (0.0 if MPI.COMM_WORLD.size == 1 else 1e-10)


def test_hinge_in_a_spinning_parent(backend):
    """A 3D box on a hinge in a prescribed spinning frame (the parents' states at every
    stage), a disk, gravity, a torque of the state: equal to the TS path."""
    out = {}
    for stepper in ("ts", "dense"):
        model, body = _box_in_spinning_parent()
        out[stepper] = model.integrate(t_end=0.2, dt=0.01, stepper=stepper,
                                       probes=[(body, (0.5, 0.1, 0.05))], progress=False,
                                       options=TIGHT if stepper == "ts" else DENSE_TIGHT)
    angle, tip, energy, ang = _compare(out["ts"], out["dense"], frame="pitch")
    assert angle < 1e-9 and tip < 1e-9 and energy < 1e-9 and ang < 1e-9, (angle, tip, energy,
                                                                           ang)


@pytest.mark.parametrize("which", ["free 2D", "free 3D"])
def test_free_frames(which):
    """Free frames (a planar one with loads of the state, the tumbling 3D box with its
    quaternion): equal to the TS path, their momentum balance and auxiliary momenta as its."""
    out = {}
    for stepper in ("ts", "dense"):
        model, body = MODELS[which]()
        point = (0.5, 0.0) if which == "free 2D" else (0.5, 0.1, 0.05)
        out[stepper] = model.integrate(t_end=0.2, dt=0.01, stepper=stepper,
                                       probes=[(body, point)], progress=False,
                                       options=TIGHT if stepper == "ts" else DENSE_TIGHT)
    a, b = out["ts"], out["dense"]
    assert b.stepper == "dense"
    assert np.abs(a.frames["sat"].R - b.frames["sat"].R).max() < 1e-11
    assert np.abs(a.frames["sat"].r_O - b.frames["sat"].r_O).max() < 1e-11
    assert np.abs(a.probes - b.probes).max() < 1e-9 * np.abs(a.probes).max()
    assert np.abs(a.momentum["linear"] - b.momentum["linear"]).max() < 1e-11
    assert np.abs(a.energy["total"] - b.energy["total"]).max() < 1e-11


def test_dense_full_strip_equals_ts():
    """The strip unreduced (246 dofs): the invariants of every node's field."""
    out = {}
    for stepper in ("ts", "dense"):
        model, body = _hub_beam(reduce=False)
        out[stepper] = model.integrate(t_end=0.1, dt=0.01, stepper=stepper,
                                       probes=[(body, (1.0, 0.0))], progress=False,
                                       options=TIGHT if stepper == "ts" else DENSE_TIGHT)
    angle, tip, energy, ang = _compare(out["ts"], out["dense"])
    assert angle < 1e-10 and tip < 1e-9 and energy < 1e-9, (angle, tip, energy)


def test_dense_stiff_pendulum_period():
    """A stiff elastic pendulum, reduced, released horizontal: the dense path ("auto" picks
    it) swings with the rigid pendulum's period, and equals the TS path."""
    L, H, rho, g, t = 1.0, 0.05, 1000.0, 9.81, 0.01
    m = rho * L * H * t
    T = pendulum_period(m * (L ** 2 / 3 + H ** 2 / 12), m, g, L / 2, math.pi / 2)
    runs = {}
    for stepper in ("auto", "ts"):
        hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
        body = _strip(hub, L=L, H=H, n=(10, 1), E=1e11, rho=rho)
        model = mbs.Model([body], gravity=(0, -g, 0))
        model.attach(body, lambda x: x[0] < 1e-8)
        model.reduce(body, modes=4)
        runs[stepper] = model.integrate(t_end=T, dt=T / 200, stepper=stepper, progress=False,
                                        options=TIGHT if stepper == "ts" else DENSE_TIGHT)
    r = runs["auto"]
    assert r.stepper == "dense"
    th = r.frames["hub"].angle
    assert abs(th[-1]) < 1e-5 and abs(th[100] + math.pi) < 1e-5
    assert np.abs(th - runs["ts"].frames["hub"].angle).max() < 1e-10


def test_one_rank_equals_the_ranks():
    """The same model on each rank alone (COMM_SELF) and on all ranks together: the dense
    runs are the same (the invariants are reduced over the ranks once; every rank steps the
    same arrays; the modes SLEPc finds on the two partitions differ at round-off: measured
    2.7e-12 rad, 3.6e-11 of the tip's peak)."""
    runs = []
    for comm in (MPI.COMM_SELF, COMM):
        model, body = _hub_beam(torque=lambda t, s: 5.0 * math.sin(6.0 * t), comm=comm)
        runs.append(model.integrate(t_end=0.2, dt=0.01, stepper="dense",
                                    probes=[(body, (1.0, 0.0))], progress=False))
    angle, tip, energy, ang = _compare(*runs)
    assert angle < 1e-10 and tip < 1e-9 and energy < 1e-10, (angle, tip, energy)


def test_a_fault_on_one_rank_is_an_error_on_every_rank():
    """A torque function that raises on the last rank only, in the middle of a batch of steps
    (no collective inside it): the same error on every rank at the batch's end, no hang."""
    last = COMM.size - 1

    def torque(t, s):
        if t > 0.05 and COMM.rank == last:
            raise ValueError("torque table ends here")
        return 1.0

    model, _ = _hub_beam(torque=torque)
    with pytest.raises(ValueError, match="torque table ends here"):
        model.integrate(t_end=0.2, dt=0.01, stepper="dense", progress=False)
    # the model steps again afterwards
    model, _ = _hub_beam(torque=lambda t, s: 1.0)
    r = model.integrate(t_end=0.02, dt=0.01, stepper="dense", progress=False)
    assert r.steps == 2


def test_outputs_step_by_step(tmp_path_factory):
    """With observers that see one step at a time (a CSV, the user's callback) the batch is
    shown to them step by step: the same histories, every row written."""
    seen = []
    runs = []
    stem = None
    if COMM.rank == 0:
        stem = str(tmp_path_factory.mktemp("dense") / "run")
    stem = COMM.bcast(stem)
    for kw in ({}, {"callback": lambda t, fr: seen.append((t, fr["hub"]["angle"])),
                    "output": stem}):
        model, body = _hub_beam(torque=lambda t, s: 5.0 * math.sin(6.0 * t))
        runs.append(model.integrate(t_end=0.1, dt=0.01, stepper="dense",
                                    probes=[(body, (1.0, 0.0))], progress=False, **kw))
    assert np.array_equal(runs[0].frames["hub"].angle, runs[1].frames["hub"].angle)
    # the probes' matrix applied to one state or to a batch of them: round-off apart
    assert np.abs(runs[0].probes - runs[1].probes).max() <= 1e-14 * np.abs(runs[0].probes).max()
    assert [a for _, a in seen] == list(runs[1].frames["hub"].angle)
    if COMM.rank == 0:
        rows = np.loadtxt(stem + ".csv", delimiter=",", skiprows=1)
        assert rows.shape[0] == 11 and np.allclose(rows[:, 0], runs[1].times)


def test_dense_refusals_and_choice():
    model, body = _hub_beam()
    r = model.integrate(t_end=0.02, dt=0.01, progress=False)
    assert r.stepper == "dense"
    r = model.integrate(t_end=0.02, dt=0.01, stepper="ts", progress=False)
    assert r.stepper == "ts"
    r = model.integrate(t_end=0.02, dt=0.01, formulation="hamiltonian", progress=False)
    assert r.stepper == "ts"
    with pytest.raises(ValueError, match="formulation 'hamiltonian'"):
        model.integrate(t_end=0.02, dt=0.01, formulation="hamiltonian", stepper="dense",
                        progress=False)
    with pytest.raises(ValueError, match="stepper must be"):
        model.integrate(t_end=0.02, dt=0.01, stepper="linear", progress=False)
    # nonlinear strain
    hub = mbs.frames.Hinge(name="hub")
    b = _strip(hub, stiffening="nonlinear")
    nl = mbs.Model([b])
    nl.attach(b, lambda x: x[0] < 1e-8)
    with pytest.raises(ValueError, match="nonlinear strain"):
        DenseCoupled(nl.coupled_system())
    with pytest.raises(ValueError, match="nonlinear strain"):
        nl.integrate(t_end=0.01, dt=0.01, stepper="dense", progress=False)
    # reduced, it is taken ("auto" too)
    nl.reduce(b, modes=4, method="craig-bampton")
    r = nl.integrate(t_end=0.02, dt=0.01, progress=False)
    assert r.stepper == "dense"
