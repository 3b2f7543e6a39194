"""Seed 003 example b, synthetic: a beam in a known planar motion, its markers, and the beam.

The seed records markers on a bar of a two-degree-of-freedom mechanism (Figs. 6-8; Table 2:
marker speeds 0.24-1.54 m/s, accelerations 0.9-16.3 m/s^2, i.e. 240-1540 mm/s and
900-16 330 mm/s^2). The motion here is analytic, with its parameters fitted so that markers 1
and 2 (x = 0.05 and 0.45 m on the bar) sweep exactly those ranges over one shaft revolution:

    theta(t) = 0.3 + 0.24 sin(W t) + 0.07 sin(2 W t + 0.5),
    r_O(t)   = (0.073 cos(W t), 0.024 sin(W t)) m,        W = 8.15 rad/s.

The beam: a steel strip L = 0.5 m, 1 cm x 1 cm (plane stress), clamped at x = 0 to the frame.
"""

import numpy as np
from dolfinx import mesh as dmesh

import dolfinx_mbs as mbs

W = 8.15
AX, AY = 0.073, 0.024
TH = (0.3, 0.24, 0.07, 0.5)
L, H = 0.5, 0.01
E, RHO, NU = 210e9, 7850.0, 0.3
BODY_POINTS = np.array([[0.05, 0.0], [0.25, 0.0], [0.45, 0.0]])   # markers 1, 3, 2
RATE = 1000.0   # samples per second


def theta(t, nu=0):
    """theta and its derivatives (nu = 0, 1, 2)."""
    a0, a1, a2, ph = TH
    if nu == 0:
        return a0 + a1 * np.sin(W * t) + a2 * np.sin(2 * W * t + ph)
    if nu == 1:
        return a1 * W * np.cos(W * t) + 2 * W * a2 * np.cos(2 * W * t + ph)
    return -a1 * W**2 * np.sin(W * t) - 4 * W**2 * a2 * np.sin(2 * W * t + ph)


def origin(t, nu=0):
    """r_O (global, 2 components) and its derivatives."""
    c, s = np.cos(W * t), np.sin(W * t)
    if nu == 0:
        return np.array([AX * c, AY * s])
    if nu == 1:
        return W * np.array([-AX * s, AY * c])
    return -W**2 * np.array([AX * c, AY * s])


def exact_state(t):
    """omega_z, alpha_z and the origin's acceleration in local components (2-vector)."""
    th = theta(t)
    c, s = np.cos(th), np.sin(th)
    RT = np.array([[c, s], [-s, c]])
    return theta(t, 1), theta(t, 2), RT @ origin(t, 2)


def markers(times, body_points=BODY_POINTS, noise=0.0, seed=3):
    """(n, k, 2) global marker positions, with Gaussian noise of std ``noise`` (m) on each
    coordinate (the same on every rank: a fixed seed)."""
    th = theta(times)
    c, s = np.cos(th), np.sin(th)
    X, Y = body_points[:, 0], body_points[:, 1]
    r = origin(times)
    m = np.stack([r[0][:, None] + c[:, None] * X - s[:, None] * Y,
                  r[1][:, None] + s[:, None] * X + c[:, None] * Y], axis=-1)
    if noise:
        m = m + noise * np.random.default_rng(seed).standard_normal(m.shape)
    return m


def marker_ranges(x):
    """(speed min, max, acceleration min, max) of the body point (x, 0) over a revolution."""
    t = np.linspace(0.0, 2 * np.pi / W, 4001)
    th, thd, thdd = theta(t), theta(t, 1), theta(t, 2)
    e1 = np.array([np.cos(th), np.sin(th)])
    e2 = np.array([-np.sin(th), np.cos(th)])
    v = origin(t, 1) + thd * x * e2
    a = origin(t, 2) + thdd * x * e2 - thd**2 * x * e1
    sp, ac = np.linalg.norm(v, axis=0), np.linalg.norm(a, axis=0)
    return sp.min(), sp.max(), ac.min(), ac.max()


def planar_frame():
    """The analytic motion as a ``Planar`` frame (derivatives by extrapolated differences)."""
    return mbs.frames.Planar(theta=lambda t: theta(t), origin=lambda t: origin(t),
                             time_scale=0.1)


def beam_model(comm, frame, nx=10):
    """The strip clamped at x = 0 to ``frame`` (P2 quadrilaterals, nx x 1)."""
    msh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                 [nx, 1], dmesh.CellType.quadrilateral)
    material = mbs.materials.PlaneStress(E=E, nu=NU, density=RHO, thickness=H)
    body = mbs.Body(msh, material, frame, degree=2, name="bar")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model


def tip_response(comm, frame, t_end, dt):
    """Tip deflection history (y-displacement of (L, 0) in the frame) from rest at t = 0."""
    r = beam_model(comm, frame).integrate(t_end=t_end, dt=dt, probes=[(L, 0.0)],
                                         progress=False, energy=False)
    return r.times, r.probes[:, 0, 1]
