"""The dense path of models with computed frames (issue 41): the coupled equations stepped in
small arrays from the bodies' inertia invariants projected once
(:mod:`dolfinx_mbs.systems.coupled_dense`, :mod:`dolfinx_mbs.integrate.dense.coupled`).

The reference is the TS path (PETSc TS with the bordered Newton on the bodies' PETSc
operators: a second code path for every term) with its Newton tolerances tightened to round-off
(its defaults stop at an estimated 1e-9 of each block a step, which left 1e-7 of the peak after
50 steps): the same scheme, so the histories agree to round-off. Measured (one rank): hinge
angle 1.8e-11 rad, tip 1.8e-10 of its peak (reduced strip), 7.6e-12 (the strip's 246 dofs).
"""

import math

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.systems.coupled_dense import DenseCoupled
from tests.models.rigidref import pendulum_period

COMM = MPI.COMM_WORLD
TIGHT = {"snes_stol": 1e-16, "snes_rtol": 1e-16}


def _strip(frame, L=1.0, H=0.05, n=(6, 2), E=1e7, rho=1000.0, stiffening=None, name="beam"):
    msh = dmesh.create_rectangle(COMM, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                 list(n), dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=E, nu=0.3, density=rho, thickness=0.01)
    return mbs.Body(msh, mat, frame, degree=2, stiffening=stiffening, name=name)


def _hub_beam(reduce=True):
    """A strip with prestress on a hinge off the origin, a disk off the axis, gravity, a torque
    of the state and time (the coupled tests' Jacobian model)."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0.1, 0.05, 0), angle=0.3, rate=2.0,
                           name="hub")
    body = _strip(hub, stiffening="prestress")
    disk = mbs.RigidBody(mass=2.0, inertia=np.diag([0.1, 0.2, 0.3]), frame=hub,
                         centre=(0.1, 0.2, 0), name="disk")
    model = mbs.Model([body, disk], gravity=(0, -9.81, 0))
    model.attach(body, lambda x: x[0] < 1e-8)
    model.apply_torque(hub, lambda t, s: -3.0 * s.rate + 0.5 * math.sin(s.angle) + 0.1 * t)
    if reduce:
        model.reduce(body, modes=6)
    return model, body


def _compare(a, b):
    tip = np.abs(a.probes).max()
    return (np.abs(a.frames["hub"].angle - b.frames["hub"].angle).max(),
            np.abs(a.probes - b.probes).max() / tip,
            np.abs(a.energy["total"] - b.energy["total"]).max()
            / np.abs(a.energy["total"]).max(),
            np.abs(a.momentum["angular"] - b.momentum["angular"]).max()
            / np.abs(a.momentum["angular"]).max())


@pytest.mark.parametrize("formulation", ["second-order", "first-order"])
def test_dense_equals_ts_on_the_hub_beam(formulation):
    out = {}
    for stepper in ("ts", "dense"):
        model, body = _hub_beam()
        out[stepper] = model.integrate(
            t_end=0.5, dt=0.01, formulation=formulation, stepper=stepper,
            probes=[(body, (1.0, 0.0))], progress=False,
            spectral_radius=0.8 if formulation == "second-order" else None,
            options=TIGHT if stepper == "ts" else None)
    assert out["dense"].stepper == "dense" and out["ts"].stepper == "ts"
    assert out["dense"].ts_type == out["ts"].ts_type
    angle, tip, energy, ang = _compare(out["ts"], out["dense"])
    assert angle < 1e-9 and tip < 1e-9 and energy < 1e-9 and ang < 1e-9, (angle, tip, energy,
                                                                           ang)
    assert np.abs(out["ts"].energy["work"] - out["dense"].energy["work"]).max() < 1e-9


def test_dense_full_strip_equals_ts():
    """The strip unreduced (246 dofs): the invariants of every node's field."""
    out = {}
    for stepper in ("ts", "dense"):
        model, body = _hub_beam(reduce=False)
        out[stepper] = model.integrate(t_end=0.1, dt=0.01, stepper=stepper,
                                       probes=[(body, (1.0, 0.0))], progress=False,
                                       options=TIGHT if stepper == "ts" else None)
    angle, tip, energy, ang = _compare(out["ts"], out["dense"])
    assert angle < 1e-10 and tip < 1e-9 and energy < 1e-9, (angle, tip, energy)


def test_dense_stiff_pendulum_period():
    """A stiff elastic pendulum, reduced, released horizontal: the dense path ("auto" picks
    it) swings with the rigid pendulum's period, and equals the TS path."""
    L, H, rho, g, t = 1.0, 0.05, 1000.0, 9.81, 0.01
    m = rho * L * H * t
    T = pendulum_period(m * (L ** 2 / 3 + H ** 2 / 12), m, g, L / 2, math.pi / 2)
    runs = {}
    for stepper in ("auto", "ts"):
        hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
        body = _strip(hub, L=L, H=H, n=(10, 1), E=1e11, rho=rho)
        model = mbs.Model([body], gravity=(0, -g, 0))
        model.attach(body, lambda x: x[0] < 1e-8)
        model.reduce(body, modes=4)
        runs[stepper] = model.integrate(t_end=T, dt=T / 200, stepper=stepper, progress=False,
                                        options=TIGHT if stepper == "ts" else None)
    r = runs["auto"]
    assert r.stepper == "dense"
    th = r.frames["hub"].angle
    assert abs(th[-1]) < 1e-5 and abs(th[100] + math.pi) < 1e-5
    assert np.abs(th - runs["ts"].frames["hub"].angle).max() < 1e-10


def test_dense_refusals_and_choice():
    model, body = _hub_beam()
    r = model.integrate(t_end=0.02, dt=0.01, progress=False)
    assert r.stepper == "dense"
    r = model.integrate(t_end=0.02, dt=0.01, stepper="ts", progress=False)
    assert r.stepper == "ts"
    r = model.integrate(t_end=0.02, dt=0.01, formulation="hamiltonian", progress=False)
    assert r.stepper == "ts"
    with pytest.raises(ValueError, match="formulation 'hamiltonian'"):
        model.integrate(t_end=0.02, dt=0.01, formulation="hamiltonian", stepper="dense",
                        progress=False)
    with pytest.raises(ValueError, match="stepper must be"):
        model.integrate(t_end=0.02, dt=0.01, stepper="linear", progress=False)
    # joints: the TS path (auto), refused by name (dense)
    from tests.models.mechanisms import double_pendulum
    dp = double_pendulum()
    assert dp.integrate(t_end=0.01, dt=0.005, progress=False).stepper == "ts"
    with pytest.raises(ValueError, match="joints"):
        dp.integrate(t_end=0.01, dt=0.005, stepper="dense", progress=False)
    # nonlinear strain
    hub = mbs.frames.Hinge(name="hub")
    b = _strip(hub, stiffening="nonlinear")
    nl = mbs.Model([b])
    nl.attach(b, lambda x: x[0] < 1e-8)
    with pytest.raises(ValueError, match="nonlinear strain"):
        DenseCoupled(nl.coupled_system())
    with pytest.raises(ValueError, match="nonlinear strain"):
        nl.integrate(t_end=0.01, dt=0.01, stepper="dense", progress=False)
