"""The oil film of a plain journal bearing: the isoviscous, incompressible Reynolds equation on
the unwrapped film, its sensitivities to the journal's motion, and the film's force and
friction torque.

The film is the surface (theta, z) in [0, 2 pi) x [-L/2, L/2] (theta from the bearing's x axis
in the sense of the spin, about the rotor's axis; z along it). The journal's centre sits at
e = c X (X the position in units of the radial clearance c, in the bearing's x, y) and moves at
e' = c V, so the film thickness and its rate are

    h = c H,   H = 1 - X . n(theta),   H' = -V . n(theta),   n = (cos theta, sin theta).

With the journal's surface speed Omega R (the bearing at rest), Reynolds' equation is

    d_s (h^3 d_s p) + d_z (h^3 d_z p) = 6 mu Omega R d_s h + 12 mu h'     (s = R theta)

and in the pressure unit mu R^2 / c^2 (P = p c^2 / (mu R^2), in 1/s) and the coordinates
(theta, z) of the film's mesh its weak form is, for every test q vanishing at the ends,

    int [H^3 (d_theta P d_theta q + R^2 d_z P d_z q) + g q] dtheta dz = 0,
    g = 6 Omega d_theta H + 12 H'                                     (:func:`reynolds`)

(theta periodic; P = 0 at z = +/- L/2). It is linear in P: the operator
a(P, q) = int H^3 grad P . grad q depends on the position only, the source g on the position,
the velocity and the speed. Its derivatives with respect to X and V at fixed P
(:func:`sensitivities`, by ``ufl.diff``) are the right-hand sides of the perturbation
equations a(P_j, q) = -dF/dX_j (the exact linearization of the film).

The film pushes on the journal with

    F = -int p n dA = -(mu R^3 / c^2) int P n dtheta dz                 (:func:`force`)

and resists its spin with the torque (shear of the full film, the Couette part and the
pressure-driven part on the moving surface)

    T = (mu R^3 / c) int (Omega / H + H/2 d_theta P) dtheta dz        (:func:`friction_torque`).

Cavitation is not written here: the Reynolds (Swift-Stieber) condition is the bound P >= 0 of
a variational inequality (PETSc's SNESVI, :mod:`dolfinx_mbs.rotors.film`); the half-Sommerfeld
(Guembel) condition keeps the full film's pressure and integrates its positive part
(``positive=True`` below). Units: SI.
"""

from __future__ import annotations

import dataclasses
from typing import List, Tuple

import ufl
from ufl.core.expr import Expr

from dolfinx_mbs.records import Record

__all__ = ["film_thickness", "force", "friction_torque", "positive_part", "reynolds",
           "sensitivities", "Sensitivities", "unwrapped_normal"]


def unwrapped_normal(x: Expr) -> Expr:
    """n(theta) = (cos theta, sin theta): the direction of the film point theta (x[0]) across
    the axis, in the bearing's x, y.

    Args:
        x: the film mesh's spatial coordinate (theta, z).

    Returns:
        The 2-vector.
    """
    return ufl.as_vector((ufl.cos(x[0]), ufl.sin(x[0])))


def film_thickness(x: Expr, position: Expr) -> Expr:
    """H = h / c = 1 - X . n(theta): the film thickness in units of the clearance.

    Args:
        x: the film mesh's spatial coordinate (theta, z).
        position: X, the journal centre in units of the clearance (2-vector).

    Returns:
        The UFL expression.
    """
    return 1.0 - ufl.dot(position, unwrapped_normal(x))


def _integrand(P: Expr, q: Expr, x: Expr, position: Expr, velocity: Expr, speed: Expr,
               radius: Expr) -> Expr:
    H = film_thickness(x, position)
    Hdot = -ufl.dot(velocity, unwrapped_normal(x))
    g = 6.0 * speed * H.dx(0) + 12.0 * Hdot
    flux = P.dx(0) * q.dx(0) + radius * radius * P.dx(1) * q.dx(1)
    return H ** 3 * flux + g * q


def reynolds(P: Expr, q: Expr, x: Expr, position: Expr, velocity: Expr, speed: Expr,
             radius: Expr, dx: ufl.Measure) -> Tuple[ufl.Form, ufl.Form, ufl.Form]:
    """Reynolds' equation in weak form (module docstring): the residual F(P; q), the operator
    a(dP, q) = dF/dP (which does not depend on P) and the right-hand side -F(0; q).

    Args:
        P: the pressure P = p c^2 / (mu R^2) (a Function of the film's space, 1/s).
        q: the test function.
        x: the film mesh's spatial coordinate (theta, z).
        position: X, the journal centre / c (2-vector constant).
        velocity: V, the journal centre's velocity / c (2-vector constant, 1/s).
        speed: Omega, the journal's spin speed (rad/s).
        radius: R, the journal's radius (m).
        dx: the film's cell measure.

    Returns:
        ``(residual, operator, rhs)``.
    """
    residual = _integrand(P, q, x, position, velocity, speed, radius) * dx
    dP = ufl.TrialFunction(P.ufl_function_space())
    operator = ufl.derivative(residual, P, dP)
    H = film_thickness(x, position)
    g = 6.0 * speed * H.dx(0) - 12.0 * ufl.dot(velocity, unwrapped_normal(x))
    return residual, operator, -g * q * dx


