"""Meshes of the demos' bodies, made with gmsh on rank 0 and distributed over a communicator.

    mesh, cell_tags, facet_tags = meshes.rotor(MPI.COMM_WORLD)
    mesh, cell_tags, facet_tags = meshes.twisted_blade(MPI.COMM_WORLD)
    mesh, cell_tags, facet_tags = meshes.read("twisted_blade")   # the committed meshes/*.msh

Each geometry is defined once, by a ``*_model`` function that builds it into the current gmsh
model (mesh included): the builders here mesh it and hand it to DOLFINx's gmsh reader, and the
scripts of the repository's top-level ``meshes/`` folder write it to a ``.msh`` file
(:func:`write`). Tags (SI units throughout):

==================  ===========================  ==========================================
mesh                cells (:data:`BODY` = 1)     facets
==================  ===========================  ==========================================
rotor               "rotor" (tetrahedra)         :data:`BEARING_A` = 1 "bearing_a" (z = 0),
                                                 :data:`BEARING_B` = 2 "bearing_b" (z = L)
twisted_blade       "blade" (hexahedra)          :data:`ROOT` = 1 "root" (x = hub radius),
                                                 :data:`TIP` = 2 "tip" (x = hub radius + span)
strip, links        "strip" / "crank" /          :data:`ROOT` = 1 "root" (x = 0),
                    "coupler" (quadrilaterals)   :data:`TIP` = 2 "tip" (x = length)
==================  ===========================  ==========================================

:data:`PHYSICAL_GROUPS` lists the same per committed file. Only geometry lives here; the physics
is set up by the caller.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Mapping, Sequence, Tuple

from mpi4py import MPI

from dolfinx_mbs import compat
from dolfinx_mbs.meshes.geometries import (
    BEARING_A,
    BEARING_B,
    BODY,
    KRB_HEIGHT,
    ROOT,
    SHAFT_SEGMENT,
    TIP,
    cell_counts,
    check_order,
    check_rotor,
    check_shaft,
    check_sizes,
    gmsh_options,
    rotor_model,
    shaft_model,
    strip_model,
    twisted_blade_model,
)
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["rotor", "shaft", "SHAFT_SEGMENT",
           "twisted_blade", "strip", "links", "read", "write", "physical_groups",
           "available", "mesh_dir", "gmsh_session", "rotor_model", "twisted_blade_model",
           "strip_model",
           "BODY", "BEARING_A", "BEARING_B", "ROOT", "TIP", "KRB_HEIGHT", "PHYSICAL_GROUPS"]

_STARTED = False


#: physical groups of each committed mesh in ``meshes/``: name -> (dimension, tag)
PHYSICAL_GROUPS: Dict[str, Dict[str, Tuple[int, int]]] = {
    "rotor": {"rotor": (3, BODY), "bearing_a": (2, BEARING_A), "bearing_b": (2, BEARING_B)},
    "bladed_rotor": {"rotor": (3, BODY), "bearing_a": (2, BEARING_A),
                     "bearing_b": (2, BEARING_B)},
    "shaft": {"shaft": (3, BODY), "bearing_a": (2, BEARING_A), "bearing_b": (2, BEARING_B),
              **{f"segment{k}": (2, SHAFT_SEGMENT + k) for k in range(5)}},
    "twisted_blade": {"blade": (3, BODY), "root": (2, ROOT), "tip": (2, TIP)},
    "krb_strip": {"strip": (2, BODY), "root": (1, ROOT), "tip": (1, TIP)},
    "crank": {"crank": (2, BODY), "root": (1, ROOT), "tip": (1, TIP)},
    "coupler": {"coupler": (2, BODY), "root": (1, ROOT), "tip": (1, TIP)},
}

Meshes = Tuple[object, object, object]


# --- gmsh on rank 0, DOLFINx on all ranks

@contextlib.contextmanager
def gmsh_session(name: str) -> Iterator[ModuleType]:
    """A new current gmsh model ``name`` in a running gmsh (started here if it was not, and then
    finalized afterwards); the model is removed on leaving.

    Args:
        name: the model's name.

    Returns:
        The ``gmsh`` module.
    """
    import gmsh

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
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add(name)
        try:
            yield gmsh
        finally:
            gmsh.model.remove()
    finally:
        if init:
            gmsh.finalize()


def _cell_dim_and_gdim(gdim: int | None) -> Tuple[int, int]:
    """The current model's cell dimension (its highest physical groups) and the geometric
    dimension (``gdim``, or 3 for volumes and for nodes off the plane z = 0, else 2); checks
    what DOLFINx's reader needs: physical groups holding elements of one type."""
    import gmsh
    import numpy as np

    groups = gmsh.model.getPhysicalGroups()
    if not groups:
        raise ValueError("the gmsh model has no physical groups: DOLFINx reads only the cells "
                         "of physical groups")
    tdim = max(d for d, _ in groups)
    types = set()
    for d, tag in groups:
        if d == tdim:
            for e in gmsh.model.getEntitiesForPhysicalGroup(d, tag):
                types.update(int(t) for t in gmsh.model.mesh.getElementTypes(d, e))
    if len(types) != 1:
        raise ValueError(f"the physical groups of dimension {tdim} must hold elements of one "
                         f"type, found gmsh element types {sorted(types)}")
    if gdim is None:
        _, x, _ = gmsh.model.mesh.getNodes()
        x = np.asarray(x).reshape(-1, 3)
        gdim = 3 if tdim == 3 or np.any(x[:, 2] != 0) else 2
    if gdim not in (2, 3) or gdim < tdim:
        raise ValueError(f"gdim must be 2 or 3 and at least the cell dimension {tdim}, "
                         f"got {gdim!r}")
    return tdim, gdim


