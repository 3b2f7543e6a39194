"""Tests of eigenproblems (dolfinx_mbs.modal)."""
