"""Typed reduced systems: what the integrators, eigen-solvers and Campbell sweeps work on.

A system is made by the model for one formulation (:meth:`dolfinx_mbs.Model.system`) and owns
its PETSc objects; ``system.at(t)`` gives the operators at the frame state of time ``t`` as a
typed record (objects refilled by later calls, ``version`` changing whenever a matrix did):

* :class:`SecondOrderSystem` -> :class:`SecondOrder`: M q'' + C q' + K q = f, on the
  independent coordinates q of the Maggi reducer (Delta = A(t) q + a0(t), ``docs/theory.md``
  section 5); also what the first-order form (q, v) integrates;
* :class:`dolfinx_mbs.systems.hamilton.HamiltonSystem` -> :class:`Hamiltonian`: Hamilton's
  form in (q, p), built on :class:`SecondOrderSystem`;
* :class:`dolfinx_mbs.systems.velocity.VelocitySystem` -> ``VelocityRows``: Maggi's equations in
  (q, w) with velocity constraints;
* :class:`dolfinx_mbs.systems.multipliers.SaddlePoint` -> :class:`SecondOrder` of the
  Lagrange-multiplier form (comparison).

Every system satisfies :class:`Reducer` (its coordinates' link to the full vector) and has
``assembly`` (the full operators), ``constraints``, ``at``, ``constraint_forces``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Protocol, Sequence, Tuple, cast

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.assembly.space import orthonormal_nullspace, rigid_body_modes
from dolfinx_mbs.petsc_options import SAME, SUBSET
from dolfinx_mbs.systems.films import FilmForces
from dolfinx_mbs.systems.records import InertiaBlocks, SecondOrder
from dolfinx_mbs.systems.reduced_basis import ReducedBasis

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.constraints.maggi import MaggiReducer
    from dolfinx_mbs.frames.base import FrameState

__all__ = ["SecondOrderSystem"]

#: what a lean system frees once reduced (``Assembly.release``)
BODY_MATRICES = ("mass", "stiffness", "gyroscopic", "spin_softening", "angular_acceleration",
                 "damping")
FORMED = ("mass", "elastic", "stiffness", "damping", "gyroscopic")


class Equilibrium(Protocol):
    """The static solver a system hands its nonlinear tangents to
    (:class:`dolfinx_mbs.static.StaticSolver`, a later part: not named here)."""

    def solve(self, system: SecondOrderSystem, t: float,
              states: Sequence[FrameState] | None = None) -> PETSc.Vec:
        """The static equilibrium of ``system`` at ``t``.

        Args:
            system: the system whose equilibrium is wanted.
            t: time (s) of the frame states and constraints.
            states: one frame state per body instead of ``frame.state(t)``.

        Returns:
            The reduced coordinates of the equilibrium.
        """


class SecondOrderSystem:
    """The Maggi-reduced second-order system of a model's bodies and holonomic constraints.

    Args:
        assembly: the full operators (:class:`dolfinx_mbs.assembly.Assembly`).
        reducer: the :class:`dolfinx_mbs.constraints.maggi.MaggiReducer` of the constraints.
        constraints: the constraints (for reactions).
        static: the :class:`dolfinx_mbs.static.StaticSolver` (the equilibrium that nonlinear
            bodies linearize about).
    """

    formulations: Tuple[str, ...] = ("second-order", "first-order")
    #: coordinates with Lagrange multipliers (the comparison form) or not
    has_multipliers = False

    def __init__(self, assembly: Assembly, reducer: MaggiReducer, constraints: Sequence,
                 static: Equilibrium) -> None:
        self.assembly = asm = assembly
        self.reducer = reducer
        self.constraints = list(constraints)
        self.static = static
        self.space, self.bodies, self.comm = asm.space, asm.bodies, asm.comm
        self.nonlinear = asm.nonlinear
        self._ops: SecondOrder | None = None
        self._key: Any = None
        self._mkey: tuple | None = None
        self._work = {}
        self._nns = None
        # decided on first use
        self._rb: ReducedBasis | None | bool = False
        self._plan: str | None | bool = False
        self._lean: bool | None = None
        self._films: FilmForces | None | bool = False

    # -- the Reducer protocol, at a time ------------------------------------------------------
    @property
    def n_reduced(self) -> int:
        """The number of reduced coordinates q (global)."""
        return cast(int, self.reducer.n_reduced)

    def update(self, t: float) -> bool:
        """Bring the reducer to time ``t``.

        Args:
            t: time (s).

        Returns:
            True when A, its derivatives or a0 changed.
        """
        return self.reducer.update(t)

    def create_reduced_vec(self) -> PETSc.Vec:
        """A vector of the reduced coordinates q."""
        return self.reducer.create_reduced_vec()

    def restrict(self, x: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """q: the reduced coordinates of a full vector (the reducer's).

        Args:
            x: a full vector Delta.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        return self.reducer.restrict(x, out)

    def project(self, b: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """A^T b: a full load vector in the reduced coordinates.

        Args:
            b: a full vector.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        return self.reducer.project(b, out)

    def expand(self, q: PETSc.Vec, out: PETSc.Vec | None = None,
               homogeneous: bool = False) -> PETSc.Vec:
        """Delta = A q + a0 (A q when ``homogeneous``).

        Args:
            q: the reduced coordinates.
            out: the vector to fill (new if None).
            homogeneous: leave out a0.

        Returns:
            ``out``.
        """
        return self.reducer.expand(q, out, homogeneous)

    def expand_rate(self, q: PETSc.Vec, v: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """Delta' = A q' + A' q + a0'.

        Args:
            q: the reduced coordinates.
            v: their rates q'.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        return self.reducer.expand_rate(q, v, out)

    def expand_acceleration(self, q: PETSc.Vec, v: PETSc.Vec, a: PETSc.Vec,
                            out: PETSc.Vec | None = None) -> PETSc.Vec:
        """Delta'' = A q'' + 2 A' q' + A'' q + a0''.

        Args:
            q: the reduced coordinates.
            v: their rates q'.
            a: their second rates q''.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        return self.reducer.expand_acceleration(q, v, a, out)

    def expand_mode(self, x: PETSc.Vec, out: PETSc.Vec) -> PETSc.Vec:
        """The full shape A x of an eigenvector ``x`` of :meth:`pencil`.

        Args:
            x: an eigenvector of :meth:`pencil`.
            out: the full vector to fill.

        Returns:
            ``out``.
        """
        return self.reducer.expand(x, out=out, homogeneous=True)

    # -- operators ----------------------------------------------------------------------------
    def _vec(self, key: str) -> PETSc.Vec:
        return self.assembly.create_vec("sys/" + key)

    def _matrices_changed(self, moved: bool) -> bool:
        """Whether the reduced matrices must be formed (again): a body's matrices changed, or
        moving constraints moved."""
        key = self.assembly.stamp()
        red = self.reducer
        changed = self._mkey != key or (moved and red.rheonomic)
        self._mkey = key
        return changed

    def forget(self) -> None:
        """Drop the operators kept for the last time: the next :meth:`at` evaluates the frame
        states again, also at the same time (a run starts with it: a frame or a load may have
        been changed since the last call)."""
        self._key = None

    def reduced_basis(self) -> ReducedBasis | None:
        """The :class:`~dolfinx_mbs.systems.reduced_basis.ReducedBasis` of the system, or None where
        the reduced matrices are not combinations of constant ones (decided once)."""
        if self._rb is False:
            self._rb = ReducedBasis.make(self.assembly, self.reducer)
        return self._rb  # type: ignore[return-value]

    def at(self, t: float, states: Sequence[FrameState] | None = None) -> SecondOrder:
        """The reduced operators at ``t``.

        With Delta = A(t) q + a0(t):

            M_r = A^T M A,  C_r = A^T (C A + 2 M A'),  K_r = A^T (K A + C A' + M A''),
            f_r = A^T (Q - M a0'' - C a0' - K a0).

        The frame states are evaluated once per distinct time: the record is kept while ``t``
        and the assembly's state stay (residual, Jacobian and observers of a step share it).
        Where the reduced matrices are combinations of matrices reduced once
        (:class:`~dolfinx_mbs.systems.reduced_basis.ReducedBasis`), they are combined, not reduced.
        ``states`` (one FrameState per body) replaces the frames' states at ``t``: the
        operators at a state computed elsewhere (frames whose motion is an unknown).

        Args:
            t: time (s).
            states: one frame state per body instead of ``frame.state(t)``.

        Returns:
            The reduced operators (a record kept and refilled).
        """
        asm, red = self.assembly, self.reducer
        given = states is not None
        if not given and self._key == (float(t), asm.generation) and self._ops is not None:
            return self._ops
        if states is None:
            states = asm.states(t)
        moved = red.update(t)
        rb = self.reduced_basis()
        s = self._ops
        if rb is not None:
            changed = rb.update(states) or s is None
        else:
            asm.at(t, states)
            changed = self._matrices_changed(moved) or s is None
        if changed:
            old = s
            s = self._form(t, states, rb, 1 if old is None else old.version + 1)
            if old is not None:  # the vectors are refilled below
                s.f = old.f
        assert s is not None  # (changed when there was no record)
        s.t = t
        s.f = red.project(self._load(t, states), s.f)
        self._vectors(t, s, states)
        self._ops, self._key = s, (None if given else (float(t), asm.generation))
        return s

    @property
    def lean(self) -> bool:
        """True when the full matrices are freed once the record's reduced copies exist (made
        again if something asks for them): constraints that only fix values (the reduced
        operators are submatrices, no prescribed motion) and bodies whose matrices can be made
        again from their forms (``Assembly.releasable``: frames constant in time). A run then
        holds the reduced operators only; a frame state that changes re-forms them."""
        if self._lean is None:  # the reducer's part (collective), once
            red = self.reducer
            self._lean = bool(getattr(red, "injection", False) and not red.prescribed)
        return self._lean and self.assembly.releasable

    #: the record's matrices that a reduced basis forms when read: its combination of each
    formed_on_read: Dict[str, str] = {"C": "C", "K": "K", "Kpot": "K"}

    def _formed(self, rb: ReducedBasis | None) -> Callable[[str], None] | None:
        """The record's ``formed`` (:class:`~dolfinx_mbs.systems.SecondOrder`) for ``rb``."""
        if rb is None:
            return None
        names = self.formed_on_read

        def formed(field: str) -> None:
            if field in names:
                rb.form(names[field])
        return formed

    def _matrices(self, t: float, states: Sequence[FrameState] | None,
                  rb: ReducedBasis | None) -> tuple:
        """M, C, K, K_el reduced at ``states`` (combined by ``rb`` when read, or reduced), and
        the formulation's further ones (:meth:`_further`). A :attr:`lean` system frees each
        full matrix once its last reduced copy is made (the set-up's peak: one full matrix
        formed beside the bodies' own)."""
        if rb is not None:
            return rb.M, rb.out("C"), rb.out("K"), rb.Kel, self._further(t, states, rb, None)
        asm, red = self.assembly, self.reducer
        if self.lean:
            K = red.reduce(asm.stiffness(t, states=states), key="K")
            asm.release(("spin_softening", "angular_acceleration"), ("stiffness",))
            C = red.reduce(asm.damping(t, states=states), key="C")
            more = self._further(t, states, None, K)
            asm.release(("gyroscopic", "damping"), ("damping", "gyroscopic"))
            M = red.reduce(asm.mass(), key="M")
            asm.release(("mass",), ("mass",))
            Kel = red.reduce(asm.elastic(), key="Kel")
            asm.release(BODY_MATRICES, FORMED)
            return M, C, K, Kel, more
        M, Cf = asm.mass(), asm.damping(t, states=states)
        C, K = red.reduce(Cf, key="C"), red.reduce(asm.stiffness(t, states=states), key="K")
        if red.rheonomic:
            C.axpy(2.0, red.reduce_with(M, red.A_dot, "M.Ad"), structure=SUBSET)
            K.axpy(1.0, red.reduce_with(Cf, red.A_dot, "C.Ad"), structure=SUBSET)
            K.axpy(1.0, red.reduce_with(M, red.A_ddot, "M.Add"), structure=SUBSET)
        return (red.reduce(M, key="M"), C, K, red.reduce(asm.elastic(), key="Kel"),
                self._further(t, states, None, K))

    def _further(self, t: float, states: Sequence[FrameState] | None, rb: ReducedBasis | None,
                 K: PETSc.Mat) -> dict:
        """The formulation's reduced matrices beside M, C, K, K_el (none here); ``K`` the
        reduced K just formed (None with ``rb``)."""
        return {}

    def _form(self, t: float, states: Sequence[FrameState] | None, rb: ReducedBasis | None,
              version: int) -> SecondOrder:
        M, C, K, Kel, _ = self._matrices(t, states, rb)
        return SecondOrder(t=t, M=M, C=C, K=K, Kel=Kel, Kpot=K, f=None,
                           blocks=self._inertia_blocks(t, states, rb, Kel), version=version,
                           formed=self._formed(rb))

    def _vectors(self, t: float, s: SecondOrder, states: Sequence[FrameState] | None) -> None:
        """Further vectors of the formulation (none for the second-order form)."""

    def _load(self, t: float, states: Sequence[FrameState] | None) -> PETSc.Vec:
        """Q - K a0 - C a0' - M a0'' (Q itself without prescribed motion)."""
        asm, red = self.assembly, self.reducer
        Q = asm.load(t, states)
        if not red.prescribed:
            return Q
        rhs, tmp = Q.copy(self._vec("rhs")), self._vec("tmp")
        asm.stiffness(t, states=states).mult(red.a0, tmp)
        rhs.axpy(-1.0, tmp)
        if red.a0_dot is not None:
            asm.damping(t, states=states).mult(red.a0_dot, tmp)
            rhs.axpy(-1.0, tmp)
            asm.mass().mult(red.a0_ddot, tmp)
            rhs.axpy(-1.0, tmp)
        return rhs

    def _blocks_plan(self) -> str | None:
        """Whether the node-block form applies (see :meth:`_inertia_blocks`): None if not,
        else the key of its K_s, ``"Ks"`` (with a geometric stiffness) or ``"Kel"``."""
        if self._plan is False:
            red, asm = self.reducer, self.assembly
            plan = None
            if not any(b.has_user_inertia for b in asm.bodies) and \
                    red.node_blocks() is not None:
                ops = asm.body_operators
                geo = any(o.prestress_matrices for o in ops)
                if not (geo and any(o.body.material.rayleigh[1] for o in ops)):
                    plan = "Ks" if geo else "Kel"
            self._plan = plan
        return self._plan  # type: ignore[return-value]

    def _inertia_blocks(self, t: float, states: Sequence[FrameState] | None,
                        rb: ReducedBasis | None, Kel: PETSc.Mat) -> InertiaBlocks | None:
        """The node-block form (:class:`InertiaBlocks`) when the constraints fix whole nodes
        only (``MaggiReducer.node_blocks``): every inertia-type matrix is then the scalar mass
        times a gdim x gdim matrix per node (``forms.inertia_coupling``), two matrix products
        where the matrices need three. None for other constraints, for stiffness-
        proportional damping together with a geometric stiffness, or when a body has user
        mass, damping or time-dependent stiffness forms (``Body.add_form``). With a reduced
        basis, None also when K_s has a geometric stiffness (it would be one more matrix to
        combine at every state, where the matrix form needs none)."""
        plan = self._blocks_plan()
        if plan is None or (rb is not None and plan == "Ks"):
            return None
        red, asm = self.reducer, self.assembly
        ops = asm.body_operators
        if rb is not None:
            Ks, Ws = rb.Kel, rb.W
        else:  # K_s is K_el (the record's) without a geometric stiffness
            Ks = Kel if plan == "Kel" else red.reduce(asm.structural(t, states), key=plan)
            assert states is not None  # (at() passes the states it forms at)
            Ws = [o.coupling(st) for o, st in zip(ops, states)]
        blocks, momentum = [], []
        segs = red.node_blocks()
        assert segs is not None  # (the plan holds with node blocks only)
        for o, seg, W in zip(ops, segs, Ws):
            g = o.body.gdim
            a, b = o.body.material.rayleigh
            Wg, Ww = W["gyroscopic"][:g, :g], W["spin_softening"][:g, :g]
            blocks.append((seg, g, Wg + a * np.eye(g), Ww + W["angular_acceleration"][:g, :g],
                           b))
            momentum.append((seg, g, 0.5 * Wg, 0.5 * Wg + a * np.eye(g), Ww, b))
        return InertiaBlocks(Ks=Ks, blocks=blocks, momentum=momentum)

    # -- fluid-film bearings ------------------------------------------------------------------
    @property
    def films(self) -> FilmForces | None:
        """The bearings whose fluid film acts with its whole force in a run
        (:class:`~dolfinx_mbs.systems.films.FilmForces`), or None (decided once)."""
        if self._films is False:
            self._films = FilmForces.make(self)
        return self._films  # type: ignore[return-value]

    # -- nonlinear strain ---------------------------------------------------------------------
    def nonlinear_reduced(self, t: float, q: PETSc.Vec, force: bool = True,
                          tangent: bool = True) -> Tuple[PETSc.Vec | None, PETSc.Mat | None]:
        """A^T n(A q + a0) with ``force``, A^T K_n A with ``tangent`` (the reducer at ``t``;
        objects reused; None for what is not asked).

        Args:
            t: time (s).
            q: the reduced coordinates.
            force: compute A^T n(A q + a0).
            tangent: compute A^T K_n A.

        Returns:
            ``(force, tangent)``, each None when not asked.
        """
        red = self.reducer
        red.update(t)
        u = red.expand(q, out=self._vec("nl_u"))
        N, KN = self.assembly.nonlinear_terms(u, force, tangent)
        r = None
        if force:
            r = self._work["nl_r"] = red.project(N, self._work.get("nl_r"))
        return r, (red.reduce(KN, key="KN") if tangent else None)

    def nonlinear_energy(self, t: float, q: PETSc.Vec) -> float:
        """The strain energy's excess over 1/2 Delta.K Delta at the reduced ``q``.

        Args:
            t: time (s).
            q: the reduced coordinates.

        Returns:
            The energy (J).
        """
        self.reducer.update(t)
        return self.assembly.nonlinear_energy(self.reducer.expand(q, out=self._vec("nl_u")))

    # -- constraint forces --------------------------------------------------------------------
    def constraint_forces(self, t: float, q: PETSc.Vec, v: PETSc.Vec, a: PETSc.Vec,
                          out: PETSc.Vec) -> PETSc.Vec:
        """The full constraint-force vector at the reduced state (q, q', q'') and ``t``.

        Args:
            t: time (s).
            q: the reduced coordinates.
            v: their rates q'.
            a: their second rates q''.
            out: the full vector to fill.

        Returns:
            ``out``.
        """
        red = self.reducer
        red.update(t)
        fu, fv, fa = self._vec("fu"), self._vec("fv"), self._vec("fa")
        red.expand(q, out=fu)
        red.expand_rate(q, v, out=fv)
        red.expand_acceleration(q, v, a, out=fa)
        return red.consistent_forces(self.assembly.residual(t, fu, fv, fa, out=out))

    def near_nullspace(self) -> PETSc.NullSpace:
        """The rigid-body modes of each body (translations, and rotations about its local
        origin) restricted to the reduced coordinates and orthonormalized: the near null space
        that algebraic multigrid (``-mbs_pc_type gamg``) needs for elasticity."""
        if self._nns is None:
            vecs = []
            for ib, b in enumerate(self.bodies):
                lo = self.space.offsets[ib]
                for m in rigid_body_modes(b.V):
                    full = self.space.create_vec()
                    full.zeroEntries()
                    full.array[lo: lo + len(m)] = m
                    vecs.append(self.reducer.restrict(full))
            self._nns = orthonormal_nullspace(vecs, self.comm)
        return self._nns

    # -- eigenproblems ------------------------------------------------------------------------
    def pencil(self, t: float, n: int, coupling: str | None = None,
               states: Sequence[FrameState] | None = None
               ) -> Tuple[PETSc.Mat, PETSc.Mat | None, PETSc.Mat]:
        """(K_r, G_r, M_r) of the eigenproblems about the frame state at ``t`` (``states``:
        one FrameState per body instead of ``frame.state(t)``): K + K_omega (+ K_sigma; with
        nonlinear strain the tangent about the static equilibrium, found by Newton's method),
        the velocity coupling (``"gyroscopic"``: G, ``"damping"``: G + D, None: none) and M,
        for ``n`` wanted modes (checked against the free dofs).

        Args:
            t: time (s).
            n: the number of wanted modes.
            coupling: ``"gyroscopic"`` (G), ``"damping"`` (G + D) or None (no velocity coupling).
            states: one frame state per body instead of ``frame.state(t)``.
        """
        asm, red = self.assembly, self.reducer
        red.update(t)
        if n > red.n_reduced:
            raise ValueError(f"n={n} exceeds the {red.n_reduced} free dofs of the model")
        Kr = red.reduce(asm.stiffness(t, angular_acceleration=False, states=states), key="Kw")
        if self.nonlinear:  # the tangent about the static equilibrium at t
            q = self.static.solve(self, t, states=states)
            Kt = self._work.get("Kt")
            Kt = Kr.copy(Kt, structure=SAME) if Kt is not None else Kr.copy()
            Kt.axpy(1.0, self.nonlinear_reduced(t, q, force=False)[1], structure=SUBSET)
            self._work["Kt"] = Kr = Kt
        Mr = red.reduce(asm.mass(), key="M")
        Gr = None
        if coupling == "damping":
            Gr = red.reduce(asm.damping(t, states=states), key="C")
        elif coupling == "gyroscopic":
            Gr = red.reduce(asm.gyroscopic(t, states=states), key="Gyro")
        return Kr, Gr, Mr
