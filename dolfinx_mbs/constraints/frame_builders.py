"""The builders of joints, springs and motors between computed frames: a model's bodies and
names checked, the points located, the element made (:mod:`dolfinx_mbs.constraints.frame_joints`).

``Model.revolute``, ``Model.prismatic``, ``Model.spring``, ``Model.motor`` and
``Model.torsional_spring`` forward here and keep what is returned. A builder changes nothing of
the model: a failed call leaves it as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, List, Protocol, Sequence, cast

import numpy as np
from mpi4py import MPI

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.frame_joints import (
    FrameJoint,
    Motor,
    Prismatic,
    Revolute,
    Spring,
)
from dolfinx_mbs.constraints.frame_points import joint_point
from dolfinx_mbs.frames.computed import ComputedFrame, Hinge

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.bodies.rigid import RigidBody

__all__ = ["JointModel", "revolute", "prismatic", "spring", "motor", "torsional_spring",
           "springs_of", "frames_of", "bind_frames", "point_mass"]


class JointModel(Protocol):
    """What the builders read of a model (a later part: not named here)."""

    @property
    def bodies(self) -> Sequence[Any]:
        """The model's elastic bodies."""

    @property
    def rigid_bodies(self) -> Sequence[Any]:
        """The model's rigid bodies."""

    @property
    def frames(self) -> Sequence[ComputedFrame]:
        """The model's computed frames."""

    @property
    def frame_joints(self) -> Sequence[FrameJoint]:
        """The joints and springs kept."""

    @property
    def motors(self) -> Sequence[Motor]:
        """The motors kept."""


def _names(model: JointModel) -> set:
    return {j.name for j in model.frame_joints} | {m.name for m in model.motors}


def _check_bodies(model: JointModel, what: str, bodies: Sequence[Body | RigidBody | None]
                  ) -> None:
    for b in bodies:
        if b is not None and all(b is not x for x in list(model.bodies)
                                 + list(model.rigid_bodies)):
            raise ValueError(f"{what}: body {getattr(b, 'name', b)!r} is not part of this "
                             "model")


def _gdim(bodies: Sequence[Body | RigidBody]) -> int:
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.bodies.rigid import RigidBody
    dims: set[int] = {b.gdim for b in bodies if isinstance(b, Body)}
    dims |= {b.frame.gdim for b in bodies if isinstance(b, RigidBody)
             and isinstance(b.frame, ComputedFrame)}
    if len(dims) != 1:
        raise ValueError(f"a joint joins bodies of one dimension, got {sorted(dims)}")
    return dims.pop()


def _axial(cls: type, word: str, model: JointModel, body_a: Body | RigidBody | None,
           body_b: Body | RigidBody | None, point: ArrayLike, axis: ArrayLike | None,
           name: str | None, tol: float) -> FrameJoint:
    """A revolute or prismatic joint (``cls``, ``word`` in messages) of ``model``."""
    _check_bodies(model, word, (body_a, body_b))
    if body_a is body_b:
        raise ValueError(f"{word}: body_a and body_b must differ")
    if body_b is None:
        body_a, body_b = None, body_a
    assert body_b is not None  # (both None is refused above: body_a is body_b)
    frames = [b.frame for b in (body_a, body_b) if b is not None]
    if not any(isinstance(f, ComputedFrame) for f in frames):
        raise ValueError(f"{word}: neither body is on a computed frame; join bodies of "
                         "prescribed frames with model.pin / model.slider (rows of the "
                         "Maggi reducer)")
    p = checks.point3(point, "point")
    name = name or f"{word}({'ground' if body_a is None else body_a.name},{body_b.name})"
    if name in _names(model):
        raise ValueError(f"{word}: the name {name!r} is taken (pass name=)")
    gdim = _gdim([b for b in (body_a, body_b) if b is not None])
    ja = joint_point(model, body_a, p, name, tol)
    jb = joint_point(model, body_b, p, name, tol)
    return cast(FrameJoint, cls(ja, jb, gdim, axis=axis, name=name))


