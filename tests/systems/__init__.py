"""Tests of the systems of equations, computed frames and rigid modes (dolfinx_mbs.systems)."""
