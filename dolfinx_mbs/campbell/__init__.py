"""Campbell diagrams: frequencies over a range of spin speeds, branches tracked, whirl,
stationary-frame frequencies, stability and critical speeds; per harmonic index of a cyclic
model, with the engine orders' interferences."""

from dolfinx_mbs.campbell.harmonics import (
    CyclicCampbellTable,
    Interference,
    excited_harmonic,
    harmonic_campbell,
)
from dolfinx_mbs.campbell.pencil import SweepPencil
from dolfinx_mbs.campbell.subspace import RESIDUAL_FACTOR, ShiftedFactor, SubspaceSolver
from dolfinx_mbs.campbell.sweep import campbell
from dolfinx_mbs.campbell.table import CampbellTable, CriticalSpeed

__all__ = [
    "campbell",
    "CampbellTable",
    "CriticalSpeed",
    "CyclicCampbellTable",
    "excited_harmonic",
    "harmonic_campbell",
    "Interference",
    "RESIDUAL_FACTOR",
    "ShiftedFactor",
    "SubspaceSolver",
    "SweepPencil",
]
