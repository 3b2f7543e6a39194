"""The DOLFINx API differences between 0.5 (Debian 12), 0.9 (Debian 13) and 0.11 (PyPI, the
canonical spelling), and the MPI launcher that belongs to the interpreter.

Feature detection first, version comparison never: the rest of the package calls the
names defined here and does not look at ``dolfinx.__version__``.
"""

from __future__ import annotations

import inspect
import logging
import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any, Iterable, Tuple, cast

import dolfinx
import dolfinx.fem
import dolfinx.fem.petsc as _fpetsc  # 0.9 and later need the explicit import
import dolfinx.io
import numpy as np
import ufl
from mpi4py import MPI
from petsc4py import PETSc

if TYPE_CHECKING:
    from dolfinx.common import IndexMap
    from dolfinx.fem import FunctionSpace
    from dolfinx.graph import AdjacencyList
    from dolfinx.mesh import Mesh, MeshTags

__all__ = [
    "scalar_type",
    "vector_space",
    "scalar_space",
    "petsc_vec",
    "MUMPS_NULL_PIVOT_OPTIONS",
    "point_ownership",
    "has_vtx",
    "vtx_writer",
    "create_vector",
    "space_vector",
    "form",
    "expression",
    "eval_expression",
    "EXPRESSIONS_KEPT",
    "gmsh_model_to_mesh",
    "mpiexec_command",
    "alpha2_restart_step",
    "mat_solve",
    "cell_table",
    "geometry_dofmap",
    "geometry_degree",
    "SNES_DIVERGED_NAN",
    "cell_type_name",
    "vtk_mesh",
    "create_mesh",
    "input_global_indices",
]


