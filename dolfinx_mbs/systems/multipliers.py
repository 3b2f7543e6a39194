"""The same constrained model as a saddle-point system with Lagrange multipliers.

For comparison with the Maggi reducer (``docs/theory.md`` section 5):

    [M 0] [Delta'']   [C 0] [Delta']   [K  B^T] [Delta ]   [Q]
    [0 0] [lambda''] + [0 0] [lambda'] + [B  0  ] [lambda] = [c]

n + m unknowns instead of n - m; the rows are the constraints' own rows B(t) Delta = c(t) (the
redundant ones, found by the reducer, left out so the system is regular). ``-B^T lambda`` is
the constraint force. Offered for statics and for the second-order time integrators; the
operators share one sparsity pattern, so the integrators treat them like the reduced ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Sequence, Tuple, cast

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.petsc_options import SAME, SolverOptions, direct_lu, reason_name
from dolfinx_mbs.systems.records import SecondOrder

if TYPE_CHECKING:
    from mpi4py import MPI

    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.constraints.base import Constraint
    from dolfinx_mbs.constraints.maggi import MaggiReducer

__all__ = ["SaddlePoint"]



#: Options of the saddle-point solves: MUMPS needs room for the pivoting a zero diagonal block
#: causes (ICNTL(14), percent); the database's options win
SADDLE_OPTIONS = SolverOptions("mbs_saddle_", {"mat_mumps_icntl_14": 200})


def _saddle_solve(J: PETSc.Mat, rhs: PETSc.Vec, x: PETSc.Vec, comm: MPI.Comm) -> int:
    """X = J^-1 rhs by MUMPS LU (options prefix ``mbs_saddle_``); returns the KSP's reason."""
    ksp = PETSc.KSP().create(comm)
    try:
        direct_lu(ksp)
        ksp.setOptionsPrefix(SADDLE_OPTIONS.prefix)
        SADDLE_OPTIONS.set_from_options(ksp)
        ksp.setOperators(J)
        SADDLE_OPTIONS.set_up(ksp)
        ksp.solve(rhs, x)
        return cast(int, ksp.getConvergedReason())
    finally:
        ksp.destroy()


