"""The residual and Jacobian of a formulation, as PETSc TS callbacks on a typed system.

* :class:`Form`: what every formulation shares: the TS and its solver set-up from the run's
  options, the initial state, and the reduced displacement and velocity read back from the
  TS's solution for the observers;
* :class:`SecondOrderForm`: M q'' + C q' + K q (+ n(q)) = f as an I2 function (TSALPHA2);
* :func:`second_order_residual` and :class:`LinearStep`, the pieces a user loop can reuse.

The forms on 2n unknowns (first-order, Hamilton, velocity rows) are in
:mod:`dolfinx_mbs.first_order_forms`; :func:`dolfinx_mbs.integrate.integrate` picks one.
"""

from __future__ import annotations

import logging
import math

from dolfinx import fem
from petsc4py import PETSc

from . import checks, compat
from .petsc_options import converged, direct_lu, given_options, reason_name
from .state_products import StateProducts, apply_blocks
from .step_solvers import multigrid

__all__ = ["Form", "reduced_initial", "second_order_residual", "SecondOrderForm", "LinearStep",
           "small_lu", "cheapest_lu", "SMALL_LU"]

log = logging.getLogger(__name__)

SAME = PETSc.Mat.Structure.SAME_NONZERO_PATTERN
SUBSET = PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN

#: Largest systems (unknowns, by the bodies' dimension) that one rank factorizes with PETSc's
#: own sparse LU (quotient minimum degree ordering) rather than MUMPS, whose set-up costs more
#: than such a factorization; measured in bench/results/per_step.md (a step matrix refactorized:
#: 2D 0.23 ms against 0.94 ms at 1,200 unknowns, compact 2D meshes equal near 2,500; 3D 1.0
#: against 1.6 ms at 300, MUMPS ahead from ~450 on compact meshes).
SMALL_LU = {2: 2000, 3: 400}


def small_lu(system, prefix: str, options) -> bool:
    """True when ``system``'s step matrices go to PETSc's own LU (:data:`SMALL_LU`): one rank,
    at most the size for its bodies' dimension, no multipliers (their zero block needs
    MUMPS's pivoting), and no MUMPS option or value among the run's ``options`` or in the
    database under ``prefix`` (whoever names MUMPS gets MUMPS)."""
    gdim = max(b.gdim for b in system.bodies)
    if system.comm.size > 1 or system.has_multipliers or \
            system.n_reduced > SMALL_LU.get(gdim, 0):
        return False
    given = given_options(prefix, options)
    return not any("mumps" in k or str(v).lower() == "mumps" for k, v in given.items())


def cheapest_lu(ksp: PETSc.KSP, small: bool) -> None:
    """A direct solve (:func:`dolfinx_mbs.petsc_options.direct_lu`); with ``small``, by
    PETSc's own LU with quotient minimum degree ordering (the options database may change
    either)."""
    direct_lu(ksp)
    if small:
        pc = ksp.getPC()
        pc.setFactorSolverType("petsc")
        pc.setFactorOrdering("qmd")


def second_order_residual(s, U, V, A, F, work) -> None:
    """F = M A + C V + K U - f of the second-order operators ``s``
    (:class:`dolfinx_mbs.systems.SecondOrder`); with its node-block form (``s.blocks``) by two
    matrix products, M (A + W_C V + W_K U) + K_s (U + b V), instead of three. ``work``: a
    vector like U."""
    kr = s.blocks
    if kr is None:
        s.M.mult(A, F)
        s.C.multAdd(V, F, F)
        s.K.multAdd(U, F, F)
        F.axpy(-1.0, s.f)
        return
    ua, va, aa = (x.getArray(readonly=True) for x in (U, V, A))
    w = work.getArray()
    w[:] = aa
    for (lo, hi), g, WC, WK, _ in kr.blocks:
        w[lo:hi] += (va[lo:hi].reshape(-1, g) @ WC.T + ua[lo:hi].reshape(-1, g) @ WK.T).ravel()
    s.M.mult(work, F)
    if any(b for *_, b in kr.blocks):
        w[:] = ua
        for (lo, hi), _, _, _, b in kr.blocks:
            w[lo:hi] += b * va[lo:hi]
        kr.Ks.multAdd(work, F, F)
    else:
        kr.Ks.multAdd(U, F, F)
    F.axpy(-1.0, s.f)


