"""The interference (ZZENF, SAFE) diagram of a cyclic model: its natural frequencies against
the harmonic index (nodal diameter), with the engine orders that excite each index.

    table = model.campbell(speeds, n=6, harmonics="all")
    mbs.plot.interference(table, "zzenf.png", engine_orders=range(1, 5))

At each harmonic index k the frequencies of its branches (rotating frame) are drawn over the
table's speeds (a vertical stroke from the lowest to the highest speed's value, the
``speed``'s marked). An engine order E excites k = +/-E (mod N) at the frequency E Omega: over
the speeds a vertical band at its k, and at the ``speed`` a point of the zig-zag line that
joins E = 0, 1, 2, ... (k folding back at N/2). Where a branch of k meets the band of an E that
excites k (:meth:`dolfinx_mbs.campbell.CyclicCampbellTable.interferences`), a circle marks the
resonance. Rank 0 draws with matplotlib (Agg); collective like every picture.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.plot.display import pyplot

if TYPE_CHECKING:
    from dolfinx_mbs.campbell.harmonics import CyclicCampbellTable

__all__ = ["interference"]


def interference(table: CyclicCampbellTable, path: str, engine_orders: Sequence[int] = (1, 2, 3),
                 speed: float | None = None, title: str | None = None) -> str:
    """Draw the interference (ZZENF) diagram of ``table`` to ``path``.

    Args:
        table: a :class:`~dolfinx_mbs.campbell.CyclicCampbellTable`
            (``model.campbell(speeds, harmonics="all")``).
        path: the PNG file.
        engine_orders: the engine orders E drawn (positive integers).
        speed: the speed of the zig-zag line and the marked points (rad/s; default the
            table's largest in magnitude).
        title: the figure's title (default: N and the speed in rpm).

    Returns:
        ``path``, on every rank.

    Raises:
        TypeError: ``table`` is not a cyclic Campbell table.
        ValueError: bad engine orders, or a ``speed`` outside the table's speeds.
    """
    if not hasattr(table, "harmonic") or not hasattr(table, "interferences"):
        raise TypeError("interference: table must be the cyclic Campbell table of "
                        "model.campbell(speeds, harmonics=...)")
    crossings = table.interferences(engine_orders)   # checks the orders
    orders = sorted({int(E) for E in engine_orders})
    W = table.speeds
    if speed is None:
        i0 = int(np.argmax(np.abs(W)))
    else:
        s = checks.real(speed, "speed")
        hit = np.flatnonzero(np.isclose(W, s, rtol=1e-12, atol=0.0))
        if hit.size == 0:
            raise ValueError(f"speed {s:g} is not one of the table's speeds")
        i0 = int(hit[0])
    if table.rank != 0:
        return path
    plt = pyplot()
    N = table.n_sectors
    hz = table.frequencies / (2 * math.pi)
    ks = table.harmonic
    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    top = float(np.nanmax(hz)) * 1.08 if np.isfinite(hz).any() else 1.0
    wmin, wmax = float(np.abs(W).min()), float(np.abs(W).max())
    for ik, k in enumerate(ks):
        for j in range(table.n_modes):
            col = hz[:, ik, j]
            ax.plot([k, k], [np.nanmin(col), np.nanmax(col)], "-", color="C0", lw=3,
                    alpha=0.35, solid_capstyle="round")
            d = table.travelling[i0, ik, j]
            marker = "^" if d > 0 else "v" if d < 0 else "o"
            ax.plot([k], [col[i0]], marker, color="C0", ms=5)
    # the engine orders: a band over the speeds at the index each excites, and the zig-zag
    # line at the chosen speed through E = 0 ... beyond the frequencies drawn
    w0 = abs(float(W[i0]))
    if w0 > 0.0:
        e_top = int(math.ceil(top * 2 * math.pi / w0)) + 1
        Es = np.arange(0, e_top + 1)
        ax.plot([min(E % N, N - E % N) for E in Es], Es * w0 / (2 * math.pi), "-",
                color="0.4", lw=0.8, zorder=0)
    for E in orders:
        k = min(E % N, N - E % N)
        ax.fill_between([k - 0.12, k + 0.12], E * wmin / (2 * math.pi),
                        E * wmax / (2 * math.pi), color="C3", alpha=0.25, lw=0)
        ax.annotate(f"EO {E}", (k + 0.15, E * w0 / (2 * math.pi)), fontsize=8, color="C3")
    for c in crossings:
        if c.order in orders:
            ax.plot([c.harmonic], [c.frequency / (2 * math.pi)], "o", mfc="none", mec="C3",
                    ms=11, mew=1.5)
    ax.set_xlim(-0.5, N // 2 + 0.5)
    ax.set_ylim(0.0, top)
    ax.set_xticks(list(range(N // 2 + 1)))
    ax.set_xlabel("harmonic index (nodal diameters) k")
    ax.set_ylabel("frequency, rotating frame (Hz)")
    rpm = float(W[i0]) * 30.0 / math.pi
    ax.set_title(title or f"Interference diagram, N = {N}, {rpm:.0f} rpm "
                          "(^ forward, v backward, o standing; circles: resonances)",
                 fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
