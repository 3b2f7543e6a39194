"""The dense path of :func:`dolfinx_mbs.integrate.integrate`: small systems stepped in dense
form, replicated on every rank, with the run's observers.

``stepper="dense"`` steps with the TS path's own schemes (:mod:`dolfinx_mbs.integrate.dense.operators`: the same
results up to round-off, without the per-step cost of PETSc TS and its callbacks);
``stepper="exact"`` propagates a system whose frame state is constant in time by matrix
exponentials (:mod:`dolfinx_mbs.integrate.dense.exact`): exact for loads in the span of polynomials and
the sinusoids of ``load_frequencies``. ``"auto"`` takes the dense path for a small linear
system (:data:`dolfinx_mbs.integrate.dense.operators.DENSE_MAX` unknowns for a constant frame state,
:data:`~dolfinx_mbs.integrate.dense.operators.DENSE_MAX_VARYING` for frames changing in time where the operators
are combinations of constant reduced matrices and the loads change through the frames and
gravity only: :mod:`dolfinx_mbs.integrate.dense.varying`, :mod:`dolfinx_mbs.integrate.dense.batch`) unless PETSc
options were given.

The observers are those of the TS path, but for two that read the reduced state directly:
:class:`DenseEnergies` (the energies from the dense operators) and :class:`ProbeMatrix` (the
probes as a matrix applied to q, found once by expanding the unit vectors; probes read the
bodies' fields where the constraints prescribe motion). The bodies' ``u`` are set at the steps
only for observers that read them (fields, callback, probes of prescribed motion), and at the
end of the run.
"""

from __future__ import annotations

import logging
from typing import List

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.integrate import observers as obs
from dolfinx_mbs.integrate.dense.batch import WholeRun
from dolfinx_mbs.integrate.dense.exact import Exact, LoadBasis
from dolfinx_mbs.integrate.dense.operators import SCHEMES, DenseOperators, gather_vector
from dolfinx_mbs.integrate.dense.varying import VaryingOperators
from dolfinx_mbs.integrate.dense.varying import applies as varying_applies
from dolfinx_mbs.integrate.initial import reduced_initial
from dolfinx_mbs.integrate.schemes import step_times
from dolfinx_mbs.integrate.stability import Stability
from dolfinx_mbs.io.output import Probes, probe_columns
from dolfinx_mbs.systems.records import constant_frame

__all__ = ["run", "DenseEnergies", "ProbeMatrix"]

log = logging.getLogger(__name__)


class DenseEnergies(obs.Energies):
    """:class:`~dolfinx_mbs.integrate.observers.Energies` from the dense operators of the step
    (``Step.dense``), with no product of the system's matrices."""

    def observe(self, step):
        q, v, ops = step.dense
        o = ops.at(step.t)
        kin = 0.5 * float(v @ (o.M @ v))
        pot = 0.5 * float(q @ (o.Kpot @ q))
        return self.record(step.t, kin, 0.5 * float(q @ (o.Kel @ q)), pot,
                           kin + pot - float(q @ o.f), float(v @ o.f))

    def observe_all(self, T, Q, V, F, o) -> None:
        """The energies of a whole run at once: times T (N,), states Q, V and loads F
        (N, n) rows, the operators ``o`` constant (n, n) or one per time (N, n, n)."""
        def quad(X, A):
            return 0.5 * (np.einsum("ij,ij->i", X, X @ A.T) if A.ndim == 2 else
                          np.einsum("ki,kij,kj->k", X, A, X))
        kin, ela, pot = quad(V, o.M), quad(Q, o.Kel), quad(Q, o.Kpot)
        jac = kin + pot - np.einsum("ij,ij->i", Q, F)
        power = np.einsum("ij,ij->i", V, F)
        self.record_all(T, kin, ela, pot, jac, power)


class ProbeMatrix(obs.Observer):
    """The probes as P q: P found once, by expanding each unit vector of the reduced
    coordinates and evaluating the probes (exact: the expansion A q is linear). For systems
    without prescribed motion (a0 = 0)."""

    def __init__(self, system, points):
        self.probes = Probes(system.bodies, list(points))
        self.columns = probe_columns(self.probes.n, self.probes.dim)
        self.values: List[np.ndarray] = []
        q, full = system.create_reduced_vec(), system.space.create_vec()
        funcs = [b.u for b in system.bodies]
        r0, r1 = q.getOwnershipRange()
        cols = []
        for i in range(system.n_reduced):
            q.zeroEntries()
            if r0 <= i < r1:
                q.setValue(i, 1.0)
            q.assemble()
            system.expand(q, out=full, homogeneous=True)
            system.space.scatter(full, funcs)
            cols.append(self.probes.evaluate().reshape(-1))
        self.P = np.array(cols).T

    def observe(self, step):
        pv = (self.P @ step.dense[0]).reshape(self.probes.n, self.probes.dim)
        self.values.append(pv)
        return pv.reshape(-1).tolist()

    def observe_all(self, Q) -> None:
        """The probes of all the states Q (rows)."""
        self.values.extend((Q @ self.P.T).reshape(len(Q), self.probes.n, self.probes.dim))


