"""Velocity constraints that are not eliminated from the coordinates (nonholonomic ones
included): Maggi's equations in independent velocities (``theory.md`` section 5).

The holonomic constraints give Delta = A q + a0(t) (:class:`dolfinx_mbs.maggi.MaggiReducer`).
Velocity rows ``B_n(t) Delta' = c_n(t)`` (:class:`dolfinx_mbs.constraints.VelocityRows`) act on
q' = v:

    B_n A v = c_n - B_n a0'         (A time-invariant)

and the same reducer, run over the space of q, eliminates them: v = A_n(t) w + a_n(t), with w the
n_w = n - m_n independent velocities. q itself stays free (a nonholonomic row restricts no
position). Maggi's equations for the state (q, w):

    q' - A_n w - a_n = 0                                                     (n equations)
    A_n^T (M_r v' + C_r v + K_r q - f_r) = 0,   v' = A_n w' + A_n' w + a_n'   (n_w equations)

i.e. M_w w' + C_w w + K_w q = f_w with

    M_w = A_n^T M_r A_n,   C_w = A_n^T (C_r A_n + M_r A_n'),   K_w = A_n^T K_r (n_w x n),
    f_w = A_n^T (f_r - M_r a_n' - C_r a_n),

M_r, C_r, K_r, f_r the holonomically reduced operators of :meth:`dolfinx_mbs.Model.reduced_system`.
No multiplier is formed; the constraint forces of the velocity rows are in the full residual
(:meth:`dolfinx_mbs.Model.constraint_forces`) like the others'.
"""

from __future__ import annotations

from typing import Dict, Optional

import numpy as np
from petsc4py import PETSc

from .constraints import Constraint, Rows, VelocityRows
from .maggi import MaggiReducer

__all__ = ["ReducedSpace", "VelocityBasis", "VelocitySystem"]

SUB = PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN


class ReducedSpace:
    """The space of q (the holonomic reducer's independent coordinates), as the numbering a
    :class:`MaggiReducer` works on: each rank owns its independent dofs, in full order."""

    def __init__(self, holonomic: MaggiReducer):
        self.holonomic = holonomic
        self.comm = comm = holonomic.comm
        self.n_local = len(holonomic.independent)
        self.n_global = holonomic.n_reduced
        self.rstart = comm.exscan(self.n_local) or 0
        self.offsets = np.array([0, self.n_local], np.int64)

    def create_vec(self) -> PETSc.Vec:
        v = self.holonomic.create_reduced_vec()
        v.set(0.0)
        return v

    def where(self, k: int):
        """(body name, local dof) of reduced index ``k``, for messages."""
        h = self.holonomic
        return h._where(h.full_index(k))


class _OnReducedSpace(Constraint):
    """A :class:`VelocityRows` seen on the space of q: rows (B A) v = c - B a0'."""

    def __init__(self, rows: VelocityRows, holonomic: MaggiReducer, full_space):
        self.inner, self.holonomic, self.full_space = rows, holonomic, full_space
        self.name = rows.name
        self.time_dependent = rows.time_dependent or holonomic.time_dependent

    def rows(self, space, t: float) -> Rows:
        self.holonomic.update(t)
        return self.holonomic.substitute_rates(self.inner.rows(self.full_space, t))


class VelocityBasis(MaggiReducer):
    """v = A_n(t) w + a_n(t): the holonomic reducer's elimination run on the velocity rows over
    the space of q (same pivoting, redundancy and consistency checks, messages naming the
    rows and a dof). Attributes as :class:`MaggiReducer`'s, first derivatives only
    (``A`` = A_n, ``A_dot``, ``a0`` = a_n, ``a0_dot``)."""

    def __init__(self, model, t: float = 0.0):
        hol = model.reducer
        self.holonomic = hol
        rows = [_OnReducedSpace(c, hol, model.space) for c in model.velocity_constraints]
        hol.update(t)
        super().__init__(ReducedSpace(hol), rows, t=t, order=1)


class VelocitySystem:
    """The operators of Maggi's equations in (q, w) at a time, objects reused.

    Args:
        model: the :class:`dolfinx_mbs.Model` (with velocity constraints).
    """

    def __init__(self, model):
        self.model = model
        self.basis = VelocityBasis(model)
        self._sys: Dict[str, object] = {}
        self._key = None
        self._stamp = None
        self._tmp: Optional[PETSc.Vec] = None

    def __call__(self, t: float) -> Dict[str, object]:
        """``M``, ``C``, ``K``, ``f``, ``Kel`` of the holonomically reduced system (for
        energies) and ``An``, ``An_dot`` (None when constant), ``an``, ``an_dot`` (None when
        constant), ``Mw``, ``Cw``, ``Kw``, ``fw``; ``_version`` changes when a matrix did."""
        if self._key == t and self.model._system_key == (float(t), False):
            return self._sys  # (the model's cache is dropped when its loads or frames change)
        s = self.model.reduced_system(t)
        nb = self.basis
        nb.update(t)
        out = self._sys
        for k in ("M", "C", "K", "f", "Kel"):
            out[k] = s[k]
        stamp = (id(s), s["_version"], nb.t if nb.rheonomic else None)
        if stamp != self._stamp:
            out["Mw"] = nb.reduce(s["M"], key="M")
            out["Cw"] = nb.reduce(s["C"], key="C")
            if nb.rheonomic:
                out["Cw"].axpy(1.0, nb.reduce_with(s["M"], nb.A_dot, "M.Ad"), structure=SUB)
            out["Kw"] = nb.A.transposeMatMult(s["K"], result=out.get("Kw"))
            out["_version"] = out.get("_version", 0) + 1
            self._stamp = stamp
        out["An"], out["An_dot"] = nb.A, nb.A_dot
        out["an"], out["an_dot"] = nb.a0, nb.a0_dot
        # f_w = A_n^T (f_r - M_r a_n' - C_r a_n)
        rhs = s["f"].copy(out.get("_rhs"))
        out["_rhs"] = rhs
        if nb.prescribed:
            tmp = self._tmp if self._tmp is not None else rhs.duplicate()
            self._tmp = tmp
            s["C"].mult(nb.a0, tmp)
            rhs.axpy(-1.0, tmp)
            if nb.a0_dot is not None:
                s["M"].mult(nb.a0_dot, tmp)
                rhs.axpy(-1.0, tmp)
        out["fw"] = nb.project(rhs, out.get("fw"))
        self._key = t
        return out

    def velocity(self, t: float, w: PETSc.Vec, out: PETSc.Vec) -> PETSc.Vec:
        """v = A_n w + a_n at ``t``."""
        s = self(t)
        s["An"].multAdd(w, s["an"], out)
        return out

    def acceleration(self, t: float, w: PETSc.Vec, w_dot: PETSc.Vec, out: PETSc.Vec
                     ) -> PETSc.Vec:
        """v' = A_n w' + A_n' w + a_n' at ``t``."""
        s = self(t)
        s["An"].mult(w_dot, out)
        if s["An_dot"] is not None:
            s["An_dot"].multAdd(w, out, out)
        if s["an_dot"] is not None:
            out.axpy(1.0, s["an_dot"])
        return out
