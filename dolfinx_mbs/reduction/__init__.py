"""Reduced-order bodies: Craig-Bampton and modal shapes at a reference frame state, and the
reducer that composes them with the Maggi basis."""

from dolfinx_mbs.reduction.basis_reducer import BasisReducer, BasisSpace, OnBasis, classify
from dolfinx_mbs.reduction.reduced_body import METHODS, ReducedBody, body_shapes

__all__ = [
    "BasisReducer",
    "BasisSpace",
    "body_shapes",
    "classify",
    "METHODS",
    "OnBasis",
    "ReducedBody",
]
