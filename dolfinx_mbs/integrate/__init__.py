"""Time integration of the reduced equations of motion: one entry point, :func:`integrate`.

:func:`integrate` (``run``) lets ``choice`` pick a :class:`~dolfinx_mbs.integrate.stepper.
Stepper` (``stepper``: the protocol) from one of the backends, PETSc TS (``ts``), the sparse
constant-operator path (``sparse``) or the small dense paths (``dense``: step by step, exact,
in batch), and hands it to the ``driver``, which owns what a run records (``observers``), its
checkpoints (``checkpoint``), its divergence check (``stability``), its check of the
small-displacement range (``motion_range``) and its errors. The schemes'
coefficients and stage algebra that the Python backends share are in ``schemes``. A run's
options are typed frozen dataclasses checked once (``config``: :class:`RunConfig` and its parts
:class:`Scheme`, :class:`Initial`, :class:`Output`, :class:`Checkpoints`, :class:`Solver`,
:class:`Observers`; the user's callback gets a :class:`StepState`).
"""

from dolfinx_mbs.integrate.config import (
    Checkpoints,
    Initial,
    Observers,
    Output,
    RunConfig,
    Scheme,
    Solver,
    StepState,
)
from dolfinx_mbs.integrate.run import FORMULATIONS, Result, integrate

__all__ = ["FORMULATIONS", "Checkpoints", "Initial", "Observers", "Output", "Result",
           "RunConfig", "Scheme", "Solver", "StepState", "integrate"]
