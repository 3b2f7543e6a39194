"""Eigenproblems about a computed frame's state: a run leaves each computed frame at its last
state (``ComputedFrame.set_state``), and ``natural_frequencies`` and ``modes`` then take the
bodies' frames there; ``campbell`` sweeps a ground Hinge's rate, the hinge held at that angle.

A steel bar (1 m, 5 cm square) on a Hinge turning freely at 100 rad/s, with centrifugal
prestress: after a short coupled run its in-plane bending frequencies are those of the same bar
on a ConstantSpin frame at the rate the run ended with (a second frame kind, its own prestress
solve), to 1e-5, and not those at rest (the first, 262.6 rad/s at rest, is 266.2 at 100 rad/s:
in-plane, the centrifugal stiffening and the spin softening nearly cancel).
"""

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

E, RHO, LB, HB, RATE = 210e9, 7850.0, 1.0, 0.05, 100.0


def _bar(frame):
    msh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([0.0, -HB / 2]),
                                                  np.array([LB, HB / 2])], [16, 2])
    mat = mbs.materials.PlaneStress(E=E, nu=0.3, density=RHO, thickness=HB)
    bar = mbs.Body(msh, mat, frame, degree=2, name="bar", stiffening="prestress")
    model = mbs.Model([bar])
    model.attach(bar, where=lambda x: np.isclose(x[0], 0.0))
    return model


def test_modes_at_the_computed_state():
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), rate=RATE, name="hub")
    model = _bar(hub)
    before = model.natural_frequencies(n=2)   # before any run: about the initial state
    r = model.integrate(t_end=5e-4, dt=1e-4, progress=False)
    rate = float(r.frames["hub"].rate[-1])
    assert abs(rate - RATE) < 1e-3 * RATE
    got = model.natural_frequencies(n=2)
    ref = _bar(mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=rate)).natural_frequencies(n=2)
    assert np.abs(got / ref - 1.0).max() < 1e-5, (got, ref)
    # the initial state was already spinning at RATE: the first call saw it too
    assert np.abs(before / ref - 1.0).max() < 1e-3, (before, ref)
    still = _bar(mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=0.0)).natural_frequencies(n=2)
    assert abs(ref[0] / still[0] - 1.0) > 0.01, (ref, still)


def test_campbell_about_a_ground_hinge():
    """A Campbell sweep of the bodies on a Hinge takes the hinge at each speed, held at the
    angle a run left it at, turning steadily: the same frequencies as the gyroscopic modes of
    the bar on a ConstantSpin frame at that speed (a second frame kind and a second
    eigensolver, one speed at a time)."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), rate=RATE, name="hub")
    model = _bar(hub)
    model.integrate(t_end=3e-4, dt=1e-4, progress=False)
    speeds = np.array([0.0, 50.0, 100.0])
    table = model.campbell(speeds, n=2)
    for k, s in enumerate(speeds):
        ref = _bar(mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=s)).natural_frequencies(
            n=2, gyroscopic=True)
        got = np.sort(np.abs(table.frequencies[k]))
        assert np.abs(got / ref - 1.0).max() < 1e-6, (s, got, ref)
    # the sweep leaves the hinge as the run left it: the modes about its state are unchanged
    rate = hub.state(0.0).omega[2]
    ref = _bar(mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=rate)).natural_frequencies(n=2)
    assert np.abs(model.natural_frequencies(n=2) / ref - 1.0).max() < 1e-5


def test_campbell_refuses_a_hinge_on_a_moving_parent():
    parent = mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=1.0)
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), parent=parent, name="hub")
    with pytest.raises(ValueError, match="hinge 'hub' turns in a prescribed parent frame"):
        hub.at_rate(10.0)
