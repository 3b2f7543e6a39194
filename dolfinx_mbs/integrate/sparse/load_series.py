"""The reduced load of a system whose frame state is constant, as a sum of known vectors:
f(t) = f_c + U c(t), so that a new time costs a few scalars and one small dense product
instead of bringing the bodies to a frame state, assembling and projecting.

With every frame's state constant in local components (no prescribed motion, linear strain),
what changes in time in a body's load Q is gravity turning with the frame (R(t)^T g), the body
forces, tractions and point loads given as functions of time or in global components
(:meth:`dolfinx_mbs.assembly.body_loads.BodyLoads.unit_terms`). Their unit vectors are projected
once
(the columns of U); f_c is the record's vector at t0 less U c(t0), so that the series equals
the system's record at t0 by construction; at set-up it is checked against the record at a
second time (:data:`CHECK_RTOL`). :meth:`LoadSeries.make` says when a system cannot be
written so (the user's load form with an update, matrices that change in time, prescribed
motion): the linear path (:mod:`dolfinx_mbs.integrate.sparse.stepper`) then takes the system's
record at
each time.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.systems.records import constant_frame

if TYPE_CHECKING:
    from dolfinx_mbs.systems.records import SecondOrder
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["LoadSeries", "SeriesRecord", "CHECK_RTOL"]

log = logging.getLogger(__name__)

#: largest difference of the series from the system's record at the set-up's check time,
#: relative to the larger of |f| and |U c| there (round-off of the sum of a few vectors)
CHECK_RTOL = 1e-11


class _Time:
    """What a load's value in local components reads of a frame state: its time."""

    __slots__ = ("t",)

    def __init__(self, t: float) -> None:
        self.t = t


class SeriesRecord:
    """A system's record (:mod:`dolfinx_mbs.systems.records`) with its load vectors at another
    time: the named vectors its own, every other attribute the record's (constant).

    Args:
        base: the system's record.
        t: the time of the vectors (s).
        vectors: the load vectors at ``t``, by name.
    """

    def __init__(self, base: SecondOrder, t: float, vectors: Dict) -> None:
        self._base = base
        self.t = t
        self.__dict__.update(vectors)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


