"""Constraint kinds. Each one states rows of B Delta_dot + b = 0 in the explicit form the Maggi
reducer eliminates: a *dependent* dof expressed through independent ones,

    Delta_d = sum_k c_k Delta_k + g_d(t).

A clamp is the simplest case: no independent dofs on the right, g = 0. Rows live on the rank
that owns the dependent dof, and dofs are numbered in the model's full space
(:class:`dolfinx_mbs.space.FullSpace`).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Sequence

import numpy as np
from dolfinx import fem
from mpi4py import MPI

__all__ = ["Rows", "Clamp"]


@dataclasses.dataclass
class Rows:
    """Explicit constraint rows owned by this rank.

    Attributes:
        name: the constraint's name, used in messages.
        dependent: full global indices of the dependent dofs (owned here), shape (m,).
        value: g_d at the current time, shape (m,).
        masters: for each row, full global indices of its independent dofs (possibly empty).
        coeffs: for each row, the coefficients c_k.
    """

    name: str
    dependent: np.ndarray
    value: np.ndarray
    masters: list
    coeffs: list


class Clamp:
    """Fix all or some displacement components of a body where a predicate holds or on facets.

    Args:
        body: the body to clamp.
        where: ``x -> bool array`` evaluated on dof coordinates ``x`` of shape (3, n).
        facets: ``(meshtags, tag)``: clamp every node of the facets with that tag.
        components: which displacement components (default all).
        name: label for messages.

    Raises:
        ValueError: on every rank, if the selection holds no node, or a component is out of range.
    """

    def __init__(self, body, where: Optional[Callable] = None, facets=None,
                 components: Optional[Sequence[int]] = None, name: Optional[str] = None):
        if (where is None) == (facets is None):
            raise ValueError("clamp: give exactly one of a predicate `where` or facets=(meshtags, tag)")
        if where is not None and not callable(where):
            raise TypeError(f"clamp: `where` must be a callable x -> bool array, got {where!r}")
        gdim = body.gdim
        if components is None:
            comps = np.arange(gdim)
        else:
            comps = np.unique(np.asarray(list(components), dtype=np.int64))
            if comps.size == 0 or comps.min() < 0 or comps.max() >= gdim:
                raise ValueError(f"clamp: components must be a non-empty subset of "
                                 f"0..{gdim - 1}, got {components!r}")
        self.body = body
        self.components = comps
        self.name = name or f"clamp({body.name})"
        V = body.V
        n_owned = V.dofmap.index_map.size_local
        if where is not None:
            x = V.tabulate_dof_coordinates()[:n_owned].T
            sel = np.asarray(where(x), dtype=bool).reshape(-1)
            if sel.shape != (n_owned,):
                raise ValueError(f"{self.name}: `where` must return one bool per point "
                                 f"({n_owned}), got shape {sel.shape}")
            nodes = np.flatnonzero(sel)
        else:
            tags, tag = facets
            fdim = body.mesh.topology.dim - 1
            if tags.dim != fdim:
                raise ValueError(f"{self.name}: meshtags must be of facets (dim {fdim}), got "
                                 f"dim {tags.dim}")
            body.mesh.topology.create_connectivity(fdim, fdim + 1)
            ents = tags.indices[tags.values == tag].astype(np.int32)
            nodes = fem.locate_dofs_topological(V, fdim, ents)
            nodes = nodes[nodes < n_owned]
        total = body.comm.allreduce(len(nodes), op=MPI.SUM)
        if total == 0:
            raise ValueError(f"{self.name}: the selection holds no node of body {body.name!r}")
        self.nodes = np.asarray(nodes, dtype=np.int64)
        self.n_nodes = total

    def local_dofs(self) -> np.ndarray:
        """Unblocked local dof indices (owned) that this clamp fixes."""
        bs = self.body.V.dofmap.index_map_bs
        return (self.nodes[:, None] * bs + self.components[None, :]).reshape(-1)

    def rows(self, space, t: float) -> Rows:
        ib = space.bodies.index(self.body)
        dofs = self.local_dofs()
        start, _ = space.owned_range(ib)
        dep = start + dofs
        return Rows(self.name, dep.astype(np.int64), np.zeros(len(dep)),
                    [np.zeros(0, np.int64)] * len(dep), [np.zeros(0)] * len(dep))
