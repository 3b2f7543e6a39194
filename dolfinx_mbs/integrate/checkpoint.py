"""Checkpoint and restart of a time integration, and the signals that end a run cleanly.

A run with ``output="out/run", checkpoint_every=N`` (:func:`dolfinx_mbs.integrate.integrate`)
writes, every N steps, what it needs to continue into ``out/run.ckpt/``:

* ``step_<index>/rank<r>.npz``, one file per rank: the TS's solution as this rank owns it
  (second-order: the reduced displacement and velocity; first-order: (q, v); Hamilton: (q, p);
  velocity rows: (q, w)), the form's own state (Hamilton: the last recovered velocity), the
  observers' accumulators (the energy work integral), and the partition-free names of this
  rank's reduced unknowns (``keys``, below);
* ``latest.json`` (rank 0): the time, the step number, the TS's next step size, the ranks and
  the layout; written to a temporary name and renamed (``os.replace``) once every rank's file
  is in place, so it always names a complete checkpoint. The older step folder is removed after.

``restart=True`` reads ``latest.json``, puts the state back into the TS (time, step number,
step size), keeps the CSV rows and field steps up to the checkpoint's time and appends after
them. Generalized-alpha (TSALPHA2) keeps an acceleration of its own that PETSc does not give
out; with its default spectral radius 1 the next state does not depend on it (the method sees
only the mean of the two accelerations of a step), so the displacement and velocity are the
state; a run with ``spectral_radius < 1`` is refused at restart. The restart estimates the
acceleration anew (PETSc's start of TSALPHA2), which changes the steps by round-off; the run
that writes a checkpoint does the same there (``Stepper.checkpointed``), so that a restart
from it takes the uninterrupted run's steps to the last bit (and a run of fixed steps ends at
the sum of its whole steps, :func:`dolfinx_mbs.integrate.schemes.grid_end`, so that a run
extended from its end does too).

**Any number of ranks.** On as many ranks as wrote it, a checkpoint is read back as it was
written (each rank its own arrays: bit for bit the state the run had; each rank's sizes are
checked). On another number of ranks its values are redistributed by name: each reduced
unknown of the Maggi reducer is an independent dof of a body, named by the body, the dof's
component and the original input numbers of the vertices of the mesh entity its node sits on
(:mod:`dolfinx_mbs.io.dof_keys`: the same on every partition of the same mesh built the same
way), and every TS vector is made of blocks of reduced unknowns (second-order: U and V;
first-order: (q, v); Hamilton: (q, p), p's entries following q's). Each rank of the new run
reads every rank's file, finds the names of its own unknowns and takes their values: the same
numbers, so the run continues as the uninterrupted run does to round-off of the operators'
assembly on the new partition. The field files are continued by coordinates
(:mod:`dolfinx_mbs.io.field_restart`), the CSV and the accumulators are global. Every rank
reads the whole checkpoint (its memory is the run's state, twice over); a restart on another
number of ranks is refused, naming why, for systems whose unknowns are not dofs of the bodies
(Lagrange multipliers, velocity rows, reduced bodies' modal coordinates), for elements with
several nodes on one entity (Lagrange degree 3 and higher) and under DOLFINx 0.5, whose XDMF
field files hold the writing partition's node order. :func:`read_state` reads a
checkpoint on any number of ranks for post-processing (the bodies' displacement and
velocity).

**Computed frames.** A coupled run (:func:`dolfinx_mbs.integrate.coupled.integrate_coupled`,
unknowns y = (q, v, f)) writes the same rank files with its elastic coordinates and rates as
the TS vectors (``x0`` = q, ``x1`` = v: the blocks of reduced unknowns a restart on another
number of ranks redistributes by name; none for rigid bodies alone) and, in ``latest.json``
(``extra``, written by rank 0), the frame unknowns f (the frames' coordinates and speeds, the
joints' multipliers: global, read by every rank as they are), the frames' names and the sizes a
restart checks, with the applied loads' work and its last (t, power) as the accumulators.
Its schemes restart from the state alone (:data:`RESTARTED`): TSALPHA at spectral radius 1
(the midpoint rule, its rate estimated anew by two backward-Euler half steps, a round-off
change) and TSBDF (a multistep method: PETSc drops its history at a restarted step and starts
with half a step of backward Euler, then BDF2 on the uneven steps). The run that writes a
checkpoint restarts its TS there (``TSRestartStep``), so a restart takes its steps to the last
bit; for BDF2 each checkpoint is then one more start-up of the scheme than a run without
checkpoints makes, a change of the order of the scheme's own error. The dense coupled path
(:class:`~dolfinx_mbs.integrate.dense.coupled.DenseCoupledStepper`, the same schemes on arrays
every rank holds whole) writes the same files (:func:`coupled_extra`: its reduced vectors
filled from its arrays, the joints' multipliers its Maggi stages recovered last) and reads
them back the same way (the rank files, redistributed where they can be, gathered on every
rank), so that a checkpoint of either path restarts on either; it ends its batches of steps
at the checkpoints and restarts its schemes there.

:class:`Signals` turns SIGTERM and SIGINT during a run into a request that the run sees at
the next step boundary (an allreduce of the flag at each step, so a signal that reached one
rank stops every rank): the step in progress is finished, a checkpoint written when
checkpointing is on, every file closed, then :class:`Interrupted` ends the run on every rank
(``KeyboardInterrupt`` for SIGINT, ``SystemExit(128 + signal)`` for SIGTERM).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Protocol, Sequence, cast

import numpy as np
from mpi4py import MPI

from dolfinx_mbs import checks, compat
from dolfinx_mbs.constraints.maggi import MaggiReducer
from dolfinx_mbs.io.dof_keys import dof_keys, locate
from dolfinx_mbs.petsc_options import given_options

if TYPE_CHECKING:
    from types import FrameType, TracebackType

    from petsc4py import PETSc

    from dolfinx_mbs.integrate.config import Checkpoints
    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["Checkpoint", "Writer", "load", "exists", "restore_vecs", "resume_ts", "Signals",
           "model_digest", "check_model",
           "Interrupted", "truncate_csv", "folder", "arguments", "unknown_names",
           "read_state", "State", "check_type", "ONE_STEP", "RESTARTED", "check_end",
           "coupled_extra", "frame_unknowns", "ModelDigest", "CoupledUnknowns"]

#: format version of ``latest.json`` (2: the unknowns' names, ``keys``)
VERSION = 2


class NamedSystem(Protocol):
    """What a checkpoint's writer and reader read of a run's system (a typed system,
    :meth:`dolfinx_mbs.Model.system`, or a coupled one; the reducer, where there is one, by
    name)."""

    @property
    def comm(self) -> MPI.Comm:
        """The system's communicator."""

    @property
    def space(self) -> Any:
        """The bodies' full space."""

    @property
    def n_reduced(self) -> int:
        """The number of the system's coordinates."""

    def create_reduced_vec(self) -> PETSc.Vec:
        """A vector of the system's coordinates."""


