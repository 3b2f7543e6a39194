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
* Bad input is refused with the same error on every rank.
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import dolfinx_mbs as mbs

M1, M2, L1, L2, G = 1.0, 0.7, 0.5, 0.4, 9.81
J1, J2 = M1 * L1 ** 2 / 12, M2 * L2 ** 2 / 12


def _double_pendulum(torque=None):
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="h1")
    l1 = mbs.RigidBody(mass=M1, inertia=J1, frame=hub, centre=(L1 / 2, 0, 0), name="link1")
    # the free frame's origin at the bar's centre of mass (see frames.Free)
    fr2 = mbs.frames.Free(position=(L1 + L2 / 2, 0, 0), name="f2", dim=2)
    l2 = mbs.RigidBody(mass=M2, inertia=J2, frame=fr2, centre=(0, 0, 0), name="link2")
    model = mbs.Model([l1, l2], gravity=(0, -G, 0))
    joint = model.revolute(l1, l2, point=(L1, 0.0), name="elbow")
    if torque is not None:
        model.motor(joint, torque=lambda t, s: torque(s.angle, s.rate), name="pd")
    return model


def _lagrange(T, torque=None):
    """The two bars' absolute angles from the x axis, released horizontal at rest."""
    def rhs(t, y):
        a1, a2, w1, w2 = y
        c, s = math.cos(a1 - a2), math.sin(a1 - a2)
        k = M2 * L1 * L2 / 2
        M = np.array([[J1 + M1 * L1 ** 2 / 4 + M2 * L1 ** 2, k * c], [k * c, J2 + M2 * L2 ** 2 / 4]])
        f = np.array([-k * s * w2 ** 2 - (M1 * L1 / 2 + M2 * L1) * G * math.cos(a1),
                      k * s * w1 ** 2 - M2 * L2 / 2 * G * math.cos(a2)])
        if torque is not None:   # on bar 2 relative to bar 1: +tau on 2, -tau on 1
            tau = torque(a2 - a1, w2 - w1)
            f += np.array([-tau, tau])
        return np.concatenate([[w1, w2], np.linalg.solve(M, f)])
    return solve_ivp(rhs, (0, T), [0, 0, 0, 0], rtol=1e-12, atol=1e-12, dense_output=True)


def _pd(angle, rate):
    return -3.0 * angle - 0.5 * rate


@pytest.mark.parametrize("torque", [None, _pd], ids=["free", "pd-motor"])
def test_double_pendulum(torque):
    T = 0.5
    model = _double_pendulum(torque)
    ref = _lagrange(T, torque)
    errors = []
    for dt in (0.005, 0.0025):
        r = model.integrate(t_end=T, dt=dt, progress=False)
        yr = ref.sol(r.times)
        errors.append(max(np.abs(r.frames["h1"].angle - yr[0]).max(),
                          np.abs(r.frames["f2"].angle - yr[1]).max()))
        assert r.joints["elbow"].drift.max() < 1e-10
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[1] < 2e-3, (errors, order)
    # the joint's force on bar 2 (global): its momentum balance m2 a_c2 = F + m2 g, with the
    # centre's acceleration from the reference solution
    a1, a2, w1, w2 = ref.sol(T)
    dy = ref.sol(T + 1e-4) - ref.sol(T - 1e-4)
    al1, al2 = dy[2] / 2e-4, dy[3] / 2e-4
    acc = (L1 * (al1 * np.array([-math.sin(a1), math.cos(a1)]) - w1 ** 2 * np.array(
        [math.cos(a1), math.sin(a1)])) + L2 / 2 * (al2 * np.array([-math.sin(a2), math.cos(a2)])
                                                    - w2 ** 2 * np.array([math.cos(a2), math.sin(a2)])))
    F = M2 * acc - M2 * np.array([0.0, -G])
    assert np.abs(r.joints["elbow"].force[-1, :2] - F).max() < 2e-2 * np.abs(F).max(), (
        r.joints["elbow"].force[-1], F)
    assert np.isnan(r.joints["elbow"].force[0]).all()   # the initial force is not computed


R_, L_, W = 0.1, 0.4, 10.0
MC, MR, MS = 0.5, 1.2, 2.0
JC, JR, JS = MC * R_ ** 2 / 12, MR * L_ ** 2 / 12, 1e-3


def _slider_crank():
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
    crank = mbs.RigidBody(mass=MC, inertia=JC, frame=hub, centre=(R_ / 2, 0, 0), name="crank")
    rod = mbs.RigidBody(mass=MR, inertia=JR, centre=(0, 0, 0), name="rod",
                        frame=mbs.frames.Free(position=(R_ + L_ / 2, 0, 0), name="rodf", dim=2))
    sl = mbs.RigidBody(mass=MS, inertia=JS, centre=(0, 0, 0), name="slider",
                       frame=mbs.frames.Free(position=(R_ + L_, 0, 0), name="slf", dim=2))
    model = mbs.Model([crank, rod, sl], gravity=(0, -G, 0))
    model.revolute(crank, rod, point=(R_, 0.0), name="A")
    model.revolute(rod, sl, point=(R_ + L_, 0.0), name="B")
    model.prismatic(None, sl, point=(R_ + L_, 0.0), axis=(1.0, 0.0), name="P")
    model.motor(hub, angle=lambda t: W * t, name="drive")
    return model


def _crank_closed(th):
    """Slider position, rod angle and the centres of crank and rod at crank angle th."""
    xs = R_ * np.cos(th) + np.sqrt(L_ ** 2 - (R_ * np.sin(th)) ** 2)
    phi = np.arcsin(-R_ * np.sin(th) / L_)
    xc = np.array([R_ / 2 * np.cos(th), R_ / 2 * np.sin(th)])
    xr = np.array([(R_ * np.cos(th) + xs) / 2, R_ * np.sin(th) / 2])
    return xs, phi, xc, xr


def _drive_torque(th, h=1e-4):
    """The torque that turns the crank at the constant speed W: M'(th) W^2 / 2 + V'(th)."""
    def mass(t, e=1e-5):
        d = [(np.asarray(a) - np.asarray(b)) / (2 * e)
             for a, b in zip(_crank_closed(t + e), _crank_closed(t - e))]
        dxs, dphi, dxc, dxr = d
        return JC + MC * dxc @ dxc + MR * dxr @ dxr + JR * dphi ** 2 + MS * dxs ** 2

    def potential(t):
        _, _, xc, xr = _crank_closed(t)
        return G * (MC * xc[1] + MR * xr[1])
    return (0.5 * (mass(th + h) - mass(th - h)) * W ** 2
            + potential(th + h) - potential(th - h)) / (2 * h)


def test_slider_crank():
    model = _slider_crank()
    errors = []
    for dt in (0.01, 0.005):
        r = model.integrate(t_end=0.6, dt=dt, progress=False)
        th = r.frames["hub"].angle
        assert np.abs(th - W * r.times).max() < 1e-10
        xs, phi, _, _ = _crank_closed(th)
        assert np.abs(r.frames["slf"].r_O[:, 0] - xs).max() < 1e-8
        assert np.abs(r.frames["rodf"].angle - phi).max() < 1e-8
        assert max(r.joints[k].drift.max() for k in ("A", "B", "P", "drive")) < 1e-10
        tq = r.joints["drive"].torque
        ref = np.array([_drive_torque(t) for t in th])
        errors.append(np.nanmax(np.abs(tq - ref)) / np.abs(ref).max())
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[1] < 2e-3, (errors, order)


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
    r = model.integrate(t_end=0.5, dt=dt, progress=False)
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
