"""Sectors of cyclic bodies made with gmsh: one sector of N of an annular disk, and of a bladed
disk, whose two cut faces are meshed node for node alike (gmsh's periodic mesh constraint,
``gmsh.model.mesh.setPeriodic``, with the turn by 2 pi / N about z), for
:class:`dolfinx_mbs.cyclic.Sector`.

    mesh, cells, facets = meshes.disk_sector(MPI.COMM_WORLD, n_sectors=24)
    sector = mbs.cyclic.Sector(24, low=(facets, meshes.LOW), high=(facets, meshes.HIGH))

The sector spans the angles 0 ... 2 pi / N about z (the low cut face in the half-plane y = 0,
x > 0; the high face that one turned by 2 pi / N), the disk's mid-plane at z = 0. Cells are
second-order (curved) by default: their nodes follow the bore's, the rim's and the blade's
round surfaces. Tags: cells :data:`BODY`; facets :data:`LOW`, :data:`HIGH` (the cut faces),
:data:`BORE` (r = inner radius) and, on a bladed sector, :data:`BLADE_TIP`. SI units, angles
in degrees where a name says so.

Each ``*_model`` function builds the geometry and its mesh into the current gmsh model (gmsh
4.8, Debian 12's, and later); the builders mesh it on rank 0 and distribute it over a
communicator (:func:`dolfinx_mbs.meshes.read` reads a written one).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence, Tuple, cast

from mpi4py import MPI

from dolfinx_mbs import checks
from dolfinx_mbs.meshes.builders import _distribute
from dolfinx_mbs.meshes.geometries import BODY, cell_counts, check_sizes, gmsh_options

if TYPE_CHECKING:
    from dolfinx_mbs.meshes.builders import Meshes

__all__ = ["disk_sector", "bladed_sector", "disk_sector_model", "bladed_sector_model", "LOW",
           "HIGH", "BORE", "BLADE_TIP"]

#: facet tags of a sector's low cut face (angle 0) and high cut face (angle 2 pi / N)
LOW, HIGH = 1, 2
#: facet tag of the bore (the inner cylinder)
BORE = 3
#: facet tag of a blade's tip
BLADE_TIP = 4


def _check_sector(n_sectors: int, inner_radius: float, outer_radius: float, thickness: float,
                  order: int) -> None:
    if isinstance(n_sectors, bool) or not isinstance(n_sectors, int) or n_sectors < 2:
        raise ValueError(f"n_sectors must be an integer >= 2, got {checks.shown(n_sectors)}")
    check_sizes(inner_radius=inner_radius, outer_radius=outer_radius, thickness=thickness)
    if not outer_radius > inner_radius:
        raise ValueError(f"outer_radius ({outer_radius:g}) must exceed inner_radius "
                         f"({inner_radius:g})")
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {checks.shown(order)}")


def _rotation(n_sectors: int) -> list:
    """Gmsh's affine transform (4 x 4, row-major) of the turn by 2 pi / N about z."""
    a = 2.0 * math.pi / n_sectors
    c, s = math.cos(a), math.sin(a)
    return [c, -s, 0, 0, s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]


def _faces(n_sectors: int, inner_radius: float, outer_radius: float
           ) -> Tuple[list, list, list]:
    """The gmsh surfaces of the current (synchronized) OCC model on the low cut face, the high
    one and the bore: planes through the axis at the angles 0 and 2 pi / N, and the cylinder
    r = inner radius."""
    import gmsh

    a = 2.0 * math.pi / n_sectors
    low, high, bore = [], [], []
    tol = 1e-7 * outer_radius
    for dim, tag in gmsh.model.getEntities(2):
        kind = gmsh.model.getType(dim, tag)
        # a point of the surface: its parametric centre
        lo, hi = gmsh.model.getParametrizationBounds(dim, tag)
        x, y, _ = gmsh.model.getValue(dim, tag, [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2])
        if kind == "Plane":
            cx, cy, _ = gmsh.model.occ.getCenterOfMass(dim, tag)
            if abs(cy) < tol and abs(y) < tol:
                low.append(tag)
            elif abs(cx * math.sin(a) - cy * math.cos(a)) < tol and \
                    abs(x * math.sin(a) - y * math.cos(a)) < tol:
                high.append(tag)
        elif kind == "Cylinder" and abs(math.hypot(x, y) - inner_radius) < tol:
            bore.append(tag)
    return low, high, bore


