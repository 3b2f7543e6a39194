"""Velocity constraints B(t) Delta' = c(t) that are not integrable (Model.constrain_velocity),
integrated in Maggi's (q, w) form, against an independent reference: the full operators of the
same small model extracted as dense arrays, and the index-1 multiplier DAE

    M Delta'' + C Delta' + K Delta + B^T lambda = Q(t),   B Delta'' + B' Delta' = c'

(clamped dofs removed, B' written by hand) solved for (Delta'', lambda) at each time and
integrated by scipy's Radau at tight tolerances. Also: the rows hold on the computed velocities
to round-off, a constant row given at velocity level equals the same row given to
``constrain``, one and two ranks agree, and bad input raises clear errors on every rank."""

import time

import numpy as np
import pytest
import scipy.linalg as la
from mpi4py import MPI
from scipy.integrate import solve_ivp

from tests.models.nonholonomic import (
    OMEGA_B,
    PROBES,
    W_F,
    H,
    L,
    cantilever,
    nonholonomic_rows,
    ramp,
)

COMM = MPI.COMM_WORLD
T_END = 0.01










def row_residual(ref, rhs, t, v):
    """max |B(t) v - c(t)| / max |v| for a full velocity array v."""
    dofs, B, _, _ = ref(t)
    return np.abs((B * v[dofs]).sum(axis=1) - rhs(t)).max() / max(np.abs(v).max(), 1e-300)


# -- gathering PETSc objects as dense arrays (small models only) --------------------------------
def dense(M):
    r0, r1 = M.getOwnershipRange()
    indptr, cols, vals = M.getValuesCSR()
    out = np.zeros(M.getSize())
    for r in range(r1 - r0):
        out[r0 + r, cols[indptr[r]:indptr[r + 1]]] = vals[indptr[r]:indptr[r + 1]]
    return COMM.allreduce(out, op=MPI.SUM)


def dense_vec(v):
    r0, r1 = v.getOwnershipRange()
    out = np.zeros(v.getSize())
    out[r0:r1] = v.getArray(readonly=True)
    return COMM.allreduce(out, op=MPI.SUM)


def reference(model, body, ref, times):
    """The multiplier DAE on the free dofs, from the model's full M, C, K and Q (dense):
    Delta'' = M^-1 (r - B^T lambda), lambda from B Delta'' + B' Delta' = c', by DOP853 at
    rtol 1e-10. Returns the full displacement at ``times``, (len(times), N)."""
    asm = model.assembly
    M, C, K = (dense(X) for X in (asm.mass(), asm.damping(0.0), asm.stiffness(0.0)))
    Q0 = dense_vec(asm.load(0.0))               # centrifugal load (the tip load is 0 at t=0)
    F = dense_vec(asm.load(np.pi / W_F)) - Q0   # the tip load at full amplitude (ramp = 1)
    # free dofs: those not at x = 0 (from the dof coordinates, every rank)
    n = body.V.dofmap.index_map.size_local
    x = body.V.tabulate_dof_coordinates()[:n, 0]
    xs = np.repeat(np.concatenate(COMM.allgather(x)), body.gdim)
    free = np.flatnonzero(~np.isclose(xs, 0.0))
    where = np.full(len(xs), -1)
    where[free] = np.arange(len(free))
    fixed = np.flatnonzero(np.isclose(xs, 0.0))
    Q0f, Ff = Q0[fixed], F[fixed]
    Mc, Cc, Kc = (X[np.ix_(fixed, free)] for X in (M, C, K))  # the clamp's rows
    M, C, K = (X[np.ix_(free, free)] for X in (M, C, K))
    nf = len(free)
    Minv = la.inv(M)
    MiC, MiK, MiQ0, MiF = Minv @ C, Minv @ K, Minv @ Q0[free], Minv @ F[free]
    u0 = la.solve(K, Q0[free])                  # at rest in the centrifugal field

    def rhs(t, y):
        u, v = y[:nf], y[nf:]
        dofs, B, Bd, cd = ref(t)
        d = where[dofs]
        a = MiQ0 + ramp(t, W_F) * MiF - MiC @ v - MiK @ u    # M^-1 r
        MB = np.stack([Minv[:, d[r]] @ B[r] for r in range(2)], axis=1)   # M^-1 B^T
        S = np.array([[B[r] @ MB[d[r], q] for q in range(2)] for r in range(2)])
        lam = np.linalg.solve(S, (B * a[d]).sum(axis=1) + (Bd * v[d]).sum(axis=1) - cd)
        return np.concatenate([v, a - MB @ lam])

    y0 = np.concatenate([u0, np.zeros(nf)])
    sol = solve_ivp(rhs, (times[0], times[-1]), y0, method="DOP853", t_eval=times,
                    rtol=1e-10, atol=1e-13)
    assert sol.success, sol.message
    full = np.zeros((len(times), len(xs)))
    full[:, free] = sol.y[:nf].T
    # the clamp's resultant (body components): M Delta'' + C Delta' + K Delta - Q on its rows
    react = np.zeros((len(times), 2))
    for n_, t in enumerate(times):
        y = sol.y[:, n_]
        fc = Mc @ rhs(t, y)[nf:] + Cc @ y[nf:] + Kc @ y[:nf] - Q0f - ramp(t, W_F) * Ff
        react[n_] = [fc[0::2].sum(), fc[1::2].sum()]
    return full, react


