"""The bundles of UFL forms a body hands to its operators (:mod:`dolfinx_mbs.assembly`), and a
rigid body's force derivatives: typed records, read also by name as the dicts they used to be
(:class:`~dolfinx_mbs.records.Record`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import ufl

from dolfinx_mbs.records import Record

__all__ = ["BilinearForms", "NonlinearForms", "PrestressLoadForms", "MomentumForms",
           "UserOperatorForms", "ForceDerivatives"]


@dataclasses.dataclass(frozen=True, eq=False)
class BilinearForms(Record):
    """A body's bilinear forms (:meth:`~dolfinx_mbs.bodies.body.Body.bilinear_forms`).

    Attributes:
        mass: int rho u.v, with the user's constant mass forms.
        stiffness: the elastic stiffness, with the user's constant stiffness forms.
        coupling: int rho (W u).v, from which the gyroscopic, spin-softening and
            angular-acceleration matrices are formed.
    """

    mass: ufl.Form
    stiffness: ufl.Form
    coupling: ufl.Form


@dataclasses.dataclass(frozen=True, eq=False)
class NonlinearForms(Record):
    """Nonlinear stiffening's forms at the body's ``u_state``
    (:meth:`~dolfinx_mbs.bodies.body.Body.nonlinear_forms`).

    Attributes:
        force: the internal force's excess over K u (linear form).
        tangent: its derivative, the tangent stiffness's excess over K (bilinear form).
        energy: the strain energy's excess over 1/2 u.K u (functional).
    """

    force: ufl.Form
    tangent: ufl.Form
    energy: ufl.Form


@dataclasses.dataclass(frozen=True, eq=False)
class PrestressLoadForms(Record):
    """The unit load forms of the prestress cases
    (:meth:`~dolfinx_mbs.bodies.body.Body.prestress_load_forms`).

    Attributes:
        centrifugal: the centrifugal load of the unit spin tensor ``W_load``.
        gravity: gravity's load of ``g_unit``.
        applied: the constant local loads without point loads; None when there are none.
    """

    centrifugal: ufl.Form
    gravity: ufl.Form
    applied: ufl.Form | None


@dataclasses.dataclass(frozen=True, eq=False)
class MomentumForms(Record):
    """Hamilton's form's load forms (:meth:`~dolfinx_mbs.bodies.body.Body.momentum_forms`,
    docs/theory.md section 4), which replace the frame inertia load of the second-order form.

    Attributes:
        momentum_offset: pi_0, the momentum of the frame's motion on the undeformed body.
        momentum_load: h, the load of the frame's motion in Hamilton's form.
    """

    momentum_offset: ufl.Form
    momentum_load: ufl.Form


@dataclasses.dataclass(frozen=True, eq=False)
class UserOperatorForms(Record):
    """The user's forms assembled on their own
    (:meth:`~dolfinx_mbs.bodies.user_forms.UserForms.operator_forms`); None where there is none.

    Attributes:
        damping: the constant damping forms' sum (bilinear).
        damping_varying: the damping forms with an update (bilinear).
        stiffness_varying: the stiffness forms with an update (bilinear).
        load_varying: the load forms with an update (linear).
    """

    damping: ufl.Form | None
    damping_varying: ufl.Form | None
    stiffness_varying: ufl.Form | None
    load_varying: ufl.Form | None


@dataclasses.dataclass(frozen=True, eq=False)
class ForceDerivatives(Record):
    """A rigid body's d(F, M_O) (:meth:`~dolfinx_mbs.bodies.rigid.RigidBody.force_derivatives`),
    each a (6, 3) array: rows F then M_O, columns the variable's local components.

    Attributes:
        omega: by the angular velocity.
        alpha: by the angular acceleration.
        a_O: by the origin's acceleration.
        g_loc: by the local gravity (which turns with the frame).
    """

    omega: np.ndarray
    alpha: np.ndarray
    a_O: np.ndarray
    g_loc: np.ndarray
