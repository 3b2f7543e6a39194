"""The geometries of the demos' bodies, as gmsh models (gmsh only, no DOLFINx).

Each ``*_model`` function builds its geometry, mesh included, into the current gmsh model, with
the physical groups (tags) listed in :mod:`dolfinx_mbs.meshes`; that module meshes them on rank 0
and distributes them, and the scripts of the repository's ``meshes/`` folder write them to
``.msh`` files. Import the names from :mod:`dolfinx_mbs.meshes`.
"""

from __future__ import annotations

import contextlib
import math
from typing import Iterator, Sequence, Tuple

import numpy as np

from dolfinx_mbs import checks

__all__ = ["rotor_model", "twisted_blade_model", "strip_model", "shaft_model", "BODY",
           "BEARING_A", "BEARING_B", "ROOT", "TIP", "KRB_HEIGHT", "SHAFT_SEGMENT"]

#: cell tag of the one body of every mesh made here
BODY = 1
#: facet tags of the rotor's two shaft ends (the bearings)
BEARING_A, BEARING_B = 1, 2
#: the facet tag of a shaft's first segment's lateral surface (the k-th's: SHAFT_SEGMENT + k)
SHAFT_SEGMENT = 3
#: facet tags of a blade's or a strip's root (x = its start) and tip (x = its end)
ROOT, TIP = 1, 2

#: section height (m) of Kane, Ryan & Banerjee's beam as a square-section strip: EA/EI = 12/h^2
#: with EI = 14 000 N m^2 and EA = 2.8e7 N (demos/spin_up_beam.py)
KRB_HEIGHT = math.sqrt(12.0 * 14000.0 / 2.8e7)


@contextlib.contextmanager
def gmsh_options(**values: float) -> Iterator[None]:
    """Set gmsh number options for the block, then restore them (a session outlives a model).

    Args:
        **values: the options' values by name (``"Mesh.MshFileVersion"``, ...).

    Yields:
        None, with the options set.
    """
    import gmsh

    old = {k: gmsh.option.getNumber(k) for k in values}
    try:
        for k, v in values.items():
            gmsh.option.setNumber(k, v)
        yield
    finally:
        for k, v in old.items():
            gmsh.option.setNumber(k, v)


def check_sizes(**values: float) -> None:
    """Check that every keyword's value is a positive number.

    Args:
        **values: the sizes by argument name.

    Raises:
        ValueError: a value is not positive, naming its argument.
    """
    for name, v in values.items():
        checks.positive(v, name)


def cell_counts(cells: Sequence[int], n: int, name: str) -> Tuple[int, ...]:
    """``n`` numbers of cells, checked.

    Args:
        cells: the numbers of cells per direction.
        n: how many there must be.
        name: the argument's name, for the error.

    Returns:
        The counts as ints.

    Raises:
        ValueError: not ``n`` positive integers.
    """
    try:
        c = tuple(int(k) for k in cells)
    except (TypeError, ValueError):
        c = ()
    if len(c) != n or c != tuple(cells) or min(c) < 1:
        raise ValueError(f"{name} must be {n} positive integers, got {checks.shown(cells)}")
    return c


def check_order(order: int) -> int:
    """Check a mesh's geometric order (1: straight-sided cells, 2: curved).

    Args:
        order: the order asked for.

    Returns:
        The order as an int.

    Raises:
        ValueError: an order other than 1 or 2.
    """
    if isinstance(order, bool) or order not in (1, 2):
        raise ValueError(f"order must be 1 (straight-sided cells) or 2 (curved cells, the "
                         f"default for round geometries), got {checks.shown(order)}")
    return int(order)


def check_rotor(shaft_length: float, shaft_radius: float, disk_radius: float, disk_thickness: float,
                disk_position: float, size: float, blades: int, blade_length: float,
                blade_width: float, blade_thickness: float) -> None:
    """Check the rotor geometry's arguments (see :func:`rotor_model`).

    Args:
        shaft_length: the shaft's length (m).
        shaft_radius: the shaft's radius (m).
        disk_radius: the disk's radius (m).
        disk_thickness: the disk's thickness along z (m).
        disk_position: the axial position of the disk's centre (m).
        size: the characteristic cell size (m).
        blades: the number of blades (0: none).
        blade_length: the blades' radial length (m).
        blade_width: the blades' width (m).
        blade_thickness: the blades' thickness (m).

    Raises:
        ValueError: a size not positive, a disk not larger than the shaft or not within
            it, a negative or non-integer number of blades.
    """
    check_sizes(shaft_length=shaft_length, shaft_radius=shaft_radius, disk_radius=disk_radius,
              disk_thickness=disk_thickness, size=size)
    if not disk_radius > shaft_radius:
        raise ValueError("disk_radius must exceed shaft_radius")
    if not 0 < disk_position - disk_thickness / 2 and \
            disk_position + disk_thickness / 2 < shaft_length:
        raise ValueError("the disk must lie within the shaft")
    if int(blades) != blades or blades < 0:
        raise ValueError(f"blades must be a non-negative integer, got {checks.shown(blades)}")
    if blades:
        check_sizes(blade_length=blade_length, blade_width=blade_width,
                  blade_thickness=blade_thickness)


