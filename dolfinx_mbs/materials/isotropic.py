"""Isotropic elastic laws (3D, plane strain, plane stress) and the user's own law (UFL)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Tuple

import ufl

from dolfinx_mbs import checks
from dolfinx_mbs.materials.base import Material

if TYPE_CHECKING:
    from ufl.core.expr import Expr

__all__ = ["Isotropic", "LinearElastic", "PlaneStress", "PlaneStrain", "UserLaw"]


def _poisson(nu: float) -> float:
    v = checks.real(nu, "nu")
    if not (-1.0 < v < 0.5):
        raise ValueError(f"nu (Poisson's ratio) must lie in (-1, 0.5), got {checks.shown(nu)}")
    return v


class Isotropic(Material):
    """Isotropic linear elastic material (base of :class:`LinearElastic`, :class:`PlaneStrain`
    and :class:`PlaneStress`): sigma = 2 mu eps + lmbda tr(eps) I.

    Args:
        E: Young's modulus (Pa), positive.
        nu: Poisson's ratio in (-1, 0.5).
        density: mass density (kg/m^3), positive.
        rayleigh: optional (a, b): damping matrix D = a M + b K.
        thickness: the thickness of a 2D body (m; 1 for 3D).
    """

    #: linear in the strain, its constants numbers (the same everywhere)
    law_degree = 1

    def __init__(self, E: float, nu: float, density: float,
                 rayleigh: Tuple[float, float] | None = None, thickness: float = 1.0) -> None:
        self.E = checks.positive(E, "E")
        self.nu = _poisson(nu)
        super().__init__(density, thickness, rayleigh)

    @property
    def mu(self) -> float:
        """Shear modulus."""
        return self.E / (2.0 * (1.0 + self.nu))

    @property
    def lmbda(self) -> float:
        """First Lame parameter of the stress law actually used (plane-stress corrected there)."""
        return self.E * self.nu / ((1.0 + self.nu) * (1.0 - 2.0 * self.nu))

    def stress(self, eps: Expr) -> Expr:
        """Cauchy stress (per unit thickness for 2D laws) of a strain tensor.

        Args:
            eps: the small-strain tensor (a symmetric gdim x gdim UFL tensor).

        Returns:
            The stress (UFL).
        """
        d = ufl.shape(eps)[0]
        return 2.0 * self.mu * eps + self.lmbda * ufl.tr(eps) * ufl.Identity(d)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(E={self.E:g}, nu={self.nu:g}, density={self.density:g}"
                + (f", thickness={self.thickness:g}" if self.gdim == 2 else "") + ")")


class LinearElastic(Isotropic):
    """3D isotropic linear elasticity (for 3D meshes): the arguments of :class:`Isotropic`
    without ``thickness``.

    Args:
        E: Young's modulus (Pa).
        nu: Poisson's ratio.
        density: the density (kg/m^3).
        rayleigh: ``(a_mass, b_stiffness)`` Rayleigh damping, or None.
    """

    def __init__(self, E: float, nu: float, density: float,
                 rayleigh: Tuple[float, float] | None = None) -> None:
        super().__init__(E, nu, density, rayleigh)


class _Planar(Isotropic):
    """A 2D law: ``thickness`` (m) scales mass, stiffness and loads."""

    gdim = 2

    def __init__(self, E: float, nu: float, density: float, thickness: float = 1.0,
                 rayleigh: Tuple[float, float] | None = None) -> None:
        super().__init__(E, nu, density, rayleigh, thickness)


class PlaneStrain(_Planar):
    """Plane strain (2D meshes, unit thickness unless ``thickness`` is given)."""

    kind = "plane-strain"


class PlaneStress(_Planar):
    """Plane stress (2D meshes), with ``thickness`` (m) scaling mass, stiffness and loads."""

    kind = "plane-stress"

    @property
    def lmbda(self) -> float:
        """The plane-stress Lame parameter E nu / (1 - nu^2)."""
        return self.E * self.nu / (1.0 - self.nu * self.nu)


# --- anisotropic laws ----------------------------------------------------------------------

class UserLaw(Material):
    """A stress law written by the user in UFL.

    Args:
        stress: a callable ``eps -> sigma``: the Cauchy stress (Pa; per unit thickness of a
            2D body) of a symmetric small-strain UFL tensor (gdim x gdim), as a UFL tensor of
            the same shape, e.g. ``lambda e: 2 * mu * e + lam * ufl.tr(e) * ufl.Identity(3)``.
            It should be linear in ``eps`` for the linear operators; it is also applied to the
            Green strain with St Venant-Kirchhoff stiffening. May be None when ``energy`` is
            given.
        density: mass density (kg/m^3), positive.
        gdim: the mesh dimension the law is for (2 or 3), None for any.
        thickness: thickness (m) of a 2D body (needs ``gdim=2`` when not 1).
        rayleigh: optional (a, b): damping matrix D = a M + b K.
        energy: optional strain-energy density ``psi(eps)`` (J/m^3, a scalar UFL expression);
            when ``stress`` is None the stress is its derivative d psi/d eps (``ufl.diff`` on a
            ``ufl.variable``). The derivative is taken with respect to the full tensor, so
            write psi with symmetric dependence on eps (through tr, inner(e, e), e.T, ...);
            e.g. ``lambda e: mu * ufl.inner(e, e) + lam / 2 * ufl.tr(e) ** 2``.

    Raises:
        TypeError: ``stress`` or ``energy`` not callable, or neither given.
        ValueError: gdim not None, 2 or 3; a thickness other than 1 without ``gdim=2``;
            nonpositive density or thickness.

    Only these checks are made at construction (no mesh is needed); the law itself is checked
    by UFL when the forms are compiled.
    """

    def __init__(self, stress: Callable | None = None, density: float | None = None,
                 gdim: int | None = None, thickness: float = 1.0,
                 rayleigh: Tuple[float, float] | None = None,
                 energy: Callable | None = None) -> None:
        if stress is None and energy is None:
            raise TypeError("UserLaw: give stress=(eps -> sigma) or energy=(eps -> psi)")
        if stress is not None and not callable(stress):
            raise TypeError(f"UserLaw: stress must be a callable eps -> sigma (UFL), got "
                            f"{stress!r}")
        if energy is not None and not callable(energy):
            raise TypeError(f"UserLaw: energy must be a callable eps -> psi (UFL), got "
                            f"{energy!r}")
        if density is None:
            raise TypeError("UserLaw: density is required")
        if gdim is not None and gdim not in (2, 3):
            raise ValueError(f"gdim must be None, 2 or 3, got {checks.shown(gdim)}")
        super().__init__(density, thickness, rayleigh)
        if self.thickness != 1.0 and gdim != 2:
            raise ValueError(f"thickness applies to 2D laws only: give gdim=2 with "
                             f"thickness={thickness!r}")
        self.gdim = None if gdim is None else int(gdim)
        self.kind = "user" if gdim is None else f"{gdim}D user"
        self._stress = stress
        self.energy = energy

    def stress(self, eps: Expr) -> Expr:
        """The stress at strain ``eps``: the user's law, or d(energy)/d(eps).

        Args:
            eps: the strain (a UFL tensor).

        Returns:
            The stress (a UFL tensor).
        """
        if self._stress is not None:
            return self._stress(eps)
        assert self.energy is not None  # (the constructor asks for stress or energy)
        e = ufl.variable(eps)
        return ufl.diff(self.energy(e), e)

    def __repr__(self) -> str:
        f = self._stress if self._stress is not None else self.energy
        what = "stress" if self._stress is not None else "energy"
        return (f"UserLaw({what}={getattr(f, '__name__', repr(f))}, {self._common_repr()}"
                + (f", gdim={self.gdim}" if self.gdim is not None else "") + ")")
