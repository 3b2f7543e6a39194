"""Solver options without lasting changes to PETSc's global options database.

The package's solvers read the options database under their prefix (``mbs_``, ``mbs_static_``,
``mbs_saddle_``, ``mbs_modal_``): a user's options there override the package's defaults, and
the ``options=`` of :func:`dolfinx_mbs.integrate.integrate` override both for one run.

Defaults that have an object call (TS, SNES, KSP and PC types) are set on the objects before
``setFromOptions()``, so the database wins. The others exist only as options: TS adaptivity and
the SNES line search (petsc4py has no handle on TSAdapt, 3.18 none on the line search), and what
PETSc reads only when it sets a solver up (PCFIELDSPLIT's sub-solvers, MUMPS' controls at the
factorization). Those, and the per-run values, enter the global database only while an
object reads it (its ``setFromOptions()`` or ``setUp()``) and leave it right after, as they were
found, also when the call raises. No user code runs in that window, so callbacks, other solvers
and other runs never see them.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Iterator, Mapping, cast

from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.records import FrozenMapping

__all__ = ["SolverOptions", "given_options", "direct_lu", "factorize", "reason_name", "converged",
           "solver_reasons", "error_words", "solve_in_words", "SAME", "SUBSET", "DIFFERENT",
           "EIGEN_PREFIX"]

#: how the pattern of a matrix combined into another relates to it (``Mat.axpy``, ``Mat.copy``)
SAME = PETSc.Mat.Structure.SAME_NONZERO_PATTERN
#: the pattern of the matrix combined in is a subset of the other's
SUBSET = PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN
#: the patterns differ (the result's is their union)
DIFFERENT = PETSc.Mat.Structure.DIFFERENT_NONZERO_PATTERN

log = logging.getLogger(__name__)

#: MUMPS's INFOG(1) when a workspace its analysis sized was too small for the factorization
#: (delayed pivots outgrow the estimate; in parallel the pivot order, hence the need, can
#: differ from run to run): -8, -9, -11, -12, -14, -15, -17 and -20 of its user's guide
MUMPS_WORKSPACE_ERRORS = (-8, -9, -11, -12, -14, -15, -17, -20)
#: times a factorization short of workspace is redone, each time with twice the margin
#: ICNTL(14) (percent over the analysis' estimate; MUMPS's default 20 becomes 40 ... 640)
MUMPS_RETRIES = 5

#: the options prefix of the eigensolvers (SLEPc EPS/PEP of modes, Campbell and reduced bodies)
EIGEN_PREFIX = "mbs_modal_"


class SolverOptions:
    """The options of one solver's PETSc objects, in the database only while they read it.

    Args:
        prefix: options prefix of the objects, e.g. ``"mbs_"``.
        defaults: the package's values, by option name without the prefix; each applies only
            when the database has no entry for it.
        values: values for this call, by option name without the prefix; they override the
            database.
    """

    def __init__(self, prefix: str, defaults: Mapping[str, object] | None = None,
                 values: Mapping[str, object] | None = None) -> None:
        self.prefix = prefix
        self.defaults = dict(defaults or {})
        self.values = dict(values or {})

    @contextlib.contextmanager
    def inserted(self) -> Iterator[None]:
        """Put the options in the global database for the duration of the block, then restore
        every entry it touched (value, bare flag or absence), also when the block raises."""
        db = PETSc.Options()
        # decided at every insertion: the database may have changed since the last one
        entries = {k: v for k, v in self.defaults.items() if not db.hasName(self.prefix + k)}
        entries.update(self.values)
        saved = {}
        try:
            for name, value in entries.items():
                key = self.prefix + name
                # a bare flag reads as "" and is restored as a bare flag
                saved[key] = db.getString(key) if db.hasName(key) else None
                db[key] = value
            yield
        finally:
            for key, old in saved.items():
                if old is None:
                    db.delValue(key)
                else:
                    db[key] = old

    def set_from_options(self, obj: PETSc.Object) -> None:
        """``obj.setFromOptions()`` with these options in the database.

        Args:
            obj: the PETSc object.
        """
        with self.inserted():
            obj.setFromOptions()

    def set_up(self, ksp: PETSc.KSP) -> None:
        """``ksp.setUp()`` with these options in the database, PCFIELDSPLIT's sub-solvers
        included. Call it once the operators are set, before each solve that may set the
        solver up again (new operator values or pattern): PETSc reads some options only then.

        Args:
            ksp: the KSP.
        """
        with self.inserted():
            factorize(ksp)
            pc = ksp.getPC()
            # PCFIELDSPLIT sets its sub-solvers up (factorizes) at their first use: do it here
            if pc.getType() == PETSc.PC.Type.FIELDSPLIT:
                for sub in pc.getFieldSplitSubKSP():
                    factorize(sub)


def _factor_error(ksp: PETSc.KSP) -> int:
    """0 when ``ksp``'s factorization (if any) succeeded, else MUMPS's INFOG(1) (negative),
    or -1 for another factorization that failed; the same on every rank."""
    pc = ksp.getPC()
    if pc.getType() not in (PETSc.PC.Type.LU, PETSc.PC.Type.CHOLESKY):
        return 0
    if pc.getFactorSolverType() == "mumps":
        # MUMPS's global INFOG(1): the same on every rank, without a message
        return min(0, int(pc.getFactorMatrix().getMumpsInfog(1)))
    failed = getattr(pc, "getFailedReason", None)  # petsc4py >= 3.19; else the KSP's
    bad = bool(failed() != 0) if failed is not None else \
        ksp.getConvergedReason() == PETSc.KSP.ConvergedReason.DIVERGED_PCSETUP_FAILED
    comm = ksp.getComm().tompi4py()
    if comm.size > 1:
        bad = bool(comm.allreduce(bad, op=MPI.LOR))
    return -1 if bad else 0


def _factor_words(ksp: PETSc.KSP, err: int) -> str:
    """A failed factorization of ``ksp`` (its error ``err`` from :func:`_factor_error`) in
    words, with what to try."""
    if err == -1:
        return "PETSc's factorization; is the matrix singular?"
    F = ksp.getPC().getFactorMatrix()
    words = f"MUMPS INFOG(1) = {err}, INFOG(2) = {int(F.getMumpsInfog(2))}"
    if err in MUMPS_WORKSPACE_ERRORS:
        option = f"-{ksp.getOptionsPrefix() or ''}mat_mumps_icntl_14"
        return f"{words}: out of workspace with the margin ICNTL(14) = " \
            f"{int(F.getMumpsIcntl(14))} percent; raise it with the option {option}"
    return f"{words}; is the matrix singular (a body free to move, a shift on an eigenvalue)?"


def factorize(ksp: PETSc.KSP, what: str | None = None,
              options: SolverOptions | None = None) -> int:
    """``ksp.setUp()`` (the factorization of a direct solver), checked on every rank. MUMPS
    short of workspace (:data:`MUMPS_WORKSPACE_ERRORS`: its analysis' estimate was too small
    for the pivoting this matrix needed) is not left as a failure that PETSc reports only at
    the solve, or never (a MatMatSolve stops with INFOG(1) = -3, an inertia read from the
    failed factors is wrong): the factorization is redone from the analysis with the margin
    ICNTL(14) doubled, up to :data:`MUMPS_RETRIES` times. The larger margin stays with the
    solver for its later factorizations.

    Collective. Call it where the operators' values changed (a refactorization) or were
    first set.

    Args:
        ksp: the KSP, its operators set.
        what: the matrix factored, in words, for the error; None: no error, the failure is
            returned (the caller's solve reports it, e.g. a time step cut).
        options: the options a redone analysis reads (in the database while it runs), or
            None.

    Returns:
        0, or the failure: MUMPS's INFOG(1), -1 for another factorization.

    Raises:
        RuntimeError: the factorization failed and ``what`` is given (on every rank).
    """
    ksp.setUp()
    err = _factor_error(ksp)
    for _ in range(MUMPS_RETRIES):
        if err not in MUMPS_WORKSPACE_ERRORS:
            break
        pc = ksp.getPC()
        margin = max(2 * int(pc.getFactorMatrix().getMumpsIcntl(14)), 40)
        log.info("MUMPS short of workspace (INFOG(1) = %d, solver %r): factoring again with "
                 "ICNTL(14) = %d", err, ksp.getOptionsPrefix(), margin)
        # MUMPS skips a numeric factorization after a failed one: start again from the
        # analysis (PCReset drops the factors and the operators; both are set again), which
        # reads MUMPS's controls from the database: the run's options, and over them the
        # larger margin
        A, P = pc.getOperators()
        pc.reset()
        ksp.setOperators(A, P)
        more = SolverOptions(ksp.getOptionsPrefix() or "", values={"mat_mumps_icntl_14": margin})
        with options.inserted() if options is not None else contextlib.nullcontext():
            with more.inserted():
                ksp.setUp()
        err = _factor_error(ksp)
    if err and what is not None:
        raise RuntimeError(f"the factorization of {what} failed ({_factor_words(ksp, err)})")
    return err


def given_options(prefix: str, options: Mapping[str, object] | None = None,
                  start: str = "") -> Mapping[str, Any]:
    """The options given for a run, by name without ``prefix``: the database's entries under
    ``prefix``, overridden by the run's ``options``; only the names that begin with ``start``.

    Args:
        prefix: the options' prefix.
        options: the run's options (None: none).
        start: the names' beginning.

    Returns:
        The options by name (read-only; the database's values as strings).
    """
    given = {k[len(prefix):]: v for k, v in PETSc.Options().getAll().items()
             if k.startswith(prefix + start)}
    given.update((k, v) for k, v in (options or {}).items() if k.startswith(start))
    return FrozenMapping(given)


def direct_lu(ksp: PETSc.KSP, factorization: str = PETSc.PC.Type.LU,
              solver: str = "mumps") -> None:
    """Make ``ksp`` a direct solve: LU factorization (or ``factorization``, e.g. Cholesky), by
    MUMPS where PETSc has it (the package's one default solver; the options database may
    change it), or by ``solver``.

    Args:
        ksp: the KSP.
        factorization: the factorization (``PETSc.PC.Type``).
        solver: the factorization's package (``"mumps"``; ``"petsc"``: PETSc's own, serial).
    """
    ksp.setType(PETSc.KSP.Type.PREONLY)
    pc = ksp.getPC()
    pc.setType(factorization)
    try:
        pc.setFactorSolverType(solver)
    except PETSc.Error:  # pragma: no cover
        pass


def reason_name(enum: type, value: int) -> str:
    """The name of a PETSc converged reason (e.g. ``DIVERGED_ITS``), or its number.

    Args:
        enum: the reason's class (e.g. ``PETSc.KSP.ConvergedReason``).
        value: the reason's value.

    Returns:
        The name.
    """
    names = [k for k, v in vars(enum).items() if v == value and k.isupper()]
    return names[0] if names else str(value)


def _split_ksps(ksp: PETSc.KSP) -> list:
    """The sub-solvers of a PCFIELDSPLIT preconditioner of ``ksp`` once set up (or those a
    Python preconditioner lists as ``ksps``), else []."""
    pc = ksp.getPC()
    if pc.getType() == PETSc.PC.Type.PYTHON:
        return list(getattr(pc.getPythonContext(), "ksps", ()))
    if pc.getType() != PETSc.PC.Type.FIELDSPLIT:
        return []
    try:
        return cast(list, pc.getFieldSplitSubKSP())
    except PETSc.Error:  # pragma: no cover (not set up yet)
        return []


def converged(ksp: PETSc.KSP) -> bool:
    """True when ``ksp``'s last solve converged, and so did its PCFIELDSPLIT (or Python PC's)
    sub-solvers:
    PETSc lets an inner solver stop at its iteration limit (DIVERGED_ITS) without failing
    the outer one, which would leave a Krylov Schur solve inexact without a word.

    Args:
        ksp: the KSP.

    Returns:
        Whether every solver converged.
    """
    return ksp.getConvergedReason() >= 0 and \
        all(sub.getConvergedReason() >= 0 for sub in _split_ksps(ksp))


def solver_reasons(ts: PETSc.TS) -> str:
    """The converged reasons of a TS's nonlinear and linear solvers (and of the linear
    solver's PCFIELDSPLIT sub-solvers that failed), in words.

    Args:
        ts: the TS.

    Returns:
        The reasons in words.
    """
    snes = ts.getSNES()
    ksp = snes.getKSP()
    subs = [f"{sub.getOptionsPrefix()}: "
            f"{reason_name(PETSc.KSP.ConvergedReason, sub.getConvergedReason())} after "
            f"{sub.getIterationNumber()} iterations"
            for sub in _split_ksps(ksp) if sub.getConvergedReason() < 0]
    return (f"SNES {reason_name(PETSc.SNES.ConvergedReason, snes.getConvergedReason())}, "
            f"KSP {reason_name(PETSc.KSP.ConvergedReason, ksp.getConvergedReason())}"
            + "".join(f", {x}" for x in subs))


def error_words(e: BaseException) -> str:
    """A PETSc error in words: its messages without the call stack, e.g. "PETSc has generated
    inconsistent data: Initial vector is zero or belongs to the deflation space (error 77)".

    Args:
        e: the error.

    Returns:
        The words.
    """
    lines = [ln.split("] ", 1)[-1].strip() for ln in str(e).splitlines()[1:]]
    words = [ln for ln in lines if ln and "() at " not in ln and not ln.startswith("See ")]
    code = getattr(e, "ierr", None)
    tail = f"error {code}" if code is not None else str(e).splitlines()[0]
    return f"{': '.join(words)} ({tail})" if words else f"PETSc {tail}"


def solve_in_words(solver: PETSc.Object, what: str) -> None:
    """``solver.solve()`` (an EPS, PEP, ...), a PETSc error raised as RuntimeError in words.

    Collective: a failure on some ranks is raised on every rank.

    Args:
        solver: the solver (an EPS, PEP, ...).
        what: what is solved, in the message.

    Raises:
        RuntimeError: the solve failed on some rank.
    """
    err = None
    try:
        st = getattr(solver, "getST", None)
        if st is not None and st().getType() == "sinvert":
            # SLEPc raises when its shift-and-invert factorization fails: one that MUMPS ran
            # short of workspace is made again (factorize), and the set-up resumed
            try:
                solver.setUp()
            except (PETSc.Error, SystemError):
                if _factor_error(st().getKSP()) not in MUMPS_WORKSPACE_ERRORS:
                    raise
                factorize(st().getKSP())
                solver.setUp()
        solver.solve()
    except (PETSc.Error, SystemError) as e:
        # a callback's (ST's, KSP's) error comes as SystemError with the PETSc error as cause
        e = e if isinstance(e, PETSc.Error) else (e.__cause__ or e)
        err = error_words(e)
    comm = solver.getComm().tompi4py()
    if comm.size > 1:
        # SLEPc solves its small projected problem on every rank, and LAPACK may fail on one
        # rank only (its Schur reordering, trexc, on eigenvalues equal to round-off): every
        # rank raises, instead of that rank alone leaving the others in the next collective
        found = [x for x in comm.allgather(err) if x is not None]
        err = found[0] if found else None
    if err is not None:
        raise RuntimeError(f"{what} failed: {err}; are the operators finite (the material "
                           "data, the frame's rates) and the shift away from an "
                           "eigenvalue?") from None
