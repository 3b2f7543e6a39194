"""Constraint reactions: the resultant force each constraint exerts on its body.

forces = system.constraint_forces(t, q, v, a, out)   # full vector (N, body components)
r = resultants(space, forces, t, constraints)        # Reactions: r[name], (gdim,) global
resultants(space, forces, t, constraints, frame=True)  # in the body frame's components
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, NamedTuple, Sequence

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.space import FullSpace

__all__ = ["Reactions", "Resultant", "resultants", "frame_resultants"]


class Resultant(NamedTuple):
    """The resultant force of one constraint on its (dependent) body, in the body frame's
    components (unpacks as ``body, force``)."""

    #: the body the constraint holds (its dependent body)
    body: Any
    #: the summed constraint force, (3,) in the body frame's components (N)
    force: np.ndarray


@dataclass(frozen=True, eq=False)
class Reactions(Mapping[str, np.ndarray]):
    """The resultant force of each constraint on its body, read by the constraint's name
    (``reactions[name]``, a (gdim,) array in N), the same on every rank.

    Attributes:
        forces: by constraint name, the (gdim,) resultant force (N), read-only.
        t: the time of the frame state the global components are taken at (s).
        frame: True when the components are the body frame's, False when global.
    """

    forces: Mapping[str, np.ndarray]
    t: float
    frame: bool

    def __getitem__(self, name: str) -> np.ndarray:
        """The resultant force of the constraint ``name`` (N).

        Args:
            name: the constraint's name.

        Returns:
            Its (gdim,) force.
        """
        return self.forces[name]

    def __iter__(self) -> Iterator[str]:
        """The constraints' names, in the order of the constraints."""
        return iter(self.forces)

    def __len__(self) -> int:
        """How many constraints have a resultant."""
        return len(self.forces)


def resultants(space: FullSpace, forces: PETSc.Vec, t: float, constraints: Sequence,
               frame: bool = False) -> Reactions:
    """Resultant force of each constraint on its (dependent) body.

    The sum of the constraint forces over the dofs it fixes, the same on every rank.

    Args:
        space: the model's :class:`~dolfinx_mbs.assembly.space.FullSpace`.
        forces: the full constraint-force vector (e.g.
            :meth:`dolfinx_mbs.assembly.Assembly.residual`).
        t: time of the frame state (for the rotation to global components).
        constraints: which constraints (those without a body, e.g. general rows, are skipped).
        frame: the components in the body's frame (the body's own unknowns' axes), not the
            global ones.

    Returns:
        The :class:`Reactions`: by constraint name, the (gdim,) force (N).
    """
    sums = frame_resultants(space, forces, constraints)
    out = {name: (tot if frame else body.frame.state(t).R @ tot)[:body.gdim].copy()
           for name, (body, tot) in sums.items()}
    for v in out.values():
        v.flags.writeable = False   # a record: its arrays read-only too
    return Reactions(forces=FrozenMapping(out), t=float(t), frame=frame)


def frame_resultants(space: FullSpace, forces: PETSc.Vec, constraints: Sequence
                     ) -> Mapping[str, Resultant]:
    """Resultant force of each constraint on its body in the body frame's components.

    Args:
        space: the model's :class:`~dolfinx_mbs.assembly.space.FullSpace`.
        forces: the full constraint-force vector.
        constraints: which constraints (those without a body are skipped).

    Returns:
        By constraint name (read-only), its :class:`Resultant` ``(body, (3,) force)``, the
        same on every rank (one reduction for all the constraints).
    """
    arr = forces.getArray(readonly=True)
    bodies = space.bodies
    found = []
    for c in constraints:
        body = getattr(c, "body_b", None) or getattr(c, "body", None)
        if body is not None:
            found.append((c, body))
    local = np.zeros((len(found), 3))
    for k, (c, body) in enumerate(found):
        ib = next(i for i, b in enumerate(bodies) if b is body)
        g = body.gdim
        nodes = getattr(c, "nodes_b", None)
        if nodes is None:
            nodes = c.nodes
        comps = getattr(c, "components", np.arange(g))
        base = space.offsets[ib]
        for i in comps:
            local[k, i] = arr[base + nodes * g + i].sum() if len(nodes) else 0.0
    tot = np.zeros_like(local)
    space.comm.Allreduce(local, tot, op=MPI.SUM)
    return FrozenMapping({c.name: Resultant(body, tot[k])
                             for k, (c, body) in enumerate(found)})
