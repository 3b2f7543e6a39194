"""Joints between frames whose motion is computed, and motors on them.

    j = model.revolute(crank, rod, point=(0.1, 0.0))       # 2D: the points coincide
    j = model.revolute(arm, link, point=p, axis=(0, 0, 1)) # 3D: and the axes stay aligned
    s = model.prismatic(slider, None, point=p, axis=(1, 0))  # slides along a line
    model.motor(j, speed=lambda t: 10.0)                    # or angle=..., torque=...
    model.spring(arm, p, None, q, stiffness=k, damping=c)   # a spring-damper to the ground

A joint holds a point of one body to a point of another (or of the ground): a node of an
elastic body, which moves with its deformation, or a point of a rigid body or of a computed
frame. Its rows depend on the configuration (the frames' coordinates and the nodes'
displacements), so they are not rows of the Maggi reducer (whose basis is fixed) but rows of
the coupled equations (:mod:`dolfinx_mbs.systems.coupled_joints`), solved with the frames'
unknowns: the joint forces are unknowns there, and the position rows are kept exactly at every
step by the stabilization of Gear, Gupta and Leimkuhler (the velocity rows beside the position
rows, with a second multiplier on the kinematic rows that vanishes with the drift): no
projection between steps, no drift beyond Newton's tolerance.

This module holds the definitions (which points, which rows); the rows and their derivatives
are built in ``systems``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, Protocol, Sequence, Tuple

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.base import Frame

if TYPE_CHECKING:
    from mpi4py import MPI
    from numpy.typing import ArrayLike

    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.bodies.rigid import RigidBody
    from dolfinx_mbs.frames.base import FrameState
    from dolfinx_mbs.frames.computed import ComputedFrame

__all__ = ["JointPoint", "FrameJoint", "Motor", "joint_point", "planar_angle"]


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


class FrameJoint:
    """A joint between the points ``a`` and ``b``.

    Args:
        kind: ``"revolute"`` (the points coincide; in 3D the joint's axis, fixed in both frames,
            stays aligned: 3 + 2 rows; in 2D 2 rows), ``"prismatic"`` (``b`` moves along the
            axis fixed in ``a``'s frame and the two frames keep their relative orientation; 2D:
            2 rows, 3D: 2 + 3) or ``"spring"`` (a linear spring and damper between the
            points: the force on ``b`` is s e, e the unit vector from ``b``'s point to ``a``'s,
            s = k (L - L0) +
            c L' the tension; its components are unknowns with a row each, F - s e = 0, so that
            the force enters the bodies as a joint's does; no position rows).
        a, b: the :class:`JointPoint` s.
        gdim: 2 or 3.
        axis: the joint's axis at t = 0, global components (3D joints, prismatic).
        name: its name.
        stiffness, damping, length: a spring's k (N/m), c (N s/m) and rest length L0 (None:
            the points' distance at t = 0).
    """

    def __init__(self, kind: str, a: JointPoint, b: JointPoint, gdim: int,
                 axis: ArrayLike | None = None, name: str = "joint", stiffness: float = 0.0,
                 damping: float = 0.0, length: float | None = None) -> None:
        if kind not in ("revolute", "prismatic", "spring"):
            raise ValueError(f"kind must be 'revolute', 'prismatic' or 'spring', got {kind!r}")
        self.kind, self.a, self.b, self.gdim, self.name = kind, a, b, gdim, name
        self.motor: Motor | None = None
        if kind == "spring":
            self._spring(stiffness, damping, length)
            return
        if gdim == 3 and axis is None:
            raise ValueError(f"{name}: a {kind} joint in 3D needs its axis (axis=)")
        axis = np.array([0.0, 0.0, 1.0]) if axis is None else checks.unit_axis(axis, "axis")
        if gdim == 2 and kind == "revolute" and np.abs(axis[:2]).max() > 1e-12:
            raise ValueError(f"{name}: in 2D a revolute joint turns about z, got axis "
                             f"{axis.tolist()}")
        self.axis: np.ndarray | None = axis
        sa = start_state(a.frame) if a.frame is not None else None
        sb = start_state(b.frame) if b.frame is not None else None
        Ra = sa.R if sa is not None else np.eye(3)
        Rb = sb.R if sb is not None else np.eye(3)
        #: the relative angle at t = 0 (2D: a motor's angle counts from it)
        self.angle0 = planar_angle(Rb) - planar_angle(Ra)
        #: the axis in a's frame
        self.axis_a = Ra.T @ axis
        #: 3D: pairs (p in a's frame, q in b's frame) of directions that stay at right angles,
        #: (R_a p) . (R_b q) = 0: a revolute joint's axis against two directions across it; a
        #: prismatic joint's also one direction across against the other (no turn about it)
        self.lock: list = []
        #: a prismatic joint's directions across its axis (in a's frame) and b's point's
        #: offsets along them at t = 0: b's point stays on the line
        self.normals_a: list = []
        self.offsets: list = []
        if gdim == 3 and kind in ("revolute", "prismatic"):
            t1 = np.cross(axis, [1.0, 0.0, 0.0])
            if np.linalg.norm(t1) < 0.5:
                t1 = np.cross(axis, [0.0, 1.0, 0.0])
            t1 /= np.linalg.norm(t1)
            t2 = np.cross(axis, t1)
            self.lock = [(self.axis_a, Rb.T @ t1), (self.axis_a, Rb.T @ t2)]
            if kind == "prismatic":
                self.lock.append((Ra.T @ t1, Rb.T @ t2))
            across: Tuple[np.ndarray, ...] = (t1, t2)
        else:
            across = (np.array([-axis[1], axis[0], 0.0]),)
        if kind == "prismatic":
            pa = sa.to_global(a.X) if sa is not None else a.X
            pb = sb.to_global(b.X) if sb is not None else b.X
            self.normals_a = [Ra.T @ n for n in across]
            self.offsets = [float(n @ (pb - pa)) for n in across]
        # position rows: revolute 2 (2D) or 3 + 2 (3D); prismatic 1 + 1 (2D) or 2 + 3 (3D)
        self.n_position = (gdim if kind == "revolute" else len(across)) + len(self.lock) + (
            1 if (kind == "prismatic" and gdim == 2) else 0)

    def _spring(self, stiffness: float, damping: float, length: float | None) -> None:
        """A spring's constants, checked, and its length at t = 0."""
        self.stiffness = checks.real(stiffness, f"{self.name}: stiffness")
        self.damping = checks.real(damping, f"{self.name}: damping")
        if self.stiffness < 0.0 or self.damping < 0.0:
            raise ValueError(f"{self.name}: stiffness and damping must be >= 0, got "
                             f"stiffness={self.stiffness:g}, damping={self.damping:g}")
        ends = []
        for pt in (self.a, self.b):
            st = start_state(pt.frame) if pt.frame is not None else None
            ends.append(st.to_global(pt.X) if st is not None else pt.X)
        dist = float(np.linalg.norm(ends[0] - ends[1]))
        if dist <= 1e-12 * max(1.0, float(np.abs(ends[0]).max())):
            raise ValueError(f"{self.name}: the spring's two points coincide at t = 0 (its "
                             "direction is undefined); join coincident points with a revolute "
                             "joint and a torsional spring")
        self.length = dist if length is None else checks.real(
            length, f"{self.name}: length")
        if self.length < 0.0:
            raise ValueError(f"{self.name}: length must be >= 0, got {self.length:g}")
        self.axis = None
        self.angle0 = 0.0
        self.n_position = 0

    def __repr__(self) -> str:
        return f"FrameJoint({self.kind!r}, name={self.name!r})"


class Motor:
    """A motor on a joint's relative rotation (2D revolute) or on a hinge's angle.

    Exactly one of ``angle`` (a function of t: the relative angle is driven, the torque is
    the joint's unknown), ``speed`` (its rate is driven) or ``torque`` (``torque(t, s)``, an
    applied pair of torques) is given.

    Args:
        target: the :class:`FrameJoint` (2D revolute) or a :class:`~dolfinx_mbs.frames.Hinge`.
        angle, speed: functions of time (rad, rad/s).
        torque: ``torque(t, s)`` -> N m, s the relative state (``angle``, ``rate``).
        name: the motor's name.
    """

    def __init__(self, target: FrameJoint | ComputedFrame, angle: Callable | None = None,
                 speed: Callable | None = None, torque: Callable | None = None,
                 name: str = "motor") -> None:
        given = [k for k, v in (("angle", angle), ("speed", speed), ("torque", torque))
                 if v is not None]
        if len(given) != 1:
            raise ValueError(f"{name}: give exactly one of angle=, speed=, torque= (got "
                             f"{given or 'none'})")
        for k, v in (("angle", angle), ("speed", speed), ("torque", torque)):
            if v is not None and not callable(v):
                raise ValueError(f"{name}: {k} must be a function, got {v!r}")
        self.target, self.kind, self.name = target, given[0], name
        fn = angle if angle is not None else speed if speed is not None else torque
        assert fn is not None  # (exactly one is given)
        self.fn: Callable = fn
        #: the driven coordinate's value at t = 0 (the angle rows are relative to it)
        self.angle0 = 0.0

    @property
    def n_rows(self) -> int:
        """1 for a driven angle or speed, 0 for an applied torque."""
        return 0 if self.kind == "torque" else 1

