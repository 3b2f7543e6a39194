"""Tests of the meshes and their builders (dolfinx_mbs.meshes)."""
