"""Tests of the assembled operators (dolfinx_mbs.assembly)."""
