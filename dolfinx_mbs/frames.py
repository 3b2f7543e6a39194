"""Rigid motion of a body's frame, and its state in the frame's own (local) components.

A frame moves with respect to the inertial (global) frame with origin ``r_O(t)`` and rotation
``R(t)`` (columns are the local axes in global components). A body's mesh coordinates X are
local coordinates, so a material point sits at ``r_O + R (X + u)``. The elastic forms need the
frame's motion in local components (``theory.md`` section 1):

    omega~ = R^T dR/dt,   alpha = d omega / dt,   v_O = R^T dr_O/dt,   a_O = R^T d2r_O/dt2

:class:`FrameState` holds those at one time. Units: SI (s, rad, m).

Frames provided:

* :class:`ConstantSpin`: steady rotation about a fixed axis through a fixed point.
* :class:`SpinUp`: the smooth spin-up of Kane, Ryan & Banerjee (1987) about a fixed axis.
* :class:`Planar`: rotation about z by an angle ``theta(t)``, optional moving origin (2D meshes).
* :class:`Prescribed`: any ``R(t)``, ``r_O(t)`` given as callables; the derivatives are computed
  by Richardson-extrapolated finite differences, with an error estimate that is checked.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Optional, Sequence

import numpy as np
from dolfinx import fem

from . import checks, compat

__all__ = [
    "FrameState",
    "Frame",
    "FrameConstants",
    "ConstantSpin",
    "SpinUp",
    "Planar",
    "Prescribed",
    "rotation_about",
    "skew",
]


def skew(w: Sequence[float]) -> np.ndarray:
    """The matrix of ``y -> w x y``."""
    w = np.asarray(w, dtype=float)
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _vee(W: np.ndarray) -> np.ndarray:
    """Axial vector of the skew part of a 3x3 matrix (inverse of :func:`skew`)."""
    return 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])


def rotation_about(axis: Sequence[float], angle: float) -> np.ndarray:
    """Rotation matrix by ``angle`` (rad) about ``axis`` (normalised; Rodrigues' formula)."""
    n = checks.unit_axis(axis)
    K = skew(n)
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


@dataclasses.dataclass(frozen=True)
class FrameState:
    """The motion of a frame at time ``t``; vectors in local components except ``R`` and ``r_O``.

    Attributes:
        t: time (s).
        R: rotation, local axes as columns in global components (3x3).
        r_O: origin position in global components (m).
        omega: angular velocity (rad/s).
        alpha: angular acceleration (rad/s^2).
        v_O: origin velocity (m/s).
        a_O: origin acceleration (m/s^2).
    """

    t: float
    R: np.ndarray
    r_O: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray
    v_O: np.ndarray
    a_O: np.ndarray

    def is_planar(self, tol: float = 1e-12) -> bool:
        """True when the motion keeps the xy-plane: rotation about z, in-plane origin motion."""
        scale = 1.0 + np.abs(self.omega).max() + np.abs(self.alpha).max()
        lin = 1.0 + np.abs(self.v_O).max() + np.abs(self.a_O).max()
        return bool(
            abs(self.omega[0]) + abs(self.omega[1]) + abs(self.alpha[0]) + abs(self.alpha[1])
            <= tol * scale
            and abs(self.v_O[2]) + abs(self.a_O[2]) <= tol * lin
        )

    def to_global(self, X: np.ndarray) -> np.ndarray:
        """Global positions ``r_O + R X`` of local points ``X`` (shape (n, 3) or (3,))."""
        X = np.asarray(X, dtype=float)
        return self.r_O + X @ self.R.T


class Frame:
    """Base class: a rigid frame whose motion is known as a function of time.

    Subclasses implement :meth:`state`. ``time_invariant`` is True when the local-component state
    (omega, alpha, v_O, a_O) does not change with time, so operators can be assembled once.
    """

    time_invariant: bool = False
    #: False only when the origin's acceleration a_O is zero at all times (then the prestress
    #: needs no unit cases for it)
    origin_accelerates: bool = True

    def state(self, t: float) -> FrameState:  # pragma: no cover - abstract
        raise NotImplementedError

    def omega(self, t: float) -> np.ndarray:
        """Angular velocity (rad/s) in local components."""
        return self.state(t).omega

    def alpha(self, t: float) -> np.ndarray:
        """Angular acceleration (rad/s^2) in local components."""
        return self.state(t).alpha

    def rotation(self, t: float) -> np.ndarray:
        """Rotation matrix R(t)."""
        return self.state(t).R

    def origin(self, t: float) -> np.ndarray:
        """Origin r_O(t) in global components."""
        return self.state(t).r_O

    def constants(self, mesh) -> "FrameConstants":
        """The frame state as UFL constants on ``mesh``, for the forms of
        :mod:`dolfinx_mbs.forms` in a user's own solver loop::

            consts = frame.constants(mesh)
            k_w = forms.spin_softening(rho, consts.omega, u, v)
            ...
            consts.update(t)        # before assembling at time t

        See :class:`FrameConstants`."""
        return FrameConstants(self, mesh)


class FrameConstants:
    """A frame's state at one time as ``dolfinx.fem.Constant`` s on a mesh, in local components.

    Attributes:
        omega, alpha, v_O, a_O: 3-vector constants (rad/s, rad/s^2, m/s, m/s^2); for a 2D mesh
            only the planar parts act in the forms (rotation about z, in-plane translation).
        R: the 3x3 rotation (local axes as columns, global components), e.g. to turn a global
            gravity into local components: ``ufl.dot(ufl.transpose(consts.R), g)``.
        state: the :class:`FrameState` last set (None before the first :meth:`update`).

    All constants are zero until :meth:`update` or :meth:`set` fills them.
    """

    def __init__(self, frame: Optional[Frame], mesh):
        self.frame = frame
        st = compat.scalar_type
        self.omega = fem.Constant(mesh, np.zeros(3, dtype=st))
        self.alpha = fem.Constant(mesh, np.zeros(3, dtype=st))
        self.v_O = fem.Constant(mesh, np.zeros(3, dtype=st))
        self.a_O = fem.Constant(mesh, np.zeros(3, dtype=st))
        self.R = fem.Constant(mesh, np.eye(3, dtype=st))
        self.state: Optional[FrameState] = None

    def set(self, state: FrameState) -> FrameState:
        """Fill the constants with ``state``; returns it."""
        if not isinstance(state, FrameState):
            raise TypeError(f"state must be a dolfinx_mbs.frames.FrameState, got {state!r}")
        self.omega.value = state.omega
        self.alpha.value = state.alpha
        self.v_O.value = state.v_O
        self.a_O.value = state.a_O
        self.R.value = state.R
        self.state = state
        return state

    def update(self, t: float) -> FrameState:
        """Fill the constants with the frame's state at time ``t`` (s); returns that state."""
        if self.frame is None:
            raise ValueError("these constants belong to no frame: use set(state)")
        return self.set(self.frame.state(checks.real(t, "t")))


class _AxisRotation(Frame):
    """Rotation by ``theta(t)`` about a fixed axis through a fixed point ``pivot``.

    The frame coincides with the global frame at theta = 0, so a point at local X is at
    ``pivot + R (X - pivot)``: r_O = pivot - R pivot.
    """

    def __init__(self, axis, pivot):
        self.axis = checks.unit_axis(axis)
        self.pivot = checks.point3(pivot, "origin")

    @property
    def origin_accelerates(self) -> bool:
        """True when the local origin is off the spin axis (a hub offset): a_O != 0."""
        return bool(np.linalg.norm(np.cross(self.axis, self.pivot)) > 0.0)

    def _angle(self, t: float) -> tuple[float, float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def state(self, t: float) -> FrameState:
        t = checks.real(t, "t")
        th, thd, thdd = self._angle(t)
        R = rotation_about(self.axis, th)
        w = thd * self.axis
        a = thdd * self.axis
        c = self.pivot
        return FrameState(
            t=t,
            R=R,
            r_O=c - R @ c,
            omega=w,
            alpha=a,
            v_O=-np.cross(w, c),
            a_O=-np.cross(a, c) - np.cross(w, np.cross(w, c)),
        )


class ConstantSpin(_AxisRotation):
    """Steady spin at ``rate`` (rad/s) about ``axis`` through ``origin`` (global = local at t=0).

    Args:
        axis: direction of the spin axis (2- or 3-vector, nonzero; normalised).
        rate: spin rate (rad/s), right-handed about ``axis``.
        origin: a point of the spin axis (m).
    """

    time_invariant = True

    def __init__(self, axis=(0.0, 0.0, 1.0), rate: float = 0.0, origin=(0.0, 0.0, 0.0)):
        super().__init__(axis, origin)
        self.rate = checks.real(rate, "rate")

    def _angle(self, t):
        return self.rate * t, self.rate, 0.0

    def at_rate(self, rate: float) -> "ConstantSpin":
        """The same spin axis and origin at another ``rate`` (a new frame)."""
        return ConstantSpin(self.axis, rate, self.pivot)

    def __repr__(self) -> str:
        return (f"ConstantSpin(axis={self.axis.tolist()}, rate={self.rate}, "
                f"origin={self.pivot.tolist()})")


class SpinUp(_AxisRotation):
    """Smooth spin-up to ``final_rate`` over ``ramp_time``, then steady (Kane, Ryan & Banerjee).

    Omega(t) = (W/T) (t - (T/2 pi) sin(2 pi t / T)) for 0 <= t < T, W afterwards, 0 before 0;
    the angular acceleration is (W/T)(1 - cos(2 pi t/T)): continuous, zero at both ends.

    Args:
        axis: spin axis direction.
        final_rate: W (rad/s).
        ramp_time: T (s), positive.
        origin: a point of the spin axis.
    """

    def __init__(self, axis=(0.0, 0.0, 1.0), final_rate: float = 1.0, ramp_time: float = 1.0,
                 origin=(0.0, 0.0, 0.0)):
        super().__init__(axis, origin)
        self.final_rate = checks.real(final_rate, "final_rate")
        self.ramp_time = checks.real(ramp_time, "ramp_time")
        if self.ramp_time <= 0.0:
            raise ValueError(f"ramp_time must be positive, got {ramp_time!r}")

    def _angle(self, t):
        W, T = self.final_rate, self.ramp_time
        if t <= 0.0:
            return 0.0, 0.0, 0.0
        if t >= T:
            return W * T / 2.0 + W * (t - T), W, 0.0
        s = 2.0 * math.pi / T
        th = (W / T) * (t * t / 2.0 + (math.cos(s * t) - 1.0) / (s * s))
        thd = (W / T) * (t - math.sin(s * t) / s)
        thdd = (W / T) * (1.0 - math.cos(s * t))
        return th, thd, thdd

    def __repr__(self) -> str:
        return (f"SpinUp(axis={self.axis.tolist()}, final_rate={self.final_rate}, "
                f"ramp_time={self.ramp_time})")


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


def _cached(state_fn):
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
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ValueError(f"rotation(t={t:g}) must return a finite 3x3 (or 2x2) matrix, got shape "
                         f"{R.shape}")
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
        orthonormality_tol: tolerance on max |R^T R - I|.
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

    @_cached
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
        omega = _vee(W)
        alpha = _vee(dR.T @ dR + R.T @ ddR)
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

    @_cached
    def state(self, t: float) -> FrameState:
        t = checks.real(t, "t")
        h0 = 0.1 * self.time_scale
        f = lambda s: np.array([checks.real(self.theta(s), "theta")])  # noqa: E731
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