def revolute(model: JointModel, body_a: Body | RigidBody | None,
             body_b: Body | RigidBody | None, point: ArrayLike, *,
             axis: ArrayLike | None = None, name: str | None = None,
             tol: float = 1e-8) -> Revolute:
    """A :class:`~dolfinx_mbs.constraints.frame_joints.Revolute` joint of ``model`` at the
    global ``point`` (at t = 0) between ``body_a`` and ``body_b`` (see ``Model.revolute``).

    Args:
        model: the model (its bodies, frames, joints and motors).
        body_a: a Body, a RigidBody, or None for the ground.
        body_b: the same kinds.
        point: the joint's point, global, at t = 0 (m).
        axis: the joint's axis in 3D (global at t = 0); in 2D z (None).
        name: the joint's name (default ``revolute(a,b)``).
        tol: how far from ``point`` an elastic body's node may lie (m).

    Returns:
        The joint (not yet added to the model).

    Raises:
        ValueError: a body not of this model, the same body twice, neither body on a computed
            frame, no node of an elastic body within ``tol``, a name taken, a 3D joint
            without ``axis``.
    """
    return cast(Revolute, _axial(Revolute, "revolute", model, body_a, body_b, point, axis,
                                 name, tol))


def prismatic(model: JointModel, body_a: Body | RigidBody | None,
              body_b: Body | RigidBody | None, point: ArrayLike, *, axis: ArrayLike | None,
              name: str | None = None, tol: float = 1e-8) -> Prismatic:
    """A :class:`~dolfinx_mbs.constraints.frame_joints.Prismatic` joint of ``model``:
    ``body_b``'s point at ``point`` slides along ``axis`` (see ``Model.prismatic``).

    Args:
        model: the model.
        body_a: as for :func:`revolute` (None: a guide fixed in the ground).
        body_b: the body whose point slides.
        point: ``body_b``'s point on the guide, global, at t = 0 (m).
        axis: the guide's direction, global at t = 0.
        name: the joint's name (default ``prismatic(a,b)``).
        tol: how far from ``point`` an elastic body's node may lie (m).

    Returns:
        The joint (not yet added to the model).

    Raises:
        ValueError: as :func:`revolute`.
    """
    return cast(Prismatic, _axial(Prismatic, "prismatic", model, body_a, body_b, point, axis,
                                  name, tol))


def spring(model: JointModel, body_a: Body | RigidBody, point_a: ArrayLike,
           body_b: Body | RigidBody | None, point_b: ArrayLike, *, stiffness: float,
           damping: float = 0.0, length: float | None = None, name: str | None = None,
           tol: float = 1e-8) -> Spring:
    """A :class:`~dolfinx_mbs.constraints.frame_joints.Spring` of ``model`` between
    ``point_a`` of ``body_a`` and ``point_b`` of ``body_b`` (see ``Model.spring``).

    Args:
        model: the model.
        body_a: the first body (Body or RigidBody).
        point_a: the point of ``body_a`` (global, at t = 0).
        body_b: the second body (None: the ground).
        point_b: the point of ``body_b`` (global, at t = 0).
        stiffness: k >= 0 (N/m).
        damping: c >= 0 (N s/m).
        length: the rest length L0 (default: the points' distance at t = 0).
        name: its name (default ``spring(a,b)``).
        tol: the distance within which an elastic body's node is taken at a point.

    Returns:
        The spring (not yet added to the model).

    Raises:
        ValueError: a body not of this model, the same body twice, coincident points, a
            negative or non-finite constant, a point with no node of an elastic body, a name
            taken.
    """
    _check_bodies(model, "spring", (body_a, body_b))
    if body_a is None:
        raise ValueError("spring: body_a must be a body of this model (body_b=None is the "
                         "ground)")
    if body_a is body_b:
        raise ValueError("spring: body_a and body_b must differ")
    pa = checks.point3(point_a, "point_a")
    pb = checks.point3(point_b, "point_b")
    name = name or f"spring({body_a.name},{'ground' if body_b is None else body_b.name})"
    if name in _names(model):
        raise ValueError(f"spring: the name {name!r} is taken (pass name=)")
    gdim = _gdim([b for b in (body_a, body_b) if b is not None])
    ja = joint_point(model, body_a, pa, name, tol)
    jb = joint_point(model, body_b, pb, name, tol)
    return Spring(ja, jb, gdim, stiffness=stiffness, damping=damping, length=length,
                  name=name)


