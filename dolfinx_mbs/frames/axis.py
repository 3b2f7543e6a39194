"""Rotation about a fixed axis: steady spin and the Kane-Ryan-Banerjee spin-up."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Tuple

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.base import AT_REST, Frame, FrameState, FrameStates, key_floats, skew

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["ConstantSpin", "SpinUp"]


class _AxisRotation(Frame):
    """Rotation by ``theta(t)`` about a fixed axis through a fixed point ``pivot``.

    The frame coincides with the global frame at theta = 0, so a point at local X is at
    ``pivot + R (X - pivot)``: r_O = pivot - R pivot.
    """

    calls_user_code = False  # closed forms

    def __init__(self, axis: ArrayLike, pivot: ArrayLike) -> None:
        self.axis = checks.unit_axis(axis)
        self.pivot = checks.point3(pivot, "origin")

    @property
    def origin_accelerates(self) -> bool:  # type: ignore[override]
        """True when the local origin is off the spin axis (a hub offset): a_O != 0."""
        return bool(np.linalg.norm(np.cross(self.axis, self.pivot)) > 0.0)

    def _axis_key(self, rate: float) -> tuple:
        """The motion key's spin vector and axis line.

        The spin vector rate * axis is one value for the axis and rate both reversed, the axis
        line's point nearest the global origin one value for any point given on the axis.
        """
        n, c = self.axis, self.pivot
        return key_floats(rate * n), key_floats(c - (c @ n) * n)

    def _angle(self, t: float) -> tuple[float, float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _angles(self, t: np.ndarray) -> tuple:  # pragma: no cover - abstract
        """:meth:`_angle` at an array of times (the same closed form on arrays)."""
        raise NotImplementedError

    def state(self, t: float) -> FrameState:
        t = checks.real(t, "t")
        th, thd, thdd = self._angle(t)
        n, c = self.axis, self.pivot
        K = skew(n)  # Rodrigues' rotation about the unit axis; n x c and n x (n x c) by K
        R = np.eye(3) + math.sin(th) * K + (1.0 - math.cos(th)) * (K @ K)
        nc = K @ c
        return FrameState(
            t=t,
            R=R,
            r_O=c - R @ c,
            omega=thd * n,
            alpha=thdd * n,
            v_O=-thd * nc,
            a_O=-thdd * nc - thd * thd * (K @ nc),
        )

    def states(self, times: ArrayLike) -> FrameStates:
        """The states at all ``times``: :meth:`state`'s closed form on arrays (the scalar
        one is kept for the TS path's single states, three times cheaper).

        Args:
            times: the times (s).

        Returns:
            The states.
        """
        t = np.asarray(times, dtype=float).reshape(-1)
        th, thd, thdd = (np.broadcast_to(np.asarray(x, dtype=float), t.shape)
                         for x in self._angles(t))
        n, c = self.axis, self.pivot
        K = skew(n)  # Rodrigues' rotation about the unit axis; n x c and n x (n x c) by K
        R = np.eye(3) + np.sin(th)[:, None, None] * K + \
            (1.0 - np.cos(th))[:, None, None] * (K @ K)
        nc = K @ c
        return FrameStates(t=t, R=R, r_O=c - R @ c, omega=thd[:, None] * n,
                           alpha=thdd[:, None] * n, v_O=-thd[:, None] * nc,
                           a_O=-thdd[:, None] * nc - (thd * thd)[:, None] * (K @ nc))


class ConstantSpin(_AxisRotation):
    """Steady spin at ``rate`` (rad/s) about ``axis`` through ``origin`` (global = local at t=0).

    Args:
        axis: direction of the spin axis (2- or 3-vector, nonzero; normalised).
        rate: spin rate (rad/s), right-handed about ``axis``.
        origin: a point of the spin axis (m).
    """

    time_invariant = True

    def __init__(self, axis: ArrayLike = (0.0, 0.0, 1.0), rate: float = 0.0,
                 origin: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        super().__init__(axis, origin)
        self.rate = checks.real(rate, "rate")

    def _angle(self, t: float) -> Tuple[float, float, float]:
        return self.rate * t, self.rate, 0.0

    _angles = _angle  # type: ignore[assignment]  # the closed form holds on arrays too

    def motion_key(self) -> tuple:
        """Equal for the same spin vector and axis line (see ``frames.equal_motion``).

        Every frame at rate 0 is at rest.
        """
        if self.rate == 0.0:
            return AT_REST
        return ("ConstantSpin",) + self._axis_key(self.rate)

    def at_rate(self, rate: float) -> "ConstantSpin":
        """The same spin axis and origin at another ``rate`` (a new frame).

        Args:
            rate: the spin speed (rad/s).

        Returns:
            The new frame.
        """
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

    def __init__(self, axis: ArrayLike = (0.0, 0.0, 1.0), final_rate: float = 1.0,
                 ramp_time: float = 1.0, origin: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        super().__init__(axis, origin)
        self.final_rate = checks.real(final_rate, "final_rate")
        self.ramp_time = checks.real(ramp_time, "ramp_time")
        if self.ramp_time <= 0.0:
            raise ValueError(f"ramp_time must be positive, got {checks.shown(ramp_time)}")

    def _angle(self, t: float) -> Tuple[float, float, float]:
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

    def motion_key(self) -> tuple:
        """Equal for the same final spin vector, axis line and ramp time.

        See ``frames.equal_motion``; a spin-up to rate 0 is at rest.
        """
        if self.final_rate == 0.0:
            return AT_REST
        return ("SpinUp", float(self.ramp_time)) + self._axis_key(self.final_rate)

    def _angles(self, t: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        W, T = self.final_rate, self.ramp_time
        s = 2.0 * math.pi / T
        r = np.clip(t, 0.0, T)  # the ramp's part of t
        th = np.where(t >= T, W * T / 2.0 + W * (t - T),
                      (W / T) * (r * r / 2.0 + (np.cos(s * r) - 1.0) / (s * s)))
        thd = np.where(t >= T, W, (W / T) * (r - np.sin(s * r) / s))
        thdd = np.where(t >= T, 0.0, (W / T) * (1.0 - np.cos(s * r)))
        return th, thd, thdd

    def __repr__(self) -> str:
        return (f"SpinUp(axis={self.axis.tolist()}, final_rate={self.final_rate}, "
                f"ramp_time={self.ramp_time})")
