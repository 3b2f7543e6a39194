"""Tests of the Model as a user meets it (dolfinx_mbs.model): seed 003's rod, input, messages."""
