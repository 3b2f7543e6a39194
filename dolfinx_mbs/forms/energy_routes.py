"""The kinematics of a point of an elastic body in a moving frame, and the *energy routes*:
the operators of the equations of motion derived by UFL from scalar functions of the motion
instead of written term by term (``docs/theory.md`` sections 1, 2 and 4; seed 004).

Kinematics (local components; ``cross`` and ``planar`` reduce 3-vectors to a 2D body's plane)::

    velocity       v = v_O + omega x (X + u) + udot
    acceleration   a = a_O + alpha x (X + u) + omega x (omega x (X + u)) + 2 omega x udot + uddot

Routes, each returning the same operators as the direct forms of :mod:`dolfinx_mbs.forms`
(the test-suite checks them against those and against each other to round-off):

* :func:`lagrange_route`: d/dt dT/d(udot) - dT/du + dV/du = 0, T = int rho/2 |v|^2.
* :func:`gibbs_appell_route`: dS/d(uddot) + dV/du = 0, S = int rho/2 |a|^2.
* :func:`hamilton_route`: p = dT/d(udot) and dp/dt (first-order form).
* :func:`kane_route`: F_r + F*_r = 0, generalized active and inertia forces from the partial
  velocities dv/d(udot_r), the acceleration being the time derivative of v.

``u``, ``udot``, ``uddot`` are Functions whose values do not matter (the residuals are linear in
them); ``test`` and ``trial`` are the body's test and trial functions; the frame's state is a
:class:`FrameMotion`. Each route returns a :class:`RouteForms`. :mod:`dolfinx_mbs.forms`
re-exports every public name.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple, cast

import ufl
from ufl.algorithms import expand_derivatives
from ufl.algorithms.apply_algebra_lowering import apply_algebra_lowering
from ufl.algorithms.apply_derivatives import apply_derivatives as _apply_derivatives
from ufl.core.expr import Expr

from dolfinx_mbs.materials.base import Material, strain

__all__ = [
    "FrameMotion",
    "RouteForms",
    "cross",
    "planar",
    "velocity",
    "acceleration",
    "kinetic_energy_density",
    "acceleration_energy_density",
    "lagrange_route",
    "gibbs_appell_route",
    "hamilton_route",
    "kane_route",
]


class FrameMotion(NamedTuple):
    """A moving frame's state as the routes read it, local components: each a 3-vector UFL
    expression (or a 3-sequence of numbers).

    Attributes:
        omega: the angular velocity.
        alpha: the angular acceleration.
        v_O: the origin's velocity.
        a_O: the origin's acceleration.
    """

    omega: Expr
    alpha: Expr
    v_O: Expr
    a_O: Expr


@dataclasses.dataclass(frozen=True)
class RouteForms:
    """The operators a route derives, as UFL forms (None where the route gives none); also
    read by name, ``forms["mass"]``.

    Attributes:
        mass: M (bilinear).
        gyroscopic: G (bilinear; Lagrange, Gibbs-Appell, Kane).
        stiffness: K + K_omega (+ K_alpha) (bilinear).
        load: the constant part of the residual's negative (linear).
        momentum_coupling: G_p of p = M u' + G_p u + pi_0 (Hamilton; bilinear).
        momentum_offset: pi_0 (Hamilton; linear).
        momentum_load: h of dp/dt (Hamilton; linear).
    """

    mass: ufl.Form
    stiffness: ufl.Form
    gyroscopic: ufl.Form | None = None
    load: ufl.Form | None = None
    momentum_coupling: ufl.Form | None = None
    momentum_offset: ufl.Form | None = None
    momentum_load: ufl.Form | None = None

    def __getitem__(self, name: str) -> ufl.Form:
        """The form ``name`` (a field's name).

        Args:
            name: the field.

        Returns:
            The form.

        Raises:
            KeyError: no such form from this route.
        """
        form = getattr(self, name, None) if name in _ROUTE_FIELDS else None
        if form is None:
            raise KeyError(f"no form {name!r} from this route (it gives "
                           f"{[f for f in _ROUTE_FIELDS if getattr(self, f) is not None]})")
        return cast(ufl.Form, form)


_ROUTE_FIELDS = tuple(f.name for f in dataclasses.fields(RouteForms))


def apply_derivatives(expr: Expr) -> Expr:
    """Evaluate derivative nodes of an expression (compound operators lowered first).

    Args:
        expr: a UFL expression.

    Returns:
        The UFL expression.
    """
    return _apply_derivatives(apply_algebra_lowering(expr))


def _gdim(u: Expr) -> int:
    return cast(int, ufl.shape(u)[0])


def planar(w: Expr, gdim: int) -> Expr:
    """The components of a 3-vector constant that act on a ``gdim``-dimensional body.

    Args:
        w: a 3-vector (UFL).
        gdim: the body's geometric dimension (2 or 3).

    Returns:
        The UFL expression.
    """
    if gdim == 3:
        return w
    return ufl.as_vector([w[i] for i in range(gdim)])


def cross(w: Expr, u: Expr) -> Expr:
    """W x u for a 3-vector ``w`` and a 2- or 3-vector ``u``.

    For a 2D body only the z-component of ``w`` acts (planar motion): w x u = w_z (-u_y, u_x).

    Args:
        w: a 3-vector (UFL).
        u: the displacement (a trial function or Function).

    Returns:
        The UFL expression.
    """
    d = _gdim(u)
    if d == 3:
        return ufl.cross(w, u)
    if d == 2:
        return w[2] * ufl.as_vector([-u[1], u[0]])
    raise ValueError(f"cross: vectors of dimension {d} are not supported (need 2 or 3)")


# --- kinematics ----------------------------------------------------------------------------

def velocity(omega: Expr, v_O: Expr, X: Expr, u: Expr, udot: Expr) -> Expr:
    """Absolute velocity of a material point in local components: v_O + omega x (X+u) + udot.

    Args:
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        v_O: the frame origin's velocity, local components (3-vector).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        udot: the velocity (a Function or UFL expression).

    Returns:
        The UFL expression.
    """
    return planar(v_O, _gdim(u)) + cross(omega, X + u) + udot


def acceleration(omega: Expr, alpha: Expr, a_O: Expr, X: Expr, u: Expr, udot: Expr,
                 uddot: Expr) -> Expr:
    """Absolute acceleration in local components (docs/theory.md section 1).

    Args:
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        alpha: the frame's angular acceleration, as ``omega``.
        a_O: the frame origin's acceleration, local components (3-vector).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        udot: the velocity (a Function or UFL expression).
        uddot: the acceleration (a Function or UFL expression).

    Returns:
        The UFL expression.
    """
    r = X + u
    return (planar(a_O, _gdim(u)) + cross(alpha, r) + cross(omega, cross(omega, r))
            + 2.0 * cross(omega, udot) + uddot)


def kinetic_energy_density(rho: Expr | float, omega: Expr, v_O: Expr, X: Expr, u: Expr,
                           udot: Expr) -> Expr:
    """T density: ``rho/2 |v|^2``.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        v_O: the frame origin's velocity, local components (3-vector).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        udot: the velocity (a Function or UFL expression).

    Returns:
        The UFL expression.
    """
    vel = velocity(omega, v_O, X, u, udot)
    return 0.5 * rho * ufl.inner(vel, vel)


def acceleration_energy_density(rho: Expr | float, omega: Expr, alpha: Expr, a_O: Expr, X: Expr,
                                u: Expr, udot: Expr, uddot: Expr) -> Expr:
    """Gibbs-Appell S density: ``rho/2 |a|^2``.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        omega: the frame's angular velocity, local components: a 3-sequence of numbers or a
            3-vector UFL expression.
        alpha: the frame's angular acceleration, as ``omega``.
        a_O: the frame origin's acceleration, local components (3-vector).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        udot: the velocity (a Function or UFL expression).
        uddot: the acceleration (a Function or UFL expression).

    Returns:
        The UFL expression.
    """
    acc = acceleration(omega, alpha, a_O, X, u, udot, uddot)
    return 0.5 * rho * ufl.inner(acc, acc)


# --- the routes ----------------------------------------------------------------------------

def _zero_like(u: Expr) -> Expr:
    return ufl.as_vector([0.0] * _gdim(u))


def _linear_parts(E: Expr, u: Expr, ud: Expr, udd: Expr, trial: ufl.Argument,
                  dx: ufl.Measure) -> RouteForms:
    """Split a residual E (linear in u, ud, udd) into its operators and its constant part."""
    form = E * dx
    z = _zero_like(u)
    const = expand_derivatives(form)
    const = ufl.replace(const, {u: z, ud: z, udd: z})
    return RouteForms(mass=ufl.derivative(form, udd, trial),
                      gyroscopic=ufl.derivative(form, ud, trial),
                      stiffness=ufl.derivative(form, u, trial), load=-const)


def _potential_residual(material: Material, u: Expr, test: ufl.Argument) -> Expr:
    return material.thickness * ufl.inner(material.stress(strain(u)), strain(test))


def _time_derivative(expr: Expr, omega: Expr, alpha: Expr, v_O: Expr, a_O: Expr, u: Expr, ud: Expr,
                     udd: Expr) -> Expr:
    """d/dt of an expression of (u, udot) and of the frame's omega(t), v_O(t) (``ufl.variable``
    s), with d omega/dt = alpha and d v_O/dt = a_O - omega x v_O (local components of a moving
    frame: v_O = R^T r_O' gives (v_O)' = R^T r_O'' - omega x v_O)."""
    dvO_dt = a_O - ufl.cross(omega, v_O)
    return (ufl.derivative(expr, u, ud) + ufl.derivative(expr, ud, udd)
            + ufl.dot(ufl.diff(expr, omega), alpha) + ufl.dot(ufl.diff(expr, v_O), dvO_dt))


def lagrange_route(rho: Expr | float, material: Material, frame: FrameMotion, X: Expr, u: Expr,
                   ud: Expr, udd: Expr, test: ufl.Argument, trial: ufl.Argument,
                   dx: ufl.Measure = ufl.dx) -> RouteForms:
    """Operators from Lagrange's equations d/dt dT/d(udot) - dT/du + dV/du = 0, by UFL.

    ``u``, ``ud``, ``udd`` are Functions (their values do not matter: the residual is linear in
    them). The explicit time dependence of dT/d(udot) through omega(t) and v_O(t) is taken with
    ``d omega/dt = alpha`` and ``d v_O/dt = a_O - omega x v_O`` (local components of a moving
    frame). Returns forms ``mass``, ``gyroscopic``, ``stiffness`` (k + k_omega + k_alpha) and
    ``load`` (q_omega + q_alpha + q_O).

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        material: the elastic law.
        frame: the frame's state (omega, alpha, v_O, a_O).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        ud: the velocity Function (its values do not matter).
        udd: the acceleration Function (its values do not matter).
        test: the body's test function.
        trial: the body's trial function.
        dx: the cell measure to integrate over.

    Returns:
        ``mass``, ``gyroscopic``, ``stiffness`` and ``load``.
    """
    omega, alpha, v_O, a_O = frame
    W = ufl.variable(omega)
    VO = ufl.variable(v_O)
    T = kinetic_energy_density(rho, W, VO, X, u, ud)
    p = apply_derivatives(ufl.derivative(T, ud, test))
    dpdt = _time_derivative(p, W, alpha, VO, a_O, u, ud, udd)
    E = dpdt - ufl.derivative(T, u, test) + _potential_residual(material, u, test)
    E = apply_derivatives(E)
    return _linear_parts(E, u, ud, udd, trial, dx)


def gibbs_appell_route(rho: Expr | float, material: Material, frame: FrameMotion, X: Expr,
                       u: Expr, ud: Expr, udd: Expr, test: ufl.Argument, trial: ufl.Argument,
                       dx: ufl.Measure = ufl.dx) -> RouteForms:
    """Operators from the Gibbs-Appell equations dS/d(uddot) + dV/du = 0.

    ``S = int rho/2 |a|^2``, the acceleration energy.

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        material: the elastic law.
        frame: the frame's state (omega, alpha, a_O are read; the acceleration does not
            depend on v_O).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        ud: the velocity Function (its values do not matter).
        udd: the acceleration Function (its values do not matter).
        test: the body's test function.
        trial: the body's trial function.
        dx: the cell measure to integrate over.

    Returns:
        ``mass``, ``gyroscopic``, ``stiffness`` and ``load``.
    """
    S = acceleration_energy_density(rho, frame.omega, frame.alpha, frame.a_O, X, u, ud, udd)
    E = ufl.derivative(S, udd, test) + _potential_residual(material, u, test)
    E = apply_derivatives(E)
    return _linear_parts(E, u, ud, udd, trial, dx)


def hamilton_route(rho: Expr | float, material: Material, frame: FrameMotion, X: Expr, u: Expr,
                   ud: Expr, test: ufl.Argument, trial: ufl.Argument,
                   dx: ufl.Measure = ufl.dx) -> RouteForms:
    """Operators of Hamilton's form from T and V by UFL (docs/theory.md section 4).

    p = dT/d(udot) = M udot + G_p u + pi_0, and with T_0 = T(udot = 0),
    dp/dt = -(dV/du - dT_0/du) - G_p udot: returns ``mass`` (M), ``momentum_coupling`` (G_p),
    ``momentum_offset`` (pi_0), ``stiffness`` (K + K_omega) and ``momentum_load`` (h).

    Args:
        rho: mass per unit mesh measure (density x thickness for a 2D body), a number or a
            UFL scalar.
        material: the elastic law.
        frame: the frame's state (omega and v_O are read: p and dp/dt depend on the
            velocities only).
        X: the body's local coordinates (``ufl.SpatialCoordinate``).
        u: the displacement (a trial function or Function).
        ud: the velocity Function (its values do not matter).
        test: the body's test function.
        trial: the body's trial function.
        dx: the cell measure to integrate over.

    Returns:
        ``mass``, ``momentum_coupling``, ``momentum_offset``, ``stiffness`` and
        ``momentum_load``.
    """
    omega, v_O = frame.omega, frame.v_O
    z = _zero_like(u)
    T = kinetic_energy_density(rho, omega, v_O, X, u, ud)
    p = apply_derivatives(ufl.derivative(T, ud, test))
    T0 = ufl.replace(T, {ud: z})
    R = apply_derivatives(
        _potential_residual(material, u, test) - ufl.derivative(T0, u, test))
    return RouteForms(mass=ufl.derivative(p * dx, ud, trial),
                      momentum_coupling=ufl.derivative(p * dx, u, trial),
                      momentum_offset=ufl.replace(p * dx, {u: z, ud: z}),
                      stiffness=ufl.derivative(R * dx, u, trial),
                      momentum_load=ufl.replace(R * dx, {u: z}))


def kane_route(rho: Expr | float, material: Material, frame: FrameMotion, X: Expr, u: Expr,
               ud: Expr, udd: Expr, test: ufl.Argument, trial: ufl.Argument,
               body_force: Expr | None = None, dx: ufl.Measure = ufl.dx) -> RouteForms:
    """Operators from Kane's equations F_r + F*_r = 0 (seed 004, section 4.5), by UFL.

    The generalized speeds are the nodal velocities udot in the frame. For the speed r (the
    direction ``test``) UFL forms

    * the partial velocity v_r = dv/d(udot_r) of every material point, v its absolute velocity
      (:func:`velocity`), and the partial strain rate eps_r = d eps(udot)/d(udot_r);
    * the acceleration as the time derivative of v: a = (d/dt of v's local components)
      + omega x v, the local components changing through u, udot, omega(t) and v_O(t)
      (d omega/dt = alpha, d v_O/dt = a_O - omega x v_O): no acceleration is written by hand;
    * the generalized inertia force F*_r = -int rho a.v_r and the generalized active force
      F_r = -int sigma(u) : eps_r + int f.v_r (the elastic stresses and the body force).

    Args:
        rho: mass per unit mesh measure.
        material: the elastic law.
        frame: the frame's state (omega, alpha, v_O, a_O).
        X: the body's coordinates.
        u: the displacement Function (values irrelevant).
        ud: the velocity Function (values irrelevant).
        udd: the acceleration Function (values irrelevant).
        test: the body's test function.
        trial: the body's trial function.
        body_force: an optional force per unit mesh measure f (local components, a
            gdim-vector UFL expression), an active force; None for none.
        dx: the integration measure.

    Returns:
        forms ``mass``, ``gyroscopic``, ``stiffness`` (k + k_omega + k_alpha) and ``load``
        (q_omega + q_alpha + q_O, plus int f.v when ``body_force`` is given): the residual
        -(F_r + F*_r) = M uddot + G udot + K u - load.
    """
    omega, alpha, v_O, a_O = frame
    W = ufl.variable(omega)
    VO = ufl.variable(v_O)
    vel = velocity(W, VO, X, u, ud)
    v_r = apply_derivatives(ufl.derivative(vel, ud, test))
    eps_r = apply_derivatives(ufl.derivative(strain(ud), ud, test))
    acc = _time_derivative(vel, W, alpha, VO, a_O, u, ud, udd) + cross(omega, vel)
    inertia = -rho * ufl.inner(acc, v_r)                                    # F*_r
    active = -material.thickness * ufl.inner(material.stress(strain(u)), eps_r)   # F_r
    if body_force is not None:
        active = active + ufl.inner(body_force, v_r)
    E = apply_derivatives(-(active + inertia))
    return _linear_parts(E, u, ud, udd, trial, dx)
