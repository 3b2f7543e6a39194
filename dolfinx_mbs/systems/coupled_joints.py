"""The rows of joints, springs and motors between computed frames in the coupled equations.

The elements (:mod:`dolfinx_mbs.constraints.frame_joints`: :class:`~dolfinx_mbs.constraints.
frame_joints.Revolute`, ``Prismatic``, ``Spring``, ``Motor``) own their rows; this module gives
them their points' kinematics at the coupled system's unknowns and places their rows, forces
and derivatives in the system's residual and Jacobian.

Each joint row has a position value g(z, u) (a revolute joint: the components of r_a - r_b; the
alignment of a 3D joint's directions; a prismatic joint's offsets across its axis and, in 2D,
the relative angle; a driven motor angle) or only a velocity value (a driven motor speed), and a
velocity value h = dg/dt, linear in the speeds w and the nodes' rates u'. The rows enter the
coupled equations (docs/theory.md section 8) with two multipliers each (Gear, Gupta and
Leimkuhler's stabilization):

    frames' and bodies' rows   ... + G^T lam = 0,     G = dh/d(w, u'),
    kinematic rows             z' - N w + g_z^T mu = 0,   q' - v + g_q^T mu = 0,
    joint rows                 g = 0,   h = 0,

so that the joint holds at position level at every step (mu vanishes with the drift). lam is
the joint force: the force on body ``b``'s point is +lam (global components) for a revolute
joint's position rows, and a driven motor's lam is its torque.

On an elastic node the force enters the body's inertia residual e at the node (and from there
the frame's rows, whose partial velocities the node shares); on a rigid point or an axis it
enters the frames' rows directly. A revolute joint's or a spring's force on a node is its force
rows' components; a prismatic joint's (its rows across the axis) is lam times the rows'
coefficients of the node's rate (the ``du`` of :meth:`JointSet.rows_at`, which are also the
position rows' coefficients of its displacement), and the rest of such a row's speed
coefficients (the guide's axis turning with its frame) enters the frames' rows directly.

Derivatives: with respect to the speeds and the nodes' rates in closed form (the rows are
linear in them), and so with respect to a revolute joint's node displacement; with respect to
the frames' coordinates (rotations, through trigonometric and quaternion functions) by central
differences of the closed-form rows (errors ~ 1e-10 of their scale), but for the position
rows' dg/dz, in closed form; a prismatic joint's rows by its node's displacement, and its node
force as it turns with the frames, by central differences too. The
curvature of g weighted by mu is left out of the Jacobian: mu vanishes with the drift, so
Newton's convergence does not see it. Springs (:class:`~dolfinx_mbs.constraints.frame_joints.
Spring`): their force components F are unknowns with the rows F - s e = 0 (no position rows, no
mu), entering the bodies and frames as a revolute joint's force does.

The system is seen through :class:`JointHost` (what the rows read of it), so that this module
does not import :mod:`dolfinx_mbs.systems.coupled`, which makes the set.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Protocol,
    Sequence,
    Tuple,
    cast,
)

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.frame_joints import (
    ElementOutput,
    End,
    FrameJoint,
    JointPoint,
    Motor,
    Spring,
)
from dolfinx_mbs.frames.base import cross3, skew
from dolfinx_mbs.frames.computed import ComputedFrame
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from mpi4py import MPI
    from petsc4py import PETSc

__all__ = ["JointSet", "JointHost", "RowBlock", "NodeValues"]

log = logging.getLogger(__name__)

#: the step of the central differences in the frames' coordinates
FD_STEP = 1e-6

#: the elastic joint points' displacement and rate (local components, (3,) each) by
#: (joint index, side: 0 for ``a``, 1 for ``b``)
NodeValues = Dict[Tuple[int, int], Tuple[np.ndarray, np.ndarray]]


class _PartView(Protocol):
    """What the rows read of an elastic body's share of the system."""

    @property
    def gdim(self) -> int: ...

    @property
    def slice(self) -> slice: ...


class JointHost(Protocol):
    """What a :class:`JointSet` reads of its coupled system
    (:class:`~dolfinx_mbs.systems.coupled.CoupledSystem`)."""

    @property
    def frames(self) -> Sequence[ComputedFrame]:
        """The computed frames, in the order of their unknowns."""

    @property
    def zslice(self) -> Sequence[slice]:
        """Each frame's coordinates in the unknowns f."""

    @property
    def wslice(self) -> Sequence[slice]:
        """Each frame's speeds in f."""

    @property
    def parts(self) -> Sequence[_PartView]:
        """The elastic bodies' shares (their dimension and dofs in the full vectors)."""

    @property
    def comm(self) -> MPI.Comm:
        """The communicator."""

    @property
    def m(self) -> int:
        """The number of frame unknowns (the joints' last)."""

    @property
    def reducer(self) -> Any:
        """The elastic bodies' Maggi reducer (None without them)."""

    @property
    def full_work(self) -> Dict[str, PETSc.Vec]:
        """Work vectors of the elastic bodies' full space ("r": a residual)."""

    @property
    def elastic_reducer(self) -> Any:
        """The elastic bodies' reducer (an error without them)."""

    def reduced_work(self, like: PETSc.Vec) -> PETSc.Vec:
        """A work vector of the reduced coordinates, of ``like``'s layout."""


class _Side:
    """A point's frame as the rows see it: its index among the computed frames (or None), and
    the kinematics at given frame unknowns."""

    def __init__(self, system: JointHost, point: JointPoint) -> None:
        self.point = point
        self.index = None
        if isinstance(point.frame, ComputedFrame):
            self.index = next(i for i, f in enumerate(system.frames) if f is point.frame)
        self.system = system
        self._last: Tuple[tuple, tuple] | None = None

    def state(self, t: float, f: np.ndarray) -> tuple:
        """(R, r_O, v_O, omega, dv/dw (3 x k), domega/dw) at the unknowns ``f`` (the speeds'
        rates are not needed: the rows have none).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).

        Returns:
            ``(R, r_O, v_O, omega, dv/dw, domega/dw)``.
        """
        return self.parts(t, f)[:6]

    def parts(self, t: float, f: np.ndarray) -> tuple:
        """:meth:`state` and (d phi/dz, d r_O/dz) of a computed frame (None otherwise); the
        last evaluation is kept (the rows ask for a side's state many times at one ``f``).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).

        Returns:
            The state's parts and the two derivatives.
        """
        s = self.system
        if self.index is None:
            if self.point.frame is None:   # the ground
                z3 = np.zeros(3)
                return np.eye(3), z3, z3, z3, None, None, None, None
            st = self.point.frame.state(t)
            return st.R, st.r_O, st.v_O, st.omega, None, None, None, None
        i = self.index
        fr, zs, ws = s.frames[i], s.zslice[i], s.wslice[i]
        key = (t, f[zs].tobytes(), f[ws].tobytes())
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        jet = fr.jet(t, f[zs], f[ws], np.zeros(fr.n_speeds))
        st = jet.state
        out = (st.R, st.r_O, st.v_O, st.omega, jet.dw["v_O"], jet.dw["omega"], jet.dphi_dz,
               jet.drO_dz)
        self._last = (key, out)
        return out


