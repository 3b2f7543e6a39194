"""Tests of the PETSc TS backend of time integration (dolfinx_mbs.integrate.ts)."""
