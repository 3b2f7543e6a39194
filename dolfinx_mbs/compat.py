"""The few DOLFINx API differences between 0.5 (Debian 12) and 0.9+ (current).

Feature detection first, version comparison never: the rest of the package calls the
names defined here and does not look at ``dolfinx.__version__``.
"""

from __future__ import annotations

import inspect

import numpy as np
import dolfinx
import dolfinx.fem
import dolfinx.fem.petsc as _fpetsc  # 0.9 and later need the explicit import
from petsc4py import PETSc

__all__ = [
    "scalar_type",
    "vector_space",
    "petsc_vec",
    "MUMPS_NULL_PIVOT_OPTIONS",
    "DOLFINX_VERSION",
]

DOLFINX_VERSION = tuple(int(p) for p in dolfinx.__version__.split(".")[:2])

#: Scalar type of the PETSc build DOLFINx was compiled against.
scalar_type = getattr(dolfinx, "default_scalar_type", PETSc.ScalarType)


def vector_space(mesh, degree: int, family: str = "Lagrange"):
    """A vector-valued Lagrange space with ``gdim`` components."""
    gdim = mesh.geometry.dim
    if hasattr(dolfinx.fem, "functionspace"):
        return dolfinx.fem.functionspace(mesh, (family, degree, (gdim,)))
    return dolfinx.fem.VectorFunctionSpace(mesh, (family, degree))


def petsc_vec(u) -> PETSc.Vec:
    """The PETSc vector (ghosted) that wraps a Function's dof array."""
    x = u.x
    if hasattr(x, "petsc_vec"):
        return x.petsc_vec
    return u.vector




def create_vector(form) -> PETSc.Vec:
    """A PETSc vector for assembling the linear form ``form`` (a compiled ``fem.Form``).

    DOLFINx >= 0.10 builds it from the form's function space; 0.5 to 0.9 from the form.
    """
    params = inspect.signature(_fpetsc.create_vector).parameters
    if "V" in params:
        return _fpetsc.create_vector(form.function_spaces[0])
    return _fpetsc.create_vector(form)


def ghost_owners(index_map) -> np.ndarray:
    """Owning rank of each ghost of an IndexMap."""
    o = index_map.owners
    return np.asarray(o() if callable(o) else o)


#: Relative threshold (MUMPS CNTL(3)) below which a pivot counts as null. The MUMPS of the
#: DOLFINx 0.9 stack (5.7, Debian 13) flags no null pivot at all with the default CNTL(3) = 0
#: where MUMPS 5.5 (Debian 12, DOLFINx 0.5) flags the rigid-body pivots of an unconstrained
#: body; with this explicit value both count the same.
MUMPS_NULL_PIVOT_THRESHOLD = 1e-12


#: Options (without prefix) that make MUMPS count null pivots (``INFOG(28)``) with the same
#: threshold under every MUMPS version; solvers take them as defaults (database options win).
MUMPS_NULL_PIVOT_OPTIONS = {"mat_mumps_icntl_24": 1,
                            "mat_mumps_cntl_3": MUMPS_NULL_PIVOT_THRESHOLD}


def colliding_cells(mesh, points: np.ndarray):
    """For each point (shape (n, 3)), the local cells that contain it (an AdjacencyList)."""
    from dolfinx import geometry

    tdim = mesh.topology.dim
    if hasattr(geometry, "bb_tree"):
        tree = geometry.bb_tree(mesh, tdim)
        cand = geometry.compute_collisions_points(tree, points)
    else:
        tree = geometry.BoundingBoxTree(mesh, tdim)
        cand = geometry.compute_collisions(tree, points)
    return geometry.compute_colliding_cells(mesh, cand, points)


def gmsh_model_to_mesh(model, comm, rank: int, gdim: int):
    """(mesh, cell_tags, facet_tags) of a gmsh model held on ``rank``, distributed over ``comm``.

    DOLFINx >= 0.10 has ``dolfinx.io.gmsh`` returning a ``MeshData``; earlier ``dolfinx.io.gmshio``
    returns a tuple.
    """

    try:
        from dolfinx.io import gmsh as reader
    except ImportError:
        reader = None
    if reader is None or not hasattr(reader, "model_to_mesh"):
        from dolfinx.io import gmshio as reader
    out = reader.model_to_mesh(model, comm, rank, gdim=gdim)
    if hasattr(out, "mesh"):
        return out.mesh, out.cell_tags, out.facet_tags
    return out[0], out[1], out[2]

