"""Tests of the moving-frame and stationary forms (dolfinx_mbs.forms)."""
