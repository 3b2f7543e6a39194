"""Sectors of annular disks for the cyclic tests: a DOLFINx box of hexahedra mapped to an
annular sector (the cut faces match node for node by construction), and the whole wheel."""

import math

import numpy as np
from mpi4py import MPI

#: facet tags of the mapped sector
LOW, HIGH, BORE = 1, 2, 3


def annular_sector(n_sectors, cells=(3, 3, 1), radii=(0.05, 0.15), thickness=0.01,
                   comm=MPI.COMM_WORLD, degree=1):
    """(mesh, facet_tags) of one sector of an annular disk about z: r in ``radii``, theta in
    [0, 2 pi / N], z in [0, thickness]; hexahedra ``cells = (radial, circumferential, axial)``
    whose nodes lie on the exact circles (linear cells: straight edges between them)."""
    from dolfinx import mesh

    a = 2.0 * math.pi / n_sectors
    msh = mesh.create_box(comm, [np.array([radii[0], 0.0, 0.0]),
                                 np.array([radii[1], a, thickness])], list(cells),
                          cell_type=mesh.CellType.hexahedron)
    x = msh.geometry.x
    r, t = x[:, 0].copy(), x[:, 1].copy()
    x[:, 0], x[:, 1] = r * np.cos(t), r * np.sin(t)
    fdim = msh.topology.dim - 1
    ents, vals = [], []

    def angle(p):
        return np.arctan2(p[1], p[0])

    for tag, where in ((LOW, lambda p: np.isclose(angle(p), 0.0, atol=1e-10)),
                       (HIGH, lambda p: np.isclose(angle(p), a, atol=1e-10)),
                       (BORE, lambda p: np.isclose(np.hypot(p[0], p[1]), radii[0]))):
        e = mesh.locate_entities_boundary(msh, fdim, where)
        ents.append(e)
        vals.append(np.full(len(e), tag, dtype=np.int32))
    ents = np.concatenate(ents).astype(np.int32)
    vals = np.concatenate(vals)
    order = np.argsort(ents, kind="stable")
    tags = mesh.meshtags(msh, fdim, ents[order], vals[order])
    return msh, tags


def bore(radius):
    """A predicate of the nodes on the bore r = ``radius``."""
    return lambda x: np.isclose(np.hypot(x[0], x[1]), radius, rtol=0, atol=1e-9)