class CheckpointedSystem(NamedSystem, Protocol):
    """What :func:`read_state` reads of a run's typed system besides :class:`NamedSystem`."""

    def update(self, t: float) -> bool:
        """Bring the system's constraints to time ``t``.

        Args:
            t: time (s).

        Returns:
            True when its operators changed.
        """

    def expand(self, q: PETSc.Vec, out: PETSc.Vec | None = None,
               homogeneous: bool = False) -> PETSc.Vec:
        """The full vector of the coordinates ``q``.

        Args:
            q: the system's coordinates.
            out: the vector to fill (new if None).
            homogeneous: leave out the prescribed part a0.

        Returns:
            ``out``.
        """

    def expand_rate(self, q: PETSc.Vec, v: PETSc.Vec,
                    out: PETSc.Vec | None = None) -> PETSc.Vec:
        """The full velocity of the state (q, v).

        Args:
            q: the system's coordinates.
            v: their rates.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """


def folder(stem: str) -> str:
    """The checkpoint folder of the output ``stem``.

    Args:
        stem: the run's ``output``.

    Returns:
        ``<stem>.ckpt``'s path.
    """
    return stem + ".ckpt"


@dataclasses.dataclass
class Checkpoint:
    """A checkpoint as read back on this rank.

    Attributes:
        t: time of the checkpoint (s).
        index: the TS step number at ``t``.
        dt: the TS's next step size at ``t``.
        t0: the run's initial time.
        formulation: the run's formulation.
        arrays: this rank's arrays (``x0``, ``x1``...: the TS's solution vectors; ``form_*``:
            the form's state).
        accumulators: the observers' accumulators as ``latest.json`` holds them ({observer:
            {field: value}}, :meth:`~dolfinx_mbs.integrate.observers.Observer.accumulators`).
        meta: the whole ``latest.json``.
        redistributed: the arrays were written on another number of ranks and redistributed
            by name (their local sizes are this run's).
    """

    t: float
    index: int
    dt: float
    t0: float
    formulation: str
    arrays: Dict[str, np.ndarray]
    accumulators: Dict[str, Dict[str, Any]]
    meta: dict
    redistributed: bool = False


def unknown_names(system: NamedSystem) -> tuple:
    """The partition-free names of this rank's reduced unknowns (collective).

    Args:
        system: the run's system.

    Returns:
        (names, None): names an (n_local, 3 + width) int64 array, row i naming reduced unknown
        i of this rank (the body, the dof's component, its node's vertices: see the module
        docstring); or (None, why) when the system's unknowns have no such names. The same
        outcome on every rank.
    """
    why = None
    red = getattr(system, "reducer", None)
    if getattr(system, "has_multipliers", False):
        why = "the unknowns include Lagrange multipliers"
    elif hasattr(system, "basis"):
        why = "the velocity rows' unknowns are not dofs of the bodies"
    elif type(red) is not MaggiReducer:
        why = "the unknowns are not dofs of the bodies (reduced bodies' coordinates)"
    tables = []
    if why is None:
        try:
            tables = [dof_keys(b.V) for b in system.space.bodies]
        except Exception as e:  # the reason is named, on every rank
            why = str(e)
    why = system.comm.allgather(why)
    why = next((w for w in why if w), None)
    if why is not None:
        return None, why
    width = system.comm.allreduce(max(t.shape[1] for t in tables) - 1, op=MPI.MAX)
    space = system.space
    full = np.full((space.n_local, 2 + width), -1, dtype=np.int64)
    for ib, t in enumerate(tables):
        rows = slice(int(space.offsets[ib]), int(space.offsets[ib + 1]))
        full[rows, 0] = ib
        full[rows, 1: 1 + t.shape[1]] = t
    assert red is not None  # (a MaggiReducer, checked above)
    return full[np.asarray(red.independent) - space.rstart], None


def _blocks(system: NamedSystem, vecs: Sequence[PETSc.Vec]) -> tuple:
    """The number of blocks of reduced unknowns of each vector of ``vecs``.

    Returns (counts, None), or (None, why not): the same on every rank.
    """
    n_local = system.create_reduced_vec().getLocalSize() if hasattr(
        system, "create_reduced_vec") else 0
    n_global = int(system.n_reduced)
    counts = []
    for v in vecs:
        nb = v.getSize() // n_global if n_global else 0
        ok = nb >= 1 and v.getSize() == nb * n_global and v.getLocalSize() == nb * n_local
        if not system.comm.allreduce(ok, op=MPI.LAND):
            return None, "the TS vectors are not made of blocks of the reduced unknowns"
        counts.append(int(nb))
    return counts, None


