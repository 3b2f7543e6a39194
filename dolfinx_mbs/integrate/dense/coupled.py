"""The dense path of a model with computed frames: the coupled equations stepped in small
arrays (``stepper="dense"``, or ``"auto"`` where :func:`applies` finds nothing against it).

The rows are :class:`~dolfinx_mbs.systems.coupled_dense.DenseCoupled`'s (the bodies' inertia
invariants projected once); the schemes are those of the TS path
(:mod:`dolfinx_mbs.integrate.ts.coupled`), written here on the arrays as PETSc steps them, so
that both paths give the same steps to the Newton tolerance:

* ``"second-order"``: PETSc's TSALPHA (generalized-alpha for first-order systems, Jansen,
  Whiting and Hulbert) with its restart: two backward-Euler half steps give the initial rate by
  a backward difference (its step as the installed PETSc takes it,
  :func:`dolfinx_mbs.compat.alpha1_restart_step`), then one stage a step at t + alpha_f h;
* ``"first-order"``: PETSc's TSBDF of order 2 with its restart (a backward-Euler half step,
  then BDF2 on the variable grid t0, t0 + h/2, t0 + h, then on the steps).

Each stage is solved by Newton's method with the exact Jacobian formed at every iterate (a
dense LU of 2 n + m unknowns) until the update is at round-off of its block (the elastic
coordinates, their rates, each frame unknown). No PETSc object is made or assembled per step;
the observers are the coupled run's (:func:`dolfinx_mbs.integrate.coupled.coupled_observers`)
with the energies and momenta from the invariants and the probes as a matrix applied to q.
Every rank steps the same arrays.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, List, Tuple

import numpy as np
import scipy.linalg as sla

from dolfinx_mbs import compat
from dolfinx_mbs.integrate import observers as obs
from dolfinx_mbs.integrate.stepper import Needs, PythonLoop, RunSpec, State
from dolfinx_mbs.systems.coupled_dense import DenseCoupled, dense_reason

if TYPE_CHECKING:
    from petsc4py import PETSc

    from dolfinx_mbs.integrate.stepper import Boundary
    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["DenseCoupledStepper", "applies", "DENSE_COUPLED_MAX"]

log = logging.getLogger(__name__)

#: the largest number of elastic reduced unknowns that ``stepper="auto"`` steps in dense form
#: (a dense LU of 2 n + m a Newton iteration, n^2 (1 + g + n) products a residual)
DENSE_COUPLED_MAX = 60
#: an update below this fraction of its block (or of the step's increment of it) is round-off
ROUNDOFF = 1e-13
#: an exact Newton step that leaves the residual as it was, with an update below this fraction
#: of its block, is at the round-off plateau
PLATEAU = 1e-7


def applies(system: CoupledSystem, run: RunSpec) -> str | None:
    """Why the dense path cannot step ``run`` on the coupled ``system``, or None.

    Args:
        system: the coupled system.
        run: the run.

    Returns:
        The reason in words, or None.
    """
    if run.formulation not in ("second-order", "first-order"):
        return f"formulation {run.formulation!r} (the dense path: 'second-order', 'first-order')"
    if run.checkpoints:
        return "checkpoints (checkpoint_every=, restart=)"
    if run.options:
        return "PETSc options (options=)"
    return dense_reason(system)


class DenseMonitors(obs.Observer):
    """The coupled run's energies and momenta (the ``monitors`` observer of
    :mod:`dolfinx_mbs.integrate.coupled`) from the dense invariants.

    Args:
        dense: the dense system.
        work: the run's work observer (its history is ``energy["work"]``).
    """

    columns = ["kinetic", "elastic", "gravity", "total"]
    needs_velocity = True

    def __init__(self, dense: DenseCoupled, work: Any) -> None:
        self.dense, self.work = dense, work
        self.history: list = []

    def observe(self, step: obs.Step) -> List[float]:
        """Record the energies and momenta at the step.

        Args:
            step: the run's state (its ``dense`` arrays read).

        Returns:
            The CSV columns.

        Raises:
            FloatingPointError: the energy is not finite.
        """
        q, v, _ = step.dense
        mon = self.dense.monitors(step.t, q, v, step.frames)
        self.history.append(mon)
        if not math.isfinite(mon["total"]):
            raise FloatingPointError(f"the solution is not finite at t={step.t:g}")
        return [mon[k] for k in self.columns]

    def results(self) -> dict:
        """``energy`` and ``momentum``, as the TS path's observer gives them."""
        h = self.history
        energy = {k: np.array([e[k] for e in h]) for k in self.columns}
        energy["work"] = np.array(self.work.history)
        return {"energy": energy,
                "momentum": {"linear": np.array([m["momentum"] for m in h]),
                             "angular": np.array([m["angular_momentum"] for m in h])}}


