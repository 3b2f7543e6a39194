"""Constraints as rows B(t) Delta' + b(t) = 0: clamps, prescribed values, DirichletBCs, general
and velocity rows, joints and rigid regions; their elimination and the Maggi reducer
A(t), a0(t), A^T X A; the constraint resultants."""

from dolfinx_mbs.constraints.base import (
    BCConstraint,
    Clamp,
    Constraint,
    Prescribed,
    Rows,
    nodes_where,
    select_nodes,
    time_jets,
)
from dolfinx_mbs.constraints.elimination import Elimination, rate_rows_on_independent
from dolfinx_mbs.constraints.frame_joints import (
    FrameJoint,
    JointPoint,
    Motor,
    Prismatic,
    Revolute,
    Spring,
)
from dolfinx_mbs.constraints.joints import (
    GROUND,
    Joint,
    RigidRegion,
    Slider,
    pin,
    relative_motion,
    tie,
)
from dolfinx_mbs.constraints.maggi import MaggiReducer
from dolfinx_mbs.constraints.reactions import Reactions, Resultant, resultants
from dolfinx_mbs.constraints.rows import LinearRows, VelocityRows

__all__ = [
    "BCConstraint",
    "Clamp",
    "Constraint",
    "Elimination",
    "FrameJoint",
    "GROUND",
    "Joint",
    "JointPoint",
    "LinearRows",
    "MaggiReducer",
    "Motor",
    "nodes_where",
    "pin",
    "Prescribed",
    "Prismatic",
    "rate_rows_on_independent",
    "Reactions",
    "relative_motion",
    "Resultant",
    "resultants",
    "Revolute",
    "RigidRegion",
    "Rows",
    "select_nodes",
    "Slider",
    "Spring",
    "tie",
    "time_jets",
    "VelocityRows",
]