def _atomic_json(path: str, data: object) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def _numbers(value: Any) -> Any:
    """``value``'s numbers as JSON (floats, lists, dicts of them), None where it has none."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return [float(x) for x in value.reshape(-1)]
    if isinstance(value, (list, tuple)):
        out = [_numbers(v) for v in value]
        return out if all(v is not None for v in out) else None
    if isinstance(value, Mapping):
        d = {str(k): _numbers(v) for k, v in value.items()}
        return {k: v for k, v in d.items() if v is not None} or None
    return None


@dataclasses.dataclass(frozen=True)
class ModelDigest:
    """What a restart must find again of the model that wrote a checkpoint
    (:func:`model_digest`; ``latest.json``'s ``model``, by field name).

    Attributes:
        bodies: {body name: {``mesh``: its geometry nodes' count, sums of x and of x x^T;
            ``degree``; ``material``: {name: number}; ``attachments`` (where it has any): a
            list of {``kind``, ``numbers``}}}.
        rigid: {rigid body name: {``mass``, ``inertia``, ``centre``}}.
        unknowns: the number of the system's reduced unknowns.
    """

    bodies: Mapping[str, Mapping[str, Any]]
    rigid: Mapping[str, Mapping[str, Any]]
    unknowns: float


def model_digest(system: NamedSystem) -> ModelDigest:
    """What a restart must find again of the model that wrote a checkpoint, as numbers
    (collective): each body's mesh (its geometry nodes' count and coordinate moments: sums of
    x and of x x^T over the nodes, the same on any partition to round-off), material, element
    degree and attachments (disks', bearings' numbers), the rigid bodies' mass, inertia and
    centre, and the number of the system's unknowns.

    Args:
        system: the run's system.

    Returns:
        The digest, the same on every rank.
    """
    comm = system.comm
    bodies: Dict[str, Any] = {}
    space = getattr(system, "space", None)
    for b in (space.bodies if space is not None else ()):
        g = b.mesh.geometry
        n = g.index_map().size_local
        x = np.asarray(g.x[:n, :3], dtype=float)
        moments = np.concatenate([[float(n)], x.sum(axis=0), (x.T @ x).reshape(-1)])
        moments = comm.allreduce(moments, op=MPI.SUM)
        entry = {"mesh": [float(v) for v in moments], "degree": float(compat.space_degree(b.V)),
                 "material": _numbers(vars(b.material)) or {}}
        atts = [dict(kind=str(getattr(a, "kind", type(a).__name__)),
                     numbers=_numbers(a.digest() if hasattr(a, "digest") else
                                      {k: v for k, v in vars(a).items()
                                       if k in ("mass", "polar", "diametral", "m_e", "phase")})
                     or {})
                for a in getattr(b, "attachments", ())]
        if atts:
            entry["attachments"] = atts
        bodies[b.name] = entry
    rigid = {r.name: dict(mass=float(r.mass), inertia=_numbers(r.inertia),
                          centre=_numbers(r.centre))
             for r in getattr(system, "rigid_bodies", ())}
    return ModelDigest(bodies=bodies, rigid=rigid, unknowns=float(system.n_reduced))


def _close(x: Any, y: Any) -> bool:
    """Two digests' numbers equal to 1e-9 of their size (and of the same shape)."""
    try:
        u, v = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        return bool(x == y)
    if u.shape != v.shape:
        return False
    scale = max(float(np.abs(u).max(initial=0.0)), float(np.abs(v).max(initial=0.0)))
    return bool(np.abs(u - v).max(initial=0.0) <= 1e-9 * scale)


def _table(record: Any) -> Any:
    """A checkpoint's record (a frozen dataclass: :class:`ModelDigest`, an observer's
    accumulators, :class:`CoupledUnknowns`) as ``latest.json`` holds it: a table of its fields,
    in their order."""
    return dataclasses.asdict(record)


def _model_differences(old: Dict[str, Any], new: Dict[str, Any]) -> str | None:
    """The first difference of two digests (:func:`model_digest`), in words, or None."""
    ob, nb = old.get("bodies", {}), new.get("bodies", {})
    if sorted(ob) != sorted(nb):
        return f"its bodies {sorted(ob)}, this model's {sorted(nb)}"
    for name in ob:
        o, n = ob[name], nb[name]
        if o["mesh"][0] != n["mesh"][0]:
            return (f"body {name!r}: a mesh of {int(o['mesh'][0])} nodes, this model's has "
                    f"{int(n['mesh'][0])}")
        if not _close(o["mesh"], n["mesh"]):
            diff = np.abs(np.asarray(o["mesh"]) - np.asarray(n["mesh"]))
            k = int(np.argmax(diff > 1e-9 * max(np.abs(o["mesh"]).max(), 1e-300)))
            what = "sum of the nodes' " + (["", "x", "y", "z"][k] if k < 4 else
                                            "products x_i x_j")
            return (f"body {name!r}: its mesh's node coordinates differ (the {what}: "
                    f"{o['mesh'][k]:.9g} in the checkpoint, {n['mesh'][k]:.9g} now)")
        if o["degree"] != n["degree"]:
            return f"body {name!r}: degree {o['degree']:g}, this model's {n['degree']:g}"
        for key in sorted(set(o["material"]) | set(n["material"])):
            a_, b_ = o["material"].get(key), n["material"].get(key)
            if not _close(a_, b_):
                return f"body {name!r}: material {key} {a_!r} in the checkpoint, {b_!r} now"
        oa, na = o.get("attachments", []), n.get("attachments", [])
        if [x["kind"] for x in oa] != [x["kind"] for x in na]:
            return (f"body {name!r}: attachments {[x['kind'] for x in oa]}, this model's "
                    f"{[x['kind'] for x in na]}")
        for i, (x, y) in enumerate(zip(oa, na)):
            # a key the checkpoint lacks was not recorded when it was written (a bearing's
            # table's speeds): not compared
            for key in sorted(set(x["numbers"])):
                a_, b_ = x["numbers"].get(key), y["numbers"].get(key)
                if not _close(a_, b_):
                    return (f"body {name!r}: its {x['kind']} (attachment {i}) {key} {a_!r} in "
                            f"the checkpoint, {b_!r} now")
    orr, nr = old.get("rigid", {}), new.get("rigid", {})
    if sorted(orr) != sorted(nr):
        return f"its rigid bodies {sorted(orr)}, this model's {sorted(nr)}"
    for name in orr:
        for key in ("mass", "inertia", "centre"):
            if not _close(orr[name][key], nr[name][key]):
                return (f"rigid body {name!r}: {key} {orr[name][key]!r} in the checkpoint, "
                        f"{nr[name][key]!r} now")
    if old.get("unknowns") != new.get("unknowns"):
        return (f"{old.get('unknowns', 0):.0f} unknowns, this model's "
                f"{new.get('unknowns', 0):.0f} (other constraints)")
    return None


