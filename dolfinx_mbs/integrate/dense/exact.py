"""Exact propagation of a small linear system whose frame state is constant in time.

For a constant frame state the equations of motion are linear with constant matrices, in the
first-order form y = (q, v) (second-order and first-order formulations) or Hamilton's
y = (q, p), E y' + B y = g(t). When the load vectors g(t) lie in the span of a
:class:`LoadBasis`, polynomials in t of degree <= ``degree`` and the sine and cosine of each of
``frequencies`` (rad/s), g(t) = G z(t) with z' = S z, and the augmented system

    d/dt (y, z) = [[-E^-1 B, E^-1 G], [0, S]] (y, z)

is propagated over a step h by its matrix exponential (scipy.linalg.expm, balanced): no
time-discretization error, whatever the step, so the step is set by the output wanted, not by
the stiffest mode. :class:`LoadFit` finds G from samples of the loads and checks that they are
reproduced to round-off (``exact``); loads outside the span are refused by :class:`Exact`.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Protocol, Sequence, Tuple

import numpy as np
import scipy.linalg as sla

from dolfinx_mbs.records import FrozenMapping

__all__ = ["LoadBasis", "LoadFit", "Exact", "FIT_RTOL"]

#: the largest residual of a fit, relative to the loads' variation in time, that counts as exact
FIT_RTOL = 1e-10


class LoadBasis:
    """The time functions the loads are fitted on: tau^k / k! (k <= ``degree``) and
    sin(w tau), cos(w tau) for each w of ``frequencies``, tau = t - t0.

    Args:
        degree: the polynomial degree (>= 0).
        frequencies: angular frequencies (rad/s, > 0).
    """

    def __init__(self, degree: int = 2, frequencies: Sequence[float] = ()) -> None:
        if not isinstance(degree, (int, np.integer)) or isinstance(degree, bool) or degree < 0:
            raise ValueError(f"load_degree must be an integer >= 0, got {degree!r}")
        try:
            w = np.asarray(frequencies, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            w = np.array([np.nan])
        if not np.all(np.isfinite(w)) or np.any(w <= 0.0):
            raise ValueError("load_frequencies must be positive finite angular frequencies "
                             f"(rad/s), got {frequencies!r}")
        self.degree, self.frequencies = int(degree), w
        self._fact = [math.factorial(k) for k in range(self.degree + 1)]
        self._w = [float(x) for x in w]
        self.m = self.degree + 1 + 2 * len(w)

    def z(self, tau: float) -> np.ndarray:
        """The basis functions at tau = t - t0.

        Args:
            tau: the time from t0 (s).

        Returns:
            The m functions' values.
        """
        p = [tau ** k / f for k, f in enumerate(self._fact)]
        for w in self._w:
            p += [math.sin(w * tau), math.cos(w * tau)]
        return np.array(p)

    def z_many(self, taus: Sequence[float] | np.ndarray) -> np.ndarray:
        """The basis functions at each of ``taus``, as rows.

        Args:
            taus: times from t0 (s).

        Returns:
            (len(taus), m) values.
        """
        x = np.asarray(taus, dtype=float)
        cols = [x ** k / f for k, f in enumerate(self._fact)]
        for w in self._w:
            cols += [np.sin(w * x), np.cos(w * x)]
        return np.column_stack(cols)

    def generator(self) -> np.ndarray:
        """S with z' = S z."""
        S = np.zeros((self.m, self.m))
        for k in range(1, self.degree + 1):
            S[k, k - 1] = 1.0
        for j, w in enumerate(self.frequencies):
            i = self.degree + 1 + 2 * j
            S[i, i + 1], S[i + 1, i] = w, -w
        return S

    def sample_times(self, t0: float, t_end: float) -> np.ndarray:
        """2 m + 4 Chebyshev points of [t0, t_end] (irregular: no aliasing of a sinusoid).

        Args:
            t0: the interval's start (s).
            t_end: its end (s).

        Returns:
            The sample times.
        """
        ns = 2 * self.m + 4
        x = 0.5 * (1.0 - np.cos(np.pi * (np.arange(ns) + 0.5) / ns))
        return t0 + (t_end - t0) * x

    def describe(self) -> str:
        """The basis in words (the log's and the errors')."""
        w = ", ".join(f"{x:g}" for x in self.frequencies)
        return f"polynomials of degree <= {self.degree}" + \
            (f" and sin, cos of {w} rad/s" if w else "")


