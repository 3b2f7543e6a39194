"""Tests of Campbell diagrams (dolfinx_mbs.campbell)."""