class _Form:
    """What the observers ask of a run's form (work vectors, the acceleration of reactions),
    on the dense operators."""

    def __init__(self, q: PETSc.Vec, run):
        self.work, self.work2 = q.duplicate(), q.duplicate()
        self.run = run

    def acceleration(self, t, q, v, out):
        """q'' from M q'' = f - C q' - K q at the run's state."""
        o, r = self.run.ops.at(t), self.run
        a = np.linalg.solve(o.M, o.f - o.C @ r.v - o.K @ r.q)
        out.getArray()[:] = a[r.r0:r.r1]
        return out


class _Run:
    """One dense run's state: the scheme, the operators, the reduced vectors."""

    def __init__(self, system, formulation, kind, t0, t_end, dt, n_steps, radius, basis,
                 oargs):
        self.system = system
        system.forget()  # the frames and loads as they are now
        #: frames changing in time, the operators combined from stacks (dense_varying)
        self.varying = kind == "dense" and not constant_frame(system) and \
            varying_applies(system)
        if self.varying:
            self.ops = VaryingOperators(system, formulation, oargs["energy"],
                                        bool(oargs["reactions"]))
            self.combined = self.ops.check_loads(t0, t_end, [t0] + step_times(t0, t_end, dt))
            scheme = SCHEMES[formulation](self.ops, radius) if formulation == \
                "second-order" else SCHEMES[formulation](self.ops)
            self.scheme, self.fit = WholeRun(scheme, self.ops), None
            self.qv = system.create_reduced_vec(), system.create_reduced_vec()
            self.r0, self.r1 = self.qv[0].getOwnershipRange()
            return
        self.ops = DenseOperators(system, formulation, oargs["energy"],
                                  bool(oargs["reactions"]))
        fit = None
        if self.ops.constant_frame() and (kind == "exact" or 2 * n_steps > 2 * basis.m + 4):
            fit = self.ops.fit_loads(basis, t0, t_end)
        if kind == "exact":
            if not self.ops.constant_frame():
                raise ValueError("stepper='exact' needs a frame state constant in time (time-"
                                 "invariant frames, fixed constraints, linear strain); use "
                                 "stepper='dense'")
            if fit is None or not fit.exact:
                raise ValueError(
                    "stepper='exact': the loads over [t0, t_end] are not in the span of "
                    f"{basis.describe()} (fit residual {fit.residual:.2e} of their variation): "
                    "give load_degree= and load_frequencies= (rad/s) that span them, or use "
                    "stepper='dense'")
            self.scheme = Exact(self.ops, formulation, t0)
        else:
            self.scheme = SCHEMES[formulation](self.ops, radius) if formulation == \
                "second-order" else SCHEMES[formulation](self.ops)
        self.fit = fit
        self.qv = system.create_reduced_vec(), system.create_reduced_vec()
        self.r0, self.r1 = self.qv[0].getOwnershipRange()

    def set_state(self, t, need_v, vecs):
        """The state at ``t`` as arrays, and in the PETSc vectors with ``vecs``."""
        self.q, self.v = self.scheme.state(t, need_v)
        if vecs:
            for V, x in zip(self.qv, (self.q, self.v)):
                V.getArray()[:] = x[self.r0:self.r1]


#: the observers that can see a whole run at once (their values computed after the steps)
BATCH = {"energy": DenseEnergies, "finite": obs.Finite, "probes": ProbeMatrix,
         "progress": obs.Progress, "stability": Stability}


def _batch(watch, r, prescribed) -> bool:
    """Whether the run's observers can see its steps after they are all taken: the loads
    fitted (no assembly at any time: a constant frame state) or the run stepped whole (frames
    changing in time, :mod:`dolfinx_mbs.integrate.dense.batch`), no motion prescribed, and only
    observers of :data:`BATCH` (no CSV, fields, callback or reactions)."""
    return ((r.varying or r.fit is not None and r.fit.exact) and not prescribed
            and all(type(o) is BATCH.get(k) for k, o in watch.items()))


