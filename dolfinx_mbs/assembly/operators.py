"""Assembled PETSc operators of a body at a frame state.

The forms are compiled and the matrices created once (all from the same function space, so
they share one sparsity pattern). Mass and stiffness are assembled once.

Every frame-dependent matrix is an inertia coupling c_W(u, v) = int rho (W u).v with a constant
matrix W (``forms.inertia_coupling``), the W of the frame state given by ``forms.frame_coupling``
(gyroscopic 2 skew(omega), spin softening skew(omega)^2, angular acceleration skew(alpha)): the
same W, as numbers, that the direct forms of :mod:`dolfinx_mbs.forms` hold as UFL expressions.
c_W is linear in W, so two strategies give the same matrices:

* ``"assemble"``: set W, assemble c_W into the existing matrix (one mass-type assembly per
  matrix whose W changed). Lean in memory; the default for time-invariant frames.
* ``"basis"``: assemble c_W once for each basis matrix of W (3 skew + 6 symmetric in 3D,
  1 + 3 in 2D), then form any frame matrix as a linear combination (PETSc MatAXPY on the shared
  pattern, zero coefficients skipped). 22 to 56 times faster per new frame state (measured in
  bench/results/frame_update.md, 1e4 to 1e6 dofs), at the cost
  of d^2 extra matrices; the default for time-varying frames.

Nothing is recompiled and no sparsity is rebuilt when the frame state changes. The load vector
is a :class:`dolfinx_mbs.assembly.body_loads.BodyLoads` (with ``"basis"``, its frame part a
combination of unit loads too); :meth:`BodyOperators.update_matrices` and
:meth:`BodyOperators.update_load` bring either part alone to a state.
"""

from __future__ import annotations

import time
from typing import Callable, Dict, List, Tuple, cast

import numpy as np
from dolfinx import fem
from petsc4py import PETSc

from dolfinx_mbs import compat
from dolfinx_mbs import forms as F
from dolfinx_mbs.assembly.body_loads import BodyLoads, HamiltonVectors, assembled, exact_unit_loads
from dolfinx_mbs.assembly.operator_memory import (
    ReleasableMatrices,
    assemble_into,
    combine,
    create_filled,
)
from dolfinx_mbs.assembly.rotor_terms import RotorTerms
from dolfinx_mbs.assembly.strain_points import StrainPoints
from dolfinx_mbs.bodies.body import Body
from dolfinx_mbs.forms.moving_frame import FrameCoupling
from dolfinx_mbs.frames.base import FrameState, skew

__all__ = ["BodyOperators", "combine", "coupling_basis"]



def coupling_basis(gdim: int) -> List[Tuple[Callable[[np.ndarray], float], np.ndarray]]:
    """A basis of gdim x gdim matrices (as 3x3), each with the functional giving its
    coefficient in a 3x3 W: the skew ones first (3 in 3D, 1 in 2D), then the symmetric ones.

    Args:
        gdim: the body's geometric dimension (2 or 3).

    Returns:
        ``[(functional, matrix), ...]``.
    """
    out: list = []
    if gdim == 3:
        for k in range(3):
            e = np.zeros(3)
            e[k] = 1.0
            i, j = [(2, 1), (0, 2), (1, 0)][k]
            out.append((lambda W, i=i, j=j: 0.5 * (W[i, j] - W[j, i]), skew(e)))
    else:
        out.append((lambda W: 0.5 * (W[1, 0] - W[0, 1]), skew((0.0, 0.0, 1.0))))
    for i in range(gdim):
        for j in range(i, gdim):
            E = np.zeros((3, 3))
            E[i, j] = E[j, i] = 1.0
            out.append((lambda W, i=i, j=j: 0.5 * (W[i, j] + W[j, i]), E))
    return out


