"""Tests of the foundation modules (dolfinx_mbs.petsc_options, .lifetime and .checks)."""
