"""The 2n step of the first-order and Hamilton forms under multigrid, without the 2n matrix.

With ``-mbs_pc_type gamg`` (:mod:`dolfinx_mbs.integrate.step_solvers`) the step system

    [[A_dd, A_ds], [A_sd, A_ss]],  A_dd = a I,

is solved by the exact Schur elimination of its a I block, S x_s = r_s - A_sd r_d / a (first
order) or r_s + r_d / a (Hamilton), the other half from the eliminated row; S (one matrix on
the operators' pattern) by Krylov + GAMG (options prefix ``<prefix>fieldsplit_s_``, the
PCFIELDSPLIT split's, so the same options serve both set-ups). The other blocks are never
stored: they are products with the system's own matrices, so the step keeps one n x n matrix
and GAMG's hierarchy, as the second-order form's Jacobian does. The step matrix is a shell
(its product is the Jacobian's, for an outer Krylov solver), the preconditioner a Python PC
applying the elimination.

* first-order: y = (q, v), d = q, s = v: [[a I, -I], [K, a M + C]], S = a M + C + K / a;
* Hamilton: y = (q, p), d = p, s = q: [[a M + G_p, -I], [K_h + a G_q, a I]],
  S = a M + G_p + G_q + K_h / a (G_q = G_p + D for fixed constraints).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Tuple

from petsc4py import PETSc

from dolfinx_mbs.petsc_options import SAME, SUBSET, converged

if TYPE_CHECKING:
    from mpi4py import MPI

    from dolfinx_mbs.petsc_options import SolverOptions

__all__ = ["SchurElimination", "StepShell", "fill_schur", "make"]


class TwoBlocks(Protocol):
    """What :func:`make` reads of a first-order or Hamilton problem
    (:mod:`dolfinx_mbs.integrate.ts.first_order`, which builds on this module)."""

    name: str
    #: which block is the a I one: ``"a"`` or ``"b"``
    diagonal: str
    is_a: PETSc.IS
    is_b: PETSc.IS
    work: PETSc.Vec
    comm: MPI.Comm
    opts: SolverOptions


def _coupling(s: Any, name: str, a: float, KN: PETSc.Mat | None, x: PETSc.Vec, y: PETSc.Vec,
              w: PETSc.Vec) -> None:
    """Set y to the coupling block times x: K (+ K_N) (first-order), K_h (+ K_N) + a G_q
    (Hamilton)."""
    if name == "first-order":
        s.K.mult(x, y)
    else:
        s.Kh.mult(x, y)
        if s.Gq is not None:
            s.Gq.mult(x, w)
        else:
            s.Gp.mult(x, w)
            if s.D is not None:
                s.D.multAdd(x, w, w)
        y.axpy(a, w)
    if KN is not None:
        KN.multAdd(x, y, y)


def _kept(s: Any, name: str, a: float, x: PETSc.Vec, y: PETSc.Vec, w: PETSc.Vec) -> None:
    """Set y = A_ss x: (a M + C) x (first-order), (a M + G_p) x (Hamilton)."""
    s.M.mult(x, y)
    y.scale(a)
    (s.C if name == "first-order" else s.Gp).mult(x, w)
    y.axpy(1.0, w)


def fill_schur(s: Any, name: str, a: float, KN: PETSc.Mat | None, S: PETSc.Mat) -> None:
    """S of the form ``name`` at shift ``a``, on the operators' one pattern.

    Args:
        s: the record (:class:`~dolfinx_mbs.systems.records.SecondOrder` or
            :class:`~dolfinx_mbs.systems.records.Hamiltonian`).
        name: ``"first-order"`` or ``"hamiltonian"``.
        a: the shift.
        KN: the nonlinear tangent (on a subset of the pattern), or None.
        S: the matrix to fill.
    """
    if name == "first-order":  # a M + C + K / a
        s.C.copy(S, structure=SAME)
        S.axpy(1.0 / a, s.K, structure=SAME)
    else:  # a M + G_p + G_q + K_h / a
        s.Gp.copy(S, structure=SAME)
        S.axpy(1.0 / a, s.Kh, structure=SAME)
        if s.Gq is not None:
            S.axpy(1.0, s.Gq, structure=SAME)
        else:
            S.axpy(1.0, s.Gp, structure=SAME)
            if s.D is not None:
                S.axpy(1.0, s.D, structure=SAME)
    S.axpy(a, s.M, structure=SAME)
    if KN is not None:
        S.axpy(1.0 / a, KN, structure=SUBSET)


class _State:
    """The step's operators (record, shift, nonlinear tangent) and index sets, shared by the
    shell matrix and the preconditioner; ``d`` is the eliminated block's."""

    def __init__(self, name: str, is_d: PETSc.IS, is_s: PETSc.IS, work: PETSc.Vec) -> None:
        self.name, self.is_d, self.is_s = name, is_d, is_s
        self.s: Any = None  # the record
        self.a: float | None = None  # the shift, set at each step
        self.KN: PETSc.Mat | None = None
        self.w1, self.w2 = work.duplicate(), work.duplicate()


