"""Frames whose motion is computed, in the rigid limit: closed forms of rigid-body motion.

* A physical pendulum (a RigidBody on a Hinge under gravity) released at 90 degrees returns
  to its start after the period 4 sqrt(J_O/(m g d)) K(1/2): the error shrinks at second order.
* The torque-free asymmetric rigid body on a Free frame against Jacobi's elliptic functions
  (tests/models/rigidref.py), spinning near its intermediate axis (it flips): second order in dt;
  linear momentum kept to round-off by every scheme (the frame carries its centre of mass at
  its origin: the momentum is m v_O), energy and the body's |H| by the implicit midpoint rule
  and generalized-alpha at radius 1 (quadratic invariants of Euler's equations).
* Bad input is refused with the same error on every rank.
"""

import math

import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.rigidbodies import I_P, JC, W0, D, G, M, pendulum, tumbling
from tests.models.rigidref import euler_omega, pendulum_period


@pytest.mark.parametrize("formulation", ["second-order", "first-order"])
def test_pendulum_period(formulation):
    """Released horizontal (90 degrees from the bottom), the bob is back after one period."""
    model, _ = pendulum()
    T = pendulum_period(JC + M * D * D, M, G, D, math.pi / 2)
    errors = []
    for n in (100, 200, 400):
        r = model.integrate(t_end=T, dt=T / n, formulation=formulation, progress=False)
        th = r.frames["hub"].angle
        assert r.steps == n
        # at half the period it is horizontal on the other side, at the period back
        errors.append(max(abs(th[-1]), abs(th[n // 2] + math.pi)))
        assert np.ptp(r.frames["hub"].rate) > 0
    order = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(order > 1.8), (errors, order)
    # generalized-alpha at radius 1 (the midpoint rule) against BDF2 (dissipative)
    assert errors[-1] < (1e-6 if formulation == "second-order" else 2e-4), errors


@pytest.mark.parametrize("formulation,options,conserves", [
    ("second-order", None, True),                     # generalized-alpha, radius 1
    ("first-order", {"ts_type": "theta", "ts_theta_endpoint": False}, True),  # implicit midpoint
    ("first-order", None, False),                     # BDF2
])
def test_torque_free_body(formulation, options, conserves):
    model = tumbling()
    errors = []
    # Newton's method solved to round-off (its default stops at 1e-9 of the unknowns): the
    # invariants then hold to round-off too
    options = dict(options or {}, snes_stol=1e-15)
    for dt in (0.02, 0.01):
        r = model.integrate(t_end=4.5, dt=dt, formulation=formulation, options=options,
                            progress=False)
        om = r.frames["sat"].omega
        ref = euler_omega(I_P, W0, r.times)
        errors.append(np.abs(om - ref).max())
        P = r.momentum["linear"]
        assert np.abs(P - P[0]).max() <= 1e-13 * np.abs(P[0]).max()
        E = r.energy["total"]
        H_body = np.linalg.norm(r.momentum["angular"] - np.cross(r.frames["sat"].r_O, P),
                                axis=1)
        if conserves:
            assert np.ptp(E) <= 1e-12 * E[0]
            assert np.ptp(H_body) <= 1e-12 * H_body[0]
        R = r.frames["sat"].R
        assert np.abs(np.einsum("nji,njk->nik", R, R) - np.eye(3)).max() < 1e-13
    # the flip: omega_2 changes sign during the run
    assert om[:, 1].min() < -0.5 and om[:, 1].max() > 1.5
    order = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(order > 1.9), (errors, order)


def _error_everywhere(fn, match):
    """``fn()`` raises ValueError matching ``match`` on every rank."""
    with pytest.raises(ValueError, match=match):
        fn()


@pytest.mark.parametrize("inertia,match", [
    (np.array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), "symmetric"),
    (np.diag([1.0, -1.0, 1.0]), "positive definite"),
    (np.diag([1.0, 1.0, 3.0]), "triangle inequality"),
    (np.array([np.nan, 1.0, 1.0]), "3x3"),
])
def test_bad_inertia(inertia, match):
    hub = mbs.frames.Hinge(name="hub")
    _error_everywhere(lambda: mbs.RigidBody(mass=1.0, inertia=inertia, frame=hub), match)


def test_a_number_for_the_inertia_of_a_body_moving_in_3d():
    """A number is the moment about z of a planar body: on a 3D Free frame, or a hinge about
    another axis, it is refused (its in-plane moments would be made up); on a planar frame or
    a hinge about z it is taken."""
    for frame in (mbs.frames.Free(name="f"), mbs.frames.Hinge(axis=(1, 0, 0), name="f")):
        _error_everywhere(lambda frame=frame: mbs.Model(
            [mbs.RigidBody(mass=1.0, inertia=0.5, frame=frame, name="b")]),
            r"inertia=0.5 \(a number\) is the moment about z of a planar body, but its frame "
            r"'f' moves in 3D")
    for frame in (mbs.frames.Free(name="f", dim=2), mbs.frames.Hinge(axis=(0, 0, 1), name="f")):
        mbs.Model([mbs.RigidBody(mass=1.0, inertia=0.5, frame=frame, name="b")])


def test_a_step_newton_cannot_take_is_said_in_words():
    """A torque of 1e7 N m on a hub carrying a linear elastic beam flings it past anything the
    model can follow: the run stops with Newton's failure in words and where the frames were,
    on every rank (an AttributeError hid it before)."""
    from dolfinx import mesh as dmesh

    hub = mbs.frames.Hinge(axis=(0, 0, 1), name="hub")
    msh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([0.0, -0.01]),
                                                  np.array([1.0, 0.01])], [10, 1])
    beam = mbs.Body(msh, mbs.materials.PlaneStress(E=7e10, nu=0.3, density=2700.0,
                                                   thickness=0.01), hub, degree=2)
    model = mbs.Model([mbs.RigidBody(mass=2.0, inertia=0.1, frame=hub, name="disk"), beam])
    model.attach(beam, lambda x: np.isclose(x[0], 0.0))
    model.apply_torque(hub, lambda t, s: 1e7)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match=r"time integration failed .*Newton's iterations "
                                               r"did not converge in this step.*The computed "
                                               r"frames at the last completed step: hub: "
                                               r"angle [-0-9.e+]+, rate"):
            model.integrate(t_end=0.05, dt=0.005, progress=False)