class SaddlePoint:
    """Lagrange-multiplier form of a model's constraints: a typed system (second-order form
    only) whose ``at(t)`` gives the augmented :class:`dolfinx_mbs.systems.SecondOrder`, and
    whose coordinates are [Delta; lambda].

    Args:
        assembly: the full operators (:class:`dolfinx_mbs.assembly.Assembly`).
        reducer: the Maggi reducer of the same constraints (it finds the redundant rows).
        constraints: the holonomic constraints.

    Attributes:
        n_multipliers: number of multipliers (independent constraint rows).
    """

    formulations = ("second-order",)
    nonlinear = False
    has_multipliers = True

    def __init__(self, assembly: Assembly, reducer: MaggiReducer,
                 constraints: Sequence[Constraint]) -> None:
        self.assembly = assembly
        self.constraints = list(constraints)
        self.space = sp = assembly.space
        self.bodies = assembly.bodies
        comm = self.comm = sp.comm
        self._skip = {r["row"] for r in reducer.redundant}
        self.time_dependent = reducer.time_dependent
        # rows scaled to the stiffness (mean |diagonal| of K): a well-balanced saddle point
        d = assembly.stiffness(0.0).getDiagonal()
        self.scale = d.norm(PETSc.NormType.NORM_1) / max(d.getSize(), 1)
        rows = self._rows(0.0)
        self.m_local = len(rows[0]) - 1
        self.m = comm.allreduce(self.m_local)
        n = sp.n_local
        self.n_local = n
        self.B = PETSc.Mat().createAIJ(((self.m_local, self.m), (n, sp.n_global)),
                                       csr=rows[:3], comm=comm)
        self.B.assemble()
        self.Bt = self.B.transpose(PETSc.Mat())  # (no argument would transpose in place)
        self.c = self.B.createVecLeft()
        self._fill_c(rows[3])
        self._t = 0.0
        self._ops: SecondOrder | None = None
        self._key: tuple | None = None
        self._stamp: object = None
        self._nests: Dict[str, PETSc.Mat] = {}
        # layout of the augmented vectors: rank r owns its n full dofs, then its m multipliers
        self.sizes = (n + self.m_local, sp.n_global + self.m)
        self.n_reduced = self.sizes[1]

    def _rows(self, t: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """This rank's kept rows at ``t`` as CSR (indptr, cols, vals) and the right-hand
        sides."""
        comm = self.comm
        indptr, cols, vals, rhs = [0], [], [], []
        rid = 0
        for c in self.constraints:
            r = c.rows(self.space, t)
            counts = comm.allgather(r.n_rows)
            first = rid + sum(counts[: comm.rank])
            for i in range(r.n_rows):
                if first + i in self._skip:
                    continue
                sl = slice(r.indptr[i], r.indptr[i + 1])
                cols.extend(r.cols[sl].tolist())
                vals.extend((self.scale * r.coef[sl, 0]).tolist())
                rhs.append(self.scale * r.rhs[i, 0])
                indptr.append(len(cols))
            rid += sum(counts)
        return (np.array(indptr, dtype=PETSc.IntType), np.array(cols, dtype=PETSc.IntType),
                np.array(vals, dtype=float), np.array(rhs, dtype=float))

    def _fill_c(self, rhs: PETSc.Vec) -> None:
        self.c.array[:] = rhs

    def update(self, t: float) -> bool:
        """Re-evaluate B and c at ``t`` (time-dependent constraints only).

        Args:
            t: time (s).

        Returns:
            True when anything changed.
        """
        if not self.time_dependent or t == self._t:
            return False
        indptr, cols, vals, rhs = self._rows(t)
        self.B.zeroEntries()
        self.B.setValuesCSR(indptr, cols, vals)
        self.B.assemble()
        self.B.transpose(out=self.Bt)
        self._fill_c(rhs)
        self._t = t
        return True

    # -- vectors -----------------------------------------------------------------------------
    def create_reduced_vec(self) -> PETSc.Vec:
        """A zero vector [Delta; lambda] of the saddle-point system."""
        v = PETSc.Vec().createMPI(self.sizes, comm=self.comm)
        v.set(0.0)
        return v

    def restrict(self, x: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """[Delta; 0] from a full vector.

        Args:
            x: a full vector.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        out = out if out is not None else self.create_reduced_vec()
        a = out.getArray()
        a[:] = 0.0
        a[: self.n_local] = x.getArray(readonly=True)
        return out

    def expand(self, q: PETSc.Vec, out: PETSc.Vec | None = None,
               homogeneous: bool = False) -> PETSc.Vec:
        """Delta from an augmented vector.

        Args:
            q: the augmented coordinates [Delta; lambda].
            out: the vector to fill (new if None).
            homogeneous: unused (the multiplier form has no a0).

        Returns:
            ``out``.
        """
        out = out if out is not None else self.space.create_vec()
        out.array[:] = q.getArray(readonly=True)[: self.n_local]
        return out

    def expand_rate(self, q: PETSc.Vec, v: PETSc.Vec, out: PETSc.Vec | None = None
                    ) -> PETSc.Vec:
        """Delta' from the augmented rate ``v``.

        Args:
            q: the augmented coordinates [Delta; lambda].
            v: the augmented rate.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        return self.expand(v, out)

    def expand_acceleration(self, q: PETSc.Vec, v: PETSc.Vec | None, a: PETSc.Vec | None,
                            out: PETSc.Vec | None = None) -> PETSc.Vec:
        """Delta'' from the augmented acceleration ``a``.

        Args:
            q: the augmented coordinates [Delta; lambda].
            v: unused.
            a: the augmented acceleration.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        return self.expand(a, out)

    def multipliers(self, q: PETSc.Vec) -> np.ndarray:
        """This rank's multipliers (of the unscaled rows) from an augmented vector.

        Args:
            q: the augmented coordinates [Delta; lambda].

        Returns:
            The multipliers.
        """
        return cast(np.ndarray, self.scale * q.getArray(readonly=True)[self.n_local:])

    def constraint_forces(self, t: float, q: PETSc.Vec, v: PETSc.Vec | None = None,
                          a: PETSc.Vec | None = None, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """-B^T lambda (full vector) of the augmented state ``q`` at ``t``: the forces the
        constraints exert on the dofs.

        Args:
            t: time (s).
            q: the augmented coordinates [Delta; lambda].
            v: unused.
            a: unused.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        self.update(t)
        lam = self.B.createVecLeft()
        lam.array[:] = q.getArray(readonly=True)[self.n_local:]
        out = out if out is not None else self.space.create_vec()
        self.Bt.mult(lam, out)
        out.scale(-1.0)
        return out

    def project(self, b: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """[b; c]: a full load vector with the constraints' right-hand side c.

        Args:
            b: a full vector.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        out = out if out is not None else self.create_reduced_vec()
        a = out.getArray()
        a[: self.n_local] = b.getArray(readonly=True)
        a[self.n_local:] = self.c.getArray(readonly=True)
        return out

    # -- operators -----------------------------------------------------------------------------
    def _augment(self, key: str, X: PETSc.Mat, coupled: bool) -> PETSc.Mat:
        """[[X, B^T], [B, 0]] (or with zero-valued coupling blocks, same pattern)."""
        if coupled:
            Bt, B = self.Bt, self.B
        else:
            zb = self._nests.get("zeroB")
            if zb is None:
                zb = (self.B.duplicate(), self.Bt.duplicate())
                self._nests["zeroB"] = zb
            B, Bt = zb
        nest = PETSc.Mat().createNest([[X, Bt], [B, None]], comm=self.comm)
        out = self._nests.get(key)
        if out is None:
            out = nest.convert("aij")
        else:
            nest.convert("aij", out=out)
        self._nests[key] = out
        return out

    def forget(self) -> None:
        """Nothing to drop: :meth:`at` brings the assembly to ``t`` first at every call."""

    def at(self, t: float) -> SecondOrder:
        """The augmented operators at ``t`` (``Kel``, ``Kpot`` without the constraint rows, for
        energies).

        Args:
            t: time (s).

        Returns:
            The augmented operators.
        """
        asm = self.assembly
        asm.at(t)
        key = (float(t), asm.generation)
        if self._key == key and self._ops is not None:
            return self._ops
        moved = self.update(t)
        s = self._ops
        stamp = asm.stamp()
        if s is None or stamp != self._stamp or moved:
            K = asm.stiffness(t)
            s = SecondOrder(
                t=t, M=self._augment("M", asm.mass(), False),
                C=self._augment("C", asm.damping(t), False), K=self._augment("K", K, True),
                Kel=self._augment("Kel", asm.elastic(), False),
                Kpot=self._augment("Kpot", K, False), f=s.f if s is not None else None,
                blocks=None, version=1 if s is None else s.version + 1)
            self._stamp = stamp
        s.t = t
        s.f = self.project(asm.load(t), s.f)
        self._ops, self._key = s, key
        return s

    def initial_multipliers(self, t: float, q: PETSc.Vec, v: PETSc.Vec) -> None:
        """Set the multiplier part of ``q`` consistent with the state (Delta, Delta') in ``q``
        and ``v``: [[M, B^T], [B, 0]] [Delta''; lambda] = [Q - C Delta' - K Delta; 0] (the
        acceleration-level constraint with c'' = 0, exact for time-invariant constraints).

        Args:
            t: time (s).
            q: the augmented coordinates [Delta; lambda].
            v: the augmented rate (Delta' in its first part).
        """
        s = self.at(t)
        J = s.M.copy()
        J.axpy(1.0, s.K, structure=SAME)
        J.axpy(-1.0, s.Kpot, structure=SAME)
        rhs = s.f.copy()
        w = rhs.duplicate()
        s.C.mult(v, w)
        rhs.axpy(-1.0, w)
        s.Kpot.mult(q, w)
        rhs.axpy(-1.0, w)
        rhs.array[self.n_local:] = 0.0
        x = rhs.duplicate()
        reason = _saddle_solve(J, rhs, x, self.comm)
        if reason < 0 or not np.isfinite(x.norm()):
            raise RuntimeError(f"initial multipliers: the saddle-point solve at t={t:g} failed "
                               f"(KSP {reason_name(PETSc.KSP.ConvergedReason, reason)})")
        q.array[self.n_local:] = x.getArray(readonly=True)[self.n_local:]

    def solve_static(self, t: float = 0.0) -> Tuple[PETSc.Vec, np.ndarray]:
        """K_eff Delta + B^T lambda = Q, B Delta = c: returns (full Delta, this rank's
        multipliers); also sets the bodies' ``u`` and keeps the augmented solution in
        ``solution`` (for :meth:`constraint_forces`).

        Args:
            t: time (s).

        Returns:
            ``(Delta, multipliers)``.
        """
        s = self.at(t)
        x = s.K.createVecRight()
        reason = _saddle_solve(s.K, s.f, x, self.comm)
        if reason < 0 or not np.isfinite(x.norm()):
            raise RuntimeError("saddle-point solve failed "
                               f"(KSP {reason_name(PETSc.KSP.ConvergedReason, reason)})")
        u = self.expand(x)
        self.solution = x
        self.space.scatter(u, [b.u for b in self.bodies])
        return u, self.multipliers(x)
