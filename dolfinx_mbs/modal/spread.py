"""Eigenproblems whose matrices leave a rank without rows, solved on rows spread over every rank.

A Maggi-reduced system numbers its coordinates by the ranks that own the independent dofs, so
a rank whose dofs are all dependent (a small body clamped or tied where that rank's part of the
mesh lies) owns no reduced row. SLEPc's PEP normalizes its eigenvectors at the end of a solve
with LAPACK's ``lascl`` on each rank's block of rows, and on an empty block LAPACK refuses the
leading dimension 0 (``lascl``, info = -9) on that rank alone. :class:`SpreadRows` gives the
solver copies of the matrices with the same global numbering and the rows spread evenly, and
maps the eigenvectors back; when every rank owns a row it gives the matrices themselves.
"""

from __future__ import annotations

from typing import List, Sequence

from mpi4py import MPI
from petsc4py import PETSc

__all__ = ["SpreadRows"]


class SpreadRows:
    """The layout an eigensolver works in for square matrices of ``A``'s layout.

    Args:
        A: a matrix of the layout (rows and columns alike).
    """

    def __init__(self, A: PETSc.Mat) -> None:
        comm = A.getComm()
        mpi = comm.tompi4py()
        (n, N), _ = A.getSizes()
        self.sizes = (n, N)
        self.comm = comm
        #: True when the solver works on spread copies
        self.active = bool(mpi.size > 1 and N >= mpi.size
                           and mpi.allreduce(n, op=MPI.MIN) == 0)
        self._copies: dict = {}
        self._scatter: PETSc.Scatter | None = None
        self._rows: PETSc.IS | None = None
        if self.active:
            size, rank = mpi.size, mpi.rank
            counts = [N // size + (r < N % size) for r in range(size)]
            self._rows = PETSc.IS().createStride(counts[rank], first=sum(counts[:rank]),
                                                 step=1, comm=comm)

    def mats(self, mats: Sequence[PETSc.Mat | None]) -> List[PETSc.Mat | None]:
        """The matrices in the solver's layout: spread copies (refreshed in place on later calls
        with matrices of the same patterns), or the matrices themselves.

        Args:
            mats: the matrices (None entries pass through).

        Returns:
            One matrix per entry.
        """
        if not self.active:
            return list(mats)
        out: List[PETSc.Mat | None] = []
        for i, A in enumerate(mats):
            if A is None:
                out.append(None)
                continue
            self._copies[i] = A.createSubMatrix(self._rows, self._rows,
                                                submat=self._copies.get(i))
            out.append(self._copies[i])
        return out

    def create_vec(self, A: PETSc.Mat) -> PETSc.Vec:
        """A vector of the solver's layout.

        Args:
            A: a matrix of the layout this object was made for.

        Returns:
            A new vector.
        """
        if not self.active:
            return A.createVecRight()
        assert self._rows is not None
        return PETSc.Vec().createMPI((self._rows.getLocalSize(), self.sizes[1]),
                                     comm=self.comm)

    def back(self, x: PETSc.Vec) -> PETSc.Vec:
        """``x`` (the solver's layout) in the matrices' layout: ``x`` itself, or a new vector
        (``x`` destroyed).

        Args:
            x: a vector of the solver's layout.

        Returns:
            The same entries in the matrices' layout.
        """
        if not self.active:
            return x
        y = PETSc.Vec().createMPI(self.sizes, comm=self.comm)
        if self._scatter is None:
            self._scatter = PETSc.Scatter().create(x, self._rows, y, self._rows)
        self._scatter.scatter(x, y, addv=PETSc.InsertMode.INSERT_VALUES,
                              mode=PETSc.ScatterMode.FORWARD)
        x.destroy()
        return y

    def destroy(self) -> None:
        """Free the copies and the maps (the matrices given are untouched)."""
        for A in self._copies.values():
            A.destroy()
        self._copies.clear()
        for obj in (self._scatter, self._rows):
            if obj is not None:
                obj.destroy()
        self._scatter = self._rows = None
