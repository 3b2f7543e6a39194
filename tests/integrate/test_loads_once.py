"""A computed frame's applied loads are evaluated once a state: the run's observers (the
frames' torque column, the loads' work) read the values the step's residual evaluated, and call
the user's function only at states the step did not evaluate (the initial state; with
generalized-alpha, whose residual is met inside the step, each step's end once).

The reference: a torque function of time and the hinge's state, counting its calls and
noting those made while the driver shows a step to the observers; the recorded torque against
the function's value at the recorded times, angles and rates.
"""

import numpy as np
import pytest

import dolfinx_mbs as mbs
from dolfinx_mbs.integrate import observers


def _torque(t, s):
    return 0.5 * np.cos(3.0 * t) - 0.2 * s.angle - 0.1 * s.rate


@pytest.mark.parametrize("formulation", ["first-order", "second-order"])
def test_observers_read_the_loads_the_step_evaluated(formulation, monkeypatch):
    """A hinge's torque function is called by the observers only where the step did not
    evaluate it, and the recorded torque is its value at the recorded states."""
    inside = {"observers": False}
    calls = {"all": 0, "observers": 0}
    notify = observers.notify

    def watched(*args, **kwargs):
        inside["observers"] = True
        try:
            return notify(*args, **kwargs)
        finally:
            inside["observers"] = False

    monkeypatch.setattr(observers, "notify", watched)

    def torque(t, s):
        calls["all"] += 1
        calls["observers"] += inside["observers"]
        return _torque(t, s)

    totals = []
    for energy in (True, False):   # the loads' work reads them too: no call more
        hub = mbs.frames.Hinge(axis=(0, 0, 1), angle=0.3, rate=2.0, name="hub")
        rb = mbs.RigidBody(mass=1.0, inertia=np.diag([0.1, 0.1, 0.1]), frame=hub)
        model = mbs.Model([rb])
        model.apply_torque(hub, torque)
        calls.update(all=0, observers=0)
        r = model.integrate(0.1, 0.01, formulation=formulation, stepper="ts", energy=energy,
                            progress=False)
        h = r.frames["hub"]
        expected = [_torque(t, type("S", (), {"angle": a, "rate": w}))
                    for t, a, w in zip(r.times, h.angle, h.rate)]
        assert np.allclose(h.torque, expected, rtol=0.0, atol=1e-14)
        # BDF2 meets its residual at each step's end: the observers call the function at the
        # initial state only; generalized-alpha meets it inside the step: once a step's end
        n = 1 if formulation == "first-order" else len(r.times)
        assert calls["observers"] == n
        totals.append(calls["all"])
    assert totals[0] == totals[1]
