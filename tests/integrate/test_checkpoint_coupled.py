"""Checkpoints and restarts of coupled runs (models with computed frames).

The model (:mod:`tests.models.coupled_checkpoint_cases`): an elastic beam on a hub Hinge with a
rigid disk's inertia, driven by a torque; with ``joint``, a rigid link on a planar free frame
pinned to the hub (a revolute joint under gravity: the default formulation first-order, BDF2).
The reference is the uninterrupted run to 2N steps checkpointing every N (the same steps a
restart takes):

* run N steps with checkpoints, restart to 2N: the hub's angle and rate, the beam's tip (a
  probe and every dof) and the CSV rows are the uninterrupted run's bit for bit on the same
  ranks (1 or 2), generalized-alpha (TSALPHA at radius 1), BDF2 and Hamilton's form (its
  momenta taken from the state at every checkpoint, as a restart takes them) and
  generalized-alpha with the joint (the pin's force too) alike; the field
  file has
  the reference's times; the result's histories start at the checkpoint. (On several ranks
  under DOLFINx 0.5 two identical runs differ by round-off, up to 3e-11: there to 1e-9.)
  So do a rigid double pendulum (no elastic unknowns: the whole state in ``latest.json``) and
  a bar ringing against a spring to the ground (no computed frame: the spring's force is the
  only unknown beside the elastic ones).
* What checkpointing costs BDF2 (PETSc restarts it at a checkpoint with half a step of
  backward Euler then BDF2 on the uneven steps, the start-up it makes at t0): the checkpointed
  run differs from a run without checkpoints by less than half of that run's own
  discretization error (its difference from the run at dt/2; measured over 20 steps with one
  checkpoint mid-way: 14 % of it in the hub's angle, 0.8 % in its rate, 9 % at the beam's
  tip). Generalized-alpha at radius 1 (the midpoint rule) changes by round-off only (1e-9
  relative; measured 3e-11).
* SIGTERM mid-way between checkpoints (generalized-alpha): the run checkpoints there and ends
  on every rank; the restart ends at the uninterrupted run's state to round-off (1e-9).
* A checkpoint written on 2 ranks restarts on 1 (the elastic unknowns redistributed by their
  partition-free names, the frame unknowns global) and ends at the 2-rank reference's state
  to 1e-9 relative, the tolerance of the steps' Newton solves, whose iterates differ on
  another partition by round-off (every dof by name, the tip, the hub's angle and rate, the
  link's angle; measured 3e-11 to 1e-10), with the reference's CSV rows (1e-9) and field
  times; under DOLFINx 0.5 that restart is refused, naming why.
* Bad input (checkpoint_every without output, not a positive integer, with a TS type that
  keeps a history PETSc does not restart; restart without a checkpoint, with u0, with spectral
  radius < 1, with another formulation, to a t_end before the checkpoint; a checkpoint of
  another model: another count of computed frames, another mesh, a model without computed
  frames) is refused on every rank and leaves the files as they were.
* The dense coupled path (``stepper="dense"``; ``"auto"`` keeps it with checkpoints for the
  beam reduced to 4 modes) writes the same checkpoints: its restart repeats the uninterrupted
  dense run to the last bit (generalized-alpha, BDF2 and generalized-alpha with the pinned
  link, the rigid double pendulum), on 1 and 2 ranks; a checkpoint of the TS path restarts on
  the dense path and one of the dense path on the TS path, each ending at the TS path's
  uninterrupted run (its Newton tolerances tightened: an independent implementation) to
  1e-9 (measured up to 2.4e-10); SIGTERM, bad input and the 2-to-1-rank restart (the beam
  unreduced) as on the TS path.
"""

import os
import signal
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
from tests.models.coupled_checkpoint_cases import DT, run, summary
from tests.models.runfiles import check_files, csv_rows, field_times, shared_dir

COMM = MPI.COMM_WORLD
N = 10
#: runs repeat to the bit on one rank. On several they need not: with the DOLFINx 0.11 stack
#: they did on an idle machine, but under load two runs of the spring's case differed by
#: 1e-14 of the largest value; with the 0.5 stack (Debian's PETSc 3.18, MUMPS) two runs of the
#: joint model differ by up to 3e-11 in the hub's rate. There the restart is held to
#: round-off (0.11) or to the steps' Newton tolerance (0.5)
EXACT = COMM.size == 1
TOL_RUNS = 0.0 if EXACT else (1e-12 if compat.has_vtx else 1e-9)


