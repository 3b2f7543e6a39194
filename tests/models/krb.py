"""The Kane-Ryan-Banerjee beam (constants) and its plane-stress strip spun up in a SpinUp frame;
the same strip on a hinge driven by a torque (:func:`driven`), spun up by a prescribed frame
reporting its drive torque (:func:`prescribed`), and a driven run replayed as a Sampled frame
(:func:`replay`)."""

import math

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

L, EI, RHO_A, EA = 10.0, 14000.0, 1.2, 2.8e7
T_S = 15.0
H = np.sqrt(12.0 * EI / EA)   # rectangular section b x h with EA/EI = 12/h^2
B = H
W_REF = np.sqrt(EI / (RHO_A * L**4))


def fe_tip(final_rate, stiffening, t_end, dt=0.02, nx=40, comm=MPI.COMM_WORLD):
    """The plane-stress strip (P2 quadrilaterals, nx x 1) in a SpinUp frame: times and the
    y-displacement of the tip mid-node (L, 0)."""
    mesh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                  [nx, 1], dmesh.CellType.quadrilateral)
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=final_rate, ramp_time=T_S)
    material = mbs.materials.PlaneStress(E=EA / (B * H), nu=0.3, density=RHO_A / (B * H),
                                         thickness=B)
    body = mbs.Body(mesh, material, frame, degree=2, stiffening=stiffening)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    r = model.integrate(t_end=t_end, dt=dt, probes=[(L, 0.0)], spectral_radius=0.8,
                        progress=False)
    return r.times, r.probes[:, 0, 1]


def strip(frame, nx=20, comm=MPI.COMM_WORLD):
    """The plane-stress strip (P2 quadrilaterals, nx x 1, prestress) on ``frame``, named
    "beam"."""
    msh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                 [nx, 1], dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=EA / (B * H), nu=0.3, density=RHO_A / (B * H),
                                    thickness=B)
    return mbs.Body(msh, mat, frame, degree=2, stiffening="prestress", name="beam")


def prescribed(dt, t_end):
    """The strip clamped in a SpinUp frame to 6 rad/s in T_S, with the drive torque
    (``drives=True``): (the result, the hub angle at its times)."""
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=6.0, ramp_time=T_S)
    body = strip(frame)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    r = model.integrate(t_end=t_end, dt=dt, probes=[(L, 0.0)], spectral_radius=0.8,
                        progress=False, drives=True, stepper="ts")
    angle = np.unwrap([math.atan2(frame.rotation(t)[1, 0], frame.rotation(t)[0, 0])
                       for t in r.times])
    return r, angle


def driven(torque, dt, t_end):
    """The strip attached to a Hinge "hub" driven by ``torque(t, s)``: the result."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
    body = strip(hub)
    model = mbs.Model([body])
    model.attach(body, lambda x: np.isclose(x[0], 0.0))
    model.apply_torque(hub, torque)
    return model.integrate(t_end=t_end, dt=dt, probes=[(L, 0.0)], spectral_radius=0.8,
                           progress=False)


def replay(dt, t_end=14.0):
    """A torque-driven spin-up past the first bending frequency (3.8 rad/s) and its hub angle
    replayed as a Sampled frame on the prescribed path: (tip of the coupled run, tip of the
    replay, the final rate)."""
    rc = driven(lambda t, s: 160.0 * (1.0 - math.cos(2 * math.pi * t / 12.0))
                if t < 12.0 else 0.0, dt, t_end)
    frame = mbs.frames.Sampled(rc.times, rotations=rc.frames["hub"].angle)
    body = strip(frame)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    rp = model.integrate(t_end=t_end, dt=dt, probes=[(L, 0.0)], spectral_radius=0.8,
                         progress=False)
    return rc.probes[:, 0, 1], rp.probes[:, 0, 1], rc.frames["hub"].rate[-1]
