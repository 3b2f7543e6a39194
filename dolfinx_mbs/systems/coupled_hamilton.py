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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.frames.base import FrameState, cross3
from dolfinx_mbs.frames.computed import Free, Hinge
from dolfinx_mbs.systems.coupled import _as3, _cross_rows

if TYPE_CHECKING:
    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["HamiltonForm"]


class HamiltonForm:
    """The momentum rows of a coupled system in Hamilton's form (see the module docstring).

    Args:
        system: the coupled system.

    Raises:
        ValueError: joints or motors (their rows are not written in Hamilton's form yet), a
            computed frame other than a :class:`~dolfinx_mbs.frames.Hinge` or
            :class:`~dolfinx_mbs.frames.Free`, or a body whose coupling matrices are not the
            mass matrix applied node by node.
    """

    def __init__(self, system: CoupledSystem) -> None:
        s = self.system = system
        if s.jointset.n_unknowns or s.jointset.active:
            raise ValueError("formulation 'hamiltonian': joints, springs and motors between "
                             "computed frames are not supported yet; use 'second-order' or "
                             "'first-order'")
        for fr in s.frames:
            if not isinstance(fr, (Hinge, Free)):
                raise ValueError(f"formulation 'hamiltonian': frame {fr.name!r} is a "
                                 f"{type(fr).__name__}; Hinge and Free frames are supported")
        for p in s.parts:
            if not p.kron:
                raise ValueError(f"formulation 'hamiltonian': body {p.body.name!r} has coupling "
                                 "matrices that are not its mass matrix node by node")
        self._full = s.space.create_vec() if s.parts else None
        self._red = s.create_reduced_vec()

    # -- the momenta and their rates --------------------------------------------------------------
    def _local(self, t: float, u: PETSc.Vec | None, ud: PETSc.Vec | None,
               udd: PETSc.Vec | None, jets: list, scale: float, rates: bool) -> tuple:
        """Per computed frame (P, H, P', H'), local components, H about the origin.

        Also ``scale`` M v - M v' of every elastic body in the full layout (``self._full``);
        without ``rates`` the rates are left out (zero).
        """
        s = self.system
        states = s.states(t, jets)
        n = len(s.frames)
        loc = np.zeros((n, 12))
        if s.parts:
            ua, uda = u.getArray(readonly=True), ud.getArray(readonly=True)
            udda = udd.getArray(readonly=True) if udd is not None else None
            fa = np.zeros(self._full.getLocalSize())
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
            self._full.setArray(fa)
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
        return (sum(p.mass for p in s.parts if p.frame == i)
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
            u = s.reducer.expand(q, out=s._full["u"])
            ud = s.reducer.expand_rate(q, v, out=s._full["ud"])
        loc = self._local(t, u, ud, None, jets, 1.0, False)
        if s.parts:
            s.reducer.project(self._full, p)
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
            red = s.reducer.project(self._full, self._red)
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

    def destroy(self) -> None:
        """Release the work vectors (collective)."""
        for x in (self._full, self._red):
            if x is not None:
                x.destroy()
