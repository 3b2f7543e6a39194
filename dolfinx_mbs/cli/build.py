"""Building a case's model (:mod:`dolfinx_mbs.cli.case`): its mesh (a built-in box or rectangle,
a ``.msh`` file, or a gmsh script meshed on rank 0), material, frame, body, constraints and
loads, through the package's public API as a script would make them."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Dict, List, Mapping, Tuple, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.bodies.attachments import COEFFICIENTS, EXTRA
from dolfinx_mbs.cli.casefile import WORD_ARGUMENTS, CaseError, dotted

if TYPE_CHECKING:
    from dolfinx.mesh import Mesh, MeshTags
    from mpi4py import MPI
    from numpy.typing import ArrayLike

    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.cli.casefile import Path_
    from dolfinx_mbs.cli.reader import CaseReader
    from dolfinx_mbs.frames.base import Frame
    from dolfinx_mbs.materials.base import Material
    from dolfinx_mbs.model import Model

__all__ = ["build"]

#: a mesh file's physical groups: name -> (dimension, tag)
Groups = Mapping[str, Tuple[int, int]]

_CELLS = {"box": ("hexahedron", "tetrahedron"), "rectangle": ("quadrilateral", "triangle")}
# frame arguments that must be functions of time even when constant
_CALLABLE = {"Prescribed": {"rotation", "origin"}}


def build(case: CaseReader, comm: MPI.Comm) -> Tuple[Model, Body, MeshTags | None, Groups]:
    """The model of the case on ``comm``: ``(model, body, facet_tags, groups)``, groups the
    mesh file's physical groups (name -> (dim, tag); empty for built-in meshes).

    Args:
        case: the case.
        comm: the communicator (collective).

    Returns:
        ``(model, body, facet_tags, groups)``.
    """
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.model import Model  # the case is a user of the public API, like a script

    mesh, facet_tags, groups = _mesh(case, comm)
    body = case.call(("body",), Body, mesh, _material(case), _frame(case),
                     degree=case.integer(("body", "degree"), None, 1),
                     name=case.get(("body", "name")),
                     stiffening=case.word(("body", "stiffening"), ("prestress", "nonlinear")))
    g = case.value(("gravity",))
    model = case.call(("gravity",), Model, [body], gravity=g)
    for i in range(len(case.get(("clamp",), []))):
        p = ("clamp", i)
        case.call(p, model.clamp, body, components=_components(case, p + ("components",)),
                  name=case.get(p + ("name",)), **_selection(case, p, facet_tags, groups))
    for i in range(len(case.get(("prescribe",), []))):
        p = ("prescribe", i)
        if case.get(p + ("value",)) is None:
            raise case.error(p, "needs value = [...] (body-frame displacement, m)")
        case.call(p, model.prescribe, body, case.value(p + ("value",), time=True),
                   components=_components(case, p + ("components",)),
                   time_scale=case.value(p + ("time_scale",), 1.0),
                   name=case.get(p + ("name",)), **_selection(case, p, facet_tags, groups))
    for i in range(len(case.get(("load",), []))):
        _load(case, model, body, ("load", i), facet_tags, groups)
    for i in range(len(case.get(("bearing",), []))):
        p = ("bearing", i)
        coeffs = {k: case.value(p + (k,)) for k in case.get(p) if k in COEFFICIENTS + EXTRA}
        speeds = case.value(p + ("speeds",)) if case.get(p + ("speeds",)) is not None else None
        case.call(p, model.bearing, body, speeds=speeds, name=case.get(p + ("name",)),
                  extrapolate=case.flag(p + ("extrapolate",), False), **coeffs,
                  **_selection(case, p, facet_tags, groups))
    for i in range(len(case.get(("disk",), []))):
        p = ("disk", i)
        case.call(p, model.disk, body, mass=case.value(p + ("mass",), 0.0),
                  polar=case.value(p + ("polar",), 0.0),
                  diametral=case.value(p + ("diametral",), 0.0), name=case.get(p + ("name",)),
                  **_selection(case, p, facet_tags, groups))
    return model, body, facet_tags, groups


def _components(case: CaseReader, path: Path_) -> List[int] | None:
    v = case.get(path)
    if v is None:
        return None
    if not isinstance(v, list) or not all(isinstance(c, int) for c in v):
        raise case.error(path, f"must be a list of component indices, got {v!r}")
    return v


def _selection(case: CaseReader, path: Path_, facet_tags: MeshTags | None, groups: Groups
               ) -> Dict:
    where, facets = case.get(path + ("where",)), case.get(path + ("facets",))
    if (where is None) == (facets is None):
        raise case.error(path, "give exactly one of where = \"<expression of x, y, z>\" "
                               "(\"true\" for everywhere) or facets = <group name or tag>")
    if where is not None:
        return {"where": case.where(path + ("where",))}
    if facet_tags is None:
        raise case.error(path + ("facets",), "facets need a mesh file (type = \"file\" or "
                                             "\"gmsh\") with physical groups")
    if isinstance(facets, str):
        if facets not in groups:
            raise case.text.unknown(path + ("facets",), groups, "physical group",
                                    name=facets)
        dim, tag = groups[facets]
        if dim != facet_tags.dim:
            raise case.error(path + ("facets",), f"group {facets!r} has dimension {dim}, "
                                                 f"facets have {facet_tags.dim}")
    elif isinstance(facets, int) and not isinstance(facets, bool):
        tag = facets
    else:
        raise case.error(path + ("facets",), f"must be a group name or a tag, got {facets!r}")
    return {"facets": (facet_tags, tag)}


def _load(case: CaseReader, model: Model, body: Body, path: Path_, facet_tags: MeshTags | None,
          groups: Groups) -> None:
    kinds = [k for k in ("body_force", "traction", "point") if case.get(path + (k,))
             is not None]
    if len(kinds) != 1:
        raise case.error(path, "give exactly one of body_force, traction or point (with "
                               "force)")
    kind = kinds[0]
    local = case.flag(path + ("local",), True)
    if kind == "traction":
        sel = _selection(case, path, facet_tags, groups)
        case.call(path, model.apply_load, body, traction=case.value(
            path + ("traction",), time=True), local=local, **sel)
        return
    if case.get(path + ("where",)) is not None or case.get(path + ("facets",)) is not None:
        raise case.error(path, f"where/facets select a traction's facets, not a {kind}")
    if kind == "body_force":
        case.call(path, model.apply_load, body, body_force=case.value(
            path + ("body_force",), time=True), local=local)
    else:
        if case.get(path + ("force",)) is None:
            raise case.error(path, "a point load needs force = [...] (N)")
        case.call(path, model.apply_load, body, point=case.value(path + ("point",)),
                   force=case.value(path + ("force",), time=True), local=local)


def _mesh(case: CaseReader, comm: MPI.Comm) -> Tuple[Mesh, MeshTags | None, Groups]:
    from dolfinx import mesh as dmesh

    kind = case.get(("mesh", "type"))
    if kind in ("box", "rectangle"):
        d = 3 if kind == "box" else 2
        cell = case.word(("mesh", "cell"), _CELLS[kind], _CELLS[kind][0])
        assert cell is not None  # (a default is given)
        cells = case.get(("mesh", "cells"))
        if (not isinstance(cells, list) or len(cells) != d
                or not all(isinstance(c, int) and c >= 1 for c in cells)):
            raise case.error(("mesh", "cells"), f"must be {d} positive integers, "
                                                f"got {cells!r}")
        lower = _point(case, ("mesh", "lower"), d, np.zeros(d))
        if (case.get(("mesh", "size")) is None) == (case.get(("mesh", "upper")) is None):
            raise case.error(("mesh",), "give exactly one of size = [...] or upper = [...]")
        upper = (lower + _point(case, ("mesh", "size"), d) if case.get(("mesh", "size"))
                 is not None else _point(case, ("mesh", "upper"), d))
        if np.any(upper <= lower):
            raise case.error(("mesh",), f"the {kind} must have positive extents, got "
                                        f"{lower.tolist()} to {upper.tolist()}")
        ct = getattr(dmesh.CellType, cell)
        make = dmesh.create_box if d == 3 else dmesh.create_rectangle
        return make(comm, [lower, upper], cells, ct), None, {}
    gdim = case.integer(("mesh", "gdim"), None, 2)
    if kind == "file":
        path = _file(case, ("mesh", "path"))
        return _read(case, comm, path, gdim, ("mesh", "path"))
    return _gmsh(case, comm, gdim)


def _point(case: CaseReader, path: Path_, d: int, default: ArrayLike | None = None) -> np.ndarray:
    v = case.value(path, default)
    try:
        return checks.vector(v, d, dotted(path))
    except ValueError as e:
        raise case.error(path, str(e)) from None


def _file(case: CaseReader, path: Path_) -> str:
    v = case.get(path)
    if not isinstance(v, str):
        raise case.error(path, f"must be a file name, got {v!r}")
    near = case.path.parent / v
    if near.is_file():
        return str(near)
    if len(PurePath(v).parts) == 1:   # a bare name: a committed mesh's (meshes.read says)
        return v
    raise case.error(path, f"no file {v!r}: it is read from the case file's folder, "
                           f"{case.path.parent.resolve()}, as {near.resolve()}, which is not a "
                           "file")


def _read(case: CaseReader, comm: MPI.Comm, path: str, gdim: int | None,
          where: Path_) -> Tuple[Mesh, MeshTags | None, Groups]:
    from dolfinx_mbs import meshes

    try:
        mesh, _, facet_tags = meshes.read(path, comm, gdim=gdim)
        groups = meshes.physical_groups(path)
    except (OSError, ValueError, RuntimeError) as e:
        raise case.error(where, str(e)) from None
    return mesh, facet_tags, groups


def _gmsh(case: CaseReader, comm: MPI.Comm, gdim: int | None
          ) -> Tuple[Mesh, MeshTags | None, Groups]:
    """Run a gmsh script (.geo) on rank 0, mesh it (unless it meshes itself) to a
    temporary .msh file and read that on every rank."""
    script = _file(case, ("mesh", "script"))
    numbers = case.keys(("mesh", "numbers"), set(case.get(("mesh", "numbers"), {})))
    numbers = {k: case.value(("mesh", "numbers", k)) for k in numbers}
    msg, tmp = None, None
    if comm.rank == 0:
        fd, tmp = tempfile.mkstemp(suffix=".msh")
        os.close(fd)
        try:
            _run_gmsh_script(script, numbers, tmp)
        except Exception as e:  # noqa: BLE001 - gmsh raises plain Exception
            msg = f"gmsh script {script}: {e}"
    tmp = comm.bcast(tmp, root=0)
    try:
        checks.raise_everywhere(comm, msg, CaseError)
    except CaseError as e:
        raise case.error(("mesh", "script"), str(e)) from None
    try:
        return _read(case, comm, tmp, gdim, ("mesh", "script"))
    finally:
        comm.Barrier()
        if comm.rank == 0:
            os.unlink(tmp)


def _material(case: CaseReader) -> Material:
    from dolfinx_mbs import materials

    law = case.get(("material", "law"))
    kwargs = {k: (v if k in WORD_ARGUMENTS else case.value(("material", k)))
              for k, v in case.get(("material",)).items() if k != "law"}
    if "rayleigh" in kwargs and kwargs["rayleigh"] is not None:
        kwargs["rayleigh"] = tuple(kwargs["rayleigh"])
    return cast("Material", case.call(("material",), getattr(materials, law), **kwargs))


def _frame(case: CaseReader) -> Frame:
    from dolfinx_mbs import frames

    kind = case.get(("frame", "type"), "ConstantSpin")
    kwargs = {}
    for k, v in case.get(("frame",), {}).items():
        if k == "type":
            continue
        val = v if k in WORD_ARGUMENTS else case.value(("frame", k), time=True)
        if k in _CALLABLE.get(kind, ()) and not callable(val):
            val = (lambda c: (lambda t: c))(val)
        kwargs[k] = val
    return cast("Frame", case.call(("frame",), getattr(frames, kind), **kwargs))



def _run_gmsh_script(script: str, numbers: Dict[str, float], out: str) -> None:
    """Run ``script`` in a new gmsh model (``numbers`` set as its parser's variables first),
    mesh it in the dimension of its highest physical groups unless it meshed itself, and
    write the mesh to ``out``; the model is removed, gmsh left as it was found."""
    from dolfinx_mbs.meshes.builders import gmsh_session

    with gmsh_session(Path(script).stem) as gmsh:
        if hasattr(gmsh, "parser"):
            for k, v in numbers.items():
                gmsh.parser.setNumber(k, [float(v)])
            gmsh.merge(str(script))
        else:  # gmsh < 4.9 (Debian 12): the numbers as definitions before an Include
            with tempfile.TemporaryDirectory() as d:
                wrapper = Path(d) / "case.geo"
                wrapper.write_text("".join(f"{k} = {float(v)!r};\n" for k, v in numbers.items())
                                   + f'Include "{Path(script).resolve()}";\n')
                gmsh.merge(str(wrapper))
        groups = gmsh.model.getPhysicalGroups()
        dim = max((d for d, _ in groups), default=gmsh.model.getDimension())
        if len(gmsh.model.mesh.getElementTypes(dim)) == 0:
            gmsh.model.mesh.generate(dim)
        gmsh.write(out)
