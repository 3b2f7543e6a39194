"""Tests of output, points and read-back (dolfinx_mbs.io)."""
