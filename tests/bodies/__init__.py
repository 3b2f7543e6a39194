"""Tests of bodies, their loads and the user's own forms (dolfinx_mbs.bodies)."""
