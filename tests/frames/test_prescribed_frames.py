"""Frames given as functions of time (frames.Planar, frames.Prescribed).

Derivatives the user gives are used as given, splines give their own, and the differencing step
of the others is chosen from the motion; each against the closed-form state of the same motion.
"""

import math

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.frames import FrameState, rotation_about
from dolfinx_mbs.frames.prescribed import FIRST_STEP, derivatives

COMM = MPI.COMM_WORLD
EZ = np.array([0.0, 0.0, 1.0])
# a smooth turn of 0.5 rad centred at TC, over a few TAU: with the former fixed first step of
# 0.1 s its derivatives failed from t = 0.053 s on (the differences reached the turn)
TC, TAU, TURN = 0.15, 0.01, 0.5


def turn(t):
    """theta, theta', theta'' of the turn (closed form)."""
    s = math.tanh((t - TC) / TAU)
    d = (1.0 - s * s) / TAU
    return 0.5 * TURN * (1.0 + s), 0.5 * TURN * d, -TURN * s * d / TAU


class Exact(mbs.frames.Frame):
    """The turn's frame in closed form: the reference state."""

    def state(self, t):
        """The closed form at ``t``."""
        th, w, a = turn(t)
        return FrameState(t=t, R=rotation_about(EZ, th), r_O=np.zeros(3), omega=w * EZ,
                          alpha=a * EZ, v_O=np.zeros(3), a_O=np.zeros(3))


def planar(**kwargs):
    """Planar frame of the turn's angle."""
    return mbs.frames.Planar(theta=lambda t: turn(t)[0], **kwargs)


def strip_tip(frame):
    """Tip history of a clamped aluminium strip (1 m x 0.1 m) carried through the turn."""
    mesh = dmesh.create_rectangle(COMM, [np.zeros(2), np.array([1.0, 0.1])], [8, 1],
                                  dmesh.CellType.quadrilateral)
    body = mbs.Body(mesh, mbs.materials.PlaneStress(E=70e9, nu=0.3, density=2700.0,
                                                    thickness=0.01), frame)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model.integrate(t_end=0.3, dt=2e-3, probes=[(1.0, 0.05)], progress=False).probes


def test_states_of_a_fast_smooth_turn():
    """The turn's states against the closed form.

    Numerical derivatives (the step chosen from the motion) through the turn, at every time the
    former fixed step failed at, to 1e-8 and 1e-6; given derivatives exactly.
    """
    numeric, given = planar(), planar(omega=lambda t: turn(t)[1], alpha=lambda t: turn(t)[2])
    ref = Exact()
    wmax, amax = TURN / (2 * TAU), TURN / TAU**2 * 0.385  # |theta''| peaks at 2/(3 sqrt 3)
    for t in np.linspace(0.0, 0.3, 61):
        s, g, r = numeric.state(t), given.state(t), ref.state(t)
        assert abs(s.omega[2] - r.omega[2]) <= 1e-8 * wmax, t
        assert abs(s.alpha[2] - r.alpha[2]) <= 1e-6 * amax, t
        for name in ("R", "omega", "alpha", "v_O", "a_O"):
            assert np.array_equal(getattr(g, name), getattr(r, name)), (t, name)


def test_run_through_a_fast_smooth_turn():
    """The strip carried through the turn against the closed-form frame's run.

    Given derivatives give that run to round-off; numerical ones (they failed mid-run before)
    agree to 1e-6.
    """
    ref = strip_tip(Exact())
    given = strip_tip(planar(omega=lambda t: turn(t)[1], alpha=lambda t: turn(t)[2]))
    numeric = strip_tip(planar())
    scale = np.abs(ref).max()
    assert scale > 1e-6  # the turn moves the tip
    assert np.abs(given - ref).max() <= 1e-13 * scale
    assert np.abs(numeric - ref).max() <= 1e-6 * scale


@pytest.mark.parametrize("tau", [1.0, 1e-2, 1e-4])
def test_step_follows_the_profile(tau):
    """The first step chosen for theta = sin(t / tau) shrinks with tau.

    It is no longer than tau, and the derivatives are the closed form's to 1e-8 and 1e-6.
    """
    f = lambda s: np.array([math.sin(s / tau)])  # noqa: E731
    for t in (0.0, 0.37, 2.0):
        d1, d2, h0 = derivatives(f, t, "theta")
        assert h0 <= tau and h0 <= FIRST_STEP
        assert abs(d1[0] - math.cos(t / tau) / tau) <= 1e-8 / tau
        assert abs(d2[0] + math.sin(t / tau) / tau**2) <= 1e-6 / tau**2


