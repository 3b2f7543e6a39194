"""The nonlinear force of fluid-film bearings in a run: the film's force at the journal's
current position and velocity, on the reduced coordinates, with its tangent.

A bearing with a fluid film (``Model.bearing(..., journal=film, load=W)``, a
:class:`dolfinx_mbs.rotors.PlainJournal`) sits in the system's operators as every bearing does,
with its linearization: K_lin and C_lin, the film's coefficients at its equilibrium under W
at the rotor's speed (what the Campbell sweep and the unbalance response take). In a run the
journal feels the film's whole force instead,

    f = F(ubar, ubar', Omega) + W          on the journal's mean motion ubar (across the axis),

ubar the journal centre's position in the bearing's clearance (the rotor's displacement there,
from the concentric position: the rotor is placed concentric in its bearings, and its
displacement carries it to the equilibrium under W, or onto a whirl orbit), W its static load
(the share of the rotor's weight it carries, applied to the journal in the run: the rotor's
own loads should not hold that weight again). The operators' linear part is put back and the
film's force added: the run's residual gains

    -A^T L^T g,   g = F(ubar, ubar') + W + K_lin ubar + C_lin ubar'

and its Jacobian A^T L^T (K_f - K_lin + s (C_f - C_lin)) L A with K_f, C_f the film's exact
linearization at the state and s the scheme's velocity shift; L is the journal's mean motion
(rows x, y). The film is evaluated at every residual the scheme forms (every Newton iterate:
the film's variational inequality solved there, its pressure warm-started from the last
state), replicated on every rank from the journal's motion summed over the ranks, so every
rank holds the same force. What a state's film gave is kept for the Jacobian and the
observers at the same state.

**At the wall.** Newton's iterates may pass a journal through its bearing's wall (eccentricity
ratio 1, where the film has no thickness) on their way to a state inside: beyond
:data:`WALL` the film's force is taken at the radial projection onto that ratio and continued
by a stiff spring (:data:`PENALTY` |W| / c), which only carries the iterates back. A state the
run accepts beyond the wall ends the run with an error naming the bearing (a contact model
is not part of the film); one beyond :data:`WALL` logs a warning (a film thinner than the
mesh resolves).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, List, Mapping, Tuple

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.petsc_options import SUBSET
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from dolfinx_mbs.bodies.attachments import Bearing
    from dolfinx_mbs.systems.records import AssembledSystem

__all__ = ["FilmForces", "FilmPoint", "has_films", "WALL", "PENALTY"]

log = logging.getLogger(__name__)

#: the eccentricity ratio beyond which an iterate's film force is continued by a spring
WALL = 0.995
#: that spring's stiffness in units of |W| / c
PENALTY = 1e3


def has_films(system: Any) -> bool:
    """Whether ``system``'s bodies carry a bearing with a fluid film (any typed system).

    Args:
        system: a typed system (with ``bodies``).

    Returns:
        Whether one bearing has a ``journal``.
    """
    return any(getattr(a, "journal", None) is not None
               for b in getattr(system, "bodies", ()) for a in getattr(b, "attachments", ()))


class FilmPoint:
    """One film bearing of a run: its journal's map and what the film gave at a state.

    Args:
        body: the index of the journal's body.
        bearing: the bearing.
        index: the journal's full global dof indices.
        L: the map of the journal's mean motion across the axis (2 x len(index)).
    """

    def __init__(self, body: int, bearing: Bearing, index: np.ndarray, L: np.ndarray) -> None:
        self.body, self.bearing, self.index, self.L = body, bearing, index, L
        #: the journal's position and velocity (m, m/s), the film's force (N), its K and C
        #: and the bearing's linear part, at the last state evaluated
        self.position = np.zeros(2)
        self.velocity = np.zeros(2)
        self.force = np.zeros(2)
        self.K = self.C = self.K_lin = self.C_lin = np.zeros((2, 2))
        #: the eccentricity ratio at the last state
        self.eccentricity = 0.0
        self._warned = False
        self.units: List[PETSc.Mat] = []   # reduced L_a^T L_c, a, c = x, y


class FilmForces:
    """The fluid-film bearings of a run's system (module docstring). Use :meth:`make`.

    Args:
        system: the run's second-order system.
        points: the film bearings.
    """

    def __init__(self, system: AssembledSystem, points: List[FilmPoint]) -> None:
        self.system = system
        self.points = points
        self.comm: MPI.Comm = system.comm
        self._key: Any = None
        self._u = system.assembly.create_vec("films/u")
        self._v = system.assembly.create_vec("films/v")
        self._g = system.assembly.create_vec("films/g")
        self._r: PETSc.Vec | None = None

    @classmethod
    def make(cls, system: AssembledSystem) -> "FilmForces" | None:
        """The film bearings of ``system``, or None without any.

        Args:
            system: the run's system.

        Returns:
            The films, or None.

        Raises:
            ValueError: a film bearing between two bodies (its journal's force in a run is
                not supported: the linear analyses take it).
        """
        asm = system.assembly
        points = []
        for ib, o in enumerate(asm.body_operators):
            rt = getattr(o, "rotor", None)
            if rt is None:
                continue
            for b in rt.links:
                if getattr(b, "journal", None) is not None:
                    raise ValueError(f"bearing {b.name!r}: a fluid film between two bodies "
                                     "takes the linear analyses (Campbell, unbalance "
                                     "response) only; a run needs its journal on the ground")
            for b in rt.bearings:
                if getattr(b, "journal", None) is None:
                    continue
                jm = rt.maps[id(b)]
                points.append(FilmPoint(ib, b, asm.space.full_of_global(ib, jm.index),
                                        jm.L[:2].copy()))
        return cls(system, points) if points else None

    def speed_of(self, bearing: Bearing, t: float) -> float:
        """The spin speed of ``bearing``'s rotor at ``t`` (rad/s).

        Args:
            bearing: one of the film bearings.
            t: time (s).

        Returns:
            The speed.
        """
        p = next(p for p in self.points if p.bearing is bearing)
        return float(getattr(self.system.bodies[p.body].frame.state(t), "spin", 0.0))

    def evaluate(self, t: float, q: PETSc.Vec, v: PETSc.Vec) -> List[FilmPoint]:
        """The films at the state (q, q') at ``t``: each journal's motion, the film's force
        and its K, C there, and the bearing's linear part (kept for the same state).

        Args:
            t: time (s).
            q: the reduced coordinates.
            v: their rates.

        Returns:
            The film bearings with their state.
        """
        sys = self.system
        sys.reducer.update(t)
        sys.expand(q, out=self._u)
        sys.expand_rate(q, v, out=self._v)
        r0, r1 = self._u.getOwnershipRange()
        u, ud = self._u.getArray(readonly=True), self._v.getArray(readonly=True)
        local = np.zeros((len(self.points), 4))
        for i, p in enumerate(self.points):
            own = (p.index >= r0) & (p.index < r1)
            loc = p.index[own] - r0
            local[i, :2] = p.L[:, own] @ u[loc]
            local[i, 2:] = p.L[:, own] @ ud[loc]
        motion = np.zeros_like(local)
        self.comm.Allreduce(local, motion, op=MPI.SUM)
        key = (float(t), motion.tobytes())   # the same on every rank: a collective decision
        if key == self._key:
            return self.points
        for i, p in enumerate(self.points):
            b = p.bearing
            w = self.speed_of(b, t)
            p.position, p.velocity = motion[i, :2], motion[i, 2:]
            c = float(getattr(b.journal, "clearance", 1.0))
            e = float(np.linalg.norm(p.position)) / c
            if e < WALL:
                st = b.journal.force(p.position, p.velocity, w)
                p.force, p.K, p.C = st.force, st.stiffness, st.damping
            else:   # an iterate at the wall: the projection's force, a spring beyond it
                inside = p.position * (WALL / e)
                st = b.journal.force(inside, p.velocity, w)
                assert b.load is not None  # (a journal's bearing has its static load)
                k = PENALTY * max(float(np.linalg.norm(b.load)), 1.0) / c
                p.force = st.force - k * (p.position - inside)
                p.K, p.C = st.stiffness + k * np.eye(2), st.damping
            p.eccentricity = e
            Kb, Cb = b.matrices(w)
            p.K_lin, p.C_lin = Kb[:2, :2], Cb[:2, :2]
        self._key = key
        return self.points

    def accepted(self, t: float) -> None:
        """Check the last state evaluated, one the run accepted (at ``t``): at or past a
        bearing's wall an error, beyond :data:`WALL` a warning (once per bearing).

        Args:
            t: the state's time (s).

        Raises:
            ValueError: a journal at or past its bearing's wall (on every rank).
        """
        for p in self.points:
            b = p.bearing
            if p.eccentricity >= 1.0:
                raise ValueError(
                    f"bearing {b.name!r} ({b.journal!r}): the journal touches the bearing's "
                    f"wall at t={t:g} s (eccentricity ratio {p.eccentricity:.4g} at "
                    f"{p.position.tolist()} m): the film breaks down; a run past this needs a "
                    "contact model, a smaller load, a stiffer rotor or another speed")
            if p.eccentricity > WALL and not p._warned:
                p._warned = True
                log.warning("bearing %r: the journal reached eccentricity ratio %.4f at t=%g s, "
                            "a film thinner than its mesh resolves", b.name, p.eccentricity, t)

    def residual(self, t: float, q: PETSc.Vec, v: PETSc.Vec) -> PETSc.Vec:
        """-A^T L^T g at the state: what the films add to the second-order residual.

        Args:
            t: time (s).
            q: the reduced coordinates.
            v: their rates.

        Returns:
            The reduced vector (reused by the next call).
        """
        points = self.evaluate(t, q, v)
        g = self._g
        g.zeroEntries()
        r0, r1 = g.getOwnershipRange()
        arr = g.getArray()
        for p in points:
            W = p.bearing.load
            assert W is not None  # (a journal's bearing has its static load)
            f = p.force + W + p.K_lin @ p.position + p.C_lin @ p.velocity
            own = (p.index >= r0) & (p.index < r1)
            np.add.at(arr, p.index[own] - r0, -(f @ p.L[:, own]))
        del arr
        self._r = self.system.project(g, self._r)
        return self._r

    def add_tangent(self, J: PETSc.Mat, t: float, q: PETSc.Vec, v: PETSc.Vec,
                    shift: float) -> None:
        """J += A^T L^T (K_f - K_lin + shift (C_f - C_lin)) L A at the state.

        Args:
            J: the reduced Jacobian (its pattern holds the journals' blocks).
            t: time (s).
            q: the reduced coordinates.
            v: their rates.
            shift: the scheme's velocity shift.
        """
        for p in self.evaluate(t, q, v):
            if not p.units:
                self._units(p)
            X = p.K - p.K_lin + shift * (p.C - p.C_lin)
            for k, E in enumerate(p.units):
                c = float(X[k // 2, k % 2])
                if c != 0.0:
                    J.axpy(c, E, structure=SUBSET)

    def _units(self, p: FilmPoint) -> None:
        """The reduced L_a^T L_c of a film's journal (made once)."""
        asm, red = self.system.assembly, self.system.reducer
        o = asm.body_operators[p.body]
        assert o.rotor is not None  # (a body with a bearing has its rotor terms)
        for a in range(2):
            for c in range(2):
                E = o.rotor.unit_block(o, p.bearing, a, c)
                X = asm.body_block(p.body, E)
                p.units.append(red.reduce(X))
                if X is not E:
                    X.destroy()

    def histories(self) -> Mapping[str, Tuple[np.ndarray, ...]]:
        """The last state's (position, velocity, force) by bearing name.

        Returns:
            The values (copies), read-only by bearing name.
        """
        return FrozenMapping({p.bearing.name: (p.position.copy(), p.velocity.copy(),
                                                  p.force.copy()) for p in self.points})

    def destroy(self) -> None:
        """Destroy the reduced unit matrices (collective)."""
        for p in self.points:
            for E in p.units:
                E.destroy()
            p.units = []