def check_model(comm: MPI.Comm, stem: str, ckpt: Checkpoint, system: NamedSystem | None) -> None:
    """Refuse to continue a checkpoint with a model other than the one that wrote it
    (collective): another mesh (coordinates), material, degree, attachments, rigid bodies or
    number of unknowns (:func:`model_digest`), or, on as many ranks, other unknowns (another
    constraint on the same count of dofs: the rank files' partition-free names).

    Args:
        comm: the run's communicator.
        stem: the run's ``output``, for the errors.
        ckpt: the checkpoint read.
        system: the run's system (None: nothing to check).

    Raises:
        ValueError: (every rank) what differs.
    """
    if system is None or ("extra" in ckpt.meta) != hasattr(system, "frames"):
        return   # a coupled run's checkpoint and another's: the stepper's restart names it
    written = ckpt.meta.get("model")
    if written is not None:
        d = _model_differences(written, _table(model_digest(system)))
        checks.raise_everywhere(comm, d and (
            f"restart from {stem!r}: the checkpoint was written by another model ({d}); a "
            "restart continues the same model (the same mesh, material, constraints and "
            "masses)"))
    keys = ckpt.arrays.get("keys")
    if keys is not None and not ckpt.redistributed:
        names, _ = unknown_names(system)
        bad = None
        if names is None or names.shape != keys.shape or not np.array_equal(names, keys):
            bad = (f"restart from {stem!r}: this run's unknowns (the dofs the constraints "
                   "leave free, by body, component and mesh vertices) are not the "
                   "checkpoint's: another mesh, space or constraints (a clamp elsewhere)")
        checks.raise_everywhere(comm, bad)


class Writer:
    """Writes checkpoints of one run into ``<stem>.ckpt`` (collective: every rank calls).

    Args:
        comm: the run's communicator.
        stem: the run's ``output``.
        every: write at every step number that is a multiple of this.
        formulation: the run's formulation (checked at restart).
        t0: the run's initial time.
        system: the run's system: its unknowns' names are written with the state, so that the
            checkpoint restarts on any number of ranks (None: on as many ranks only).
    """

    def __init__(self, comm: MPI.Comm, stem: str, every: int | None, formulation: str,
                 t0: float, system: NamedSystem | None = None) -> None:
        self.comm, self.every = comm, every
        self.dir = folder(stem)
        self.formulation, self.t0 = formulation, t0
        self.last: str | None = None
        self.system = system
        self._names: tuple | None = None
        self._digest: ModelDigest | None = None

    def due(self, index: int) -> bool:
        """Whether the step ``index`` is one to checkpoint at.

        Args:
            index: the step number.

        Returns:
            True when it is.
        """
        return bool(self.every and index % self.every == 0)

    def write(self, index: int, t: float, dt: float, vecs: Sequence[PETSc.Vec],
              form_state: Dict[str, np.ndarray],
              accumulators: Mapping[str, Any],
              extra: CoupledUnknowns | None = None) -> None:
        """Write the state at step ``index``, time ``t`` (collective).

        Args:
            index: the step number.
            t: the time (s).
            dt: the next step's size (s).
            vecs: the TS's solution vectors (a coupled run: its reduced elastic coordinates
                and rates, none without elastic bodies).
            form_state: this rank's arrays of the form.
            accumulators: the observers' accumulators by the observers' names (frozen
                dataclasses: :meth:`~dolfinx_mbs.integrate.observers.Observer.accumulators`),
                written as tables of their fields.
            extra: the run's global state, the same on every rank, written by rank 0 into
                ``latest.json`` (a coupled run's frame unknowns), or None.
        """
        comm, rank = self.comm, self.comm.rank
        name = f"step_{index:09d}"
        sub = os.path.join(self.dir, name)
        with checks.collective(comm, f"checkpoint folder {sub!r}"):
            if rank == 0:
                os.makedirs(sub, exist_ok=True)
        arrays = {f"x{i}": v.getArray(readonly=True) for i, v in enumerate(vecs)}
        arrays.update({f"form_{k}": np.asarray(a) for k, a in form_state.items()})
        sizes = [int(v.getSize()) for v in vecs]
        # without distributed vectors (rigid bodies only) there is nothing to redistribute
        names, blocks, why = None, None, "written without its system" if vecs else None
        if self.system is not None and vecs:
            if self._names is None:  # the same at every checkpoint of the run
                self._names = unknown_names(self.system)
            names, why = self._names
            if names is not None:
                blocks, why = _blocks(self.system, vecs)
            if form_state and why is None:
                why = "the form's state is this partition's"
        if why is None and names is not None:
            arrays["keys"] = names
        with checks.collective(comm, f"checkpoint file in {sub!r}"):
            path = os.path.join(sub, f"rank{rank}.npz")
            with open(path + ".tmp", "wb") as f:
                np.savez(f, **arrays)
            os.replace(path + ".tmp", path)
        meta = dict(version=VERSION, t=float(t), index=int(index), dt=float(dt),
                    t0=float(self.t0), formulation=self.formulation, ranks=comm.size,
                    sizes=sizes, local=comm.gather([int(v.getLocalSize()) for v in vecs]),
                    accumulators={k: _table(a) for k, a in accumulators.items()},
                    folder=name, blocks=blocks,
                    any_ranks=why is None, why_not=why)
        if self.system is not None:
            if self._digest is None:   # the model does not change during the run
                self._digest = model_digest(self.system)
            meta["model"] = _table(self._digest)
        if extra is not None:
            meta["extra"] = _table(extra)
        with checks.collective(comm, f"checkpoint index {self.dir!r}"):
            if rank == 0:
                _atomic_json(os.path.join(self.dir, "latest.json"), meta)
                for old in os.listdir(self.dir):  # the former checkpoints
                    if old.startswith("step_") and old != name:
                        shutil.rmtree(os.path.join(self.dir, old), ignore_errors=True)
        self.last = sub  # the folder, as the message of a run stopped by a signal names it


