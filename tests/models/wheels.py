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
    """A predicate of the dof nodes of the bore r = ``radius`` (those between its nodes on the
    straight edges of its facets lie inside it)."""
    return lambda x: np.hypot(x[0], x[1]) <= radius + 1e-9


STEEL = dict(E=210e9, nu=0.3, density=7850.0)
#: the disks of the tests: bore and rim radii, thickness (m)
RADII = (0.05, 0.15)
THICKNESS = 0.01


def sector_model(n_sectors, rate=0.0, cells=(3, 2, 1), degree=2, stiffening=None,
                 comm=MPI.COMM_WORLD):
    """(model, body, sector, mesh) of a sector of the annular disk clamped at its bore,
    spinning at ``rate`` about z."""
    import dolfinx_mbs as mbs

    msh, tags = annular_sector(n_sectors, cells, RADII, THICKNESS, comm)
    sector = mbs.cyclic.Sector(n_sectors, axis=(0, 0, 1), low=(tags, LOW), high=(tags, HIGH))
    body = mbs.Body(msh, mbs.materials.LinearElastic(**STEEL),
                    mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=rate), degree=degree,
                    stiffening=stiffening, cyclic=sector)
    model = mbs.Model([body])
    model.clamp(body, facets=(tags, BORE))
    return model, body, sector, msh


def wheel_model(wheel, rate=0.0, degree=2, stiffening=None):
    """(model, body) of the whole wheel of a :class:`dolfinx_mbs.cyclic.WheelMesh` as one
    body (degree None: on the wheel's own space), clamped at its bore."""
    import dolfinx_mbs as mbs

    where = wheel.space if degree is None else wheel.mesh
    body = mbs.Body(where, mbs.materials.LinearElastic(**STEEL),
                    mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=rate), degree=degree,
                    stiffening=stiffening)
    model = mbs.Model([body])
    model.clamp(body, bore(RADII[0]))
    return model, body


def union_below(per_k, n_sectors):
    """The sector's frequencies of every harmonic index, as the whole wheel has them, up to
    the lowest of the harmonic indices' largest (below it each index's list is complete)."""
    cut = min(np.max(w) for w in per_k.values())
    allk = np.sort(np.concatenate(list(per_k.values())))
    return allk[allk <= cut * (1 + 1e-9)], cut
