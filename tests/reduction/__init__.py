"""Tests of reduced-order bodies (dolfinx_mbs.reduction)."""
