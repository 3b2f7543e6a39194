"""The cyclic part of a model: its sector bodies, their cut faces paired, the systems of each
harmonic index, and their expansion to the whole wheel.

A model whose bodies are sectors (``Body(..., cyclic=Sector(...))``) holds a :class:`Wheel`. Its
own constraints then include the cut's rows of k = 0 (:attr:`Wheel.rows`), so that the
model's static solves, prestress and time integration are those of the cyclic (k = 0)
problem: loads, supports and motion the same in every sector. The other harmonic indices are
systems of their own (:meth:`Wheel.system`): k = N/2 on the model's space with its rows
u_high = -R u_low, 0 < k < N/2 on two copies of it (:mod:`dolfinx_mbs.cyclic.harmonic`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple, cast

import numpy as np

from dolfinx_mbs.constraints.maggi import MaggiReducer
from dolfinx_mbs.cyclic.expand import WheelMesh
from dolfinx_mbs.cyclic.harmonic import (
    CopiedRows,
    CopiedSpace,
    HarmonicAssembly,
    HarmonicSystem,
)
from dolfinx_mbs.cyclic.rows import CyclicRows
from dolfinx_mbs.cyclic.sector import Sector
from dolfinx_mbs.io.output import FieldFile
from dolfinx_mbs.systems.second_order import SecondOrderSystem

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.constraints.base import Constraint

__all__ = ["Wheel"]


class Wheel:
    """The cyclic bodies of a model, their pairs and the k = 0 rows (collective).

    Args:
        bodies: the model's elastic bodies (all of them sectors of one wheel).
        space: the model's full space.

    Raises:
        ValueError: a body that is not a sector, sectors of different N or axes, or cut faces
            that do not match (on every rank).
    """

    def __init__(self, bodies: Sequence[Body], space: FullSpace) -> None:
        sectors: List[Any] = [getattr(b, "cyclic", None) for b in bodies]
        plain = [b.name for b, s in zip(bodies, sectors) if s is None]
        if plain:
            raise ValueError(f"a cyclic model's bodies must all be sectors of the wheel (Body(..., "
                             f"cyclic=Sector(...))): {plain} are not")
        first = sectors[0]
        for b, s in zip(bodies, sectors):
            if s.n_sectors != first.n_sectors or abs(abs(float(np.dot(s.axis, first.axis)))
                                                      - 1.0) > 1e-12 or np.linalg.norm(
                    np.cross(s.origin - first.origin, first.axis)) > 1e-9:
                raise ValueError(f"the sectors of body {b.name!r} ({s!r}) and of "
                                 f"{bodies[0].name!r} ({first!r}) are not sectors of one wheel")
        self.sector: Sector = first
        self.bodies = list(bodies)
        self.pairs = [s.pairs(b, space) for b, s in zip(bodies, sectors)]
        #: the cut's rows of k = 0, among the model's constraints
        self.rows = CyclicRows(self.pairs, 0, first.n_sectors, name="cyclic")
        axis = getattr(bodies[0].frame, "axis", first.axis)   # the spin's (check_body)
        self.orientation = float(np.sign(np.dot(axis, first.axis)))
        self._wheels: Dict[int, WheelMesh] = {}

    @property
    def n_sectors(self) -> int:
        """N."""
        return self.sector.n_sectors

    def harmonics(self, which: Any) -> List[int]:
        """The harmonic indices of ``which``: ``"all"`` (0 ... floor(N/2)), one index or a
        sequence of them, checked.

        Args:
            which: ``"all"``, an index, or indices.

        Returns:
            The indices, ascending, without repeats.

        Raises:
            ValueError: an index outside 0 ... floor(N/2), or nothing.
        """
        if isinstance(which, str):
            if which != "all":
                raise ValueError(f"harmonics must be 'all', an index or a list of indices in "
                                 f"0..{self.n_sectors // 2}, got {which!r}")
            return list(self.sector.harmonics)
        if isinstance(which, (int, np.integer)) and not isinstance(which, bool):
            return [self.sector.check_harmonic(which)]
        try:
            ks = [self.sector.check_harmonic(k) for k in which]
        except TypeError:
            raise ValueError(f"harmonics must be 'all', an index or a list of indices in "
                             f"0..{self.n_sectors // 2}, got {which!r}") from None
        if not ks:
            raise ValueError("harmonics: no harmonic index given")
        return sorted(set(ks))

    def copies(self, assembly: Assembly) -> Tuple[CopiedSpace, HarmonicAssembly]:
        """The two-copy space and assembly of the model's ``assembly`` (shared by every
        harmonic index with two copies).

        Args:
            assembly: the model's assembly.

        Returns:
            ``(space, assembly)`` of the two copies.
        """
        space = CopiedSpace(assembly.space)
        return space, HarmonicAssembly(assembly, space)

    def system(self, k: int, base: SecondOrderSystem, constraints: Sequence[Constraint],
               static: Any, copies: Tuple[CopiedSpace, HarmonicAssembly] | None = None
               ) -> SecondOrderSystem:
        """The system of harmonic index ``k`` (collective).

        Args:
            k: the harmonic index.
            base: the model's own system (the k = 0 one, returned for k = 0).
            constraints: the model's constraints (:attr:`rows` among them).
            static: the model's static solver.
            copies: :meth:`copies` of the model's assembly (needed for 0 < k < N/2).

        Returns:
            The system.
        """
        k = self.sector.check_harmonic(k)
        if k == 0:
            return base
        others = [c for c in constraints if c is not self.rows]
        if self.sector.copies(k) == 1:
            rows = CyclicRows(self.pairs, k, self.n_sectors, name=f"cyclic(k={k})")
            reducer = MaggiReducer(base.space, others + [rows])
            return HarmonicSystem(base.assembly, reducer, others + [rows], static, k,
                                  self.n_sectors, base, self.orientation)
        if copies is None:
            copies = self.copies(base.assembly)
        space, asm = copies
        cons: List[Constraint] = [CopiedRows(c, space, j) for j in (0, 1) for c in others]
        cons.append(CyclicRows(self.pairs, k, self.n_sectors, space.copy_index,
                               name=f"cyclic(k={k})"))
        reducer = MaggiReducer(space, cons)
        return HarmonicSystem(asm, reducer, cons, static, k, self.n_sectors, base,
                              self.orientation)

    # -- the whole wheel ------------------------------------------------------------------------
    def wheel_mesh(self, ib: int) -> WheelMesh:
        """The whole wheel of body ``ib`` (made once, collective).

        Args:
            ib: the body's index in the model.

        Returns:
            The :class:`~dolfinx_mbs.cyclic.expand.WheelMesh`.
        """
        if ib not in self._wheels:
            b = self.bodies[ib]
            self._wheels[ib] = WheelMesh(b.mesh, cast(Sector, b.cyclic))
        return self._wheels[ib]

    def expand(self, shape: Any, k: int) -> list:
        """A field or mode of harmonic index ``k`` of the sector bodies on the whole wheel.

        Args:
            shape: a mode of :meth:`dolfinx_mbs.Model.modes` (one entry of ``shapes``: a
                (re, im) pair per body and copy, the cosine copies first), or one Function
                per body (k = 0 or N/2: the field itself; else the cosine copies, then the
                sine copies).
            k: the harmonic index.

        Returns:
            Per body: a Function on the wheel (from Functions), or a (re, im) pair of them
            (from a mode).
        """
        k = self.sector.check_harmonic(k)
        nb = len(self.bodies)
        two = self.sector.copies(k) == 2
        items = list(shape)
        if len(items) != nb * (2 if two else 1):
            raise ValueError(f"expand: harmonic {k} of {nb} bod{'y' if nb == 1 else 'ies'} "
                             f"takes {nb * (2 if two else 1)} entries (one per body"
                             f"{' and copy, the cosine copies first' if two else ''}), got "
                             f"{len(items)}")
        out = []
        for ib in range(nb):
            w = self.wheel_mesh(ib)
            c = items[ib]
            s = items[nb + ib] if two else None
            if isinstance(c, tuple):
                out.append(w.pair(c, s, k))
            else:
                out.append(w.expand(c, s, k, name=getattr(c, "name", "u")))
        return out


    def write_modes(self, stem: str, shapes: Sequence, k: int) -> None:
        """The modes ``shapes`` (:meth:`dolfinx_mbs.Model.modes`' ``shapes`` of harmonic index
        ``k``) expanded to the whole wheel, to ``<stem>_<body>`` field files (VTX ``.bp``,
        or XDMF on DOLFINx 0.5) with fields ``mode<i>_re`` and ``mode<i>_im`` at time 0
        (collective).

        Args:
            stem: the file stem.
            shapes: the modes.
            k: their harmonic index.
        """
        wheels = [self.expand(s, k) for s in shapes]
        for ib, body in enumerate(self.bodies):
            w = self.wheel_mesh(ib)
            names = [f"mode{i}_{part}" for i in range(len(shapes)) for part in ("re", "im")]
            with FieldFile(body.comm, f"{stem}_{body.name}", w.space, names) as f:
                for i, mode in enumerate(wheels):
                    for part, func in zip(("re", "im"), mode[ib]):
                        if func is not None:
                            f.assign(f"mode{i}_{part}", func)
                f.write(0.0)
