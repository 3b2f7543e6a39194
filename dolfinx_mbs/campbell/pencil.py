"""The pencil of a Campbell sweep's speeds, formed without asking the system at each speed.

For bodies in ConstantSpin or Stationary frames the frame terms are linear (Coriolis, the
stationary frame's gyroscopic) and quadratic (spin softening, centrifugal prestress) in Omega,
so K(Omega) = K_0 + Omega^2 K_2 and G(Omega) = G_0 + Omega G_1; bearings whose coefficients
change with the speed add known terms sum_j f_j(Omega) B_j (``extra``: their reduced unit
matrices B_j with the coefficient functions f_j, :func:`speed_terms`). :class:`SweepPencil`
takes the system's pencil at the lowest and the highest speed, checks the combination
against the system's pencil at a third speed (relative Frobenius difference <= 1e-12), and
then forms each speed's pencil by MatAXPY on one pattern, and gives the constant matrices with
the speed's coefficients (:meth:`SweepPencil.terms`) to the solver that carries its products
(:mod:`dolfinx_mbs.campbell.subspace`); where the check fails (a nonlinear system's tangent, a
user's form with an update) it asks the system at every speed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable, Sequence, Tuple, cast

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.campbell.subspace import Terms
from dolfinx_mbs.petsc_options import DIFFERENT, SAME, SUBSET

if TYPE_CHECKING:
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

log = logging.getLogger(__name__)

__all__ = ["SweepPencil", "speed_terms"]

#: the combination K_0 + Omega^2 K_2, G_0 + Omega G_1 is used when it matches the system's
#: pencil at a check speed to this relative Frobenius difference
COMBINATION_TOL = 1e-12


def _fro(X: PETSc.Mat) -> float:
    return cast(float, X.norm(PETSc.NormType.FROBENIUS))


class SweepPencil:
    """The pencil (K, G, M) of a sweep's speeds (module docstring).

    Args:
        pencil: ``pencil(speed) -> (K, G, M)``, the system's reduced pencil at ``speed`` (its
            matrices may be the system's own objects, refilled by the next call).
        speeds: the sweep's speeds (the reference and check speeds are taken from them).
        extra: known terms ``(which, name, B, f)``: "K" or "G", a name, a reduced matrix
            whose pattern is within the pencil's and its coefficient f(speed) (owned by the
            caller).
    """

    def __init__(self, pencil: Callable[[float], Tuple[PETSc.Mat, PETSc.Mat, PETSc.Mat]],
                 speeds: np.ndarray, extra: Sequence[tuple] | None = None) -> None:
        self.pencil = pencil
        self.extra = list(extra or [])
        self.combined = False
        W = np.asarray(speeds, dtype=float)
        ref = float(W[np.argmax(np.abs(W))])
        low = float(W[np.argmin(np.abs(W))])  # a sweep speed: within bearing tables
        if W.size < 3 or ref == 0.0 or low * low == ref * ref:
            return
        K, G, M = pencil(low)
        self.K0, self.G0, self.M = K.copy(), G.copy(), M.copy()
        self._known(self.K0, self.G0, low, -1.0)
        K, G, _ = pencil(ref)
        self.K2, self.G1 = K.copy(), G.copy()
        self._known(self.K2, self.G1, ref, -1.0)
        ok = True
        # the same matrix objects refilled: the same pattern; from the pencil at low and ref
        self.K2.axpy(-1.0, self.K0, structure=SAME)
        self.K2.scale(1.0 / (ref * ref - low * low))
        self.K0.axpy(-low * low, self.K2, structure=SAME)
        self.G1.axpy(-1.0, self.G0, structure=SAME)
        self.G1.scale(1.0 / (ref - low))
        self.G0.axpy(-low, self.G1, structure=SAME)
        self.K, self.G = self.K0.duplicate(), self.G0.duplicate()
        check = float(W[len(W) // 2]) if W[len(W) // 2] != 0.0 else 0.5 * ref
        Kc, Gc, _ = pencil(check)
        self._form(check)
        for X, Y in ((self.K, Kc), (self.G, Gc)):
            D = X.copy()
            D.axpy(-1.0, Y, structure=DIFFERENT)
            ok = ok and _fro(D) <= COMBINATION_TOL * max(_fro(Y), 1e-300)
            D.destroy()
        self.combined = bool(K.getComm().tompi4py().allreduce(ok, op=MPI.LAND))
        if not self.combined:
            log.info("Campbell sweep: the pencil is not K_0 + W^2 K_2, G_0 + W G_1; it is "
                     "evaluated at every speed")
            self.destroy()

    def _known(self, K: PETSc.Mat, G: PETSc.Mat, speed: float, sign: float) -> None:
        """K, G += sign times the known terms at ``speed``."""
        for which, _, B, f in self.extra:
            c = f(speed)
            if c != 0.0:
                (K if which == "K" else G).axpy(sign * c, B, structure=SUBSET)

    def _form(self, speed: float) -> None:
        for out, terms in ((self.K, ((1.0, self.K0), (speed ** 2, self.K2))),
                           (self.G, ((1.0, self.G0), (speed, self.G1)))):
            terms[0][1].copy(out, structure=SAME)
            out.axpy(terms[1][0], terms[1][1], structure=SAME)
        self._known(self.K, self.G, speed, 1.0)

    def __call__(self, speed: float) -> Tuple[PETSc.Mat, PETSc.Mat, PETSc.Mat]:
        """The pencil (K, G, M) at a spin speed.

        Combined from the constant matrices where the pencil is their combination (the same objects
        at every speed, refilled), else the system's own pencil at ``speed``.

        Args:
            speed: the spin speed (rad/s).

        Returns:
            ``(K, G, M)``.
        """
        if not self.combined:
            return self.pencil(speed)
        self._form(speed)
        return self.K, self.G, self.M

    def terms(self, speed: float) -> Terms | None:
        """The pencil at ``speed`` as its constant matrices with their coefficients (the same
        objects at every speed), or None when it is not the combination.

        Args:
            speed: the spin speed (rad/s).

        Returns:
            The terms, or None.
        """
        if not self.combined:
            return None
        out = {"K": [("K0", self.K0, 1.0), ("K2", self.K2, speed ** 2)],
               "G": [("G0", self.G0, 1.0), ("G1", self.G1, speed)],
               "M": [("M", self.M, 1.0)]}
        for which, name, B, f in self.extra:
            out[which].append((name, B, f(speed)))
        return out

    def destroy(self) -> None:
        """Destroy the constant and combined matrices (collective); the system gives the pencil."""
        for name in ("K0", "G0", "M", "K2", "G1", "K", "G"):
            X = self.__dict__.pop(name, None)
            if X is not None:
                X.destroy()
        self.combined = False


def speed_terms(system: SecondOrderSystem, damping: bool) -> list:
    """The known speed-dependent terms of ``system``'s pencil (bearing coefficients tabulated
    over the speed, :meth:`dolfinx_mbs.assembly.rotor_terms.RotorTerms.speed_terms`, and of
    the bearings between bodies,
    :meth:`dolfinx_mbs.assembly.bearing_links.BearingLinks.speed_terms`), reduced:
    ``(which, name, B, f)`` for :class:`SweepPencil`; damping terms only with ``damping``.
    The caller destroys the matrices.

    Args:
        system: the typed system.
        damping: include the damping terms.

    Returns:
        The terms.
    """
    asm, red = system.assembly, system.reducer
    out = []
    for ib, o in enumerate(asm.body_operators):
        rotor = getattr(o, "rotor", None)
        if rotor is None:
            continue
        for which, name, E, f in rotor.speed_terms(o):
            if which == "C" and not damping:
                continue
            X = asm.body_block(ib, E)
            out.append(("K" if which == "K" else "G", f"{ib}/{name}", red.reduce(X), f))
            if X is not E:
                X.destroy()
    links = getattr(asm, "bearing_links", None)
    for which, name, X, f in links.speed_terms() if links is not None else ():
        if which == "C" and not damping:
            X.destroy()
            continue
        out.append(("K" if which == "K" else "G", name, red.reduce(X), f))
        X.destroy()
    return out
