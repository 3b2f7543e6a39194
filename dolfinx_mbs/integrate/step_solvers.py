"""The step solver of a TS run: the package's default options and multigrid's near null space.

* Second-order form: one n x n step matrix; direct LU (MUMPS, or PETSc's own LU for small
  systems) by default; with ``-mbs_pc_type gamg`` its Jacobian carries the bodies' rigid-body
  modes as GAMG's near null space.
* First-order and Hamilton forms: the 2n step system goes through its exact Schur complement
  on n unknowns (PCFIELDSPLIT, Schur factorization FULL; the eliminated block is a I, inverted
  exactly by Jacobi). By default the Schur complement S is factorized (LU). With
  ``-mbs_pc_type gamg`` (the second-order form's option, so one set of options serves every
  formulation) or ``-mbs_fieldsplit_s_pc_type gamg``, S is solved iteratively instead: Krylov
  (``-mbs_ksp_type``, default GMRES, right preconditioned so that its relative tolerance
  bounds the true residual) with GAMG on S, which carries the rigid-body near null space. The
  run's ``ksp_*`` and ``pc_*`` options (``ksp_rtol``, ``pc_gamg_threshold``, ...) then apply to
  the Schur split (``fieldsplit_s_``); the outer solve stays one application of the exact
  elimination (``preonly``), and a Schur solve that does not reach its tolerance fails the
  step (:func:`dolfinx_mbs.petsc_options.converged`) rather than giving an inexact one. The
  step then stores S alone, no 2n matrix (:mod:`dolfinx_mbs.integrate.ts.schur_shell`); the
  velocity rows,
  whose S is a product, keep PCFIELDSPLIT with GAMG on its split (no near null space).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Dict, cast

from petsc4py import PETSc

from dolfinx_mbs.petsc_options import SolverOptions, direct_lu, given_options

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.config import RunSystem
    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["run_options", "option", "multigrid", "schur_multigrid", "attach_near_nullspace",
           "SCHUR_RTOL", "SMALL_LU", "small_lu", "cheapest_lu"]

log = logging.getLogger(__name__)

# fixed steps unless asked otherwise; full Newton steps (the equations are linear). Options
# rather than object calls: petsc4py has no handle on TSAdapt, nor (3.18) on the line search
DEFAULT_OPTIONS = {"ts_adapt_type": "none", "snes_linesearch_type": "basic"}
# first-order and Hamilton: the eliminated block a I by Jacobi (exact), the Schur complement
# a M + C + K / a (first-order) or a M + 2 G_p + D + K_h / a (Hamilton), formed by the form
# (or PETSc's "selfp" rule, exact for a diagonal block), by LU
SCHUR_OPTIONS = {"fieldsplit_d_ksp_type": "preonly", "fieldsplit_d_pc_type": "jacobi",
                 "fieldsplit_s_ksp_type": "preonly", "fieldsplit_s_pc_type": "lu",
                 "fieldsplit_s_pc_factor_mat_solver_type": "mumps"}
#: the Schur split's relative tolerance under multigrid unless the run gives ``ksp_rtol``
#: (of the true residual: right preconditioning), the second-order bench's tolerance
SCHUR_RTOL = 1e-10


def option(opts: SolverOptions, name: str) -> str | None:
    """The value ``name`` (without the prefix) takes in a run with ``opts``: the run's value,
    else the database's, else the package's default, else None (as a string).

    Args:
        opts: the run's solver options.
        name: the option (without the prefix).

    Returns:
        Its value as a string, or None.
    """
    if name in opts.values:
        return str(opts.values[name])
    db = PETSc.Options()
    if db.hasName(opts.prefix + name):
        return cast(str, db.getString(opts.prefix + name))
    return str(opts.defaults[name]) if name in opts.defaults else None


def run_options(prefix: str, formulation: str, constraints: str,
                options: Dict[str, object] | None = None,
                small: bool = False) -> SolverOptions:
    """The options of one :func:`dolfinx_mbs.integrate.integrate` run: the package's defaults
    that exist only as PETSc options (each unless the database has it), overridden by the
    run's ``options``; for the 2n forms under multigrid, the Krylov and GAMG options moved to
    the Schur split (see the module's doc).

    Args:
        prefix: the TS's options prefix.
        formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
        constraints: ``"maggi"`` or ``"multipliers"``.
        options: the caller's options for this run, without the prefix.
        small: the Schur complement factorized by PETSc's own LU, not MUMPS
            (:func:`dolfinx_mbs.integrate.ts.second_order.small_lu`).
    """
    defaults: Dict[str, object] = dict(DEFAULT_OPTIONS)
    if formulation != "second-order":  # the Schur complement solvers
        defaults.update(SCHUR_OPTIONS)
        if small:  # PETSc's own LU (formulations.SMALL_LU)
            defaults.update(fieldsplit_s_pc_factor_mat_solver_type="petsc",
                            fieldsplit_s_pc_factor_mat_ordering_type="qmd")
    if constraints == "multipliers" or formulation != "second-order":
        # room for MUMPS's pivoting: the saddle point, and the 2n systems whose blocks differ
        # in scale by many orders (a I beside K) need more than its default estimate
        defaults["mat_mumps_icntl_14"] = 200
    opts = SolverOptions(prefix, defaults, options)
    if formulation != "second-order" and option(opts, "pc_type") == "gamg":
        _schur_by_multigrid(opts)
    if formulation != "second-order" and schur_multigrid(opts):
        for key in ("fieldsplit_s_pc_factor_mat_solver_type",
                    "fieldsplit_s_pc_factor_mat_ordering_type", "mat_mumps_icntl_14"):
            opts.defaults.pop(key, None)
        opts.defaults.update(fieldsplit_s_ksp_type="gmres", fieldsplit_s_ksp_rtol=SCHUR_RTOL)
        if option(opts, "fieldsplit_s_ksp_type") == "gmres":
            opts.defaults["fieldsplit_s_ksp_pc_side"] = "right"  # rtol of the true residual
    return opts


def _schur_by_multigrid(opts: SolverOptions) -> None:
    """``-<prefix>pc_type gamg`` on a 2n form: the step stays the Schur factorization, its S
    solved by Krylov + GAMG; the run's and the database's ``ksp_*`` and ``pc_*`` options
    (given under the prefix, not naming a split) become the Schur split's."""
    db = PETSc.Options()
    given = given_options(opts.prefix, opts.values)
    for key, value in given.items():
        if key.startswith(("ksp_", "pc_")) and key != "pc_type":
            opts.values.setdefault("fieldsplit_s_" + key, value)
            if db.hasName(opts.prefix + key):
                db.getString(opts.prefix + key)  # read (used): PETSc's unused-option note
    opts.values.update(ksp_type="preonly", pc_type="fieldsplit", fieldsplit_s_pc_type="gamg")


def multigrid(opts: SolverOptions) -> bool:
    """True when a run with ``opts`` solves its steps by GAMG (the second-order Jacobian or a
    2n form's Schur complement): its other solves (the mass matrix') then factorize nothing.

    Args:
        opts: the run's solver options.

    Returns:
        Whether it does.
    """
    return option(opts, "pc_type") == "gamg" or schur_multigrid(opts)


def schur_multigrid(opts: SolverOptions) -> bool:
    """True when a 2n form's Schur split is solved with GAMG in a run with ``opts``.

    Args:
        opts: the run's solver options.

    Returns:
        Whether it is.
    """
    return option(opts, "fieldsplit_s_pc_type") == "gamg"


def attach_near_nullspace(system: RunSystem, problem: Any, formulation: str, ts: PETSc.TS) -> None:
    """Give GAMG the bodies' rigid-body modes (``system.near_nullspace()``) on the matrix it
    coarsens: the second-order Jacobian, or a 2n problem's Schur complement S. Call it after the
    TS read its options.

    Args:
        system: the run's typed system.
        problem: the run's TS problem.
        formulation: the run's formulation.
        ts: the run's TS.
    """
    if not hasattr(system, "near_nullspace"):
        return
    if formulation == "second-order":
        if ts.getSNES().getKSP().getPC().getType() == PETSc.PC.Type.GAMG:
            problem.J.setNearNullSpace(system.near_nullspace())
        return
    S = getattr(problem, "S", None)
    if not schur_multigrid(problem.opts):
        return
    if S is None:  # PETSc's "selfp" forms S (velocity rows): GAMG without the modes
        log.info("integrate: GAMG on the Schur complement without a near null space (%s)",
                 type(problem).__name__)
        return
    S.setNearNullSpace(system.near_nullspace())
    log.info("integrate: the Schur complement on n unknowns by %s + GAMG (rtol %s), the "
             "rigid-body modes as near null space",
             option(problem.opts, "fieldsplit_s_ksp_type"),
             option(problem.opts, "fieldsplit_s_ksp_rtol"))


#: Largest systems (unknowns, by the bodies' dimension) that one rank factorizes with PETSc's
#: own sparse LU (quotient minimum degree ordering) rather than MUMPS, whose set-up costs more
#: than such a factorization; measured in bench/results/per_step.md (a step matrix refactorized:
#: 2D 0.23 ms against 0.94 ms at 1,200 unknowns, compact 2D meshes equal near 2,500; 3D 1.0
#: against 1.6 ms at 300, MUMPS ahead from ~450 on compact meshes).
SMALL_LU = {2: 2000, 3: 400}


def small_lu(system: RunSystem | CoupledSystem, prefix: str,
             options: Dict[str, object] | None) -> bool:
    """True when ``system``'s step matrices go to PETSc's own LU (:data:`SMALL_LU`): one rank,
    at most the size for its bodies' dimension, no multipliers (their zero block needs
    MUMPS's pivoting), and no MUMPS option or value among the run's ``options`` or in the
    database under ``prefix`` (whoever names MUMPS gets MUMPS).

    Args:
        system: the run's system.
        prefix: the options prefix.
        options: the run's PETSc options, or None.

    Returns:
        Whether PETSc's own LU takes them.
    """
    gdim = max(b.gdim for b in system.bodies)
    if system.comm.size > 1 or system.has_multipliers or \
            system.n_reduced > SMALL_LU.get(gdim, 0):
        return False
    given = given_options(prefix, options)
    return not any("mumps" in k or str(v).lower() == "mumps" for k, v in given.items())


def cheapest_lu(ksp: PETSc.KSP, small: bool) -> None:
    """A direct solve (:func:`dolfinx_mbs.petsc_options.direct_lu`); with ``small``, by
    PETSc's own LU with quotient minimum degree ordering (the options database may change
    either).

    Args:
        ksp: the solver set.
        small: the matrices are small enough for PETSc's own LU (:func:`small_lu`).
    """
    direct_lu(ksp)
    if small:
        pc = ksp.getPC()
        pc.setFactorSolverType("petsc")
        pc.setFactorOrdering("qmd")
