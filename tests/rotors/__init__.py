"""Tests of rotors in the stationary frame (dolfinx_mbs.rotors)."""