class DenseCoupledStepper(PythonLoop):
    """A coupled run stepped in dense arrays (see the module docstring).

    Args:
        system: the coupled system.
        run: the run (``formulation`` ``"second-order"`` or ``"first-order"``).
    """

    path = "dense"

    def __init__(self, system: CoupledSystem, run: RunSpec) -> None:
        why = applies(system, run)
        if why is not None:
            raise ValueError(f"stepper='dense' cannot step a run with {why}: use "
                             "stepper='ts' or 'auto'")
        self.system = system
        self.dense = DenseCoupled(system)
        self.formulation = run.formulation
        self.times = [run.t0] + run.times()
        self.n_steps = len(self.times) - 1
        if run.formulation == "second-order":
            r = 1.0 if run.spectral_radius is None else float(run.spectral_radius)
            am, af = 0.5 * (3.0 - r) / (1.0 + r), 1.0 / (1.0 + r)
            self.params = (am, af, 0.5 + am - af)
            self.method = self.scheme = "alpha"
            self.restart_step = compat.alpha1_restart_step()
        else:
            self.method = self.scheme = "bdf"
        self.named = None
        self.y = np.zeros(self.dense.N)
        self.V: np.ndarray | None = None       # TSALPHA's rate
        self.hist: List[Tuple[float, np.ndarray]] = []   # TSBDF's past states
        self.started = False
        self._vecs: Tuple[Any, Any] | None = None
        #: Newton's iterations over the run (the stages' sum) and the stages solved
        self.iterations = 0
        self.stages = 0

    @staticmethod
    def applies(system: CoupledSystem, run: RunSpec) -> str | None:
        """Why the dense path cannot step ``run``, or None (:func:`applies`).

        Args:
            system: the coupled system.
            run: the run.

        Returns:
            The reason, or None.
        """
        return applies(system, run)

    # -- the state ---------------------------------------------------------------------------
    def initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                p0: PETSc.Vec | None) -> None:
        """The state at ``t0``: the elastic state and the frame unknowns that fit it.

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: unused (None).
        """
        from dolfinx_mbs.integrate.dense.operators import gather_vector
        s, n = self.system, self.dense.n
        f0 = s.initial_unknowns(q0, v0, t0)
        if n:
            self.y[:n] = gather_vector(q0, s.comm)
            self.y[n:2 * n] = gather_vector(v0, s.comm)
        self.y[2 * n:] = f0
        self._vecs = (q0.duplicate(), v0.duplicate()) if n else (q0, v0)

    def prepare(self, needs: Needs) -> None:
        """Keep what the observers read.

        Args:
            needs: what they read.
        """
        self.needs = needs

    def state(self, t: float, need_v: bool) -> State:
        """The state at the boundary ``t`` (arrays, and the reduced Vecs filled from them).

        Args:
            t: the boundary's time (s).
            need_v: whether the velocity is read.

        Returns:
            The state.
        """
        n = self.dense.n
        q, v, f = self.y[:n], self.y[n:2 * n], self.y[2 * n:]
        qv, vv = self._vecs
        if n:
            r0, r1 = qv.getOwnershipRange()
            qv.array[:] = q[r0:r1]
            vv.array[:] = v[r0:r1]
        return State(qv, vv, dense=(q.copy(), v.copy(), None), frames=f.copy())

    def march(self, at: Boundary) -> None:
        """Step through the run's times; at the end the frames hold their final state.

        Args:
            at: the driver's side of the seam.
        """
        self.loop(at)
        s, f = self.system, self.y[2 * self.dense.n:]
        for fr, zs, ws in zip(s.frames, s.zslice, s.wslice):
            fr.set_state(self.time, f[zs], f[ws])

    # -- the schemes -------------------------------------------------------------------------
    def step(self, t: float, h: float) -> None:
        """The step from ``t`` to ``t + h``.

        Args:
            t: the step's start (s).
            h: its size (s).
        """
        if self.formulation == "second-order":
            self._alpha_step(t, h)
        else:
            self._bdf_step(t, h)

    def _alpha_stage(self, t: float, h: float, X0: np.ndarray, V0: np.ndarray,
                     params: tuple) -> Tuple[np.ndarray, np.ndarray]:
        """One TSALPHA stage from (X0, V0): (X1, V1)."""
        am, af, gm = params
        ta = t + af * h
        shift = am / (af * gm * h)

        def stage(X1: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
            V1 = (X1 - X0) / (gm * h) + (1.0 - 1.0 / gm) * V0
            return X0 + af * (X1 - X0), V0 + am * (V1 - V0)
        X1 = self._newton(stage, ta, shift, af, X0.copy(), X0)
        V1 = (X1 - X0) / (gm * h) + (1.0 - 1.0 / gm) * V0
        return X1, V1

    def _alpha_step(self, t: float, h: float) -> None:
        X0 = self.y.copy()
        if not self.started:
            be = (1.0, 1.0, 1.0)
            Z = np.zeros_like(X0)
            X1, _ = self._alpha_stage(t, 0.5 * h, X0, Z, be)
            X2, _ = self._alpha_stage(t + 0.5 * h, 0.5 * h, X1, Z, be)
            self.V = (-3.0 * X0 + 4.0 * X1 - X2) / (self.restart_step * h)
            self.started = True
        self.y, self.V = self._alpha_stage(t, h, X0, self.V, self.params)

    def _bdf_step(self, t: float, h: float) -> None:
        X0 = self.y.copy()
        if not self.started:
            # TSBDF's restart: a backward-Euler half step, then BDF2 on (t0, t0 + h/2)
            self.hist = [(t, X0)]
            th = t + 0.5 * h
            Xh = self._bdf_solve(th, [(t, X0)], X0)
            self.hist = [(t, X0), (th, Xh)]
            self.started = True
        else:
            self.hist = [(t, X0)] + self.hist[:1]
        t1 = t + h
        guess = _lagrange(t1, self.hist) if len(self.hist) > 1 else X0.copy()
        self.y = self._bdf_solve(t1, self.hist, guess)

    def _bdf_solve(self, t1: float, hist: List[Tuple[float, np.ndarray]],
                   guess: np.ndarray) -> np.ndarray:
        """X at ``t1`` of the BDF with the past states ``hist`` (time, state)."""
        times = [t1] + [tk for tk, _ in hist]
        w = _lagrange_derivative(times)
        base = sum(wk * Xk for wk, (_, Xk) in zip(w[1:], hist))
        return self._newton(lambda X: (X, w[0] * X + base), t1, float(w[0]), 1.0, guess,
                            hist[0][1])

    def _newton(self, stage: Any, t: float, shift: float, scale: float, X: np.ndarray,
                X_start: np.ndarray) -> np.ndarray:
        """Newton's method on F(t, stage(X)) = 0 with the exact Jacobian at every iterate
        (``stage`` gives the arguments (y, y') of the residual from the unknown X: dy/dX =
        ``scale`` I and dy'/dX = ``shift`` ``scale`` I, so that dF/dX is ``scale`` times the
        residual's Jacobian at ``shift``)."""
        d = self.dense
        n = d.n
        blocks = [slice(0, n), slice(n, 2 * n)] + [slice(2 * n + k, 2 * n + k + 1)
                                                   for k in range(d.m)]
        prev = None
        fprev = math.inf
        ref: List[float] = []
        top = 0.0
        for it in range(25):
            ya, yda = stage(X)
            F, J = d.residual(t, ya, yda, shift)
            if not np.all(np.isfinite(F)):
                raise FloatingPointError(f"the residual is not finite at t={t:g}")
            fnorm = float(np.abs(F).max(initial=0.0))
            if prev is not None and fnorm > 0.5 * fprev and all(
                    a <= PLATEAU * max(r, ROUNDOFF * top) for a, r in zip(prev, ref)):
                # an exact Newton step that did not reduce the residual, its update small:
                # the round-off plateau (the elastic block's condition number)
                self.stages += 1
                return X
            fprev = fnorm
            try:
                dX = sla.solve(J, F, check_finite=False) / scale
            except (np.linalg.LinAlgError, ValueError):
                raise FloatingPointError(f"the Newton step's matrix is singular at "
                                         f"t={t:g}") from None
            X = X - dX
            self.iterations += 1
            sizes = [float(np.abs(dX[b]).max(initial=0.0)) for b in blocks]
            ref = [max(float(np.abs(X[b]).max(initial=0.0)),
                       float(np.abs(X[b] - X_start[b]).max(initial=0.0))) for b in blocks]
            top = max(ref[2:], default=0.0)
            done = all(a <= ROUNDOFF * r or (k > 1 and a <= ROUNDOFF * top)
                       or (prev is not None and a * a <= ROUNDOFF * r * max(pa, 1e-300))
                       for k, (a, r, pa) in enumerate(zip(sizes, ref, prev or sizes)))
            if not np.all(np.isfinite(X)):
                raise FloatingPointError(f"the Newton update is not finite at t={t:g}")
            if done and it > 0:
                self.stages += 1
                return X
            prev = sizes
        raise FloatingPointError(f"Newton's method did not converge in 25 iterations at "
                                 f"t={t:g}")

    # -- the protocol's rest -----------------------------------------------------------------
    def record(self, t: float) -> Any:
        """Not asked: a coupled run's energies are its own observer's.

        Args:
            t: the time (s).

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("a coupled run's energies are observed from its state")

    def energy_products(self, s: Any, q: PETSc.Vec, v: PETSc.Vec,
                        Mv: PETSc.Vec | None = None) -> tuple:
        """Not asked (see :meth:`record`).

        Args:
            s: the record.
            q: the reduced displacement.
            v: the reduced velocity.
            Mv: M v, or None.

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("a coupled run's energies are observed from its state")

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec,
                     out: PETSc.Vec) -> PETSc.Vec:
        """Not asked: a coupled run has no reactions of prescribed constraints.

        Args:
            t: the time (s).
            q: the reduced displacement.
            v: the reduced velocity.
            out: the vector to fill.

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("reactions are not recorded in a coupled run")

    def destroy(self) -> None:
        """Destroy the reduced vectors of the states given (collective)."""
        if self._vecs is not None and self.dense.n:
            for x in self._vecs:
                x.destroy()
        self._vecs = None


def _lagrange(t: float, hist: List[Tuple[float, np.ndarray]]) -> np.ndarray:
    """The polynomial through the past states, at ``t`` (TSBDF's predictor)."""
    ts = [tk for tk, _ in hist]
    out = np.zeros_like(hist[0][1])
    for k, (tk, Xk) in enumerate(hist):
        L = 1.0
        for j, tj in enumerate(ts):
            if j != k:
                L *= (t - tj) / (tk - tj)
        out += L * Xk
    return out


def _lagrange_derivative(times: List[float]) -> List[float]:
    """The derivatives at times[0] of the Lagrange basis on ``times`` (TSBDF's weights)."""
    n = len(times)
    t = times[0]
    out = []
    for k in range(n):
        dk = 0.0
        for j in range(n):
            if j == k:
                continue
            L = 1.0 / (times[k] - times[j])
            for i in range(n):
                if i != j and i != k:
                    L *= (t - times[i]) / (times[k] - times[i])
            dk += L
        out.append(dk)
    return out
