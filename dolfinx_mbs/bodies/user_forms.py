"""The UFL terms a user adds to a body (``Body.add_form``), kept by kind.

A term is a mass, damping or stiffness bilinear form in the body's trial and test functions, or
a load (a linear form in the test function), optionally with an ``update(state)`` callback that
sets the user's constants at a new frame state. This module checks the terms when they are
added and hands them on grouped as the body's operators need them: constant mass and stiffness
terms to add to M and K, the terms assembled on their own (constant damping, anything with an
update), and the zero-weighted padding that gives every matrix of the body one sparsity when a
term has interior-facet integrals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, ValuesView

import ufl
from dolfinx import fem

from dolfinx_mbs import compat
from dolfinx_mbs.bodies.bundles import UserOperatorForms

if TYPE_CHECKING:
    from dolfinx.fem import FunctionSpace
    from dolfinx.mesh import Mesh

__all__ = ["FORM_KINDS", "UserForms"]

#: the kinds of ``Body.add_form``
FORM_KINDS = ("mass", "damping", "stiffness", "load")


class UserForms:
    """The user's terms of one body: ``(form, update or None)`` pairs by kind.

    Args:
        V: the body's displacement space (the forms' arguments must be on it).
        name: the body's name, for messages.
    """

    def __init__(self, V: FunctionSpace, name: str) -> None:
        self.V = V
        self.name = name
        self.by_kind = {k: [] for k in FORM_KINDS}

    def __getitem__(self, kind: str) -> list:
        return self.by_kind[kind]

    def values(self) -> ValuesView:
        """The terms kept, by kind."""
        return self.by_kind.values()

    def add(self, kind: str, form: ufl.Form, update: Callable | None = None) -> None:
        """Check a term (see ``Body.add_form`` for the rules) and keep it.

        Args:
            kind: ``"mass"``, ``"damping"``, ``"stiffness"`` or ``"load"``.
            form: the UFL form.
            update: a callable run at each new frame state (the term varies), or None.
        """
        if kind not in FORM_KINDS:
            raise ValueError(f"add_form: kind must be one of {FORM_KINDS}, got {kind!r}")
        if not isinstance(form, ufl.Form):
            raise TypeError(f"add_form: form must be a UFL form (an integral), got {form!r}")
        if update is not None and not callable(update):
            raise TypeError(f"add_form: update must be a callable update(state), got {update!r}")
        if kind == "mass" and update is not None:
            raise ValueError("add_form: a mass form cannot have an update (the mass matrix is "
                             "constant); give a damping or stiffness form instead")
        args = sorted(form.arguments(), key=lambda a: a.number())
        arity = 1 if kind == "load" else 2
        if len(args) != arity:
            what = "a linear form in the test function" if arity == 1 else \
                "a bilinear form in the trial and test functions"
            raise ValueError(f"add_form: a {kind!r} form must be {what} of body "
                             f"{self.name!r}, got {len(args)} argument(s)")
        for arg in args:
            if arg.ufl_function_space() != self.V:
                raise ValueError(f"add_form: the form's arguments must be on the space of body "
                                 f"{self.name!r} (use body.trial_test()), got one on "
                                 f"{arg.ufl_function_space()}")
        self.by_kind[kind].append((form, update))

    def total(self, kind: str, varying: bool) -> ufl.Form | None:
        """The sum of the ``kind`` terms with (``varying``) or without an update, or None.

        Args:
            kind: ``"mass"``, ``"damping"``, ``"stiffness"`` or ``"load"``.
            varying: the terms with an update (else those without).

        Returns:
            The sum, or None.
        """
        out = None
        for form, update in self.by_kind[kind]:
            if (update is not None) == varying:
                out = form if out is None else out + form
        return out

    def updates(self) -> list:
        """The distinct update callbacks, in the order first added."""
        return list({id(u): u for forms in self.by_kind.values()
                     for _, u in forms if u is not None}.values())

    def padding(self, mesh: Mesh) -> ufl.Form | None:
        """Zero times the bilinear terms with interior-facet integrals (None when there are
        none): added to every form that makes a matrix pattern so that all the body's matrices
        share one sparsity.

        Args:
            mesh: the body's mesh.

        Returns:
            The zero form, or None.
        """
        wide = [f for k in ("mass", "damping", "stiffness") for f, _ in self.by_kind[k]
                if f.integrals_by_type("interior_facet")]
        if not wide:
            return None
        total = wide[0]
        for f in wide[1:]:
            total = total + f
        return fem.Constant(mesh, compat.scalar_type(0.0)) * total

    def operator_forms(self) -> UserOperatorForms:
        """The terms assembled on their own: ``damping`` (constant), ``damping_varying``,
        ``stiffness_varying`` (bilinear) and ``load_varying``; None where there is none."""
        return UserOperatorForms(damping=self.total("damping", False),
                                 damping_varying=self.total("damping", True),
                                 stiffness_varying=self.total("stiffness", True),
                                 load_varying=self.total("load", True))

    @property
    def has_inertia(self) -> bool:
        """True with mass or damping terms, or stiffness terms with an update (the body's
        matrices are then no longer the node-block forms of the built-in terms)."""
        return bool(self.by_kind["mass"] or self.by_kind["damping"]
                    or any(u is not None for _, u in self.by_kind["stiffness"]))
