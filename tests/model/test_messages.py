"""What the user reads: values in errors, the names of bodies, a run stopped by a signal.

Values are shown as the numbers and lists the user wrote (no ``array(...)``, no
``np.float64(...)``); a body without a name is named by its place in the model, the same on
every rank whatever was made before; SIGTERM says where the checkpoint is.
"""

import os
import re
import signal

import dolfinx.mesh as dm
import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import checks
from tests.models.checkpoint_cases import DT, run

COMM = MPI.COMM_WORLD
M = mbs.materials


def message(fn, *args, **kwargs):
    """The message of the ValueError or TypeError that ``fn(*args, **kwargs)`` raises."""
    with pytest.raises((ValueError, TypeError)) as e:
        fn(*args, **kwargs)
    return str(e.value)


@pytest.mark.parametrize("call,expected", [
    (lambda: checks.real(np.array(np.nan), "spin"), "spin must be finite, got nan"),
    (lambda: mbs.frames.ConstantSpin(axis=np.zeros(3), rate=1.0),
     "axis must have nonzero length, got [0.0, 0.0, 0.0]"),
    (lambda: mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=np.float64(np.inf)),
     "rate must be finite, got inf"),
    (lambda: M.LinearElastic(E=1e9, nu=np.float64(0.7), density=1.0), "got 0.7"),
    (lambda: checks.vector(np.ones((20, 3)), 3, "g"),
     "g must be a finite vector of length 3, got an array of shape (20, 3) ([1.0, 1.0, 1.0, "
     "...])"),
    (lambda: mbs.frames.Sampled(np.array([0.0, 1.0, 1.0, 2.0, 3.0, 4.0])),
     "times[1] = 1.0 >= times[2] = 1.0"),
])
def test_values_shown_as_numbers(call, expected):
    """The message holds the value as written, never numpy's repr."""
    text = message(call)
    assert expected in text, text
    assert "array(" not in text and "np." not in text


def test_unnamed_bodies_named_by_their_place():
    """Unnamed bodies are body<i>, i their index in the model.

    Whatever was made before, the same on every rank; a name the user gave is kept and never
    taken twice.
    """
    mesh = dm.create_unit_square(COMM, 2, 2, dm.CellType.quadrilateral)
    mat = M.PlaneStress(E=1e9, nu=0.3, density=1.0)

    def body(**kw):
        return mbs.Body(mesh, mat, mbs.frames.Planar(), **kw)

    for _ in range(3):  # made before: their number is not in the names (Body is collective)
        body()
    a, blade, c = body(), body(name="blade"), body()
    assert a.name == "body"  # before a model: no number that means nothing
    model = mbs.Model([a, blade, c])
    assert [b.name for b in model.bodies] == ["body0", "blade", "body2"]
    assert COMM.allgather([b.name for b in model.bodies]) == [["body0", "blade", "body2"]] \
        * COMM.size
    clamp = model.clamp(c, lambda x: np.isclose(x[0], 0.0))
    assert clamp.name == "clamp(body2)"
    # a user's "body1" keeps its name; the unnamed body at index 1 does not take it
    d, e = body(name="body1"), body()
    assert [b.name for b in mbs.Model([e, d]).bodies] == ["body0", "body1"]
    assert [b.name for b in mbs.Model([d, e]).bodies] == ["body1", "body1_2"]
    with pytest.raises(TypeError, match="name must be a non-empty string or None, got 3"):
        body(name=3)


def shared_dir(tmp_path):
    """``tmp_path`` of rank 0, on every rank."""
    return COMM.bcast(str(tmp_path), root=0)


@pytest.mark.parametrize("every", [4, None])
def test_sigterm_says_where_the_checkpoint_is(every, tmp_path, capfd):
    """SIGTERM to rank 0 mid-run: the run says where its checkpoint is.

    The run ends with status 128 + 15 and rank 0 (only) says at which time it stopped and
    where the checkpoint was written (or that none was).
    """
    stem = os.path.join(shared_dir(tmp_path), "run")

    def send(t, u, v):
        if COMM.rank == 0 and abs(t - 5 * DT) < 1e-3 * DT:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(SystemExit) as e:
        run("second-order", stem, 20 * DT, every, callback=send)
    assert e.value.code == 128 + signal.SIGTERM
    err = capfd.readouterr().err
    said = re.findall(r"dolfinx_mbs: run stopped by SIGTERM at t=0\.0005; (.*)", err)
    if COMM.rank != 0:
        assert said == []
        return
    assert len(said) == 1, err
    if every is None:
        assert said[0] == "no checkpoint written (checkpoint_every= writes one)"
        return
    folder = f"{stem}.ckpt{os.sep}step_000000005"
    assert said[0] == f"checkpoint written to {folder} (continue with restart=True)"
    assert os.path.isfile(os.path.join(folder, "rank0.npz"))
