"""Tests of material laws (dolfinx_mbs.materials)."""
