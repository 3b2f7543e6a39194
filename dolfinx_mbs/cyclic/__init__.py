"""Cyclic symmetry: a bladed disk from one sector (``docs/theory.md`` section 10).

Use::

    sector = mbs.cyclic.Sector(n_sectors=24, axis=(0, 0, 1), low=(facet_tags, 1),
                               high=(facet_tags, 2))
    body = mbs.Body(mesh, steel, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=W), degree=2,
                    stiffening="prestress", cyclic=sector)
    model = mbs.Model([body]); model.clamp(body, bore)
    w = model.natural_frequencies(n=6, harmonic=3)      # rad/s, one harmonic index
    s = model.harmonic_frequencies(n=6)                 # every index at once (condensed)
    table = model.campbell(speeds, n=6, harmonics="all")
    u = model.expand(mode, harmonic=3)                  # the whole wheel

The sector (:class:`Sector`) pairs its high cut face with its low face turned by 2 pi / N; the
cut's rows of each harmonic index (:class:`CyclicRows`) are constraints for the Maggi reducer;
the real form of a harmonic index 0 < k < N/2 is two copies of the sector
(:mod:`dolfinx_mbs.cyclic.harmonic`), and :class:`WheelMesh` expands a sector's field to the
whole wheel. :class:`Wheel` is a model's cyclic part; :mod:`dolfinx_mbs.cyclic.condensed` gives the
frequencies of every index from one factorization of the sector (:class:`HarmonicSpectrum`).
"""

from dolfinx_mbs.cyclic.condensed import HarmonicSpectrum
from dolfinx_mbs.cyclic.expand import WheelMesh
from dolfinx_mbs.cyclic.harmonic import (
    COPIES,
    CopiedRows,
    CopiedSpace,
    HarmonicAssembly,
    HarmonicSystem,
    TravellingWaves,
)
from dolfinx_mbs.cyclic.rows import CyclicRows
from dolfinx_mbs.cyclic.sector import Sector, SectorPairs
from dolfinx_mbs.cyclic.wheel import Wheel

__all__ = [
    "COPIES",
    "CopiedRows",
    "CopiedSpace",
    "CyclicRows",
    "HarmonicAssembly",
    "HarmonicSpectrum",
    "HarmonicSystem",
    "Sector",
    "SectorPairs",
    "TravellingWaves",
    "Wheel",
    "WheelMesh",
]
