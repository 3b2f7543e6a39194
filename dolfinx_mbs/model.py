"""A model: bodies, their constraints, and the factory methods users call.

    model = Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    u = model.solve_static(t=0.0)               # a DOLFINx Function per body
    w = model.natural_frequencies(t=0.0, n=4)   # rad/s
    r = model.integrate(t_end=1.0, dt=1e-3)

The model owns the bodies and the constraints; what is made from them (the full operators,
:class:`dolfinx_mbs.assembly.Assembly`, the Maggi reducer of the holonomic constraints, the
typed systems per formulation, :meth:`system`) is one object,
:class:`dolfinx_mbs.static.derived.DerivedState` (``model.derived``), whose ``invalidate`` each
builder calls with what it changed. The builders are thin forwards to the parts that make
what they add (:mod:`~dolfinx_mbs.constraints.builders`,
:mod:`~dolfinx_mbs.constraints.frame_builders`, :mod:`~dolfinx_mbs.systems.frame_loads`,
:mod:`~dolfinx_mbs.rotors.parts`). The solves live in their own modules
(:mod:`~dolfinx_mbs.static`, :mod:`~dolfinx_mbs.modal`, :mod:`~dolfinx_mbs.integrate`,
:mod:`~dolfinx_mbs.campbell`, :mod:`~dolfinx_mbs.constraints.reactions`), which take a system,
never the model; the methods here only pick the system and pass it on.
"""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

import numpy as np
from dolfinx import fem
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import checks, lifetime
from dolfinx_mbs.assembly.full import Assembly
from dolfinx_mbs.assembly.space import FullSpace
from dolfinx_mbs.bodies.attachments import Bearing, Disk, Housing, Unbalance
from dolfinx_mbs.bodies.body import Body, name_bodies
from dolfinx_mbs.bodies.rigid import RigidBody
from dolfinx_mbs.campbell import harmonics as campbell_harmonics
from dolfinx_mbs.campbell import sweep as campbell_sweep
from dolfinx_mbs.constraints import base as cons
from dolfinx_mbs.constraints import builders, frame_builders, joints, reactions
from dolfinx_mbs.constraints.base import Clamp, Constraint
from dolfinx_mbs.constraints.frame_joints import (
    FrameJoint,
    Motor,
    Prismatic,
    Revolute,
    Spring,
)
from dolfinx_mbs.constraints.maggi import MaggiReducer
from dolfinx_mbs.constraints.rows import VelocityRows
from dolfinx_mbs.cyclic.condensed import HarmonicSpectrum
from dolfinx_mbs.cyclic.wheel import Wheel
from dolfinx_mbs.frames.computed import ComputedFrame
from dolfinx_mbs.integrate import model_run
from dolfinx_mbs.integrate import run as integration
from dolfinx_mbs.integrate.config import (
    Checkpoints,
    Constraints,
    Formulation,
    Initial,
    Observers,
    Output,
    RunConfig,
    Scheme,
    Solver,
    StabilityMode,
    StepperName,
    StepState,
)
from dolfinx_mbs.integrate.coupled import integrate_coupled
from dolfinx_mbs.modal import eigen as modal
from dolfinx_mbs.reduction.reduced_body import ReducedBody
from dolfinx_mbs.rotors import critical as rotor_critical
from dolfinx_mbs.rotors import parts as rotor_parts
from dolfinx_mbs.rotors import unbalance as rotor_unbalance
from dolfinx_mbs.static.derived import DerivedState
from dolfinx_mbs.static.solver import StaticSolver
from dolfinx_mbs.systems import frame_loads as load_builders
from dolfinx_mbs.systems.coupled import CoupledSystem, FrameLoad
from dolfinx_mbs.systems.multipliers import SaddlePoint
from dolfinx_mbs.systems.second_order import SecondOrderSystem
from dolfinx_mbs.systems.velocity import VelocitySystem

if TYPE_CHECKING:
    from dolfinx.mesh import MeshTags
    from numpy.typing import ArrayLike

    from dolfinx_mbs.bodies.loads import TimeVector
    from dolfinx_mbs.campbell.harmonics import CyclicCampbellTable
    from dolfinx_mbs.campbell.table import CampbellTable
    from dolfinx_mbs.integrate.driver import Result
    from dolfinx_mbs.rotors.critical import CriticalSpeedMap
    from dolfinx_mbs.rotors.unbalance import UnbalanceResponse

#: the typed systems :meth:`Model.system` makes (Hamilton's is a second-order one)
System = Union[SecondOrderSystem, VelocitySystem, SaddlePoint]

__all__ = ["Model"]

FORMULATIONS = integration.FORMULATIONS

_Attached = TypeVar("_Attached", Bearing, Disk, Unbalance)
_Added = TypeVar("_Added", bound=Constraint)
_Made = TypeVar("_Made")


