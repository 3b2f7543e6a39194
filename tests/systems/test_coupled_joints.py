"""Joints and motors between computed frames, in the rigid limit: closed forms and Lagrange.

* A double pendulum of two bars (a Hinge to the ground, a planar Free frame joined to it by a
  revolute joint) against the Lagrange equations in the two absolute angles integrated by
  scipy: the angles converge at second order in dt, the joint holds to round-off at every
  step (BDF2 solves the joint's rows at the step's end), and its force at the end agrees
  with the bars' momentum balance.
* The same pendulum with a torque motor on its joint (a PD law of the relative angle) against
  the Lagrange equations with the equal and opposite torques.
* A slider-crank (crank on a Hinge driven by an angle motor, rod on a Free frame, slider on a
  Free frame held by a prismatic joint to the ground): the slider's position and the rod's
  angle against the closed-form kinematics (1e-8), and the drive torque against the
  closed-form T' = M(theta) theta'' + M'(theta) theta'^2 / 2 + V'(theta) of the mechanism's
  one coordinate (second order in dt). The initial speeds of the rod and the slider are left
  zero: they are made consistent with the joints.
* Both in generalized-alpha and Hamilton's form (the midpoint rule solves the joints' rows at
  the step's midpoint): angles, drift and joint force at second order, the drive torque at
  order 1.5 (the multipliers kept at the midpoint and extrapolated to the step's end).
* Bad input is refused with the same error on every rank.

On the TS path (``stepper="ts"``; ``"auto"`` takes Maggi's dense stages where they are
compiled): ``tests/integrate/dense/test_dense_maggi.py`` holds the dense stages to it.

The mechanisms and their references are tests/models/mechanisms.py's.
"""

import math

import numpy as np
import pytest

import dolfinx_mbs as mbs
from tests.models.mechanisms import (
    J1,
    J2,
    L1,
    L2,
    M1,
    M2,
    G,
    W,
    crank_closed,
    crank_energy,
    double_pendulum,
    double_pendulum_reference,
    drive_torque,
    elbow_force,
    pd,
    slider_crank,
)


@pytest.mark.parametrize("torque", [None, pd], ids=["free", "pd-motor"])
def test_double_pendulum(torque):
    T = 0.5
    model = double_pendulum(torque)
    ref = double_pendulum_reference(T, torque)
    errors = []
    for dt in (0.005, 0.0025):
        r = model.integrate(t_end=T, dt=dt, progress=False, stepper="ts")
        yr = ref.sol(r.times)
        errors.append(max(np.abs(r.frames["h1"].angle - yr[0]).max(),
                          np.abs(r.frames["f2"].angle - yr[1]).max()))
        assert r.joints["elbow"].drift.max() < 1e-10
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[1] < 2e-3, (errors, order)
    F = elbow_force(ref, T)   # the joint's force on bar 2 (global)
    assert np.abs(r.joints["elbow"].force[-1, :2] - F).max() < 2e-2 * np.abs(F).max(), (
        r.joints["elbow"].force[-1], F)
    assert np.isnan(r.joints["elbow"].force[0]).all()   # the initial force is not computed


def test_slider_crank():
    model = slider_crank()
    errors = []
    for dt in (0.01, 0.005):
        r = model.integrate(t_end=0.6, dt=dt, progress=False, stepper="ts")
        th = r.frames["hub"].angle
        assert np.abs(th - W * r.times).max() < 1e-10
        xs, phi, _, _ = crank_closed(th)
        assert np.abs(r.frames["slf"].r_O[:, 0] - xs).max() < 1e-8
        assert np.abs(r.frames["rodf"].angle - phi).max() < 1e-8
        assert max(r.joints[k].drift.max() for k in ("A", "B", "P", "drive")) < 1e-10
        tq = r.joints["drive"].torque
        ref = np.array([drive_torque(t) for t in th])
        errors.append(np.nanmax(np.abs(tq - ref)) / np.abs(ref).max())
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[1] < 2e-3, (errors, order)


