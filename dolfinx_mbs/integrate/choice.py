"""Which backend steps a run, and the times it steps to."""

from __future__ import annotations

from dolfinx_mbs.integrate.dense.operators import DENSE_MAX, DENSE_MAX_VARYING
from dolfinx_mbs.integrate.dense.varying import applies as varying_applies
from dolfinx_mbs.integrate.dense.varying import loads_steady
from dolfinx_mbs.integrate.sparse.alpha2 import SOLVER_OPTIONS
from dolfinx_mbs.integrate.sparse.alpha2 import applies as linear_applies
from dolfinx_mbs.petsc_options import given_options
from dolfinx_mbs.systems.records import constant_frame

__all__ = ["STEPPERS", "choose"]


STEPPERS = ("auto", "ts", "dense", "exact", "linear")


def choose(system, formulation: str, stepper: str, options, prefix: str,
           reactions=False) -> str:
    """The path of a run: ``"ts"``, ``"dense"``, ``"exact"`` or ``"linear"``
    (:mod:`dolfinx_mbs.integrate.sparse.alpha2`; ``stepper`` checked; a stepper asked for a system it
    cannot step raises, on every rank)."""
    if stepper not in STEPPERS:
        raise ValueError(f"stepper must be one of {STEPPERS}, got {stepper!r}")
    why = None
    if system.has_multipliers:
        why = "Lagrange multipliers (constraints='multipliers')"
    elif hasattr(system, "basis"):
        why = "velocity constraints"
    elif system.nonlinear:
        why = "nonlinear strain (stiffening='nonlinear')"
    if stepper == "auto":
        given = set(given_options(prefix)) | {k for k in (options or {})
                                              if k != "ts_alpha_radius"}
        if why is not None or any(not k.startswith(SOLVER_OPTIONS) for k in given):
            return "ts"
        if given:  # the step solver's options only: the linear path reads them
            return "linear" if linear_applies(system, formulation, reactions) is None else "ts"
        limit = DENSE_MAX if constant_frame(system) else \
            DENSE_MAX_VARYING if varying_applies(system) and loads_steady(system) else 0
        if system.n_reduced <= limit:
            return "dense"
        return "linear" if linear_applies(system, formulation, reactions) is None else "ts"
    if stepper == "linear":
        why = linear_applies(system, formulation, reactions)
        if why is not None:
            raise ValueError(f"stepper='linear' cannot step a run with {why}: use "
                             "stepper='ts' or 'auto'")
    if stepper != "ts" and why is not None:
        raise ValueError(f"stepper={stepper!r}: a system with {why} steps with PETSc TS only "
                         "(stepper='ts' or 'auto')")
    return stepper


