"""Elastic materials as UFL stress laws. SI units: Pa, kg/m^3, m.

Every material has a ``density`` (per unit volume), a ``thickness`` that scales all integrals
of a 2D body (1 for 3D and plane strain), the mesh dimension ``gdim`` it applies to (None for
3D isotropic, which needs a 3D mesh) and optional Rayleigh damping D = a M + b K.
"""

from __future__ import annotations

import math
from typing import Optional, Tuple

import ufl

from . import checks

__all__ = ["LinearElastic", "PlaneStress", "PlaneStrain", "Material"]


def _positive(x, name: str) -> float:
    v = checks.real(x, name)
    if v <= 0.0:
        raise ValueError(f"{name} must be positive and finite, got {x!r}")
    return v


def _poisson(nu) -> float:
    v = checks.real(nu, "nu")
    if not (-1.0 < v < 0.5):
        raise ValueError(f"nu (Poisson's ratio) must lie in (-1, 0.5), got {nu!r}")
    return v


def _rayleigh(rayleigh) -> Tuple[float, float]:
    if rayleigh is None:
        return (0.0, 0.0)
    try:
        a, b = (float(c) for c in rayleigh)
    except (TypeError, ValueError):
        raise TypeError("rayleigh must be a pair (a_mass, b_stiffness), "
                        f"got {rayleigh!r}") from None
    if a < 0.0 or b < 0.0 or not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"rayleigh coefficients must be finite and >= 0, got {rayleigh!r}")
    return (a, b)


def strain(u):
    """Small strain, sym(grad u)."""
    return ufl.sym(ufl.grad(u))


class Material:
    """Isotropic linear elastic material (base).

    Args:
        E: Young's modulus (Pa), positive.
        nu: Poisson's ratio in (-1, 0.5).
        density: mass density (kg/m^3), positive.
        rayleigh: optional (a, b): damping matrix D = a M + b K.
    """

    gdim: Optional[int] = 3
    kind = "3D"

    def __init__(self, E: float, nu: float, density: float,
                 rayleigh: Optional[Tuple[float, float]] = None):
        self.E = _positive(E, "E")
        self.nu = _poisson(nu)
        self.density = _positive(density, "density")
        self.rayleigh = _rayleigh(rayleigh)
        self.thickness = 1.0

    @property
    def mu(self) -> float:
        """Shear modulus."""
        return self.E / (2.0 * (1.0 + self.nu))

    @property
    def lmbda(self) -> float:
        """First Lame parameter of the stress law actually used (plane-stress corrected there)."""
        return self.E * self.nu / ((1.0 + self.nu) * (1.0 - 2.0 * self.nu))

    def stress(self, eps):
        """Cauchy stress (per unit thickness for 2D laws) of a strain tensor."""
        d = ufl.shape(eps)[0]
        return 2.0 * self.mu * eps + self.lmbda * ufl.tr(eps) * ufl.Identity(d)

    def check_mesh(self, gdim: int) -> None:
        """Raise ValueError if this law does not fit a mesh of geometric dimension ``gdim``."""
        if self.gdim is not None and gdim != self.gdim:
            raise ValueError(
                f"material {type(self).__name__} is a {self.kind} law for {self.gdim}D meshes, "
                f"but the mesh has geometric dimension {gdim}"
            )

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(E={self.E:g}, nu={self.nu:g}, density={self.density:g}"
                + (f", thickness={self.thickness:g}" if self.gdim == 2 else "") + ")")


class LinearElastic(Material):
    """3D isotropic linear elasticity (for 3D meshes)."""


class _Planar(Material):
    """A 2D law: ``thickness`` (m) scales mass, stiffness and loads."""

    gdim = 2

    def __init__(self, E, nu, density, thickness: float = 1.0, rayleigh=None):
        super().__init__(E, nu, density, rayleigh)
        self.thickness = _positive(thickness, "thickness")


class PlaneStrain(_Planar):
    """Plane strain (2D meshes, unit thickness unless ``thickness`` is given)."""

    kind = "plane-strain"


class PlaneStress(_Planar):
    """Plane stress (2D meshes), with ``thickness`` (m) scaling mass, stiffness and loads."""

    kind = "plane-stress"

    @property
    def lmbda(self) -> float:
        return self.E * self.nu / (1.0 - self.nu * self.nu)
