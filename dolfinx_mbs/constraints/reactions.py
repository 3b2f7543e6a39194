"""Constraint reactions: the resultant force each constraint exerts on its body.

forces = system.constraint_forces(t, q, v, a, out)   # full vector (N, body components)
resultants(space, forces, t, constraints)            # {name: (gdim,) global components}
resultants(space, forces, t, constraints, frame=True)  # in the body frame's components
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Sequence

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.space import FullSpace

__all__ = ["resultants", "frame_resultants"]


def resultants(space: FullSpace, forces: PETSc.Vec, t: float, constraints: Sequence,
               frame: bool = False) -> Dict[str, np.ndarray]:
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
        {constraint name: (gdim,) force} (N).
    """
    sums = frame_resultants(space, forces, constraints)
    return {name: (tot if frame else body.frame.state(t).R @ tot)[:body.gdim]
            for name, (body, tot) in sums.items()}


def frame_resultants(space: FullSpace, forces: PETSc.Vec, constraints: Sequence
                     ) -> Dict[str, tuple]:
    """Resultant force of each constraint on its body in the body frame's components.

    Args:
        space: the model's :class:`~dolfinx_mbs.assembly.space.FullSpace`.
        forces: the full constraint-force vector.
        constraints: which constraints (those without a body are skipped).

    Returns:
        {constraint name: (body, (3,) force)}, the same on every rank (one reduction for all
        the constraints).
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
    return {c.name: (body, tot[k]) for k, (c, body) in enumerate(found)}
