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

from . import compat, modal
from .body import Body
from .constraints import Clamp
from .maggi import MaggiReducer
from .operators import BodyOperators
from .space import FullSpace

__all__ = ["Model"]


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
        self.bodies = bodies
        self.comm = bodies[0].comm
        self.space = FullSpace(bodies)
        self.constraints: List = []
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

    def clamp(self, body: Body, where: Optional[Callable] = None, components=None,
              facets=None, name: Optional[str] = None) -> Clamp:
        """Fix displacement components (default all) of ``body`` at the nodes where
        ``where(x)`` holds (x of shape (3, n)), or on ``facets=(meshtags, tag)``."""
        self._check_body(body)
        c = Clamp(body, where=where, facets=facets, components=components, name=name)
        self.constraints.append(c)
        self._reducer = None
        self._system_key = None
        self._system = None
        return c

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
        if self._ops is not None:  # the load forms changed: rebuild the operators
            self._ops = None
            self._work = {}
            self._system = None
            self._system_key = None

    @property
    def reducer(self) -> MaggiReducer:
        """The Maggi reducer of the current constraint set (built on first use)."""
        if self._reducer is None:
            rows = [c.rows(self.space, 0.0) for c in self.constraints]
            self._reducer = MaggiReducer(self.space, rows)
            self._work = {}
        return self._reducer

    # -- operators --------------------------------------------------------------------------
    @property
    def body_operators(self) -> List[BodyOperators]:
        if self._ops is None:
            self._ops = [BodyOperators(b) for b in self.bodies]
        return self._ops

    def update(self, t: float) -> None:
        """Bring every body's operators to its frame state at time ``t``."""
        for ops in self.body_operators:
            ops.update(ops.body.frame.state(t))

    def _full(self, key: str, per_body: Callable[[BodyOperators, Optional[PETSc.Mat]], PETSc.Mat]
              ) -> PETSc.Mat:
        """A block-diagonal full operator built from a per-body one, work objects reused."""
        mats = []
        for i, ops in enumerate(self.body_operators):
            wk = f"{key}/{i}"
            mats.append(per_body(ops, self._work.get(wk)))
            self._work[wk] = mats[-1]
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
        return self.space.gather([o.Q for o in self.body_operators], self._work.get("Q"))

    def steady(self) -> bool:
        """True when every body's frame is time-invariant (operators assembled once)."""
        return all(b.frame.time_invariant for b in self.bodies)

    def reduced_system(self, t: float, hamiltonian: bool = False) -> Dict[str, object]:
        """The Maggi-reduced operators at time ``t`` (objects reused between calls).

        Returns a dict with ``M``, ``C`` (G + D), ``K`` (K + K_omega + K_alpha), ``f`` (all loads
        of the second-order form), ``Kel`` (elastic K) and, with ``hamiltonian``, ``Gp`` (G/2),
        ``D`` (damping or None), ``Kh`` (K + K_omega), ``pi0``, ``h`` and ``fa`` (applied loads).
        For steady frames the matrices are formed once; the vectors at every new ``t``.
        """
        key = (float(t), hamiltonian)
        if self._system_key == key:
            return self._system
        self.update(t)
        red = self.reducer
        if red.a0.norm() != 0.0:  # pragma: no cover - prescribed motion comes with issue 4
            raise NotImplementedError("time integration with prescribed nonzero constraint "
                                      "values is not supported yet")
        sys_ = self._system if self._system is not None else {}
        # matrices: formed once for steady frames, at every new time otherwise
        if not (self.steady() and sys_.get("_matrices") == hamiltonian):
            sys_["M"] = red.reduce(self.full_mass(), key="M")
            sys_["Kel"] = red.reduce(self._full("Kel", lambda o, w: o.K), key="Kel")
            sys_["C"] = red.reduce(self.full_damping(gyroscopic=True), key="C")
            sys_["K"] = red.reduce(self.full_stiffness(), key="K")
            if hamiltonian:
                Gy = red.reduce(self._full("Gyro", lambda o, w: o.mats["gyroscopic"]),
                                key="Gyro")
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
            sys_["_matrices"] = hamiltonian
            sys_["_version"] = sys_.get("_version", 0) + 1
        # vectors: at every new time (loads may depend on time)
        sys_["f"] = red.project(self.full_load(), sys_.get("f"))
        if hamiltonian:
            vecs = [o.hamilton_vectors() for o in self.body_operators]
            for k, name in (("pi0", "momentum_offset"), ("h", "momentum_load"),
                            ("fa", "applied")):
                full = self.space.gather([v[name] for v in vecs], self._work.get("vec/" + k))
                self._work["vec/" + k] = full
                sys_[k] = red.project(full, sys_.get(k))
        self._system = sys_
        self._system_key = key
        return sys_

    def integrate(self, t_end: float, dt: float, formulation: str = "second-order", **kwargs):
        """Integrate the equations of motion in time with PETSc TS: see
        :func:`dolfinx_mbs.integrate.integrate` for the arguments and the returned result."""
        from .integrate import integrate

        return integrate(self, t_end=t_end, dt=dt, formulation=formulation, **kwargs)

    # -- solves -----------------------------------------------------------------------------
    def _linear_solver(self, A: PETSc.Mat) -> PETSc.KSP:
        if self._ksp is None:
            ksp = PETSc.KSP().create(self.comm)
            ksp.setType(PETSc.KSP.Type.PREONLY)
            pc = ksp.getPC()
            pc.setType(PETSc.PC.Type.LU)
            try:
                pc.setFactorSolverType("mumps")
                compat.mumps_null_pivot_detection("mbs_static_")  # count null pivots
            except PETSc.Error:  # pragma: no cover
                pass
            ksp.setOptionsPrefix("mbs_static_")
            ksp.setFromOptions()
            self._ksp = ksp
        self._ksp.setOperators(A)
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
        self.update(t)
        red = self.reducer
        K = self.full_stiffness()
        Q = self.full_load()
        rhs = Q.copy()
        K.mult(red.a0, rhs)
        rhs.aypx(-1.0, Q)  # Q - K a0
        Kr = red.reduce(K, key="K")
        br = red.project(rhs)
        q = red.create_reduced_vec()
        ksp = self._linear_solver(Kr)
        ksp.solve(br, q)
        reason = ksp.getConvergedReason()
        null_pivots = _null_pivots(ksp)
        if reason < 0 or null_pivots or not np.isfinite(q.norm()):
            raise RuntimeError(
                f"static solve failed at t={t:g} (KSP reason {reason}, {null_pivots} null "
                "pivots): the reduced stiffness is singular. Is every body constrained against "
                "rigid motion, and the spin away from a divergence speed?")
        x = red.expand(q)
        self.space.scatter(x, self.functions())
        return self.functions()

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
        self.update(t)
        red = self.reducer
        if n > red.n_reduced:
            raise ValueError(f"n={n} exceeds the {red.n_reduced} free dofs of the model")
        Kr = red.reduce(self.full_stiffness(angular_acceleration=False), key="Kw")
        Mr = red.reduce(self.full_mass(), key="M")
        if not gyroscopic:
            return modal.generalized_frequencies(Kr, Mr, n, shift=shift)
        Gr = red.reduce(self._full("Gyro", lambda o, w: o.mats["gyroscopic"]), key="Gyro")
        return modal.gyroscopic_frequencies(Kr, Gr, Mr, n, shift=shift)
