"""Coupled rigid-elastic runs in Hamilton's form (``formulation="hamiltonian"``).

* A free elastic body tumbling and vibrating, no load: the energy monitors at each step's
  midpoint state (an independent evaluation of the momenta from the mass matrix and the frame
  state, :func:`dolfinx_mbs.systems.coupled.monitors`) give linear and angular momentum (global
  components) constant to 1e-10 (over 1000 steps: a ``slow`` test; over 50 to 200 steps in the
  default one), where the second-order form's angular momentum drifts at second order in dt;
  the energy drifts at second order in dt.
* The same run in Hamilton's form and in the second-order form: the two converge to each other
  at second order in dt (the frame's rotation and the elastic displacement at the end).
* A hub and elastic beam on a hinge driven by a state-dependent torque: the same.
* Rigid-body closed forms: the torque-free asymmetric body (Jacobi's elliptic functions) and
  the physical pendulum's period (an elliptic integral), at second order in dt.
* What the form does not take yet is refused by name.
"""

import math

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.rigidref import euler_omega, pendulum_period

COMM = MPI.COMM_WORLD


def _box(frame, n=(4, 1, 1), E=2e5, rho=1000.0):
    msh = dmesh.create_box(COMM, [np.array([-0.5, -0.1, -0.05]), np.array([0.5, 0.1, 0.05])],
                           list(n), dmesh.CellType.hexahedron)
    return mbs.Body(msh, mbs.materials.LinearElastic(E=E, nu=0.3, density=rho), frame,
                    degree=1, name="box")


def _free_box():
    R0 = mbs.frames.rotation_about((1, 2, 0), 0.4)
    sat = mbs.frames.Free(position=(0.5, 0.0, 0.2), orientation=R0, velocity=(0.2, 0.1, 0.0),
                          angular_velocity=R0 @ np.array([0.3, 4.0, 0.2]), name="sat")
    body = _box(sat)
    model = mbs.Model([body])
    model.attach(body, lambda x: np.abs(x[0]) < 0.26)
    return model, body


def _bending(body):
    """A bending velocity field (local components): the body vibrates while it tumbles."""
    from dolfinx import fem
    v = fem.Function(body.V)
    v.interpolate(lambda x: np.vstack([0 * x[0], 0.2 * x[0] ** 2, 0.1 * x[0] ** 2]))
    return v


@pytest.mark.slow
def test_free_elastic_body_conserves_momenta():
    """1000 steps, no load: at each step's midpoint (where the velocities are those of the
    momenta p_m = (p0 + p1) / 2) the linear and angular momentum stay at their initial values to
    1e-10 (relative)."""
    model, body = _free_box()
    # Newton's method solved to round-off (its default stops at 1e-9 of the unknowns, which
    # over 1000 steps adds up to 1e-10)
    r = model.integrate(t_end=1.0, dt=1e-3, v0=_bending(body), formulation="hamiltonian",
                        options={"snes_stol": 1e-14}, progress=False)
    assert r.steps == 1000 and r.ts_type == "theta"
    mid = r.midpoints
    assert mid["times"].shape == (1000,)
    P0, H0 = r.momentum["linear"][0], r.momentum["angular"][0]
    dP = np.abs(mid["linear"] - P0).max() / np.linalg.norm(P0)
    dH = np.abs(mid["angular"] - H0).max() / np.linalg.norm(H0)
    assert dP < 1e-10 and dH < 1e-10, (dP, dH)
    assert np.abs(r.energy["elastic"]).max() > 1e-3 * r.energy["kinetic"][0]   # it vibrates


def test_free_elastic_body_converges_to_the_second_order_form():
    """Hamilton's form and the second-order form, both second order in dt, differ by O(dt^2):
    the difference of their end states falls fourfold when dt halves; the midpoints' energy
    drift falls fourfold too. The second-order form's angular momentum drifts at O(dt^2);
    Hamilton's (at its midpoints) stays to round-off."""
    diffs, drifts, dH = [], [], {"hamiltonian": [], "second-order": []}
    for dt in (8e-3, 4e-3, 2e-3):
        ends = {}
        for form in ("hamiltonian", "second-order"):
            model, body = _free_box()
            r = model.integrate(t_end=0.4, dt=dt, v0=_bending(body), formulation=form,
                                progress=False)
            hist = r.frames["sat"]
            ends[form] = np.concatenate([hist.R[-1].ravel(), hist.r_O[-1],
                                         [r.energy["elastic"][-1]]])
            H0, P0 = r.momentum["angular"][0], r.momentum["linear"][0]
            H = r.midpoints["angular"] if form == "hamiltonian" else r.momentum["angular"]
            dH[form].append(np.abs(H - H0).max() / np.linalg.norm(H0))
            if form == "hamiltonian":
                P = r.midpoints["linear"]
                assert np.abs(P - P0).max() <= 1e-12 * np.linalg.norm(P0)
            if form == "hamiltonian":
                E = r.midpoints["total"]
                drifts.append(np.abs(E - r.energy["total"][0]).max() / r.energy["total"][0])
        diffs.append(np.abs(ends["hamiltonian"] - ends["second-order"]).max())
    rate = np.log2(np.array(diffs[:-1]) / np.array(diffs[1:]))
    assert np.all(rate > 1.8) and diffs[-1] < 1e-4, (diffs, rate)
    rate = np.log2(np.array(drifts[:-1]) / np.array(drifts[1:]))
    assert np.all(rate > 1.8), (drifts, rate)
    rate = np.log2(np.array(dH["second-order"][:-1]) / np.array(dH["second-order"][1:]))
    assert np.all(rate > 1.8) and max(dH["hamiltonian"]) < 1e-10, (dH, rate)


