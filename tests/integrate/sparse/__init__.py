"""Tests of the sparse linear backend of time integration (dolfinx_mbs.integrate.sparse)."""
