"""Springs, dampers and point masses between computed frames, against closed forms.

* A mass hanging from the ground by a spring and damper (a RigidBody on a planar Free frame,
  released at the spring's rest length under gravity): the damped oscillator
  y = -d + d e^(-z w t) (cos w_d t + z / (1 - z^2)^(1/2) sin w_d t), d = m g / k; the error
  shrinks at second order in dt (BDF2), and the reported tension is k (L - L0) + c L'.
* A stiff elastic bar on a Hinge held by a spring from its tip node to the ground, across the
  bar: the small swing at w^2 = k L^2 / J_O (J_O the bar's moment of inertia about the hinge;
  the bar's own first bending is 800 times faster, its effect ~2e-6 of w); the spring's force
  enters the elastic body at the node. Second order in dt.
* The same bar with a torsional spring on the hinge and a point mass m_t at its tip:
  w^2 = k_t / (J_O + m_t L^2).
* Bad input is refused, and a refused point mass leaves the model as it was.
"""

import math

import numpy as np
import pytest

from tests.models.springs import J_O, LB, MASS, RATE0, C, G, K, M, hanging_height, hanging_mass
from tests.models.springs import tip_bar as _bar


def test_spring_damper_mass():
    model = hanging_mass()
    errors = []
    for dt in (0.004, 0.002):
        r = model.integrate(t_end=0.4, dt=dt, progress=False)
        y, _ = hanging_height(r.times)
        got = r.frames["f"].r_O[:, 1]
        assert np.abs(r.frames["f"].r_O[:, 0]).max() < 1e-12
        errors.append(np.abs(got - y).max() / (M * G / K))
        # the tension as the state gives it: k (L - L0) + c L', L = 1 - y
        s = r.joints["s"]
        assert abs(s.tension[0]) < 1e-12 and abs(s.length[0] - 1.0) < 1e-12
        want = K * (-got) + C * (-r.frames["f"].v_O[:, 1])
        assert np.abs(s.tension - want).max() < 1e-9 * K
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[1] < 2e-2, (errors, order)


def _swing_error(r, w):
    """The hinge angle against (w0 / w) sin(w t), relative to its amplitude."""
    amp = RATE0 / w
    return np.abs(r.frames["hub"].angle - amp * np.sin(w * r.times)).max() / amp


def test_spring_on_elastic_node():
    model, hub, bar = _bar()
    k = 100.0 * J_O / LB ** 2           # w = 10 rad/s
    model.spring(bar, (LB, 0.0), None, (LB, -0.5), stiffness=k, name="tip")
    w = math.sqrt(k * LB ** 2 / J_O)
    period = 2 * math.pi / w
    errors = []
    for dt in (period / 80, period / 160):
        r = model.integrate(t_end=period, dt=dt, progress=False)
        errors.append(_swing_error(r, w))
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[1] < 5e-3, (errors, order)
    # the tension: k times the tip's stretch (L theta to first order)
    s = r.joints["tip"]
    stretch = LB * np.sin(r.frames["hub"].angle)
    assert np.abs(s.tension - k * stretch).max() < 2e-2 * k * np.abs(stretch).max()


def test_torsional_spring_point_mass():
    model, hub, bar = _bar()
    mt = 0.5 * MASS
    kt = 100.0 * (J_O + mt * LB ** 2)   # w = 10 rad/s
    model.torsional_spring(hub, stiffness=kt, name="kt")
    model.point_mass(bar, (LB, 0.0), mt, name="tip mass")
    w = 10.0
    period = 2 * math.pi / w
    errors = []
    for n in (80, 160):
        r = model.integrate(t_end=period, dt=period / n, progress=False)
        errors.append(_swing_error(r, w))
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[1] < 5e-3, (errors, order)
    # (without the point mass the swing would be faster by (1 + mt L^2 / J_O)^(1/2) = 1.22)
    assert r.joints["tip mass joint"].drift.max() < 1e-10


def test_bad_input():
    model, hub, bar = _bar(nx=4)
    with pytest.raises(ValueError, match="stiffness"):
        model.spring(bar, (LB, 0.0), None, (LB, -0.5), stiffness=-1.0)
    with pytest.raises(ValueError, match="coincide"):
        model.spring(bar, (LB, 0.0), None, (LB, 0.0), stiffness=1.0)
    with pytest.raises(ValueError, match="not at a node"):
        model.spring(bar, (LB, 0.013), None, (LB, -0.5), stiffness=1.0)
    with pytest.raises(ValueError, match="mass"):
        model.point_mass(bar, (LB, 0.0), 0.0)
    n = len(model.rigid_bodies)
    with pytest.raises(ValueError, match="not at a node"):
        model.point_mass(bar, (LB, 0.013), 1.0)
    assert len(model.rigid_bodies) == n and not model.frame_joints
    with pytest.raises(ValueError, match="stiffness"):
        model.torsional_spring(hub, stiffness=float("nan"))
