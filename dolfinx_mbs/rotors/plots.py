"""Plots of rotordynamics results as their users expect them (matplotlib, Agg, rank 0 draws):
the Campbell diagram with each mode's points coloured by its logarithmic decrement. The Bode
and polar plots are :meth:`dolfinx_mbs.rotors.UnbalanceResponse.plot`, the critical speed map
:meth:`dolfinx_mbs.rotors.CriticalSpeedMap.plot`. Units: rpm and Hz on the axes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import os

    from dolfinx_mbs.campbell.table import CampbellTable

__all__ = ["campbell_log_dec"]

RPM = 30.0 / math.pi


def campbell_log_dec(table: CampbellTable, path: str | os.PathLike, title: str | None = None,
                     vmax: float | None = None) -> None:
    """The stationary-frame Campbell diagram of ``table`` (a
    :class:`dolfinx_mbs.campbell.CampbellTable`) with the points of each branch coloured by
    their log dec (colour bar; the scale tops at ``vmax``, default the largest finite log dec),
    forward (^) and backward (v) whirl, unstable points ringed in red, and the 1x line.

    Args:
        table: the Campbell table.
        path: the image file.
        title: the title (None: a default).
        vmax: the colour scale's top (None: the largest finite log dec).
    """
    if table.rank != 0:
        return
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    x = table.speeds * RPM
    hz = table.stationary / (2 * math.pi)
    ld = table.log_dec
    finite = ld[np.isfinite(ld)]
    top = vmax if vmax is not None else (float(finite.max()) if finite.size else 1.0)
    low = min(0.0, float(finite.min())) if finite.size else 0.0
    fig = Figure(figsize=(7.5, 5.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(x, np.abs(table.speeds) / (2 * math.pi), "k--", lw=0.8, label="1x")
    sc = None
    for j in range(table.n_modes):
        ax.plot(x, hz[:, j], "-", color="0.6", lw=0.8)
        for sense, marker in ((1, "^"), (-1, "v"), (0, "o")):
            sel = table.whirl_stationary[:, j] == sense
            if np.any(sel):
                sc = ax.scatter(x[sel], hz[sel, j], c=np.clip(ld[sel, j], low, top),
                                marker=marker, s=22, cmap="viridis", vmin=low, vmax=top)
        bad = ~table.stable[:, j]
        ax.scatter(x[bad], hz[bad, j], s=70, facecolors="none", edgecolors="red")
    if sc is not None:
        fig.colorbar(sc, ax=ax, label="log dec")
    ax.set_xlabel("spin speed (rpm)")
    ax.set_ylabel("frequency (Hz)")
    ax.set_title(title or "Campbell diagram (^ forward, v backward, red ring: unstable)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.savefig(path, dpi=120)
