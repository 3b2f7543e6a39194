"""The coupled rigid-elastic equations in small dense arrays: each elastic body's inertia
invariants projected once onto its reduced coordinates, the rows formed per step from them.

:class:`~dolfinx_mbs.systems.coupled.CoupledSystem` forms its elastic terms with the bodies'
PETSc operators at every evaluation (docs/theory.md section 8). Where the elastic unknowns are
few (reduced bodies, a small mesh) every one of those terms is a small polynomial in the
reduced coordinates q, their rates and the frame state, whose coefficients are products of the
same assembled matrices with a few fields. With u = T q (T the reduced coordinates' full
fields, :meth:`~dolfinx_mbs.systems.coupled.CoupledSystem.expand` of the unit vectors) and the
fields Z = [X, t_1 .. t_g, T] of a body (its nodes' positions, the unit translations, the
reduced fields), the coupling matrices c_E = M (I kron E) of the package's forms
(``forms.inertia_coupling``, assembled as ``BodyOperators.coupling_matrices``) give the one
invariant

    P(E) = Z^T c_E Z        ((1 + g + n) x (1 + g + n), one per basis matrix E of
                             ``assembly.operators.coupling_basis``: 4 in 2D, 9 in 3D),

linear in E, so that P(W) = sum_E coeff_E(W) P(E) for any 3 x 3 W. Every term of the coupled
rows is a contraction of P(W) with coefficient vectors of x = X + u = Z xi, xi = (1, 0, q):

    elastic rows   T^T e = P(I) b0 + P(W_g) b_g + P(W_k) xi   (T rows),
                   b0 = (0, a_O - g_loc, q''), b_g = (0, 0, q'),
                   W_g = 2 skew(omega), W_k = skew(omega)^2 + skew(alpha)
                   (the mass matrix, Coriolis, centrifugal and Euler terms, the base and
                   gravity loads: the rows of ``CoupledSystem._body_terms``), with K_r q,
                   the prestress cases' sum of c_case P_case,r q and D_r q' (T^T K T, ...)
    resultant      t_k^T e (the t rows of the same product): m a_O + alpha x s + ...
    moment about O sum_n x_n x e_n = -sum_W xi^T P(skew(e_k) W) b_W  (k = 1..3; z in 2D):
                   the inertia tensor's dependence on q, linear and quadratic, and the
                   rigid-elastic coupling are these contractions

and the energies and momenta of :func:`~dolfinx_mbs.systems.coupled.monitors` likewise. The
frames' own rows, their kinematics, rigid bodies, applied frame loads and the prestress
coefficients are :class:`CoupledSystem`'s (numpy already). The Jacobian is exact: every
derivative is a contraction of the same invariants (the derivatives of W by the frame state
as in ``CoupledSystem._state_columns``).

What the dense form takes (:func:`dense_reason` names what it does not): elastic bodies on
computed frames whose partial velocities are constant (:class:`~dolfinx_mbs.frames.Hinge`),
with constant applied loads and gravity, prestress and Rayleigh damping, time-invariant
constraints; rigid bodies and applied frame loads; no joints, motors or springs, no bodies on
prescribed frames, no nonlinear strain. Everything here is replicated on every rank (the
invariants are reduced over the ranks once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Tuple

import numpy as np
from mpi4py import MPI

from dolfinx_mbs.assembly.operators import coupling_basis
from dolfinx_mbs.frames.base import FrameState, cross3, skew
from dolfinx_mbs.frames.computed import FrameJet

if TYPE_CHECKING:
    from petsc4py import PETSc

    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["DenseCoupled", "dense_reason"]

_E = np.eye(3)
_S = [skew(_E[k]) for k in range(3)]
STATE_VARS = ("omega", "alpha", "a_O", "g_loc")


def dense_reason(system: CoupledSystem) -> str | None:
    """Why the coupled ``system`` cannot be stepped in dense form, or None.

    Args:
        system: the coupled system.

    Returns:
        The reason in words, or None.
    """
    s = system
    if s.jointset.active:
        return "joints, motors or springs between computed frames"
    if any(not getattr(fr, "constant_partials", False) or fr.momentum_balance
           for fr in s.frames):
        return "free frames (Free)"
    if not s.parts:
        return None
    if s.assembly.nonlinear:
        return "nonlinear strain (stiffening='nonlinear')"
    if s.reducer.time_dependent:
        return "constraints that move in time"
    for p in s.parts:
        if p.frame is None:
            return f"body {p.body.name!r} on a prescribed frame"
        if not p.kron:
            return f"body {p.body.name!r}: its mass matrix has terms of its own"
        terms = p.ops.loads.unit_terms()
        accel = p.ops.loads.unit_loads["accel"]
        if terms is None or any(units is not accel for _, units, _ in terms):
            return (f"body {p.body.name!r}: loads that change in time (body forces, tractions, "
                    "point loads or a user load with an update)")
    return None


class _Invariants:
    """One elastic body's projected invariants (see the module docstring)."""

    def __init__(self, system: CoupledSystem, p: Any, T: np.ndarray) -> None:
        comm = system.comm
        g, n = p.gdim, T.shape[1]
        self.g, self.n, self.frame, self.body = g, n, p.frame, p.body
        self.nz = nz = 1 + g + n
        ops = p.ops
        x, y = p.vec(), p.vec()
        Xf = p.X[:, :g].reshape(-1)
        cols = [Xf] + [np.tile(_E[k, :g], p.n // g) for k in range(g)] + [T[:, i]
                                                                          for i in range(n)]
        Zloc = np.array(cols).T                         # local rows of Z
        basis = coupling_basis(g)

        def gram(A: PETSc.Mat) -> np.ndarray:
            out = np.zeros((nz, nz))
            for j in range(nz):
                x.array[:] = Zloc[:, j]
                A.mult(x, y)
                out[:, j] = Zloc.T @ y.getArray(readonly=True)
            return out
        loc = np.array([gram(B) for _, B in p.basis])  # Z^T c_E Z, the package's matrices
        P = np.empty_like(loc)
        comm.Allreduce(loc, P, op=MPI.SUM)
        # P(E_ab) for the unit matrices: P(W) = sum_ab W_ab Pe[a, b]
        self.Pe = np.zeros((3, 3, nz, nz))
        for a in range(g):
            for b in range(g):
                Eab = np.zeros((3, 3))
                Eab[a, b] = 1.0
                self.Pe[a, b] = sum(coeff(Eab) * Pk for (coeff, _), Pk in zip(basis, P))
        self.T = slice(1 + g, nz)
        self.t = slice(1, 1 + g)
        #: the stack P(E_ab) over the g x g unit matrices, flattened (g^2, nz, nz)
        self.Pe2 = np.ascontiguousarray(self.Pe[:g, :g].reshape(g * g, nz, nz))
        #: the moments' components: z alone in 2D
        self.ks = (2,) if g == 2 else (0, 1, 2)

        def reduced(A: PETSc.Mat | None) -> np.ndarray:
            if A is None:
                return np.zeros((n, n))
            out = np.zeros((n, n))
            for j in range(n):
                x.array[:] = T[:, j]
                A.mult(x, y)
                out[:, j] = T.T @ y.getArray(readonly=True)
            return comm.allreduce(out)
        self.K = reduced(ops.K)
        self.D = reduced(ops.D)
        self.cases = [case for case, _ in ops.prestress_matrices]
        self.P_cases = [reduced(Pm) for _, Pm in ops.prestress_matrices]
        # the constant applied loads (gravity apart): T^T f, their resultant and moment
        # about O at x = X + T q: m0 + Mq q
        st0 = system.frames[p.frame].state(0.0)
        p.body.set_state(st0)
        app = ops.loads.applied_at(st0).getArray(readonly=True).copy()
        gl = p.body.gravity_local.value[:g] if hasattr(p.body, "gravity_local") else None
        if gl is not None:
            for k in range(g):
                if gl[k] != 0.0:
                    app -= float(gl[k]) * p.Mt[k].getArray(readonly=True)
        fa = app.reshape(-1, g)
        f3 = np.zeros((fa.shape[0], 3))
        f3[:, :g] = fa
        T3 = np.zeros((fa.shape[0], 3, n))
        T3[:, :g, :] = T.reshape(-1, g, n)
        self.app_T = comm.allreduce(T.T @ app)
        self.app_F = comm.allreduce(f3.sum(axis=0))
        self.app_M0 = comm.allreduce(np.cross(p.X, f3).sum(axis=0))
        # sum_n (T_n q) x f_n = Mq q: column i is sum_n T_n e_i x f_n
        Mq = np.zeros((3, n))
        for i in range(n):
            Mq[:, i] = np.cross(T3[:, :, i], f3).sum(axis=0)
        self.app_Mq = comm.allreduce(Mq)
        self.mass = p.mass
        for v in (x, y):
            v.destroy()

    def P(self, W: np.ndarray) -> np.ndarray:
        """The invariant of ``W``: the sum over a, b of W_ab times the one of E_ab."""
        g = self.g
        return np.tensordot(W[:g, :g], self.Pe[:g, :g], 2)


class DenseCoupled:
    """The coupled equations of ``system`` on the projected invariants (module docstring).

    Collective at construction (the projections); every method after it is local.

    Args:
        system: the coupled system (:func:`dense_reason` None).
    """

    def __init__(self, system: CoupledSystem) -> None:
        why = dense_reason(system)
        if why is not None:
            raise ValueError(f"the dense coupled form does not take {why}")
        self.system = s = system
        self.n = s.n_reduced
        self.m = s.m
        self.N = 2 * self.n + self.m
        T = self._basis() if s.parts else None
        self.inv: List[_Invariants] = [
            _Invariants(s, p, T[p.slice]) for p in s.parts] if s.parts else []
        self.gravity = s.gravity

    def _basis(self) -> np.ndarray:
        """The full fields of the reduced unit vectors (local rows, all columns)."""
        s = self.system
        q = s.create_reduced_vec()
        full = s.space.create_vec()
        r0, r1 = q.getOwnershipRange()
        cols = []
        for i in range(self.n):
            q.zeroEntries()
            if r0 <= i < r1:
                q.setValue(i, 1.0)
            q.assemble()
            s.expand(q, out=full, homogeneous=True)
            cols.append(full.getArray(readonly=True).copy())
        q.destroy()
        full.destroy()
        return np.array(cols).T if cols else np.zeros((0, 0))

    # -- the residual and its Jacobian ------------------------------------------------------
    def split(self, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, v, f) views of a state vector.

        Args:
            y: the state (q, v, f).

        Returns:
            The three views.
        """
        n = self.n
        return y[:n], y[n:2 * n], y[2 * n:]

    def residual(self, t: float, y: np.ndarray, yd: np.ndarray, shift: float | None = None
                 ) -> Tuple[np.ndarray, np.ndarray | None]:
        """The residual F(t, y, y') of :class:`CoupledProblem`'s TS vector, and with ``shift``
        its Jacobian dF/dy + shift dF/dy'.

        Args:
            t: the time (s).
            y: the state (q, v, f).
            yd: its rate.
            shift: the Jacobian's shift, or None for the residual alone.

        Returns:
            (F, J or None).
        """
        s, n = self.system, self.n
        q, v, f = self.split(y)
        qd, vd, fd = self.split(yd)
        F = np.zeros(self.N)
        F[:n] = qd - v
        jac = shift is not None
        J = np.zeros((self.N, self.N)) if jac else None
        if jac:
            J[:n, :n] = shift * np.eye(n)
            J[:n, n:2 * n] = -np.eye(n)
        jets = s.jets(t, f, fd)
        Ff = F[2 * n:]
        for i, (fr, zs, ws, jet) in enumerate(zip(s.frames, s.zslice, s.wslice, jets)):
            Ff[zs] += fd[zs] - fr.rates(f[zs], f[ws])
            rows = np.zeros(fr.n_speeds)
            for rb in s.rigid_on[i]:
                Fr, Mr = rb.forces(jet.state, s.gravity)
                rows += jet.T.T @ Fr + jet.Om.T @ Mr
            rows -= s.generalized_loads(t, i, f, jet)
            Ff[ws] += rows
            if jac:
                Jz, Jw = fr.rates_jacobian(f[zs], f[ws])
                o = 2 * n
                J[o + zs.start:o + zs.stop, o + zs.start:o + zs.stop] += (
                    shift * np.eye(fr.n_coordinates) - Jz)
                J[o + zs.start:o + zs.stop, o + ws.start:o + ws.stop] -= Jw
                self._rigid_jacobian(i, jet, shift, J)
                if s.loads_on[i]:
                    s.set_unknowns(f, fd)
                    J[o + ws.start:o + ws.stop, o:] += s._load_derivative(t, i, shift, jet)
        for inv in self.inv:
            self._body(t, inv, q, v, vd, f, jets[inv.frame], shift, F, J)
        return F, J

    def _rigid_jacobian(self, i: int, jet: FrameJet, shift: float, J: np.ndarray) -> None:
        s, n = self.system, self.n
        st = jet.state
        o = 2 * n
        ws = s.wslice[i]
        for rb in s.rigid_on[i]:
            d = rb.force_derivatives(st)
            for which, sl in (("z", s.zslice[i]), ("w", ws), ("wd", ws)):
                acc = np.zeros((6, sl.stop - sl.start))
                for var in ("omega", "alpha", "a_O"):
                    acc += d[var] @ s._chain(jet, st, var, which)
                if s.gravity is not None:
                    acc += d["g_loc"] @ s._chain(jet, st, "g_loc", which)
                rows = jet.T.T @ acc[:3] + jet.Om.T @ acc[3:]
                J[o + ws.start:o + ws.stop, o + sl.start:o + sl.stop] += rows * (
                    shift if which == "wd" else 1.0)

    def _body(self, t: float, inv: _Invariants, q: np.ndarray, v: np.ndarray, vd: np.ndarray,
              f: np.ndarray, jet: FrameJet, shift: float | None, F: np.ndarray,
              J: np.ndarray | None) -> None:
        """Add one body's terms: its elastic rows and its share of its frame's rows.

        Every product is a contraction of the invariants' stack Pe (g^2 x nz x nz) with the
        coefficient vectors b of the fields (b0, b_g, xi): Pb = Pe b (g^2 x nz) once per
        field, then P(W) b = vec(W) Pb and xi^T P(W) b = vec(W) . (Pb xi) for any W."""
        s, n = self.system, self.n
        st = jet.state
        g, nz, Ts, ts_ = inv.g, inv.nz, inv.T, inv.t
        body = inv.body
        Sw = skew(st.omega)
        Wg = 2.0 * Sw
        Wk = Sw @ Sw + skew(st.alpha)
        gl = st.R.T @ self.gravity if self.gravity is not None else np.zeros(3)
        xi = np.zeros(nz)
        xi[0] = 1.0
        xi[Ts] = q
        b0 = np.zeros(nz)
        b0[ts_] = (st.a_O - gl)[:g]
        b0[Ts] = vd
        bg = np.zeros(nz)
        bg[Ts] = v
        Pe = inv.Pe2                                   # (g^2, nz, nz)
        B = np.stack([b0, bg, xi], axis=1)             # (nz, 3)
        Pb = Pe @ B                                    # (g^2, nz, 3): P(E_ab) b_r
        Wv = np.stack([_E[:g, :g].ravel(), Wg[:g, :g].ravel(), Wk[:g, :g].ravel()])  # (3, g^2)
        eZ = np.einsum("ra,anr->n", Wv, Pb)
        cs = [body.prestress_coefficient(case, st) for case in inv.cases]
        Kq = inv.K.copy()
        for c, Pc in zip(cs, inv.P_cases):
            if c != 0.0:
                Kq += c * Pc
        F[n:2 * n] += eZ[Ts] - inv.app_T + Kq @ q + inv.D @ v
        Sf = np.zeros(3)
        Sf[:g] = eZ[ts_]
        Sf -= inv.app_F
        C = np.einsum("anr,n->ar", Pb, xi)             # xi^T P(E_ab) b_r, (g^2, 3)
        ks = inv.ks
        SW = {k: np.stack([(_S[k][:g, :g] @ W.reshape(g, g)).ravel() for W in Wv])
              for k in ks}                               # vec(S_k W_r), (3, g^2)
        Mom = np.zeros(3)
        for k in ks:
            Mom[k] = -np.einsum("ra,ar->", SW[k], C)
        Mom -= inv.app_M0 + inv.app_Mq @ q
        i = inv.frame
        ws, zs = s.wslice[i], s.zslice[i]
        o = 2 * n
        rows = slice(o + ws.start, o + ws.stop)
        F[rows] += jet.T.T @ Sf + jet.Om.T @ Mom
        if J is None:
            return
        Q, V = slice(0, n), slice(n, 2 * n)
        PW = np.einsum("ra,anm->rnm", Wv, Pe)          # P(I), P(W_g), P(W_k)
        PI, Pg, Pk = PW
        J[n:2 * n, Q] += Pk[Ts, Ts] + Kq
        J[n:2 * n, V] += Pg[Ts, Ts] + inv.D + shift * PI[Ts, Ts]
        dS_dq = np.zeros((3, n))
        dS_dv = np.zeros((3, n))
        dS_dq[:g] = Pk[ts_, Ts]
        dS_dv[:g] = Pg[ts_, Ts] + shift * PI[ts_, Ts]
        xP = np.einsum("n,anm->am", xi, Pe)            # xi^T P(E_ab), (g^2, nz)
        dM_dq = np.zeros((3, n))
        dM_dv = np.zeros((3, n))
        for k in ks:
            # xi on the left of every term, and b_k = xi on the right of the last
            left = np.einsum("ra,anr->n", SW[k], Pb)
            right = SW[k] @ xP                          # (3, nz): xi^T P(S_k W_r)
            dM_dq[k] = -(left[Ts] + right[2, Ts])
            dM_dv[k] = -(right[1, Ts] + shift * right[0, Ts])
        dM_dq -= inv.app_Mq
        J[rows, Q] += jet.T.T @ dS_dq + jet.Om.T @ dM_dq
        J[rows, V] += jet.T.T @ dS_dv + jet.Om.T @ dM_dv
        # by the state variables: d eZ/d var (nz x 3), d Mom/d var (3 x 3)
        dE, dMo = {}, {}
        for var in ("omega", "alpha"):
            cols = np.zeros((nz, 3))
            mcol = np.zeros((3, 3))
            for j in range(3):
                pairs: List[Tuple[np.ndarray, int]] = (
                    [(2.0 * _S[j], 1), (_S[j] @ Sw + Sw @ _S[j], 2)] if var == "omega"
                    else [(_S[j], 2)])
                for dW, r in pairs:
                    w = dW[:g, :g].ravel()
                    cols[:, j] += w @ Pb[:, :, r]
                    for k in ks:
                        mcol[k, j] -= (_S[k][:g, :g] @ dW[:g, :g]).ravel() @ C[:, r]
            dE[var], dMo[var] = cols, mcol
        for var, sign in (("a_O", 1.0), ("g_loc", -1.0)):
            cols = np.zeros((nz, 3))
            mcol = np.zeros((3, 3))
            cols[:, :g] = sign * PI[:, 1:1 + g]
            for k in ks:
                mcol[k, :g] = -sign * (SW[k][0] @ xP[:, 1:1 + g])
            dE[var], dMo[var] = cols, mcol
        pre = [s._prestress_coefficient_derivative(case, st) for case in inv.cases]
        Pq = [Pc @ q for Pc in inv.P_cases]
        for which, sl in (("z", zs), ("w", ws), ("wd", ws)):
            k_ = sl.stop - sl.start
            dEl = np.zeros((nz, k_))
            dMl = np.zeros((3, k_))
            dKq = np.zeros((n, k_))
            for var in STATE_VARS:
                ch = s._chain(jet, st, var, which)
                if not ch.any():
                    continue
                dEl += dE[var] @ ch
                dMl += dMo[var] @ ch
                for d, pq in zip(pre, Pq):
                    dKq += np.outer(pq, d[var] @ ch)
            scale = shift if which == "wd" else 1.0
            cols_ = slice(o + sl.start, o + sl.stop)
            J[n:2 * n, cols_] += scale * (dEl[Ts] + dKq)
            dSf = np.zeros((3, k_))
            dSf[:g] = dEl[ts_]
            J[rows, cols_] += scale * (jet.T.T @ dSf + jet.Om.T @ dMl)

    # -- what a run records ------------------------------------------------------------------
    def monitors(self, t: float, q: np.ndarray, v: np.ndarray, f: np.ndarray) -> dict:
        """The energies and momenta of :func:`~dolfinx_mbs.systems.coupled.monitors` from
        the invariants (no PETSc product).

        Args:
            t: the time (s).
            q: the reduced coordinates.
            v: their rates.
            f: the frame unknowns.

        Returns:
            As :func:`~dolfinx_mbs.systems.coupled.monitors`.
        """
        s = self.system
        jets = s.jets(t, f, np.zeros_like(f))
        T = Vel = Vg = 0.0
        P, H = np.zeros(3), np.zeros(3)
        for inv, p in zip(self.inv, s.parts):
            st = jets[inv.frame].state
            g, nz, Ts, ts_ = inv.g, inv.nz, inv.T, inv.t
            xi = np.zeros(nz)
            xi[0] = 1.0
            xi[Ts] = q
            bv = np.zeros(nz)
            bv[Ts] = v
            Sw = skew(st.omega)
            PI = inv.P(_E)
            # the velocity field v_O + omega x x + u': its nodal coefficients are
            # v_O (on the unit translations) and u'; omega x x is (I kron S_w) x
            vO = np.zeros(nz)
            vO[ts_] = st.v_O[:g]
            lin = vO + bv
            T += 0.5 * (lin @ PI @ lin + 2.0 * xi @ inv.P(Sw.T) @ lin
                        + xi @ inv.P(Sw.T @ Sw) @ xi)
            el = 0.5 * q @ inv.K @ q
            for case, Pc in zip(inv.cases, inv.P_cases):
                c = p.body.prestress_coefficient(case, st)
                if c != 0.0:
                    el += 0.5 * c * q @ Pc @ q
            Vel += el
            # int rho v (local): sum_n (M v)_n; int rho x x v about O
            Pl = np.zeros(3)
            Pl[:g] = (PI @ lin)[ts_] + (inv.P(Sw) @ xi)[ts_]
            Hl = np.zeros(3)
            ks = (2,) if g == 2 else (0, 1, 2)
            for k in ks:
                Hl[k] = -(xi @ inv.P(_S[k]) @ lin + xi @ inv.P(_S[k] @ Sw) @ xi)
            s1 = np.zeros(3)
            s1[:g] = (PI @ xi)[ts_]
            Pg = st.R @ Pl
            P += Pg
            H += st.R @ Hl + cross3(st.r_O, Pg)
            if self.gravity is not None:
                Vg -= float(self.gravity @ (inv.mass * st.r_O + st.R @ s1))
        for i, jet in enumerate(jets):
            for rb in s.rigid_on[i]:
                Tr, Vr = rb.energy(jet.state, s.gravity)
                Pr, Hr = rb.momenta(jet.state)
                T += Tr
                Vg += Vr
                P += Pr
                H += Hr
        return {"kinetic": T, "elastic": Vel, "gravity": Vg, "total": T + Vel + Vg,
                "momentum": P, "angular_momentum": H}

    def states(self, t: float, f: np.ndarray) -> List[FrameState]:
        """The computed frames' states at the unknowns ``f`` (zero accelerations).

        Args:
            t: the time (s).
            f: the frame unknowns.

        Returns:
            One state per computed frame.
        """
        return [j.state for j in self.system.jets(t, f, np.zeros_like(f))]
