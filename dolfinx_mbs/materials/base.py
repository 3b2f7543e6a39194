"""The base of the elastic laws (:mod:`dolfinx_mbs.materials` lists them all): what the package
asks of a material (:class:`Material`), the small strain, and the check of a Rayleigh pair.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Tuple

import ufl

from dolfinx_mbs import checks

if TYPE_CHECKING:
    from ufl.core.expr import Expr

__all__ = ["Material", "strain", "rayleigh_pair"]


def rayleigh_pair(rayleigh: Tuple[float, float] | None) -> Tuple[float, float]:
    """Rayleigh damping coefficients checked: D = a M + b K.

    Args:
        rayleigh: ``(a_mass, b_stiffness)``, or None for no damping.

    Returns:
        ``(a, b)`` as floats, ``(0.0, 0.0)`` for None.

    Raises:
        TypeError: ``rayleigh`` is not a pair of numbers.
        ValueError: a coefficient is negative or not finite.
    """
    if rayleigh is None:
        return (0.0, 0.0)
    try:
        a, b = (float(c) for c in rayleigh)
    except (TypeError, ValueError):
        raise TypeError("rayleigh must be a pair (a_mass, b_stiffness), "
                        f"got {checks.shown(rayleigh)}") from None
    if a < 0.0 or b < 0.0 or not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"rayleigh coefficients must be finite and >= 0, got "
                         f"{checks.shown(rayleigh)}")
    return (a, b)


def strain(u: Expr) -> Expr:
    """Small strain, sym(grad u).

    Args:
        u: the displacement.

    Returns:
        The strain (UFL).
    """
    return ufl.sym(ufl.grad(u))


class Material:
    """Base class of the material laws: what the package uses of a material.

    Args:
        density: mass density (kg/m^3), positive.
        thickness: out-of-plane thickness (m) of a 2D law, which scales mass, stiffness and
            loads of the body; 1 for 3D laws.
        rayleigh: optional (a, b): damping matrix D = a M + b K (a in 1/s, b in s).

    Subclasses implement :meth:`stress` and set ``gdim`` (the mesh dimension the law is for,
    None for any) and ``kind`` (a word for messages); a law that is linear in the strain with
    constants that do not vary in space may say so by ``law_degree = 1`` (the quadrature of
    the nonlinear strain's forms reads it; None: UFL estimates it from :meth:`stress`).
    """

    gdim: int | None = 3
    kind = "3D"
    #: the polynomial degree of :meth:`stress` of a strain linear in x, where the law knows it
    #: (None: estimated by UFL where needed)
    law_degree: int | None = None

    def __init__(self, density: float, thickness: float = 1.0,
                 rayleigh: Tuple[float, float] | None = None) -> None:
        self.density = checks.positive(density, "density")
        self.thickness = checks.positive(thickness, "thickness")
        self.rayleigh = rayleigh_pair(rayleigh)

    def stress(self, eps: Expr) -> Expr:
        """Cauchy stress (Pa; a UFL tensor of the shape of ``eps``) of the small-strain tensor
        ``eps`` (a symmetric gdim x gdim UFL tensor). For a 2D law this is the in-plane stress;
        the forms multiply it by :attr:`thickness`.

        Args:
            eps: the small-strain tensor (a symmetric gdim x gdim UFL tensor).

        Returns:
            The stress (UFL).
        """
        raise NotImplementedError(f"{type(self).__name__} does not define stress()")

    def check_mesh(self, gdim: int) -> None:
        """Raise ValueError if this law does not fit a mesh of geometric dimension ``gdim``.

        Args:
            gdim: the mesh's geometric dimension.
        """
        if self.gdim is not None and gdim != self.gdim:
            raise ValueError(
                f"material {type(self).__name__} is a {self.kind} law for {self.gdim}D meshes, "
                f"but the mesh has geometric dimension {gdim}"
            )

    def _common_repr(self) -> str:
        return f"density={self.density:g}" + (f", thickness={self.thickness:g}"
                                              if self.gdim == 2 or self.thickness != 1.0 else "")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._common_repr()})"
