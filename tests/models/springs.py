"""Springs and dampers of the coupled tests, and their closed forms.

* A mass hanging from the ground by a spring and damper: a RigidBody on a planar Free frame,
  released at the spring's rest length under gravity (:func:`hanging_mass`); its height is the
  damped oscillator about the static deflection d = m g / k (:func:`hanging_height`).
* A stiff elastic bar on a Hinge, which a spring (and damper) at its tip node holds across it
  (:func:`tip_bar`): its small swing is the damped oscillator of J_O th'' + c L^2 th' + k L^2
  th = 0 (J_O the bar's moment of inertia about the hinge; the bar's own first bending is 800
  times faster, its effect ~2e-6 of the frequency).
"""

import math

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

#: the hanging mass: mass, stiffness, damping, gravity
M, K, C, G = 1.0, 400.0, 4.0, 9.81

#: the tip bar: a stiff bar (its first bending ~8000 rad/s, far above the 10 rad/s swing; with
#: steel's E, ~260 rad/s, the swing's frequency is 7e-4 off the rigid bar's)
E, RHO, LB, HB = 2.1e14, 7850.0, 1.0, 0.05
MASS = RHO * HB * HB * LB
J_O = MASS * (LB ** 2 / 3 + HB ** 2 / 12)
#: the hinge's initial rate (rad/s)
RATE0 = 0.05


def damped(t: np.ndarray, w: float, zeta: float, x0: float, v0: float) -> tuple:
    """x(t), x'(t) of x'' + 2 zeta w x' + w^2 x = 0 from (x0, v0), zeta < 1."""
    wd = w * math.sqrt(1.0 - zeta * zeta)
    e = np.exp(-zeta * w * t)
    a, b = x0, (v0 + zeta * w * x0) / wd
    c, s = np.cos(wd * t), np.sin(wd * t)
    x = e * (a * c + b * s)
    xd = e * ((b * wd - zeta * w * a) * c - (a * wd + zeta * w * b) * s)
    return x, xd


def hanging_mass() -> mbs.Model:
    """The hanging mass's model (frame ``"f"``, spring ``"s"``)."""
    fr = mbs.frames.Free(position=(0, 0, 0), name="f", dim=2)
    rb = mbs.RigidBody(mass=M, inertia=1e-3, frame=fr, centre=(0, 0, 0), name="mass")
    model = mbs.Model([rb], gravity=(0, -G, 0))
    model.spring(rb, (0.0, 0.0), None, (0.0, 1.0), stiffness=K, damping=C, name="s")
    return model


def hanging_height(t: np.ndarray) -> tuple:
    """The hanging mass's height y(t) and rate: -d + the damped oscillator from (d, 0)."""
    d = M * G / K
    y, yd = damped(t, math.sqrt(K / M), C / (2 * math.sqrt(K * M)), d, 0.0)
    return y - d, yd


def tip_bar(nx: int = 8) -> tuple:
    """(model, hinge, bar): the stiff bar on a Hinge turning at :data:`RATE0`, attached at its
    root, without its spring."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), rate=RATE0, name="hub")
    msh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([0.0, -HB / 2]),
                                                  np.array([LB, HB / 2])], [nx, 2])
    mat = mbs.materials.PlaneStress(E=E, nu=0.3, density=RHO, thickness=HB)
    bar = mbs.Body(msh, mat, hub, degree=2, name="bar")
    model = mbs.Model([bar])
    model.attach(bar, where=lambda x: np.isclose(x[0], 0.0))
    return model, hub, bar


def tip_swing(t: np.ndarray, k: float, c: float = 0.0) -> tuple:
    """The tip bar's hinge angle over ``t`` with a spring ``k`` and damper ``c`` at its tip
    across it (small angles), and the swing's angular frequency."""
    w = math.sqrt(k * LB ** 2 / J_O)
    zeta = c * LB ** 2 / (2.0 * J_O * w)
    return damped(t, w, zeta, 0.0, RATE0)[0], w
