"""Whether a run stayed where its small-displacement model holds.

A body's displacement is relative to its frame and, unless ``stiffening="nonlinear"``, its
strain is linear in it: a rigid rotation by theta relative to the frame is then strain free
to any theta, and its inertia and centrifugal forces are those of the displacement
theta x (X - P), not of a rotation. Past a tenth of a radian or so the results are of another
motion than the body's. :class:`RotationRange` watches each linear body's largest rotation
relative to its frame, 1/2 curl u (:func:`dolfinx_mbs.forms.small_rotation`) averaged over
each cell (one sparse product of a matrix assembled once per body), at up to
:data:`SAMPLES` states spread over the run and at its end. A
:class:`SmallDisplacementWarning` says so, on every rank: at the first sample past
:data:`LIMIT` of each body, while the run goes on, and at the end (from the driver) naming the
bodies past it, their largest rotation and its time, and ``stiffening="nonlinear"``.
"""

from __future__ import annotations

import math
import warnings
import weakref
from typing import TYPE_CHECKING, Dict, List, Mapping, Sequence

import numpy as np
import ufl
from dolfinx.fem import petsc as fpetsc
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import compat
from dolfinx_mbs.checks import SmallDisplacementWarning
from dolfinx_mbs.forms import small_rotation
from dolfinx_mbs.integrate.observers import Observer, Step
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.bodies.rigid import RigidBody
    from dolfinx_mbs.integrate.initial import Coordinates

__all__ = ["LIMIT", "SAMPLES", "SmallDisplacementWarning", "RotationRange"]

#: the largest rotation of a linear body relative to its frame (rad) that passes unremarked
LIMIT = 0.1
#: the states of a run whose rotations are measured, at most (spread evenly; and the last)
SAMPLES = 200


class _CellRotations:
    """The cell averages of a body's rotation 1/2 curl u as one product with its dofs.

    Args:
        body: the body (a vector Lagrange space ``V`` on its mesh).
    """

    def __init__(self, body: Body) -> None:
        mesh = body.mesh
        self.gdim = body.gdim
        W = compat.scalar_space(mesh, 0, "DG") if self.gdim == 2 else \
            compat.vector_space(mesh, 0, "DG")
        u, w = ufl.TrialFunction(body.V), ufl.TestFunction(W)
        dx = ufl.dx(domain=mesh)
        self.G = fpetsc.assemble_matrix(compat.form(ufl.inner(small_rotation(u), w) * dx))
        self.G.assemble()
        ones = 1.0 if self.gdim == 2 else ufl.as_vector((1.0, 1.0, 1.0))
        vol = fpetsc.assemble_vector(compat.form(ufl.inner(ones, w) * dx))
        vol.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
        self.inv_volume = 1.0 / vol.getArray(readonly=True).copy()
        vol.destroy()
        self.x, self.y = self.G.createVecRight(), self.G.createVecLeft()

    def largest(self, owned: np.ndarray) -> float:
        """The largest cell rotation (rad) of this rank's cells.

        Args:
            owned: the body's displacement dofs this rank owns (the body's vector layout).

        Returns:
            The largest |1/2 curl u| over this rank's cells (0 without cells).
        """
        self.x.array[:] = owned
        self.G.mult(self.x, self.y)
        r = self.y.getArray(readonly=True) * self.inv_volume
        if self.gdim == 3:
            r = np.linalg.norm(r.reshape(-1, 3), axis=1)
        return float(np.abs(r).max()) if r.size else 0.0


#: each body's cell-rotation matrix, made once (the body's mesh and space do not change)
_MADE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _cell_rotations(body: Body) -> _CellRotations:
    made = _MADE.get(body)
    if made is None:
        made = _MADE[body] = _CellRotations(body)
    return made


def checked(body: Body | RigidBody) -> bool:
    """Whether ``body``'s rotation is watched: a deformable body of linear strain.

    Args:
        body: a body of the model.

    Returns:
        True for a deformable body of linear strain.
    """
    return hasattr(body, "V") and getattr(body, "stiffening", None) != "nonlinear"


