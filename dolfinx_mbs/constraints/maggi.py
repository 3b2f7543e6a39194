"""The Maggi reducer: a null-space basis A of the constraints, and reduced operators A^T X A.

The constraint rows ``B(t) Delta = c(t)`` of every :mod:`dolfinx_mbs.constraints` kind are
eliminated by :class:`dolfinx_mbs.constraints.elimination.Elimination` (dependent dofs, chains,
redundancy and consistency, all on jets). The reducer makes the result

    Delta = A q + a0(t),   A = [I; C] (after renumbering),

with q the independent dofs, numbered in the order of the full space (each rank owns its
independent dofs). Coefficients carry time derivatives (jets), so for rheonomic constraints
(joints between bodies whose frames move differently) A-dot, A-ddot, a0-dot and a0-ddot are
exact. For a time-invariant A every operator reduces by the congruence A^T X A (PETSc PtAP,
symbolic product reused); the extra terms of a moving A are formed by :meth:`MaggiReducer.reduce`
callers (see :class:`dolfinx_mbs.systems.second_order.SecondOrderSystem`).

A is a distributed PETSc AIJ matrix: rows follow the full space, columns the reduced one. The
reducer owns it, its derivatives and a0 (refilled at each time, same pattern), the products
(PtAP, or a submatrix when A is an injection) and the maps between full and reduced vectors
(expand, restrict, project).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Dict, List, Mapping, Sequence, Tuple

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.base import Constraint, Rows
from dolfinx_mbs.constraints.elimination import Elimination, rate_rows_on_independent

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.constraints.elimination import _Expr

__all__ = ["MaggiReducer"]

log = logging.getLogger(__name__)


class MaggiReducer:
    """Null-space basis of a set of constraints over a :class:`FullSpace`.

    Args:
        space: the model's full space.
        constraints: the constraints (:class:`dolfinx_mbs.constraints.Constraint`), in order.
        t: the time at which to evaluate the rows first.
        order: the highest time derivative of A and a0 formed: 2 (default), or 1 (then
            ``A_ddot`` and ``a0_ddot`` are None: the velocity basis of
            :mod:`dolfinx_mbs.systems.velocity` needs first derivatives only, and its rows' second
            derivatives are not known).

    Raises:
        ValueError: on every rank, when the constraints are inconsistent (naming them and a dof).

    Attributes:
        A: the basis (full x reduced), AIJ.
        A_dot, A_ddot: its time derivatives (same pattern), or None for a time-invariant A.
        a0, a0_dot, a0_ddot: full vectors with the prescribed part (derivatives None when
            nothing depends on time).
        n_reduced, n_dependent: global numbers of independent and dependent dofs.
        redundant: one dict per redundant row: ``constraint`` (its name), ``implied_by`` (names
            of the constraints that imply it), ``dof`` (full index), ``where`` (body name and
            local dof).
        time_dependent: True when A or a0 changes with time.
    """

    _blocks: List[Tuple[int, int]] | None  # node_blocks' answer, set on first use

    def __init__(self, space: FullSpace, constraints: Sequence[Constraint], t: float = 0.0,
                 order: int = 2) -> None:
        if order not in (1, 2):
            raise ValueError(f"order must be 1 or 2, got {order!r}")
        self.order = order
        self.space = space
        self.comm = comm = space.comm
        self.constraints = list(constraints)
        self.time_dependent = any(c.time_dependent for c in self.constraints)
        self.rheonomic = False
        self._elimination = Elimination(space, self.constraints)
        self.redundant: List[dict] = self._elimination.redundant  # filled by the first resolve
        self.forget_products()
        exprs, deps = self._elimination.resolve(t, first=True)
        self._report()
        self._exprs = exprs                     # every rank (size: the dependent dofs)
        self.dependent_global = deps            # sorted, every rank
        self.rheonomic = any(exprs[p].rheo for p in deps)
        n, N = space.n_local, space.n_global
        start = space.rstart
        lo, hi = np.searchsorted(deps, [start, start + n])
        own = deps[lo:hi]
        self.dependent = own
        is_dep = np.zeros(n, dtype=bool)
        is_dep[own - start] = True
        indep = np.flatnonzero(~is_dep)
        self.independent = indep + start
        self.n_reduced = N - len(deps)
        self.n_dependent = len(deps)
        n_red = len(indep)
        # CSR of the owned rows of A: identity rows, then each dependent row's terms
        self._own_dep = own
        self._is_dep = is_dep
        indptr = np.zeros(n + 1, np.int64)
        counts = np.ones(n, np.int64)
        for p in own:
            counts[p - start] = len(exprs[p].terms)
        indptr[1:] = np.cumsum(counts)
        cols = np.empty(indptr[-1], np.int64)
        cols[indptr[indep]] = self.reduced_index(indep + start)
        self._slots = {}
        for p in own:
            ks = np.array(sorted(exprs[p].terms), dtype=np.int64)
            s = indptr[p - start]
            cols[s: s + len(ks)] = self.reduced_index(ks)
            self._slots[int(p)] = (s, ks)
        self._indptr, self._cols = indptr, cols
        vals = self._values(exprs, 0)
        self.A = PETSc.Mat().createAIJ(((n, N), (n_red, self.n_reduced)),
                                       csr=(indptr.astype(PETSc.IntType),
                                            cols.astype(PETSc.IntType), vals), comm=comm)
        self.A.assemble()
        self.A_dot = self.A_ddot = None
        if self.rheonomic:
            self.A_dot = self.A.duplicate(copy=True)
            self._set_values(self.A_dot, self._values(exprs, 1))
            if order == 2:
                self.A_ddot = self.A.duplicate(copy=True)
                self._set_values(self.A_ddot, self._values(exprs, 2))
        self.a0 = space.create_vec()
        self.a0_dot = space.create_vec() if self.time_dependent else None
        self.a0_ddot = space.create_vec() if self.time_dependent and order == 2 else None
        self._set_a0(exprs)
        self.t = t

    # -- elimination (dolfinx_mbs.constraints.elimination) -------------------------------------
    def where(self, dof: int) -> Tuple[str, int]:
        """(body name, local unblocked dof on its owner) of a full index.

        Args:
            dof: a full index.

        Returns:
            ``(body name, local unblocked dof)``, for messages.
        """
        return self._elimination.where(dof)

    def _report(self) -> None:
        if not self.redundant:
            return
        if self.comm.rank == 0:
            for (name, by), count in self.redundancy().items():
                log.info("redundant constraints: %d rows of %r are implied by %s (dropped)",
                         count, name, ", ".join(repr(b) for b in by))

    def redundancy(self) -> Mapping[Tuple[str, Tuple[str, ...]], int]:
        """{(constraint, (implying constraints...)): number of redundant rows}, read-only (the
        same on every rank)."""
        return self._elimination.redundancy()

    # -- values -------------------------------------------------------------------------------
    def reduced_index(self, k: np.ndarray) -> np.ndarray:
        """Reduced index of independent full indices (any rank's): their rank among the
        independent dofs.

        Args:
            k: full indices of independent dofs.

        Returns:
            Their indices in the reduced space.
        """
        return np.asarray(k, np.int64) - np.searchsorted(self.dependent_global, k)

    def _values(self, exprs: Dict[int, _Expr], order: int) -> np.ndarray:
        vals = np.zeros(len(self._cols))
        if order == 0:
            start = self.space.rstart
            ind = self.independent - start
            vals[self._indptr[ind]] = 1.0
        for p, (s, ks) in self._slots.items():
            e = exprs[p].terms
            vals[s: s + len(ks)] = [e[k][order] for k in ks.tolist()]
        return vals

    def _set_values(self, M: PETSc.Mat, vals: np.ndarray) -> None:
        M.setValuesCSR(self._indptr.astype(PETSc.IntType), self._cols.astype(PETSc.IntType),
                       vals)
        M.assemble()

    def _set_a0(self, exprs: Dict[int, _Expr]) -> None:
        own = self._own_dep.astype(PETSc.IntType)
        for order, v in enumerate((self.a0, self.a0_dot, self.a0_ddot)):
            if v is None:
                continue
            v.set(0.0)
            if len(own):
                v.setValues(own, [exprs[int(p)].g[order] for p in own])
            v.assemble()

    def update(self, t: float) -> bool:
        """Re-evaluate A, its derivatives and a0 at time ``t`` (same pattern, same dependent
        dofs). Returns True when anything changed (False for time-invariant constraints).

        Args:
            t: time (s).

        Returns:
            True when anything changed.
        """
        if not self.time_dependent or t == self.t:
            return False
        exprs, deps = self._elimination.resolve(t)
        msg = None
        if not np.array_equal(deps, self.dependent_global) or any(
                sorted(exprs[p].terms) != self._slots[p][1].tolist() for p in self._slots):
            msg = f"the constraint pattern changed at t={t:g}"
        checks.raise_everywhere(self.comm, msg, RuntimeError)
        if self.rheonomic:
            self._set_values(self.A, self._values(exprs, 0))
            self._set_values(self.A_dot, self._values(exprs, 1))
            if self.A_ddot is not None:
                self._set_values(self.A_ddot, self._values(exprs, 2))
        self._set_a0(exprs)
        self._exprs = exprs
        self.t = t
        return True

    def node_blocks(self) -> List[Tuple[int, int]] | None:
        """When the constraints only fix whole nodes (every dependent dof is a fixed value and
        each node of each body is either free or fixed in all its components), A is an
        injection that keeps the node-wise layout: then, for each body, the (start, stop) of
        its free dofs in the local part of a reduced vector, node-major. None otherwise (the
        same answer on every rank)."""
        if getattr(self, "_blocks", False) is not False:
            return self._blocks
        sp = self.space
        ok = self.injection
        segs, pos = [], 0
        for i, g in enumerate(sp.bs):
            d = self._is_dep[sp.offsets[i]: sp.offsets[i + 1]].reshape(-1, g)
            ok = ok and bool(np.all(d.all(axis=1) | ~d.any(axis=1)))
            n_free = int((~d).sum())
            segs.append((pos, pos + n_free))
            pos += n_free
        self._blocks = segs if self.comm.allreduce(ok, op=MPI.LAND) else None
        return self._blocks

    def substitute_rates(self, rows: Rows) -> Rows:
        """Velocity rows ``B Delta' = c`` over full indices as rows over the reduced ones:
        with Delta' = A q' + a0' (a time-invariant A), ``(B A) q' = c - B a0'``. Where a0 moves,
        the result's second-derivative jets are NaN (they would need the third derivative of
        a0, never formed): use them to first order only. Call it identically on every rank (the
        eliminated dofs are known everywhere), with the reducer at the rows' time
        (:meth:`update`).

        Args:
            rows: velocity rows over full indices.

        Returns:
            The rows over reduced indices.
        """
        if self.rheonomic:
            raise ValueError(f"{rows.name}: velocity rows with moving joints (a time-dependent "
                             "basis A of the holonomic constraints) are not supported")
        timed = {c.name for c in self.constraints if c.time_dependent}
        out = rate_rows_on_independent(rows, self._exprs, timed)
        out.cols = self.reduced_index(out.cols)
        return out

    def full_index(self, k: int) -> int:
        """The full index of reduced index ``k`` (every rank).

        Args:
            k: a reduced index.

        Returns:
            The full index.
        """
        deps = self.dependent_global
        f = int(k)
        while True:  # f = k + (number of dependents <= f), a monotone fixed point
            g = int(k) + int(np.searchsorted(deps, f, side="right"))
            if g == f:
                return f
            f = g

    @property
    def prescribed(self) -> bool:
        """True when a0 may be nonzero (prescribed values or moving joints)."""
        if self.time_dependent:
            return True
        return bool(self.a0.norm(PETSc.NormType.NORM_INFINITY) != 0.0)

    # -- products -----------------------------------------------------------------------------
    @property
    def injection(self) -> bool:
        """True when every dependent dof is a fixed value (clamps, fixed prescribed values):
        A only picks the independent dofs, and A^T X A is the submatrix of X on them."""
        if getattr(self, "_injection", None) is None:
            ok = not self.rheonomic and all(len(ks) == 0 for _, ks in self._slots.values())
            self._injection = bool(self.comm.allreduce(ok, op=MPI.LAND))
            if self._injection:
                self._is_indep = self._independent_is()
        return self._injection

    def _independent_is(self) -> PETSc.IS:
        """The independent dofs as an IS; node-blocked where whole nodes are free or fixed and
        every body has the same block size, so the submatrices keep the block size (what
        GAMG aggregates by: nodes, not dofs)."""
        bs = set(self.space.bs)
        ind = self.independent.astype(PETSc.IntType)
        if len(bs) == 1 and self.node_blocks() is not None and bs != {1}:
            g = bs.pop()
            return PETSc.IS().createBlock(g, ind[::g] // g, comm=self.comm)
        return PETSc.IS().createGeneral(ind, comm=self.comm)

    def forget_products(self) -> None:
        """Drop the kept products A^T X A (each reduced operator is made again at its next
        :meth:`reduce`); also what a subclass with its own basis calls to start."""
        self._products: Dict[str, PETSc.Mat] = {}

    def reduce(self, X: PETSc.Mat, key: str | None = None) -> PETSc.Mat:
        """A^T X A. With a ``key``, the product matrix is kept and refilled on later calls
        (the symbolic part of PtAP is done once per key). For an injection A (clamps only) the
        submatrix on the independent dofs, without PtAP's intermediate products.

        Args:
            X: a full matrix.
            key: the name under which the product is kept (None: a new matrix).

        Returns:
            The reduced matrix.
        """
        if self.injection:
            R = self._products.get(key) if key is not None else None
            R = X.createSubMatrix(self._is_indep, self._is_indep, submat=R)
            if key is not None:
                self._products[key] = R
            return R
        if key is not None and key in self._products:
            return X.PtAP(self.A, result=self._products[key])
        R = X.PtAP(self.A)
        if key is not None:
            self._products[key] = R
        return R

    def reduce_with(self, X: PETSc.Mat, Q: PETSc.Mat, key: str) -> PETSc.Mat:
        """A^T X Q for Q of A's pattern (A-dot, A-ddot), product objects kept under ``key``.

        Args:
            X: a full matrix.
            Q: a matrix of A's pattern (A' or A'').
            key: the name under which the product objects are kept.

        Returns:
            The product matrix.
        """
        XQ = self._products.get(key + "/XQ")
        XQ = X.matMult(Q, result=XQ)
        self._products[key + "/XQ"] = XQ
        R = self._products.get(key)
        R = self.A.transposeMatMult(XQ, result=R)
        self._products[key] = R
        return R

    def reduce_dot(self, X: PETSc.Mat, key: str) -> PETSc.Mat:
        """A'^T X A' (PtAP with A-dot), product kept under ``key``.

        Args:
            X: a full matrix.
            key: the name under which the product is kept.

        Returns:
            The product matrix.
        """
        R = self._products.get(key)
        R = X.PtAP(self.A_dot, result=R)
        self._products[key] = R
        return R

    def create_reduced_vec(self) -> PETSc.Vec:
        """A vector of the reduced coordinates q (A's column layout)."""
        return self.A.createVecRight()

    def consistent_forces(self, r: PETSc.Vec) -> PETSc.Vec:
        """The constraint forces of a full residual ``r``: ``r`` itself (a reducer of reduced
        bodies keeps what the constraints carry, :mod:`dolfinx_mbs.reduction.basis_reducer`).

        Args:
            r: a full residual.

        Returns:
            The constraint forces (``r``).
        """
        return r

    def restrict(self, x: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """q: the independent entries of a full vector (local: the reduced numbering follows
        the full one's ownership).

        Args:
            x: a full vector Delta.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        out = out if out is not None else self.create_reduced_vec()
        out.array[:] = x.getArray(readonly=True)[self.independent - self.space.rstart]
        return out

    def project(self, b: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """A^T b.

        Args:
            b: a full vector.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        out = out if out is not None else self.create_reduced_vec()
        self.A.multTranspose(b, out)
        return out

    def expand(self, q: PETSc.Vec, out: PETSc.Vec | None = None,
               homogeneous: bool = False) -> PETSc.Vec:
        """Delta = A q + a0 (or A q when ``homogeneous``).

        Args:
            q: the reduced coordinates.
            out: the vector to fill (new if None).
            homogeneous: leave out a0.

        Returns:
            ``out``.
        """
        out = out if out is not None else self.space.create_vec()
        if homogeneous:
            self.A.mult(q, out)
        else:
            self.A.multAdd(q, self.a0, out)
        return out

    def expand_acceleration(self, q: PETSc.Vec, v: PETSc.Vec, a: PETSc.Vec,
                            out: PETSc.Vec | None = None) -> PETSc.Vec:
        """Delta'' = A q'' + 2 A' q' + A'' q + a0'' (``v`` = q', ``a`` = q'').

        Args:
            q: the reduced coordinates.
            v: their rates q'.
            a: their second rates q''.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        out = out if out is not None else self.space.create_vec()
        self.A.mult(a, out)
        if self.A_dot is not None:
            self.A_dot.multAdd(v, out, out)
            self.A_dot.multAdd(v, out, out)
            assert self.A_ddot is not None  # (made with A_dot)
            self.A_ddot.multAdd(q, out, out)
        if self.a0_ddot is not None:
            out.axpy(1.0, self.a0_ddot)
        return out

    def expand_rate(self, q: PETSc.Vec, v: PETSc.Vec, out: PETSc.Vec | None = None
                    ) -> PETSc.Vec:
        """Delta' = A q' + A' q + a0'.

        Args:
            q: the reduced coordinates.
            v: their rates q'.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        out = out if out is not None else self.space.create_vec()
        self.A.mult(v, out)
        if self.A_dot is not None:
            self.A_dot.multAdd(q, out, out)
        if self.a0_dot is not None:
            out.axpy(1.0, self.a0_dot)
        return out
