"""Checkpoints on another number of ranks: a run checkpointed on 2 ranks restarts on 1 and on 3
and ends where the uninterrupted 2-rank run ends (its displacement at every dof, matched by the
dofs' partition-free names, and at points evaluated on each partition: 1e-10 relative), with
the reference's CSV rows and field steps; restarted on 2 ranks it ends at the reference's state
as the same-ranks restart did before (1e-12); read back on 1 rank the checkpoint gives the
2-rank run's displacement at every dof and at points, and a velocity whose kinetic energy,
1/2 int rho t |v|^2 dx assembled here, is the run's own (its CSV at the checkpoint's time).
A system whose unknowns are not dofs of the bodies (Lagrange multipliers) is refused on another
number of ranks, naming why.

The runs on 2 and 3 ranks are processes of their own (``mpiexec``,
:mod:`checkpoint_ranks_cases`); the 1-rank restart and read run here.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mpi4py import MPI

from dolfinx_mbs import compat
from dolfinx_mbs.io.dof_keys import locate
from tests.models import HERE as MODELS
from tests.models import ROOT
from tests.models.checkpoint_cases import DT

pytestmark = pytest.mark.serial
#: a restart on another number of ranks continues VTX field files (DOLFINx 0.7 and later)
needs_vtx = pytest.mark.skipif(not compat.has_vtx, reason="XDMF field files (DOLFINx 0.5) "
                               "hold the writing partition's node order")

FORM, T1, T, EVERY = "second-order", 25 * DT, 40 * DT, 10
SCRIPT = MODELS / "checkpoint_ranks_cases.py"


def _launch(n, args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    cmd = compat.mpiexec_command(n) + [sys.executable, str(SCRIPT)] + [str(a) for a in args]
    return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait(procs, limit=240):
    for what, p in procs.items():
        try:
            out, err = p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            p.kill()
            pytest.fail(f"{what}: no result within {limit} s (hung)")
        assert p.returncode == 0, f"{what}:\n{err[-3000:]}"


def _copy(src: Path, dst: Path) -> None:
    """The files of the run ``src`` (checkpoint, CSV, field file) under the stem ``dst``."""
    for tail in (".ckpt", ".csv", "_beam.bp"):
        a, b = Path(f"{src}{tail}"), Path(f"{dst}{tail}")
        (shutil.copytree if a.is_dir() else shutil.copyfile)(a, b)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The reference to T on 2 ranks, the run to T1 checkpointed on 2 ranks (and one with
    multipliers)."""
    d = tmp_path_factory.mktemp("ranks")
    _wait({"reference, run to T1, multipliers": _launch(2, [
        "run", FORM, d / "ref", T, EVERY, "final", "+", "run", FORM, d / "run", T1, EVERY,
        "first", "+", "run", FORM, d / "mult", 3 * DT, 2, "first", "multipliers"], d)})
    return d


@pytest.fixture(scope="module")
def runs(written):
    """:func:`written`, and copies of the run to T1 restarted on 3 and on 2 ranks (a copy for
    1 rank kept for the test that restarts it here)."""
    d = written
    for n in (1, 2, 3):
        _copy(d / "run", d / f"run{n}")
    _wait({"restart on 3": _launch(3, ["run", FORM, d / "run3", T, EVERY, "final", "restart"],
                                   d),
           "restart on 2": _launch(2, ["run", FORM, d / "run2", T, EVERY, "final", "restart"],
                                   d)})
    return d


def _by_name(ref, got):
    """The relative difference of the displacements of two runs, dof by dof (by name)."""
    where = locate(ref["keys"], got["keys"])
    assert len(where) == len(ref["keys"]) and np.all(where >= 0)
    return np.linalg.norm(got["u"] - ref["u"][where]) / np.linalg.norm(ref["u"])


def _field_step(path: str, step: int) -> tuple:
    """(node coordinates, displacement) of every block of the VTX file ``path`` at ``step``."""
    import adios2

    with adios2.FileReader(path) as f:
        n = np.asarray(f.read("NumberOfNodes")).size
        x = np.concatenate([np.asarray(f.read("geometry", block_id=b)) for b in range(n)])
        u = np.concatenate([np.asarray(f.read("u", step_selection=[step, 1], block_id=b))
                            for b in range(n)])
    return x, u


def _field_difference(path: str, ref: str, step: int) -> float:
    """The largest difference of the field files' displacements at ``step``, relative, the
    nodes matched by their coordinates."""
    from scipy.spatial import cKDTree

    x0, u0 = _field_step(ref, step)
    x1, u1 = _field_step(path, step)
    dist, rows = cKDTree(x0).query(x1)
    assert dist.max() < 1e-12
    return np.abs(u1 - u0[rows]).max() / np.abs(u0).max()


def _restarted_here(d: Path, stem: str) -> dict:
    from tests.models.checkpoint_ranks_cases import main

    main(["run", FORM, str(d / stem), str(T), str(EVERY), "final", "restart"])
    return dict(np.load(d / f"{stem}.final.npz"))


