"""The result of a Campbell sweep (:func:`dolfinx_mbs.campbell.campbell`): the table of
branches against the spin speed, its CSV file and its plot, and the crossings of its branches
with the engine-order lines k Omega (:class:`CriticalSpeed`). The quantities (whirl, whirl index,
stationary frame, sign conventions) are defined in :mod:`dolfinx_mbs.campbell`. Units: rad/s
for speeds and frequencies, except where a name or label says rpm or Hz.

**Critical speeds** are the speeds where a stationary-frame branch of a *lateral* mode crosses
an engine-order line k Omega, by linear interpolation between sweep points (its error is second
order in the speed step; for an axisymmetric rotor the stationary branches are nearly straight
lines). An unbalance or a misalignment excites the shaft's line across its axis: torsional and
axial modes (:mod:`dolfinx_mbs.campbell.shapes`) cross the lines without a resonance of that
excitation and are not counted (:meth:`CampbellTable.crossings` with ``kinds=None`` counts
every branch).

**Columns are branches, not frequency order.** Column j follows one mode from the first speed
to the last (ordered by frequency at the first speed only); branches of different whirl cross,
so at later speeds the columns need not be in ascending frequency:
:meth:`CampbellTable.in_frequency_order` gives each speed's order.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from typing import TYPE_CHECKING, List, Sequence, Tuple

import numpy as np

if TYPE_CHECKING:
    import os

__all__ = ["CampbellTable", "CriticalSpeed"]

#: rad/s -> rpm
RPM = 30.0 / math.pi


@dataclasses.dataclass(frozen=True)
class CriticalSpeed:
    """A crossing of a branch with an engine-order line.

    Attributes:
        mode: branch index (column of the table).
        order: engine order k.
        speed: spin speed Omega at the crossing (rad/s).
        frequency: k abs(Omega) (rad/s).
        whirl: +1 forward, -1 backward, 0 undetermined (the branch's whirl on both sides of
            the crossing, in the frame of the crossing; 0 if it differs).
        kind: the branch's kind at the crossing ("lateral", "torsional", "axial", "other";
            :mod:`dolfinx_mbs.campbell.shapes`).
    """

    mode: int
    order: int
    speed: float
    frequency: float
    whirl: int
    kind: str = "lateral"


@dataclasses.dataclass
class CampbellTable:
    """The result of a Campbell sweep; arrays of shape (number of speeds, n), one column per
    tracked branch (ordered by frequency at the first speed, then following its mode: see
    the module docstring), the same on every rank.

    Attributes:
        speeds: spin speeds Omega (rad/s).
        eigenvalues: lambda with Im(lambda) >= 0 (1/s), rotating frame.
        frequencies: signed rotating-frame frequencies (rad/s): Im(lambda), or -s for a
            divergent mode.
        growth: Re(lambda) (1/s): negative decay, positive instability.
        whirl: orbit sense in the rotating frame about the spin: +1 forward, -1 backward,
            0 none (torsional and axial modes) or undetermined (a straight-line orbit,
            abs(whirl index) at most ``whirl_tol``; every mode at rest).
        whirl_index: the mass-weighted orbit sense h in [-1, 1]
            (:mod:`dolfinx_mbs.campbell`).
        stationary: stationary-frame frequencies (rad/s; axisymmetric rotors).
        whirl_stationary: whirl seen from the ground: +1 forward, -1 backward, 0 none.
        stable: False for divergence or flutter, Re(lambda) > stability_tol abs(lambda).
        mac: MAC of each branch with its previous speed (NaN at the first speed).
        engine_orders: the engine orders k of :attr:`critical_speeds`.
        critical_speeds: crossings of stationary-frame branches with the lines k Omega.
        rank: this process's rank in the model's communicator (rank 0 writes the files).
        kind: what each mode does to the spin axis: "lateral" (bending, whirl), "torsional",
            "axial", or "other" (a disk's or blade's own modes):
            :mod:`dolfinx_mbs.campbell.shapes`.
        fractions: (speeds, n, 3) the lateral, torsional and axial fractions of each mode's
            energy that name its kind.
    """

    speeds: np.ndarray
    eigenvalues: np.ndarray
    frequencies: np.ndarray
    growth: np.ndarray
    whirl: np.ndarray
    whirl_index: np.ndarray
    stationary: np.ndarray
    whirl_stationary: np.ndarray
    stable: np.ndarray
    mac: np.ndarray
    engine_orders: Tuple[int, ...]
    critical_speeds: List[CriticalSpeed]
    rank: int = dataclasses.field(default=0, repr=False, compare=False)
    kind: np.ndarray | None = None
    fractions: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.kind is None:
            self.kind = np.full(self.frequencies.shape, "lateral", dtype=object).astype(str)
        if self.fractions is None:
            self.fractions = np.full(self.frequencies.shape + (3,), np.nan)

    @property
    def n_modes(self) -> int:
        """The number of modes per speed (the columns of :attr:`frequencies`)."""
        return int(self.frequencies.shape[1])

    @property
    def log_dec(self) -> np.ndarray:
        """The logarithmic decrement of each mode, -2 pi Re(lambda) / Im(lambda): the log of
        the ratio of successive amplitudes (positive: decaying; negative: unstable); inf for
        a mode without oscillation (a real eigenvalue)."""
        lam = self.eigenvalues
        im = np.abs(lam.imag)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = -2.0 * math.pi * lam.real / im
        return np.where(im > 0.0, out, np.where(lam.real > 0.0, -np.inf, np.inf))

    def in_frequency_order(self) -> np.ndarray:
        """Each speed's columns in ascending frequency: (speeds, n) indices, so that
        ``np.take_along_axis(table.frequencies, table.in_frequency_order(), axis=1)`` is
        sorted along each row (the columns themselves follow branches).

        Returns:
            The indices.
        """
        return np.argsort(self.frequencies, axis=1, kind="stable")

    def crossings(self, frame: str = "stationary", orders: Sequence[int] | None = None,
                  kinds: Sequence[str] | None = ("lateral",)) -> List[CriticalSpeed]:
        """Crossings of the branches' frequencies in ``frame`` ("stationary" or "rotating")
        with the engine-order lines k abs(Omega), linearly interpolated between speeds.

        In the stationary frame these are the critical speeds; in the rotating frame the
        resonances of rotating-frame excitation at k Omega (e.g. blades passing stator vanes).
        Divergent samples (negative frequency) are skipped, and samples whose mode is not of
        one of ``kinds``.

        Args:
            frame: ``"stationary"`` or ``"rotating"``.
            orders: the engine orders (None: the table's).
            kinds: the kinds of mode counted (default: lateral modes, what an unbalance
                excites); None: every mode.

        Returns:
            The crossings.
        """
        if frame not in ("stationary", "rotating"):
            raise ValueError(f"frame must be 'stationary' or 'rotating', got {frame!r}")
        known = ("lateral", "torsional", "axial", "other")
        if kinds is not None:
            kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
            if any(k not in known for k in kinds):
                raise ValueError(f"kinds must name kinds of {known} (or be None), got "
                                 f"{kinds!r}")
        freq = self.stationary if frame == "stationary" else self.frequencies
        whirl = self.whirl_stationary if frame == "stationary" else self.whirl
        orders = self.engine_orders if orders is None else tuple(int(k) for k in orders)
        W = self.speeds
        kind = np.asarray(self.kind)
        out = []
        for j in range(self.n_modes):
            f = freq[:, j]
            valid = np.isfinite(f) & (f >= 0.0)
            if kinds is not None:
                valid &= np.isin(kind[:, j], kinds)
            for k in orders:
                g = f - k * np.abs(W)
                for i in range(len(W)):
                    if valid[i] and g[i] == 0.0:
                        out.append(CriticalSpeed(j, k, float(W[i]), float(k * abs(W[i])),
                                                 int(whirl[i, j]), str(kind[i, j])))
                    if i + 1 < len(W) and valid[i] and valid[i + 1] and g[i] * g[i + 1] < 0.0:
                        s = W[i] + (W[i + 1] - W[i]) * g[i] / (g[i] - g[i + 1])
                        wh = int(whirl[i, j]) if whirl[i, j] == whirl[i + 1, j] else 0
                        out.append(CriticalSpeed(j, k, float(s), float(k * abs(s)), wh,
                                                 str(kind[i, j])))
        return sorted(out, key=lambda c: (abs(c.speed), c.order, c.mode))

    # -- output -------------------------------------------------------------------------------
    def to_csv(self, path: str | os.PathLike) -> None:
        """Write the table, one row per speed and branch. Rank 0 of the model's communicator
        writes; the call is not collective (other ranks return at once).

        Columns: speed_rad_s, speed_rpm, mode, frequency_rad_s, frequency_hz, growth_1_s,
        whirl, whirl_index, stationary_rad_s, stationary_hz, whirl_stationary, stable, mac,
        log_dec, kind, lateral, torsional, axial (the last three: the kind's fractions).
        ``mode`` is the branch (column), not the rank in frequency at that speed.

        Args:
            path: the file to write.
        """
        if self.rank == 0:
            with open(path, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(["speed_rad_s", "speed_rpm", "mode", "frequency_rad_s",
                            "frequency_hz", "growth_1_s", "whirl", "whirl_index",
                            "stationary_rad_s", "stationary_hz", "whirl_stationary", "stable",
                            "mac", "log_dec", "kind", "lateral", "torsional", "axial"])
                ld = self.log_dec
                kind, fr = np.asarray(self.kind), np.asarray(self.fractions)
                for i, s in enumerate(self.speeds):
                    for j in range(self.n_modes):
                        w.writerow([repr(float(s)), repr(float(s * RPM)), j,
                                    repr(float(self.frequencies[i, j])),
                                    repr(float(self.frequencies[i, j] / (2 * math.pi))),
                                    repr(float(self.growth[i, j])), int(self.whirl[i, j]),
                                    repr(float(self.whirl_index[i, j])),
                                    repr(float(self.stationary[i, j])),
                                    repr(float(self.stationary[i, j] / (2 * math.pi))),
                                    int(self.whirl_stationary[i, j]),
                                    int(bool(self.stable[i, j])),
                                    repr(float(self.mac[i, j])), repr(float(ld[i, j])),
                                    str(kind[i, j])]
                                   + [repr(float(v)) for v in fr[i, j]])

    def plot(self, path: str | os.PathLike, frame: str = "stationary",
             title: str | None = None) -> None:
        """Draw the Campbell diagram to ``path`` (matplotlib, Agg; rank 0 draws, as for
        :meth:`to_csv`):
        frequencies in Hz against speed in rpm, in the ``frame`` "stationary" (default) or
        "rotating", with the engine-order lines, forward (^) and backward (v) whirl markers,
        torsional (open square) and axial (open diamond) modes, unstable points (red x) and,
        in the stationary frame, the critical speeds (o).

        Args:
            path: the file to write.
            frame: ``"stationary"`` or ``"rotating"``.
            title: the plot's title (None: a default).
        """
        if frame not in ("stationary", "rotating"):
            raise ValueError(f"frame must be 'stationary' or 'rotating', got {frame!r}")
        if self.rank == 0:
            import matplotlib
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
            from matplotlib.lines import Line2D

            freq = self.stationary if frame == "stationary" else self.frequencies
            whirl = self.whirl_stationary if frame == "stationary" else self.whirl
            x = self.speeds * RPM
            hz = freq / (2 * math.pi)
            fig = Figure(figsize=(7.0, 5.0))
            FigureCanvasAgg(fig)
            ax = fig.add_subplot(1, 1, 1)
            top = np.nanmax(np.abs(hz)) if np.isfinite(hz).any() else 1.0
            for k in self.engine_orders:
                ax.plot(x, k * np.abs(self.speeds) / (2 * math.pi), "k--", lw=0.8)
                xe = x[-1] if abs(x[-1]) >= abs(x[0]) else x[0]
                ye = k * abs(self.speeds[-1] if abs(x[-1]) >= abs(x[0]) else self.speeds[0])
                if ye / (2 * math.pi) <= 1.05 * top:
                    ax.annotate(f"{k}x", (xe, ye / (2 * math.pi)), fontsize=8)
            # no red among the branches: red marks instability
            colors = [c for i, c in enumerate(matplotlib.colormaps["tab10"].colors) if i != 3]
            kind = np.asarray(self.kind)
            for j in range(self.n_modes):
                c = colors[j % len(colors)]
                ax.plot(x, hz[:, j], "-", lw=1.0, color=c)
                for sense, marker in ((1, "^"), (-1, "v"), (0, ".")):
                    sel = (whirl[:, j] == sense) & self.stable[:, j]
                    if sense == 0:   # torsional and axial modes marked as such
                        for name, m in (("torsional", "s"), ("axial", "D")):
                            its = sel & (kind[:, j] == name)
                            ax.plot(x[its], hz[its, j], m, color=c, ms=4, ls="none",
                                    mfc="none")
                            sel = sel & ~its
                    ax.plot(x[sel], hz[sel, j], marker, color=c, ms=4, ls="none")
                bad = ~self.stable[:, j]
                ax.plot(x[bad], hz[bad, j], "x", color="red", ms=6, ls="none")
            if frame == "stationary":
                for cs in self.critical_speeds:
                    ax.plot(cs.speed * RPM, cs.frequency / (2 * math.pi), "o", mfc="none",
                            mec="k", ms=9)
            ax.set_xlabel("spin speed (rpm)")
            ax.set_ylabel(f"frequency, {frame} frame (Hz)")
            ax.set_ylim(min(0.0, np.nanmin(hz) * 1.05), 1.05 * top)
            ax.set_title(title or "Campbell diagram")
            handles = [Line2D([], [], marker="^", ls="none", color="k", label="forward whirl"),
                       Line2D([], [], marker="v", ls="none", color="k", label="backward whirl"),
                       Line2D([], [], marker="s", ls="none", mfc="none", color="k",
                              label="torsional"),
                       Line2D([], [], marker="D", ls="none", mfc="none", color="k",
                              label="axial"),
                       Line2D([], [], marker="x", ls="none", color="red", label="unstable"),
                       Line2D([], [], ls="--", color="k", label="engine orders")]
            if frame == "stationary":
                handles.append(Line2D([], [], marker="o", ls="none", mfc="none", color="k",
                                      label="critical speed"))
            ax.legend(handles=handles, fontsize=8, loc="best")
            ax.grid(alpha=0.3)
            fig.savefig(path, dpi=120)