def test_the_motors_work_closes_the_energy_balance():
    """energy["work"] holds the motors' work: the slider-crank's drive (an angle motor, its
    torque times the speed it prescribes) against the closed-form energy change of the
    mechanism turned at W, M(theta) W^2 / 2 + V(theta); and the run's own energies,
    total - total[0] = work, for it and for the pendulum with a PD torque motor on its elbow
    (the motor's torque times the joint's rate: the damping's loss). Both at second order in
    dt (the BDF2 steps' own loss of energy is what remains)."""
    work, balance, pd_balance = [], [], []
    for dt in (0.01, 0.005):
        r = slider_crank().integrate(t_end=0.6, dt=dt, progress=False, stepper="ts")
        th = r.frames["hub"].angle
        ref = np.array([crank_energy(t) for t in th]) - crank_energy(th[0])
        scale = np.abs(ref).max()
        work.append(np.abs(r.energy["work"] - ref).max() / scale)
        e = r.energy
        balance.append(np.abs(e["total"] - e["total"][0] - e["work"]).max() / scale)
        p = double_pendulum(pd).integrate(t_end=0.5, dt=dt, progress=False)
        e = p.energy
        assert e["work"][-1] < -1e-2   # the PD law takes energy out
        pd_balance.append(np.abs(e["total"] - e["total"][0] - e["work"]).max()
                          / (M1 * G * L1))
    for name, e, tol in (("work", work, 3e-3), ("balance", balance, 3e-3),
                         ("pd balance", pd_balance, 2e-3)):
        order = math.log2(e[0] / e[1])
        assert order > 1.8 and e[1] < tol, (name, e, order)


def test_joints_with_numerical_damping():
    """Generalized-alpha at spectral radius 0.8 (the rates carried from step to step enter
    each step): the double pendulum's angles at second order to the Lagrange reference, the
    elbow's force to the momentum balance. Measured before the fix of the post-step that
    restarted the scheme at every step: first order, 5.8e-3 and 2.9e-3 rad. Not on PETSc
    3.18 (DOLFINx 0.5.2's), whose TSALPHA starts from twice the initial rate's backward
    difference (:func:`dolfinx_mbs.compat.alpha1_restart_step`): first order there on both
    paths (3.1e-3, 1.7e-3 rad; the dense stages with the right rate: this test's numbers)."""
    from dolfinx_mbs import compat
    if compat.alpha1_restart_step() != 1.0:
        pytest.skip("this PETSc's TSALPHA starts from twice the initial rate")
    T = 0.5
    ref = double_pendulum_reference(T)
    errors = []
    for dt in (0.005, 0.0025):
        r = double_pendulum().integrate(t_end=T, dt=dt, formulation="second-order",
                                        spectral_radius=0.8, progress=False, stepper="ts")
        yr = ref.sol(r.times)
        errors.append(max(np.abs(r.frames["h1"].angle - yr[0]).max(),
                          np.abs(r.frames["f2"].angle - yr[1]).max()))
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[1] < 5e-4, (errors, order)
    F = elbow_force(ref, T)
    assert np.abs(r.joints["elbow"].force[-1, :2] - F).max() < 2e-2 * np.abs(F).max()