@dataclasses.dataclass(frozen=True)
class RowBlock:
    """An element's rows in a :class:`JointSet`.

    Attributes:
        element: the joint, spring or driven motor.
        start: its first row (its multipliers' first place in lam).
        stop: one past its last row.
        pos: its first position row's index among the position rows (its multipliers' first
            place in mu), or -1 (an element's rows are all position rows or none).
        joint: its index in :attr:`JointSet.joints` (None for a motor).
    """

    element: FrameJoint | Motor
    start: int
    stop: int
    pos: int
    joint: int | None


@dataclasses.dataclass
class _Bordered:
    """The parts of the bordered Jacobian the joints add to (:meth:`JointSet.derivatives`), the
    time stepper's shift and two work vectors (full and reduced)."""

    shift: float
    D: np.ndarray
    B: Sequence[PETSc.Vec]
    C: Sequence[PETSc.Vec]
    Cv: Sequence[PETSc.Vec]
    H: Sequence[PETSc.Vec]
    full: PETSc.Vec
    tmp: PETSc.Vec


@dataclasses.dataclass
class _NodeRow:
    """A force row at an elastic node: the row, its component k, the point's side and sign (+1
    on a, -1 on b), its frame's rotation, the node's first dof on this rank (None elsewhere)
    and the body's dimension."""

    r: int
    k: int
    side: _Side
    sign: float
    R: np.ndarray
    lo: int | None
    gd: int


