"""Every demo runs (serially and under mpirun) and passes its own checks; long demos run in
their short version (MBS_DEMO_QUICK=1)."""

import runpy

import pytest
from mpi4py import MPI

from tests.models import ROOT

DEMOS = sorted((ROOT / "demos").glob("*.py"))


@pytest.mark.parametrize("path", DEMOS, ids=[p.stem for p in DEMOS])
def test_demo(path, tmp_path_factory, monkeypatch):
    d = MPI.COMM_WORLD.bcast(str(tmp_path_factory.mktemp("demo")) if MPI.COMM_WORLD.rank == 0
                             else None)
    monkeypatch.chdir(d)
    monkeypatch.setenv("MBS_DEMO_QUICK", "1")
    runpy.run_path(str(path), run_name="__main__")
    MPI.COMM_WORLD.Barrier()
