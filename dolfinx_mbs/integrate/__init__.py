"""Time integration of the reduced equations of motion: one entry point, :func:`integrate`,
stepping a system with PETSc TS (``ts``), the sparse constant-operator path (``sparse``) or the
small dense path (``dense``); what a run records (``observers``), its checkpoints and its
divergence check."""

from dolfinx_mbs.integrate.run import FORMULATIONS, Result, integrate

__all__ = ["FORMULATIONS", "Result", "integrate"]