def probe_dofs(model, body):
    return np.array([[model.dof(body, p, k) for k in range(2)] for p in PROBES])


def run(model, body, dt, **kwargs):
    return model.integrate(T_END, dt, formulation="first-order", probes=[
        (body, p) for p in PROBES], progress=False, **kwargs)


def dae_study():
    """The comparison with the reference DAE (also used by docs/validation.py): probe and
    clamp-reaction errors at dt = 2e-4, 1e-4, 5e-5, the worst row residual on the computed
    velocities, and the error of Richardson's extrapolation of the two finest runs."""
    model, body = cantilever(COMM, rate=30.0)
    rows, rhs, ref = nonholonomic_rows(model, body)
    model.constrain_velocity(rows, rhs=rhs, time_scale=0.1 / OMEGA_B, name="nh")
    basis = model.velocity_system.basis
    assert basis.rheonomic and basis.n_reduced == model.reducer.n_reduced - 2
    # c(0) = 0: the static state is allowed (copied: integrate overwrites body.u)
    u0 = [f.copy() for f in model.solve_static()]
    root = model.constraints[0]
    runs, worst_row, dts = [], 0.0, (2e-4, 1e-4, 5e-5)
    for dt in dts:
        res = []
        r = run(model, body, dt, u0=u0, reactions=[root], callback=lambda t, u, v: res.append(
            row_residual(ref, rhs, t, dense_vec(v))))
        worst_row = max(worst_row, max(res))
        runs.append(r)
    fine = runs[-1].times
    full, react = reference(model, body, ref, fine)
    dofs = probe_dofs(model, body)
    ref_p = full[:, dofs]                       # (times, probes, 2)
    scale = np.abs(ref_p - ref_p[0]).max()     # errors relative to the motion
    assert scale > 1e-6
    R = np.array([body.frame.state(t).R[:2, :2] for t in fine])
    ref_r = np.einsum("nij,nj->ni", R, react)
    errs, rerrs = [], []
    for r in runs:
        stride = (len(fine) - 1) // (len(r.times) - 1)
        assert np.allclose(r.times, fine[::stride], rtol=0, atol=1e-12)
        errs.append(np.abs(r.probes - ref_p[::stride]).max() / scale)
        rerrs.append(np.abs(r.reactions[root.name] - ref_r[::stride]).max()
                     / np.abs(ref_r).max())
    rich = (4 * runs[2].probes[::2] - runs[1].probes) / 3
    err_rich = np.abs(rich - ref_p[::2]).max() / scale
    return dict(dts=dts, errs=errs, rerrs=rerrs, worst_row=worst_row, err_rich=err_rich)


def test_nonholonomic_rows_against_multiplier_dae():
    """A spinning, lightly damped cantilever with two non-integrable rows (one with c != 0),
    from rest in the centrifugal field under a smooth tip load: Crank-Nicolson in (q, w) against
    the reference DAE, at three steps (second order); the rows hold on the computed velocities
    to round-off; the clamp reaction follows the reference's."""
    t_start = time.perf_counter()
    d = dae_study()
    errs, rerrs, worst_row, err_rich = d["errs"], d["rerrs"], d["worst_row"], d["err_rich"]
    if COMM.rank == 0:
        orders = [round(float(np.log2(errs[i] / errs[i + 1])), 2) for i in range(2)]
        print(f"\n[ranks={COMM.size}] probe errors {['%.2e' % e for e in errs]} (orders "
              f"{orders}), reaction errors {['%.2e' % e for e in rerrs]}, row residual "
              f"{worst_row:.1e}, extrapolated {err_rich:.2e}; total "
              f"{time.perf_counter() - t_start:.1f} s")
    # Richardson's extrapolation of the two finest runs meets the reference much closer
    # (the reference is not what limits the agreement)
    assert worst_row < 1e-12
    assert errs[-1] < 2e-2 and err_rich < 0.1 * errs[-1], (errs, err_rich)
    assert all(errs[i] / errs[i + 1] > 3.5 for i in range(2)), errs
    assert rerrs[-1] < 1e-2 and rerrs[0] / rerrs[-1] > 10.0, rerrs


