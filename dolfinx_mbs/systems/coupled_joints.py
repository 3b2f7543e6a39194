"""The rows of joints and motors between computed frames in the coupled equations.

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
enters the frames' rows directly. Derivatives: with respect to the speeds and the nodes'
displacements and rates in closed form (the rows are linear in the speeds and rates, and in
the displacement of a node); with respect to the frames' coordinates (rotations, through
trigonometric and quaternion functions) by central differences of the closed-form rows
(errors ~ 1e-10 of their scale), but for the position rows' dg/dz, in closed form. The
curvature of g weighted by mu is left out of the Jacobian: mu vanishes with the drift, so
Newton's convergence does not see it. Springs (``FrameJoint`` of kind ``"spring"``): their
force components F are unknowns with the rows F - s e = 0 (no position rows, no mu), entering
the bodies and frames as a revolute joint's force does.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Callable, Dict, List, Sequence, Tuple, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.frame_joints import FrameJoint, JointPoint, Motor, planar_angle
from dolfinx_mbs.frames.base import cross3, skew
from dolfinx_mbs.frames.computed import ComputedFrame

if TYPE_CHECKING:
    from petsc4py import PETSc

    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["JointSet"]

log = logging.getLogger(__name__)

#: the step of the central differences in the frames' coordinates
FD_STEP = 1e-6


class _Side:
    """A point's frame as the rows see it: its index among the computed frames (or None), and
    the kinematics at given frame unknowns."""

    def __init__(self, system: CoupledSystem, point: JointPoint) -> None:
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


def _row_groups(joint: FrameJoint) -> list:
    """The joint's rows as (kind, data) in order."""
    out: List[Tuple[str, int | None]] = []
    if joint.kind == "spring":
        return [("spring", k) for k in range(joint.gdim)]
    if joint.kind == "revolute":
        out += [("coincide", k) for k in range(joint.gdim)]
    else:
        out += [("across", k) for k in range(len(joint.normals_a))]
        if joint.gdim == 2:
            out.append(("relative_angle", None))
    return out + [("align", k) for k in range(len(joint.lock))]


class _Relative:
    """What a torque motor's function sees: the driven ``angle`` (from its value at t = 0)
    and its ``rate``."""

    def __init__(self, angle: float, rate: float) -> None:
        self.angle, self.rate = angle, rate