class BodyOperators(ReleasableMatrices):
    """PETSc matrices and load vector of one body, kept up to date with its frame state.

    Args:
        body: the body.
        strategy: ``"assemble"`` or ``"basis"`` (see the module docstring); default by the
            frame: ``"assemble"`` for time-invariant frames, ``"basis"`` otherwise.

    Attributes:
        Q: load vector (frame inertia, gravity, body, traction and point loads); owned values
            complete (ghost contributions summed).
        timings: seconds: ``compile`` (form compilation), ``first_assembly`` (creating the
            matrices, assembling mass, stiffness and any basis), and for the last
            :meth:`update` ``update_matrices`` and ``update_load``.
    """

    def __init__(self, body: Body, strategy: str | None = None) -> None:
        #: the stationary frame's spin terms and the bearings and disks (None without)
        self.rotor = RotorTerms.make(body)
        if strategy is None:  # a stationary frame's W are zero: no basis to combine
            strategy = "assemble" if body.frame.time_invariant or (
                self.rotor is not None and self.rotor.stationary) else "basis"
        if strategy not in ("assemble", "basis"):
            raise ValueError(f"strategy must be 'assemble' or 'basis', got {strategy!r}")
        self.body = body
        self.strategy = strategy
        body.assembled = True
        t0 = time.perf_counter()
        bilinear = body.bilinear_forms()
        self.forms = {k: compat.form(a) for k, a in bilinear.items()}
        #: the bilinear forms' UFL signatures (their compilation computed them)
        self.signatures = {k: a.signature() for k, a in bilinear.items()}
        # load vectors in parts, each re-assembled only when what it depends on changes
        t1 = time.perf_counter()
        self._mats: Dict[str, PETSc.Mat] = {
            k: self._filled(self.forms[k]) for k in ("mass", "stiffness")}
        self._released: set = set()  # matrices destroyed by release(), made again on use
        body.W.value = np.zeros((3, 3))
        # the gyroscopic matrix is created with the form's whole pattern and lends it to the
        # others; the angular-acceleration matrix only once an alpha != 0 appears (memory)
        self._mats["gyroscopic"] = self._filled(self.forms["coupling"])
        self._mats["spin_softening"] = self._mats["gyroscopic"].duplicate()
        self._mats["angular_acceleration"] = None
        self._basis: List[Tuple[Callable, PETSc.Mat]] = []
        if strategy == "basis":
            for coeff, E in coupling_basis(body.gdim):
                B = self._mats["gyroscopic"].duplicate()
                body.W.value = E
                assemble_into(B, self.forms["coupling"])
                self._basis.append((coeff, B))
        # the user's forms assembled on their own (body.add_form): constant damping once,
        # the forms with an update at every new frame state; K's sparsity (padded if needed)
        self._user: Dict[str, list] = {}
        for k, a in body.user_operator_forms().items():
            if a is None:
                continue
            f = compat.form(a)
            if k == "load_varying":
                self._user[k] = [f, None]
                continue
            self._user[k] = [f, self.K.duplicate()]
            if k == "damping":
                assemble_into(self._user[k][1], f)
        exact = strategy == "basis" and self.rotor is None and exact_unit_loads(body)
        self.loads = BodyLoads(body, [(c, E) for c, E in coupling_basis(body.gdim)]
                               if strategy == "basis" else None,
                               self._user.get("load_varying", [None])[0],
                               (self._mats["mass"], [B for _, B in self._basis])
                               if exact else None)
        t2 = time.perf_counter()
        self._keys: Dict[str, tuple | None] = {}
        #: incremented whenever a matrix changes (operators combined from them can be reused
        #: while it stays)
        self.version = 0
        self.timings = {"compile": t1 - t0, "first_assembly": t2 - t1}
        self._D: PETSc.Mat | None = None
        self._prestress: List[Tuple[tuple, PETSc.Mat]] = []
        # the unit load forms of the prestress cases
        self._pforms: Dict[str, fem.Form | None] | None = None
        # the geometric stiffness form of a prestress field, compiled once: the field it
        # reads and the form (each case's field copied into it before its assembly)
        self._geo: Tuple[fem.Function, fem.Form] | None = None
        self._nl: dict | None = None
        self._points: StrainPoints | None = None
        self._coupling: Tuple[FrameState | None, FrameCoupling | None] = (None, None)
        if self.rotor is not None:
            self.rotor.setup(self)

    def made(self, name: str) -> PETSc.Mat:
        """The coupling matrix ``name`` (``"angular_acceleration"``), made of the gyroscopic
        matrix's pattern when it is not yet (the rotor terms' spin acceleration).

        Args:
            name: the matrix's name.

        Returns:
            The matrix.
        """
        X = self.matrix(name)
        if X is None:
            gyroscopic = self.matrix("gyroscopic")
            assert gyroscopic is not None  # (the pattern of every coupling matrix)
            X = self._mats[name] = gyroscopic.duplicate()
        return X

    def _filled(self, form: fem.Form) -> PETSc.Mat:
        """The form's matrix, its pattern widened by the journal blocks of the rotor terms."""
        A = create_filled(form)
        return self.rotor.created(A, form) if self.rotor is not None else A

    # -- prestress (geometric stiffening) -------------------------------------------------
    def _prestress_forms(self) -> dict:
        if self._pforms is None:
            self._pforms = {k: compat.form(a) if a is not None else None
                            for k, a in self.body.prestress_load_forms().items()}
        return self._pforms

    def unit_prestress_load(self, case: tuple) -> PETSc.Vec:
        """The assembled load of prestress case ``case`` (see ``Body.prestress_cases``; owned
        values complete).

        Args:
            case: a unit case of ``Body.prestress_cases``.

        Returns:
            The load vector.
        """
        body = self.body
        forms = self._prestress_forms()
        if case[0] == "g":
            g = np.zeros(3)
            g[case[1]] = 1.0
            body.g_unit.value = g
            form = forms["gravity"]
        elif case[0] == "applied":
            form = forms["applied"]
        else:
            body.W_load.value = F.unit_spin_cases(body.gdim)[case]
            form = forms["centrifugal"]
        b = compat.create_vector(forms["centrifugal"])
        if form is not None:
            assembled(b, form)
        else:
            b.zeroEntries()
        if case[0] == "applied":
            body.add_steady_point_loads(b)
        return b

    def set_prestress(self) -> None:
        """Assemble the geometric stiffness of each unit prestress field (the body's
        ``prestress_fields`` must hold the unit solutions); K_sigma is formed from them at
        every new frame state. Called again after new solves (the constraints changed): the
        form (one for all the cases: each case's field copied into the field it reads, ghosts
        included) and the matrices of cases kept are reused."""
        held = dict(self._prestress)
        self._prestress = []
        for case, field in self.body.prestress_fields.items():
            if self._geo is None:
                work = fem.Function(field.function_space)
                self._geo = (work, compat.form(self.body.prestress_stiffness_form(work)))
            work, form = self._geo
            work.x.array[:] = field.x.array
            A = held.pop(case, None)
            A = A if A is not None else self.K.duplicate()
            assemble_into(A, form)
            self._prestress.append((case, A))
        if self._mats.get("geometric") is None:
            self._mats["geometric"] = self.K.duplicate()
        self._keys.pop("geometric", None)  # formed at the next update(state)
        self.version += 1

    def _update_geometric(self, state: FrameState) -> None:
        coeffs = [(self.body.prestress_coefficient(case, state), A)
                  for case, A in self._prestress]
        key = tuple(c for c, _ in coeffs)
        if key != self._keys.get("geometric"):
            combine(self._mats["geometric"], coeffs)
            self._keys["geometric"] = key
            self.version += 1

    # -- nonlinear strain ---------------------------------------------------------------
    def nonlinear_terms(self, force: bool = True, tangent: bool = True
                        ) -> Tuple[PETSc.Vec | None, PETSc.Mat | None]:
        """At the body's ``u_state``: with ``force``, the internal force's excess over K u
        (owned values complete); with ``tangent``, the tangent stiffness's excess over K (K's
        sparsity); None for what is not asked. Each form compiled and its object created on
        its first use, then refilled.

        Args:
            force: compute the internal force's excess.
            tangent: compute the tangent's excess.

        Returns:
            ``(force, tangent)``, each None when not asked.
        """
        b = A = None
        if force:
            f = self._nl_form("force")
            nl = self._nl_objects()
            if "vec" not in nl:
                nl["vec"] = compat.create_vector(f)
            b = assembled(nl["vec"], f)
        if tangent:
            a = self._nl_form("tangent")
            nl = self._nl_objects()
            if "mat" not in nl:
                nl["mat"] = self.K.duplicate()
            A = nl["mat"]
            assemble_into(A, a)
        return b, A

    def strain_points(self) -> StrainPoints:
        """The nonlinear strain's terms at the quadrature points (``assembly.strain_points``:
        the reduction's modal derivatives and the dense path's tensors), made once."""
        if self._points is None:
            self._points = StrainPoints(self.body, self.body.comm,
                                        key=self.signatures["stiffness"])
        return self._points

    def _nl_objects(self) -> dict:
        """The nonlinear strain's UFL forms, compiled forms and objects (each made on its
        first use)."""
        if self._nl is None:
            self._nl = {"ufl": {}, "forms": {}}
        return self._nl

    def _nl_form(self, key: str) -> fem.Form:
        """The nonlinear strain's form ``key`` (force, tangent, energy), made and compiled
        once (the tangent from the force's UFL form)."""
        nl = self._nl_objects()
        if key not in nl["forms"]:
            made = nl["ufl"]
            if key == "tangent" and "force" not in made:
                made["force"] = self.body.nonlinear_form("force")
            if key not in made:
                made[key] = self.body.nonlinear_form(key, made.get("force"))
            nl["forms"][key] = compat.form(made[key])
        return nl["forms"][key]

    def nonlinear_energy(self) -> float:
        """The strain energy's excess over 1/2 u.K u at ``u_state`` (summed over ranks)."""
        local = fem.assemble_scalar(self._nl_form("energy"))
        return cast(float, self.body.comm.allreduce(local))

    def coupling_matrix(self, W: np.ndarray, out: PETSc.Mat | None = None) -> PETSc.Mat:
        """The matrix of int rho (W u).v for a 3x3 ``W`` (into ``out`` if given).

        Args:
            W: a 3x3 matrix.
            out: the matrix to fill (new if None).

        Returns:
            The matrix.
        """
        W = np.asarray(W, dtype=float)
        if out is None:
            gyroscopic = self.matrix("gyroscopic")
            assert gyroscopic is not None  # (the pattern of every coupling matrix)
            out = gyroscopic.duplicate()
        if self.strategy == "basis":
            return combine(out, [(coeff(W), B) for coeff, B in self._basis])
        if not np.any(W):
            out.zeroEntries()
            out.assemble()
            return out
        self.body.W.value = W
        assemble_into(out, self.forms["coupling"])
        return out

    @property
    def Q(self) -> PETSc.Vec:
        """The load vector at the last state.

        Returns:
            The :class:`~dolfinx_mbs.assembly.body_loads.BodyLoads` vector Q.
        """
        return self.loads.Q

    @property
    def coupling_matrices(self) -> List[Tuple[Callable, PETSc.Mat]]:
        """The ``"basis"`` strategy's (coefficient functional, c_E matrix) pairs: every
        frame-coupling matrix c_W is the sum of coeff(W) c_E (empty for ``"assemble"``)."""
        return self._basis

    @property
    def prestress_matrices(self) -> List[Tuple[tuple, PETSc.Mat]]:
        """(unit prestress case, its geometric stiffness): K_sigma at a state is their sum
        weighted by ``Body.prestress_coefficient`` (empty without prestress)."""
        return self._prestress

    @property
    def varying_user_matrices(self) -> bool:
        """True when the user's stiffness or damping forms have an update (assembled again at
        every new frame state, so not a combination of constant matrices)."""
        return "stiffness_varying" in self._user or "damping_varying" in self._user or (
            self.rotor is not None and self.rotor.varies)

    def coupling(self, state: FrameState) -> FrameCoupling:
        """``forms.frame_coupling`` of ``state`` (omega, alpha), computed once per state
        object: the matrices, the load and the reduced operators of one state share it.

        Args:
            state: the frame state.

        Returns:
            ``forms.frame_coupling``'s matrices (numpy arrays).
        """
        W = self._coupling[1]
        if self._coupling[0] is not state or W is None:
            W = F.frame_coupling(state.omega, state.alpha)
            self._coupling = (state, W)
        return W

    def update(self, state: FrameState) -> None:
        """Bring the frame-dependent matrices and Q to ``state``.

        Args:
            state: the frame state.
        """
        self.body.set_state(state)
        self._update_matrices(state)
        self._update_load(state)

    def update_matrices(self, state: FrameState) -> None:
        """Bring the frame-dependent matrices (not Q) to ``state``.

        Args:
            state: the frame state.
        """
        self.body.set_state(state)
        self._update_matrices(state)

    def update_load(self, state: FrameState) -> None:
        """Bring Q (not the matrices) to ``state``.

        Args:
            state: the frame state.
        """
        self.body.set_state(state)
        self._update_load(state)

    def _update_matrices(self, state: FrameState) -> None:
        t0 = time.perf_counter()
        for name, W in self.coupling(state).items():
            key = tuple(W.ravel())
            if key != self._keys.get(name):
                if self._mats[name] is None and name not in self._released:
                    if not np.any(W):
                        continue
                    gyroscopic = self.matrix("gyroscopic")
                    assert gyroscopic is not None  # (the pattern of every coupling matrix)
                    self._mats[name] = gyroscopic.duplicate()
                self.coupling_matrix(W, self.matrix(name))
                self._keys[name] = key
                self.version += 1
        if self._prestress:
            self._update_geometric(state)
        for k in ("stiffness_varying", "damping_varying"):
            if k in self._user:  # the user's update ran in body.set_state
                assemble_into(self._user[k][1], self._user[k][0])
                self.version += 1
        if "damping_varying" in self._user and self._D is not None:
            self._combine_damping()
        if self.rotor is not None and self.rotor.update(self, state):
            self.version += 1
        self.timings["update_matrices"] = time.perf_counter() - t0

    def _update_load(self, state: FrameState) -> None:
        t0 = time.perf_counter()
        self.loads.update(state, self.coupling(state))
        if self.rotor is not None:
            self.rotor.add_loads(self.loads.Q, state)
        self.timings["update_load"] = time.perf_counter() - t0

    def hamilton_vectors(self, state: FrameState) -> HamiltonVectors:
        """Vectors of Hamilton's form at ``state``: ``applied`` (loads without frame inertia,
        point loads included), ``momentum_offset`` (pi_0) and ``momentum_load`` (h).

        Args:
            state: the frame state.

        Returns:
            The :class:`~dolfinx_mbs.assembly.body_loads.HamiltonVectors`.

        Raises:
            NotImplementedError: a body in a stationary frame (its momenta are not the
                moving frame's: use the second-order formulation).
        """
        if self.rotor is not None and self.rotor.stationary:
            raise NotImplementedError(
                f"body {self.body.name!r} is in a frames.Stationary frame: Hamilton's form of "
                "the stationary frame is not implemented; integrate with formulation="
                "'second-order' or 'first-order'")
        return self.loads.hamilton_vectors(state, self.coupling(state))

    @property
    def D(self) -> PETSc.Mat | None:
        """The damping matrix: Rayleigh's a M + b K plus the user's damping forms, or None when
        the body has neither."""
        a, b = self.body.material.rayleigh
        if a == 0.0 and b == 0.0 and not self.body.user_forms["damping"]:
            return None
        if self._D is None:
            self._D = self.M.duplicate()
            self._combine_damping()
        return self._D

    def _combine_damping(self) -> None:
        a, b = self.body.material.rayleigh
        combine(self._D, [(a, self.M), (b, self.K)]
                + [(1.0, self._user[k][1]) for k in ("damping", "damping_varying")
                   if k in self._user])

    def dynamic_stiffness(self, out: PETSc.Mat | None = None,
                          angular_acceleration: bool = True) -> PETSc.Mat:
        """K + K_omega (+ K_alpha) (+ K_sigma with prestress stiffening): the stiffness of the
        equations of motion at the state.

        Args:
            out: the matrix to fill (new if None).
            angular_acceleration: include K_alpha.

        Returns:
            The matrix.
        """
        out = out if out is not None else self.K.duplicate()
        terms = [(1.0, self.K), (1.0, self.matrix("spin_softening")),
                 (1.0, self.matrix("geometric"))]
        if "stiffness_varying" in self._user:
            terms.append((1.0, self._user["stiffness_varying"][1]))
        if self.rotor is not None and self.rotor.Kb is not None:
            terms.append((1.0, self.rotor.Kb))
        if angular_acceleration:
            terms.append((1.0, self.matrix("angular_acceleration")))
        return combine(out, terms)

    def damping(self, out: PETSc.Mat | None = None, gyroscopic: bool = True) -> PETSc.Mat:
        """G (+ D): the velocity operator of the equations of motion at the state (without
        damping, the gyroscopic matrix itself, not a copy).

        Args:
            out: the matrix to fill (new if None).
            gyroscopic: include G (else D alone).

        Returns:
            The matrix.
        """
        G = self.matrix("gyroscopic")
        Cb = self.rotor.Cb if self.rotor is not None else None
        if self.D is None and Cb is None and gyroscopic:
            return G
        if out is None or out is G:
            out = self.K.duplicate()
        terms = [(1.0 if gyroscopic else 0.0, G)]
        if self.D is not None:
            terms.append((1.0, self.D))
        if Cb is not None:
            terms.append((1.0, Cb))
        return combine(out, terms)
