"""The small-displacement model's range (issue 27, item 5): a run whose body rotates relative
to its frame past 0.1 rad says so, once, naming the body, the rotation and the remedy.

The case of the issue: a link pinned to the tip of an arm whose frame spins up from rest (a
centrifugal pendulum started by the Euler force, with nothing to hold it back at first). In
the small-displacement model the link's swing by theta about the pin P is the field
u = theta e_z x (X - P), whose rotation 1/2 curl u is theta exactly; its tip at distance l from
the pin moves by theta l across the link. The largest rotation the run reports is checked
against the largest |u_y| / l of a probe at the tip (the field's gradient against a point
value), on the TS path and on the dense path (a second stepper over the same states). A
small-deflection run (a cantilever spun up with a tip load) reports a rotation far below the
limit (its tip load bends it by about 0.02 rad) and gives no warning.
"""

import warnings

import dolfinx.mesh as dmesh
import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.integrate.motion_range import LIMIT, SmallDisplacementWarning
from tests.models.checkpoint_cases import DT
from tests.models.checkpoint_cases import run as beam_run

R, L_LINK, H = 1.0, 2.0 / 3.0, 0.02


def spin_up_pendulum():
    comm = MPI.COMM_WORLD
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=20.0, ramp_time=0.1)
    mat = mbs.materials.PlaneStress(E=210e9, nu=0.3, density=7850.0, thickness=H)
    arm_mesh = dmesh.create_rectangle(comm, [np.array([0.0, -0.05]), np.array([R, 0.05])],
                                      [6, 1], dmesh.CellType.quadrilateral)
    link_mesh = dmesh.create_rectangle(comm, [np.array([R, -H / 2]),
                                              np.array([R + L_LINK, H / 2])],
                                       [12, 1], dmesh.CellType.quadrilateral)
    arm = mbs.Body(arm_mesh, mat, frame, degree=2, name="arm", stiffening="prestress")
    link = mbs.Body(link_mesh, mat, frame, degree=2, name="link", stiffening="prestress")
    model = mbs.Model([arm, link])
    model.clamp(arm, lambda x: np.full(x.shape[1], True))
    model.pin(arm, link, (R, 0.0, 0.0))
    return model, link


def recorded(run):
    """``run()``'s result and the small-displacement warnings it gave on this rank."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = run()
    return r, [w for w in caught if issubclass(w.category, SmallDisplacementWarning)]


@pytest.mark.parametrize("stepper", ["ts", "dense"])
def test_spin_up_pendulum_warns(stepper):
    model, link = spin_up_pendulum()
    tip = (link, (R + L_LINK, 0.0))
    r, caught = recorded(lambda: model.integrate(0.1, 2e-3, probes=[tip], stepper=stepper,
                                                 progress=False))
    swing = np.abs(r.probes[:, 0, 1]).max() / L_LINK
    assert swing > 5 * LIMIT  # far out of range
    assert r.rotation["arm"] == 0.0
    assert abs(r.rotation["link"] - swing) <= 0.02 * swing, (r.rotation["link"], swing)
    # on every rank: once while the run goes on, once at its end with the largest rotation
    assert len(caught) == 2
    early, text = (str(w.message) for w in caught)
    assert "'link'" in early and "the run goes on" in early and "'arm'" not in early
    assert "'link'" in text and f"{r.rotation['link']:.3g} rad" in text
    assert "'arm'" not in text and 'stiffening="nonlinear"' in text


def test_small_deflection_run_does_not_warn(tmp_path):
    stem = MPI.COMM_WORLD.bcast(str(tmp_path / "beam"), root=0)
    (r, u), caught = recorded(lambda: beam_run("second-order", stem, 40 * DT, 1000))
    assert 0.0 < r.rotation["beam"] < 0.5 * LIMIT
    assert not caught
