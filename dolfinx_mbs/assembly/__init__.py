"""The bodies' forms assembled into PETSc matrices and vectors: one body at a frame state
(``operators``), all bodies as one distributed system (``full``, ``space``)."""

from dolfinx_mbs.assembly.body_loads import BodyLoads
from dolfinx_mbs.assembly.full import Assembly
from dolfinx_mbs.assembly.operator_memory import ReleasableMatrices, assemble_into, create_filled
from dolfinx_mbs.assembly.operators import BodyOperators, combine, coupling_basis
from dolfinx_mbs.assembly.space import FullSpace, orthonormal_nullspace, rigid_body_modes

__all__ = [
    "assemble_into",
    "Assembly",
    "BodyLoads",
    "BodyOperators",
    "combine",
    "coupling_basis",
    "create_filled",
    "FullSpace",
    "orthonormal_nullspace",
    "ReleasableMatrices",
    "rigid_body_modes",
]
