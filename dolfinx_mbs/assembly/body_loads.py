"""A body's assembled load vector at a frame state, in parts re-assembled only when they change.

Q = q_omega + q_alpha + q_O (the frame's inertia on the undeformed body) + gravity + body
forces, tractions and the user's load forms + point loads. Body forces and tractions that
change in time are combinations of their unit vectors (one per local component, assembled
once) with the values of the step. The frame part is linear in the
frame-coupling W = W_omega + W_alpha (``forms.frame_coupling``) and in a_O: with ``basis=True``
(the operators' ``"basis"`` strategy, for frames whose state changes at every step) it is a
combination of unit loads assembled once, -c_E(X, v) for each basis matrix E of
:func:`dolfinx_mbs.assembly.operators.coupling_basis` and rho e_k.v for each component k, so that
a new frame state costs vector additions instead of an assembly. Otherwise the frame part is
assembled when omega, alpha or a_O changed.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, Dict, Hashable, List, Sequence, Tuple

import numpy as np
import ufl
from dolfinx import fem
from dolfinx.fem import petsc as fpetsc
from petsc4py import PETSc

from dolfinx_mbs import compat
from dolfinx_mbs import forms as F
from dolfinx_mbs.forms.moving_frame import FrameCoupling
from dolfinx_mbs.frames.base import FrameState
from dolfinx_mbs.records import Record

if TYPE_CHECKING:
    from dolfinx_mbs.bodies.body import Body

__all__ = ["BodyLoads", "UnitLoads", "HamiltonVectors", "exact_unit_loads"]


@dataclasses.dataclass(frozen=True, eq=False)
class UnitLoads(Record):
    """A body's unit frame loads (:attr:`BodyLoads.unit_loads`), read also by name.

    Attributes:
        spin: (coefficient functional, -c_E(X, v)) per basis matrix E.
        accel: rho e_k.v per component k (also the unit gravity: the gravity load is their
            combination with R^T g).
    """

    spin: List[Tuple[Callable[[np.ndarray], float], PETSc.Vec]]
    accel: List[PETSc.Vec]


@dataclasses.dataclass(frozen=True, eq=False)
class HamiltonVectors(Record):
    """A body's vectors of Hamilton's form at a frame state
    (:meth:`BodyLoads.hamilton_vectors`; kept and refilled), read also by name.

    Attributes:
        momentum_offset: pi_0.
        momentum_load: h.
        applied: the loads without frame inertia, point loads included.
    """

    momentum_offset: PETSc.Vec
    momentum_load: PETSc.Vec
    applied: PETSc.Vec


def assembled(vec: PETSc.Vec, form: fem.Form) -> PETSc.Vec:
    """``form`` assembled into ``vec`` (zeroed first), owned values complete.

    Args:
        vec: the vector to fill.
        form: the compiled linear form.

    Returns:
        ``vec``.
    """
    with vec.localForm() as vl:
        vl.set(0.0)
    fpetsc.assemble_vector(vec, form)
    vec.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
    return vec


def exact_unit_loads(body: Body) -> bool:
    """Whether the mass matrix and the c_E matrices give the body's unit frame loads exactly
    (:class:`BodyLoads` ``matrices``): rho e_k.v = M t_k and -c_E(X, v) = -c_E X_h hold where
    X and t_k are exact in the space (Lagrange, straight cells) and the rules integrate both
    sides exactly (simplices with affine maps, a constant rho: polynomial integrands), M
    being the density's mass alone (no mass of the user's, attachments or housings).

    Args:
        body: the body.

    Returns:
        Whether they do.
    """
    e = body.V.ufl_element()
    family = getattr(e, "family_name", None) or (e.family() if hasattr(e, "family") else "")
    return (family in ("P", "Lagrange", "CG")
            and compat.cell_type_name(body.mesh) in ("triangle", "tetrahedron")
            and compat.geometry_degree(body.mesh) == 1
            and isinstance(body.rho, (int, float, np.floating))
            and not body.has_user_inertia)


class BodyLoads:
    """The load vector ``Q`` of one body, brought to a frame state by :meth:`update`.

    Args:
        body: the body.
        basis: the coupling basis of the body's operators (a list of (coefficient functional,
            3x3 matrix)), to form the frame part from unit loads; None to assemble it.
        user_load: the compiled user load form with an update (assembled at every new
            state), or None.
        matrices: with ``basis``, the body's mass matrix and its c_E matrices (in the basis'
            order) where they give the unit loads exactly (:func:`exact_unit_loads`), or None
            (the unit loads' forms assembled).
    """

    def __init__(self, body: Body,
                 basis: Sequence[Tuple[Callable[[np.ndarray], float], np.ndarray]] | None = None,
                 user_load: fem.Form | None = None,
                 matrices: Tuple[PETSc.Mat, Sequence[PETSc.Mat]] | None = None) -> None:
        self.body = body
        ext = body.external_load_form(varying=False)
        # [form, vector, key of the last assembly]; with unit loads gravity is their
        # combination (no form of its own)
        self._parts = {
            "external": [compat.form(ext) if ext is not None else None, None, None],
        }
        if user_load is not None:
            self._parts["user"] = [user_load, None, None]
        self._frame = None
        if basis is None:
            self._parts["gravity"] = [compat.form(body.gravity_form()), None, None]
            self._parts["frame"] = [compat.form(body.frame_load_form()), None, None]
        for part in self._parts.values():
            if part[0] is not None:
                part[1] = compat.create_vector(part[0])
        if basis is not None:
            self._frame = self._unit_loads(basis, matrices)
            self.Q = self._frame.accel[0].duplicate()
        else:
            gravity = self._parts["gravity"][1]
            assert gravity is not None  # (made above)
            self.Q = gravity.duplicate()
        self._varying = self._unit_varying()
        self._applied: PETSc.Vec | None = None
        self._momentum: Dict[str, PETSc.Vec] = {}

    @property
    def unit_loads(self) -> UnitLoads | None:
        """The unit frame loads with ``basis`` (None without): ``"spin"``, (coefficient
        functional, -c_E(X, v)) per basis matrix E; ``"accel"``, rho e_k.v per component k
        (also the unit gravity: the gravity load is their combination with R^T g)."""
        return self._frame

    def _unit_loads(self, basis: Sequence[Tuple[Callable[[np.ndarray], float], np.ndarray]],
                    matrices: Tuple[PETSc.Mat, Sequence[PETSc.Mat]] | None = None
                    ) -> UnitLoads:
        """The unit frame loads: -c_E(X, v) per basis matrix E, rho e_k.v per component; with
        ``matrices`` (M, [c_E]) their products with the nodes' positions and the unit
        translations, -c_E X_h and M t_k (no form compiled)."""
        body = self.body
        if matrices is not None:
            M, cE = matrices
            g = body.gdim
            X = compat.space_vector(body.V)
            with X.localForm() as loc:   # the positions at the nodes, owned and ghost
                loc.array[:] = body.V.tabulate_dof_coordinates()[:, :g].reshape(-1)
            spin = []
            for (coeff, _), C in zip(basis, cE):
                b = X.duplicate()
                C.mult(X, b)
                b.scale(-1.0)
                spin.append((coeff, b))
            accel = []
            for k in range(g):
                X.zeroEntries()
                X.array[k::g] = 1.0
                b = X.duplicate()
                M.mult(X, b)
                accel.append(b)
            X.destroy()
            return UnitLoads(spin=spin, accel=accel)
        v = ufl.TestFunction(body.V)
        fc = compat.form(F.centrifugal_unit_load(body.rho, body.W_load, body.X, v))
        fg = compat.form(F.gravity_load(body.rho, body.g_unit, v))
        spin = []
        for coeff, E in basis:
            body.W_load.value = E
            spin.append((coeff, assembled(compat.create_vector(fc), fc)))
        accel = []
        for k in range(body.gdim):
            e = np.zeros(3)
            e[k] = 1.0
            body.g_unit.value = e
            accel.append(assembled(compat.create_vector(fg), fg))
        body.W_load.value = np.zeros((3, 3))
        body.g_unit.value = np.zeros(3)
        return UnitLoads(spin=spin, accel=accel)

    def _unit_varying(self) -> list:
        """(load, [its load vector for each unit local component]) of each body force and
        traction that changes in time: assembled once, so that a new time costs a combination
        of vectors instead of an assembly."""
        body = self.body
        loads = body.varying_loads()
        if not loads:
            return []
        c = fem.Constant(body.mesh, np.zeros(body.gdim, dtype=compat.scalar_type))
        v = ufl.TestFunction(body.V)
        out = []
        for ld, dm in loads:
            form = compat.form(body.material.thickness * ufl.inner(c, v) * dm)
            units = []
            for k in range(body.gdim):
                c.value = np.eye(body.gdim)[k]
                units.append(assembled(self.Q.duplicate(), form))
            out.append((ld, units))
        return out

    def unit_terms(self) -> list | None:
        """The parts of Q that can change in time for a frame whose state in local components
        is constant, as (coefficients at a state, [a unit vector per coefficient], whether the
        coefficients read the frame's rotation): gravity (R^T g, with rho e_k.v), each body
        force and traction that changes in time (its value, with its unit vectors) and each
        point load that does (its value, with a unit entry at its node on the owning rank).
        The rest of Q is then constant. None when the user's load form has an update (not a
        combination of known vectors)."""
        if "user" in self._parts:
            return None
        body, terms = self.body, []
        if np.any(body.gravity):
            if self._frame is not None:
                units = self._frame.accel
            else:
                fg = compat.form(F.gravity_load(body.rho, body.g_unit, ufl.TestFunction(body.V)))
                units = []
                for k in range(body.gdim):
                    body.g_unit.value = np.eye(3)[k]
                    units.append(assembled(self.Q.duplicate(), fg))
                body.g_unit.value = np.zeros(3)
            g, d = np.array(body.gravity, dtype=float), body.gdim
            terms.append((lambda state: (state.R.T @ g)[:d], units, True))
        for ld, units in self._varying:
            terms.append((ld.value, units, not ld.local))
        bs = body.gdim
        for ld, node in body.loads.points:
            if ld.steady:
                continue
            units = []
            for k in range(bs):
                e = self.Q.duplicate()
                e.zeroEntries()
                if node is not None:
                    e.array[node * bs + k] = 1.0
                units.append(e)
            terms.append((ld.value, units, not ld.local))
        return terms

    def _applied_parts(self, alphas: list, vecs: list, user: bool = True,
                       gravity: bool = True) -> None:
        """Append gravity (unless ``gravity`` is False; with unit loads their combination), the
        body forces and tractions (the varying ones as combinations of their unit vectors with
        the values their constants hold) and the user's load (with ``user``, assembled anew:
        it has an update, so every state is new; else as last assembled)."""
        last_user = self._parts["user"][2] if "user" in self._parts else None
        parts = (("gravity", self._gravity_key()),) if gravity and self._frame is None else ()
        if gravity and self._frame is not None:   # rho g_loc . v: the unit loads, no form
            for gk, b in zip(self.body.gravity_local.value, self._frame.accel):
                if gk != 0.0:
                    alphas.append(float(gk))
                    vecs.append(b)
        for name, key in parts + (("external", "constant"),
                                  ("user", object() if user else last_user)):
            vec = self._part(name, key)
            if vec is not None:
                alphas.append(1.0)
                vecs.append(vec)
        for ld, units in self._varying:  # ld.const filled by Body.set_state
            for x, b in zip(ld.const.value, units):
                if x != 0.0:
                    alphas.append(float(x))
                    vecs.append(b)

    def _part(self, name: str, key: Hashable) -> PETSc.Vec | None:
        """The assembled load part ``name`` (owned values complete), re-assembled if ``key``
        differs from the last one."""
        part = self._parts.get(name)
        if part is None or part[0] is None:
            return None
        if key != part[2]:
            assembled(part[1], part[0])
            part[2] = key
        return part[1]

    def _gravity_key(self) -> tuple:
        return tuple(self.body.gravity_local.value)

    def update(self, state: FrameState, W: FrameCoupling | None = None) -> PETSc.Vec:
        """Q at ``state`` (the body's constants already set to it, ``Body.set_state``); ``W``:
        its ``forms.frame_coupling`` if known.

        Args:
            state: the frame state.
            W: the state's ``forms.frame_coupling``, if known (None: computed).

        Returns:
            Q (a vector kept and refilled).
        """
        s = state
        alphas, vecs = [], []
        if self._frame is None:
            alphas.append(1.0)
            vecs.append(self._part("frame", (tuple(s.omega), tuple(s.alpha), tuple(s.a_O))))
        else:
            W = W if W is not None else F.frame_coupling(s.omega, s.alpha)
            Wq = W.spin_softening + W.angular_acceleration
            for coeff, b in self._frame.spin:
                c = coeff(Wq)
                if c != 0.0:
                    alphas.append(c)
                    vecs.append(b)
            for k, b in enumerate(self._frame.accel):  # -rho a_O.v
                if s.a_O[k] != 0.0:
                    alphas.append(-float(s.a_O[k]))
                    vecs.append(b)
        self._applied_parts(alphas, vecs)
        self.Q.zeroEntries()
        if vecs:
            self.Q.maxpy(alphas, vecs)
        self.body.add_point_loads(self.Q, state)
        return self.Q

    def applied_at(self, state: FrameState) -> PETSc.Vec:
        """The applied loads at ``state`` without the frame's inertia (gravity, body forces,
        tractions, the user's loads, point loads; the body's constants already set to it,
        ``Body.set_state``): a vector kept and refilled.

        Args:
            state: the frame state.

        Returns:
            The vector (kept and refilled).
        """
        if self._applied is None:
            self._applied = self.Q.duplicate()
        applied = self._applied
        applied.zeroEntries()
        alphas, vecs = [], []
        self._applied_parts(alphas, vecs, user=True)
        if vecs:
            applied.maxpy(alphas, vecs)
        self.body.add_point_loads(applied, state)
        return applied

    def hamilton_vectors(self, state: FrameState, W: FrameCoupling | None = None
                         ) -> HamiltonVectors:
        """Vectors of Hamilton's form at ``state``: ``applied`` (loads without frame inertia,
        point loads included), ``momentum_offset`` (pi_0) and ``momentum_load`` (h); ``W``:
        the state's ``forms.frame_coupling`` if known. With unit loads (``basis``) pi_0 and h
        are their combinations, pi_0 = rho v_O.v + c_skew(omega)(X, v) and h = rho (omega x
        v_O).v + c_Ww(X, v); otherwise their forms are compiled on first use and assembled
        at each new omega or v_O.

        Args:
            state: the frame state.
            W: the state's ``forms.frame_coupling``, if known (None: computed).

        Returns:
            The :class:`HamiltonVectors`.
        """
        s = state
        if self._applied is None:
            self._applied = self.Q.duplicate()
            if self._frame is None:
                for k, a in self.body.momentum_forms().items():
                    f = compat.form(a)  # a model made again: no FFCx cache lookup
                    self._parts[k] = [f, compat.create_vector(f), None]
            else:
                self._momentum = {k: self.Q.duplicate()
                                  for k in ("momentum_offset", "momentum_load")}
        if self._frame is None:
            mkey = (tuple(s.omega), tuple(s.v_O))
            out = {k: self._part(k, mkey) for k in ("momentum_offset", "momentum_load")}
        else:
            W = W if W is not None else F.frame_coupling(s.omega, s.alpha)
            out = {}
            w, vo = s.omega, s.v_O
            wxv = (w[1] * vo[2] - w[2] * vo[1], w[2] * vo[0] - w[0] * vo[2],
                   w[0] * vo[1] - w[1] * vo[0])  # omega x v_O
            for k, Wk, lin in (("momentum_offset", 0.5 * W["gyroscopic"], vo),
                               ("momentum_load", W["spin_softening"], wxv)):
                alphas, vecs = [], []
                for coeff, b in self._frame.spin:  # c_W(X, v) = -(unit load of W)
                    c = coeff(Wk)
                    if c != 0.0:
                        alphas.append(-c)
                        vecs.append(b)
                for i, b in enumerate(self._frame.accel):
                    if lin[i] != 0.0:
                        alphas.append(float(lin[i]))
                        vecs.append(b)
                out[k] = m = self._momentum[k]
                m.zeroEntries()
                if vecs:
                    m.maxpy(alphas, vecs)
        applied = self._applied
        applied.zeroEntries()
        alphas, vecs = [], []
        self._applied_parts(alphas, vecs, user=False)  # the user's load as update() made it
        if vecs:
            applied.maxpy(alphas, vecs)
        self.body.add_point_loads(applied, s)
        return HamiltonVectors(applied=applied, **out)
