"""The physics: UFL forms of an elastic body in a moving frame (docs/theory.md sections 2, 4).

This module is the one place where moving-frame terms are written. Everything is in the
body frame's (local) components. ``rho`` is the mass per unit *mesh* measure (density times
thickness for 2D bodies); ``omega``, ``alpha``, ``v_O``, ``a_O`` and ``g`` are 3-vector UFL
constants (for a 2D body only their planar parts enter: rotation about z, in-plane translation).

Direct forms (the table of docs/theory.md section 2)::

    mass               m(u, v)   = int rho u.v
    gyroscopic         g(u, v)   = int 2 rho (omega x u).v                 skew
    stiffness          k(u, v)   = int sigma(u) : eps(v)
    angular_accel.     k_a(u, v) = int rho (alpha x u).v                   skew
    spin_softening     k_w(u, v) = int rho (omega x (omega x u)).v         symmetric, <= 0
    centrifugal_load   q_w(v)    = -int rho (omega x (omega x X)).v
    euler_load         q_a(v)    = -int rho (alpha x X).v
    base_accel._load   q_O(v)    = -int rho a_O.v
    gravity_load       q_g(v)    = int rho g_local.v

Every frame-dependent matrix among them, and the centrifugal and Euler loads, is the inertia
coupling ``inertia_coupling`` c_W(u, v) = int rho (W u).v of a constant 3x3 matrix W (the loads
with u = X and a minus sign). :func:`frame_coupling` is the one place where the W of a frame
state are written; the direct forms above take their W from it, and so do the assembled
operators (:mod:`dolfinx_mbs.assembly.operators`, with numbers instead of UFL constants) and the
unit cases of prestress stiffening (:func:`unit_spin_cases`).

Hamilton's form (section 4) adds ``momentum_coupling`` (g_p = g/2), ``momentum_offset`` (pi_0)
and ``momentum_load`` (h).

The *energy routes* (Lagrange, Gibbs-Appell, Hamilton, Kane) build the kinetic energy T, the
acceleration energy S or the partial velocities as UFL expressions and let UFL differentiate
them. They live in :mod:`dolfinx_mbs.forms.energy_routes`, with the point kinematics (``velocity``,
``acceleration``, ``cross``, ``planar``), and are re-exported here. They return the same
operators as the direct forms; the test-suite checks that to round-off.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, List, Mapping, Sequence, Tuple, cast

import numpy as np
import ufl
from ufl.core.expr import Expr

from dolfinx_mbs.forms.energy_routes import cross, planar
from dolfinx_mbs.materials.base import Material, strain
from dolfinx_mbs.records import FrozenMapping, Record

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "svk_point_terms",
    "VOIGT",
    "small_rotation",
    "frame_coupling",
    "FrameCoupling",
    "unit_spin_cases",
    "mass",
    "gyroscopic",
    "stiffness",
    "angular_acceleration",
    "spin_softening",
    "centrifugal_load",
    "euler_load",
    "base_acceleration_load",
    "gravity_load",
    "inertia_coupling",
    "centrifugal_unit_load",
    "momentum_coupling",
    "momentum_offset",
    "green_strain",
    "svk_remainder",
    "svk_remainder_energy",
    "momentum_load",
    "frame_inertia_load",
    "geometric_stiffness",
]


def _gdim(u: Expr) -> int:
    return cast(int, ufl.shape(u)[0])


# --- the frame-coupling matrices W ---------------------------------------------------------

def _vector3(w: Expr | ArrayLike | None, name: str) -> Tuple[list, bool]:
    """The three components of ``w`` and whether they are UFL expressions (else numbers)."""
    if w is None:
        return [0.0, 0.0, 0.0], False
    if isinstance(w, Expr):
        if ufl.shape(w) != (3,):
            raise ValueError(f"frame_coupling: {name} must be a 3-vector, got shape "
                             f"{ufl.shape(w)}")
        return [w[i] for i in range(3)], True
    a = np.asarray(w, dtype=float)
    if a.shape != (3,):
        raise ValueError(f"frame_coupling: {name} must be a 3-vector, got shape {a.shape}")
    return [float(x) for x in a], False


def _matrix(rows: list, symbolic: bool) -> Expr | np.ndarray:
    return ufl.as_matrix(rows) if symbolic else np.array(rows, dtype=float)


def _skew(w: Sequence) -> List[list]:
    """The rows of the matrix of y -> w x y."""
    return [[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]]


@dataclasses.dataclass(frozen=True, eq=False)
class FrameCoupling(Record):
    """The matrices W of :func:`frame_coupling` (3 x 3, local components): numpy arrays for
    a numeric omega and alpha, UFL matrices for UFL ones; read also by name
    (``W["gyroscopic"]``).

    Attributes:
        gyroscopic: W_g = 2 skew(omega).
        spin_softening: W_w = omega omega^T - abs(omega)^2 I.
        angular_acceleration: W_a = skew(alpha).
    """

    gyroscopic: np.ndarray | Expr
    spin_softening: np.ndarray | Expr
    angular_acceleration: np.ndarray | Expr


def frame_coupling(omega: Expr | ArrayLike | None = None,
                   alpha: Expr | ArrayLike | None = None) -> FrameCoupling:
    """The matrices W(omega, alpha) of the frame-dependent inertia couplings (3x3, local
    components): every frame matrix is c_W(u, v) = int rho (W u).v (:func:`inertia_coupling`),
    and the centrifugal and Euler loads are -c_W(X, v) of the same W.

    Args:
        omega: the frame's angular velocity in local components, as numbers (a 3-sequence:
            the W are numpy arrays) or as a 3-vector UFL expression such as a ``fem.Constant``
            (the W are UFL matrices); None counts as zero.
        alpha: the frame's angular acceleration, in the same form as ``omega``; None counts as
            zero.

    Returns:
        The :class:`FrameCoupling` ``gyroscopic`` W_g, ``spin_softening`` W_w and
        ``angular_acceleration`` W_a::

            W_g = 2 skew(omega)                 g(u, v)   = c_W_g(u, v)
            W_w = omega omega^T - |omega|^2 I   k_w(u, v) = c_W_w(u, v),  q_w(v) = -c_W_w(X, v)
                (= skew(omega)^2)
            W_a = skew(alpha)                   k_a(u, v) = c_W_a(u, v),  q_a(v) = -c_W_a(X, v)

        with skew(w) y = w x y. A 2D body takes the leading 2x2 block (planar motion: only
        omega_z and alpha_z act).

    Where each comes from (docs/theory.md section 1: v = v_O + omega x (X + u) + udot; section 2:
    T = 1/2 int rho v.v and Lagrange's d/dt dT/d(udot) - dT/du):

    * ``gyroscopic``: the term int rho udot.(omega x u) of T. It enters dT/d(udot) as
      rho omega x u, whose time derivative gives rho omega x udot, and -dT/du gives another
      rho omega x udot: 2 omega x udot, the Coriolis term of the acceleration (section 1).
    * ``angular_acceleration``: the same term of T; d/dt of rho omega(t) x u also differentiates
      omega, giving rho alpha x u (section 1's alpha x u; skew, [K(eps)] in section 2's table).
    * ``spin_softening``: the term ``1/2 int rho |omega x u|^2`` of T, whose -dT/du is
      ``rho omega x (omega x u) = rho (omega (omega.u) - |omega|^2 u)`` (section 2's k_omega).
      The same W on X gives the centrifugal load q_omega: the term int rho (omega x X).(omega
      x u) of T, through -dT/du. It is linear in the six products omega_i omega_j, which is
      what prestress stiffening uses (section 3, :func:`unit_spin_cases`).
    * the Euler load q_alpha uses ``angular_acceleration`` on X: the term int rho
      (omega x X).udot of T, through d/dt dT/d(udot).

    Hamilton's form (section 4) couples momentum and displacement with W_g / 2 = skew(omega)
    (:func:`momentum_coupling`).
    """
    w, sym_w = _vector3(omega, "omega")
    a, sym_a = _vector3(alpha, "alpha")
    # omega omega^T - |omega|^2 I, its diagonal without cancellation: -(omega_j^2 + omega_k^2)
    spin = [[w[i] * w[j] if i != j else -(w[i - 2] * w[i - 2] + w[i - 1] * w[i - 1])
             for j in range(3)] for i in range(3)]
    return FrameCoupling(gyroscopic=2.0 * _matrix(_skew(w), sym_w),
                         spin_softening=_matrix(spin, sym_w),
                         angular_acceleration=_matrix(_skew(a), sym_a))


def unit_spin_cases(gdim: int) -> Mapping[Tuple[int, int], np.ndarray]:
    """The unit cases of the spin-softening W, which is quadratic in omega.

    ``{(i, j): W_ij}`` with i <= j (a read-only mapping), such that for every frame state of
    a ``gdim``-dimensional body

        frame_coupling(omega)["spin_softening"] = sum over (i, j) of omega_i omega_j W_ij.

    3D: the six pairs (0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2); 2D: (2, 2) only (planar
    motion: omega = omega_z e_z). The W_ij are taken from :func:`frame_coupling` itself:
    W_ii = W(e_i) and W_ij = W(e_i + e_j) - W(e_i) - W(e_j) for i < j (exact in floating point).
    They give the unit centrifugal loads -c_W_ij(X, v) of prestress stiffening (docs/theory.md
    section 3), whose steady stresses scale with omega_i omega_j.

    Args:
        gdim: the body's geometric dimension (2 or 3).
    """
    if gdim not in (2, 3):
        raise ValueError(f"unit_spin_cases: gdim must be 2 or 3, got {gdim!r}")
    eye = np.eye(3)

    def W(w: ArrayLike) -> np.ndarray:
        return cast(np.ndarray, frame_coupling(w)["spin_softening"])

    pairs = [(2, 2)] if gdim == 2 else [(i, j) for i in range(3) for j in range(i, 3)]
    return FrozenMapping({(i, j): W(eye[i]) if i == j else
                             W(eye[i] + eye[j]) - W(eye[i]) - W(eye[j]) for i, j in pairs})


# --- direct forms --------------------------------------------------------------------------

def mass(rho: Expr | float, u: Expr, v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """m(u, v) = int rho u.v.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        u: the displacement (a trial function or Function).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    return rho * ufl.inner(u, v) * dx


def inertia_coupling(rho: Expr | float, W: Expr | np.ndarray, u: Expr, v: Expr,
                     dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """c_W(u, v) = int rho (W u).v for a constant 3x3 matrix W (its leading gdim x gdim block).

    Every frame-dependent matrix is one of these, with W from :func:`frame_coupling`; the
    centrifugal and Euler loads are -c_W(X, v). As W is constant, c_W is the scalar mass matrix
    times W (a Kronecker product), which :mod:`dolfinx_mbs.assembly.operators` uses to form frame
    matrices from a precomputed basis instead of by quadrature.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        W: a constant 3x3 coupling matrix (numbers or UFL; its leading gdim x gdim block acts).
        u: the displacement (a trial function or Function).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    d = _gdim(u)
    Wd = W if d == 3 else ufl.as_matrix([[W[i, j] for j in range(d)] for i in range(d)])
    return rho * ufl.inner(Wd * u, v) * dx


def gyroscopic(rho: Expr | float, omega: Expr | ArrayLike, u: Expr, v: Expr,
               dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """g(u, v) = int 2 rho (omega x u).v: Coriolis, skew-symmetric.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        u: the trial function.
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    return inertia_coupling(rho, frame_coupling(omega)["gyroscopic"], u, v, dx)


def stiffness(material: Material, u: Expr, v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """k(u, v) = int t sigma(eps(u)) : eps(v), t the thickness of a 2D body.

    Args:
        material: the elastic law.
        u: the displacement (a trial function or Function).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    return material.thickness * ufl.inner(material.stress(strain(u)), strain(v)) * dx


def angular_acceleration(rho: Expr | float, alpha: Expr | ArrayLike, u: Expr, v: Expr,
                         dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """k_alpha(u, v) = int rho (alpha x u).v: skew-symmetric.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        alpha: the frame's angular acceleration, as ``omega``.
        u: the displacement (a trial function or Function).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    return inertia_coupling(rho, frame_coupling(alpha=alpha)["angular_acceleration"], u, v, dx)


def spin_softening(rho: Expr | float, omega: Expr | ArrayLike, u: Expr, v: Expr,
                   dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """k_omega(u, v) = int rho (omega x (omega x u)).v: symmetric negative semidefinite.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        u: the trial function.
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    return inertia_coupling(rho, frame_coupling(omega)["spin_softening"], u, v, dx)


def centrifugal_unit_load(rho: Expr | float, W: Expr | np.ndarray, X: Expr, v: Expr,
                          dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """-c_W(X, v) = -int rho (W X).v: the centrifugal load of a spin-softening W, for a given W
    (a unit case of :func:`unit_spin_cases` in prestress stiffening).

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        W: a constant 3x3 coupling matrix (numbers or UFL; its leading gdim x gdim block acts).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    return -inertia_coupling(rho, W, X, v, dx)


def centrifugal_load(rho: Expr | float, omega: Expr | ArrayLike, X: Expr, v: Expr,
                     dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """q_omega(v) = -int rho (omega x (omega x X)).v.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    return centrifugal_unit_load(rho, frame_coupling(omega)["spin_softening"], X, v, dx)


def euler_load(rho: Expr | float, alpha: Expr | ArrayLike, X: Expr, v: Expr,
               dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """q_alpha(v) = -int rho (alpha x X).v.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        alpha: the frame's angular acceleration, as ``omega``.
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    return -inertia_coupling(rho, frame_coupling(alpha=alpha)["angular_acceleration"], X, v, dx)


def base_acceleration_load(rho: Expr | float, a_O: Expr | ArrayLike, v: Expr,
                           dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """q_O(v) = -int rho a_O.v.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        a_O: the frame origin's acceleration, local components (3-vector).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    return -rho * ufl.inner(planar(a_O, _gdim(v)), v) * dx


def gravity_load(rho: Expr | float, g_local: Expr | ArrayLike, v: Expr,
                 dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """q_g(v) = int rho (R^T g).v, gravity fixed in the global frame, given in local components.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        g_local: the gravitational acceleration, local components (3-vector).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    return rho * ufl.inner(planar(g_local, _gdim(v)), v) * dx


def frame_inertia_load(rho: Expr | float, omega: Expr | ArrayLike, alpha: Expr | ArrayLike,
                       a_O: Expr | ArrayLike, X: Expr, v: Expr,
                       dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """q_omega + q_alpha + q_O: the whole load of the frame's motion on the undeformed body.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        alpha: the frame's angular acceleration, as ``omega``.
        a_O: the frame origin's acceleration, local components (3-vector).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    return (centrifugal_load(rho, omega, X, v, dx) + euler_load(rho, alpha, X, v, dx)
            + base_acceleration_load(rho, a_O, v, dx))


def geometric_stiffness(material: Material, sigma0: Expr, u: Expr, v: Expr,
                        dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """k_sigma(u, v) = int sigma0_ij u_k,i v_k,j (docs/theory.md section 3): the stiffness a
    prestress sigma0 gives (times the thickness of a 2D body).

    Args:
        material: the elastic law.
        sigma0: the prestress (a UFL tensor).
        u: the displacement (a trial function or Function).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    return material.thickness * ufl.inner(ufl.grad(u) * sigma0, ufl.grad(v)) * dx


def green_strain(u: Expr) -> Expr:
    """Green-Lagrange strain E = 1/2 (F^T F - I), F = I + grad u.

    Args:
        u: the displacement (a trial function or Function).

    Returns:
        The UFL expression.
    """
    G = ufl.grad(u)
    return 0.5 * (G + G.T + G.T * G)


def small_rotation(u: Expr) -> Expr:
    """The rotation of a small displacement ``u``: 1/2 curl u.

    The axial vector of the skew part of grad u (the rotation angle, rad, of the material
    about each axis to first order; a 2D body's: the scalar about z). A rigid rotation by
    theta in the small-displacement model, u = theta x (X - P), gives theta exactly.

    Args:
        u: a displacement (UFL, vector of the body's dimension).

    Returns:
        The rotation (UFL scalar in 2D, 3-vector in 3D).
    """
    G = ufl.grad(u)
    if _gdim(u) == 2:
        return 0.5 * (G[1, 0] - G[0, 1])
    return 0.5 * ufl.as_vector((G[2, 1] - G[1, 2], G[0, 2] - G[2, 0], G[1, 0] - G[0, 1]))


def svk_remainder(material: Material, u: Expr, v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """n(u; v) = int (F S(E)) : grad v - k(u, v): what the St Venant-Kirchhoff internal force
    (S = C : E, E the Green strain, the material's law applied to E) adds to the linear one
    (docs/theory.md section 3). Quadratic and cubic in u; zero, with zero derivative, at u = 0.
    Its derivative in u is the tangent's excess over K: geometric stiffness of the current
    stress plus the initial-displacement terms.

    Args:
        material: the elastic law.
        u: the displacement (a trial function or Function).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    E = green_strain(u)
    Fd = ufl.Identity(_gdim(u)) + ufl.grad(u)
    P = Fd * material.stress(E)
    return material.thickness * (ufl.inner(P, ufl.grad(v)) * dx) - stiffness(material, u, v, dx)


def svk_remainder_energy(material: Material, u: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """Int 1/2 S(E) : E - 1/2 k(u, u): the St Venant-Kirchhoff strain energy's excess over the
    linear one (n(u; v) is its derivative).

    Args:
        material: the elastic law.
        u: the displacement (a trial function or Function).
        dx: the cell measure to integrate over.

    Returns:
        The form (UFL).
    """
    E = green_strain(u)
    eps = strain(u)
    return 0.5 * material.thickness * (ufl.inner(material.stress(E), E)
                                       - ufl.inner(material.stress(eps), eps)) * dx


#: the symmetric tensors' components in Voigt order (gdim 2, 3): a symmetric X is the sum of
#: X_ab over these (a, b) times the unit tensor with ones at (a, b) and (b, a)
VOIGT = {2: ((0, 0), (1, 1), (0, 1)), 3: ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))}


def svk_point_terms(material: Material, v: Expr) -> Expr:
    """What the St Venant-Kirchhoff remainder (:func:`svk_remainder_energy`) is summed from at
    a point, for a law linear in the strain: the displacement gradient G = grad v and the
    integrand's scale (the cell's Jacobian determinant, the thickness) times the law's stress
    of the small strain, t |J| S(sym grad v). With u = sum_i q_i phi_i, E = eps + Q (eps =
    sym grad u, Q = 1/2 G^T G) and S linear and symmetric (eps : S(Q) = Q : S(eps)) the
    remainder's density is t (eps : S(Q) + 1/2 Q : S(Q)): cubic and quartic in q, its
    coefficients sums over the points of products of the modes' G with the law's matrix, which
    the second set of terms gives (S of every small strain at the point). Evaluated at a
    rule's points (``dolfinx.fem.Expression``) by
    :func:`~dolfinx_mbs.systems.coupled_dense.nonlinear_tensors`.

    Args:
        material: the elastic law (linear in the strain).
        v: a test or trial function of the body's vector space.

    Returns:
        The vector (gdim^2 components of G row by row, then the Voigt components
        (:data:`VOIGT`) of t |J| S(sym grad v)).
    """
    d = _gdim(v)
    G = ufl.grad(v)
    scale = material.thickness * abs(ufl.JacobianDeterminant(v.ufl_function_space().mesh))
    S = scale * material.stress(strain(v))
    return ufl.as_vector([G[a, b] for a in range(d) for b in range(d)]
                         + [S[a, b] for a, b in VOIGT[d]])


def momentum_coupling(rho: Expr | float, omega: Expr | ArrayLike, u: Expr, v: Expr,
                      dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """g_p(u, v) = int rho (omega x u).v = g/2: the u-part of the generalized momentum.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        u: the displacement (a trial function or Function).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    return inertia_coupling(rho, 0.5 * frame_coupling(omega)["gyroscopic"], u, v, dx)


def momentum_offset(rho: Expr | float, omega: Expr | ArrayLike, v_O: Expr | ArrayLike, X: Expr,
                    v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """pi_0(v) = int rho (v_O + omega x X).v: the momentum of the undeformed body's frame motion.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        v_O: the frame origin's velocity, local components (3-vector).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    d = _gdim(v)
    return rho * ufl.inner(planar(v_O, d) + cross(omega, X), v) * dx


def momentum_load(rho: Expr | float, omega: Expr | ArrayLike, v_O: Expr | ArrayLike, X: Expr,
                  v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """h(v) = int rho (omega x (v_O + omega x X)).v: enters dp/dt = ... - h.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        v_O: the frame origin's velocity, local components (3-vector).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    d = _gdim(v)
    return rho * ufl.inner(cross(omega, planar(v_O, d) + cross(omega, X)), v) * dx
