"""Rigid bodies on computed frames, with closed forms in :mod:`tests.models.rigidref`: a
physical pendulum on a hinge (:func:`pendulum`) and a torque-free asymmetric body on a free frame
spinning near its intermediate axis (:func:`tumbling`)."""

import numpy as np

import dolfinx_mbs as mbs

#: the pendulum: mass (kg), its centre's distance from the hinge (m), inertia about the centre
#: (kg m^2), gravity (m/s^2)
M, D, JC, G = 2.0, 0.5, 0.01, 9.81
#: the tumbling body: principal inertia (kg m^2) and initial angular velocity (body axes)
I_P = np.array([1.0, 2.0, 3.0])
W0 = np.array([0.1, 2.0, 0.1])     # near the intermediate axis: the body flips (t = 4.06 s)


def pendulum(theta0=0.0):
    """(model, hub): a rigid bob on a Hinge about z under gravity -y, at ``theta0`` from +x."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), angle=theta0, name="hub")
    bob = mbs.RigidBody(mass=M, inertia=np.diag([JC, JC, JC]), frame=hub, centre=(D, 0, 0),
                        name="bob")
    return mbs.Model([bob], gravity=(0, -G, 0)), hub


def tumbling():
    """The model of the torque-free body (3 kg, inertia diag(I_P)) on a Free frame "sat",
    moving and spinning with W0 in body axes."""
    R0 = mbs.frames.rotation_about((1.0, 1.0, 0.0), 0.3)
    sat = mbs.frames.Free(position=(1.0, 0.0, 0.0), orientation=R0, velocity=(0.5, 0.2, 0.0),
                          angular_velocity=R0 @ W0, name="sat")
    body = mbs.RigidBody(mass=3.0, inertia=np.diag(I_P), frame=sat, centre=(0, 0, 0),
                         name="body")
    return mbs.Model([body])
