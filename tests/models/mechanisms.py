"""Rigid mechanisms on computed frames and their references (the joints' tests share them).

* A double pendulum of two bars: a Hinge to the ground, a planar Free frame joined to it by a
  revolute joint at the elbow, released horizontal at rest under gravity; its reference is
  the Lagrange equations in the two absolute angles integrated by scipy
  (:func:`double_pendulum_reference`), the elbow's force from bar 2's momentum balance.
* A slider-crank: the crank on a Hinge driven by an angle motor at W, the rod and the slider
  on planar Free frames, the slider held by a prismatic joint to the ground; its closed-form
  kinematics and drive torque.
"""

import math

import numpy as np
from scipy.integrate import solve_ivp

import dolfinx_mbs as mbs

M1, M2, L1, L2, G = 1.0, 0.7, 0.5, 0.4, 9.81
J1, J2 = M1 * L1 ** 2 / 12, M2 * L2 ** 2 / 12


def double_pendulum(torque=None):
    """The double pendulum (module docstring); with ``torque(angle, rate)`` a torque motor on
    the elbow (the relative angle and rate)."""
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


def double_pendulum_reference(T, torque=None, masses=(M1, M2), inertias=(J1, J2)):
    """The two bars' absolute angles from the x axis, released horizontal at rest (bars of
    the given masses and inertias about their centres, of lengths L1 and L2)."""
    m1, m2 = masses
    j1, j2 = inertias

    def rhs(t, y):
        a1, a2, w1, w2 = y
        c, s = math.cos(a1 - a2), math.sin(a1 - a2)
        k = m2 * L1 * L2 / 2
        M = np.array([[j1 + m1 * L1 ** 2 / 4 + m2 * L1 ** 2, k * c],
                      [k * c, j2 + m2 * L2 ** 2 / 4]])
        f = np.array([-k * s * w2 ** 2 - (m1 * L1 / 2 + m2 * L1) * G * math.cos(a1),
                      k * s * w1 ** 2 - m2 * L2 / 2 * G * math.cos(a2)])
        if torque is not None:   # on bar 2 relative to bar 1: +tau on 2, -tau on 1
            tau = torque(a2 - a1, w2 - w1)
            f += np.array([-tau, tau])
        return np.concatenate([[w1, w2], np.linalg.solve(M, f)])
    return solve_ivp(rhs, (0, T), [0, 0, 0, 0], rtol=1e-12, atol=1e-12, dense_output=True)


def pd(angle, rate):
    """A PD law of the elbow's relative angle and rate."""
    return -3.0 * angle - 0.5 * rate


R_, L_, W = 0.1, 0.4, 10.0
MC, MR, MS = 0.5, 1.2, 2.0
JC, JR, JS = MC * R_ ** 2 / 12, MR * L_ ** 2 / 12, 1e-3


def slider_crank():
    """The rigid slider-crank (module docstring)."""
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


def crank_closed(th):
    """Slider position, rod angle and the centres of crank and rod at crank angle th."""
    xs = R_ * np.cos(th) + np.sqrt(L_ ** 2 - (R_ * np.sin(th)) ** 2)
    phi = np.arcsin(-R_ * np.sin(th) / L_)
    xc = np.array([R_ / 2 * np.cos(th), R_ / 2 * np.sin(th)])
    xr = np.array([(R_ * np.cos(th) + xs) / 2, R_ * np.sin(th) / 2])
    return xs, phi, xc, xr


def crank_mass(th, e=1e-5):
    """The slider-crank's generalized mass M(th) of its one coordinate, the crank angle."""
    d = [(np.asarray(a) - np.asarray(b)) / (2 * e)
         for a, b in zip(crank_closed(th + e), crank_closed(th - e))]
    dxs, dphi, dxc, dxr = d
    return JC + MC * dxc @ dxc + MR * dxr @ dxr + JR * dphi ** 2 + MS * dxs ** 2


def crank_potential(th):
    """The slider-crank's potential energy V(th) in gravity (the slider moves along x)."""
    _, _, xc, xr = crank_closed(th)
    return G * (MC * xc[1] + MR * xr[1])


def crank_energy(th):
    """The slider-crank's energy M(th) W^2 / 2 + V(th) at the crank speed W."""
    return 0.5 * crank_mass(th) * W ** 2 + crank_potential(th)


def drive_torque(th, h=1e-4):
    """The torque that turns the crank at the constant speed W: M'(th) W^2 / 2 + V'(th)."""
    return (crank_energy(th + h) - crank_energy(th - h)) / (2 * h)


def elbow_force(ref, T):
    """The joint's force on bar 2 (global) at T: its momentum balance m2 a_c2 = F + m2 g, with
    the centre's acceleration from the reference solution."""
    a1, a2, w1, w2 = ref.sol(T)
    dy = ref.sol(T + 1e-4) - ref.sol(T - 1e-4)
    al1, al2 = dy[2] / 2e-4, dy[3] / 2e-4
    acc = (L1 * (al1 * np.array([-math.sin(a1), math.cos(a1)]) - w1 ** 2 * np.array(
        [math.cos(a1), math.sin(a1)])) + L2 / 2 * (al2 * np.array([-math.sin(a2), math.cos(a2)])
                                                    - w2 ** 2 * np.array([math.cos(a2), math.sin(a2)])))
    return M2 * acc - M2 * np.array([0.0, -G])


EH, EB, ERHO = 0.01, 0.02, 7850.0      # the elastic links: in the plane, across, density


def elastic_double_pendulum(modes=4, nx=8, e_scale=1.0, stiffening=None):
    """The double pendulum of two elastic links (plane-stress steel strips of ``nx`` x 1 P2
    cells, 0.5 and 0.4 m long, 10 mm in the plane, 20 mm across), each on its chord frame
    (a Hinge, a planar Free frame at its centre) and reduced to ``modes`` Craig-Bampton modes,
    joined at the elbow's nodes: two reduced bodies on the dense path (bench/exudyn_pendulum.py
    is the same model, finer); ``stiffening`` the links'. Returns (model, link1, link2)."""
    from dolfinx import mesh as dmesh
    from mpi4py import MPI

    h, b = EH, EB

    def at(px):
        return lambda x: np.isclose(x[0], px, atol=1e-9) & np.isclose(x[1], 0.0, atol=1e-9)

    def strip(x0, length):
        return dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([x0, -h / 2]),
                                                       np.array([x0 + length, h / 2])], [nx, 1])
    mat = mbs.materials.PlaneStress(E=210e9 * e_scale, nu=0.3, density=ERHO, thickness=b)
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="h1")
    l1 = mbs.Body(strip(0.0, L1), mat, hub, degree=2, name="link1", stiffening=stiffening)
    fr2 = mbs.frames.Free(position=(L1 + L2 / 2, 0, 0), name="f2", dim=2)
    l2 = mbs.Body(strip(-L2 / 2, L2), mat, fr2, degree=2, name="link2", stiffening=stiffening)
    model = mbs.Model([l1, l2], gravity=(0, -G, 0))
    model.clamp(l1, where=at(0.0))
    model.clamp(l1, where=at(L1), components=[1])
    model.clamp(l2, where=at(-L2 / 2))
    model.clamp(l2, where=at(L2 / 2), components=[1])
    model.revolute(l1, l2, point=(L1, 0.0), name="elbow")
    model.reduce(l1, modes=modes)
    model.reduce(l2, modes=modes)
    return model, l1, l2