class JointSet:
    """The joints and driven motors of a coupled system: their rows, forces and derivatives.

    Args:
        system: the :class:`~dolfinx_mbs.systems.coupled.CoupledSystem` (frames, parts,
            reducer).
        joints: the :class:`~dolfinx_mbs.constraints.frame_joints.FrameJoint` s.
        motors: the driven :class:`~dolfinx_mbs.constraints.frame_joints.Motor` s (angle or
            speed; torque motors are applied loads).
    """

    def __init__(self, system: CoupledSystem, joints: Sequence[FrameJoint],
                 motors: Sequence[Motor]) -> None:
        self.system = system
        self.joints = list(joints)
        self.motors = [m for m in motors if m.n_rows]
        #: motors that apply a torque (a function of time and the relative state)
        self.torque_motors = [m for m in motors if not m.n_rows]
        self.rows = []          # (joint index or None, kind, data, position row?)
        self.sides = []
        for ij, j in enumerate(self.joints):
            a, b = _Side(system, j.a), _Side(system, j.b)
            self.sides.append((a, b))
            for kind, data in _row_groups(j):   # a spring's rows are force rows
                self.rows.append((ij, kind, data, kind != "spring"))
        for im, m in enumerate(self.motors):
            self.rows.append((im, "motor", m, m.kind == "angle"))
        self.n_rows = len(self.rows)
        self.active = bool(self.n_rows or self.torque_motors)
        self.n_position = sum(1 for r in self.rows if r[3])
        #: unknowns: the multipliers lam (one per row), then mu (one per position row)
        self.n_unknowns = self.n_rows + self.n_position
        self._nodes: dict | None = None

    # -- the nodes' values --------------------------------------------------------------------
    def node_values(self, u: PETSc.Vec, ud: PETSc.Vec) -> dict:
        """{(joint, side): (u, u') at its node in local components (3,)}, on every rank.

        Args:
            u: the full displacement.
            ud: the full velocity.

        Returns:
            The nodes' values by ``(joint, side)``.
        """
        s = self.system
        local = {}
        for ij, j in enumerate(self.joints):
            for k, pt in enumerate((j.a, j.b)):
                if pt.elastic and pt.node is not None:
                    p = s.parts[pt.body_index]
                    g = p.gdim
                    lo = p.slice.start + pt.node * g
                    a = u.getArray(readonly=True)[lo:lo + g]
                    b = ud.getArray(readonly=True)[lo:lo + g]
                    local[(ij, k)] = (np.pad(a, (0, 3 - g)), np.pad(b, (0, 3 - g)))
        out = {}
        for d in s.comm.allgather(local):
            out.update(d)
        return out

    # -- the rows in closed form ------------------------------------------------------------
    def _point(self, ij: int, k: int, t: float, f: np.ndarray, nodes: dict) -> tuple:
        """A joint point's r, r' (global), the partial velocities dr'/dw (3 x k_frame), R and
        the local position x = X + u, at the unknowns ``f``."""
        j = self.joints[ij]
        side = self.sides[ij][k]
        pt = (j.a, j.b)[k]
        R, rO, vO, om, dv, dom = side.state(t, f)
        u, ud = nodes.get((ij, k), (np.zeros(3), np.zeros(3)))
        x = pt.X + u
        if pt.frame is None:
            return x, np.zeros(3), None, np.eye(3), x
        r = rO + R @ x
        rd = R @ (vO + cross3(om, x) + ud)
        Pw = None if dv is None else R @ (dv - skew(x) @ dom)
        return r, rd, Pw, R, x

    def _values(self, t: float, f: np.ndarray, nodes: dict) -> tuple:
        """(g, h, G) of every row at ``f``: g the position values (None for velocity rows), h
        the velocity values, G {row: {frame index: dh/dw (k,)}} (the speeds' coefficients)."""
        g = np.zeros(self.n_rows)
        h = np.zeros(self.n_rows)
        G = [dict() for _ in range(self.n_rows)]
        pts = {}
        for r, (ij, kind, data, pos) in enumerate(self.rows):
            if kind == "motor":
                g[r], h[r], G[r] = self._motor(data, t, f)
                continue
            j = self.joints[ij]
            if ij not in pts:
                pts[ij] = (self._point(ij, 0, t, f, nodes), self._point(ij, 1, t, f, nodes))
            (ra, rda, Pa, Ra, xa), (rb, rdb, Pb, Rb, xb) = pts[ij]
            ia, ib = self.sides[ij][0].index, self.sides[ij][1].index
            if kind == "coincide":
                k = data
                g[r], h[r] = ra[k] - rb[k], rda[k] - rdb[k]
                if ia is not None:
                    G[r][ia] = G[r].get(ia, 0.0) + Pa[k]
                if ib is not None:
                    G[r][ib] = G[r].get(ib, 0.0) - Pb[k]
            elif kind == "align":
                # (R_a p) . (R_b q): its rate omega_a,G . c - omega_b,G . c, c = a_G x b_G
                pa_, qb_ = j.lock[data]
                aG, bG = Ra @ pa_, Rb @ qb_
                c = np.cross(aG, bG)
                g[r] = float(aG @ bG)
                _, _, _, oma, _, doma = self.sides[ij][0].state(t, f)
                _, _, _, omb, _, domb = self.sides[ij][1].state(t, f)
                h[r] = float((Ra @ oma - Rb @ omb) @ c)
                if ia is not None:
                    G[r][ia] = G[r].get(ia, 0.0) + (Ra.T @ c) @ doma
                if ib is not None:
                    G[r][ib] = G[r].get(ib, 0.0) - (Rb.T @ c) @ domb
            elif kind == "across":
                # n_a . (r_b - r_a) - d0, n_a = R_a n0 turning with a
                n0 = j.normals_a[data]
                n = Ra @ n0
                _, _, _, oma, _, doma = self.sides[ij][0].state(t, f)
                nd = Ra @ cross3(oma, n0)
                d = rb - ra
                g[r] = float(n @ d) - j.offsets[data]
                h[r] = float(nd @ d + n @ (rdb - rda))
                if ia is not None:
                    # d(nd . d)/dw_a = d/dw_a [(R_a (om_a x n0)) . d] = (R_a^T d) . (dom x n0)
                    G[r][ia] = (G[r].get(ia, 0.0) - n @ Pa
                                - (skew(n0) @ doma).T @ (Ra.T @ d))
                if ib is not None:
                    G[r][ib] = G[r].get(ib, 0.0) + n @ Pb
            elif kind == "spring":
                # F_k - s e_k: F the force on b (unknowns), s the tension, e from b to a
                k = data
                if ia is not None:
                    G[r][ia] = G[r].get(ia, 0.0) + Pa[k]
                if ib is not None:
                    G[r][ib] = G[r].get(ib, 0.0) - Pb[k]
                if k == 0:
                    lam = self.split(f)[0]
                    force = self._spring_force(j, ra - rb, rda - rdb)[0]
                    F = np.zeros(3)
                    F[:j.gdim] = lam[r: r + j.gdim]
                    spring_rows = F - force
                h[r] = spring_rows[k]
            elif kind == "relative_angle":
                th, thd, Gs = self._relative_angle(ij, t, f)
                g[r] = th - j.angle0
                h[r] = thd
                for i, v in Gs.items():
                    G[r][i] = G[r].get(i, 0.0) + v
        return g, h, G

    @staticmethod
    def _spring_force(j: FrameJoint, d: np.ndarray, dd: np.ndarray) -> tuple:
        """A spring's force on its point b, s e (global), its derivatives with respect to
        d = r_a - r_b and to d', its tension s and length L."""
        L = float(np.linalg.norm(d))
        if not L > 0.0:
            raise FloatingPointError(f"spring {j.name!r}: its two points met (length 0): its "
                                     "direction is undefined")
        e = d / L
        P = (np.eye(3) - np.outer(e, e)) / L     # d e / d d
        Ld = float(e @ dd)
        sT = j.stiffness * (L - j.length) + j.damping * Ld
        ds = j.stiffness * e + j.damping * (P @ dd)
        Jd = np.outer(e, ds) + sT * P
        Jdd = j.damping * np.outer(e, e)
        return sT * e, Jd, Jdd, sT, L

    def _angle(self, side: _Side, t: float, f: np.ndarray) -> Tuple[float, float, dict]:
        """A 2D frame's angle about z, its rate and d(rate)/dw {index: (k,)}."""
        R, _, _, om, _, dom = side.state(t, f)
        G = {} if side.index is None else {side.index: dom[2]}
        return planar_angle(R), float(om[2]), G

    def _relative_angle(self, ij: int, t: float, f: np.ndarray) -> Tuple[float, float, dict]:
        a, b = self.sides[ij]
        tha, wa, Ga = self._angle(a, t, f)
        thb, wb, Gb = self._angle(b, t, f)
        G = {i: -v for i, v in Ga.items()}
        for i, v in Gb.items():
            G[i] = G.get(i, 0.0) + v
        # the angle unwrapped near the row's zero (wraps at +-pi)
        d = (thb - tha - self.joints[ij].angle0 + np.pi) % (2 * np.pi) - np.pi
        return d + self.joints[ij].angle0, wb - wa, G

    def _driven(self, m: Motor, t: float, f: np.ndarray) -> Tuple[float, float, dict]:
        """(angle, rate, d rate/dw) of what motor ``m`` drives."""
        target = m.target
        if isinstance(target, FrameJoint):
            return self._relative_angle(self.joints.index(target), t, f)
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
        from dolfinx_mbs import checks
        with checks.collective(s.comm, f"the motor torques at t={t:g}"):
            for m in self.torque_motors:
                th, thd, G = self._driven(m, t, f)
                tau = float(m.fn(t, _Relative(th - m.angle0, thd)))
                if not np.isfinite(tau):
                    raise ValueError(f"motor {m.name!r} returned {tau!r}: expected a finite "
                                     "torque")
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
            rate = self._prescribed(m, t)[1]   # on every rank alike: the guard is collective
            if math.isfinite(tau):
                power += tau * rate
        if self.torque_motors:
            Q = self.motor_torques(t, f)
            for i in range(len(s.frames)):
                power += float(Q[s.wslice[i]] @ f[s.wslice[i]])
        return power

    def _prescribed(self, m: Motor, t: float) -> Tuple[float | None, float]:
        """What a driven motor prescribes at ``t``: (angle or None, rate), its user function
        called under a collective guard (a failure on one rank fails every rank) and checked
        finite."""
        with checks.collective(self.system.comm, f"motor {m.name!r} at t={t:g}"):
            if m.kind == "angle":
                a, r = float(m.fn(t)), _rate(m.fn, t)
            else:
                a, r = None, float(m.fn(t))
            if not (math.isfinite(r) and (a is None or math.isfinite(a))):
                raise ValueError(f"its {m.kind} function returned "
                                 f"{a if m.kind == 'angle' else r!r} (rate {r!r}): expected "
                                 "finite values")
        return a, r

    def check_start(self, t0: float) -> None:
        """Refuse a driven angle that is not 0 at the run's start: the angle is the rotation
        since then, and its row would turn the joint by that much within the first step.

        Args:
            t0: the run's initial time (s).

        Raises:
            ValueError: a motor's angle(t0) != 0 (on every rank).
        """
        for m in self.motors:
            a, _ = self._prescribed(m, t0)
            if a is not None and abs(a) > 1e-12:
                raise ValueError(f"motor {m.name!r}: angle(t0={t0:g}) = {a!r}, but a driven "
                                 "angle is the rotation since the start (0 there); the motor "
                                 f"would turn its joint by {a:g} rad within the first step. "
                                 f"Give angle(t) - angle({t0:g})")

    def _motor(self, m: Motor, t: float, f: np.ndarray) -> Tuple[float, float, dict]:
        """A driven motor's row: angle (position) or speed (velocity), relative to its joint's
        (2D revolute) or its hinge's angle."""
        th, thd, G = self._driven(m, t, f)
        a, r = self._prescribed(m, t)
        if a is not None:
            return th - m.angle0 - a, thd - r, G
        return 0.0, thd - r, G

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
        _, h, G = self._values(t, f, nodes)
        A = np.zeros((self.n_rows, s.m))
        for r in range(self.n_rows):
            if self.rows[r][1] == "spring":   # a force row, not a velocity row
                h[r] = 0.0
                continue
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
        if not any(j.kind == "spring" for j in self.joints):
            return
        nodes = self.node_values(u, ud) if u is not None else {}
        base = self.system.m - self.n_unknowns
        for r, (ij, kind, data, _) in enumerate(self.rows):
            if kind == "spring" and data == 0:
                j = self.joints[ij]
                pa = self._point(ij, 0, t, f, nodes)
                pb = self._point(ij, 1, t, f, nodes)
                force = self._spring_force(j, pa[0] - pb[0], pa[1] - pb[1])[0]
                f[base + r: base + r + j.gdim] = force[:j.gdim]

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
        if not any(j.kind == "spring" for j in self.joints):
            return 0.0
        nodes = self.node_values(u, ud) if u is not None else {}
        out = 0.0
        for ij, j in enumerate(self.joints):
            if j.kind == "spring":
                d = self._point(ij, 0, t, f, nodes)[0] - self._point(ij, 1, t, f, nodes)[0]
                out += 0.5 * j.stiffness * (float(np.linalg.norm(d)) - j.length) ** 2
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
        g, h, G = self._values(t, f, nodes)
        base = s.m - self.n_unknowns
        # the rows: position rows keep g = 0, velocity rows h = 0 (each position row both)
        ip = 0
        for r, (_, _, _, pos) in enumerate(self.rows):
            Ff[base + r] = h[r]
            if pos:
                Ff[base + self.n_rows + ip] = g[r]
                ip += 1
        self._g = g
        # forces: frames' rows (rigid points, axes, motors) and nodes
        for r, (ij, kind, data, pos) in enumerate(self.rows):
            for i, v in G[r].items():
                Ff[s.wslice[i]] += lam[r] * self._direct(r, i, v)
        self._node_forces(lam, terms)
        Ff -= self.motor_torques(t, f)
        # mu: z' - N w + g_z^T mu
        if self.n_position:
            gz = self._gz(t, f)
            for i, zs in enumerate(s.zslice):
                Ff[zs] += gz[:, zs].T @ mu

    def _direct(self, r: int, i: int, v: np.ndarray) -> np.ndarray:
        """The part of row ``r``'s generalized force direction ``v`` on frame ``i`` that enters
        the frame's rows directly: all of it at a rigid point or an axis; at an elastic node
        none (the node force reaches the frame's rows through the body's inertia residual),
        but for a free frame's translation rows, which are its momentum balance and not formed
        from that residual."""
        if not self._through_node(r, i):
            return v
        fr = self.system.frames[i]
        out = np.zeros_like(v)
        if fr.momentum_balance:
            out[:fr.n_translations] = v[:fr.n_translations]
        return out

    def _through_node(self, r: int, i: int) -> bool:
        """True when row ``r``'s force on frame ``i`` acts through an elastic node (it then
        enters the body's inertia residual, which carries it to the frame's rows)."""
        ij, kind, _, _ = self.rows[r]
        if kind not in ("coincide", "spring"):
            return False
        j = self.joints[ij]
        return any(pt.elastic and self.sides[ij][k].index == i
                   for k, pt in enumerate((j.a, j.b)))

    def _node_forces(self, lam: np.ndarray, terms: Sequence[Dict[str, PETSc.Vec]]) -> None:
        """Lam into the inertia residual e and the elastic rows' residual r at the nodes."""
        s = self.system
        for r, (ij, kind, data, pos) in enumerate(self.rows):
            if kind not in ("coincide", "spring"):
                continue
            j = self.joints[ij]
            for k, (pt, sign) in enumerate(((j.a, 1.0), (j.b, -1.0))):
                if not pt.elastic or pt.node is None or not terms:
                    continue
                R = self._R(ij, k)
                f_loc = sign * lam[r] * R[data, :]          # R^T (lam e_k), local
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

    def _gz(self, t: float, f: np.ndarray) -> np.ndarray:
        """dg/dz of the position rows (n_position x m) in closed form, the nodes held: a
        point's d r/dz = d r_O/dz - R skew(x) d phi/dz, a direction's d(R e)/dz = -R skew(e)
        d phi/dz, a planar angle's d phi_z/dz."""
        s = self.system
        out = np.zeros((self.n_position, s.m))
        nodes = self._nodes or {}
        ip = -1
        for ij_r, (ij, kind, data, pos) in enumerate(self.rows):
            if not pos:
                continue
            ip += 1
            row = out[ip]
            if kind == "motor":
                target = data.target
                if isinstance(target, FrameJoint):
                    self._angle_gz(self.joints.index(target), t, f, row)
                else:
                    i = next(k for k, fr in enumerate(s.frames) if fr is target)
                    row[s.zslice[i]] += 1.0
                continue
            j = self.joints[ij]
            sides = self.sides[ij]
            if kind == "coincide":
                for k, sign in ((0, 1.0), (1, -1.0)):
                    side = sides[k]
                    if side.index is None:
                        continue
                    R, _, _, _, _, _, dphi, drO = side.parts(t, f)
                    x = (j.a, j.b)[k].X + nodes.get((ij, k), (np.zeros(3), None))[0]
                    row[s.zslice[side.index]] += sign * (drO[data] - (R[data] @ skew(x)) @ dphi)
            elif kind == "align":
                Ra, Rb = sides[0].parts(t, f)[0], sides[1].parts(t, f)[0]
                pa_, qb_ = j.lock[data]
                aG, bG = Ra @ pa_, Rb @ qb_
                if sides[0].index is not None:
                    dphi = sides[0].parts(t, f)[6]
                    row[s.zslice[sides[0].index]] -= bG @ (Ra @ skew(pa_) @ dphi)
                if sides[1].index is not None:
                    dphi = sides[1].parts(t, f)[6]
                    row[s.zslice[sides[1].index]] -= aG @ (Rb @ skew(qb_) @ dphi)
            elif kind == "across":
                pa = self._point(ij, 0, t, f, nodes)
                pb = self._point(ij, 1, t, f, nodes)
                Ra = pa[3]
                n0 = j.normals_a[data]
                n = Ra @ n0
                d = pb[0] - pa[0]
                for k, sign in ((0, -1.0), (1, 1.0)):
                    side = sides[k]
                    if side.index is None:
                        continue
                    R, _, _, _, _, _, dphi, drO = side.parts(t, f)
                    x = (j.a, j.b)[k].X + nodes.get((ij, k), (np.zeros(3), None))[0]
                    row[s.zslice[side.index]] += sign * (n @ (drO - R @ skew(x) @ dphi))
                    if k == 0:   # n turns with a
                        row[s.zslice[side.index]] -= d @ (R @ skew(n0) @ dphi)
            elif kind == "relative_angle":
                self._angle_gz(ij, t, f, row)
        return out

    def _angle_gz(self, ij: int, t: float, f: np.ndarray, row: np.ndarray) -> None:
        """Add d(relative angle)/dz of 2D joint ``ij`` to ``row``."""
        s = self.system
        for k, sign in ((0, -1.0), (1, 1.0)):
            side = self.sides[ij][k]
            if side.index is not None:
                row[s.zslice[side.index]] += sign * side.parts(t, f)[6][2]

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
        full = s._full["r"]
        _zero(full)
        a = full.getArray()
        ip = -1
        any_node = False
        for r, (ij, kind, data, pos) in enumerate(self.rows):
            if pos:
                ip += 1
            if kind != "coincide":
                continue
            j = self.joints[ij]
            for k, (pt, sign) in enumerate(((j.a, 1.0), (j.b, -1.0))):
                if pt.elastic:
                    any_node = True
                if pt.elastic and pt.node is not None:
                    R = self._R(ij, k)
                    g = s.parts[pt.body_index].gdim
                    lo = s.parts[pt.body_index].slice.start + pt.node * g
                    a[lo:lo + g] += (sign * mu[ip] * R[data, :])[:g]
        if any_node:
            out.axpy(1.0, s._elastic_reducer.project(full, s._red_tmp(out)))

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
        g, h, G = self._values(t, f, nodes)
        # the velocity rows by the speeds, and the frames' rows by lam (G and its transpose)
        springs = self._spring_jacobians(t, f, nodes)
        for r, row in enumerate(self.rows):
            for i, v in G[r].items():
                ws = s.wslice[i]
                D[ws, base + r] += self._direct(r, i, v)
                if row[1] != "spring":
                    D[base + r, ws] += v
            if row[1] == "spring":
                # F_k - s e_k: by F_k, and by the speeds through d' (d' = sum_l G_l w)
                ij, _, k, _ = row
                r0 = r - k
                Jdd = springs[ij][1]
                D[base + r, base + r] += 1.0
                for c in range(self.joints[ij].gdim):
                    for i, v in G[r0 + c].items():
                        D[base + r, s.wslice[i]] -= Jdd[k, c] * v
        # everything else that depends on the frames' coordinates: by central differences
        def frame_terms(ff: np.ndarray) -> np.ndarray:
            gg, hh, GG = self._values(t, ff, nodes)
            out = np.zeros(m)
            out[base: base + self.n_rows] = hh
            ip = 0
            for r, row in enumerate(self.rows):
                if row[3]:
                    out[base + self.n_rows + ip] = gg[r]
                    ip += 1
                for i, v in GG[r].items():
                    out[s.wslice[i]] += lam[r] * self._direct(r, i, v)
            return out
        for i, zs in enumerate(s.zslice):
            if not self._touches(i):
                continue
            for c in range(zs.start, zs.stop):
                D[:, c] += _central(frame_terms, f, c)
        if self.torque_motors:   # the user's torque functions: differenced in z and w
            for i, (zs, ws) in enumerate(zip(s.zslice, s.wslice)):
                if self._touches(i):
                    for c in list(range(zs.start, zs.stop)) + list(range(ws.start, ws.stop)):
                        D[:, c] -= _central(lambda ff: self.motor_torques(t, ff), f, c)
        # mu in the frames' kinematic rows (g_z^T), its curvature left out
        if self.n_position:
            gz = self._gz(t, f)
            for ip in range(self.n_position):
                D[:base, base + self.n_rows + ip] += gz[ip, :base]
        if s.parts:
            self._node_derivatives(t, f, shift, lam, mu, D, B, C, Cv, H, Bfull_work, springs)

    def _spring_jacobians(self, t: float, f: np.ndarray, nodes: dict) -> dict:
        """{joint index: (d(s e)/dd, d(s e)/dd')} of the springs at ``f``."""
        out = {}
        for ij, j in enumerate(self.joints):
            if j.kind == "spring":
                pa = self._point(ij, 0, t, f, nodes)
                pb = self._point(ij, 1, t, f, nodes)
                _, Jd, Jdd, _, _ = self._spring_force(j, pa[0] - pb[0], pa[1] - pb[1])
                out[ij] = (Jd, Jdd)
        return out

    def _node_derivatives(self, t: float, f: np.ndarray, shift: float, lam: np.ndarray,
                          mu: np.ndarray, D: np.ndarray, B: Sequence[PETSc.Vec],
                          C: Sequence[PETSc.Vec], Cv: Sequence[PETSc.Vec], H: Sequence[PETSc.Vec],
                          work: PETSc.Vec,
                          springs: Dict[int, Tuple[np.ndarray, np.ndarray]]) -> None:
        """The entries of the joints at elastic nodes: the node forces by lam and by the frames'
        coordinates, the frames' rows by lam through the node, the joint rows by the node's
        displacement and rate, and the kinematic rows by mu."""
        s = self.system
        red = s.reducer
        base = s.m - self.n_unknowns
        full = work
        tmp = s._red_tmp(B[0])
        nodes = self._nodes or {}
        ip = -1
        for r, (ij, kind, data, pos) in enumerate(self.rows):
            if pos:
                ip += 1
            if kind not in ("coincide", "spring"):
                continue
            j = self.joints[ij]
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
                # the node's vector of row r: R[data, :] at its dofs (local components)
                _zero(full)
                if lo is not None:
                    full.array[lo:lo + gd] = sign * R[data, :gd]
                assert red is not None  # (an elastic node: the bodies' reducer)
                red.project(full, tmp)
                B[base + r].axpy(1.0, tmp)          # elastic rows by lam (the node force)
                if kind == "spring":
                    self._spring_node_rows(r, data, j, side, sign, R, springs[ij], lo, gd,
                                           shift, t, f, C, Cv, full, tmp)
                else:
                    C[base + r].axpy(shift, tmp)        # h by the node's rate, s d/dv
                    Cv[base + r].axpy(1.0, tmp)
                if pos:
                    C[base + self.n_rows + ip].axpy(1.0, tmp)   # g by the node's displacement
                    H[base + self.n_rows + ip].axpy(1.0, tmp)   # q' - v + g_q^T mu
                # h by the node's displacement: R (omega x u)
                if kind != "spring" and (side.index is not None or pt.frame is not None):
                    om = side.state(t, f)[3]
                    _zero(full)
                    if lo is not None:
                        full.array[lo:lo + gd] = sign * (R @ skew(om))[data, :gd]
                    assert red is not None  # (an elastic node: the bodies' reducer)
                    red.project(full, tmp)
                    C[base + r].axpy(1.0, tmp)
                # the frame's rows by lam through the node: w_j . (R^T e_k)
                if side.index is not None:
                    i = side.index
                    jet_T, jet_Om = self._partials(i, t, f)
                    fk = sign * R[data, :]
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
                    df = skew(sign * lam[r] * R[data, :]) @ dphi      # d f_loc / dz (3 x nz)
                    for c, zc in enumerate(range(s.zslice[i].start, s.zslice[i].stop)):
                        _zero(full)
                        if lo is not None:
                            full.array[lo:lo + gd] = df[:gd, c]
                        assert red is not None  # (an elastic node: the bodies' reducer)
                        red.project(full, tmp)
                        B[zc].axpy(1.0, tmp)
                        for jl in range(skip, jet_T.shape[1]):
                            wj = jet_T[:, jl] + cross3(jet_Om[:, jl], x)
                            D[s.wslice[i].start + jl, zc] += float(wj @ df[:, c])

    def _spring_node_rows(self, r: int, k: int, j: FrameJoint, side: _Side, sign: float,
                          R: np.ndarray, jac: Tuple[np.ndarray, np.ndarray], lo: int | None,
                          gd: int, shift: float, t: float, f: np.ndarray, C: Sequence[PETSc.Vec],
                          Cv: Sequence[PETSc.Vec], full: PETSc.Vec, tmp: PETSc.Vec) -> None:
        """A spring row F_k - s e_k by its node's displacement and rate: -J_d . (+-R) -
        J_d' . (+-R skew(omega)) and -J_d' . (+-R) (d = r_a - r_b moves with the node)."""
        base = self.system.m - self.n_unknowns
        red = self.system.reducer
        Jd, Jdd = jac
        om = side.state(t, f)[3]
        by_u = -sign * (Jd[k] @ R + Jdd[k] @ (R @ skew(om)))
        by_v = -sign * (Jdd[k] @ R)
        for vec, targets in ((by_u, ((C, 1.0),)), (by_v, ((C, shift), (Cv, 1.0)))):
            _zero(full)
            if lo is not None:
                full.array[lo:lo + gd] = vec[:gd]
            assert red is not None  # (an elastic node: the bodies' reducer)
            red.project(full, tmp)
            for M, a in targets:
                M[base + r].axpy(a, tmp)

    def _partials(self, i: int, t: float, f: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        s = self.system
        fr = s.frames[i]
        jet = fr.jet(t, f[s.zslice[i]], f[s.wslice[i]], np.zeros(fr.n_speeds))
        return jet.T, jet.Om

    # -- outputs ----------------------------------------------------------------------------------
    def outputs(self, t: float, f: np.ndarray, u: PETSc.Vec | None = None,
                ud: PETSc.Vec | None = None, nodes: dict | None = None) -> dict:
        """{name: {force, torque, drift}} of the joints and motors at the unknowns ``f`` and
        the full displacement and velocity ``u``, ``ud`` (None without elastic bodies;
        collective): a revolute joint's force on its second body (global), a motor's torque,
        the largest of its position rows (the drift).

        Args:
            t: time (s).
            f: the unknowns (frames' coordinates and speeds, then the joints' block).
            u: the full displacement (None without elastic bodies).
            ud: the full velocity (None without elastic bodies).
            nodes: the nodes' values (:meth:`node_values`) where the caller has them (then
                ``u``, ``ud`` are not read and nothing is collective).

        Returns:
            The outputs by joint or motor name.
        """
        lam, _ = self.split(f)
        if nodes is None:
            nodes = self.node_values(u, ud) if u is not None else {}
        g, _, _ = self._values(t, f, nodes)
        out = {}
        for r, (ij, kind, data, pos) in enumerate(self.rows):
            if kind == "motor":
                # lam G enters the residual (inertia minus applied): the motor applies -lam
                out[data.name] = {"torque": -float(lam[r]), "drift": abs(float(g[r]))}
                continue
            j = self.joints[ij]
            if kind == "spring":
                if data == 0:
                    pa = self._point(ij, 0, t, f, nodes)
                    pb = self._point(ij, 1, t, f, nodes)
                    _, _, _, sT, L = self._spring_force(j, pa[0] - pb[0], pa[1] - pb[1])
                    out[j.name] = {"tension": sT, "length": L}
                continue
            rec = out.setdefault(j.name, {"force": np.zeros(3), "drift": 0.0})  # type: ignore[dict-item]
            if kind == "coincide":
                rec["force"][data] = lam[r]  # type: ignore[index]
            rec["drift"] = max(rec["drift"], abs(float(g[r])))
        return out


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


def _rate(fn: Callable[[float], float], t: float) -> float:
    """D fn / dt by central differences (a driven angle's rate)."""
    h = 1e-6 * max(1.0, abs(t))
    return (float(fn(t + h)) - float(fn(t - h))) / (2 * h)

