"""Checkpoint and restart of a time integration, and the signals that end a run cleanly.

A run with ``output="out/run", checkpoint_every=N`` (:func:`dolfinx_mbs.integrate.integrate`)
writes, every N steps, what it needs to continue into ``out/run.ckpt/``:

* ``step_<index>/rank<r>.npz``, one file per rank: the TS's solution as this rank owns it
  (second-order: the reduced displacement and velocity; first-order: (q, v); Hamilton: (q, p);
  velocity rows: (q, w)), the form's own state (Hamilton: the last recovered velocity), the
  observers' accumulators (the energy work integral);
* ``latest.json`` (rank 0): the time, the step number, the TS's next step size, the ranks and
  the layout; written to a temporary name and renamed (``os.replace``) once every rank's file
  is in place, so it always names a complete checkpoint. The older step folder is removed after.

``restart=True`` reads ``latest.json``, puts the state back into the TS (time, step number,
step size), keeps the CSV rows and field steps up to the checkpoint's time and appends after
them. Generalized-alpha (TSALPHA2) keeps an acceleration of its own that PETSc does not give
out; with its default spectral radius 1 the next state does not depend on it (the method sees
only the mean of the two accelerations of a step), so the displacement and velocity are the
state, and the restart is exact; a run with ``spectral_radius < 1`` is refused at restart.

The layout is the partition's: a checkpoint is read back on as many ranks as wrote it (and
the same mesh: each rank's sizes are checked); another number of ranks is refused, naming
both.

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
from typing import Dict, Optional

import numpy as np
from mpi4py import MPI

from dolfinx_mbs import checks
from dolfinx_mbs.petsc_options import given_options

__all__ = ["Checkpoint", "Writer", "load", "exists", "restore_vecs", "resume_ts", "Signals",
           "Interrupted", "truncate_csv", "folder", "arguments"]

#: format version of ``latest.json``
VERSION = 1


def folder(stem: str) -> str:
    """The checkpoint folder of the output ``stem``."""
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
        accumulators: the observers' accumulators ({observer: {name: value}}).
        meta: the whole ``latest.json``.
    """

    t: float
    index: int
    dt: float
    t0: float
    formulation: str
    arrays: Dict[str, np.ndarray]
    accumulators: Dict[str, Dict[str, Optional[float]]]
    meta: dict


def _atomic_json(path: str, data) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


class Writer:
    """Writes checkpoints of one run into ``<stem>.ckpt`` (collective: every rank calls).

    Args:
        comm: the run's communicator.
        stem: the run's ``output``.
        every: write at every step number that is a multiple of this.
        formulation: the run's formulation (checked at restart).
        t0: the run's initial time.
    """

    def __init__(self, comm, stem: str, every: Optional[int], formulation: str, t0: float):
        self.comm, self.every = comm, every
        self.dir = folder(stem)
        self.formulation, self.t0 = formulation, t0
        self.last: Optional[str] = None

    def due(self, index: int) -> bool:
        """True when the step ``index`` is one to checkpoint at."""
        return bool(self.every) and index % self.every == 0

    def write(self, index: int, t: float, dt: float, vecs, form_state: Dict[str, np.ndarray],
              accumulators: Dict[str, Dict[str, Optional[float]]]) -> None:
        """Write the state at step ``index``, time ``t``: ``vecs`` the TS's solution vectors,
        ``form_state`` this rank's arrays of the form, ``accumulators`` the observers'."""
        comm, rank = self.comm, self.comm.rank
        name = f"step_{index:09d}"
        sub = os.path.join(self.dir, name)
        with checks.collective(comm, f"checkpoint folder {sub!r}"):
            if rank == 0:
                os.makedirs(sub, exist_ok=True)
        arrays = {f"x{i}": v.getArray(readonly=True) for i, v in enumerate(vecs)}
        arrays.update({f"form_{k}": np.asarray(a) for k, a in form_state.items()})
        sizes = [int(v.getSize()) for v in vecs]
        with checks.collective(comm, f"checkpoint file in {sub!r}"):
            path = os.path.join(sub, f"rank{rank}.npz")
            with open(path + ".tmp", "wb") as f:
                np.savez(f, **arrays)
            os.replace(path + ".tmp", path)
        meta = dict(version=VERSION, t=float(t), index=int(index), dt=float(dt),
                    t0=float(self.t0), formulation=self.formulation, ranks=comm.size,
                    sizes=sizes, local=comm.gather([int(v.getLocalSize()) for v in vecs]),
                    accumulators=accumulators, folder=name)
        with checks.collective(comm, f"checkpoint index {self.dir!r}"):
            if rank == 0:
                _atomic_json(os.path.join(self.dir, "latest.json"), meta)
                for old in os.listdir(self.dir):  # the former checkpoints
                    if old.startswith("step_") and old != name:
                        shutil.rmtree(os.path.join(self.dir, old), ignore_errors=True)
        self.last = sub  # the folder, as the message of a run stopped by a signal names it


def exists(comm, stem: str) -> bool:
    """True (on every rank) when ``stem`` has a checkpoint."""
    found = os.path.isfile(os.path.join(folder(stem), "latest.json")) if comm.rank == 0 else None
    return bool(comm.bcast(found, root=0))


