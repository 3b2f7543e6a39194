"""Static solves on the Maggi-reduced system: the steady deformation at a frame state, and
the unit prestress fields of bodies with ``stiffening="prestress"``.

    q = StaticSolver(comm).solve(system, t)          # reduced coordinates
    system.expand(t, q)                              # the full displacement

Linear solves use PETSc KSP with the options prefix ``mbs_static_`` (default: direct LU with
MUMPS, which counts null pivots so that a singular reduced stiffness is reported); with
nonlinear strain, Newton's method (PETSc SNES, same prefix).
"""

from __future__ import annotations

import weakref
from types import SimpleNamespace
from typing import Optional

import numpy as np
from dolfinx import fem
from petsc4py import PETSc

from dolfinx_mbs import compat
from dolfinx_mbs.petsc_options import SAME, SUBSET, SolverOptions, direct_lu
from dolfinx_mbs.systems.rigid_modes import rigid_subspace

__all__ = ["StaticSolver", "null_pivots", "negative_eigenvalues", "prestress", "Prestress"]

#: Options of the linear static solves: MUMPS counts null pivots (see :func:`null_pivots`);
#: the database's options win
STATIC_OPTIONS = SolverOptions("mbs_static_", compat.MUMPS_NULL_PIVOT_OPTIONS)


def null_pivots(ksp: PETSc.KSP) -> int:
    """Number of null pivots MUMPS found in the factorization of ``ksp``'s operator.

    0 when the preconditioner is not a factorization by MUMPS (other solvers report a
    singular matrix through the KSP's reason). With MUMPS, a failure to read its count is an
    error, not a silent 0: the singularity check would be off."""
    pc = ksp.getPC()
    if pc.getType() not in (PETSc.PC.Type.LU, PETSc.PC.Type.CHOLESKY):
        return 0
    if pc.getFactorSolverType() != "mumps":
        return 0
    return int(pc.getFactorMatrix().getMumpsInfog(28))


def negative_eigenvalues(ksp: PETSc.KSP, S: PETSc.Mat) -> int:
    """The number of negative eigenvalues of the symmetric matrix ``S``: the negative pivots of
    its LDL^T factorization by MUMPS (Sylvester's law of inertia), made with ``ksp`` (a KSP
    set up for it by :meth:`StaticSolver.inertia`). -1 when the factorization is not by MUMPS
    (no count is then known)."""
    ksp.setOperators(S)
    ksp.setUp()
    pc = ksp.getPC()
    if pc.getFactorSolverType() != "mumps":
        return -1
    return int(pc.getFactorMatrix().getMumpsInfog(12))


def free_motions(system, t: float) -> str:
    """The rigid motions ``system``'s constraints leave free at ``t``, in words (for an error
    message)."""
    rigid = rigid_subspace(system, t, frames=False)  # what the constraints leave free
    if rigid is None:
        return ("No rigid motion is left free: is the spin at a divergence speed (spin "
                "softening equal to the stiffness)?")
    names, dim = rigid.names, rigid.dim
    rigid.destroy()
    listed = f": {'; '.join(names)}" if names else ""
    more = "" if len(names) == dim else \
        f" ({dim - len(names)} of them only combined, a mechanism)" if names else \
        " (combinations of several bodies' motions, a mechanism)"
    return (f"The constraints leave {dim} rigid motion(s) free{listed}{more}: constrain them "
            "(model.clamp, model.pin, ...) for a static solve")


