"""Static equilibrium on the reduced system (KSP, SNES for nonlinear strain) and the unit prestress
fields of geometric stiffening."""

from dolfinx_mbs.static.solver import (
    Prestress,
    StaticSolver,
    joined_bodies,
    negative_eigenvalues,
    null_pivots,
    prestress,
)

__all__ = [
    "joined_bodies",
    "negative_eigenvalues",
    "null_pivots",
    "prestress",
    "Prestress",
    "StaticSolver",
]
