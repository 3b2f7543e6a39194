"""Small systems whose frames change in time, stepped in dense form for a whole run at once.

Where the reduced operators are combinations of constant matrices
(:class:`~dolfinx_mbs.systems.reduced_basis.ReducedBasis`: basis A constant, the frames' terms
through the coupling basis, the unit spin cases and the unit prestress cases), every
ingredient is gathered ONCE as a dense array, and the loads are combinations of the unit loads
of :class:`~dolfinx_mbs.assembly.body_loads.BodyLoads` projected once (the frame's inertia, and
gravity
through R^T g) plus a constant rest (the other loads). :class:`VaryingOperators` then gives the
operators at any number of times as coefficient arrays times these stacks: the frames' states
at all the times in one call (``Frame.states``), no PETSc object per time. The coefficients
come from the functions the assembly uses: the W of ``forms.frame_coupling`` (linear in omega
for the gyroscopic W, in alpha for the angular one: taken at unit vectors), the coupling
basis' functionals (``ReducedBasis.coupling_rows``), omega_i omega_j of the unit spin cases
and ``Body.prestress_coefficient``. The decomposition of the loads is checked against the
system's own vectors at a few times; where it does not hold (loads that change in time other
than through the frame and gravity, prescribed motion) the vectors are taken from
``system.at(t)`` at every time instead (matrices still from the stacks).

The schemes step on them a whole run at once in :mod:`dolfinx_mbs.integrate.dense.batch`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Mapping, Sequence, Tuple

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.forms.moving_frame import frame_coupling
from dolfinx_mbs.frames.base import FrameStates
from dolfinx_mbs.integrate.dense.operators import (
    ENERGY_FIELDS,
    STEP_FIELDS,
    VECTORS,
    Ops,
    gather_matrix,
    gather_vector,
)
from dolfinx_mbs.records import FrozenMapping
from dolfinx_mbs.systems.records import constant_frame

if TYPE_CHECKING:
    from petsc4py import PETSc

    from dolfinx_mbs.assembly.operators import BodyOperators
    from dolfinx_mbs.frames.base import Frame
    from dolfinx_mbs.systems.reduced_basis import ReducedBasis
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["applies", "loads_steady", "VaryingOperators"]

#: the loads' combination is taken when it reproduces the system's vectors to this (relative)
LOAD_TOL = 1e-9


def applies(system: SecondOrderSystem) -> bool:
    """Whether the varying dense path takes ``system``.

    Args:
        system: the run's typed system.

    Returns:
        True when ``system``'s operators change in time as combinations of constant reduced
        matrices (:meth:`~dolfinx_mbs.systems.SecondOrderSystem.reduced_basis`), linear
        strain.
    """
    return (not constant_frame(system) and not system.nonlinear and
            hasattr(system, "reduced_basis") and system.reduced_basis() is not None)


def loads_steady(system: SecondOrderSystem) -> bool:
    """Whether only the frames and gravity make ``system``'s loads change in time.

    What ``stepper="auto"`` asks before the varying dense path (point loads of t are found by
    :meth:`VaryingOperators.check_loads` only, and then taken from the system at each time).

    Args:
        system: the run's typed system.

    Returns:
        True when nothing but the frames and gravity makes the loads change in time as far as
        the bodies tell (no body force or traction of t or in global components, no user's
        form with an update, no prescribed motion).
    """
    return not (system.reducer.prescribed or
                any(b.loads_vary or b.user_forms.updates() for b in system.bodies))


def _named_states(frame: Frame, times: np.ndarray, guard: checks.collective) -> FrameStates:
    """``frame.states(times)``, a frame that runs the user's code time by time with the time
    in ``guard``'s words (an error names it, as ``Assembly.states`` does)."""
    if not frame.calls_user_code:
        return frame.states(times)
    out = []
    for t in times:
        guard.what = f"the frames' motion at t={t:g}"
        out.append(frame.state(float(t)))
    return FrameStates.stack(out)