def _periodic_sector(n_sectors: int, low: Sequence[int], high: Sequence[int]) -> None:
    """Each high cut surface meshed as the low one turned by 2 pi / N (matched by their
    centres)."""
    import gmsh

    T = _rotation(n_sectors)
    a = 2.0 * math.pi / n_sectors
    centres = {t: gmsh.model.occ.getCenterOfMass(2, t) for t in list(low) + list(high)}
    for h in high:
        ch = centres[h]
        best = min(low, key=lambda lo: math.dist(
            ch, (centres[lo][0] * math.cos(a) - centres[lo][1] * math.sin(a),
                 centres[lo][0] * math.sin(a) + centres[lo][1] * math.cos(a), centres[lo][2])))
        gmsh.model.mesh.setPeriodic(2, [h], [best], T)


def _groups(low: list, high: list, bore: list, tip: list | None = None) -> None:
    import gmsh

    vols = [t for _, t in gmsh.model.getEntities(3)]
    gmsh.model.setPhysicalName(3, gmsh.model.addPhysicalGroup(3, vols, BODY), "sector")
    for tags, tag, name in ((low, LOW, "low"), (high, HIGH, "high"), (bore, BORE, "bore"),
                            (tip or [], BLADE_TIP, "blade_tip")):
        if tags:
            gmsh.model.addPhysicalGroup(2, tags, tag)
            gmsh.model.setPhysicalName(2, tag, name)


def _annular_sector(n_sectors: int, inner_radius: float, outer_radius: float,
                    thickness: float) -> Tuple[int, int]:
    """An OCC annular sector (volume tag) between the angles 0 and 2 pi / N, z in
    [-thickness/2, thickness/2]."""
    import gmsh

    occ = gmsh.model.occ
    a = 2.0 * math.pi / n_sectors
    outer = occ.addCylinder(0, 0, -thickness / 2, 0, 0, thickness, outer_radius, angle=a)
    inner = occ.addCylinder(0, 0, -thickness / 2, 0, 0, thickness, inner_radius, angle=a)
    out, _ = occ.cut([(3, outer)], [(3, inner)])
    return cast(Tuple[int, int], out[0])


def disk_sector_model(n_sectors: int = 24, inner_radius: float = 0.05,
                      outer_radius: float = 0.25, thickness: float = 0.01,
                      size: float | None = None, cells: Sequence[int] | None = None,
                      order: int = 2) -> None:
    """The sector of :func:`disk_sector` (same arguments), meshed in gmsh's current model.

    Args:
        n_sectors: N, the sectors of the whole disk.
        inner_radius: the bore's radius (m).
        outer_radius: the rim's radius (m).
        thickness: the disk's thickness along z (m).
        size: the tetrahedra's size (m; default a third of the thickness, at least the
            radial width / 20).
        cells: ``(radial, circumferential, axial)`` numbers of hexahedra instead of
            tetrahedra (a structured mesh, its cut faces alike by construction).
        order: 1 (straight) or 2 (curved, second-order) cells.
    """
    import gmsh

    _check_sector(n_sectors, inner_radius, outer_radius, thickness, order)
    if cells is not None:
        nr, nt, nz = cell_counts(cells, 3, "cells")
        geo = gmsh.model.geo
        a = 2.0 * math.pi / n_sectors
        z = -thickness / 2
        o = geo.addPoint(0, 0, z)
        p = [geo.addPoint(r * math.cos(t), r * math.sin(t), z)
             for r, t in ((inner_radius, 0), (outer_radius, 0), (outer_radius, a),
                          (inner_radius, a))]
        c = [geo.addLine(p[0], p[1]), geo.addCircleArc(p[1], o, p[2]),
             geo.addLine(p[2], p[3]), geo.addCircleArc(p[3], o, p[0])]
        face = geo.addPlaneSurface([geo.addCurveLoop(c)])
        for line, n in zip(c, (nr, nt, nr, nt)):
            geo.mesh.setTransfiniteCurve(line, n + 1)
        geo.mesh.setTransfiniteSurface(face)
        geo.mesh.setRecombine(2, face)
        out = geo.extrude([(2, face)], 0, 0, thickness, [nz], [], True)
        geo.synchronize()
        # out: top, volume, then the sides in the order of the curves
        low, high, bore = [out[2][1]], [out[4][1]], [out[5][1]]
        _groups(low, high, bore)
        gmsh.model.mesh.generate(3)
    else:
        h = size if size is not None else max(thickness / 3, (outer_radius - inner_radius) / 20)
        checks.positive(h, "size")
        _annular_sector(n_sectors, inner_radius, outer_radius, thickness)
        gmsh.model.occ.synchronize()
        low, high, bore = _faces(n_sectors, inner_radius, outer_radius)
        _periodic_sector(n_sectors, low, high)
        _groups(low, high, bore)
        with gmsh_options(**{"Mesh.CharacteristicLengthMax": h,
                             "Mesh.CharacteristicLengthMin": 0.0}):
            gmsh.model.mesh.generate(3)
    if order == 2:
        with gmsh_options(**{"Mesh.SecondOrderIncomplete": 0}):
            gmsh.model.mesh.setOrder(2)