def reduced_initial(system, x, name: str) -> PETSc.Vec:
    """A reduced vector of ``system`` from None (zero), a PETSc Vec in full or reduced layout
    (size and distribution checked on every rank), or per-body Functions (a Function on
    another space of the body's mesh is interpolated into the body's space, and the log says
    so); ``name``: the argument, for the errors."""
    red = system
    q = red.create_reduced_vec()
    q.set(0.0)
    if x is None:
        return q
    space = red.space
    if isinstance(x, PETSc.Vec):
        full = space.create_vec()
        sizes = {"reduced": q.getSizes(), "full": full.getSizes()}
        full.destroy()
        n = x.getSize()
        layout = [k for k, (loc, glob) in sizes.items() if glob == n]
        msg = None
        if not layout:
            msg = (f"{name}: a Vec of {n} entries fits neither layout (reduced: "
                   f"{sizes['reduced'][1]}, full: {sizes['full'][1]})")
        elif x.getLocalSize() != sizes[layout[0]][0]:
            msg = (f"{name}: a Vec in the {layout[0]} layout must be distributed as the "
                   f"model's ({layout[0]} vector of the system): this rank owns "
                   f"{x.getLocalSize()} entries, not {sizes[layout[0]][0]}")
        checks.raise_everywhere(red.comm, msg)
        if layout[0] == "reduced":
            x.copy(q)
        else:
            red.restrict(x, q)
        return q
    funcs = list(x) if isinstance(x, (list, tuple)) else [x]
    bodies = red.bodies
    if len(funcs) != len(bodies):
        raise ValueError(f"{name}: give one Function per body ({len(bodies)}), got "
                         f"{len(funcs)}")
    vecs = [compat.petsc_vec(on_body_space(f, b, name)) for f, b in zip(funcs, bodies)]
    full = space.gather(vecs, space.create_vec())
    red.restrict(full, q)
    return q


def on_body_space(f, body, name: str):
    """``f`` as a Function of ``body``'s space (interpolated if it is on another space of
    the same mesh); ``name``: the argument, for the errors."""
    if not isinstance(f, fem.Function):
        raise ValueError(f"{name}: expected None, a PETSc Vec (full or reduced layout) or "
                         f"a dolfinx Function per body, got {type(f).__name__}")
    V = f.function_space
    if compat.same_space(V, body.V):
        return f
    if not compat.same_mesh(V, body.V):
        raise ValueError(f"{name}: the Function for body {body.name!r} is on another mesh; "
                         "interpolate it onto the body's space (body.V) first")
    if compat.value_shape(V) != compat.value_shape(body.V):
        raise ValueError(f"{name}: the Function for body {body.name!r} has value shape "
                         f"{compat.value_shape(V)}, the body's space "
                         f"{compat.value_shape(body.V)}")
    g = fem.Function(body.V)
    g.interpolate(f)
    log.info("%s: interpolated from %s into the space of body %r", name,
             V.ufl_element(), body.name)
    return g


class LinearStep:
    """A SNES for equations linear in the unknown: x <- x - J^-1 F(x), once. Exact for the
    linear equations of motion, with one residual evaluation per step where Newton needs two.

    The TS still sees a function call at the solution: its SNES callback updates the method's
    own state there (TSALPHA2 forms V and A of the step from it); the form's residual is
    skipped in that call, as no one reads it."""

    def __init__(self, form):
        self.form = form
        self.f = None

    def setUp(self, snes):
        pass

    def solve(self, snes, b, x):
        if self.f is None:
            self.f = x.duplicate()
            self.dx = x.duplicate()
        f, dx = self.f, self.dx
        snes.computeFunction(x, f)  # F(x) - b (SNESComputeFunction subtracts the rhs b)
        J, P, _ = snes.getJacobian()
        snes.computeJacobian(x, J, P)
        ksp = snes.getKSP()
        ksp.setOperators(J, P)
        ksp.solve(f, dx)
        if not converged(ksp) or not math.isfinite(dx.norm()):
            snes.setConvergedReason(PETSc.SNES.ConvergedReason.DIVERGED_LINEAR_SOLVE)
            return
        x.axpy(-1.0, dx)
        self.form.skip_residual = True
        try:
            snes.computeFunction(x, f)
        finally:
            self.form.skip_residual = False
        snes.setIterationNumber(1)
        snes.setConvergedReason(PETSc.SNES.ConvergedReason.CONVERGED_ITS)


