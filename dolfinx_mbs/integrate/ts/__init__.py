"""The PETSc TS backend: each formulation's residual and Jacobian as TS callbacks on a system,
the step's solvers (direct, Schur complement, multigrid)."""