def load(comm, stem: str, formulation: str) -> Checkpoint:
    """This rank's part of the last checkpoint of ``stem``.

    Raises (on every rank):
        FileNotFoundError: no checkpoint.
        ValueError: written by another number of ranks, another formulation or another
            layout (mesh, partition or constraints).
    """
    index = os.path.join(folder(stem), "latest.json")
    meta = None
    with checks.collective(comm, f"restart from {stem!r}"):
        if comm.rank == 0:
            if not os.path.isfile(index):
                raise FileNotFoundError(f"no checkpoint ({index} does not exist; run with "
                                        "checkpoint_every= first)")
            with open(index) as f:
                meta = json.load(f)
    meta = comm.bcast(meta, root=0)
    if meta["ranks"] != comm.size:
        raise ValueError(f"restart from {stem!r}: the checkpoint was written by "
                         f"{meta['ranks']} rank(s), this run has {comm.size}; its layout is "
                         f"the partition's: restart on {meta['ranks']} rank(s)")
    if meta["formulation"] != formulation:
        raise ValueError(f"restart from {stem!r}: the checkpoint is of formulation "
                         f"{meta['formulation']!r}, this run is {formulation!r}")
    arrays: Dict[str, np.ndarray] = {}
    with checks.collective(comm, f"restart from {stem!r}"):
        path = os.path.join(folder(stem), meta["folder"], f"rank{comm.rank}.npz")
        with np.load(path) as data:
            arrays = {k: data[k].copy() for k in data.files}
    return Checkpoint(t=meta["t"], index=meta["index"], dt=meta["dt"], t0=meta["t0"],
                      formulation=meta["formulation"], arrays=arrays,
                      accumulators=meta["accumulators"], meta=meta)


def restore_vecs(comm, stem: str, ckpt: Checkpoint, vecs) -> None:
    """Put the checkpoint's ``x<i>`` arrays into ``vecs`` (the TS's solution vectors), after
    checking the global and local sizes (a ValueError on every rank when they differ)."""
    meta, arrays = ckpt.meta, ckpt.arrays
    sizes = [int(v.getSize()) for v in vecs]
    local = [int(v.getLocalSize()) for v in vecs]
    bad = None
    if sizes != meta["sizes"]:
        bad = (f"the checkpoint holds {meta['sizes']} unknowns, this model has {sizes} "
               "(another mesh, space or constraints)")
    elif local != meta["local"][comm.rank]:
        bad = (f"rank {comm.rank} owns {local} unknowns, {meta['local'][comm.rank]} when the "
               "checkpoint was written (another partition of the mesh)")
    checks.raise_everywhere(comm, bad and f"restart from {stem!r}: {bad}")
    for i, v in enumerate(vecs):
        v.getArray()[:] = arrays[f"x{i}"]


def truncate_csv(comm, path: str, t: float, columns) -> None:
    """Keep the header and the complete rows of the CSV ``path`` whose time is at most ``t``
    (rank 0; collective): the rows a killed run wrote after its last checkpoint go, and so
    does a row cut short. The header must be ``columns``."""
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
    """A run ended by a signal, at a step boundary, files closed (raised on every rank)."""

    def __init__(self, signum: int, t: float, checkpoint: Optional[str]):
        self.signum, self.t, self.checkpoint = signum, t, checkpoint
        where = (f"; checkpoint written to {checkpoint} (continue with restart=True)"
                 if checkpoint else "; no checkpoint written (checkpoint_every= writes one)")
        super().__init__(f"run stopped by {signal.Signals(signum).name} at t={t:g}{where}")
        #: the rank in the run's communicator (set by :class:`Signals`): rank 0 says why
        self.rank: Optional[int] = None

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

    def __init__(self, comm):
        self.comm = comm
        self.flag = 0
        self._old: Dict[int, object] = {}

    def _note(self, signum, frame) -> None:
        self.flag = max(self.flag, int(signum))

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self._old[s] = signal.signal(s, self._note)
        return self

    def __exit__(self, typ, value, tb):
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


def resume_ts(ts, vecs, ckpt: Checkpoint, stem: str, t_end: float) -> None:
    """Put the checkpoint ``ckpt`` of ``stem`` into ``ts`` (collective): its solution
    ``vecs``, time, step number and next step size. Raises ValueError (every rank) for a
    multistep TS type or a ``t_end`` not after the checkpoint."""
    comm = ts.getComm().tompi4py()
    if ts.getType() not in ONE_STEP:
        raise ValueError(f"restart from {stem!r}: TS type {ts.getType()!r} keeps a history "
                         f"the checkpoint does not hold; restart takes {ONE_STEP}")
    if t_end <= ckpt.t:
        raise ValueError(f"restart from {stem!r}: t_end ({t_end:g}) must exceed the "
                         f"checkpoint's time ({ckpt.t:g})")
    restore_vecs(comm, stem, ckpt, vecs)
    ts.setTime(ckpt.t)
    ts.setTimeStep(ckpt.dt)
    ts.setStepNumber(ckpt.index)


def arguments(output, every, restart, formulation, initial, options, prefix):
    """The checked ``checkpoint_every`` and ``restart`` of a run."""
    if every is not None:
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"checkpoint_every must be a positive integer or None, got "
                             f"{every!r}")
        if output is None:
            raise ValueError("checkpoint_every needs output= (the checkpoint goes to "
                             "<output>.ckpt)")
    if restart not in (True, False):
        raise ValueError(f"restart must be True or False, got {restart!r}")
    if restart:
        if output is None:
            raise ValueError("restart=True needs output= (the run to continue)")
        given = [n for n, x in zip(("u0", "v0", "p0"), initial) if x is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: no initial state with restart=True (the "
                             "state comes from the checkpoint)")
        # the run's options, or else the database's (where -<prefix>ts_alpha_radius may be)
        given = given_options(prefix, options, "ts_alpha_")
        alpha = {k: v for k, v in given.items() if not (k == "ts_alpha_radius" and
                                                        float(v) == 1.0)}
        if formulation == "second-order" and alpha:
            raise ValueError(f"restart=True: generalized-alpha with {alpha} keeps an "
                             "acceleration PETSc does not give out; only spectral radius 1 "
                             "(the default) restarts exactly")
    return dict(every=None if every is None else int(every), restart=bool(restart))
