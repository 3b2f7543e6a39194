"""Tests of static and prestress solves (dolfinx_mbs.static)."""
