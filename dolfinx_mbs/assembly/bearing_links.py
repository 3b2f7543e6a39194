"""Bearings between two bodies: the blocks they add to the full matrices, across the bodies
(docs/theory.md section 9; the definitions in :mod:`dolfinx_mbs.bodies.attachments`).

A bearing between a journal on body A and a housing on body B acts on d = d_A - d_B, the
difference of the two surfaces' mean motions d_A = L_A u_A, d_B = L_B u_B (each a
:class:`~dolfinx_mbs.assembly.rotor_terms.JournalMap` of its body, in the rotor's x, y). Its
virtual work -(K_b d + C_b d').(L_A v_A - L_B v_B) adds W^T K_b W to the stiffness and
W^T C_b W to the damping, W = [L_A, -L_B] on the full coordinates: one dense block on the
union of the two surfaces' dofs, of rank at most 5.

The bodies' own matrices reserve the two diagonal blocks (each body's
:class:`~dolfinx_mbs.assembly.rotor_terms.RotorTerms` widens its pattern by the surface's dofs
and puts no value there); :attr:`BearingLinks.off` are zero matrices that reserve the blocks
between the bodies, placed off the diagonal when the full matrices are formed
(:meth:`dolfinx_mbs.assembly.space.FullSpace.block_diagonal`), so every full matrix has one
pattern, allocated once. The values are added to the full matrices after they are formed
(:meth:`BearingLinks.add`), on each rank's own rows: the coefficients follow the rotor's
speed, which only the full assembly sees (the housing's frame does not spin).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, List, Sequence, Tuple

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.bodies.attachments import Bearing

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.operators import BodyOperators
    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.frames.base import FrameState

__all__ = ["BearingLinks"]

_ADD = PETSc.InsertMode.ADD_VALUES


def _pattern(rows: PETSc.Mat, cols: PETSc.Mat, blocks: Sequence[Tuple[np.ndarray, np.ndarray]]
             ) -> PETSc.Mat:
    """A zero matrix with the row layout of ``rows`` and the column layout of ``cols`` whose
    pattern is the dense blocks (row indices x column indices, global) of ``blocks``."""
    r0, r1 = rows.getOwnershipRange()
    per_row: Dict[int, list] = {}
    for ri, ci in blocks:
        for r in ri[(ri >= r0) & (ri < r1)]:
            per_row.setdefault(int(r) - r0, []).append(ci)
    counts = np.zeros(r1 - r0, dtype=np.int64)
    merged = {r: np.unique(np.concatenate(c)) for r, c in per_row.items()}
    for r, c in merged.items():
        counts[r] = len(c)
    ni = np.zeros(r1 - r0 + 1, dtype=PETSc.IntType)
    np.cumsum(counts, out=ni[1:])
    nj = np.concatenate([merged[r] for r in sorted(merged)]).astype(PETSc.IntType) \
        if merged else np.zeros(0, PETSc.IntType)
    X = PETSc.Mat().create(comm=rows.getComm())
    X.setSizes((rows.getSizes()[0], cols.getSizes()[1]))
    X.setType(PETSc.Mat.Type.AIJ)
    X.setPreallocationCSR((ni, nj))  # zeros, assembled
    return X


class _Link:
    """One bearing between bodies ``ia`` (journal) and ``ib`` (housing): W = [L_A, -L_B] on
    the full indices ``index``."""

    def __init__(self, bearing: Bearing, ia: int, ib: int, index: np.ndarray,
                 W: np.ndarray, rotor: int | None) -> None:
        self.bearing, self.ia, self.ib = bearing, ia, ib
        self.index, self.W, self.rotor = index, W, rotor

    def speed(self, states: Sequence[FrameState]) -> float:
        """The rotor's spin rate (0 when neither body spins)."""
        return 0.0 if self.rotor is None else float(getattr(states[self.rotor], "spin", 0.0))


