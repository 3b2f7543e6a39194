"""The elastic slider-crank of demos/elastic_slider_crank.py, as functions of the mesh and the
rod's stiffness (for tests/systems/test_elastic_slider_crank.py and docs/slider_crank.py).

A crank of length R on a Hinge driven by an angle motor at OMEGA; an elastic rod of length L
(a plane-stress strip with a 10 mm round bar's A and I, P2) on a planar Free frame with the
chord as its reference (no displacement at A, none across the rod at B); a slider of mass
M_SLIDER on a planar Free frame held by a prismatic joint along x. The prescribed-frame model
moves the rod's frame as the rigid mechanism's rod (closed-form angle, the crank pin's path),
the rod pinned at A in it and joined at B to the slider, whose motion is computed.
"""

import math

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

R, L, OMEGA = 0.152, 0.304, 150.0
E, NU, RHO = 70e9, 0.3, 2770.0
AREA, INERTIA = 7.854e-5, 4.909e-10
H = math.sqrt(12 * INERTIA / AREA)
THICK = AREA / H
M_ROD = RHO * AREA * L
M_SLIDER, M_CRANK = 0.5 * M_ROD, 0.1


def rod_body(frame, nx, E_rod=E, name="rod"):
    msh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([0.0, -H / 2]),
                                                  np.array([L, H / 2])], [nx, 2])
    mat = mbs.materials.PlaneStress(E=E_rod, nu=NU, density=RHO, thickness=THICK)
    return mbs.Body(msh, mat, frame, degree=2, name=name)


def at(px, py=0.0):
    return lambda x: np.isclose(x[0], px, atol=1e-9) & np.isclose(x[1], py, atol=1e-9)


def slider():
    return mbs.RigidBody(mass=M_SLIDER, inertia=1e-6, centre=(0, 0, 0), name="slider",
                         frame=mbs.frames.Free(position=(R + L, 0, 0), name="slider_frame",
                                               dim=2))


def coupled(nx, E_rod=E):
    """The mechanism with the rod's frame computed: (model, rod)."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
    crank = mbs.RigidBody(mass=M_CRANK, inertia=M_CRANK * R ** 2 / 12, frame=hub,
                          centre=(R / 2, 0, 0), name="crank")
    rod = rod_body(mbs.frames.Free(position=(R, 0, 0), name="rod_frame", dim=2), nx, E_rod)
    model = mbs.Model([crank, rod, slider()])
    model.clamp(rod, where=at(0.0), name="chord A")
    model.clamp(rod, where=at(L), components=[1], name="chord B")
    sl = model.rigid_bodies[-1]
    model.revolute(crank, rod, point=(R, 0.0), name="A")
    model.revolute(rod, sl, point=(R + L, 0.0), name="B")
    model.prismatic(None, sl, point=(R + L, 0.0), axis=(1.0, 0.0), name="guide")
    model.motor(hub, angle=lambda t: OMEGA * t, name="drive")
    return model, rod


def prescribed(nx, E_rod=E):
    """The rod on the rigid mechanism's prescribed frame: (model, rod)."""
    def phi(t):
        return math.asin(-R * math.sin(OMEGA * t) / L)
    frame = mbs.frames.Planar(theta=phi, origin=lambda t: (R * math.cos(OMEGA * t),
                                                           R * math.sin(OMEGA * t)))
    rod = rod_body(frame, nx, E_rod, name="rod_p")
    sl = slider()
    model = mbs.Model([rod, sl])
    model.clamp(rod, where=at(0.0), name="pin A")
    model.revolute(rod, sl, point=(R + L, 0.0), name="B")
    model.prismatic(None, sl, point=(R + L, 0.0), axis=(1.0, 0.0), name="guide")
    return model, rod


def closed_form(theta):
    """The rigid mechanism's slider position and rod angle at crank angle ``theta``."""
    xs = R * np.cos(theta) + np.sqrt(L ** 2 - (R * np.sin(theta)) ** 2)
    return xs, np.arcsin(-R * np.sin(theta) / L)


def run_coupled(nx, dt, t_end, E_rod=E):
    """(result, midpoint deflection from the chord) of the coupled model."""
    model, rod = coupled(nx, E_rod)
    r = model.integrate(t_end=t_end, dt=dt, probes=[(rod, (L / 2, 0.0))], progress=False)
    return r, r.probes[:, 0, 1]


def run_prescribed(nx, dt, t_end, E_rod=E):
    """(result, midpoint deflection from the chord) of the prescribed-frame model."""
    model, rod = prescribed(nx, E_rod)
    r = model.integrate(t_end=t_end, dt=dt, probes=[(rod, (L / 2, 0.0)), (rod, (L, 0.0))],
                        progress=False)
    return r, r.probes[:, 0, 1] - 0.5 * r.probes[:, 1, 1]
