"""Tests of the command line (dolfinx_mbs.cli)."""
