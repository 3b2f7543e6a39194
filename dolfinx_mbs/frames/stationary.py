"""The stationary reference frame of an axisymmetric rotor (docs/theory.md section 9).

A body in a :class:`Stationary` frame is described at fixed points of the ground: its mesh
coordinates x are ground coordinates, its displacement u(x, t) is that of the material point
passing x at time t, in ground components. The frame itself does not move (R = I, omega = 0:
none of the moving-frame terms of sections 1-2 act); the body spins through it about
``spin_axis`` at the rate Omega(t), which enters the forms of :mod:`dolfinx_mbs.forms.stationary`
as a parameter. Only a body that is axisymmetric about the spin axis (geometry, density,
material) has a stationary description with constant coefficients; the operators check it
(:func:`dolfinx_mbs.assembly.rotor_terms.check_axisymmetric`).

:class:`Ground` is the ground for a body that does not spin (a bearing housing, a
foundation): it does not move, and a Campbell sweep or an unbalance response leaves it at rest
(a ``ConstantSpin`` frame at rate 0 would be spun by them). :class:`StationaryState` is the
:class:`Stationary` frame's state with the spin (angle, rate, acceleration) beside
the (trivial) rigid motion. Units: SI (s, rad, rad/s, rad/s^2).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Callable, Union

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.base import AT_REST, Frame, FrameState

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["Ground", "Stationary", "StationaryState", "transverse_basis"]

#: what a body in a stationary frame does when it is not axisymmetric to ``axisymmetry_tol``
CHECKS = ("error", "warn", "off")


def transverse_basis(axis: ArrayLike) -> np.ndarray:
    """Two unit vectors (e1, e2) across the unit ``axis`` a with e1 x e2 = a: the directions
    of a bearing's x and y coefficients. For the coordinate axes the cyclic successors
    (a = z: x, y; a = x: y, z; a = y: z, x); otherwise e1 is the global axis most across a,
    made orthogonal to it. Returns a (2, 3) array.

    Args:
        axis: the spin axis.

    Returns:
        ``(e1, e2)`` as a 2 x 3 array.
    """
    a = checks.unit_axis(axis, "spin_axis")
    k = int(np.argmax(np.abs(a)))
    if abs(abs(a[k]) - 1.0) < 1e-14:
        e1 = np.eye(3)[(k + 1) % 3]
    else:
        g = np.eye(3)[int(np.argmin(np.abs(a)))]
        e1 = g - np.dot(g, a) * a
        e1 /= np.linalg.norm(e1)
    e2 = np.cross(a, e1)
    return np.array([e1, e2])


@dataclasses.dataclass(frozen=True)
class StationaryState(FrameState):
    """A :class:`FrameState` of a :class:`Stationary` frame (R = I, all rigid-motion vectors
    zero) with the spin of the body through it.

    Attributes:
        spin: the spin rate Omega (rad/s), right-handed about ``axis``.
        spin_acceleration: dOmega/dt (rad/s^2).
        angle: the spin angle (rad) from t = 0.
        axis: the unit spin axis (ground components).
        center: a point of the spin axis (m).
    """

    spin: float = 0.0
    spin_acceleration: float = 0.0
    angle: float = 0.0
    axis: np.ndarray = dataclasses.field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    center: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))

    @property
    def centrifugal_omega(self) -> np.ndarray:
        """The angular velocity whose centrifugal load the body carries: Omega times the
        axis (the frame's own omega is zero)."""
        return self.spin * self.axis


RateLike = Union[float, Callable[[float], float]]


class Stationary(Frame):
    """The ground, through which an axisymmetric body spins about ``spin_axis``.

    Args:
        spin_axis: the direction of the spin axis (normalised), ground components.
        rate: the spin rate Omega (rad/s): a number (constant spin), or ``t -> Omega(t)`` for a
            run-up (then ``acceleration`` and ``angle`` may be given; otherwise they are
            computed: dOmega/dt by extrapolated differences, the angle by Gauss quadrature).
        origin: a point of the spin axis (m).
        acceleration: ``t -> dOmega/dt`` for a callable ``rate`` (optional).
        angle: ``t -> spin angle`` from t = 0 for a callable ``rate`` (optional).
        check: what a body that is not axisymmetric about the axis gets: ``"error"``
            (default), ``"warn"`` (a log warning) or ``"off"``.
        axisymmetry_tol: the largest relative circumferential mass moment accepted
            (:func:`dolfinx_mbs.assembly.rotor_terms.check_axisymmetric`).

    Raises:
        ValueError: a zero axis, a non-finite rate or point, an unknown ``check``.
    """

    calls_user_code = False
    origin_accelerates = False

    def __init__(self, spin_axis: ArrayLike = (0.0, 0.0, 1.0), rate: RateLike = 0.0,
                 origin: ArrayLike = (0.0, 0.0, 0.0),
                 acceleration: Callable[[float], float] | None = None,
                 angle: Callable[[float], float] | None = None, check: str = "error",
                 axisymmetry_tol: float = 1e-2) -> None:
        self.axis = checks.unit_axis(spin_axis, "spin_axis")
        self.pivot = checks.point3(origin, "origin")
        if check not in CHECKS:
            raise ValueError(f"check must be one of {CHECKS}, got {check!r}")
        self.check = check
        self.axisymmetry_tol = checks.positive(axisymmetry_tol, "axisymmetry_tol")
        self._rate_fn: Callable[[float], float] | None
        if callable(rate):
            self._rate_fn, self.rate = rate, None
            self.calls_user_code = True
            self._accel_fn, self._angle_fn = acceleration, angle
        else:
            if acceleration is not None or angle is not None:
                raise ValueError("acceleration= and angle= go with a callable rate only")
            self._rate_fn, self.rate = None, checks.real(rate, "rate")
            self._accel_fn = self._angle_fn = None

    @property
    def time_invariant(self) -> bool:  # type: ignore[override]
        """True for a constant spin rate: the operators are then assembled once."""
        return self._rate_fn is None

    @property
    def spin_axis(self) -> np.ndarray:
        """The unit spin axis (ground components)."""
        return self.axis

    @property
    def transverse(self) -> np.ndarray:
        """(e1, e2): the directions of bearing coefficients x, y (:func:`transverse_basis`)."""
        return transverse_basis(self.axis)

    def spin(self, t: float) -> tuple:
        """(angle, Omega, dOmega/dt) at ``t``.

        Args:
            t: time (s).

        Returns:
            ``(angle, rate, acceleration)``.
        """
        t = checks.real(t, "t")
        rate_fn = self._rate_fn
        if rate_fn is None:
            assert self.rate is not None  # a constant rate
            return self.rate * t, self.rate, 0.0
        w = checks.real(rate_fn(t), f"rate(t={t:g})")
        if self._accel_fn is not None:
            a = checks.real(self._accel_fn(t), f"acceleration(t={t:g})")
        else:
            from dolfinx_mbs.frames.prescribed import differentiate

            d1, _ = differentiate(lambda s: np.array([rate_fn(s)], dtype=float), t,
                                  1e-2, "the spin rate", 1e-6)
            a = checks.real(float(d1[0]), f"the spin's acceleration at t={t:g} (rate(t) "
                                          "differentiated: is rate finite near t?)")
        if self._angle_fn is not None:
            th = checks.real(self._angle_fn(t), f"angle(t={t:g})")
        else:
            th = checks.real(_integral(rate_fn, t), f"the spin's angle at t={t:g} (rate "
                                                          "integrated from 0: is rate finite "
                                                          "on [0, t]?)")
        return th, w, a

    def state(self, t: float) -> StationaryState:
        """The frame's (trivial) motion at ``t`` with the spin's angle, rate and
        acceleration.

        Args:
            t: time (s).
        """
        th, w, a = self.spin(t)
        z = np.zeros(3)
        return StationaryState(t=float(t), R=np.eye(3), r_O=z.copy(), omega=z.copy(),
                               alpha=z.copy(), v_O=z.copy(), a_O=z.copy(), spin=w,
                               spin_acceleration=a, angle=th, axis=self.axis.copy(),
                               center=self.pivot.copy())

    def at_rate(self, rate: float) -> "Stationary":
        """The same axis and checks at a constant ``rate`` (a new frame).

        Args:
            rate: the spin speed (rad/s).

        Returns:
            The new frame.
        """
        return Stationary(self.axis, rate, self.pivot, check=self.check,
                          axisymmetry_tol=self.axisymmetry_tol)

    def __repr__(self) -> str:
        r = self.rate if self._rate_fn is None else self._rate_fn
        return f"Stationary(spin_axis={self.axis.tolist()}, rate={r!r})"


class Ground(Frame):
    """The ground, at rest: a body in it does not move with its frame and does not spin (a
    bearing housing, a foundation, a casing). Its ``axis`` names the directions x, y of the
    bearings on the body (:func:`transverse_basis`), as a :class:`Stationary` frame's spin
    axis does; a bearing between a rotor and a housing takes the rotor's.

    Args:
        axis: the axis whose transverse directions are a ground bearing's x, y.
        origin: a point of that axis (m).

    Raises:
        ValueError: a zero axis or a non-finite point.
    """

    time_invariant = True
    calls_user_code = False
    origin_accelerates = False

    def __init__(self, axis: ArrayLike = (0.0, 0.0, 1.0),
                 origin: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        self.axis = checks.unit_axis(axis, "axis")
        self.pivot = checks.point3(origin, "origin")

    @property
    def transverse(self) -> np.ndarray:
        """(e1, e2): the directions of bearing coefficients x, y (:func:`transverse_basis`)."""
        return transverse_basis(self.axis)

    def state(self, t: float) -> FrameState:
        """The frame's state at ``t``: R = I and every rate zero.

        Args:
            t: time (s).

        Returns:
            The :class:`FrameState`.
        """
        z = np.zeros(3)
        return FrameState(t=checks.real(t, "t"), R=np.eye(3), r_O=z.copy(), omega=z.copy(),
                          alpha=z.copy(), v_O=z.copy(), a_O=z.copy())

    def motion_key(self) -> tuple:
        """At rest (see ``frames.equal_motion``)."""
        return AT_REST

    def __repr__(self) -> str:
        return f"Ground(axis={self.axis.tolist()})"


def _integral(f: Callable[[float], float], t: float) -> float:
    """int_0^t f by composite Gauss-Legendre (20 panels of 8 points): a spin angle."""
    if t == 0.0:
        return 0.0
    x, w = np.polynomial.legendre.leggauss(8)
    edges = np.linspace(0.0, t, 21)
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        mid, half = 0.5 * (a + b), 0.5 * (b - a)
        total += half * sum(wi * float(f(mid + half * xi)) for xi, wi in zip(x, w))
    return total if math.isfinite(total) else float("nan")