@needs_vtx
def test_restart_on_one_and_three_ranks(runs):
    """2 ranks to T1, then 1 or 3 ranks to T: the uninterrupted 2-rank run's end."""
    from tests.models.runfiles import check_files

    ref = np.load(runs / "ref.final.npz")
    got = {1: _restarted_here(runs, "run1"), 3: dict(np.load(runs / "run3.final.npz"))}
    for n, g in got.items():
        assert int(g["ranks"]) == n
        assert g["restarted_from"] == pytest.approx(T1, rel=1e-12)
        assert int(g["steps"]) == int(ref["steps"]) == 40
        assert _by_name(ref, g) < 1e-10, n
        scale = np.abs(ref["at"]).max()
        assert np.abs(g["at"] - ref["at"]).max() < 1e-10 * scale, n
        np.testing.assert_allclose(g["probes"][-1], ref["probes"][-1], rtol=1e-10,
                                   atol=1e-10 * scale)
        check_files(str(runs / f"run{n}"), str(runs / "ref"))
        # the field file: steps before T1 copied from the 2-rank file, then the run's own
        fields, ref_fields = (str(runs / f"{s}_beam.bp") for s in (f"run{n}", "ref"))
        for step, tol in ((4, 1e-15), (12, 1e-15), (20, 1e-10)):
            assert _field_difference(fields, ref_fields, step) <= tol, (n, step)


@needs_vtx
def test_same_ranks_restart(runs):
    """2 ranks to T1, then 2 ranks to T (each rank its own arrays, as written)."""
    ref, got = np.load(runs / "ref.final.npz"), np.load(runs / "run2.final.npz")
    assert _by_name(ref, got) < 1e-12
    # the 2-rank restart read its own files: no redistribution
    import json

    with open(runs / "run2.ckpt" / "latest.json") as f:
        assert json.load(f)["ranks"] == 2


def test_read_back_on_one_rank(written):
    """The 2-rank checkpoint read on 1 rank: the 2-rank run's displacement at every dof and
    at points, a velocity with the run's kinetic energy."""
    import ufl
    from dolfinx import fem

    from dolfinx_mbs.integrate.checkpoint import read_state
    from dolfinx_mbs.io import evaluate
    from dolfinx_mbs.io.dof_keys import dof_keys
    from tests.models.checkpoint_cases import model
    from tests.models.checkpoint_ranks_cases import POINTS
    from tests.models.runfiles import csv_rows

    assert MPI.COMM_WORLD.size == 1
    own = np.load(written / "run.first.npz")        # the 2-rank run's own state at T1
    m, _ = model()
    st = read_state(m.system(FORM), str(written / "run"))
    assert st.t == pytest.approx(T1, rel=1e-12) and st.index == 25
    u = st.displacement["beam"]
    here = {"keys": dof_keys(u.function_space), "u": u.x.array.copy()}
    assert _by_name(own, here) < 1e-15
    at = evaluate(u, POINTS)
    assert np.abs(at - own["at"]).max() < 1e-12 * np.abs(own["at"]).max()
    v = st.velocity["beam"]
    rho_t = 2700.0 * 0.01                            # checkpoint_cases' density x thickness
    kinetic = 0.5 * rho_t * fem.assemble_scalar(fem.form(ufl.inner(v, v) * ufl.dx))
    head, rows = csv_rows(written / "run.csv")
    row = rows[np.argmin(np.abs(rows[:, 0] - T1))]
    assert kinetic == pytest.approx(row[head.index("kinetic")], rel=1e-10)


def test_refused_without_names(written):
    """Lagrange multipliers are not dofs of a body: another number of ranks is refused."""
    from tests.models.checkpoint_cases import model

    m, _ = model()
    with pytest.raises(ValueError, match=r"written by 2 rank\(s\), this run has 1, and it "
                       r"cannot be redistributed \(the unknowns include Lagrange multipliers"):
        m.integrate(t_end=5 * DT, dt=DT, formulation=FORM, output=str(written / "mult"),
                    checkpoint_every=2, restart=True, progress=False,
                    constraints="multipliers")


@pytest.mark.skipif(compat.has_vtx, reason="VTX field files continue on any number of ranks")
def test_refused_with_xdmf_files(written):
    """DOLFINx 0.5: the field files are XDMF, in the writing partition's node order."""
    from tests.models.checkpoint_cases import run

    _copy_xdmf = [(f"{written / 'run'}{t}", f"{written / 'runx'}{t}")
                  for t in (".csv", "_beam.xdmf", "_beam.h5")]
    shutil.copytree(f"{written / 'run'}.ckpt", f"{written / 'runx'}.ckpt")
    for a, b in _copy_xdmf:
        shutil.copyfile(a, b)
    with pytest.raises(ValueError, match=r"cannot be redistributed \(the field files are XDMF"):
        run(FORM, str(written / "runx"), T, EVERY, restart=True)
