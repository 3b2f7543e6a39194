"""Campbell diagrams of a cyclic model per harmonic index (nodal diameter), and the
interference of its modes with engine orders.

    table = model.campbell(speeds, n=6, harmonics="all")
    table.frequencies[i, k, j]   # rad/s, rotating frame: speed i, harmonic index table.harmonic[k]
    table.travelling             # +1 forward, -1 backward travelling wave, 0 standing
    table.interferences((1, 2, 3))
    mbs.plot.interference(table, "zzenf.png", engine_orders=range(1, 5))

One sweep (:func:`dolfinx_mbs.campbell.campbell`) per harmonic index k, on the system of that
index (:meth:`dolfinx_mbs.Model.harmonic_system`, ``docs/theory.md`` section 10). For
0 < k < N/2 each whole-wheel pair is there: at rest two equal frequencies (standing waves);
spinning, the Coriolis terms split them into a wave travelling forward (along the spin, in the
rotating frame) and one travelling backward, told apart by the mass-weighted index of
:class:`dolfinx_mbs.cyclic.TravellingWaves` (the sweep's ``whirl``). For k = 0 and N/2 the modes
are standing (``travelling`` 0).

**Stationary frame.** A wave of k nodal diameters and rotating-frame frequency w travelling in
the direction d (+1 forward) is seen from the ground at abs(w + d k Omega); a backward wave whose
frequency meets k Omega stands still in the ground (the disk's critical speed).

**Engine orders.** A force pattern of E periods per turn fixed in the ground (E upstream vanes,
struts) is, in the rotating frame, a wave of E periods at the frequency E Omega; sampled by N
sectors it excites the harmonic index k with k = E mod N or k = N - (E mod N) (k = +/-E mod N).
Its resonances are the crossings of that index's branches with the line E Omega: the
interference (ZZENF, SAFE) diagram draws them against k (:func:`dolfinx_mbs.plot.interference`).
Units: rad/s, except where a name or label says rpm or Hz.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from typing import TYPE_CHECKING, Any, Callable, List, Mapping, Sequence, Union

import numpy as np

from dolfinx_mbs.campbell.sweep import campbell
from dolfinx_mbs.campbell.table import RPM, CampbellTable

if TYPE_CHECKING:
    import os

    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["CyclicCampbellTable", "Interference", "excited_harmonic", "harmonic_campbell"]


def excited_harmonic(order: int, n_sectors: int) -> int:
    """The harmonic index an engine order excites: E mod N folded into 0 ... floor(N/2).

    Args:
        order: the engine order E (>= 0).
        n_sectors: N.

    Returns:
        k with k = +/-E (mod N).
    """
    k = int(order) % int(n_sectors)
    return min(k, n_sectors - k)


@dataclasses.dataclass(frozen=True)
class Interference:
    """A crossing of a branch of harmonic index k with the line E Omega of an engine order
    that excites k (rotating frame).

    Attributes:
        order: the engine order E.
        harmonic: the harmonic index k (k = +/-E mod N).
        mode: the branch (column) of that index.
        speed: the spin speed at the crossing (rad/s).
        frequency: E abs(Omega) (rad/s).
        travelling: +1 forward, -1 backward, 0 standing (the same on both sides of the
            crossing, or on the side that is not at rest; 0 if they differ).
    """

    order: int
    harmonic: int
    mode: int
    speed: float
    frequency: float
    travelling: int


@dataclasses.dataclass
class CyclicCampbellTable:
    """Campbell diagrams of a cyclic model, one per harmonic index; arrays of shape (speeds,
    harmonic indices, modes), the same on every rank.

    Attributes:
        speeds: the spin speeds Omega (rad/s).
        harmonic: the harmonic indices k of the second axis.
        n_sectors: N.
        eigenvalues: lambda with Im(lambda) >= 0 (1/s), rotating frame.
        frequencies: signed rotating-frame frequencies (rad/s): Im(lambda), or -s for a
            divergent mode.
        growth: Re(lambda) (1/s).
        travelling: +1 a wave travelling forward (along the spin, rotating frame), -1
            backward, 0 standing or undetermined (at rest; k = 0 and N/2 always).
        travelling_index: the index tau in [-1, 1] behind it
            (:class:`dolfinx_mbs.cyclic.TravellingWaves`; 0 for k = 0 and N/2).
        stationary: the frequencies seen from the ground, abs(w + d k Omega) (rad/s).
        stable: False for divergence or flutter.
        mac: MAC of each branch with its previous speed (NaN at the first speed).
        tables: the sweep of each harmonic index (:class:`~dolfinx_mbs.campbell.CampbellTable`;
            for 0 < k < N/2 its ``whirl`` is the travelling direction).
        rank: this process's rank (rank 0 writes the files).
    """

    speeds: np.ndarray
    harmonic: np.ndarray
    n_sectors: int
    eigenvalues: np.ndarray
    frequencies: np.ndarray
    growth: np.ndarray
    travelling: np.ndarray
    travelling_index: np.ndarray
    stationary: np.ndarray
    stable: np.ndarray
    mac: np.ndarray
    tables: List[CampbellTable]
    rank: int = dataclasses.field(default=0, repr=False, compare=False)

    @property
    def n_modes(self) -> int:
        """The modes per speed and harmonic index."""
        return int(self.frequencies.shape[2])

    def index(self, k: int) -> int:
        """The position of harmonic index ``k`` on the table's second axis.

        Args:
            k: the harmonic index.

        Returns:
            Its position.

        Raises:
            ValueError: the table does not hold ``k``.
        """
        hit = np.flatnonzero(self.harmonic == k)
        if hit.size == 0:
            raise ValueError(f"harmonic index {k!r} is not in the table "
                             f"({self.harmonic.tolist()})")
        return int(hit[0])

    def excited(self, order: int) -> int:
        """The harmonic index that engine order ``order`` excites (+/-E mod N).

        Args:
            order: the engine order.

        Returns:
            The harmonic index.
        """
        return excited_harmonic(order, self.n_sectors)

    def interferences(self, engine_orders: Sequence[int] = (1, 2, 3, 4)) -> List[Interference]:
        """The crossings of each engine order's line E Omega with the rotating-frame branches
        of the harmonic index it excites, linearly interpolated between speeds (an exact hit
        counts once). Engine orders whose index the table does not hold give none.

        Args:
            engine_orders: the engine orders E (positive integers).

        Returns:
            The crossings, by speed.

        Raises:
            ValueError: an engine order that is not a positive integer.
        """
        orders = _orders(engine_orders)
        W = self.speeds
        out = []
        for E in orders:
            k = self.excited(E)
            if k not in self.harmonic:
                continue
            ik = self.index(k)
            for j in range(self.n_modes):
                f = self.frequencies[:, ik, j]
                tr = self.travelling[:, ik, j]
                ok = np.isfinite(f) & (f >= 0.0)
                g = f - E * np.abs(W)
                for i in range(len(W)):
                    if ok[i] and g[i] == 0.0:
                        out.append(Interference(E, k, j, float(W[i]), float(E * abs(W[i])),
                                                int(tr[i])))
                    elif i + 1 < len(W) and ok[i] and ok[i + 1] and g[i] * g[i + 1] < 0.0 \
                            and g[i + 1] != 0.0:
                        s = W[i] + (W[i + 1] - W[i]) * g[i] / (g[i] - g[i + 1])
                        # the direction on both sides (at rest it is undetermined: the other)
                        d = int(tr[i]) if tr[i] == tr[i + 1] or tr[i + 1] == 0 else \
                            int(tr[i + 1]) if tr[i] == 0 else 0
                        out.append(Interference(E, k, j, float(s), float(E * abs(s)), d))
        return sorted(out, key=lambda c: (abs(c.speed), c.order, c.mode))

    # -- output -------------------------------------------------------------------------------
    def to_csv(self, path: str | os.PathLike) -> None:
        """Write the table, one row per speed, harmonic index and branch (rank 0 writes).

        Columns: speed_rad_s, speed_rpm, harmonic, mode, frequency_rad_s, frequency_hz,
        growth_1_s, travelling, travelling_index, stationary_rad_s, stable, mac.

        Args:
            path: the file to write.
        """
        if self.rank != 0:
            return
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["speed_rad_s", "speed_rpm", "harmonic", "mode", "frequency_rad_s",
                        "frequency_hz", "growth_1_s", "travelling", "travelling_index",
                        "stationary_rad_s", "stable", "mac"])
            for i, s in enumerate(self.speeds):
                for ik, k in enumerate(self.harmonic):
                    for j in range(self.n_modes):
                        f = float(self.frequencies[i, ik, j])
                        w.writerow([repr(float(s)), repr(float(s * RPM)), int(k), j, repr(f),
                                    repr(f / (2 * math.pi)), repr(float(self.growth[i, ik, j])),
                                    int(self.travelling[i, ik, j]),
                                    repr(float(self.travelling_index[i, ik, j])),
                                    repr(float(self.stationary[i, ik, j])),
                                    int(bool(self.stable[i, ik, j])),
                                    repr(float(self.mac[i, ik, j]))])

    def plot(self, path: str | os.PathLike, harmonics: Sequence[int] | None = None,
             engine_orders: Sequence[int] = (), columns: int = 4,
             title: str | None = None) -> None:
        """Draw a Campbell diagram per harmonic index (rotating frame, Hz against rpm), side
        by side: forward (^) and backward (v) travelling waves, unstable points (red x), and
        the lines E Omega of the engine orders that excite each index (rank 0 draws).

        Args:
            path: the PNG file.
            harmonics: the indices drawn (None: all of the table's).
            engine_orders: the engine orders whose lines are drawn where they excite.
            columns: diagrams per row.
            title: the figure's title.
        """
        ks = list(self.harmonic) if harmonics is None else [int(k) for k in harmonics]
        for k in ks:
            self.index(k)
        orders = _orders(engine_orders) if len(engine_orders) else ()
        if self.rank != 0:
            return
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        cols = max(1, min(int(columns), len(ks)))
        rows = -(-len(ks) // cols)
        fig = Figure(figsize=(3.2 * cols, 2.6 * rows))
        FigureCanvasAgg(fig)
        x = self.speeds * RPM
        top = float(np.nanmax(np.abs(self.frequencies))) / (2 * math.pi) * 1.05 or 1.0
        for p, k in enumerate(ks):
            ax = fig.add_subplot(rows, cols, p + 1)
            ik = self.index(k)
            for E in orders:
                if self.excited(E) == k:
                    ax.plot(x, E * np.abs(self.speeds) / (2 * math.pi), "k--", lw=0.8)
                    ax.annotate(f"{E}x", (x[-1], E * abs(self.speeds[-1]) / (2 * math.pi)),
                                fontsize=7)
            for j in range(self.n_modes):
                hz = self.frequencies[:, ik, j] / (2 * math.pi)
                ax.plot(x, hz, "-", lw=0.8, color="C0")
                for d, marker in ((1, "^"), (-1, "v")):
                    sel = (self.travelling[:, ik, j] == d) & self.stable[:, ik, j]
                    ax.plot(x[sel], hz[sel], marker, ms=3, color="C0", ls="none")
                bad = ~self.stable[:, ik, j]
                ax.plot(x[bad], hz[bad], "x", color="red", ms=4, ls="none")
            ax.set_title(f"k = {k}", fontsize=9)
            ax.set_ylim(0.0, top)
            ax.tick_params(labelsize=7)
            if p % cols == 0:
                ax.set_ylabel("frequency (Hz)", fontsize=8)
            if p // cols == rows - 1:
                ax.set_xlabel("speed (rpm)", fontsize=8)
            ax.grid(alpha=0.3)
        fig.suptitle(title or f"Campbell diagrams per nodal diameter (N = {self.n_sectors}; "
                              "^ forward, v backward travelling)", fontsize=10)
        fig.tight_layout()
        fig.savefig(path, dpi=110)


def _orders(engine_orders: Sequence[int]) -> tuple:
    try:
        orders = tuple(engine_orders)
    except TypeError:
        orders = (engine_orders,)  # type: ignore[assignment]
    if not orders or any(isinstance(E, bool) or not isinstance(E, (int, np.integer)) or E < 1
                         for E in orders):
        raise ValueError(f"engine_orders must be positive integers, got {engine_orders!r}")
    return tuple(int(E) for E in orders)


def _to_ground(t: CampbellTable, k: int, n_sectors: int) -> None:
    """Set a sweep's stationary-frame frequencies and critical speeds for harmonic index k
    (the sweep's own assume a rotor's whirl, k = 1): abs(w + d k Omega) for a wave travelling
    in the direction d, w itself for a standing one (k = 0, N/2)."""
    if 2 * k % n_sectors == 0:
        t.whirl = np.zeros_like(t.whirl)
        t.whirl_index = np.zeros_like(t.whirl_index)
    signed = t.frequencies + t.whirl * k * np.abs(t.speeds)[:, None]
    t.stationary = np.where(t.whirl != 0, np.abs(signed), t.frequencies)
    t.whirl_stationary = np.where(t.whirl != 0, np.sign(signed), 0).astype(int)
    t.critical_speeds = t.crossings("stationary", kinds=None)   # waves: no lateral kind


Systems = Union[Mapping[int, "SecondOrderSystem"], Callable[[int], "SecondOrderSystem"]]


def harmonic_campbell(systems: Systems, speeds: Sequence[float], n_sectors: int, n: int = 6,
                      harmonics: Sequence[int] | None = None, whirl_tol: float = 0.25,
                      **kwargs: Any) -> CyclicCampbellTable:
    """One Campbell sweep per harmonic index, gathered in a :class:`CyclicCampbellTable`.

    Collective; the results are the same on every rank.

    Args:
        systems: the system of each harmonic index (a mapping k -> system, or a function
            ``k -> system`` called once per index, in ascending order, so that a model can
            keep one at a time).
        speeds: the spin speeds (rad/s), strictly monotonic.
        n_sectors: N.
        n: the branches of each harmonic index.
        harmonics: the indices (None: the mapping's keys; required with a function).
        whirl_tol: abs(travelling index) below which the direction is 0 (standing).
        **kwargs: :func:`dolfinx_mbs.campbell.campbell`'s other arguments (``shift``,
            ``n_extra``, ``damping``, ``tol``, ...); its ``engine_orders`` are those of each
            sweep's critical speeds.

    Returns:
        The table.

    Raises:
        ValueError: no harmonic index, bad arguments (:func:`dolfinx_mbs.campbell.campbell`).
    """
    if harmonics is None:
        if callable(systems):
            raise ValueError("harmonic_campbell: give the harmonic indices with a function of k")
        harmonics = sorted(systems)
    ks = [int(k) for k in harmonics]
    if not ks:
        raise ValueError("harmonic_campbell: no harmonic index")
    tables = []
    for k in ks:
        system = systems(k) if callable(systems) else systems[k]
        t = campbell(system, speeds, n=n, whirl_tol=whirl_tol, **kwargs)
        _to_ground(t, k, n_sectors)
        tables.append(t)
    W = tables[0].speeds
    K = np.array(ks)
    stack = {name: np.stack([getattr(t, name) for t in tables], axis=1)
             for name in ("eigenvalues", "frequencies", "growth", "stable", "mac", "whirl",
                          "whirl_index")}
    travelling = stack["whirl"].astype(int)
    tau = stack["whirl_index"]
    freq = stack["frequencies"]
    ground = np.stack([t.stationary for t in tables], axis=1)
    return CyclicCampbellTable(speeds=W.copy(), harmonic=K, n_sectors=int(n_sectors),
                               eigenvalues=stack["eigenvalues"], frequencies=freq,
                               growth=stack["growth"], travelling=travelling,
                               travelling_index=tau, stationary=ground,
                               stable=stack["stable"], mac=stack["mac"], tables=tables,
                               rank=tables[0].rank)
