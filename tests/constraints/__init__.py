"""Tests of constraints, joints and the Maggi reducer (dolfinx_mbs.constraints)."""
