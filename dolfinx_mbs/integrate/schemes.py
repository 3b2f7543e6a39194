"""The time-stepping schemes' coefficients and stage algebra.

Written once for every backend that steps them in Python (the sparse path, the dense path step
by step and in batch); PETSc TS has its own (the TS backend steps with PETSc's TSALPHA2 and
TSTHETA, which these reproduce). The sparse path's implicit midpoint is the one other spelling
of a scheme: Hamilton's form eliminated to (q, w = M v) for constant operators on the system's
PETSc matrices (:mod:`dolfinx_mbs.integrate.sparse.midpoint`; its step matrix is h/2 times the
Schur complement S of :func:`midpoint_maps`), kept for the round-off of the large momenta
p ~ pi_0 that the (q, p) map carries.

* TSALPHA2 (generalized-alpha for M q'' + C q' + K q = f): its parameters
  (:func:`alpha2_parameters`), a step's coefficients (:func:`alpha2_coefficients`: the
  Jacobian's shifts, the stage's velocity and acceleration before the solve, the update from
  the solve's dX), the stage algebra on arrays (:func:`alpha2_stage_values`,
  :func:`alpha2_advance`) and the restart by two backward-Euler half steps
  (:class:`Alpha2Steps`), PETSc's ``TSAlpha_Restart``.
* TSTHETA at theta = 1/2 with endpoint on the first-order form y = (q, v) (Crank-Nicolson,
  :func:`crank_nicolson_maps`) and without on Hamilton's y = (q, p) (the implicit midpoint,
  :func:`midpoint_maps`): a step written as the affine map it is (the equations are linear),
  y_1 = P (y_0, l) with l the loads' coefficients, through its Schur complement on n unknowns;
  formed for a stack of steps at once (the dense path in batch, one column l of the loads
  themselves) or for one step of constant operators and kept (the dense path step by step,
  unit columns l: the step is then two small products).
* The output times (:func:`step_times`), as PETSc's ``TS_EXACTFINALTIME_MATCHSTEP`` takes them.

A backend gives the residual at the stage and the solve with its step matrix; the rest is here.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, NamedTuple

import numpy as np

from dolfinx_mbs.compat import alpha2_restart_step

__all__ = ["alpha2_parameters", "Alpha2Coefficients", "alpha2_coefficients",
           "alpha2_stage_values", "alpha2_advance", "Alpha2Steps", "BACKWARD_EULER",
           "crank_nicolson_maps", "midpoint_maps", "MATCHSTEP", "ON_GRID", "grid_end",
           "step_times"]


def alpha2_parameters(radius: float | None) -> tuple:
    """The parameters of PETSc's TSALPHA2.

    (alpha_m, alpha_f, gamma, beta) of PETSc's TSALPHA2 for the high-frequency spectral
    ``radius`` (None: 1).

    Args:
        radius: the spectral radius in [0, 1], or None.

    Returns:
        (alpha_m, alpha_f, gamma, beta).
    """
    r = 1.0 if radius is None else float(radius)
    am, af = (2.0 - r) / (1.0 + r), 1.0 / (1.0 + r)
    return am, af, 0.5 + am - af, 0.25 * (1.0 + am - af) ** 2


#: the parameters of TSALPHA2's restart: a backward-Euler step
BACKWARD_EULER = (1.0, 1.0, 1.0, 0.5)


class Alpha2Coefficients(NamedTuple):
    """The coefficients of one TSALPHA2 step of size h (scalars, or arrays for many steps).

    The stage solves J dX = F at t + alpha_f h with the predictor X_1 = X_0, F = (M A_a +
    C V_a + K X_0 - f) / alpha_f, J = K + sv C + sa M; then X_1 = X_0 - dX and

        A_1 = cA A_0 - (dX + h V_0) / (h^2 beta),   V_1 = V_0 + adv A_0 - sv (dX + h V_0).

    Attributes:
        sv: the Jacobian's shift of C, gamma / (h beta).
        sa: the Jacobian's shift of M, alpha_m / (alpha_f h^2 beta).
        vV: V_a = vV V_0 + vA A_0, the stage's velocity before the solve.
        vA: (see vV).
        aV: A_a = aV V_0 + aA A_0, the stage's acceleration before the solve.
        aA: (see aV).
        cA: the predictor's acceleration coefficient, -(1 - 2 beta) / (2 beta).
        adv: h ((1 - gamma) + gamma cA), V_1's coefficient of A_0.
        hhb: h^2 beta.
    """

    sv: float
    sa: float
    vV: float
    vA: float
    aV: float
    aA: float
    cA: float
    adv: float
    hhb: float


def alpha2_coefficients(h: float | np.ndarray, params: tuple) -> Alpha2Coefficients:
    """The coefficients of a TSALPHA2 step.

    Args:
        h: the step size, a float or an array of steps.
        params: (alpha_m, alpha_f, gamma, beta) (:func:`alpha2_parameters` or
            :data:`BACKWARD_EULER`).

    Returns:
        The step's coefficients.
    """
    am, af, g, b = params
    cA = -(1.0 - 2.0 * b) / (2.0 * b)
    return Alpha2Coefficients(
        sv=g / (h * b), sa=am / (af * h * h * b),
        vV=1.0 - af * g / b, vA=af * h * ((1.0 - g) + g * cA),
        aV=-am / (h * b), aA=1.0 - am + am * cA,
        cA=cA, adv=h * ((1.0 - g) + g * cA), hhb=h * h * b)


def alpha2_stage_values(V: np.ndarray, A: np.ndarray, c: Alpha2Coefficients,
                        out_v: np.ndarray, out_a: np.ndarray) -> None:
    """The stage's velocity and acceleration before the solve.

    out_v, out_a = V_a, A_a: the stage's velocity and acceleration before the solve, of the
    state (V, A) or of its image under M (arrays).

    Args:
        V: the velocity at the step's start (or its image under M).
        A: the acceleration there (or its image).
        c: the step's coefficients.
        out_v: V_a, filled.
        out_a: A_a, filled.
    """
    np.multiply(A, c.aA, out=out_a)
    out_a += c.aV * V
    np.multiply(V, c.vV, out=out_v)
    out_v += c.vA * A


def alpha2_advance(V: np.ndarray, A: np.ndarray, dX: np.ndarray, h: float,
                   c: Alpha2Coefficients, w: np.ndarray) -> None:
    """V and A to the step's end.

    V, A to the step's end from the solve's dX (in place), of the state or of its image
    under M; ``w`` a work array (left holding dX + h V_0).

    Args:
        V: the velocity, advanced in place.
        A: the acceleration, advanced in place.
        dX: the solve's update of X.
        h: the step (s).
        c: the step's coefficients.
        w: a work array.
    """
    np.multiply(V, h, out=w)
    w += dX
    V += c.adv * A
    V -= c.sv * w
    A *= c.cA
    A -= w / c.hhb


class Alpha2Steps:
    """TSALPHA2's steps on a state (X, V, A) of arrays.

    TSALPHA2's steps on a state (X, V, A) of arrays: the first step after TSALPHA2's
    restart (``TSAlpha_Restart``: A_0 from two backward-Euler half steps, the backward
    difference's step as the installed PETSc takes it, :func:`dolfinx_mbs.compat.
    alpha2_restart_step`), then one stage a step. A backend gives the arrays
    (:meth:`_state_arrays`) and the stage (:meth:`_stage`: its residual, its solve, then
    :func:`alpha2_advance`), and keeps what else it must across the restart (:meth:`_keep`,
    :meth:`_restore`).
    """

    started = False

    def _alpha2(self, radius: float | None) -> None:
        """The parameters of the spectral ``radius``; the next step restarts."""
        self.params = alpha2_parameters(radius)
        #: the step of the backward difference of A0, as PETSc's version takes it
        self.restart = alpha2_restart_step()
        self.started = False

    def _state_arrays(self) -> tuple:  # pragma: no cover - the backend's
        raise NotImplementedError

    def _stage(self, t: float, h: float, params: tuple, zero_a: bool) -> None:  # pragma: no cover
        raise NotImplementedError

    def _keep(self) -> dict:
        return {}

    def _restore(self, kept: dict) -> None:
        pass

    def step(self, t: float, h: float) -> None:
        """The step from ``t`` to ``t + h`` (the first one after the restart).

        Args:
            t: the step's start (s).
            h: its size (s).
        """
        if not self.started:
            X, V, A = self._state_arrays()
            X0, V0 = X.copy(), V.copy()
            kept = self._keep()
            self._stage(t, 0.5 * h, BACKWARD_EULER, True)
            V1 = V.copy()
            self._stage(t + 0.5 * h, 0.5 * h, BACKWARD_EULER, True)
            A0 = (-3.0 * V0 + 4.0 * V1 - V) / (self.restart * h)
            X[:], V[:], A[:] = X0, V0, A0
            self._restore(kept)
            self.started = True
        self._stage(t, h, self.params, False)


def crank_nicolson_maps(o0: Dict[str, np.ndarray], o1: Dict[str, np.ndarray], M: np.ndarray,
                        h: np.ndarray, loads: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Crank-Nicolson's steps as affine maps.

    Crank-Nicolson's steps on y = (q, v) (TSTHETA with endpoint: E1 (y1 - y0) 2 / h + B1 y1
    - g1 + B0 y0 - g0 = 0, E = diag(I, M), B = [[0, -I], [K, C]], g = (0, f)) as maps of
    (q0, v0, l), by the Schur complement S = K1 + s C1 + s^2 M, s = 2/h:

        q1 = q0 - S^-1 ((K0 + K1) q0 + (C0 - C1 - 2 s M) v0 - (f0 + f1)),   v1 = s (q1 - q0) - v0.

    Args:
        o0: the operators at the steps' starts (``K``, ``C``: (N, n, n)).
        o1: at their ends.
        M: the mass (n, n), constant.
        h: the steps (N,).
        loads: (N, n, m): f0 + f1 = loads l.
        P: (N, 2 n, 2 n + m), filled with the maps' rows (q1, v1).

    Returns:
        ``P``.
    """
    N, n = o1["K"].shape[:2]
    s = (2.0 / h)[:, None, None]
    rhs = np.empty((N, n, 2 * n + loads.shape[2]))
    rhs[:, :, :n] = o0["K"] + o1["K"]
    rhs[:, :, n:2 * n] = o0["C"] - o1["C"] - 2.0 * s * M
    rhs[:, :, 2 * n:] = -loads
    d = np.arange(n)
    np.matmul(np.linalg.inv(o1["K"] + s * o1["C"] + s * s * M), rhs, out=P[:, :n, :])
    P[:, :n, :] *= -1.0
    P[:, d, d] += 1.0
    P[:, n:2 * n, :] = s * P[:, :n, :]
    P[:, n + d, d] -= s[:, :, 0]
    P[:, n + d, n + d] -= 1.0
    return P


def midpoint_maps(o: Mapping[str, np.ndarray], M: np.ndarray, h: np.ndarray, pi0: np.ndarray,
                  load: np.ndarray, P: np.ndarray) -> np.ndarray:
    """The implicit midpoint's steps as affine maps.

    The implicit midpoint's steps on Hamilton's y = (q, p) (TSTHETA without endpoint: the
    stage X at t + h/2 solves E (X - y0) 2 / h + B X = g, y1 = 2 X - y0; E = [[M, 0],
    [G_q, I]], B = [[G_p, -I], [K_h, 0]], g = (-pi_0, f_a - h)) as maps of (q0, p0, l), by the
    Schur complement S = s M + G_p + G_q + K_h / s, s = 2/h: with W = S^-1 ((G_p + K_h / s) q0
    - p0 + pi_0 + (h - f_a) / s),

        q1 = q0 - 2 W,    p1 = p0 - (2 / s) (K_h q0 + h - f_a) + 2 Z W,   Z = K_h / s + G_q.

    Args:
        o: the operators at the steps' midpoints (``Gp``, ``Gq``, ``Kh``: (N, n, n)).
        M: the mass (n, n), constant.
        h: the steps (N,).
        pi0: (N, n, m): pi_0 = pi0 l.
        load: (N, n, m): h - f_a = load l.
        P: (N, 2 n, 2 n + m), filled with the maps' rows (q1, p1).

    Returns:
        ``P``.
    """
    N, n = o["Kh"].shape[:2]
    s = (2.0 / h)[:, None, None]
    rhs = np.empty((N, n, 2 * n + pi0.shape[2]))
    rhs[:, :, :n] = o["Gp"] + o["Kh"] / s
    rhs[:, :, n:2 * n] = -np.eye(n)
    rhs[:, :, 2 * n:] = pi0 + load / s
    W = np.linalg.inv(s * M + o["Gp"] + o["Gq"] + o["Kh"] / s) @ rhs
    d = np.arange(n)
    P[:, :n, :] = -2.0 * W
    P[:, d, d] += 1.0
    np.matmul(o["Kh"] / s + o["Gq"], W, out=P[:, n:2 * n, :])
    P[:, n:2 * n, :] *= 2.0
    P[:, n:2 * n, :n] -= (2.0 / s) * o["Kh"]
    P[:, n + d, n + d] += 1.0
    P[:, n:2 * n, 2 * n:] -= (2.0 / s) * load
    return P


#: PETSc's TSAdapt ``matchstepfac``: a last step up to 1 % longer than dt is taken whole, one
#: up to twice dt is split in two equal steps
MATCHSTEP = (0.01, 2.0)


#: how close (in steps) a run's end is to the sum of its whole steps for it to end there
ON_GRID = 1e-9


def grid_end(t0: float, t_end: float, dt: float) -> float | None:
    """Where a run of whole steps ``dt`` from ``t0`` to ``t_end`` ends, if it does.

    PETSc sums the steps: the n-th ends at t0 + dt + ... + dt, which differs from
    t_end = t0 + n dt by round-off. Matched to ``t_end`` (``TS_EXACTFINALTIME_MATCHSTEP``),
    the last steps would then differ from ``dt`` by round-off (the last two when the rest is
    just under two steps: split in halves). Where ``t_end`` is the sum to round-off, the run
    takes whole steps and ends at the sum, so that a run to ``t_end`` and a longer run take
    the same steps up to it (a restart from the shorter one's last checkpoint continues as
    the longer run).

    Args:
        t0: the initial time (s).
        t_end: the final time asked (s).
        dt: the step (s).

    Returns:
        The sum of the whole steps where it is ``t_end`` to :data:`ON_GRID` of a step, else
        None (the last step is then matched to ``t_end``).
    """
    n = int(round((t_end - t0) / dt))
    t = t0
    for _ in range(n):  # as PETSc sums them
        t += dt
    return t if n > 0 and abs(t - t_end) <= ON_GRID * dt else None


def step_times(t0: float, t_end: float, dt: float,
               origin: float | None = None) -> List[float]:
    """The times the TS path steps to.

    The times the TS path steps to, accumulated as PETSc does: whole steps of ``dt`` where
    they end at ``t_end`` to round-off (:func:`grid_end`), else PETSc's
    ``TS_EXACTFINALTIME_MATCHSTEP`` with fixed steps of ``dt`` (a first step past ``t_end``
    shortened, the steps near the end adjusted by :data:`MATCHSTEP`).

    Args:
        t0: the initial time (s).
        t_end: the final time (s).
        dt: the step (s).
        origin: a restart's: the run's own start, whose whole steps to ``t_end`` decide,
            as the TS path's restart decides
            (:func:`~dolfinx_mbs.integrate.ts.stepper.end_at`); None: ``t0``.

    Returns:
        Each step's end time (``t0`` not included).
    """
    if grid_end(t0 if origin is None else origin, t_end, dt) is not None:
        out, t = [], t0
        for _ in range(int(round((t_end - t0) / dt))):
            t += dt
            out.append(t)
        return out
    a, b = 1.0 + MATCHSTEP[0], MATCHSTEP[1]
    t, h = t0, (t_end - t0 if t0 + dt > t_end else dt)
    out = []
    while t < t_end:
        t += h
        out.append(t)
        hmax, tend, h0 = t_end - t, t + h, h
        if tend > t_end:
            h = hmax
        if tend < t_end and h0 * b > hmax:
            h = hmax / 2
        if tend < t_end and h0 * a > hmax:
            h = hmax
    return out