#: exceptions raised on rank 0 that every rank raises as they are (others become RuntimeError)
_PASSED_ON = (ValueError, TypeError, RuntimeError, OSError, FileNotFoundError, PermissionError,
              ImportError, ModuleNotFoundError)


def _distribute(comm: MPI.Comm, name: str, make: Callable[[], None],
                gdim: int | None, label: str | None = None) -> Meshes:
    """Run ``make`` (builds or loads the current gmsh model) on rank 0 and distribute the mesh.
    An exception on rank 0 is raised on every rank (same type for the usual built-in ones, else
    RuntimeError: gmsh raises plain ``Exception``), its message prefixed by ``label`` (default
    ``name``), so that no rank waits in the reader's collectives."""
    err = cause = model = None
    with contextlib.ExitStack() as stack:
        if comm.rank == 0:
            try:  # everything that can fail on rank 0 alone, gmsh's import included
                model = stack.enter_context(gmsh_session(name)).model
                make()
                _, gdim = _cell_dim_and_gdim(gdim)
            except Exception as e:
                cls = type(e) if type(e) in _PASSED_ON else RuntimeError
                what = f"{label or name}: {e}" if str(e) else f"{label or name}: {cls.__name__}"
                err, cause = (cls, what), e
        err, gdim = comm.bcast((err, gdim), root=0)
        if err is not None:
            raise err[0](err[1]) from cause
        return compat.gmsh_model_to_mesh(model, comm, 0, gdim=gdim)


def rotor(comm: MPI.Comm = MPI.COMM_WORLD, shaft_length: float = 0.6,
          shaft_radius: float = 0.02, disk_radius: float = 0.12, disk_thickness: float = 0.02,
          disk_position: float = 0.4, size: float = 0.015, blades: int = 0,
          blade_length: float = 0.08, blade_width: float = 0.03,
          blade_thickness: float = 0.004, order: int = 2) -> Meshes:
    """A shaft along z from 0 to ``shaft_length`` with a disk centred at ``disk_position``,
    optionally with ``blades`` flat radial blades on the disk's rim (a bladed disk).
    Tetrahedra of characteristic size ``size`` (finer on the blades), made with gmsh's
    OpenCASCADE kernel. Cell tag :data:`BODY`, facet tags :data:`BEARING_A` (z = 0) and
    :data:`BEARING_B` (z = shaft_length).

    Args:
        comm: the communicator the mesh is distributed over.
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
        order: the cells' geometric order: 2 (the default: second-order tetrahedra whose
            faces follow the round surfaces) or 1 (straight-sided: a polygonal section).

    Returns:
        (mesh, cell_tags, facet_tags), distributed over ``comm``.
    """
    check_order(order)
    args: Dict[str, Any] = dict(
                shaft_length=shaft_length, shaft_radius=shaft_radius, disk_radius=disk_radius,
                disk_thickness=disk_thickness, disk_position=disk_position, size=size,
                blades=blades, blade_length=blade_length, blade_width=blade_width,
                blade_thickness=blade_thickness)
    check_rotor(**args)  # on every rank
    return _distribute(comm, "rotor", lambda: rotor_model(**args, order=order), 3)


