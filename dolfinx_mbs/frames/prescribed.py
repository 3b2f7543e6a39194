"""Frames whose motion is given as callables: derivatives by extrapolated finite differences.

:class:`Prescribed` takes any ``R(t)``, ``r_O(t)``; :class:`Planar` a rotation angle ``theta(t)``
about z and an optional moving origin. Their angular velocity and acceleration and the origin's
velocity and acceleration come from :func:`differentiate` (Richardson-extrapolated central
differences with an error estimate that is checked). Import them from :mod:`dolfinx_mbs.frames`.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.base import Frame, FrameState, rotation_about, vee

# --- numerical differentiation -------------------------------------------------------------

def _richardson(f: Callable[[float], np.ndarray], t: float, h0: float, order: int,
                levels: int = 8, ratio: float = 1.6) -> tuple[np.ndarray, np.ndarray]:
    """First or second derivative of a vector function by extrapolated central differences.

    Central differences have an error series in even powers of h; a Neville tableau over
    h0, h0/ratio, ... removes those terms one by one. The tableau entry with the smallest change
    against its neighbours is returned with that change as an error estimate, per component.
    """
    f0 = np.asarray(f(t), dtype=float) if order == 2 else None

    def diff(h):
        fp = np.asarray(f(t + h), dtype=float)
        fm = np.asarray(f(t - h), dtype=float)
        if order == 1:
            return (fp - fm) / (2.0 * h)
        return (fp - 2.0 * f0 + fm) / (h * h)

    r2 = ratio * ratio
    h = h0
    prev = [diff(h)]
    best = prev[0]
    err = np.full(best.shape, np.inf)
    for _ in range(1, levels):
        h /= ratio
        row = [diff(h)]
        fac = r2
        for j in range(1, len(prev) + 1):
            row.append(row[j - 1] + (row[j - 1] - prev[j - 1]) / (fac - 1.0))
            fac *= r2
            e = np.maximum(np.abs(row[j] - row[j - 1]), np.abs(row[j] - prev[j - 1]))
            better = e < err
            best = np.where(better, row[j], best)
            err = np.where(better, e, err)
        # the tableau stops improving once round-off dominates
        if np.all(np.abs(row[-1] - prev[-1]) >= 2.0 * err):
            break
        prev = row
    return best, err


def differentiate(f, t, h0, what: str, rtol: float) -> tuple[np.ndarray, np.ndarray]:
    f = _sampled_for(f, t, h0, what)
    d1, e1 = _richardson(f, t, h0, 1)
    d2, e2 = _richardson(f, t, h0, 2)
    # error floors: a derivative that vanishes is judged against the next lower one over h0
    f0 = np.abs(np.asarray(f(t), dtype=float)).max()
    scale1 = max(np.abs(d1).max(), f0 / h0, 1e-6)
    scale2 = max(np.abs(d2).max(), scale1 / h0, 1e-6)
    if np.max(e1) > rtol * scale1 or np.max(e2) > rtol * scale2 * 1e2:
        raise ValueError(
            f"the derivatives of {what} at t={t:g} could not be computed reliably "
            f"(error estimates {np.max(e1):.2e}, {np.max(e2):.2e}): is the motion smooth near t? "
            "Pass time_scale= (the shortest time over which the motion changes) or give the "
            "derivatives explicitly"
        )
    return d1, d2


def _sampled_for(f, t, h0, what: str):
    """``f`` whose errors at other times than ``t`` say that they came from the derivatives
    at ``t`` (central differences sample up to ``t +/- h0``)."""
    def g(s):
        try:
            return f(s)
        except ValueError as e:
            if s == t:
                raise
            raise ValueError(f"{e} (sampled at t={s:g} for the derivatives of {what} at "
                             f"t={t:g}: the differences reach t +/- {h0:g}; a smaller "
                             "time_scale= keeps them closer)") from None
    return g


def cached_state(state_fn):
    """Memoize ``state(t)`` of frames whose derivatives are computed numerically: a time step
    asks for the same few times many times (FrameState is immutable, so sharing is safe)."""
    import functools

    @functools.wraps(state_fn)
    def state(self, t):
        cache = self.__dict__.setdefault("_state_cache", {})
        key = float(t)
        hit = cache.get(key)
        if hit is None:
            hit = state_fn(self, t)
            if len(cache) >= 16:
                cache.pop(next(iter(cache)))
            cache[key] = hit
        return hit

    return state


def _check_rotation(R: np.ndarray, t: float, tol: float) -> np.ndarray:
    R = np.asarray(R, dtype=float)
    if R.shape == (2, 2):
        R3 = np.eye(3)
        R3[:2, :2] = R
        R = R3
    if R.shape != (3, 3):
        raise ValueError(f"rotation(t={t:g}) must return a 3x3 (or 2x2) matrix, got shape "
                         f"{R.shape}")
    if not np.all(np.isfinite(R)):
        raise ValueError(f"rotation(t={t:g}) must be finite, got {R.tolist()}")
    dev = float(np.abs(R.T @ R - np.eye(3)).max())
    if dev > tol:
        raise ValueError(f"rotation(t={t:g}) is not orthonormal: max |R^T R - I| = {dev:.3e} "
                         f"> {tol:.1e}")
    if np.linalg.det(R) < 0.0:
        raise ValueError(f"rotation(t={t:g}) has determinant -1: a reflection, not a rotation")
    return R


class Prescribed(Frame):
    """A frame whose rotation ``R(t)`` and origin ``r_O(t)`` are given as callables.

    The angular velocity and acceleration and the origin's velocity and acceleration are
    computed from the callables (extrapolated central differences with error control), so the
    user supplies positions only. Every evaluated rotation is checked to be orthonormal with
    determinant +1.

    Args:
        rotation: ``t -> R`` (3x3, or 2x2 for a rotation about z).
        origin: ``t -> r_O`` (2- or 3-vector), default the fixed global origin.
        time_scale: the shortest time (s) over which the motion changes appreciably; it sets
            the first difference step. Default 1 s.
        orthonormality_tol: tolerance on ``max |R^T R - I|``.
    """

    def __init__(self, rotation: Callable[[float], np.ndarray],
                 origin: Optional[Callable[[float], Sequence[float]]] = None,
                 time_scale: float = 1.0, orthonormality_tol: float = 1e-10):
        if not callable(rotation):
            raise TypeError(f"rotation must be a callable t -> 3x3 matrix, got {rotation!r}")
        if origin is not None and not callable(origin):
            raise TypeError(f"origin must be a callable t -> vector or None, got {origin!r}")
        self._rotation = rotation
        self._origin = origin
        self.time_scale = checks.real(time_scale, "time_scale")
        if self.time_scale <= 0.0:
            raise ValueError(f"time_scale must be positive, got {time_scale!r}")
        self.tol = float(orthonormality_tol)
        _check_rotation(rotation(0.0), 0.0, self.tol)

    def _R(self, t):
        return _check_rotation(self._rotation(t), t, self.tol)

    def _r(self, t):
        if self._origin is None:
            return np.zeros(3)
        return checks.point3(self._origin(t), f"origin(t={t:g})")

    @cached_state
    def state(self, t: float) -> FrameState:
        t = checks.real(t, "t")
        R = self._R(t)
        h0 = 0.1 * self.time_scale
        Rf = lambda s: self._R(s).reshape(-1)  # noqa: E731
        dR, ddR = differentiate(Rf, t, h0, "rotation", 1e-7)
        dR, ddR = dR.reshape(3, 3), ddR.reshape(3, 3)
        W = R.T @ dR
        # R^T R = I for all t makes R^T dR skew; a symmetric part means R is not a smooth rotation
        sym = 0.5 * (W + W.T)
        if np.abs(sym).max() > 1e-6 * (np.abs(W).max() + 1.0 / self.time_scale):
            raise ValueError(f"rotation is not a smooth family of rotations near t={t:g}: "
                             f"R^T dR/dt has a symmetric part of size {np.abs(sym).max():.2e}")
        omega = vee(W)
        alpha = vee(dR.T @ dR + R.T @ ddR)
        r = self._r(t)
        if self._origin is None:
            v = np.zeros(3)
            a = np.zeros(3)
        else:
            v, a = differentiate(self._r, t, h0, "origin", 1e-7)
        return FrameState(t=t, R=R, r_O=r, omega=omega, alpha=alpha, v_O=R.T @ v, a_O=R.T @ a)


class Planar(Prescribed):
    """Rotation about z by ``theta(t)`` with an optional moving origin: the frame of a 2D body.

    Args:
        theta: ``t -> angle`` (rad), or a number for a fixed angle.
        origin: ``t -> (x, y)`` origin path (global), or a fixed point, default (0, 0).
        time_scale: as for :class:`Prescribed`.
    """

    def __init__(self, theta: Callable[[float], float] | float = 0.0,
                 origin: Optional[Callable[[float], Sequence[float]] | Sequence[float]] = None,
                 time_scale: float = 1.0):
        if callable(theta):
            th = theta
        else:
            th0 = checks.real(theta, "theta")
            th = lambda t: th0  # noqa: E731
        self.theta = th
        if origin is None or callable(origin):
            org = origin
        else:
            p = checks.point3(origin, "origin")
            org = lambda t: p  # noqa: E731
        super().__init__(self._rot, org, time_scale=time_scale)
        self.time_invariant = (not callable(theta)) and (origin is None or not callable(origin))

    def _rot(self, t):
        th = checks.real(self.theta(t), f"theta(t={t:g})")
        return rotation_about((0.0, 0.0, 1.0), th)

    @cached_state
    def state(self, t: float) -> FrameState:
        t = checks.real(t, "t")
        h0 = 0.1 * self.time_scale
        f = lambda s: np.array([checks.real(self.theta(s), f"theta(t={s:g})")])  # noqa: E731
        d1, d2 = differentiate(f, t, h0, "theta", 1e-7)
        th = float(f(t)[0])
        R = rotation_about((0.0, 0.0, 1.0), th)
        r = self._r(t)
        if self._origin is None:
            v = a = np.zeros(3)
        else:
            v, a = differentiate(self._r, t, h0, "origin", 1e-7)
        ez = np.array([0.0, 0.0, 1.0])
        return FrameState(t=t, R=R, r_O=r, omega=float(d1[0]) * ez, alpha=float(d2[0]) * ez,
                          v_O=R.T @ v, a_O=R.T @ a)
