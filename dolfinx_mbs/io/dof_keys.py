"""Names of a space's dofs that do not depend on how the mesh is partitioned.

A checkpoint that restarts on another number of ranks (:mod:`dolfinx_mbs.integrate.checkpoint`)
stores each value with a name that the same mesh, built the same way on any number of ranks,
gives the same dof: the *original input numbers* of the vertices of the mesh entity the dof's
node sits on (``mesh.geometry.input_global_indices``: the numbering of the mesh as it was
created or read, before DOLFINx distributed and reordered it), sorted, with the node's
component. A vertex node is named by its vertex, an edge node (P2) by the edge's two vertices,
a face or cell node by the face's or cell's vertices.

This names every node of the Lagrange spaces whose entities hold one node each (degree 1 and 2
on every cell type); an element with several nodes on one entity (degree 3 and higher), whose
order within the entity follows DOLFINx's orientation of it, is refused.

Matching names is a sort: :func:`locate` finds a set of names in a table of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dolfinx_mbs import compat

if TYPE_CHECKING:
    from dolfinx.fem import FunctionSpace

__all__ = ["node_keys", "dof_keys", "locate"]


def node_keys(V: FunctionSpace) -> np.ndarray:
    """The partition-free names of the owned nodes of a space.

    Args:
        V: a DOLFINx Lagrange function space (blocked or not) whose entities hold one node
            each.

    Returns:
        (n_owned_nodes, m) int64: row i names owned node i (the sorted input numbers of the
        vertices of its entity, padded with -1; m is the most vertices of an entity with a
        node).

    Raises:
        ValueError: an entity holds more than one node (degree 3 or higher).
    """
    import basix

    mesh = V.mesh
    topo = basix.topology(getattr(basix.CellType, compat.cell_type_name(mesh)))
    layout = V.dofmap.dof_layout
    inputs = np.asarray(mesh.geometry.input_global_indices, dtype=np.int64)
    geo = compat.geometry_dofmap(mesh)
    dofs = compat.cell_table(V.dofmap.list)
    nv = len(topo[0])
    verts = inputs[geo[:, :nv]] if len(geo) else np.zeros((0, nv), np.int64)
    held = [(d, i, list(layout.entity_dofs(d, i))) for d in range(len(topo))
            for i in range(len(topo[d]))]
    held = [h for h in held if h[2]]
    many = [h for h in held if len(h[2]) > 1]
    if many:
        d, i, e = many[0]
        raise ValueError(f"partition-free dof names: the element holds {len(e)} nodes on one "
                         f"entity of dimension {d}; only elements with one node per entity "
                         "(Lagrange degree 1 and 2) are named")
    m = max(len(topo[d][i]) for d, i, _ in held)
    imap = V.dofmap.index_map
    n_nodes = imap.size_local + imap.num_ghosts
    keys = np.full((n_nodes, m), -2, dtype=np.int64)
    for d, i, (k,) in held:
        ent = np.sort(verts[:, list(topo[d][i])], axis=1)
        keys[dofs[:, k], : ent.shape[1]] = ent
        keys[dofs[:, k], ent.shape[1]:] = -1
    owned = keys[: imap.size_local]
    if owned.size and owned.min() < -1:  # pragma: no cover - every owned node is in a cell
        raise RuntimeError("partition-free dof names: an owned node lies in no local cell")
    return owned


def dof_keys(V: FunctionSpace, width: int | None = None) -> np.ndarray:
    """The partition-free names of the owned (unblocked) dofs of a space.

    Args:
        V: as :func:`node_keys` takes it.
        width: the number of vertex columns (at least the space's own; more are padded with
            -1, so that the names of several spaces stack).

    Returns:
        (n_owned_dofs, 1 + width) int64: the component, then the node's name, in the order of
        the space's owned dofs (node-major, ``index_map_bs`` components).
    """
    nodes = node_keys(V)
    bs = V.dofmap.index_map_bs
    width = nodes.shape[1] if width is None else int(width)
    out = np.full((nodes.shape[0] * bs, 1 + width), -1, dtype=np.int64)
    out[:, 0] = np.tile(np.arange(bs), nodes.shape[0])
    out[:, 1: 1 + nodes.shape[1]] = np.repeat(nodes, bs, axis=0)
    return out


def _rows(a: np.ndarray) -> np.ndarray:
    """Each row of an int64 table as one comparable item."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    return a.view(np.dtype((np.void, 8 * a.shape[1]))).ravel()


def locate(table: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Where each row of ``keys`` is in ``table`` (both (n, c) int64, same c).

    Args:
        table: the names looked in (rows unique).
        keys: the names looked for.

    Returns:
        For each row of ``keys``, its row in ``table``, or -1 where it is not there.
    """
    if table.shape[1] != keys.shape[1]:
        return np.full(len(keys), -1, dtype=np.int64)
    t, k = _rows(table), _rows(keys)
    order = np.argsort(t, kind="stable")
    pos = np.searchsorted(t[order], k)
    pos = np.minimum(pos, max(len(t) - 1, 0))
    found = order[pos] if len(t) else np.zeros(len(k), np.int64)
    ok = (t[found] == k) if len(t) else np.zeros(len(k), bool)
    return np.where(ok, found, -1).astype(np.int64)