@pytest.mark.parametrize("form", ["second-order", "hamiltonian"])
def test_joints_in_the_midpoint_schemes(form):
    """Generalized-alpha (radius 1) and Hamilton's form (the implicit midpoint rule) solve the
    joints' rows at the step's midpoint, so the joints open by O(dt^2) at the step ends, and
    the state's multipliers are the midpoint's (the step ends' 2 lam_m - lam_0 oscillated about
    the force without approaching it: the elbow's force was 4.2 % off at both steps below,
    the slider-crank's drive torque 43 %). The double pendulum's angles, drift and elbow force
    converge at second order to the Lagrange reference; the slider-crank's drive torque (the
    motor's multiplier, extrapolated to the step's end from the last two midpoints) to the
    closed form after the first step (whose value is its midpoint's) at order 1.5-1.6
    (measured: the midpoint rule's multipliers lose order on the joints' index-2 rows) and its
    slider position at second order."""
    T = 0.5
    ref = double_pendulum_reference(T)
    angle, drift, force = [], [], []
    for dt in (0.005, 0.0025):
        r = double_pendulum().integrate(t_end=T, dt=dt, formulation=form, progress=False,
                                        stepper="ts")
        yr = ref.sol(r.times)
        angle.append(max(np.abs(r.frames["h1"].angle - yr[0]).max(),
                         np.abs(r.frames["f2"].angle - yr[1]).max()))
        drift.append(np.nanmax(r.joints["elbow"].drift))
        F = elbow_force(ref, T)
        force.append(np.abs(r.joints["elbow"].force[-1, :2] - F).max() / np.abs(F).max())
    for name, e, tol in (("angle", angle, 3e-4), ("drift", drift, 5e-5), ("force", force, 1e-3)):
        order = math.log2(e[0] / e[1])
        assert order > 1.8 and e[1] < tol, (name, e, order)
    torque, slider = [], []
    for dt in (0.01, 0.005):
        r = slider_crank().integrate(t_end=0.6, dt=dt, formulation=form, progress=False,
                                     stepper="ts")
        th = r.frames["hub"].angle
        xs = crank_closed(th)[0]
        slider.append(np.abs(r.frames["slf"].r_O[:, 0] - xs).max())
        want = np.array([drive_torque(t) for t in th])
        torque.append(np.abs(r.joints["drive"].torque - want)[2:].max() / np.abs(want).max())
    assert math.log2(slider[0] / slider[1]) > 1.8 and slider[1] < 1e-4, slider
    order = math.log2(torque[0] / torque[1])
    assert order > 1.4 and torque[1] < 1.2e-2, (torque, order)


def test_bad_input():
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="h1")
    l1 = mbs.RigidBody(mass=M1, inertia=J1, frame=hub, centre=(L1 / 2, 0, 0), name="link1")
    fr2 = mbs.frames.Free(position=(L1 + L2 / 2, 0, 0), name="f2", dim=2)
    l2 = mbs.RigidBody(mass=M2, inertia=J2, frame=fr2, centre=(0, 0, 0), name="link2")
    model = mbs.Model([l1, l2], gravity=(0, -G, 0))
    with pytest.raises(ValueError, match="body_a and body_b must differ"):
        model.revolute(l1, l1, point=(L1, 0.0))
    j = model.revolute(l1, l2, point=(L1, 0.0), name="elbow")
    with pytest.raises(ValueError, match="taken"):
        model.revolute(l1, l2, point=(L1, 0.0), name="elbow")
    with pytest.raises(ValueError, match="exactly one"):
        model.motor(j, angle=lambda t: t, speed=lambda t: 1.0)
    with pytest.raises(ValueError, match=r"dt=0.1 exceeds the run's length"):
        model.integrate(t_end=0.05, dt=0.1, progress=False)
    model.motor(j, torque=lambda t, s: float("nan"), name="bad")
    with pytest.raises(ValueError, match="motor 'bad' returned nan"):
        model.integrate(t_end=0.05, dt=0.01, progress=False)
    with pytest.raises(ValueError, match="is not at a node of body"):
        import dolfinx.mesh
        from mpi4py import MPI
        mesh = dolfinx.mesh.create_rectangle(MPI.COMM_WORLD, [[0, 0], [0.4, 0.02]], [8, 1])
        body = mbs.Body(mesh, mbs.materials.PlaneStress(E=7e10, nu=0.3, density=2700), fr2)
        mbs.Model([l1, body]).revolute(l1, body, point=(0.13, 0.011))