def bladed_sector_model(n_sectors: int = 24, inner_radius: float = 0.05,
                        outer_radius: float = 0.2, thickness: float = 0.02,
                        blade_length: float = 0.1, blade_chord: float = 0.03,
                        blade_thickness: float = 0.004, stagger_degrees: float = 30.0,
                        size: float | None = None, blade_size: float | None = None,
                        order: int = 2) -> None:
    """The sector of :func:`bladed_sector` (same arguments), meshed in gmsh's current model.

    Args:
        n_sectors: N, the blades of the whole wheel.
        inner_radius: the bore's radius (m).
        outer_radius: the disk's rim radius (m).
        thickness: the disk's thickness along z (m).
        blade_length: the blade's radial length from the rim (m).
        blade_chord: the blade's chord (m).
        blade_thickness: the blade's thickness (m).
        stagger_degrees: the angle between the chord and the axis (degrees; 0: an axial
            blade).
        size: the disk's tetrahedra's size (m; default a third of the disk's thickness).
        blade_size: the blade's tetrahedra's size (m; default the blade's thickness).
        order: 1 (straight) or 2 (curved, second-order) cells.
    """
    import gmsh

    _check_sector(n_sectors, inner_radius, outer_radius, thickness, order)
    check_sizes(blade_length=blade_length, blade_chord=blade_chord,
                blade_thickness=blade_thickness)
    a = 2.0 * math.pi / n_sectors
    if not math.isfinite(stagger_degrees) or abs(stagger_degrees) >= 90.0:
        raise ValueError(f"stagger_degrees must lie in (-90, 90), got {stagger_degrees!r}")
    if blade_thickness >= outer_radius * math.sin(a / 2):
        raise ValueError(f"blade_thickness ({blade_thickness:g}) must be thinner than the "
                         f"sector at the rim ({2 * outer_radius * math.sin(a / 2):.3g} wide)")
    h = size if size is not None else thickness / 3
    hb = blade_size if blade_size is not None else blade_thickness
    checks.positive(h, "size")
    checks.positive(hb, "blade_size")
    occ = gmsh.model.occ
    disk = _annular_sector(n_sectors, inner_radius, outer_radius, thickness)
    # the blade: a plate along x (radial) through the rim, chord along z, turned by the
    # stagger about its radial axis and set at the sector's mid angle
    root = outer_radius * math.cos(a / 2) - blade_thickness
    blade = occ.addBox(root, -blade_thickness / 2, -blade_chord / 2,
                       outer_radius - root + blade_length, blade_thickness, blade_chord)
    occ.rotate([(3, blade)], 0, 0, 0, 1, 0, 0, math.radians(stagger_degrees))
    occ.rotate([(3, blade)], 0, 0, 0, 0, 0, 1, a / 2)
    occ.fuse([disk], [(3, blade)])
    occ.synchronize()
    low, high, bore = _faces(n_sectors, inner_radius, outer_radius)
    tip = []
    for dim, tag in gmsh.model.getEntities(2):
        cx, cy, _ = occ.getCenterOfMass(dim, tag)
        if abs(math.hypot(cx, cy) - (outer_radius + blade_length)) < 1e-6 * outer_radius:
            tip.append(tag)
    _periodic_sector(n_sectors, low, high)
    _groups(low, high, bore, tip)
    # the blade's points get its size, the disk's the disk's: gmsh interpolates between them
    rim = outer_radius * math.cos(a / 2) - 1.5 * blade_thickness
    for dim, tag in gmsh.model.getEntities(0):
        x, y, _ = gmsh.model.getValue(0, tag, [])
        gmsh.model.mesh.setSize([(dim, tag)], hb if math.hypot(x, y) > rim else h)
    with gmsh_options(**{"Mesh.CharacteristicLengthMax": h}):
        gmsh.model.mesh.generate(3)
    if order == 2:
        with gmsh_options(**{"Mesh.SecondOrderIncomplete": 0}):
            gmsh.model.mesh.setOrder(2)


