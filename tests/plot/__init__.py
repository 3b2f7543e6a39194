"""Tests of pictures of results (dolfinx_mbs.plot)."""
