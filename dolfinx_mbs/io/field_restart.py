"""Field files continued by a restarted run, and what survives a kill.

What each format keeps when the process is killed (SIGKILL) mid-run, measured with the
package's writers (DOLFINx 0.11, ADIOS2 2.12; DOLFINx 0.5.2, HDF5 1.10):

* VTX (ADIOS2 BP5, DOLFINx's ``VTXWriter``): every step ends with ``EndStep``, which writes
  its data and its metadata index (``md.idx``): the file of a killed run opens in ADIOS2's
  random-access mode (``adios2.FileReader``, ParaView's reader) with every step written before
  the kill. Nothing to do per step; only a streaming reader waits for more steps.
* XDMF + HDF5 (DOLFINx 0.5): the ``.h5`` of an open file is unreadable after a kill ("file
  signature not found": HDF5 writes its superblock and metadata at close), so
  :class:`dolfinx_mbs.io.FieldFile` closes the file after every written time and opens it
  again in append mode for the next one.

Neither writer truncates or appends in DOLFINx, so a restart continues a field file by
copying: the old file is renamed ``<file>.prev`` (kept while a copy is under way, so a kill
during the copy loses nothing: the next restart copies from it again), a new file is opened
under the old name, the steps up to the checkpoint's time are copied into it, and ``.prev`` is
removed. The steps the killed run wrote after its checkpoint are dropped; the restarted run
writes them again. On as many ranks as wrote the file each rank copies its own block (the
same partition); on another number of ranks (a checkpoint restarted on more or fewer ranks,
:mod:`dolfinx_mbs.integrate.checkpoint`) each rank reads every block with its node
coordinates (the file's ``geometry``) and takes the values of the nodes at its own nodes'
coordinates (to 1e-10 of the mesh's size: the same mesh, the same nodes). An XDMF file
(DOLFINx 0.5) is continued by rank 0 whatever the number of ranks: its data are global.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from dolfinx_mbs import checks

if TYPE_CHECKING:
    import adios2
    from dolfinx.fem import Function, FunctionSpace
    from mpi4py import MPI
    from numpy.typing import ArrayLike

__all__ = ["set_aside", "copy_vtx_steps", "drop_previous", "vtx_times", "keep_xdmf_times"]


def _remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def set_aside(comm: MPI.Comm, paths: Sequence[str]) -> list | None:
    """Before a restart writes ``paths`` (the files of one field file: ``x.bp``, or
    ``x.xdmf`` and ``x.h5``) again: the complete ones to copy from, renamed ``<path>.prev``.
    Where ``.prev`` files exist already (a restart killed during its copy) they are the
    complete ones and the partial new files go. None when there is nothing to continue.
    Collective (rank 0 renames).

    Args:
        comm: the run's communicator (collective).
        paths: the files of one field file.

    Returns:
        The ``.prev`` files to copy from, or None.
    """
    prev = [p + ".prev" for p in paths]
    found = None
    with checks.collective(comm, f"restart: field file {paths[0]!r}"):
        if comm.rank == 0:
            if all(os.path.exists(p) for p in prev):
                for p in paths:
                    _remove(p)
                found = True
            elif all(os.path.exists(p) for p in paths):
                for p, q in zip(paths, prev):
                    _remove(q)
                    os.replace(p, q)
                found = True
            else:
                found = False
    return prev if comm.bcast(found, root=0) else None


def drop_previous(comm: MPI.Comm, prev: Sequence[str]) -> None:
    """Remove the ``.prev`` files once their steps are copied (collective).

    Args:
        comm: the run's communicator (collective).
        prev: the ``.prev`` files.
    """
    with checks.collective(comm, f"restart: field file {prev[0]!r}"):
        if comm.rank == 0:
            for p in prev:
                _remove(p)


def vtx_times(path: str) -> np.ndarray:
    """The times of the steps of the VTX file ``path`` (its ``step`` variable).

    Args:
        path: the VTX file (``.bp``).

    Returns:
        The times.
    """
    import adios2

    with adios2.FileReader(path) as f:
        n = int(f.available_variables()["step"]["AvailableStepsCount"])
        return np.atleast_1d(f.read("step", step_selection=[0, n]))


def _table(block: ArrayLike) -> np.ndarray:
    """A block of a VTX variable as (nodes, components)."""
    a = np.asarray(block)
    return a.reshape(a.shape[0], -1) if a.ndim > 1 else a.reshape(-1, 1)


def _node_map(comm: MPI.Comm, f: adios2.FileReader, source: str,
              V: FunctionSpace) -> np.ndarray:
    """For each local node of ``V``, its row in the concatenated blocks of the VTX file ``f``.

    Every block is read (the file was written on another number of ranks) and the nodes
    matched by their coordinates. Raises ValueError (every rank) where a node has no match.
    """
    from scipy.spatial import cKDTree

    bad, rows = None, np.zeros(0, np.int64)
    try:  # every rank reads the whole file: the same geometry, the same tolerance
        n_blocks = int(np.asarray(f.read("NumberOfNodes")).size)
        geo = np.concatenate([_table(f.read("geometry", block_id=b))
                              for b in range(n_blocks)])
        x = V.tabulate_dof_coordinates().reshape(-1, 3)[:, : geo.shape[1]]
        tol = 1e-10 * max(float(np.max(geo.max(axis=0) - geo.min(axis=0))), 1e-300)
        dist, rows = cKDTree(geo).query(x)
        if len(x) and float(np.max(dist)) > tol:
            k = int(np.argmax(dist))
            bad = (f"restart: the field file {source!r} has no node at {x[k].tolist()} "
                   f"(nearest {float(dist[k]):.3g} away; another mesh)")
    except Exception as e:  # a file that cannot be read is named, on every rank
        bad = f"restart: cannot read the nodes of the field file {source!r} ({e})"
    checks.raise_everywhere(comm, bad)
    return np.asarray(rows, dtype=np.int64)


def copy_vtx_steps(comm: MPI.Comm, source: str, t_max: float, fields: Mapping[str, Function],
                   write: Callable[[float], None]) -> int:
    """Copy the steps of the VTX file ``source`` whose time is at most ``t_max``.

    For each kept step, every one of ``fields`` is set from the file's values and ``write(t)``
    called: on as many ranks as wrote the file from this rank's own block, on another number
    of ranks from the node at each local node's coordinates (see the module docstring).

    Args:
        comm: the run's communicator (collective).
        source: the VTX file (``.bp``) to copy from.
        t_max: the last time kept.
        fields: {name: Function}, on one space.
        write: called with each kept step's time once the fields hold its values.

    Returns:
        The number of steps copied.

    Raises:
        ValueError: (every rank) the file cannot be read, or holds another mesh.
    """
    import adios2

    msg, times = None, np.zeros(0)
    try:
        times = vtx_times(source)
    except Exception as e:  # noqa: BLE001 (a file that cannot be read is named)
        msg = f"restart: cannot read the field file {source!r} ({e})"
    checks.raise_everywhere(comm, msg)
    keep = [i for i, t in enumerate(times) if t <= t_max]
    with adios2.FileReader(source) as f:
        n_blocks = int(np.asarray(f.read("NumberOfNodes")).size)
        rows = None
        if n_blocks != comm.size and fields:
            rows = _node_map(comm, f, source, next(iter(fields.values())).function_space)
        for i in keep:
            for name, fn in fields.items():
                bs = fn.function_space.dofmap.index_map_bs
                if rows is None:
                    block = f.read(name, step_selection=[i, 1], block_id=comm.rank)
                    values = np.asarray(block)[:, :bs].reshape(-1)
                else:
                    every = np.concatenate([
                        _table(f.read(name, step_selection=[i, 1], block_id=b))
                        for b in range(n_blocks)])
                    values = every[rows, :bs].reshape(-1)
                bad = None if values.size == fn.x.array.size else (
                    f"restart: the field file {source!r} has {values.size} values of {name!r} "
                    f"on rank {comm.rank}, this mesh {fn.x.array.size} (another partition)")
                checks.raise_everywhere(comm, bad)
                fn.x.array[:] = values
            write(float(times[i]))
    return len(keep)


def keep_xdmf_times(comm: MPI.Comm, prev: Sequence[str], paths: Sequence[str], t_max: float
                    ) -> None:
    """XDMF (DOLFINx 0.5): ``paths`` (``x.xdmf``, ``x.h5``) made from the complete ``prev``
    files with the times after ``t_max`` dropped (their grids from the XML, their datasets
    from the HDF5 file, so that the restart writes them again), then ``prev`` removed; the
    run appends to them. Collective (rank 0 edits).

    Args:
        comm: the run's communicator (collective).
        prev: the ``.prev`` files.
        paths: the files of one field file.
        t_max: the last time kept (s).
    """
    import xml.etree.ElementTree as ET

    with checks.collective(comm, f"restart: field file {paths[0]!r}"):
        if comm.rank == 0:
            import h5py

            ET.register_namespace("xi", "http://www.w3.org/2001/XInclude")
            tree = ET.parse(prev[0])
            dropped = []
            for series in tree.iter("Grid"):
                if series.get("CollectionType") != "Temporal":
                    continue
                for grid in list(series.findall("Grid")):
                    time = grid.find("Time")
                    if time is not None and float(time.attrib["Value"]) > t_max:
                        dropped += [d.text.strip().split(":", 1)[1] for d in grid.iter("DataItem")
                                    if d.text and ".h5:" in d.text]
                        series.remove(grid)
            shutil.copyfile(prev[1], paths[1] + ".tmp")
            with h5py.File(paths[1] + ".tmp", "a") as h5:
                for name in dropped:
                    if name in h5:
                        del h5[name]
            os.replace(paths[1] + ".tmp", paths[1])
            tree.write(paths[0] + ".tmp", xml_declaration=True, encoding="utf-8")
            os.replace(paths[0] + ".tmp", paths[0])
    drop_previous(comm, prev)