class StaticSolver:
    """The KSP (and, with nonlinear strain, the SNES) of static solves, made once.

    Args:
        comm: the model's communicator.
    """

    def __init__(self, comm):
        self.comm = comm
        self.ksp: Optional[PETSc.KSP] = None
        self._ksp_sizes = None
        self._snes = None
        self._snes_for = (None, None)
        self._q: Optional[PETSc.Vec] = None
        self._br: Optional[PETSc.Vec] = None
        self._for = None  # the reducer the reduced vectors belong to
        self._inertia_ksp: Optional[PETSc.KSP] = None
        #: Newton iterations of the last nonlinear solve
        self.newton_iterations = 0

    def destroy(self) -> None:
        """Destroy the solvers (collective: on every rank at the same point); they are made
        again when next asked for."""
        for name in ("ksp", "_inertia_ksp", "_snes"):
            obj = getattr(self, name)
            if obj is not None:
                obj.destroy()
                setattr(self, name, None)
        self._ksp_sizes, self._snes_for = None, (None, None)

    def linear(self, A: PETSc.Mat) -> PETSc.KSP:
        """The KSP with operator ``A``, set up (factorized if ``A`` changed; a new KSP when
        the size changed: the prestress of a model with reduced bodies is solved on the full
        reducer, its static states on the reduced one)."""
        if self.ksp is not None and self._ksp_sizes != A.getSizes():
            self.ksp.destroy()
            self.ksp = None
        self._ksp_sizes = A.getSizes()
        if self.ksp is None:
            ksp = PETSc.KSP().create(self.comm)
            direct_lu(ksp)
            ksp.setOptionsPrefix(STATIC_OPTIONS.prefix)
            STATIC_OPTIONS.set_from_options(ksp)
            self.ksp = ksp
        self.ksp.setOperators(A)
        STATIC_OPTIONS.set_up(self.ksp)
        return self.ksp

    def inertia(self, Kr: PETSc.Mat) -> int:
        """The number of negative eigenvalues of the symmetric part of ``Kr`` (a second
        factorization: Cholesky (LDL^T) by MUMPS, about half the cost of the LU of the
        solve); -1 when MUMPS is not available."""
        if self._inertia_ksp is None:
            ksp = PETSc.KSP().create(self.comm)
            direct_lu(ksp, PETSc.PC.Type.CHOLESKY)
            self._inertia_ksp = ksp
        S = Kr.transpose(PETSc.Mat())
        S.axpy(1.0, Kr)   # Kr + Kr^T: the same inertia as the symmetric part
        S.setOption(PETSc.Mat.Option.SYMMETRIC, True)
        try:
            return negative_eigenvalues(self._inertia_ksp, S)
        finally:
            S.destroy()

    def solve(self, system, t: float, states=None) -> PETSc.Vec:
        """The static equilibrium of ``system`` (a :class:`dolfinx_mbs.systems.SecondOrderSystem`)
        at ``t`` in reduced coordinates (a Vec kept by this solver): one linear solve, or
        Newton's method from the last equilibrium with nonlinear strain.

        Raises:
            RuntimeError: the reduced stiffness is singular or Newton's method failed.
        """
        asm, red = system.assembly, system.reducer
        red.update(t)
        K = asm.stiffness(t, states=states)
        Q = asm.load(t, states=states)
        rhs = Q.copy(asm.create_vec("static_rhs"))
        K.mult(red.a0, rhs)
        rhs.aypx(-1.0, Q)  # Q - K a0
        Kr = red.reduce(K, key="K")
        if self._for is not red:  # new constraints: new reduced vectors
            self._for, self._br = red, None
            self._q = red.create_reduced_vec()
            self._q.zeroEntries()
        br = self._br = red.project(rhs, self._br)
        q = self._q
        if asm.nonlinear:
            self._newton(system, t, Kr, br, q)
            return q
        ksp = self.linear(Kr)
        ksp.solve(br, q)
        reason = ksp.getConvergedReason()
        pivots = null_pivots(ksp)
        if reason < 0 or pivots or not np.isfinite(q.norm()):
            q.zeroEntries()
            raise RuntimeError(
                f"static solve failed at t={t:g} (KSP reason {reason}, {pivots} null "
                f"pivots): the reduced stiffness is singular. {free_motions(system, t)}")
        negative = self.inertia(Kr)
        if negative > 0:
            q.zeroEntries()
            raise RuntimeError(
                f"static solve at t={t:g}: the reduced stiffness (with spin softening) has "
                f"{negative} negative eigenvalue(s), so the equilibrium is unstable: spin "
                "softening exceeds the elastic stiffness in that many directions. Either a "
                "body is held at too few points to resist rigid motion (e.g. at one corner: it "
                "can swing about it), or the spin is above a divergence speed.")
        return q

    def _newton(self, system, t: float, Kr: PETSc.Mat, br: PETSc.Vec, q: PETSc.Vec) -> None:
        """K_r q + A^T n(A q + a0) = b_r by SNES (newtonls, backtracking line search unless
        the options database says otherwise), from the guess in ``q``; the SNES is made once
        for these operators."""
        if self._snes is None or self._snes_for[0] is not Kr or self._snes_for[1] is not br:

            def residual(snes, x, F):
                Kr.mult(x, F)
                F.axpy(-1.0, br)
                F.axpy(1.0, system.nonlinear_reduced(t, x, tangent=False)[0])

            def jacobian(snes, x, A, P):
                Kr.copy(A, structure=SAME)
                A.axpy(1.0, system.nonlinear_reduced(t, x, force=False)[1],
                       structure=SUBSET)

            J = Kr.duplicate(copy=True)
            snes = PETSc.SNES().create(self.comm)
            snes.setOptionsPrefix("mbs_static_")
            snes.setType(PETSc.SNES.Type.NEWTONLS)
            snes.setFunction(residual, br.duplicate())
            snes.setJacobian(jacobian, J, J)
            direct_lu(snes.getKSP())
            snes.setFromOptions()
            self._snes, self._snes_for = snes, (Kr, br)
        snes = self._snes
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
        self.newton_iterations = its


