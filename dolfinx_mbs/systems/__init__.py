"""The typed systems the solvers take: the reduced operators of a formulation at a time
(``at(t)``), one Reducer protocol; the rigid motions the constraints leave free."""

from dolfinx_mbs.systems.hamilton import HamiltonSystem
from dolfinx_mbs.systems.multipliers import SaddlePoint
from dolfinx_mbs.systems.records import (
    FORMED_ON_READ,
    Hamiltonian,
    InertiaBlocks,
    Reducer,
    SecondOrder,
    check_choice,
)
from dolfinx_mbs.systems.reduced_basis import ReducedBasis
from dolfinx_mbs.systems.rigid_modes import RigidSubspace, rigid_subspace
from dolfinx_mbs.systems.second_order import SecondOrderSystem
from dolfinx_mbs.systems.velocity import (
    ReducedSpace,
    VelocityBasis,
    VelocityOperators,
    VelocitySystem,
)

__all__ = [
    "check_choice",
    "FORMED_ON_READ",
    "Hamiltonian",
    "HamiltonSystem",
    "InertiaBlocks",
    "ReducedBasis",
    "ReducedSpace",
    "Reducer",
    "rigid_subspace",
    "RigidSubspace",
    "SaddlePoint",
    "SecondOrder",
    "SecondOrderSystem",
    "VelocityBasis",
    "VelocityOperators",
    "VelocitySystem",
]
