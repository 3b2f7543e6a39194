"""Tests of time integration (dolfinx_mbs.integrate)."""
