"""Reduced bodies in the Maggi pipeline: the shapes are one more constant linear map.

With some bodies reduced (:mod:`dolfinx_mbs.reduction.reduced_body`), the full coordinates are

    Delta = T xi,     xi = A_xi(t) q + a0_xi(t),     so     Delta = (T A_xi) q + T a0_xi,

T constant and tall (block-diagonal: the identity on full bodies, the shapes Phi_b on reduced
ones; an AIJ matrix with dense columns), xi the coordinates of the :class:`BasisSpace` (full
bodies' dofs, reduced bodies' interface dofs and modal coordinates). The constraints' rows
B Delta = c become rows (B T) xi = c (:class:`OnBasis`), eliminated by the Maggi reducer
unchanged; the ground constraints a reduced body's shapes already satisfy are dropped
(absorbed). :class:`BasisReducer` is the composed reducer: a
:class:`~dolfinx_mbs.constraints.maggi.MaggiReducer` with A = T A_xi, A' = T A_xi', a0 = T a0_xi,
so every system, solver and observer works on it as on the full model's reducer, and every operator
reduces by A^T X A into a small matrix (once per constant matrix where the frame state is a
combination of them, :mod:`dolfinx_mbs.systems.reduced_basis`). Expanded vectors are full fields.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Dict, Mapping, Sequence, Set, Tuple

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.constraints.base import Constraint, Rows
from dolfinx_mbs.constraints.maggi import MaggiReducer
from dolfinx_mbs.petsc_options import direct_lu, factorize
from dolfinx_mbs.reduction.reduced_body import body_shapes

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.assembly.space import FullSpace

__all__ = ["BasisReducer", "BasisSpace", "OnBasis", "classify"]

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Shapes:
    """A reduced body's shapes: ``cols`` (owned dofs x columns, the constraint modes of
    ``interface`` first), ``interface`` (sorted full indices, every rank), ``counts`` (its
    interface dofs per rank), ``n_extra`` (modes and residual shapes), ``xi_cols`` (each
    column's xi index, set by :class:`BasisSpace`)."""

    cols: np.ndarray
    interface: np.ndarray
    counts: np.ndarray
    n_extra: int
    xi_cols: np.ndarray | None = None


class BasisSpace:
    """The coordinates xi: per rank and body in order, a full body's owned dofs, or a reduced
    body's owned interface dofs followed by its share of the modal coordinates. Has what the
    Maggi reducer and the elimination ask of a space.

    Args:
        space: the model's full space.
        shapes: the reduced bodies' shapes, by body index.
    """

    def __init__(self, space: FullSpace, shapes: Dict[int, Shapes]) -> None:
        self.full, self.comm, self.bodies = space, space.comm, space.bodies
        self.shapes = shapes
        rank, size = self.comm.rank, self.comm.size
        # the modal coordinates spread over the ranks (SLEPc's PEP fails with a rank that
        # owns no row of a small problem)
        spread = {ib: s.n_extra // size + (np.arange(size) < s.n_extra % size)
                  for ib, s in shapes.items()}
        sizes = [space.sizes[ib] if ib not in shapes else
                 int(shapes[ib].counts[rank] + spread[ib][rank])
                 for ib in range(len(space.bodies))]
        self.sizes = sizes
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.n_local = int(self.offsets[-1])
        self.rstart = self.comm.exscan(self.n_local) or 0
        self.n_global = self.comm.allreduce(self.n_local)
        #: (ranks, bodies): where each rank's block of each body starts, in xi and in Delta
        self.starts = np.array(self.comm.allgather(self.rstart + self.offsets[:-1]))
        self.full_starts = np.array(self.comm.allgather(space.rstart + space.offsets[:-1]))
        for ib, s in shapes.items():
            first = np.concatenate([[0], np.cumsum(s.counts)])
            owner = np.repeat(np.arange(len(s.counts)), s.counts)
            iface = self.starts[owner, ib] + np.arange(len(s.interface)) - first[owner]
            k = np.arange(s.n_extra)
            efirst = np.concatenate([[0], np.cumsum(spread[ib])])
            eowner = np.searchsorted(efirst, k, side="right") - 1
            extra = self.starts[eowner, ib] + s.counts[eowner] + k - efirst[eowner]
            s.xi_cols = np.concatenate([iface, extra]).astype(np.int64)

    def create_vec(self) -> PETSc.Vec:
        """A zero vector of xi: the reduced bodies' shape coordinates and the other bodies' dofs."""
        v = PETSc.Vec().createMPI((self.n_local, self.n_global), comm=self.comm)
        v.set(0.0)
        return v

    def where(self, dof: int) -> Tuple[str, int]:
        """(body name, index within the body's coordinates on their owner) of a xi index.

        Args:
            dof: an index of the xi coordinates.

        Returns:
            ``(body name, index)``, for messages.
        """
        flat = self.starts.ravel()
        blk = int(np.searchsorted(flat, dof, side="right") - 1)
        ib = blk % len(self.bodies)
        return self.bodies[ib].name, int(dof - flat[blk])


class RowMap:
    """Rows over full indices as rows over xi: B T (collective; T's rows of other ranks are
    fetched once and kept).

    Args:
        xi: the coordinates xi of the shapes.
    """

    def __init__(self, xi: BasisSpace) -> None:
        self.xi, self.comm = xi, xi.comm
        self.full_flat = xi.full_starts.ravel()
        self.xi_flat = xi.starts.ravel()
        self.nb = len(xi.bodies)
        self._rows: Dict[int, tuple] = {}

    def _locate(self, cols: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        blk = np.searchsorted(self.full_flat, cols, side="right") - 1
        return blk, blk % self.nb

    def _own_row(self, k: int, ib: int) -> tuple:
        s = self.xi.shapes[ib]
        start, _ = self.xi.full.owned_range(ib)
        v = s.cols[k - start]
        nz = np.flatnonzero(v)
        assert s.xi_cols is not None  # (set by BasisSpace)
        return s.xi_cols[nz], v[nz]

    def _fetch(self, cols: np.ndarray) -> None:
        blk, ib = self._locate(cols)
        rank = self.comm.rank
        need = []
        for k, b, i in zip(cols.tolist(), blk.tolist(), ib.tolist()):
            if i in self.xi.shapes and k not in self._rows:
                if b // self.nb == rank:
                    self._rows[k] = self._own_row(k, i)
                else:
                    need.append(k)
        if self.comm.allreduce(len(need)) == 0:
            return
        asked = sorted({k for req in self.comm.allgather(need) for k in req})
        blk, ib = self._locate(np.array(asked, np.int64))
        mine = {k: self._own_row(k, i) for k, b, i in zip(asked, blk.tolist(), ib.tolist())
                if b // self.nb == rank}
        for part in self.comm.allgather(mine):
            self._rows.update(part)

    def translate(self, rows: Rows) -> Rows:
        """Rows over the full indices as rows over xi: a reduced body's dof by its row of the
        shapes T, every other dof shifted to its xi index (collective).

        Args:
            rows: rows over the inner full space.

        Returns:
            The rows over xi.
        """
        cols = np.asarray(rows.cols, np.int64)
        piv = np.asarray(rows.pivot, np.int64)
        self._fetch(np.concatenate([cols, piv[piv >= 0]]))  # collective: once, every rank
        blk, ib = self._locate(cols)
        shift = self.xi_flat[blk] - self.full_flat[blk]
        indptr, out_cols, out_coef, pivots = [0], [], [], []
        for i in range(rows.n_rows):
            terms: Dict[int, np.ndarray] = {}
            for j in range(rows.indptr[i], rows.indptr[i + 1]):
                k, b = int(cols[j]), int(ib[j])
                pairs = ((k + int(shift[j]), 1.0),) if b not in self.xi.shapes else \
                    zip(self._rows[k][0].tolist(), self._rows[k][1].tolist())
                for x, v in pairs:
                    terms[x] = terms[x] + v * rows.coef[j] if x in terms else v * rows.coef[j]
            p = int(rows.pivot[i]) if len(rows.pivot) else -1
            if p >= 0:
                pb, pib = self._locate(np.array([p]))
                if int(pib[0]) not in self.xi.shapes:
                    p = p + int(self.xi_flat[pb[0]] - self.full_flat[pb[0]])
                else:
                    xs, vs = self._rows.get(p, ((), ()))
                    p = int(xs[0]) if len(xs) == 1 and vs[0] == 1.0 else -1
            ks = sorted(terms)
            out_cols.extend(ks)
            out_coef.extend(terms[x] for x in ks)
            indptr.append(len(out_cols))
            pivots.append(p)
        return Rows(rows.name, np.array(indptr, np.int64), np.array(out_cols, np.int64),
                    np.array(out_coef, dtype=float).reshape(-1, 3), rows.rhs.copy(),  # type: ignore[type-var]
                    np.array(pivots, np.int64), rows.rheonomic)


class OnBasis(Constraint):
    """A constraint's rows B Delta = c as rows (B T) xi = c.

    Args:
        inner: the constraint on the full dofs.
        rowmap: the map of full indices to xi.
    """

    def __init__(self, inner: Constraint, rowmap: RowMap) -> None:
        self.inner, self.rowmap = inner, rowmap
        self.name, self.time_dependent = inner.name, inner.time_dependent

    def rows(self, space: FullSpace, t: float) -> Rows:
        """The inner constraint's rows over xi: its full rows translated through the shapes.

        Args:
            space: the model's full space (unused: the rows are built on the inner full space).
            t: time (s).

        Returns:
            The rows over the xi indices.
        """
        return self.rowmap.translate(self.inner.rows(self.rowmap.xi.full, t))


def classify(space: FullSpace, constraints: Sequence[Constraint],
             reduced: Sequence[int]
             ) -> Tuple[Set[int], Dict[int, np.ndarray], Dict[int, np.ndarray]]:
    """Which constraints the reduced bodies' shapes absorb (constant rows each fixing one dof
    of one reduced body to zero), the dofs they fix, and each reduced body's interface (the
    dofs other constraints touch). Returns (absorbed constraint indices, {body: fixed full
    indices}, {body: interface full indices}), sorted, the same on every rank.

    Args:
        space: the model's full space.
        constraints: the model's constraints.
        reduced: the indices of the reduced bodies.
    """
    comm = space.comm
    flat = np.array(comm.allgather(space.rstart + space.offsets[:-1])).ravel()
    nb = len(space.bodies)
    absorbed, fixed = set(), {ib: [] for ib in reduced}
    iface = {ib: [] for ib in reduced}
    for ic, c in enumerate(constraints):
        rows = c.rows(space, 0.0)
        cols = np.asarray(rows.cols, np.int64)
        ib = (np.searchsorted(flat, cols, side="right") - 1) % nb
        ok = (not c.time_dependent and not rows.rheonomic and bool(np.all(rows.rhs == 0.0))
              and bool(np.all(np.diff(rows.indptr) == 1)))
        parts = comm.allgather((ok, sorted(set(ib.tolist())), cols))
        touched = sorted({b for p in parts for b in p[1]})
        allcols = np.concatenate([p[2] for p in parts]).astype(np.int64)
        allib = (np.searchsorted(flat, allcols, side="right") - 1) % nb
        if all(p[0] for p in parts) and len(touched) == 1 and touched[0] in fixed:
            absorbed.add(ic)
            fixed[touched[0]].append(allcols)
            continue
        for b in touched:
            if b in iface:
                iface[b].append(allcols[allib == b])
    cat = lambda xs: np.unique(np.concatenate(xs)).astype(np.int64) if xs else \
        np.zeros(0, np.int64)  # noqa: E731
    return absorbed, {b: cat(v) for b, v in fixed.items()}, {b: cat(v) for b, v in iface.items()}


class BasisReducer(MaggiReducer):
    """The Maggi reducer of a model with reduced bodies: A = T A_xi (see the module docstring).

    Args:
        assembly: the model's full operators (the shapes are computed from them).
        constraints: the holonomic constraints, over full indices.
        reduced: {body index: :class:`~dolfinx_mbs.reduction.reduced_body.ReducedBody`}.
        t: the time at which the rows are first evaluated.

    Attributes (besides the Maggi reducer's): ``T`` (full x xi), ``inner`` (the Maggi reducer
    over xi), ``xi`` (:class:`BasisSpace`).
    """

    def __init__(self, assembly: Assembly, constraints: Sequence[Constraint], reduced: Dict,
                 t: float = 0.0) -> None:
        space = assembly.space
        self.order, self.space, self.comm = 2, space, space.comm
        self.constraints = list(constraints)
        absorbed, fixed, iface = classify(space, self.constraints, sorted(reduced))
        shapes = {}
        rank_ranges = np.array(self.comm.allgather([space.owned_range(ib)
                                                    for ib in range(len(space.bodies))]))
        for ib, rb in sorted(reduced.items()):
            start, stop = space.owned_range(ib)
            mask = np.zeros(stop - start, dtype=bool)
            f = fixed[ib]
            mask[f[(f >= start) & (f < stop)] - start] = True
            # a dof held by an absorbed clamp stays held, also where a joint touches it
            itf = np.setdiff1d(iface[ib], f) if rb.method == "craig-bampton" else \
                np.zeros(0, np.int64)
            cols = body_shapes(assembly, ib, rb, mask, itf)
            lo, hi = rank_ranges[:, ib, 0], rank_ranges[:, ib, 1]
            counts = np.searchsorted(itf, hi) - np.searchsorted(itf, lo)
            shapes[ib] = Shapes(cols, itf, counts, cols.shape[1] - len(itf))
            rb.n_interface = len(itf)
            rb.n_coordinates = cols.shape[1]
        self.shapes = shapes
        self.xi = BasisSpace(space, shapes)
        self.T = self._basis_matrix()
        rowmap = RowMap(self.xi)
        kept = [OnBasis(c, rowmap) for i, c in enumerate(self.constraints) if i not in absorbed]
        # the shapes' coefficients are numbered as a FullSpace numbers the full dofs
        self.inner = inner = MaggiReducer(self.xi, kept, t)  # type: ignore[arg-type]
        self.time_dependent, self.rheonomic = inner.time_dependent, inner.rheonomic
        self.redundant, self.n_dependent = inner.redundant, inner.n_dependent
        self.n_reduced = inner.n_reduced
        self.forget_products()   # MaggiReducer's kept products A^T X A
        self.A = self.A_dot = self.A_ddot = None
        self.a0 = space.create_vec()
        self.a0_dot = space.create_vec() if inner.a0_dot is not None else None
        self.a0_ddot = space.create_vec() if inner.a0_ddot is not None else None
        self._compose()
        self.t = inner.t
        self._gram: tuple | None = None
        self._identity = self._identity_positions()
        self._fixed = np.concatenate([np.zeros(0, np.int64)] + [
            space.offsets[ib] + np.flatnonzero(np.all(s.cols == 0.0, axis=1))
            for ib, s in shapes.items()]).astype(np.int64)
        modal = [space.bodies[ib].name for ib, rb in reduced.items()
                 if rb.method == "modal" and len(iface[ib])]
        if modal and self.comm.rank == 0:
            log.warning("constraints act on modal-reduced bodies %s inside their shapes: their "
                        "reactions are not computed (zero); method='craig-bampton' keeps "
                        "the joined dofs and their reactions", modal)
        if self.comm.rank == 0:
            log.info("reduced bodies: %s; %d coordinates after the constraints", ", ".join(
                f"{space.bodies[ib].name!r} ({rb.method}) to {rb.n_coordinates} coordinates "
                f"({rb.n_interface} interface dofs)" for ib, rb in sorted(reduced.items())),
                self.n_reduced)

    #: A is never an injection: every product is A^T X A (PtAP)
    injection = False

    def _basis_matrix(self) -> PETSc.Mat:
        """T as AIJ: full rows, xi columns (identity rows on full bodies)."""
        sp, xi, rank = self.space, self.xi, self.comm.rank
        counts, cols, vals = [], [], []
        for ib in range(len(sp.bodies)):
            s = self.shapes.get(ib)
            if s is None:
                n = sp.sizes[ib]
                counts.append(np.ones(n, np.int64))
                cols.append(xi.starts[rank, ib] + np.arange(n, dtype=np.int64))
                vals.append(np.ones(n))
                continue
            assert s.xi_cols is not None  # (set by BasisSpace)
            perm = np.argsort(s.xi_cols)
            V, C = s.cols[:, perm], s.xi_cols[perm]
            nz = V != 0.0
            counts.append(nz.sum(axis=1))
            cols.append(np.broadcast_to(C, V.shape)[nz])
            vals.append(V[nz])
        indptr = np.concatenate([[0], np.cumsum(np.concatenate(counts))])
        T = PETSc.Mat().createAIJ(((sp.n_local, sp.n_global), (xi.n_local, xi.n_global)),
                                  csr=(indptr.astype(PETSc.IntType),
                                       np.concatenate(cols).astype(PETSc.IntType),
                                       np.concatenate(vals)), comm=self.comm)
        T.assemble()
        return T

    def _identity_positions(self) -> Tuple[np.ndarray, np.ndarray]:
        """Local positions (full, xi) of the coordinates that are dofs themselves."""
        sp, xi, f, x = self.space, self.xi, [], []
        for ib in range(len(sp.bodies)):
            s = self.shapes.get(ib)
            if s is None:
                f.append(sp.offsets[ib] + np.arange(sp.sizes[ib]))
                x.append(xi.offsets[ib] + np.arange(sp.sizes[ib]))
                continue
            start, stop = sp.owned_range(ib)
            own = s.interface[(s.interface >= start) & (s.interface < stop)]
            f.append(sp.offsets[ib] + own - start)
            x.append(xi.offsets[ib] + np.arange(len(own)))
        return np.concatenate(f).astype(np.int64), np.concatenate(x).astype(np.int64)

    def _compose(self) -> None:
        inner, T = self.inner, self.T
        self.A = T.matMult(inner.A, result=self.A)
        if inner.A_dot is not None:
            self.A_dot = T.matMult(inner.A_dot, result=self.A_dot)
        if inner.A_ddot is not None:
            self.A_ddot = T.matMult(inner.A_ddot, result=self.A_ddot)
        for mine, theirs in ((self.a0, inner.a0), (self.a0_dot, inner.a0_dot),
                             (self.a0_ddot, inner.a0_ddot)):
            if mine is not None:
                T.mult(theirs, mine)

    def update(self, t: float) -> bool:
        """The constraints at ``t`` (A, its derivatives and a0 composed again when they
        changed).

        Args:
            t: time (s).

        Returns:
            True when anything changed.
        """
        if not self.inner.update(t):
            return False
        self._compose()
        self.t = t
        return True

    def node_blocks(self) -> None:
        """None: the shapes mix the nodes."""
        return None

    def where(self, dof: int) -> Tuple[str, int]:
        """(body name, index within the body's coordinates on their owner) of a reduced index.

        Args:
            dof: an index of the inner reducer's coordinates.

        Returns:
            The pair, for messages.
        """
        return self.inner.where(dof)

    def redundancy(self) -> Mapping[Tuple[str, Tuple[str, ...]], int]:
        """The inner reducer's redundant rows by constraint (:meth:`MaggiReducer.redundancy`)."""
        return self.inner.redundancy()

    def full_index(self, k: int) -> int:
        """Not available: velocity constraints do not take reduced bodies.

        Args:
            k: a reduced index.

        Raises:
            ValueError: always.
        """
        raise ValueError("velocity constraints do not take reduced bodies (Model.reduce)")

    def substitute_rates(self, rows: Rows) -> Rows:
        """Not available: velocity constraints do not take reduced bodies.

        Args:
            rows: velocity rows.

        Raises:
            ValueError: always, naming the rows.
        """
        raise ValueError(f"{rows.name}: velocity constraints do not take reduced bodies "
                         "(Model.reduce)")

    def restrict(self, x: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """Q of a full vector: xi by least squares (T^T T xi = T^T x: exact for a full
        vector in the shapes' span), then its independent entries.

        Args:
            x: a full vector.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        if self._gram is None:
            G = self.T.transposeMatMult(self.T)
            ksp = PETSc.KSP().create(self.comm)
            ksp.setOperators(G)
            direct_lu(ksp)
            factorize(ksp, "the basis' Gram matrix T^T T")
            self._gram = (G, ksp, self.xi.create_vec(), self.xi.create_vec())
        G, ksp, b, y = self._gram
        self.T.multTranspose(x, b)
        ksp.solve(b, y)
        return self.inner.restrict(y, out)

    def consistent_forces(self, r: PETSc.Vec) -> PETSc.Vec:
        """The constraint forces B^T lambda of a full residual ``r`` (in place): T^T r at the
        coordinates that are dofs (full bodies, Craig-Bampton interfaces), r at the dofs the
        shapes hold (absorbed clamps), zero elsewhere.
        A reduced body's residual does not vanish inside it: the reduced equations hold
        only in the shapes' span, and T^T r is what the constraints carry.

        Args:
            r: a full residual.

        Returns:
            ``r``.
        """
        y = self._work_xi()
        self.T.multTranspose(r, y)
        f, x = self._identity
        arr = r.getArray()
        vals, held = y.getArray(readonly=True)[x], arr[self._fixed]
        arr[:] = 0.0
        arr[f] = vals
        arr[self._fixed] = held   # dofs the shapes hold: what holds them is the residual
        return r

    def _work_xi(self) -> PETSc.Vec:
        if not hasattr(self, "_y"):
            self._y = self.xi.create_vec()
        return self._y

