"""Elastic materials as UFL stress laws. SI units: Pa, kg/m^3, m.

Everything the package asks of a material is in the base class :class:`Material`: a ``density``
(mass per unit volume), a ``thickness`` that scales all integrals of a 2D body (1 for 3D laws and
by default), the mesh dimension ``gdim`` the law applies to (None: any), optional Rayleigh
damping D = a M + b K, and ``stress(eps)``, the Cauchy stress (UFL) of a small-strain tensor.
The forms apply the same law to the Green strain for St Venant-Kirchhoff stiffening.

Laws:

* isotropic: :class:`LinearElastic` (3D), :class:`PlaneStrain`, :class:`PlaneStress` (2D);
* :class:`Anisotropic`: a general 6x6 stiffness matrix in Voigt notation, in material axes
  that may be rotated (a constant rotation or a UFL field, e.g. fibre directions), in 3D or
  reduced to plane strain or plane stress;
* :class:`Orthotropic`: an :class:`Anisotropic` law from nine engineering constants;
* :class:`UserLaw`: any stress function written in UFL (or a strain-energy density).

Voigt notation (the anisotropic laws, :mod:`dolfinx_mbs.materials.anisotropic`): the order is
(xx, yy, zz, yz, xz, xy) and shear strains are *engineering* strains, gamma_ij = 2 eps_ij, so that
sigma = C @ [eps_xx, eps_yy, eps_zz, 2 eps_yz, 2 eps_xz, 2 eps_xy] and the strain energy
density is 1/2 e.C e.

The isotropic laws and :class:`UserLaw` are written here, the anisotropic ones in
:mod:`dolfinx_mbs.materials.anisotropic`, the base in :mod:`dolfinx_mbs.materials.base`; all are
exported here.
"""

from dolfinx_mbs.materials.anisotropic import VOIGT, Anisotropic, Orthotropic, rotate_voigt
from dolfinx_mbs.materials.base import Material, rayleigh_pair, strain
from dolfinx_mbs.materials.isotropic import (
    Isotropic,
    LinearElastic,
    PlaneStrain,
    PlaneStress,
    UserLaw,
)

__all__ = [
    "VOIGT",
    "Anisotropic",
    "Isotropic",
    "LinearElastic",
    "Material",
    "Orthotropic",
    "PlaneStrain",
    "PlaneStress",
    "UserLaw",
    "rayleigh_pair",
    "rotate_voigt",
    "strain",
]
