"""What a model makes from its bodies and constraints, held in one object and dropped together.

    state = DerivedState(bodies, constraints, velocity_constraints, frame_joints, comm)
    state.system("second-order")        # made on first use, kept
    state.invalidate("loads")           # what changed: what depends on it is made again

A :class:`~dolfinx_mbs.Model` keeps its bodies and constraints; everything made from them lives
here: the bodies' dof numbering (``space``), the full operators (``assembly``), the Maggi
reducer and the reduced bodies' basis composed with it, the typed systems by kind (``systems``:
per formulation, per harmonic index of a cyclic model, the coupled system of computed frames),
the static solver and a cyclic model's wheel. Each mutating builder of the model says what it
changed through :meth:`DerivedState.invalidate`, the one place that knows what depends on
what. It lives in ``static``, the first part of the flow that can make all of it: the
assembly's prestress is a static solve on the reducer.
"""

from __future__ import annotations

import gc
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Literal,
    Sequence,
    Tuple,
    TypeVar,
    cast,
)

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import compat, lifetime
from dolfinx_mbs.assembly.full import Assembly
from dolfinx_mbs.assembly.space import FullSpace
from dolfinx_mbs.constraints.frame_builders import springs_of
from dolfinx_mbs.constraints.maggi import MaggiReducer
from dolfinx_mbs.cyclic import condensed
from dolfinx_mbs.cyclic.wheel import Wheel
from dolfinx_mbs.frames.computed import ComputedFrame
from dolfinx_mbs.reduction.basis_reducer import BasisReducer
from dolfinx_mbs.static.solver import Prestress, StaticSolver
from dolfinx_mbs.systems.coupled import CoupledSystem
from dolfinx_mbs.systems.hamilton import HamiltonSystem
from dolfinx_mbs.systems.multipliers import SaddlePoint
from dolfinx_mbs.systems.records import check_choice
from dolfinx_mbs.systems.rigid_modes import rigid_subspace
from dolfinx_mbs.systems.second_order import SecondOrderSystem
from dolfinx_mbs.systems.velocity import VelocitySystem

if TYPE_CHECKING:
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.bodies.rigid import RigidBody
    from dolfinx_mbs.constraints.base import Constraint
    from dolfinx_mbs.constraints.frame_joints import FrameJoint, Motor
    from dolfinx_mbs.constraints.rows import VelocityRows
    from dolfinx_mbs.reduction.reduced_body import ReducedBody
    from dolfinx_mbs.systems.coupled import FrameLoad

__all__ = ["Change", "DerivedState"]

#: what a model's builder changed (:meth:`DerivedState.invalidate`): ``"frames"`` loads on
#: computed frames, joints, motors, point masses (the coupled system); ``"springs"`` a spring
#: (also the assembly when it has no coupling basis); ``"constraints"`` holonomic rows (the
#: reducer, the prestress, the systems); ``"velocity rows"`` (the systems); ``"loads"``,
#: ``"attachments"``, ``"reduction"`` the bodies' forms, bearings and disks, reduced bodies
#: (the operators and everything made from them)
Change = Literal["frames", "springs", "constraints", "velocity rows", "loads", "attachments",
                 "reduction"]

_Made = TypeVar("_Made")


