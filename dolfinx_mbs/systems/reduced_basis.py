"""The reduced operators of a frame state as combinations of matrices reduced once.

Every frame-dependent matrix of a body is a linear combination of constant matrices: the
frame couplings c_W = sum of coeff_i(W) c_E_i over the ``"basis"`` strategy's matrices of
:mod:`dolfinx_mbs.assembly.operators`; the spin softening c_Ww = sum of omega_i omega_j c_W_ij over
the unit spin cases W_ij of ``forms.unit_spin_cases``, and the geometric stiffness K_sigma = sum of
the unit prestress cases' stiffnesses P_c weighted by ``Body.prestress_coefficient``, which is
omega_i omega_j for the same cases; M, K and the damping D are constant. The Maggi reduction
A^T X A is linear in X, so for a basis A that does not move each constant matrix is reduced
once (the first time its coefficient is nonzero) and the reduced operators of a new frame state
are combined from them with MatAXPY on one shared pattern: no submatrix, no PtAP, no full-size
matrix formed per state. With S_ij = c_W_ij + P_ij (one matrix per spin case):

    C = D + c_Wg,    K = K_el + sum omega_i omega_j S_ij + c_Wa + K_sigma',
    K_w = K_el + sum omega_i omega_j S_ij + K_sigma',    G = c_Wg          (all reduced)

K_sigma' the prestress of the other cases (gravity and origin acceleration, constant loads).

:meth:`ReducedBasis.make` decides whether it applies: every body's operators use the
``"basis"`` strategy (time-varying frames), none has user stiffness or damping forms with an
update, the reducer's basis A does not move with time, and the reduced matrices share one
pattern.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.assembly.operators import combine
from dolfinx_mbs.forms.moving_frame import FrameCoupling, unit_spin_cases
from dolfinx_mbs.petsc_options import SAME

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.constraints.maggi import MaggiReducer

__all__ = ["ReducedBasis"]

#: the combinations, by name: the parts of each (see the module docstring) and a factor
COMBINATIONS = {"C": (("D", "gyroscopic"), 1.0),
                "K": (("Kel", "spin", "angular", "prestress"), 1.0),
                "Kw": (("Kel", "spin", "prestress"), 1.0), "Gp": (("gyroscopic",), 0.5)}


class ReducedBasis:
    """Reduced constant matrices and their combinations at frame states.

    Use :meth:`make` (None where it does not apply). Then :meth:`update` with the bodies'
    frame states; :meth:`out` is the matrix of a combination (``"C"``, ``"K"``, ``"Kw"``,
    ``"Gp"``: C, K, K_w and G/2, one object each, refilled), which :meth:`form` brings to the
    last state (only when read: a combination nobody reads is not formed). ``M``, ``Kel`` and
    ``D`` (None without damping) are the constant reduced matrices.

    Args:
        assembly: the model's assembly.
        reducer: the Maggi reducer.
    """

    def __init__(self, assembly: Assembly, reducer: MaggiReducer) -> None:
        self.assembly, self.reducer = assembly, reducer
        self.ops = assembly.body_operators
        self.comm = assembly.comm
        self._ingredients: Dict[tuple, PETSc.Mat] = {}
        self.M = self._reduce(("M",), assembly.mass())
        self.Kel = self._reduce(("Kel",), assembly.elastic())
        Dm = assembly.rayleigh()
        self.D = self._reduce(("D",), Dm) if Dm is not None else None
        self._nz = self._local_nz(self.M)
        self._out: Dict[str, PETSc.Mat] = {}
        self._terms: Dict[str, tuple] = {}    # of each combination at the last state
        self._formed: Dict[str, tuple] = {}   # the terms each output holds
        #: per body, the frame-coupling W matrices of the last state (``forms.frame_coupling``)
        self.W: List[FrameCoupling] = []
        #: per body, the unit spin cases {(i, j): W_ij} (``forms.unit_spin_cases``)
        self.spin_cases = [unit_spin_cases(o.body.gdim) for o in self.ops]
        #: per body, the coupling basis' coefficient functionals (linear in W) as the rows of
        #: a matrix on W.ravel()
        units = np.eye(9).reshape(9, 3, 3)
        self.coupling_rows = [np.array([[coeff(E) for E in units]
                                        for coeff, _ in o.coupling_matrices]) for o in self.ops]

    @classmethod
    def make(cls, assembly: Assembly, reducer: MaggiReducer) -> "ReducedBasis" | None:
        """A ReducedBasis of the assembly's bodies under ``reducer``, or None when the reduced
        operators are not combinations of constant matrices (see the module docstring; the
        same answer on every rank).

        Args:
            assembly: the model's assembly.
            reducer: the Maggi reducer.

        Returns:
            The basis, or None.
        """
        if reducer.rheonomic:
            return None
        ops = assembly.body_operators
        if getattr(assembly, "bearing_links", None) is not None:
            return None  # bearings between bodies: terms the combinations do not hold
        if not all(o.coupling_matrices and not o.varying_user_matrices for o in ops):
            return None
        rb = cls(assembly, reducer)
        ok = rb._same_pattern(rb.Kel) and (rb.D is None or rb._same_pattern(rb.D))
        return rb if assembly.comm.allreduce(ok, op=MPI.LAND) else None

    # -- reduced constant matrices ------------------------------------------------------------
    @staticmethod
    def _local_nz(X: PETSc.Mat) -> int:
        return int(X.getInfo(PETSc.Mat.InfoType.LOCAL)["nz_used"])

    def _same_pattern(self, X: PETSc.Mat) -> bool:
        return self._local_nz(X) == self._nz

    def _reduce(self, key: tuple, X: PETSc.Mat) -> PETSc.Mat:
        R = self._ingredients.get(key)
        if R is None:
            R = self._ingredients[key] = self.reducer.reduce(X)
        return R

    def ingredient(self, key: tuple) -> PETSc.Mat:
        """The reduced constant matrix ``key`` (reduced on first use): ("E", body, i) the i-th
        coupling basis matrix, ("S", body, (i, j)) the spin case's c_W_ij + P_ij, ("P", body,
        case) another prestress case's geometric stiffness.

        Args:
            key: the matrix's key.

        Returns:
            The reduced matrix.
        """
        R = self._ingredients.get(key)
        if R is not None or len(key) == 1:  # M, Kel, D: reduced at set-up
            return R
        kind, ib, which = key
        o = self.ops[ib]
        prestress = dict(o.prestress_matrices)
        if kind == "E":
            X = o.coupling_matrices[which][1]
        elif kind == "P":
            X = prestress[which]
        else:
            X = o.coupling_matrix(self.spin_cases[ib][which])  # a new matrix
            if which in prestress:
                X.axpy(1.0, prestress[which], structure=SAME)
        full = self.assembly.body_block(ib, X)
        R = self._reduce(key, full)
        if full is not X:
            full.destroy()
        if kind == "S":
            X.destroy()
        # the same pattern as M's: every combination is MatAXPY on one pattern (checked on
        # each rank's part; an unexpected pattern fails here on all ranks, not silently)
        if not self.comm.allreduce(self._same_pattern(R), op=MPI.LAND):
            raise RuntimeError(f"reduced basis: the reduced matrix {key} does not share the "
                               "mass matrix's pattern")
        return R

    # -- combinations at frame states -------------------------------------------------------
    def _parts(self, states: Sequence) -> Dict[str, List[Tuple[float, tuple]]]:
        """(coefficient, ingredient key) lists of each part at ``states`` (zero terms
        dropped)."""
        parts: Dict[str, List[Tuple[float, tuple]]] = {
            "Kel": [(1.0, ("Kel",))], "D": [(1.0, ("D",))] if self.D is not None else [],
            "gyroscopic": [], "angular": [], "spin": [], "prestress": []}
        self.W = []
        for ib, (o, st) in enumerate(zip(self.ops, states)):
            W = o.coupling(st)
            self.W.append(W)
            coef = self.coupling_rows[ib]
            for name, Wi in (("gyroscopic", W["gyroscopic"]),
                             ("angular", W["angular_acceleration"])):
                cs = coef @ Wi.ravel()
                parts[name] += [(float(cs[i]), ("E", ib, int(i))) for i in np.flatnonzero(cs)]
            spin = self.spin_cases[ib]
            for i, j in spin:
                c = float(st.omega[i] * st.omega[j])
                if c != 0.0:
                    parts["spin"].append((c, ("S", ib, (i, j))))
            for case, _ in o.prestress_matrices:
                if case in spin:
                    continue
                c = float(o.body.prestress_coefficient(case, st))
                if c != 0.0:
                    parts["prestress"].append((c, ("P", ib, case)))
        return parts

    def update(self, states: Sequence) -> bool:
        """Take the bodies' frame ``states`` (nothing is formed yet); True when a
        combination's terms differ from those of the last state.

        Args:
            states: the bodies' frame states.

        Returns:
            True when the terms changed.
        """
        parts = self._parts(states)
        changed = False
        for name, (names, factor) in COMBINATIONS.items():
            terms = tuple((factor * c, k) for p in names for c, k in parts[p])
            changed = changed or terms != self._terms.get(name)
            self._terms[name] = terms
        return changed

    def out(self, name: str) -> PETSc.Mat:
        """The matrix object of the combination ``name`` (its values: :meth:`form`).

        Args:
            name: the combination's name.

        Returns:
            The matrix.
        """
        if name not in self._out:
            self._out[name] = self.M.duplicate()
        return self._out[name]

    def form(self, name: str) -> PETSc.Mat:
        """The combination ``name`` at the last :meth:`update`'s states, formed unless it
        holds them already.

        Args:
            name: the combination's name.

        Returns:
            The matrix.
        """
        out, terms = self.out(name), self._terms[name]
        if self._formed.get(name) != terms:
            combine(out, [(c, self.ingredient(k)) for c, k in terms])
            self._formed[name] = terms
        return out

