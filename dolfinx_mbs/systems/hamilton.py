"""Hamilton's form as a typed system: :class:`HamiltonSystem` (``at(t)`` gives
:class:`~dolfinx_mbs.systems.records.Hamiltonian`), the second-order system's operators and
Hamilton's own (G_p, D, K_h, the moving-constraint terms, the momentum vectors). Import it
from :mod:`dolfinx_mbs.systems`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.petsc_options import SAME, SUBSET
from dolfinx_mbs.systems.records import Hamiltonian
from dolfinx_mbs.systems.second_order import SecondOrderSystem

if TYPE_CHECKING:
    from dolfinx_mbs.frames.base import FrameState
    from dolfinx_mbs.systems.reduced_basis import ReducedBasis

__all__ = ["HamiltonSystem"]



class HamiltonSystem(SecondOrderSystem):
    """Hamilton's form in (q, p), p the generalized momentum, on the Maggi-reduced
    coordinates (``docs/theory.md`` sections 4 and 5); ``at(t)`` gives :class:`Hamiltonian`."""

    formulations = ("hamiltonian",)
    formed_on_read = {"C": "C", "K": "K", "Kpot": "K", "Gp": "Gp", "Kh": "Kw"}

    def _further(self, t: float, states: Sequence[FrameState] | None, rb: ReducedBasis | None,
                 K: PETSc.Mat) -> dict:
        """G_p, D, K_h: G / 2 in its own product; K_h is K itself where alpha = 0."""
        if rb is not None:
            return dict(Gp=rb.out("Gp"), D=rb.D, Kh=rb.out("Kw"))
        asm, red = self.assembly, self.reducer
        Gp = red.reduce(asm.gyroscopic(t, states=states), key="Gp")
        Gp.scale(0.5)
        Dm = asm.rayleigh()
        D = red.reduce(Dm, key="D") if Dm is not None else None
        assert states is not None  # (at() passes the states it forms at)
        if not red.rheonomic and not any(np.any(st.alpha) for st in states):
            return dict(Gp=Gp, D=D, Kh=K)
        return dict(Gp=Gp, D=D, Kh=red.reduce(
            asm.stiffness(t, angular_acceleration=False, states=states), key="Kw"))

    def _form(self, t: float, states: Sequence[FrameState] | None, rb: ReducedBasis | None,
              version: int) -> Hamiltonian:
        M, C, K, Kel, more = self._matrices(t, states, rb)
        old, red = self._ops, self.reducer
        Gp, D, Kh = more["Gp"], more["D"], more["Kh"]
        s = Hamiltonian(t=t, M=M, C=C, K=K, Kel=Kel, Kpot=K, f=None,
                        blocks=self._inertia_blocks(t, states, rb, Kel),
                        version=version, Gp=Gp, D=D, Kh=Kh,
                        Gq=old.Gq if old is not None else None, formed=self._formed(rb))
        if old is not None:
            s.pi0, s.h, s.fa = old.pi0, old.h, old.fa
        if red.rheonomic:
            self._rheonomic(t, s, states)
        return s

    def _rheonomic(self, t: float, s: Hamiltonian, states: Sequence[FrameState] | None) -> None:
        """The A-dot terms of a rheonomic reducer.

        With Delta = A(t) q + a0(t): the momentum P = A^T p,
        P' = A^T (dL/dDelta + Q) + A'^T p gives

            M_r q' + (A^T G_p A + A^T M A') q + A^T w - P = 0,        w = pi_0 + M a0' + G_p a0
            P' + G_q q' + K_h,r q + h_r - f_a,r = 0,
            G_q = A^T (G_p + D) A - A'^T M A,
            K_h,r = A^T K_h A + A^T (G_p + D) A' - A'^T M A' - A'^T G_p A."""
        asm, red, w = self.assembly, self.reducer, self._work
        M, Cf, G = asm.mass(), asm.damping(t, states=states), asm.gyroscopic(t, states=states)
        MAd = red.reduce_with(M, red.A_dot, "M.Ad")     # A^T M A'
        GAd = red.reduce_with(G, red.A_dot, "G.Ad")     # A^T G A'
        CAd = red.reduce_with(Cf, red.A_dot, "C.Ad")    # A^T (G + D) A'
        AdMAd = red.reduce_dot(M, "M.AdAd")             # A'^T M A'
        MAdT = w["MAdT"] = MAd.transpose(w.get("MAdT", PETSc.Mat()))
        GAdT = w["GAdT"] = GAd.transpose(w.get("GAdT", PETSc.Mat()))
        assert s.Gp is not None and s.Kh is not None  # (formed with the record)
        Gq = s.Gp.copy(s.Gq, structure=SAME) if s.Gq is not None else s.Gp.copy()
        if s.D is not None:
            Gq.axpy(1.0, s.D, structure=SUBSET)
        Gq.axpy(-1.0, MAdT, structure=SUBSET)
        s.Gq = Gq
        s.Gp.axpy(1.0, MAd, structure=SUBSET)
        s.Kh.axpy(1.0, CAd, structure=SUBSET)    # A^T (G_p + D) A' = A^T (G + D) A' - A^T G_p A'
        s.Kh.axpy(-0.5, GAd, structure=SUBSET)
        s.Kh.axpy(-1.0, AdMAd, structure=SUBSET)
        s.Kh.axpy(0.5, GAdT, structure=SUBSET)   # - A'^T G_p A = + (A^T G_p A')^T

    # a Hamiltonian system's records are Hamiltonian
    def _vectors(self, t: float, s: Hamiltonian,  # type: ignore[override]
                 states: Sequence[FrameState] | None) -> None:
        """pi0, h, fa with the prescribed part a0(t) folded in: pi0 = A^T w,
        h = A^T (h + K_h a0 + (G_p + D) a0') - A'^T w, fa = A^T f_a."""
        asm, red = self.assembly, self.reducer
        full = asm.hamilton_vectors(t, states)
        w, h = full.pi0, full.h
        if red.prescribed:
            tmp = self._vec("tmp")
            G = asm.gyroscopic(t, states=states)
            G.mult(red.a0, tmp)
            w.axpy(0.5, tmp)
            asm.stiffness(t, angular_acceleration=False, states=states).mult(red.a0, tmp)
            h.axpy(1.0, tmp)
            if red.a0_dot is not None:
                asm.mass().mult(red.a0_dot, tmp)
                w.axpy(1.0, tmp)
                asm.damping(t, states=states).mult(red.a0_dot, tmp)  # (G + D) a0'
                h.axpy(1.0, tmp)
                G.mult(red.a0_dot, tmp)
                h.axpy(-0.5, tmp)
        s.pi0 = red.project(w, s.pi0)
        s.h = red.project(h, s.h)
        if red.A_dot is not None:
            hr = self._work.get("hr")
            hr = self._work["hr"] = hr if hr is not None else s.h.duplicate()
            red.A_dot.multTranspose(w, hr)
            s.h.axpy(-1.0, hr)
        s.fa = red.project(full.fa, s.fa)