def _slider_3d(dt, orientation=None):
    """A rigid block on a 3D Free frame held by a prismatic joint along an inclined axis e,
    tied to the ground by a spring along e, under gravity and a torque that the joint holds:
    (result, e, the spring's k, the block's mass)."""
    e = np.array([1.0, 2.0, 2.0]) / 3.0
    p0 = np.array([0.3, -0.2, 0.5])
    m, k = 2.0, 800.0
    R0 = np.eye(3) if orientation is None else orientation
    fr = mbs.frames.Free(position=p0, orientation=R0, name="block")
    blk = mbs.RigidBody(mass=m, inertia=np.diag([0.02, 0.03, 0.04]), frame=fr, name="blk")
    model = mbs.Model([blk], gravity=(0.0, 0.0, -9.81))
    model.prismatic(None, blk, point=p0, axis=e, name="guide")
    model.spring(blk, p0, None, p0 - 0.4 * e, stiffness=k, length=0.4, name="k")
    model.apply_torque(fr, lambda t, s: np.array([0.5, -0.3, 0.2]) * np.cos(7.0 * t),
                       local=False)
    r = model.integrate(t_end=0.5, dt=dt, progress=False, stepper="ts")
    return r, e, p0, k, m


def test_prismatic_joint_in_3d():
    """The block slides along e as a mass on a spring under gravity's component along it:
    s(t) = s_eq (1 - cos w t), w^2 = k/m, s_eq = m g.e / k; it neither leaves the line nor turns
    (the torque and gravity across e are the joint's), to round-off; the slide converges at
    second order in dt (BDF2 keeps the joint's rows at each step's end)."""
    errs = []
    for dt in (1e-2, 5e-3):
        r, e, p0, k, m = _slider_3d(dt)
        h = r.frames["block"]
        d = h.r_O - p0
        s = d @ e
        w = np.sqrt(k / m)
        s_eq = m * (-9.81 * e[2]) / k
        ref = s_eq * (1.0 - np.cos(w * r.times))
        errs.append(np.abs(s - ref).max() / abs(s_eq))
        across = d - np.outer(s, e)
        assert np.abs(across).max() < 1e-10, np.abs(across).max()
        assert np.abs(h.R - np.eye(3)).max() < 1e-10, np.abs(h.R - np.eye(3)).max()
        assert r.joints["guide"].drift.max() < 1e-10
    assert errs[1] < 0.3 * errs[0] and errs[1] < 4e-2, errs   # 0.101, 0.026 measured
    # a block turned at the start (the joint's directions fixed in a turned frame): the same
    # slide, and it keeps its orientation
    c, sn = np.cos(0.7), np.sin(0.7)
    R0 = np.array([[c, 0.0, sn], [0.0, 1.0, 0.0], [-sn, 0.0, c]]) @ np.array(
        [[1.0, 0.0, 0.0], [0.0, c, -sn], [0.0, sn, c]])
    r2, e, p0, _, _ = _slider_3d(5e-3, orientation=R0)
    h2 = r2.frames["block"]
    assert np.abs(h2.R - R0).max() < 1e-10
    assert np.abs((h2.r_O - p0) @ e - s).max() < 1e-10 * abs(s_eq)


def test_a_motor_function_called_with_the_array_of_times():
    """``Motor.prescribed_many``: a function of NumPy operations called once with the array
    of times gives each time's angle and rate as ``prescribed`` does, to the bit; a function
    of Python's math, one that gives one number for all and one that gives a value that is not
    finite leave it to ``prescribed`` at each time (None)."""
    from dolfinx_mbs.constraints.frame_joints import Motor
    hub = mbs.frames.Hinge(name="hub")
    t = np.linspace(0.0, 0.7, 23)
    for fn, kind in ((lambda s: 3.0 * s + 0.2 * np.sin(5.0 * s), "angle"),
                     (lambda s: 1.0 + s * s, "speed")):
        m = Motor(hub, **{kind: fn}, name="m")
        many = m.prescribed_many(t)
        each = np.array([[math.nan if a is None else a, r]
                         for a, r in (m.prescribed(s) for s in t)])
        assert many is not None
        np.testing.assert_array_equal(many, each)
    for fn in (lambda s: math.sin(s), lambda s: 1.0, lambda s: np.log(s - 0.3)):
        assert Motor(hub, angle=fn, name="m").prescribed_many(t) is None