def motor(model: JointModel, target: FrameJoint | ComputedFrame, *,
          angle: Callable | None = None, speed: Callable | None = None,
          torque: Callable | None = None, name: str | None = None) -> Motor:
    """A :class:`~dolfinx_mbs.constraints.frame_joints.Motor` of ``model`` on a 2D revolute
    joint or a hinge (see ``Model.motor``); its angle counts from the target's at t = 0.

    Args:
        model: the model.
        target: a 2D revolute joint of the model or one of its hinges.
        angle: ``angle(t)``, the rotation since t = 0 (rad).
        speed: ``speed(t)``, the rate of the rotation (rad/s).
        torque: ``torque(t, s)``, the torque on the joint's second body or the hinge's frame.
        name: the motor's name (default ``motor(<target>)``).

    Returns:
        The motor (not yet added to the model).

    Raises:
        ValueError: not exactly one of ``angle``, ``speed``, ``torque``; a target that is not
            a 2D revolute joint of the model or one of its hinges; a name taken.
    """
    if isinstance(target, FrameJoint):
        if all(target is not j for j in model.frame_joints):
            raise ValueError("motor: the joint is not part of this model")
        if not isinstance(target, Revolute) or target.gdim != 2:
            raise ValueError("motor: a joint motor drives a 2D revolute joint; drive a "
                             "3D rotation with a Hinge frame")
        angle0 = target.angle0
    elif isinstance(target, Hinge):
        if all(target is not f for f in model.frames):
            raise ValueError(f"frame must be a computed frame of this model (a Hinge or Free "
                             f"carrying one of its bodies), got {target!r}")
        angle0 = float(target.initial()[0][0])
    else:
        raise ValueError(f"motor: the target must be a revolute joint or a Hinge, got "
                         f"{target!r}")
    name = name or f"motor({getattr(target, 'name', 'joint')})"
    if name in _names(model):
        raise ValueError(f"motor: the name {name!r} is taken (pass name=)")
    return Motor(target, angle=angle, speed=speed, torque=torque, name=name, angle0=angle0)


def torsional_spring(model: JointModel, target: FrameJoint | ComputedFrame, *,
                     stiffness: float, damping: float = 0.0, angle: float = 0.0,
                     name: str | None = None) -> Motor:
    """A torsional spring and damper on a 2D revolute joint or a hinge: a torque
    :func:`motor` whose function is -k (theta - angle) - c theta' (see
    ``Model.torsional_spring``).

    Args:
        model: the model.
        target: the 2D revolute joint or the hinge.
        stiffness: k (N m/rad).
        damping: c (N m s/rad).
        angle: the unloaded angle, from the value at t = 0 (rad).
        name: the motor's name (default ``torsional spring(<target>)``).

    Returns:
        The motor (not yet added to the model).

    Raises:
        ValueError: a negative or non-finite constant; a target as :func:`motor` refuses.
    """
    k = checks.real(stiffness, "stiffness")
    c = checks.real(damping, "damping")
    a0 = checks.real(angle, "angle")
    if k < 0.0 or c < 0.0:
        raise ValueError(f"torsional_spring: stiffness and damping must be >= 0, got "
                         f"stiffness={k:g}, damping={c:g}")

    def torque(t: float, s: Any, k: float = k, c: float = c, a0: float = a0) -> float:
        return cast(float, -k * (s.angle - a0) - c * s.rate)
    return motor(model, target, torque=torque,
                 name=name or f"torsional spring({getattr(target, 'name', 'joint')})")


def springs_of(joints: Sequence[FrameJoint]) -> List[Spring]:
    """The springs among ``joints``, in their order.

    Args:
        joints: the model's joints and springs.

    Returns:
        The springs.
    """
    return [j for j in joints if isinstance(j, Spring)]


def frames_of(bodies: Sequence[Any], rigid_bodies: Sequence[Any]) -> List[ComputedFrame]:
    """The computed frames carrying ``bodies`` and ``rigid_bodies`` (``Model.frames``), each
    once, in the order of their unknowns: those of the elastic bodies, then of the rigid ones.

    Args:
        bodies: the model's elastic bodies.
        rigid_bodies: its rigid bodies.

    Returns:
        The computed frames.
    """
    out: List[ComputedFrame] = []
    for b in list(bodies) + list(rigid_bodies):
        if isinstance(b.frame, ComputedFrame) and all(b.frame is not f for f in out):
            out.append(b.frame)
    return out


