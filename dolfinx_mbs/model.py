"""A model: bodies, their constraints, and the solves on the Maggi-reduced system.

    model = Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    u = model.solve_static(t=0.0)               # a DOLFINx Function per body
    w = model.natural_frequencies(t=0.0, n=4)   # rad/s

Full operators are block-diagonal over the bodies; constraints couple them only through the
basis A of :class:`dolfinx_mbs.maggi.MaggiReducer`. Linear solves use PETSc KSP with the
options prefix ``mbs_static_`` (default: direct LU with MUMPS).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence

import numpy as np
from dolfinx import fem
from petsc4py import PETSc

from . import checks, compat, modal
from .body import Body
from . import constraints as cons
from .constraints import Clamp, Constraint
from .maggi import MaggiReducer
from .frames import skew
from .operators import BodyOperators, combine
from .petsc_options import SolverOptions, direct_lu
from .space import FullSpace, orthonormal_nullspace, rigid_body_modes

__all__ = ["Model"]

#: Options of the linear static solves: MUMPS counts null pivots, so that a singular reduced
#: stiffness is reported (see :func:`_null_pivots`); the database's options win
_STATIC_OPTIONS = SolverOptions("mbs_static_", compat.MUMPS_NULL_PIVOT_OPTIONS)


def _null_pivots(ksp: PETSc.KSP) -> int:
    """Number of null pivots MUMPS found in the factorization (0 for other solvers)."""
    try:
        F = ksp.getPC().getFactorMatrix()
        return int(F.getMumpsInfog(28))
    except (PETSc.Error, AttributeError):
        return 0


class Model:
    """Elastic bodies in moving frames, with constraints.

    Args:
        bodies: the bodies (one or more, same MPI communicator).
        gravity: optional gravity acceleration fixed in the global frame (m/s^2).
    """

    def __init__(self, bodies: Sequence[Body], gravity: Optional[Sequence[float]] = None):
        bodies = list(bodies) if not isinstance(bodies, Body) else [bodies]
        if not bodies or not all(isinstance(b, Body) for b in bodies):
            raise TypeError("bodies must be a non-empty list of dolfinx_mbs.Body")
        if len({id(b) for b in bodies}) != len(bodies):
            raise ValueError("a body appears twice in the model")
        names = [b.name for b in bodies]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # the names label output files: one body's file would overwrite another's
            raise ValueError(f"bodies must have distinct names (pass name=), got {twice} "
                             "more than once")
        self.bodies = bodies
        self.comm = bodies[0].comm
        self.space = FullSpace(bodies)
        self.constraints: List = []
        #: velocity rows (:meth:`constrain_velocity`), kept apart: not eliminated from Delta
        self.velocity_constraints: List[cons.VelocityRows] = []
        self._velocity = None
        if gravity is not None:
            for b in bodies:
                b.set_gravity(gravity)
        self._ops: Optional[List[BodyOperators]] = None
        self._reducer: Optional[MaggiReducer] = None
        self._work: Dict[str, PETSc.Mat] = {}
        self._ksp: Optional[PETSc.KSP] = None
        self._system: Optional[Dict[str, object]] = None
        self._system_key = None

    # -- constraints ------------------------------------------------------------------------
    def _check_body(self, body: Body) -> None:
        if not any(body is b for b in self.bodies):
            raise ValueError(f"body {getattr(body, 'name', body)!r} is not part of this model")

    def _add(self, c: Constraint) -> Constraint:
        names = {k.name for k in self.constraints + self.velocity_constraints}
        if c.name in names:  # unique names: reactions and reports are keyed by them
            i = 2
            while f"{c.name}#{i}" in names:
                i += 1
            c.name = f"{c.name}#{i}"
        if isinstance(c, cons.VelocityRows):
            self.velocity_constraints.append(c)
        else:
            self.constraints.append(c)
            self._prestress_done = False   # the prestress depends on the constraints
            self._reducer = None
        self._velocity = None
        self._system_key = None
        self._system = None
        return c

    def clamp(self, body: Body, where: Optional[Callable] = None, components=None,
              facets=None, name: Optional[str] = None) -> Clamp:
        """Fix displacement components (default all) of ``body`` at the nodes where
        ``where(x)`` holds (x of shape (3, n)), or on ``facets=(meshtags, tag)``."""
        self._check_body(body)
        return self._add(Clamp(body, where=where, facets=facets, components=components,
                               name=name))

    def prescribe(self, body: Body, value, where: Optional[Callable] = None, facets=None,
                  components=None, time_scale: float = 1.0,
                  name: Optional[str] = None) -> cons.Prescribed:
        """Prescribe the displacement u = g(t) (body-frame components, m) of ``body`` where
        ``where(x)`` holds or on ``facets``: ``value`` is a gdim-vector or ``t -> vector``
        (differentiated numerically with error control; ``time_scale`` is the shortest time
        over which it changes). Only ``components`` (default all) are prescribed."""
        self._check_body(body)
        return self._add(cons.Prescribed(body, where=where, facets=facets, components=components,
                                         value=value, time_scale=time_scale, name=name))

    def tie(self, body_a: Body, body_b: Body, where: Callable, tol: float = 1e-8,
            name: Optional[str] = None) -> cons.Joint:
        """Tie the interface nodes of ``body_b`` to those of ``body_a`` at the same global
        position (at t = 0): ``where(x)`` selects the interface on each body's local
        coordinates. Every selected node must find a partner (else a ValueError on every rank
        lists the unmatched points). Bodies in different frames are joined in the global frame
        (rheonomic rows)."""
        self._check_body(body_a)
        self._check_body(body_b)
        if body_a is body_b:
            raise ValueError("tie: body_a and body_b must differ")
        return self._add(cons.tie(self.space, body_a, body_b, where, tol=tol, name=name))

    def pin(self, body_a: Optional[Body], body_b: Body, point, tol: float = 1e-8,
            name: Optional[str] = None) -> cons.Joint:
        """A pin at the global ``point`` (position at t = 0) between a node of ``body_a`` (None:
        the ground) and a node of ``body_b``: same global position at all times (a revolute
        joint in 2D, a spherical joint in 3D)."""
        if body_a is not None:
            self._check_body(body_a)
        self._check_body(body_b)
        if body_a is body_b:
            raise ValueError("pin: body_a and body_b must differ")
        return self._add(cons.pin(self.space, body_a, body_b, point, tol=tol, name=name))

    def slider(self, body: Body, point, axis, tol: float = 1e-8,
               name: Optional[str] = None) -> cons.Slider:
        """The node of ``body`` at the global ``point`` (at t = 0) stays on the fixed global
        line through it along ``axis`` (a prismatic support on the ground)."""
        self._check_body(body)
        return self._add(cons.Slider(self.space, body, point, axis, tol=tol, name=name))

    def rigid(self, body: Body, where: Optional[Callable] = None, facets=None,
              name: Optional[str] = None) -> cons.RigidRegion:
        """Make the nodes of ``body`` where ``where(x)`` holds (or on ``facets``) move as one
        rigid body (RBE2-like)."""
        self._check_body(body)
        return self._add(cons.RigidRegion(self.space, body, where=where, facets=facets,
                                          name=name))

    def constrain(self, rows, rhs=None, body: Optional[Body] = None, time_scale: float = 1.0,
                  name: Optional[str] = None) -> Constraint:
        """Add general constraint rows ``B Delta = c(t)`` (``B Delta' + b = 0`` with
        b = -c'), a DOLFINx ``DirichletBC`` (on ``body``'s space; ``body`` may be omitted for a
        one-body model), or a ready :class:`dolfinx_mbs.constraints.Constraint`.

        Args:
            rows: a sequence of ``{full_index: coefficient}`` dicts (full indices from
                :meth:`dof`), given identically on every rank; or a DirichletBC; or a
                Constraint.
            rhs: c: None (zeros), numbers, or ``t -> numbers``.
        """
        if isinstance(rows, Constraint):
            return self._add(rows)
        if hasattr(rows, "dof_indices"):
            if body is None:
                if len(self.bodies) != 1:
                    raise ValueError("constrain: give body= for a DirichletBC in a model with "
                                     "several bodies")
                body = self.bodies[0]
            self._check_body(body)
            return self._add(cons.BCConstraint(body, rows, name=name))
        return self._add(cons.LinearRows(self.space, rows, rhs=rhs, time_scale=time_scale,
                                         name=name))

    def constrain_velocity(self, rows, rhs=None, time_scale: float = 1.0,
                           name: Optional[str] = None) -> cons.VelocityRows:
        """Add velocity constraint rows ``B(t) Delta' = c(t)`` (``theory.md`` section 5),
        nonholonomic ones included. They are not eliminated from the coordinates: the
        integrator's first-order form then runs on (q, w), w the independent velocities
        (:mod:`dolfinx_mbs.nonholonomic`), without multipliers.

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
        return self._add(cons.VelocityRows(self.space, rows, rhs=rhs, time_scale=time_scale,
                                           name=name))

    @property
    def velocity_system(self):
        """The operators of Maggi's equations in (q, w) (:class:`dolfinx_mbs.nonholonomic.
        VelocitySystem`), None without velocity constraints."""
        if not self.velocity_constraints:
            return None
        red = self.reducer
        if self._velocity is None or self._velocity.basis.holonomic is not red:
            from .nonholonomic import VelocitySystem

            self._velocity = VelocitySystem(self)
        return self._velocity

    def dof(self, body: Body, point, component: int, tol: float = 1e-8) -> int:
        """Full global index (the same on every rank) of displacement ``component`` of the
        node of ``body`` at ``point`` (body-frame coordinates)."""
        self._check_body(body)
        if not 0 <= int(component) < body.gdim:
            raise ValueError(f"component must lie in 0..{body.gdim - 1}, got {component!r}")
        node = body.locate_node(checks.point3(point, "point"), tol)
        k = -1
        if node is not None:
            ib = self.bodies.index(body)
            start, _ = self.space.owned_range(ib)
            k = start + node * body.V.dofmap.index_map_bs + int(component)
        from mpi4py import MPI

        return int(self.comm.allreduce(k, op=MPI.MAX))

    def apply_load(self, body: Body, body_force=None, traction=None, where=None, facets=None,
                   point=None, force=None, local: bool = True) -> None:
        """Apply a load to ``body``: give one of

        * ``body_force=f`` (N/m^3),
        * ``traction=t`` (N/m^2) with ``where=`` (predicate on facet midpoints) or
          ``facets=(meshtags, tag)``,
        * ``point=(x, y[, z])`` and ``force=F`` (N, at a mesh node),

        each a constant vector or a function of time ``t -> vector``, in the body's local
        components unless ``local=False`` (then global components, rotated with the frame).
        """
        self._check_body(body)
        given = [x is not None for x in (body_force, traction, point)]
        if sum(given) != 1:
            raise ValueError("apply_load: give exactly one of body_force=, traction= or point=")
        if body_force is not None:
            body.add_body_force(body_force, local=local)
        elif traction is not None:
            body.add_traction(traction, facets=facets, where=where, local=local)
        else:
            if force is None:
                raise ValueError("apply_load: a point load needs force=")
            body.add_point_load(point, force, local=local)
        self._saddle = None
        if self._ops is not None:  # the load forms changed: rebuild the operators
            self._ops = None
            self._work = {}
            self._system = None
            self._system_key = None

    @property
    def saddle_point(self):
        """The Lagrange-multiplier form of the constraints
        (:class:`dolfinx_mbs.multipliers.SaddlePoint`), for comparison with the reducer."""
        if getattr(self, "_saddle", None) is None or self._saddle_for is not self.reducer:
            from .multipliers import SaddlePoint

            self._saddle = SaddlePoint(self)
            self._saddle_for = self.reducer
        return self._saddle

    @property
    def reducer(self) -> MaggiReducer:
        """The Maggi reducer of the current constraint set (built on first use)."""
        if self._reducer is None:
            self._reducer = MaggiReducer(self.space, self.constraints)
            self._work = {}
        return self._reducer

    # -- operators --------------------------------------------------------------------------
    @property
    def body_operators(self) -> List[BodyOperators]:
        if self._ops is None:
            self._ops = [BodyOperators(b) for b in self.bodies]
            self._prestress_done = False
        if not getattr(self, "_prestress_done", True):
            self._prestress_done = True
            self._prestress_solve()
        return self._ops

    def _prestress_solve(self) -> None:
        """Unit prestress fields of the bodies with ``stiffening="prestress"``: K u_c = q_c
        (elastic stiffness, the model's constraints) for each unit case c of
        ``Body.prestress_cases`` (centrifugal, gravity, constant applied loads; every body of
        the model loaded at once), then each body's geometric stiffness matrices."""
        cases = []
        for b in self.bodies:
            for c in b.prestress_cases():
                b.prestress_fields[c] = fem.Function(b.V, name="u_prestress_" + "".join(
                    str(x) for x in c))
                if c not in cases:
                    cases.append(c)
        if not cases:
            return
        if len({id(b.frame) for b in self.bodies}) > 1:
            raise NotImplementedError(
                "prestress stiffening needs all bodies of the model in one frame (the "
                "steady stress of bodies moving differently is not separable)")
        ops = self._ops
        red = self.reducer
        Kr = red.reduce(self._full("Kel", lambda o, w: o.K), key="Kel")
        ksp = self._linear_solver(Kr)
        temps = [fem.Function(b.V) for b in self.bodies]
        x = self.space.create_vec()
        q = red.create_reduced_vec()
        br = red.create_reduced_vec()
        for case in cases:
            Q = self.space.gather([o.unit_prestress_load(case) for o in ops], x.duplicate())
            red.project(Q, br)
            ksp.solve(br, q)
            reason = ksp.getConvergedReason()
            if reason < 0 or _null_pivots(ksp) or not np.isfinite(q.norm()):
                raise RuntimeError(
                    f"prestress solve failed (KSP reason {reason}): is every body constrained "
                    "against rigid motion?")
            red.expand(q, out=x, homogeneous=True)
            funcs = [b.prestress_fields.get(case, tmp) for b, tmp in zip(self.bodies, temps)]
            self.space.scatter(x, funcs)
        for o in ops:
            if o.body.prestress_fields:
                o.set_prestress()

    def update(self, t: float) -> None:
        """Bring every body's operators to its frame state at time ``t``."""
        for ops in self.body_operators:
            ops.update(ops.body.frame.state(t))

    def _full(self, key: str, per_body: Callable[[BodyOperators, Optional[PETSc.Mat]], PETSc.Mat]
              ) -> PETSc.Mat:
        """A block-diagonal full operator built from a per-body one, work objects reused; formed
        again only when a body's matrices changed (its operators' ``version``)."""
        ops_list = self.body_operators
        stamp = tuple(o.version for o in ops_list)
        done = key if not self.space.single else f"{key}/0"
        if self._work.get(f"{key}#stamp") == stamp and done in self._work:
            return self._work[done]
        mats = []
        for i, ops in enumerate(ops_list):
            wk = f"{key}/{i}"
            mats.append(per_body(ops, self._work.get(wk)))
            self._work[wk] = mats[-1]
        self._work[f"{key}#stamp"] = stamp
        if self.space.single:
            return mats[0]
        out = self.space.block_diagonal(mats, self._work.get(key))
        self._work[key] = out
        return out

    def full_mass(self) -> PETSc.Mat:
        return self._full("M", lambda o, w: o.M)

    def full_stiffness(self, angular_acceleration: bool = True) -> PETSc.Mat:
        key = "Keff" if angular_acceleration else "Kw"
        return self._full(key, lambda o, w: o.dynamic_stiffness(w, angular_acceleration))

    def full_damping(self, gyroscopic: bool = True) -> PETSc.Mat:
        return self._full("G" if gyroscopic else "D", lambda o, w: o.damping(w, gyroscopic))

    def full_load(self) -> PETSc.Vec:
        """All bodies' load vectors at the current frame states, as one full vector (the body's
        own vector for a single body; one work vector reused for several)."""
        Q = self.space.gather([o.Q for o in self.body_operators], self._work.get("Q"))
        if not self.space.single:
            self._work["Q"] = Q
        return Q

    def steady(self) -> bool:
        """True when every body's frame is time-invariant (operators assembled once)."""
        return all(b.frame.time_invariant for b in self.bodies)

    def reduced_system(self, t: float, hamiltonian: bool = False) -> Dict[str, object]:
        """The Maggi-reduced operators at time ``t`` (objects reused between calls).

        Returns a dict with ``M``, ``C`` (G + D), ``K`` (K + K_omega + K_alpha), ``f`` (all loads
        of the second-order form), ``Kel`` (elastic K) and, with ``hamiltonian``, ``Gp`` (G/2),
        ``D`` (damping or None), ``Kh`` (K + K_omega), ``pi0``, ``h`` and ``fa`` (applied loads).
        For steady frames and constraints the matrices are formed once; the vectors at every new
        ``t``. With Delta = A(t) q + a0(t) (``theory.md`` section 5):

            M_r = A^T M A,  C_r = A^T (C A + 2 M A'),  K_r = A^T (K A + C A' + M A''),
            f_r = A^T (Q - M a0'' - C a0' - K a0).
        """
        key = (float(t), hamiltonian)
        if self._system_key == key:
            return self._system
        self.update(t)
        red = self.reducer
        moved = red.update(t)
        sys_ = self._system if self._system is not None else {}
        steady = self.steady() and not red.rheonomic
        # matrices: formed once for steady frames and constraints, at every new time otherwise
        if not (steady and sys_.get("_matrices") == hamiltonian) or (moved and red.rheonomic):
            M = self.full_mass()
            Cf = self.full_damping(gyroscopic=True)
            sys_["M"] = red.reduce(M, key="M")
            sys_["Kel"] = red.reduce(self._full("Kel", lambda o, w: o.K), key="Kel")
            sys_["C"] = red.reduce(Cf, key="C")
            sys_["K"] = red.reduce(self.full_stiffness(), key="K")
            if red.rheonomic:
                sub = PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN
                sys_["C"].axpy(2.0, red.reduce_with(M, red.A_dot, "M.Ad"), structure=sub)
                sys_["K"].axpy(1.0, red.reduce_with(Cf, red.A_dot, "C.Ad"), structure=sub)
                sys_["K"].axpy(1.0, red.reduce_with(M, red.A_ddot, "M.Add"), structure=sub)
            if hamiltonian:
                Gy = red.reduce(self.full_gyroscopic(), key="Gyro")
                Gp = sys_.get("Gp")
                Gp = Gy.copy(Gp, structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN) \
                    if Gp is not None else Gy.copy()
                Gp.scale(0.5)
                sys_["Gp"] = Gp
                has_d = any(o.D is not None for o in self.body_operators)
                sys_["D"] = red.reduce(self._full("Dmp", lambda o, w: o.D if o.D is not None
                                                  else (w if w is not None else o.M.duplicate())),
                                       key="D") if has_d else None
                sys_["Kh"] = red.reduce(self.full_stiffness(angular_acceleration=False),
                                        key="Kw")
                if red.rheonomic:
                    self._rheonomic_hamilton(sys_, M, Cf)
            sys_["_matrices"] = hamiltonian
            sys_["_version"] = sys_.get("_version", 0) + 1
            sys_["kron"] = None if hamiltonian else self._inertia_blocks()
        # vectors: at every new time (loads may depend on time)
        Q = self.full_load()
        if red.prescribed:
            rhs = Q.copy(self._vec("rhs"))
            tmp = self._vec("tmp")
            self.full_stiffness().mult(red.a0, tmp)
            rhs.axpy(-1.0, tmp)
            if red.a0_dot is not None:
                self.full_damping(gyroscopic=True).mult(red.a0_dot, tmp)
                rhs.axpy(-1.0, tmp)
                self.full_mass().mult(red.a0_ddot, tmp)
                rhs.axpy(-1.0, tmp)
            Q = rhs
        sys_["f"] = red.project(Q, sys_.get("f"))
        if hamiltonian:
            self._hamilton_vectors(sys_)
        self._system = sys_
        self._system_key = key
        return sys_

    def near_nullspace(self) -> PETSc.NullSpace:
        """The rigid-body modes of each body (translations, and rotations about its local
        origin: 6 in 3D, 3 in 2D) restricted to the reduced coordinates and orthonormalized:
        the near null space that algebraic multigrid (``-mbs_pc_type gamg``) needs for
        elasticity. Made once per reducer."""
        key = self.reducer
        if getattr(self, "_nns", (None, None))[0] is key:
            return self._nns[1]
        red = self.reducer
        vecs = []
        for ib, b in enumerate(self.bodies):
            lo = self.space.offsets[ib]
            for m in rigid_body_modes(b.V):
                full = self.space.create_vec()
                full.zeroEntries()
                full.getArray()[lo: lo + len(m)] = m
                vecs.append(red.restrict(full))
        self._nns = (key, orthonormal_nullspace(vecs, self.comm))
        return self._nns[1]

    def _inertia_blocks(self) -> Optional[dict]:
        """The node-block form of the second-order residual, when the constraints fix whole
        nodes only (``MaggiReducer.node_blocks``): every inertia-type matrix is then the
        scalar mass times a gdim x gdim matrix per node (``forms.inertia_coupling``), so

            M a + C v + K u = M (a + W_C v + W_K u) + K_s (u + b v),

        W_C = 2 skew(omega) + a_R I, W_K = skew(omega)^2 + skew(alpha) per body (a_R, b the
        Rayleigh coefficients), K_s the elastic (+ geometric) stiffness: two matrix products
        where the matrices need three. Returns {"Ks": K_s, "blocks": [((start, stop), gdim,
        W_C, W_K, b) per body]} or None (other constraints, or stiffness-proportional
        damping together with a geometric stiffness)."""
        red = self.reducer
        segs = red.node_blocks()
        if segs is None:
            return None
        ops = self.body_operators
        geo = any(o.mats.get("geometric") is not None for o in ops)
        if geo and any(o.body.material.rayleigh[1] for o in ops):
            return None
        if geo:
            Ks = red.reduce(self._full("Ks", lambda o, w: combine(
                w if w is not None else o.K.duplicate(),
                [(1.0, o.K), (1.0, o.mats.get("geometric"))])), key="Ks")
        else:
            Ks = red.reduce(self._full("Kel", lambda o, w: o.K), key="Kel")
        blocks = []
        for o, seg in zip(ops, segs):
            g, st = o.body.gdim, o.state
            Wo = skew(st.omega)
            a, b = o.body.material.rayleigh
            blocks.append((seg, g, (2.0 * Wo)[:g, :g] + a * np.eye(g),
                           (Wo @ Wo + skew(st.alpha))[:g, :g], b))
        return {"Ks": Ks, "blocks": blocks}

    def _vec(self, key: str) -> PETSc.Vec:
        """A full-layout work vector, created on first use."""
        v = self._work.get("vec/" + key)
        if v is None:
            v = self.space.create_vec()
            self._work["vec/" + key] = v
        return v

    def _rheonomic_hamilton(self, sys_, M: PETSc.Mat, Cf: PETSc.Mat) -> None:
        """The A-dot terms of Hamilton's form with Delta = A(t) q + a0(t): the momentum
        P = A^T p, P' = A^T (dL/dDelta + Q) + A'^T p gives

            M_r q' + (A^T G_p A + A^T M A') q + A^T w - P = 0,        w = pi_0 + M a0' + G_p a0
            P' + G_q q' + K_h,r q + h_r - f_a,r = 0,
            G_q = A^T (G_p + D) A - A'^T M A,
            K_h,r = A^T K_h A + A^T (G_p + D) A' - A'^T M A' - A'^T G_p A,

        stored as ``Gp`` (the first equation's), ``Gq`` and ``Kh``."""
        red = self.reducer
        sub = PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN
        G = self.full_gyroscopic()
        MAd = red.reduce_with(M, red.A_dot, "M.Ad")     # A^T M A'
        GAd = red.reduce_with(G, red.A_dot, "G.Ad")     # A^T G A'
        CAd = red.reduce_with(Cf, red.A_dot, "C.Ad")    # A^T (G + D) A'
        AdMAd = red.reduce_dot(M, "M.AdAd")             # A'^T M A'
        MAdT = MAd.transpose(self._work.get("MAdT", PETSc.Mat()))
        self._work["MAdT"] = MAdT
        GAdT = GAd.transpose(self._work.get("GAdT", PETSc.Mat()))
        self._work["GAdT"] = GAdT
        Gq = sys_["Gp"].copy(sys_.get("Gq"), structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN
                             ) if sys_.get("Gq") is not None else sys_["Gp"].copy()
        if sys_["D"] is not None:
            Gq.axpy(1.0, sys_["D"], structure=sub)
        Gq.axpy(-1.0, MAdT, structure=sub)
        sys_["Gq"] = Gq
        sys_["Gp"].axpy(1.0, MAd, structure=sub)
        Kh = sys_["Kh"]
        Kh.axpy(1.0, CAd, structure=sub)       # A^T (G_p + D) A' = A^T (G + D) A' - A^T G_p A'
        Kh.axpy(-0.5, GAd, structure=sub)
        Kh.axpy(-1.0, AdMAd, structure=sub)
        Kh.axpy(0.5, GAdT, structure=sub)      # - A'^T G_p A = + (A^T G_p A')^T

    def _hamilton_vectors(self, sys_) -> None:
        """pi0, h, fa of Hamilton's form, with the prescribed part a0(t) folded in:
        pi0 = A^T w, h = A^T (h + K_h a0 + (G_p + D) a0') - A'^T w, fa = A^T f_a."""
        red = self.reducer
        vecs = [o.hamilton_vectors() for o in self.body_operators]
        full = {}
        for k, name in (("pi0", "momentum_offset"), ("h", "momentum_load"), ("fa", "applied")):
            # always a copy: the prescribed part is added in place below
            full[k] = self.space.gather([v[name] for v in vecs],
                                        self._vec(k))
        w, h = full["pi0"], full["h"]
        if red.prescribed:
            tmp = self._vec("tmp")
            G = self.full_gyroscopic()
            G.mult(red.a0, tmp)
            w.axpy(0.5, tmp)
            self.full_stiffness(angular_acceleration=False).mult(red.a0, tmp)
            h.axpy(1.0, tmp)
            if red.a0_dot is not None:
                self.full_mass().mult(red.a0_dot, tmp)
                w.axpy(1.0, tmp)
                self.full_damping(gyroscopic=True).mult(red.a0_dot, tmp)  # (G + D) a0'
                h.axpy(1.0, tmp)
                G.mult(red.a0_dot, tmp)
                h.axpy(-0.5, tmp)
        sys_["pi0"] = red.project(w, sys_.get("pi0"))
        sys_["h"] = red.project(h, sys_.get("h"))
        if red.A_dot is not None:
            tmp_r = sys_.get("_hr")
            tmp_r = tmp_r if tmp_r is not None else sys_["h"].duplicate()
            sys_["_hr"] = tmp_r
            red.A_dot.multTranspose(w, tmp_r)
            sys_["h"].axpy(-1.0, tmp_r)
        sys_["fa"] = red.project(full["fa"], sys_.get("fa"))

    # -- nonlinear strain ------------------------------------------------------------------
    @property
    def nonlinear(self) -> bool:
        """True when a body has ``stiffening="nonlinear"``: the equations of motion and the
        static equilibrium are then solved by Newton's method."""
        return any(b.u_state is not None for b in self.bodies)

    def _set_state_displacement(self, u: PETSc.Vec) -> None:
        """Put the full displacement ``u`` into the nonlinear bodies' ``u_state``."""
        if getattr(self, "_nl_tmp", None) is None:
            self._nl_tmp = [fem.Function(b.V) for b in self.bodies]
        self.space.scatter(u, [b.u_state if b.u_state is not None else tmp
                               for b, tmp in zip(self.bodies, self._nl_tmp)])

    def nonlinear_full(self, u: PETSc.Vec, force: bool = True, tangent: bool = True):
        """At the full displacement ``u``: with ``force``, the internal force's excess over
        K u (full vector); with ``tangent``, the tangent stiffness's excess over K
        (block-diagonal full matrix); from the St Venant-Kirchhoff bodies (zero blocks for the
        others), None for what is not asked."""
        self._set_state_displacement(u)
        ops = self.body_operators
        terms = [o.nonlinear_terms(force, tangent) if o.body.u_state is not None
                 else (None, None) for o in ops]
        N = KN = None
        if force:
            if "vec/nl0" not in self._work:  # zero vectors for the linear bodies, made once
                self._work["vec/nl0"] = [o.Q.duplicate() for o in ops]
                for z in self._work["vec/nl0"]:
                    z.zeroEntries()
            N = self.space.gather([t[0] if t[0] is not None else z
                                   for t, z in zip(terms, self._work["vec/nl0"])],
                                  self._work.get("vec/nl"))
            self._work["vec/nl"] = N
        if tangent:
            if "KN0" not in self._work:  # zero matrices for the linear bodies, made once
                self._work["KN0"] = [o.K.duplicate() for o in ops]
                for Z in self._work["KN0"]:
                    Z.zeroEntries()
                    Z.assemble()
            mats = [t[1] if t[1] is not None else Z for t, Z in zip(terms, self._work["KN0"])]
            KN = self.space.block_diagonal(mats, self._work.get("KN"))
            if not self.space.single:
                self._work["KN"] = KN
        return N, KN

    def nonlinear_reduced(self, q: PETSc.Vec, force: bool = True, tangent: bool = True):
        """Maggi-reduced nonlinear terms at the reduced coordinates ``q`` (the reducer at the
        current time): A^T n(A q + a0) with ``force``, A^T K_n A with ``tangent`` (objects
        reused; None for what is not asked)."""
        red = self.reducer
        u = red.expand(q, out=self._vec("nl_u"))
        N, KN = self.nonlinear_full(u, force, tangent)
        r = None
        if force:
            r = red.project(N, self._work.get("vec/nl_r"))
            self._work["vec/nl_r"] = r
        return r, (red.reduce(KN, key="KN") if tangent else None)

    def nonlinear_energy(self, q: PETSc.Vec) -> float:
        """The strain energy's excess over 1/2 Delta.K Delta at the reduced coordinates ``q``."""
        u = self.reducer.expand(q, out=self._vec("nl_u"))
        self._set_state_displacement(u)
        return sum(o.nonlinear_energy() for o in self.body_operators
                   if o.body.u_state is not None)

    def constraint_forces(self, t: float, u, v=None, a=None, out: Optional[PETSc.Vec] = None
                          ) -> PETSc.Vec:
        """The constraint forces F_c = M Delta'' + (G + D) Delta' + K_eff Delta (+ n(Delta)) - Q (full
        vector, body-frame components, N): what the constraints exert on each dof. A^T F_c = 0.

        Args:
            t: time (the frame state and loads).
            u, v, a: full displacement, velocity and acceleration vectors (v, a None: zero).
        """
        self.update(t)
        Q = self.full_load()
        out = out if out is not None else Q.duplicate()
        self.full_stiffness().mult(u, out)
        out.axpy(-1.0, Q)
        if self.nonlinear:
            out.axpy(1.0, self.nonlinear_full(u, tangent=False)[0])
        if v is not None:
            self.full_damping(gyroscopic=True).multAdd(v, out, out)
        if a is not None:
            self.full_mass().multAdd(a, out, out)
        return out

    def reactions(self, forces: Optional[PETSc.Vec] = None, t: float = 0.0,
                  constraints: Optional[Sequence[Constraint]] = None) -> Dict[str, np.ndarray]:
        """Resultant force of each constraint on its (dependent) body: the sum of the constraint
        forces over the dofs it fixes, in global components (N), the same on every rank.

        Args:
            forces: full constraint-force vector (:meth:`constraint_forces`); default: that of
                the static state in ``body.u`` at ``t``.
            t: time of the frame state (for the rotation to global components).
            constraints: which (default all clamps, prescribed motions and joints).

        Returns:
            {constraint name: (gdim,) force}.
        """
        if forces is None:
            u = self.space.gather([compat.petsc_vec(b.u) for b in self.bodies])
            forces = self.constraint_forces(t, u)
        arr = forces.getArray(readonly=True)
        out = {}
        from mpi4py import MPI

        for c in (constraints if constraints is not None else self.constraints):
            body = getattr(c, "body_b", None) or getattr(c, "body", None)
            if body is None:
                continue
            ib = self.bodies.index(body)
            g = body.gdim
            nodes = getattr(c, "nodes_b", None)
            if nodes is None:
                nodes = c.nodes
            comps = getattr(c, "components", np.arange(g))
            local = np.zeros(3)
            base = self.space.offsets[ib]
            for i in comps:
                local[i] = arr[base + nodes * g + i].sum() if len(nodes) else 0.0
            tot = np.zeros(3)
            self.comm.Allreduce(local, tot, op=MPI.SUM)
            R = body.frame.state(t).R
            out[c.name] = (R @ tot)[:g]
        return out

    def integrate(self, t_end: float, dt: float, formulation: str = "second-order", **kwargs):
        """Integrate the equations of motion in time with PETSc TS: see
        :func:`dolfinx_mbs.integrate.integrate` for the arguments and the returned result."""
        from .integrate import integrate

        return integrate(self, t_end=t_end, dt=dt, formulation=formulation, **kwargs)

    # -- solves -----------------------------------------------------------------------------
    def _linear_solver(self, A: PETSc.Mat) -> PETSc.KSP:
        if self._ksp is None:
            ksp = PETSc.KSP().create(self.comm)
            direct_lu(ksp)
            ksp.setOptionsPrefix(_STATIC_OPTIONS.prefix)
            _STATIC_OPTIONS.set_from_options(ksp)
            self._ksp = ksp
        self._ksp.setOperators(A)
        _STATIC_OPTIONS.set_up(self._ksp)  # (re)factorizes A if it changed
        return self._ksp

    def functions(self) -> List[fem.Function]:
        """The bodies' displacement Functions (``body.u``)."""
        return [b.u for b in self.bodies]

    def solve_static(self, t: float = 0.0) -> List[fem.Function]:
        """The steady deformation under the loads of the frame state at ``t`` (centrifugal,
        Euler, base acceleration, gravity, applied loads), spin softening included:
        (K + K_omega + K_alpha) u = Q on the constrained system.

        Returns:
            One DOLFINx Function per body (also stored as ``body.u``).

        Raises:
            RuntimeError: when the solve fails (e.g. an unconstrained body, or a spin at or
                above the divergence speed makes the operator singular).
        """
        q = self._static_reduced(t)
        x = self.reducer.expand(q)
        self.space.scatter(x, self.functions())
        return self.functions()

    def _static_reduced(self, t: float) -> PETSc.Vec:
        """The static equilibrium at ``t`` in reduced coordinates (a Vec kept by the model):
        one linear solve, or Newton's method (PETSc SNES, prefix ``mbs_static_``, from the last
        equilibrium) with nonlinear strain."""
        self.update(t)
        red = self.reducer
        red.update(t)
        self._check_static_velocity_rows(t)
        K = self.full_stiffness()
        Q = self.full_load()
        rhs = Q.copy(self._vec("static_rhs"))
        K.mult(red.a0, rhs)
        rhs.aypx(-1.0, Q)  # Q - K a0
        Kr = red.reduce(K, key="K")
        br = red.project(rhs, self._work.get("vec/static_br"))
        self._work["vec/static_br"] = br
        q = self._work.get("vec/static_q")
        if q is None or q.getSize() != red.n_reduced:
            q = red.create_reduced_vec()
            q.zeroEntries()
            self._work["vec/static_q"] = q
        if self.nonlinear:
            self._newton_static(t, Kr, br, q)
            return q
        ksp = self._linear_solver(Kr)
        ksp.solve(br, q)
        reason = ksp.getConvergedReason()
        null_pivots = _null_pivots(ksp)
        if reason < 0 or null_pivots or not np.isfinite(q.norm()):
            q.zeroEntries()
            raise RuntimeError(
                f"static solve failed at t={t:g} (KSP reason {reason}, {null_pivots} null "
                "pivots): the reduced stiffness is singular. Is every body constrained against "
                "rigid motion, and the spin away from a divergence speed?")
        return q

    def _newton_static(self, t: float, Kr: PETSc.Mat, br: PETSc.Vec, q: PETSc.Vec) -> None:
        """Solve K_r q + A^T n(A q + a0) = b_r by PETSc SNES (newtonls with a backtracking
        line search unless the options database says otherwise), q holding the initial guess.
        The SNES is made once for these operators (K_r and b_r are the model's kept objects)."""
        snes = self._work.get("static_snes")
        made_for = self._work.get("static_snes_for", (None, None))
        if snes is None or made_for[0] is not Kr or made_for[1] is not br:

            def residual(snes, x, F):
                Kr.mult(x, F)
                F.axpy(-1.0, br)
                F.axpy(1.0, self.nonlinear_reduced(x, tangent=False)[0])

            def jacobian(snes, x, A, P):
                Kr.copy(A, structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN)
                A.axpy(1.0, self.nonlinear_reduced(x, force=False)[1],
                       structure=PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN)

            J = Kr.duplicate(copy=True)
            snes = PETSc.SNES().create(self.comm)
            snes.setOptionsPrefix("mbs_static_")
            snes.setType(PETSc.SNES.Type.NEWTONLS)
            snes.setFunction(residual, br.duplicate())
            snes.setJacobian(jacobian, J, J)
            direct_lu(snes.getKSP())
            snes.setFromOptions()
            self._work["static_snes"] = snes
            self._work["static_snes_for"] = (Kr, br)
        snes.setTolerances(rtol=1e-10, atol=1e-12 * max(br.norm(), 1e-300), max_it=50)
        snes.solve(None, q)
        reason, its = snes.getConvergedReason(), snes.getIterationNumber()
        if reason < 0 or not np.isfinite(q.norm()):
            q.zeroEntries()
            raise RuntimeError(
                f"nonlinear static solve failed at t={t:g} (SNES reason {reason} after {its} "
                "Newton iterations): is every body constrained against rigid motion, and the "
                "load within what the structure carries? (-mbs_static_snes_monitor shows the "
                "residuals)")
        self.last_newton_iterations = its

    def _check_static_velocity_rows(self, t: float) -> None:
        """A static state (Delta' = 0) satisfies the velocity rows only where their right side
        c - B a0' vanishes; then the rows exert no force in it, and the solve without them is
        right (it is the equilibrium among the family a nonholonomic system has whose
        velocity-constraint forces vanish)."""
        vs = self.velocity_system
        if vs is None:
            return
        vs.basis.update(t)
        an = vs.basis.a0.norm(PETSc.NormType.NORM_INFINITY)
        if an != 0.0:
            raise ValueError(
                f"solve_static: the velocity constraints demand a nonzero velocity at t={t:g} "
                "(c(t) - B a0'(t) != 0): no static state exists")

    def natural_frequencies(self, t: float = 0.0, n: int = 4, gyroscopic: bool = False,
                            shift: float = 0.0) -> np.ndarray:
        """The ``n`` lowest natural frequencies (rad/s) of the constrained, undamped system
        about the frame state at ``t``, spin softening included.

        Args:
            t: time of the frame state.
            n: how many frequencies.
            gyroscopic: include the Coriolis coupling (quadratic eigenproblem) or not
                (symmetric pencil K + K_omega, M).
            shift: shift-and-invert target: in rad^2/s^2 without gyroscopic coupling, in rad/s
                (real axis) with it. Must differ from an eigenvalue.

        Returns:
            Ascending signed frequencies (see :mod:`dolfinx_mbs.modal`): a negative value marks a
            divergent mode.
        """
        Kr, Gr, Mr = self.reduced_pencil(t, n, "gyroscopic" if gyroscopic else None)
        if not gyroscopic:
            return modal.generalized_frequencies(Kr, Mr, n, shift=shift)
        return modal.gyroscopic_frequencies(Kr, Gr, Mr, n, shift=shift)

    def reduced_pencil(self, t: float, n: int, coupling: Optional[str] = None):
        """(K_r, G_r, M_r): the reduced operators of the eigenproblems about the frame state at
        ``t``: K + K_omega (+ K_sigma; with nonlinear strain the tangent about the static
        equilibrium at ``t``, found by Newton's method), the velocity coupling (``"gyroscopic"``: G,
        ``"damping"``: G + D, None: no matrix) and M, for ``n`` wanted modes (checked against
        the free dofs)."""
        self.update(t)
        red = self.reducer
        red.update(t)
        vs = self.velocity_system
        free = red.n_reduced if vs is None else vs.basis.n_reduced
        if n > free:
            raise ValueError(f"n={n} exceeds the {free} free dofs of the model")
        Kr = red.reduce(self.full_stiffness(angular_acceleration=False), key="Kw")
        if self.nonlinear:  # the tangent about the static equilibrium at t
            q = self._static_reduced(t)
            Kt = Kr.copy(self._work.get("Kt"), structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN
                         ) if self._work.get("Kt") is not None else Kr.copy()
            Kt.axpy(1.0, self.nonlinear_reduced(q, force=False)[1],
                    structure=PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN)
            self._work["Kt"] = Kr = Kt
        Mr = red.reduce(self.full_mass(), key="M")
        Gr = None
        if coupling == "damping":
            Gr = red.reduce(self.full_damping(gyroscopic=True), key="C")
        elif coupling == "gyroscopic":
            Gr = red.reduce(self.full_gyroscopic(), key="Gyro")
        if vs is not None:
            # constant rows B_n: the nonzero eigenvalues s of q' = A_n w, M_w w' + C_w w + K_w q
            # = 0 solve (s^2 A_n^T M A_n + s A_n^T C A_n + A_n^T K A_n) w = 0 (q = A_n w / s);
            # the m_n others are zero (the equilibria the rows leave free)
            if vs.basis.rheonomic:
                raise ValueError("natural frequencies and modes: the velocity constraints' "
                                 "coefficients change with time, so the linearized system is "
                                 "time-varying and has none")
            nb = vs.basis
            Kr, Mr = nb.reduce(Kr, key="pencil/K"), nb.reduce(Mr, key="pencil/M")
            Gr = None if Gr is None else nb.reduce(Gr, key=f"pencil/{coupling}")
        return Kr, Gr, Mr

    def modes(self, t: float = 0.0, n: int = 6, damping: bool = True, shift: float = 0.0,
              output: Optional[str] = None) -> Dict[str, np.ndarray]:
        """Complex modes of (lambda^2 M + lambda (G + D) + K_eff) x = 0 about the frame state at
        ``t`` (Coriolis, damping when ``damping`` and the materials have it, spin softening,
        stiffening), the ``n`` nearest ``shift`` (1/s).

        Returns:
            ``eigenvalues`` (complex, Im >= 0, one per pair), ``frequencies`` (rad/s, signed as
            in :mod:`dolfinx_mbs.modal`: negative = divergent), ``damping_ratios``
            (-Re(lambda)/|lambda|: negative = growing), the same on every rank.

        With ``output``, ``<output>_<body>.bp`` (VTX, in the body's space; ``.xdmf`` in the
        linear space on DOLFINx 0.5, see :class:`dolfinx_mbs.io.FieldFile`) receives the
        shapes (body frame, normalized to a unit largest displacement) as fields
        ``mode<k>_re`` and ``mode<k>_im`` at time 0 (the motion is Re((re + i im) e^(lambda t))),
        for ParaView.
        """
        Kr, Cr, Mr = self.reduced_pencil(t, n, "damping" if damping else "gyroscopic")
        lam, vecs = modal.gyroscopic_modes(Kr, Cr, Mr, n, shift=shift)
        freq = modal.signed_frequencies(lam)
        zeta = -lam.real / np.maximum(np.abs(lam), 1e-300)
        if output is not None:
            self._write_modes(output, vecs)
        return {"eigenvalues": lam, "frequencies": freq, "damping_ratios": zeta}

    def _write_modes(self, stem: str, vecs) -> None:
        from .io import FieldFile

        full = self.space.create_vec()
        parts = {}  # (k, "re"/"im") -> the full vector of that part
        scales = []
        for k, (xr, xi) in enumerate(vecs):
            scale = 0.0
            for part, x in (("re", xr), ("im", xi)):
                if self.velocity_system is not None:  # q = A_n w (up to 1/s)
                    x = self.velocity_system.basis.expand(x, homogeneous=True)
                self.reducer.expand(x, out=full, homogeneous=True)
                scale = max(scale, full.norm(PETSc.NormType.NORM_INFINITY))
                parts[k, part] = full.copy()
            scales.append(max(scale, 1e-300))
        funcs = [fem.Function(b.V) for b in self.bodies]
        for ib, body in enumerate(self.bodies):
            names = [f"mode{k}_{part}" for k in range(len(vecs)) for part in ("re", "im")]
            with FieldFile(self.comm, f"{stem}_{body.name}", body.V, names) as f:
                for (k, part), x in parts.items():
                    self.space.scatter(x, funcs)
                    f.assign(f"mode{k}_{part}", funcs[ib])
                    f.fields[f"mode{k}_{part}"].x.array[:] /= scales[k]
                f.write(0.0)
        for x in [full, *parts.values()]:
            x.destroy()

    def full_gyroscopic(self) -> PETSc.Mat:
        """The Coriolis (gyroscopic) matrix G of the current frame states, without damping."""
        return self._full("Gyro", lambda o, w: o.mats["gyroscopic"])

    def invalidate(self) -> None:
        """Forget the cached reduced system: the next :meth:`reduced_system` re-forms its
        matrices (with a new ``_version``). Call it after changing a frame's parameters in
        place (e.g. a ConstantSpin ``rate``), which the cache of steady models cannot see."""
        self._system_key = None
        if self._system is not None:
            self._system["_matrices"] = None

    def campbell(self, speeds, n: int = 6, **kwargs):
        """The Campbell diagram over the spin ``speeds`` (rad/s) of the bodies in ConstantSpin
        frames: see :func:`dolfinx_mbs.campbell.campbell` for the arguments and the returned
        :class:`~dolfinx_mbs.campbell.CampbellTable`."""
        from .campbell import campbell

        return campbell(self, speeds, n=n, **kwargs)
