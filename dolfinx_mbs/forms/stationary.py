"""The physics of an axisymmetric rotor in the stationary frame (docs/theory.md section 9), and of
what it rests on: bearings (linear, 8 coefficients) and rigid disks.

The body spins at Omega(t) about the unit axis a through the point c; its displacement u(x, t)
is that of the material point passing the fixed point x, in ground components. With the
circumferential field w = a x (x - c) and the circumferential derivative d_theta u =
grad(u) w, the velocity of the material point is

    v = Omega w + udot + Omega d_theta u                                  (:func:`velocity`)

and T = int rho/2 |v|^2 (:func:`kinetic_energy_density`). Lagrange's equations, derived from T
by UFL in :func:`lagrange_route`, give for every test v

    m(udd, v) + Omega g_s(ud, v) + k(u, v) - Omega^2 k_theta(u, v) + Omegadot c_theta(u, v)
        = Omega^2 int rho w.d_theta v - Omegadot int rho w.v

with the unit forms (written out here as the direct forms the operators assemble)

    gyroscopic         g_s(u, v)     = int rho (d_theta u.v - u.d_theta v)     skew
    circumferential    k_theta(u, v) = int rho d_theta u.d_theta v              (spin softening:
                                                                                 -Omega^2 k_theta)
    spin_acceleration  c_theta(u, v) = int rho d_theta u.v
    centrifugal_load   q(v)          = int rho x_perp.v                         (times Omega^2)
    torque_load        q_a(v)        = -int rho w.v                             (times Omegadot)

x_perp = x - c less its component along a. The load of the route, int rho w.d_theta v,
is q(v) plus the boundary term int_boundary rho (w.n)(w.v) (:func:`axisymmetry_boundary_term`),
which vanishes on a body of revolution (w.n = 0): integration by parts along the circles. The
operators use q, the same centrifugal load as the rotating frame's (``forms.centrifugal_load``
with omega = Omega a), so the prestress of the two descriptions is one.

Bearings and disks act on the mean motion of a surface (a journal): its translation and
rotation fitted by least squares to the surface's displacement (a distributing coupling, as
RBE3), :func:`journal_forms`. A bearing's force on the journal is -K_b ubar - C_b ubar' in the
plane across the axis (:func:`bearing_matrices`; seen from a rotating frame,
:func:`bearing_in_rotating_frame`); a rigid disk's equations are :func:`disk_matrices`.
:func:`unbalance_force` is the force of an unbalance mass. Units: SI.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, NamedTuple, Sequence, Tuple

import numpy as np
import ufl
from ufl.core.expr import Expr

from dolfinx_mbs.forms.energy_routes import RouteForms, apply_derivatives
from dolfinx_mbs.materials.base import Material, strain
from dolfinx_mbs.records import Record

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "axisymmetry_boundary_term",
    "axisymmetry_moments",
    "bearing_in_rotating_frame",
    "bearing_matrices",
    "centrifugal_load",
    "circumferential",
    "circumferential_derivative",
    "circumferential_softening",
    "disk_matrices",
    "gyroscopic",
    "journal_forms",
    "JournalForms",
    "kinetic_energy_density",
    "Spin",
    "lagrange_route",
    "spin_acceleration",
    "torque_load",
    "unbalance_force",
    "velocity",
]


def _vec(a: Expr | Sequence[float] | np.ndarray) -> ufl.core.expr.Expr:
    return a if isinstance(a, ufl.core.expr.Expr) else ufl.as_vector([float(c) for c in a])


def circumferential(axis: Expr | ArrayLike, center: Expr | ArrayLike, x: Expr) -> Expr:
    """W = a x (x - c): the velocity field of a unit spin (m/s per rad/s).

    Args:
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).

    Returns:
        The UFL expression.
    """
    return ufl.cross(_vec(axis), x - _vec(center))


def circumferential_derivative(u: Expr, axis: Expr | ArrayLike, center: Expr | ArrayLike,
                               x: Expr) -> Expr:
    """d_theta u = grad(u) (a x (x - c)): the derivative of u along the circles about the axis
    (per radian).

    Args:
        u: the displacement (a trial function or Function).
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).

    Returns:
        The UFL expression.
    """
    return ufl.grad(u) * circumferential(axis, center, x)


def _perp(axis: Expr | ArrayLike, center: Expr | ArrayLike, x: Expr) -> Expr:
    a = _vec(axis)
    r = x - _vec(center)
    return r - ufl.dot(r, a) * a


# --- kinematics and energy ------------------------------------------------------------------

def velocity(spin: Expr | float, axis: Expr | ArrayLike, center: Expr | ArrayLike, x: Expr, u: Expr,
             ud: Expr) -> Expr:
    """V = Omega w + udot + Omega d_theta u: the ground velocity of the material point that
    passes x (``spin`` Omega a UFL scalar or number).

    Args:
        spin: the spin speed Omega (rad/s), a number or a UFL scalar.
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        ud: the velocity (a Function or UFL expression).

    Returns:
        The UFL expression.
    """
    w = circumferential(axis, center, x)
    return spin * w + ud + spin * circumferential_derivative(u, axis, center, x)


def kinetic_energy_density(rho: Expr | float, spin: Expr | float, axis: Expr | ArrayLike,
                           center: Expr | ArrayLike, x: Expr, u: Expr, ud: Expr) -> Expr:
    """T density: rho/2 |v|^2 with :func:`velocity`.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        spin: the spin speed Omega (rad/s), a number or a UFL scalar.
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        ud: the velocity (a Function or UFL expression).

    Returns:
        The UFL expression.
    """
    vel = velocity(spin, axis, center, x, u, ud)
    return 0.5 * rho * ufl.inner(vel, vel)


# --- direct (unit) forms --------------------------------------------------------------------

def gyroscopic(rho: Expr | float, axis: Expr | ArrayLike, center: Expr | ArrayLike, x: Expr,
               u: Expr, v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """g_s(u, v) = int rho (d_theta u.v - u.d_theta v): skew; the gyroscopic matrix of the
    stationary frame is Omega g_s.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        u: the trial function.
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    du = circumferential_derivative(u, axis, center, x)
    dv = circumferential_derivative(v, axis, center, x)
    return rho * (ufl.inner(du, v) - ufl.inner(u, dv)) * dx