class LoadFit:
    """Load vectors g(t) = C^T z(t - t0) fitted by least squares on samples.

    Args:
        basis: the :class:`LoadBasis`.
        t0: the origin of tau.
        times: the sample times.
        samples: per time, the vectors by name (the same names and sizes at every time).

    Attributes:
        exact: True when every sample is reproduced to :data:`FIT_RTOL` of the loads'
            variation over the samples (and the round-off of the largest value).
        residual: the largest residual relative to that variation.
        coefficients: by name, an (m, size) array.
    """

    def __init__(self, basis: LoadBasis, t0: float, times: Sequence[float] | np.ndarray,
                 samples: List[Dict[str, np.ndarray]]) -> None:
        self.basis, self.t0 = basis, float(t0)
        names = list(samples[0])
        sizes = [samples[0][k].shape[0] for k in names]
        Y = np.array([np.concatenate([s[k] for k in names]) for s in samples])
        Z = np.array([basis.z(t - self.t0) for t in times])
        scale = np.abs(Z).max(axis=0)
        scale[scale == 0.0] = 1.0
        coef, _, rank, _ = np.linalg.lstsq(Z / scale, Y, rcond=None)
        coef /= scale[:, None]
        # relative to the loads' variation in time (a constant part, the centrifugal load,
        # may be orders above it), beside the round-off of the largest value
        var = float(np.abs(Y - Y.mean(axis=0)).max())
        res = float(np.abs(Z @ coef - Y).max())
        floor = 100.0 * np.finfo(float).eps * float(np.abs(Y).max())
        self.residual = res / var if var > 0.0 else 0.0
        self.exact = rank == basis.m and res <= FIT_RTOL * var + floor
        cuts = np.cumsum([0] + sizes)
        self._coef, self._cuts = coef, list(zip(names, cuts[:-1], cuts[1:]))
        self.coefficients = {k: coef[:, a:b] for k, a, b in self._cuts}

    def values_many(self, times: Sequence[float] | np.ndarray) -> Mapping[str, np.ndarray]:
        """The vectors at each of ``times``.

        Args:
            times: the times (s).

        Returns:
            By name, (len(times), size) arrays (read-only mapping).
        """
        y = self.basis.z_many(np.asarray(times) - self.t0) @ self._coef
        return FrozenMapping({k: y[:, a:b] for k, a, b in self._cuts})

    def values(self, t: float) -> Mapping[str, np.ndarray]:
        """The vectors at ``t``.

        Args:
            t: the time (s).

        Returns:
            The vectors by name (read-only mapping).
        """
        y = self.basis.z(t - self.t0) @ self._coef
        return FrozenMapping({k: y[a:b] for k, a, b in self._cuts})


class FittedOperators(Protocol):
    """What :class:`Exact` reads of the dense operators
    (:class:`~dolfinx_mbs.integrate.dense.operators.DenseOperators`, which builds on this
    module): the loads' fit and the operators at a time."""

    fit: LoadFit | None

    def at(self, t: float) -> Any:
        """The operators at ``t`` as dense arrays.

        Args:
            t: the time (s).

        Returns:
            The operators (``M``, ``C``, ``K``; Hamilton's ``Gp``, ``Gq``, ``Kh``, ``pi0``).
        """