class LoadSeries:
    """The reduced load vectors ``names`` of ``system`` (e.g. ``("f",)``, Hamilton's
    ``("f", "fa")``) as f_c + U c(t): built by :meth:`make`; :meth:`record` gives the system's
    record with them at a time.

    Args:
        system: the run's typed system.
        t0: the time the constant part is taken at (s).
        names: the record's load vectors written as the series.
        units: per body, its unit load vectors (terms of vectors).
        terms: per body, the coefficients' functions of a frame state.
        user: a point load's function is the user's (called under a collective guard).
        rotation: a coefficient reads the frames' rotation (else the time alone).
    """

    def __init__(self, system: SecondOrderSystem, t0: float, names: Sequence[str], units: list,
                 terms: list, user: bool, rotation: bool = True) -> None:
        self.system, self.comm, self.names = system, system.comm, tuple(names)
        self._terms = terms  # per body: [coefficients(state)]
        self._user = user  # a point load's function of the user's
        self._rotation = rotation  # a coefficient reads the frames' rotation
        red, space = system.reducer, system.space
        columns = []
        full, reduced = space.create_vec(), None
        for ib, body_units in enumerate(units):
            lo, hi = space.offsets[ib], space.offsets[ib + 1]
            for e in (e for term in body_units for e in term):
                full.zeroEntries()
                full.array[lo:hi] = e.getArray(readonly=True)[: hi - lo]
                reduced = red.project(full, reduced)
                columns.append(reduced.getArray(readonly=True).copy())
        full.destroy()
        base = system.at(t0)
        if reduced is not None:
            reduced.destroy()
        n_local = base.M.getLocalSize()[0]
        self.U = np.column_stack(columns) if columns else np.zeros((n_local, 0))
        self._base, self.version = base, base.version
        c0 = self.coefficients(t0)
        self.constant = {k: getattr(base, k).getArray(readonly=True) - self.U @ c0
                         for k in self.names}
        self._slots: List[Tuple[float, SeriesRecord]] = []  # the last two times asked

    @classmethod
    def make(cls, system: SecondOrderSystem, t0: float, t1: float,
             names: Sequence[str] = ("f",)) -> LoadSeries | None:
        """The series of ``system`` from ``t0``, checked at ``t1`` against the system's record
        (collective).

        Args:
            system: the run's typed system.
            t0: the time the constant part is taken at (s).
            t1: the check's time (s).
            names: the record's load vectors written as the series.

        Returns:
            The series, or None where the loads are not such a sum (see the module's words).
        """
        red = getattr(system, "reducer", None)
        asm = getattr(system, "assembly", None)
        if red is None or asm is None or not constant_frame(system) or red.prescribed:
            return None
        ops = asm.body_operators
        if any(o.varying_user_matrices for o in ops):
            return None
        if any(o.prestress_matrices for o in ops) and any(np.any(b.gravity)
                                                          for b in system.bodies):
            return None  # the prestress follows gravity turning with the frame
        units, terms, rotation = [], [], False
        for o in ops:
            bt = o.loads.unit_terms()
            if bt is None:
                return None
            units.append([u for _, u, _ in bt])
            terms.append([fn for fn, _, _ in bt])
            rotation = rotation or any(r for *_, r in bt)
        user = any(ld.fn is not None for b in system.bodies for ld, _ in b.loads.points)
        series = cls(system, t0, names, units, terms, user, rotation)
        if not series._check(t1):
            series.destroy()
            return None
        return series

    def coefficients(self, t: float) -> np.ndarray:
        """c(t): the terms' coefficients at the frames' states at ``t`` (the time alone where
        no coefficient reads the frames' rotation).

        Args:
            t: the time (s).

        Returns:
            c(t).
        """
        states = self.system.assembly.states(t) if self._rotation else \
            [_Time(t)] * len(self._terms)

        def values() -> List[np.ndarray]:
            return [fn(s) for s, body_terms in zip(states, self._terms) for fn in body_terms]
        if self._user:  # a point load's function may fail on some ranks only
            with checks.collective(self.comm, f"the point loads at t={t:g}"):
                vals = values()
        else:
            vals = values()
        return np.concatenate(vals) if vals else np.zeros(0)

    def record(self, t: float) -> SeriesRecord:
        """The system's record with the load vectors at ``t`` (the last two times kept: a
        step's stage time and its output time).

        Args:
            t: the time (s).

        Returns:
            The record at ``t``.
        """
        for ts, rec in self._slots:
            if ts == t:
                return rec
        c = self.coefficients(t)
        if len(self._slots) == 2:
            _, rec = self._slots.pop(0)
            rec.t = t
        else:
            rec = SeriesRecord(self._base, t, {k: getattr(self._base, k).duplicate()
                                               for k in self.names})
        Uc = self.U @ c
        for k in self.names:
            np.add(self.constant[k], Uc, out=getattr(rec, k).getArray())
        self._slots.append((t, rec))
        return rec

    def _check(self, t1: float) -> bool:
        """Whether the series equals the system's record at ``t1`` (collective)."""
        mine = self.record(t1)
        s = self.system.at(t1)
        Uc = self.U @ self.coefficients(t1)
        local = []
        for k in self.names:
            ref = getattr(s, k).getArray(readonly=True)
            d = getattr(mine, k).getArray(readonly=True) - ref
            local += [d @ d, ref @ ref, Uc @ Uc]
        sums = np.asarray(self.comm.allreduce(np.array(local)))
        self.system.forget()  # the next record is evaluated anew
        ok = True
        for i, k in enumerate(self.names):
            d2, r2, u2 = sums[3 * i: 3 * i + 3]
            if np.sqrt(d2) > CHECK_RTOL * max(np.sqrt(r2), np.sqrt(u2), 1e-300):
                log.warning("load series: %s differs from the system's at t=%g by %.2e "
                            "(relative); the loads are assembled at each time", k, t1,
                            float(np.sqrt(d2) / max(np.sqrt(r2), np.sqrt(u2), 1e-300)))
                ok = False
        return ok

    def destroy(self) -> None:
        """Destroy the records' vectors."""
        for _, rec in self._slots:
            for k in self.names:
                rec.__dict__[k].destroy()
        self._slots = []
