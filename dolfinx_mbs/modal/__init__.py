"""Eigenproblems with SLEPc: the symmetric pencil, the gyroscopic quadratic eigenproblem,
natural frequencies and complex modes of a system."""

from dolfinx_mbs.modal.eigen import (
    generalized_frequencies,
    gyroscopic_frequencies,
    gyroscopic_modes,
    modes,
    natural_frequencies,
    pencil_modes,
    representatives,
    signed_frequencies,
)

__all__ = [
    "generalized_frequencies",
    "gyroscopic_frequencies",
    "gyroscopic_modes",
    "modes",
    "natural_frequencies",
    "pencil_modes",
    "representatives",
    "signed_frequencies",
]