def _run_batch(watch, r, times) -> float:
    """Step through ``times`` keeping the states, then give the observers the whole run
    (the same values as step by step); returns the last time reached."""
    N, n = len(times), r.system.n_reduced
    st = watch.get("stability")
    if st is not None and r.varying and r.scheme.outputs.Kpot is not None and \
            st.clear(r.scheme.outputs.Kpot):
        st = None  # no negative stiffness at any step it would check: nothing to report
    if st is not None:  # a constant frame state: checked at the first step only, on the
        # dense operators (no factorization of the system's), else where due (the observer
        # decides)
        for k in range(N if r.varying else 1):
            st.observe(obs.Step(index=k, t=times[k], q=r.qv[0], v=r.qv[1], u=None, form=None,
                                dense=(None, None, r.scheme if r.varying else r.ops)))
    if r.varying:  # stepped already (run)
        Q, W = r.scheme.Q, r.scheme.V
    elif hasattr(r.scheme, "trajectory"):  # exact steps: the loads' part in one product
        Q, W = r.scheme.trajectory(times)
    else:
        Q, W = np.empty((N, n)), np.empty((N, n))
        Q[0], W[0] = r.scheme.raw()
        for k in range(1, N):
            r.scheme.step(times[k - 1], times[k] - times[k - 1])
            Q[k], W[k] = r.scheme.raw()
    T = np.array(times)
    if r.varying:
        o = r.scheme.outputs
        vec = {"f": o.f}
    else:
        vec = r.fit.values_many(T)
        o = r.ops.at(times[0])
    V = W
    if r.scheme.momentum:  # v = M^-1 (p - G_p q - pi_0)
        V = (W - Q @ o.Gp.T - vec["pi0"]) @ r.ops.mass_inverse().T
    en, fin = watch.get("energy"), watch["finite"]
    if en is not None:
        en.observe_all(T, Q, V, vec["f"], o)
        bad = ~(np.isfinite(en.history["kinetic"]) & np.isfinite(en.history["elastic"]))
    else:
        bad = ~np.isfinite(Q).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        fin.failure = f"the solution is not finite at t={times[k]:g} (step {k})"
        raise FloatingPointError(fin.failure)
    if "probes" in watch:
        watch["probes"].observe_all(Q)
    pb = watch.get("progress")
    if pb is not None and pb.bar is not None:
        pb.bar.update(N - 1)
    return times[-1]


def run(system, formulation: str, kind: str, t0: float, t_end: float, dt: float, initial,
        oargs: dict, make_observers, radius=None, basis: LoadBasis = None):
    """Integrate ``system`` on the dense path ``kind`` (``"dense"`` or ``"exact"``); the
    observers from ``make_observers(label, n_steps, energies, probes)``. Returns (times,
    observers, scheme name, steps)."""
    basis = basis or LoadBasis()
    times = step_times(t0, t_end, dt)
    r = _Run(system, formulation, kind, t0, t_end, dt, len(times), radius, basis, oargs)
    comm = system.comm
    u0, v0, p0 = (None if x is None else gather_vector(reduced_initial(system, x, n), comm)
                  for x, n in zip(initial, ("u0", "v0", "p0")))
    n = system.n_reduced
    u0 = np.zeros(n) if u0 is None else u0
    v0 = np.zeros(n) if v0 is None else v0
    r.scheme.initial(t0, u0, v0, p0)
    name = r.scheme.name
    label = f"{formulation} ({'dense ' if kind == 'dense' else ''}{name})"
    prescribed = system.reducer.prescribed
    pm = None if prescribed else (lambda b, p: ProbeMatrix(system, p))
    watch = make_observers(label, len(times), DenseEnergies, pm)
    set_u = any(o.needs_u for o in watch.values())
    need_v = any(o.needs_velocity for o in watch.values())
    # the PETSc vectors q, v: for the observers that read them
    vecs = set_u or any(k in watch for k in ("reactions", "callback")) or "energy" not in watch
    log.info("integrate: %s path, %s, %d unknowns on every rank%s", kind, label, n,
             (", frames changing in time: operators combined from reduced stacks, loads "
              + ("combined from unit loads" if r.combined else "from the system at each "
                 "time") + ", the steps formed in batch") if r.varying else
             "" if r.fit is None else f", loads fitted on {basis.describe()} "
             f"(residual {r.fit.residual:.1e}{'' if r.fit.exact else ': sampled instead'})")
    full = system.space.create_vec()
    funcs = [b.u for b in system.bodies]
    form = _Form(r.qv[0], r)
    out_t = [t0] + times
    t = t0
    try:
        if r.varying:  # the whole run's steps at once; the observers see them below
            with np.errstate(over="ignore", invalid="ignore"):
                r.scheme.trajectory(out_t)
        if _batch(watch, r, prescribed):
            t = _run_batch(watch, r, out_t)
            r.set_state(t, False, True)
        else:
            for index, t in enumerate(out_t):
                if index:
                    r.scheme.step(out_t[index - 1], t - out_t[index - 1])
                if prescribed:  # a0(t) of the expansions
                    system.update(t)
                r.set_state(t, need_v, vecs)
                step = obs.Step(index=index, t=t, q=r.qv[0], v=r.qv[1], u=full, form=form,
                                dense=(r.q, r.v, r.scheme if r.varying else r.ops))
                obs.notify(watch, step, system, full, funcs, set_u=set_u)
            r.set_state(t, False, True)
        if not set_u:
            system.expand(r.qv[0], out=full)
            system.space.scatter(full, funcs)
    except FloatingPointError:
        raise RuntimeError(f"time integration failed ({formulation}, {label}) at t={t:g}: "
                           f"{watch['finite'].failure}") from None
    finally:
        for o in watch.values():
            o.close()
        full.destroy()
    return out_t, watch, name, len(times)