def exists(comm: MPI.Comm, stem: str) -> bool:
    """Whether ``stem`` has a checkpoint.

    Args:
        comm: the run's communicator (collective).
        stem: the run's ``output``.

    Returns:
        True (on every rank) when it has.
    """
    found = os.path.isfile(os.path.join(folder(stem), "latest.json")) if comm.rank == 0 else None
    return bool(comm.bcast(found, root=0))


def _read_meta(comm: MPI.Comm, stem: str) -> dict:
    """``latest.json`` of ``stem`` on every rank (FileNotFoundError on every rank if none)."""
    index = os.path.join(folder(stem), "latest.json")
    meta = None
    with checks.collective(comm, f"restart from {stem!r}"):
        if comm.rank == 0:
            if not os.path.isfile(index):
                raise FileNotFoundError(f"no checkpoint ({index} does not exist; run with "
                                        "checkpoint_every= first)")
            try:
                with open(index) as f:
                    meta = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{index} is damaged (not JSON: {e})") from None
            bad = _damaged(meta)
            if bad:
                raise ValueError(f"{index} is damaged ({bad}); write a new checkpoint, or "
                                 "restore the file")
    return cast(dict, comm.bcast(meta, root=0))


#: what ``latest.json`` must hold, and of what kind
_META = dict(t="number", index="count", dt="number", t0="number", formulation="text",
             ranks="count", sizes="counts", local="lists", accumulators="table", folder="text")


def _damaged(meta: Any) -> str | None:
    """What is wrong with a ``latest.json``'s data, or None."""
    import math

    if not isinstance(meta, dict):
        return "its content is not a table"
    for key, kind in _META.items():
        if key not in meta:
            return f"it has no {key!r}"
        v = meta[key]
        ok = {"number": isinstance(v, (int, float)) and not isinstance(v, bool)
                        and math.isfinite(v),
              "count": isinstance(v, int) and not isinstance(v, bool) and v >= 0,
              "counts": isinstance(v, list) and all(isinstance(x, int) for x in v),
              "lists": isinstance(v, list) and all(isinstance(x, list) for x in v),
              "table": isinstance(v, dict),
              "text": isinstance(v, str)}[kind]
        if not ok:
            return f"{key!r} is {v!r}, not a {'finite number' if kind == 'number' else kind}"
    if meta["ranks"] < 1 or meta["dt"] <= 0.0:
        return f"ranks {meta['ranks']!r}, dt {meta['dt']!r}"
    return None


def load(comm: MPI.Comm, stem: str, formulation: str, system: NamedSystem | None = None,
         files: bool = True) -> Checkpoint:
    """This rank's part of the last checkpoint of ``stem``.

    Args:
        comm: the run's communicator (collective).
        stem: the run's ``output``.
        formulation: the run's formulation (must be the checkpoint's).
        system: the run's system; with it, a checkpoint written on another number of ranks
            is redistributed by the unknowns' names (see the module docstring).
        files: the run continues the checkpoint's field files (a restart): on another number
            of ranks that needs VTX files (DOLFINx 0.7 and later; an XDMF file of DOLFINx 0.5
            holds the writing partition's node order), refused otherwise.

    Returns:
        The checkpoint, its arrays in this run's layout.

    Raises:
        FileNotFoundError: (every rank) no checkpoint.
        ValueError: (every rank) another formulation, or another layout (mesh, partition or
            constraints), or written by another number of ranks when it cannot be
            redistributed (naming why).
    """
    meta = _read_meta(comm, stem)
    if meta["formulation"] != formulation:
        raise ValueError(f"restart from {stem!r}: the checkpoint is of formulation "
                         f"{meta['formulation']!r}, this run is {formulation!r}")
    if meta["ranks"] != comm.size and not meta["sizes"]:
        # no distributed vectors (a coupled run of rigid bodies): the state is global
        return Checkpoint(t=meta["t"], index=meta["index"], dt=meta["dt"], t0=meta["t0"],
                          formulation=meta["formulation"], arrays={},
                          accumulators=meta["accumulators"], meta=meta, redistributed=True)
    if meta["ranks"] != comm.size:
        why = meta.get("why_not", "written before checkpoints named their unknowns") \
            if not meta.get("any_ranks") else None
        if why is None and system is None:
            why = "no system to name this run's unknowns"
        if why is None and files and not compat.has_vtx:
            why = ("the field files are XDMF, in the order of the nodes of the partition "
                   "that wrote them (DOLFINx 0.5; read_state reads the state)")
        if why is not None:
            raise ValueError(f"restart from {stem!r}: the checkpoint was written by "
                             f"{meta['ranks']} rank(s), this run has {comm.size}, and it "
                             f"cannot be redistributed ({why}): restart on {meta['ranks']} "
                             "rank(s)")
        assert system is not None  # (refused above without one)
        return _redistributed(comm, stem, meta, system)
    arrays: Dict[str, np.ndarray] = {}
    with checks.collective(comm, f"restart from {stem!r}"):
        path = os.path.join(folder(stem), meta["folder"], f"rank{comm.rank}.npz")
        with np.load(path) as data:
            arrays = {k: data[k].copy() for k in data.files}
    return Checkpoint(t=meta["t"], index=meta["index"], dt=meta["dt"], t0=meta["t0"],
                      formulation=meta["formulation"], arrays=arrays,
                      accumulators=meta["accumulators"], meta=meta)