def shaft(comm: MPI.Comm = MPI.COMM_WORLD, length: float = 1.0, radius: float = 0.02,
          size: float = 0.01, cuts: Sequence[float] = (), order: int = 2) -> Meshes:
    """A solid circular shaft along z from 0 to ``length`` (tetrahedra of size ``size``),
    cut at the axial positions ``cuts`` into segments whose lateral surfaces are tagged apart
    (journals and disk seats). Cell tag :data:`BODY`; facet tags :data:`BEARING_A` (z = 0),
    :data:`BEARING_B` (z = length) and :data:`SHAFT_SEGMENT` + k for the lateral surface of
    the k-th segment (k = 0 from z = 0).

    Args:
        comm: the communicator the mesh is distributed over.
        length: the length (m).
        radius: the radius (m).
        size: the characteristic cell size (m).
        cuts: axial positions (m) of the cross-sections the mesh contains.
        order: the cells' geometric order: 2 (the default: second-order tetrahedra whose
            faces follow the round surface, so the section's area and second moment are
            those of the circle) or 1 (straight-sided: a polygonal section whose area and
            second moment fall short of the circle's, and the frequencies with them).

    Returns:
        (mesh, cell_tags, facet_tags), distributed over ``comm``.
    """
    check_shaft(length, radius, size, cuts)
    check_order(order)
    return _distribute(comm, "shaft", lambda: shaft_model(length, radius, size, cuts, order),
                       3)


def twisted_blade(comm: MPI.Comm = MPI.COMM_WORLD, span: float = 0.3, chord: float = 0.05,
                  thickness: float = 0.004, twist_degrees: float = 30.0,
                  hub_radius: float = 0.0, cells: Sequence[int] = (30, 5, 1)) -> Meshes:
    """A thin blade of rectangular section (``chord`` along y, ``thickness`` along z at the
    root) spanning x from ``hub_radius`` to ``hub_radius + span``, pretwisted linearly about
    its span axis (the x axis): the section at x is the root's turned by
    ``twist_degrees * (x - hub_radius) / span`` (right-handed about +x).

    Hexahedra, ``cells = (along the span, along the chord, through the thickness)``; their nodes
    lie on the exact twisted sections, the faces between two sections are ruled. The mesh's
    volume is span * chord * thickness * (1 - (1 - cos(d)) / 3) with d = twist / cells[0] (each
    layer's trilinear sections shrink between its ends). Cell tag :data:`BODY`, facet tags
    :data:`ROOT` and :data:`TIP` (both faces exact rectangles chord x thickness).

    Args:
        comm: the communicator the mesh is distributed over.
        span: the blade's span along x (m).
        chord: the section's chord along y (m).
        thickness: the section's thickness along z at the root (m).
        twist_degrees: the twist of the tip against the root (degrees).
        hub_radius: the x of the root (m).
        cells: cells along the span, the chord and the thickness.

    Returns:
        (mesh, cell_tags, facet_tags), distributed over ``comm``.
    """
    check_sizes(span=span, chord=chord, thickness=thickness)
    cells = cell_counts(cells, 3, "cells")
    return _distribute(comm, "twisted_blade", lambda: twisted_blade_model(
        span, chord, thickness, twist_degrees, hub_radius, cells), 3)