@dataclasses.dataclass(frozen=True, eq=False)
class Sensitivities(Record):
    """The film residual's derivatives of :func:`sensitivities` (linear forms, one per
    component), read also by name (``s["position"]``).

    Attributes:
        position: [dF/dX_x, dF/dX_y], by the journal's position X.
        velocity: [dF/dV_x, dF/dV_y], by its velocity V.
    """

    position: List[ufl.Form]
    velocity: List[ufl.Form]


def sensitivities(P: Expr, q: Expr, x: Expr, position: Expr, velocity: Expr, speed: Expr,
                  radius: Expr, dx: ufl.Measure) -> Sensitivities:
    """The residual's derivatives at fixed P with respect to the journal's position X and
    velocity V, component by component (``ufl.diff`` on the residual's integrand): minus
    these are the right-hand sides of the perturbation equations a(P_j, q) = -dF/dX_j.

    Args:
        P: the pressure at the state of the derivative.
        q: the test function.
        x: the film mesh's spatial coordinate (theta, z).
        position: X (2-vector constant).
        velocity: V (2-vector constant).
        speed: Omega.
        radius: R.
        dx: the film's cell measure.

    Returns:
        The :class:`Sensitivities`, ``position`` [dF/dX_x, dF/dX_y] and ``velocity``
        [dF/dV_x, dF/dV_y] (linear forms).
    """
    X, V = ufl.variable(position), ufl.variable(velocity)
    f = _integrand(P, q, x, X, V, speed, radius)
    dX, dV = ufl.diff(f, X), ufl.diff(f, V)
    return Sensitivities(position=[dX[j] * dx for j in range(2)],
                         velocity=[dV[j] * dx for j in range(2)])


def positive_part(P: Expr) -> Expr:
    """max(P, 0): the half-Sommerfeld pressure of a full-film solution.

    Args:
        P: the pressure.

    Returns:
        The UFL expression.
    """
    return ufl.conditional(ufl.gt(P, 0.0), P, 0.0)


def force(P: Expr, x: Expr, scale: Expr, dx: ufl.Measure, positive: bool = False,
          where: Expr | None = None) -> list:
    """The film's force on the journal, F_j = -scale int P n_j dtheta dz, scale = mu R^3 / c^2
    (N s), as two functionals; with ``positive`` of max(P, 0) (half-Sommerfeld). With
    ``where`` (the pressure whose positive part decides), the force of the perturbation P
    restricted to where ``where`` > 0: the derivative of the half-Sommerfeld force.

    Args:
        P: the pressure (or its perturbation).
        x: the film mesh's spatial coordinate (theta, z).
        scale: mu R^3 / c^2.
        dx: the film's cell measure.
        positive: integrate max(P, 0).
        where: restrict P to where this pressure is positive (None: nowhere restricted).

    Returns:
        ``[F_x, F_y]`` (UFL functionals).
    """
    if where is not None:
        p = ufl.conditional(ufl.gt(where, 0.0), P, 0.0)
    else:
        p = positive_part(P) if positive else P
    n = unwrapped_normal(x)
    return [-scale * p * n[j] * dx for j in range(2)]


def friction_torque(P: Expr, x: Expr, position: Expr, speed: Expr, scale: Expr,
                    dx: ufl.Measure, positive: bool = False) -> ufl.Form:
    """The torque of the film's shear on the journal, against its spin: scale int (Omega / H
    + H/2 d_theta P) dtheta dz with scale = mu R^3 / c (N m s); the full film's shear (the
    Petroff term everywhere), the pressure term of max(P, 0) with ``positive``.

    Args:
        P: the pressure.
        x: the film mesh's spatial coordinate (theta, z).
        position: X.
        speed: Omega.
        scale: mu R^3 / c.
        dx: the film's cell measure.
        positive: the pressure term of max(P, 0) (half-Sommerfeld).

    Returns:
        The functional.
    """
    H = film_thickness(x, position)
    dP = ufl.conditional(ufl.gt(P, 0.0), P.dx(0), 0.0) if positive else P.dx(0)
    return scale * (speed / H + 0.5 * H * dP) * dx