def test_bad_frames():
    R = np.eye(3)
    R[0, 1] = 0.1
    _error_everywhere(lambda: mbs.frames.Free(orientation=R), "orthonormal")
    _error_everywhere(lambda: mbs.frames.Free(orientation=-np.eye(3)), "determinant")
    _error_everywhere(lambda: mbs.RigidBody(mass=0.0, inertia=np.eye(3),
                                            frame=mbs.frames.Hinge()), "mass")


def test_bad_torques():
    """A torque function that returns NaN, or raises on one rank only: the run stops with the
    same error on every rank (no hang), and a second run of the model works."""
    model, hub = pendulum()
    model.apply_torque(hub, lambda t, s: float("nan") if t > 0.05 else 0.0)
    with pytest.raises(ValueError, match="finite"):
        model.integrate(t_end=0.1, dt=0.01, progress=False)
    model2, hub2 = pendulum()
    rank = MPI.COMM_WORLD.rank

    def fails_on_last(t, s):
        if t > 0.05 and rank == MPI.COMM_WORLD.size - 1:
            raise RuntimeError("motor model failed")
        return 0.0
    model2.apply_torque(hub2, fails_on_last)
    with pytest.raises(RuntimeError, match="motor model failed"):
        model2.integrate(t_end=0.1, dt=0.01, progress=False)
    # a driven motor's angle function and a body force on an elastic body of a computed
    # frame that fail on one rank: the same error everywhere
    from dolfinx import mesh as dmesh

    def angle(t):
        if t > 0.05 and rank == MPI.COMM_WORLD.size - 1:
            raise RuntimeError("angle model failed")
        return 2.0 * t

    model7, hub7 = pendulum()
    model7.motor(hub7, speed=lambda t: float("nan") if t > 0.05 else 1.0, name="nan")
    with pytest.raises(ValueError, match=r"motor 'nan' at t=[0-9.e-]+: its speed function "
                                         r"returned nan .*expected finite values"):
        model7.integrate(t_end=0.1, dt=0.01, progress=False)
    model6, hub6 = pendulum()
    model6.motor(hub6, angle=lambda t: 0.5 + 2.0 * t, name="offset")
    with pytest.raises(ValueError, match=r"motor 'offset': angle\(t0=0\) = 0.5, but a driven "
                                         "angle is the rotation since the start"):
        model6.integrate(t_end=0.1, dt=0.01, progress=False)
    model4, hub4 = pendulum()
    model4.motor(hub4, angle=angle, name="drive")
    with pytest.raises(RuntimeError, match=r"motor 'drive' at t=[0-9.e-]+: angle model failed"):
        model4.integrate(t_end=0.1, dt=0.01, progress=False)
    hub5 = mbs.frames.Hinge(axis=(0, 0, 1), name="hub")
    msh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([0.0, -0.01]),
                                                  np.array([0.3, 0.01])], [6, 1])
    beam = mbs.Body(msh, mbs.materials.PlaneStress(E=7e10, nu=0.3, density=2700.0,
                                                   thickness=0.01), hub5, degree=1)
    model5 = mbs.Model([mbs.RigidBody(mass=1.0, inertia=0.1, frame=hub5, name="disk"), beam])
    model5.attach(beam, lambda x: np.isclose(x[0], 0.0))
    model5.apply_load(beam, body_force=lambda t: fails_on_last(t, None) or (0.0, -9.81))
    with pytest.raises(RuntimeError, match=r"body force at t=[0-9.e-]+: motor model failed"):
        model5.integrate(t_end=0.1, dt=0.01, progress=False)
    # nothing left behind: the model runs again (without the failing load, a new model)
    model3, _ = pendulum()
    r = model3.integrate(t_end=0.1, dt=0.01, progress=False)
    assert r.steps == 10
