"""The dense path's schemes over a whole run at once, for operators that change at every step
(:class:`~dolfinx_mbs.integrate.dense.varying.VaryingOperators`).

:class:`WholeRun` steps a whole run of one of the dense path's schemes
(:mod:`dolfinx_mbs.integrate.dense.operators`: TSALPHA2, Crank-Nicolson, implicit midpoint)
written as the affine maps y_k+1 = P_k y_k + g_k they are (linear equations): the maps of all
steps formed in batch (one batched inverse of the step matrices), then one small product per
step. The same steps as the TS path up to round-off; the generalized-alpha restart (the first
step) by the scheme itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Mapping, Sequence, Tuple

import numpy as np

from dolfinx_mbs.integrate.dense.operators import Alpha2, Ops
from dolfinx_mbs.integrate.dense.varying import VaryingOperators
from dolfinx_mbs.integrate.schemes import (
    alpha2_coefficients,
    crank_nicolson_maps,
    midpoint_maps,
)

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.dense.operators import CrankNicolson, Midpoint

__all__ = ["WholeRun"]

#: the memory (bytes) of the step maps formed at once (steps are taken in chunks)
CHUNK_BYTES = 16e6


def _augmented(P: np.ndarray) -> np.ndarray:
    """``P`` (N, m + 1, m + 1) made the maps of y (m,) written on (y, 1): the last row
    (0, ..., 0, 1)."""
    P[:, -1, :-1] = 0.0
    P[:, -1, -1] = 1.0
    return P


def _alpha2_maps(o: Mapping[str, np.ndarray], M: np.ndarray, h: np.ndarray, params: tuple,
                 P: np.ndarray) -> np.ndarray:
    """The maps of TSALPHA2's steps (y = (X, V, A)) with the stage operators ``o`` (C, K, f
    at t + alpha_f h) and steps ``h`` (N,): the stage of :mod:`dolfinx_mbs.integrate.schemes`
    (:class:`~dolfinx_mbs.integrate.schemes.Alpha2Coefficients`) solved for X1 = X0 - J^-1 F,
    F = (M A_a + C V_a + K X0 - f) / alpha_f with A_a, V_a linear in (V0, A0); then
    A1 = (X1 - X0 - h V0) / (h^2 beta) + cA A0 and V1 = V0 + adv A0 - sv (X0 - X1 + h V0)."""
    af = params[1]
    N, n = o["K"].shape[:2]
    hh = h[:, None, None]
    c = alpha2_coefficients(hh, params)
    # the coefficients of h are (N, 1, 1) arrays here (Alpha2Coefficients types the scalars)
    c1 = np.asarray(1.0 / c.hhb)
    K, C = o["K"], o["C"]
    J = K + c.sv * C + c.sa * M
    # V_a = vV V0 + vA A0, A_a = aV V0 + aA A0 (the predictor X1 = X0 in the stage)
    rhs = np.empty((N, n, 3 * n + 1))
    rhs[:, :, :n] = K
    rhs[:, :, n:2 * n] = c.vV * C + c.aV * M
    rhs[:, :, 2 * n:3 * n] = c.vA * C + c.aA * M
    rhs[:, :, -1] = -o["f"]
    P = _augmented(P)
    X, V, A = (slice(i * n, (i + 1) * n) for i in range(3))
    d = np.arange(n)
    np.matmul(np.linalg.inv(J), rhs, out=P[:, X, :])
    P[:, X, :] *= -1.0 / af                       # the X row: X1 = (I, 0, 0) X0 - J^-1 F
    P[:, d, d] += 1.0
    a, v = 2 * n + d, n + d
    P[:, A, :] = c1 * P[:, X, :]                  # A1 = c1 (X1 - X0 - h V0) + cA A0
    P[:, a, d] -= c1[:, :, 0]
    P[:, a, v] -= (c1 * hh)[:, :, 0]
    P[:, a, a] += c.cA
    P[:, V, :] = (c.sv * c.hhb) * P[:, A, :]      # V1 = V0 + adv A0 + h gamma (A1 - cA A0)
    P[:, v, v] += 1.0
    P[:, v, a] += np.asarray(c.adv - c.sv * c.hhb * c.cA)[:, :, 0]
    return P


class WholeRun:
    """A dense scheme (:data:`dolfinx_mbs.integrate.dense.operators.SCHEMES`) on
    :class:`VaryingOperators`, stepped over a whole run by :meth:`trajectory` (see the module
    docstring); afterwards ``step`` and ``state`` replay the steps for observers that see them
    one by one.

    Args:
        scheme: the dense scheme, on ``ops``.
        ops: the varying operators.

    Attributes:
        outputs: after :meth:`trajectory`, the operators at the output times the energies
            read (``M``, ``Kel`` constant; ``Kpot`` (N, n, n), ``f`` (N, n)).
    """

    momentum = False  # the velocities are given, not the momenta
    #: the output times' row in the states, by time (made by :meth:`trajectory`)
    _index: Dict[float, int]

    def __init__(self, scheme: Alpha2 | CrankNicolson | Midpoint,
                 ops: VaryingOperators) -> None:
        self.scheme, self.ops = scheme, ops
        self.name = scheme.name
        self.outputs: Ops | None = None
        self.Q: np.ndarray | None = None
        self.V: np.ndarray | None = None
        self.k = 0

    def initial(self, t0: float, q0: np.ndarray, v0: np.ndarray,
                p0: np.ndarray | None = None) -> None:
        """The scheme's state at ``t0``.

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum, or None.
        """
        self.scheme.initial(t0, q0, v0, p0)

    def trajectory(self, times: Sequence[float]) -> Tuple[np.ndarray, np.ndarray]:
        """The states (Q, V) at ``times``.

        Args:
            times: the output times (times[0] the initial time).

        Returns:
            (Q, V), one row per time.
        """
        grid = np.asarray(times, dtype=float)
        ops, sch = self.ops, self.scheme
        M, n = ops.M, ops.M.shape[0]
        N = len(grid)
        kind = sch.name if not sch.momentum else "midpoint"
        Y = np.ones((N, (3 if kind == "alpha2" else 2) * n + 1))  # (y, 1)
        if isinstance(sch, Alpha2):  # kind "alpha2"
            assert sch.X is not None and sch.V is not None  # (set by initial)
            X0, V0 = sch.X.copy(), sch.V.copy()
            if N > 1:  # the restart by the scheme itself
                sch.step(grid[0], grid[1] - grid[0])
            Y[0, :n], Y[0, n:2 * n] = X0, V0
            if N > 1:
                Y[1, :-1] = np.concatenate([sch.X, sch.V, sch.A])
            first = 1
        else:
            Y[0, :-1] = sch.y
            first = 0
        m = Y.shape[1]
        chunk = min(N, max(1, int(CHUNK_BYTES // (8 * (m * m + 8 * n * n)))))
        buf = np.empty((chunk, m, m))  # the maps of a chunk of steps (reused)
        params = sch.params if isinstance(sch, Alpha2) else None
        af = None if params is None else params[1]
        for a in range(first, N - 1, chunk):
            b = min(N - 1, a + chunk)
            t, h = grid[a:b], np.diff(grid[a:b + 1])
            if kind == "alpha2":
                assert params is not None and af is not None  # (an Alpha2 scheme's)
                P = _alpha2_maps(ops.many(t + af * h, ("C", "K"), ("f",)), M, h, params,
                                 buf[:b - a])
            elif kind == "theta":
                o = ops.many(grid[a:b + 1], ("C", "K"), ("f",))
                o0 = {k: v[:-1] for k, v in o.items()}
                o1 = {k: v[1:] for k, v in o.items()}
                P = _augmented(buf[:b - a])
                crank_nicolson_maps(o0, o1, M, h, (o0["f"] + o1["f"])[:, :, None], P[:, :-1])
            else:
                o = ops.many(t + 0.5 * h, ("Gp", "Gq", "Kh"), ("pi0", "h", "fa"))
                P = _augmented(buf[:b - a])
                midpoint_maps(o, M, h, o["pi0"][:, :, None], (o["h"] - o["fa"])[:, :, None],
                              P[:, :-1])
            dot = np.dot
            for Pk, y0, y1 in zip(P, Y[a:b], Y[a + 1:b + 1]):  # the steps: one product each
                dot(Pk, y0, out=y1)
        self.Q = Y[:, :n]
        need = ("Kpot",) if "Kpot" in ops.fields else ()
        vec = ("f",) + (("pi0",) if kind == "midpoint" else ())
        out = ops.many(grid, need + (("Gp",) if kind == "midpoint" else ()), vec)
        if kind == "midpoint":  # v = M^-1 (p - G_p q - pi_0)
            W = Y[:, n:-1] - np.einsum("kij,kj->ki", out["Gp"], self.Q) - out["pi0"]
            self.V = W @ ops.mass_inverse().T
        else:
            self.V = Y[:, n:2 * n]
        self.outputs = Ops(grid, None, {"M": M, "Kel": ops.Kel, "Kpot": out.get("Kpot")},
                           {"f": out["f"]})
        self._index = {float(t): k for k, t in enumerate(grid)}
        self.k = 0
        return self.Q, self.V

    def at(self, t: float) -> Ops:
        """The operators the energies and the divergence check read at the output time
        ``t`` (M, K_el, K_pot, f), from :attr:`outputs`; at another time those of the
        operators.

        Args:
            t: the time (s).

        Returns:
            The operators as arrays.
        """
        k = self._index.get(float(t))
        o = self.outputs
        if k is None or o is None or o.Kpot is None:
            return self.ops.at(t)
        return Ops(t, None, {"M": o.M, "Kel": o.Kel, "Kpot": o.Kpot[k]}, {"f": o.f[k]})

    def step(self, t: float, h: float) -> None:
        """Replay the step from ``t`` to ``t + h`` (formed by :meth:`trajectory`).

        Args:
            t: the step's start (s).
            h: its size (s).
        """
        self.k += 1

    def state(self, t: float, need_v: bool = True) -> Tuple[np.ndarray, np.ndarray]:
        """The state at the output time ``t`` (replayed or not).

        Args:
            t: an output time (s).
            need_v: whether v is read (it is at hand).

        Returns:
            (q, v).
        """
        k = self._index.get(float(t), self.k)
        assert self.Q is not None and self.V is not None  # (formed by trajectory)
        return self.Q[k], self.V[k]

    def raw(self) -> Tuple[np.ndarray, np.ndarray]:
        """(q, v): the state of the last step replayed."""
        assert self.Q is not None and self.V is not None  # (formed by trajectory)
        return self.Q[self.k], self.V[self.k]
