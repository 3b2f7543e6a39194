"""The compatibility rows of a harmonic index across a sector's cut (``docs/theory.md``
section 10), as constraint rows for the Maggi reducer.

With the complex amplitude u_c + i u_s of harmonic index k and R the turn by the sector angle
alpha, the high face's nodes follow the low face's:

    u_c,high = R (cos k alpha u_c,low - sin k alpha u_s,low)
    u_s,high = R (sin k alpha u_c,low + cos k alpha u_s,low)

For k = 0 and k = N/2 the amplitude is real and one copy of the sector holds it:
u_high = R u_low and u_high = -R u_low. Each row is written on the rank that owns its high node,
with the high dof as its preferred dependent (a tie's rows with coefficients).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from dolfinx_mbs.constraints.base import Constraint, Rows

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.cyclic.sector import SectorPairs

__all__ = ["CyclicRows"]

#: coefficients below this (the cosines of right angles, ~6e-17) are left out of a row
ZERO = 1e-14


class CyclicRows(Constraint):
    """The cut's rows of harmonic index ``k`` for the paired faces of each body.

    Args:
        pairs: one :class:`~dolfinx_mbs.cyclic.sector.SectorPairs` per cyclic body (numbered
            in the model's full space).
        k: the harmonic index.
        n_sectors: N.
        copy_index: with two copies, ``copy_index(full, copy)`` maps a full index of the model's
            space to the two-copy space's (copy 0: cosine, 1: sine); None for one copy
            (k = 0 or N/2, the model's own space).
        name: the constraint's name.
    """

    def __init__(self, pairs: Sequence[SectorPairs], k: int, n_sectors: int,
                 copy_index: Callable[[np.ndarray, int], np.ndarray] | None = None,
                 name: str | None = None) -> None:
        self.pairs = list(pairs)
        self.k = int(k)
        self.n_sectors = int(n_sectors)
        self.copy_index = copy_index
        self.single = 2 * self.k % self.n_sectors == 0
        if self.single == (copy_index is not None):
            raise ValueError(f"cyclic rows of k={k}: {'one copy' if self.single else 'two copies'}"
                             f" of the sector for N={n_sectors}")
        self.name = name or f"cyclic(k={self.k})"

    def rows(self, space: FullSpace, t: float) -> Rows:
        """The rows of this rank's high nodes (time-invariant).

        Args:
            space: the space the rows number (the model's for one copy, the two-copy space
                otherwise).
            t: time (s), unused.

        Returns:
            The rows.
        """
        a = 2.0 * math.pi * self.k / self.n_sectors
        c, s = math.cos(a), math.sin(a)
        blocks = []  # (dependent (m,), columns (m, w), coefficients (m, w))
        for p in self.pairs:
            m, g = p.high.shape
            if m == 0:
                continue
            R = np.repeat(p.R[None, :, :], m, axis=0)          # (m, g, g): row i, column j
            hi, lo = p.high.reshape(-1), np.repeat(p.low, g, axis=0)   # (m g), (m g, g)
            Rr = R.reshape(-1, g)
            if self.single:  # u_high - c R u_low = 0, c = cos(k alpha) = +-1
                blocks.append((hi, lo, -c * Rr))
                continue
            ci = self.copy_index
            assert ci is not None  # two copies have their index map (checked at creation)
            hc, hs = ci(hi, 0), ci(hi, 1)
            lc, ls = ci(lo, 0), ci(lo, 1)
            both = np.concatenate([lc, ls], axis=1)
            blocks.append((hc, both, np.concatenate([-c * Rr, s * Rr], axis=1)))
            blocks.append((hs, both, np.concatenate([-s * Rr, -c * Rr], axis=1)))
        if not blocks:
            return Rows.empty(self.name)
        deps: list = []
        cols: list = []
        coefs: list = []
        counts: list = []
        for dep, lows, vals in blocks:
            cl = np.c_[dep, lows]
            cf = np.c_[np.ones(len(dep)), vals]
            keep = np.abs(cf) > ZERO
            keep[:, 0] = True
            deps.append(dep)
            cols.append(cl[keep])
            coefs.append(cf[keep])
            counts.append(keep.sum(axis=1))
        pivots = np.concatenate(deps).astype(np.int64)
        indptr = np.zeros(len(pivots) + 1, np.int64)
        indptr[1:] = np.cumsum(np.concatenate(counts))
        jets = np.zeros((int(indptr[-1]), 3))
        jets[:, 0] = np.concatenate(coefs)
        return Rows(self.name, indptr, np.concatenate(cols).astype(np.int64), jets,
                    np.zeros((len(pivots), 3)), pivots)
