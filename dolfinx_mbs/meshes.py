"""Meshes of rotating parts, made with gmsh (OpenCASCADE kernel) on rank 0 and distributed.

    mesh, cell_tags, facet_tags = meshes.rotor(MPI.COMM_WORLD)

Only geometry lives here; the physics is set up by the caller.
"""

from __future__ import annotations

from typing import Tuple

from mpi4py import MPI

from . import compat

__all__ = ["rotor", "BEARING_A", "BEARING_B"]

_STARTED = False

#: facet tags of the two shaft ends (the bearings)
BEARING_A, BEARING_B = 1, 2


def rotor(comm: MPI.Comm = MPI.COMM_WORLD, shaft_length: float = 0.6,
          shaft_radius: float = 0.02, disk_radius: float = 0.12, disk_thickness: float = 0.02,
          disk_position: float = 0.4, size: float = 0.015, blades: int = 0,
          blade_length: float = 0.08, blade_width: float = 0.03,
          blade_thickness: float = 0.004) -> Tuple[object, object, object]:
    """A shaft along z from 0 to ``shaft_length`` with a disk centred at ``disk_position``,
    optionally with ``blades`` flat radial blades on the disk's rim (a bladed disk).
    Tetrahedra of characteristic size ``size`` (finer on the blades). Facet tags
    :data:`BEARING_A` (z = 0) and :data:`BEARING_B` (z = shaft_length).

    Returns:
        (mesh, cell_tags, facet_tags), distributed over ``comm``.
    """
    import gmsh
    import numpy as np

    for name, v in (("shaft_length", shaft_length), ("shaft_radius", shaft_radius),
                    ("disk_radius", disk_radius), ("disk_thickness", disk_thickness),
                    ("size", size)):
        if not v > 0:
            raise ValueError(f"{name} must be positive, got {v!r}")
    if not disk_radius > shaft_radius:
        raise ValueError("disk_radius must exceed shaft_radius")
    if not 0 < disk_position - disk_thickness / 2 and \
            disk_position + disk_thickness / 2 < shaft_length:
        raise ValueError("the disk must lie within the shaft")
    global _STARTED
    if hasattr(gmsh, "isInitialized"):
        init = not gmsh.isInitialized()
        if init:
            gmsh.initialize()
    else:  # gmsh < 4.9 cannot tell: start it once per process and leave it running
        init = False
        if not _STARTED:
            gmsh.initialize()
            _STARTED = True
    gmsh.option.setNumber("General.Terminal", 0)
    gmsh.model.add("rotor")
    if comm.rank == 0:
        occ = gmsh.model.occ
        shaft = occ.addCylinder(0, 0, 0, 0, 0, shaft_length, shaft_radius)
        z0 = disk_position - disk_thickness / 2
        disk = occ.addCylinder(0, 0, z0, 0, 0, disk_thickness, disk_radius)
        parts = [(3, disk)]
        for k in range(blades):
            phi = 2 * np.pi * k / blades
            b = occ.addBox(disk_radius * 0.95, -blade_thickness / 2,
                           disk_position - blade_width / 2,
                           blade_length + disk_radius * 0.05, blade_thickness, blade_width)
            occ.rotate([(3, b)], 0, 0, 0, 0, 0, 1, phi)
            parts.append((3, b))
        vol, _ = occ.fuse([(3, shaft)], parts)
        occ.synchronize()
        vols = [v[1] for v in vol]
        gmsh.model.addPhysicalGroup(3, vols, 1)
        ends = {BEARING_A: [], BEARING_B: []}
        for dim, tag in gmsh.model.getEntities(2):
            c = gmsh.model.occ.getCenterOfMass(dim, tag)
            if abs(c[2]) < 1e-9 and np.hypot(c[0], c[1]) < shaft_radius:
                ends[BEARING_A].append(tag)
            elif abs(c[2] - shaft_length) < 1e-9 and np.hypot(c[0], c[1]) < shaft_radius:
                ends[BEARING_B].append(tag)
        for t, tags in ends.items():
            gmsh.model.addPhysicalGroup(2, tags, t)
        gmsh.option.setNumber("Mesh.CharacteristicLengthMax", size)
        if blades:
            gmsh.option.setNumber("Mesh.CharacteristicLengthMin", min(size, blade_thickness))
        gmsh.model.mesh.generate(3)
    try:
        return compat.gmsh_model_to_mesh(gmsh.model, comm, 0, gdim=3)
    finally:
        gmsh.model.remove()
        if init:
            gmsh.finalize()