class Form:
    """What the formulations share: the system, the TS's step solver, reduced work vectors,
    the initial reduced state, the mass solve of reactions."""

    name = ""

    def __init__(self, system, ts: PETSc.TS, opts, t0: float):
        self.system = system
        self.ts = ts
        self.opts = opts
        self.comm = system.comm
        self.nonlinear = system.nonlinear
        self.skip_residual = False
        system.forget()  # the frames and loads as they are now, not as a former run saw them
        s = system.at(t0)
        self.n_local, self.n = s.M.getLocalSize()[0], s.M.getSize()[0]
        self.work, self.work2 = s.M.createVecLeft(), s.M.createVecLeft()
        self.q, self.v = s.M.createVecLeft(), s.M.createVecLeft()  # observer state, reused
        self._mksp = None
        self._jkey = None
        self._ready = False
        #: M v of the last :meth:`state` where the form has it without a product, else None
        self.mass_velocity = None
        #: the step matrices are small enough for PETSc's own LU (:func:`small_lu`)
        self.small = small_lu(system, opts.prefix, opts.values)
        self._rhs = None
        #: M q and K_s q of the last observed state (:mod:`dolfinx_mbs.state_products`)
        self.products = StateProducts()
        self._Mv = None

    def initial(self, x, name: str) -> PETSc.Vec:
        """A reduced vector from None (zero), a PETSc Vec in full or reduced layout, or
        per-body Functions (:func:`reduced_initial`)."""
        return reduced_initial(self.system, x, name)

    def set_up_snes(self) -> None:
        """One linear solve per step (:class:`LinearStep`), Newton for nonlinear strain."""
        snes = self.ts.getSNES()
        if self.nonlinear:  # Newton: the tangent at every iteration
            snes.setTolerances(rtol=1e-10, atol=1e-14, max_it=25)
            snes.setType(PETSc.SNES.Type.NEWTONLS)
        else:
            snes.setTolerances(rtol=1e-10, atol=1e-14, max_it=10)
            snes.setType(PETSc.SNES.Type.PYTHON)
            snes.setPythonContext(LinearStep(self))
        cheapest_lu(snes.getKSP(), self.small)

    def _unchanged(self, s, *shifts) -> bool:
        """True when the Jacobian already holds these operators and shifts (steady frames and
        a fixed step): it is then left untouched, and so is its factorization."""
        # shifts compared to 12 digits: the step that lands on t_end differs from dt by round-off
        key = (s.version,) + tuple(float(f"{x:.12e}") for x in shifts)
        # a nonlinear tangent changes with the state: never the same
        same = key == self._jkey and not self.nonlinear
        self._jkey = key
        # PETSc would refactor on every Jacobian evaluation; keep the factorization instead
        self.ts.getSNES().getKSP().getPC().setReusePreconditioner(same)
        return same

    def _set_up_solver(self, J, P) -> None:
        """Set the step solver up (factorize) for the Jacobian just formed: the first time
        with the run's options in the database (PETSc reads some only at the first set-up,
        the symbolic factorization), later on its own (the pattern stays: numeric
        factorization only)."""
        ksp = self.ts.getSNES().getKSP()
        ksp.setOperators(J, P)
        if self._ready:
            ksp.setUp()
        else:
            self.opts.set_up(ksp)
            self._ready = True

    def _nonlinear(self, t, q, force: bool):
        r, KN = self.system.nonlinear_reduced(t, q, force=force, tangent=not force)
        return r if force else KN

    #: the mass solve's relative tolerance when the run solves by multigrid (CG + Jacobi)
    MASS_RTOL = 1e-13

    def mass_solve(self, M: PETSc.Mat, b: PETSc.Vec, x: PETSc.Vec) -> None:
        """x = M^-1 b, factorized again only when M changed (PETSc follows the matrix's state:
        a constant mass matrix is factorized once per run); in a run that solves its steps by
        multigrid (:func:`dolfinx_mbs.step_solvers.multigrid`), where a factorization is what
        does not fit, by CG + Jacobi to :attr:`MASS_RTOL` (a mass matrix is well conditioned
        once scaled by its diagonal)."""
        if self._mksp is None:
            self._mksp = PETSc.KSP().create(self.comm)
            if multigrid(self.opts):
                self._mksp.setType(PETSc.KSP.Type.CG)
                self._mksp.getPC().setType(PETSc.PC.Type.JACOBI)
                self._mksp.setTolerances(rtol=self.MASS_RTOL, atol=0.0, max_it=1000)
            else:
                cheapest_lu(self._mksp, self.small)
        self._mksp.setOperators(M)
        self._mksp.solve(b, x)
        if not converged(self._mksp):
            reason = reason_name(PETSc.KSP.ConvergedReason, self._mksp.getConvergedReason())
            raise RuntimeError(f"the mass matrix solve failed ({reason}): is the mass matrix "
                               "positive definite (densities, constraints)?")

    def energy_products(self, s, q: PETSc.Vec, v: PETSc.Vec, Mv=None) -> tuple:
        """(M v, K_el q, K_pot q) at the state (q, v) of the record ``s`` (vectors reused;
        ``Mv``: M v where the caller has it): in node-block form from the state's M q, M v
        (one pass over M) and K_s q, which the next residual at the same state reuses
        (:class:`~dolfinx_mbs.state_products.StateProducts`), else three products."""
        if getattr(s, "blocks", None) is not None:
            P = self.products.form(s, q, v if Mv is None else None)
            return (P.Mv if Mv is None else Mv,) + P.energies(s)
        if Mv is None:
            if self._Mv is None:
                self._Mv = q.duplicate()
            Mv = self._Mv
            s.M.mult(v, Mv)
        s.Kel.mult(q, self.work)
        s.Kpot.mult(q, self.work2)
        return Mv, self.work, self.work2

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec, out: PETSc.Vec) -> PETSc.Vec:
        """q'' from the equations of motion at (q, q'): M q'' = f - C q' - K q."""
        s = self.system.at(t)
        if self._rhs is None:
            self._rhs = q.duplicate()
        rhs = self._rhs
        s.f.copy(rhs)
        s.C.mult(v, self.work)
        rhs.axpy(-1.0, self.work)
        s.K.mult(q, self.work)
        rhs.axpy(-1.0, self.work)
        self.mass_solve(s.M, rhs, out)
        return out

    def destroy(self) -> None:
        """Release the PETSc objects (collective) and the references to the run."""
        snes = self.ts.getSNES()
        if snes.getType() == PETSc.SNES.Type.PYTHON:
            snes.setPythonContext(None)
        self.ts.destroy()
        if self._mksp is not None:
            self._mksp.destroy()
            self._mksp = None