def disk_sector(comm: MPI.Comm = MPI.COMM_WORLD, n_sectors: int = 24,
                inner_radius: float = 0.05, outer_radius: float = 0.25, thickness: float = 0.01,
                size: float | None = None, cells: Sequence[int] | None = None,
                order: int = 2) -> Meshes:
    """One sector of N of an annular disk about z (angles 0 ... 2 pi / N, z in
    [-thickness/2, thickness/2]): tetrahedra of ``size`` whose cut faces gmsh meshes alike
    (periodic), or structured hexahedra ``cells`` = (radial, circumferential, axial);
    second-order by default. Facet tags :data:`LOW`, :data:`HIGH`, :data:`BORE`.

    Args:
        comm: the communicator the mesh is distributed over.
        n_sectors: N.
        inner_radius: the bore's radius (m).
        outer_radius: the rim's radius (m).
        thickness: the thickness along z (m).
        size: the tetrahedra's size (m), or None for a default.
        cells: hexahedra (radial, circumferential, axial) instead of tetrahedra.
        order: 1 or 2 (curved cells).

    Returns:
        (mesh, cell_tags, facet_tags), distributed over ``comm``.
    """
    _check_sector(n_sectors, inner_radius, outer_radius, thickness, order)
    return _distribute(comm, "disk_sector", lambda: disk_sector_model(
        n_sectors, inner_radius, outer_radius, thickness, size, cells, order), 3)


def bladed_sector(comm: MPI.Comm = MPI.COMM_WORLD, n_sectors: int = 24,
                  inner_radius: float = 0.05, outer_radius: float = 0.2,
                  thickness: float = 0.02, blade_length: float = 0.1,
                  blade_chord: float = 0.03, blade_thickness: float = 0.004,
                  stagger_degrees: float = 30.0, size: float | None = None,
                  blade_size: float | None = None, order: int = 2) -> Meshes:
    """One sector of N of a bladed disk about z: an annular disk sector with a flat blade
    standing radially on its rim at the sector's mid angle, its chord turned from the axis by
    ``stagger_degrees``; tetrahedra (finer on the blade), the cut faces meshed alike
    (periodic), second-order by default. Facet tags :data:`LOW`, :data:`HIGH`, :data:`BORE`,
    :data:`BLADE_TIP`.

    Args:
        comm: the communicator the mesh is distributed over.
        n_sectors: N.
        inner_radius: the bore's radius (m).
        outer_radius: the disk's rim radius (m).
        thickness: the disk's thickness along z (m).
        blade_length: the blade's radial length beyond the rim (m).
        blade_chord: its chord (m).
        blade_thickness: its thickness (m).
        stagger_degrees: the chord's angle from the axis (degrees).
        size: the disk's cell size (m), or None for a default.
        blade_size: the blade's cell size (m), or None for a default.
        order: 1 or 2 (curved cells).

    Returns:
        (mesh, cell_tags, facet_tags), distributed over ``comm``.
    """
    _check_sector(n_sectors, inner_radius, outer_radius, thickness, order)
    return _distribute(comm, "bladed_sector", lambda: bladed_sector_model(
        n_sectors, inner_radius, outer_radius, thickness, blade_length, blade_chord,
        blade_thickness, stagger_degrees, size, blade_size, order), 3)
