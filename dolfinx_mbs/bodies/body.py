"""An elastic body: a mesh, a material and a moving frame, with the loads applied to it.

The body owns the displacement space (vector Lagrange of the mesh's geometric dimension), the
UFL constants of its frame state (omega, alpha, v_O, a_O and gravity, in local components) and
its applied loads. Its forms are built from :mod:`dolfinx_mbs.forms`; this module writes no
physics of its own.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Callable, Protocol, Sequence, Tuple

import numpy as np
import ufl
from dolfinx import fem
from mpi4py import MPI

from dolfinx_mbs import checks, compat
from dolfinx_mbs import forms as F
from dolfinx_mbs.bodies.bundles import (
    BilinearForms,
    MomentumForms,
    NonlinearForms,
    PrestressLoadForms,
    UserOperatorForms,
)
from dolfinx_mbs.bodies.loads import (
    AppliedLoads,
    TimeVector,
    VectorLike,
    diameter,
    facet_measure,
    locate_node,
)
from dolfinx_mbs.bodies.user_forms import FORM_KINDS, UserForms
from dolfinx_mbs.frames.base import Frame, FrameState
from dolfinx_mbs.frames.stationary import Stationary
from dolfinx_mbs.materials.base import Material

if TYPE_CHECKING:
    from dolfinx.mesh import Mesh, MeshTags
    from petsc4py import PETSc

__all__ = ["Body", "FORM_KINDS", "name_bodies", "UNNAMED"]

class SectorLike(Protocol):
    """What a body reads of its sector (:class:`dolfinx_mbs.cyclic.Sector`, a later part: not
    named here)."""

    n_sectors: int

    def check_body(self, body: "Body") -> None:
        """Refuse a body that cannot be this sector (its frame's axis).

        Args:
            body: the body.
        """


#: the name of a body created without one, until a model names it (:func:`name_bodies`)
UNNAMED = "body"


def name_bodies(bodies: Sequence[Body]) -> None:
    """Name the bodies created without a name by their place in a model's list.

    The body at ``model.bodies[i]`` becomes ``"body<i>"`` (``body0``, ``body1``, ...): the
    name means the same on every rank and in every process, whatever else was made before. A
    name a user gave another body of the list is not taken twice: the later one gets a suffix
    (``body1_2``). A body in several models has the name of its place in the last one made.

    Args:
        bodies: the model's bodies, in the model's order.
    """
    taken = {b.name for b in bodies if b.named}
    for i, b in enumerate(bodies):
        if b.named:
            continue
        name, k = f"{UNNAMED}{i}", 2
        while name in taken:
            name, k = f"{UNNAMED}{i}_{k}", k + 1
        taken.add(name)
        b.rename(name)


class Body:
    """One elastic body in its own moving frame.

    Args:
        mesh: a DOLFINx mesh, 2D (triangles, quadrilaterals) or 3D (tetrahedra, hexahedra), in
            the body's local coordinates (m); or an existing vector ``FunctionSpace`` on such a
            mesh (``gdim`` components, block size ``gdim``), used as the user made it (degree,
            element family and variant, ghosting).
        material: a :mod:`dolfinx_mbs.materials` law that fits the mesh dimension.
        frame: a :class:`dolfinx_mbs.frames.Frame` giving the motion of the local frame.
        degree: polynomial degree of the displacement (1 or 2, or higher) when ``mesh`` is
            a mesh; default the degree of the mesh's cells (1 on straight-sided cells, 2 on
            the curved cells of :mod:`dolfinx_mbs.meshes`' round parts); with a space, None
            or the space's degree. A degree below the cells' warns
            (:class:`~dolfinx_mbs.checks.SubparametricWarning`): on curved cells such a
            space cannot hold a rigid rotation exactly, so rigid motions take strain.
        name: label used in output and messages (output files are ``<stem>_<name>``); None:
            ``"body<i>"``, i the body's index in the model it joins (:func:`name_bodies`).
        stiffening: None (linear strain), ``"prestress"`` or ``"nonlinear"``
            (``docs/theory.md`` section 3).

            ``"prestress"``: the geometric stiffness of the steady stress of the centrifugal
            load, of gravity and of the origin's acceleration (a hub offset: the spin axis
            off the local origin), K_sigma(t) = sum_ij omega_i omega_j K_sigma,ij +
            sum_k (g - a_O)_k K_sigma,k (local components), from unit solves with the
            model's constraints (done by the model on first use): it follows any omega(t) and
            any orientation without new solves. Constant applied loads in local components
            (body forces, tractions, point loads) are added as one more case. Bodies that
            the constraints join must be in frames of equal motion
            (``frames.equal_motion``: one frame object, or equal parameters); bodies not
            joined (each clamped to its own frame or to the ground) may move differently
            (see :func:`dolfinx_mbs.static.prestress`).

            ``"nonlinear"``: St Venant-Kirchhoff strain (Green strain, the material's law
            applied to it) in the body frame: large displacements relative to the frame,
            small strain. Time integration and static solves use Newton's method; modal
            solves linearize about the static equilibrium at the frame state.
        cyclic: a :class:`dolfinx_mbs.cyclic.Sector`: the mesh is one sector of a wheel of
            N about the frame's spin axis (``docs/theory.md`` section 10). The model then
            solves its cyclic (k = 0) problem and, with ``harmonic=``, each harmonic index
            (nodal diameter) k = 0 ... floor(N/2) (see :mod:`dolfinx_mbs.cyclic`).

    Raises:
        ValueError: material and mesh dimensions differ, degree < 1, a space that is not a
            vector space of gdim components, the mesh has no cells, or a ``cyclic`` sector
            whose axis is not the frame's spin axis.
    """

    def __init__(self, mesh: Mesh, material: Material, frame: Frame, degree: int | None = None,
                 name: str | None = None, stiffening: str | None = None,
                 cyclic: SectorLike | None = None) -> None:
        if not isinstance(material, Material):
            raise TypeError(f"material must be a dolfinx_mbs.materials law, got {material!r}")
        if not isinstance(frame, Frame):
            raise TypeError(f"frame must be a dolfinx_mbs.frames.Frame, got {frame!r}")
        if degree is not None and (not isinstance(degree, (int, np.integer)) or degree < 1):
            raise ValueError(f"degree must be an integer >= 1, got {degree!r}")
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"name must be a non-empty string or None, got {name!r}")
        if stiffening not in (None, "prestress", "nonlinear"):
            raise ValueError(f"stiffening must be None, 'prestress' or 'nonlinear', got "
                             f"{stiffening!r}")
        V = mesh if isinstance(mesh, fem.FunctionSpace) else None
        mesh = V.mesh if V is not None else mesh
        gdim = mesh.geometry.dim
        tdim = mesh.topology.dim
        if gdim not in (2, 3) or tdim != gdim:
            raise ValueError(f"mesh must be a 2D or 3D solid mesh (tdim == gdim), got gdim={gdim}, "
                             f"tdim={tdim}")
        material.check_mesh(gdim)
        ncells = mesh.comm.allreduce(mesh.topology.index_map(tdim).size_local, op=MPI.SUM)
        if ncells == 0:
            raise ValueError("mesh has no cells")
        if V is not None:
            shape, bs = compat.value_shape(V), V.dofmap.index_map_bs
            if shape != (gdim,) or bs != gdim:
                raise ValueError(f"the space (mesh=) must be a vector space of {gdim} components "
                                 f"with block size {gdim} on a {gdim}D mesh, got value shape "
                                 f"{shape} and block size {bs}")
            own = compat.space_degree(V)
            if degree is not None and int(degree) != own:
                raise ValueError(f"degree={degree} differs from the space's degree {own}: "
                                 "leave degree out with a space")
            degree = own
        #: True when the user gave the name (a model names the others by their place)
        self.named = name is not None
        self.name = name if name is not None else UNNAMED
        self.mesh = mesh
        self.comm = mesh.comm
        self.material = material
        self.frame = frame
        geometric = compat.geometry_degree(mesh)
        if degree is not None and int(degree) < geometric:
            who = f"body {name!r}" if name is not None else "a body"
            warnings.warn(f"{who}: degree {int(degree)} on cells of "
                          f"degree {geometric} (curved): the space cannot hold a rigid "
                          "rotation exactly, so rigid motions take strain (a free rotor's "
                          f"torsion, a stiff shaft's tilt); give degree >= {geometric} or "
                          "leave it out", checks.SubparametricWarning, stacklevel=2)
        self.degree = int(degree) if degree is not None else geometric
        self.gdim = gdim
        self.V = V if V is not None else compat.vector_space(mesh, self.degree)
        self.u = fem.Function(self.V, name="u")
        self.X = ufl.SpatialCoordinate(mesh)
        #: mass per unit mesh measure (density x thickness for 2D bodies)
        self.rho = material.density * material.thickness
        z3 = np.zeros(3, dtype=compat.scalar_type)
        #: the frame state as UFL constants (omega, alpha, v_O, a_O, R), set by set_state
        self.frame_constants = frame.constants(mesh)
        fc = self.frame_constants
        self.omega, self.alpha, self.v_O, self.a_O = fc.omega, fc.alpha, fc.v_O, fc.a_O
        self.gravity_local = fem.Constant(mesh, z3.copy())
        #: the 3x3 matrix of the inertia coupling form (see forms.inertia_coupling)
        self.W = fem.Constant(mesh, np.zeros((3, 3), dtype=compat.scalar_type))
        self.gravity = np.zeros(3)
        #: body forces, tractions and point loads (:class:`dolfinx_mbs.bodies.loads.AppliedLoads`)
        self.loads = AppliedLoads(mesh, gdim, self.name)
        #: the user's forms by kind: (form, update or None) pairs (see :meth:`add_form`)
        self.user_forms = UserForms(self.V, self.name)
        #: set when the body's operators are made (its forms compiled): forms added later
        #: would not be seen, so add_form refuses them
        self.assembled = False
        self.stiffening = stiffening
        #: prestress unit cases -> displacement under that case's load (filled by the model,
        #: see :meth:`prestress_cases`; the Functions are kept and refilled by later solves)
        self.prestress_fields = {}
        #: W of the unit centrifugal load (a W_ij of forms.unit_spin_cases)
        self.W_load = fem.Constant(mesh, np.zeros((3, 3), dtype=compat.scalar_type))
        #: the gravity of a unit prestress case (local components)
        self.g_unit = fem.Constant(mesh, z3.copy())
        #: with nonlinear stiffening: the displacement at which the strain's nonlinear terms
        #: are evaluated (set by the model)
        self.u_state = fem.Function(self.V, name="u_state") if stiffening == "nonlinear" \
            else None
        #: bearings and disks on the body's journals (:mod:`dolfinx_mbs.bodies.attachments`)
        self.attachments: list = []
        #: bearings whose housing is a surface of this body (``Model.bearing(..., other=)``)
        self.housings: list = []
        #: the sector of a wheel this body is (:class:`dolfinx_mbs.cyclic.Sector`), or None
        self.cyclic = cyclic
        if cyclic is not None:
            if not callable(getattr(cyclic, "check_body", None)):
                raise TypeError(f"cyclic must be a dolfinx_mbs.cyclic.Sector, got {cyclic!r}")
            cyclic.check_body(self)

    def prestress_cases(self) -> list:
        """The unit load cases of prestress stiffening: ``(i, j)`` the centrifugal load of
        the unit spin case W_ij of ``forms.unit_spin_cases`` (omega omega^T = E_ij (+ E_ji)),
        ``("g", k)`` a uniform acceleration field of unit local component k (when the body has
        gravity or its frame's origin accelerates: g - a_O),
        ``("applied",)`` the constant loads in local components, the user's constant load forms
        included (when it has any). Their
        stresses, scaled by :meth:`prestress_coefficient`, sum to the steady stress at any
        frame state."""
        if self.stiffening != "prestress":
            return []
        return self.load_cases()

    def load_cases(self) -> list:
        """The unit load cases whose sum is this body's steady load.

        Those of :meth:`prestress_cases`, with or without prestress stiffening of its own:
        what the body passes to the bodies joined to it.
        """
        cases: list[tuple] = list(F.unit_spin_cases(self.gdim))
        if isinstance(self.frame, Stationary):  # the spin is along the axis: Omega^2 a a^T
            a = self.frame.axis
            cases = [(i, j) for i, j in cases if a[i] * a[j] != 0.0]
        if np.any(self.gravity) or self.frame.origin_accelerates:
            cases += [("g", k) for k in range(self.gdim)]
        if self.loads.steady() or self.user_forms.total("load", False) is not None:
            cases.append(("applied",))
        return cases

    def prestress_coefficient(self, case: tuple, state: FrameState) -> float:
        """The factor of unit case ``case`` at ``state``: omega_i omega_j (the weight of the
        unit spin case W_ij of ``forms.unit_spin_cases``), the local component k of gravity
        less the origin's acceleration, (R^T g - a_O)_k, or 1 for the constant applied
        loads.

        A case ``("carried", Q, d, c)`` is the unit case c of the bodies joined to this one
        whose frame is this frame carried by the constant axes Q and origin d (an element
        frame, :meth:`FrameState.carried`): the factor of c at that frame's state (gravity
        as this body's, the model's).

        Args:
            case: a unit case of :meth:`prestress_cases`.
            state: the frame state.

        Returns:
            The factor.
        """
        if case[0] == "carried":
            _, Q, d, inner = case
            return self.prestress_coefficient(
                inner, state.carried(np.reshape(Q, (3, 3)), np.asarray(d)))
        if case[0] == "g":  # gravity and the inertia of the origin's acceleration, g - a_O
            return float((state.R.T @ self.gravity)[case[1]] - state.a_O[case[1]])
        if case[0] == "applied":
            return 1.0
        i, j = case
        # a stationary frame's body spins through it: its centrifugal load is the spin's
        w = getattr(state, "centrifugal_omega", state.omega)
        return float(w[i] * w[j])

    def prestress_load_forms(self) -> PrestressLoadForms:
        """Unit load forms of the prestress cases.

        ``centrifugal`` with ``W_load``, ``gravity`` with ``g_unit``, ``applied`` (the
        constant local loads without point loads; None when there are none).
        """
        v = ufl.TestFunction(self.V)
        return PrestressLoadForms(
            centrifugal=F.centrifugal_unit_load(self.rho, self.W_load, self.X, v),
            gravity=F.gravity_load(self.rho, self.g_unit, v),
            applied=self.loads.form(v, self.material.thickness,
                                    self.user_forms.total("load", False), steady_only=True))

    def prestress_stiffness_form(self, field: fem.Function) -> ufl.Form:
        """The geometric stiffness form of the stress of the displacement ``field``.

        Args:
            field: a unit prestress field of :attr:`prestress_fields`.

        Returns:
            The bilinear form (UFL).
        """
        u, v = self.trial_test()
        sigma0 = self.material.stress(F.strain(field))
        return F.geometric_stiffness(self.material, sigma0, u, v)

    def add_steady_point_loads(self, b: PETSc.Vec) -> None:
        """Add the constant local point loads to the assembled vector ``b`` (owned part).

        Args:
            b: the assembled load vector.
        """
        self.loads.add_steady_points(b)

    def nonlinear_forms(self) -> NonlinearForms:
        """With nonlinear stiffening, the forms at ``u_state``: ``force`` (the internal force's
        excess over K u), ``tangent`` (its derivative: the tangent stiffness's excess over K)
        and ``energy`` (the strain energy's excess over 1/2 u.K u)."""
        force = self.nonlinear_form("force")
        return NonlinearForms(force=force, tangent=self.nonlinear_form("tangent", force),
                              energy=self.nonlinear_form("energy"))

    def nonlinear_form(self, key: str, force: ufl.Form | None = None) -> ufl.Form:
        """One of :meth:`nonlinear_forms` built alone (UFL's forms cost their making: a
        caller that compiles one form needs not the others).

        Args:
            key: ``"force"``, ``"tangent"`` or ``"energy"``.
            force: the force form already made, whose derivative the tangent is (None: made).

        Returns:
            The UFL form.

        Raises:
            ValueError: the body has no nonlinear stiffening, or ``key`` is none of those.
        """
        if self.u_state is None:
            raise ValueError(f"body {self.name!r} has no nonlinear stiffening")
        if key not in ("force", "tangent", "energy"):
            raise ValueError(f"key must be 'force', 'tangent' or 'energy', got {key!r}")
        dx = ufl.Measure("dx", domain=self.mesh,
                         metadata={"quadrature_degree": self.nonlinear_degree()})
        if key == "energy":
            return F.svk_remainder_energy(self.material, self.u_state, dx)
        u, v = self.trial_test()
        if force is None:
            force = F.svk_remainder(self.material, self.u_state, v, dx)
        return force if key == "force" else ufl.derivative(force, self.u_state, u)

    def nonlinear_degree(self) -> int:
        """The quadrature degree of :meth:`nonlinear_forms`. On affine simplices (straight
        triangles and tetrahedra) with a law linear in the strain and, like the thickness,
        constant in space, 4 (p - 1) (at least 1): the displacement gradient is of degree
        p - 1 there and the integrands (the energy's 1/2 S(E) : E, the force's F S(E) :
        grad v, its tangent) are polynomials of degree 4 (p - 1), so the rule is exact, with
        about half the points of degree 3 p (P2: 6 points a triangle for 12). Elsewhere
        (tensor-product or curved cells, a law nonlinear or varying in space) 3 p, which is
        exact for no such integrand but covers the linear and quadratic terms."""
        p = self.degree
        if compat.cell_type_name(self.mesh) in ("triangle", "tetrahedron") \
                and compat.geometry_degree(self.mesh) == 1 and self._law_degree() <= 1:
            return max(4 * (p - 1), 1)
        return 3 * p

    def _law_degree(self) -> int:
        """The polynomial degree of the law applied to a strain linear in x, the thickness's
        added (a number): 1 for a law linear in the strain whose constants do not vary in
        space. The material's ``law_degree`` where it sets one itself or the class that
        defines its ``stress`` gives one (a subclass's own law is estimated), else UFL's
        estimate."""
        law = next(c for c in type(self.material).__mro__ if "stress" in vars(c))
        known = vars(self.material).get("law_degree", vars(law).get("law_degree"))
        if known is None:
            return self._estimated_law_degree()
        if isinstance(known, bool) or not isinstance(known, (int, np.integer)) or known < 0:
            raise ValueError(f"material {type(self.material).__name__}: law_degree must be a "
                             f"non-negative integer or None (UFL estimates it), got {known!r}")
        return int(known)

    def _estimated_law_degree(self) -> int:
        """:meth:`_law_degree` by UFL's estimate of the law's polynomial degree."""
        from ufl.algorithms.apply_algebra_lowering import apply_algebra_lowering
        from ufl.algorithms.apply_derivatives import apply_derivatives
        from ufl.algorithms.estimate_degrees import estimate_total_polynomial_degree

        x = ufl.SpatialCoordinate(self.mesh)
        X = ufl.outer(x, ufl.as_vector([1.0] * self.gdim))
        law = self.material.thickness * self.material.stress(0.5 * (X + X.T))
        return int(estimate_total_polynomial_degree(
            apply_derivatives(apply_algebra_lowering(law))))

    # -- frame state ----------------------------------------------------------------------
    def set_state(self, state: FrameState) -> None:
        """Fill the frame constants and the time-dependent loads for ``state``.

        Args:
            state: the frame state.
        """
        if self.gdim == 2 and not state.is_planar():
            raise ValueError(
                f"body {self.name!r} is 2D, but its frame does not move in the xy-plane at "
                f"t={state.t:g} (omega={state.omega}, alpha={state.alpha}): use a planar frame"
            )
        self.frame_constants.set(state)
        self.gravity_local.value = state.R.T @ self.gravity
        self.loads.update(state)
        for update in self.user_forms.updates():
            update(state)

    # -- the user's forms ---------------------------------------------------------------------
    def add_form(self, kind: str, form: ufl.Form, update: Callable[[FrameState], None] | None = None
                 ) -> None:
        """Add a UFL term of the user's to the body's operators.

        Args:
            kind: ``"mass"``, ``"damping"``, ``"stiffness"`` (bilinear forms in the body's
                trial and test functions, :meth:`trial_test`) or ``"load"`` (a linear form in
                the test function; N, in the body frame's components).
            form: the UFL form, integrals over cells (``dx``), exterior facets (``ds``) or
                interior facets (``dS``), with the user's own coefficients and constants.
            update: optional ``update(state)``, called with the body's
                :class:`~dolfinx_mbs.frames.FrameState` (time ``state.t``) before the form is
                assembled at a new frame state: there the user sets their ``fem.Constant`` s.
                Without it the form is constant and assembled once.

        A constant mass or stiffness form is assembled together with the body's own mass or
        elastic stiffness (M, K: it then takes part in everything that uses them: Rayleigh
        damping, prestress solves, energies, eigenproblems); a constant damping form once into
        a matrix of its own added to D; a form with ``update`` into its own matrix (vector) at
        every new frame state. Cell and exterior-facet terms fit the body's sparsity; a term
        with interior-facet integrals widens the sparsity of all the body's matrices (it is
        added with a zero factor to each form that makes a pattern). A mass form enters M only,
        not the frame-inertia terms (Coriolis, spin softening, frame loads), which follow the
        material's density; a mass with ``update`` is refused (M is constant).

        Raises:
            ValueError: an unknown kind, a form of the wrong arity, arguments on another
                space, or ``update`` with a mass form (on every rank: the checks look at the
                form only).
            RuntimeError: the body's operators were already assembled.
            TypeError: ``form`` is not a UFL form, or ``update`` is not callable.
        """
        if self.assembled:
            raise RuntimeError(f"add_form: the operators of body {self.name!r} are already "
                               "assembled (a solve ran): add forms before the first solve")
        self.user_forms.add(kind, form, update)

    def sparsity_padding(self) -> ufl.Form | None:
        """See :meth:`UserForms.padding`: zero times the user's interior-facet terms, or
        None."""
        return self.user_forms.padding(self.mesh)

    def user_operator_forms(self) -> UserOperatorForms:
        """See :meth:`UserForms.operator_forms`: the user's forms assembled on their own."""
        return self.user_forms.operator_forms()

    @property
    def has_user_inertia(self) -> bool:
        """True when the user added mass or damping forms, or stiffness forms with an update
        (the matrices are then no longer the node-block forms of the built-in terms)."""
        return self.user_forms.has_inertia or bool(self.attachments) or \
            bool(self.housings) or isinstance(self.frame, Stationary)

    # -- loads ----------------------------------------------------------------------------
    def set_gravity(self, g: VectorLike) -> None:
        """Gravity acceleration (m/s^2), fixed in the global frame (3 components).

        Args:
            g: the gravitational acceleration (m/s^2), 3 global components.
        """
        self.gravity = checks.point3(g, "gravity")

    def add_body_force(self, f: TimeVector, local: bool = True) -> None:
        """A force per unit volume (N/m^3), constant or ``t -> vector``; local components unless
        ``local=False``.

        Args:
            f: the force per unit volume (N/m^3): a vector or ``t -> vector``.
            local: components in the body frame (False: global components).
        """
        self.loads.add(f, "body force", local)

    def add_traction(self, t: TimeVector, facets: Tuple[MeshTags, int] | None = None,
                     where: Callable[[np.ndarray], np.ndarray] | None = None,
                     local: bool = True) -> None:
        """A traction (N/m^2) on boundary facets given by ``facets=(meshtags, tag)`` or by a
        predicate ``where(x) -> bool array`` on facet midpoints (x of shape (3, n)).

        Args:
            t: the traction (N/m^2): a vector or ``t -> vector``.
            facets: ``(meshtags, tag)`` of the facets, or None.
            where: a predicate ``x -> bool array`` on facet midpoints (x of shape (3, n)), or None.
            local: components in the body frame (False: global components).

        Raises:
            ValueError: no facet is selected on any rank.
        """
        ds = facet_measure(self.mesh, facets, where, f"add_traction on body {self.name!r}")
        self.loads.add(t, "traction", local, measure=ds)

    def add_point_load(self, point: VectorLike, f: TimeVector, local: bool = True,
                       tol: float = 1e-8) -> None:
        """A concentrated force (N) at the mesh node nearest ``point`` (which must lie within
        ``tol`` of a node, relative to the mesh size).

        Args:
            point: the point (local coordinates, m).
            f: the force (N): a vector or ``t -> vector``.
            local: components in the body frame (False: global components).
            tol: the largest distance to a node, relative to the mesh size.
        """
        p = checks.point3(point, "point")
        p[self.gdim:] = 0.0  # a 2D body's point in its plane
        node = self.locate_node(p, tol)
        self.loads.add(f, "point load", local, node=node)

    def apply_load(self, body_force: TimeVector | None = None, traction: TimeVector | None = None,
                   where: Callable[[np.ndarray], np.ndarray] | None = None,
                   facets: Tuple[MeshTags, int] | None = None,
                   point: Sequence[float] | np.ndarray | None = None,
                   force: TimeVector | None = None, local: bool = True) -> None:
        """One of :meth:`add_body_force`, :meth:`add_traction` or :meth:`add_point_load`, by
        the argument given (:meth:`dolfinx_mbs.Model.apply_load`).

        Args:
            body_force: a force per unit volume, as :meth:`add_body_force` takes it.
            traction: a traction, as :meth:`add_traction` takes it (with ``where`` or ``facets``).
            where: a predicate ``x -> bool array`` on facet midpoints (x of shape (3, n)), or None.
            facets: ``(meshtags, tag)`` of the facets, or None.
            point: the point of a point load (with ``force``).
            force: a point force, as :meth:`add_point_load` takes it.
            local: components in the body frame (False: global components).
        """
        given = [x is not None for x in (body_force, traction, point)]
        if sum(given) != 1:
            raise ValueError("apply_load: give exactly one of body_force=, traction= or point=")
        if body_force is not None:
            self.add_body_force(body_force, local=local)
        elif traction is not None:
            self.add_traction(traction, facets=facets, where=where, local=local)
        else:
            if force is None:
                raise ValueError("apply_load: a point load needs force=")
            assert point is not None  # (exactly one of the three is given)
            self.add_point_load(point, force, local=local)

    def locate_node(self, p: np.ndarray, tol: float = 1e-8) -> int | None:
        """Local index of the owned dof node at point ``p`` (None on ranks that do not own it).

        Args:
            p: the point (local coordinates, m).
            tol: the largest distance to a node, relative to the mesh size.

        Returns:
            The local node index, or None on the other ranks.

        Raises:
            ValueError: on every rank, if no node lies within ``tol`` x mesh extent of ``p``.
        """
        return locate_node(self.V, p, tol, self.name)

    def extent(self) -> float:
        """Diameter of the body's bounding box (m)."""
        return diameter(self.mesh)

    # -- forms (all built from dolfinx_mbs.forms) -------------------------------------------
    def trial_test(self) -> Tuple[ufl.Argument, ufl.Argument]:
        """The trial and test functions of the body's space ``V``, for its forms."""
        return ufl.TrialFunction(self.V), ufl.TestFunction(self.V)

    def bilinear_forms(self) -> BilinearForms:
        """UFL bilinear forms: ``mass``, ``stiffness`` and ``coupling`` (int rho (W u).v, from which
        the gyroscopic, spin-softening and angular-acceleration matrices are formed)."""
        u, v = self.trial_test()
        r = self.rho
        mass, stiffness = F.mass(r, u, v), F.stiffness(self.material, u, v)
        coupling = F.inertia_coupling(r, self.W, u, v)
        extra = self.user_forms.total("mass", False)
        if extra is not None:
            mass = mass + extra
        extra = self.user_forms.total("stiffness", False)
        if extra is not None:
            stiffness = stiffness + extra
        pad = self.sparsity_padding()
        if pad is not None:
            mass, stiffness, coupling = mass + pad, stiffness + pad, coupling + pad
        return BilinearForms(mass=mass, stiffness=stiffness, coupling=coupling)

    def frame_load_form(self) -> ufl.Form:
        """q_omega + q_alpha + q_O: the load of the frame's motion on the undeformed body."""
        v = ufl.TestFunction(self.V)
        return F.frame_inertia_load(self.rho, self.omega, self.alpha, self.a_O, self.X, v)

    def gravity_form(self) -> ufl.Form:
        """Gravity, fixed in the global frame (its local components turn with the frame)."""
        return F.gravity_load(self.rho, self.gravity_local, ufl.TestFunction(self.V))

    def external_load_form(self, varying: bool = True) -> ufl.Form | None:
        """Body forces, tractions and the user's constant load forms, or None when the body has
        none (point loads are added to the assembled vector separately); with ``varying=False``
        without the loads of :meth:`varying_loads`.

        Args:
            varying: include the loads of :meth:`varying_loads`.

        Returns:
            The linear form, or None.
        """
        return self.loads.form(ufl.TestFunction(self.V), self.material.thickness,
                               self.user_forms.total("load", False), varying=varying)

    def varying_loads(self) -> list:
        """The body forces and tractions that change in time (a function of t, or given in
        global components, which turn with the frame): (load, measure) pairs, the load entering
        as thickness * load.const . v over the measure (``ufl.dx`` or a ``ds``)."""
        return self.loads.varying()

    @property
    def loads_vary(self) -> bool:
        """True when a body force or traction changes in time (:meth:`varying_loads`)."""
        return bool(self.loads.varying())

    def applied_load_form(self) -> ufl.Form:
        """Gravity, body forces and tractions (point loads are added separately)."""
        ext = self.external_load_form()
        return self.gravity_form() + ext if ext is not None else self.gravity_form()

    def load_form(self) -> ufl.Form:
        """Every load of the second-order form: frame inertia plus the applied loads."""
        return self.frame_load_form() + self.applied_load_form()

    def momentum_forms(self) -> MomentumForms:
        """Hamilton's form (docs/theory.md section 4): ``momentum_offset`` pi_0 and
        ``momentum_load`` h, which replace the frame inertia load of the second-order form."""
        v = ufl.TestFunction(self.V)
        return MomentumForms(
            momentum_offset=F.momentum_offset(self.rho, self.omega, self.v_O, self.X, v),
            momentum_load=F.momentum_load(self.rho, self.omega, self.v_O, self.X, v))

    def rename(self, name: str) -> None:
        """Give the body the name ``name`` (in output and messages from now on).

        Args:
            name: the new name.
        """
        self.name = self.loads.name = self.user_forms.name = name

    def add_point_loads(self, b: PETSc.Vec, state: FrameState) -> None:
        """Add the point loads at ``state`` to the assembled (owned part of the) vector ``b``.

        Args:
            b: the assembled load vector.
            state: the frame state.
        """
        self.loads.add_points(b, state, self.comm)

    def __repr__(self) -> str:
        return f"Body({self.name!r}, {self.material!r}, {self.frame!r}, degree={self.degree})"
