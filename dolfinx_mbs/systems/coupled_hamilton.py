"""Hamilton's form of the coupled rigid-elastic equations: the momentum rows and their momenta.

The second-order rows of :class:`~dolfinx_mbs.systems.coupled.CoupledSystem` are, row by row,
the rate of a momentum plus the rest (docs/theory.md sections 4 and 8),

    R(y, y') = d/dt Pi(y) + K(y),

with the momenta Pi conjugate to the speeds: the reduced elastic momentum p = A^T int rho v . phi
(v = v_O + omega x x + u' the absolute velocity, local components, x = X + u) and, per speed j
of a computed frame, pi_j = T_j . P + Om_j . H (P = int rho v, H = int rho x x v about the
frame's origin, local, with the rigid bodies' own). R is affine in the accelerations with the
momenta's derivatives as coefficients, so that K = R - dPi/dt does not depend on them: the
rows are evaluated by :meth:`CoupledSystem.evaluate` at the actual rates and the momenta's rate
dPi/dt (the same accelerations) is taken off,

    elastic      p'  + K_el(y) = 0        K_el = R_el - A^T M (v'),
                                          v' = a_O - omega x v_O + alpha x x + omega x u' + u''
    hinge speed  pi' + K_j(y)  = 0        K_j = R_j - (T_j . P' + Om_j . H'),
                                          P' = sum_n (M v')_n,
                                          H' = sum_n u'_n x (M v)_n + x_n x (M v')_n
    free frame   J'  - M_G     = 0        J = R H + r_O x R P (global, about the global origin),
                                          -M_G = R R_rot + r_O x (P_G' - F_G) - J'
                                          (R_rot its rotation rows, F_G from its translation rows)

The free frame's translation rows are those of the second-order form: they already read
m v_O' + pi_aux' = F (global), a balance of the linear momentum m v_O + pi_aux, linear in the
unknowns. The angular momentum is taken in global components about the global origin so that
it too is a momentum the scheme carries as an unknown: where no torque acts its row is J' = 0
and the midpoint rule keeps it exactly (in local components, Kirchhoff's H' + omega x H = M_O,
the midpoint rule turns H by a Cayley rotation and the quaternion by a slightly different
angle: the global J would drift at O(dt^2)).

Every product is one already formed for the second-order rows or the energy monitors: the
mass matrix times nodal fields (the coupling matrices are M (I kron E), which is checked), the
rigid bodies' momenta. The momenta themselves are not unknowns of the TS vector: the implicit
midpoint rule on Hamilton's form,

    (p1 - p0) / h + K(y_m) = 0,   p_m = (p0 + p1) / 2 = Pi(y_m),

with y_m the step's midpoint and v_m the velocity whose momenta are p_m, is the residual
(2 / h) (Pi(y_m) - p0) + K(y_m) = 0 in the midpoint state (which the midpoint rule on the
first-order TS vector (q, v, f) gives: y_m = (y0 + y1) / 2, y' = (y1 - y0) / h), with p0 carried
from step to step (p1 = 2 Pi(y_m) - p0). See :mod:`dolfinx_mbs.integrate.ts.coupled`.

The exact Newton step. With J(s) = d/dy + s d/dy' (s = 2 / h, the TS's shift), the rows'
Jacobian is the second-order form's plus J(s) of s Pi(y) - Pi'(y, y') on the momentum rows.
Every momentum is pi_c = w_c . M v for a rigid field w_c = T_c + Om_c x x (constant T_c, Om_c:
a hinge's partial velocities; a free frame's rotation rows, which in the frame's axes read
s (H - R^T (J0 - r_O x P0)) + R_rot - H' - omega x H - v_O x P, take e_k), with the rate
pi_c' = w_c . M v' + (Om_c x u') . M v, so that, nodal vectors of the products M x, M u',
M u'' (M = M_s kron I commutes with every cross product):

    s dv - J(s) v' = (s omega - alpha) x du - omega x du'
                     + a + b x x - d omega x u'     (a frame column: a = s dv_O - J(s) a_O
                                                     + d omega x v_O + omega x dv_O,
                                                     b = s d omega - J(s) alpha)
    elastic rows     A^T M of that: the elastic block loses c_E(alpha) (with dv = s dq - r_q
                     the omega x terms cancel but for -M omega x r_q on the right-hand side),
                     the frame columns gain A^T M (a + b x x - d omega x u')
    momentum row c   d/du  -(M w_c) x alpha - (M v') x Om_c - (M (Om_c x u')) x omega
                            - s M (Om_c x u')  (with s d/du' in the bordered C)
                     d/du' -(M w_c) x omega - (M v) x Om_c - M (Om_c x u')
                     frame column: sum (M w_c) . (a + b x x - d omega x u')
                            - (M (Om_c x u')) . (d v_O + d omega x x)
    free frame       less the derivatives of e_k . (omega x H + v_O x P) (the momentum of
                     the field (e_k x v_O) + (e_k x omega) x x, and d omega x H + d v_O x P)
                     and s d/dz of R^T (J0 - r_O x P0)

and the rigid bodies' momenta, linear in (v_O, omega), evaluated at (a, b). The derivatives
are checked against central differences of the residual (tests).

Joints, motors, springs and dampers are no momenta: their rows (a joint's g = 0 and h = 0, a
spring's F - s e = 0) and their forces in the bodies' and frames' rows are the second-order
form's, read at the midpoint state, so that a spring's tension k (L - L0) + c L' is that of
the midpoint's positions and velocities (the implicit midpoint rule's force), and so are their
entries in the Jacobian. One path differs: a joint at an elastic node moves the elastic rates
by its mu (q' - v + g_q^T mu), and the elastic rows see that through Hamilton's column of the
rates, the second-order form's less M omega x (:meth:`HamiltonForm.correct_rates`, applied to
that border as to the kinematic rows' residual).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, cast

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.frames.base import FrameState, cross3, skew
from dolfinx_mbs.frames.computed import Free, Hinge
from dolfinx_mbs.systems.coupled import _as3, _cross_rows

if TYPE_CHECKING:
    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["HamiltonForm"]


def _skews(w: np.ndarray) -> np.ndarray:
    """The cross-product matrices of the rows of ``w`` (k, 3): (k, 3, 3)."""
    S = np.zeros((len(w), 3, 3))
    S[:, 0, 1], S[:, 0, 2], S[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    S[:, 1, 0], S[:, 2, 0], S[:, 2, 1] = w[:, 2], -w[:, 1], w[:, 0]
    return S


def _at_origin(t: float, v_O: np.ndarray, omega: np.ndarray) -> FrameState:
    """A state at the global origin with the frame's axes and the velocities (v_O, omega).

    A rigid body's momenta there are its local momenta about O (linear in the velocities).
    """
    return FrameState(t=t, R=np.eye(3), r_O=np.zeros(3), omega=omega, alpha=np.zeros(3),
                      v_O=v_O, a_O=np.zeros(3))


class HamiltonForm:
    """The momentum rows of a coupled system in Hamilton's form (see the module docstring).

    Args:
        system: the coupled system.

    Raises:
        ValueError: a computed frame other than a :class:`~dolfinx_mbs.frames.Hinge` or
            :class:`~dolfinx_mbs.frames.Free`, or a body whose coupling matrices are not the
            mass matrix applied node by node.
    """

    def __init__(self, system: CoupledSystem) -> None:
        s = self.system = system
        for fr in s.frames:
            if not isinstance(fr, (Hinge, Free)):
                raise ValueError(f"formulation 'hamiltonian': frame {fr.name!r} is a "
                                 f"{type(fr).__name__}; Hinge and Free frames are supported")
        for p in s.parts:
            if not p.kron:
                raise ValueError(f"formulation 'hamiltonian': body {p.body.name!r} has coupling "
                                 "matrices that are not its mass matrix node by node")
        self._full = s.elastic_space.create_vec() if s.parts else None
        self._red = s.create_reduced_vec()

    @property
    def _elastic_full(self) -> PETSc.Vec:
        """The full-layout work vector, where the code has elastic bodies."""
        if self._full is None:
            raise RuntimeError("the coupled system has no elastic body (no full vector)")
        return self._full

    # -- the momenta and their rates --------------------------------------------------------------
    def _local(self, t: float, u: PETSc.Vec | None, ud: PETSc.Vec | None,
               udd: PETSc.Vec | None, jets: list, scale: float, rates: bool) -> list:
        """Per computed frame (P, H, P', H'), local components, H about the origin.

        Also ``scale`` M v - M v' of every elastic body in the full layout (``self._full``);
        without ``rates`` the rates are left out (zero).
        """
        s = self.system
        states = s.states(t, jets)
        n = len(s.frames)
        loc = np.zeros((n, 12))
        if s.parts:
            assert u is not None and ud is not None  # (the elastic bodies' fields)
            ua, uda = u.getArray(readonly=True), ud.getArray(readonly=True)
            udda = udd.getArray(readonly=True) if udd is not None else None
            fa = np.zeros(self._elastic_full.getLocalSize())
        for p, st in zip(s.parts, states):
            g = p.gdim
            x3 = p.X + _as3(ua[p.slice].reshape(-1, g), g)
            ud3 = _as3(uda[p.slice].reshape(-1, g), g)
            om = st.omega[None, :]
            vel = st.v_O[None, :] + _cross_rows(om, x3) + ud3
            vv, Mv = p.work("ham_v"), p.work("ham_Mv")
            vv.array[:] = vel[:, :g].reshape(-1)
            p.M.mult(vv, Mv)
            Mva = _as3(Mv.getArray(readonly=True).reshape(-1, g), g)
            out = scale * Mv.getArray(readonly=True)
            Mda = np.zeros_like(Mva)
            if rates:
                assert udda is not None  # (rates asked with the accelerations)
                dv = ((st.a_O - cross3(st.omega, st.v_O))[None, :]
                      + _cross_rows(st.alpha[None, :], x3) + _cross_rows(om, ud3)
                      + _as3(udda[p.slice].reshape(-1, g), g))
                vv.array[:] = dv[:, :g].reshape(-1)
                Mdv = p.work("ham_Mdv")
                p.M.mult(vv, Mdv)
                out = out - Mdv.getArray(readonly=True)
                Mda = _as3(Mdv.getArray(readonly=True).reshape(-1, g), g)
            fa[p.slice] = out
            if p.frame is not None:
                loc[p.frame] += np.concatenate([
                    Mva.sum(axis=0), _cross_rows(x3, Mva).sum(axis=0), Mda.sum(axis=0),
                    (_cross_rows(ud3, Mva) + _cross_rows(x3, Mda)).sum(axis=0)])
        if s.parts:
            self._elastic_full.setArray(fa)
            tot = np.empty_like(loc)
            s.comm.Allreduce(loc, tot, op=MPI.SUM)
            loc = tot
        for i, jet in enumerate(jets):
            st = jet.state
            for rb in s.rigid_on[i]:
                # P and H (about O) are linear in (v_O, omega): in a state at the global origin
                # with the frame's axes they are the local momenta, and with the rates (v_O' =
                # a_O - omega x v_O, omega' = alpha) their rates
                here = FrameState(t=t, R=np.eye(3), r_O=np.zeros(3), omega=st.omega,
                                  alpha=np.zeros(3), v_O=st.v_O, a_O=np.zeros(3))
                rate = FrameState(t=t, R=np.eye(3), r_O=np.zeros(3), omega=st.alpha,
                                  alpha=np.zeros(3), v_O=st.a_O - cross3(st.omega, st.v_O),
                                  a_O=np.zeros(3))
                P, H = rb.momenta(here)
                loc[i, :6] += np.concatenate([P, H])
                if rates:
                    Pd, Hd = rb.momenta(rate)
                    loc[i, 6:] += np.concatenate([Pd, Hd])
        return [(r[:3], r[3:6], r[6:9], r[9:]) for r in loc]

    def _mass(self, i: int) -> float:
        """The mass carried by computed frame ``i`` (elastic and rigid bodies)."""
        s = self.system
        return float(sum(p.mass for p in s.parts if p.frame == i)
                     + sum(rb.mass for rb in s.rigid_on[i]))

    @staticmethod
    def _global(st: FrameState, P: np.ndarray, H: np.ndarray, Pd: np.ndarray,
                Hd: np.ndarray) -> tuple:
        """(J, J') about the global origin, global components, of local (P, H, P', H')."""
        R = st.R
        PG = R @ P
        J = R @ H + cross3(st.r_O, PG)
        Jd = (R @ (Hd + cross3(st.omega, H)) + cross3(R @ st.v_O, PG)
              + cross3(st.r_O, R @ (Pd + cross3(st.omega, P))))
        return J, Jd

    def momenta(self, t: float, q: PETSc.Vec, v: PETSc.Vec, f: np.ndarray,
                p: PETSc.Vec) -> np.ndarray:
        """The momenta of the state (q, v, f): the elastic ones into ``p``, the frames' returned.

        Args:
            t: the time (s).
            q: the elastic coordinates.
            v: their rates.
            f: the frame unknowns.
            p: the reduced vector to fill with the elastic momenta.

        Returns:
            The frames' momenta (replicated), at their speeds' rows of ``f`` (zero elsewhere):
            a hinge's pi_j, a free frame's global linear momentum (its translation rows) and
            angular momentum J (3D: its three rotation rows; 2D: J_z at its rotation row).
        """
        s = self.system
        jets = s.jets(t, f, np.zeros_like(f))
        u = ud = None
        if s.parts:
            u = s.elastic_reducer.expand(q, out=s.full_work["u"])
            ud = s.elastic_reducer.expand_rate(q, v, out=s.full_work["ud"])
        loc = self._local(t, u, ud, None, jets, 1.0, False)
        if s.parts:
            s.elastic_reducer.project(self._full, p)
        pi = np.zeros(s.m)
        for i, (fr, ws, jet) in enumerate(zip(s.frames, s.wslice, jets)):
            P, H = loc[i][0], loc[i][1]
            if isinstance(fr, Free):
                J, _ = self._global(jet.state, P, H, np.zeros(3), np.zeros(3))
                nt = fr.n_translations
                pi[ws.start:ws.start + nt] = (jet.state.R @ P)[:nt]
                if fr.gdim == 3:
                    pi[ws.start + 3:ws.start + 6] = J
                else:
                    pi[ws.start + 2] = J[2]
            else:
                pi[ws] = jet.T.T @ P + jet.Om.T @ H
        return pi

    def residual(self, t: float, q: PETSc.Vec, v: PETSc.Vec, vd: PETSc.Vec, f: np.ndarray,
                 fd: np.ndarray, Fv: PETSc.Vec | None, shift: float, p0: PETSc.Vec,
                 pi0: np.ndarray) -> np.ndarray:
        """The rows at the step's midpoint, the momentum rows in Hamilton's form.

        The second-order rows with the momentum rows shift (Pi(y) - p0) + K(y) (the module
        docstring).

        Args:
            t: the time (s).
            q: the elastic coordinates.
            v: their rates.
            vd: the rates' rates.
            f: the frame unknowns.
            fd: their rates.
            Fv: the elastic rows (reduced), filled.
            shift: 2 / h (h the step).
            p0: the elastic momenta at the step's start.
            pi0: the frames' momenta at the step's start (:meth:`momenta`).

        Returns:
            The frames' rows (replicated).
        """
        s = self.system
        Ff, last = s.evaluate(t, q, v, vd, f, fd, Fv)
        loc = self._local(t, last["u"], last["ud"], last["udd"], last["jets"], shift, True)
        if s.parts and Fv is not None:
            red = s.elastic_reducer.project(self._full, self._red)
            Fv.axpy(1.0, red)
            Fv.axpy(-shift, p0)
        for i, (fr, ws, jet) in enumerate(zip(s.frames, s.wslice, last["jets"])):
            P, H, Pd, Hd = loc[i]
            st = jet.state
            if isinstance(fr, Free):
                nt, w0 = fr.n_translations, ws.start
                J, Jd = self._global(st, P, H, Pd, Hd)
                # -F_G from the translation rows m v_O' + pi_aux' - F_G, and the linear
                # momentum's rate of the state (pi_aux' is the scheme's, not the state's)
                As = s.aslice[i]
                Rt = st.R @ (Pd + cross3(st.omega, P))
                Rt[:nt] += Ff[w0:w0 + nt] - self._mass(i) * fd[w0:w0 + nt] - fd[As]
                Rr = Ff[w0 + 3:w0 + 6] if fr.gdim == 3 else np.array([0.0, 0.0, Ff[w0 + 2]])
                J0 = (pi0[w0 + 3:w0 + 6] if fr.gdim == 3
                      else np.array([0.0, 0.0, pi0[w0 + 2]]))
                K = st.R @ Rr + cross3(st.r_O, Rt) - Jd     # -M_G
                # less r_O x (the linear momentum's own midpoint row, which vanishes at the
                # solution): the rows are then those of the angular momentum about the frame's
                # origin, local, whose derivatives are the second-order rows' to O(dt) (the
                # bordered Newton step's Jacobian); about the global origin they would see
                # r_O x m v_O'
                P0 = np.zeros(3)
                P0[:nt] = pi0[w0:w0 + nt]
                FG = -(Rt - st.R @ (Pd + cross3(st.omega, P)))
                lin = shift * (st.R @ P - P0) - FG
                row = st.R.T @ (shift * (J - J0) + K - cross3(st.r_O, lin))
                if fr.gdim == 3:
                    Ff[w0 + 3:w0 + 6] = row
                else:
                    Ff[w0 + 2] = row[2]
            else:
                Ff[ws] += (shift * (jet.T.T @ P + jet.Om.T @ H - pi0[ws])
                           - (jet.T.T @ Pd + jet.Om.T @ Hd))
        return Ff

    def velocities(self, t: float, q: PETSc.Vec, v: PETSc.Vec, f: np.ndarray, p: PETSc.Vec,
                   pi: np.ndarray, solve: Callable[[PETSc.Vec, PETSc.Vec], None]) -> np.ndarray:
        """The velocities whose momenta are (p, pi) at the coordinates of (q, f).

        The momenta are affine in the velocities (v, the frames' speeds w): Pi_el = M_r v +
        sum_k E_k w_k + e0 and Pi_f = G v + F w + c0, with the columns E_k, F and e0, c0 from
        :meth:`momenta` at unit speeds and G y from :meth:`momenta` at the elastic velocity y.
        Eliminating v = M_r^-1 (p - e0 - sum_k E_k w_k) leaves the frames' speeds' small
        system. A free frame's auxiliary momenta follow from the new velocities.

        Args:
            t: the time (s).
            q: the elastic coordinates.
            v: their rates: set to the velocities of the momenta.
            f: the frame unknowns (their coordinates kept).
            p: the elastic momenta (reduced).
            pi: the frames' momenta (:meth:`momenta`'s layout).
            solve: ``solve(b, x)``: x = M_r^-1 b (M_r the reduced mass matrix).

        Returns:
            The frame unknowns with the speeds (and a free frame's auxiliary momenta) of the
            momenta.
        """
        s = self.system
        speeds = [j for ws in s.wslice for j in range(ws.start, ws.stop)]
        f0 = np.array(f, dtype=float)
        f0[speeds] = 0.0
        work = [v.duplicate() for _ in range(3)]
        zero, e0, tmp = work
        zero.zeroEntries()
        try:
            c0 = self.momenta(t, q, zero, f0, e0)
            cols, Fc = [], np.zeros((len(speeds), len(speeds)))
            for k, j in enumerate(speeds):
                fj = f0.copy()
                fj[j] = 1.0
                Ej = v.duplicate()
                work.append(Ej)
                Fc[:, k] = (self.momenta(t, q, zero, fj, Ej) - c0)[speeds]
                Ej.axpy(-1.0, e0)
                cols.append(Ej)
            rhs = (np.asarray(pi, dtype=float) - c0)[speeds]
            A = Fc
            y0 = None
            if s.parts:
                b = p.copy()
                work.append(b)
                b.axpy(-1.0, e0)
                y0 = v.duplicate()
                work.append(y0)
                solve(b, y0)

                def G(y: PETSc.Vec) -> np.ndarray:
                    return cast(np.ndarray, (self.momenta(t, q, y, f0, tmp) - c0)[speeds])

                Y = []
                for Ej in cols:
                    Yj = v.duplicate()
                    work.append(Yj)
                    solve(Ej, Yj)
                    Y.append(Yj)
                A = Fc - np.column_stack([G(Yj) for Yj in Y]) if Y else Fc
                rhs = rhs - G(y0)
            w = np.linalg.solve(A, rhs) if speeds else np.zeros(0)
            out = f0.copy()
            out[speeds] = w
            if s.parts:
                assert y0 is not None  # (solved above with the elastic bodies)
                y0.copy(v)
                for wk, Yj in zip(w, Y):
                    v.axpy(-float(wk), Yj)
            u = ud = None
            if s.parts:
                u = s.elastic_reducer.expand(q, out=s.full_work["u"])
                ud = s.elastic_reducer.expand_rate(q, v, out=s.full_work["ud"])
            jets = s.jets(t, out, np.zeros_like(out))
            for i, fr in enumerate(s.frames):
                if fr.momentum_balance:
                    st = jets[i].state
                    nt = fr.n_translations
                    out[s.aslice[i]] = (st.R @ s._momentum(i, st, u, ud)["p_rel"])[:nt]
            return out
        finally:
            for x in work:
                x.destroy()

    # -- the exact Newton step: what its Jacobian adds to the second-order form's ------------
    def elastic_states(self) -> list:
        """The elastic bodies' states of the last residual with no angular acceleration.

        Returns:
            One state per elastic body: its elastic rows' block in Hamilton's form is the
            second-order form's without the angular acceleration's coupling, c_E(alpha) (the
            momenta's rate holds it; the module docstring).
        """
        last = self.system._last
        assert last is not None  # (the state of the last residual)
        return [dataclasses.replace(st, alpha=np.zeros(3)) for st in last["states"]]

    def correct_rates(self, rq: PETSc.Vec, g: PETSc.Vec) -> None:
        """Take A^T M (omega x A rq) off the bordered solve's right-hand side ``g``.

        The elastic rows' column of the rates in Hamilton's form is the second-order form's
        less M omega x.

        Args:
            rq: the kinematic rows' residual q' - v (reduced).
            g: the elastic rows' right-hand side (reduced), updated.
        """
        s = self.system
        if not s.parts:
            return
        assert s._last is not None  # (the state of the last residual)
        full = s.elastic_reducer.expand(rq, out=self._full, homogeneous=True)
        fa = full.getArray(readonly=True).copy()
        for p, st in zip(s.parts, s._last["states"]):
            if not np.any(st.omega):
                fa[p.slice] = 0.0
                continue
            y, My = p.work("ham_y"), p.work("ham_My")
            y.array[:] = fa[p.slice]
            p.M.mult(y, My)
            g_ = p.gdim
            fa[p.slice] = _cross_rows(st.omega[None, :], _as3(
                My.getArray(readonly=True).reshape(-1, g_), g_))[:, :g_].reshape(-1)
        self._elastic_full.setArray(fa)
        g.axpy(-1.0, s.elastic_reducer.project(self._full, self._red))

    def _rows(self, i: int, jet: Any) -> list:
        """Frame ``i``'s momentum rows: (row, T_c, Om_c, free) per row.

        T_c + Om_c x x is the rigid field whose momentum pi_c the row balances (constant).
        """
        fr, ws = self.system.frames[i], self.system.wslice[i]
        if isinstance(fr, Free):
            if fr.gdim == 3:
                return [(ws.start + 3 + k, np.zeros(3), np.eye(3)[k], True) for k in range(3)]
            return [(ws.start + 2, np.zeros(3), np.eye(3)[2], True)]
        return [(ws.start + j, jet.T[:, j].copy(), jet.Om[:, j].copy(), False)
                for j in range(jet.Om.shape[1])]

    def _columns(self, i: int, jet: Any, s_: float) -> list:
        """Frame ``i``'s unknowns as columns: (column, a, b, d omega, d v_O).

        The column's field of J(s) (s v - v') is a + b x x - d omega x u' (the module
        docstring), its velocity field d v_O + d omega x x.
        """
        s = self.system
        st = jet.state
        out = []
        for which, sl in (("z", s.zslice[i]), ("w", s.wslice[i])):
            d = jet.dz if which == "z" else jet.dw
            for c, col in enumerate(range(sl.start, sl.stop)):
                dom, dvo = d["omega"][:, c], d["v_O"][:, c]
                dao, dal = d["a_O"][:, c].copy(), d["alpha"][:, c].copy()
                if which == "w":    # w' moves with w in the TS's shift
                    dao += s_ * jet.T[:, c]
                    dal += s_ * jet.Om[:, c]
                a = s_ * dvo - dao + cross3(dom, st.v_O) + cross3(st.omega, dvo)
                b = s_ * dom - dal
                out.append((col, a, b, dom, dvo))
        return out

    def correct(self, t: float, shift: float, der: Any, pi0: np.ndarray) -> None:
        """Turn the second-order form's bordered pieces into those of Hamilton's rows.

        At the last residual's state, the derivatives of shift Pi(y) - Pi'(y, y') are added to
        the momentum rows' (the module docstring's exact Newton step).

        Args:
            t: the time (s).
            shift: the TS shift (2 / h).
            der: the :class:`~dolfinx_mbs.systems.coupled.FrameDerivatives`, updated.
            pi0: the frames' momenta at the step's start (:meth:`momenta`).
        """
        s, s_ = self.system, shift
        last = s._last
        assert last is not None  # (the state of the last residual)
        jets = last["jets"]
        m = s.m
        rows = [self._rows(i, jet) for i, jet in enumerate(jets)]
        cols = [self._columns(i, jet, s_) for i, jet in enumerate(jets)]
        # the frames' momenta (local, about O) for the free frames' rows
        PH = self._local(t, last["u"], last["ud"], None, jets, 1.0, False) if any(
            isinstance(fr, Free) for fr in s.frames) else None
        Dloc = np.zeros((m, m))
        nC = {}
        if s.parts:
            ua = last["u"].getArray(readonly=True)
            uda = last["ud"].getArray(readonly=True)
            udda = last["udd"].getArray(readonly=True)
            Bfull = {}
        for p, st in zip(s.parts, last["states"]):
            if p.frame is None:
                continue
            i, g = p.frame, p.gdim
            prods = []
            for key, arr in (("u", ua), ("ud", uda), ("udd", udda)):
                y, My = p.work(("ham_in", key)), p.work(("ham_out", key))
                y.array[:] = arr[p.slice]
                p.M.mult(y, My)
                prods.append(_as3(My.getArray(readonly=True).reshape(-1, g), g))
            Mu, Mud, Mudd = prods
            Mx = Mu + _as3(p.MX.getArray(readonly=True).reshape(-1, g), g)
            mn = p.Mt[0].getArray(readonly=True)[0::g]
            x3 = p.X + _as3(ua[p.slice].reshape(-1, g), g)
            ud3 = _as3(uda[p.slice].reshape(-1, g), g)
            om, al = st.omega[None, :], st.alpha[None, :]
            Mv = mn[:, None] * st.v_O[None, :] + _cross_rows(om, Mx) + Mud
            Mvd = (mn[:, None] * (st.a_O - cross3(st.omega, st.v_O))[None, :]
                   + _cross_rows(al, Mx) + _cross_rows(om, Mud) + Mudd)
            # the columns' vectors (one row each): a, b, d omega, d v_O
            cix = [c[0] for c in cols[i]]
            ca, cb, cdom, cdvo = (np.array([c[k] for c in cols[i]]).reshape(-1, 3)
                                  for k in range(1, 5))
            # the elastic rows' columns: A^T M (a + b x x - d omega x u'), all at once
            # (b x y = y @ skew(b)^T for the rows y of a nodal field)
            Fel = (mn[None, :, None] * ca[:, None, :] + Mx @ _skews(cb).transpose(0, 2, 1)
                   - Mud @ _skews(cdom).transpose(0, 2, 1))
            for c, col in enumerate(cix):
                acc = Bfull.setdefault(col, np.zeros(self._elastic_full.getLocalSize()))
                acc[p.slice] += Fel[c][:, :g].reshape(-1)

            def field(T_c: np.ndarray, Om_c: np.ndarray) -> tuple:
                Mw = mn[:, None] * T_c[None, :] + _cross_rows(Om_c[None, :], Mx)
                return Mw, _cross_rows(Om_c[None, :], Mud)

            def moments(y: np.ndarray) -> tuple:
                # (sum y_n, sum x_n x y_n, sum u'_n x y_n): y . (a + b x x - d omega x u')
                # summed over the nodes is a . sum y + b . sum x x y - d omega . sum u' x y
                return (y.sum(axis=0), _cross_rows(x3, y).sum(axis=0),
                        _cross_rows(ud3, y).sum(axis=0))

            for row, T_c, Om_c, free in rows[i]:
                # s pi_c - pi_c', pi_c = w_c . M v, pi_c' = w_c . M v' + (Om_c x u') . M v
                Mw, MOu = field(T_c, Om_c)
                dC = (-_cross_rows(Mw, al) - _cross_rows(Mvd, Om_c[None, :])
                      - _cross_rows(MOu, om) - s_ * MOu)
                dCv = -_cross_rows(Mw, om) - _cross_rows(Mv, Om_c[None, :]) - MOu
                # sum_n Mw . (a + b x x - d omega x u') - MOu . (d v_O + d omega x x)
                sw, xw, uw = moments(Mw)
                so, xo, _ = moments(MOu)
                Dloc[row, cix] += ca @ sw + cb @ xw - cdom @ uw - (cdvo @ so + cdom @ xo)
                if free:
                    # less the derivatives of e_k . (omega x H + v_O x P): the momentum of
                    # the field (e_k x v_O) + (e_k x omega) x x
                    e = Om_c
                    Tb, Ob = cross3(e, st.v_O), cross3(e, st.omega)
                    Mwb, _ = field(Tb, Ob)
                    dC -= _cross_rows(Mv, Ob[None, :]) + _cross_rows(Mwb, om) + s_ * Mwb
                    dCv -= Mwb
                    sb, xb, _ = moments(Mwb)
                    Dloc[row, cix] -= cdvo @ sb + cdom @ xb
                for vec, arr in ((0, dC), (1, dCv)):
                    acc = nC.setdefault((row, vec), np.zeros(self._elastic_full.getLocalSize()))
                    acc[p.slice] += arr[:, :g].reshape(-1)
        if s.parts:
            tot = np.empty_like(Dloc)
            s.comm.Allreduce(Dloc, tot, op=MPI.SUM)
            der.D += tot
            for col, arr in Bfull.items():
                self._elastic_full.setArray(arr)
                der.B[col].axpy(1.0, s.elastic_reducer.project(self._full, self._red))
            for (row, vec), arr in nC.items():
                self._elastic_full.setArray(arr)
                target = der.C[row] if vec == 0 else der.Cv[row]
                target.axpy(1.0, s.elastic_reducer.project(self._full, self._red))
        # rigid bodies (replicated): their momenta are linear in (v_O, omega)
        for i, jet in enumerate(jets):
            for rb in s.rigid_on[i]:
                for row, T_c, Om_c, free in rows[i]:
                    for col, a, b, dom, dvo in cols[i]:
                        P, H = rb.momenta(_at_origin(t, a, b))
                        der.D[row, col] += T_c @ P + Om_c @ H
                        if free:
                            P, H = rb.momenta(_at_origin(t, dvo, dom))
                            st = jet.state
                            der.D[row, col] -= (cross3(Om_c, st.v_O) @ P
                                                + cross3(Om_c, st.omega) @ H)
        # a free frame's rows: less e_k . (d omega x H + d v_O x P) and
        # s d/dz [R^T (J0 - r_O x P0)]
        for i, (fr, jet) in enumerate(zip(s.frames, jets)):
            if not isinstance(fr, Free):
                continue
            assert PH is not None  # (formed when a frame is Free)
            P, H = PH[i][0], PH[i][1]
            st = jet.state
            w0, zs, nt = s.wslice[i].start, s.zslice[i], fr.n_translations
            P0 = np.zeros(3)
            P0[:nt] = pi0[w0:w0 + nt]
            J0 = (pi0[w0 + 3:w0 + 6] if fr.gdim == 3
                  else np.array([0.0, 0.0, pi0[w0 + 2]]))
            dz = -s_ * (skew(st.R.T @ (J0 - cross3(st.r_O, P0))) @ jet.dphi_dz
                        + st.R.T @ skew(P0) @ jet.drO_dz)
            for row, _, e, _ in rows[i]:
                k = int(np.argmax(e))
                der.D[row, zs] += dz[k]
                for col, _, _, dom, dvo in cols[i]:
                    der.D[row, col] -= e @ (cross3(dom, H) + cross3(dvo, P))

    def destroy(self) -> None:
        """Release the work vectors (collective)."""
        for x in (self._full, self._red):
            if x is not None:
                x.destroy()
