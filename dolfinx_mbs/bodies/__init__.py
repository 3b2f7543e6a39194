"""Elastic bodies: a mesh (or the user's space), a material and a frame; the loads applied to
them and the user's own forms."""

from dolfinx_mbs.bodies.attachments import Bearing, Disk, Unbalance
from dolfinx_mbs.bodies.body import Body
from dolfinx_mbs.bodies.loads import (
    AppliedLoads,
    Load,
    TimeVector,
    VectorLike,
    diameter,
    facet_measure,
    locate_node,
)
from dolfinx_mbs.bodies.rigid import RigidBody, rigid_inertia_forces
from dolfinx_mbs.bodies.user_forms import FORM_KINDS, UserForms

__all__ = [
    "RigidBody",
    "rigid_inertia_forces",
    "AppliedLoads",
    "Bearing",
    "Body",
    "diameter",
    "Disk",
    "facet_measure",
    "FORM_KINDS",
    "Load",
    "locate_node",
    "TimeVector",
    "Unbalance",
    "UserForms",
    "VectorLike",
]