def _same(a, b) -> None:
    """``a`` is ``b``: to the bit where runs repeat so, else to :data:`TOL_RUNS`."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if EXACT:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=0, atol=TOL_RUNS * np.abs(b).max())


def _last(s: dict, key: str) -> np.ndarray:
    return np.asarray(s[key])[-1]


@pytest.mark.parametrize("joint,form", [(False, None), (True, None), (False, "hamiltonian"),
                                        (True, "second-order")],
                         ids=["alpha", "joint-bdf2", "hamiltonian", "joint-alpha"])
def test_restart_is_bit_for_bit(joint, form, tmp_path):
    """N steps with checkpoints, then restart to 2N: the uninterrupted run's state and rows
    to the last bit (with generalized-alpha and a joint, the pin's force too: extrapolated to
    the step ends from the last two steps' intermediate values, the last of which the
    checkpoint keeps)."""
    kw = {"stepper": "ts"} if form is None else {"formulation": form, "stepper": "ts"}
    ref = _bit_for_bit(shared_dir(tmp_path), joint, form, kw)
    assert ref.stepper == "ts"


def _bit_for_bit(d, joint, form, kw):
    """The checks of :func:`test_restart_is_bit_for_bit` with the runs' arguments ``kw``;
    returns the uninterrupted run."""
    ref, _, b = run(str(d / "ref"), 2 * N * DT, N, joint=joint, **kw)
    s_ref = summary(ref, b)
    first, _, _ = run(str(d / "run"), N * DT, N, joint=joint, **kw)
    assert first.restarted_from is None and first.steps == N
    assert ref.formulation == (form or ("first-order" if joint else "second-order"))
    assert ref.ts_type == {"hamiltonian": "theta", "second-order": "alpha"}.get(
        form, "bdf" if joint else "alpha")
    again, _, b = run(str(d / "run"), 2 * N * DT, N, restart=True, joint=joint, **kw)
    s = summary(again, b)
    assert again.restarted_from == first.times[-1]
    # the histories from the checkpoint on: the reference's steps N..2N
    np.testing.assert_array_equal(again.times, ref.times[N:])
    for key in ("angle", "rate") + (("arm_angle",) if joint else ()):
        _same(s[key], np.asarray(s_ref[key])[N:])
    _same(s["at"], s_ref["at"])
    _same(again.probes, ref.probes[N:])
    _same(again.energy["work"], ref.energy["work"][N:])
    if joint:
        _same(again.joints["pin"].force, ref.joints["pin"].force[N:])
    if COMM.rank == 0:
        _same(s["u"], s_ref["u"])
        head, rows = csv_rows(d / "run.csv")
        head_ref, rows_ref = csv_rows(d / "ref.csv")
        assert head == head_ref and "work" in head
        assert rows.shape == rows_ref.shape == (2 * N + 1, len(head))
        for col in range(len(head)):
            _same(rows[:, col], rows_ref[:, col])
        np.testing.assert_array_equal(field_times(str(d / "run")),
                                      field_times(str(d / "ref")))
    COMM.Barrier()
    return ref


@pytest.mark.serial  # the schemes' property: the ranks are the other tests' concern
@pytest.mark.parametrize("joint", [False, True], ids=["alpha", "joint-bdf2"])
def test_what_checkpoints_change(joint, tmp_path):
    """The checkpointing run against runs without checkpoints at dt and dt/2."""
    d = shared_dir(tmp_path)
    ends = {}
    for tag, dt, every in (("ckpt", DT, N), ("plain", DT, None), ("half", DT / 2, None)):
        if tag == "half" and not joint:
            continue
        r, _, b = run(str(d / tag), 2 * N * DT, every, joint=joint, dt=dt)
        s = summary(r, b)
        ends[tag] = np.concatenate([[_last(s, "angle"), _last(s, "rate")], s["at"][0]])
    change = np.abs(ends["ckpt"] - ends["plain"])
    if joint:  # BDF2 restarted at each checkpoint: within the scheme's own error
        error = np.abs(ends["plain"] - ends["half"])
        assert np.all(change < 0.5 * error), (change, error)
    else:  # the midpoint rule: round-off
        assert np.all(change <= 1e-9 * np.abs(ends["plain"]) + 1e-15), change


def test_sigterm_then_restart(tmp_path):
    """SIGTERM to rank 0 at step 13: a checkpoint there, SystemExit on every rank; the restart
    ends where the uninterrupted run ends."""
    d = shared_dir(tmp_path)
    ref, _, b = run(str(d / "ref"), 2 * N * DT, N)
    s_ref = summary(ref, b)

    def send(t, frames):
        if COMM.rank == 0 and abs(t - 13 * DT) < 1e-3 * DT:
            os.kill(os.getpid(), signal.SIGTERM)

    old = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as e:
        run(str(d / "run"), 2 * N * DT, N, callback=send)
    assert e.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is old
    again, _, b = run(str(d / "run"), 2 * N * DT, N, restart=True)
    assert again.restarted_from == pytest.approx(13 * DT, rel=1e-12)
    s = summary(again, b)
    for key in ("angle", "rate"):
        assert abs(_last(s, key) - _last(s_ref, key)) <= 1e-9 * abs(_last(s_ref, key))
    assert np.abs(s["at"] - s_ref["at"]).max() <= 1e-9 * np.abs(s_ref["at"]).max()
    check_files(str(d / "run"), str(d / "ref"))


def _listing(d: Path) -> dict:
    """Every file under ``d`` with its bytes."""
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = Path(root) / n
            out[str(p.relative_to(d))] = p.read_bytes()
    return out


def test_bad_input(tmp_path):
    """Refused on every rank, the files left as they were."""
    from tests.models.checkpoint_cases import run as prescribed
    from tests.models.coupled_checkpoint_cases import model

    d = shared_dir(tmp_path)
    hub, joint, finer = model()[0], model(joint=True)[0], model(cells=(4, 2))[0]

    def go(m, stem, steps, every=2, **kw):
        return m.integrate(t_end=steps * DT, dt=DT, output=str(d / stem) if stem else None,
                           checkpoint_every=every, progress=False, **kw)

    for every in (0, -3, 2.0, True):
        with pytest.raises(ValueError, match="checkpoint_every must be a positive integer"):
            go(hub, "bad", 4, every)
    with pytest.raises(ValueError, match="checkpoint_every needs output"):
        go(hub, None, 4)
    with pytest.raises(ValueError, match="checkpoints of .*TS type 'rk' keeps a history"):
        go(hub, "bad", 4, options={"ts_type": "rk"})
    with pytest.raises(ValueError, match="restart must be True or False"):
        go(hub, "bad", 4, restart="yes")
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        go(hub, "none", 4, restart=True)
    assert not any(d.iterdir())  # nothing written by the refused runs
    # a checkpoint, then restarts that do not fit it
    go(joint, "j", 4)
    go(hub, "h", 4)
    prescribed("second-order", str(d / "p"), 2e-4, 1)
    COMM.Barrier()
    before = _listing(d)
    with pytest.raises(ValueError, match="u0: no initial state with restart"):
        go(joint, "j", 8, restart=True, u0=np.zeros(1))
    with pytest.raises(ValueError, match="spectral radius 1"):
        go(joint, "j", 8, restart=True, formulation="second-order", spectral_radius=0.5)
    with pytest.raises(ValueError, match="formulation 'first-order'"):
        go(joint, "j", 8, restart=True, formulation="second-order")
    with pytest.raises(ValueError, match="t_end"):
        go(joint, "j", 3, restart=True)
    with pytest.raises(ValueError, match=r"\['hub', 'arm'\] computed frames.*another model"):
        go(hub, "j", 8, restart=True, formulation="first-order")
    with pytest.raises(ValueError, match=r"written by another model \(body 'beam': a mesh of "
                                         r"21 nodes, this model's has [0-9]+\)"):
        go(finer, "h", 8, restart=True)
    with pytest.raises(ValueError, match="not written by a run with computed frames"):
        go(hub, "p", 8, restart=True, formulation="second-order")
    COMM.Barrier()
    assert _listing(d) == before


# -- another number of ranks ------------------------------------------------------------------
SCRIPT = MODELS / "coupled_checkpoint_cases.py"
#: a restart on another partition: the steps' Newton solves (stol 1e-9 of each block's update,
#: :class:`~dolfinx_mbs.integrate.ts.coupled.BorderedNewton`) end at other iterates
TOL = 1e-9


def _launch(n, args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    cmd = compat.mpiexec_command(n) + [sys.executable, str(SCRIPT)] + [str(a) for a in args]
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        _, err = p.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail(f"{cmd}: no result within 240 s (hung)")
    assert p.returncode == 0, err[-3000:]


@pytest.mark.serial
@pytest.mark.parametrize("stepper", ["auto", "dense"], ids=["ts", "dense"])
def test_restart_on_another_number_of_ranks(stepper, tmp_path):
    """Written on 2 ranks, restarted on 1: the 2-rank reference's end to 1e-10. The dense
    path (the beam unreduced: its unknowns are the bodies' dofs, named) alike: its
    arrays are gathered on every rank from the redistributed rank files."""
    d = tmp_path
    T1, T = N * DT, 2 * N * DT
    flag = [stepper] if stepper == "dense" else []
    if flag:  # the kernels compiled here (numba's cache), not by the 2 ranks at once
        run(None, DT, stepper="dense", modes=MODES)
    if not compat.has_vtx:  # XDMF field files hold the writing partition's node order
        _launch(2, ["run", T1, N, "first"] + flag, d)
        before = (d / "run.csv").read_bytes()
        with pytest.raises(ValueError, match="written by 2 rank.*DOLFINx 0.5"):
            run(str(d / "run"), T, N, restart=True, stepper=stepper)
        assert (d / "run.csv").read_bytes() == before
        return
    cases = (("run", False),) + ((("runj", True),) if stepper == "auto" else ())
    args = []
    for stem, joint in cases:
        extra = flag + (["joint"] if joint else [])
        args += ["+", "ref" + stem[3:], T, N, "final"] + extra
        args += ["+", stem, T1, N, "first"] + extra
    _launch(2, args[1:], d)
    for stem, joint in cases:
        ref = np.load(d / f"ref{stem[3:]}.final.npz")
        r, _, b = run(str(d / stem), T, N, restart=True, joint=joint, stepper=stepper)
        assert r.stepper == ("dense" if flag else "ts")
        g = summary(r, b)
        assert int(ref["ranks"]) == 2 and g["ranks"] == 1
        assert r.restarted_from == pytest.approx(T1, rel=1e-12)
        assert r.steps == int(ref["steps"]) == 2 * N
        where = locate(ref["keys"], g["keys"])
        assert np.all(where >= 0) and len(where) == len(ref["keys"])
        diff = {"u": np.linalg.norm(g["u"] - ref["u"][where]) / np.linalg.norm(ref["u"]),
                "at": np.abs(g["at"] - ref["at"]).max() / np.abs(ref["at"]).max()}
        for key in ("angle", "rate") + (("arm_angle",) if joint else ()):
            diff[key] = abs(_last(g, key) - ref[key][-1]) / (abs(ref[key][-1]) + 1e-300)
        print(stem, diff)
        assert max(diff.values()) <= TOL, diff
        check_files(str(d / stem), str(d / f"ref{stem[3:]}"))



@pytest.mark.parametrize("stepper", ["ts", "dense"])
def test_rigid_bodies_only(stepper, tmp_path):
    """A double pendulum of rigid bars (a Hinge, a planar Free frame, a revolute joint: no
    elastic unknowns, the state all in ``latest.json``): restarted, the uninterrupted run's
    angles and CSV rows to the last bit (on the dense path too: Maggi's stages, which keep
    their partition and matrix from stage to stage, start afresh at each checkpoint)."""
    from tests.models.mechanisms import double_pendulum

    d = shared_dir(tmp_path)

    def go(stem, n, restart=False):
        return double_pendulum().integrate(t_end=n * DT, dt=DT, output=str(d / stem),
                                            checkpoint_every=N, restart=restart,
                                            progress=False, stepper=stepper)

    ref = go("ref", 2 * N)
    go("run", N)
    again = go("run", 2 * N, restart=True)
    assert again.restarted_from == ref.times[N] and again.ts_type == "bdf"
    assert again.stepper == ref.stepper == stepper
    for name, key in (("h1", "angle"), ("h1", "rate"), ("f2", "angle")):
        np.testing.assert_array_equal(getattr(again.frames[name], key),
                                      getattr(ref.frames[name], key)[N:])
    np.testing.assert_array_equal(again.joints["elbow"].force, ref.joints["elbow"].force[N:])
    if COMM.rank == 0:
        np.testing.assert_array_equal(csv_rows(d / "run.csv")[1], csv_rows(d / "ref.csv")[1])
    COMM.Barrier()


def test_springs_on_prescribed_frames(tmp_path):
    """A bar ringing against a spring to the ground (no computed frame: the spring's force is
    the coupled run's only unknown beside the elastic ones; BDF2): restarted, the
    uninterrupted run's tension and tip to the last bit where runs repeat so."""
    import dolfinx_mbs as mbs
    from tests.models.springbar import EA, GAP, L, _bar, _beta, _mode

    d = shared_dir(tmp_path)

    def go(stem, n, restart=False):
        bar = _bar(mbs.frames.ConstantSpin(rate=0.0), "bar", nx=4)
        m = mbs.Model([bar])
        m.clamp(bar, lambda x: np.isclose(x[0], 0.0))
        m.rigid(bar, lambda x: np.isclose(x[0], L))
        m.spring(bar, (L, 0.0), None, (L + GAP, 0.0), stiffness=EA / L, name="tip")
        kw = {} if restart else {"u0": [_mode(bar, _beta(EA / L))]}
        return m.integrate(t_end=n * 1e-5, dt=1e-5, output=str(d / stem), checkpoint_every=N,
                           restart=restart, progress=False, probes=[(L, 0.0)], **kw)

    ref = go("ref", 2 * N)
    go("run", N)
    again = go("run", 2 * N, restart=True)
    assert ref.ts_type == "bdf" and again.restarted_from == ref.times[N]
    assert np.abs(ref.joints["tip"].tension).max() > 0.0
    _same(again.joints["tip"].tension, ref.joints["tip"].tension[N:])
    _same(again.probes, ref.probes[N:])


# -- the dense coupled path (stepper="dense") ---------------------------------------------------
#: the beam reduced to so many modes: the dense path's model (a few unknowns: fast)
MODES = 4
#: the TS path's Newton tolerances tightened to round-off (its defaults stop at an estimated
#: 1e-9 of each block's update)
TIGHT = {"snes_stol": 1e-16, "snes_rtol": 1e-16}


@pytest.mark.parametrize("joint,form", [(False, None), (True, None), (True, "second-order")],
                         ids=["alpha", "joint-bdf2", "joint-alpha"])
def test_dense_restart_is_bit_for_bit(joint, form, tmp_path):
    """The dense path's checkpoints (``stepper="auto"`` keeps the dense path with them; with
    the joint, named): the restart takes the uninterrupted dense
    run's steps to the last bit (its batches end at the checkpoints, where it starts its
    scheme again as a restart does): the same checks as on the TS path."""
    kw = dict(modes=MODES, stepper="dense" if joint else "auto")
    if form is not None:
        kw["formulation"] = form
    ref = _bit_for_bit(shared_dir(tmp_path), joint, form, kw)
    assert ref.stepper == "dense"


@pytest.mark.parametrize("joint", [False, True], ids=["alpha", "joint-bdf2"])
def test_dense_and_ts_restart_each_other(joint, tmp_path):
    """One format: a checkpoint of the TS path restarts on the dense path and one of the
    dense path on the TS path; each ends at the TS path's uninterrupted run (an independent
    implementation of the same schemes, both paths' Newton tolerances tightened) to 1e-9 of
    each value's size, with its CSV rows and field times (measured on one rank: 4e-12 to
    2.4e-10, the largest in the hub's rate and the pin's force)."""
    d = shared_dir(tmp_path)
    ts = dict(modes=MODES, stepper="ts", options=TIGHT)
    dense = dict(modes=MODES, stepper="dense", options={"snes_stol": TIGHT["snes_stol"]})
    ref, _, b = run(str(d / "ref"), 2 * N * DT, N, joint=joint, **ts)
    s_ref = summary(ref, b)

    def close(a, b, what):
        a, b = np.asarray(a, float), np.asarray(b, float)
        err = np.nanmax(np.abs(a - b)) / np.nanmax(np.abs(b))
        assert err < 1e-9, (what, err)

    for tag, first, then in (("ts_dense", ts, dense), ("dense_ts", dense, ts)):
        run(str(d / tag), N * DT, N, joint=joint, **first)
        again, _, b = run(str(d / tag), 2 * N * DT, N, restart=True, joint=joint, **then)
        assert again.stepper == then["stepper"] and again.steps == 2 * N
        np.testing.assert_allclose(again.times, ref.times[N:], rtol=1e-14)
        s = summary(again, b)
        for key in ("angle", "rate") + (("arm_angle",) if joint else ()):
            close(s[key], np.asarray(s_ref[key])[N:], (tag, key))
        close(s["at"], s_ref["at"], (tag, "at"))
        close(again.probes, ref.probes[N:], (tag, "probes"))
        close(again.energy["work"][1:], ref.energy["work"][N + 1:], (tag, "work"))
        if joint:
            close(again.joints["pin"].force[1:], ref.joints["pin"].force[N + 1:], (tag, "pin"))
        check_files(str(d / tag), str(d / "ref"))


def test_dense_sigterm_then_restart(tmp_path):
    """SIGTERM to rank 0 at step 13 on the dense path (its observers see the batch's steps one
    by one: the signal is seen at the next step's end, every rank alike): a checkpoint there,
    SystemExit on every rank; the restart ends where the uninterrupted dense run ends."""
    d = shared_dir(tmp_path)
    kw = dict(modes=MODES, stepper="dense")
    ref, _, b = run(str(d / "ref"), 2 * N * DT, N, **kw)
    s_ref = summary(ref, b)

    def send(t, frames):
        if COMM.rank == 0 and abs(t - 13 * DT) < 1e-3 * DT:
            os.kill(os.getpid(), signal.SIGTERM)

    old = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as e:
        run(str(d / "run"), 2 * N * DT, N, callback=send, **kw)
    assert e.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is old
    again, _, b = run(str(d / "run"), 2 * N * DT, N, restart=True, **kw)
    assert again.restarted_from == pytest.approx(13 * DT, rel=1e-12)
    assert again.stepper == "dense" and again.steps == 2 * N
    s = summary(again, b)
    for key in ("angle", "rate"):
        assert abs(_last(s, key) - _last(s_ref, key)) <= 1e-9 * abs(_last(s_ref, key))
    assert np.abs(s["at"] - s_ref["at"]).max() <= 1e-9 * np.abs(s_ref["at"]).max()
    check_files(str(d / "run"), str(d / "ref"))


def test_dense_bad_input(tmp_path):
    """On the dense path: refused on every rank, the files left as they were."""
    from tests.models.checkpoint_cases import run as prescribed
    from tests.models.coupled_checkpoint_cases import model

    d = shared_dir(tmp_path)
    hub, joint = model(modes=MODES)[0], model(joint=True, modes=MODES)[0]
    other = model(cells=(4, 2), modes=MODES)[0]

    def go(m, stem, steps, every=2, **kw):
        kw.setdefault("stepper", "dense")
        return m.integrate(t_end=steps * DT, dt=DT, output=str(d / stem) if stem else None,
                           checkpoint_every=every, progress=False, **kw)

    with pytest.raises(ValueError, match="checkpoint_every needs output"):
        go(hub, None, 4)
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        go(hub, "none", 4, restart=True)
    with pytest.raises(ValueError, match="stepper='dense' cannot step a run with PETSc"):
        go(hub, "none", 4, options={"ts_type": "rk"})
    assert not any(d.iterdir())  # nothing written by the refused runs
    go(joint, "j", 4)
    go(hub, "h", 4)
    prescribed("second-order", str(d / "p"), 2e-4, 1)
    COMM.Barrier()
    before = _listing(d)
    with pytest.raises(ValueError, match="spectral radius 1"):
        go(hub, "h", 8, restart=True, spectral_radius=0.5)
    with pytest.raises(ValueError, match="formulation 'second-order'"):
        go(hub, "h", 8, restart=True, formulation="first-order")
    with pytest.raises(ValueError, match="t_end"):
        go(hub, "h", 3, restart=True)
    with pytest.raises(ValueError, match=r"\['hub', 'arm'\] computed frames.*another model"):
        go(hub, "j", 8, restart=True, formulation="first-order")
    with pytest.raises(ValueError, match=r"written by another model \(body 'beam': a mesh of "
                                         r"21 nodes, this model's has [0-9]+\)"):
        go(other, "h", 8, restart=True)
    with pytest.raises(ValueError, match="not written by a run with computed frames"):
        go(hub, "p", 8, restart=True, formulation="second-order")
    COMM.Barrier()
    assert _listing(d) == before
    # the model runs on afterwards: the refusals left nothing behind
    r = go(hub, "h", 8, restart=True)
    assert r.stepper == "dense" and r.restarted_from == pytest.approx(4 * DT, rel=1e-12)