def bind_frames(bodies: Sequence[Body], rigid_bodies: Sequence[RigidBody]) -> None:
    """Fix each computed frame's dimension by the bodies it carries; names unique.

    Args:
        bodies: the model's elastic bodies.
        rigid_bodies: its rigid bodies.

    Raises:
        ValueError: a frame carrying 2D and 3D bodies or bodies of another dimension than its
            ``dim``, a planar rigid body's inertia on a frame moving in 3D, a frame named as
            a body.
    """
    names = [b.name for b in list(bodies) + list(rigid_bodies)]
    frames = frames_of(bodies, rigid_bodies)
    given = {}
    for fr in frames:
        dims = {b.gdim for b in bodies if b.frame is fr}
        if len(dims) > 1:
            raise ValueError(f"frame {fr.name!r} carries 2D and 3D bodies: one dimension "
                             "per computed frame")
        dim = getattr(fr, "dim", None)
        if dims and dim is not None and dims != {dim}:
            raise ValueError(f"frame {fr.name!r}: dim={dim} but it carries "
                             f"{dims.pop()}D bodies")
        given[id(fr)] = dims.pop() if dims else dim
    # frames that carry rigid bodies only: planar when the rest of the model is
    known = {d for d in given.values() if d is not None}
    for fr in frames:
        d = given[id(fr)]
        axis = getattr(fr, "axis", None)
        if d is None:
            planar_ok = axis is None or np.abs(axis[:2]).max() < 1e-12
            d = 2 if known == {2} and planar_ok else 3
        fr.bind(d)
        axis = getattr(fr, "axis", None)
        turns_about_z = axis is not None and abs(abs(float(axis[2])) - 1.0) < 1e-12
        for rb in rigid_bodies:
            if rb.frame is fr and rb.planar_inertia and d == 3 and not turns_about_z:
                raise ValueError(
                    f"rigid body {rb.name!r}: inertia={float(rb.inertia[2, 2])!r} (a "
                    f"number) is the moment about z of a planar body, but its frame "
                    f"{fr.name!r} "
                    f"moves in 3D{'' if axis is None else ' about ' + str(axis.tolist())}:"
                    " give the 3x3 inertia tensor about the centre of mass")
        if fr.name in names:
            raise ValueError(f"the computed frame's name {fr.name!r} is also a body's: "
                             "results are keyed by name (pass name=)")
        names.append(fr.name)


def point_mass(model: JointModel, body: Body, point: ArrayLike, mass: float,
               name: str | None = None, tol: float = 1e-8) -> RigidBody:
    """The rigid body of ``Model.point_mass`` on its own Free frame, not yet in the model
    (which then adds it and joins it to the node by a revolute joint).

    Args:
        model: the model.
        body: the elastic body carrying the mass.
        point: the node's global position at t = 0 (m).
        mass: the mass (kg).
        name: the rigid body's name.
        tol: how far from ``point`` the node may lie (m).

    Returns:
        The rigid body (its frame named ``name + " frame"``).

    Raises:
        ValueError: a body not elastic or not of this model, a mass not positive and
            finite, a name taken, no node at the point.
    """
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.bodies.rigid import RigidBody
    from dolfinx_mbs.constraints.frame_points import start_state
    from dolfinx_mbs.frames.computed import Free
    if not isinstance(body, Body) or all(body is not b for b in model.bodies):
        raise ValueError(f"point_mass: body must be an elastic body of this model, got "
                         f"{getattr(body, 'name', body)!r}")
    m = checks.positive(mass, "mass")
    p = checks.point3(point, "point")
    taken = {b.name for b in list(model.bodies) + list(model.rigid_bodies)}
    taken |= {f.name for f in model.frames}
    name = name or f"point mass {len(model.rigid_bodies)}"
    if name in taken or name + " frame" in taken:
        raise ValueError(f"point_mass: the name {name!r} is taken (pass name=)")
    # the body's extent, without gathering its mesh: the largest of max - min and of
    # -(min) - (-max) over the ranks' coordinates, in one reduction
    x = body.mesh.geometry.x[:, :body.gdim]
    ext = np.concatenate([x.max(axis=0), -x.min(axis=0)]) if x.size else np.full(
        2 * body.gdim, -np.inf)
    body.comm.Allreduce(MPI.IN_PLACE, ext, op=MPI.MAX)
    size = float(np.max(ext[:body.gdim] + ext[body.gdim:])) or 1.0
    # locate the node first: a failed call leaves the model as it was
    joint_point(model, body, p, f"point_mass {name!r}", tol)
    # the point's velocity at t = 0 as the body's frame moves it (the joint's speeds then
    # fit without changing the others')
    st = start_state(body.frame)
    X = st.R.T @ (p - st.r_O)
    frame = Free(position=p, velocity=st.R @ (st.v_O + np.cross(st.omega, X)),
                 angular_velocity=st.R @ st.omega, name=name + " frame", dim=body.gdim)
    inertia = 1e-6 * m * size ** 2
    return RigidBody(mass=m, inertia=inertia if body.gdim == 2 else inertia * np.eye(3),
                     frame=frame, centre=(0.0, 0.0, 0.0), name=name)