def test_constant_velocity_row_equals_holonomic_row():
    """A constant row with c = 0 is integrable: given at velocity level (state (q, w)) it
    gives the first-order (q, v) solution of the same row given to ``constrain`` (the
    trapezoidal rule keeps B q = 0 exactly, and is invariant under the change of
    variables), and the same natural frequencies."""
    out = []
    for how in ("constrain", "constrain_velocity"):
        model, body = cantilever(COMM, rate=30.0)
        i, j = model.dof(body, (L, 0.0), 1), model.dof(body, (0.5, H), 0)
        getattr(model, how)([{i: 1.0, j: -3.0}], name="row")
        w = model.natural_frequencies(n=4, gyroscopic=True)
        r = run(model, body, 1e-4)
        out.append((w, r.probes, r.energy["kinetic"]))
    (w1, p1, k1), (w2, p2, k2) = out
    assert np.abs(p1).max() > 1e-6
    assert np.abs(p2 - p1).max() <= 1e-10 * np.abs(p1).max()
    assert np.abs(k2 - k1).max() <= 1e-9 * np.abs(k1).max()
    assert np.abs(w2 / w1 - 1).max() < 1e-9, (w1, w2)


def test_world_equals_self():
    """The (q, w) form on all ranks and on one: the same probe histories to 1e-10."""
    res = []
    for comm in (COMM, MPI.COMM_SELF):
        model, body = cantilever(comm, rate=30.0)
        rows, rhs, _ = nonholonomic_rows(model, body)
        model.constrain_velocity(rows, rhs=rhs, time_scale=0.1 / OMEGA_B)
        res.append(model.integrate(4e-3, 2e-4, formulation="first-order",
                                   probes=[(body, p) for p in PROBES], progress=False).probes)
    assert np.abs(res[0] - res[1]).max() <= 1e-10 * np.abs(res[1]).max()


def test_bad_velocity_rows_raise_everywhere():
    model, body = cantilever(COMM, rate=30.0)
    i, j = model.dof(body, (L, 0.0), 1), model.dof(body, (0.5, 0.0), 1)
    N = model.space.n_global
    for rows, rhs, match in (
            ({i: 1.0}, None, "rows must be a list"),
            ([{i: "one"}], None, "coefficient must be a number or a callable"),
            ([{N + 3: 1.0}], None, "outside"),
            ([{1.5: 1.0}], None, "non-integer dof index"),
            ([{i: 0.0, j: 0.0}], None, "only zero coefficients"),
            ([{i: 1.0}], [0.0, 1.0], "rhs must have 1 entries"),
            ([{i: 1.0}], lambda t: [0.0, 1.0], "rhs\\(t\\) must return 1 numbers"),
            ([{i: 1.0, j: lambda t: [1.0, 2.0]}], None, "callable coefficient must return one"),
    ):
        with pytest.raises(ValueError, match=match):
            model.constrain_velocity(rows, rhs=rhs)
    with pytest.raises(ValueError, match="time_scale"):
        model.constrain_velocity([{i: 1.0}], time_scale=-1.0)
    assert not model.velocity_constraints
    # a coefficient that is not smooth on the given time scale
    model.constrain_velocity([{i: 1.0, j: lambda t: np.sin(1e5 * t)}], name="rough")
    with pytest.raises(ValueError, match="rough.*could not be computed reliably"):
        model.velocity_system
    model.velocity_constraints.clear()
    model.constrain_velocity([{i: 1.0, j: lambda t: np.sin(600.0 * t)}], rhs=lambda t: [t],
                             time_scale=1e-4, name="nh")
    for form in ("second-order", "hamiltonian"):
        with pytest.raises(ValueError, match="need formulation='first-order'"):
            model.integrate(1e-3, 1e-4, formulation=form, progress=False)
    with pytest.raises(ValueError, match="first-order"):
        model.integrate(1e-3, 1e-4, formulation="first-order", constraints="multipliers",
                        progress=False)
    with pytest.raises(ValueError, match="time-varying"):
        model.natural_frequencies(n=2)
    with pytest.raises(ValueError, match="no static state exists"):
        model.solve_static(t=1e-3)            # c(t) = t != 0
    model.solve_static(t=0.0)                 # c(0) = 0
    with pytest.raises(ValueError, match="velocity constraints"):
        model.campbell([0.0, 10.0], n=2)
    with pytest.raises(ValueError, match="callback must be callable"):
        model.integrate(1e-3, 1e-4, formulation="first-order", callback=3, progress=False)
    # the holonomic constraints' own checks still name the velocity rows
    m2, b2 = cantilever(COMM, rate=0.0)
    k = m2.dof(b2, (L, 0.0), 0)
    m2.constrain_velocity([{k: 1.0}], rhs=[1.0], name="first")
    m2.constrain_velocity([{k: 2.0}], rhs=[1.0], name="second")
    with pytest.raises(ValueError, match="'second' contradicts 'first'"):
        m2.velocity_system