def _strip(frame, L=1.0, H=0.05, n=(8, 2), E=5e7, rho=1000.0):
    msh = dmesh.create_rectangle(COMM, [np.array([0.0, -H / 2]), np.array([L, H / 2])], list(n),
                                 dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=E, nu=0.3, density=rho, thickness=0.01)
    return mbs.Body(msh, mat, frame, degree=2, name="beam")


def test_hub_beam_converges_to_the_second_order_form():
    """A beam clamped to a hub on a hinge, driven by a torque with a damper on the hub's rate:
    the hub's angle and rate and the beam's elastic energy in both forms agree to O(dt^2)."""
    diffs = []
    for dt in (1e-2, 5e-3, 2.5e-3):
        ends = {}
        for form in ("hamiltonian", "second-order"):
            hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
            body = _strip(hub)
            model = mbs.Model([body])
            model.attach(body, lambda x: np.isclose(x[0], 0.0))
            model.apply_torque(hub, lambda t, s: 0.1 + 0.2 * math.sin(8.0 * t) - 0.01 * s.rate)
            r = model.integrate(t_end=0.5, dt=dt, formulation=form, progress=False)
            h = r.frames["hub"]
            # the angle and the elastic energy (the hub's rate carries the beam's highest
            # modes, which the midpoint rule keeps undamped in both forms)
            ends[form] = np.array([h.angle[-1], r.energy["elastic"][-1]])
        assert abs(ends["hamiltonian"][0]) > 1e-2 and ends["hamiltonian"][1] > 0   # it turns, bends
        diffs.append(np.abs(ends["hamiltonian"] - ends["second-order"]).max())
    rate = np.log2(np.array(diffs[:-1]) / np.array(diffs[1:]))
    assert np.all(rate > 1.8), (diffs, rate)


I_P = np.array([1.0, 2.0, 3.0])
W0 = np.array([0.1, 2.0, 0.1])     # near the intermediate axis: the body flips (t = 4.06 s)


def test_torque_free_rigid_body():
    """The torque-free asymmetric body against Jacobi's elliptic functions: second order in
    dt; its angular momentum about the global origin (global components) at the midpoints
    constant to round-off."""
    errors = []
    for dt in (0.02, 0.01):
        R0 = mbs.frames.rotation_about((1.0, 1.0, 0.0), 0.3)
        sat = mbs.frames.Free(position=(1.0, 0.0, 0.0), orientation=R0,
                              velocity=(0.5, 0.2, 0.0), angular_velocity=R0 @ W0, name="sat")
        body = mbs.RigidBody(mass=3.0, inertia=np.diag(I_P), frame=sat, centre=(0, 0, 0),
                             name="body")
        r = mbs.Model([body]).integrate(t_end=4.5, dt=dt, formulation="hamiltonian",
                                        options={"snes_stol": 1e-15}, progress=False)
        om = r.frames["sat"].omega
        errors.append(np.abs(om - euler_omega(I_P, W0, r.times)).max())
        H0 = r.momentum["angular"][0]
        assert np.abs(r.midpoints["angular"] - H0).max() <= 1e-11 * np.linalg.norm(H0)
    assert om[:, 1].min() < -0.5 and om[:, 1].max() > 1.5      # the flip
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8, (errors, order)


def test_pendulum_period():
    """A physical pendulum released horizontal is back after the elliptic-integral period, the
    error falling at second order in dt."""
    M, D, JC, G = 2.0, 0.5, 0.01, 9.81
    T = pendulum_period(JC + M * D * D, M, G, D, math.pi / 2)
    errors = []
    for n in (100, 200):
        hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
        bob = mbs.RigidBody(mass=M, inertia=np.diag([JC, JC, JC]), frame=hub, centre=(D, 0, 0),
                            name="bob")
        r = mbs.Model([bob], gravity=(0, -G, 0)).integrate(t_end=T, dt=T / n,
                                                           formulation="hamiltonian",
                                                           progress=False)
        th = r.frames["hub"].angle
        errors.append(max(abs(th[-1]), abs(th[n // 2] + math.pi)))
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[-1] < 1e-3, (errors, order)


def test_refused():
    """A spectral radius other than the midpoint rule's, and joints, are refused by name."""
    model, body = _free_box()
    with pytest.raises(ValueError, match="spectral_radius"):
        model.integrate(t_end=0.01, dt=1e-3, formulation="hamiltonian", spectral_radius=0.8,
                        progress=False)
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
    bob = mbs.RigidBody(mass=1.0, inertia=np.eye(3) * 0.1, frame=hub, centre=(0.2, 0, 0),
                        name="bob")
    model = mbs.Model([bob])
    model.motor(hub, angle=lambda t: t, name="drive")
    with pytest.raises(ValueError, match="hamiltonian.*motors"):
        model.integrate(t_end=0.01, dt=1e-3, formulation="hamiltonian", progress=False)
    # a failed call leaves nothing behind: the next run in the second-order form goes
    r = model.integrate(t_end=0.01, dt=1e-3, formulation="first-order", progress=False)
    assert r.steps == 10
