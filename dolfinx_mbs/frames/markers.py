"""A frame from marker trajectories: the best rigid fit at every sample, then splines.

Markers are points fixed on a body whose global positions are recorded at sample times (motion
capture, a camera, a simulation). With the same points known in the body's axes, each sample
gives the rotation and origin that put the body points closest to the recorded ones (least
squares; Kabsch's solution by scipy's ``Rotation.align_vectors`` in 3D, the closed-form angle
in 2D), and :class:`dolfinx_mbs.frames.Sampled` interpolates or smooths them in time. Import
the names from :mod:`dolfinx_mbs.frames`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Tuple

import numpy as np

from dolfinx_mbs.frames.sampled import Sampled, sample_times

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["MarkerFrame", "from_markers", "fit_rigid", "read_markers"]


def _marker_arrays(times: ArrayLike, markers: ArrayLike,
                   body_points: ArrayLike) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = sample_times(times)
    try:
        m = np.asarray(markers, dtype=float)
        b = np.asarray(body_points, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("markers and body_points must be arrays of numbers") from None
    if m.ndim != 3 or m.shape[2] not in (2, 3):
        raise ValueError(f"markers must have shape (n, k, 3) or (n, k, 2) (n samples, k markers, "
                         f"global coordinates), got {m.shape}")
    n, k, d = m.shape
    if n != t.size:
        raise ValueError(f"markers has {n} samples but times has {t.size}")
    if b.shape != (k, d):
        raise ValueError(f"body_points must have shape ({k}, {d}) (the {k} markers in body "
                         f"axes, as many coordinates as markers), got {b.shape}")
    if not (np.all(np.isfinite(m)) and np.all(np.isfinite(b))):
        raise ValueError("markers and body_points must be finite")
    rank = 0
    if k >= 2:
        sv = np.linalg.svd(b - b.mean(axis=0), compute_uv=False)
        rank = int(np.sum(sv > 1e-9 * sv[0])) if sv[0] > 0.0 else 0
    if rank < d - 1:
        what = "three markers not on one line" if d == 3 else "two distinct markers"
        raise ValueError(f"a rigid motion in {d}D needs at least {what}; body_points has "
                         f"{k} point(s) spanning {rank} dimension(s)")
    return t, m, b


def fit_rigid(markers: ArrayLike,
              body_points: ArrayLike) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The least-squares rigid motion of each sample: ``markers[s, i] ~ r_O[s] + R[s] X_i``.

    Args:
        markers: (n, k, 3) or (n, k, 2) global positions.
        body_points: (k, 3) or (k, 2) the same points in body axes.

    Returns:
        ``(rotations, origins, residual)``: (n, 3, 3) rotations in 3D or (n,) angles about z
        (rad, unwrapped) in 2D; (n, 3) or (n, 2) origins; (n,) the root-mean-square distance
        of the markers from the fitted points (m).
    """
    m = np.asarray(markers, dtype=float)
    b = np.asarray(body_points, dtype=float)
    mc = m.mean(axis=1)                         # (n, d)
    bc = b.mean(axis=0)                         # (d,)
    A = m - mc[:, None, :]
    B = b - bc
    if m.shape[2] == 2:
        cross = np.einsum("i,ni->n", B[:, 0], A[:, :, 1]) - np.einsum("i,ni->n", B[:, 1],
                                                                       A[:, :, 0])
        dot = np.einsum("ij,nij->n", B, A)
        theta = np.unwrap(np.arctan2(cross, dot))
        c, s = np.cos(theta), np.sin(theta)
        R2 = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
        rotations, Rd = theta, R2
    else:
        from scipy.spatial.transform import Rotation

        Rd = np.array([Rotation.align_vectors(a, B)[0].as_matrix() for a in A])
        rotations = Rd
    origins = mc - np.einsum("nij,j->ni", Rd, bc)
    fitted = origins[:, None, :] + np.einsum("nij,kj->nki", Rd, b)
    residual = np.sqrt(np.mean(np.sum((m - fitted) ** 2, axis=2), axis=1))
    return rotations, origins, residual


