"""Frames against closed forms and against independently differentiated motions."""

import dataclasses
import math

import numpy as np
import pytest

import dolfinx_mbs as mbs
from dolfinx_mbs.frames import rotation_about, skew


def Rx(a):
    return rotation_about((1, 0, 0), a)


def Rz(a):
    return rotation_about((0, 0, 1), a)


def test_constant_spin_about_offset_axis():
    c = np.array([0.3, -0.2, 0.5])
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    f = mbs.frames.ConstantSpin(axis=3 * axis, rate=7.0, origin=c)
    s = f.state(0.4)
    assert np.allclose(s.R.T @ s.R, np.eye(3), atol=1e-14)
    assert np.allclose(s.omega, 7.0 * axis) and np.allclose(s.alpha, 0.0)
    # the axis point stays put: r_O + R c = c
    assert np.allclose(s.to_global(c), c, atol=1e-14)
    # acceleration of any material point: omega x (omega x (X - c)) (local components)
    X = np.array([1.0, 0.5, -0.25])
    a = s.a_O + np.cross(s.omega, np.cross(s.omega, X))
    assert np.allclose(a, np.cross(s.omega, np.cross(s.omega, X - c)), atol=1e-12)


def test_spin_up_profile_closed_form():
    W, T = 6.0, 15.0
    f = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=W, ramp_time=T)
    for t in (0.0, 1.0, 7.5, 14.9, 15.0, 20.0):
        s = f.state(t)
        if t < T:
            rate = W / T * (t - T / (2 * math.pi) * math.sin(2 * math.pi * t / T))
            acc = W / T * (1 - math.cos(2 * math.pi * t / T))
        else:
            rate, acc = W, 0.0
        assert s.omega[2] == pytest.approx(rate, abs=1e-13)
        assert s.alpha[2] == pytest.approx(acc, abs=1e-13)
    # the angle is the integral of the rate: compare with a quadrature
    ts = np.linspace(0, 20.0, 20001)
    rates = np.array([f.state(t).omega[2] for t in ts])
    theta = np.sum(0.5 * (rates[1:] + rates[:-1]) * np.diff(ts))  # trapezoidal rule
    R = f.state(20.0).R
    assert math.atan2(R[1, 0], R[0, 0]) == pytest.approx(
        math.atan2(math.sin(theta), math.cos(theta)), abs=1e-6)


def test_prescribed_matches_analytic_derivatives():
    """R = Rz(a(t)) Rx(b(t)), r_O = (cos t, t^2, sin 2t): omega_local = Rx(b)^T a' e_z + b' e_x."""
    a = lambda t: 0.7 * t**2  # noqa: E731
    ad, add = (lambda t: 1.4 * t), (lambda t: 1.4)
    b = lambda t: 0.5 * math.sin(3 * t)  # noqa: E731
    bd, bdd = (lambda t: 1.5 * math.cos(3 * t)), (lambda t: -4.5 * math.sin(3 * t))
    ez, ex = np.array([0, 0, 1.0]), np.array([1.0, 0, 0])
    f = mbs.frames.Prescribed(rotation=lambda t: Rz(a(t)) @ Rx(b(t)),
                              origin=lambda t: (math.cos(t), t**2, math.sin(2 * t)))
    for t in (0.0, 0.3, 1.7):
        s = f.state(t)
        R2 = Rx(b(t))
        w = R2.T @ (ad(t) * ez) + bd(t) * ex
        dR2T = -bd(t) * skew(ex) @ R2.T
        al = dR2T @ (ad(t) * ez) + R2.T @ (add(t) * ez) + bdd(t) * ex
        R = Rz(a(t)) @ R2
        v = np.array([-math.sin(t), 2 * t, 2 * math.cos(2 * t)])
        acc = np.array([-math.cos(t), 2.0, -4 * math.sin(2 * t)])
        assert np.allclose(s.omega, w, rtol=0, atol=1e-8)
        assert np.allclose(s.alpha, al, rtol=0, atol=1e-6)
        assert np.allclose(s.v_O, R.T @ v, atol=1e-8)
        assert np.allclose(s.a_O, R.T @ acc, atol=1e-6)


def test_prescribed_reproduces_spin_up():
    """A second formulation: the spin-up frame given only by its rotation matrices."""
    su = mbs.frames.SpinUp(axis=(1, 1, 0), final_rate=4.0, ramp_time=2.0, origin=(0.5, 0, 0))
    pr = mbs.frames.Prescribed(rotation=su.rotation, origin=su.origin)
    for t in (0.3, 1.0, 1.9):
        s1, s2 = su.state(t), pr.state(t)
        for name in ("omega", "alpha", "v_O", "a_O"):
            assert np.allclose(getattr(s1, name), getattr(s2, name), atol=1e-6), name


