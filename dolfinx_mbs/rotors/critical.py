"""The critical speed map: the undamped critical speeds of a rotor against the stiffness of its
bearings.

    cmap = model.critical_speed_map(np.logspace(5, 9, 9), n=3)
    cmap.speeds          # (stiffnesses, n): the first n forward critical speeds (rad/s)
    cmap.to_csv("map.csv"); cmap.plot("map.png")

For each stiffness k every bearing of the model is set to kxx = kyy = k, no cross-coupling and
no damping (the table it had is restored afterwards, also after an error); a critical speed is a
speed Omega at which a forward whirl frequency of the undamped gyroscopic problem equals Omega
(the modes that do not whirl backward: a degenerate pair has no definite whirl),
w_j(Omega) = Omega: found by the secant method on w_j(Omega) - Omega from w_j(0), each
evaluation one eigen-solve at that speed (:func:`dolfinx_mbs.campbell.campbell` at one speed,
whose whirl tells the forward modes). Units: N/m, rad/s.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from typing import TYPE_CHECKING, Callable, List, Sequence

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.bodies.attachments import Bearing
from dolfinx_mbs.campbell.sweep import campbell

if TYPE_CHECKING:
    import os

    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["critical_speed_map", "CriticalSpeedMap"]

RPM = 30.0 / math.pi


@dataclasses.dataclass
class CriticalSpeedMap:
    """Undamped forward critical speeds against the bearing stiffness (the same on every rank).

    Attributes:
        stiffnesses: the bearings' stiffness k (N/m).
        speeds: (stiffnesses, n) critical speeds (rad/s; NaN where none was found).
        rank: this process's rank (rank 0 writes files).
    """

    stiffnesses: np.ndarray
    speeds: np.ndarray
    rank: int = dataclasses.field(default=0, repr=False, compare=False)

    def to_csv(self, path: str | os.PathLike) -> None:
        """One row per stiffness: k, then each critical speed in rad/s and rpm (rank 0).

        Args:
            path: the file to write.
        """
        if self.rank != 0:
            return
        n = self.speeds.shape[1]
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["stiffness_n_m"] + [f"critical_{j + 1}_{u}" for j in range(n)
                                            for u in ("rad_s", "rpm")])
            for k, row in zip(self.stiffnesses, self.speeds):
                w.writerow([repr(float(k))] + [repr(float(v * f)) for v in row
                                               for f in (1.0, RPM)])

    def plot(self, path: str | os.PathLike, title: str = "Critical speed map") -> None:
        """Critical speeds (rpm) against the bearing stiffness, log-log (rank 0 draws).

        Args:
            path: the file to write.
            title: the plot's title.
        """
        if self.rank != 0:
            return
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6.5, 5.0))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        for j in range(self.speeds.shape[1]):
            ax.loglog(self.stiffnesses, self.speeds[:, j] * RPM, "o-", ms=4,
                      label=f"critical speed {j + 1}")
        ax.set_xlabel("bearing stiffness (N/m)")
        ax.set_ylabel("critical speed (rpm)")
        ax.set_title(title)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
        fig.savefig(path, dpi=120)


def _bearings(system: SecondOrderSystem) -> List[Bearing]:
    return [a for b in system.bodies for a in getattr(b, "attachments", ())
            if isinstance(a, Bearing)]


def _forward(system: SecondOrderSystem, speed: float, n: int, t: float) -> np.ndarray:
    """The frequencies at ``speed`` (undamped) of the modes that do not whirl backward,
    ascending (a pair that the gyroscopic moments leave degenerate, e.g. a disk's
    translation at mid-span, has no definite whirl: both senses are modes); at rest the
    pairs'."""
    tab = campbell(system, [speed], n=2 * n + 2, t=t, damping=False, engine_orders=(1,))
    f = tab.stationary[0]
    lateral = tab.kind[0] == "lateral"   # torsional and axial modes have no critical speed
    if speed == 0.0:  # each pair once (divergent modes, negative, left out)
        return np.sort(f[(f > 0.0) & lateral])[::2]
    f = np.sort(f[(tab.whirl_stationary[0] != -1) & (f > 0.0) & lateral])
    # a degenerate pair (split by the mesh's asymmetry alone) counts once
    keep = np.r_[True, np.diff(f) > 1e-4 * f[1:]] if f.size else np.zeros(0, bool)
    return f[keep]


def critical_speed_map(system: SecondOrderSystem, stiffnesses: Sequence[float], n: int = 4,
                       t: float = 0.0, tol: float = 1e-6, max_iter: int = 30) -> CriticalSpeedMap:
    """The first ``n`` undamped forward critical speeds at each bearing stiffness (module
    docstring). Collective.

    Args:
        system: a second-order system with bearings (``Model.bearing``) on rotors in
            stationary frames.
        stiffnesses: the bearing stiffnesses k (N/m), positive.
        n: critical speeds per stiffness.
        t: time of the constraints.
        tol: relative tolerance of w_j(Omega) = Omega (or of the secant's last step: the
            eigenvalues carry the solver's and a degenerate pair's scatter).
        max_iter: secant steps per critical speed.

    Raises:
        ValueError: no bearing, a stiffness that is not positive and finite.
    """
    ks = np.asarray(stiffnesses, dtype=float).reshape(-1)
    if ks.size == 0 or not np.all(np.isfinite(ks)) or np.any(ks <= 0.0):
        raise ValueError(f"stiffnesses must be positive finite numbers (N/m), got "
                         f"{stiffnesses!r}")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    bearings = _bearings(system)
    if not bearings:
        raise ValueError("critical_speed_map: the model has no bearing (Model.bearing)")
    tol = checks.positive(tol, "tol")
    out = np.full((ks.size, n), np.nan)
    zero = {k: 0.0 for k in ("kxy", "kyx", "cxx", "cxy", "cyx", "cyy", "czz", "ctilt")}
    try:
        for i, k in enumerate(ks):
            saved = []
            for b in bearings:
                old = b.override(kxx=k, kyy=k, **zero)
                old["__speeds__"] = b.speeds
                b.speeds = None
                saved.append(old)
            system.assembly.refresh()
            system.forget()
            try:
                start = _forward(system, 0.0, n, t)
                for j in range(min(n, len(start))):
                    out[i, j] = _secant(lambda w: _pick(_forward(system, w, n, t), j) - w,
                                        float(start[j]), tol, max_iter)
            finally:
                for b, old in zip(bearings, saved):
                    b.speeds = old.pop("__speeds__")
                    b.restore(old)
    finally:
        system.assembly.refresh()
        system.forget()
    return CriticalSpeedMap(stiffnesses=ks, speeds=out, rank=system.comm.rank)


def _pick(f: np.ndarray, j: int) -> float:
    return float(f[j]) if j < len(f) else math.nan


def _secant(g: Callable[[float], float], w0: float, tol: float, max_iter: int) -> float:
    """A root of g near w0 by the secant method (NaN if none is found)."""
    a, ga = w0, g(w0)
    b = a + ga if math.isfinite(ga) else math.nan
    if not math.isfinite(b) or b <= 0.0:
        return math.nan
    gb = g(b)
    for _ in range(max_iter):
        if not (math.isfinite(ga) and math.isfinite(gb)) or gb == ga:
            return math.nan
        c = b - gb * (b - a) / (gb - ga)
        if c <= 0.0:
            return math.nan
        if abs(c - b) <= tol * abs(c):
            return c
        a, ga, b = b, gb, c
        gb = g(b)
        if abs(gb) <= tol * abs(b):
            return b
    return math.nan