def test_only_omega_given_and_splines():
    """Only omega given, and splines.

    Omega given alone: alpha is its numerical derivative. A spline theta and origin give their
    own derivatives (the spline's, exactly).
    """
    from scipy.interpolate import make_interp_spline

    f = planar(omega=lambda t: turn(t)[1])
    # at rest before the turn omega is 1e-11 with round-off 1e-14 (1 - tanh^2): still resolved
    for t in (0.0, 0.008, 0.1, 0.15, 0.2):
        assert f.state(t).omega[2] == turn(t)[1]
        assert abs(f.state(t).alpha[2] - turn(t)[2]) <= 1e-7 * TURN / TAU**2, t
    ts = np.linspace(0.0, 1.0, 41)
    theta = make_interp_spline(ts, np.sin(3 * ts), k=5)
    path = make_interp_spline(ts, np.stack([np.cos(ts), ts**2], axis=1), k=5)
    g = mbs.frames.Planar(theta=theta, origin=path)
    for t in (0.3, 0.71):
        s = g.state(t)
        assert s.omega[2] == float(theta.derivative(1)(t))
        assert s.alpha[2] == float(theta.derivative(2)(t))
        v, a = (np.append(path.derivative(n)(t), 0.0) for n in (1, 2))
        assert np.array_equal(s.v_O, s.R.T @ v) and np.array_equal(s.a_O, s.R.T @ a)


def Rz(a):
    """Rotation about z."""
    return rotation_about(EZ, a)


def Rx(a):
    """Rotation about x."""
    return rotation_about((1.0, 0.0, 0.0), a)


def test_prescribed_with_given_derivatives():
    """Prescribed with omega, alpha and the origin's derivatives given.

    R = Rz(a t^2 / 2) Rx(b t), r_O = (cos 5t, sin 5t, 0): the state is built from the given
    derivatives exactly; a global omega (the usual slip) is refused at the first state.
    """
    a, b = 40.0, 30.0
    ex = np.array([1.0, 0.0, 0.0])

    def omega(t):  # local: Rx(bt)^T (a t e_z) + b e_x
        return Rx(b * t).T @ (a * t * EZ) + b * ex

    def alpha(t):  # d/dt of the above; d/dt Rx(bt)^T = -b e_x~ Rx(bt)^T
        return -b * np.cross(ex, Rx(b * t).T @ (a * t * EZ)) + Rx(b * t).T @ (a * EZ)

    rot = lambda t: Rz(0.5 * a * t * t) @ Rx(b * t)  # noqa: E731
    org = lambda t: np.array([math.cos(5 * t), math.sin(5 * t), 0.0])  # noqa: E731
    vel = lambda t: 5 * np.array([-math.sin(5 * t), math.cos(5 * t), 0.0])  # noqa: E731
    acc = lambda t: -25 * org(t)  # noqa: E731
    f = mbs.frames.Prescribed(rot, org, omega=omega, alpha=alpha, origin_velocity=vel,
                              origin_acceleration=acc)
    numeric = mbs.frames.Prescribed(rot, org)
    for t in (0.05, 0.4, 1.3):
        s, n = f.state(t), numeric.state(t)
        assert np.array_equal(s.omega, omega(t)) and np.array_equal(s.alpha, alpha(t))
        R = rot(t)
        assert np.array_equal(s.v_O, R.T @ vel(t)) and np.array_equal(s.a_O, R.T @ acc(t))
        # the numerical state (step chosen from the motion) agrees
        assert np.abs(n.omega - s.omega).max() <= 1e-7 * np.abs(s.omega).max()
        assert np.abs(n.alpha - s.alpha).max() <= 1e-5 * np.abs(s.alpha).max()
        assert np.abs(n.a_O - s.a_O).max() <= 1e-5 * np.abs(s.a_O).max()
    wrong = mbs.frames.Prescribed(rot, omega=lambda t: rot(t) @ omega(t))  # global components
    with pytest.raises(ValueError, match=r"omega\(t=0.4\) = \[.*\] does not match the "
                                         r"derivative of the motion"):
        wrong.state(0.4)


def test_given_derivatives_refused_where_they_cannot_apply():
    """Derivatives without what they differentiate, or contradicting it, are refused."""
    with pytest.raises(ValueError, match="alpha= needs omega="):
        planar(alpha=lambda t: 0.0)
    with pytest.raises(ValueError, match="theta is the fixed angle 0.3"):
        mbs.frames.Planar(theta=0.3, omega=1.0)
    with pytest.raises(ValueError, match="origin_velocity= and origin_acceleration= need a "
                                         "moving origin"):
        mbs.frames.Planar(theta=0.3, origin=(1.0, 0.0), origin_velocity=(0.0, 1.0))
    with pytest.raises(ValueError, match=r"omega\(t=0.1\) = \[-?[0-9.e+-]+\] does not match"):
        planar(omega=lambda t: -turn(t)[1]).state(0.1)  # a sign slip
    # a motion that starts at rest: checked at every state until it moves
    slip = planar(omega=lambda t: -turn(t)[1])
    assert slip.state(0.0).omega[2] == -turn(0.0)[1]  # 1e-12: nothing to tell
    with pytest.raises(ValueError, match=r"omega\(t=0.15\) = \[-25\] does not match the "
                                         r"derivative of the motion, \[25\]"):
        slip.state(0.15)


def test_not_smooth_still_refused():
    """A kink at t = 1: no step resolves it; the error names the time and the remedy."""
    f = mbs.frames.Planar(theta=lambda t: abs(t - 1.0))
    with pytest.raises(ValueError, match=r"theta at t=1 could not be computed reliably: .* "
                                         r"Give omega= and alpha= explicitly"):
        f.state(1.0)
    assert f.state(1.01).omega[2] == pytest.approx(1.0, abs=1e-10)  # beside it: one side's