def test_planar_frame():
    f = mbs.frames.Planar(theta=lambda t: 2.0 * t + 0.5 * t**2, origin=lambda t: (t**3, 0.0))
    s = f.state(1.0)
    assert s.omega[2] == pytest.approx(3.0, abs=1e-8)
    assert s.alpha[2] == pytest.approx(1.0, abs=1e-6)
    th = 2.5
    Rt = Rz(th).T
    assert np.allclose(s.v_O, Rt @ [3.0, 0, 0], atol=1e-7)
    assert np.allclose(s.a_O, Rt @ [6.0, 0, 0], atol=1e-5)
    assert s.is_planar()
    assert mbs.frames.Planar(theta=0.3).time_invariant
    # out of the plane, or not a number anywhere: not planar
    for name, k in (("omega", 0), ("alpha", 1), ("v_O", 2), ("a_O", 2)):
        vec = getattr(s, name).copy()
        vec[k] += 1e-3
        assert not dataclasses.replace(s, **{name: vec}).is_planar(), name
    for name in ("omega", "alpha", "v_O", "a_O"):
        for k in range(3):
            vec = getattr(s, name).copy()
            vec[k] = np.nan
            assert not dataclasses.replace(s, **{name: vec}).is_planar(), (name, k)


@pytest.mark.parametrize("bad", [
    lambda t: np.diag([1.0, 1.0, 1.01]),       # stretched
    lambda t: np.diag([1.0, 1.0, -1.0]),       # reflection
    lambda t: np.ones((3, 3)),
    lambda t: np.eye(2, 3),
])
def test_bad_rotation_refused(bad):
    with pytest.raises(ValueError, match="rotation"):
        mbs.frames.Prescribed(rotation=bad)


def test_rotation_checked_at_every_time():
    f = mbs.frames.Prescribed(rotation=lambda t: np.eye(3) * (1.0 + 0.1 * t))
    with pytest.raises(ValueError, match="not orthonormal"):
        f.state(1.0)


def test_non_smooth_motion_refused():
    f = mbs.frames.Planar(theta=lambda t: abs(t - 1.0))
    with pytest.raises(ValueError, match="could not be computed reliably"):
        f.state(1.0)


@pytest.mark.parametrize("kwargs,match", [
    (dict(axis=(0, 0, 0), rate=1.0), "axis"),
    (dict(axis=(0, 0, 1), rate=float("nan")), "rate"),
    (dict(axis=(0, 0, 1, 2), rate=1.0), "axis"),
])
def test_bad_spin_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mbs.frames.ConstantSpin(**kwargs)


def test_bad_spin_up_ramp():
    with pytest.raises(ValueError, match="ramp_time"):
        mbs.frames.SpinUp(final_rate=1.0, ramp_time=0.0)


def test_a_run_up_rate_that_turns_nan_is_named():
    """A stationary frame's run-up whose rate turns NaN past t = 0.5: at t = 0.3 its state is
    the closed form's (rate 10 t, acceleration 10, angle 5 t^2); near and past 0.5 the error
    names the rate, its acceleration or its angle, where a Newton failure hid it."""
    f = mbs.frames.Stationary((0, 0, 1), rate=lambda t: 10.0 * t if t < 0.5 else float("nan"))
    th, w, a = f.spin(0.3)
    assert w == pytest.approx(3.0) and a == pytest.approx(10.0, rel=1e-6)
    assert th == pytest.approx(0.45, rel=1e-6)
    with pytest.raises(ValueError, match=r"rate\(t=0.6\) must be finite"):
        f.spin(0.6)
    with pytest.raises(ValueError, match=r"the spin's acceleration at t=0.5 .*is rate finite "
                                         r"near t"):
        f.spin(0.5 - 1e-12)


@pytest.mark.parametrize("dim", [2, 3])
def test_free_frame_history_of_many_states(dim):
    """A free frame's outputs at many states at once (a dense run's history) are those of
    Rodrigues' rotation about z (2D) or the quaternion's rotation (3D) at each state, the
    velocity in local components; ``describe`` at one state gives the same."""
    from dolfinx_mbs.frames.computed import quaternion_to_rotation
    rng = np.random.default_rng(7)
    fr = mbs.frames.Free(position=(0.1, 0.2, 0.0), name="f", dim=dim)
    fr.bind(dim)
    nz, nw = (3, 3) if dim == 2 else (7, 6)
    Z, W = rng.normal(size=(6, nz)), rng.normal(size=(6, nw))
    many = fr.describe_many(Z, W)
    for i, (z, w) in enumerate(zip(Z, W)):
        if dim == 2:
            R = rotation_about((0.0, 0.0, 1.0), float(z[2]), unit=True)
            ref = {"R": R, "r_O": [z[0], z[1], 0.0], "omega": [0.0, 0.0, w[2]],
                   "v_O": R.T @ [w[0], w[1], 0.0], "angle": z[2]}
        else:
            R = quaternion_to_rotation(z[3:])
            ref = {"R": R, "r_O": z[:3], "omega": w[3:], "v_O": R.T @ w[:3]}
        one = fr.describe(z, w)
        assert set(many) == set(ref) == set(one)
        for k, v in ref.items():
            assert np.allclose(many[k][i], v, rtol=0, atol=1e-14), k
            assert np.allclose(one[k], v, rtol=0, atol=1e-14), k
    assert np.allclose(np.einsum("sij,skj->sik", many["R"], many["R"]), np.eye(3), atol=1e-14)