class Exact:
    """Exact steps of the constant linear system of ``ops``.

    y = (q, v) for the second-order and first-order forms, (q, p) for Hamilton's.

    Args:
        ops: the :class:`~dolfinx_mbs.integrate.dense.operators.DenseOperators`, with fitted
            loads.
        formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
        t0: the loads' fit's origin (s).

    Raises:
        ValueError: the loads were not fitted.
    """

    name = "expm"

    def __init__(self, ops: FittedOperators, formulation: str, t0: float) -> None:
        fit = ops.fit
        if fit is None:
            raise ValueError("the loads were not fitted")
        self.ops, self.fit, self.t0 = ops, fit, float(t0)
        self.hamilton = self.momentum = formulation == "hamiltonian"
        o = ops.at(t0)
        n = o.M.shape[0]
        eye, Z = np.eye(n), np.zeros((n, n))
        c = fit.coefficients
        if self.hamilton:
            E = np.block([[o.M, Z], [o.Gq, eye]])
            B = np.block([[o.Gp, -eye], [o.Kh, Z]])
            G = np.vstack([-c["pi0"].T, (c["fa"] - c["h"]).T])
        else:
            E = np.block([[eye, Z], [Z, o.M]])
            B = np.block([[Z, -eye], [o.K, o.C]])
            G = np.vstack([np.zeros((n, fit.basis.m)), c["f"].T])
        lu = sla.lu_factor(E)
        m = fit.basis.m
        self.aug = np.zeros((2 * n + m, 2 * n + m))
        self.aug[:2 * n, :2 * n] = -sla.lu_solve(lu, B)
        self.aug[:2 * n, 2 * n:] = sla.lu_solve(lu, G)
        self.aug[2 * n:, 2 * n:] = fit.basis.generator()
        # balanced once: the blocks of q and v (or p) differ in scale by many orders
        self._bal, (self.scale, _) = sla.matrix_balance(self.aug, permute=False,
                                                        separate=True)
        self._phi: Dict[float, tuple] = {}
        self._minv = np.linalg.inv(o.M)
        self.n = n
        self.y: np.ndarray | None = None
        #: matrix exponentials computed
        self.count = 0

    def initial(self, t0: float, q0: np.ndarray, v0: np.ndarray,
                p0: np.ndarray | None = None) -> None:
        """The state at ``t0``.

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity (Hamilton's form: read where ``p0`` is None).
            p0: Hamilton's momentum, or None.
        """
        if self.hamilton and p0 is None:
            o = self.ops.at(t0)
            p0 = o.M @ v0 + o.Gp @ q0 + o.pi0
        self.y = np.concatenate([q0, p0 if self.hamilton else v0])

    def _propagator(self, h: float) -> Tuple[np.ndarray, np.ndarray]:
        key = float(f"{h:.12e}")
        P = self._phi.get(key)
        if P is None:
            E = sla.expm(h * self._bal)
            E = E * self.scale[:, None] * (1.0 / self.scale)[None, :]
            k = 2 * self.n
            P = self._phi[key] = (E[:k, :k], E[:k, k:])
            self.count += 1
        return P

    def step(self, t: float, h: float) -> None:
        """The exact step from ``t`` to ``t + h``.

        Args:
            t: the step's start (s).
            h: its size (s).
        """
        Pyy, Pyz = self._propagator(h)
        self.y = Pyy @ self.y + Pyz @ self.fit.basis.z(t - self.t0)

    def trajectory(self, times: Sequence[float]) -> Tuple[np.ndarray, np.ndarray]:
        """The states at all ``times``: the loads' part of every step in one product per
        distinct step.

        Args:
            times: the output times (the first the current one).

        Returns:
            (Q, the second block: V, or P in Hamilton's form), one row per time.
        """
        T = np.asarray(times, dtype=float)
        N, k = len(T), 2 * self.n
        Y = np.empty((N, k))
        Y[0] = self.y
        Z = self.fit.basis.z_many(T[:-1] - self.t0)
        hs = np.diff(T)
        props = [self._propagator(h) for h in hs]
        load = np.empty((N - 1, k))
        for P in {id(P[1]): P for P in props}.values():
            idx = [i for i, Q in enumerate(props) if Q[1] is P[1]]
            load[idx] = Z[idx] @ P[1].T
        y = self.y
        for i, (Pyy, _) in enumerate(props):
            y = Pyy @ y + load[i]
            Y[i + 1] = y
        self.y = y
        return Y[:, :self.n], Y[:, self.n:]

    def raw(self) -> Tuple[np.ndarray, np.ndarray]:
        """(q, v) or (q, p): the propagated state."""
        assert self.y is not None  # (set by initial)
        return self.y[:self.n], self.y[self.n:]

    def state(self, t: float, need_v: bool = True) -> Tuple[np.ndarray, np.ndarray]:
        """(q, v) at ``t``, v from the momentum in Hamilton's form.

        Args:
            t: the output time just reached (s).
            need_v: v is read (else zero in Hamilton's form).

        Returns:
            (q, v).
        """
        n = self.n
        assert self.y is not None  # (set by initial)
        q = self.y[:n]
        if not self.hamilton:
            return q, self.y[n:]
        if not need_v:
            return q, np.zeros(n)
        o = self.ops.at(t)
        return q, self._minv @ (self.y[n:] - o.Gp @ q - o.pi0)