class _CompilerChatter(logging.Filter):
    """Drops the C compiler's INFO lines (``running build_ext``, the gcc command lines) that
    setuptools' distutils logs on the root logger while the form compiler builds a form; with the
    root logger at INFO (FFCx 0.5 configures it) a first run printed some forty per rank."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or "distutils" not in record.pathname


if not any(isinstance(f, _CompilerChatter) for f in logging.getLogger().filters):
    logging.getLogger().addFilter(_CompilerChatter())

#: Scalar type of the PETSc build DOLFINx was compiled against.
scalar_type = getattr(dolfinx, "default_scalar_type", PETSc.ScalarType)


def vector_space(mesh: Mesh, degree: int, family: str = "Lagrange") -> FunctionSpace:
    """A vector-valued Lagrange space with ``gdim`` components.

    Args:
        mesh: the mesh.
        degree: the polynomial degree.
        family: the element family.

    Returns:
        The space.
    """
    gdim = mesh.geometry.dim
    if hasattr(dolfinx.fem, "functionspace"):
        return dolfinx.fem.functionspace(mesh, (family, degree, (gdim,)))
    return dolfinx.fem.VectorFunctionSpace(mesh, (family, degree))


def scalar_space(mesh: Mesh, degree: int, family: str = "Lagrange") -> FunctionSpace:
    """A scalar space of ``family`` and ``degree`` on ``mesh``.

    Args:
        mesh: the mesh.
        degree: the polynomial degree.
        family: the element family.

    Returns:
        The space.
    """
    if hasattr(dolfinx.fem, "functionspace"):
        return dolfinx.fem.functionspace(mesh, (family, degree))
    return dolfinx.fem.FunctionSpace(mesh, (family, degree))


def value_shape(V: FunctionSpace) -> tuple:
    """The value shape of a function space's functions.

    Args:
        V: a function space.

    Returns:
        The shape.
    """
    return tuple(ufl.shape(dolfinx.fem.Function(V)))


def same_space(V: FunctionSpace, W: FunctionSpace) -> bool:
    """Whether two function spaces are the same space: one mesh, one element, one dofmap.

    Args:
        V: a function space.
        W: another function space.

    Returns:
        Whether they are the same.
    """
    if V is W:
        return True
    cv, cw = getattr(V, "_cpp_object", V), getattr(W, "_cpp_object", W)
    if cv is cw:
        return True
    mv, mw = V.mesh, W.mesh
    if getattr(mv, "_cpp_object", mv) is not getattr(mw, "_cpp_object", mw):
        return False
    return bool(V.ufl_element() == W.ufl_element() and
                V.dofmap.index_map.size_local == W.dofmap.index_map.size_local)


def vtk_mesh(V: FunctionSpace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """VTK cells, cell types and node coordinates of a Lagrange space's owned cells.

    DOLFINx's ``dolfinx.plot.vtk_mesh(V)`` (``create_vtk_mesh`` before 0.7): the nodes are the
    space's local dof coordinates (owned and ghost), numbered as its dofmap's blocks.

    Args:
        V: a function space.

    Returns:
        ``(cells, types, coordinates)``.
    """
    import dolfinx.plot

    make = getattr(dolfinx.plot, "vtk_mesh", None) or dolfinx.plot.create_vtk_mesh
    return cast("tuple[np.ndarray, np.ndarray, np.ndarray]", make(V))


def same_mesh(V: FunctionSpace, W: FunctionSpace) -> bool:
    """Whether two function spaces are on the same mesh object.

    Args:
        V: a function space.
        W: another function space.

    Returns:
        Whether they share the mesh.
    """
    mv, mw = V.mesh, W.mesh
    return mv is mw or getattr(mv, "_cpp_object", mv) is getattr(mw, "_cpp_object", mw)


def space_degree(V: FunctionSpace) -> int:
    """The polynomial degree of a Lagrange-type space (its element's embedded superdegree).

    Args:
        V: a function space.

    Returns:
        The degree.
    """
    e = V.ufl_element()
    d = getattr(e, "embedded_superdegree", None)
    if d is None:  # UFL of DOLFINx 0.5
        d = e.degree()
    return int(d)


def geometry_degree(mesh: Mesh) -> int:
    """The degree of a mesh's coordinate element: 1 for straight-sided cells, 2 for curved
    (second-order) ones. DOLFINx 0.10 holds the coordinate elements as ``cmaps``, earlier
    versions one ``cmap``.

    Args:
        mesh: the mesh.

    Returns:
        The degree.
    """
    g = mesh.geometry
    cmaps = getattr(g, "cmaps", None)
    return int((cmaps[0] if cmaps else g.cmap).degree)


#: SNES's reason for a residual that is not finite: DIVERGED_FUNCTION_NANORINF (PETSc 3.25),
#: DIVERGED_FNORM_NAN in older PETSc (3.18)
SNES_DIVERGED_NAN = getattr(PETSc.SNES.ConvergedReason, "DIVERGED_FUNCTION_NANORINF", None)
if SNES_DIVERGED_NAN is None:  # pragma: no cover - older PETSc
    SNES_DIVERGED_NAN = PETSc.SNES.ConvergedReason.DIVERGED_FNORM_NAN


#: compiled forms of this process by UFL signature, with their coefficients and constants in
#: order (:func:`form`)
_COMPILED: dict = {}


def form(a: ufl.Form) -> "dolfinx.fem.Form":
    """``fem.form(a)``, the compiled code looked up in this process first (DOLFINx >= 0.8:
    ``compile_form`` once per signature, ``create_form`` with this form's mesh, spaces,
    coefficients and constants). FFCx's own lookup lists its cache directory for every form
    (~8 ms with 6,000 cached modules): a model made again (a parameter study) paid it for every
    form. The bodies' forms (``assembly``) are made through it. Forms with subdomain data,
    several domains, no argument or no integral go to ``fem.form``.

    The first form of a signature (its mesh and coefficients) is kept for the process.

    Args:
        a: the UFL form.

    Returns:
        The compiled form.
    """
    fem = dolfinx.fem
    if not (hasattr(fem, "compile_form") and hasattr(fem, "create_form")) or \
            not isinstance(a, ufl.Form) or not a.integrals():
        return fem.form(a)
    sd = a.subdomain_data()
    if len(sd) != 1:
        return fem.form(a)
    (domain, data), = sd.items()
    if any(d is not None for ds in data.values() for d in ds):
        return fem.form(a)
    spaces = [arg.ufl_function_space() for arg in a.arguments()]
    if not spaces:
        return fem.form(a)
    msh = spaces[0].mesh
    key = a.signature()
    kept = _COMPILED.get(key)
    # compile_form is collective: every rank compiles where one has not (a process that ran a
    # model on COMM_SELF alone has forms the others lack)
    if not msh.comm.allreduce(kept is not None, op=MPI.LAND):
        compiled = fem.compile_form(msh.comm, a)
        kept = _COMPILED[key] = (compiled, compiled.ufl_form.coefficients(),
                                 compiled.ufl_form.constants())
    assert kept is not None  # every rank has compiled it by now
    compiled, coefficients, constants = kept
    # the forms of one signature number their coefficients and constants alike (by count: the
    # order the signature renumbers them in, which a.signature() has found for a)
    coeffs = dict(zip(coefficients, a.coefficients()))
    consts = dict(zip(constants, a.constants()))
    domains = {fem.IntegralType.__members__[t]: [] for t in data}
    return fem.create_form(compiled, spaces, msh, domains, coeffs, consts)


#: compiled expressions of this process by FFCx's signature (:func:`expression`)
_EXPRESSIONS: dict = {}


def _expression_creator() -> Any:
    """DOLFINx's C++ expression constructor where ``fem.Expression`` wraps it with entity maps
    and evaluates on (mesh, entities) (0.10 and later), else None."""
    create = getattr(dolfinx.cpp.fem, "create_expression_float64", None)
    params = inspect.signature(dolfinx.fem.Expression.__init__).parameters
    if create is None or "entity_maps" not in params \
            or "mesh" not in inspect.signature(dolfinx.fem.Expression.eval).parameters:
        return None
    return create


#: DOLFINx's C++ expression constructor (:func:`_expression_creator`), None before 0.10
_CREATE_EXPRESSION = _expression_creator()
#: True where :func:`expression` reuses compiled code (a fresh model's expression costs its
#: UFL signature, not FFCx's cache lookup of ~10 ms)
EXPRESSIONS_KEPT = _CREATE_EXPRESSION is not None
#: whether ``fem.Expression.eval`` takes the mesh (0.9 and later)
_EVAL_TAKES_MESH = "mesh" in inspect.signature(dolfinx.fem.Expression.eval).parameters


def expression(e: ufl.core.expr.Expr, X: np.ndarray, comm: MPI.Comm, key: str | None = None
               ) -> "dolfinx.fem.Expression":
    """``fem.Expression(e, X)`` (float64), the compiled code looked up in this process first
    where :data:`EXPRESSIONS_KEPT` (FFCx's own lookup lists its cache directory each time, as
    for :func:`form`); elsewhere ``fem.Expression``. Collective.

    Args:
        e: the UFL expression (at most one argument).
        X: the points on the reference cell (points x tdim).
        comm: the communicator of the mesh.
        key: a string that fixes ``e``'s code (with ``X``) where the caller knows one that
            costs less than UFL's signature of ``e`` (the same on every rank); None: that
            signature.

    Returns:
        The expression, evaluated with :func:`eval_expression`.
    """
    fem = dolfinx.fem
    X = np.ascontiguousarray(X, dtype=np.float64)
    create = _CREATE_EXPRESSION
    if create is None:
        return fem.Expression(e, X)
    from ffcx.naming import compute_signature
    from ufl.algorithms import analysis
    from ufl.argument import BaseArgument
    from ufl.coefficient import BaseCoefficient
    from ufl.constant import Constant
    key = compute_signature([(e, X)], "float64") if key is None else \
        "given:" + key + ":" + X.tobytes().hex()
    hit = _EXPRESSIONS.get(key)
    if not comm.allreduce(hit is not None, op=MPI.LAND):  # compiled on every rank or none
        ufcx, module, code = dolfinx.jit.ffcx_jit(
            comm, (e, X), form_compiler_options={"scalar_type": np.float64})
        hit = _EXPRESSIONS[key] = (ufcx, module, code)
    ufcx, module, code = cast(tuple, hit)
    # the terminals in one traversal, each kind sorted as UFL's extract_* sort it
    found = analysis.extract_type(e, (BaseCoefficient, Constant, BaseArgument))
    original = sorted((t for t in found if isinstance(t, BaseCoefficient)),
                      key=lambda t: t.count())
    coeffs = [original[ufcx.original_coefficient_positions[i]]._cpp_object
              for i in range(ufcx.num_coefficients)]
    consts = [c._cpp_object for c in sorted((t for t in found if isinstance(t, Constant)),
                                            key=lambda t: t.count())]
    args = sorted((t for t in found if isinstance(t, BaseArgument)),
                  key=lambda t: (t.number(), t.part() or 0))
    space = args[0].ufl_function_space()._cpp_object if args else None
    ex = fem.Expression.__new__(fem.Expression)
    ex._ufcx_expression, ex._code, ex._ufl_expression = ufcx, code, e
    ex._argument_space = space
    ex._cpp_object = create(module.ffi.cast("uintptr_t", module.ffi.addressof(ufcx)),
                            coeffs, consts, [], space)
    return ex


def eval_expression(ex: "dolfinx.fem.Expression", mesh: Mesh, cells: np.ndarray) -> np.ndarray:
    """An expression's values on ``cells`` (0.9 and later: ``eval(mesh, cells)``; 0.5:
    ``eval(cells)``), as (cells, the rest flattened).

    Args:
        ex: the expression (:func:`expression`).
        mesh: its mesh.
        cells: local cell indices.

    Returns:
        The values.
    """
    cells = np.asarray(cells, dtype=np.int32)
    if _EVAL_TAKES_MESH:
        out = ex.eval(mesh, cells)
    else:  # pragma: no cover - DOLFINx 0.5
        out = ex.eval(cells)
    return np.asarray(out).reshape(len(cells), -1)


def petsc_vec(u: dolfinx.fem.Function) -> PETSc.Vec:
    """The PETSc vector (ghosted) that wraps a Function's dof array.

    Args:
        u: the Function.

    Returns:
        The vector.
    """
    x = u.x
    if hasattr(x, "petsc_vec"):
        return x.petsc_vec
    return u.vector




def create_vector(form: dolfinx.fem.Form) -> PETSc.Vec:
    """A PETSc vector for assembling the linear form ``form`` (a compiled ``fem.Form``).

    DOLFINx >= 0.10 builds it from the form's function space; 0.5 to 0.9 from the form.

    Args:
        form: the compiled linear form.

    Returns:
        The vector.
    """
    params = inspect.signature(_fpetsc.create_vector).parameters
    if "V" in params:
        return _fpetsc.create_vector(form.function_spaces[0])
    return _fpetsc.create_vector(form)


def space_vector(V: FunctionSpace) -> PETSc.Vec:
    """A ghosted PETSc vector of the space ``V`` (its dofs' layout, as an assembled linear
    form's on ``V``).

    Args:
        V: the function space.

    Returns:
        The vector.
    """
    if "V" in inspect.signature(_fpetsc.create_vector).parameters:
        return _fpetsc.create_vector(V)
    import dolfinx.la as _la  # pragma: no cover - DOLFINx 0.5 to 0.9
    return _la.create_petsc_vector(V.dofmap.index_map, V.dofmap.index_map_bs)


def ghost_owners(index_map: IndexMap) -> np.ndarray:
    """Owning rank of each ghost of an IndexMap.

    Args:
        index_map: the IndexMap.

    Returns:
        The owners' ranks.
    """
    o = index_map.owners
    return np.asarray(o() if callable(o) else o)


def cell_table(table: np.ndarray | AdjacencyList) -> np.ndarray:
    """A per-cell table as an (n_cells, k) array.

    A mesh's geometry dofmap or a dofmap's ``list``, a row per local cell (ghosts included):
    an ndarray from 0.7 on, an AdjacencyList of fixed degree in 0.5.

    Args:
        table: the table (ndarray, or AdjacencyList in 0.5).

    Returns:
        The array.
    """
    if isinstance(table, np.ndarray):
        return table
    n = len(table.offsets) - 1
    return np.asarray(table.array).reshape(n, -1) if n else np.zeros((0, 0), np.int32)


def geometry_dofmap(mesh: Mesh) -> np.ndarray:
    """The nodes of each local cell of a mesh's geometry, (n_cells, nodes per cell).

    Args:
        mesh: the mesh.

    Returns:
        The array.
    """
    g = mesh.geometry
    if not hasattr(g, "dofmaps"):
        return cell_table(g.dofmap)
    maps = g.dofmaps
    return cell_table(maps(0) if callable(maps) else maps[0])


def input_global_indices(mesh: Mesh) -> np.ndarray:
    """The index each local geometry node had in the input of the mesh's creation.

    Args:
        mesh: the mesh.

    Returns:
        The indices, one per local geometry node (an int64 array).
    """
    return np.asarray(mesh.geometry.input_global_indices, dtype=np.int64)


def create_mesh(comm: MPI.Comm, cells: np.ndarray, x: np.ndarray, like: Mesh) -> Mesh:
    """A mesh of cells of ``like``'s cell type and coordinate element, distributed over
    ``comm`` by DOLFINx's partitioner: ``cells`` (DOLFINx's node order, rows of global node
    indices) and ``x`` (the nodes' coordinates, in the order of their indices), both given on
    any ranks (rows of ``x`` in rank order).

    Args:
        comm: the communicator.
        cells: (n, nodes per cell) global node indices.
        x: (m, gdim) coordinates.
        like: a mesh whose cell type and coordinate element the new one takes.

    Returns:
        The mesh.
    """
    from dolfinx import mesh as dmesh

    cells = np.asarray(cells, dtype=np.int64)
    x = np.ascontiguousarray(x, dtype=like.geometry.x.dtype)
    params = list(inspect.signature(dmesh.create_mesh).parameters)
    if params.index("x") == 2:  # 0.5 to 0.9: (comm, cells, x, domain); later (comm, cells, e, x)
        return dmesh.create_mesh(comm, cells, x, like.ufl_domain())
    return dmesh.create_mesh(comm, cells, like.ufl_domain(), x)


def cell_type_name(mesh: Mesh) -> str:
    """The name of a mesh's cell type (``"triangle"``, ``"hexahedron"``...) as basix has it.

    Args:
        mesh: the mesh.

    Returns:
        The name.
    """
    return cast(str, mesh.topology.cell_type.name)


#: Relative threshold (MUMPS CNTL(3)) below which a pivot counts as null. The MUMPS of the
#: DOLFINx 0.9 stack (5.7, Debian 13) flags no null pivot at all with the default CNTL(3) = 0
#: where MUMPS 5.5 (Debian 12, DOLFINx 0.5) flags the rigid-body pivots of an unconstrained
#: body; with this explicit value both count the same.
MUMPS_NULL_PIVOT_THRESHOLD = 1e-12


#: Options (without prefix) that make MUMPS count null pivots (``INFOG(28)``) with the same
#: threshold under every MUMPS version; solvers take them as defaults (database options win).
MUMPS_NULL_PIVOT_OPTIONS = {"mat_mumps_icntl_24": 1,
                            "mat_mumps_cntl_3": MUMPS_NULL_PIVOT_THRESHOLD}


def colliding_cells(mesh: Mesh, points: np.ndarray) -> AdjacencyList:
    """For each point (shape (n, 3)), the local cells that contain it (an AdjacencyList).

    Args:
        mesh: the mesh.
        points: the points, shape (n, 3).

    Returns:
        The cells of each point.
    """
    from dolfinx import geometry

    tdim = mesh.topology.dim
    if hasattr(geometry, "bb_tree"):
        tree = geometry.bb_tree(mesh, tdim)
        cand = geometry.compute_collisions_points(tree, points)
    else:
        tree = geometry.BoundingBoxTree(mesh, tdim)
        cand = geometry.compute_collisions(tree, points)
    return geometry.compute_colliding_cells(mesh, cand, points)


def point_ownership(mesh: Mesh, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which rank owns each point and in which of its cells the point lies (collective).

    Args:
        mesh: the mesh.
        points: shape (n, 3), the same on every rank.

    Returns:
        ``(owners, cells)``: the owning rank of each point, the same on every rank (-1 for a
        point in no cell), and the local index of an owned cell containing it on its owner
        (-1 elsewhere).
    """
    from dolfinx import geometry

    comm = mesh.comm
    points = np.ascontiguousarray(points, dtype=mesh.geometry.x.dtype).reshape(-1, 3)
    n = len(points)
    owned = np.arange(mesh.topology.index_map(mesh.topology.dim).size_local, dtype=np.int32)
    cells = np.full(n, -1, dtype=np.int32)
    if hasattr(geometry, "determine_point_ownership"):
        # the points are sent from rank 0 only; each owner finds its own among those it
        # receives. Keywords: 0.9 had (mesh, points, cells, padding), 0.10+ (mesh, points,
        # padding, cells); a closest-cell fallback must stay off (a point outside is an error)
        params = inspect.signature(geometry.determine_point_ownership).parameters
        kwargs = {"padding": 0.0, "cells": owned}
        if "find_closest_cell" in params:
            kwargs["find_closest_cell"] = False
        sent = points if comm.rank == 0 else points[:0]
        data = geometry.determine_point_ownership(mesh, sent, **kwargs)

        def get(name: str) -> np.ndarray:  # properties since 0.10, methods in 0.9
            v = getattr(data, name)
            return np.asarray(v() if callable(v) else v)

        owners = comm.bcast(get("src_owner").astype(np.int32) if comm.rank == 0 else None)
        received = get("dest_points").reshape(-1, 3)
        found = get("dest_cells")
        for i in np.flatnonzero(owners == comm.rank):
            cells[i] = found[np.flatnonzero(np.all(received == points[i], axis=1))[0]]
        return owners, cells
    # DOLFINx 0.5: the lowest rank with an owned cell containing the point
    hits = colliding_cells(mesh, points)
    mine = np.full(n, comm.size, dtype=np.int32)
    for k in range(n):
        local = [c for c in hits.links(k) if c < len(owned)]
        if local:
            mine[k], cells[k] = comm.rank, local[0]
    owners = np.empty_like(mine)
    comm.Allreduce(mine, owners, op=MPI.MIN)
    owners[owners == comm.size] = -1
    cells[owners != comm.rank] = -1
    return owners, cells


#: DOLFINx writes VTX (ADIOS2 ``.bp``) files: fields in their own space, of any degree, with
#: the mesh written once (the mesh-reuse policy, DOLFINx 0.8 and later). Without it the
#: package writes XDMF, which holds the mesh's linear space only.
has_vtx = (hasattr(dolfinx.io, "VTXWriter") and hasattr(dolfinx.io, "VTXMeshPolicy")
           and bool(getattr(dolfinx.io, "has_adios2", True)))


def vtx_writer(comm: MPI.Comm, path: str,
               functions: Iterable[dolfinx.fem.Function]) -> dolfinx.io.VTXWriter:
    """A VTX writer of ``functions`` (all in one space) that writes the mesh once; only where
    :data:`has_vtx`. ParaView reads the file with its ADIOS2 VTX reader (5.12 or later for a
    mesh written once).

    Args:
        comm: the communicator.
        path: the file (``.bp``).
        functions: the Functions, all in one space.

    Returns:
        The writer.
    """
    return dolfinx.io.VTXWriter(comm, path, list(functions), engine="BPFile",
                                mesh_policy=dolfinx.io.VTXMeshPolicy.reuse)


def straight_copy(V1: FunctionSpace) -> tuple[Mesh, FunctionSpace, np.ndarray]:
    """A straight-sided copy of a curved mesh for XDMF, which DOLFINx 0.5 cannot write a
    function of on second-order cells (its writer's pull-back fails): the local cells with
    their vertices only, kept on their rank (the copy's nodes on a rank boundary doubled),
    and the copy's linear vector space.

    Args:
        V1: the linear (degree 1) vector space on the curved mesh.

    Returns:
        (copy, its linear vector space W, index) with ``index`` giving for each of W's local
        nodes (owned and ghost) the node of ``V1`` whose value it takes.
    """
    import dolfinx.mesh as _dm
    from dolfinx import cpp as _cpp

    mesh = V1.mesh
    comm, tdim, gdim = mesh.comm, mesh.topology.dim, mesh.geometry.dim
    n_cells = mesh.topology.index_map(tdim).size_local
    nv = _cpp.mesh.cell_num_vertices(mesh.topology.cell_type)
    nodes = geometry_dofmap(mesh)
    used, inv = np.unique(nodes[:n_cells, :nv], return_inverse=True)
    offset = comm.exscan(len(used)) or 0
    cells = (offset + inv.reshape(-1, nv)).astype(np.int64)
    x = np.ascontiguousarray(mesh.geometry.x[used, :gdim])
    if hasattr(ufl, "VectorElement"):  # DOLFINx 0.5-0.6
        domain = ufl.Mesh(ufl.VectorElement("Lagrange", mesh.ufl_cell(), 1))
    else:
        import basix.ufl

        domain = ufl.Mesh(basix.ufl.element("Lagrange", mesh.basix_cell(), 1,
                                            shape=(gdim,)))

    def keep(c: MPI.Comm, *args: object) -> AdjacencyList:  # every cell stays on its rank
        return _cpp.graph.AdjacencyList_int32(np.full(len(cells), c.rank, dtype=np.int32))

    copy = _dm.create_mesh(comm, cells, x, domain, ghost_mode=_dm.GhostMode.none,
                           partitioner=keep)
    node_to_v1 = np.full(len(mesh.geometry.x), -1)
    for c in range(n_cells):
        node_to_v1[nodes[c, :nv]] = V1.dofmap.cell_dofs(c)
    W = vector_space(copy, 1)
    index = np.full(W.dofmap.index_map.size_local + W.dofmap.index_map.num_ghosts, -1)
    source = used[np.asarray(copy.geometry.input_global_indices) - offset]
    copy_nodes = geometry_dofmap(copy)
    for c in range(len(copy_nodes)):
        index[W.dofmap.cell_dofs(c)] = node_to_v1[source[copy_nodes[c]]]
    return copy, W, index


def gmsh_model_to_mesh(model: object, comm: MPI.Comm, rank: int,
                       gdim: int) -> Tuple[Mesh, MeshTags, MeshTags]:
    """(mesh, cell_tags, facet_tags) of a gmsh model held on ``rank``, distributed over ``comm``.

    DOLFINx >= 0.10 has ``dolfinx.io.gmsh`` returning a ``MeshData``; earlier ``dolfinx.io.gmshio``
    returns a tuple.

    Args:
        model: the gmsh model (the ``gmsh.model`` module).
        comm: the communicator.
        rank: the rank that holds the model.
        gdim: the geometric dimension.

    Returns:
        ``(mesh, cell_tags, facet_tags)``.
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


_ALPHA2_RESTART: list[float] = []


def alpha2_restart_step() -> float:
    """The step, in units of dt, that PETSc's TSALPHA2 divides its initial acceleration's
    backward difference (-3 V0 + 4 V1 - V2) by, after two backward-Euler steps of dt/2: 0.5
    (PETSc 3.18) or 1 (3.25). Detected once per process by one step of x'' = t on one rank
    (spectral radius 1/2, where the initial acceleration matters)."""
    if not _ALPHA2_RESTART:
        h, r = 1.0, 0.5
        am, af = (2 - r) / (1 + r), 1 / (1 + r)
        b = 0.25 * (1 + am - af) ** 2
        ts = PETSc.TS().create(MPI.COMM_SELF)
        ts.setType("alpha2")
        J = PETSc.Mat().createDense((1, 1), comm=MPI.COMM_SELF)
        J.setUp()
        F = PETSc.Vec().createSeq(1)

        def res(ts_: PETSc.TS, t: float, U: PETSc.Vec, V: PETSc.Vec, A: PETSc.Vec,
                out: PETSc.Vec) -> None:
            out.setValue(0, A.getValue(0) - t)
            out.assemble()

        def jac(ts_: PETSc.TS, t: float, U: PETSc.Vec, V: PETSc.Vec, A: PETSc.Vec, sv: float,
                sa: float, J_: PETSc.Mat, P_: PETSc.Mat) -> None:
            J_.setValue(0, 0, sa)
            J_.assemble()

        ts.setI2Function(res, F)
        ts.setI2Jacobian(jac, J, J)
        ts.setTimeStep(h)
        ts.setMaxSteps(1)
        ts.setMaxTime(h)
        ts.setExactFinalTime(PETSc.TS.ExactFinalTime.MATCHSTEP)
        prefix, db = "mbs_alpha2_probe_", PETSc.Options()
        ts.setOptionsPrefix(prefix)
        db[prefix + "ts_alpha_radius"] = r  # (petsc4py has no setter)
        try:
            ts.setFromOptions()
        finally:
            db.delValue(prefix + "ts_alpha_radius")
        ts.getSNES().setTolerances(rtol=1e-14, atol=1e-14)
        ts.getSNES().getKSP().setType("preonly")
        ts.getSNES().getKSP().getPC().setType("none")
        U, V = F.duplicate(), F.duplicate()
        U.set(0.0)
        V.set(0.0)
        ts.setSolution2(U, V)
        ts.solve(U)
        x = U.getValue(0)
        # from rest, V1 = k^2, V2 = 3 k^2 (k = h/2): A0 = k^2 / (d h); the stage at
        # ta = af h solves am A1 + (1 - am) A0 = ta with A1 = x / (h^2 b) - (1-2b)/(2b) A0
        cand = {}
        for d in (0.5, 1.0):
            A0 = (h / 2) ** 2 / (d * h)
            A1 = (af * h - (1 - am) * A0) / am
            cand[d] = h * h * b * (A1 + (1 - 2 * b) / (2 * b) * A0)
        _ALPHA2_RESTART.append(min(cand, key=lambda d: abs(cand[d] - x)))
        for o in (ts, J, F, U, V):
            o.destroy()
    return _ALPHA2_RESTART[0]


_ALPHA1_RESTART: list[float] = []


def alpha1_restart_step() -> float:
    """The step, in units of dt, that PETSc's TSALPHA (first order) divides its initial rate's
    backward difference (-3 X0 + 4 X1 - X2) by, after two backward-Euler steps of dt/2: 0.5
    or 1, by the PETSc version. Detected once per process by one step of x' = t on one rank
    (spectral radius 1/2)."""
    if not _ALPHA1_RESTART:
        h, r = 1.0, 0.5
        am, af = 0.5 * (3 - r) / (1 + r), 1 / (1 + r)
        gm = 0.5 + am - af
        ts = PETSc.TS().create(MPI.COMM_SELF)
        ts.setType("alpha")
        J = PETSc.Mat().createDense((1, 1), comm=MPI.COMM_SELF)
        J.setUp()
        F = PETSc.Vec().createSeq(1)

        def res(ts_: PETSc.TS, t: float, U: PETSc.Vec, V: PETSc.Vec, out: PETSc.Vec) -> None:
            out.setValue(0, V.getValue(0) - t)
            out.assemble()

        def jac(ts_: PETSc.TS, t: float, U: PETSc.Vec, V: PETSc.Vec, a: float, J_: PETSc.Mat,
                P_: PETSc.Mat) -> None:
            J_.setValue(0, 0, a)
            J_.assemble()

        ts.setIFunction(res, F)
        ts.setIJacobian(jac, J, J)
        ts.setAlphaRadius(r)
        ts.setTimeStep(h)
        ts.setMaxSteps(1)
        ts.setMaxTime(h)
        ts.setExactFinalTime(PETSc.TS.ExactFinalTime.MATCHSTEP)
        ts.getSNES().setTolerances(rtol=1e-14, atol=1e-14)
        ts.getSNES().getKSP().setType("preonly")
        ts.getSNES().getKSP().getPC().setType("jacobi")   # exact on 1 x 1
        U = F.duplicate()
        U.set(0.0)
        ts.solve(U)
        x = U.getValue(0)
        # from rest, X1 = k^2, X2 = 3 k^2 (k = h/2): V0 = k^2 / (d h); the stage's rate at
        # ta = af h is af
        cand = {}
        for d in (0.5, 1.0):
            V0 = (h / 2) ** 2 / (d * h)
            V1 = V0 + (af - V0) / am
            cand[d] = gm * h * (V1 - (1 - 1 / gm) * V0)
        _ALPHA1_RESTART.append(min(cand, key=lambda d: abs(cand[d] - x)))
        for o in (ts, J, F, U):
            o.destroy()
    return _ALPHA1_RESTART[0]


def mpiexec_command(n: int, python: str | None = None) -> list:
    """The command that starts ``n`` MPI ranks of an interpreter's MPI, as a list to which the
    program is appended.

    Args:
        n: number of ranks.
        python: the interpreter the ranks run (default: this one). The launcher beside it comes
            first (a venv with the PyPI ``mpich`` wheel), then ``mpiexec`` on PATH. Open MPI
            gets ``--oversubscribe`` (more ranks than cores).
    """
    here = os.path.join(os.path.dirname(python or sys.executable), "mpiexec")
    exe = here if os.access(here, os.X_OK) else shutil.which("mpiexec") or "mpiexec"
    try:
        ver = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
        text = (ver.stdout + ver.stderr).lower()
        open_mpi = "open mpi" in text or "openrte" in text
    except (OSError, subprocess.SubprocessError):
        open_mpi = False
    return [exe, "-n", str(n)] + (["--oversubscribe"] if open_mpi else [])


def mat_solve(ksp: PETSc.KSP, B: PETSc.Mat, X: PETSc.Mat) -> None:
    """X = A^-1 B for the dense blocks B, X with a direct ``ksp`` (set up): ``KSP.matSolve``
    (petsc4py >= 3.19), else the factor matrix's ``matSolve`` (MatMatSolve; PETSc 3.18 of
    DOLFINx 0.5).

    Args:
        ksp: the direct solver, set up.
        B: the dense right-hand sides.
        X: the dense matrix to fill.
    """
    solve = getattr(ksp, "matSolve", None)
    if solve is not None:
        solve(B, X)
    else:
        ksp.getPC().getFactorMatrix().matSolve(B, X)
