"""Typed reduced systems: what the integrators, eigen-solvers and Campbell sweeps work on.

A system is made by the model for one formulation (:meth:`dolfinx_mbs.Model.system`) and owns
its PETSc objects; ``system.at(t)`` gives the operators at the frame state of time ``t`` as a
typed record (objects refilled by later calls, ``version`` changing whenever a matrix did):

* :class:`SecondOrderSystem` -> :class:`SecondOrder`: M q'' + C q' + K q = f, on the
  independent coordinates q of the Maggi reducer (Delta = A(t) q + a0(t), ``theory.md``
  section 5); also what the first-order form (q, v) integrates;
* :class:`HamiltonSystem` -> :class:`Hamiltonian`: Hamilton's form in (q, p);
* :class:`dolfinx_mbs.nonholonomic.VelocitySystem` -> ``VelocityRows``: Maggi's equations in
  (q, w) with velocity constraints;
* :class:`dolfinx_mbs.multipliers.SaddlePoint` -> :class:`SecondOrder` of the
  Lagrange-multiplier form (comparison).

Every system satisfies :class:`Reducer` (its coordinates' link to the full vector) and has
``assembly`` (the full operators), ``constraints``, ``at``, ``constraint_forces``.
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional, Protocol, Sequence, Tuple

import numpy as np
from petsc4py import PETSc

from .forms import frame_coupling
from .space import orthonormal_nullspace, rigid_body_modes

__all__ = ["Reducer", "SecondOrder", "Hamiltonian", "InertiaBlocks", "SecondOrderSystem",
           "HamiltonSystem"]

SAME = PETSc.Mat.Structure.SAME_NONZERO_PATTERN
SUB = PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN


class Reducer(Protocol):
    """The link between a system's coordinates and the full coordinate vector Delta, at the
    time of the last ``update(t)``: the Maggi reducer and the multiplier form satisfy it."""

    n_reduced: int

    def update(self, t: float) -> bool: ...
    def create_reduced_vec(self) -> PETSc.Vec: ...
    def restrict(self, x: PETSc.Vec, out: Optional[PETSc.Vec] = None) -> PETSc.Vec: ...
    def project(self, b: PETSc.Vec, out: Optional[PETSc.Vec] = None) -> PETSc.Vec: ...
    def expand(self, q: PETSc.Vec, out: Optional[PETSc.Vec] = None,
               homogeneous: bool = False) -> PETSc.Vec: ...
    def expand_rate(self, q: PETSc.Vec, v: PETSc.Vec,
                    out: Optional[PETSc.Vec] = None) -> PETSc.Vec: ...
    def expand_acceleration(self, q: PETSc.Vec, v: PETSc.Vec, a: PETSc.Vec,
                            out: Optional[PETSc.Vec] = None) -> PETSc.Vec: ...


@dataclasses.dataclass
class InertiaBlocks:
    """The node-block form of the second-order residual (constraints that fix whole nodes):
    M a + C v + K u = M (a + W_C v + W_K u) + K_s (u + b v), per body W_C = 2 skew(omega) +
    a_R I, W_K = skew(omega)^2 + skew(alpha), b the stiffness-proportional Rayleigh
    coefficient. ``blocks``: ((start, stop), gdim, W_C, W_K, b) per body."""

    Ks: PETSc.Mat
    blocks: List[tuple]


@dataclasses.dataclass
class SecondOrder:
    """M q'' + C q' + K q = f at one frame state.

    Attributes:
        M, C, K: mass, velocity operator (G + D, and 2 A^T M A' for moving constraints),
            stiffness (K + K_omega + K_alpha (+ K_sigma) and the moving-constraint terms).
        Kel: the elastic stiffness (strain energy).
        Kpot: the stiffness of the potential energy (K, or K without the constraint rows of
            the multiplier form).
        f: all loads of the second-order form.
        blocks: the node-block form (:class:`InertiaBlocks`) or None.
        version: changes whenever a matrix changed.
    """

    t: float
    M: PETSc.Mat
    C: PETSc.Mat
    K: PETSc.Mat
    Kel: PETSc.Mat
    Kpot: PETSc.Mat
    f: PETSc.Vec
    blocks: Optional[InertiaBlocks]
    version: int


@dataclasses.dataclass
class Hamiltonian(SecondOrder):
    """Hamilton's form in (q, p) at one frame state (``theory.md`` section 4), beside the
    second-order operators (for energies):

        M q' + G_p q + pi0 - p = 0,     p' + G_q q' + K_h q + h - f_a = 0,

    G_q = G_p + D for fixed constraints (``Gq`` None), else its own matrix."""

    Gp: Optional[PETSc.Mat] = None
    D: Optional[PETSc.Mat] = None
    Kh: Optional[PETSc.Mat] = None
    Gq: Optional[PETSc.Mat] = None
    pi0: Optional[PETSc.Vec] = None
    h: Optional[PETSc.Vec] = None
    fa: Optional[PETSc.Vec] = None


class SecondOrderSystem:
    """The Maggi-reduced second-order system of a model's bodies and holonomic constraints.

    Args:
        assembly: the full operators (:class:`dolfinx_mbs.assembly.Assembly`).
        reducer: the :class:`dolfinx_mbs.maggi.MaggiReducer` of the constraints.
        constraints: the constraints (for reactions).
        static: the :class:`dolfinx_mbs.static.StaticSolver` (the equilibrium that nonlinear
            bodies linearize about).
    """

    formulations = ("second-order", "first-order")
    #: coordinates with Lagrange multipliers (the comparison form) or not
    has_multipliers = False

    def __init__(self, assembly, reducer, constraints: Sequence, static):
        self.assembly = asm = assembly
        self.reducer = reducer
        self.constraints = list(constraints)
        self.static = static
        self.space, self.bodies, self.comm = asm.space, asm.bodies, asm.comm
        self.nonlinear = asm.nonlinear
        self._ops: Optional[SecondOrder] = None
        self._key = None
        self._mkey = None
        self._work = {}
        self._nns = None

    # -- the Reducer protocol, at a time ------------------------------------------------------
    @property
    def n_reduced(self) -> int:
        return self.reducer.n_reduced

    def update(self, t: float) -> bool:
        return self.reducer.update(t)

    def create_reduced_vec(self) -> PETSc.Vec:
        return self.reducer.create_reduced_vec()

    def restrict(self, x, out=None):
        return self.reducer.restrict(x, out)

    def project(self, b, out=None):
        return self.reducer.project(b, out)

    def expand(self, q, out=None, homogeneous=False):
        return self.reducer.expand(q, out, homogeneous)

    def expand_rate(self, q, v, out=None):
        return self.reducer.expand_rate(q, v, out)

    def expand_acceleration(self, q, v, a, out=None):
        return self.reducer.expand_acceleration(q, v, a, out)

    def expand_mode(self, x: PETSc.Vec, out: PETSc.Vec) -> PETSc.Vec:
        """The full shape A x of an eigenvector ``x`` of :meth:`pencil`."""
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

    def at(self, t: float) -> SecondOrder:
        """The reduced operators at ``t``. With Delta = A(t) q + a0(t):

            M_r = A^T M A,  C_r = A^T (C A + 2 M A'),  K_r = A^T (K A + C A' + M A''),
            f_r = A^T (Q - M a0'' - C a0' - K a0).
        """
        asm, red = self.assembly, self.reducer
        asm.at(t)
        key = (float(t), asm.generation)
        if self._key == key:
            return self._ops
        moved = red.update(t)
        s = self._ops
        if s is None or self._matrices_changed(moved):
            M, Cf = asm.mass(), asm.damping(t)
            C, K = red.reduce(Cf, key="C"), red.reduce(asm.stiffness(t), key="K")
            if red.rheonomic:
                C.axpy(2.0, red.reduce_with(M, red.A_dot, "M.Ad"), structure=SUB)
                K.axpy(1.0, red.reduce_with(Cf, red.A_dot, "C.Ad"), structure=SUB)
                K.axpy(1.0, red.reduce_with(M, red.A_ddot, "M.Add"), structure=SUB)
            old = s
            version = 1 if old is None else old.version + 1
            s = self._form(t, red.reduce(M, key="M"), C, K, red.reduce(asm.elastic(), key="Kel"),
                           version)
            if old is not None:  # the vectors are refilled below
                s.f = old.f
        s.t = t
        s.f = red.project(self._load(t), s.f)
        self._vectors(t, s)
        self._ops, self._key = s, key
        return s

    def _form(self, t, M, C, K, Kel, version) -> SecondOrder:
        return SecondOrder(t=t, M=M, C=C, K=K, Kel=Kel, Kpot=K, f=None,
                           blocks=self._inertia_blocks(t), version=version)

    def _vectors(self, t: float, s) -> None:
        """Further vectors of the formulation (none for the second-order form)."""

    def _load(self, t: float) -> PETSc.Vec:
        """Q - K a0 - C a0' - M a0'' (Q itself without prescribed motion)."""
        asm, red = self.assembly, self.reducer
        Q = asm.load(t)
        if not red.prescribed:
            return Q
        rhs, tmp = Q.copy(self._vec("rhs")), self._vec("tmp")
        asm.stiffness(t).mult(red.a0, tmp)
        rhs.axpy(-1.0, tmp)
        if red.a0_dot is not None:
            asm.damping(t).mult(red.a0_dot, tmp)
            rhs.axpy(-1.0, tmp)
            asm.mass().mult(red.a0_ddot, tmp)
            rhs.axpy(-1.0, tmp)
        return rhs

    def _inertia_blocks(self, t: float) -> Optional[InertiaBlocks]:
        """The node-block form (:class:`InertiaBlocks`) when the constraints fix whole nodes
        only (``MaggiReducer.node_blocks``): every inertia-type matrix is then the scalar mass
        times a gdim x gdim matrix per node (``forms.inertia_coupling``), two matrix products
        where the matrices need three. None for other constraints, for stiffness-
        proportional damping together with a geometric stiffness, or when a body has user
        mass, damping or time-dependent stiffness forms (``Body.add_form``)."""
        red, asm = self.reducer, self.assembly
        if any(b.has_user_inertia for b in asm.bodies):
            return None
        segs = red.node_blocks()
        if segs is None:
            return None
        ops = asm.at(t)
        geo = any(o.mats.get("geometric") is not None for o in ops)
        if geo and any(o.body.material.rayleigh[1] for o in ops):
            return None
        Ks = red.reduce(asm.structural(t), key="Ks" if geo else "Kel")
        blocks = []
        for o, seg, st in zip(ops, segs, asm.states(t)):
            g = o.body.gdim
            W = frame_coupling(st.omega, st.alpha)
            a, b = o.body.material.rayleigh
            blocks.append((seg, g, W["gyroscopic"][:g, :g] + a * np.eye(g),
                           (W["spin_softening"] + W["angular_acceleration"])[:g, :g], b))
        return InertiaBlocks(Ks=Ks, blocks=blocks)

    # -- nonlinear strain ---------------------------------------------------------------------
    def nonlinear_reduced(self, t: float, q: PETSc.Vec, force: bool = True,
                          tangent: bool = True):
        """A^T n(A q + a0) with ``force``, A^T K_n A with ``tangent`` (the reducer at ``t``;
        objects reused; None for what is not asked)."""
        red = self.reducer
        red.update(t)
        u = red.expand(q, out=self._vec("nl_u"))
        N, KN = self.assembly.nonlinear_terms(u, force, tangent)
        r = None
        if force:
            r = self._work["nl_r"] = red.project(N, self._work.get("nl_r"))
        return r, (red.reduce(KN, key="KN") if tangent else None)

    def nonlinear_energy(self, t: float, q: PETSc.Vec) -> float:
        """The strain energy's excess over 1/2 Delta.K Delta at the reduced ``q``."""
        self.reducer.update(t)
        return self.assembly.nonlinear_energy(self.reducer.expand(q, out=self._vec("nl_u")))

    # -- constraint forces --------------------------------------------------------------------
    def constraint_forces(self, t: float, q: PETSc.Vec, v: PETSc.Vec, a: PETSc.Vec,
                          out: PETSc.Vec) -> PETSc.Vec:
        """The full constraint-force vector at the reduced state (q, q', q'') and ``t``."""
        red = self.reducer
        red.update(t)
        fu, fv, fa = self._vec("fu"), self._vec("fv"), self._vec("fa")
        red.expand(q, out=fu)
        red.expand_rate(q, v, out=fv)
        red.expand_acceleration(q, v, a, out=fa)
        return self.assembly.residual(t, fu, fv, fa, out=out)

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
                    full.getArray()[lo: lo + len(m)] = m
                    vecs.append(self.reducer.restrict(full))
            self._nns = orthonormal_nullspace(vecs, self.comm)
        return self._nns

    # -- eigenproblems ------------------------------------------------------------------------
    def pencil(self, t: float, n: int, coupling: Optional[str] = None, states=None
               ) -> Tuple[PETSc.Mat, Optional[PETSc.Mat], PETSc.Mat]:
        """(K_r, G_r, M_r) of the eigenproblems about the frame state at ``t`` (``states``:
        one FrameState per body instead of ``frame.state(t)``): K + K_omega (+ K_sigma; with
        nonlinear strain the tangent about the static equilibrium, found by Newton's method),
        the velocity coupling (``"gyroscopic"``: G, ``"damping"``: G + D, None: none) and M,
        for ``n`` wanted modes (checked against the free dofs)."""
        asm, red = self.assembly, self.reducer
        red.update(t)
        if n > red.n_reduced:
            raise ValueError(f"n={n} exceeds the {red.n_reduced} free dofs of the model")
        Kr = red.reduce(asm.stiffness(t, angular_acceleration=False, states=states), key="Kw")
        if self.nonlinear:  # the tangent about the static equilibrium at t
            q = self.static.solve(self, t, states=states)
            Kt = self._work.get("Kt")
            Kt = Kr.copy(Kt, structure=SAME) if Kt is not None else Kr.copy()
            Kt.axpy(1.0, self.nonlinear_reduced(t, q, force=False)[1], structure=SUB)
            self._work["Kt"] = Kr = Kt
        Mr = red.reduce(asm.mass(), key="M")
        Gr = None
        if coupling == "damping":
            Gr = red.reduce(asm.damping(t, states=states), key="C")
        elif coupling == "gyroscopic":
            Gr = red.reduce(asm.gyroscopic(t, states=states), key="Gyro")
        return Kr, Gr, Mr


class HamiltonSystem(SecondOrderSystem):
    """Hamilton's form in (q, p), p the generalized momentum, on the Maggi-reduced
    coordinates (``theory.md`` sections 4 and 5); ``at(t)`` gives :class:`Hamiltonian`."""

    formulations = ("hamiltonian",)

    def _form(self, t, M, C, K, Kel, version) -> Hamiltonian:
        asm, red = self.assembly, self.reducer
        Gy = red.reduce(asm.gyroscopic(t), key="Gyro")
        old = self._ops
        Gp = Gy.copy(old.Gp, structure=SAME) if old is not None else Gy.copy()
        Gp.scale(0.5)
        Dm = asm.rayleigh()
        s = Hamiltonian(t=t, M=M, C=C, K=K, Kel=Kel, Kpot=K, f=None, blocks=None,
                        version=version, Gp=Gp,
                        D=red.reduce(Dm, key="D") if Dm is not None else None,
                        Kh=red.reduce(asm.stiffness(t, angular_acceleration=False), key="Kw"),
                        Gq=old.Gq if old is not None else None)
        if old is not None:
            s.pi0, s.h, s.fa = old.pi0, old.h, old.fa
        if red.rheonomic:
            self._rheonomic(t, s)
        return s

    def _rheonomic(self, t: float, s: Hamiltonian) -> None:
        """The A-dot terms with Delta = A(t) q + a0(t): the momentum P = A^T p,
        P' = A^T (dL/dDelta + Q) + A'^T p gives

            M_r q' + (A^T G_p A + A^T M A') q + A^T w - P = 0,        w = pi_0 + M a0' + G_p a0
            P' + G_q q' + K_h,r q + h_r - f_a,r = 0,
            G_q = A^T (G_p + D) A - A'^T M A,
            K_h,r = A^T K_h A + A^T (G_p + D) A' - A'^T M A' - A'^T G_p A."""
        asm, red, w = self.assembly, self.reducer, self._work
        M, Cf, G = asm.mass(), asm.damping(t), asm.gyroscopic(t)
        MAd = red.reduce_with(M, red.A_dot, "M.Ad")     # A^T M A'
        GAd = red.reduce_with(G, red.A_dot, "G.Ad")     # A^T G A'
        CAd = red.reduce_with(Cf, red.A_dot, "C.Ad")    # A^T (G + D) A'
        AdMAd = red.reduce_dot(M, "M.AdAd")             # A'^T M A'
        MAdT = w["MAdT"] = MAd.transpose(w.get("MAdT", PETSc.Mat()))
        GAdT = w["GAdT"] = GAd.transpose(w.get("GAdT", PETSc.Mat()))
        Gq = s.Gp.copy(s.Gq, structure=SAME) if s.Gq is not None else s.Gp.copy()
        if s.D is not None:
            Gq.axpy(1.0, s.D, structure=SUB)
        Gq.axpy(-1.0, MAdT, structure=SUB)
        s.Gq = Gq
        s.Gp.axpy(1.0, MAd, structure=SUB)
        s.Kh.axpy(1.0, CAd, structure=SUB)    # A^T (G_p + D) A' = A^T (G + D) A' - A^T G_p A'
        s.Kh.axpy(-0.5, GAd, structure=SUB)
        s.Kh.axpy(-1.0, AdMAd, structure=SUB)
        s.Kh.axpy(0.5, GAdT, structure=SUB)   # - A'^T G_p A = + (A^T G_p A')^T

    def _vectors(self, t: float, s: Hamiltonian) -> None:
        """pi0, h, fa with the prescribed part a0(t) folded in: pi0 = A^T w,
        h = A^T (h + K_h a0 + (G_p + D) a0') - A'^T w, fa = A^T f_a."""
        asm, red = self.assembly, self.reducer
        full = asm.hamilton_vectors(t)
        w, h = full["pi0"], full["h"]
        if red.prescribed:
            tmp = self._vec("tmp")
            G = asm.gyroscopic(t)
            G.mult(red.a0, tmp)
            w.axpy(0.5, tmp)
            asm.stiffness(t, angular_acceleration=False).mult(red.a0, tmp)
            h.axpy(1.0, tmp)
            if red.a0_dot is not None:
                asm.mass().mult(red.a0_dot, tmp)
                w.axpy(1.0, tmp)
                asm.damping(t).mult(red.a0_dot, tmp)  # (G + D) a0'
                h.axpy(1.0, tmp)
                G.mult(red.a0_dot, tmp)
                h.axpy(-0.5, tmp)
        s.pi0 = red.project(w, s.pi0)
        s.h = red.project(h, s.h)
        if red.A_dot is not None:
            hr = self._work.get("hr")
            hr = self._work["hr"] = hr if hr is not None else s.h.duplicate()
            red.A_dot.multTranspose(w, hr)
            s.h.axpy(-1.0, hr)
        s.fa = red.project(full["fa"], s.fa)
