"""Tests of frames and their motions (dolfinx_mbs.frames)."""