def strip(comm: MPI.Comm = MPI.COMM_WORLD, length: float = 10.0, height: float = KRB_HEIGHT,
          cells: Sequence[int] = (40, 1), name: str = "strip") -> Meshes:
    """A 2D strip [0, length] x [-height/2, height/2] of quadrilaterals, ``cells = (along,
    across)``. The defaults are Kane, Ryan & Banerjee's spin-up beam (demos/spin_up_beam.py:
    L = 10 m, h = :data:`KRB_HEIGHT`). Cell tag :data:`BODY`, facet tags :data:`ROOT` (x = 0)
    and :data:`TIP` (x = length).

    Args:
        comm: the communicator the mesh is distributed over.
        length: the length (m).
        height: the strip's height (m).
        cells: ``(along, across)``.
        name: the model's name in gmsh.

    Returns:
        (mesh, cell_tags, facet_tags), distributed over ``comm``.
    """
    check_sizes(length=length, height=height)
    cells = cell_counts(cells, 2, "cells")
    return _distribute(comm, name, lambda: strip_model(length, height, cells, name), 2)


def links(comm: MPI.Comm = MPI.COMM_WORLD, crank: float = 0.1, coupler: float = 0.3,
          side: float = 0.01, cells: Sequence[Sequence[int]] = ((8, 2), (24, 2))
          ) -> Tuple[Meshes, Meshes]:
    """The slider-crank's two links of demos/elastic_linkage.py: strips of width ``side``
    and lengths ``crank`` and ``coupler`` (m), each along x from 0 in its own frame, with
    ``cells`` = ((along, across) of the crank, (along, across) of the coupler). Facet tags
    :data:`ROOT` (x = 0: the crank's motor pivot, the coupler's crank pin) and :data:`TIP`
    (x = length: the crank pin, the coupler's slider pin).

    Args:
        comm: the communicator the mesh is distributed over.
        crank: the crank's length (m).
        coupler: the coupler's length (m).
        side: the links' width (m).
        cells: ``(along, across)`` of the crank, then of the coupler.

    Returns:
        ((mesh, cell_tags, facet_tags) of the crank, the same of the coupler).
    """
    if len(cells) != 2:
        raise ValueError(f"cells must be two (along, across) pairs, got {cells!r}")
    return (strip(comm, crank, side, cells[0], "crank"),
            strip(comm, coupler, side, cells[1], "coupler"))


# --- files

def mesh_dir() -> Path:
    """The folder of the committed meshes: ``$DOLFINX_MBS_MESHES`` if set, else the top-level
    ``meshes/`` of the source tree the package lives in (a source checkout or an editable
    install), else the copy an installed wheel carries (``dolfinx_mbs/mesh_files``)."""
    env = os.environ.get("DOLFINX_MBS_MESHES")
    if env:
        return Path(env)
    package = Path(__file__).resolve().parent.parent
    tree = package.parent / "meshes"
    if tree.is_dir():
        return tree
    return package / "mesh_files"


def available() -> list:
    """Names of the committed meshes (the ``.msh`` files of :func:`mesh_dir`)."""
    d = mesh_dir()
    return sorted(p.stem for p in d.glob("*.msh")) if d.is_dir() else []


def _locate(path_or_name: str | Path) -> Path:
    p = Path(path_or_name)
    if p.is_file():
        return p
    d = mesh_dir()
    tried = [p]
    if len(p.parts) == 1:  # a bare name: a committed mesh
        q = d / (p.name if p.suffix == ".msh" else p.name + ".msh")
        if q.is_file():
            return q
        tried.append(q)
    names = available()
    where = (f"committed meshes in {d}: {', '.join(names)}" if names else
             f"no committed meshes found in {d} (they ship with the source tree and the "
             "wheel; set DOLFINX_MBS_MESHES to a folder of .msh files otherwise)")
    looked = " and ".join(str(t.resolve()) for t in tried)
    raise FileNotFoundError(f"no mesh {str(path_or_name)!r}: looked for {looked}, and "
                            f"{'neither is a file' if len(tried) > 1 else 'it is not a file'}"
                            f"; {where}")


