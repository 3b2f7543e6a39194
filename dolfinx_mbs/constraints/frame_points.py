"""The points that joints, springs and motors between computed frames hold
(:mod:`dolfinx_mbs.constraints.frame_joints`): a node of an elastic body, which moves with its
deformation, a point of a rigid body or of a frame, or a point of the ground; a frame's state
at t = 0, from which the joints take their constants; a planar rotation's angle.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Protocol, Sequence

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.base import Frame

if TYPE_CHECKING:
    from mpi4py import MPI

    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.bodies.rigid import RigidBody
    from dolfinx_mbs.frames.base import FrameState

__all__ = ["JointPoint", "joint_point", "start_state", "planar_angle"]


class _HasBodies(Protocol):
    """What :func:`joint_point` reads of a model (a later part: not named here)."""

    @property
    def bodies(self) -> Sequence[object]: ...


@dataclasses.dataclass
class JointPoint:
    """A point a joint holds.

    Attributes:
        frame: the frame it moves with (None: the ground).
        X: its position in the frame's coordinates (3,); for the ground, global.
        body: the elastic body whose node it is (None for a rigid point).
        body_index: that body's index in the model.
        node: the local index of the owned node on the rank that owns it (None elsewhere).
        owner: the rank that owns the node (-1 for a rigid point).
    """

    frame: Frame | None
    X: np.ndarray
    body: object = None
    body_index: int = -1
    node: int | None = None
    owner: int = -1

    @property
    def elastic(self) -> bool:
        """True when the point is a node of an elastic body (its displacement moves it)."""
        return self.body is not None


def joint_point(model: _HasBodies, body: Body | RigidBody | None, point: np.ndarray, name: str,
                tol: float = 1e-8) -> JointPoint:
    """The point of ``body`` (an elastic Body: its node there; a RigidBody: the point in its
    frame; None: the ground) at the global ``point`` at t = 0.

    Args:
        model: the model (its bodies, for the body's index).
        body: an elastic Body, a RigidBody or None (the ground).
        point: the global point at t = 0.
        name: the joint's name, in messages.
        tol: the largest distance to a node, relative to the mesh size.

    Returns:
        The joint point.
    """
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.bodies.rigid import RigidBody
    if body is None:
        return JointPoint(frame=None, X=point.copy())
    if isinstance(body, RigidBody):
        s0 = start_state(body.frame)
        return JointPoint(frame=body.frame, X=s0.R.T @ (point - s0.r_O))
    if not isinstance(body, Body):
        raise TypeError(f"{name}: a body must be a dolfinx_mbs.Body, a RigidBody or None (the "
                        f"ground), got {body!r}")
    s0 = start_state(body.frame)
    X = s0.R.T @ (point - s0.r_O)
    node = body.locate_node(X, tol)
    comm = body.comm
    owner = comm.allreduce(comm.rank if node is not None else comm.size, op=_min_op())
    if owner == comm.size:
        raise ValueError(f"{name}: body {body.name!r} has no node within tol={tol:g} of the "
                         f"point {checks.shown(point)} (global, at t = 0)")
    Xn = comm.bcast(None if node is None else np.array(
        body.V.tabulate_dof_coordinates()[node], dtype=float), root=owner)
    return JointPoint(frame=body.frame, X=np.asarray(Xn, dtype=float), body=body,
                      body_index=model.bodies.index(body), node=node, owner=owner)


def start_state(frame: Frame) -> FrameState:
    """A frame's state at t = 0: a computed frame's from its initial coordinates (not the
    state a run left it in), a prescribed frame's at t = 0.

    Args:
        frame: the frame.

    Returns:
        The state.
    """
    from dolfinx_mbs.frames.computed import ComputedFrame
    if isinstance(frame, ComputedFrame):
        z, w = frame.initial()
        return frame.state_at(0.0, z, w)
    return frame.state(0.0)


def _min_op() -> MPI.Op:
    from mpi4py import MPI
    return MPI.MIN


def planar_angle(R: np.ndarray) -> float:
    """The angle about z of a rotation matrix (planar motion).

    Args:
        R: the rotation matrix.

    Returns:
        The angle (rad).
    """
    return float(np.arctan2(R[1, 0], R[0, 0]))
