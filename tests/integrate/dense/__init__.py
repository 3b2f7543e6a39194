"""Tests of the dense backend of time integration (dolfinx_mbs.integrate.dense)."""