def read(path_or_name: str | Path, comm: MPI.Comm = MPI.COMM_WORLD,
         gdim: int | None = None) -> Meshes:
    """Read a gmsh ``.msh`` file on rank 0 and distribute it over ``comm`` with DOLFINx's gmsh
    reader (cells: the physical groups of the highest dimension; facets: those one below).

    Args:
        path_or_name: a file, or the name of a committed mesh (``"twisted_blade"``, see
            :func:`available` and :data:`PHYSICAL_GROUPS`).
        comm: the communicator.
        gdim: geometric dimension; default 3 for volume meshes and meshes off the plane z = 0,
            else 2.

    Returns:
        (mesh, cell_tags, facet_tags).

    Raises:
        FileNotFoundError: on every rank, naming what was looked for and the committed meshes.
        TypeError: ``path_or_name`` not a string or path, or ``comm`` not a communicator (the
            two swapped, as ``read(comm, "shaft")``).
    """
    if not isinstance(path_or_name, (str, os.PathLike)) or not isinstance(comm, MPI.Comm):
        raise TypeError("read(path_or_name, comm=MPI.COMM_WORLD, gdim=None): path_or_name must "
                        f"be a file or a committed mesh's name, got {type(path_or_name).__name__}"
                        f", and comm an MPI communicator, got {type(comm).__name__}")
    path: str | FileNotFoundError | None = None
    if comm.rank == 0:
        try:
            path = str(_locate(path_or_name))
        except FileNotFoundError as e:
            path = e
    path = comm.bcast(path, root=0)
    if isinstance(path, FileNotFoundError):
        raise FileNotFoundError(str(path))

    def merge() -> None:
        import gmsh

        gmsh.merge(path)

    return _distribute(comm, Path(path).stem, merge, gdim, label=path)


def physical_groups(path_or_name: str | Path) -> Mapping[str, Tuple[int, int]]:
    """The named physical groups of a ``.msh`` file (its ``$PhysicalNames`` section):
    name -> (dimension, tag). Local (no communication); reads the text, not the mesh.

    Args:
        path_or_name: a ``.msh`` file, or the name of a committed mesh.

    Returns:
        ``{name: (dimension, tag)}``, read-only.
    """
    groups: Dict[str, Tuple[int, int]] = {}
    with open(_locate(path_or_name), "rb") as f:
        for line in f:
            if line.strip() == b"$PhysicalNames":
                n = int(f.readline())
                for _ in range(n):
                    dim, tag, name = f.readline().decode().split(maxsplit=2)
                    groups[name.strip().strip('"')] = (int(dim), int(tag))
                break
            if line.strip() in (b"$Nodes", b"$Elements"):
                break
    return FrozenMapping(groups)


def write(model: str | Callable[..., None], path: str | Path, **kwargs: object) -> Path:
    """Build a geometry (a ``*_model`` function or its name: ``"rotor"``, ``"twisted_blade"``,
    ``"strip"``) with ``kwargs`` in gmsh and write its mesh and physical groups to ``path``
    (MSH 4.1, ASCII). Serial: run it on one process.

    Args:
        model: a ``*_model`` function or its name.
        path: the file to write.
        **kwargs: the geometry's arguments.

    Returns:
        The path written.
    """
    import gmsh

    if isinstance(model, str):
        models: Dict[str, Callable[..., None]] = {"rotor": rotor_model, "shaft": shaft_model,
                  "twisted_blade": twisted_blade_model, "strip": strip_model}
        if model not in models:
            raise ValueError(f"model must be one of {sorted(models)} or a function, "
                             f"got {model!r}")
        model = models[model]
    path = Path(path)
    with gmsh_session(path.stem):
        model(**kwargs)
        _cell_dim_and_gdim(None)
        with gmsh_options(**{"Mesh.MshFileVersion": 4.1, "Mesh.Binary": 0, "Mesh.SaveAll": 0}):
            gmsh.write(str(path))
    return path
