"""The typed run configuration (:mod:`dolfinx_mbs.integrate.config`): each part checks its
values when made, naming the keyword; a RunConfig given whole takes no other argument; the
callback of one StepState on both paths, the older forms still served (with a
DeprecationWarning) with the same times and states.

References: the errors' words; the older callback's arguments against the StepState's at the
same steps of a run (the displacement's norm, the hinge's angle), and the StepState's last
angle against the run's recorded history.
"""

import warnings

import numpy as np
import pytest

import dolfinx_mbs as mbs
from dolfinx_mbs.integrate import Checkpoints, Observers, Output, RunConfig, Scheme, StepState
from tests.models.denseruns import seed_rod

BAD = [
    (lambda: RunConfig(t_end=1.0, dt=0.0), ValueError, "dt must be positive"),
    (lambda: RunConfig(t_end=1.0, dt=2.0), ValueError, "exceeds the run's length"),
    (lambda: RunConfig(t_end=1.0, dt=0.1, scheme="second-order"), TypeError, "scheme must be"),
    (lambda: Scheme(formulation="newmark"), ValueError, "formulation must be one of"),
    (lambda: Scheme(stepper="fast"), ValueError, "stepper must be one of"),
    (lambda: Scheme(spectral_radius=1.5), ValueError, r"spectral_radius must lie in \[0, 1\]"),
    (lambda: Output(every=0), ValueError, "output_every must be a positive integer"),
    (lambda: Checkpoints(every=-1), ValueError, "checkpoint_every must be a positive"),
    (lambda: Checkpoints(restart="yes"), ValueError, "restart must be True or False"),
    (lambda: Observers(stability="loud"), ValueError, "stability must be one of"),
    (lambda: Observers(callback=3), ValueError, "callback must be callable"),
    (lambda: RunConfig(t_end=1.0, dt=0.1, initial={"t0": 0.0}), TypeError,
     "initial must be a dolfinx_mbs.integrate.Initial"),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_each_part_checks_its_values(k):
    """A bad value raises when the part is made, naming the keyword (on every rank)."""
    make, error, match = BAD[k]
    with pytest.raises(error, match=match):
        make()


def test_callback_forms_on_prescribed_frames():
    """The StepState callback and the older (t, u, v) see the same steps and states; a
    RunConfig given whole takes no other argument."""
    model = seed_rod(n=3)
    new, old = [], []
    cfg = RunConfig(t_end=2e-3, dt=5e-4, output=Output(progress=False),
                    observers=Observers(callback=lambda s: new.append((s.t, s.u.norm()))))
    r = model.integrate(cfg)
    with pytest.warns(DeprecationWarning, match=r"callback\(t, u, v\) is deprecated"):
        model.integrate(2e-3, 5e-4, progress=False,
                        callback=lambda t, u, v: old.append((t, u.norm())))
    assert len(new) == len(r.times) == 5
    assert np.allclose(new, old, rtol=1e-12, atol=0.0)
    with pytest.raises(ValueError, match=r"RunConfig holds the whole run.*\(dt, output_every\)"):
        model.integrate(cfg, 1e-4, output_every=2)


def test_older_callbacks_with_optional_or_starred_arguments_are_served():
    """``(t, u=None, v=None)`` and ``(t, *rest)`` are of the older form (given a StepState
    they would read it as t): served as (t, u, v), with the warning; ``(*args)`` and one
    argument take the StepState."""
    model = seed_rod(n=3)
    times, starred, new = [], [], []

    def optional(t, u=None, v=None):
        times.append((t, u.norm()))

    for fn in (optional, lambda t, *rest: starred.append((t, rest[0].norm()))):
        with pytest.warns(DeprecationWarning, match=r"callback\(t, u, v\) is deprecated"):
            model.integrate(2e-3, 5e-4, progress=False, callback=fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        model.integrate(2e-3, 5e-4, progress=False,
                        callback=lambda *a: new.append((a[0].t, a[0].u.norm())))
    assert len(times) == 5 and np.allclose(times, starred, rtol=1e-12, atol=0.0)
    assert np.allclose(times, new, rtol=1e-12, atol=0.0)


def test_empty_values_are_not_given():
    """An empty list or mapping, or a NumPy scalar equal to the default, is as good as not
    given: a model of computed frames takes ``reactions=[]``, ``load_frequencies=[]`` and
    ``options={}``."""
    from dolfinx_mbs.integrate.config import Solver, given

    assert given(Scheme(load_frequencies=[])) == []
    assert given(Observers(reactions=[])) == []
    assert given(Solver(options={})) == []
    assert given(Output(every=np.int64(1))) == []
    assert given(Output(every=np.int64(2))) == ["output_every"]
    hub = mbs.frames.Hinge(axis=(0, 0, 1), angle=0.3, rate=2.0, name="hub")
    model = mbs.Model([mbs.RigidBody(mass=1.0, inertia=np.diag([0.1, 0.1, 0.1]), frame=hub)])
    r = model.integrate(0.05, 0.01, reactions=[], load_frequencies=[], progress=False)
    assert len(r.times) == 6


def test_callback_forms_on_computed_frames():
    """On a hinge the StepState carries the frames' outputs, as (t, frames) did; the options
    of prescribed frames only are refused by name."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), angle=0.3, rate=2.0, name="hub")
    model = mbs.Model([mbs.RigidBody(mass=1.0, inertia=np.diag([0.1, 0.1, 0.1]), frame=hub)])
    model.apply_torque(hub, lambda t, s: -0.2 * s.angle)
    new, old = [], []

    def keep(s: StepState) -> None:
        new.append((s.t, s.frames["hub"]["angle"]))

    r = model.integrate(0.1, 0.01, callback=keep, stepper="ts", progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.integrate(0.1, 0.01, stepper="ts", progress=False,
                        callback=lambda t, fr: old.append((t, fr["hub"]["angle"])))
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert np.allclose(new, old, rtol=1e-12, atol=0.0)
    assert new[-1][1] == pytest.approx(r.frames["hub"].angle[-1], rel=1e-14)
    with pytest.raises(ValueError, match="reactions, stability not taken by a model with"):
        model.integrate(0.1, 0.01, reactions=True, stability="off", progress=False)
