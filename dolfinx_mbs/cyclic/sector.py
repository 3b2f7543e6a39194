"""A sector of a cyclic body: N identical sectors about an axis, the low and high cut faces,
and the pairing of the high face's nodes with the low face's turned by the sector angle.

    sector = Sector(n_sectors=24, axis=(0, 0, 1), low=(facet_tags, 1), high=(facet_tags, 2))
    body = mbs.Body(mesh, steel, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=W), degree=2,
                    cyclic=sector)

The mesh is the reference sector; sector j of the wheel is it turned by j alpha about the axis,
alpha = 2 pi / N (right-handed about ``axis``, through ``origin``). The high cut face is the low
one turned by alpha: the high face of sector j is the low face of sector j + 1
(``docs/theory.md`` section 10). Angles in radians, lengths in metres.

:meth:`Sector.pairs` finds, for every owned dof node of the high face, the node of the low face
that the turn by alpha brings onto it (anywhere on the communicator: the low face's nodes are
gathered on every rank, as :func:`dolfinx_mbs.constraints.tie` gathers an interface), and
refuses faces that do not match, naming the face and the largest distance.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Callable, Tuple, Union, cast

import numpy as np
from mpi4py import MPI

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.base import select_nodes
from dolfinx_mbs.frames.axis import ConstantSpin, SpinUp
from dolfinx_mbs.frames.base import rotation_about

if TYPE_CHECKING:
    from dolfinx.mesh import MeshTags
    from numpy.typing import ArrayLike

    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.bodies.body import Body

__all__ = ["Sector", "SectorPairs", "Face"]

#: a cut face: ``(meshtags, tag)`` of its facets, or a predicate ``x -> bool array`` on the
#: dof coordinates x, shape (3, n)
Face = Union[Tuple["MeshTags", int], Callable[[np.ndarray], np.ndarray]]

#: frames a cyclic body may be carried by: a spin about the cyclic axis (at rest: rate 0)
SPIN_FRAMES = (ConstantSpin, SpinUp)


def _face(face: object, name: str) -> Tuple[Callable | None, Tuple | None]:
    """(predicate, facets) of a cut face given either way."""
    if callable(face):
        return face, None
    pair: Any = face
    try:
        tags, tag = pair
    except (TypeError, ValueError):
        raise TypeError(f"Sector: {name} must be (facet_tags, tag) or a predicate x -> bool "
                        f"array, got {checks.shown(face)}") from None
    if not hasattr(tags, "indices") or not hasattr(tags, "values"):
        raise TypeError(f"Sector: {name} must be (facet_tags, tag) with DOLFINx MeshTags, got "
                        f"{type(tags).__name__}")
    if isinstance(tag, bool) or not isinstance(tag, (int, np.integer)):
        raise TypeError(f"Sector: the tag of {name} must be an integer, got {tag!r}")
    return None, (tags, int(tag))


@dataclasses.dataclass
class SectorPairs:
    """The high cut face of one body paired with its low face.

    Attributes:
        body: the body.
        high: (m, gdim) full indices of this rank's owned high-face nodes' components.
        low: (m, gdim) full indices of each one's partner on the low face (any rank).
        R: (gdim, gdim) the turn by the sector angle in the body's components.
        n_high: the number of high-face nodes on all ranks.
    """

    body: "Body"
    high: np.ndarray
    low: np.ndarray
    R: np.ndarray
    n_high: int


class Sector:
    """One sector of ``n_sectors`` about ``axis``, with its low and high cut faces.

    Args:
        n_sectors: N >= 2, the number of sectors of the whole wheel.
        axis: the cyclic axis (local components; the frame's spin axis).
        low: the low cut face: ``(facet_tags, tag)`` or a predicate on dof coordinates.
        high: the high cut face (the low one turned by 2 pi / N about ``axis``), likewise.
        origin: a point of the axis (m, local coordinates).
        tol: the largest distance between a high node and its turned low partner, relative to
            the body's extent.

    Raises:
        ValueError: N not an integer >= 2, a zero axis, a non-positive tolerance.
        TypeError: a face that is neither ``(facet_tags, tag)`` nor a predicate.
    """

    def __init__(self, n_sectors: int, axis: ArrayLike = (0.0, 0.0, 1.0),
                 low: Face | None = None, high: Face | None = None,
                 origin: ArrayLike = (0.0, 0.0, 0.0), tol: float = 1e-8) -> None:
        if isinstance(n_sectors, bool) or not isinstance(n_sectors, (int, np.integer)) \
                or n_sectors < 2:
            raise ValueError(f"Sector: n_sectors must be an integer >= 2 (the number of sectors "
                             f"of the whole wheel), got {checks.shown(n_sectors)}")
        if low is None or high is None:
            raise ValueError("Sector: give both cut faces, low= and high= ((facet_tags, tag) or "
                             "a predicate)")
        self.n_sectors = int(n_sectors)
        self.axis = checks.unit_axis(axis, "Sector: axis")
        self.origin = checks.point3(origin, "Sector: origin")
        self.tol = checks.positive(tol, "Sector: tol")
        self.low = _face(low, "low")
        self.high = _face(high, "high")

    # -- the wheel's geometry -------------------------------------------------------------------
    @property
    def angle(self) -> float:
        """The sector angle alpha = 2 pi / N (rad)."""
        return 2.0 * math.pi / self.n_sectors

    @property
    def harmonics(self) -> range:
        """The harmonic indices (nodal diameters) k = 0 ... floor(N / 2)."""
        return range(self.n_sectors // 2 + 1)

    def rotation(self, j: int = 1) -> np.ndarray:
        """The 3 x 3 turn by j alpha about the axis (sector 0 to sector j).

        Args:
            j: how many sector angles.

        Returns:
            The rotation matrix.
        """
        return rotation_about(self.axis, j * self.angle, unit=True)

    def turn(self, x: np.ndarray, j: int = 1) -> np.ndarray:
        """Points ``x`` (n, 3) turned by j alpha about the axis through ``origin``.

        Args:
            x: the points, shape (n, 3).
            j: how many sector angles.

        Returns:
            The turned points, shape (n, 3).
        """
        x = np.asarray(x, dtype=float).reshape(-1, 3)
        return cast(np.ndarray, self.origin + (x - self.origin) @ self.rotation(j).T)

    def check_harmonic(self, k: object) -> int:
        """``k`` as a harmonic index of this sector, else ValueError.

        Args:
            k: the harmonic index (nodal diameter).

        Returns:
            ``k`` as an int in 0 ... floor(N / 2).

        Raises:
            ValueError: not an integer in 0 ... floor(N / 2) (the same on every rank).
        """
        top = self.n_sectors // 2
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= top:
            raise ValueError(f"harmonic must be an integer in 0..{top} (floor(N/2) for "
                             f"N={self.n_sectors} sectors), got {checks.shown(k)}")
        return int(k)

    def copies(self, k: int) -> int:
        """How many copies of the sector harmonic ``k`` needs: 1 for k = 0 and k = N/2 (real
        amplitudes), else 2 (the cosine and sine parts)."""
        return 1 if k == 0 or 2 * k == self.n_sectors else 2

    # -- a body on the sector -------------------------------------------------------------------
    def check_body(self, body: Body) -> None:
        """Check that ``body`` can be this sector: its frame spins about the cyclic axis (a
        :class:`~dolfinx_mbs.frames.ConstantSpin` or :class:`~dolfinx_mbs.frames.SpinUp`
        about the same line, either sense), and a 2D body's axis is z.

        Args:
            body: the body (``Body(..., cyclic=sector)`` calls this).

        Raises:
            ValueError: the frame does not spin about the sector's axis (the same on every
                rank).
        """
        frame = body.frame
        if not isinstance(frame, SPIN_FRAMES):
            raise ValueError(f"cyclic body {body.name!r}: its frame must spin about the sector's "
                             f"axis {self.axis.tolist()} (frames.ConstantSpin or frames.SpinUp; "
                             f"at rest ConstantSpin(axis, rate=0)), got {frame!r}")
        along = abs(float(np.dot(frame.axis, self.axis)))
        off = np.cross(frame.pivot - self.origin, self.axis)
        if along < 1.0 - 1e-12 or np.linalg.norm(off) > 1e-9 * max(1.0, np.linalg.norm(
                self.origin), np.linalg.norm(frame.pivot)):
            raise ValueError(f"cyclic body {body.name!r}: the sector's axis (through "
                             f"{self.origin.tolist()} along {self.axis.tolist()}) is not the "
                             f"frame's spin axis (through {frame.pivot.tolist()} along "
                             f"{frame.axis.tolist()})")
        if body.gdim == 2 and abs(abs(self.axis[2]) - 1.0) > 1e-12:
            raise ValueError(f"cyclic body {body.name!r} is 2D: its sector's axis must be z, "
                             f"got {self.axis.tolist()}")

    def _nodes(self, body: Body, which: str) -> np.ndarray:
        where, facets = self.low if which == "low" else self.high
        try:
            return select_nodes(body, where, facets, f"cyclic body {body.name!r}: {which} cut "
                                "face")
        except ValueError as e:
            raise ValueError(str(e).replace("the selection", "it")) from None

    def pairs(self, body: Body, space: FullSpace) -> SectorPairs:
        """Pair every owned dof node of the high face with the low face's node that the turn by
        alpha brings onto it (collective).

        Args:
            body: the body of this sector.
            space: the model's full space (its numbering of the partners).

        Returns:
            The pairs (:class:`SectorPairs`).

        Raises:
            ValueError: on every rank: a face with no node, or faces that do not match (every
                high node must lie within ``tol`` x the body's extent of a turned low node, and
                every turned low node of a high node), naming the face and the largest distance.
        """
        from scipy.spatial import cKDTree

        comm = body.comm
        g = body.gdim
        ib = next(i for i, b in enumerate(space.bodies) if b is body)
        start, _ = space.owned_range(ib)
        bs = body.V.dofmap.index_map_bs
        x = body.V.tabulate_dof_coordinates()
        lo, hi = self._nodes(body, "low"), self._nodes(body, "high")
        X_lo, X_hi = x[lo].reshape(-1, 3), x[hi].reshape(-1, 3)
        F_lo = start + lo[:, None] * bs + np.arange(g)[None, :]
        F_hi = start + hi[:, None] * bs + np.arange(g)[None, :]
        all_lo = np.concatenate(comm.allgather(X_lo))
        all_F = np.concatenate(comm.allgather(F_lo))
        all_hi = np.concatenate(comm.allgather(X_hi))
        h = self.tol * max(body.extent(), 1e-300)
        turned = self.turn(all_lo)
        d, idx = cKDTree(turned).query(X_hi) if len(X_hi) else (np.zeros(0), np.zeros(0, int))
        # the converse, identical on every rank: each turned low node has a high node
        d_lo, _ = cKDTree(all_hi).query(turned)
        deg = math.degrees(self.angle)
        msg = None
        worst_hi = comm.allgather((float(d.max()), X_hi[int(np.argmax(d))].tolist())
                                  if len(d) else (0.0, None))
        far, at = max(worst_hi, key=lambda w: w[0])
        if far > h:
            msg = (f"cyclic body {body.name!r}: the high cut face does not match the low face "
                   f"turned by 360/{self.n_sectors} = {deg:.6g} degrees about the axis: the "
                   f"largest distance between a high node and its turned low partner is "
                   f"{far:.3e} m, at {np.round(at, 12).tolist()} (tolerance {h:.3e} m)")
        elif len(d_lo) and d_lo.max() > h:
            i = int(np.argmax(d_lo))
            msg = (f"cyclic body {body.name!r}: the low cut face does not match the high face "
                   f"turned back by {deg:.6g} degrees: the largest distance between a turned "
                   f"low node and the nearest high node is {d_lo[i]:.3e} m, at "
                   f"{np.round(all_lo[i], 12).tolist()} (turned: "
                   f"{np.round(turned[i], 12).tolist()}; tolerance {h:.3e} m)")
        if msg is not None:
            back = self.turn(all_lo, -1)
            if len(back) and len(all_hi) and cKDTree(back).query(all_hi)[0].max() <= h:
                msg += ("; they match with low and high swapped (the high face must be the low "
                        "face turned by +alpha, right-handed about the axis)")
        checks.raise_everywhere(comm, msg)
        R = self.rotation()[:g, :g]
        return SectorPairs(body=body, high=F_hi.astype(np.int64),
                           low=all_F[idx].reshape(-1, g).astype(np.int64), R=R,
                           n_high=int(comm.allreduce(len(hi), op=MPI.SUM)))

    def __repr__(self) -> str:
        return (f"Sector(n_sectors={self.n_sectors}, axis={self.axis.tolist()}, "
                f"origin={self.origin.tolist()})")