class Model:
    """Elastic bodies in moving frames, with constraints.

    Args:
        bodies: the bodies (one or more, same MPI communicator).
        gravity: optional gravity acceleration fixed in the global frame (m/s^2).
    """

    def __init__(self, bodies: Sequence[Body | RigidBody],
                 gravity: Sequence[float] | None = None, comm: MPI.Comm | None = None) -> None:
        given = list(bodies) if not isinstance(bodies, (Body, RigidBody)) else [bodies]
        if not given or not all(isinstance(b, (Body, RigidBody)) for b in given):
            raise TypeError("bodies must be a non-empty list of dolfinx_mbs.Body or "
                            "dolfinx_mbs.RigidBody")
        if len({id(b) for b in given}) != len(given):
            raise ValueError("a body appears twice in the model")
        # the unnamed elastic bodies by their place here: body0, body1, ...
        name_bodies([b for b in given if isinstance(b, Body)])
        names = [b.name for b in given]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # the names label output files: one body's file would overwrite another's
            raise ValueError(f"bodies must have distinct names (pass name=), got {twice} "
                             "more than once")
        elastic = [b for b in given if isinstance(b, Body)]
        #: the rigid bodies (:class:`dolfinx_mbs.bodies.RigidBody`), beside the elastic ones
        self.rigid_bodies: List[RigidBody] = [b for b in given if isinstance(b, RigidBody)]
        #: the loads applied to computed frames (:meth:`apply_torque`, :meth:`apply_force`)
        self.frame_loads: List[FrameLoad] = []
        #: joints between computed frames (:meth:`revolute`, :meth:`prismatic`) and motors
        self.frame_joints: List[FrameJoint] = []
        self.motors: List[Motor] = []
        self.gravity = None if gravity is None else checks.point3(gravity, "gravity")
        #: the elastic bodies
        self.bodies: List[Body] = elastic
        #: the holonomic constraints
        self.constraints: List[Constraint] = []
        #: velocity rows (:meth:`constrain_velocity`), kept apart: not eliminated from Delta
        self.velocity_constraints: List[VelocityRows] = []
        self.comm = elastic[0].comm if elastic else (comm if comm is not None else MPI.COMM_WORLD)
        #: what is made from the bodies and constraints (space, assembly, reducer, systems,
        #: static solver, wheel), dropped by its ``invalidate`` when they change
        self.derived = DerivedState(elastic, self.constraints, self.velocity_constraints,
                                    self.frame_joints, self.comm)
        if gravity is not None:
            for b in elastic:
                b.set_gravity(gravity)
        frame_builders.bind_frames(self.bodies, self.rigid_bodies)
        wheel = self.derived.make_wheel(rigid=bool(self.rigid_bodies))
        if wheel is not None:  # its k = 0 rows are a constraint
            self._add(wheel.rows)
        if elastic:
            lifetime.adopt(self, elastic)  # (first destroys the PETSc garbage of models gone)

    @property
    def space(self) -> FullSpace | None:
        """The numbering of the elastic bodies' dofs as one vector (None: rigid bodies only)."""
        return self.derived.space

    @property
    def static(self) -> StaticSolver | None:
        """The static solves' KSP/SNES (options prefix ``mbs_static_``; None: rigid bodies
        only)."""
        return self.derived.static

    @property
    def wheel(self) -> Wheel | None:
        """The cyclic part (:class:`dolfinx_mbs.cyclic.Wheel`) when the bodies are sectors of a
        wheel (``Body(..., cyclic=)``), else None; its k = 0 rows are a constraint."""
        return self.derived.wheel

    # -- computed frames ---------------------------------------------------------------------
    @property
    def frames(self) -> List[ComputedFrame]:
        """The computed frames of the model (:mod:`dolfinx_mbs.frames.computed`), in the order
        of their unknowns: those of the bodies, then of the rigid bodies."""
        return frame_builders.frames_of(self.bodies, self.rigid_bodies)

    def attach(self, body: Body, where: Callable | None = None,
               facets: Tuple[MeshTags, int] | None = None,
               name: str | None = None) -> Clamp:
        """The elastic reference condition of ``body`` on its frame (docs/theory.md section
        8): the body is attached to the frame where ``where(x)`` holds (or on ``facets``),
        u = 0 there, so that its elastic field holds no rigid motion of the frame (a blade
        clamped to its hub). The same rows as :meth:`clamp`.

        Args:
            body: the elastic body.
            where: ``where(x)`` (x of shape (3, n), body coordinates) true at the attached nodes.
            facets: ``(meshtags, tag)`` of the attached facets instead.
            name: the constraint's name.

        Returns:
            The clamp added.
        """
        return self.clamp(body, where=where, facets=facets, name=name or f"attach {body.name}")

    def apply_torque(self, frame: ComputedFrame, torque: Callable | ArrayLike, local: bool = True,
                     name: str | None = None) -> FrameLoad:
        """Apply a torque to a computed frame: ``torque(t, s)`` returns a number (about a
        hinge's axis) or a 3-vector (local components, or global with ``local=False``);
        ``s`` is the frame's state (:class:`dolfinx_mbs.systems.coupled.FrameView`: ``angle``
        and ``rate`` of a hinge, ``R``, ``r_O``, ``omega``, ``v_O``). A motor curve, a PD
        controller: any function of time and state. Its values are checked finite.

        Args:
            frame: a computed frame of this model.
            torque: ``torque(t, s)``, or a constant.
            local: the vector's components are the frame's (else global).
            name: the load's name.

        Returns:
            The load added.

        Raises:
            ValueError: a frame that is not a computed frame of this model.
        """
        ld = load_builders.torque(self.frames, frame, torque, local, name)
        self.frame_loads.append(ld)
        self.derived.invalidate("frames")
        return ld

    def apply_force(self, frame: ComputedFrame, force: Callable,
                    point: Sequence[float] = (0.0, 0.0, 0.0),
                    local: bool = True, name: str | None = None) -> FrameLoad:
        """Apply a force ``force(t, s)`` (a 3-vector, local or global components) to a computed
        frame at ``point`` (frame coordinates).

        Args:
            frame: a computed frame of this model.
            force: ``force(t, s)``, ``s`` the frame's state as for :meth:`apply_torque`.
            point: the point of application (frame coordinates, m).
            local: the force's components are the frame's (else global).
            name: the load's name.

        Returns:
            The load added.

        Raises:
            ValueError: a frame that is not a computed frame of this model.
        """
        ld = load_builders.force(self.frames, frame, force, point, local, name)
        self.frame_loads.append(ld)
        self.derived.invalidate("frames")
        return ld

    # -- joints between computed frames (issue 29 part B) -----------------------------------
    def _add_joint(self, joint: FrameJoint) -> None:
        """Keep a joint or spring the builders made (the coupled system is made again)."""
        self.frame_joints.append(joint)
        self.derived.invalidate("frames")

    def revolute(self, body_a: Body | RigidBody | None, body_b: Body | RigidBody | None,
                 point: ArrayLike,
                 axis: Sequence[float] | None = None, name: str | None = None,
                 tol: float = 1e-8) -> Revolute:
        """A revolute joint at the global ``point`` (at t = 0) between ``body_a`` and
        ``body_b``, one of them on a computed frame: the points coincide (a node of an elastic
        body there, which moves with its deformation); in 3D the joint's ``axis`` (global at
        t = 0, fixed in both frames) stays aligned. See
        :mod:`dolfinx_mbs.constraints.frame_joints`.

        Args:
            body_a: a :class:`~dolfinx_mbs.Body`, a :class:`~dolfinx_mbs.RigidBody`, or None
                for the ground.
            body_b: the same kinds.
            point: the joint's point, global, at t = 0 (m).
            axis: the joint's axis in 3D (global at t = 0); in 2D z (None).
            name: the joint's name in ``Result.joints`` (default ``revolute(a,b)``).
            tol: how far from ``point`` an elastic body's node may lie (m).

        Returns:
            The joint (for :meth:`motor`); its force is in ``Result.joints[name].force`` (on
            ``body_b``, global components) and the position rows' largest value in
            ``.drift``.

        Raises:
            ValueError: a body not of this model, the same body twice, neither body on a
                computed frame, no node of an elastic body within ``tol``, a name taken, a 3D
                joint without ``axis``.
        """
        joint = frame_builders.revolute(self, body_a, body_b, point, axis=axis, name=name,
                                        tol=tol)
        self._add_joint(joint)
        return joint

    def prismatic(self, body_a: Body | RigidBody | None, body_b: Body | RigidBody | None,
                  point: Sequence[float],
                  axis: Sequence[float], name: str | None = None,
                  tol: float = 1e-8) -> Prismatic:
        """A prismatic joint: ``body_b``'s point at ``point`` slides along ``axis`` (global at
        t = 0, fixed in ``body_a``'s frame; ``body_a`` None: the ground) and the two frames
        keep their relative orientation (2D: 2 rows; 3D: 2 across the axis and 3 of the
        orientation).

        Args:
            body_a: as for :meth:`revolute` (None: a guide fixed in the ground).
            body_b: the body whose point slides.
            point: ``body_b``'s point on the guide, global, at t = 0 (m).
            axis: the guide's direction, global at t = 0.
            name: the joint's name in ``Result.joints``.
            tol: how far from ``point`` an elastic body's node may lie (m).

        Returns:
            The joint; ``Result.joints[name].drift`` is its position rows' largest value.

        Raises:
            ValueError: as :meth:`revolute` (a 3D joint without ``axis``).
        """
        joint = frame_builders.prismatic(self, body_a, body_b, point, axis=axis, name=name,
                                         tol=tol)
        self._add_joint(joint)
        return joint

    def spring(self, body_a: Body | RigidBody, point_a: Sequence[float],
               body_b: Body | RigidBody | None, point_b: Sequence[float], stiffness: float,
               damping: float = 0.0,
               length: float | None = None, name: str | None = None,
               tol: float = 1e-8) -> Spring:
        """A linear spring and damper between ``point_a`` of ``body_a`` and ``point_b`` of
        ``body_b`` (global points at t = 0; a Body's node there, which moves with its
        deformation, a RigidBody's point, or the ground for ``body_b=None``), on computed or
        prescribed frames alike. Its tension s = k (L - L0) + c L' acts along the line of the
        points (pulling them together when positive): the potential 1/2 k (L - L0)^2 and the
        dissipation 1/2 c L'^2. L = ``|r_a - r_b|`` is nonlinear in the points' positions: the
        spring acts in the coupled equations (:meth:`coupled_system`), so that a model with a
        spring integrates through :func:`dolfinx_mbs.integrate.coupled.integrate_coupled`
        even when all its frames are prescribed (see :meth:`integrate`), and the analyses
        about a state (:meth:`solve_static`, :meth:`natural_frequencies`, :meth:`modes`,
        :meth:`campbell`, the rotor analyses) refuse a model with springs.

            bar = mbs.Body(mesh, material, mbs.frames.ConstantSpin(rate=0.0), name="bar")
            model = mbs.Model([bar])
            model.clamp(bar, lambda x: np.isclose(x[0], 0.0))
            model.spring(bar, (1.0, 0.0), None, (1.2, 0.0), stiffness=5e6, name="tip")
            r = model.integrate(t_end=0.01, dt=1e-5, formulation="second-order")
            r.joints["tip"].tension, r.joints["tip"].length       # over r.times

        Args:
            body_a: the first body (Body or RigidBody).
            body_b: the second body (None: the ground).
            point_a: the point of ``body_a`` (global, at t = 0).
            point_b: the point of ``body_b`` (global, at t = 0); it must not coincide with
                ``point_a``.
            stiffness: k >= 0 (N/m).
            damping: c >= 0 (N s/m).
            length: the rest length L0 (default: the points' distance at t = 0).
            name: its name in ``Result.joints`` (``tension``, ``length``).
            tol: the distance within which an elastic body's node is taken at a point.

        Returns:
            The spring (a :class:`~dolfinx_mbs.constraints.frame_joints.Spring`).

        Raises:
            ValueError: a body not of this model, the same body twice, coincident points, a
                negative or non-finite constant, a point with no node of an elastic body, a
                name taken (the model is left as it was).
        """
        spring = frame_builders.spring(self, body_a, point_a, body_b, point_b,
                                       stiffness=stiffness, damping=damping, length=length,
                                       name=name, tol=tol)
        self.frame_joints.append(spring)
        self.derived.invalidate("springs")
        return spring

    @property
    def springs(self) -> List[Spring]:
        """The springs of the model (:meth:`spring`), in the order they were added."""
        return frame_builders.springs_of(self.frame_joints)

    def point_mass(self, body: Body, point: Sequence[float], mass: float, name: str | None = None,
                   tol: float = 1e-8) -> RigidBody:
        """A point mass at a node of an elastic ``body`` (the global ``point`` at t = 0): a
        :class:`~dolfinx_mbs.RigidBody` of ``mass`` on its own planar or spatial
        :class:`~dolfinx_mbs.frames.Free` frame, held to the node by a revolute joint (in 3D
        about z, which also keeps its orientation: a point mass has no rotary inertia, and its
        own is a millionth of m d^2, d the body's size, with no effect on the motion). The
        model becomes a coupled one (its steps solve the joint's rows); the mass follows the
        node's motion and deformation with its gravity and inertia.

        Args:
            body: the elastic body carrying the mass.
            point: the node's global position at t = 0 (m).
            mass: the mass (kg).
            name: the rigid body's name (its frame and joint are named after it).
            tol: how far from ``point`` the node may lie (m).

        Returns:
            The rigid body (its frame's motion is ``Result.frames[name + " frame"]``).

        Raises:
            ValueError: a body not elastic or not of this model, a mass not positive and
                finite, no node at the point.
        """
        rb = frame_builders.point_mass(self, body, point, mass, name=name, tol=tol)
        self.rigid_bodies.append(rb)
        try:
            frame_builders.bind_frames(self.bodies, self.rigid_bodies)
            self.revolute(body, rb, point=point,
                          axis=None if body.gdim == 2 else (0.0, 0.0, 1.0),
                          name=f"{rb.name} joint", tol=tol)
        except Exception:
            self.rigid_bodies.remove(rb)
            raise
        self.derived.invalidate("frames")
        return rb

    def torsional_spring(self, target: FrameJoint, stiffness: float, damping: float = 0.0,
                         angle: float = 0.0, name: str | None = None) -> Motor:
        """A torsional spring and damper on a 2D revolute joint (the bodies' relative rotation)
        or on a :class:`~dolfinx_mbs.frames.Hinge` (its angle): the torque
        -k (theta - angle) - c theta', theta counted from its value at t = 0. A torque
        :meth:`motor` whose function is the spring's.

        Args:
            target: the 2D revolute joint or the hinge.
            stiffness: k (N m/rad).
            damping: c (N m s/rad).
            angle: the unloaded angle, from the value at t = 0 (rad).
            name: the motor's name.

        Returns:
            The motor added.

        Raises:
            ValueError: a negative or non-finite constant; a target as :meth:`motor` refuses.
        """
        m = frame_builders.torsional_spring(self, target, stiffness=stiffness, damping=damping,
                                            angle=angle, name=name)
        self._add_motor(m)
        return m

    def motor(self, target: FrameJoint, angle: Callable | None = None,
              speed: Callable | None = None,
              torque: Callable | None = None, name: str | None = None) -> Motor:
        """A motor on a 2D revolute joint (the bodies' relative rotation) or on a
        :class:`~dolfinx_mbs.frames.Hinge` (its angle): ``angle(t)`` or ``speed(t)`` drives it
        (from its value at t = 0; the torque that does is reported in
        ``Result.joints[name].torque``), or ``torque(t, s)`` applies equal and opposite torques
        (``s.angle``, ``s.rate``: the relative rotation).

        Args:
            target: a 2D revolute joint of this model (:meth:`revolute`) or one of its hinges.
            angle: ``angle(t)``, the rotation since t = 0 (rad; ``angle(0)`` = 0).
            speed: ``speed(t)``, the rate of the rotation (rad/s).
            torque: ``torque(t, s)``, the torque on the joint's second body or the hinge's
                frame (N m; the first body, or the hinge's parent, gets its opposite).
            name: the motor's name in ``Result.joints`` (default ``motor(<target>)``).

        Returns:
            The motor.

        Raises:
            ValueError: not exactly one of ``angle``, ``speed``, ``torque``; a target that is not
                a 2D revolute joint of this model or one of its hinges; a name taken.
        """
        m = frame_builders.motor(self, target, angle=angle, speed=speed, torque=torque,
                                 name=name)
        self._add_motor(m)
        return m

    def _add_motor(self, m: Motor) -> None:
        """Keep a motor the builders made (the coupled system is made again)."""
        self.motors.append(m)
        self.derived.invalidate("frames")

    def coupled_system(self) -> CoupledSystem:
        """The coupled system of a model with computed frames or springs (made once, kept
        until the constraints or loads change). With springs and no computed frame its
        unknowns beside the elastic ones are the springs' force components alone.

        Returns:
            The :class:`~dolfinx_mbs.systems.coupled.CoupledSystem`.

        Raises:
            ValueError: no computed frame and no spring, velocity constraints, a computed
                frame carries no mass, a body on a computed frame has no reference condition,
                or a body there has its own mass or damping forms.
        """
        frames = self.frames
        if not frames and not self.springs:
            raise ValueError("the model has no computed frame (Hinge, Free) and no spring")
        return self.derived.coupled(frames, self.rigid_bodies, self.frame_loads, self.gravity,
                                    self.motors)

    # -- constraints ------------------------------------------------------------------------
    def _add(self, c: _Added) -> _Added:
        """Keep a constraint the builders made, under a name no other has."""
        c.name = builders.unique_name(c.name, {k.name for k in [*self.constraints,
                                                                *self.velocity_constraints]})
        if isinstance(c, VelocityRows):
            self.velocity_constraints.append(c)
            self.derived.invalidate("velocity rows")
        else:
            self.constraints.append(c)
            self.derived.invalidate("constraints")
        return c

    def clamp(self, body: Body, where: Callable | None = None,
              components: Sequence[int] | None = None, facets: Tuple[MeshTags, int] | None = None,
              name: str | None = None) -> Clamp:
        """Fix displacement components (default all) of ``body`` at the nodes where
        ``where(x)`` holds (x of shape (3, n)), or on ``facets=(meshtags, tag)``.

        Args:
            body: the elastic body.
            where: ``where(x)`` true at the clamped nodes.
            components: the components fixed (default all).
            facets: ``(meshtags, tag)`` of the clamped facets instead.
            name: the constraint's name.

        Returns:
            The clamp added.
        """
        return self._add(builders.clamp(self, body, where, components, facets, name))

    def prescribe(self, body: Body, value: ArrayLike | Callable[[float], ArrayLike],
                  where: Callable | None = None, facets: Tuple[MeshTags, int] | None = None,
                  components: Sequence[int] | None = None, time_scale: float = 1.0,
                  name: str | None = None) -> cons.Prescribed:
        """Prescribe the displacement u = g(t) (body-frame components, m) of ``body`` where
        ``where(x)`` holds or on ``facets``: ``value`` is a gdim-vector or ``t -> vector``
        (differentiated numerically with error control; ``time_scale`` is the shortest time
        over which it changes). Only ``components`` (default all) are prescribed.

        Args:
            body: the elastic body.
            value: g: a gdim-vector or ``t -> vector`` (m).
            where: ``where(x)`` true at the nodes prescribed.
            facets: ``(meshtags, tag)`` of their facets instead.
            components: the components prescribed (default all).
            time_scale: the shortest time over which g changes (s).
            name: the constraint's name.

        Returns:
            The constraint added.
        """
        return self._add(builders.prescribe(self, body, value, where, facets, components,
                                            time_scale, name))

    def tie(self, body_a: Body, body_b: Body, where: Callable | None = None,
            tol: float = 1e-8, name: str | None = None,
            facets: Tuple[Tuple[MeshTags, int], Tuple[MeshTags, int]] | None = None,
            where_b: Callable | None = None, same_motion: bool = False) -> joints.Joint:
        """Tie the interface nodes of ``body_b`` to those of ``body_a`` at the same global
        position (at t = 0), selected by ``where(x)`` on local coordinates (``where_b`` on b's,
        if they differ) or by ``facets=((tags_a, tag_a), (tags_b, tag_b))``, each mesh's facet
        tags: see :func:`dolfinx_mbs.constraints.joints.tie`. Bodies in different frames are joined
        in the global frame (rheonomic rows; constant ones with ``same_motion=True``, for element
        frames of one rigid motion).

        Args:
            body_a: the first body.
            body_b: the second body (not ``body_a``).
            where: ``where(x)`` true at the interface nodes (local coordinates).
            tol: how far apart two tied nodes may lie (m).
            name: the constraint's name.
            facets: ``((tags_a, tag_a), (tags_b, tag_b))`` instead of ``where``.
            where_b: ``where`` on ``body_b``'s coordinates, where they differ.
            same_motion: the bodies' frames share one rigid motion (constant rows).

        Returns:
            The joint added.

        Raises:
            ValueError: the same body twice.
        """
        return self._add(builders.tie(self, body_a, body_b, where, tol, name, facets, where_b,
                                      same_motion))

    def pin(self, body_a: Body | None, body_b: Body, point: Sequence[float], tol: float = 1e-8,
            name: str | None = None) -> joints.Joint:
        """A pin at the global ``point`` (position at t = 0) between a node of ``body_a`` (None:
        the ground) and a node of ``body_b``: same global position at all times (a revolute
        joint in 2D, a spherical joint in 3D).

        Args:
            body_a: the first body, or None for the ground.
            body_b: the second body.
            point: the global position at t = 0 (m).
            tol: how far from ``point`` the nodes may lie (m).
            name: the constraint's name.

        Returns:
            The joint added.

        Raises:
            ValueError: the same body twice.
        """
        return self._add(builders.pin(self, body_a, body_b, point, tol, name))

    def slider(self, body: Body, point: Sequence[float], axis: Sequence[float],
               tol: float = 1e-8,
               name: str | None = None) -> joints.Slider:
        """The node of ``body`` at the global ``point`` (at t = 0) stays on the fixed global
        line through it along ``axis`` (a prismatic support on the ground).

        Args:
            body: the elastic body.
            point: the node's global position at t = 0 (m).
            axis: the line's direction (global).
            tol: how far from ``point`` the node may lie (m).
            name: the constraint's name.

        Returns:
            The slider added.
        """
        return self._add(builders.slider(self, body, point, axis, tol, name))

    def rigid(self, body: Body, where: Callable | None = None,
              facets: Tuple[MeshTags, int] | None = None,
              name: str | None = None) -> joints.RigidRegion:
        """Make the nodes of ``body`` where ``where(x)`` holds (or on ``facets``) move as one
        rigid body (RBE2-like).

        Args:
            body: the elastic body.
            where: ``where(x)`` true at the region's nodes.
            facets: ``(meshtags, tag)`` of the region's facets instead.
            name: the constraint's name.

        Returns:
            The rigid region added.
        """
        return self._add(builders.rigid(self, body, where, facets, name))

    def constrain(self, rows: Sequence[Mapping[int, float | Callable[[float], float]]],
                  rhs: ArrayLike | Callable[[float], ArrayLike] | None = None,
                  body: Body | None = None, time_scale: float = 1.0,
                  name: str | None = None) -> Constraint:
        """Add general constraint rows ``B Delta = c(t)`` (``B Delta' + b = 0`` with
        b = -c'), a DOLFINx ``DirichletBC`` (on ``body``'s space; ``body`` may be omitted for a
        one-body model), or a ready :class:`dolfinx_mbs.constraints.Constraint`.

        Args:
            rows: a sequence of ``{full_index: coefficient}`` dicts (full indices from
                :meth:`dof`), given identically on every rank; or a DirichletBC; or a
                Constraint.
            rhs: c: None (zeros), numbers, or ``t -> numbers``.
            body: the body whose space a DirichletBC is on (may be omitted in a one-body
                model).
            time_scale: the shortest time over which c(t) changes (s), for its numerical time
                derivatives.
            name: label for messages.

        Returns:
            The constraint added.
        """
        return self._add(builders.constrain(self, rows, rhs, body, time_scale, name))

    def constrain_velocity(self, rows: Sequence[Mapping[int, float | Callable[[float], float]]],
                           rhs: ArrayLike | Callable[[float], ArrayLike] | None = None,
                           time_scale: float = 1.0,
                           name: str | None = None) -> VelocityRows:
        """Add velocity constraint rows ``B(t) Delta' = c(t)`` (``docs/theory.md`` section 5),
        nonholonomic ones included. They are not eliminated from the coordinates: the
        integrator's first-order form then runs on (q, w), w the independent velocities
        (:mod:`dolfinx_mbs.systems.velocity`), without multipliers.

        Args:
            rows: a sequence of ``{full_index: coefficient}`` dicts (full indices from
                :meth:`dof`), given identically on every rank; a coefficient is a number or a
                callable ``t -> number`` (B(t)), e.g. ``{i: 1.0, j: lambda t: -np.sin(t)}``.
            rhs: c: None (zeros), numbers, or ``t -> numbers``.
            time_scale: the shortest time over which B(t) or c(t) changes (s), for their
                numerical time derivatives.
            name: label for messages.

        Supported by ``integrate(..., formulation="first-order")``, by the modal solvers for
        rows with constant coefficients, and by :meth:`solve_static` when c vanishes;
        holonomic constraints with a moving basis (joints between bodies whose frames move
        differently) cannot be combined with them.
        """
        return self._add(builders.velocity_rows(self, rows, rhs, time_scale, name))

    def dof(self, body: Body, point: Sequence[float], component: int, tol: float = 1e-8) -> int:
        """Full global index (the same on every rank) of displacement ``component`` of the
        node of ``body`` at ``point`` (body-frame coordinates).

        Args:
            body: the elastic body.
            point: the node's position (body-frame coordinates, m).
            component: the displacement component.
            tol: how far from ``point`` the node may lie (m).

        Returns:
            The full index.
        """
        builders.check_body(self, body)
        return self.derived.elastic_space.dof(self.bodies.index(body), point, component, tol)

    def apply_load(self, body: Body, body_force: TimeVector | None = None,
                   traction: TimeVector | None = None, where: Callable | None = None,
                   facets: Tuple[MeshTags, int] | None = None, point: Sequence[float] | None = None,
                   force: TimeVector | None = None, local: bool = True) -> None:
        """Apply a load to ``body``.

        Give one of

        * ``body_force=f`` (N/m^3),
        * ``traction=t`` (N/m^2) with ``where=`` (predicate on facet midpoints) or
          ``facets=(meshtags, tag)``,
        * ``point=(x, y[, z])`` and ``force=F`` (N, at a mesh node),

        each a constant vector or a function of time ``t -> vector``, in the body's local
        components unless ``local=False`` (then global components, rotated with the frame).

        Args:
            body: the elastic body.
            body_force: a body force (N/m^3).
            traction: a traction (N/m^2).
            where: the traction's facets: a predicate on facet midpoints.
            facets: the traction's facets: ``(meshtags, tag)``.
            point: the point load's node (body coordinates, m).
            force: the point load (N).
            local: the vectors' components are the body's (else global).
        """
        builders.check_body(self, body)
        body.apply_load(body_force, traction, where, facets, point, force, local)
        self.derived.invalidate("loads")  # the load forms changed

    def reduce(self, body: Body, modes: int | None = 20, method: str = "craig-bampton",
               **options: Any) -> ReducedBody:
        """Reduce ``body`` to ``modes`` modes (``"craig-bampton"`` or ``"modal"``), made at the
        first solve (again when constraints or loads change); the solves then work on it,
        constraints kept. Returns its :class:`~dolfinx_mbs.reduction.reduced_body.ReducedBody`
        (which documents the ``options``: ``cutoff``, ``t``, ``residual``, ``derivatives``).

        Args:
            body: the elastic body.
            modes: the number of modes.
            method: ``"craig-bampton"`` or ``"modal"``.
            **options: the reduction's options (``cutoff``, ``t``, ``residual``,
                ``derivatives``: the static modal derivatives of the lowest modes, for a body
                with ``stiffening="nonlinear"``).

        Returns:
            The :class:`~dolfinx_mbs.reduction.reduced_body.ReducedBody`.
        """
        builders.check_body(self, body)
        reduced = ReducedBody(body, modes, method, **options)
        self.derived.reduced[self.bodies.index(body)] = reduced
        self.derived.invalidate("reduction")   # strategy "basis"
        return reduced

    @property
    def system_reducer(self) -> MaggiReducer:
        """The systems' reducer: :attr:`reducer`, or the shapes of reduced bodies composed
        with it (:class:`~dolfinx_mbs.reduction.basis_reducer.BasisReducer`)."""
        return self.derived.system_reducer

    # -- what is made from bodies and constraints ---------------------------------------------
    @property
    def assembly(self) -> Assembly:
        """The bodies' full operators (made on first use, again after :meth:`apply_load`)."""
        return self.derived.assembly

    @property
    def reducer(self) -> MaggiReducer:
        """The Maggi reducer of the current holonomic constraints (made on first use)."""
        return self.derived.reducer

    @property
    def nonlinear(self) -> bool:
        """True when a body has ``stiffening="nonlinear"``: the equations of motion and the
        static equilibrium are then solved by Newton's method."""
        return self.derived.nonlinear

    def system(self, formulation: str = "second-order", constraints: str = "maggi") -> System:
        """The typed system that ``formulation`` integrates (made once, kept until the
        constraints or loads change): a :class:`~dolfinx_mbs.systems.SecondOrderSystem`
        (``"second-order"``, ``"first-order"``), :class:`~dolfinx_mbs.systems.hamilton.
        HamiltonSystem` (``"hamiltonian"``), :class:`~dolfinx_mbs.systems.velocity.VelocitySystem`
        (with velocity constraints) or, with ``constraints="multipliers"``,
        :class:`~dolfinx_mbs.systems.multipliers.SaddlePoint`.

        Args:
            formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
            constraints: ``"maggi"`` or ``"multipliers"``.

        Returns:
            The typed system.

        Raises:
            ValueError: an unknown formulation or a combination the formulations do not take.
        """
        return self.derived.system(formulation, constraints)

    def _second_order(self) -> SecondOrderSystem:
        """The holonomically reduced second-order system (also under velocity constraints)."""
        return self.derived.second_order()

    @property
    def velocity_system(self) -> VelocitySystem | None:
        """The (q, w) system of the velocity constraints, None without them."""
        if not self.velocity_constraints:
            return None
        self.derived.check_choice("first-order", "maggi")  # then system("first-order") is it
        return self.derived.velocity()

    @property
    def saddle_point(self) -> SaddlePoint:
        """The Lagrange-multiplier form of the constraints (comparison with the reducer)."""
        self.derived.check_choice("second-order", "multipliers")
        return self.derived.saddle_point()

    def functions(self) -> List[fem.Function]:
        """The bodies' displacement Functions (``body.u``)."""
        return [b.u for b in self.bodies]

    # -- the solves: each in its module, on a system ---------------------------------------------
    def solve_static(self, t: float = 0.0) -> List[fem.Function]:
        """The steady deformation under the loads of the frame state at ``t`` (centrifugal,
        Euler, base acceleration, gravity, applied loads), spin softening included:
        (K + K_omega + K_alpha) u = Q on the constrained system (Newton's method with
        nonlinear strain; :class:`dolfinx_mbs.static.StaticSolver`).

        Args:
            t: the time of the frame state and loads (s).

        Returns:
            One DOLFINx Function per body (also stored as ``body.u``).

        Raises:
            ValueError: velocity constraints that demand a nonzero velocity at ``t``; springs
                (:meth:`spring`: their stiffness is not in the static operators).
            RuntimeError: when the solve fails (e.g. an unconstrained body, or a spin at or
                above the divergence speed makes the operator singular).
        """
        self.derived.refuse_springs("solve_static")
        self.derived.solve_static(checks.real(t, "t"))
        return self.functions()

    @property
    def last_newton_iterations(self) -> int:
        """Newton iterations of the last nonlinear static solve."""
        return self.derived.static_solver.newton_iterations

    def natural_frequencies(self, t: float = 0.0, n: int = 4, gyroscopic: bool = False,
                            shift: float = 0.0, harmonic: int | None = None) -> np.ndarray:
        """The ``n`` lowest natural frequencies (rad/s) about the frame state at ``t``: see
        :func:`dolfinx_mbs.modal.natural_frequencies`.

        Args:
            t: the time of the frame state (s).
            n: how many.
            gyroscopic: include the Coriolis coupling (quadratic eigenproblem) or not.
            shift: the shift-and-invert target (rad^2/s^2 without the Coriolis coupling,
                rad/s with it).
            harmonic: for a cyclic model (sector bodies, ``Body(..., cyclic=)``), the
                harmonic index (nodal diameter) k in 0 ... floor(N/2) (None: 0, the model's
                own constraints). For 0 < k < N/2 each frequency of the whole wheel's pair
                appears (twice at rest; the forward and backward travelling waves apart with
                the Coriolis coupling): :meth:`harmonic_system`.

        Returns:
            Signed frequencies (rad/s; a negative value -s: a divergent mode of growth
            rate s).

        Raises:
            ValueError: the model has springs (:meth:`spring`), whose stiffness the
                eigenproblem does not include; ``harmonic`` for a model that is not cyclic
                or outside 0 ... floor(N/2).
        """
        self.derived.refuse_springs("natural_frequencies")
        system = (self.derived.modal_system() if harmonic is None
                  else self.harmonic_system(harmonic))
        return modal.natural_frequencies(system, t, n, gyroscopic, shift)

    def harmonic_frequencies(self, t: float = 0.0, n: int = 6, harmonics: Any = "all",
                             method: str = "auto") -> HarmonicSpectrum:
        """The ``n`` lowest natural frequencies (rad/s, without the Coriolis coupling) of
        several harmonic indices (nodal diameters) of a cyclic model at once: the same numbers
        as :meth:`natural_frequencies` with ``harmonic=k`` for each k, from one factorization
        of the sector (:mod:`dolfinx_mbs.cyclic.condensed`: its cut faces condensed once, a
        dense face operator per index, Lanczos for all indices in lock step).

        ::

            s = model.harmonic_frequencies(n=6)           # every k = 0 ... floor(N/2)
            s.frequencies[j]                              # rad/s of s.harmonic[j]
            s[3], s.method                                # k = 3's; "condensed" per index

        Where the condensed method does not apply (nonlinear strain, cut-face nodes partly
        constrained or tied, a divergent mode, no convergence) the index's own two-copy
        system solves it (``s.method``, ``s.reason`` say so).

        Args:
            t: the time of the frame state (s).
            n: how many frequencies of each index.
            harmonics: ``"all"`` (k = 0 ... floor(N/2)), an index or a list of them.
            method: ``"auto"`` (condensed where it applies), ``"condensed"`` (an error where
                it does not) or ``"two-copy"`` (each index's own system).

        Returns:
            The :class:`~dolfinx_mbs.cyclic.condensed.HarmonicSpectrum`.

        Raises:
            ValueError: the model is not cyclic or has springs, a bad ``harmonics``, ``n`` or
                ``method``; with ``method="condensed"``, where it does not apply.
        """
        self.derived.refuse_springs("harmonic_frequencies")
        ks = self.derived.cyclic("harmonic_frequencies").harmonics(harmonics)
        t = checks.real(t, "t")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"harmonic_frequencies: n must be a positive integer, got {n!r}")
        if method not in ("auto", "condensed", "two-copy"):
            raise ValueError("harmonic_frequencies: method must be 'auto', 'condensed' or "
                             f"'two-copy', got {method!r}")
        found: Dict[int, np.ndarray] = {}
        reason: str | None = "method='two-copy'"
        if method != "two-copy":
            found, reason = self.derived.condensed_frequencies(t, int(n), ks)
            if method == "condensed" and reason is not None:
                raise ValueError(f"harmonic_frequencies: the condensed method does not apply: "
                                 f"{reason}")
        rows, used = [], []
        for k in ks:
            if k in found:
                rows.append(found[k])
                used.append("condensed")
            else:
                rows.append(self.natural_frequencies(t, int(n), harmonic=k))
                used.append("two-copy")
        return HarmonicSpectrum(np.array(ks), np.array(rows), tuple(used), reason)

    def modes(self, t: float = 0.0, n: int = 6, damping: bool = True, shift: float = 0.0,
              output: str | None = None, shapes: bool = False,
              harmonic: int | None = None) -> "modal.ModalResult":
        """Complex modes about the frame state at ``t`` (a :class:`dolfinx_mbs.modal.ModalResult`):
        see :func:`dolfinx_mbs.modal.modes`; ``shapes=True`` keeps the shapes as Functions
        for :mod:`dolfinx_mbs.plot`.

        Args:
            t: the time of the frame state (s).
            n: how many.
            damping: include the materials' damping.
            shift: the real shift-and-invert target (1/s) of the stable modes.
            output: a file stem for the shapes, or None. With ``harmonic`` the shapes
                expanded to the whole wheel (:meth:`expand`), ``<output>_<body>.bp``.
            shapes: keep the shapes as Functions. With ``harmonic`` 0 < k < N/2 each shape
                holds a (re, im) pair per body and copy, the cosine copies first
                (:meth:`expand` takes it).
            harmonic: for a cyclic model, the harmonic index (None: 0), as for
                :meth:`natural_frequencies`.

        Returns:
            The :class:`dolfinx_mbs.modal.ModalResult`.

        Raises:
            ValueError: the model has springs (:meth:`spring`); a bad ``harmonic``.
        """
        self.derived.refuse_springs("modes")
        if harmonic is None:
            return modal.modes(self.derived.modal_system(), t, n, damping, shift, output, shapes)
        system = self.harmonic_system(harmonic)
        result = modal.modes(system, t, n, damping, shift, None, shapes or output is not None)
        if output is not None:
            assert self.wheel is not None and result.shapes is not None  # (a cyclic model's)
            self.wheel.write_modes(output, result.shapes, harmonic)
            if not shapes:
                result.shapes = None
        return result

    # -- cyclic models (sector bodies: dolfinx_mbs.cyclic) ------------------------------------
    def harmonic_system(self, k: int) -> SecondOrderSystem:
        """The system of harmonic index (nodal diameter) ``k`` of a cyclic model (made once,
        kept until the constraints or loads change): for k = 0 the model's own
        (:meth:`system`), for k = N/2 the sector with the cut's rows u_high = -R u_low, for
        0 < k < N/2 two copies of it, cosine and sine (``docs/theory.md`` section 10,
        :mod:`dolfinx_mbs.cyclic`). Its eigenproblems (:mod:`dolfinx_mbs.modal`,
        :mod:`dolfinx_mbs.campbell`) are those of the whole wheel's modes of k nodal
        diameters.

        Args:
            k: the harmonic index, 0 ... floor(N/2).

        Returns:
            The typed system.

        Raises:
            ValueError: the model is not cyclic, or ``k`` is outside 0 ... floor(N/2).
        """
        return self.derived.harmonic_system(k)

    def expand(self, mode: Any, harmonic: int = 0) -> list:
        """A sector's field or mode of harmonic index ``harmonic`` on the whole wheel: each
        sector j is the reference sector turned by j 2 pi / N with the phase j k 2 pi / N
        (``docs/theory.md`` section 10), on a mesh of the whole wheel made from the sector's
        (:class:`dolfinx_mbs.cyclic.WheelMesh`, made once per body), for output (VTX/ParaView
        through :class:`dolfinx_mbs.io.FieldFile`) and pictures (:mod:`dolfinx_mbs.plot`).
        Collective.

            m = model.modes(n=6, harmonic=3, shapes=True)
            (u_re, u_im), = model.expand(m.shapes[0], harmonic=3)
            mbs.plot.mode_shapes([[(u_re, u_im)]], "wheel.png")

        Args:
            mode: one entry of ``modes(..., harmonic=k, shapes=True).shapes`` (a (re, im) pair
                per body and copy), or Functions of the bodies (for 0 < k < N/2 the cosine
                parts, then the sine parts), e.g. ``solve_static()``'s with ``harmonic=0``.
            harmonic: the harmonic index k.

        Returns:
            Per body a (re, im) pair of Functions on the wheel (from a mode) or a Function
            (from Functions), in the vector Lagrange space of the mesh's coordinate degree.

        Raises:
            ValueError: the model is not cyclic, a bad ``harmonic``, or ``mode`` of the wrong
                length.
        """
        return self.derived.cyclic("expand").expand(mode, harmonic)

    def reactions(self, forces: PETSc.Vec | None = None, t: float = 0.0,
                  constraints: Sequence[Constraint] | None = None,
                  frame: bool = False) -> reactions.Reactions:
        """Resultant force of each constraint on its body (global components, N; with
        ``frame=True`` the body frame's): see
        :func:`dolfinx_mbs.constraints.reactions.resultants`. ``forces`` default: the
        constraint forces of the static state in ``body.u`` at ``t``.

        Args:
            forces: the constraint forces (full layout), or None.
            t: the time (s).
            constraints: the constraints (default all).
            frame: the body frame's components (else global).

        Returns:
            The :class:`~dolfinx_mbs.constraints.reactions.Reactions`: by constraint name
            (``r[name]``), the resultant force.

        Raises:
            ValueError: ``forces`` None in a model with springs (:meth:`spring`), whose
                forces the static state leaves out.
        """
        if forces is None:
            self.derived.refuse_springs("reactions (of the static state)")
            forces = self.derived.static_forces(t)
        return reactions.resultants(self.derived.elastic_space, forces, t,
                                    constraints if constraints is not None
                                    else self.constraints, frame=frame)

    def integrate(self, t_end: float | RunConfig, dt: float | None = None,
                  formulation: Formulation | None = None, constraints: Constraints = "maggi",
                  *, t0: float = 0.0, u0: Any = None, v0: Any = None, p0: Any = None,
                  probes: Sequence[Any] = (), output: str | None = None, output_every: int = 1,
                  spectral_radius: float | None = None, progress: bool = True,
                  options: Mapping[str, object] | None = None, prefix: str = "mbs_",
                  reactions: bool | Sequence[Any] = False, energy: bool = True,
                  callback: Callable[[StepState], object] | None = None,
                  checkpoint_every: int | None = None, restart: bool = False,
                  stability: StabilityMode = "warn", stepper: StepperName = "auto",
                  load_degree: int = 2, load_frequencies: Sequence[float] = (),
                  drives: bool = False) -> Result:
        """Integrate the equations of motion in time with PETSc TS on the system of
        ``formulation`` (:meth:`system`): see :func:`dolfinx_mbs.integrate.integrate` for the
        arguments and the returned result. The keywords are the short form of a
        :class:`dolfinx_mbs.integrate.RunConfig`, which may be given instead, whole:
        ``model.integrate(RunConfig(t_end=1.0, dt=1e-3, scheme=Scheme(spectral_radius=0.8)))``
        (then no other argument). ``callback(state)`` gets a
        :class:`dolfinx_mbs.integrate.StepState` at every output step on either path (``t``,
        ``u`` and ``v`` with prescribed frames, ``frames`` with computed ones; the older
        ``callback(t, u, v)`` and ``callback(t, frames)`` still work, with a
        ``DeprecationWarning``). With ``drives=True`` the force and torque that
        drive each prescribed frame are recorded (``Result.frames``). A model with computed
        frames (:class:`~dolfinx_mbs.frames.Hinge`, :class:`~dolfinx_mbs.frames.Free`) runs
        the coupled equations instead (:meth:`coupled_system`,
        :func:`dolfinx_mbs.integrate.coupled.integrate_coupled`: its arguments, and
        ``Result.frames``, ``Result.momentum``; with joints or driven motors ``formulation``
        defaults to ``"first-order"``, whose steps keep the joints closed to round-off;
        ``checkpoint_every`` and ``restart`` write and continue its checkpoints, the frame
        unknowns with the elastic state, :mod:`dolfinx_mbs.integrate.checkpoint`).
        So does a model with springs (:meth:`spring`) whose frames are all prescribed: the
        coupled equations with the springs' forces as their only unknowns beside the elastic
        ones, ``formulation`` ``"second-order"`` (generalized-alpha), ``"first-order"``
        (BDF2, the default with springs) or ``"hamiltonian"`` (the implicit midpoint rule on
        Hamilton's form), ``integrate_coupled``'s arguments (not the
        ``constraints``, ``drives`` or stepper choices of the prescribed-frame path), and
        ``Result.joints[name].tension`` and ``.length`` of each spring, ``Result.energy``
        (whose ``elastic`` holds the springs' potential 1/2 k (L - L0)^2) and
        ``Result.momentum``; ``Result.frames`` is empty.
        ``formulation`` default otherwise: ``"second-order"``. Bearings with a fluid film
        (:meth:`bearing` with ``journal=``) apply the film's nonlinear force at the
        journals' motion at every Newton iterate (:mod:`dolfinx_mbs.systems.films`;
        second-order form on PETSc TS; ``Result.journals``).

        Args:
            t_end: the final time (s), or a whole :class:`~dolfinx_mbs.integrate.RunConfig`.
            dt: the step (s).
            formulation: the formulation, or None for the default.
            constraints: ``"maggi"`` or ``"multipliers"``.
            t0: see :func:`dolfinx_mbs.integrate.integrate` (the ``RunConfig`` part
                that holds each keyword is named there).
            u0: as ``t0``.
            v0: as ``t0``.
            p0: as ``t0``.
            probes: as ``t0``.
            output: as ``t0``.
            output_every: as ``t0``.
            spectral_radius: as ``t0``.
            progress: as ``t0``.
            options: as ``t0``.
            prefix: as ``t0``.
            reactions: as ``t0``.
            energy: as ``t0``.
            callback: ``callback(state)``, as ``t0``.
            checkpoint_every: as ``t0``.
            restart: as ``t0``.
            stability: as ``t0``.
            stepper: as ``t0``.
            load_degree: as ``t0``.
            load_frequencies: as ``t0``.
            drives: as above.

        Returns:
            The run's :class:`~dolfinx_mbs.integrate.Result`.

        Raises:
            ValueError: bad arguments (on every rank); a ``RunConfig`` given with other
                arguments.
        """
        config = model_run.config_of(
            t_end, dt, Scheme(formulation=formulation, constraints=constraints,
                              spectral_radius=spectral_radius, stepper=stepper,
                              load_degree=load_degree, load_frequencies=load_frequencies),
            Initial(t0=t0, u0=u0, v0=v0, p0=p0),
            Output(stem=output, every=output_every, progress=progress),
            Checkpoints(every=checkpoint_every, restart=restart),
            Solver(options=options, prefix=prefix),
            Observers(probes=probes, energy=energy, reactions=reactions, callback=callback,
                      stability=stability, drives=drives))
        coupled = model_run.coupled(self, config)
        if coupled is not None:
            return integrate_coupled(coupled, config)
        system, drives_of = model_run.prescribed(self, config)
        return integration.integrate(system, config, drives_of)

    def campbell(self, speeds: Sequence[float], n: int = 6, harmonics: Any = None,
                 **kwargs: Any) -> CampbellTable | CyclicCampbellTable:
        """The Campbell diagram over the spin ``speeds`` (rad/s) of the bodies in ConstantSpin
        or Stationary frames, or on a computed Hinge on the ground (held at the angle a run
        left it at, turning steadily at each speed): see
        :func:`dolfinx_mbs.campbell.sweep.campbell` (the function of the
        :mod:`dolfinx_mbs.campbell` subpackage) for the arguments and the returned table.

        Args:
            speeds: the spin speeds (rad/s).
            n: how many modes at each speed.
            harmonics: for a cyclic model, ``"all"`` (k = 0 ... floor(N/2)), a harmonic index
                or a list of them: a :class:`dolfinx_mbs.campbell.CyclicCampbellTable`
                (``frequencies[speed, k, mode]``, ``harmonic``, the travelling direction) of
                one sweep per index (:func:`dolfinx_mbs.campbell.harmonic_campbell`). None: the
                model's own system (k = 0 for a cyclic one).
            **kwargs: :func:`dolfinx_mbs.campbell.sweep.campbell`'s other arguments.

        Returns:
            The Campbell table (with ``harmonics``: the cyclic table).

        Raises:
            ValueError: the model has velocity constraints, or springs (:meth:`spring`);
                ``harmonics`` for a model that is not cyclic, or an index outside
                0 ... floor(N/2).
        """
        self.derived.refuse_springs("campbell")
        if self.velocity_constraints:
            raise ValueError("campbell: velocity constraints (Model.constrain_velocity) are not "
                             "supported; natural_frequencies and modes handle constant ones")
        if harmonics is not None:
            wheel = self.derived.cyclic("campbell")
            ks = wheel.harmonics(harmonics)
            return campbell_harmonics.harmonic_campbell(
                self.harmonic_system, speeds, wheel.n_sectors, n=n, harmonics=ks, **kwargs)
        return campbell_sweep.campbell(self._second_order(), speeds, n=n, **kwargs)

    # -- rotors: bearings, disks and their analyses (dolfinx_mbs.rotors) -------------------------
    def _attach(self, a: _Attached) -> _Attached:
        a.body.attachments.append(a)
        if isinstance(a, Bearing) and a.other is not None:  # the housing's body
            a.other.housings.append(a)
        self.derived.invalidate("attachments")  # the bodies' matrices change pattern
        return a

    def bearing(self, body: Body, facets: Tuple[MeshTags, int] | None = None,
                where: Callable | None = None,
                speeds: Sequence[float] | None = None, extrapolate: bool = False,
                name: str | None = None, other: Body | None = None,
                other_facets: Tuple[MeshTags, int] | None = None,
                other_where: Callable | None = None, journal: Any = None,
                load: Sequence[float] | None = None, **coefficients: Any) -> Bearing:
        """A linear bearing (or seal) between the mean motion of a journal of ``body`` (its
        facets ``facets=(meshtags, tag)`` or ``where``) and the ground, or, with ``other``,
        the mean motion of a housing on another body (its facets ``other_facets`` or
        ``other_where``): coefficients ``kxx``, ``kxy``, ``kyx``, ``kyy`` (N/m), ``cxx``,
        ``cxy``, ``cyx``, ``cyy`` (N s/m), numbers or arrays over ``speeds`` (rad/s,
        interpolated linearly), and optionally ``kzz``, ``czz`` (axial) and ``ktilt``,
        ``ctilt`` (tilting): see :class:`dolfinx_mbs.bodies.Bearing`. x, y are the frame's
        directions across its spin axis (:func:`dolfinx_mbs.frames.transverse_basis`: x, y
        for a spin about z).

        Between two bodies the force is -K_b (d_A - d_B) - C_b (d_A' - d_B') on the journal
        and its opposite on the housing, d_A, d_B the two surfaces' mean motions in the
        rotor's x, y; it couples the two bodies' blocks of the stiffness and damping
        matrices. The pairs of frames accepted: a rotor in ``frames.Stationary`` with a
        housing in ``frames.Ground`` (either way round), two rotors in Stationary frames about
        one axis line, two bodies in Ground frames; a table over ``speeds`` is read at the
        rotor's speed (``body``'s when both spin)::

            rotor = mbs.Body(shaft_mesh, steel, mbs.frames.Stationary((0, 0, 1)), degree=2)
            case = mbs.Body(case_mesh, steel, mbs.frames.Ground((0, 0, 1)), degree=2)
            model.bearing(rotor, where=journal, other=case, other_where=bore,
                          kxx=5e7, kyy=5e7, cxx=2e3, cyy=2e3)
            model.bearing(case, where=feet, kxx=1e8, kyy=1e8)    # the case on the ground

        A fluid film gives the coefficients itself: ``journal`` (a
        :class:`dolfinx_mbs.rotors.PlainJournal`) with ``load``, the static load its journal
        carries (N, x and y): at every speed an analysis takes (Campbell sweep, log dec,
        unbalance response) the coefficients are the film's at its equilibrium under that
        load (or, with ``speeds``, tabulated there once and interpolated); a run
        (:meth:`integrate`) applies the film's nonlinear force instead::

            film = mbs.rotors.PlainJournal(diameter=0.1, length=0.05, clearance=1e-4,
                                           viscosity=0.03)
            model.bearing(rotor, facets=(tags, 1), journal=film, load=(0.0, -2000.0))

        Args:
            body: the elastic body of the journal.
            facets: the journal's facets, ``(meshtags, tag)``.
            where: the journal's facets, by a predicate instead.
            speeds: the speeds the coefficients are given at (rad/s), or None for constants.
            extrapolate: allow speeds outside the table (the end values held); else an
                error.
            name: the bearing's name.
            other: the elastic body of the housing, or None for the ground.
            other_facets: the housing's facets on ``other``, ``(meshtags, tag)``.
            other_where: the housing's facets on ``other``, by a predicate instead.
            journal: a fluid film that gives the coefficients (a
                :class:`~dolfinx_mbs.rotors.PlainJournal`), or None.
            load: the static load on the film's journal (N, x and y), with ``journal``.
            **coefficients: the stiffness and damping coefficients.

        Returns:
            The bearing added.

        Raises:
            ValueError: a body not of this model, ``other`` the same body as ``body``, a pair
                of frames not named above, a surface that holds no facet, bad coefficients
                (:class:`~dolfinx_mbs.bodies.Bearing`); on every rank, the model unchanged.
            TypeError: ``other`` not an elastic body, or housing arguments without ``other``;
                ``journal`` with the coefficients or without ``load``.
        """
        housing = Housing.of(other, other_facets, other_where)
        return self._attach(rotor_parts.bearing(
            self.bodies, body, facets=facets, where=where, speeds=speeds,
            extrapolate=extrapolate, name=name, housing=housing, journal=journal, load=load,
            **coefficients))

    def disk(self, body: Body, facets: Tuple[MeshTags, int] | None = None,
             where: Callable | None = None,
             mass: float = 0.0, polar: float = 0.0, diametral: float = 0.0,
             name: str | None = None) -> Disk:
        """A rigid disk (``mass`` kg, ``polar`` and ``diametral`` moments of inertia kg m^2)
        on a surface of ``body`` in a stationary frame: see :class:`dolfinx_mbs.bodies.Disk`.

        Args:
            body: the elastic body.
            facets: the disk's seat, ``(meshtags, tag)``.
            where: the seat by a predicate instead.
            mass: the mass (kg).
            polar: the polar moment of inertia (kg m^2).
            diametral: the diametral moment of inertia (kg m^2).
            name: the disk's name.

        Returns:
            The disk added.
        """
        return self._attach(rotor_parts.disk(self.bodies, body, facets=facets, where=where,
                                             mass=mass, polar=polar, diametral=diametral,
                                             name=name))

    def unbalance_response(self, speeds: Sequence[float], unbalances: Sequence[tuple],
                           probes: Sequence, **kwargs: Any) -> UnbalanceResponse:
        """The synchronous response to ``unbalances`` ``[(point or disk, m_e, phase), ...]``
        at ``probes`` over ``speeds`` (rad/s) of the rotors in stationary frames: see
        :func:`dolfinx_mbs.rotors.unbalance_response`.

        Args:
            speeds: the spin speeds (rad/s).
            unbalances: ``(point or disk, m_e, phase)`` triples.
            probes: the points whose response is given.
            **kwargs: :func:`dolfinx_mbs.rotors.unbalance_response`'s other arguments.

        Returns:
            The response.

        Raises:
            ValueError: the model has springs (:meth:`spring`).
        """
        self.derived.refuse_springs("unbalance_response")
        return rotor_unbalance.unbalance_response(self._second_order(), speeds, unbalances,
                                                  probes, **kwargs)

    def critical_speed_map(self, stiffnesses: Sequence[float], n: int = 4,
                           **kwargs: Any) -> CriticalSpeedMap:
        """The first ``n`` undamped forward critical speeds (rad/s) at each bearing stiffness
        of ``stiffnesses`` (N/m, all bearings isotropic, undamped; every bearing takes each
        stiffness, also a bearing between two bodies and a housing's own bearing to the
        ground): see :func:`dolfinx_mbs.rotors.critical_speed_map`.

        Args:
            stiffnesses: the bearing stiffnesses (N/m).
            n: how many critical speeds at each.
            **kwargs: :func:`dolfinx_mbs.rotors.critical_speed_map`'s other arguments.

        Returns:
            The map.

        Raises:
            ValueError: the model has springs (:meth:`spring`).
        """
        self.derived.refuse_springs("critical_speed_map")
        return rotor_critical.critical_speed_map(self._second_order(), stiffnesses, n=n,
                                                 **kwargs)

    def unbalance(self, on: Disk | Bearing, m_e: float, phase: float = 0.0) -> Unbalance:
        """An unbalance ``m_e`` (kg m) at ``phase`` (rad) on the journal of ``on`` (a disk or
        a bearing) for time integration: its turning force follows the stationary frame's
        spin law (a run-up: ``frames.Stationary(rate=lambda t: ...)``). See
        :class:`dolfinx_mbs.bodies.Unbalance`; :meth:`unbalance_response` is the frequency
        domain's.

        Args:
            on: a disk or bearing of this model.
            m_e: the unbalance (kg m).
            phase: its phase (rad).

        Returns:
            The unbalance added.

        Raises:
            TypeError: ``on`` is not a disk or a bearing.
        """
        return self._attach(rotor_parts.unbalance(self.bodies, on, m_e, phase))
