"""Anisotropic elastic laws: a general stiffness matrix in Voigt notation in (rotated) material
axes (:class:`Anisotropic`), and the orthotropic law of nine engineering constants
(:class:`Orthotropic`). Both are exported by :mod:`dolfinx_mbs.materials`.

Voigt notation: the order is (xx, yy, zz, yz, xz, xy) and shear strains are *engineering*
strains, gamma_ij = 2 eps_ij, so that sigma = C @ [eps_xx, eps_yy, eps_zz, 2 eps_yz, 2 eps_xz,
2 eps_xy] and the strain energy density is 1/2 e.C e.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Sequence, Tuple

import numpy as np
import ufl
from ufl.core.expr import Expr

from dolfinx_mbs import checks
from dolfinx_mbs.materials.base import Material

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["Anisotropic", "Orthotropic", "rotate_voigt", "VOIGT"]

#: Voigt order of stress and (engineering) strain components: index pairs of the tensors.
VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))
#: the in-plane Voigt components (xx, yy, xy) of a 2D law, as indices into :data:`VOIGT`
_PLANE = (0, 1, 5)


def _voigt_strain(eps: Expr, d: int) -> Expr:
    """The engineering Voigt vector of a symmetric UFL strain tensor: 6 components in 3D,
    (xx, yy, xy) in 2D."""
    if d == 3:
        return ufl.as_vector([eps[i, j] if i == j else 2.0 * eps[i, j] for i, j in VOIGT])
    return ufl.as_vector([eps[0, 0], eps[1, 1], 2.0 * eps[0, 1]])


def _voigt_stress_tensor(s: Expr, d: int) -> Expr:
    """The symmetric stress tensor of a Voigt stress vector (6 components, or 3 in 2D)."""
    if d == 3:
        return ufl.as_matrix([[s[0], s[5], s[4]], [s[5], s[1], s[3]], [s[4], s[3], s[2]]])
    return ufl.as_matrix([[s[0], s[2]], [s[2], s[1]]])


def _voigt_law(C: np.ndarray, eps: Expr) -> Expr:
    """sigma(eps) of a constant Voigt stiffness matrix C (6x6 in 3D, 3x3 (xx, yy, xy) in 2D)."""
    d = ufl.shape(eps)[0]
    Cu = ufl.as_matrix(C.tolist())
    return _voigt_stress_tensor(Cu * _voigt_strain(eps, d), d)


def _fourth_order(C: np.ndarray) -> np.ndarray:
    """C_ijkl of a 6x6 Voigt matrix with engineering shear strains (C_ijkl = C_IJ)."""
    idx = np.empty((3, 3), dtype=int)
    for n, (i, j) in enumerate(VOIGT):
        idx[i, j] = idx[j, i] = n
    return C[idx[:, :, None, None], idx[None, None, :, :]]


def rotate_voigt(C: np.ndarray, R: np.ndarray) -> np.ndarray:
    """The 6x6 Voigt stiffness in body axes of ``C`` (material axes), R the 3x3 rotation whose
    columns are the material axes in body coordinates: C'_ijkl = R_ia R_jb R_kc R_ld C_abcd.

    Args:
        C: the 6x6 Voigt stiffness in material axes.
        R: the rotation whose columns are the material axes in body coordinates.

    Returns:
        The 6x6 Voigt stiffness in body axes.
    """
    C4 = np.einsum("ia,jb,kc,ld,abcd->ijkl", R, R, R, R, _fourth_order(C))
    return np.array([[C4[i, j, k, m] for k, m in VOIGT] for i, j in VOIGT])


def _check_stiffness(C: ArrayLike, name: str = "C") -> np.ndarray:
    """A symmetric positive definite 6x6 matrix (symmetrized), or ValueError naming ``name``."""
    try:
        a: np.ndarray = np.array(C, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 6x6 matrix of numbers (Voigt order xx, yy, zz, "
                         f"yz, xz, xy), got {checks.shown(C)}") from None
    if a.shape != (6, 6):
        raise ValueError(f"{name} must be a 6x6 matrix (Voigt order xx, yy, zz, yz, xz, xy), "
                         f"got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got entries {a[~np.isfinite(a)].tolist()}")
    scale = float(np.abs(a).max())
    asym = float(np.abs(a - a.T).max())
    if scale == 0.0 or asym > 1e-10 * scale:
        raise ValueError(f"{name} must be symmetric (|C_ij - C_ji| <= 1e-10 max|C|): "
                         f"max |C_ij - C_ji| = {asym:.3e}, max |C_ij| = {scale:.3e}")
    a = 0.5 * (a + a.T)
    ev = np.linalg.eigvalsh(a)
    if not ev[0] > 1e-12 * abs(ev[-1]):
        raise ValueError(f"{name} must be positive definite (strain energy 1/2 e.C e > 0): "
                         f"its smallest eigenvalue is {ev[0]:.6e}, not > 0 (> 1e-12 times the "
                         f"largest, {ev[-1]:.6e})")
    return a


def _check_rotation(R: np.ndarray, name: str) -> None:
    n = R.shape[0]
    err = float(np.abs(R.T @ R - np.eye(n)).max())
    if err > 1e-10:
        raise ValueError(f"{name} must be orthogonal (R^T R = I to 1e-10): "
                         f"max |R^T R - I| = {err:.3e}")
    det = float(np.linalg.det(R))
    if det < 0.0:
        raise ValueError(f"{name} must be a rotation (det +1), got det {det:.6g}: a "
                         "reflection; reverse one axis")


def _axes(axes: ArrayLike | Expr | None, plane: str | None
          ) -> Tuple[np.ndarray | None, Expr | None]:
    """(numeric 3x3 or 2x2 rotation or None, UFL rotation or None)."""
    d = 3 if plane is None else 2
    if axes is None:
        return None, None
    if isinstance(axes, Expr):
        shape = ufl.shape(axes)
        ok = (shape == (3, 3)) if d == 3 else shape in ((2, 2), (3, 3))
        if not ok:
            want = "(3, 3)" if d == 3 else "(2, 2) or (3, 3)"
            raise ValueError(f"axes must be a UFL expression of shape {want}, got shape {shape}")
        if d == 2 and shape == (3, 3):
            axes = ufl.as_matrix([[axes[i, j] for j in range(2)] for i in range(2)])
        return None, axes
    try:
        R = np.array(axes, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"axes must be None, a 3x3 rotation matrix or a UFL expression, got "
                         f"{axes!r}") from None
    shapes = ((3, 3),) if d == 3 else ((2, 2), (3, 3))
    if R.shape not in shapes or not np.all(np.isfinite(R)):
        want = "3x3" if d == 3 else "2x2 or 3x3"
        raise ValueError(f"axes must be a finite {want} rotation matrix (columns: the material "
                         f"axes in body coordinates), got shape {R.shape}")
    _check_rotation(R, "axes")
    if d == 2 and R.shape == (3, 3):
        ez = R[:, 2]
        if abs(abs(ez[2]) - 1.0) > 1e-10 or np.abs(ez[:2]).max() > 1e-10:
            raise ValueError(f"axes of a plane law must keep the material's third axis on the "
                             f"body's z axis: its third column must be +-e_z, got {ez.tolist()}")
        R = R[:2, :2]
    return R, None


class Anisotropic(Material):
    """General (anisotropic) linear elasticity from a 6x6 stiffness matrix in material axes.

    In material axes sigma_m = C @ e_m, Voigt order (xx, yy, zz, yz, xz, xy) with engineering
    shear strains: e_m = [eps_11, eps_22, eps_33, 2 eps_23, 2 eps_13, 2 eps_12]. The material
    axes are the columns of a rotation R in body coordinates: eps_m = R^T eps R and
    sigma = R sigma_m R^T.

    Args:
        C: 6x6 stiffness matrix (Pa), symmetric positive definite, in material axes.
        density: mass density (kg/m^3), positive.
        axes: the material axes: None (the body's axes), a constant rotation matrix (numpy,
            orthogonal with det +1; column k is material axis k in body coordinates), or a UFL
            expression of shape (3, 3) such as a fibre field built from
            ``ufl.SpatialCoordinate`` or a ``fem.Function`` of a tensor space (not checked: it
            must be a rotation at every point). For a plane law the material's third axis is
            the body's z: give a 2x2 rotation, or a 3x3 one whose third column is +-e_z
            (checked for a numeric one; of a UFL 3x3 only the leading 2x2 block is used).
        plane: None for a 3D law (3D meshes), ``"strain"`` or ``"stress"`` for a 2D law
            (2D meshes): plane strain uses the in-plane block (xx, yy, xy) of C; plane stress
            the inverse of the in-plane block of the compliance inv(C) (sigma_zz = sigma_yz =
            sigma_xz = 0 in material axes, hence in body axes).
        thickness: thickness (m) of a plane law; 1 for a 3D law.
        rayleigh: optional (a, b): damping matrix D = a M + b K.

    Attributes:
        C: the stiffness matrix (material axes, symmetrized).
        C_plane: for a plane law the 3x3 in-plane matrix (xx, yy, xy) in material axes.
        axes: the numeric rotation (2x2 for a plane law) or the UFL expression, or None.
        plane: None, "strain" or "stress".

    Raises:
        ValueError: C not 6x6, not finite, not symmetric or not positive definite; a numeric
            ``axes`` that is not a rotation; a nonpositive density or thickness; a thickness
            other than 1 for a 3D law; an unknown ``plane``. The checks use only the
            arguments (no communication), so they raise on every rank alike.
    """

    def __init__(self, C: ArrayLike, density: float, axes: ArrayLike | Expr | None = None,
                 plane: str | None = None, thickness: float = 1.0,
                 rayleigh: Tuple[float, float] | None = None) -> None:
        if plane not in (None, "strain", "stress"):
            raise ValueError(f"plane must be None (3D), 'strain' or 'stress', got {plane!r}")
        self.plane = plane
        self.gdim = 3 if plane is None else 2
        self.kind = "3D anisotropic" if plane is None else f"plane-{plane}"
        self.C = _check_stiffness(C, "C")
        super().__init__(density, thickness, rayleigh)
        if plane is None and self.thickness != 1.0:
            raise ValueError(f"thickness applies to plane laws only (plane='strain' or "
                             f"'stress'), got thickness={checks.shown(thickness)} for a 3D law")
        R, Ru = _axes(axes, plane)
        self.axes = R if Ru is None else Ru
        self._symbolic = Ru is not None
        if plane is None:
            self.C_plane = None
            law = self.C
        else:
            idx = np.array(_PLANE)
            if plane == "strain":
                self.C_plane = self.C[np.ix_(idx, idx)].copy()
            else:
                S = np.linalg.inv(self.C)
                self.C_plane = np.linalg.inv(S[np.ix_(idx, idx)])
                self.C_plane = 0.5 * (self.C_plane + self.C_plane.T)
            law = self.C_plane
        #: the Voigt matrix the UFL law uses: rotated to body axes when the axes are numeric
        self._law = law if R is None else self._rotate(law, R)

    def _rotate(self, law: np.ndarray, R: np.ndarray) -> np.ndarray:
        if self.plane is None:
            return rotate_voigt(law, R)
        R3 = np.eye(3)
        R3[:2, :2] = R
        full = np.zeros((6, 6))
        idx = np.array(_PLANE)
        full[np.ix_(idx, idx)] = law
        return rotate_voigt(full, R3)[np.ix_(idx, idx)]

    def stress(self, eps: Expr) -> Expr:
        """Sigma = R sigma_m(R^T eps R) R^T (per unit thickness for a plane law).

        Args:
            eps: the small-strain tensor (a symmetric gdim x gdim UFL tensor).

        Returns:
            The stress (UFL).
        """
        if not self._symbolic:
            return _voigt_law(self._law, eps)
        R = self.axes
        assert R is not None  # symbolic axes: a UFL tensor
        eps_m = R.T * eps * R
        return R * _voigt_law(self._law, eps_m) * R.T

    def _axes_repr(self) -> str:
        if self.axes is None:
            return ""
        if self._symbolic:
            return ", axes=<UFL field>"
        return f", axes={np.round(self.axes, 12).tolist()}"

    def __repr__(self) -> str:
        diag = ", ".join(f"{c:g}" for c in np.diag(self.C))
        return (f"{type(self).__name__}(C=<6x6, diagonal ({diag})>, {self._common_repr()}"
                + self._axes_repr() + (f", plane={self.plane!r}" if self.plane else "") + ")")


def _orthotropic_compliance(E: Sequence[float], nu: Sequence[float],
                            G: Sequence[float]) -> np.ndarray:
    """The 6x6 compliance of nine engineering constants, after checks that name them."""
    E1, E2, E3 = (checks.positive(x, f"E{k}") for x, k in zip(_triple(E, "E"), (1, 2, 3)))
    G12, G13, G23 = (checks.positive(x, f"G{k}") for x, k in zip(_triple(G, "G"), (12, 13, 23)))
    nu12, nu13, nu23 = (checks.real(x, f"nu{k}") for x, k in zip(_triple(nu, "nu"),
                                                                  (12, 13, 23)))
    for n, name, Ea, Eb in ((nu12, "nu12", E1, E2), (nu13, "nu13", E1, E3),
                            (nu23, "nu23", E2, E3)):
        i, j = name[2], name[3]
        if not n * n * Eb / Ea < 1.0:
            raise ValueError(
                f"Orthotropic: {name}^2 E{j}/E{i} must be < 1 for a positive definite "
                f"compliance, got {name}={n:g}, E{i}={Ea:g}, E{j}={Eb:g}: "
                f"{name}^2 E{j}/E{i} = {n * n * Eb / Ea:.6g} (|{name}| must be < "
                f"sqrt(E{i}/E{j}) = {math.sqrt(Ea / Eb):.6g}; a mistyped Poisson ratio?)")
    nu21, nu31, nu32 = nu12 * E2 / E1, nu13 * E3 / E1, nu23 * E3 / E2
    det = 1.0 - nu12 * nu21 - nu23 * nu32 - nu13 * nu31 - 2.0 * nu21 * nu32 * nu13
    if not det > 1e-12:
        raise ValueError(
            f"Orthotropic: 1 - nu12 nu21 - nu23 nu32 - nu13 nu31 - 2 nu21 nu32 nu13 must be > 0 "
            f"(nu21 = nu12 E2/E1, nu31 = nu13 E3/E1, nu32 = nu23 E3/E2) for a positive "
            f"definite compliance, got {det:.6g} with nu12={nu12:g}, nu13={nu13:g}, "
            f"nu23={nu23:g}: check the Poisson ratios")
    S = np.zeros((6, 6))
    S[0, 0], S[1, 1], S[2, 2] = 1.0 / E1, 1.0 / E2, 1.0 / E3
    S[0, 1] = S[1, 0] = -nu12 / E1
    S[0, 2] = S[2, 0] = -nu13 / E1
    S[1, 2] = S[2, 1] = -nu23 / E2
    S[3, 3], S[4, 4], S[5, 5] = 1.0 / G23, 1.0 / G13, 1.0 / G12
    return S


def _triple(x: Iterable[float], name: str) -> Sequence:
    try:
        t = list(x)
    except TypeError:
        raise ValueError(f"{name} must be a triple of numbers, got {checks.shown(x)}") from None
    if len(t) != 3:
        raise ValueError(f"{name} must be a triple of numbers, got {checks.shown(x)}")
    return t


class Orthotropic(Anisotropic):
    """Orthotropic linear elasticity from engineering constants in material axes 1, 2, 3.

    The compliance (Voigt order 11, 22, 33, 23, 13, 12, engineering shear strains) is::

        S = [[ 1/E1,     -nu12/E1, -nu13/E1, 0,     0,     0    ],
             [-nu12/E1,   1/E2,    -nu23/E2, 0,     0,     0    ],
             [-nu13/E1,  -nu23/E2,  1/E3,    0,     0,     0    ],
             [ 0,         0,        0,       1/G23, 0,     0    ],
             [ 0,         0,        0,       0,     1/G13, 0    ],
             [ 0,         0,        0,       0,     0,     1/G12]]

    nu_ij is the contraction along j under stress along i (nu_ji = nu_ij E_j / E_i); the law is
    the :class:`Anisotropic` one of C = inv(S).

    Args:
        E: (E1, E2, E3), Young's moduli along the material axes (Pa), positive.
        nu: (nu12, nu13, nu23), Poisson's ratios.
        G: (G12, G13, G23), shear moduli (Pa), positive.
        density, axes, plane, thickness, rayleigh: as for :class:`Anisotropic`.

    Raises:
        ValueError: a nonpositive modulus, or Poisson ratios for which S is not positive
            definite (nu_ij^2 E_j/E_i >= 1 or the determinant condition), with the constants
            named; and the errors of :class:`Anisotropic`.
    """

    def __init__(self, E: Sequence[float], nu: Sequence[float], G: Sequence[float],
                 density: float, axes: ArrayLike | Expr | None = None, plane: str | None = None,
                 thickness: float = 1.0, rayleigh: Tuple[float, float] | None = None) -> None:
        S = _orthotropic_compliance(E, nu, G)
        self.E = tuple(1.0 / S[k, k] for k in range(3))
        self.nu = (-S[0, 1] * self.E[0], -S[0, 2] * self.E[0], -S[1, 2] * self.E[1])
        self.G = (1.0 / S[5, 5], 1.0 / S[4, 4], 1.0 / S[3, 3])
        self.S = S
        super().__init__(np.linalg.inv(S), density, axes=axes, plane=plane,
                         thickness=thickness, rayleigh=rayleigh)

    def __repr__(self) -> str:
        def t(v: Sequence[float]) -> str:
            return "(" + ", ".join(f"{x:g}" for x in v) + ")"
        return (f"Orthotropic(E={t(self.E)}, nu={t(self.nu)}, G={t(self.G)}, "
                f"{self._common_repr()}" + self._axes_repr()
                + (f", plane={self.plane!r}" if self.plane else "") + ")")