def rotor_model(shaft_length: float = 0.6, shaft_radius: float = 0.02, disk_radius: float = 0.12,
                disk_thickness: float = 0.02, disk_position: float = 0.4, size: float = 0.015,
                blades: int = 0, blade_length: float = 0.08, blade_width: float = 0.03,
                blade_thickness: float = 0.004, order: int = 2) -> None:
    """The rotor of :func:`rotor` (same arguments), meshed in gmsh's current model.

    Args:
        shaft_length: the shaft's length (m).
        shaft_radius: the shaft's radius (m).
        disk_radius: the disk's radius (m).
        disk_thickness: the disk's thickness along z (m).
        disk_position: the axial position of the disk's centre (m).
        size: the characteristic cell size (m).
        blades: the number of blades (0: none).
        blade_length: the blades' radial length (m).
        blade_width: the blades' width (m).
        blade_thickness: the blades' thickness (m).
        order: the cells' geometric order: 2 (curved, on the round surfaces) or 1.
    """
    import gmsh
    import numpy as np

    check_rotor(shaft_length, shaft_radius, disk_radius, disk_thickness, disk_position, size,
                 blades, blade_length, blade_width, blade_thickness)
    order = check_order(order)
    occ = gmsh.model.occ
    shaft = occ.addCylinder(0, 0, 0, 0, 0, shaft_length, shaft_radius)
    z0 = disk_position - disk_thickness / 2
    disk = occ.addCylinder(0, 0, z0, 0, 0, disk_thickness, disk_radius)
    parts = [(3, disk)]
    for k in range(int(blades)):
        phi = 2 * np.pi * k / blades
        b = occ.addBox(disk_radius * 0.95, -blade_thickness / 2,
                       disk_position - blade_width / 2,
                       blade_length + disk_radius * 0.05, blade_thickness, blade_width)
        occ.rotate([(3, b)], 0, 0, 0, 0, 0, 1, phi)
        parts.append((3, b))
    vol, _ = occ.fuse([(3, shaft)], parts)
    occ.synchronize()
    gmsh.model.setPhysicalName(3, gmsh.model.addPhysicalGroup(3, [v[1] for v in vol], BODY),
                               "rotor")
    ends = {BEARING_A: [], BEARING_B: []}
    for dim, tag in gmsh.model.getEntities(2):
        c = gmsh.model.occ.getCenterOfMass(dim, tag)
        if abs(c[2]) < 1e-9 and np.hypot(c[0], c[1]) < shaft_radius:
            ends[BEARING_A].append(tag)
        elif abs(c[2] - shaft_length) < 1e-9 and np.hypot(c[0], c[1]) < shaft_radius:
            ends[BEARING_B].append(tag)
    for t, tags in ends.items():
        gmsh.model.addPhysicalGroup(2, tags, t)
        gmsh.model.setPhysicalName(2, t, "bearing_a" if t == BEARING_A else "bearing_b")
    with gmsh_options(**{"Mesh.CharacteristicLengthMax": size},
                  **({"Mesh.CharacteristicLengthMin": min(size, blade_thickness)}
                     if blades else {})):
        gmsh.model.mesh.generate(3)
        gmsh.model.mesh.setOrder(order)


def twisted_blade_model(span: float = 0.3, chord: float = 0.05, thickness: float = 0.004,
                        twist_degrees: float = 30.0, hub_radius: float = 0.0,
                        cells: Sequence[int] = (30, 5, 1)) -> None:
    """The blade of :func:`twisted_blade` (same arguments), meshed in gmsh's current model.

    Args:
        span: the blade's span along x (m).
        chord: the section's chord along y (m).
        thickness: the section's thickness along z at the root (m).
        twist_degrees: the twist of the tip against the root (degrees).
        hub_radius: the x of the root (m).
        cells: cells along the span, the chord and the thickness.
    """
    import gmsh

    check_sizes(span=span, chord=chord, thickness=thickness)
    if not (math.isfinite(twist_degrees) and math.isfinite(hub_radius)):
        raise ValueError(f"twist_degrees and hub_radius must be finite, got "
                         f"{twist_degrees!r}, {hub_radius!r}")
    n_span, n_chord, n_thick = cell_counts(cells, 3, "cells")
    geo = gmsh.model.geo
    c, t = chord / 2, thickness / 2
    p = [geo.addPoint(hub_radius, y, z) for y, z in ((-c, -t), (c, -t), (c, t), (-c, t))]
    lines = [geo.addLine(p[i], p[(i + 1) % 4]) for i in range(4)]
    root = geo.addPlaneSurface([geo.addCurveLoop(lines)])
    for line, n in zip(lines, (n_chord, n_thick, n_chord, n_thick)):
        geo.mesh.setTransfiniteCurve(line, n + 1)
    geo.mesh.setTransfiniteSurface(root)
    geo.mesh.setRecombine(2, root)
    # layers of hexahedra whose nodes lie on the sections rotated by twist * x / span
    out = geo.twist([(2, root)], 0, 0, 0, span, 0, 0, 1, 0, 0, math.radians(twist_degrees),
                    [n_span], [], True)
    geo.synchronize()
    (_, tip), (_, vol) = out[0], out[1]
    for dim, tags, tag, name in ((3, [vol], BODY, "blade"), (2, [root], ROOT, "root"),
                                 (2, [tip], TIP, "tip")):
        gmsh.model.addPhysicalGroup(dim, tags, tag)
        gmsh.model.setPhysicalName(dim, tag, name)
    gmsh.model.mesh.generate(3)