def _redistributed(comm: MPI.Comm, stem: str, meta: dict, system: NamedSystem) -> Checkpoint:
    """The checkpoint ``meta`` of ``stem`` written on another number of ranks, redistributed.

    Each rank's arrays are taken by name from every rank's file (collective).
    """
    names, why = unknown_names(system)
    if why is not None:
        raise ValueError(f"restart from {stem!r} on {comm.size} rank(s) (written by "
                         f"{meta['ranks']}): this run's unknowns have no partition-free names "
                         f"({why})")
    table, values = [], {f"x{i}": [] for i in range(len(meta["sizes"]))}
    with checks.collective(comm, f"restart from {stem!r}"):
        for r in range(meta["ranks"]):
            path = os.path.join(folder(stem), meta["folder"], f"rank{r}.npz")
            with np.load(path) as data:
                k = data["keys"]
                table.append(k)
                for i, nb in enumerate(meta["blocks"]):
                    values[f"x{i}"].append(data[f"x{i}"].reshape(nb, len(k)))
    stacked = np.concatenate(table) if table else np.zeros((0, names.shape[1]), np.int64)
    where = locate(stacked, names)
    bad = None
    if len(stacked) != system.n_reduced:
        bad = (f"the checkpoint holds {len(stacked)} reduced unknowns, this model has "
               f"{system.n_reduced} (another mesh, space or constraints)")
    elif np.any(where < 0):
        k = names[int(np.argmax(where < 0))]
        bad = (f"this run's unknown {k.tolist()} (body, component, input vertices) is not in "
               "the checkpoint (another mesh, space or constraints, or another mesh "
               "numbering)")
    checks.raise_everywhere(comm, bad and f"restart from {stem!r}: {bad}")
    arrays = {k: np.concatenate(v, axis=1)[:, where].reshape(-1) for k, v in values.items()}
    return Checkpoint(t=meta["t"], index=meta["index"], dt=meta["dt"], t0=meta["t0"],
                      formulation=meta["formulation"], arrays=arrays,
                      accumulators=meta["accumulators"], meta=meta, redistributed=True)


def restore_vecs(comm: MPI.Comm, stem: str, ckpt: Checkpoint,
                 vecs: Sequence[PETSc.Vec]) -> None:
    """Put the checkpoint's ``x<i>`` arrays into ``vecs``, after checking the global and local
    sizes.

    Args:
        comm: the run's communicator (collective).
        stem: the run's ``output``, for the errors.
        ckpt: the checkpoint read.
        vecs: the TS's solution vectors.

    Raises:
        ValueError: the sizes differ (on every rank).
    """
    meta, arrays = ckpt.meta, ckpt.arrays
    sizes = [int(v.getSize()) for v in vecs]
    local = [int(v.getLocalSize()) for v in vecs]
    bad = None
    if sizes != meta["sizes"]:
        bad = (f"the checkpoint holds {meta['sizes']} unknowns, this model has {sizes} "
               "(another mesh, space or constraints)")
    elif ckpt.redistributed:
        mine = [ckpt.arrays[f"x{i}"].size for i in range(len(vecs))]
        if mine != local:
            bad = (f"rank {comm.rank} owns {local} unknowns, the redistributed checkpoint "
                   f"gives it {mine} (another layout of the TS vectors)")
    elif local != meta["local"][comm.rank]:
        bad = (f"rank {comm.rank} owns {local} unknowns, {meta['local'][comm.rank]} when the "
               "checkpoint was written (another partition of the mesh)")
    if bad is None:
        held = [arrays[f"x{i}"].size if f"x{i}" in arrays else None for i in range(len(vecs))]
        if held != local:
            bad = (f"the file of rank {comm.rank} holds {held} values for its {local} "
                   "unknowns: it is damaged")
    checks.raise_everywhere(comm, bad and f"restart from {stem!r}: {bad}")
    for i, v in enumerate(vecs):
        v.array[:] = arrays[f"x{i}"]


@dataclasses.dataclass
class State:
    """A checkpoint's state on this run's ranks (:func:`read_state`).

    Attributes:
        t: the checkpoint's time (s).
        index: its step number.
        formulation: the formulation of the run that wrote it.
        q: the reduced displacement (this partition's PETSc vector).
        v: the reduced velocity, or None (Hamilton's form holds the momentum instead).
        displacement: {body name: Function}: each body's displacement Delta = A q + a0(t).
        velocity: {body name: Function}: each body's velocity (A q' + A' q + a0'(t)), or {}
            when ``v`` is None.
    """

    t: float
    index: int
    formulation: str
    q: object
    v: object
    displacement: Dict[str, object]
    velocity: Dict[str, object]


