"""The joints' and driven motors' rows of the dense coupled path as kernels on flat arrays.

The rows are those of :class:`~dolfinx_mbs.systems.coupled_joints.JointSet` (revolute and
prismatic joints, 2D and 3D; motors driving a 2D joint's relative angle or a hinge's angle or
speed), at the dense state: :func:`rows` gives their position values g, velocity values h,
B = dh/dV and g_p = dg/dp in closed form (the formulas of
:class:`~dolfinx_mbs.constraints.frame_joints.Revolute`, :class:`~dolfinx_mbs.constraints.
frame_joints.Prismatic` and :class:`~dolfinx_mbs.constraints.frame_joints.Motor`, the frames'
states from :mod:`~dolfinx_mbs.integrate.dense.coupled_kernels`' own), and
:func:`position_derivatives` dh/dp and d(B^T lam)/dp by the central differences the object
form takes (:func:`~dolfinx_mbs.systems.coupled_joints._central`: the same columns, the same
steps); :func:`stage` is a whole stage of Maggi's equations with them. :class:`JointTables`
builds the tables from :class:`~dolfinx_mbs.systems.coupled_dense_joints.DenseJoints`; where
numba is installed the kernels are compiled (cached on disk, as the coupled kernels are) and
:class:`~dolfinx_mbs.integrate.dense.coupled.MaggiStage` calls them in place of the object
form, which stays the reference (the tests hold one against the other).

Layouts:

* the positions p = (q, z) and velocities V = (v, w) of the dense state y = (q, v, f);
* ``ei`` (element, :data:`EI` integers): kind, first row, rows, first position row (-1: none),
  gdim, then for each of the two points: its computed frame (-1: none), its fixed slot (the
  ground's or a prescribed frame's state in ``fixed``), its node slot (-1: a rigid point);
  the number of directions across a prismatic axis and of alignments; a motor's driven
  frame (-1: its joint's relative angle) and its index in ``presc``;
* ``ef`` (:data:`EF` floats): the points' X, the joint's angle at t = 0, the directions across
  the axis (in a's frame) and their offsets, the alignment pairs (p in a's frame, q in b's),
  a motor's angle at t = 0;
* ``fixed`` (slots x 18): R (row by row), r_O, v_O, omega (local) of the ground and the
  prescribed frames at the time; ``presc`` (motors x 2): each driven motor's prescribed angle
  (NaN for a speed) and rate at the time;
* ``Tn`` (node slots x 3 x n): the reduced basis' rows at the joints' nodes (local
  components); ``uoff`` (node slots x 3) a displacement added to the nodes' (the differences
  by the nodes' displacements).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, List, Tuple

import numpy as np

from dolfinx_mbs.constraints.frame_joints import FrameJoint, Motor, Prismatic, Revolute
from dolfinx_mbs.frames.computed import Hinge
from dolfinx_mbs.integrate.dense.coupled_kernels import (
    KIND_FREE2,
    KIND_FREE3,
    KIND_HINGE,
    MAXIT,
    MAXW,
    MAXZ,
    NOT_CONVERGED,
    NOT_FINITE,
    OK,
    PLATEAU,
    ROUNDOFF,
    SINGULAR,
    ST,
    WK_FRAME,
    _back_in,
    _back_in_t,
    _block_sizes,
    _cx,
    _factor,
    _frame,
    _mtv3,
    _mv3,
    bdf_weights,
    jit,
    jit_leaf,
    residual_into,
    residual_work,
)
from dolfinx_mbs.systems.coupled_joints import FD_STEP

if TYPE_CHECKING:
    from dolfinx_mbs.systems.coupled import CoupledSystem
    from dolfinx_mbs.systems.coupled_dense_joints import DenseJoints

__all__ = ["EI", "EF", "E_REVOLUTE", "E_PRISMATIC", "E_MOTOR", "rows", "position_rows",
           "position_derivatives",
           "JointTables", "tables_reason"]

#: the elements' kinds
E_REVOLUTE, E_PRISMATIC, E_MOTOR = 0, 1, 2
#: the elements' integer table's width
EI = 16
#: the elements' float table's width
EF = 34
#: a point's kinematics (see :func:`_end`): r 0:3, r' 3:6, R 6:15, x 15:18, omega 18:21
EN = 21
#: the rows' work space of 3-vectors (:func:`_element`'s 7, :func:`_end`'s 4)
TW = 11


@jit
def _frames_at(fi: np.ndarray, ff: np.ndarray, par: np.ndarray, grav: np.ndarray, o: int,
               y: np.ndarray) -> tuple:
    """Each computed frame's state (:data:`~dolfinx_mbs.integrate.dense.coupled_kernels.ST`)
    and its partials: d v_O/dw, d omega/dw (local), d phi/dz (dR = R skew(d phi)) and
    d r_O/dz (global), as the frames' jets give them, in new arrays (st, dv, dom, dphi,
    drO)."""
    st, dv, dom, dphi, drO, yd, dSz, dSw, dSwd, wk = rows_work(fi.shape[0], y.shape[0])[:10]
    for i in range(fi.shape[0]):
        _one_frame(i, fi, ff, par, grav, o, y, st, dv, dom, dphi, drO, yd, dSz, dSw, dSwd, wk)
    return st, dv, dom, dphi, drO


@jit_leaf
def _one_frame(i: int, fi: np.ndarray, ff: np.ndarray, par: np.ndarray, grav: np.ndarray,
               o: int, y: np.ndarray, st: np.ndarray, dv: np.ndarray, dom: np.ndarray,
               dphi: np.ndarray, drO: np.ndarray, yd: np.ndarray, dSz: np.ndarray,
               dSw: np.ndarray, dSwd: np.ndarray, wk: np.ndarray) -> None:
    """:func:`_frames_at` of the frame ``i`` (``yd``, ``dSz``, ``dSw``, ``dSwd``, ``wk``:
    work arrays)."""
    for a in range(3):
        for c in range(MAXZ):
            dphi[i, a, c] = 0.0
            drO[i, a, c] = 0.0
        for c in range(MAXW):
            dv[i, a, c] = 0.0
            dom[i, a, c] = 0.0
    _frame(fi[i], ff[i], par[i], o, y, yd, grav, st[i], dSz, dSw, dSwd, dphi[i], wk)
    kind = fi[i, 0]
    R = st[i, 0:9]
    if kind == KIND_HINGE:   # omega = R_c^T omega_p + th' n, v_O = ... - th' n x c
        for a in range(3):
            dv[i, a, 0] = -ff[i, 6 + a]
            dom[i, a, 0] = ff[i, a]
            dphi[i, a, 0] = ff[i, a]
            acc = 0.0
            for b in range(3):
                acc += R[3 * a + b] * ff[i, 6 + b]
            drO[i, a, 0] = -acc
    elif kind == KIND_FREE2:   # v_O = R^T (w0, w1, 0), omega = (0, 0, w2)
        for a in range(3):
            dv[i, a, 0] = R[a]
            dv[i, a, 1] = R[3 + a]
        dom[i, 2, 2] = 1.0
        drO[i, 0, 0] = 1.0
        drO[i, 1, 1] = 1.0
    elif kind == KIND_FREE3:   # v_O = R^T v_G, omega local
        for a in range(3):
            for b in range(3):
                dv[i, a, b] = R[3 * b + a]
            dom[i, a, 3 + a] = 1.0
            drO[i, a, a] = 1.0


@jit_leaf
def _end(fr: int, slot: int, node: int, X: np.ndarray, st: np.ndarray, fixed: np.ndarray,
         Tn: np.ndarray, uoff: np.ndarray, q: np.ndarray, v: np.ndarray, dv: np.ndarray,
         dom: np.ndarray, vel: bool, e: np.ndarray, Pw: np.ndarray, wk: np.ndarray) -> None:
    """A point's kinematics into ``e`` (:data:`EN`): r = r_O + R x, r' = R (v_O + omega x x +
    u'), x = X + u; a computed frame's partial velocities d r'/dw = R (dv - skew(x) dom) into
    ``Pw`` (3 x MAXW); without ``vel`` neither r' nor the partial velocities (r, R, x and
    omega alone); ``wk`` (4 x 3) work space."""
    n = q.shape[0]
    u = wk[0]
    ud = wk[1]
    w = wk[2]
    t = wk[3]
    for a in range(3):
        u[a] = 0.0
        ud[a] = 0.0
    if node >= 0:
        for a in range(3):
            acc = uoff[node, a]
            accd = 0.0
            for j in range(n):
                acc += Tn[node, a, j] * q[j]
                if vel:
                    accd += Tn[node, a, j] * v[j]
            u[a] = acc
            ud[a] = accd
    s = st[fr] if fr >= 0 else fixed[slot]
    # a frame state's R, r_O, omega, v_O (ST) or a fixed slot's R, r_O, v_O, omega
    ro, oo, vo = (9, 12, 18) if fr >= 0 else (9, 15, 12)
    x = e[15:18]
    for a in range(3):
        x[a] = X[a] + u[a]
        e[18 + a] = s[oo + a]
    for a in range(3):
        acc = s[ro + a]
        for b in range(3):
            e[6 + 3 * a + b] = s[3 * a + b]
            acc += s[3 * a + b] * x[b]
        e[a] = acc
    if not vel:
        return
    w[0] = s[oo + 1] * x[2] - s[oo + 2] * x[1] + s[vo] + ud[0]
    w[1] = s[oo + 2] * x[0] - s[oo] * x[2] + s[vo + 1] + ud[1]
    w[2] = s[oo] * x[1] - s[oo + 1] * x[0] + s[vo + 2] + ud[2]
    for a in range(3):
        accd = 0.0
        for b in range(3):
            accd += s[3 * a + b] * w[b]
        e[3 + a] = accd
    if fr >= 0:
        for c in range(MAXW):
            # dv - x x dom
            t[0] = dv[fr, 0, c] - (x[1] * dom[fr, 2, c] - x[2] * dom[fr, 1, c])
            t[1] = dv[fr, 1, c] - (x[2] * dom[fr, 0, c] - x[0] * dom[fr, 2, c])
            t[2] = dv[fr, 2, c] - (x[0] * dom[fr, 1, c] - x[1] * dom[fr, 0, c])
            for a in range(3):
                Pw[a, c] = s[3 * a] * t[0] + s[3 * a + 1] * t[1] + s[3 * a + 2] * t[2]


@jit_leaf
def _wrap(d: float) -> float:
    """The angle ``d`` modulo 2 pi, in [0, 2 pi) (Python's float modulo, which numba keeps)."""
    return d % (2.0 * math.pi)


@jit
def rows_work(nf: int, N: int) -> tuple:
    """The work space of :func:`rows_into` for ``nf`` frames and dense states of size ``N``
    (made once by a caller that evaluates the rows many times: an array made in a kernel
    costs about as much as a joint's arithmetic)."""
    nf = max(nf, 1)
    return (np.zeros((nf, ST)), np.zeros((nf, 3, MAXW)), np.zeros((nf, 3, MAXW)),
            np.zeros((nf, 3, MAXZ)), np.zeros((nf, 3, MAXZ)), np.zeros(N), np.zeros((9, MAXZ)),
            np.zeros((9, MAXW)), np.zeros((9, MAXW)), np.empty(WK_FRAME), np.zeros(EN),
            np.zeros(EN), np.zeros((3, MAXW)), np.zeros((3, MAXW)), np.zeros((TW, 3)))


@jit
def rows(ei: np.ndarray, ef: np.ndarray, fi: np.ndarray, ff: np.ndarray, par: np.ndarray,
         grav: np.ndarray, n: int, fixed: np.ndarray, presc: np.ndarray, Tn: np.ndarray,
         uoff: np.ndarray, y: np.ndarray, positions: bool, g: np.ndarray, h: np.ndarray,
         B: np.ndarray, gp: np.ndarray) -> None:
    """The rows at the dense state ``y`` (module docstring): g (zero for velocity rows), h,
    B = dh/dV (rows x (n + nw)) and, with ``positions``, g_p = dg/dp (position rows x
    (n + nz)), all written.

    Args:
        ei: the elements' integers.
        ef: the elements' floats.
        fi: the frames' integer table.
        ff: the frames' constants.
        par: the frames' parents' states at the time.
        grav: gravity.
        n: the number of elastic reduced coordinates.
        fixed: the fixed slots' states at the time.
        presc: the driven motors' prescriptions at the time.
        Tn: the nodes' rows of the reduced basis.
        uoff: the nodes' added displacements.
        y: the dense state.
        positions: form g_p.
        g: the position values (written).
        h: the velocity values (written).
        B: dh/dV (written).
        gp: dg/dp (written with ``positions``).
    """
    rows_into(ei, ef, fi, ff, par, grav, n, fixed, presc, Tn, uoff, y, positions, True, g, h, B,
              gp, rows_work(fi.shape[0], y.shape[0]))


@jit_leaf
def rows_into(ei: np.ndarray, ef: np.ndarray, fi: np.ndarray, ff: np.ndarray, par: np.ndarray,
              grav: np.ndarray, n: int, fixed: np.ndarray, presc: np.ndarray, Tn: np.ndarray,
              uoff: np.ndarray, y: np.ndarray, positions: bool, vel: bool, g: np.ndarray,
              h: np.ndarray, B: np.ndarray, gp: np.ndarray, ws: tuple) -> None:
    """:func:`rows` in the work space ``ws`` (:func:`rows_work`): the same arithmetic, no
    array made; without ``vel`` the position values g alone (h and B not written)."""
    st, dv, dom, dphi, drO, yd, dSz, dSw, dSwd, wk, ea, eb, Pa, Pb, tw = ws
    o = 2 * n
    nf = fi.shape[0]
    nz = 0
    for i in range(nf):
        nz += fi[i, 3]
    for i in range(nf):
        _one_frame(i, fi, ff, par, grav, o, y, st, dv, dom, dphi, drO, yd, dSz, dSw, dSwd, wk)
    g[:] = 0.0
    if vel:
        h[:] = 0.0
        B[:, :] = 0.0
    if positions:
        gp[:, :] = 0.0
    for el in range(ei.shape[0]):
        _element(el, ei, ef, fi, n, nz, y, st, dv, dom, dphi, drO, fixed, presc, Tn, uoff,
                 positions, vel, g, h, B, gp, ea, eb, Pa, Pb, tw)


@jit_leaf
def _element(el: int, ei: np.ndarray, ef: np.ndarray, fi: np.ndarray, n: int, nz: int,
             y: np.ndarray, st: np.ndarray, dv: np.ndarray, dom: np.ndarray, dphi: np.ndarray,
             drO: np.ndarray, fixed: np.ndarray, presc: np.ndarray, Tn: np.ndarray,
             uoff: np.ndarray, positions: bool, vel: bool, g: np.ndarray, h: np.ndarray,
             B: np.ndarray, gp: np.ndarray, ea: np.ndarray, eb: np.ndarray, Pa: np.ndarray,
             Pb: np.ndarray, tw: np.ndarray) -> None:
    """The element ``el``'s rows into g, h, B (and g_p with ``positions``; g alone without
    ``vel``), added to what they hold (:func:`rows` zeroes them), at the frames' states ``st``
    and partials (ea, eb, Pa, Pb, tw: work arrays)."""
    o = 2 * n
    q = y[0:n]
    v = y[n:o]
    du = tw[0:2]      # a row's coefficients of the points' r' (global)
    t1 = tw[2]
    t2 = tw[3]
    t3 = tw[4]
    aG = tw[5]
    bG = tw[6]
    kind, r0, nr, p0, gd = ei[el, 0], ei[el, 1], ei[el, 2], ei[el, 3], ei[el, 4]
    fa, sa, na, fb, sb, nb = ei[el, 5], ei[el, 6], ei[el, 7], ei[el, 8], ei[el, 9], \
        ei[el, 10]
    nn = ei[el, 11]
    f = ef[el]
    _end(fa, sa, na, f[0:3], st, fixed, Tn, uoff, q, v, dv, dom, vel, ea, Pa, tw[7:11])
    _end(fb, sb, nb, f[3:6], st, fixed, Tn, uoff, q, v, dv, dom, vel, eb, Pb, tw[7:11])
    Ra, Rb = ea[6:15], eb[6:15]
    wa = n + fi[fa, 2] - nz if fa >= 0 else 0
    wb = n + fi[fb, 2] - nz if fb >= 0 else 0
    za = n + fi[fa, 1] if fa >= 0 else 0
    zb = n + fi[fb, 1] if fb >= 0 else 0
    ka = fi[fa, 4] if fa >= 0 else 0
    kb = fi[fb, 4] if fb >= 0 else 0
    kza = fi[fa, 3] if fa >= 0 else 0
    kzb = fi[fb, 3] if fb >= 0 else 0
    if kind == E_MOTOR:
        th, thd = 0.0, 0.0
        if ei[el, 13] >= 0:   # a hinge's angle
            i = ei[el, 13]
            th, thd = y[o + fi[i, 1]], y[o + fi[i, 2]]
            if vel:
                B[r0, n + fi[i, 2] - nz] += 1.0
            if positions and p0 >= 0:
                gp[p0, n + fi[i, 1]] += 1.0
        else:                 # its joint's relative angle
            tha = math.atan2(Ra[3], Ra[0])
            thb = math.atan2(Rb[3], Rb[0])
            a0 = f[6]
            th = _wrap(thb - tha - a0 + math.pi) - math.pi + a0
            thd = eb[20] - ea[20]
            if vel:
                for c in range(ka):
                    B[r0, wa + c] -= dom[fa, 2, c]
                for c in range(kb):
                    B[r0, wb + c] += dom[fb, 2, c]
            if positions and p0 >= 0:
                for c in range(kza):
                    gp[p0, za + c] -= dphi[fa, 2, c]
                for c in range(kzb):
                    gp[p0, zb + c] += dphi[fb, 2, c]
        m = ei[el, 14]
        if vel:
            h[r0] = thd - presc[m, 1]
        if p0 >= 0:
            g[r0] = th - f[33] - presc[m, 0]
        return
    k0 = 0
    for k in range(nr):
        for s_ in range(2):
            for a in range(3):
                du[s_, a] = 0.0
        r = r0 + k
        if kind == E_REVOLUTE and k < gd:
            g[r] = ea[k] - eb[k]
            du[0, k] = 1.0
            du[1, k] = -1.0
            if vel:
                h[r] = ea[3 + k] - eb[3 + k]
                for c in range(ka):
                    B[r, wa + c] += Pa[k, c]
                for c in range(kb):
                    B[r, wb + c] -= Pb[k, c]
            if positions:
                for c in range(kza):   # d r/dz = d r_O/dz - R skew(x) d phi/dz
                    _cx(ea[15:18], dphi[fa, :, c], t1)
                    gp[p0 + k, za + c] += drO[fa, k, c] - (
                        Ra[3 * k] * t1[0] + Ra[3 * k + 1] * t1[1] + Ra[3 * k + 2] * t1[2])
                for c in range(kzb):
                    _cx(eb[15:18], dphi[fb, :, c], t1)
                    gp[p0 + k, zb + c] -= drO[fb, k, c] - (
                        Rb[3 * k] * t1[0] + Rb[3 * k + 1] * t1[1] + Rb[3 * k + 2] * t1[2])
            k0 = k + 1
        elif kind == E_PRISMATIC and k < nn:
            n0 = f[7 + 3 * k:10 + 3 * k]
            _mv3(Ra, n0, t1)                  # n = R_a n0
            _cx(ea[18:21], n0, t2)
            _mv3(Ra, t2, t3)                  # n' = R_a (omega_a x n0)
            dd = 0.0
            gg = 0.0
            for a in range(3):
                d_a = eb[a] - ea[a]
                gg += t1[a] * d_a
                if vel:
                    dd += t3[a] * d_a + t1[a] * (eb[3 + a] - ea[3 + a])
                du[0, a] = -t1[a]
                du[1, a] = t1[a]
            g[r] = gg - f[13 + k]
            if vel:
                h[r] = dd
            for a in range(3):
                t2[a] = eb[a] - ea[a]
            _mtv3(Ra, t2, aG)                 # R_a^T d
            for c in range(ka if vel else 0):
                acc = 0.0
                for a in range(3):
                    acc -= t1[a] * Pa[a, c]
                _cx(n0, dom[fa, :, c], bG)
                acc -= bG[0] * aG[0] + bG[1] * aG[1] + bG[2] * aG[2]
                B[r, wa + c] += acc
            for c in range(kb if vel else 0):
                acc = 0.0
                for a in range(3):
                    acc += t1[a] * Pb[a, c]
                B[r, wb + c] += acc
            if positions:
                for s_ in range(2):
                    e_ = ea if s_ == 0 else eb
                    fr = fa if s_ == 0 else fb
                    zc = za if s_ == 0 else zb
                    kz = kza if s_ == 0 else kzb
                    sign = -1.0 if s_ == 0 else 1.0
                    for c in range(kz):
                        _cx(e_[15:18], dphi[fr, :, c], bG)
                        _mv3(e_[6:15], bG, aG)
                        acc = 0.0
                        for a in range(3):
                            acc += t1[a] * (drO[fr, a, c] - aG[a])
                        gp[p0 + k, zc + c] += sign * acc
                        if s_ == 0:   # n turns with a
                            _cx(n0, dphi[fr, :, c], bG)
                            _mv3(Ra, bG, aG)
                            acc = 0.0
                            for a in range(3):
                                acc += t2[a] * aG[a]
                            gp[p0 + k, zc + c] -= acc
            k0 = k + 1
        elif kind == E_PRISMATIC and gd == 2 and k == nn:   # the relative angle
            tha = math.atan2(Ra[3], Ra[0])
            thb = math.atan2(Rb[3], Rb[0])
            a0 = f[6]
            th = _wrap(thb - tha - a0 + math.pi) - math.pi + a0
            g[r] = th - a0
            if vel:
                h[r] = eb[20] - ea[20]
                for c in range(ka):
                    B[r, wa + c] -= dom[fa, 2, c]
                for c in range(kb):
                    B[r, wb + c] += dom[fb, 2, c]
            if positions:
                for c in range(kza):
                    gp[p0 + k, za + c] -= dphi[fa, 2, c]
                for c in range(kzb):
                    gp[p0 + k, zb + c] += dphi[fb, 2, c]
            k0 = k + 1
        else:   # an alignment: (R_a p) . (R_b q)
            lk = k - k0
            pa_ = f[15 + 6 * lk:18 + 6 * lk]
            qb_ = f[18 + 6 * lk:21 + 6 * lk]
            _mv3(Ra, pa_, aG)
            _mv3(Rb, qb_, bG)
            _cx(aG, bG, t1)                # c = a_G x b_G
            _mv3(Ra, ea[18:21], t2)
            _mv3(Rb, eb[18:21], t3)
            gg = 0.0
            hh = 0.0
            for a in range(3):
                gg += aG[a] * bG[a]
                hh += (t2[a] - t3[a]) * t1[a]
            g[r] = gg
            if vel:
                h[r] = hh
                _mtv3(Ra, t1, t2)
                _mtv3(Rb, t1, t3)
                for c in range(ka):
                    B[r, wa + c] += t2[0] * dom[fa, 0, c] + t2[1] * dom[fa, 1, c] + \
                        t2[2] * dom[fa, 2, c]
                for c in range(kb):
                    B[r, wb + c] -= t3[0] * dom[fb, 0, c] + t3[1] * dom[fb, 1, c] + \
                        t3[2] * dom[fb, 2, c]
            if positions:
                for c in range(kza):
                    _cx(pa_, dphi[fa, :, c], t2)
                    _mv3(Ra, t2, t3)
                    gp[p0 + k, za + c] -= bG[0] * t3[0] + bG[1] * t3[1] + bG[2] * t3[2]
                for c in range(kzb):
                    _cx(qb_, dphi[fb, :, c], t2)
                    _mv3(Rb, t2, t3)
                    gp[p0 + k, zb + c] -= aG[0] * t3[0] + aG[1] * t3[1] + aG[2] * t3[2]
        # the elastic rates' coefficients: r' = R (... + u'), u' = T v (local)
        for s_ in range(2 if vel or positions else 0):
            nd = na if s_ == 0 else nb
            if nd < 0:
                continue
            R = ea[6:15] if s_ == 0 else eb[6:15]
            _mtv3(R, du[s_], t2)
            for j in range(n):
                acc = t2[0] * Tn[nd, 0, j] + t2[1] * Tn[nd, 1, j] + t2[2] * Tn[nd, 2, j]
                if vel:
                    B[r, j] += acc
                if positions and p0 >= 0:
                    gp[p0 + k, j] += acc


@jit
def position_rows(ei: np.ndarray, ef: np.ndarray, fi: np.ndarray, ff: np.ndarray,
                  spar: np.ndarray, grav: np.ndarray, n: int, fixed: np.ndarray,
                  presc: np.ndarray, Tn: np.ndarray, uoff: np.ndarray, Y: np.ndarray,
                  nr: int) -> np.ndarray:
    """The rows' position values g at the states ``Y`` (rows), each at its parents' states
    ``spar``, fixed slots ``fixed`` and motors' prescriptions ``presc`` (one row of each: the
    same for all): (states, rows), as :func:`rows` gives them one state at a time."""
    S = Y.shape[0]
    nV = n
    for i in range(fi.shape[0]):
        nV += fi[i, 4]
    G = np.zeros((S, nr))
    h = np.zeros(nr)
    B = np.zeros((nr, nV))
    gp = np.zeros((0, 0))
    ws = rows_work(fi.shape[0], Y.shape[1])
    for s in range(S):
        rows_into(ei, ef, fi, ff, spar[0 if spar.shape[0] == 1 else s], grav, n,
                  fixed[0 if fixed.shape[0] == 1 else s],
                  presc[0 if presc.shape[0] == 1 else s], Tn, uoff, Y[s], False, False, G[s],
                  h, B, gp, ws)
    return G


@jit
def position_derivatives(ei: np.ndarray, ef: np.ndarray, fi: np.ndarray, ff: np.ndarray,
                         par: np.ndarray, grav: np.ndarray, n: int, fixed: np.ndarray,
                         presc: np.ndarray, Tn: np.ndarray, y: np.ndarray, lam: np.ndarray,
                         hp: np.ndarray, fp: np.ndarray, D: np.ndarray) -> None:
    """dh/dp at fixed velocities (rows x (n + nz)), d(B^T lam)/dp at fixed lam ((n + nw) x
    (n + nz)) and dB/dp (rows x (n + nw) x (n + nz)), written, by central differences (step
    :data:`~dolfinx_mbs.systems.coupled_joints.FD_STEP` scaled by the coordinate): over the
    frames' coordinates, and over the elastic coordinates through the nodes' displacements (a
    column per node component with a basis row, applied to it); at each, the rows of the
    elements it moves evaluated again (:func:`_touched_rows`; the others' differences are
    zero).

    Args:
        ei: the elements' integers.
        ef: the elements' floats.
        fi: the frames' integer table.
        ff: the frames' constants.
        par: the frames' parents' states at the time.
        grav: gravity.
        n: the number of elastic reduced coordinates.
        fixed: the fixed slots' states at the time.
        presc: the driven motors' prescriptions at the time.
        Tn: the nodes' rows of the reduced basis.
        y: the dense state.
        lam: the multipliers.
        hp: dh/dp (written).
        fp: d(B^T lam)/dp (written).
        D: dB/dp (written; h is B V + b: at other velocities and multipliers, dh/dp and
            d(B^T lam)/dp change by D dV and D^T d lam).
    """
    o = 2 * n
    nr = hp.shape[0]
    nV = fp.shape[0]
    nz = hp.shape[1] - n
    ns = Tn.shape[0]
    nf = fi.shape[0]
    ne = ei.shape[0]
    uoff = np.zeros((max(ns, 1), 3))
    g = np.zeros(nr)
    hl = np.zeros(nr)
    hh_ = np.zeros(nr)
    Bl = np.zeros((nr, nV))
    Bh = np.zeros((nr, nV))
    gp = np.zeros((0, 0))
    hp[:, :] = 0.0
    fp[:, :] = 0.0
    D[:, :, :] = 0.0
    # the frames' states at y, each frame's again where its coordinate moves
    st, dv, dom, dphi, drO = _frames_at(fi, ff, par, grav, o, y)
    yd = np.zeros(y.shape[0])
    dSz = np.zeros((9, MAXZ))
    dSw = np.zeros((9, MAXW))
    dSwd = np.zeros((9, MAXW))
    wk = np.empty(WK_FRAME)
    ea = np.zeros(EN)
    eb = np.zeros(EN)
    Pa = np.zeros((3, MAXW))
    Pb = np.zeros((3, MAXW))
    tw = np.zeros((TW, 3))
    touched = np.zeros(ne, dtype=np.bool_)
    x = y.copy()
    for i in range(nf):
        # the elements the frame's coordinates move (its points' and its hinge's motors')
        for el in range(ne):
            touched[el] = ei[el, 5] == i or ei[el, 8] == i or (
                ei[el, 0] == E_MOTOR and ei[el, 13] == i)
        for c in range(fi[i, 1], fi[i, 1] + fi[i, 3]):
            step = FD_STEP * max(1.0, abs(y[o + c]))
            for side in range(2):
                x[o + c] = y[o + c] + (step if side == 0 else -step)
                _one_frame(i, fi, ff, par, grav, o, x, st, dv, dom, dphi, drO, yd, dSz, dSw,
                           dSwd, wk)
                _touched_rows(touched, ei, ef, fi, n, nz, x, st, dv, dom, dphi, drO, fixed,
                              presc, Tn, uoff, g, hh_ if side == 0 else hl,
                              Bh if side == 0 else Bl, gp, ea, eb, Pa, Pb, tw)
            x[o + c] = y[o + c]
            _one_frame(i, fi, ff, par, grav, o, x, st, dv, dom, dphi, drO, yd, dSz, dSw, dSwd,
                       wk)
            for el in range(ne):
                if not touched[el]:
                    continue
                for r in range(ei[el, 1], ei[el, 1] + ei[el, 2]):
                    hp[r, n + c] = (hh_[r] - hl[r]) / (2 * step)
                    for j in range(nV):
                        D[r, j, n + c] = (Bh[r, j] - Bl[r, j]) / (2 * step)
            for j in range(nV):
                fp[j, n + c] = _touched_curvature(touched, ei, Bh, Bl, lam, j) / (2 * step)
    q = y[0:n]
    for s in range(ns):
        for el in range(ne):
            touched[el] = ei[el, 7] == s or ei[el, 10] == s
        for a in range(3):
            nonzero = False
            u = 0.0
            for j in range(n):
                u += Tn[s, a, j] * q[j]
                if Tn[s, a, j] != 0.0:
                    nonzero = True
            if not nonzero:
                continue
            step = FD_STEP * max(1.0, abs(u))
            for side in range(2):
                uoff[s, a] = step if side == 0 else -step
                _touched_rows(touched, ei, ef, fi, n, nz, y, st, dv, dom, dphi, drO, fixed,
                              presc, Tn, uoff, g, hh_ if side == 0 else hl,
                              Bh if side == 0 else Bl, gp, ea, eb, Pa, Pb, tw)
            uoff[s, a] = 0.0
            for el in range(ne):
                if not touched[el]:
                    continue
                for r in range(ei[el, 1], ei[el, 1] + ei[el, 2]):
                    d = (hh_[r] - hl[r]) / (2 * step)
                    for j in range(n):
                        hp[r, j] += d * Tn[s, a, j]
                    for k in range(nV):
                        d = (Bh[r, k] - Bl[r, k]) / (2 * step)
                        for j in range(n):
                            D[r, k, j] += d * Tn[s, a, j]
            for k in range(nV):
                d = _touched_curvature(touched, ei, Bh, Bl, lam, k) / (2 * step)
                for j in range(n):
                    fp[k, j] += d * Tn[s, a, j]


@jit_leaf
def _touched_curvature(touched: np.ndarray, ei: np.ndarray, Bh: np.ndarray, Bl: np.ndarray,
                       lam: np.ndarray, j: int) -> float:
    """sum_r (Bh - Bl)[r, j] lam_r over the ``touched`` elements' rows (the others' rows of
    Bh and Bl are not written)."""
    acc = 0.0
    for el in range(ei.shape[0]):
        if touched[el]:
            for r in range(ei[el, 1], ei[el, 1] + ei[el, 2]):
                acc += (Bh[r, j] - Bl[r, j]) * lam[r]
    return acc


@jit_leaf
def _touched_rows(touched: np.ndarray, ei: np.ndarray, ef: np.ndarray, fi: np.ndarray, n: int,
                  nz: int, y: np.ndarray, st: np.ndarray, dv: np.ndarray, dom: np.ndarray,
                  dphi: np.ndarray, drO: np.ndarray, fixed: np.ndarray, presc: np.ndarray,
                  Tn: np.ndarray, uoff: np.ndarray, g: np.ndarray, h: np.ndarray,
                  B: np.ndarray, gp: np.ndarray, ea: np.ndarray, eb: np.ndarray,
                  Pa: np.ndarray, Pb: np.ndarray, tw: np.ndarray) -> None:
    """The velocity rows h and B of the ``touched`` elements (:func:`_element`, their rows
    zeroed first; the other rows not written)."""
    for el in range(ei.shape[0]):
        if not touched[el]:
            continue
        for r in range(ei[el, 1], ei[el, 1] + ei[el, 2]):
            g[r] = 0.0
            h[r] = 0.0
            for j in range(B.shape[1]):
                B[r, j] = 0.0
        _element(el, ei, ef, fi, n, nz, y, st, dv, dom, dphi, drO, fixed, presc, Tn, uoff,
                 False, True, g, h, B, gp, ea, eb, Pa, Pb, tw)


def tables_reason(system: CoupledSystem) -> str | None:
    """Why the kernels cannot take ``system``'s joints and motors (the object form steps
    them), or None.

    Args:
        system: the coupled system.

    Returns:
        The reason in words, or None.
    """
    s, js = system, system.jointset
    for j in js.joints:
        if type(j) not in (Revolute, Prismatic):
            return f"joint {j.name!r} ({type(j).__name__})"
    for m in js.motors:
        t = m.target
        if isinstance(t, FrameJoint):
            if not (isinstance(t, Revolute) and t.gdim == 2):
                return f"motor {m.name!r} on a {type(t).__name__} in {t.gdim}D"
        elif not isinstance(t, Hinge) or not any(t is f for f in s.frames):
            return f"motor {m.name!r} on {type(t).__name__}"
    return None


#: the ground's rotation, flattened (the first fixed slot's)
_EYE9 = np.eye(3).reshape(-1)


class JointTables:
    """The kernels' tables of ``dj``'s joints and driven motors (module docstring): the
    elements' and the nodes' once, the fixed slots' and the motors' at a time (:meth:`at`).

    Args:
        dj: the dense joints (:func:`tables_reason` None).
    """

    def __init__(self, dj: DenseJoints) -> None:
        js = dj.js
        self.dj = dj
        #: the last :meth:`at_times` (times, fixed, presc): a run's outputs ask for its steps'
        #: times again (the tables are a run's: the user's functions called once a time)
        self._last: Tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        els = [b for b in js.blocks]
        self.ei = np.full((len(els), EI), -1, dtype=np.int64)
        self.ef = np.zeros((len(els), EF))
        #: the fixed slots: the ground (0) and each prescribed frame's
        self.fixed_frames: List[Any] = [None]
        keys = list(dj.T)
        n = dj.n
        self.Tn = np.array([dj.T[k] for k in keys]) if keys else np.zeros((0, 3, n))
        self.motors = list(js.motors)

        def side(ij: int, k: int) -> Tuple[int, int, int]:
            sd = js.sides[ij][k]
            slot = 0
            if sd.index is None and sd.point.frame is not None:
                fr = sd.point.frame
                hit = [i for i, f in enumerate(self.fixed_frames) if f is fr]
                if hit:
                    slot = hit[0]
                else:
                    slot = len(self.fixed_frames)
                    self.fixed_frames.append(fr)
            node = keys.index((ij, k)) if (ij, k) in dj.T else -1
            return -1 if sd.index is None else sd.index, slot, node

        for e, b in enumerate(els):
            el = b.element
            row = self.ei[e]
            f = self.ef[e]
            row[1], row[2], row[3] = b.start, b.stop - b.start, b.pos
            ij = b.joint
            if isinstance(el, Motor):
                row[0] = E_MOTOR
                row[14] = self.motors.index(el)
                f[33] = el.angle0
                if isinstance(el.target, FrameJoint):
                    ij = js.joints.index(el.target)
                    f[6] = el.target.angle0
                else:
                    row[13] = next(i for i, fr in enumerate(dj.system.frames)
                                   if fr is el.target)
            if ij is not None:
                j = js.joints[ij]
                row[4] = j.gdim
                row[5], row[6], row[7] = side(ij, 0)
                row[8], row[9], row[10] = side(ij, 1)
                f[0:3], f[3:6] = j.a.X, j.b.X
                if isinstance(el, Motor):
                    continue
                f[6] = j.angle0
                row[0] = E_REVOLUTE if isinstance(j, Revolute) else E_PRISMATIC
                if isinstance(j, Prismatic):
                    row[11] = len(j.normals_a)
                    for k, (n0, d0) in enumerate(zip(j.normals_a, j.offsets)):
                        f[7 + 3 * k:10 + 3 * k] = n0
                        f[13 + k] = d0
                assert isinstance(j, (Revolute, Prismatic))  # (tables_reason None)
                row[12] = len(j.lock)
                for k, (p, qq) in enumerate(j.lock):
                    f[15 + 6 * k:18 + 6 * k] = p
                    f[18 + 6 * k:21 + 6 * k] = qq
            else:
                row[4] = 2
        self.uoff = np.zeros((max(len(keys), 1), 3))

    def at(self, t: float) -> Tuple[np.ndarray, np.ndarray]:
        """The fixed slots' states and the driven motors' prescriptions at ``t``.

        Args:
            t: the time (s).

        Returns:
            (fixed, presc).
        """
        fixed = np.zeros((len(self.fixed_frames), 18))
        fixed[0, 0:9] = _EYE9
        for k, fr in enumerate(self.fixed_frames[1:], start=1):
            st = fr.state(t)
            fixed[k] = np.concatenate([np.asarray(st.R).reshape(-1), st.r_O, st.v_O,
                                       st.omega])
        presc = np.zeros((len(self.motors), 2))
        for k, m in enumerate(self.motors):
            a, r = self.dj.js.prescribed(m, t)
            presc[k] = (math.nan if a is None else a, r)
        return fixed, presc

    def at_times(self, times: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """:meth:`at` at each of ``times``, stacked (one row where the same at all: the
        ground's slot alone, no motor); the motors' functions under one collective guard each,
        the last call's arrays again for the same times (read them, do not change them).

        Args:
            times: the times (s).

        Returns:
            (fixed, presc): (len(times) or 1, slots, 18), (len(times) or 1, motors, 2).
        """
        last = self._last
        if last is not None and last[0].shape == np.shape(times) \
                and np.array_equal(last[0], times):
            return last[1], last[2]
        S = len(times)
        nfix = len(self.fixed_frames)
        fixed = np.zeros((S if nfix > 1 else 1, nfix, 18))
        fixed[:, 0, 0:9] = _EYE9
        for k, fr in enumerate(self.fixed_frames[1:], start=1):
            for i, t in enumerate(times):
                st = fr.state(t)
                fixed[i, k] = np.concatenate([np.asarray(st.R).reshape(-1), st.r_O, st.v_O,
                                              st.omega])
        presc = np.zeros((S if self.motors else 1, len(self.motors), 2))
        for k, m in enumerate(self.motors):
            presc[:, k] = self.dj.js.prescribed_at(m, times)
        self._last = (np.array(times, dtype=float), fixed, presc)
        return fixed, presc


# -- Maggi's stage --------------------------------------------------------------------------
#: a stage's return where its dependent velocities or positions must be chosen again (QR with
#: column pivoting: Python's :meth:`~dolfinx_mbs.integrate.dense.coupled.MaggiStage._choose`)
CHOOSE = -10
#: the stage's memory (:func:`stage`): whether a matrix is kept, its shift, the stages left
#: that begin with a matrix of their own, the rows' size
S_KEPT, S_SHIFT, S_FRESH, S_SCALE, S_PD = 0, 1, 2, 3, 4


@jit
def stage_work(plan: tuple, N: int, n: int, nr: int, nV: int, npos: int, nP: int,
               nA: int) -> tuple:
    """The work space of :func:`stage` (made once by a caller that solves many stages: an
    array made in a kernel costs about as much as a joint's arithmetic) for ``plan``'s frames,
    dense states of size ``N`` with ``n`` elastic coordinates, ``nr`` rows of which ``npos``
    position rows, ``nV`` velocities, ``nP`` positions and ``nA`` auxiliary momenta: the
    stage's state and independent velocities, the convergence test's sizes, the rows and
    their derivatives, the residual and its Jacobian, the factors of B_d and g_d^T, the
    iterates, the projected rows, the joints' rows' work space (:func:`rows_work`), the
    residual's (:func:`~dolfinx_mbs.integrate.dense.coupled_kernels.residual_work`) and
    Newton's matrix's (:func:`matrix_work`)."""
    nf = nV - nr
    nb = 2 + N - 2 * n
    return (np.empty(N), np.empty(nf), np.zeros(nb), np.zeros(nb), np.zeros(nb),
            np.zeros(nb), np.empty(N), np.zeros(nr), np.zeros(nr), np.zeros((nr, nV)),
            np.zeros((npos, nP)), np.zeros(N), np.zeros((N, N)), np.empty((nr, nr)),
            np.zeros(nr, dtype=np.int64), np.empty((npos, npos)),
            np.zeros(npos, dtype=np.int64), np.empty(N), np.empty(N), np.empty(N),
            np.empty(nP + nf + nA), np.empty(nr), np.empty(nr),
            np.empty(npos), rows_work(plan[3].shape[0], N), residual_work(plan),
            matrix_work(N, nr, nV, npos, nP, nA))


@jit
def matrix_work(N: int, nr: int, nV: int, npos: int, nP: int, nA: int) -> tuple:
    """The work space of :func:`_maggi_matrix` (sizes as :func:`stage_work` takes them): the
    null-space bases of B and g_p (and their transposes), g_d and its pivots, the position
    derivatives carried to the state, dV/dp, the solves' right-hand sides (B_i, g_i, h_p),
    the Jacobian's velocity columns, their
    coefficients, dF, its position and velocity rows and the products."""
    nf, nfp = nV - nr, nP - npos
    nc = nP + nf + nA
    return (np.zeros((nV, nf)), np.empty((npos, npos)), np.zeros(npos, dtype=np.int64),
            np.zeros((nP, nfp)), np.empty((nr, nP)), np.empty((nV, nP)), np.zeros((nV, nP)),
            (np.empty((nr, nf)), np.empty((npos, nfp)), np.empty((nr, nP))),
            np.empty((N, nV)), np.empty((nV, nP + nf)),
            np.zeros((N, nc)), np.empty((nP, nc)), np.empty((nV, nc)), np.empty((nfp, nP)),
            np.empty((nf, nV)), np.empty((N, nP + nf)), np.empty((nfp, nc)),
            np.empty((nf, nc)))


@jit
def _complement(index: np.ndarray, size: int) -> np.ndarray:
    """The indices below ``size`` that are not in ``index``, in order."""
    keep = np.ones(size, dtype=np.bool_)
    for k in range(index.shape[0]):
        keep[index[k]] = False
    out = np.empty(size - index.shape[0], dtype=np.int64)
    a = 0
    for k in range(size):
        if keep[k]:
            out[a] = k
            a += 1
    return out


@jit_leaf
def _solve_rows(A: np.ndarray, piv: np.ndarray, R: np.ndarray) -> None:
    """The solution of (P L U) X = R of :func:`~dolfinx_mbs.integrate.dense.coupled_kernels.
    _factor_loops`' factors for all the columns of R at once, in place: each column's
    arithmetic that of ``_back_in`` (the same numbers), the rows combined as views indexed
    from zero (the columns' loops vectorize, where one column at a time is a chain of
    dependent operations)."""
    n, m = A.shape[0], R.shape[1]
    for k in range(n):
        p = piv[k]
        if p != k:
            rk, rp = R[k], R[p]
            for c in range(m):
                rk[c], rp[c] = rp[c], rk[c]
    for k in range(n):
        rk = R[k]
        for i in range(k + 1, n):
            f = A[i, k]
            ri = R[i]
            for c in range(m):
                ri[c] -= f * rk[c]
    for k in range(n - 1, -1, -1):
        rk = R[k]
        for j in range(k + 1, n):
            f = A[k, j]
            rj = R[j]
            for c in range(m):
                rk[c] -= f * rj[c]
        d = A[k, k]
        for c in range(m):
            rk[c] = rk[c] / d


@jit_leaf
def _null_basis(M: np.ndarray, dep: np.ndarray, free: np.ndarray, F: np.ndarray,
                piv: np.ndarray, out: np.ndarray, R: np.ndarray) -> None:
    """The basis [I; -M_d^-1 M_i] of the null space of M (rows x columns) into ``out``: the
    identity at the ``free`` columns, M_d = M[:, dep] factored in ``F``, ``piv`` (``R``:
    work space, rows x free columns)."""
    nr, nf = dep.shape[0], free.shape[0]
    for i in range(nr):
        for k in range(nf):
            R[i, k] = M[i, free[k]]
    _solve_rows(F, piv, R)
    out[:, :] = 0.0
    for k in range(nf):
        out[free[k], k] = 1.0
    for i in range(nr):
        for k in range(nf):
            out[dep[i], k] = -R[i, k]


@jit
def _factored_well(A: np.ndarray, piv: np.ndarray, big: float) -> bool:
    """A = P L U in place; whether its pivots all exceed 1e-10 of ``big`` (the largest entry
    of A): else the stage's dependent coordinates are chosen again."""
    if not _factor(A, piv):
        return False
    small = np.inf
    for i in range(A.shape[0]):
        small = min(small, abs(A[i, i]))
    return small > 1e-10 * big


@jit
def stage(plan: tuple, par: np.ndarray, jt: tuple, idx: tuple, comb: tuple, Q: np.ndarray,
          DQ: np.ndarray, X: np.ndarray, Xs: np.ndarray, KF: np.ndarray, kpiv: np.ndarray,
          mem: np.ndarray, lam: np.ndarray, consts: tuple, pd: tuple, work: tuple) -> int:
    """A stage of Maggi's equations (:class:`~dolfinx_mbs.integrate.dense.coupled.
    MaggiStage`, whose :meth:`~dolfinx_mbs.integrate.dense.coupled.MaggiStage.solve` it is,
    iterate for iterate) with loads of time alone: X (the scheme's unknown) updated in place
    from its guess.

    Args:
        plan: the model's arrays (:func:`~dolfinx_mbs.integrate.dense.coupled_kernels.
            residual`'s).
        par: the frames' parents' states at the stage's time.
        jt: the rows' tables (ei, ef, fixed, presc, Tn, uoff) at the time.
        idx: the dense state's positions, velocities and auxiliary momenta, the position
            rows among the rows, the dependent velocities (in V) and positions (in P).
        comb: (ca, da, cb, db): y = ca X + da, y' = cb X + db.
        Q: the loads' generalized forces at the time.
        DQ: -dQ/df (zero for loads of time alone).
        X: the guess; the solution on return.
        Xs: the step's start (the convergence test's reference).
        KF: Newton's matrix's factors kept from stage to stage (with ``kpiv``).
        kpiv: their pivots.
        mem: :data:`S_KEPT`, :data:`S_SHIFT`, :data:`S_FRESH`, :data:`S_SCALE`, :data:`S_PD`
            (updated).
        lam: the multipliers recovered (written).
        consts: (the updates' contraction that asks for a new matrix, the stages that begin
            with their own after one had to, the rows' stopping fraction of their size, the
            matrices formed with one differencing of the rows' position derivatives, Newton's
            update tolerance: :data:`~dolfinx_mbs.integrate.dense.coupled_kernels.STOL`).
        pd: the rows' position derivatives kept from matrix to matrix (:func:`_maggi_matrix`).
        work: the stage's work space (:func:`stage_work`), made once by its caller.

    Returns:
        The iterations (> 0), :data:`CHOOSE`, or minus a status (:data:`~dolfinx_mbs.
        integrate.dense.coupled_kernels.NOT_CONVERGED`, ``NOT_FINITE``, ``SINGULAR``).
    """
    ei, ef, fixed, presc, Tn, uoff = jt
    Pi, Vi, Ai, pos, dep, dep_p = idx
    ca, da, cb, db = comb
    refresh_at, fresh_n, resid, pd_every, stol = consts
    n = plan[6]
    N = X.shape[0]
    m = N - 2 * n
    nP, nV, nA = Pi.shape[0], Vi.shape[0], Ai.shape[0]
    nr = dep.shape[0]
    npos = pos.shape[0]
    nf = nV - nr
    nfp = nP - npos
    nb = 2 + m
    free = _complement(dep, nV)
    free_p = _complement(dep_p, nP)
    shift = cb / ca
    (ys, u, prev, ref, sizes, ref_new, before, g, h, B, gp, F, J, Bd, bpiv, Gt, gpiv, dXc, Xc,
     yd, rows_, vd, lv, mu, ws, rw, mw) = work
    for k in range(N):
        ys[k] = ca * X[k] + da[k]
    for k in range(nf):
        u[k] = ys[Vi[free[k]]]
    if mem[S_KEPT] > 0.0 and (mem[S_SHIFT] != shift or mem[S_FRESH] > 0.0):
        mem[S_KEPT] = 0.0
    mem[S_FRESH] = max(mem[S_FRESH] - 1.0, 0.0)
    stale = mem[S_KEPT] > 0.0
    # the convergence test's memory (_Converged; prev and ref read once written)
    have_prev = False
    top = 0.0
    fprev = np.inf
    refresh = False
    exact_last = False
    exact = False
    before[:] = ys
    for it in range(MAXIT):
        # the rows at the positions, the velocities V = A u + a
        rows_into(ei, ef, plan[3], plan[4], par, plan[5], n, fixed, presc, Tn, uoff, ys, True,
                  True, g, h, B, gp, ws)
        big = 0.0
        for i in range(nr):
            for j in range(nr):
                Bd[i, j] = B[i, dep[j]]
                big = max(big, abs(B[i, dep[j]]))
        if not _factored_well(Bd, bpiv, big):
            return CHOOSE
        for i in range(nr):
            acc = h[i]
            for j in range(nV):
                acc -= B[i, j] * ys[Vi[j]]
            for k in range(nf):
                acc += B[i, free[k]] * u[k]
            vd[i] = acc
        _back_in(Bd, bpiv, vd)
        for k in range(nf):
            ys[Vi[free[k]]] = u[k]
        for k in range(nr):
            ys[Vi[dep[k]]] = -vd[k]
        for k in range(N):
            Xc[k] = (ys[k] - da[k]) / ca
        if it > 0:   # the update test (_Converged.update)
            for k in range(N):
                dXc[k] = (ys[k] - before[k]) / ca
            tp = _block_sizes(dXc, Xc, Xs, n, sizes, ref_new)
            done = True
            slow = False
            for b in range(nb):
                pa = prev[b] if have_prev else sizes[b]
                ok = (sizes[b] <= ROUNDOFF * ref_new[b] or (b > 1 and sizes[b] <= ROUNDOFF * tp)
                      or (have_prev and sizes[b] * sizes[b] <= stol * ref_new[b]
                          * max(pa, 1e-300)))
                if not ok:
                    done = False
                    if have_prev and sizes[b] > refresh_at * pa:
                        slow = True
            exact_last = exact
            if done and it > 1:
                close_positions(ys, g, gp, pos, Pi, dep_p)
                for k in range(N):
                    X[k] = (ys[k] - da[k]) / ca
                return it
            refresh = slow
            prev[:] = sizes
            ref[:] = ref_new
            top = tp
            have_prev = True
        for k in range(N):
            yd[k] = cb * Xc[k] + db[k]
        exact = mem[S_KEPT] == 0.0 or refresh
        if stale and refresh:
            mem[S_FRESH] = fresh_n
            stale = False
        residual_into(plan, par, ys, yd, shift, Q, DQ, exact, F, J, rw)
        gbig = 0.0
        for i in range(npos):
            for j in range(npos):
                Gt[j, i] = gp[i, dep_p[j]]
                gbig = max(gbig, abs(gp[i, dep_p[j]]))
        if npos > 0 and not _factored_well(Gt, gpiv, gbig):   # g_d^T, as B_d
            return CHOOSE
        # lam from the dependent velocities' rows, then the projected rows
        for k in range(nr):
            lv[k] = F[Vi[dep[k]]]
        _back_in_t(Bd, bpiv, lv)
        for k in range(nr):
            lam[k] = -lv[k]
        for k in range(npos):
            mu[k] = F[Pi[dep_p[k]]]
        _back_in(Gt, gpiv, mu)
        for k in range(npos):
            rows_[k] = g[pos[k]]
        for k in range(nfp):
            acc = F[Pi[free_p[k]]]
            for i in range(npos):
                acc -= gp[i, free_p[k]] * mu[i]
            rows_[npos + k] = acc
        for k in range(nf):
            acc = F[Vi[free[k]]]
            for i in range(nr):
                acc += B[i, free[k]] * lam[i]
            rows_[npos + nfp + k] = acc
        for k in range(nA):
            rows_[npos + nfp + nf + k] = F[Ai[k]]
        fnorm = 0.0
        for k in range(rows_.shape[0]):
            if not abs(rows_[k]) < np.inf:
                return -NOT_FINITE
            fnorm = max(fnorm, abs(rows_[k]))
        if it == 0:
            mem[S_SCALE] = max(mem[S_SCALE], fnorm)
        plateau = False
        if have_prev and exact_last and fnorm > 0.5 * fprev:
            plateau = True
            for b in range(nb):
                if prev[b] > PLATEAU * max(ref[b], ROUNDOFF * top):
                    plateau = False
        fprev = fnorm
        if plateau or (it > 0 and fnorm <= resid * mem[S_SCALE]):
            close_positions(ys, g, gp, pos, Pi, dep_p)
            for k in range(N):
                X[k] = (ys[k] - da[k]) / ca
            return max(it, 1)
        if exact:
            differ = mem[S_PD] <= 0.0 or mem[S_PD] >= pd_every
            if not _maggi_matrix(plan, par, jt, idx, ys, J, B, Bd, bpiv, gp, free, free_p, lam,
                                 KF, kpiv, pd, differ, mw):
                return -SINGULAR
            mem[S_PD] = 1.0 if differ else mem[S_PD] + 1.0
            mem[S_KEPT] = 1.0
            mem[S_SHIFT] = shift
        _back_in(KF, kpiv, rows_)   # the update (the rows are formed again next)
        dZ = rows_
        before[:] = ys
        for k in range(nP):
            ys[Pi[k]] -= dZ[k]
        for k in range(nf):
            u[k] -= dZ[nP + k]
        for k in range(nA):
            ys[Ai[k]] -= dZ[nP + nf + k]
    return -NOT_CONVERGED


@jit
def maggi_run(plan: tuple, spar: np.ndarray, sQ: np.ndarray, DQ: np.ndarray, tt: np.ndarray,
              scheme: tuple, tables: tuple, sfixed: np.ndarray, spresc: np.ndarray,
              idx: tuple, state: tuple, out: tuple, kept: tuple, mem: np.ndarray,
              consts: tuple, info: np.ndarray) -> None:
    """Started steps of Maggi's stages through the times ``tt``, one :func:`stage` a step,
    each as :meth:`~dolfinx_mbs.integrate.dense.coupled.DenseCoupledStepper._python_step`
    and :meth:`~dolfinx_mbs.integrate.dense.coupled.MaggiStage._compiled` take it (the same
    arithmetic: the same states to the bit); stops before a step whose stage asks for its
    dependent coordinates to be chosen again (:data:`CHOOSE`: Python's stage takes it from
    its guess) or fails.

    Args:
        plan: the model's arrays (:func:`~dolfinx_mbs.integrate.dense.coupled_kernels.
            residual`'s).
        spar: the stages' parent states in order (one row: the same at every stage).
        sQ: the stages' loads (one row: the same at every stage).
        DQ: -dQ/df (zero: loads of time alone).
        tt: the steps' times (the steps' number plus one).
        scheme: (second order, alpha_m, alpha_f, gamma): generalized-alpha's stage at
            t + alpha_f h from the rate V, else BDF2's at the step's end from the history.
        tables: the rows' tables (ei, ef, Tn, uoff).
        sfixed: the fixed slots' states at the stages (one row: the same at every stage).
        spresc: the driven motors' prescriptions at the stages (one row: the same).
        idx: :func:`stage`'s.
        state: (X, V, hist_t, hist_X): the state, its rate (generalized-alpha), BDF2's last
            time and state, updated in place.
        out: (Y, LAM): the step ends' states and multipliers (rows, written).
        kept: (KF, kpiv, pd): :func:`stage`'s matrix and position derivatives kept.
        mem: :func:`stage`'s memory (updated after each step; ``S_KEPT`` zeroed where a
            stage asks to choose).
        consts: :func:`stage`'s.
        info: steps done, status (0, :data:`CHOOSE` or a failure's code), iterations and
            stages solved (added to).
    """
    second, am, af, gm = scheme
    ei, ef, Tn, uoff = tables
    X, V, hist_t, hist_X = state
    Y, LAM = out
    KF, kpiv, pd = kept
    info[0] = 0
    info[1] = OK
    N = X.shape[0]
    nr = LAM.shape[1]
    one_p = spar.shape[0] == 1
    one_q = sQ.shape[0] == 1
    one_f = sfixed.shape[0] == 1
    one_m = spresc.shape[0] == 1
    da = np.zeros(N)
    db = np.empty(N)
    Xw = np.empty(N)
    X0 = np.empty(N)
    m2 = np.empty(mem.shape[0])
    lam = np.empty(nr)
    Pi, Vi, Ai, pos, dep = idx[0], idx[1], idx[2], idx[3], idx[4]
    work = stage_work(plan, N, plan[6], dep.shape[0], Vi.shape[0], pos.shape[0],
                      Pi.shape[0], Ai.shape[0])
    for s in range(tt.shape[0] - 1):
        t, t1 = tt[s], tt[s + 1]
        h = t1 - t
        X0[:] = X
        if second:
            ca, cb = af, am / (gm * h)
            for k in range(N):
                da[k] = (1.0 - af) * X0[k]
                db[k] = (1.0 - am / gm) * V[k] - am * X0[k] / (gm * h)
                Xw[k] = X0[k] + h * V[k]
        else:
            tm = hist_t[0]
            w = bdf_weights(t1, t, tm, True)
            ca, cb = 1.0, w[0]
            r = (t1 - t) / (t - tm)
            for k in range(N):
                db[k] = w[1] * X0[k] + w[2] * hist_X[0, k]
                Xw[k] = X0[k] + r * (X0[k] - hist_X[0, k])
        m2[:] = mem
        lam[:] = 0.0
        jt = (ei, ef, sfixed[0 if one_f else s], spresc[0 if one_m else s], Tn, uoff)
        code = stage(plan, spar[0 if one_p else s], jt, idx, (ca, da, cb, db),
                     sQ[0 if one_q else s], DQ, Xw, X0, KF, kpiv, m2, lam, consts, pd, work)
        if code == CHOOSE:
            mem[S_KEPT] = 0.0
            info[1] = CHOOSE
            return
        if code < 0:
            info[1] = -code
            return
        mem[:] = m2
        info[2] += code
        info[3] += 1
        if second:
            for k in range(N):
                V[k] = (Xw[k] - X0[k]) / (gm * h) + (1.0 - 1.0 / gm) * V[k]
        else:
            hist_t[0] = t
            for k in range(N):
                hist_X[0, k] = X0[k]
        for k in range(N):
            X[k] = Xw[k]
            Y[s, k] = Xw[k]
        for k in range(nr):
            LAM[s, k] = lam[k]
        info[0] = s + 1


@jit
def close_positions(ys: np.ndarray, g: np.ndarray, gp: np.ndarray, pos: np.ndarray,
                    Pi: np.ndarray, dep_p: np.ndarray) -> None:
    """The positions of ``ys`` moved onto the joints' position rows: one Newton step of g = 0
    in the dependent positions, g_d dp_d = -g (g at ``ys``: the rows ``pos`` of ``g``; g_p =
    ``gp``, its columns ``dep_p``). A converged stage's rows are of the order of Newton's
    last error, so that they are left at its square (round-off) whatever the update
    tolerance; the velocities are left as they are (their rows move by h_p dp, of the order of
    the velocities' own Newton error).

    Args:
        ys: the stage's state (its positions updated).
        g: the rows' position values at ``ys``.
        gp: the position rows' derivatives by the positions at ``ys``.
        pos: the position rows among the rows.
        Pi: the positions' places in the state.
        dep_p: the dependent positions (in ``Pi``).
    """
    npos = pos.shape[0]
    if npos == 0:
        return
    Gd = np.empty((npos, npos))
    rhs = np.empty(npos)
    for i in range(npos):
        rhs[i] = g[pos[i]]
        for j in range(npos):
            Gd[i, j] = gp[i, dep_p[j]]
    piv = np.zeros(npos, dtype=np.int64)
    if not _factor(Gd, piv):
        return
    _back_in(Gd, piv, rhs)
    for j in range(npos):
        ys[Pi[dep_p[j]]] -= rhs[j]


@jit
def _maggi_matrix(plan: tuple, par: np.ndarray, jt: tuple, idx: tuple, ys: np.ndarray,
                  J: np.ndarray, B: np.ndarray, Bd: np.ndarray, bpiv: np.ndarray,
                  gp: np.ndarray, free: np.ndarray, free_p: np.ndarray, lam: np.ndarray,
                  KF: np.ndarray, kpiv: np.ndarray, pd: tuple, differ: bool,
                  mw: tuple) -> bool:
    """Newton's matrix of Maggi's rows in (p, u, the auxiliary momenta), factored into
    ``KF``, ``kpiv`` (:meth:`~dolfinx_mbs.integrate.dense.coupled.MaggiStage._matrix`); False
    where it is singular or not finite. ``Bd`` holds the factors of B_d. ``pd``: (dh/dp,
    d(B^T lam)/dp, dB/dp, V, lam) where they were differenced (:func:`position_derivatives`):
    with ``differ`` differenced again at ``ys``, ``lam``; else carried there by dB/dp (the
    rows are linear in V, their position derivatives change fast with the velocities and
    multipliers of stiff modes, slowly with the positions). ``mw``: the work space
    (:func:`matrix_work`)."""
    ei, ef, fixed, presc, Tn, uoff = jt
    Pi, Vi, Ai, pos, dep, dep_p = idx
    n = plan[6]
    nP, nV, nA = Pi.shape[0], Vi.shape[0], Ai.shape[0]
    nr, npos = dep.shape[0], dep_p.shape[0]
    nf, nfp = free.shape[0], free_p.shape[0]
    N = ys.shape[0]
    nc = nP + nf + nA
    # A = [I; -B_d^-1 B_i] over V, C = [I; -g_d^-1 g_i] over P; dV/dp = -B_d^-1 h_p at the
    # dependent rows
    (Am, Gd, gdp, Cm, hp, fp, Vp, rhs, JV, W, dF, FP, FV, CmT, AmT, JW, KC, KV) = mw
    RB, RG, RH = rhs
    _null_basis(B, dep, free, Bd, bpiv, Am, RB)
    for i in range(npos):
        for j in range(npos):
            Gd[i, j] = gp[i, dep_p[j]]
    gdp[:] = 0
    _factor(Gd, gdp)
    _null_basis(gp, dep_p, free_p, Gd, gdp, Cm, RG)
    hp0, fp0, D, V0, lam0 = pd
    if differ:
        position_derivatives(ei, ef, plan[3], plan[4], par, plan[5], n, fixed, presc, Tn, ys, lam,
                             hp0, fp0, D)
        for j in range(nV):
            V0[j] = ys[Vi[j]]
        for r in range(nr):
            lam0[r] = lam[r]
    hp[:, :] = hp0
    fp[:, :] = fp0
    if not differ:   # (rows as views indexed from zero: the inner loops vectorize)
        for r in range(nr):
            dl = lam[r] - lam0[r]
            hr = hp[r]
            for j in range(nV):
                dV = ys[Vi[j]] - V0[j]
                Drj = D[r, j]
                fj = fp[j]
                for k in range(nP):
                    hr[k] += Drj[k] * dV
                    fj[k] += Drj[k] * dl
    Vp[:, :] = 0.0
    RH[:, :] = hp
    _solve_rows(Bd, bpiv, RH)
    for i in range(nr):
        for k in range(nP):
            Vp[dep[i], k] = -RH[i, k]
    # dF = [J_P + J_V Vp, J_V A, J_A] (rows: all of F), by products of gathered blocks
    for r in range(N):
        for j in range(nV):
            JV[r, j] = J[r, Vi[j]]
    for j in range(nV):
        for k in range(nP):
            W[j, k] = Vp[j, k]
        for k in range(nf):
            W[j, nP + k] = Am[j, k]
    np.dot(JV, W, JW)
    dF[:, :] = 0.0
    dF[:, :nP + nf] = JW
    for r in range(N):
        for k in range(nP):
            dF[r, k] += J[r, Pi[k]]
        for k in range(nA):
            dF[r, nP + nf + k] = J[r, Ai[k]]
    # the rows: g_p; C^T dF_P; A^T (dF_V + [d(B^T lam)/dp, 0]); dF_A
    for j in range(nP):
        for k in range(nc):
            FP[j, k] = dF[Pi[j], k]
    for j in range(nV):
        for k in range(nc):
            FV[j, k] = dF[Vi[j], k] + (fp[j, k] if k < nP else 0.0)
    KF[:, :] = 0.0
    for r in range(npos):
        for k in range(nP):
            KF[r, k] = gp[r, k]
    for i in range(nP):
        for k in range(nfp):
            CmT[k, i] = Cm[i, k]
    for i in range(nV):
        for k in range(nf):
            AmT[k, i] = Am[i, k]
    np.dot(CmT, FP, KC)
    np.dot(AmT, FV, KV)
    KF[npos:npos + nfp, :] = KC
    KF[npos + nfp:npos + nfp + nf, :] = KV
    for c in range(nA):
        for k in range(nc):
            KF[npos + nfp + nf + c, k] = dF[Ai[c], k]
    for i in range(nc):
        for j in range(nc):
            if not abs(KF[i, j]) < np.inf:
                return False
    return _factor(KF, kpiv)