def prestress(assembly, reducer, solver: StaticSolver) -> None:
    """Unit prestress fields of the bodies with ``stiffening="prestress"``: K u_c = q_c
    (elastic stiffness, the constraints of ``reducer``) for each unit case c of
    ``Body.prestress_cases`` (centrifugal, gravity, constant applied loads; every body loaded
    at once), then each body's geometric stiffness matrices."""
    bodies, space = assembly.bodies, assembly.space
    cases = []
    for b in bodies:
        for c in b.prestress_cases():
            b.prestress_fields[c] = fem.Function(b.V, name="u_prestress_" + "".join(
                str(x) for x in c))
            if c not in cases:
                cases.append(c)
    if not cases:
        return
    if len({id(b.frame) for b in bodies}) > 1:
        raise NotImplementedError(
            "prestress stiffening needs all bodies of the model in one frame (the "
            "steady stress of bodies moving differently is not separable)")
    ops = assembly.body_operators
    K = assembly.supported()  # bearings hold the rotor as the constraints do
    Kr = reducer.reduce(K, key="Kel" if K is assembly.elastic() else "Ksup")
    # a mechanism (a link pinned to an arm) has free motions: held by the border of
    # rigid_modes, K u + s M Q Q^T M u = b, i.e. K u = b - M Q Q^T b (a load's part that does
    # work on them balanced by their inertia) and no free motion in u: they carry no stress
    free = rigid_subspace(SimpleNamespace(reducer=reducer, space=space, assembly=assembly,
                                          bodies=bodies, comm=space.comm), frames=False)
    A = Kr if free is None else \
        free.border(Kr, None, reducer.reduce(assembly.mass(), key="M"))[0]
    ksp = solver.linear(A)
    temps = [fem.Function(b.V) for b in bodies]
    x = space.create_vec()
    q = reducer.create_reduced_vec()
    br = reducer.create_reduced_vec()
    xb, bb = A.createVecs()
    try:
        for case in cases:
            Q = space.gather([o.unit_prestress_load(case) for o in ops], x.duplicate())
            reducer.project(Q, br)
            bb.zeroEntries()
            bb.getArray()[: br.getLocalSize()] = br.getArray(readonly=True)
            ksp.solve(bb, xb)
            q.getArray()[:] = xb.getArray(readonly=True)[: q.getLocalSize()]
            reason = ksp.getConvergedReason()
            if reason < 0 or null_pivots(ksp) or not np.isfinite(q.norm()):
                raise RuntimeError(
                    f"prestress solve failed (KSP reason {reason}): is every body "
                    "constrained against rigid motion?")
            reducer.expand(q, out=x, homogeneous=True)
            funcs = [b.prestress_fields.get(case, tmp) for b, tmp in zip(bodies, temps)]
            space.scatter(x, funcs)
    finally:
        for v in (xb, bb):
            v.destroy()
        if free is not None:
            free.destroy()
    for o in ops:
        if o.body.prestress_fields:
            o.set_prestress()


class Prestress:
    """:func:`prestress` as an assembly's call: ``prestress(assembly, owner.reducer,
    owner.static)``, the owner (a model) held by a weak reference. The model owns its
    assembly: a strong reference back would make the model a reference cycle, freed only when
    Python's garbage collector runs (at different times on different ranks)."""

    def __init__(self, owner):
        self.owner = weakref.ref(owner)

    def __call__(self, assembly) -> None:
        owner = self.owner()
        prestress(assembly, owner.reducer, owner.static)