def strip_model(length: float = 10.0, height: float = KRB_HEIGHT,
                cells: Sequence[int] = (40, 1), name: str = "strip") -> None:
    """The strip of :func:`strip` (same arguments; ``name``: the cells' physical name), meshed
    in gmsh's current model.

    Args:
        length: the length (m).
        height: the strip's height (m).
        cells: ``(along, across)``.
        name: the cells' physical name.
    """
    import gmsh

    check_sizes(length=length, height=height)
    nx, ny = cell_counts(cells, 2, "cells")
    geo = gmsh.model.geo
    root = geo.addLine(geo.addPoint(0, -height / 2, 0), geo.addPoint(0, height / 2, 0))
    geo.mesh.setTransfiniteCurve(root, ny + 1)
    out = geo.extrude([(1, root)], length, 0, 0, [nx], [], True)
    geo.synchronize()
    (_, tip), (_, surface) = out[0], out[1]
    for dim, tags, tag, label in ((2, [surface], BODY, name), (1, [root], ROOT, "root"),
                                  (1, [tip], TIP, "tip")):
        gmsh.model.addPhysicalGroup(dim, tags, tag)
        gmsh.model.setPhysicalName(dim, tag, label)
    gmsh.model.mesh.generate(2)


def check_shaft(length: float, radius: float, size: float,
                cuts: Sequence[float]) -> Tuple[float, ...]:
    """Check the shaft geometry's arguments (see :func:`shaft_model`).

    Args:
        length: shaft length (m).
        radius: shaft radius (m).
        size: mesh size (m).
        cuts: axial positions of the cross-sections the mesh must contain (m).

    Returns:
        The cuts as floats.

    Raises:
        ValueError: a size not positive, cuts not strictly increasing within the shaft.
    """
    check_sizes(length=length, radius=radius, size=size)
    try:
        c = tuple(float(z) for z in cuts)
    except (TypeError, ValueError):
        raise ValueError(f"cuts must be axial positions (m), got {cuts!r}") from None
    if any(not 0.0 < z < length for z in c) or any(b <= a for a, b in zip(c, c[1:])):
        raise ValueError(f"cuts must increase strictly within (0, length={length:g}), got "
                         f"{cuts!r}")
    return c


def shaft_model(length: float = 1.0, radius: float = 0.02, size: float = 0.01,
                cuts: Sequence[float] = (), order: int = 2) -> None:
    """The shaft of :func:`dolfinx_mbs.meshes.shaft`, meshed in gmsh's current model.

    Args:
        length: the length (m).
        radius: the radius (m).
        size: the characteristic cell size (m).
        cuts: axial positions (m) of the cross-sections the mesh contains.
        order: the cells' geometric order: 2 (curved, on the round surface) or 1.
    """
    import gmsh

    c = check_shaft(length, radius, size, cuts)
    order = check_order(order)
    occ = gmsh.model.occ
    z = (0.0,) + c + (float(length),)
    pieces = [(3, occ.addCylinder(0, 0, z0, 0, 0, z1 - z0, radius)) for z0, z1 in
              zip(z[:-1], z[1:])]
    if len(pieces) > 1:
        occ.fragment(pieces[:1], pieces[1:])
    occ.synchronize()
    vols = [t for _, t in gmsh.model.getEntities(3)]
    gmsh.model.setPhysicalName(3, gmsh.model.addPhysicalGroup(3, vols, BODY), "shaft")
    groups = {BEARING_A: [], BEARING_B: []}
    for dim, tag in gmsh.model.getEntities(2):
        cz = gmsh.model.occ.getCenterOfMass(dim, tag)[2]
        lo, hi = (gmsh.model.getBoundingBox(dim, tag)[k] for k in (2, 5))
        if abs(hi - lo) < 1e-5 * length:  # a cross-section (OCC pads its boxes)
            if abs(cz) < 1e-5 * length:
                groups[BEARING_A].append(tag)
            elif abs(cz - length) < 1e-5 * length:
                groups[BEARING_B].append(tag)
            continue
        k = int(np.searchsorted(z, cz)) - 1
        groups.setdefault(SHAFT_SEGMENT + k, []).append(tag)
    for t, tags in sorted(groups.items()):
        gmsh.model.addPhysicalGroup(2, tags, t)
        gmsh.model.setPhysicalName(2, t, {BEARING_A: "bearing_a", BEARING_B: "bearing_b"}.get(
            t, f"segment{t - SHAFT_SEGMENT}"))
    with gmsh_options(**{"Mesh.CharacteristicLengthMax": size}):
        gmsh.model.mesh.generate(3)
        gmsh.model.mesh.setOrder(order)