class SecondOrderForm(Form):
    """M q'' + C q' + K q (+ n(q)) = f as TS I2 function/Jacobian (TSALPHA2)."""

    name = "second-order"

    def __init__(self, system, ts, opts, t0):
        super().__init__(system, ts, opts, t0)
        s = system.at(t0)
        ts.setType("alpha2")
        self.J = s.M.duplicate()
        self.F = s.M.createVecLeft()
        ts.setI2Function(self._function, self.F)
        ts.setI2Jacobian(self._jacobian, self.J, self.J)
        self.set_up_snes()

    def _function(self, ts, t, U, V, A, F):
        if self.skip_residual:
            return
        s = self.system.at(t)
        kr = s.blocks
        if kr is not None and not any(b for *_, b in kr.blocks) and self.products.holds(s, U):
            # at the last observed state (PETSc's first guess): M (A + W_C V) + W_K M U + K_s U
            apply_blocks(kr.blocks, V, self.work, 2)
            self.work.axpy(1.0, A)
            s.M.mult(self.work, F)
            apply_blocks(kr.blocks, self.products.Mq, F, 3, add=True)
            F.axpy(1.0, self.products.Ksq)
            F.axpy(-1.0, s.f)
        else:
            second_order_residual(s, U, V, A, F, self.work)
        if self.nonlinear:
            F.axpy(1.0, self._nonlinear(t, U, True))

    def _jacobian(self, ts, t, U, V, A, shift_v, shift_a, J, P):
        s = self.system.at(t)
        if self._unchanged(s, shift_v, shift_a):
            return
        s.K.copy(J, structure=SAME)
        J.axpy(shift_v, s.C, structure=SAME)
        J.axpy(shift_a, s.M, structure=SAME)
        if self.nonlinear:
            J.axpy(1.0, self._nonlinear(t, U, False), structure=SUBSET)
        self._set_up_solver(J, P)

    def initial_state(self, t0, q0, v0, p0=None):
        U, V = q0.copy(), v0.copy()
        if self.system.has_multipliers:  # lambda(t0) consistent with the state
            self.system.initial_multipliers(t0, U, V)
        self.ts.setSolution2(U, V)
        return U

    def state(self, t: float, need_v: bool = True):
        """Reduced displacement and velocity at the TS's current solution (reused vectors)."""
        U, V = self.ts.getSolution2()
        U.copy(self.q)
        V.copy(self.v)
        return self.q, self.v
