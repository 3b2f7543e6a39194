"""Frames whose motion is given as functions of time.

:class:`Prescribed` takes any ``R(t)`` and ``r_O(t)``, :class:`Planar` an angle ``theta(t)``
about z and an optional moving origin. Import them from :mod:`dolfinx_mbs.frames`. Units: s,
rad, m.

A frame's state needs the first two time derivatives of its motion (``docs/theory.md`` section
1). For the rotation and for the origin, each frame takes them from the first of:

1. the derivatives the user gives: ``omega=`` and ``alpha=`` (angular velocity and acceleration;
   :class:`Planar`: rates about z), ``origin_velocity=`` and ``origin_acceleration=`` (the time
   derivatives of ``origin``, global components). They are used as given. With only the first
   of a pair given, the second is its numerical derivative (one differentiation, not two).
2. a spline given as ``theta`` or ``origin``: an object with a ``derivative(n)`` method (scipy's
   ``BSpline``, ``PPoly``, ``CubicSpline``, ``UnivariateSpline``, ...) or ``deriv(n)`` (numpy's
   ``Polynomial``); its own derivatives are used.
3. extrapolated central differences (:func:`derivatives`), with an error estimate that is checked.

Given derivatives are compared with the numerical derivatives of the positions (where those
can be computed) at the times the state is asked for, until each has been compared once where it
is not negligible (above :data:`CHECKED_ABOVE`): a sign, an axis or a unit that does not match
the motion is refused there rather than integrated, and a motion that starts at rest is checked
once it moves.

The differencing step is chosen from the profile. Central differences at the steps h0, h0/1.6,
h0/1.6^2, ... are extrapolated (a Neville tableau) until they stop improving, and the estimate
of their error must lie within a relative 1e-7 (first derivative; 1e-5 for the second). The
first step h0 starts at :data:`FIRST_STEP` (0.1 s), or at 0.1 ``time_scale`` when one is given,
and wherever the estimate fails there (the motion changes appreciably within h0 of t) it is
divided by :data:`STEP_FACTOR` (10), at most :data:`STEPS_TRIED` - 1 times (down to 1e-7 s
from the default start); the largest h0 whose estimate holds is used. A motion that is not
smooth at t fails at every step and raises, naming the time. So ``time_scale`` is no longer
needed for a fast but smooth motion; it still serves a motion defined only near the times of
the run (the differences sample t +/- h0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Tuple, TypeVar, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.base import Frame, FrameState, rotation_about, vee

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["Prescribed", "Planar", "derivatives", "differentiate", "FIRST_STEP", "STEP_FACTOR",
           "STEPS_TRIED"]

#: the first difference step (s) when no ``time_scale`` is given
FIRST_STEP = 0.1
#: the factor between the first difference steps tried
STEP_FACTOR = 10.0
#: how many first steps are tried before the derivatives are declared unreliable
STEPS_TRIED = 7
#: relative tolerance of the first derivative's error estimate (the second's: 100 times it)
RTOL = 1e-7
#: a given derivative is compared with the motion's at each state until it exceeds this once
CHECKED_ABOVE = 1e-2

_EZ = np.array([0.0, 0.0, 1.0])

# --- numerical differentiation -------------------------------------------------------------


class _Unresolved(ValueError):
    """The differences from one first step did not converge to the tolerance."""


class _SampleError(ValueError):
    """The function failed at a time sampled for the differences (not at t itself)."""


def _richardson(f: Callable[[float], ArrayLike], t: float, h0: float, order: int,
                levels: int = 8, ratio: float = 1.6) -> tuple[np.ndarray, np.ndarray]:
    """First or second derivative of a vector function by extrapolated central differences.

    Central differences have an error series in even powers of h; a Neville tableau over
    h0, h0/ratio, ... removes those terms one by one. The tableau entry with the smallest change
    against its neighbours is returned with that change as an error estimate, per component.
    """
    f0 = np.asarray(f(t), dtype=float) if order == 2 else None

    def diff(h: float) -> np.ndarray:
        fp = np.asarray(f(t + h), dtype=float)
        fm = np.asarray(f(t - h), dtype=float)
        if order == 1:
            return cast(np.ndarray, (fp - fm) / (2.0 * h))
        assert f0 is not None  # (order 2)
        return cast(np.ndarray, (fp - 2.0 * f0 + fm) / (h * h))

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


def _at_step(f: Callable[[float], ArrayLike], t: float, h0: float, what: str, rtol: float,
             second: bool, h_ref: float,
             size: float | None = None) -> Tuple[np.ndarray, np.ndarray | None]:
    """The derivatives of ``f`` at ``t`` from the first step ``h0``.

    Returns ``(d1, d2)`` (``d2`` None unless ``second``) or raises :class:`_Unresolved`. A
    derivative that vanishes is judged against the next lower one over ``h_ref`` (the first
    step of the ladder, so that a smaller step is not judged more leniently), the function's
    own size being ``size`` (default ``|f(t)|``).
    """
    g = _sampled_for(f, t, h0, what)
    d1, e1 = _richardson(g, t, h0, 1)
    d2, e2 = _richardson(g, t, h0, 2) if second else (None, np.zeros(1))
    f0 = np.abs(np.asarray(f(t), dtype=float)).max() if size is None else size
    scale1 = max(np.abs(d1).max(), f0 / h_ref, 1e-6)
    scale2 = max(np.abs(d2).max(), scale1 / h_ref, 1e-6) if d2 is not None else 1.0
    if np.max(e1) > rtol * scale1 or np.max(e2) > rtol * scale2 * 1e2:
        raise _Unresolved(f"error estimates {np.max(e1):.2e}" + (
            f", {np.max(e2):.2e}" if second else "") + f" from the step {h0:g} s")
    return d1, d2


def differentiate(f: Callable[[float], ArrayLike], t: float, h0: float, what: str,
                  rtol: float) -> tuple[np.ndarray, np.ndarray]:
    """First and second derivatives of ``f`` at ``t`` from the one first step ``h0``.

    Extrapolated central differences (the module's docstring) without the choice of step.

    Args:
        f: ``t -> array``.
        t: the time (s).
        h0: the first difference step (s).
        what: the function's name in messages.
        rtol: relative tolerance of the first derivative's error estimate (100 ``rtol`` for
            the second's).

    Returns:
        ``(d1, d2)``, arrays of the shape of ``f(t)``.

    Raises:
        ValueError: the error estimates exceed the tolerances, or ``f`` fails at a sampled
            time (the message names it).
    """
    try:
        d1, d2 = _at_step(f, t, h0, what, rtol, True, h0)
    except _SampleError as e:
        raise ValueError(str(e)) from None
    except _Unresolved as e:
        raise ValueError(
            f"the derivatives of {what} at t={t:g} could not be computed reliably ({e}): is "
            "the motion smooth near t? Pass time_scale= (the shortest time over which the "
            "motion changes) or give the derivatives explicitly") from None
    assert d2 is not None  # (second=True)
    return d1, d2


def derivatives(f: Callable[[float], ArrayLike], t: float, what: str,
                time_scale: float | None = None, second: bool = True,
                given: str = "the derivatives",
                rtol: float = RTOL) -> tuple[np.ndarray, np.ndarray | None, float]:
    """First (and second) derivative of ``f`` at ``t``, the step chosen from the profile.

    The first steps tried and the tolerances are the module docstring's.

    Args:
        f: ``t -> array``.
        t: the time (s).
        what: the function's name in messages.
        time_scale: None (the first step starts at :data:`FIRST_STEP`), or a time (s) from
            whose tenth it starts.
        second: also the second derivative.
        given: the arguments that would give the derivatives explicitly (for the message).
        rtol: relative tolerance of the first derivative's error estimate.

    Returns:
        ``(d1, d2, h0)``: the derivatives (``d2`` None unless ``second``) and the first step
        (s) they came from.

    Raises:
        ValueError: no step gives estimates within the tolerances (the motion is not smooth
            at ``t``), or ``f`` fails at a sampled time (the first such failure, naming it).
    """
    start = FIRST_STEP if time_scale is None else 0.1 * float(time_scale)
    size = _size(f, t, start)
    sample_error: _SampleError | None = None
    last, h0 = "", start
    for k in range(STEPS_TRIED):
        h0 = start / STEP_FACTOR**k
        if k and h0 < 1e-8 * abs(t):  # t +/- h0 would no longer be resolved
            break
        try:
            d1, d2 = _at_step(f, t, h0, what, rtol, second, start, size)
            return d1, d2, h0
        except _Unresolved as e:
            last = str(e)
        except _SampleError as e:
            sample_error = sample_error or e
    if sample_error is not None:  # a plain ValueError: checks.collective passes it on as one
        raise ValueError(str(sample_error)) from None
    raise ValueError(
        f"the derivatives of {what} at t={t:g} could not be computed reliably: the extrapolated "
        f"differences do not converge from any first step between {start:g} s and {h0:g} s "
        f"({last}): is the motion smooth near t? Give {given} explicitly")


def _size(f: Callable[[float], ArrayLike], t: float, h: float) -> float:
    """The largest magnitude of ``f`` at ``t`` and ``t +/- h`` (where it is defined).

    A derivative that vanishes at ``t`` is judged against it: where ``f`` itself vanishes at
    ``t`` but not nearby (a rate before a turn), its round-off is that of its size nearby.
    """
    size = float(np.abs(np.asarray(f(t), dtype=float)).max())
    for s in (t - h, t + h):
        try:
            size = max(size, float(np.abs(np.asarray(f(s), dtype=float)).max()))
        except (ValueError, TypeError, ArithmeticError):
            pass
    return size if np.isfinite(size) else 0.0


def _sampled_for(f: Callable[[float], ArrayLike], t: float, h0: float,
                 what: str) -> Callable[[float], ArrayLike]:
    """``f`` whose errors at other times than ``t`` name the derivatives they served.

    Central differences sample up to ``t +/- h0``.
    """
    def g(s: float) -> ArrayLike:
        try:
            return f(s)
        except ValueError as e:
            if s == t:
                raise
            raise _SampleError(f"{e} (sampled at t={s:g} for the derivatives of {what} at "
                               f"t={t:g}: the differences reach t +/- {h0:g}; a smaller "
                               "time_scale= keeps them closer, or give the derivatives)"
                               ) from None
    return g


#: a frame class whose ``state`` :func:`cached_state` memoizes
_F = TypeVar("_F", bound=Frame)


def cached_state(state_fn: Callable[[_F, float], FrameState]
                 ) -> Callable[[_F, float], FrameState]:
    """Memoize ``state(t)`` of frames whose derivatives are computed numerically.

    A time step asks for the same few times many times (FrameState is immutable, so sharing
    is safe).

    Args:
        state_fn: the frame class's ``state(self, t)``.

    Returns:
        The memoizing ``state``.
    """
    import functools

    @functools.wraps(state_fn)
    def state(self: _F, t: float) -> FrameState:
        cache = self.__dict__.setdefault("_state_cache", {})
        key = float(t)
        hit = cache.get(key)
        if hit is None:
            hit = state_fn(self, t)
            if len(cache) >= 16:
                cache.pop(next(iter(cache)))
            cache[key] = hit
        return cast("FrameState", hit)

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
        raise ValueError(f"rotation(t={t:g}) must be finite, got {checks.shown(R)}")
    dev = float(np.abs(R.T @ R - np.eye(3)).max())
    if dev > tol:
        raise ValueError(f"rotation(t={t:g}) is not orthonormal: max |R^T R - I| = {dev:.3e} "
                         f"> {tol:.1e}")
    if np.linalg.det(R) < 0.0:
        raise ValueError(f"rotation(t={t:g}) has determinant -1: a reflection, not a rotation")
    return R


# --- the user's derivatives ----------------------------------------------------------------

def _spline_derivative(fn: object, n: int) -> Callable | None:
    """The ``n``-th derivative of a spline or polynomial object, None for a plain function.

    Splines have ``derivative(n)`` (scipy), polynomials ``deriv(n)`` (numpy).
    """
    for method in ("derivative", "deriv"):
        d = getattr(fn, method, None)
        if callable(d):
            try:
                out = d(n)
            except (TypeError, ValueError):
                return None
            return out if callable(out) else None
    return None


def _function(value: Any, name: str) -> Callable[[float], Any] | None:
    """None, a function of time, or a constant made one (checked where it is called)."""
    if value is None or callable(value):
        return cast("Callable[[float], Any] | None", value)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a function of time t -> value, or a constant, got "
                        f"{checks.shown(value)}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {checks.shown(value)}")
    return lambda t: arr


def _pair(first: Any, second: Any,
          names: tuple[str, str]
          ) -> Tuple[Callable[[float], Any] | None, Callable[[float], Any] | None]:
    f1, f2 = _function(first, names[0]), _function(second, names[1])
    if f2 is not None and f1 is None:
        raise ValueError(f"{names[1]}= needs {names[0]}= as well (the state needs both; "
                         f"{names[1]} alone cannot give {names[0]})")
    return f1, f2


def _mismatch(label: str, t: float, given: np.ndarray, numeric: np.ndarray) -> str | None:
    """Why a given derivative disagrees with the positions', or None.

    They agree within 0.1 % of the larger, plus 1e-5.
    """
    given, numeric = np.atleast_1d(given), np.atleast_1d(numeric)
    tol = 1e-3 * max(np.abs(given).max(), np.abs(numeric).max()) + 1e-5
    if np.abs(given - numeric).max() <= tol:
        return None

    def text(x: Iterable[float]) -> str:
        return "[" + ", ".join(f"{v:.7g}" for v in x) + "]"
    return (f"{label}(t={t:g}) = {text(given)} does not match the derivative of the motion, "
            f"{text(numeric)} (differences)")


class Prescribed(Frame):
    """A frame whose rotation ``R(t)`` and origin ``r_O(t)`` are given as functions of time.

    The angular velocity and acceleration and the origin's velocity and acceleration are the
    user's where given, else computed from the positions by extrapolated central differences
    with error control, the step chosen from the motion (module docstring). Every evaluated
    rotation is checked to be orthonormal with determinant +1.

    Args:
        rotation: ``t -> R`` (3x3, or 2x2 for a rotation about z): local axes as columns, in
            global components.
        origin: ``t -> r_O`` (2- or 3-vector, global, m), default the fixed global origin; a
            spline (``derivative(n)``) gives its own derivatives.
        time_scale: None (default): the differencing step is chosen from the motion, starting
            at 0.1 s. A time (s): the steps start at a tenth of it (for a motion defined only
            near the times of the run).
        orthonormality_tol: tolerance on ``max |R^T R - I|``.
        omega: ``t -> omega`` (3-vector, rad/s, local components: ``R^T dR/dt`` as a vector,
            what :meth:`Frame.omega` returns), or a constant; None: from the rotation.
        alpha: ``t -> d omega / dt`` (3-vector, rad/s^2, local components), or a constant;
            None: the derivative of ``omega`` (numerical) or from the rotation.
        origin_velocity: ``t -> d r_O / dt`` (global components, m/s), or a constant; None:
            from ``origin``.
        origin_acceleration: ``t -> d^2 r_O / dt^2`` (global, m/s^2), or a constant; None:
            the derivative of ``origin_velocity`` or from ``origin``.

    Raises:
        TypeError: ``rotation`` or ``origin`` not callable.
        ValueError: ``time_scale`` not positive, ``R(0)`` not a rotation, a second derivative
            given without the first. Given derivatives that do not match the motion raise at
            the first :meth:`state` where they can be told apart (a ValueError naming both;
            module docstring).
    """

    def __init__(self, rotation: Callable[[float], np.ndarray],
                 origin: Callable[[float], ArrayLike] | None = None,
                 time_scale: float | None = None, orthonormality_tol: float = 1e-10, *,
                 omega: Callable[[float], ArrayLike] | ArrayLike | None = None,
                 alpha: Callable[[float], ArrayLike] | ArrayLike | None = None,
                 origin_velocity: Callable[[float], ArrayLike] | ArrayLike | None = None,
                 origin_acceleration: Callable[[float], ArrayLike] | ArrayLike | None = None
                 ) -> None:
        """Check the motion's functions and R(0) (the class's docstring)."""
        if not callable(rotation):
            raise TypeError(f"rotation must be a callable t -> 3x3 matrix, got {rotation!r}")
        self._rotation = rotation
        self._set_origin(origin, origin_velocity, origin_acceleration)
        self._set_time_scale(time_scale)
        self.tol = float(orthonormality_tol)
        self._omega, self._alpha = _pair(omega, alpha, ("omega", "alpha"))
        self._pending |= {n for n, x in (("omega", omega), ("alpha", alpha)) if x is not None}
        _check_rotation(rotation(0.0), 0.0, self.tol)

    def _set_time_scale(self, time_scale: float | None) -> None:
        self.time_scale = None if time_scale is None else checks.real(time_scale, "time_scale")
        if self.time_scale is not None and self.time_scale <= 0.0:
            raise ValueError(f"time_scale must be positive (s) or None, got "
                             f"{checks.shown(time_scale)}")

    def _set_origin(self, origin: Callable[[float], ArrayLike] | ArrayLike | None,
                    velocity: Callable[[float], ArrayLike] | ArrayLike | None,
                    acceleration: Callable[[float], ArrayLike] | ArrayLike | None) -> None:
        if origin is not None and not callable(origin):
            raise TypeError(f"origin must be a callable t -> vector or None, got {origin!r}")
        self._origin = origin
        #: the user's derivatives not yet compared with the motion where they are not negligible
        self._pending = {n for n, x in (("origin_velocity", velocity),
                                        ("origin_acceleration", acceleration)) if x is not None}
        if origin is not None and velocity is None:  # a spline's own derivatives
            velocity = _spline_derivative(origin, 1)
            if velocity is not None and acceleration is None:
                acceleration = _spline_derivative(origin, 2)
        self._velocity, self._acceleration = _pair(
            velocity, acceleration, ("origin_velocity", "origin_acceleration"))
        if origin is None and self._velocity is not None:
            raise ValueError("origin_velocity= and origin_acceleration= need a moving origin= "
                             "(t -> r_O)")

    def _R(self, t: float) -> np.ndarray:
        return _check_rotation(self._rotation(t), t, self.tol)

    def _r(self, t: float) -> np.ndarray:
        if self._origin is None:
            return np.zeros(3)
        return checks.point3(self._origin(t), f"origin(t={t:g})")

    def _given_vector(self, fn: Callable[[float], Any] | None, name: str, t: float,
                      planar: bool = False) -> np.ndarray:
        assert fn is not None  # (called where the function is given)
        if planar:
            return checks.point3(fn(t), f"{name}(t={t:g})")
        return checks.vector(fn(t), 3, f"{name}(t={t:g})")

    def _rotation_rates(self, t: float, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Omega and alpha (local components) at ``t``."""
        if self._omega is None:
            return self._rotation_rates_from_positions(t, R)
        w = self._given_vector(self._omega, "omega", t)
        if self._alpha is not None:
            return w, self._given_vector(self._alpha, "alpha", t)
        d1, _, _ = derivatives(lambda s: self._given_vector(self._omega, "omega", s), t,
                               "omega", self.time_scale, second=False, given="alpha=")
        return w, d1

    def _rotation_rates_from_positions(self, t: float,
                                       R: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        dR, ddR, h0 = derivatives(lambda s: self._R(s).reshape(-1), t, "rotation",
                                  self.time_scale, given="omega= and alpha=")
        assert ddR is not None  # (second=True)
        dR, ddR = dR.reshape(3, 3), ddR.reshape(3, 3)
        W = R.T @ dR
        # R^T R = I for all t makes R^T dR skew; a symmetric part means R is not a smooth rotation
        sym = 0.5 * (W + W.T)
        if np.abs(sym).max() > 1e-6 * (np.abs(W).max() + 1.0 / (10.0 * h0)):
            raise ValueError(f"rotation is not a smooth family of rotations near t={t:g}: "
                             f"R^T dR/dt has a symmetric part of size {np.abs(sym).max():.2e}")
        return vee(W), vee(dR.T @ dR + R.T @ ddR)

    def _origin_rates(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """The origin's velocity and acceleration (global components) at ``t``."""
        if self._origin is None:
            return np.zeros(3), np.zeros(3)
        if self._velocity is None:
            v, a, _ = derivatives(self._r, t, "origin", self.time_scale,
                                  given="origin_velocity= and origin_acceleration=")
            assert a is not None  # (second=True)
            return v, a
        velocity = self._velocity
        v = checks.point3(velocity(t), f"origin_velocity(t={t:g})")
        if self._acceleration is not None:
            return v, checks.point3(self._acceleration(t), f"origin_acceleration(t={t:g})")
        a, _, _ = derivatives(
            lambda s: checks.point3(velocity(s), f"origin_velocity(t={s:g})"), t,
            "origin_velocity", self.time_scale, second=False, given="origin_acceleration=")
        return v, a

    def _verify(self, t: float, given: dict, numeric: Callable[[], tuple]) -> None:
        """Compare the given derivatives still pending with the motion's; refuse a mismatch.

        ``given`` maps names to values at ``t``, ``numeric()`` gives the motion's values in the
        same order. A derivative leaves the pending set once compared where it is not negligible.
        """
        names = [n for n in given if n in self._pending]
        if not names:
            return
        try:
            found = dict(zip(given, numeric()))
        except ValueError:
            return  # the positions cannot be differenced here: nothing to compare with
        bad = []
        for n in names:
            why = _mismatch(n, t, given[n], found[n])
            if why:
                bad.append(why)
            elif max(np.abs(given[n]).max(), np.abs(found[n]).max()) > CHECKED_ABOVE:
                self._pending.discard(n)
        if bad:
            raise ValueError("; ".join(bad) + ": check signs, axes, units (rad, rad/s) and "
                             "components (omega and alpha in local components)")

    def _verify_origin(self, t: float, v: np.ndarray, a: np.ndarray) -> None:
        if self._pending & {"origin_velocity", "origin_acceleration"}:
            self._verify(t, {"origin_velocity": v, "origin_acceleration": a},
                         lambda: derivatives(self._r, t, "origin", self.time_scale)[:2])

    @cached_state
    def state(self, t: float) -> FrameState:
        """The frame's state at ``t`` (s).

        Args:
            t: time (s).
        """
        t = checks.real(t, "t")
        R = self._R(t)
        omega, alpha = self._rotation_rates(t, R)
        r = self._r(t)
        v, a = self._origin_rates(t)
        self._verify_origin(t, v, a)
        if self._pending & {"omega", "alpha"}:
            self._verify(t, {"omega": omega, "alpha": alpha},
                         lambda: self._rotation_rates_from_positions(t, R))
        return FrameState(t=t, R=R, r_O=r, omega=omega, alpha=alpha, v_O=R.T @ v, a_O=R.T @ a)


class Planar(Prescribed):
    """Rotation about z by ``theta(t)`` with an optional moving origin: the frame of a 2D body.

    Args:
        theta: ``t -> angle`` (rad), a spline of it (``derivative(n)``: its own derivatives
            are used), or a number for a fixed angle.
        origin: ``t -> (x, y)`` origin path (global, m), a spline of it, or a fixed point,
            default (0, 0).
        time_scale: as for :class:`Prescribed` (default None: the differencing step is chosen
            from the motion).
        omega: ``t -> d theta / dt`` (rad/s), or a number; None: from ``theta``.
        alpha: ``t -> d^2 theta / dt^2`` (rad/s^2), or a number; None: the derivative of
            ``omega`` (numerical) or from ``theta``.
        origin_velocity, origin_acceleration: as for :class:`Prescribed`.

    Raises:
        ValueError: ``omega``/``alpha`` with a fixed ``theta``, ``alpha`` without ``omega``,
            origin derivatives with a fixed origin; given derivatives that do not match the
            motion, at the first :meth:`state` where they can be told apart.
    """

    def __init__(self, theta: Callable[[float], float] | float = 0.0,
                 origin: Callable[[float], ArrayLike] | ArrayLike | None = None,
                 time_scale: float | None = None, *,
                 omega: Callable[[float], ArrayLike] | ArrayLike | None = None,
                 alpha: Callable[[float], ArrayLike] | ArrayLike | None = None,
                 origin_velocity: Callable[[float], ArrayLike] | ArrayLike | None = None,
                 origin_acceleration: Callable[[float], ArrayLike] | ArrayLike | None = None
                 ) -> None:
        """Check the angle, the origin and their derivatives (the class's docstring)."""
        given = {n for n, x in (("omega", omega), ("alpha", alpha)) if x is not None}
        if callable(theta):
            th = theta
            if omega is None:  # a spline's own derivatives
                omega = _spline_derivative(theta, 1)
                if omega is not None and alpha is None:
                    alpha = _spline_derivative(theta, 2)
        else:
            if omega is not None or alpha is not None:
                raise ValueError("omega= and alpha= belong to a theta(t) that varies; theta "
                                 f"is the fixed angle {checks.shown(theta)}")
            th0 = checks.real(theta, "theta")
            th = lambda t: th0  # noqa: E731
        self.theta = th
        if origin is None or callable(origin):
            org = origin
        else:
            if origin_velocity is not None or origin_acceleration is not None:
                raise ValueError("origin_velocity= and origin_acceleration= need a moving "
                                 "origin= (t -> r_O); origin is the fixed point "
                                 f"{checks.shown(origin)}")
            p = checks.point3(origin, "origin")
            org = lambda t: p  # noqa: E731
        super().__init__(self._rot, org, time_scale=time_scale,
                         origin_velocity=origin_velocity, origin_acceleration=origin_acceleration)
        self._rate, self._rate2 = _pair(omega, alpha, ("omega", "alpha"))
        self._pending |= given
        self.time_invariant = (not callable(theta)) and (origin is None or not callable(origin))

    def _rot(self, t: float) -> np.ndarray:
        th = checks.real(self.theta(t), f"theta(t={t:g})")
        return rotation_about((0.0, 0.0, 1.0), th)

    def _angle(self, s: float) -> np.ndarray:
        return np.array([checks.real(self.theta(s), f"theta(t={s:g})")])

    def _theta_rates(self, t: float) -> tuple[float, float]:
        if self._rate is None:
            d1, d2, _ = derivatives(self._angle, t, "theta", self.time_scale,
                                    given="omega= and alpha=")
            assert d2 is not None  # (second=True)
            return float(d1[0]), float(d2[0])
        rate = self._rate
        w = checks.real(rate(t), f"omega(t={t:g})")
        if self._rate2 is not None:
            return w, checks.real(self._rate2(t), f"alpha(t={t:g})")
        d1, _, _ = derivatives(lambda s: np.array([checks.real(rate(s), f"omega(t={s:g})")]),
                               t, "omega", self.time_scale, second=False, given="alpha=")
        return w, float(d1[0])

    @cached_state
    def state(self, t: float) -> FrameState:
        """The frame's state at ``t`` (s).

        Args:
            t: time (s).
        """
        t = checks.real(t, "t")
        w, al = self._theta_rates(t)
        th = float(self._angle(t)[0])
        R = rotation_about((0.0, 0.0, 1.0), th)
        r = self._r(t)
        v, a = self._origin_rates(t)
        self._verify_origin(t, v, a)
        if self._pending & {"omega", "alpha"}:
            self._verify(t, {"omega": np.array([w]), "alpha": np.array([al])},
                         lambda: derivatives(self._angle, t, "theta", self.time_scale)[:2])
        return FrameState(t=t, R=R, r_O=r, omega=w * _EZ, alpha=al * _EZ,
                          v_O=R.T @ v, a_O=R.T @ a)