class DerivedState:
    """What is made from a model's bodies and constraints, made on first use and kept until
    :meth:`invalidate`.

    Args:
        bodies: the model's elastic bodies (may be empty: rigid bodies only).
        constraints: the model's holonomic constraints (the model's list, read when used).
        velocity_constraints: its velocity rows (the model's list).
        frame_joints: its joints and springs between computed frames (the model's list).
        comm: the model's communicator.
    """

    def __init__(self, bodies: List[Body], constraints: List[Constraint],
                 velocity_constraints: List[VelocityRows], frame_joints: List[FrameJoint],
                 comm: MPI.Comm) -> None:
        self.bodies = bodies
        self.constraints = constraints
        self.velocity_constraints = velocity_constraints
        self.frame_joints = frame_joints
        self.comm = comm
        #: the reduced bodies, by body index (``Model.reduce``)
        self.reduced: Dict[int, ReducedBody] = {}
        #: the numbering of the elastic bodies' dofs (None: rigid bodies only)
        self.space = FullSpace(bodies) if bodies else None
        #: the static solves' KSP/SNES (options prefix ``mbs_static_``), None without bodies
        self.static = StaticSolver(comm) if bodies else None
        #: the cyclic part when the bodies are sectors of a wheel (:meth:`make_wheel`)
        self.wheel: Wheel | None = None
        #: the systems made, by kind (``"second-order"``, ``"harmonic 3"``, ``"coupled"`` ...)
        self.systems: Dict[str, Any] = {}
        self._assembly: Assembly | None = None
        self._reducer: MaggiReducer | None = None
        self._basis: BasisReducer | None = None

    def invalidate(self, change: Change) -> None:
        """Drop what depends on ``change`` (made again on next use).

        Args:
            change: what the model's builder changed (:data:`Change`).
        """
        if change == "frames":
            self.systems.pop("coupled", None)
            return
        if change == "springs":
            self.systems.pop("coupled", None)
            if self._assembly is None or self._assembly.strategy == "basis":
                return
            # the coupled equations combine each body's frame terms from the coupling basis
            # (a body on a time-invariant frame is assembled without it): made again on use
        if change == "constraints":
            self._reducer = self._basis = None
            if self._assembly is not None:  # the prestress depends on the constraints
                self._assembly.reset_prestress()
        elif change != "velocity rows":
            self._assembly = self._basis = None
        self.systems = {}

    def make_wheel(self, rigid: bool) -> Wheel | None:
        """The wheel of a model whose bodies are sectors (``Body(..., cyclic=)``), else None.

        Args:
            rigid: the model has rigid bodies.

        Returns:
            The :class:`~dolfinx_mbs.cyclic.Wheel` (its k = 0 rows for the model's
            constraints), or None.

        Raises:
            ValueError: sectors with rigid bodies.
        """
        if any(getattr(b, "cyclic", None) is not None for b in self.bodies):
            if rigid:
                raise ValueError("a cyclic model (sector bodies) takes no rigid bodies")
            self.wheel = Wheel(self.bodies, self.elastic_space)
        return self.wheel

    def refuse_springs(self, analysis: str) -> None:
        """Refuse an analysis that would leave the springs out.

        Their stiffness is no part of the bodies' operators: only the coupled time integration
        (``Model.integrate``) has it.

        Args:
            analysis: the analysis's name, in the message.

        Raises:
            ValueError: the model has springs.
        """
        springs = springs_of(self.frame_joints)
        if springs:
            raise ValueError(
                f"{analysis}: the model has springs ({', '.join(repr(j.name) for j in springs)})"
                " whose stiffness this analysis does not include; springs act in the time "
                "integration (Model.integrate) only")

    # -- the parts ------------------------------------------------------------------------------
    @property
    def elastic_space(self) -> FullSpace:
        """:attr:`space`; a model of rigid bodies alone has none (ValueError)."""
        if self.space is None:
            raise ValueError("the model has no elastic body (its rigid bodies' frames alone): "
                             "this needs the elastic bodies' dofs")
        return self.space

    @property
    def static_solver(self) -> StaticSolver:
        """:attr:`static`; a model of rigid bodies alone has none (ValueError)."""
        if self.static is None:
            raise ValueError("the model has no elastic body (its rigid bodies' frames alone): "
                             "no static solve")
        return self.static

    @property
    def assembly(self) -> Assembly:
        """The bodies' full operators (made on first use)."""
        if self._assembly is None:
            # springs: the coupled equations need every body's coupling basis
            basis = bool(self.reduced) or bool(springs_of(self.frame_joints))
            self._assembly = Assembly(self.bodies, self.elastic_space, prestress=Prestress(self),
                                      strategy="basis" if basis else None)
        return self._assembly

    @property
    def reducer(self) -> MaggiReducer:
        """The Maggi reducer of the current holonomic constraints (made on first use)."""
        if self._reducer is None:
            self._reducer = MaggiReducer(self.elastic_space, self.constraints)
        return self._reducer

    @property
    def system_reducer(self) -> MaggiReducer:
        """:attr:`reducer`, or the shapes of reduced bodies composed with it."""
        if not self.reduced:
            return self.reducer
        if self._basis is None:
            self._basis = BasisReducer(self.assembly, self.constraints, self.reduced)
        return self._basis

    @property
    def nonlinear(self) -> bool:
        """A body has ``stiffening="nonlinear"``."""
        return any(b.u_state is not None for b in self.bodies)

    # -- the systems ----------------------------------------------------------------------------
    def made(self, key: str, make: Callable[[], _Made]) -> _Made:
        """The system kept under ``key``, made by ``make()`` if there is none.

        Args:
            key: the kind.
            make: makes it.

        Returns:
            The system.
        """
        if key not in self.systems:
            self.systems[key] = make()
        return cast(_Made, self.systems[key])

    def check_choice(self, formulation: str, constraints: str) -> None:
        """Refuse what :meth:`system` cannot make (:func:`~dolfinx_mbs.systems.records.
        check_choice`).

        Args:
            formulation: the formulation.
            constraints: ``"maggi"`` or ``"multipliers"``.
        """
        check_choice(formulation, constraints, bool(self.velocity_constraints), self.nonlinear,
                     bool(self.reduced))

    def system(self, formulation: str, constraints: str
               ) -> SecondOrderSystem | VelocitySystem | SaddlePoint:
        """The typed system of ``formulation`` (``Model.system``).

        Args:
            formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
            constraints: ``"maggi"`` or ``"multipliers"``.

        Returns:
            The typed system.
        """
        self.check_choice(formulation, constraints)
        if constraints == "multipliers":
            return self.saddle_point()
        if formulation == "hamiltonian":
            return self.made("hamiltonian", lambda: HamiltonSystem(
                self.assembly, self.system_reducer, self.constraints, self.static_solver))
        if self.velocity_constraints:
            return self.velocity()
        return self.second_order()

    def saddle_point(self) -> SaddlePoint:
        """The Lagrange-multiplier form of the constraints."""
        return self.made("multipliers", lambda: SaddlePoint(
            self.assembly, self.reducer, self.constraints))

    def velocity(self) -> VelocitySystem:
        """The (q, w) system of the velocity rows."""
        return self.made("velocity", lambda: VelocitySystem(
            self.second_order(), self.velocity_constraints))

    def second_order(self) -> SecondOrderSystem:
        """The holonomically reduced second-order system (also under velocity constraints:
        statics, and the base of their (q, w) system)."""
        return self.made("second-order", lambda: SecondOrderSystem(
            self.assembly, self.system_reducer, self.constraints, self.static_solver))

    def modal_system(self) -> SecondOrderSystem | VelocitySystem:
        """The system of the eigenproblems: with velocity rows their (q, w) form, else the
        second-order one."""
        self.check_choice("first-order" if self.velocity_constraints else "second-order",
                          "maggi")
        return self.velocity() if self.velocity_constraints else self.second_order()

    # -- cyclic models --------------------------------------------------------------------------
    def cyclic(self, what: str) -> Wheel:
        """The wheel, for an analysis per harmonic index.

        Args:
            what: the analysis's name, in the messages.

        Returns:
            The :class:`~dolfinx_mbs.cyclic.Wheel`.

        Raises:
            ValueError: the model is not cyclic, has reduced bodies or velocity rows.
        """
        if self.wheel is None:
            raise ValueError(f"{what}: the model is not cyclic (give its bodies "
                             "cyclic=mbs.cyclic.Sector(...))")
        if self.reduced:
            raise ValueError(f"{what}: reduced bodies (Model.reduce) are not supported in a "
                             "cyclic model")
        if self.velocity_constraints:
            raise ValueError(f"{what}: velocity constraints are not supported in a cyclic "
                             "model's harmonic analyses")
        return self.wheel

    def condensed_frequencies(self, t: float, n: int, ks: Sequence[int]
                              ) -> Tuple[Dict[int, np.ndarray], str | None]:
        """The ``n`` lowest frequencies of the harmonic indices ``ks`` by the condensed method
        (:func:`dolfinx_mbs.cyclic.condensed.harmonic_frequencies`).

        Args:
            t: the time of the frame state (s).
            n: how many of each index.
            ks: the harmonic indices (checked).

        Returns:
            (frequencies by index where it applied, why not elsewhere or None).
        """
        wheel = self.cyclic("harmonic_frequencies")
        return condensed.harmonic_frequencies(wheel, self.second_order(), self.constraints,
                                              t, n, ks)

    def harmonic_system(self, k: int) -> SecondOrderSystem:
        """The system of harmonic index ``k`` of a cyclic model (``Model.harmonic_system``).

        Args:
            k: the harmonic index, 0 ... floor(N/2).

        Returns:
            The typed system.
        """
        wheel = self.cyclic("harmonic")
        k = wheel.sector.check_harmonic(k)
        base = self.second_order()
        if k == 0:
            return base
        key = f"harmonic {k}"
        if key not in self.systems:
            copies = None
            if wheel.sector.copies(k) == 2:
                # one two-copy system kept at a time: each holds reduced operators of twice
                # the sector's size (the shared full matrices diag(X, X) stay)
                old = [j for j in self.systems if j.startswith("harmonic ")
                       and j != "harmonic copies"]
                if old:
                    for j in old:
                        del self.systems[j]
                    gc.collect()
                    lifetime.collect(self.comm)
                copies = self.made("harmonic copies", lambda: wheel.copies(base.assembly))
            self.systems[key] = wheel.system(k, base, self.constraints, self.static, copies)
        return cast(SecondOrderSystem, self.systems[key])

    # -- computed frames ------------------------------------------------------------------------
    def coupled(self, frames: Sequence[ComputedFrame], rigid_bodies: Sequence[RigidBody],
                loads: Sequence[FrameLoad], gravity: np.ndarray | None,
                motors: Sequence[Motor]) -> CoupledSystem:
        """The coupled system of computed frames and springs (``Model.coupled_system``).

        Args:
            frames: the computed frames.
            rigid_bodies: the rigid bodies.
            loads: the loads on computed frames.
            gravity: the gravity (m/s^2), or None.
            motors: the motors.

        Returns:
            The :class:`~dolfinx_mbs.systems.coupled.CoupledSystem`.

        Raises:
            ValueError: velocity rows, a body on a computed frame with its own mass or damping
                forms or without a reference condition.
        """
        if "coupled" in self.systems:
            return cast(CoupledSystem, self.systems["coupled"])
        if self.velocity_constraints:
            raise ValueError("velocity constraints are not supported with computed frames or "
                             "springs")
        for b in self.bodies:
            if isinstance(b.frame, ComputedFrame) and b.has_user_inertia:
                raise ValueError(f"body {b.name!r} on computed frame {b.frame.name!r} has its "
                                 "own mass or damping forms: the frame's rows follow the "
                                 "material's density only")
        base = self.second_order() if self.bodies else None
        if base is not None:
            self._check_reference(base)
        system = CoupledSystem(base, list(frames), list(rigid_bodies), list(loads), gravity,
                               comm=self.comm, joints=self.frame_joints, motors=list(motors))
        self.systems["coupled"] = system
        return system

    def _check_reference(self, base: SecondOrderSystem) -> None:
        """Each body on a computed frame is held against the frame's rigid motion (a reduced
        body whose reduction proved it, ``ReducedBody.held``, not checked again)."""
        on = {ib: b.frame for ib, b in enumerate(self.bodies)
              if isinstance(b.frame, ComputedFrame)
              and not (ib in self.reduced and self.reduced[ib].held)}
        if not on:
            return
        rigid = rigid_subspace(base, 0.0)
        if rigid is None:
            return
        space = self.elastic_space
        full = space.create_vec()
        found = set()
        for x in rigid.Q:
            base.reducer.expand(x, out=full, homogeneous=True)
            a = full.getArray(readonly=True)
            for ib in on:
                lo, hi = space.offsets[ib], space.offsets[ib + 1]
                if np.abs(a[lo:hi]).max(initial=0.0) > 0.0:
                    found.add(ib)
        bad = sorted(self.comm.allreduce(found, op=MPI.BOR) if self.comm.size > 1 else found)
        full.destroy()
        rigid.destroy()
        if bad:
            b = self.bodies[bad[0]]
            held = [repr(c.name) + (f" ({c.n_nodes} node{'s' if c.n_nodes != 1 else ''}, "
                                    f"components {list(map(int, c.components))})"
                                    if hasattr(c, "n_nodes") and hasattr(c, "components")
                                    else "")
                    for c in self.constraints if getattr(c, "body", None) is b]
            what = (f"is held by {', '.join(held)}, which leaves a rigid motion relative to the "
                    "frame free (a body held at one node can still turn about it). Attach it "
                    "along an edge or face (model.attach(body, where=...) true at several "
                    "nodes), or hold another node's transverse component too "
                    "(model.clamp(body, where=..., components=[...]))" if held else
                    "has no reference condition: it could move rigidly relative to its frame. "
                    "Attach it (model.attach(body, where=...)) where it is held by the frame")
            raise ValueError(f"body {b.name!r} on computed frame {on[bad[0]].name!r} {what}")

    # -- the static state -----------------------------------------------------------------------
    def solve_static(self, t: float) -> None:
        """The static state at ``t`` into the bodies' ``u`` (``Model.solve_static``).

        Args:
            t: the time of the frame state and loads (s).

        Raises:
            ValueError: velocity rows that demand a nonzero velocity at ``t``.
        """
        if self.velocity_constraints:
            self.check_choice("first-order", "maggi")
            vs = self.velocity()
            # a static state (Delta' = 0) satisfies the velocity rows only where c - B a0'
            # vanishes; then the rows exert no force in it
            vs.basis.update(t)
            if vs.basis.a0.norm(PETSc.NormType.NORM_INFINITY) != 0.0:
                raise ValueError(
                    f"solve_static: the velocity constraints demand a nonzero velocity at "
                    f"t={t:g} (c(t) - B a0'(t) != 0): no static state exists")
        system = self.second_order()
        q = self.static_solver.solve(system, t)
        self.elastic_space.scatter(system.reducer.expand(q), [b.u for b in self.bodies])

    def static_forces(self, t: float) -> PETSc.Vec:
        """The constraint forces of the static state in the bodies' ``u`` at ``t``.

        Args:
            t: the time (s).

        Returns:
            The full vector of the constraint forces.
        """
        u = self.elastic_space.gather([compat.petsc_vec(b.u) for b in self.bodies])
        return self.system_reducer.consistent_forces(self.assembly.residual(t, u))