class RotationRange(Observer):
    """The largest rotation of each linear body relative to its frame over a run.

    See the module docstring. Sampled at every ``every``-th step (:data:`SAMPLES` a run at
    most) and at the end (:meth:`report`, from the bodies' final displacement).

    Args:
        system: the run's typed system.
        n_steps: the steps the run is expected to take.
    """

    whole_run = True

    def __init__(self, system: Coordinates, n_steps: int) -> None:
        self.system = system
        space = system.space
        self.watched = [(i, b, _cell_rotations(b)) for i, b in enumerate(space.bodies)
                        if checked(b)]
        self.every = max(1, -(-n_steps // SAMPLES))
        self.largest = np.zeros(len(self.watched))
        self.when = np.zeros(len(self.watched))
        self._full = space.create_vec()
        self._q: PETSc.Vec | None = None
        #: what :meth:`report` found: {body name: largest rotation (rad)}
        self.reported: Dict[str, float] = {}
        #: the bodies already said to be past :data:`LIMIT` while the run went on
        self.told: set = set()

    def _measure(self, full: PETSc.Vec, t: float) -> None:
        arr = full.getArray(readonly=True)
        space = self.system.space
        now = np.zeros(len(self.watched))
        for k, (i, _, rot) in enumerate(self.watched):
            lo = space.offsets[i]
            value = now[k] = rot.largest(arr[lo:lo + space.sizes[i]])
            if value > self.largest[k] or not math.isfinite(value):
                self.largest[k], self.when[k] = value, t
        if not self.watched:
            return
        # said while the run goes on (a long run's user may stop it), on every rank alike
        mine = np.where(np.isfinite(now), now, np.inf)
        now = np.empty_like(mine)
        self.system.comm.Allreduce(mine, now, op=MPI.MAX)
        past = [(b.name, float(v)) for (_, b, _), v in zip(self.watched, now)
                if not v <= LIMIT and b.name not in self.told]
        if past:
            self.told.update(n for n, _ in past)
            warnings.warn(
                f"small-displacement model past its range at t={t:g}: the rotation relative "
                f"to its frame of {', '.join(f'{n!r} {v:.3g} rad' for n, v in past)} exceeds "
                f"{LIMIT:g} rad; the run goes on, its results of another motion than the "
                "body's (the largest rotation is reported at the end)",
                SmallDisplacementWarning, stacklevel=2)

    def measure(self, full: PETSc.Vec, t: float) -> None:
        """Measure the state ``full`` (the full layout of the system's space) at ``t``: for a
        run that steps outside the driver (the coupled one), at its sample steps
        (``index % every == 0``).

        Args:
            full: the bodies' displacements, the space's layout.
            t: its time (s).
        """
        self._measure(full, t)

    def _from_reduced(self, q: PETSc.Vec, t: float) -> None:
        self.system.expand(q, out=self._full)
        self._measure(self._full, t)

    def _vec(self, row: np.ndarray) -> PETSc.Vec:
        """A reduced vector holding ``row`` (a dense stepper's state, on every rank)."""
        if self._q is None:
            self._q = self.system.create_reduced_vec()
        r0, r1 = self._q.getOwnershipRange()
        self._q.array[:] = row[r0:r1]
        return self._q

    def observe(self, step: Step) -> List[float]:
        """Measure the step's state where it is a sample.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        if step.index % self.every == 0 and self.watched:
            q = step.q if step.dense is None else self._vec(step.dense[0])
            self._from_reduced(q, step.t)
        return []

    def observe_all(self, times: Sequence[float], Q: np.ndarray) -> None:
        """Measure the samples of a whole run's states.

        Args:
            times: the run's times.
            Q: the reduced displacements, one row per time.
        """
        if not self.watched:
            return
        for k in range(0, len(times), self.every):
            self._from_reduced(self._vec(Q[k]), times[k])

    def report(self, t: float) -> Mapping[str, float]:
        """The run's largest rotations, and the warning past :data:`LIMIT` (collective).

        Args:
            t: the time of the run's end (the bodies' ``u`` hold its state).

        Returns:
            {body name: the largest rotation relative to its frame (rad)}, the same on every
            rank (read-only: :attr:`reported` holds it).
        """
        space = self.system.space
        for k, (i, b, rot) in enumerate(self.watched):  # the final state
            arr = compat.petsc_vec(b.u).getArray(readonly=True)
            value = rot.largest(arr[:space.sizes[i]])
            if value > self.largest[k]:
                self.largest[k], self.when[k] = value, t
        comm = self.system.comm
        pairs = comm.allgather((self.largest.copy(), self.when.copy()))
        values = np.array([p[0] for p in pairs]).reshape(len(pairs), -1)
        whens = np.array([p[1] for p in pairs]).reshape(len(pairs), -1)
        top = values.argmax(axis=0) if values.size else np.zeros(0, dtype=int)
        out, past = {}, []
        for k, (_, b, _) in enumerate(self.watched):
            value, when = float(values[top[k], k]), float(whens[top[k], k])
            out[b.name] = value
            if not value <= LIMIT:
                past.append(f"{b.name!r} {value:.3g} rad (t={when:g})")
        self.reported = out
        if past:   # on every rank: each rank's user sees it
            warnings.warn(
                f"small-displacement model past its range: the largest rotation relative to "
                f"its frame of {', '.join(past)} exceeds {LIMIT:g} rad; the linear strain "
                "takes such a rotation as strain free and its forces as those of a "
                "displacement, not of a rotation: use stiffening=\"nonlinear\" for large "
                "rotations (or frames that follow the motion)",
                SmallDisplacementWarning, stacklevel=2)
        return FrozenMapping(out)

    def close(self) -> None:
        """Destroy the work vectors."""
        self._full.destroy()
        if self._q is not None:
            self._q.destroy()
            self._q = None
