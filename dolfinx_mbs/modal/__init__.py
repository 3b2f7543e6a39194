"""Eigenproblems with SLEPc: the symmetric pencil, the gyroscopic quadratic eigenproblem,
natural frequencies and complex modes of a system."""

from dolfinx_mbs.modal.eigen import (
    ModalResult,
    generalized_frequencies,
    gyroscopic_frequencies,
    gyroscopic_modes,
    modes,
    natural_frequencies,
    negative_count,
    pencil_modes,
    representatives,
    signed_frequencies,
    spectrum_order,
    unstable,
)

__all__ = [
    "ModalResult",
    "generalized_frequencies",
    "gyroscopic_frequencies",
    "gyroscopic_modes",
    "modes",
    "natural_frequencies",
    "negative_count",
    "pencil_modes",
    "representatives",
    "signed_frequencies",
    "spectrum_order",
    "unstable",
]