def circumferential_softening(rho: Expr | float, axis: Expr | ArrayLike, center: Expr | ArrayLike,
                              x: Expr, u: Expr, v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """-k_theta(u, v) = -int rho d_theta u.d_theta v: the spin softening of the stationary
    frame per Omega^2 (symmetric, negative semidefinite).

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    du = circumferential_derivative(u, axis, center, x)
    dv = circumferential_derivative(v, axis, center, x)
    return -rho * ufl.inner(du, dv) * dx


def spin_acceleration(rho: Expr | float, axis: Expr | ArrayLike, center: Expr | ArrayLike, x: Expr,
                      u: Expr, v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """c_theta(u, v) = int rho d_theta u.v: the stiffness a changing spin adds, per
    dOmega/dt (skew on a body of revolution).

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The bilinear form (UFL).
    """
    return rho * ufl.inner(circumferential_derivative(u, axis, center, x), v) * dx


def centrifugal_load(rho: Expr | float, axis: Expr | ArrayLike, center: Expr | ArrayLike, x: Expr,
                     v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """q(v) = int rho x_perp.v: the centrifugal load per Omega^2 (x_perp the distance vector
    from the axis).

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    return rho * ufl.inner(_perp(axis, center, x), v) * dx


def torque_load(rho: Expr | float, axis: Expr | ArrayLike, center: Expr | ArrayLike, x: Expr,
                v: Expr, dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """q_a(v) = -int rho w.v: the inertia load of a spin acceleration, per dOmega/dt.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        v: the test function.
        dx: the cell measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    return -rho * ufl.inner(circumferential(axis, center, x), v) * dx


def axisymmetry_boundary_term(rho: Expr | float, axis: Expr | ArrayLike, center: Expr | ArrayLike,
                              x: Expr, v: Expr, n: Expr, ds: ufl.Measure = ufl.ds) -> ufl.Form:
    """int_boundary rho (w.n)(w.v): what the route's centrifugal load int rho w.d_theta v
    adds to :func:`centrifugal_load` (integration by parts along the circles; div w = 0). Zero
    on a body of revolution, where the boundary's normal n is across w.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        axis: the spin axis (unit 3-vector, numbers or UFL).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        v: the test function.
        n: the outward unit normal (``ufl.FacetNormal``).
        ds: the exterior facet measure to integrate over.

    Returns:
        The linear form (UFL).
    """
    w = circumferential(axis, center, x)
    return rho * ufl.dot(w, n) * ufl.inner(w, v) * ds


# --- Lagrange's equations from T ------------------------------------------------------------

class Spin(NamedTuple):
    """The spin of a stationary-frame rotor as :func:`lagrange_route` reads it.

    Attributes:
        speed: Omega (a UFL scalar, e.g. ``fem.Constant``, or a number).
        rate: dOmega/dt (as ``speed``).
    """

    speed: Expr | float
    rate: Expr | float


def lagrange_route(rho: Expr | float, material: Material, spin: Spin, axis: Expr | ArrayLike,
                   center: Expr | ArrayLike, x: Expr, u: Expr, ud: Expr, udd: Expr,
                   test: ufl.Argument, trial: ufl.Argument,
                   dx: ufl.Measure = ufl.dx) -> RouteForms:
    """The operators of the stationary frame from d/dt dT/d(udot) - dT/du + dV/du = 0, by UFL.

    Args:
        rho: mass per unit volume.
        material: the elastic law.
        spin: Omega and dOmega/dt.
        axis: the spin axis, unit (a 3-sequence or UFL vector).
        center: a point of the axis (a 3-sequence or UFL vector).
        x: the spatial coordinate.
        u: the displacement Function (values irrelevant).
        ud: the velocity Function (values irrelevant).
        udd: the acceleration Function (values irrelevant).
        test: the body's test function.
        trial: the body's trial function.
        dx: the integration measure.

    Returns:
        forms ``mass``, ``gyroscopic`` (Omega g_s), ``stiffness`` (k - Omega^2 k_theta +
        Omegadot c_theta) and ``load`` (Omega^2 int rho w.d_theta v - Omegadot int rho w.v):
        the residual M udd + G ud + K u - load.
    """
    W = ufl.variable(spin.speed)
    T = kinetic_energy_density(rho, W, axis, center, x, u, ud)
    p = apply_derivatives(ufl.derivative(T, ud, test))
    # d/dt of p: through u, udot and Omega(t)
    dpdt = (ufl.derivative(p, u, ud) + ufl.derivative(p, ud, udd)
            + ufl.diff(p, W) * spin.rate)
    V = material.thickness * ufl.inner(material.stress(strain(u)), strain(test))
    E = apply_derivatives(dpdt - ufl.derivative(T, u, test) + V)
    form = E * dx
    z = ufl.as_vector([0.0] * ufl.shape(u)[0])
    const = ufl.replace(ufl.algorithms.expand_derivatives(form), {u: z, ud: z, udd: z})
    return RouteForms(mass=ufl.derivative(form, udd, trial),
                      gyroscopic=ufl.derivative(form, ud, trial),
                      stiffness=ufl.derivative(form, u, trial), load=-const)


# --- axisymmetry ----------------------------------------------------------------------------

def axisymmetry_moments(rho: Expr | float, axis: ArrayLike, center: Expr | ArrayLike, x: Expr,
                        weights_m: Sequence[Expr], weights_im: Sequence[Expr],
                        weights_p: Sequence[Expr], reference: Expr | float,
                        orders: Sequence[int] = (1, 2, 3, 4), powers: Sequence[int] = (0, 1, 2),
                        dx: ufl.Measure = ufl.dx) -> ufl.Form:
    """The circumferential mass moments of a body about the axis.

    One form whose constant weights pick a moment: with (xi, eta, zeta) the coordinates of x - c
    in the basis (e1, e2, a) and r^2 = xi^2 + eta^2,

        reference = 0:  int rho (sum_m (wm_m Re + wi_m Im)(xi + i eta)^m) (sum_p wp_p zeta^p)
        reference = 1:  int rho (sum_m wm_m r^m) (sum_p wp_p |zeta|^p)

    (``weights_m``, ``weights_im``: one weight per order of ``orders``; ``weights_p`` per
    power of ``powers``; all UFL constants). A body of revolution has every moment of order
    m >= 1 zero (its mass is the same along every circle); a body with an N-fold symmetry
    about the axis those with m < N. The deviation is the ratio of the two.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        axis: the spin axis (unit 3-vector).
        center: a point of the axis (3-vector, numbers or UFL).
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        weights_m: one weight (UFL constant) per order of ``orders``, on the real parts.
        weights_im: one weight per order, on the imaginary parts.
        weights_p: one weight per power of ``powers``.
        reference: 0: the moments, 1: their reference (a UFL constant or number).
        orders: the orders m of the moments.
        powers: the powers p of the axial coordinate.
        dx: the cell measure to integrate over.

    Returns:
        The form (UFL).
    """
    from dolfinx_mbs.frames.stationary import transverse_basis

    a = np.asarray(axis, dtype=float)
    e1, e2 = transverse_basis(a)
    r = x - _vec(center)
    xi, eta, zeta = ufl.dot(r, _vec(e1)), ufl.dot(r, _vec(e2)), ufl.dot(r, _vec(a))
    rad = ufl.sqrt(xi * xi + eta * eta)
    circ, ref = 0, 0
    re, im = xi, eta
    for k, m in enumerate(range(1, max(orders) + 1)):
        if m > 1:  # (xi + i eta)^m by repeated products
            re, im = re * xi - im * eta, re * eta + im * xi
        if m in orders:
            j = list(orders).index(m)
            circ = circ + weights_m[j] * re + weights_im[j] * im
            ref = ref + weights_m[j] * rad ** m
    ax, axa = 0, 0
    for j, p in enumerate(powers):
        ax = ax + weights_p[j] * (zeta ** p if p else 1.0)
        axa = axa + weights_p[j] * (abs(zeta) ** p if p else 1.0)
    dxq = dx(metadata={"quadrature_degree": 8})
    return rho * ((1.0 - reference) * circ * ax + reference * ref * axa) * dxq


# --- journals, bearings, disks, unbalance ----------------------------------------------------

@dataclasses.dataclass(frozen=True, eq=False)
class JournalForms(Record):
    """The forms of a journal's least-squares rigid fit (:func:`journal_forms`), read also by
    name (``forms["area"]``).

    Attributes:
        area: int 1 ds, the surface's area.
        first: int direction.x ds, for the centroid.
        second: int r.moment r ds: the rotational block of A entry by entry.
        row: int (translation + rotation x r).v ds, a row of int B^T v.
    """

    area: ufl.Form
    first: ufl.Form
    second: ufl.Form
    row: ufl.Form


def journal_forms(x: Expr, v: Expr, ds: ufl.Measure, center: Expr, direction: Expr, moment: Expr,
                  translation: Expr, rotation: Expr) -> JournalForms:
    """The forms of the least-squares rigid fit of a surface Gamma's displacement.

    The journal's mean motion, a distributing coupling, each form with constants that pick an
    entry. With B(x) = [I, -[x - c]_x] (translation t and small rotation theta about c:
    u ~ t + theta x (x - c)) and c the centroid of Gamma, the mean motion is

        [t; theta] = A^-1 int_Gamma B^T u ds,
        A = int_Gamma B^T B ds = [[|Gamma| I, 0], [0, int_Gamma (|r|^2 I - r r^T) ds]],

    r = x - c. Returns ``area`` (int 1 ds), ``first`` (int direction.x ds, for the centroid),
    ``second`` (int r.moment r ds, ``moment`` a 3 x 3 constant: A's rotational block entry by
    entry) and ``row`` (int (translation + rotation x r).v ds: a row of int B^T v, with unit
    ``translation`` or ``rotation``). ``center``, ``direction``, ``translation``, ``rotation``
    are 3-vector constants, ``x`` the spatial coordinate, ``v`` a test function.

    Args:
        x: the spatial coordinate (``ufl.SpatialCoordinate``).
        v: the test function.
        ds: the measure of the surface Gamma.
        center: the centroid c (3-vector constant).
        direction: a 3-vector constant.
        moment: a 3 x 3 constant.
        translation: a 3-vector constant.
        rotation: a 3-vector constant.

    Returns:
        The :class:`JournalForms`.
    """
    r = x - center
    return JournalForms(area=1.0 * ds, first=ufl.dot(direction, x) * ds,
                        second=ufl.dot(r, moment * r) * ds,
                        row=ufl.inner(translation + ufl.cross(rotation, r), v) * ds)


def bearing_matrices(kxx: float, kxy: float, kyx: float, kyy: float, cxx: float, cxy: float,
                     cyx: float, cyy: float) -> Tuple[np.ndarray, np.ndarray]:
    """K_b and C_b (2 x 2, the axes e1, e2 across the spin axis): the bearing's force on the
    journal's mean motion ubar is -K_b ubar - C_b ubar' (N), its virtual work
    -(K_b ubar + C_b ubar').vbar; the stiffness and damping it adds are L^T K_b L and
    L^T C_b L, L the mean motion's map (:func:`journal_forms`).

    Args:
        kxx: stiffness k_xx (N/m).
        kxy: stiffness k_xy (N/m).
        kyx: stiffness k_yx (N/m).
        kyy: stiffness k_yy (N/m).
        cxx: damping c_xx (N s/m).
        cxy: damping c_xy (N s/m).
        cyx: damping c_yx (N s/m).
        cyy: damping c_yy (N s/m).

    Returns:
        ``(K_b, C_b)``.
    """
    return (np.array([[kxx, kxy], [kyx, kyy]], dtype=float),
            np.array([[cxx, cxy], [cyx, cyy]], dtype=float))


def bearing_in_rotating_frame(K: np.ndarray, C: np.ndarray, spin: float,
                              tol: float = 1e-12) -> Tuple[np.ndarray, np.ndarray]:
    """A bearing fixed in the ground seen from a frame spinning at ``spin`` about the axis,
    acting on a journal centred on the axis: the ground velocity of the journal's mean point
    is R (ubar' + Omega J ubar) (J the quarter turn e1 -> e2), so the force in the spinning
    components is -R^T K R ubar - R^T C R (ubar' + Omega J ubar). Constant in time only when
    K and C commute with the rotation R, i.e. are a I + b J (isotropic, with skew
    cross-coupling); then K_rot = K + Omega C J and C_rot = C.

    Args:
        K: the bearing's 2 x 2 stiffness.
        C: the bearing's 2 x 2 damping.
        spin: the frame's spin speed (rad/s).
        tol: the tolerance of the check that K and C are a I + b J.

    Returns:
        ``(K_rot, C_rot)``.

    Raises:
        ValueError: K or C not of the form a I + b J (an anisotropic bearing has
            time-periodic coefficients in a rotating frame: use ``frames.Stationary``).
    """
    J = np.array([[0.0, -1.0], [1.0, 0.0]])
    for name, X in (("stiffness", K), ("damping", C)):
        a, b = 0.5 * (X[0, 0] + X[1, 1]), 0.5 * (X[1, 0] - X[0, 1])
        dev = np.abs(X - (a * np.eye(2) + b * J)).max()
        if dev > tol * max(np.abs(X).max(), 1e-300):
            raise ValueError(
                f"a bearing with anisotropic {name} coefficients {X.tolist()} has "
                "time-periodic coefficients in a rotating frame: put the rotor in a "
                "frames.Stationary frame (or give kxx = kyy, kxy = -kyx and the same for c)")
    return K + spin * C @ J, C.copy()


def disk_matrices(mass: float, polar: float, diametral: float
                  ) -> Tuple[np.ndarray, np.ndarray]:
    """The rigid disk's mass matrix M_d and its gyroscopic matrix per Omega G_d (6 x 6, on the
    mean motion (t, theta) of the surface it is attached to, in the axes (e1, e2, a)).

    The disk (mass m, polar moment I_p about its axis, diametral I_d) spins at Omega about a
    and is tilted by the small rotation theta: its angular velocity is theta' + Omega a +
    Omega theta x a + 1/2 theta x theta' (to second order), and with T = 1/2 m |t'|^2 +
    1/2 omega.J omega the quadratic part of T is

        1/2 m |t'|^2 + 1/2 I_d (theta_1'^2 + theta_2'^2) + 1/2 I_p theta_3'^2
            + 1/2 I_p Omega (theta_2 theta_1' - theta_1 theta_2'),

    whose Lagrange equations are M_d q'' + Omega G_d q' = Q with G_d[3, 4] = I_p,
    G_d[4, 3] = -I_p: the forward whirl of a tilt stiffens, the backward one softens
    (I_d w^2 -/+ I_p Omega w = k_theta). No Omega^2 term remains: a rigid disk carries its
    centrifugal stress itself (a disk of elastic material needs ``stiffening="prestress"``
    for the same).

    Args:
        mass: the disk's mass (kg).
        polar: its polar moment I_p (kg m^2).
        diametral: its diametral moment I_d (kg m^2).

    Returns:
        ``(M_d, G_d)``.
    """
    Md = np.diag([mass, mass, mass, diametral, diametral, polar]).astype(float)
    Gd = np.zeros((6, 6))
    Gd[3, 4], Gd[4, 3] = polar, -polar
    return Md, Gd


def unbalance_force(m_e: float, phase: float, angle: float, rate: float,
                    acceleration: float = 0.0) -> np.ndarray:
    """The force of an unbalance on the rotor.

    The force (N, in (e1, e2)) an unbalance m_e (kg m: mass times eccentricity) at the
    angular position ``phase`` (rad, from e1 at spin angle 0) exerts on the rotor at spin
    ``angle``, ``rate`` Omega and ``acceleration``: minus its mass times its acceleration,

        m_e (Omega^2 cos(phi) + Omegadot sin(phi), Omega^2 sin(phi) - Omegadot cos(phi)),
        phi = angle + phase.

    In the frequency domain (constant Omega) it is Re(F e^{i Omega t}) with the complex
    amplitude F = m_e Omega^2 e^{i phase} (1, -i).

    Args:
        m_e: the unbalance (kg m).
        phase: its angular position (rad, from e1 at spin angle 0).
        angle: the spin angle (rad).
        rate: the spin speed Omega (rad/s).
        acceleration: the spin's rate dOmega/dt (rad/s^2).

    Returns:
        The force (2,).
    """
    phi = angle + phase
    c, s = np.cos(phi), np.sin(phi)
    w2 = rate * rate
    return m_e * np.array([w2 * c + acceleration * s, w2 * s - acceleration * c])

