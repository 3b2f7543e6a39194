"""The Maggi reducer: a null-space basis A of the constraints, and reduced operators A^T X A.

With the constraint rows in explicit form, Delta_d = sum_k c_k Delta_k + g_d, the full
coordinates are Delta = A q + a_0, where q are the independent dofs, A = [I; C] (after
renumbering) and a_0 holds g. Maggi's equations A^T (M Delta'' + ... - Q) = 0 have no
multipliers; for a time-invariant A every operator reduces by a congruence A^T X A (PETSc PtAP,
symbolic product reused). Constraint forces are recovered from the full residual.

A is a distributed PETSc AIJ matrix: rows follow the full space, columns the reduced space, in
which each rank owns its independent dofs in increasing order.
"""

from __future__ import annotations

import logging
from typing import Dict, List, Optional

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from .constraints import Rows

__all__ = ["MaggiReducer"]

log = logging.getLogger(__name__)


def _raise_everywhere(comm, msg: Optional[str], exc=ValueError) -> None:
    """Raise ``exc`` on every rank if any rank has a message."""
    msgs = [m for m in comm.allgather(msg) if m]
    if msgs:
        raise exc(msgs[0])


class MaggiReducer:
    """Null-space basis of a set of constraints over a :class:`FullSpace`.

    Args:
        space: the model's full space.
        rows: the constraint rows (one :class:`Rows` per constraint) owned by this rank.

    Raises:
        ValueError: on every rank, when two constraints prescribe different values to one dof
            (inconsistent), or a dependent dof appears on the right of another row.

    Attributes:
        A: the basis (full x reduced), AIJ.
        a0: full vector with the prescribed values g.
        n_reduced: global number of independent dofs.
        redundant: {(name, name): count} of rows that repeat another constraint's row.
    """

    def __init__(self, space, rows: List[Rows]):
        self.space = space
        comm = space.comm
        self.comm = comm
        n, N = space.n_local, space.n_global
        start = space.rstart

        dep = np.concatenate([r.dependent for r in rows]) if rows else np.zeros(0, np.int64)
        val = np.concatenate([r.value for r in rows]) if rows else np.zeros(0)
        owner = np.concatenate([np.full(len(r.dependent), i) for i, r in enumerate(rows)]) \
            if rows else np.zeros(0, np.int64)
        masters = [m for r in rows for m in r.masters]
        coeffs = [c for r in rows for c in r.coeffs]
        if len(dep) and (dep.min() < start or dep.max() >= start + n):
            raise RuntimeError("constraint rows must be owned by the rank of their dependent dof")

        # repeated rows on one dof: redundant if they agree, inconsistent if not
        self.redundant: Dict[tuple, int] = {}
        order = np.argsort(dep, kind="stable")
        dep, val, owner = dep[order], val[order], owner[order]
        masters = [masters[i] for i in order]
        coeffs = [coeffs[i] for i in order]
        first = np.ones(len(dep), dtype=bool)
        first[1:] = dep[1:] != dep[:-1]
        msg = None
        for i in np.flatnonzero(~first):
            j = i - 1
            while not first[j]:
                j -= 1
            same = (abs(val[i] - val[j]) <= 1e-12 * (1.0 + abs(val[j]))
                    and np.array_equal(masters[i], masters[j])
                    and np.allclose(coeffs[i], coeffs[j], rtol=1e-12, atol=1e-14))
            key = (rows[owner[j]].name, rows[owner[i]].name)
            if same:
                self.redundant[key] = self.redundant.get(key, 0) + 1
            elif msg is None:
                msg = (f"inconsistent constraints: {key[0]!r} and {key[1]!r} prescribe "
                       f"different relations for dof {dep[i]}")
        _raise_everywhere(comm, msg)
        allred = comm.allgather(self.redundant)
        self.redundant = {}
        for d in allred:
            for k, c in d.items():
                self.redundant[k] = self.redundant.get(k, 0) + c
        for (a, b), c in self.redundant.items():
            log.info("redundant constraints: %d rows of %r repeat rows of %r (kept once)", c, b, a)
        dep, val = dep[first], val[first]
        masters = [masters[i] for i in np.flatnonzero(first)]
        coeffs = [coeffs[i] for i in np.flatnonzero(first)]

        is_dep = np.zeros(n, dtype=bool)
        is_dep[dep - start] = True
        indep = np.flatnonzero(~is_dep)
        n_red = len(indep)
        red_start = comm.exscan(n_red) or 0
        self.n_reduced = comm.allreduce(n_red, op=MPI.SUM)
        self.n_dependent = comm.allreduce(len(dep), op=MPI.SUM)
        self.dependent = dep
        self.independent = indep + start

        # reduced index of every master: a full-layout vector of reduced numbers, scattered
        red_of = np.full(n, -1.0)
        red_of[indep] = red_start + np.arange(n_red)
        need = np.unique(np.concatenate(masters)) if masters else np.zeros(0, np.int64)
        if comm.allreduce(len(need), op=MPI.SUM):
            src = PETSc.Vec().createWithArray(red_of, size=(n, N), comm=comm)
            is_need = PETSc.IS().createGeneral(need.astype(PETSc.IntType), comm=comm)
            dst = PETSc.Vec().createSeq(len(need))
            sc = PETSc.Scatter().create(src, is_need, dst, None)
            sc.scatter(src, dst, PETSc.InsertMode.INSERT, PETSc.ScatterMode.FORWARD)
            lookup = dict(zip(need.tolist(), dst.getArray().astype(np.int64).tolist()))
        else:
            lookup = {}
        msg = None
        if any(lookup.get(int(k), 0) < 0 for m in masters for k in m):
            msg = ("constraint chain: a dependent dof appears as an independent one in another "
                   "row; chains are not resolved yet")
        _raise_everywhere(comm, msg)

        nnz = np.ones(n, dtype=PETSc.IntType)
        for d, m in zip(dep, masters):
            nnz[d - start] = max(len(m), 1)
        A = PETSc.Mat().createAIJ(((n, N), (n_red, self.n_reduced)), nnz=(nnz, nnz), comm=comm)
        A.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, False)
        rows_i = (start + indep).astype(PETSc.IntType)
        cols_i = (red_start + np.arange(n_red)).astype(PETSc.IntType)
        for r, c in zip(rows_i, cols_i):
            A.setValue(r, c, 1.0)
        for d, m, c in zip(dep, masters, coeffs):
            if len(m):
                A.setValues([d], [lookup[int(k)] for k in m], c)
        A.assemble()
        self.A = A
        self.a0 = space.create_vec()
        if len(dep):
            self.a0.setValues(dep.astype(PETSc.IntType), val)
        self.a0.assemble()
        self._products: Dict[str, PETSc.Mat] = {}

    def reduce(self, X: PETSc.Mat, key: Optional[str] = None) -> PETSc.Mat:
        """A^T X A. With a ``key``, the product matrix is kept and refilled on later calls
        (the symbolic part of PtAP is done once per key)."""
        if key is not None and key in self._products:
            return X.PtAP(self.A, result=self._products[key])
        R = X.PtAP(self.A)
        if key is not None:
            self._products[key] = R
        return R

    def create_reduced_vec(self) -> PETSc.Vec:
        return self.A.createVecRight()

    def project(self, b: PETSc.Vec, out: Optional[PETSc.Vec] = None) -> PETSc.Vec:
        """A^T b."""
        out = out if out is not None else self.create_reduced_vec()
        self.A.multTranspose(b, out)
        return out

    def expand(self, q: PETSc.Vec, out: Optional[PETSc.Vec] = None,
               homogeneous: bool = False) -> PETSc.Vec:
        """Delta = A q + a0 (or A q when ``homogeneous``)."""
        out = out if out is not None else self.space.create_vec()
        if homogeneous:
            self.A.mult(q, out)
        else:
            self.A.multAdd(q, self.a0, out)
        return out
