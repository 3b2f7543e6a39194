"""The matrix products of one state that a step's monitor and the next residual share.

In the node-block form (:class:`dolfinx_mbs.systems.InertiaBlocks`: constraints that fix whole
nodes) every inertia-type matrix is the mass times a gdim x gdim matrix per node, and the mass
commutes with such a block matrix (it is the scalar mass times the identity per node). Two
products of a state q, M q and K_s q, then give all the energies ask for:

    K q = K_s q + W_K (M q),     G_p q = W_p (M q),     K_el q = K_s q (no geometric stiffness),

and the residual of the next step, which PETSc evaluates first at the same state with zero
rates (TSTHETA's and TSALPHA2's initial guess is the last solution), needs no product of its
own. :class:`StateProducts` keeps M q, K_s q and a copy of q; a form asks ``holds(s, x)``
(same operators, x equal to q entry by entry) before it reuses them.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from petsc4py import PETSc

__all__ = ["StateProducts", "apply_blocks"]


def apply_blocks(segments, x: PETSc.Vec, out: PETSc.Vec, which: int, add: bool = False
                 ) -> PETSc.Vec:
    """out (+)= W x node by node: ``segments`` the (start, stop), gdim, matrices... tuples of
    :class:`~dolfinx_mbs.systems.InertiaBlocks` (``blocks`` or ``momentum``), ``which`` the
    index of the matrix W in each tuple."""
    xa = x.getArray(readonly=True)
    oa = out.getArray()
    for seg in segments:
        (lo, hi), g, W = seg[0], seg[1], seg[which]
        y = (xa[lo:hi].reshape(-1, g) @ W.T).ravel()
        if add:
            oa[lo:hi] += y
        else:
            oa[lo:hi] = y
    return out


class StateProducts:
    """M q and K_s q of the last state q given to :meth:`form`, for the record's version."""

    def __init__(self):
        self.q: Optional[PETSc.Vec] = None
        self.Mq: Optional[PETSc.Vec] = None
        self.Ksq: Optional[PETSc.Vec] = None
        self.version = None

    def form(self, s, q: PETSc.Vec) -> "StateProducts":
        """Form the products of ``q`` with the operators of the record ``s`` (which has its
        node-block form ``s.blocks``), unless they are kept already."""
        if self.holds(s, q):
            return self
        if self.q is None:
            self.q, self.Mq, self.Ksq = q.duplicate(), q.duplicate(), q.duplicate()
        q.copy(self.q)
        s.M.mult(q, self.Mq)
        s.blocks.Ks.mult(q, self.Ksq)
        self.version = s.version
        return self

    def holds(self, s, x: PETSc.Vec) -> bool:
        """True when the products kept are those of ``x`` with the operators of ``s``."""
        return self.q is not None and s.blocks is not None and self.version == s.version \
            and x.equal(self.q)

    def forget(self) -> None:
        self.version = None

    def energies(self, s) -> tuple:
        """(K_el q, K_pot q) of the state kept (``s``: its record); K_pot = K = K_s + M W_K
        (``s.Kpot`` must be ``s.K``)."""
        kr = s.blocks
        Kel_q = self.Ksq if kr.Ks is s.Kel else s.Kel.mult(self.q, self._vec("kel"))
        Kq = self.Ksq.copy(self._vec("k"))
        return Kel_q, apply_blocks(kr.blocks, self.Mq, Kq, 3, add=True)

    def _vec(self, name: str) -> PETSc.Vec:
        v = getattr(self, "_" + name, None)
        if v is None:
            v = self.q.duplicate()
            setattr(self, "_" + name, v)
        return v
