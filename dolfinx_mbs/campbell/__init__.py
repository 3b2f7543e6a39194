"""Campbell diagrams: frequencies over a range of spin speeds, branches tracked, whirl,
stationary-frame frequencies, stability and critical speeds."""

from dolfinx_mbs.campbell.pencil import SweepPencil
from dolfinx_mbs.campbell.subspace import RESIDUAL_FACTOR, ShiftedFactor, SubspaceSolver
from dolfinx_mbs.campbell.sweep import campbell
from dolfinx_mbs.campbell.table import CampbellTable, CriticalSpeed

__all__ = [
    "campbell",
    "CampbellTable",
    "CriticalSpeed",
    "RESIDUAL_FACTOR",
    "ShiftedFactor",
    "SubspaceSolver",
    "SweepPencil",
]
