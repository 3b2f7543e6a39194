"""Constraint reactions: the resultant force each constraint exerts on its body.

forces = system.constraint_forces(t, q, v, a, out)   # full vector (N, body components)
resultants(space, forces, t, constraints)            # {name: (gdim,) global components}
"""

from __future__ import annotations

from typing import Dict, Sequence

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

__all__ = ["resultants"]


def resultants(space, forces: PETSc.Vec, t: float, constraints: Sequence
               ) -> Dict[str, np.ndarray]:
    """Resultant force of each constraint on its (dependent) body: the sum of the constraint
    forces over the dofs it fixes, in global components (N), the same on every rank.

    Args:
        space: the model's :class:`~dolfinx_mbs.assembly.space.FullSpace`.
        forces: the full constraint-force vector (e.g.
            :meth:`dolfinx_mbs.assembly.Assembly.residual`).
        t: time of the frame state (for the rotation to global components).
        constraints: which constraints (those without a body, e.g. general rows, are skipped).

    Returns:
        {constraint name: (gdim,) force}.
    """
    arr = forces.getArray(readonly=True)
    out = {}
    bodies = space.bodies
    for c in constraints:
        body = getattr(c, "body_b", None) or getattr(c, "body", None)
        if body is None:
            continue
        ib = next(i for i, b in enumerate(bodies) if b is body)
        g = body.gdim
        nodes = getattr(c, "nodes_b", None)
        if nodes is None:
            nodes = c.nodes
        comps = getattr(c, "components", np.arange(g))
        local = np.zeros(3)
        base = space.offsets[ib]
        for i in comps:
            local[i] = arr[base + nodes * g + i].sum() if len(nodes) else 0.0
        tot = np.zeros(3)
        space.comm.Allreduce(local, tot, op=MPI.SUM)
        out[c.name] = (body.frame.state(t).R @ tot)[:g]
    return out