class JointSet:
    """The joints, springs and driven motors of a coupled system: their rows, forces and
    derivatives.

    Args:
        system: the coupled system (:class:`JointHost`: frames, parts, reducer).
        joints: the :class:`~dolfinx_mbs.constraints.frame_joints.FrameJoint` s (revolute,
            prismatic, spring).
        motors: the :class:`~dolfinx_mbs.constraints.frame_joints.Motor` s (driven ones have a
            row; torque motors are applied loads).
    """

    def __init__(self, system: JointHost, joints: Sequence[FrameJoint],
                 motors: Sequence[Motor]) -> None:
        self.system = system
        self.joints = list(joints)
        #: the driven motors' prescriptions at the last time asked (a function of t alone:
        #: a Jacobian's columns and the residual at one t call the user's function once)
        self._prescribed_at: Tuple[float, Dict[str, Tuple[float | None, float]]] = (
            math.nan, {})
        self.motors = [m for m in motors if m.n_rows]
        #: motors that apply a torque (a function of time and the relative state)
        self.torque_motors = [m for m in motors if not m.n_rows]
        self.sides = [(_Side(system, j.a), _Side(system, j.b)) for j in self.joints]
        #: each element's rows, the joints' then the driven motors'
        self.blocks: List[RowBlock] = []
        r = ip = 0
        elements: List[Tuple[FrameJoint | Motor, int | None]] = [
            (j, ij) for ij, j in enumerate(self.joints)]
        elements += [(m, None) for m in self.motors]
        for el, ij in elements:
            self.blocks.append(RowBlock(el, r, r + el.n_rows, ip if el.n_position else -1, ij))
            r += el.n_rows
            ip += el.n_position
        self.n_rows = r
        self.active = bool(self.n_rows or self.torque_motors)
        self.n_position = ip
        #: the position rows among the rows
        self.position_rows = np.array(
            [r for b in self.blocks if b.element.n_position for r in range(b.start, b.stop)],
            dtype=np.int64)
        #: unknowns: the multipliers lam (one per row), then mu (one per position row)
        self.n_unknowns = self.n_rows + self.n_position
        #: each row's frames whose rows its force reaches through an elastic node (the point
        #: rows of a joint or spring with an elastic point)
        self._node_frames: List[frozenset] = [frozenset()] * self.n_rows
        for b in self.blocks:
            if isinstance(b.element, FrameJoint) and b.joint is not None:
                j = b.element
                on = frozenset(self.sides[b.joint][k].index for k, pt in enumerate((j.a, j.b))
                               if pt.elastic)
                for r in range(b.start, b.start + j.n_point_rows):
                    self._node_frames[r] = on
        #: the joints without force rows (prismatic) with a point at an elastic node: their
        #: force on the node is lam times the rows' coefficients of the node's rate
        self._general: List[Tuple[RowBlock, FrameJoint]] = [
            (b, b.element) for b in self.blocks
            if isinstance(b.element, FrameJoint) and b.joint is not None
            and not b.element.n_point_rows and any(pt.elastic for pt in (b.element.a,
                                                                          b.element.b))]
        self._nodes: dict | None = None
        self._last_du: np.ndarray | None = None

    # -- the nodes' values --------------------------------------------------------------------
    def node_values(self, u: PETSc.Vec, ud: PETSc.Vec) -> NodeValues:
        """{(joint, side): (u, u') at its node in local components (3,)}, on every rank.

        Args:
            u: the full displacement.
            ud: the full velocity.

        Returns:
            The nodes' values by ``(joint, side)``.
        """
        s = self.system
        local: NodeValues = {}
        for ij, j in enumerate(self.joints):
            for k, pt in enumerate((j.a, j.b)):
                if pt.elastic and pt.node is not None:
                    p = s.parts[pt.body_index]
                    g = p.gdim
                    lo = p.slice.start + pt.node * g
                    a = u.getArray(readonly=True)[lo:lo + g]
                    b = ud.getArray(readonly=True)[lo:lo + g]
                    local[(ij, k)] = (np.pad(a, (0, 3 - g)), np.pad(b, (0, 3 - g)))
        out: NodeValues = {}
        for d in s.comm.allgather(local):
            out.update(d)
        return out

    # -- the points' kinematics ---------------------------------------------------------------
    def _end(self, ij: int, k: int, t: float, f: np.ndarray, nodes: dict) -> End:
        """A joint point's kinematics at the unknowns ``f``: r, r' (global), the partial
        velocities dr'/dw (3 x k_frame), R, the local position x = X + u, and its frame's."""
        side = self.sides[ij][k]
        pt = side.point
        R, rO, vO, om, dv, dom, dphi, drO = side.parts(t, f)
        u, ud = nodes.get((ij, k), (np.zeros(3), np.zeros(3)))
        x = pt.X + u
        if pt.frame is None:
            return End(r=x, rd=np.zeros(3), Pw=None, R=np.eye(3), x=x, omega=om, domega=dom,
                       dphi=dphi, drO=drO, index=side.index)
        r = rO + R @ x
        rd = R @ (vO + cross3(om, x) + ud)
        Pw = None if dv is None else R @ (dv - skew(x) @ dom)
        return End(r=r, rd=rd, Pw=Pw, R=R, x=x, omega=om, domega=dom, dphi=dphi, drO=drO,
                   index=side.index)

    def _ends(self, ij: int, t: float, f: np.ndarray, nodes: dict,
              kept: Dict[int, Tuple[End, End]] | None = None) -> Tuple[End, End]:
        """Both points' kinematics of joint ``ij`` (kept in ``kept`` for one evaluation)."""
        if kept is not None and ij in kept:
            return kept[ij]
        out = (self._end(ij, 0, t, f, nodes), self._end(ij, 1, t, f, nodes))
        if kept is not None:
            kept[ij] = out
        return out

    # -- the rows in closed form ------------------------------------------------------------
    def rows_at(self, t: float, f: np.ndarray, nodes: dict,
                du: np.ndarray | None = None,
                ends: Dict[int, Tuple[End, End]] | None = None) -> tuple:
        """The rows at ``f``: position values g (0 for velocity rows), velocity values h and
        the speeds' coefficients G {row: {frame index: dh/dw (k,)}}.

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            nodes: the elastic nodes' values.
            du: rows x 2 x 3 zeros, or None: each row's coefficients of its joint's points'
                node rates u' written into it (local components; h is linear in them, and a
                position row's are also dg/du).
            ends: an empty dict that receives each joint's points' kinematics (by joint
                index), or None.

        Returns:
            (g, h, G).
        """
        g = np.zeros(self.n_rows)
        h = np.zeros(self.n_rows)
        G: List[Dict[int, np.ndarray]] = [dict() for _ in range(self.n_rows)]
        kept: Dict[int, Tuple[End, End]] = {} if ends is None else ends
        lam = self.split(f)[0]
        for blk in self.blocks:
            el, r0, r1 = blk.element, blk.start, blk.stop
            if isinstance(el, Motor):
                driven = self.driven(el, t, f, nodes, kept)
                g[r0], h[r0], G[r0] = el.row(driven, self.prescribed(el, t))
                continue
            assert blk.joint is not None  # (a joint's block)
            a, b = self._ends(blk.joint, t, f, nodes, kept)
            el.rows(a, b, lam[r0:r1], g[r0:r1], h[r0:r1], G[r0:r1],
                    None if du is None else du[r0:r1])
            if du is not None:   # r' = R (... + u'): global to local
                du[r0:r1, 0] = du[r0:r1, 0] @ a.R
                du[r0:r1, 1] = du[r0:r1, 1] @ b.R
        return g, h, G

    def driven(self, m: Motor, t: float, f: np.ndarray, nodes: dict | None = None,
               kept: Dict[int, Tuple[End, End]] | None = None
                ) -> Tuple[float, float, Dict[int, np.ndarray]]:
        """What motor ``m`` drives: its angle, rate and d rate/dw.

        Args:
            m: the motor.
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            nodes: the elastic nodes' values (none: held at zero).
            kept: the joints' ends evaluated at ``f`` so far (added to).

        Returns:
            (angle, rate, {frame index: d rate/dw}).
        """
        target = m.target
        if isinstance(target, FrameJoint):
            a, b = self._ends(self.joints.index(target), t, f, nodes or {}, kept)
            return target.relative_angle(a, b)
        s = self.system
        i = next(k for k, fr in enumerate(s.frames) if fr is target)
        return float(s.frames[i].describe(f[s.zslice[i]], f[s.wslice[i]])["angle"]), float(
            f[s.wslice[i]][0]), {i: np.array([1.0])}

    def motor_torques(self, t: float, f: np.ndarray) -> np.ndarray:
        """The torque motors' generalized force on the frames' speeds (an m-vector; the user's
        functions under a collective guard).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).

        Returns:
            The generalized forces.
        """
        s = self.system
        out = np.zeros(s.m)
        if not self.torque_motors:
            return out
        with checks.collective(s.comm, f"the motor torques at t={t:g}"):
            for m in self.torque_motors:
                th, thd, G = self.driven(m, t, f)
                tau = m.torque_at(t, th, thd)
                for i, v in G.items():
                    out[s.wslice[i]] += tau * v
        return out

    def motor_power(self, t: float, f: np.ndarray, driven: Dict[str, float]) -> float:
        """The motors' power on the model at ``t``: a driven motor's torque times the rate it
        prescribes (its row's rheonomic part, so the constraint force's power whatever the
        bodies do), a torque motor's generalized force times the frames' speeds.

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            driven: each driven motor's torque at ``t`` by name (the run's joint outputs: a
                multiplier, extrapolated to the step's end where the scheme keeps it
                elsewhere); a NaN or missing torque counts 0.

        Returns:
            The power (W).
        """
        s = self.system
        power = 0.0
        for m in self.motors:
            tau = driven.get(m.name, math.nan)
            rate = self.prescribed(m, t)[1]   # on every rank alike: the guard is collective
            if math.isfinite(tau):
                power += tau * rate
        if self.torque_motors:
            Q = self.motor_torques(t, f)
            for i in range(len(s.frames)):
                power += float(Q[s.wslice[i]] @ f[s.wslice[i]])
        return power

    def prescribed(self, m: Motor, t: float) -> Tuple[float | None, float]:
        """What a driven motor prescribes at ``t`` (:meth:`~dolfinx_mbs.constraints.
        frame_joints.Motor.prescribed`), its user function called under a collective guard (a
        failure on one rank fails every rank), once a time (:meth:`forget` at a run's ends).

        Args:
            m: the driven motor.
            t: time (s).

        Returns:
            ``(angle or None, rate)``.
        """
        at, kept = self._prescribed_at
        if at == t and m.name in kept:   # t is the same on every rank: so is the hit
            return kept[m.name]
        with checks.collective(self.system.comm, f"motor {m.name!r} at t={t:g}"):
            value = m.prescribed(t)
        if at != t:
            kept = {}
            self._prescribed_at = (t, kept)
        kept[m.name] = value
        return value

    def prescribed_at(self, m: Motor, times: Sequence[float] | np.ndarray) -> np.ndarray:
        """:meth:`prescribed` at each of ``times``, under one collective guard (a batch of
        states' outputs: not kept): the motor's function called once with the array of times
        where it takes one (``Motor.prescribed_many``), else at each time.

        Args:
            m: the driven motor.
            times: the times (s).

        Returns:
            (len(times), 2): the angle (NaN for a speed motor) and the rate at each.
        """
        out = np.empty((len(times), 2))
        t = math.nan
        with checks.collective(self.system.comm, f"motor {m.name!r}") as guard:
            many = m.prescribed_many(np.asarray(times, dtype=float))
            if many is not None:   # the function took the array of times
                return many
            try:   # (Python floats, the time named only on a failure: a 3x faster loop)
                for k, t in enumerate(np.asarray(times, dtype=float).tolist()):
                    a, r = m.prescribed(t)
                    out[k, 0] = math.nan if a is None else a
                    out[k, 1] = r
            except Exception:
                guard.what = f"motor {m.name!r} at t={t:g}"
                raise
        return out

    def forget(self) -> None:
        """Forget the prescriptions kept (a run's start and end: the user's function may give
        other values in the next run)."""
        self._prescribed_at = (math.nan, {})

    def check_start(self, t0: float) -> None:
        """Refuse a driven angle that is not 0 at the run's start: the angle is the rotation
        since then, and its row would turn the joint by that much within the first step.

        Args:
            t0: the run's initial time (s).

        Raises:
            ValueError: a motor's angle(t0) != 0 (on every rank).
        """
        for m in self.motors:
            a, _ = self.prescribed(m, t0)
            if a is not None and abs(a) > 1e-12:
                raise ValueError(f"motor {m.name!r}: angle(t0={t0:g}) = {a!r}, but a driven "
                                 "angle is the rotation since the start (0 there); the motor "
                                 f"would turn its joint by {a:g} rad within the first step. "
                                 f"Give angle(t) - angle({t0:g})")

    def consistent_speeds(self, t: float, f: np.ndarray, u: PETSc.Vec | None = None,
                          ud: PETSc.Vec | None = None) -> None:
        """Make the frames' speeds in ``f`` (in place) satisfy the joints' velocity rows h = 0
        at ``t``: the least change of the speeds (Euclidean), one linear solve as the rows are
        linear in the speeds. A change beyond 1e-8 of the speeds is logged (the given speeds
        did not fit the joints). Collective (the nodes' values).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            u: the full displacement (None without elastic bodies).
            ud: the full velocity (None without elastic bodies).
        """
        s = self.system
        nodes = self.node_values(u, ud) if u is not None else {}
        _, h, G = self.rows_at(t, f, nodes)
        A = np.zeros((self.n_rows, s.m))
        for blk in self.blocks:
            if isinstance(blk.element, Spring):   # force rows, not velocity rows
                h[blk.start:blk.stop] = 0.0
                continue
            for r in range(blk.start, blk.stop):
                for i, v in G[r].items():
                    A[r, s.wslice[i]] += v
        cols = np.flatnonzero(np.abs(A).sum(axis=0))
        if not cols.size:
            return
        dw = -np.linalg.lstsq(A[:, cols], h, rcond=None)[0]
        w = np.concatenate([f[ws] for ws in s.wslice]) if s.wslice else np.zeros(0)
        f[cols] += dw
        change = float(np.abs(dw).max())
        if change > 1e-8 * max(1.0, float(np.abs(w).max(initial=0.0))):
            log.info("the initial speeds were changed by up to %.3g to fit the joints' "
                     "velocity rows", change)

    def _springs(self) -> List[RowBlock]:
        return [b for b in self.blocks if isinstance(b.element, Spring)]

    def spring_forces(self, t: float, f: np.ndarray, u: PETSc.Vec | None = None,
                      ud: PETSc.Vec | None = None) -> None:
        """Set the springs' force unknowns in ``f`` (in place) to their values at the state
        (the rows F - s e = 0 met at ``t``). Collective (the nodes' values).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            u: the full displacement (None without elastic bodies).
            ud: the full velocity (None without elastic bodies).
        """
        springs = self._springs()
        if not springs:
            return
        nodes = self.node_values(u, ud) if u is not None else {}
        base = self.system.m - self.n_unknowns
        for blk in springs:
            sp = cast(Spring, blk.element)
            assert blk.joint is not None  # (a spring's block)
            a, b = self._ends(blk.joint, t, f, nodes)
            force = sp.force(a.r - b.r, a.rd - b.rd)[0]
            f[base + blk.start: base + blk.start + sp.gdim] = force[:sp.gdim]

    def spring_energy(self, t: float, f: np.ndarray, u: PETSc.Vec | None = None,
                      ud: PETSc.Vec | None = None) -> float:
        """The springs' potential, the sum of 1/2 k (L - L0)^2, at the state.

        Collective (the nodes' values).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            u: the full displacement (None without elastic bodies).
            ud: the full velocity (None without elastic bodies).

        Returns:
            The potential (J), the same on every rank.
        """
        springs = self._springs()
        if not springs:
            return 0.0
        nodes = self.node_values(u, ud) if u is not None else {}
        out = 0.0
        for blk in springs:
            assert blk.joint is not None  # (a spring's block)
            out += cast(Spring, blk.element).energy(*self._ends(blk.joint, t, f, nodes))
        return out

    # -- contributions to the residual -----------------------------------------------------------
    def split(self, f: np.ndarray) -> tuple:
        """(lam, mu) from the unknowns ``f`` (the joints' block is last).

        Args:
            f: the unknowns (frames' coordinates and speeds, then the joints' block).

        Returns:
            ``(lam, mu)``.
        """
        base = self.system.m - self.n_unknowns
        lam = f[base: base + self.n_rows]
        mu = f[base + self.n_rows: base + self.n_unknowns]
        return lam, mu

    def residual(self, t: float, f: np.ndarray, fd: np.ndarray,
                 terms: Sequence[Dict[str, PETSc.Vec]], u: PETSc.Vec | None, ud: PETSc.Vec | None,
                 Ff: np.ndarray) -> None:
        """Add the joints to a residual: the forces lam into the bodies' inertia residuals at
        their nodes (``terms``, before the frames' rows are formed from them) and into the
        frames' rows at rigid points and axes, mu into the kinematic rows, and the joints' own
        rows g = 0 (position) and h = 0 (velocity) into ``Ff``.

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            fd: the unknowns' rates.
            terms: the bodies' inertia residual vectors by name (``"e"``, ``"r"``), one dict per
                body.
            u: the full displacement (None without elastic bodies).
            ud: the full velocity (None without elastic bodies).
            Ff: the frames' and joints' residual rows (added to).
        """
        s = self.system
        self.prepare(t, f)
        nodes = self.node_values(u, ud) if s.parts else {}
        self._nodes = nodes
        lam, mu = self.split(f)
        g, h, _, du, Gd = self._evaluate(t, f, nodes)
        base = s.m - self.n_unknowns
        # the rows: position rows keep g = 0, velocity rows h = 0 (each position row both)
        Ff[base: base + self.n_rows] = h
        Ff[base + self.n_rows: base + self.n_unknowns] = g[self.position_rows]
        self._g = g
        self._last_du = du
        # forces: frames' rows (rigid points, axes, motors) and nodes
        for r in range(self.n_rows):
            for i, v in Gd[r].items():
                Ff[s.wslice[i]] += lam[r] * v
        self._node_forces(lam, terms)
        self._general_node_forces(lam, du, terms)
        Ff -= self.motor_torques(t, f)
        # mu: z' - N w + g_z^T mu
        if self.n_position:
            gz = self.position_rows_z(t, f, nodes)
            for i, zs in enumerate(s.zslice):
                Ff[zs] += gz[:, zs].T @ mu

    def _direct(self, r: int, i: int, v: np.ndarray) -> np.ndarray:
        """The part of row ``r``'s generalized force direction ``v`` on frame ``i`` that enters
        the frame's rows directly: all of it at a rigid point or an axis; at an elastic node
        none (the node force reaches the frame's rows through the body's inertia residual),
        but for a free frame's translation rows, which are its momentum balance and not formed
        from that residual."""
        if i not in self._node_frames[r]:
            return v
        fr = self.system.frames[i]
        out = np.zeros_like(v)
        if fr.momentum_balance:
            out[:fr.n_translations] = v[:fr.n_translations]
        return out

    def _evaluate(self, t: float, f: np.ndarray, nodes: dict) -> tuple:
        """The rows at ``f`` (:meth:`rows_at`) with what their forces need: (g, h, G, du,
        Gd), du the rows' coefficients of the nodes' rates (local components; None without
        joints of :attr:`_general`) and Gd the part of each row's speed coefficients G that
        enters the frames' rows directly (:meth:`_direct`; for a row of :attr:`_general`, G
        less what its force on an elastic node gives the node's frame through the body's
        inertia residual, du . R^T dr/dw, but for a free frame's translation rows)."""
        du = np.zeros((self.n_rows, 2, 3)) if self._general else None
        ends: Dict[int, Tuple[End, End]] = {}
        g, h, G = self.rows_at(t, f, nodes, du, ends)
        Gd = [{i: self._direct(r, i, v) for i, v in G[r].items()} for r in range(self.n_rows)]
        for blk, j in self._general:
            assert blk.joint is not None and du is not None  # (a joint's block)
            for k, (pt, end) in enumerate(zip((j.a, j.b), ends[blk.joint])):
                if not pt.elastic or end.index is None:
                    continue
                fr = self.system.frames[end.index]
                w = end.R.T @ end.Pw   # the node's partial velocities (local components)
                for r in range(blk.start, blk.stop):
                    node = du[r, k] @ w
                    if fr.momentum_balance:
                        node[:fr.n_translations] = 0.0
                    Gd[r][end.index] = Gd[r][end.index] - node
        return g, h, G, du, Gd

    def _general_node_forces(self, lam: np.ndarray, du: np.ndarray | None,
                             terms: Sequence[Dict[str, PETSc.Vec]]) -> None:
        """Lam times the rows' node coefficients into e and r at the nodes (:attr:`_general`)."""
        if du is None or not terms:
            return
        s = self.system
        for blk, j in self._general:
            for k, pt in enumerate((j.a, j.b)):
                if not pt.elastic or pt.node is None:
                    continue
                g = s.parts[pt.body_index].gdim
                lo = pt.node * g
                f_loc = lam[blk.start:blk.stop] @ du[blk.start:blk.stop, k]
                bt = terms[pt.body_index]
                for key in ("e", "r"):
                    a = bt[key].getArray()
                    a[lo:lo + g] += f_loc[:g]

    def _point_rows(self) -> List[Tuple[RowBlock, FrameJoint]]:
        """The blocks of the elements with force rows at their points (revolute, spring)."""
        return [(b, b.element) for b in self.blocks
                if isinstance(b.element, FrameJoint) and b.element.n_point_rows]

    def _node_forces(self, lam: np.ndarray, terms: Sequence[Dict[str, PETSc.Vec]]) -> None:
        """Lam into the inertia residual e and the elastic rows' residual r at the nodes."""
        s = self.system
        for blk, j in self._point_rows():
            assert blk.joint is not None  # (a joint's block)
            for kr in range(j.n_point_rows):
                r = blk.start + kr
                for k, (pt, sign) in enumerate(((j.a, 1.0), (j.b, -1.0))):
                    if not pt.elastic or pt.node is None or not terms:
                        continue
                    R = self._R(blk.joint, k)
                    f_loc = sign * lam[r] * R[kr, :]          # R^T (lam e_k), local
                    bt = terms[pt.body_index]
                    g = s.parts[pt.body_index].gdim
                    lo = pt.node * g
                    for key in ("e", "r"):
                        a = bt[key].getArray()
                        a[lo:lo + g] += f_loc[:g]

    def _R(self, ij: int, k: int) -> np.ndarray:
        return self._last_R[(ij, k)]

    def prepare(self, t: float, f: np.ndarray) -> None:
        """The points' rotations at ``f`` (for the node forces).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
        """
        self._last_R: Dict[Tuple[int, int], np.ndarray] = {}
        for ij, (a, b) in enumerate(self.sides):
            for k, side in enumerate((a, b)):
                self._last_R[(ij, k)] = side.state(t, f)[0]

    def position_rows_z(self, t: float, f: np.ndarray, nodes: NodeValues) -> np.ndarray:
        """dg/dz of the position rows (n_position x m) in closed form, the nodes held (each
        element's :meth:`~dolfinx_mbs.constraints.frame_joints.FrameJoint.gz`; a driven
        motor's angle: its joint's relative angle or its hinge's coordinate).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            nodes: the elastic nodes' values.

        Returns:
            dg/dz.
        """
        s = self.system
        out = np.zeros((self.n_position, s.m))
        kept: Dict[int, Tuple[End, End]] = {}
        for blk in self.blocks:
            el = blk.element
            if not el.n_position:
                continue
            rows = out[blk.pos: blk.pos + el.n_position]
            if isinstance(el, Motor):
                target = el.target
                if isinstance(target, FrameJoint):
                    a, b = self._ends(self.joints.index(target), t, f, nodes, kept)
                    target.relative_angle_gz(a, b, rows[0], s.zslice)
                else:
                    i = next(k for k, fr in enumerate(s.frames) if fr is target)
                    rows[0, s.zslice[i]] += 1.0
                continue
            assert blk.joint is not None  # (a joint's block)
            a, b = self._ends(blk.joint, t, f, nodes, kept)
            el.gz(a, b, rows, s.zslice)
        return out

    def _touches(self, i: int) -> bool:
        """True when a joint or motor involves computed frame ``i``."""
        for a, b in self.sides:
            if a.index == i or b.index == i:
                return True
        s = self.system
        return any(not isinstance(m.target, FrameJoint) and m.target is s.frames[i]
                   for m in self.motors + self.torque_motors)

    def q_correction(self, f: np.ndarray, out: PETSc.Vec) -> None:
        """Add g_q^T mu to the elastic kinematic rows (reduced vector ``out``).

        Args:
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            out: the reduced vector (added to).
        """
        s = self.system
        if not self.n_position or not s.parts:
            return
        _, mu = self.split(f)
        full = s.full_work["r"]
        _zero(full)
        a = full.getArray()
        any_node = False
        for blk, j in self._point_rows():
            if not j.n_position:   # a spring's force rows: no position rows
                continue
            assert blk.joint is not None  # (a joint's block)
            for kr in range(j.n_point_rows):
                ip = blk.pos + kr
                for k, (pt, sign) in enumerate(((j.a, 1.0), (j.b, -1.0))):
                    if pt.elastic:
                        any_node = True
                    if pt.elastic and pt.node is not None:
                        R = self._R(blk.joint, k)
                        g = s.parts[pt.body_index].gdim
                        lo = s.parts[pt.body_index].slice.start + pt.node * g
                        a[lo:lo + g] += (sign * mu[ip] * R[kr, :])[:g]
        du = self._last_du
        for blk, j in self._general:
            if not j.n_position or du is None:
                continue
            mu_b = mu[blk.pos: blk.pos + j.n_position]
            for k, pt in enumerate((j.a, j.b)):
                if pt.elastic:
                    any_node = True
                if pt.elastic and pt.node is not None:
                    g = s.parts[pt.body_index].gdim
                    lo = s.parts[pt.body_index].slice.start + pt.node * g
                    a[lo:lo + g] += (mu_b @ du[blk.start:blk.stop, k])[:g]
        if any_node:
            out.axpy(1.0, s.elastic_reducer.project(full, s.reduced_work(out)))

    # -- contributions to the Jacobian -----------------------------------------------------------
    def derivatives(self, t: float, f: np.ndarray, shift: float, D: np.ndarray,
                    B: Sequence[PETSc.Vec], C: Sequence[PETSc.Vec], Cv: Sequence[PETSc.Vec],
                    H: Sequence[PETSc.Vec], Bfull_work: PETSc.Vec) -> None:
        """Add the joints' entries to the bordered Jacobian (see the module docstring): D (the
        frames' and joints' block), B (elastic rows by the joint unknowns), C and Cv (joint
        rows by the elastic unknowns), H (the elastic kinematic rows by mu).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            shift: the Jacobian's shift: d(rate)/d(unknown) of the time stepper.
            D: the frames' and joints' dense block (added to).
            B: the elastic rows by the joint unknowns, one vector per unknown (added to).
            C: the joint rows by the elastic unknowns, one vector per row (added to).
            Cv: the joint rows by the elastic rates, one vector per row (added to).
            H: the elastic kinematic rows by mu, one vector per unknown (added to).
            Bfull_work: a full work vector.
        """
        s = self.system
        m = s.m
        base = m - self.n_unknowns
        nodes = self._nodes or {}
        lam, mu = self.split(f)
        g, h, G, du, Gd = self._evaluate(t, f, nodes)
        # the velocity rows by the speeds, and the frames' rows by lam (G and its transpose)
        springs = self._spring_jacobians(t, f, nodes)
        for blk in self.blocks:
            spring = isinstance(blk.element, Spring)
            for r in range(blk.start, blk.stop):
                for i, v in G[r].items():
                    ws = s.wslice[i]
                    D[ws, base + r] += Gd[r][i]
                    if not spring:
                        D[base + r, ws] += v
            if spring:
                # F_k - s e_k: by F_k, and by the speeds through d' (d' = sum_l G_l w)
                assert blk.joint is not None  # (a spring's block)
                cast(Spring, blk.element).add_speed_jacobian(
                    springs[blk.joint][1], G[blk.start:blk.stop], D, base + blk.start,
                    s.wslice)
        # everything else that depends on the frames' coordinates: by central differences
        # (with the rows' node coefficients du, which turn with the frames: their columns for
        # the node forces of the joints without force rows, from the same evaluations)
        def frame_terms(ff: np.ndarray) -> np.ndarray:
            gg, hh, _, dd, GGd = self._evaluate(t, ff, nodes)
            out = np.zeros(m)
            out[base: base + self.n_rows] = hh
            out[base + self.n_rows: base + self.n_unknowns] = gg[self.position_rows]
            for r in range(self.n_rows):
                for i, v in GGd[r].items():
                    out[s.wslice[i]] += lam[r] * v
            return out if dd is None else np.concatenate([out, dd.ravel()])
        turned: Dict[int, np.ndarray] = {}
        for i, zs in enumerate(s.zslice):
            if not self._touches(i):
                continue
            for c in range(zs.start, zs.stop):
                col = _central(frame_terms, f, c)
                D[:, c] += col[:m]
                if du is not None:
                    turned[c] = col[m:].reshape(du.shape)
        if self.torque_motors:   # the user's torque functions: differenced in z and w
            for i, (zs, ws) in enumerate(zip(s.zslice, s.wslice)):
                if self._touches(i):
                    for c in list(range(zs.start, zs.stop)) + list(range(ws.start, ws.stop)):
                        D[:, c] -= _central(lambda ff: self.motor_torques(t, ff), f, c)
        # mu in the frames' kinematic rows (g_z^T), its curvature left out
        if self.n_position:
            gz = self.position_rows_z(t, f, nodes)
            for ip in range(self.n_position):
                D[:base, base + self.n_rows + ip] += gz[ip, :base]
        if s.parts:
            J = _Bordered(shift, D, B, C, Cv, H, Bfull_work, s.reduced_work(B[0]))
            self._node_derivatives(t, f, lam, J, springs)
            if du is not None:
                self._general_node_derivatives(t, f, lam, J, du, turned)

    def _spring_jacobians(self, t: float, f: np.ndarray, nodes: dict) -> dict:
        """{joint index: (d(s e)/dd, d(s e)/dd')} of the springs at ``f``."""
        out = {}
        for blk in self._springs():
            assert blk.joint is not None  # (a spring's block)
            a, b = self._ends(blk.joint, t, f, nodes)
            _, Jd, Jdd, _, _ = cast(Spring, blk.element).force(a.r - b.r, a.rd - b.rd)
            out[blk.joint] = (Jd, Jdd)
        return out

    def _node_derivatives(self, t: float, f: np.ndarray, lam: np.ndarray, J: _Bordered,
                          springs: Dict[int, Tuple[np.ndarray, np.ndarray]]) -> None:
        """The entries of the joints at elastic nodes: the node forces by lam and by the frames'
        coordinates, the frames' rows by lam through the node, the joint rows by the node's
        displacement and rate, and the kinematic rows by mu."""
        s = self.system
        red = s.reducer
        base = s.m - self.n_unknowns
        full, tmp = J.full, J.tmp
        nodes = self._nodes or {}
        for blk, j in self._point_rows():
            ij = blk.joint
            assert ij is not None  # (a joint's block)
            spring = isinstance(j, Spring)
            for kr in range(j.n_point_rows):
                r = blk.start + kr
                for k, (pt, sign) in enumerate(((j.a, 1.0), (j.b, -1.0))):
                    if not pt.elastic:
                        continue
                    side = self.sides[ij][k]
                    R = self._R(ij, k)
                    p = s.parts[pt.body_index]
                    gd = p.gdim
                    lo = (p.slice.start + pt.node * gd) if pt.node is not None else None
                    u, ud = nodes.get((ij, k), (np.zeros(3), np.zeros(3)))
                    x = pt.X + u
                    # the node's vector of row r: R[k_r, :] at its dofs (local components)
                    _zero(full)
                    if lo is not None:
                        full.array[lo:lo + gd] = sign * R[kr, :gd]
                    assert red is not None  # (an elastic node: the bodies' reducer)
                    red.project(full, tmp)
                    J.B[base + r].axpy(1.0, tmp)          # elastic rows by lam (the node force)
                    if spring:
                        self._spring_node_rows(_NodeRow(r, kr, side, sign, R, lo, gd),
                                               springs[ij], t, f, J)
                    else:
                        J.C[base + r].axpy(J.shift, tmp)        # h by the node's rate, s d/dv
                        J.Cv[base + r].axpy(1.0, tmp)
                    if j.n_position:
                        ip = blk.pos + kr
                        J.C[base + self.n_rows + ip].axpy(1.0, tmp)  # g by the displacement
                        J.H[base + self.n_rows + ip].axpy(1.0, tmp)  # q' - v + g_q^T mu
                    # h by the node's displacement: R (omega x u)
                    if not spring and (side.index is not None or pt.frame is not None):
                        om = side.state(t, f)[3]
                        _zero(full)
                        if lo is not None:
                            full.array[lo:lo + gd] = sign * (R @ skew(om))[kr, :gd]
                        red.project(full, tmp)
                        J.C[base + r].axpy(1.0, tmp)
                    # the frame's rows by lam through the node: w_j . (R^T e_k)
                    if side.index is not None:
                        self._node_frame_rows(_NodeRow(r, kr, side, sign, R, lo, gd), x,
                                              lam, t, f, J)

    def _general_node_derivatives(self, t: float, f: np.ndarray, lam: np.ndarray,
                                  J: _Bordered, du: np.ndarray,
                                  turned: Dict[int, np.ndarray]) -> None:
        """The entries of the joints of :attr:`_general` at elastic nodes: their rows' node
        coefficients du (the node forces by lam, the rows by the node's rate and, for position
        rows, displacement, the kinematic rows by mu, the node's frame's rows by lam through
        its partial velocities), the rows by the node's displacement (h turns with the
        points' offset: differences) and the node forces as du turns with the joint's frames'
        coordinates (``turned``: d du/dz by the frames' coordinates, the differences of
        :meth:`derivatives`)."""
        s = self.system
        red = s.reducer
        assert red is not None  # (an elastic node: the bodies' reducer)
        base = s.m - self.n_unknowns
        full, tmp, D = J.full, J.tmp, J.D
        nodes = self._nodes or {}

        def node_vector(lo: int | None, gd: int, vec: np.ndarray) -> PETSc.Vec:
            _zero(full)
            if lo is not None:
                full.array[lo:lo + gd] = vec[:gd]
            red.project(full, tmp)
            return tmp

        for blk, j in self._general:
            ij = blk.joint
            assert ij is not None  # (a joint's block)
            rows = slice(blk.start, blk.stop)
            zcols = sorted({c for side in self.sides[ij] if side.index is not None
                            for c in range(s.zslice[side.index].start,
                                           s.zslice[side.index].stop)})

            for k, pt in enumerate((j.a, j.b)):
                if not pt.elastic:
                    continue
                side = self.sides[ij][k]
                p = s.parts[pt.body_index]
                gd = p.gdim
                lo = (p.slice.start + pt.node * gd) if pt.node is not None else None
                u, ud = nodes.get((ij, k), (np.zeros(3), np.zeros(3)))

                def h_at(x: np.ndarray, k: int = k, ud: np.ndarray = ud) -> np.ndarray:
                    at = dict(nodes)
                    at[(ij, k)] = (x, ud)
                    return cast(np.ndarray, self.rows_at(t, f, at)[1][rows])
                by_u = np.column_stack([_central(h_at, u, c) for c in range(gd)])
                wj: List[np.ndarray] = []
                skip = 0
                if side.index is not None:
                    i = side.index
                    jet_T, jet_Om = self._partials(i, t, f)
                    skip = s.frames[i].n_translations if s.frames[i].momentum_balance else 0
                    x = pt.X + u
                    wj = [jet_T[:, jl] + cross3(jet_Om[:, jl], x)
                          for jl in range(jet_T.shape[1])]
                for kr, r in enumerate(range(blk.start, blk.stop)):
                    v = node_vector(lo, gd, du[r, k])
                    J.B[base + r].axpy(1.0, v)             # elastic rows by lam
                    J.C[base + r].axpy(J.shift, v)         # h by the node's rate, s d/dv
                    J.Cv[base + r].axpy(1.0, v)
                    if j.n_position:
                        ip = base + self.n_rows + blk.pos + kr
                        J.C[ip].axpy(1.0, v)               # g by the displacement
                        J.H[ip].axpy(1.0, v)               # q' - v + g_q^T mu
                    J.C[base + r].axpy(1.0, node_vector(lo, gd, by_u[kr]))  # h by u
                    if side.index is not None:
                        ws0 = s.wslice[side.index].start
                        for jl in range(skip, len(wj)):
                            D[ws0 + jl, base + r] += float(wj[jl] @ du[r, k])
                for c in zcols:   # the node force lam du turns with the frames
                    df = lam[rows] @ turned[c][rows, k]
                    J.B[c].axpy(1.0, node_vector(lo, gd, df))
                    if side.index is not None:
                        ws0 = s.wslice[side.index].start
                        for jl in range(skip, len(wj)):
                            D[ws0 + jl, c] += float(wj[jl] @ df)

    def _node_frame_rows(self, row: _NodeRow, x: np.ndarray, lam: np.ndarray, t: float,
                         f: np.ndarray, J: _Bordered) -> None:
        """A node force's entries in its computed frame's rows: by lam (w_j . (R^T e_k)), and,
        as the force R^T lam e_k turns with the frame, the elastic and the frame's rows by the
        frame's coordinates."""
        s = self.system
        red = s.reducer
        base = s.m - self.n_unknowns
        full, tmp, D = J.full, J.tmp, J.D
        i = row.side.index
        assert i is not None and red is not None  # (a computed frame's elastic node)
        r, sign, R, lo, gd = row.r, row.sign, row.R, row.lo, row.gd
        jet_T, jet_Om = self._partials(i, t, f)
        fk = sign * R[row.k, :]
        skip = s.frames[i].n_translations if s.frames[i].momentum_balance else 0
        for jl in range(skip, jet_T.shape[1]):
            wj = jet_T[:, jl] + cross3(jet_Om[:, jl], x)
            # (by the node's displacement, its arm x = X + u: d/du (Om_j x x) . f
            # = f x Om_j, in the frame's rows' -Om_j x e, e holding the force)
            D[s.wslice[i].start + jl, base + r] += float(wj @ fk)
        # the node force R^T lam e_k turns with the frame: d/dz (elastic rows and
        # the frame's rows through w_j)
        dphi = s.frames[i].jet(t, f[s.zslice[i]], f[s.wslice[i]],
                               np.zeros(s.frames[i].n_speeds)).dphi_dz
        df = skew(sign * lam[r] * R[row.k, :]) @ dphi      # d f_loc / dz (3 x nz)
        for c, zc in enumerate(range(s.zslice[i].start, s.zslice[i].stop)):
            _zero(full)
            if lo is not None:
                full.array[lo:lo + gd] = df[:gd, c]
            red.project(full, tmp)
            J.B[zc].axpy(1.0, tmp)
            for jl in range(skip, jet_T.shape[1]):
                wj = jet_T[:, jl] + cross3(jet_Om[:, jl], x)
                D[s.wslice[i].start + jl, zc] += float(wj @ df[:, c])

    def _spring_node_rows(self, row: _NodeRow, jac: Tuple[np.ndarray, np.ndarray], t: float,
                          f: np.ndarray, J: _Bordered) -> None:
        """A spring row F_k - s e_k by its node's displacement and rate: -J_d . (+-R) -
        J_d' . (+-R skew(omega)) and -J_d' . (+-R) (d = r_a - r_b moves with the node)."""
        base = self.system.m - self.n_unknowns
        red = self.system.reducer
        Jd, Jdd = jac
        k, sign, R = row.k, row.sign, row.R
        om = row.side.state(t, f)[3]
        by_u = -sign * (Jd[k] @ R + Jdd[k] @ (R @ skew(om)))
        by_v = -sign * (Jdd[k] @ R)
        for vec, targets in ((by_u, ((J.C, 1.0),)), (by_v, ((J.C, J.shift), (J.Cv, 1.0)))):
            _zero(J.full)
            if row.lo is not None:
                J.full.array[row.lo:row.lo + row.gd] = vec[:row.gd]
            assert red is not None  # (an elastic node: the bodies' reducer)
            red.project(J.full, J.tmp)
            for M, a in targets:
                M[base + row.r].axpy(a, J.tmp)

    def _partials(self, i: int, t: float, f: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        s = self.system
        fr = s.frames[i]
        jet = fr.jet(t, f[s.zslice[i]], f[s.wslice[i]], np.zeros(fr.n_speeds))
        return jet.T, jet.Om

    # -- outputs ----------------------------------------------------------------------------------
    def outputs(self, t: float, f: np.ndarray, u: PETSc.Vec | None = None,
                ud: PETSc.Vec | None = None, nodes: dict | None = None
                ) -> Mapping[str, ElementOutput]:
        """Each joint's, motor's and spring's outputs by name at the unknowns ``f`` and the
        full displacement and velocity ``u``, ``ud`` (None without elastic bodies;
        collective): the elements' :meth:`~dolfinx_mbs.constraints.frame_joints.FrameJoint.
        output` (typed records, read also as mappings: a revolute joint's force on its second
        body, global, and drift, the largest of its position rows; a driven motor's torque and
        drift; a spring's tension and length).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            u: the full displacement (None without elastic bodies).
            ud: the full velocity (None without elastic bodies).
            nodes: the nodes' values (:meth:`node_values`) where the caller has them (then
                ``u``, ``ud`` are not read and nothing is collective).

        Returns:
            The outputs by joint or motor name (read-only).
        """
        lam, _ = self.split(f)
        if nodes is None:
            nodes = self.node_values(u, ud) if u is not None else {}
        g, _, _ = self.rows_at(t, f, nodes)
        out: Dict[str, ElementOutput] = {}
        for blk in self.blocks:
            el, r0, r1 = blk.element, blk.start, blk.stop
            if isinstance(el, Motor):
                out[el.name] = el.output(lam[r0], g[r0])
                continue
            assert blk.joint is not None  # (a joint's block)
            a, b = self._ends(blk.joint, t, f, nodes)
            out[el.name] = el.output(a, b, lam[r0:r1], g[r0:r1])
        return FrozenMapping(out)


def _zero(v: PETSc.Vec) -> None:
    """Zero a work vector through its array: the assembly's code writes these vectors through
    their arrays, which PETSc's own zeroEntries does not see (it keeps a cached state)."""
    v.array[:] = 0.0


def _central(fn: Callable[[np.ndarray], np.ndarray], f: np.ndarray, c: int) -> np.ndarray:
    """D fn / d f_c by central differences, step FD_STEP (scaled by f_c): errors ~ 1e-10 of
    the scale, ample for Newton's direction (the residual is exact)."""
    hh = FD_STEP * max(1.0, abs(float(f[c])))
    lo, hi = f.copy(), f.copy()
    lo[c] -= hh
    hi[c] += hh
    return cast(np.ndarray, (fn(hi) - fn(lo)) / (2 * hh))
