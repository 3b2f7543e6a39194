"""Frames whose motion is known at sample times: rotations and origins interpolated or smoothed
by splines, with the angular velocity and acceleration of the spline.

:class:`Sampled` takes the rotation ``R_k`` and origin ``r_O,k`` at times ``t_k`` (measured, or
from another program); :func:`dolfinx_mbs.frames.from_markers` makes one from marker
trajectories. Import both from :mod:`dolfinx_mbs.frames`.

Rotations are interpolated on SO(3) through unit quaternions: the quaternions of the samples,
signs chosen so that neighbours are close, are spline functions of time p(t) (each of the four
components; scipy's ``make_interp_spline`` of degree 5, or ``make_smoothing_spline``) and
R(t) is the rotation of p / |p|. The local angular velocity and acceleration of that curve are
exact (``docs/theory.md`` section 1, Hamilton's quaternion product, vector part ``vec``):

    omega = 2 vec(p* p') / |p|^2,
    alpha = 2 vec(p* p'') / |p|^2 - 4 (p . p') vec(p* p') / |p|^4.

(scipy's ``RotationSpline`` gives the same interpolation in the interior, but fixes the end
rates by chords: at 1 kHz its alpha at the first and last samples was wrong by ~100 %, the
quintic quaternion spline by 1e-7.) A rotation about z only (planar motion) is interpolated
as its angle instead, so that the state stays exactly planar for a 2D body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Tuple, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.base import Frame, FrameState
from dolfinx_mbs.frames.prescribed import cached_state

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["Sampled"]

#: degree of the interpolating splines (the smoothing splines are cubic)
DEGREE = 5
MIN_SAMPLES = DEGREE + 1
_EZ = np.array([0.0, 0.0, 1.0])


def sample_times(times: ArrayLike) -> np.ndarray:
    """The sample times as a finite, strictly increasing float array of at least
    :data:`MIN_SAMPLES` entries (``ValueError`` naming ``times`` otherwise).

    Args:
        times: the times (s).

    Returns:
        The times.
    """
    try:
        t = np.asarray(times, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"times must be a 1D array of numbers, got "
                         f"{checks.shown(times)}") from None
    if t.ndim != 1 or t.size < MIN_SAMPLES:
        raise ValueError(f"times must be a 1D array of at least {MIN_SAMPLES} sample times, got "
                         f"shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("times must be finite")
    bad = np.flatnonzero(np.diff(t) <= 0.0)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"times must be strictly increasing: times[{i}] = {checks.shown(t[i])} >= "
                         f"times[{i + 1}] = {checks.shown(t[i + 1])}")
    return t


class _Splines:
    """Splines of the columns of ``y`` (n, m) over the sample times, with derivatives.

    ``smoothing`` 0: the interpolating spline of degree :data:`DEGREE`; ``smoothing`` tau > 0:
    scipy's cubic smoothing spline with the penalty ``lam = tau^4 / h`` (h the mean spacing), the
    low-pass 1 / (1 + (omega tau)^4) explained in :class:`Sampled`.
    """

    def __init__(self, t: np.ndarray, y: np.ndarray, smoothing: float) -> None:
        from scipy.interpolate import make_interp_spline, make_smoothing_spline

        self.joint = smoothing == 0.0     # one spline of all columns, or one per column
        if self.joint:
            self.parts = [make_interp_spline(t, y, k=DEGREE, axis=0)]
        else:
            h = (t[-1] - t[0]) / (t.size - 1)
            lam = smoothing**4 / h
            self.parts = [make_smoothing_spline(t, y[:, j], lam=lam) for j in range(y.shape[1])]

    def __call__(self, t: float, nu: int = 0) -> np.ndarray:
        if self.joint:
            return np.asarray(self.parts[0](t, nu), dtype=float)
        return np.array([float(s(t, nu)) for s in self.parts])


def _qvec_conj_mul(p: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Vector part of conj(p) * d (Hamilton product; quaternions scalar-last as scipy's)."""
    return cast(np.ndarray, p[3] * d[:3] - d[3] * p[:3] - np.cross(p[:3], d[:3]))


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    """The rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _as_rotations(rotations: ArrayLike, n: int) -> Tuple[str, np.ndarray]:
    """``("angle", theta (n,))`` for rotations about z, else ``("quat", q (n, 4))``."""
    try:
        a = np.asarray(rotations, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("rotations must be an array of numbers: (n, 3, 3) or (n, 2, 2) "
                         "matrices, (n, 4) quaternions or (n,) angles about z") from None
    if a.shape not in ((n,), (n, 2, 2), (n, 3, 3), (n, 4)):
        raise ValueError(f"rotations must have shape ({n}, 3, 3), ({n}, 2, 2), ({n}, 4) or ({n},) "
                         f"for {n} sample times, got {a.shape}")
    bad = ~np.all(np.isfinite(a.reshape(n, -1)), axis=1)
    if bad.any():
        raise ValueError(f"rotations[{int(np.flatnonzero(bad)[0])}] is not finite")
    if a.ndim == 1:
        return "angle", a.copy()
    if a.shape[1:] == (4,):
        norm = np.linalg.norm(a, axis=1)
        if np.any(norm < 1e-12):
            k = int(np.argmin(norm))
            raise ValueError(f"rotations[{k}] is a zero quaternion")
        return _aligned("quat", a / norm[:, None])
    if a.shape[1:] == (2, 2):
        R3 = np.zeros((n, 3, 3))
        R3[:, :2, :2] = a
        R3[:, 2, 2] = 1.0
        a = R3
    dev = np.abs(np.einsum("kji,kjl->kil", a, a) - np.eye(3)).max(axis=(1, 2))
    if np.any(dev > 1e-6):
        k = int(np.argmax(dev))
        raise ValueError(f"rotations[{k}] is not orthonormal: max |R^T R - I| = {dev[k]:.2e} "
                         f"> 1e-6")
    det = np.linalg.det(a)
    if np.any(det < 0.0):
        k = int(np.flatnonzero(det < 0.0)[0])
        raise ValueError(f"rotations[{k}] has determinant -1: a reflection, not a rotation")
    off = np.abs(a[:, 2, :2]).max() + np.abs(a[:, :2, 2]).max()
    if off <= 1e-12:  # every sample a rotation about z: keep the motion exactly planar
        return _aligned("angle", np.arctan2(a[:, 1, 0], a[:, 0, 0]))
    from scipy.spatial.transform import Rotation

    return _aligned("quat", Rotation.from_matrix(a).as_quat())


def _aligned(kind: str, v: np.ndarray) -> Tuple[str, np.ndarray]:
    """Angles unwrapped, quaternion signs made consistent; neighbours farther apart than
    90 degrees are refused (the sampling cannot tell which way the body turned)."""
    if kind == "angle":
        step = np.abs(np.angle(np.exp(1j * np.diff(v))))
        v = np.unwrap(v)
    else:
        dots = np.einsum("ki,ki->k", v[1:], v[:-1])
        v = v * np.concatenate(([1.0], np.cumprod(np.where(dots < 0.0, -1.0, 1.0))))[:, None]
        step = 2.0 * np.arccos(np.clip(np.abs(dots), 0.0, 1.0))
    if step.size and step.max() > 0.5 * np.pi:
        k = int(np.argmax(step))
        raise ValueError(f"rotations[{k}] and rotations[{k + 1}] differ by "
                         f"{np.degrees(step[k]):.0f} degrees: sample the rotation more densely "
                         "(less than 90 degrees between samples)")
    return kind, v


class Sampled(Frame):
    """A frame whose rotation and origin are known at sample times, between them a spline.

    Args:
        times: (n,) strictly increasing sample times (s), n >= 6.
        rotations: the rotation at each time, local axes as columns in global components:
            (n, 3, 3) matrices, (n, 2, 2) matrices of a rotation about z, (n, 4) unit
            quaternions (x, y, z, w: scalar last, as scipy's ``Rotation``) or (n,) angles about
            z (rad). Default: no rotation. Matrices must be orthonormal to 1e-6 with
            determinant +1; neighbouring samples must differ by less than 90 degrees.
        origins: (n, 3) or (n, 2) origin positions r_O (m), global; default the fixed origin.
        smoothing: 0 (default): splines through the samples (degree 5; exact data give
            omega and alpha to the sampling's truncation error, ~1e-11 and ~1e-7 relative at
            1 kHz for a 20 rad/s spin with nutation). tau > 0 (s): cubic smoothing splines
            (scipy ``make_smoothing_spline``, penalty lam = tau^4 / h, h the mean sample
            spacing), which act as the low-pass filter 1 / (1 + (w tau)^4): a component of the
            motion at angular frequency w is kept to within (w tau)^4, half of it at w = 1/tau,
            noise above is removed. Applied to the quaternion (or angle) and to the origin.
            White noise of standard deviation s per sample leaves about
            0.30 s sqrt(h) tau^(-3/2) in the rates and 0.30 s sqrt(h) tau^(-5/2) in the
            accelerations (s in rad for omega and alpha, s in m for v_O and a_O), against
            ~s / h^2 for the second derivative of an interpolant: choose tau a few times
            shorter than the fastest period of the motion. Near the first and last samples the
            smoothing spline's second derivative is pulled towards zero (its natural end
            conditions), an error decaying like exp(-d / (1.4 tau)) with the distance d from
            the end (measured: 1 % of alpha at d = 5 tau): sample some 8 tau beyond the
            interval to be simulated.

    ``state(t)`` is defined for ``times[0] <= t <= times[-1]``; outside it raises a ValueError.
    """

    calls_user_code = False  # splines of given samples
    time_invariant = False

    def __init__(self, times: ArrayLike, rotations: ArrayLike | None = None,
                 origins: ArrayLike | None = None, smoothing: float = 0.0) -> None:
        self.times = sample_times(times)
        n = self.times.size
        self.smoothing = checks.real(smoothing, "smoothing")
        if self.smoothing < 0.0:
            raise ValueError(f"smoothing must be >= 0 (a time, s), got {checks.shown(smoothing)}")
        if rotations is None:
            self.kind, data = "angle", np.zeros(n)
        else:
            self.kind, data = _as_rotations(rotations, n)
        self.origins = self._as_origins(origins, n)
        cols = data[:, None] if self.kind == "angle" else data
        self._samples = cols
        self._rot = _Splines(self.times, cols, self.smoothing)
        self._org = _Splines(self.times, self.origins, self.smoothing)
        self.origin_accelerates = bool(np.ptp(self.origins, axis=0).max() > 0.0)

    @staticmethod
    def _as_origins(origins: ArrayLike | None, n: int) -> np.ndarray:
        if origins is None:
            return np.zeros((n, 3))
        try:
            r = np.asarray(origins, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("origins must be an (n, 3) or (n, 2) array of numbers") from None
        if r.shape not in ((n, 2), (n, 3)):
            raise ValueError(f"origins must have shape ({n}, 3) or ({n}, 2) for {n} sample "
                             f"times, got {r.shape}")
        if not np.all(np.isfinite(r)):
            raise ValueError("origins must be finite")
        if r.shape[1] == 2:
            r = np.hstack([r, np.zeros((n, 1))])
        return r

    @property
    def t_range(self) -> tuple[float, float]:
        """The first and last sample times (s)."""
        return float(self.times[0]), float(self.times[-1])

    def _check_time(self, t: float) -> float:
        t = checks.real(t, "t")
        t0, t1 = self.t_range
        slack = 1e-9 * (t1 - t0)
        if not t0 - slack <= t <= t1 + slack:
            raise ValueError(f"t={t!r} is outside the sampled times [{t0:g}, {t1:g}] s of this "
                             "frame: a sampled motion is not extrapolated")
        return min(max(t, t0), t1)

    def _rotation_jet(self, t: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.kind == "angle":
            th, thd, thdd = (float(self._rot(t, nu)[0]) for nu in range(3))
            c, s = np.cos(th), np.sin(th)
            R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            return R, thd * _EZ, thdd * _EZ
        p, dp, ddp = (self._rot(t, nu) for nu in range(3))
        n2 = float(p @ p)
        w_p = _qvec_conj_mul(p, dp)
        omega = 2.0 * w_p / n2
        alpha = 2.0 * _qvec_conj_mul(p, ddp) / n2 - 4.0 * float(p @ dp) * w_p / n2**2
        return _quat_matrix(p / np.sqrt(n2)), omega, alpha

    def motion_key(self) -> tuple:
        """Equal for equal samples and smoothing (see ``frames.equal_motion``)."""
        def data(a: np.ndarray) -> bytes:
            return np.ascontiguousarray(a, dtype=float).tobytes() + bytes(str(a.shape), "ascii")
        return ("Sampled", self.kind, self.smoothing, data(self.times),
                data(self._samples + 0.0), data(self.origins + 0.0))

    @cached_state
    def state(self, t: float) -> FrameState:
        """The frame's state at ``t`` (s), within the sampled times.

        Args:
            t: time (s).

        Returns:
            The state.
        """
        tc = self._check_time(t)
        R, omega, alpha = self._rotation_jet(tc)
        r, dr, ddr = (self._org(tc, nu) for nu in range(3))
        return FrameState(t=float(t), R=R, r_O=r, omega=omega, alpha=alpha, v_O=R.T @ dr,
                          a_O=R.T @ ddr)

    def __repr__(self) -> str:
        t0, t1 = self.t_range
        return (f"{type(self).__name__}({self.times.size} samples on [{t0:g}, {t1:g}] s, "
                f"{'planar' if self.kind == 'angle' else '3D'}, smoothing={self.smoothing:g})")
