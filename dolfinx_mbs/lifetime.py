"""The PETSc objects of models that are gone, destroyed on every rank together.

petsc4py does not destroy a collected object of a parallel communicator when Python frees it
(destruction is collective, and Python frees objects at different times on different ranks): it
puts it on the garbage list of the object's PETSc communicator, emptied by
``PETSc.garbage_cleanup(comm)``. A model's objects live on its meshes' and spaces'
communicators, which DOLFINx duplicates for each mesh and index map and frees with them: once a
model and its bodies are gone, the garbage on those communicators is out of reach, and each
model left about a dozen communicators behind (PETSc's own for each, more for every MUMPS
factorization). MPICH has 2048: a process that made 150 models on 2 ranks aborted (MUMPS's
"Internal error in MUMPS_LOAD_RECV_MSGS", MPICH's "Too many communicators").

Each :class:`~dolfinx_mbs.model.Model` is registered here (:func:`adopt`): a reference to the
PETSc communicator of each of its bodies' meshes and displacement spaces (counted by PETSc, so
alive after DOLFINx frees its own), and weak references to the model and its bodies. At the
next model made on the same processes (:func:`collect`, collective there), the garbage of every
registered communicator is destroyed, and the communicators of the models gone on every rank
(their bodies too, or held by the new model) are released. When more than :data:`LIVE_MAX`
registered models are still alive, Python's garbage collector runs first on every rank (a
model in a reference cycle, e.g. through a user's load function that refers to it, lives
until it runs).

What a user keeps keeps its communicators: a model in a list, a body, a PETSc object taken
from a model (``model.assembly`` matrices, a ``Function``'s vector) after the model is gone.
"""

from __future__ import annotations

import gc
import weakref
from typing import List, Protocol, Sequence

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import compat

__all__ = ["adopt", "collect", "registered", "LIVE_MAX"]

#: registered models alive (on some rank) above which :func:`collect` runs Python's collector
LIVE_MAX = 8


class _Model(Protocol):
    """What is registered: a model (a later part: not named here), by its communicator."""

    @property
    def comm(self) -> MPI.Comm: ...


class _Entry:
    """A registered model: its PETSc communicators and weak references to what uses them."""

    def __init__(self, model: _Model, bodies: Sequence[object], comms: List[PETSc.Comm]) -> None:
        self.model = weakref.ref(model)
        self.bodies = [weakref.ref(b) for b in bodies]
        self.comms = comms
        self.group = comms[0].tompi4py()

    def model_alive(self) -> bool:
        return self.model() is not None

    def alive(self) -> bool:
        return self.model_alive() or any(r() is not None for r in self.bodies)

    def covered_by(self, bodies: Sequence[object]) -> bool:
        """Whether each of this model's bodies is one of ``bodies`` (a new model's).

        Args:
            bodies: its bodies.

        Returns:
            Whether they are.
        """
        return all(any(r() is b for b in bodies) for r in self.bodies)

    def release(self) -> None:
        for c in self.comms:
            c.destroy()
        self.comms = []


_ENTRIES: List[_Entry] = []
_live_max = LIVE_MAX


def _petsc_comm(comm: MPI.Comm) -> PETSc.Comm:
    """A counted reference to the PETSc communicator of ``comm`` (an MPI communicator, or a
    PETSc object's communicator): alive until destroyed, whatever frees ``comm``."""
    return PETSc.Comm(comm).duplicate()


def adopt(model: _Model, bodies: Sequence) -> None:
    """Register ``model`` (collective on its communicator ``model.comm``), after
    :func:`collect` there: the PETSc communicators of its bodies' meshes and displacement
    spaces are held until the model and its bodies are gone on every rank and their garbage
    destroyed.

    Args:
        model: the model.
        bodies: its bodies.
    """
    collect(model.comm, bodies)
    comms = []
    for b in bodies:
        comms.append(_petsc_comm(b.mesh.comm))
        comms.append(_petsc_comm(compat.petsc_vec(b.u).getComm()))
    _ENTRIES.append(_Entry(model, bodies, comms))


def _same_processes(group: MPI.Comm, comm: MPI.Comm) -> bool:
    return MPI.Comm.Compare(group, comm) in (MPI.IDENT, MPI.CONGRUENT)


def collect(comm: MPI.Comm, bodies: Sequence = ()) -> int:
    """Destroy the PETSc garbage of the models registered on the processes of ``comm``
    (collective on ``comm``) and release the communicators of those gone on every rank, with
    their bodies (or whose bodies are all among ``bodies``, a new model's, which holds them).

    Args:
        comm: the communicator (collective).
        bodies: a new model's bodies.

    Returns:
        The number of models released.
    """
    global _live_max
    mine = [e for e in _ENTRIES if _same_processes(e.group, comm)]
    if not mine:
        return 0
    # the same entries, in the same order, on every rank of comm: each was registered by a
    # model made collectively on a communicator of these processes
    alive = comm.allreduce(sum(e.model_alive() for e in mine), op=MPI.MAX)
    if alive > _live_max:
        gc.collect()
        alive = comm.allreduce(sum(e.model_alive() for e in mine), op=MPI.MAX)
        _live_max = max(LIVE_MAX, 2 * alive)  # models the user keeps: not every time
    gone = np.array([[not e.alive(), not e.model_alive()] for e in mine], dtype=np.int32)
    comm.Allreduce(MPI.IN_PLACE, gone, op=MPI.MIN)
    released = 0
    for e, (all_gone, model_gone) in zip(mine, gone):
        for c in e.comms:
            PETSc.garbage_cleanup(c)
        if all_gone or (model_gone and e.covered_by(bodies)):
            e.release()
            _ENTRIES.remove(e)
            released += 1
    return released


def registered() -> int:
    """The number of models registered (on this rank) and not yet released."""
    return len(_ENTRIES)
