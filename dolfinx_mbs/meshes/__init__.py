"""Meshes of the demos' bodies made with gmsh (sectors of cyclic bodies among them:
:mod:`dolfinx_mbs.meshes.sectors`).

Also the committed ``meshes/*.msh``, read on all ranks.
"""

from dolfinx_mbs.meshes.builders import (
    PHYSICAL_GROUPS,
    available,
    gmsh_session,
    links,
    mesh_dir,
    physical_groups,
    read,
    rotor,
    shaft,
    strip,
    twisted_blade,
    write,
)
from dolfinx_mbs.meshes.geometries import (
    BEARING_A,
    BEARING_B,
    BODY,
    KRB_HEIGHT,
    ROOT,
    SHAFT_SEGMENT,
    TIP,
    rotor_model,
    shaft_model,
    strip_model,
    twisted_blade_model,
)
from dolfinx_mbs.meshes.sectors import (
    BLADE_TIP,
    BORE,
    HIGH,
    LOW,
    bladed_sector,
    bladed_sector_model,
    disk_sector,
    disk_sector_model,
)

__all__ = [
    "available",
    "BLADE_TIP",
    "bladed_sector",
    "bladed_sector_model",
    "BORE",
    "disk_sector",
    "disk_sector_model",
    "HIGH",
    "LOW",
    "BEARING_A",
    "BEARING_B",
    "BODY",
    "gmsh_session",
    "KRB_HEIGHT",
    "links",
    "mesh_dir",
    "physical_groups",
    "PHYSICAL_GROUPS",
    "read",
    "ROOT",
    "rotor",
    "rotor_model",
    "shaft",
    "SHAFT_SEGMENT",
    "shaft_model",
    "strip",
    "strip_model",
    "TIP",
    "twisted_blade",
    "twisted_blade_model",
    "write",
]
