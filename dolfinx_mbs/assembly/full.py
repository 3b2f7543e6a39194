"""The bodies' operators as full PETSc objects at a frame state.

    asm = Assembly(bodies, space)
    M = asm.mass()                  # block-diagonal over the bodies
    K = asm.stiffness(t)            # K + K_omega + K_alpha (+ K_sigma) at the frames' state at t
    Q = asm.load(t)

Every frame-dependent object is asked for with the time ``t`` (and optionally the frame states
to use instead of ``frame.state(t)``, e.g. a Campbell sweep's spin speeds); the bodies'
operators (:class:`dolfinx_mbs.assembly.operators.BodyOperators`) are brought to that state,
reassembling only what changed. A block-diagonal full matrix is formed again only when a body's
matrices changed (their ``version``). The objects returned are kept and refilled by later calls.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Sequence, Tuple

from dolfinx import fem
from petsc4py import PETSc

from dolfinx_mbs import checks
from dolfinx_mbs.assembly.bearing_links import BearingLinks
from dolfinx_mbs.assembly.operators import BodyOperators, combine
from dolfinx_mbs.assembly.space import FullSpace
from dolfinx_mbs.frames.base import FrameState
from dolfinx_mbs.records import Record

if TYPE_CHECKING:
    from dolfinx_mbs.bodies.attachments import Bearing
    from dolfinx_mbs.bodies.body import Body

__all__ = ["Assembly", "FullHamiltonVectors"]


@dataclasses.dataclass(frozen=True, eq=False)
class FullHamiltonVectors(Record):
    """Hamilton's form's vectors of all bodies as full vectors
    (:meth:`Assembly.hamilton_vectors`; copies, kept), read also by name (``v["pi0"]``).

    Attributes:
        pi0: the momentum offset pi_0.
        h: the momentum load.
        fa: the applied loads (without frame inertia).
    """

    pi0: PETSc.Vec
    h: PETSc.Vec
    fa: PETSc.Vec


def _state_key(body: Body, st: FrameState) -> tuple:
    return (st.t, st.R.tobytes(), st.r_O.tobytes(), st.omega.tobytes(), st.alpha.tobytes(),
            st.v_O.tobytes(), st.a_O.tobytes(), tuple(body.gravity),
            getattr(st, "spin", None), getattr(st, "spin_acceleration", None))


class Assembly:
    """The full (block-diagonal over the bodies) operators and load vectors.

    Args:
        bodies: the bodies, one communicator.
        space: their :class:`~dolfinx_mbs.assembly.space.FullSpace`.
        prestress: called with this object after the bodies' operators are made, and again
            after :meth:`reset_prestress`, until it succeeds (a call that raised is made
            again at the next use, so it raises again or gives the right fields): fills the
            unit prestress fields of bodies with ``stiffening="prestress"`` and returns the
            links between the frames of joined bodies that the fields assume (objects with
            body indices ``i``, ``j`` and ``holds(state_i, state_j)``; see
            :func:`dolfinx_mbs.static.prestress`), checked at every new frame state.
        strategy: the bodies' operators' strategy (:class:`BodyOperators`; default by each
            frame): ``"basis"`` for a model with reduced bodies, whose reduced operators are
            then combinations of constant matrices reduced once, for any frame.
    """

    def __init__(self, bodies: Sequence, space: FullSpace,
                 prestress: Callable[["Assembly"], Sequence | None] | None = None,
                 strategy: str | None = None) -> None:
        self.bodies = list(bodies)
        self.strategy = strategy
        self.space = space
        self.comm = space.comm
        self._prestress = prestress
        self._prestress_done = False
        self._prestress_running = False
        # the links between joined bodies' frames that the unit prestress fields assume
        self._links: list = []
        self._ops: List[BodyOperators] | None = None
        #: the bearings between bodies (None without): blocks across the bodies
        self.bearing_links: BearingLinks | None = None
        self._work: Dict[str, Any] = {}
        # the states the bodies' matrices and load vectors were last brought to
        self._keys: list | None = None
        self._load_keys: list | None = None
        #: changes whenever the operators were brought to another frame state
        self.generation = 0

    # -- the bodies' operators ----------------------------------------------------------------
    @property
    def body_operators(self) -> List[BodyOperators]:
        """One :class:`BodyOperators` per body (made on first use)."""
        if self._ops is None:
            ops = [BodyOperators(b, self.strategy) for b in self.bodies]
            self.bearing_links = BearingLinks.make(ops, self.space, self.states(0.0))
            self._ops = ops
        if not self._prestress_done and not self._prestress_running:
            if self._prestress is not None:
                # done only once it succeeded: a call that raised raises again next time
                # instead of leaving the operators without their geometric stiffness
                self._prestress_running = True   # the solve itself reads the operators
                try:
                    self._links = list(self._prestress(self) or [])
                finally:
                    self._prestress_running = False
                # the geometric stiffness now exists: refill at next state
                self._keys = self._load_keys = None
            self._prestress_done = True
        return self._ops

    def reset_prestress(self) -> None:
        """The constraints changed: the unit prestress fields are solved again on next use."""
        self._prestress_done = False

    def _check_links(self, sts: Sequence[FrameState]) -> None:
        """Raise unless the frame states keep the links the unit prestress fields assume.

        A frame's parameters changed since the solve would make the fields wrong.
        """
        for link in self._links:
            if not link.holds(sts[link.i], sts[link.j]):
                a, b = self.bodies[link.i], self.bodies[link.j]
                raise NotImplementedError(
                    f"prestress stiffening: bodies {a.name!r} and {b.name!r} are joined by "
                    "the constraints and their prestress was solved for frames of one rigid "
                    f"motion, but at t={sts[link.i].t:g} their frame states no longer are "
                    f"(omega {sts[link.i].omega} and {sts[link.j].omega}): did a frame's "
                    "parameters change after the first solve? Joined bodies with prestress "
                    "need frames of equal motion (frames.equal_motion) or element frames")

    @property
    def nonlinear(self) -> bool:
        """True when a body has ``stiffening="nonlinear"`` (St Venant-Kirchhoff strain)."""
        return any(b.u_state is not None for b in self.bodies)

    def states(self, t: float, states: Sequence[FrameState] | None = None
               ) -> List[FrameState]:
        """The frame state of each body at ``t`` (``states`` as given when not None).

        Args:
            t: time (s).
            states: one frame state per body instead of ``frame.state(t)`` (None: the frames'
                states).

        Returns:
            The frame states, one per body.
        """
        if states is not None:
            if len(states) != len(self.bodies):
                raise ValueError(f"states: give one FrameState per body ({len(self.bodies)}), "
                                 f"got {len(states)}")
            return list(states)
        if not any(b.frame.calls_user_code for b in self.bodies):
            return [b.frame.state(t) for b in self.bodies]
        # the user's motion functions (Prescribed, Planar) may fail on some ranks only
        with checks.collective(self.comm, f"the frames' motion at t={t:g}"):
            return [b.frame.state(t) for b in self.bodies]

    def at(self, t: float, states: Sequence[FrameState] | None = None) -> List[BodyOperators]:
        """The bodies' operators brought to the frame states at ``t`` (or ``states``).

        Args:
            t: time (s).
            states: one frame state per body instead of ``frame.state(t)`` (None: the frames'
                states).

        Returns:
            The bodies' operators, one per body.
        """
        ops = self.body_operators
        sts = self.states(t, states)
        keys = [_state_key(b, s) for b, s in zip(self.bodies, sts)]
        mats, loads = keys != self._keys, keys != self._load_keys
        if mats or loads:
            self._check_links(sts)
            for o, s in zip(ops, sts):
                if mats and loads:
                    o.update(s)
                elif mats:
                    o.update_matrices(s)
                else:
                    o.update_load(s)
            if mats and self.bearing_links is not None:
                self.bearing_links.update(sts)
            self._keys = self._load_keys = keys
            self.generation += 1
        return ops

    def loads_at(self, t: float, states: Sequence[FrameState] | None = None
                 ) -> List[BodyOperators]:
        """The bodies' operators with their load vectors (only) brought to the frame states at
        ``t`` (or ``states``): what a reduced system whose matrices are combined elsewhere
        (:mod:`dolfinx_mbs.systems.reduced_basis`) needs of them.

        Args:
            t: time (s).
            states: one frame state per body instead of ``frame.state(t)`` (None: the frames'
                states).

        Returns:
            The bodies' operators, one per body.
        """
        ops = self.body_operators
        sts = self.states(t, states)
        keys = [_state_key(b, s) for b, s in zip(self.bodies, sts)]
        if keys != self._load_keys:
            self._check_links(sts)
            for o, s in zip(ops, sts):
                o.update_load(s)
            self._load_keys = keys
            self.generation += 1
        return ops

    def refresh(self) -> None:
        """Bring the bodies' operators to the frame states again on next use, also at states
        seen before: after a change that the states do not show (a bearing's coefficients)."""
        self._keys = self._load_keys = None
        self.generation += 1

    @contextlib.contextmanager
    def bearings_replaced(self, replace: Callable[[Bearing], Bearing]) -> Iterator[None]:
        """Within the block, every bearing of the bodies (to the ground and between bodies) is
        read as ``replace(bearing)``, a new bearing on the same journal (made once per
        bearing); the bodies' own bearings again after, also after an error. The bearings and
        the bodies are not changed. The journals' maps and the supports (which rigid motions
        the bearings hold) are the bearings' own throughout.

        Args:
            replace: a bearing's replacement.

        Yields:
            Nothing.
        """
        made: Dict[int, Bearing] = {}

        def once(b: Bearing) -> Bearing:
            if id(b) not in made:
                made[id(b)] = replace(b)
            return made[id(b)]

        ops = self.body_operators
        try:
            for o in ops:
                if o.rotor is not None:
                    o.rotor.use_bearings(once)
            if self.bearing_links is not None:
                self.bearing_links.use_bearings(once)
            self.refresh()
            yield
        finally:
            for o in ops:
                if o.rotor is not None:
                    o.rotor.use_bearings(None)
            if self.bearing_links is not None:
                self.bearing_links.use_bearings(None)
            self.refresh()

    def stamp(self) -> tuple:
        """Changes whenever a body's matrices changed (for caches of combined operators)."""
        ops = self.body_operators
        return tuple(o.version for o in ops) + (
            (self.bearing_links.version,) if self.bearing_links is not None else ())

    @property
    def _off(self) -> dict | None:
        """The zero blocks between bodies that reserve the bearings' pattern (or None)."""
        return self.bearing_links.off if self.bearing_links is not None else None

    def _full(self, key: str, per_body: Callable[[BodyOperators, PETSc.Mat | None], PETSc.Mat],
              link: str | None = None) -> PETSc.Mat:
        """A block-diagonal full matrix from a per-body one (plus the bearings between bodies'
        ``link`` part, :meth:`BearingLinks.add`), work objects reused; formed again only when
        a body's matrices or the bearings' coefficients changed."""
        ops_list = self.body_operators
        stamp = self.stamp()
        done = key if not self.space.single else f"{key}/0"
        if self._work.get(f"{key}#stamp") == stamp and done in self._work:
            return self._work[done]
        mats = []
        for i, ops in enumerate(ops_list):
            wk = f"{key}/{i}"
            mats.append(per_body(ops, self._work.get(wk)))
            self._work[wk] = mats[-1]
        self._work[f"{key}#stamp"] = stamp
        if self.space.single:
            return mats[0]
        out = self.space.block_diagonal(mats, self._work.get(key), self._off)
        if link is not None and self.bearing_links is not None:
            self.bearing_links.add(out, link)
        self._work[key] = out
        return out

    def body_block(self, ib: int, X: PETSc.Mat) -> PETSc.Mat:
        """A full matrix with body ``ib``'s matrix ``X`` (its operators' pattern) on the
        diagonal and the other bodies' blocks zero with their patterns (``X`` itself for one
        body): full matrices of one pattern, whatever body they belong to. A new matrix.

        Args:
            ib: the body's index.
            X: the body's matrix (of its operators' pattern).

        Returns:
            The new full matrix.
        """
        if self.space.single:
            return X
        zeros = []
        for i, o in enumerate(self.body_operators):
            if i == ib:
                zeros.append(X)
            else:
                Z = o.K.duplicate()  # the pattern, zero values
                zeros.append(Z)
        out = self.space.block_diagonal(zeros, off=self._off)
        for i, Z in enumerate(zeros):
            if i != ib:
                Z.destroy()
        return out

    @property
    def releasable(self) -> bool:
        """True when every body's matrices can be released (``BodyOperators.releasable``)."""
        return all(o.releasable for o in self.body_operators)

    def release(self, body: Sequence[str] = (), formed: Sequence[str] = ()) -> None:
        """Free full matrices (collective) where a reduced copy holds what they hold: the
        bodies' matrices ``body`` (``BodyOperators.release``) and the full objects formed
        here by the methods ``formed`` (``"mass"``, ``"elastic"``, ``"stiffness"``,
        ``"damping"``, ``"gyroscopic"``). Each is made again, with the same values, when next
        asked for (:attr:`releasable` must hold).

        Args:
            body: names of the bodies' matrices to free (``BodyOperators.release``).
            formed: names of the full objects formed here to free.
        """
        ops = self.body_operators
        work = {"mass": ("M",), "elastic": ("Kel",), "stiffness": ("Keff", "Kw"),
                "damping": ("G", "D", "Dmp"), "gyroscopic": ("Gyro",)}
        drop = {k for n in formed for k in work[n]}
        gone = {id(X) for o in ops for n, X in o.held.items() if n in body}
        kept = {id(X) for o in ops for n, X in o.held.items() if n not in body}
        for k in list(self._work):
            X, base = self._work.get(k), k.split("/")[0].split("#")[0]
            if k in self._work and (base in drop or id(X) in gone):
                if isinstance(X, PETSc.Mat) and id(X) not in kept | gone:
                    X.destroy()
                self._work.pop(k)
                self._work.pop(base + "#stamp", None)
        for o in ops:
            o.release(body)

    # -- matrices -----------------------------------------------------------------------------
    def mass(self) -> PETSc.Mat:
        """M (constant)."""
        return self._full("M", lambda o, w: o.M)

    def elastic(self) -> PETSc.Mat:
        """The elastic stiffness K (constant)."""
        return self._full("Kel", lambda o, w: o.K)

    def stiffness(self, t: float, angular_acceleration: bool = True,
                  states: Sequence[FrameState] | None = None) -> PETSc.Mat:
        """K + K_omega (+ K_alpha) (+ K_sigma with prestress) at ``t``.

        Args:
            t: time (s).
            angular_acceleration: include K_alpha.
            states: one frame state per body instead of ``frame.state(t)`` (None: the frames'
                states).

        Returns:
            The full matrix (kept: refilled by later calls).
        """
        self.at(t, states)
        return self._full("Keff" if angular_acceleration else "Kw",
                          lambda o, w: o.dynamic_stiffness(w, angular_acceleration), "K")

    def damping(self, t: float, gyroscopic: bool = True,
                states: Sequence[FrameState] | None = None) -> PETSc.Mat:
        """G + D (or D alone) at ``t``.

        Args:
            t: time (s).
            gyroscopic: include G (else D alone).
            states: one frame state per body instead of ``frame.state(t)`` (None: the frames'
                states).

        Returns:
            The full matrix (kept: refilled by later calls).
        """
        self.at(t, states)
        return self._full("G" if gyroscopic else "D", lambda o, w: o.damping(w, gyroscopic),
                          "C")

    def gyroscopic(self, t: float, states: Sequence[FrameState] | None = None) -> PETSc.Mat:
        """The Coriolis matrix G at ``t``, without damping.

        Args:
            t: time (s).
            states: one frame state per body instead of ``frame.state(t)`` (None: the frames'
                states).

        Returns:
            The full matrix (kept: refilled by later calls).
        """
        self.at(t, states)
        return self._full("Gyro", lambda o, w: o.matrix("gyroscopic"))

    def rayleigh(self) -> PETSc.Mat | None:
        """Rayleigh damping D = a M + b K of the bodies (None when no body has any)."""
        ops = self.body_operators
        if all(o.D is None for o in ops):
            return None
        return self._full("Dmp", lambda o, w: o.D if o.D is not None
                          else (w if w is not None else o.M.duplicate()))

    def supported(self) -> PETSc.Mat:
        """K plus the bearings' stiffness as supports (constant, the absolute values of their
        direct coefficients at the frame's rate at t = 0): what decides which rigid motions
        are free and what the prestress's unit solves stand on. K itself without bearings."""
        ops = self.body_operators
        if not any(o.rotor is not None and o.rotor.support is not None for o in ops) and \
                self.bearing_links is None:
            return self.elastic()
        return self._full("Ksup", lambda o, w: combine(
            w if w is not None else o.K.duplicate(),
            [(1.0, o.K)] + ([(1.0, o.rotor.support)] if o.rotor is not None and
                            o.rotor.support is not None else [])), "S")

    def structural(self, t: float, states: Sequence[FrameState] | None = None) -> PETSc.Mat:
        """K_s = K (+ K_sigma): the stiffness that is not an inertia coupling, at ``t``.

        Args:
            t: time (s).
            states: one frame state per body instead of ``frame.state(t)`` (None: the frames'
                states).

        Returns:
            The full matrix (kept: refilled by later calls).
        """
        ops = self.at(t, states)
        if not any(o.matrix("geometric") is not None for o in ops):
            return self.elastic()
        return self._full("Ks", lambda o, w: combine(
            w if w is not None else o.K.duplicate(),
            [(1.0, o.K), (1.0, o.matrix("geometric"))]))

    # -- vectors ------------------------------------------------------------------------------
    def create_vec(self, key: str | None = None) -> PETSc.Vec:
        """A full-layout vector; with ``key`` one work vector kept under that name.

        Args:
            key: the name of a kept work vector (None: a new vector).

        Returns:
            The vector.
        """
        if key is None:
            return self.space.create_vec()
        v = self._work.get("vec/" + key)
        if v is None:
            v = self._work["vec/" + key] = self.space.create_vec()
        return v

    def load(self, t: float, states: Sequence[FrameState] | None = None) -> PETSc.Vec:
        """Q: all loads of the second-order form at ``t`` (the body's own vector for one body,
        one kept work vector for several).

        Args:
            t: time (s).
            states: one frame state per body instead of ``frame.state(t)`` (None: the frames'
                states).

        Returns:
            The full load vector.
        """
        ops = self.loads_at(t, states)
        Q = self.space.gather([o.Q for o in ops], self._work.get("Q"))
        if not self.space.single:
            self._work["Q"] = Q
        return Q

    def hamilton_vectors(self, t: float,
                         states: Sequence[FrameState] | None = None) -> FullHamiltonVectors:
        """Hamilton's form's vectors at ``t`` as full vectors (copies, kept): ``pi0`` (the
        momentum offset), ``h`` (the momentum load) and ``fa`` (applied loads).

        Args:
            t: time (s).
            states: one frame state per body instead of ``frame.state(t)`` (None: the frames'
                states).

        Returns:
            The :class:`FullHamiltonVectors` ``pi0``, ``h``, ``fa``.
        """
        sts = self.states(t, states)
        ops = self.loads_at(t, sts)
        vecs = [o.hamilton_vectors(s) for o, s in zip(ops, sts)]
        return FullHamiltonVectors(**{
            k: self.space.gather([v[name] for v in vecs], self.create_vec(k))
            for k, name in (("pi0", "momentum_offset"), ("h", "momentum_load"),
                            ("fa", "applied"))})

    # -- nonlinear strain ---------------------------------------------------------------------
    def _set_state_displacement(self, u: PETSc.Vec) -> None:
        if "nl_tmp" not in self._work:
            self._work["nl_tmp"] = [fem.Function(b.V) for b in self.bodies]
        self.space.scatter(u, [b.u_state if b.u_state is not None else tmp
                               for b, tmp in zip(self.bodies, self._work["nl_tmp"])])

    @contextlib.contextmanager
    def nonlinear_state_kept(self) -> Iterator[None]:
        """Within: :meth:`nonlinear_terms` may be called at any displacements (set-ups that
        polarize the tangent); after: every body's nonlinear displacement state as before."""
        kept = [(b.u_state, b.u_state.x.array.copy()) for b in self.bodies
                if b.u_state is not None]
        try:
            yield
        finally:
            for f, a in kept:
                f.x.array[:] = a

    def nonlinear_terms(self, u: PETSc.Vec, force: bool = True,
                        tangent: bool = True) -> Tuple[PETSc.Vec | None, PETSc.Mat | None]:
        """At the full displacement ``u``: with ``force``, the internal force's excess over
        K u (full vector); with ``tangent``, the tangent stiffness's excess over K
        (block-diagonal); zero blocks for linear bodies, None for what is not asked.

        Args:
            u: the full displacement.
            force: compute the internal force's excess.
            tangent: compute the tangent's excess.

        Returns:
            ``(force, tangent)``, each None when not asked.
        """
        self._set_state_displacement(u)
        ops = self.body_operators
        terms = [o.nonlinear_terms(force, tangent) if o.body.u_state is not None
                 else (None, None) for o in ops]
        N = KN = None
        if force:
            if "nl0" not in self._work:  # zero vectors for the linear bodies, made once
                self._work["nl0"] = [o.Q.duplicate() for o in ops]
                for z in self._work["nl0"]:
                    z.zeroEntries()
            N = self.space.gather([t[0] if t[0] is not None else z
                                   for t, z in zip(terms, self._work["nl0"])],
                                  self._work.get("vec/nl"))
            self._work["vec/nl"] = N
        if tangent:
            if "KN0" not in self._work:  # zero matrices for the linear bodies, made once
                self._work["KN0"] = [o.K.duplicate() for o in ops]
                for Z in self._work["KN0"]:
                    Z.zeroEntries()
                    Z.assemble()
            mats = [t[1] if t[1] is not None else Z for t, Z in zip(terms, self._work["KN0"])]
            KN = self.space.block_diagonal(mats, self._work.get("KN"), self._off)
            if not self.space.single:
                self._work["KN"] = KN
        return N, KN

    def nonlinear_energy(self, u: PETSc.Vec) -> float:
        """The strain energy's excess over 1/2 u.K u at the full displacement ``u``.

        Args:
            u: the full displacement.

        Returns:
            The energy (J), on every rank.
        """
        self._set_state_displacement(u)
        return sum(o.nonlinear_energy() for o in self.body_operators
                   if o.body.u_state is not None)

    # -- constraint forces --------------------------------------------------------------------
    def residual(self, t: float, u: PETSc.Vec, v: PETSc.Vec | None = None,
                 a: PETSc.Vec | None = None, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """F_c = M a + (G + D) v + K_eff u (+ n(u)) - Q at ``t`` (full vectors; v, a None:
        zero): the forces the constraints exert on each dof, body-frame components (N).

        Args:
            t: time (s).
            u: the full displacement.
            v: the full velocity (None: zero).
            a: the full acceleration (None: zero).
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        Q = self.load(t)
        out = out if out is not None else Q.duplicate()
        self.stiffness(t).mult(u, out)
        out.axpy(-1.0, Q)
        if self.nonlinear:
            out.axpy(1.0, self.nonlinear_terms(u, tangent=False)[0])
        if v is not None:
            self.damping(t).multAdd(v, out, out)
        if a is not None:
            self.mass().multAdd(a, out, out)
        return out