class BearingLinks:
    """The bearings between bodies of an assembly (module docstring). Use :meth:`make`
    (None without such bearings).

    Args:
        ops: the bodies' operators (their rotor terms hold each surface's map).
        space: the full space.
        links: ``(bearing, journal body index, housing body index)`` each.
        states: the bodies' frame states at t = 0 (the supports' coefficients).
    """

    def __init__(self, ops: Sequence[BodyOperators], space: FullSpace,
                 links: Sequence[Tuple[Bearing, int, int]],
                 states: Sequence[FrameState]) -> None:
        self.comm = space.comm
        self.n = space.n_global
        self.local = space.n_local
        bodies = [o.body for o in ops]
        self.links: List[_Link] = []
        blocks: Dict[Tuple[int, int], list] = {}
        for b, ia, ib in links:
            ra, rb = ops[ia].rotor, ops[ib].rotor
            assert ra is not None and rb is not None  # a bearing's bodies have rotor terms
            ja, jb = ra.maps[id(b)], rb.maps[id(b)]
            index = np.concatenate([space.full_of_global(ia, ja.index),
                                    space.full_of_global(ib, jb.index)])
            W = np.hstack([ja.L, -jb.L])
            rotor = None if b.rotor is None else next(i for i, x in enumerate(bodies)
                                                      if x is b.rotor)
            self.links.append(_Link(b, ia, ib, index, W, rotor))
            blocks.setdefault((ia, ib), []).append((ja.index, jb.index))
            blocks.setdefault((ib, ia), []).append((jb.index, ja.index))
        #: zero blocks between the bodies that reserve the bearings' pattern,
        #: ``{(i, j): matrix}`` (rows of body i, columns of body j)
        self.off = {ij: _pattern(ops[ij[0]].K, ops[ij[1]].K, bl) for ij, bl in blocks.items()}
        self._key: tuple | None = None
        self._mats: List[Tuple[np.ndarray, np.ndarray]] = []
        #: incremented whenever the coefficients change
        self.version = 0
        self._own = [lk.bearing for lk in self.links]   # the model's bearings
        self._support = []
        for lk in self.links:  # the direct stiffnesses at the rotor's rate at t = 0
            self._support.append(lk.bearing.support(lk.speed(states)))
        self.update(states)

    @classmethod
    def make(cls, ops: Sequence[BodyOperators], space: FullSpace,
             states: Sequence[FrameState]) -> "BearingLinks" | None:
        """The bearings between the bodies of ``ops``, or None when there are none.

        Args:
            ops: the bodies' operators.
            space: the full space.
            states: the bodies' frame states at t = 0.

        Returns:
            The links, or None.
        """
        bodies = [o.body for o in ops]
        links = []
        for ia, body in enumerate(bodies):
            for a in getattr(body, "attachments", ()):
                if isinstance(a, Bearing) and a.other is not None:
                    ib = next((i for i, x in enumerate(bodies) if x is a.other), None)
                    if ib is None:
                        raise ValueError(f"bearing {a.name!r}: its housing's body "
                                         f"{a.other.name!r} is not a body of this assembly")
                    links.append((a, ia, ib))
        return cls(ops, space, links, states) if links else None

    def update(self, states: Sequence[FrameState]) -> bool:
        """Take the coefficients at the rotors' speeds of ``states``; True when one changed.

        Args:
            states: the bodies' frame states.

        Returns:
            True when a coefficient changed.
        """
        mats = [lk.bearing.matrices(lk.speed(states)) for lk in self.links]
        key = tuple(np.concatenate([np.ravel(m) for pair in mats for m in pair]))
        if key == self._key:
            return False
        self._mats, self._key = mats, key
        self.version += 1
        return True

    def add(self, out: PETSc.Mat, which: str) -> None:
        """Add the bearings' W^T X W to the full matrix ``out`` (its pattern holds them: it was
        formed with :attr:`off`), X the stiffness (``"K"``), the damping (``"C"``) or the
        supports' stiffness (``"S"``, :meth:`dolfinx_mbs.assembly.full.Assembly.supported`);
        assembled after.

        Args:
            out: the full matrix.
            which: ``"K"``, ``"C"`` or ``"S"``.
        """
        r0, r1 = out.getOwnershipRange()
        # a value outside the pattern would be a bug here: an error, not a new allocation
        out.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, True)
        for i, lk in enumerate(self.links):
            K, C = self._mats[i]
            X = {"K": K, "C": C, "S": self._support[i]}[which]
            r = list(lk.bearing.rows)
            Wr = lk.W[r]
            own = (lk.index >= r0) & (lk.index < r1)
            if np.any(own) and np.any(X):
                out.setValues(lk.index[own], lk.index, Wr[:, own].T @ X[np.ix_(r, r)] @ Wr,
                              addv=_ADD)
        out.assemble()

    def speed_terms(self) -> list:
        """The coefficients that change with the speed, as terms of a sweep's pencil:
        ``(which, name, E, f)``, ``which`` "K" or "C", E = W_a^T W_b (a, b across the axis) as
        a full matrix of the bearing's block alone (new: the caller destroys it) and f(Omega)
        the coefficient k_ab or c_ab at the rotor's speed Omega (the sweep's speed).

        Returns:
            The terms.
        """
        out = []
        for i, lk in enumerate(self.links):
            b = lk.bearing
            if b.rotor is None:
                continue
            for term in b.speed_terms():
                a, c = term.row, term.col
                E = self._block(lk, np.outer(np.eye(2)[a], np.eye(2)[c]))
                out.append((term.matrix, f"link{i}/{a}{c}/{term.matrix.lower()}", E, term.at))
        return out

    def use_bearings(self, replace: Callable[[Bearing], Bearing] | None) -> None:
        """Read each link's bearing through ``replace`` (a new bearing on the same journal and
        housing: the critical speed map's), or the model's own again (None); the supports
        stay. The coefficients are taken at the next :meth:`update`.

        Args:
            replace: a bearing's replacement, or None.
        """
        for lk, own in zip(self.links, self._own):
            lk.bearing = own if replace is None else replace(own)
        self._key = None

    def _block(self, lk: _Link, X: np.ndarray) -> PETSc.Mat:
        """A full matrix whose pattern is the link's block, W_xy^T X W_xy in it."""
        E = PETSc.Mat().create(comm=self.comm)
        E.setSizes(((self.local, self.n), (self.local, self.n)))
        E.setType(PETSc.Mat.Type.AIJ)
        r0 = self.comm.exscan(self.local) or 0
        r1 = r0 + self.local
        own = np.flatnonzero((lk.index >= r0) & (lk.index < r1))
        order = np.argsort(lk.index[own])
        rows = lk.index[own][order]
        cols = np.sort(lk.index)
        counts = np.zeros(self.local, dtype=np.int64)
        counts[rows - r0] = len(cols)
        ni = np.zeros(self.local + 1, dtype=PETSc.IntType)
        np.cumsum(counts, out=ni[1:])
        E.setPreallocationCSR((ni, np.tile(cols, len(rows)).astype(PETSc.IntType)))
        W2 = lk.W[:2]
        if rows.size:
            E.setValues(lk.index[own], lk.index, W2[:, own].T @ X @ W2, addv=_ADD)
        E.assemble()
        return E

    def destroy(self) -> None:
        """Destroy the pattern blocks (collective)."""
        for X in self.off.values():
            X.destroy()
        self.off = {}
