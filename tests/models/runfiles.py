"""Reading a run's files back: the folder every rank shares, the CSV rows, the field files'
times, and the check that a continued run wrote the uninterrupted run's rows and times."""

import csv
from pathlib import Path

import numpy as np
from mpi4py import MPI

from dolfinx_mbs import compat


def shared_dir(tmp_path) -> Path:
    """Rank 0's pytest folder, on every rank (each rank's own ``tmp_path`` differs)."""
    return Path(MPI.COMM_WORLD.bcast(str(tmp_path), root=0))


def csv_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array([[float(x) for x in r] for r in rows[1:]])


def field_times(stem):
    """The times of the field file of body "beam" (VTX with ADIOS2, XDMF with h5py)."""
    if compat.has_vtx:
        from dolfinx_mbs.io import vtx_times

        return vtx_times(f"{stem}_beam.bp")
    import xml.etree.ElementTree as ET

    import h5py

    tree = ET.parse(f"{stem}_beam.xdmf")
    times = [float(g.find("Time").get("Value")) for s in tree.iter("Grid")
             if s.get("CollectionType") == "Temporal" for g in s.findall("Grid")]
    with h5py.File(f"{stem}_beam.h5", "r") as h5:  # every time's data is there
        assert len(h5["Function/u"]) >= len(times) // 2
    return np.array(times[: len(times) // 2])  # u and motion: one series each


def relative(a, b):
    comm = MPI.COMM_WORLD
    num = comm.allreduce(float(np.sum((a - b) ** 2)), op=MPI.SUM)
    den = comm.allreduce(float(np.sum(b**2)), op=MPI.SUM)
    return np.sqrt(num / den)


def check_files(stem, ref_stem):
    """CSV: every step once, increasing, the reference's rows; fields: the reference's
    times."""
    if MPI.COMM_WORLD.rank == 0:
        head, rows = csv_rows(f"{stem}.csv")
        head_ref, ref = csv_rows(f"{ref_stem}.csv")
        assert head == head_ref
        assert np.all(np.diff(rows[:, 0]) > 0)
        # times to round-off: a run that ended at t1 landed on it exactly (its last step
        # adjusted), the uninterrupted one summed its steps
        np.testing.assert_allclose(rows[:, 0], ref[:, 0], rtol=1e-13, atol=0)
        scale = np.abs(ref).max(axis=0) + 1e-300
        assert np.abs(rows - ref).max(axis=0).max() <= 1e-9 * scale.max()
        assert np.all(np.abs(rows - ref) <= 1e-9 * scale), np.abs(rows - ref).max(axis=0)
        np.testing.assert_allclose(field_times(stem), field_times(ref_stem), rtol=1e-13)
    MPI.COMM_WORLD.Barrier()
