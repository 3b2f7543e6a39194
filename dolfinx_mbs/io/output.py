"""Output: displacement at probe points (parallel), and time series written as they are produced.

Probe points are given in a body's local coordinates; each is evaluated on the one rank that
owns it and the values are summed over ranks, so every rank gets the same array.

Fields go to VTX files where DOLFINx can write them, because VTX keeps a P2 displacement P2
(XDMF would interpolate it to P1 and lose the midside nodes); :class:`FieldFile` is the one
place that chooses the format.
"""

from __future__ import annotations

import csv
import os
from typing import TYPE_CHECKING, Any, List, Protocol, Sequence, Tuple, cast

import numpy as np
from mpi4py import MPI

from dolfinx_mbs import checks, compat
from dolfinx_mbs.io import field_restart

if TYPE_CHECKING:
    from types import ModuleType

    from dolfinx.fem import Function, FunctionSpace
    from petsc4py import PETSc

__all__ = ["Probes", "TimeSeriesWriter", "FieldFile", "MotionWriter", "pyplot", "write_modes"]


class _ModeSystem(Protocol):
    """What the mode writers read of a typed system (:mod:`dolfinx_mbs.systems`, a later part:
    not named here)."""

    @property
    def comm(self) -> MPI.Comm: ...

    @property
    def bodies(self) -> Sequence[Any]: ...

    @property
    def space(self) -> Any: ...

    def expand_mode(self, x: PETSc.Vec, out: PETSc.Vec) -> PETSc.Vec: ...


class Probes:
    """Displacement of bodies at fixed material points.

    Args:
        bodies: the model's bodies.
        probes: points of the first body ``(x, y[, z])``, or ``(body, point)`` pairs.

    Raises:
        ValueError: on every rank, if a point lies in no cell of its body.
    """

    def __init__(self, bodies: Sequence, probes: Sequence) -> None:
        self.items: List[tuple] = []
        for p in probes:
            if isinstance(p, tuple) and len(p) == 2 and hasattr(p[0], "V"):
                body, x = p
            else:
                body, x = bodies[0], p
            x3 = checks.point3(x, "probe point")
            self.items.append((body, x3))
        self.n = len(self.items)
        self.dim = max((b.gdim for b, _ in self.items), default=3)
        self.comm = self.items[0][0].comm if self.items else MPI.COMM_WORLD
        # the owning rank and cell of each point: one collective search per body
        self._where: List[int | None] = [None] * self.n
        bodies_in_order = list({id(b): b for b, _ in self.items}.values())
        for body in bodies_in_order:
            index = [i for i, (b, _) in enumerate(self.items) if b is body]
            points = np.array([self.items[i][1] for i in index])
            owners, cells = compat.point_ownership(body.mesh, points)
            for i, owner, cell in zip(index, owners, cells):
                if owner < 0:
                    raise ValueError(f"probe point {self.items[i][1].tolist()} lies in no cell "
                                     f"of body {body.name!r}")
                if owner == body.comm.rank:
                    self._where[i] = int(cell)

    def evaluate(self) -> np.ndarray:
        """Values (n_probes, dim) of each body's ``u`` at its points, on every rank."""
        out = np.zeros((self.n, self.dim))
        for i, ((body, x), cell) in enumerate(zip(self.items, self._where)):
            if cell is not None:
                val = body.u.eval(x.reshape(1, 3), np.array([cell], dtype=np.int32))
                out[i, : body.gdim] = np.asarray(val).reshape(-1)[: body.gdim]
        tot = np.zeros_like(out)
        self.comm.Allreduce(out, tot, op=MPI.SUM)
        return tot


class TimeSeriesWriter:
    """A CSV file written row by row (rank 0), flushed after every row.

    Args:
        path: file name (parent directories are created).
        columns: column names.
        comm: communicator; only its rank 0 writes.
        append: continue an existing file (its header already written), as a restart does.
    """

    def __init__(self, path: str, columns: Sequence[str], comm: MPI.Comm = MPI.COMM_WORLD,
                 append: bool = False) -> None:
        self.rank = comm.rank
        self.path = path
        self._f = None
        with checks.collective(comm, f"output file {path!r}"):
            if self.rank == 0:
                d = os.path.dirname(os.path.abspath(path))
                os.makedirs(d, exist_ok=True)
                self._f = open(path, "a" if append else "w", newline="")
                self._w = csv.writer(self._f)
                if not append:
                    self._w.writerow(list(columns))
                    self._f.flush()

    def write(self, row: Sequence[float]) -> None:
        """Append one row (full precision) and flush it; nothing on ranks without a file.

        Args:
            row: the values of the header's columns.
        """
        if self._f is not None:
            self._w.writerow([f"{v:.17g}" for v in row])
            self._f.flush()

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._f is not None:
            self._f.close()
            self._f = None

    def __del__(self) -> None:  # pragma: no cover
        self.close()


