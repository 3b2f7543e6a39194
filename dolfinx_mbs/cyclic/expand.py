"""The whole wheel from one sector: its mesh (the sector's turned N times and merged at the cut
faces) and the sector's fields expanded onto it, each sector with its phase.

    wheel = WheelMesh(mesh, sector)             # collective; wheel.mesh is a DOLFINx mesh
    u_wheel = wheel.expand(u_c, u_s, k)         # Function on wheel.space

Sector j of the wheel is the reference sector turned by j alpha; the displacement of a harmonic
index k there is, in global components at the turned point (``docs/theory.md`` section 10),

    u_j = R^j (u_c cos(j k alpha) - u_s sin(j k alpha)).

The wheel's mesh is made on rank 0 from the sector's geometry gathered there (its nodes by
their input index, its cells), then distributed by DOLFINx: meant for output (VTX/ParaView files,
PyVista pictures) and for checks against the whole wheel meshed as one body. Its fields live in
the vector Lagrange space of the mesh's coordinate degree (second-order for curved cells):
a sector field of another degree is interpolated into that space of the sector first.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Tuple

import numpy as np
from dolfinx import fem

from dolfinx_mbs import checks, compat

if TYPE_CHECKING:
    from dolfinx.mesh import Mesh

    from dolfinx_mbs.cyclic.sector import Sector

__all__ = ["WheelMesh"]


def _node_table(V: fem.FunctionSpace, mesh: Mesh) -> np.ndarray:
    """For each local dof node of ``V`` (a Lagrange space of the mesh's coordinate degree),
    the local geometry node at the same point."""
    from scipy.spatial import cKDTree

    xd = V.tabulate_dof_coordinates().reshape(-1, 3)
    xg = mesh.geometry.x
    scale = max(float(np.abs(xg).max(initial=0.0)), 1e-300)
    d, idx = cKDTree(xg).query(xd) if len(xd) else (np.zeros(0), np.zeros(0, int))
    if len(d) and d.max() > 1e-9 * scale:
        raise RuntimeError("the wheel's space does not have its dofs at the geometry nodes")
    return idx.astype(np.int64)


class WheelMesh:
    """The whole wheel of ``sector``: its mesh made from the sector's ``mesh`` (collective).

    Args:
        mesh: the sector's mesh.
        sector: the :class:`~dolfinx_mbs.cyclic.Sector`.

    Attributes:
        mesh: the wheel's DOLFINx mesh, distributed over the sector's communicator.
        space: the vector Lagrange space of the mesh's coordinate degree on it.
        sector_space: the same space on the sector's mesh.
        n_nodes: the number of geometry nodes of the wheel (the N copies merged at the cuts).
    """

    def __init__(self, mesh: Mesh, sector: Sector) -> None:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components
        from scipy.spatial import cKDTree

        comm = mesh.comm
        self.sector = sector
        self.sector_mesh = mesh
        N = sector.n_sectors
        tdim = mesh.topology.dim
        self.gdim = gdim = mesh.geometry.dim
        gi = compat.input_global_indices(mesh)
        ncells = mesh.topology.index_map(tdim).size_local
        cells = gi[compat.geometry_dofmap(mesh)[:ncells]]
        parts = comm.gather((gi, mesh.geometry.x[:, :3].copy(), cells), root=0)
        msg = None
        cells_w = np.zeros((0, cells.shape[1]), np.int64)
        x_w = np.zeros((0, gdim))
        reps = None
        if comm.rank == 0:
            n_in = int(max(p[0].max(initial=-1) for p in parts)) + 1
            X = np.zeros((n_in, 3))
            seen = np.zeros(n_in, dtype=bool)
            for g, x, _ in parts:
                X[g] = x
                seen[g] = True
            C = np.concatenate([p[2] for p in parts])
            # the high face's nodes: those whose turn back by alpha is a node (the axis' too)
            h = 1e-8 * max(float(np.ptp(X[seen], axis=0).max(initial=0.0)), 1e-300)
            d, partner = cKDTree(X[seen]).query(sector.turn(X[seen], -1))
            index = np.flatnonzero(seen)
            hi = index[d <= h]
            lo = index[partner[d <= h]]
            if len(hi) == 0:
                msg = ("WheelMesh: no node of the sector's mesh lies on the low face turned by "
                       f"360/{N} degrees: is it a sector of {N}?")
            else:
                # node (j, g) is number j n_in + g; the high node of copy j is the low node of
                # copy j + 1
                a = (np.arange(N)[:, None] * n_in + hi[None, :]).reshape(-1)
                b = (((np.arange(N)[:, None] + 1) % N) * n_in + lo[None, :]).reshape(-1)
                total = N * n_in
                graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(total, total))
                _, label = connected_components(graph, directed=False)
                used = np.zeros(total, dtype=bool)
                used[(np.arange(N)[:, None] * n_in + index[None, :]).reshape(-1)] = True
                lab, first, inverse = np.unique(label[used], return_index=True,
                                                return_inverse=True)
                ids = np.full(total, -1, np.int64)
                ids[np.flatnonzero(used)] = inverse
                reps = np.flatnonzero(used)[first]      # a (j, g) of each wheel node
                j, g = np.divmod(reps, n_in)
                x_w = np.zeros((len(reps), 3))
                for jj in range(N):
                    sel = j == jj
                    x_w[sel] = sector.turn(X[g[sel]], jj)
                x_w = x_w[:, :gdim]
                cells_w = np.concatenate([ids[jj * n_in + C] for jj in range(N)])
        checks.raise_everywhere(comm, comm.bcast(msg, root=0))
        reps = comm.bcast(reps, root=0)
        n_in = comm.bcast(n_in if comm.rank == 0 else None, root=0)
        self.n_nodes = len(reps)
        self.mesh = compat.create_mesh(comm, cells_w, x_w, mesh)
        degree = compat.geometry_degree(mesh)
        self.space = compat.vector_space(self.mesh, degree)
        self.sector_space = compat.vector_space(mesh, degree)
        # each wheel dof node: its sector copy j and the sector's input node g
        wi = compat.input_global_indices(self.mesh)[_node_table(self.space, self.mesh)]
        self._j, self._g = np.divmod(reps[wi], n_in)
        self._sector_nodes = gi[_node_table(self.sector_space, mesh)]
        self._n_in = n_in

    def _gathered(self, f: fem.Function) -> np.ndarray:
        """The sector field ``f`` at every input node of the sector's geometry, on every rank,
        (n_in, gdim) (interpolated into the coordinate degree's space first)."""
        g = self.gdim
        if compat.same_space(f.function_space, self.sector_space):
            vals = f.x.array
        else:
            h = fem.Function(self.sector_space)
            h.interpolate(f)
            vals = h.x.array
        vals = np.asarray(vals).real.reshape(-1, g)
        comm = self.sector_mesh.comm
        out = np.zeros((self._n_in, g))
        for nodes, v in comm.allgather((self._sector_nodes, vals[: len(self._sector_nodes)])):
            out[nodes] = v
        return out

    def expand(self, cos_part: fem.Function, sin_part: fem.Function | None, k: int,
               name: str = "u") -> fem.Function:
        """The wheel's field of harmonic index ``k`` whose reference sector holds
        ``cos_part`` + i ``sin_part`` (None: 0), in the components of the wheel's frame.

        Args:
            cos_part: u_c, a Function on the sector's mesh.
            sin_part: u_s, or None.
            k: the harmonic index.
            name: the Function's name.

        Returns:
            A Function on :attr:`space`.
        """
        N = self.sector.n_sectors
        uc = self._gathered(cos_part)
        us = self._gathered(sin_part) if sin_part is not None else np.zeros_like(uc)
        g = self.gdim
        out = fem.Function(self.space, name=name)
        vals = np.zeros((len(self._j), g))
        a = 2.0 * math.pi * k / N
        for j in range(N):
            sel = self._j == j
            if not np.any(sel):
                continue
            nodes = self._g[sel]
            w = math.cos(j * a) * uc[nodes] - math.sin(j * a) * us[nodes]
            vals[sel] = w @ self.sector.rotation(j)[:g, :g].T
        out.x.array[: vals.size] = vals.reshape(-1)
        out.x.scatter_forward()
        return out

    def pair(self, mode: Tuple[fem.Function, fem.Function | None],
             sine: Tuple[fem.Function, fem.Function | None] | None,
             k: int) -> Tuple[fem.Function, fem.Function]:
        """A complex mode's (re, im) on the wheel from its copies' (re, im) pairs.

        Args:
            mode: the cosine copy's (re, im).
            sine: the sine copy's (re, im), or None (k = 0, N/2).
            k: the harmonic index.

        Returns:
            (re, im) on the wheel.
        """
        parts = []
        for i, lab in enumerate(("re", "im")):
            c = mode[i]
            s = sine[i] if sine is not None else None
            if c is None:
                parts.append(None)
                continue
            parts.append(self.expand(c, s, k, name=f"u_{lab}"))
        return parts[0], parts[1]