class StepShell:
    """The step matrix's product (petsc4py Python matrix context).

    Args:
        state: the step's operators, shared with the preconditioner.
    """

    def __init__(self, state: _State) -> None:
        self.st = state

    def mult(self, mat: PETSc.Mat, x: PETSc.Vec, y: PETSc.Vec) -> None:
        """The step matrix times ``x``, into ``y`` (petsc4py's callback).

        Args:
            mat: the shell matrix.
            x: the vector multiplied.
            y: the product.
        """
        st = self.st
        assert st.a is not None  # (set before the step's solve)
        xd, xs = x.getSubVector(st.is_d), x.getSubVector(st.is_s)
        yd, ys = y.getSubVector(st.is_d), y.getSubVector(st.is_s)
        if st.name == "first-order":  # [a x_d - x_s, L x_d + A_ss x_s]
            xd.copy(yd)
            yd.scale(st.a)
            yd.axpy(-1.0, xs)
            _coupling(st.s, st.name, st.a, st.KN, xd, ys, st.w2)
            _kept(st.s, st.name, st.a, xs, st.w1, st.w2)
            ys.axpy(1.0, st.w1)
        else:  # [L x_s + a x_d, A_ss x_s - x_d]
            _coupling(st.s, st.name, st.a, st.KN, xs, yd, st.w2)
            yd.axpy(st.a, xd)
            _kept(st.s, st.name, st.a, xs, ys, st.w2)
            ys.axpy(-1.0, xd)
        for V, is_, sub in ((x, st.is_d, xd), (x, st.is_s, xs), (y, st.is_d, yd),
                            (y, st.is_s, ys)):
            V.restoreSubVector(is_, sub)


class SchurElimination:
    """The exact elimination of the a I block, S solved by ``ksp`` (petsc4py Python PC
    context). A Schur solve that misses its tolerance leaves infinities in the step (the
    step then fails, as PETSc marks a failed inner solve); ``ksps`` names it in the error
    (:func:`dolfinx_mbs.petsc_options.solver_reasons`).

    Args:
        state: the step's operators, shared with the shell matrix.
        ksp: the solver of S.
    """

    def __init__(self, state: _State, ksp: PETSc.KSP) -> None:
        self.st, self.ksp = state, ksp
        self.ksps = [ksp]
        self.rhs: PETSc.Vec | None = None

    def apply(self, pc: PETSc.PC, r: PETSc.Vec, x: PETSc.Vec) -> None:
        """The elimination applied to ``r``, into ``x`` (petsc4py's callback).

        Args:
            pc: the Python preconditioner.
            r: the residual.
            x: the solution of the step system.
        """
        st, a = self.st, self.st.a
        assert a is not None  # (set before the step's solve)
        rd, rs = r.getSubVector(st.is_d), r.getSubVector(st.is_s)
        xd, xs = x.getSubVector(st.is_d), x.getSubVector(st.is_s)
        if self.rhs is None:
            self.rhs = rs.duplicate()
        rhs = self.rhs
        rs.copy(rhs)
        if st.name == "first-order":  # S x_s = r_s - L r_d / a; x_d = (r_d + x_s) / a
            _coupling(st.s, st.name, a, st.KN, rd, st.w1, st.w2)
            rhs.axpy(-1.0 / a, st.w1)
            self.ksp.solve(rhs, xs)
            xd.waxpy(1.0, rd, xs)
            xd.scale(1.0 / a)
        else:  # S x_s = r_s + r_d / a; x_d = (r_d - L x_s) / a
            rhs.axpy(1.0 / a, rd)
            self.ksp.solve(rhs, xs)
            _coupling(st.s, st.name, a, st.KN, xs, st.w1, st.w2)
            xd.waxpy(-1.0, st.w1, rd)
            xd.scale(1.0 / a)
        if not converged(self.ksp):
            xs.set(float("inf"))
        for V, is_, sub in ((r, st.is_d, rd), (r, st.is_s, rs), (x, st.is_d, xd),
                            (x, st.is_s, xs)):
            V.restoreSubVector(is_, sub)


def make(problem: TwoBlocks, ts: PETSc.TS, M: PETSc.Mat,
         F: PETSc.Vec) -> Tuple[PETSc.Mat, PETSc.Mat, _State, PETSc.KSP]:
    """The shell step of ``problem`` on ``ts``.

    The TS's KSP is made ``preonly`` with the elimination as its Python PC. The run's options
    make the PC ``python`` (they hold ``pc_type``: see
    :func:`dolfinx_mbs.integrate.step_solvers.run_options`).

    Args:
        problem: the first-order or Hamilton problem.
        ts: the run's TS.
        M: the mass (S takes its pattern).
        F: the step's vector (the shell's layout).

    Returns:
        (J, S, state, inner KSP): the shell step matrix, S, the shared state and the Schur
        solver (Krylov + GAMG under ``<prefix>fieldsplit_s_``).
    """
    diag_a = problem.diagonal == "a"
    is_d, is_s = (problem.is_a, problem.is_b) if diag_a else (problem.is_b, problem.is_a)
    state = _State(problem.name, is_d, is_s, problem.work)
    comm = problem.comm
    sizes = F.getSizes()
    J = PETSc.Mat().createPython((sizes, sizes), StepShell(state), comm=comm)
    J.setUp()
    S = M.duplicate()
    inner = PETSc.KSP().create(comm)
    inner.setOptionsPrefix(problem.opts.prefix + "fieldsplit_s_")
    inner.setType(PETSc.KSP.Type.GMRES)
    inner.getPC().setType(PETSc.PC.Type.GAMG)
    inner.setOperators(S, S)
    ksp = ts.getSNES().getKSP()
    ksp.setType(PETSc.KSP.Type.PREONLY)
    pc = ksp.getPC()
    pc.setType(PETSc.PC.Type.PYTHON)
    pc.setPythonContext(SchurElimination(state, inner))
    return J, S, state, inner