def probe_columns(n: int, dim: int, prefix: str | None = "u") -> List[str]:
    """Column names of ``n`` probes' vector values: ``u0_x, u0_y, ..., u{n-1}_z``.

    Args:
        n: number of probes.
        dim: number of components (2 or 3).
        prefix: the name before each probe's number.

    Returns:
        The ``n * dim`` names.
    """
    comps = "xyz"[:dim]
    return [f"{prefix}{i}_{c}" for i in range(n) for c in comps]


class FieldFile:
    """Vector fields of one space over time, for ParaView, in the one format chosen here.

    Where DOLFINx writes VTX (:data:`dolfinx_mbs.compat.has_vtx`: ADIOS2, DOLFINx 0.8 and
    later) the file is ``<stem>.bp`` and the fields keep their space, any degree. Elsewhere
    (DOLFINx 0.5) it is ``<stem>.xdmf`` and the fields are interpolated to the mesh's linear
    space, the only one XDMF holds (on curved cells, written on a straight-sided copy of the
    mesh: :func:`dolfinx_mbs.compat.straight_copy`). Set the fields with :meth:`assign` (or
    in place in :attr:`fields`, whose space is :attr:`space`), then :meth:`write`. Collective:
    every rank calls every method; close the file (or use ``with``) on every rank.

    Args:
        comm: communicator of the mesh.
        stem: file name without extension; parent directories are created.
        V: the fields' vector space.
        names: names of the fields (as ParaView shows them).
        keep_until: continue the existing file (a restart): its times up to this one are kept
            and the new ones appended (:mod:`dolfinx_mbs.io.field_restart`, which also says what
            each format keeps after a kill).
    """

    def __init__(self, comm: MPI.Comm, stem: str, V: FunctionSpace, names: Sequence[str],
                 keep_until: float | None = None) -> None:
        from dolfinx import fem

        self.vtx = compat.has_vtx
        self.comm = comm
        self.space = V if self.vtx else compat.vector_space(V.mesh, 1)
        self.path = stem + (".bp" if self.vtx else ".xdmf")
        self.fields = {n: fem.Function(self.space, name=n) for n in names}
        # XDMF of curved cells: the fields written on a straight-sided copy of the mesh
        self._copy = None
        if not self.vtx and compat.geometry_degree(V.mesh) > 1:
            mesh, W, index = compat.straight_copy(self.space)
            self._copy = (mesh, {n: fem.Function(W, name=n) for n in names}, index)
        with checks.collective(comm, f"output folder of {stem!r}"):
            if comm.rank == 0:
                os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
        files = [self.path] if self.vtx else [self.path, stem + ".h5"]
        prev = None if keep_until is None else field_restart.set_aside(comm, files)
        if prev is not None and not self.vtx:  # XDMF: the kept times, then append
            assert keep_until is not None  # (prev is set aside only then)
            field_restart.keep_xdmf_times(comm, prev, files, keep_until)
            self._file, self._mode = None, "a"
            return
        if self.vtx:
            self._file = compat.vtx_writer(comm, self.path, self.fields.values())
        else:
            from dolfinx.io import XDMFFile

            self._file = XDMFFile(comm, self.path, "w")
            self._file.write_mesh(V.mesh if self._copy is None else self._copy[0])
            # closed after every written time, so that a killed run leaves a readable .h5
            self._file.close()
            self._file, self._mode = None, "a"
        if prev is not None:  # VTX: the kept steps copied, then the run's own
            assert keep_until is not None
            field_restart.copy_vtx_steps(comm, prev[0], keep_until, self.fields, self.write)
            field_restart.drop_previous(comm, prev)

    def assign(self, name: str, g: Function) -> None:
        """Set field ``name`` from ``g``, a Function of the space ``V`` given at creation.

        Args:
            name: the field's name.
            g: a Function of the space given at creation.
        """
        f = self.fields[name]
        if self.vtx:
            f.x.array[:] = g.x.array
        else:
            f.interpolate(g)

    def write(self, t: float) -> None:
        """Append the fields' current values at time ``t``.

        Args:
            t: time (s).
        """
        if self.vtx:
            assert self._file is not None  # the VTX writer stays open
            self._file.write(t)
            return
        from dolfinx.io import XDMFFile

        written = self.fields
        if self._copy is not None:
            _, written, index = self._copy
            for name, fn in self.fields.items():
                fn.x.scatter_forward()
                bs = fn.function_space.dofmap.index_map_bs
                written[name].x.array[:] = fn.x.array.reshape(-1, bs)[index].reshape(-1)
        with XDMFFile(self.comm, self.path, self._mode) as f:
            for fn in written.values():
                f.write_function(fn, t)

    def close(self) -> None:
        """Close the file (collective)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> FieldFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MotionWriter:
    """One :class:`FieldFile` per body, ``<stem>_<body name>.bp`` (or ``.xdmf``), with at each
    written time the elastic displacement ``u`` in the body frame and the ``motion`` in the
    global frame, r_O + R (X + u) - X, so that ParaView's "Warp By Vector" on ``motion``
    animates the moving, deforming body.

    Args:
        bodies: the bodies to write.
        stem: file stem.
        keep_until: continue existing files, keeping their times up to this one (a restart).
    """

    def __init__(self, bodies: Sequence, stem: str, keep_until: float | None = None) -> None:
        self.items = []
        for body in bodies:
            f = FieldFile(body.comm, f"{stem}_{body.name}", body.V, ["u", "motion"],
                          keep_until)
            X = f.space.tabulate_dof_coordinates()[:, : body.gdim]
            self.items.append((body, f, X))

    def write(self, t: float, states: Sequence | None = None) -> None:
        """Write the bodies' current ``u`` and their motion with the frames' state at ``t``.

        Args:
            t: the time (s).
            states: each body's frame state (:class:`~dolfinx_mbs.frames.FrameState`), for
                frames whose state is not a function of time (computed frames: a coupled
                run's); None: ``body.frame.state(t)``.
        """
        for i, (body, f, X) in enumerate(self.items):
            f.assign("u", body.u)
            d = body.gdim
            Xu = np.zeros((len(X), 3))
            Xu[:, :d] = X + f.fields["u"].x.array.reshape(-1, d)
            st = body.frame.state(t) if states is None else states[i]
            pos = st.to_global(Xu)
            f.fields["motion"].x.array[:] = (pos[:, :d] - X).reshape(-1)
            f.write(t)

    def close(self) -> None:
        """Close every output file."""
        for _, f, _ in self.items:
            f.close()
        self.items = []


def pyplot() -> ModuleType | None:
    """``matplotlib.pyplot`` with the non-interactive Agg backend (files only, no display),
    or None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        return None
    return cast("ModuleType", plt)


def mode_functions(system: _ModeSystem, vecs: Sequence[Tuple[PETSc.Vec, PETSc.Vec]]) -> list:
    """Mode shapes ``vecs`` [(re, im), ...] of ``system``'s eigenproblem as DOLFINx Functions.

    The system's ``expand_mode`` gives the full shape; each mode is scaled to a unit largest
    displacement over all bodies.

    Args:
        system: the typed system whose eigenproblem gave ``vecs``.
        vecs: (re, im) PETSc Vecs in its coordinates, one pair per mode.

    Returns:
        Per mode a list with one (re, im) pair of Functions per body, in the body frames.
    """
    from dolfinx import fem
    from petsc4py import PETSc

    space = system.space
    full = space.create_vec()
    out = []
    try:
        for xr, xi in vecs:
            parts = []
            for x in (xr, xi):
                system.expand_mode(x, full)
                funcs = [fem.Function(b.V) for b in system.bodies]
                space.scatter(full, funcs)
                parts.append((funcs, full.norm(PETSc.NormType.NORM_INFINITY)))
            scale = max(max(n for _, n in parts), 1e-300)
            for funcs, _ in parts:
                for f in funcs:
                    f.x.array[:] /= scale
            out.append(list(zip(parts[0][0], parts[1][0])))
    finally:
        full.destroy()
    return out


def write_modes(system: _ModeSystem, stem: str, vecs: Sequence[Tuple[PETSc.Vec, PETSc.Vec]]
                ) -> None:
    """Mode shapes ``vecs`` [(re, im), ...] of ``system``'s eigenproblem to field files.

    ``<stem>_<body>``, each mode normalized to a unit largest displacement, at time 0.

    Args:
        system: the typed system whose eigenproblem gave the shapes.
        stem: the file stem.
        vecs: (re, im) PETSc Vecs in its coordinates, one pair per mode.
    """
    write_mode_functions(system, stem, mode_functions(system, vecs))


def write_mode_functions(system: _ModeSystem, stem: str,
                         shapes: Sequence[Sequence[Tuple[Function, Function]]]) -> None:
    """The shapes of :func:`mode_functions` to ``<stem>_<body>`` field files.

    Fields ``mode<k>_re`` and ``mode<k>_im``, at time 0.

    Args:
        system: the typed system whose eigenproblem gave the shapes.
        stem: the file stem.
        shapes: as :func:`mode_functions` returns them.
    """
    for ib, body in enumerate(system.bodies):
        names = [f"mode{k}_{part}" for k in range(len(shapes)) for part in ("re", "im")]
        with FieldFile(system.comm, f"{stem}_{body.name}", body.V, names) as f:
            for k, mode in enumerate(shapes):
                for part, func in zip(("re", "im"), mode[ib]):
                    f.assign(f"mode{k}_{part}", func)
            f.write(0.0)