class _Body:
    """What one body contributes: its coefficient maps and reduced unit loads."""

    def __init__(self, ib: int, o: BodyOperators, rb: ReducedBasis,
                 system: SecondOrderSystem) -> None:
        self.ib, self.body = ib, o.body
        self.gdim = o.body.gdim
        coef = rb.coupling_rows[ib]                  # (nE, 9)
        # W_g is linear in omega, W_a in alpha (frame_coupling): their values at unit vectors
        eye = np.eye(3)
        self.G = np.array([coef @ frame_coupling(e)["gyroscopic"].ravel() for e in eye])
        self.A = np.array([coef @ frame_coupling(None, e)["angular_acceleration"].ravel()
                           for e in eye])
        self.spin = list(rb.spin_cases[ib].items())          # ((i, j), W_ij)
        self.Sw = np.array([coef @ W.ravel() for _, W in self.spin])  # (nS, nE)
        spin_keys = {k for k, _ in self.spin}
        self.prestress = [c for c, _ in o.prestress_matrices if c not in spin_keys]
        units = o.loads.unit_loads
        assert units is not None  # (strategy 'basis' keeps the unit loads)
        self.U = np.array([self._reduced(system, b) for _, b in units["spin"]])
        self.Acc = np.array([self._reduced(system, b) for b in units["accel"]])

    def _reduced(self, system: SecondOrderSystem, b: PETSc.Vec) -> np.ndarray:
        """A^T of the body's vector ``b`` placed in the full vector."""
        space = system.space
        full = space.create_vec()
        full.zeroEntries()
        full.array[space.offsets[self.ib]: space.offsets[self.ib + 1]] = \
            b.getArray(readonly=True)[: space.sizes[self.ib]]
        out = gather_vector(system.project(full), system.comm)
        full.destroy()
        return out

    def coefficients(self, st: FrameStates) -> Dict[str, np.ndarray]:
        """The coefficient arrays at the states ``st`` (:class:`FrameStates`): ``gyro``,
        ``angular`` (of the coupling basis), ``spin`` (of the unit spin cases), ``prestress``
        (of the other prestress cases)."""
        om, al = st.omega, st.alpha
        out = {"gyro": om @ self.G, "angular": al @ self.A,
               "spin": np.array([om[:, i] * om[:, j] for (i, j), _ in self.spin]).T}
        if self.prestress:
            out["prestress"] = np.array([[self.body.prestress_coefficient(c, st.at(k))
                                          for c in self.prestress] for k in range(len(st.t))])
        return out

    def loads(self, st: FrameStates, c: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """The body's frame and gravity loads (reduced) at the states ``st`` with the
        coefficients ``c``: ``f``, ``pi0``, ``h``, ``fa`` without the constant rest."""
        g = self.gdim
        ss = c["spin"] @ self.Sw                 # the coefficients of W_omega
        grav = np.einsum("nji,j->ni", st.R, self.body.gravity)[:, :g]
        U, Acc = self.U, self.Acc
        wxv = np.cross(st.omega, st.v_O)[:, :g]
        return {"f": (ss + c["angular"]) @ U + (grav - st.a_O[:, :g]) @ Acc,
                "pi0": -0.5 * c["gyro"] @ U + st.v_O[:, :g] @ Acc,
                "h": -ss @ U + wxv @ Acc, "fa": grav @ Acc}


class VaryingOperators:
    """The dense operators of ``system`` at many times from stacks gathered once (see the
    module docstring); the interface of
    :class:`~dolfinx_mbs.integrate.dense.operators.DenseOperators` (``at``,
    ``mass_inverse``) for the schemes, and :meth:`many` for whole runs.

    Args:
        system: a typed system for which :func:`applies` holds.
        formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
        energy: the energies' matrices too.
        acceleration: C and K too (Hamilton's form).
    """

    def __init__(self, system: SecondOrderSystem, formulation: str, energy: bool = True,
                 acceleration: bool = False) -> None:
        self.system, self.comm, self.formulation = system, system.comm, formulation
        self.fields = STEP_FIELDS[formulation] + (ENERGY_FIELDS if energy else ())
        if acceleration and formulation == "hamiltonian":
            self.fields += ("C", "K")
        self.vectors = VECTORS[formulation]
        rb = system.reduced_basis()
        assert rb is not None  # (the varying operators are the reduced basis')
        self.rb = rb
        self.M = gather_matrix(rb.M, self.comm)
        self.Kel = gather_matrix(rb.Kel, self.comm)
        self.D = None if rb.D is None else gather_matrix(rb.D, self.comm)
        self._minv = np.linalg.inv(self.M)
        self._dense: Dict[tuple, np.ndarray] = {}
        self.bodies = [_Body(ib, o, rb, system) for ib, o in enumerate(rb.ops)]
        #: the constant rest of the loads (``f``, ``fa``), or None: vectors from the system
        self.rest: Dict[str, np.ndarray] | None = None
        self.fit = None
        self._last: Dict[float, Ops] = {}
        self._version = 0
        # the last times' states (their bytes, states)
        self._states: Tuple[bytes | None, List[FrameStates]] = (None, [])

    # -- the frames' states and the loads' check -----------------------------------------
    def states(self, times: Sequence[float] | np.ndarray) -> List[FrameStates]:
        """Each body's frame states at ``times``.

        The user's motion functions run under the collective guard, as ``Assembly.states``;
        a 2D body's frame is checked to stay planar.

        Args:
            times: the times (s).

        Returns:
            Per body, its :class:`~dolfinx_mbs.frames.base.FrameStates`.
        """
        times = np.asarray(times, dtype=float)
        key = times.tobytes()
        if self._states[0] == key:
            return self._states[1]
        bodies = self.system.bodies
        if any(b.frame.calls_user_code for b in bodies):
            with checks.collective(self.comm, "the frames' motion") as guard:
                out = [_named_states(b.frame, times, guard) for b in bodies]
        else:
            out = [b.frame.states(times) for b in bodies]
        for b, st in zip(bodies, out):
            if b.gdim == 2:
                bad = np.flatnonzero(~st.planar())
                if bad.size:
                    b.set_state(st.at(int(bad[0])))  # raises the body's own error
        self._states = (key, out)
        return out

    def check_loads(self, t0: float, t_end: float,
                    outputs: Sequence[float] | None = None) -> bool:
        """Take the loads as combinations of unit loads when they reproduce the system's
        vectors at t0 and three times in (t0, t_end] (the rest, constant, found at t0).

        Args:
            t0: the run's initial time (s).
            t_end: its final time (s).
            outputs: the run's output times, whose frame states are formed first (a frame's
                error names the first time), or None.

        Returns:
            Whether they do.
        """
        if outputs is not None:  # the run's times first: a frame's error names the first
            self.states(outputs)
        times = t0 + (t_end - t0) * np.array([0.0, 0.2718, 0.6180, 1.0])
        actual = [self._system_vectors(t) for t in times]
        pred = self._frame_loads(times)
        rest: Dict[str, np.ndarray] = {k: actual[0][k] - pred[k][0] for k in ("f", "fa")
                                       if k in self.vectors}
        scale = max(max(np.abs(v).max() for v in a.values()) for a in actual) + 1e-300
        ok = True
        for i, a in enumerate(actual):
            for k, v in a.items():
                p = pred[k][i] + rest.get(k, 0.0)
                ok = ok and bool(np.abs(p - v).max() <= LOAD_TOL * scale)
        self.system.forget()
        self.rest = rest if ok else None
        return ok

    def _system_vectors(self, t: float) -> Dict[str, np.ndarray]:
        s = self.system.at(t)
        return {k: gather_vector(getattr(s, k), self.comm) for k in self.vectors}

    def _frame_loads(self, times: np.ndarray, states: List[FrameStates] | None = None,
                     coefs: List[Dict[str, np.ndarray]] | None = None) -> Dict[str, np.ndarray]:
        states = self.states(times) if states is None else states
        out: Dict[str, np.ndarray] = {}
        given: Sequence[Dict[str, np.ndarray] | None] = [None] * len(states)
        if coefs:
            given = coefs
        for bd, st, c in zip(self.bodies, states, given):
            c = bd.coefficients(st) if c is None else c
            for k, v in bd.loads(st, c).items():
                out[k] = out[k] + v if k in out else v
        return out

    # -- operators at many times ----------------------------------------------------------
    def _ingredient(self, key: tuple) -> np.ndarray:
        A = self._dense.get(key)
        if A is None:
            A = self._dense[key] = gather_matrix(self.rb.ingredient(key), self.comm)
        return A

    def _combination(self, N: int, terms: Sequence[Tuple[np.ndarray, tuple]],
                     const: np.ndarray | None) -> np.ndarray:
        """The sum of coefficient arrays (N,) times ingredients, plus ``const`` (n x n or
        None): (N, n, n)."""
        cols = [(c, k) for c, k in terms if np.any(c)]
        n = self.M.shape[0]
        out = np.zeros((N, n, n)) if const is None else np.repeat(const[None], N, axis=0)
        if cols:
            C = np.array([c for c, _ in cols]).T
            S = np.array([self._ingredient(k) for _, k in cols])
            out += np.tensordot(C, S, axes=1)
        return out

    def many(self, times: Sequence[float] | np.ndarray, fields: Sequence[str] | None = None,
             vectors: Sequence[str] | None = None) -> Mapping[str, np.ndarray]:
        """The operators at ``times`` as arrays (N, n, n) and (N, n).

        Args:
            times: the times (s).
            fields: the matrices (default: the formulation's and the energies'; M and K_el
                constant, as (n, n)).
            vectors: the vectors (default: the formulation's).

        Returns:
            The arrays by name (read-only mapping).
        """
        times = np.asarray(times, dtype=float)
        N = len(times)
        fields = self.fields if fields is None else fields
        vectors = self.vectors if vectors is None else vectors
        states = self.states(times)
        coefs = [bd.coefficients(st) for bd, st in zip(self.bodies, states)]
        parts: Dict[str, list] = {"gyro": [], "angular": [], "spin": [], "prestress": []}
        for bd, c in zip(self.bodies, coefs):
            ib = bd.ib
            parts["gyro"] += [(c["gyro"][:, e], ("E", ib, e)) for e in range(bd.G.shape[1])]
            parts["angular"] += [(c["angular"][:, e], ("E", ib, e))
                                 for e in range(bd.A.shape[1])]
            parts["spin"] += [(c["spin"][:, s], ("S", ib, ij))
                              for s, (ij, _) in enumerate(bd.spin)]
            parts["prestress"] += [(c["prestress"][:, p], ("P", ib, case))
                                   for p, case in enumerate(bd.prestress)]
        out: Dict[str, np.ndarray] = {}
        K = Kw = C = Gp = None
        if {"K", "Kpot"} & set(fields):
            K = self._combination(N, parts["spin"] + parts["angular"] + parts["prestress"],
                                  self.Kel)
        if "Kh" in fields:
            Kw = self._combination(N, parts["spin"] + parts["prestress"], self.Kel)
        if {"C", "Gp", "Gq"} & set(fields):
            Gp = self._combination(N, [(0.5 * c, k) for c, k in parts["gyro"]], None)
            C = 2.0 * Gp if self.D is None else 2.0 * Gp + self.D
        for k in fields:
            A = {"M": self.M, "Kel": self.Kel, "K": K, "Kpot": K, "Kh": Kw, "C": C,
                 "Gp": Gp, "Gq": None if Gp is None else
                 (Gp if self.D is None else Gp + self.D)}[k]
            assert A is not None  # (each asked for field is formed above)
            out[k] = A
        if vectors:
            if self.rest is None:
                vecs = [self._system_vectors(t) for t in times]
                out.update({k: np.array([v[k] for v in vecs]) for k in vectors})
            else:
                fl = self._frame_loads(times, states, coefs)
                for k in vectors:
                    out[k] = fl[k] + self.rest[k] if k in self.rest else fl[k]
        return FrozenMapping(out)

    def at(self, t: float) -> Ops:
        """The operators at ``t`` (:class:`~dolfinx_mbs.integrate.dense.operators.Ops`; a new
        ``version`` at
        every time, the last two times kept).

        Args:
            t: the time (s).

        Returns:
            The operators as arrays.
        """
        t = float(t)
        o = self._last.get(t)
        if o is None:
            arrs = self.many([t])
            one = {k: (v[0] if v.ndim == 3 or k in self.vectors else v) for k, v in arrs.items()}
            self._version += 1
            o = Ops(t, self._version, {k: one[k] for k in self.fields},
                    {k: one[k] for k in self.vectors})
            if len(self._last) >= 2:
                self._last.pop(next(iter(self._last)))
            self._last[t] = o
        return o

    def mass_inverse(self) -> np.ndarray:
        """M^-1 (M is constant)."""
        return self._minv

    def constant_frame(self) -> bool:
        """False: the frame state changes in time (what this path is for)."""
        return False