def read_state(system: CheckpointedSystem, stem: str) -> State:
    """The last checkpoint of ``stem`` on any number of ranks, as the bodies' fields.

    For post-processing (a checkpoint written on many ranks read back on one, say) or to look
    at a run's state at its checkpoint: the reduced state is read as a restart reads it
    (redistributed by name on another number of ranks, see the module docstring), the
    constraints evaluated at the checkpoint's time and each body's displacement and velocity
    formed. Collective.

    Args:
        system: the system of the run's model (:meth:`dolfinx_mbs.Model.system`), on this
            run's communicator: the same mesh built the same way and the same constraints.
        stem: the run's ``output``.

    Returns:
        The :class:`State` (new Functions on the bodies' spaces; the bodies' own ``u`` are not
        touched).

    Raises:
        FileNotFoundError: (every rank) no checkpoint.
        ValueError: (every rank) the checkpoint does not fit ``system``, or ``system`` has
            Lagrange multipliers or velocity rows.
    """
    from dolfinx import fem

    comm = system.comm
    if getattr(system, "has_multipliers", False) or hasattr(system, "basis"):
        raise ValueError("read_state: the system's unknowns are not the bodies' reduced "
                         "displacement and velocity (Lagrange multipliers or velocity rows): "
                         "pass the model's second-order or first-order system")
    meta = _read_meta(comm, stem)
    ckpt = load(comm, stem, meta["formulation"], system, files=False)
    q = system.create_reduced_vec()
    n, n_red = q.getLocalSize(), int(system.n_reduced)
    counts = [size // n_red if n_red else 0 for size in meta["sizes"]]
    bad = None
    if any(c < 1 or c * n_red != size for c, size in zip(counts, meta["sizes"])):
        bad = (f"its vectors ({meta['sizes']} unknowns) are not made of this system's "
               f"{n_red} reduced unknowns")
    checks.raise_everywhere(comm, bad and f"read_state({stem!r}): {bad}")
    blocks = [b for i, c in enumerate(counts) for b in ckpt.arrays[f"x{i}"].reshape(c, n)]
    q.array[:] = blocks[0]
    v = None
    extra = meta.get("extra")
    coupled = isinstance(extra, dict) and extra.get("kind") == "coupled"
    # Hamilton's form holds (q, p) on prescribed frames, (q, v) in a coupled run
    if (meta["formulation"] != "hamiltonian" or coupled) and len(blocks) > 1:
        v = q.duplicate()
        v.array[:] = blocks[1]
    system.update(ckpt.t)
    space, bodies = system.space, list(system.space.bodies)
    full = space.create_vec()
    disp = {b.name: fem.Function(b.V) for b in bodies}
    system.expand(q, out=full)
    space.scatter(full, list(disp.values()))
    vel = {}
    if v is not None:
        vel = {b.name: fem.Function(b.V) for b in bodies}
        system.expand_rate(q, v, out=full)
        space.scatter(full, list(vel.values()))
    full.destroy()
    return State(t=ckpt.t, index=ckpt.index, formulation=meta["formulation"], q=q, v=v,
                 displacement=disp, velocity=vel)


def truncate_csv(comm: MPI.Comm, path: str, t: float, columns: Sequence[str]) -> None:
    """Keep the header and the complete rows of the CSV ``path`` whose time is at most ``t``
    (rank 0; collective): the rows a killed run wrote after its last checkpoint go, and so
    does a row cut short.

    Args:
        comm: the run's communicator.
        path: the CSV file.
        t: the checkpoint's time (s).
        columns: the header the file must have.

    Raises:
        ValueError: another header (on every rank).
    """
    with checks.collective(comm, f"restart: output file {path!r}"):
        if comm.rank == 0:
            with open(path, newline="") as f:
                lines = f.read().splitlines(keepends=True)
            head = next(csv.reader(lines[:1]), [])
            if head != list(columns):
                raise ValueError(f"its columns {head} are not this run's {list(columns)} "
                                 "(other probes, reactions or energy)")
            keep = lines[:1]
            for line in lines[1:]:
                cells = next(csv.reader([line]), [])
                try:  # a row cut short by a kill has no line end or too few cells
                    ok = line.endswith("\n") and len(cells) == len(head) and \
                        float(cells[0]) <= t
                except ValueError:
                    ok = False
                if not ok:
                    break
                keep.append(line)
            tmp = path + ".tmp"
            with open(tmp, "w", newline="") as f:
                f.write("".join(keep))
            os.replace(tmp, path)


class Interrupted(Exception):
    """A run ended by a signal, at a step boundary, files closed (raised on every rank).

    Args:
        signum: the signal.
        t: the time of the step boundary (s).
        checkpoint: the checkpoint written, or None.
    """

    def __init__(self, signum: int, t: float, checkpoint: str | None) -> None:
        self.signum, self.t, self.checkpoint = signum, t, checkpoint
        where = (f"; checkpoint written to {checkpoint} (continue with restart=True)"
                 if checkpoint else "; no checkpoint written (checkpoint_every= writes one)")
        super().__init__(f"run stopped by {signal.Signals(signum).name} at t={t:g}{where}")
        #: the rank in the run's communicator (set by :class:`Signals`): rank 0 says why
        self.rank: int | None = None

    def exit(self) -> BaseException:
        """What the run raises: KeyboardInterrupt for SIGINT, SystemExit(128 + signal)
        otherwise, which Python ends without a word: the run's rank 0 says it on stderr."""
        if self.signum == signal.SIGINT:
            return KeyboardInterrupt(str(self))
        if not self.rank:
            print(f"dolfinx_mbs: {self}", file=sys.stderr, flush=True)
        return SystemExit(128 + self.signum)


class Signals:
    """SIGTERM and SIGINT noted (not acted on) while a run is in progress; the previous
    handlers back at exit. Outside the main thread (where Python takes no handler) nothing
    is installed and :meth:`requested` is always 0.

    Args:
        comm: the run's communicator (:meth:`requested` is collective).
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self, comm: MPI.Comm) -> None:
        self.comm = comm
        self.flag = 0
        self._old: Dict[int, Any] = {}  # the handlers replaced

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.flag = max(self.flag, int(signum))

    def __enter__(self) -> Signals:
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self._old[s] = signal.signal(s, self._note)
        return self

    def __exit__(self, typ: type | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)
        self._old = {}
        # the Interrupted of a monitor comes through PETSc as the cause of its error
        for e in (value, getattr(value, "__cause__", None)):
            if isinstance(e, Interrupted):
                e.rank = self.comm.rank

    def requested(self) -> int:
        """The signal any rank received since the run began (the largest number), or 0; the
        same on every rank."""
        if self.comm.size == 1:
            return self.flag
        return int(self.comm.allreduce(self.flag, op=MPI.MAX))


#: TS types whose state is their solution (one-step methods without a history the
#: checkpoint lacks); TSALPHA2 at spectral radius 1, see the module's docstring
ONE_STEP = ("alpha2", "theta", "cn", "beuler")


#: TS types a coupled run (:func:`dolfinx_mbs.integrate.coupled.integrate_coupled`) restarts
#: besides :data:`ONE_STEP`: TSALPHA at spectral radius 1 (the implicit midpoint rule: its kept
#: rate enters the step by round-off only) and TSBDF, whose history PETSc drops at a restarted
#: step (half a step of backward Euler, then BDF2 on the uneven steps), as the run that writes
#: the checkpoint does there too
RESTARTED = ("alpha", "bdf")


def check_type(ts: PETSc.TS, stem: str, types: Sequence[str] = ONE_STEP,
               doing: str = "restart from") -> None:
    """Refuse a TS type whose history a checkpoint does not hold (the same on every rank).

    Args:
        ts: the run's TS.
        stem: the run's ``output``, for the error.
        types: the TS types that restart from the state alone.
        doing: what the run does with the checkpoints of ``stem``, for the error.

    Raises:
        ValueError: ``ts``'s type is not in ``types``.
    """
    if ts.getType() not in types:
        raise ValueError(f"{doing} {stem!r}: TS type {ts.getType()!r} keeps a history "
                         f"the checkpoint does not hold; restart takes {tuple(types)}")


def resume_ts(ts: PETSc.TS, vecs: Sequence[PETSc.Vec], ckpt: Checkpoint, stem: str,
              t_end: float, types: Sequence[str] = ONE_STEP) -> None:
    """Put the checkpoint ``ckpt`` of ``stem`` into ``ts`` (collective): its solution
    ``vecs``, time, step number and next step size.

    Args:
        ts: the run's TS.
        vecs: its solution vectors.
        ckpt: the checkpoint read.
        stem: the run's ``output``, for the errors.
        t_end: the run's final time (s).
        types: the TS types that restart from the state alone.

    Raises:
        ValueError: a multistep TS type, or a ``t_end`` not after the checkpoint (every
            rank).
    """
    comm = ts.getComm().tompi4py()
    check_type(ts, stem, types)
    check_end(stem, t_end, ckpt)
    restore_vecs(comm, stem, ckpt, vecs)
    ts.setTime(ckpt.t)
    ts.setTimeStep(ckpt.dt)
    ts.setStepNumber(ckpt.index)


def check_end(stem: str, t_end: float, ckpt: Checkpoint) -> None:
    """Refuse a restart's ``t_end`` not after the checkpoint's time (the same on every rank).

    Args:
        stem: the run's ``output``, for the error.
        t_end: the run's final time (s).
        ckpt: the checkpoint read.

    Raises:
        ValueError: ``t_end`` is not after the checkpoint.
    """
    if t_end <= ckpt.t:
        raise ValueError(f"restart from {stem!r}: t_end ({t_end:g}) must exceed the "
                         f"checkpoint's time ({ckpt.t:g})")


@dataclasses.dataclass(frozen=True)
class CoupledUnknowns:
    """A coupled run's frame unknowns as a checkpoint holds them (:func:`coupled_extra`;
    ``latest.json``'s ``extra``, by field name).

    Attributes:
        kind: ``"coupled"`` (what wrote it).
        frames: the computed frames' names.
        m: the number of the frame unknowns.
        n_reduced: the number of the elastic reduced unknowns.
        f: the frame unknowns (the frames' coordinates and speeds, then the joints'
            multipliers).
    """

    kind: str
    frames: List[str]
    m: int
    n_reduced: int
    f: List[float]


def coupled_extra(system: CoupledSystem, f: np.ndarray) -> CoupledUnknowns:
    """What a checkpoint of a coupled run holds in ``latest.json`` beside the elastic state
    (``extra``): the frame unknowns ``f`` (the frames' coordinates and speeds, then the
    joints' multipliers: the coupled system's ``m`` numbers) and
    what a restart checks they fit. The TS and the dense coupled steppers write the same.

    Args:
        system: the coupled system.
        f: the frame unknowns.

    Returns:
        The record (JSON numbers: a float's repr reads back to the same bits).
    """
    return CoupledUnknowns(kind="coupled", frames=[fr.name for fr in system.frames],
                           m=int(system.m), n_reduced=int(system.n_reduced),
                           f=[float(x) for x in f])


def frame_unknowns(system: CoupledSystem, ckpt: Checkpoint, stem: str) -> np.ndarray:
    """The frame unknowns of the checkpoint ``ckpt`` (:func:`coupled_extra`), after checking
    it is one of this model: written by a coupled run with the same computed frames and
    numbers of frame and elastic unknowns (collective: the same answer on every rank).

    Args:
        system: the coupled system.
        ckpt: the checkpoint read.
        stem: the run's ``output``, for the errors.

    Returns:
        The frame unknowns (``system.m``).

    Raises:
        ValueError: (every rank) not a checkpoint of this model.
    """
    extra = ckpt.meta.get("extra")
    mine = coupled_extra(system, np.zeros(system.m))
    bad = None
    if not isinstance(extra, dict) or extra.get("kind") != "coupled":
        bad = "it was not written by a run with computed frames"
    else:
        for key, what in (("frames", "computed frames"), ("m", "frame unknowns"),
                          ("n_reduced", "elastic reduced unknowns")):
            want = getattr(mine, key)
            if extra.get(key) != want:
                bad = (f"it holds {extra.get(key)} {what}, this model has {want} "
                       "(another model)")
                break
    checks.raise_everywhere(system.comm, bad and f"restart from {stem!r}: {bad}")
    assert extra is not None  # (checked above)
    return np.array(extra["f"], dtype=float)


def arguments(output: str | None, given: Checkpoints, formulation: str,
              initial: Sequence[Any], options: Mapping[str, object] | None,
              prefix: str) -> Checkpoints:
    """The run's checkpoints checked against the rest of the run.

    Args:
        output: the run's file stem, or None.
        given: the run's :class:`~dolfinx_mbs.integrate.config.Checkpoints` (its own values
            checked when it was made).
        formulation: the run's formulation.
        initial: the user's (u0, v0, p0).
        options: the run's PETSc options, or None.
        prefix: the options prefix.

    Returns:
        ``given``.

    Raises:
        ValueError: a checkpoint without ``output``, an initial state given with
            ``restart``, or generalized-alpha options that do not restart exactly.
    """
    if given.every is not None and output is None:
        raise ValueError("checkpoint_every needs output= (the checkpoint goes to "
                         "<output>.ckpt)")
    if given.restart:
        if output is None:
            raise ValueError("restart=True needs output= (the run to continue)")
        named = [n for n, x in zip(("u0", "v0", "p0"), initial) if x is not None]
        if named:
            raise ValueError(f"{', '.join(named)}: no initial state with restart=True (the "
                             "state comes from the checkpoint)")
        # the run's options, or else the database's (where -<prefix>ts_alpha_radius may be)
        given_alpha = given_options(prefix, options, "ts_alpha_")
        alpha = {k: v for k, v in given_alpha.items() if not (k == "ts_alpha_radius" and
                                                              float(v) == 1.0)}
        if formulation == "second-order" and alpha:
            raise ValueError(f"restart=True: generalized-alpha with {alpha} keeps an "
                             "acceleration PETSc does not give out; only spectral radius 1 "
                             "(the default) restarts exactly")
    return given