class MarkerFrame(Sampled):
    """A :class:`Sampled` frame fitted to markers (made by :func:`from_markers`).

    Args:
        times: (n,) strictly increasing sample times (s).
        markers: (n, k, 3) or (n, k, 2) global marker positions (m).
        body_points: (k, 3) or (k, 2) the same points in the body's axes.
        smoothing: as :class:`Sampled` takes it.

    Attributes:
        residual: (n,) root-mean-square distance (m) of the markers from the rigid fit at each
            sample, before smoothing: measurement noise and any deformation of the marker set.
        max_residual: its largest value (m).
        markers, body_points: the data fitted.
    """

    def __init__(self, times: ArrayLike, markers: ArrayLike, body_points: ArrayLike,
                 smoothing: float = 0.0) -> None:
        t, m, b = _marker_arrays(times, markers, body_points)
        rotations, origins, residual = fit_rigid(m, b)
        super().__init__(t, rotations=rotations, origins=origins, smoothing=smoothing)
        self.markers, self.body_points = m, b
        self.residual = residual
        self.max_residual = float(residual.max())

    def smoothed_residual(self) -> np.ndarray:
        """(n,) root-mean-square distance (m) of the markers from the body points moved by
        this frame (after smoothing): about the noise level for a well chosen ``smoothing``,
        larger when the smoothing also removes part of the motion."""
        d = self.body_points.shape[1]
        out = np.empty(self.times.size)
        X = np.zeros((self.body_points.shape[0], 3))
        X[:, :d] = self.body_points
        for s, t in enumerate(self.times):
            x = self.state(t).to_global(X)[:, :d]
            out[s] = np.sqrt(np.mean(np.sum((self.markers[s] - x) ** 2, axis=1)))
        return out


def from_markers(times: ArrayLike, markers: ArrayLike, body_points: ArrayLike,
                 smoothing: float = 0.0) -> MarkerFrame:
    """The frame of a body from the recorded positions of markers fixed on it.

    At each sample the rotation and origin best fitting the markers (least squares) are found,
    then interpolated or smoothed in time as in :class:`Sampled`, whose ``smoothing``
    argument this is (0: through the fitted samples; tau > 0 (s): a low-pass of about
    1 / (1 + (w tau)^4), see :class:`Sampled` for its effect on omega, alpha and a_O under
    noise; the noise of the fitted angle is about that of the markers over the markers'
    spread from their centroid, ``sigma / sqrt(sum |X_i - X_c|^2)``). For example (seed 003's
    example b, synthetic, in ``tests/frames/test_sampled_frames.py``): three markers 0.4 m apart at
    1 kHz with 0.1 mm noise give alpha within 3 % and a_O within 5 % of their peaks with
    tau = 10 ms; interpolated (tau = 0) the same noise puts alpha off by 150 times its peak.

    Args:
        times: (n,) strictly increasing sample times (s).
        markers: (n, k, 3) global positions (m) of k >= 3 markers not on one line, or
            (n, k, 2) for a planar motion (k >= 2 distinct markers; a frame rotating about z).
        body_points: (k, 3) or (k, 2) the same points in the body's axes (the mesh's
            coordinates).
        smoothing: see above.

    Returns:
        a :class:`MarkerFrame` with the fit residual per sample (``residual``,
        ``max_residual``).
    """
    return MarkerFrame(times, markers, body_points, smoothing=smoothing)


def read_markers(path: str | os.PathLike, dim: int = 3, scale: float = 1.0,
                 delimiter: str = ",") -> Tuple[np.ndarray, np.ndarray]:
    """Read marker trajectories from a CSV file.

    Layout: one row per sample, the time first, then each marker's coordinates in turn::

        t, x1, y1, z1, x2, y2, z2, ...        (dim = 3)
        t, x1, y1, x2, y2, ...                (dim = 2)

    Lines starting with ``#`` and a first line that is not all numbers (a header) are
    skipped. ``scale`` multiplies the coordinates (e.g. 1e-3 for millimetres); times stay as
    they are (s).

    Args:
        path: the CSV file.
        dim: 2 or 3 coordinates per marker.
        scale: a factor on the coordinates (e.g. 1e-3 for mm).
        delimiter: the CSV delimiter.

    Returns:
        ``(times, markers)``: (n,) and (n, k, dim), ready for :func:`from_markers`.
    """
    if dim not in (2, 3):
        raise ValueError(f"dim must be 2 or 3, got {dim!r}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"marker file {str(path)!r} does not exist")
    with open(path) as fh:
        lines = [ln for ln in fh if ln.strip() and not ln.lstrip().startswith("#")]
    if lines:
        try:
            [float(x) for x in lines[0].split(delimiter)]
        except ValueError:
            lines = lines[1:]       # a header
    try:
        data = np.loadtxt(lines, delimiter=delimiter, ndmin=2)
    except ValueError as e:
        raise ValueError(f"{path}: not a table of numbers separated by {delimiter!r}: {e}") \
            from None
    if data.shape[0] == 0 or (data.shape[1] - 1) % dim or data.shape[1] < 1 + dim:
        raise ValueError(f"{path}: expected columns t, then {dim} coordinates per marker "
                         f"(1 + {dim} k columns), got {data.shape[1]} columns in "
                         f"{data.shape[0]} rows")
    times = data[:, 0]
    markers = scale * data[:, 1:].reshape(data.shape[0], -1, dim)
    return times, markers
