"""Joints and motors between computed frames on the dense path, by Maggi's equations (issue 41,
item 2): the multipliers eliminated by the configuration-dependent null-space bases of the
joints' velocity and position rows, the independent velocities as unknowns
(:class:`~dolfinx_mbs.integrate.dense.coupled.MaggiStage`).

The references: the TS path (the multipliers bordered on the coupled rows, Gear-Gupta-
Leimkuhler's stabilization) with its Newton tolerances tightened: Maggi's equations are its
discrete equations with the multipliers eliminated, so the motions agree to round-off and the
forces recovered from the eliminated rows to the round-off of the accelerations; the
Lagrange equations of the double pendulum (scipy, tests/models/mechanisms.py) and the
slider-crank's closed-form kinematics and drive torque M'(theta) W^2 / 2 + V'(theta).
"""

import math
import warnings

import numpy as np
import pytest

import dolfinx_mbs as mbs
from tests.models import slidercrank as elastic_crank
from tests.models.mechanisms import (
    EB,
    EH,
    ERHO,
    L1,
    L2,
    W,
    crank_closed,
    double_pendulum,
    double_pendulum_reference,
    drive_torque,
    elastic_double_pendulum,
    elbow_force,
    pd,
    slider_crank,
)

TIGHT = {"snes_stol": 1e-16, "snes_rtol": 1e-16}
#: the dense path's Newton to round-off (the one PETSc option it reads), where a test holds it
#: to the TS path's at TIGHT
DENSE_TIGHT = {"snes_stol": 1e-16}


def _elastic_crank(modes=6):
    model, rod = elastic_crank.coupled(24)
    model.reduce(rod, modes=modes)
    return model


def _pendulum_3d():
    """A 3D double pendulum: a bar on a hinge about an inclined axis, a second bar on a 3D
    Free frame joined to it by a revolute joint about another axis, gravity."""
    hub = mbs.frames.Hinge(axis=(0.2, 0.0, 1.0), origin=(0, 0, 0), name="h1")
    l1 = mbs.RigidBody(mass=1.0, inertia=np.diag([0.01, 0.03, 0.03]), frame=hub,
                       centre=(0.25, 0, 0), name="link1")
    fr2 = mbs.frames.Free(position=(0.7, 0.0, 0.0), name="f2")
    l2 = mbs.RigidBody(mass=0.7, inertia=np.diag([0.004, 0.01, 0.012]), frame=fr2,
                       centre=(0, 0, 0), name="link2")
    model = mbs.Model([l1, l2], gravity=(0, -9.81, -2.0))
    model.revolute(l1, l2, point=(0.5, 0.0, 0.0), axis=(0.0, 0.3, 1.0), name="elbow")
    return model


def _prismatic_3d():
    """A rigid block on a 3D Free frame sliding on an inclined axis under gravity and a
    torque the joint holds."""
    e = np.array([1.0, 2.0, 2.0]) / 3.0
    p0 = np.array([0.3, -0.2, 0.5])
    fr = mbs.frames.Free(position=p0, name="block")
    blk = mbs.RigidBody(mass=2.0, inertia=np.diag([0.02, 0.03, 0.04]), frame=fr, name="blk")
    model = mbs.Model([blk], gravity=(0.0, 0.0, -9.81))
    model.prismatic(None, blk, point=p0, axis=e, name="guide")
    model.apply_torque(fr, lambda t, s: np.array([0.5, -0.3, 0.2]) * np.cos(7.0 * t),
                       local=False)
    return model


def _elastic_pendulum_3d(slide=True, E=2e9, rigid=False):
    """A 3D elastic bar (6 x 2 x 2 hexahedra, reduced to 4 modes; ``rigid``: a rigid body of
    its mass and inertia) on an inclined hinge, a rigid link on a 3D Free frame joined to its
    tip's node by a revolute joint about another axis, with ``slide`` a rigid block on another
    sliding along the bar from its midpoint's node (a prismatic joint whose guide is the bar:
    the dense path's only where the bar is elastic), gravity: the joints' rows at elastic
    nodes in 3D."""
    from dolfinx import mesh as dmesh
    from mpi4py import MPI
    hub = mbs.frames.Hinge(axis=(0.2, 0.0, 1.0), origin=(0, 0, 0), name="h1")
    rho, L, b = 7800.0, 0.5, 0.02
    if rigid:
        m = rho * L * b * b
        bar = mbs.RigidBody(mass=m, inertia=np.diag([m * b * b / 6, m * (L * L + b * b) / 12,
                                                     m * (L * L + b * b) / 12]),
                            frame=hub, centre=(L / 2, 0, 0), name="bar")
    else:
        msh = dmesh.create_box(MPI.COMM_WORLD, [np.array([0.0, -b / 2, -b / 2]),
                                                np.array([L, b / 2, b / 2])], [6, 2, 2],
                               dmesh.CellType.hexahedron)
        bar = mbs.Body(msh, mbs.materials.LinearElastic(E=E, nu=0.3, density=rho), hub,
                       name="bar")
    fr2 = mbs.frames.Free(position=(0.7, 0.0, 0.0), name="f2")
    l2 = mbs.RigidBody(mass=0.7, inertia=np.diag([0.004, 0.01, 0.012]), frame=fr2,
                       centre=(0, 0, 0), name="link2")
    fr3 = mbs.frames.Free(position=(0.25, 0.0, 0.0), name="f3")
    blk = mbs.RigidBody(mass=0.3, inertia=np.diag([1e-4, 2e-4, 2e-4]), frame=fr3, name="blk")
    model = mbs.Model([bar, l2] + ([blk] if slide else []), gravity=(0, -9.81, -2.0))
    model.revolute(bar, l2, point=(0.5, 0.0, 0.0), axis=(0.0, 0.3, 1.0), name="elbow")
    if slide:
        model.prismatic(bar, blk, point=(0.25, 0.0, 0.0), axis=(1.0, 0.0, 0.0), name="slide")
    if not rigid:
        model.clamp(bar, lambda x: np.isclose(x[0], 0.0))
        model.reduce(bar, modes=4)
    return model

def _elastic_slide_2d(reduce=True):
    """A 2D elastic link (the elastic double pendulum's first link: a plane-stress strip of
    8 x 1 P2 cells, clamped on its hinge's axis, the tip held across the chord; ``reduce``:
    to 4 Craig-Bampton modes) swinging under gravity from 30 degrees, a rigid block on a
    planar Free frame sliding along it from its midpoint's node (a prismatic joint whose
    guide is the elastic link, in the plane: a row across the axis and the relative angle)."""
    from dolfinx import mesh as dmesh
    from mpi4py import MPI
    c, s = math.cos(math.pi / 6), -math.sin(math.pi / 6)
    msh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([0.0, -EH / 2]),
                                                  np.array([L1, EH / 2])], [8, 1])
    mat = mbs.materials.PlaneStress(E=210e9, nu=0.3, density=ERHO, thickness=EB)
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), angle=-math.pi / 6, name="h1")
    link = mbs.Body(msh, mat, hub, degree=2, name="link")
    fr = mbs.frames.Free(position=(0.25 * c, 0.25 * s, 0.0), dim=2, name="f3")
    blk = mbs.RigidBody(mass=0.3, inertia=2e-4, frame=fr, name="blk")
    model = mbs.Model([link, blk], gravity=(0, -9.81, 0))
    model.clamp(link, where=lambda x: np.isclose(x[0], 0.0) & np.isclose(x[1], 0.0))
    model.clamp(link, where=lambda x: np.isclose(x[0], L1) & np.isclose(x[1], 0.0),
                components=[1])
    model.prismatic(link, blk, point=(0.25 * c, 0.25 * s), axis=(c, s), name="slide")
    if reduce:
        model.reduce(link, modes=4)
    return model


def _driven(kind):
    """The double pendulum with a driven motor: the elbow's relative angle (a position row on
    a joint) or the first hinge's speed (a velocity row on a frame)."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="h1")
    l1 = mbs.RigidBody(mass=1.0, inertia=0.02, frame=hub, centre=(0.25, 0, 0), name="link1")
    fr2 = mbs.frames.Free(position=(0.7, 0, 0), name="f2", dim=2)
    l2 = mbs.RigidBody(mass=0.7, inertia=0.01, frame=fr2, centre=(0, 0, 0), name="link2")
    model = mbs.Model([l1, l2], gravity=(0, -9.81, 0))
    elbow = model.revolute(l1, l2, point=(0.5, 0.0), name="elbow")
    if kind == "elbow angle":
        model.motor(elbow, angle=lambda t: 0.8 * math.sin(5.0 * t), name="elbow motor")
    else:
        model.motor(hub, speed=lambda t: 1.5 + math.sin(3.0 * t), name="hub motor")
    return model


MODELS = {"pendulum": double_pendulum, "pd-motor": lambda: double_pendulum(pd),
          "slider-crank": slider_crank, "elastic slider-crank": _elastic_crank,
          "pendulum 3D": _pendulum_3d, "prismatic 3D": _prismatic_3d,
          "elastic double pendulum": lambda: elastic_double_pendulum()[0],
          "nonlinear double pendulum": lambda: elastic_double_pendulum(
              e_scale=1e-3, stiffening="nonlinear")[0],
          "elastic pendulum 3D": lambda: _elastic_pendulum_3d(slide=False),
          "elastic slide 3D": _elastic_pendulum_3d, "elastic slide 2D": _elastic_slide_2d,
          "elbow angle motor": lambda: _driven("elbow angle"),
          "hub speed motor": lambda: _driven("hub speed")}
#: the joints' forces' and torques' tolerance where it is not 1e-6 of their size: Maggi's
#: stages recover lam at the iterate before Newton's last update (accepted where the next one
#: is predicted at round-off, so that update may be ~1e-7 of the state), and a driven relative
#: angle's torque under generalized-alpha carries it most (6e-6 here, the Python stage's and
#: the compiled stage's alike)
FORCE_TOL = {"elbow angle motor": 1e-5}
STEP = {"elastic slider-crank": 1e-4, "elastic double pendulum": 1e-3,
        "nonlinear double pendulum": 1e-3, "elastic pendulum 3D": 1e-3,
        "elastic slide 3D": 1e-3, "elastic slide 2D": 1e-3}


@pytest.mark.parametrize("formulation,radius", [("first-order", None), ("second-order", None),
                                               ("second-order", 0.8)],
                         ids=["first-order", "second-order", "damped"])
@pytest.mark.parametrize("which", list(MODELS))
def test_dense_equals_ts(which, formulation, radius):
    """Maggi's dense stages against the TS path's multipliers: the frames' motions to 1e-10,
    the joints' forces and motor torques (recovered from the eliminated rows) to 1e-6 of
    their size, the drift as the TS path's (round-off at BDF2's step ends; O(dt^2) where
    generalized-alpha solves the rows inside the step). With numerical damping (spectral
    radius 0.8) too, where the rates carried from step to step enter the steps: the TS path
    once restarted its scheme at every step there, 3e-5 rad apart at the second step of the
    double pendulum."""
    dt = STEP.get(which, 5e-3)
    out = {}
    for stepper in ("ts", "dense"):
        out[stepper] = MODELS[which]().integrate(
            t_end=20 * dt, dt=dt, stepper=stepper, formulation=formulation, progress=False,
            options=TIGHT if stepper == "ts" else DENSE_TIGHT, spectral_radius=radius)
    a, b = out["ts"], out["dense"]
    assert b.stepper == "dense" and a.stepper == "ts"
    for name, h in a.frames.items():
        for k in h.names:
            if k != "torque":
                x = getattr(h, k)
                d = np.abs(x - getattr(b.frames[name], k)).max()
                assert d < 1e-10 * max(1.0, np.abs(x).max()), (name, k, d)
    for name, h in a.joints.items():
        for k in h.names:
            x, y = getattr(h, k), getattr(b.joints[name], k)
            scale = max(np.nanmax(np.abs(x)), 1e-12)
            if k == "drift":
                assert np.nanmax(np.abs(x - y)) < 1e-10, (name, k)
            else:
                assert np.nanmax(np.abs(x - y)) < FORCE_TOL.get(which, 1e-6) * scale, (name, k)
    if formulation == "first-order":
        assert max(np.nanmax(h.drift) for h in b.joints.values()) < 1e-10
    assert np.abs(a.energy["total"] - b.energy["total"]).max() < 1e-9


def test_slider_crank_drive_torque():
    """The drive torque of the slider-crank turned at the constant speed W against the closed
    form M'(theta) W^2 / 2 + V'(theta) within 0.2 % at dt = 2.5e-3 (BDF2), the slider on the
    closed-form kinematics, the joints closed to round-off (below 1e-10); the motor's work
    (``energy["work"]``) W times the closed form's integral, and the energy's rise, to 0.2 %."""
    r = slider_crank().integrate(t_end=0.6, dt=2.5e-3, stepper="dense", progress=False)
    assert r.stepper == "dense"
    th = r.frames["hub"].angle
    assert np.abs(th - W * r.times).max() < 1e-10
    xs, phi, _, _ = crank_closed(th)
    assert np.abs(r.frames["slf"].r_O[:, 0] - xs).max() < 1e-8
    assert np.abs(r.frames["rodf"].angle - phi).max() < 1e-8
    assert max(np.nanmax(r.joints[k].drift) for k in ("A", "B", "P", "drive")) < 1e-10
    ref = np.array([drive_torque(t) for t in th])
    err = np.nanmax(np.abs(r.joints["drive"].torque - ref)) / np.abs(ref).max()
    assert err < 2e-3, err
    # the motor's work in the balance: against W times the closed-form torque's integral,
    # and the energy's rise
    e = r.energy
    closed = W * np.concatenate([[0.0], np.cumsum(0.5 * (ref[1:] + ref[:-1]) * np.diff(r.times))])
    scale = np.abs(closed).max()
    assert scale > 0.1 and np.abs(e["work"] - closed).max() < 2e-3 * scale
    assert np.abs(e["total"] - e["total"][0] - e["work"]).max() < 2e-3 * scale


@pytest.mark.parametrize("torque", [None, pd], ids=["free", "pd-motor"])
def test_double_pendulum_second_order(torque):
    """The double pendulum's angles converge at second order in dt to the Lagrange
    equations' (BDF2), the elbow closed to round-off, its force to the reference."""
    T = 0.5
    ref = double_pendulum_reference(T, torque)
    errors = []
    for dt in (0.005, 0.0025):
        r = double_pendulum(torque).integrate(t_end=T, dt=dt, stepper="dense", progress=False)
        yr = ref.sol(r.times)
        errors.append(max(np.abs(r.frames["h1"].angle - yr[0]).max(),
                          np.abs(r.frames["f2"].angle - yr[1]).max()))
        assert np.nanmax(r.joints["elbow"].drift) < 1e-10
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8 and errors[1] < 2e-3, (errors, order)
    F = elbow_force(ref, T)
    assert np.abs(r.joints["elbow"].force[-1, :2] - F).max() < 2e-2 * np.abs(F).max()
    assert np.isnan(r.joints["elbow"].force[0]).all()


def test_refusals_and_choice():
    """Springs stay on the TS path; "auto" takes Maggi's dense stages where they are compiled,
    for reduced elastic bodies and for generalized-alpha, and keeps a rigid mechanism with
    BDF2 whose stages would be solved from Python (a torque motor; no numba) on the TS path
    (see the guide for where each is faster)."""
    from dolfinx_mbs.integrate.dense import coupled_kernels
    compiled = coupled_kernels.COMPILED
    assert double_pendulum().integrate(t_end=0.01, dt=0.005, progress=False).stepper == (
        "dense" if compiled else "ts")
    assert double_pendulum(pd).integrate(t_end=0.01, dt=0.005, progress=False).stepper == "ts"
    assert double_pendulum().integrate(t_end=0.01, dt=0.005, progress=False,
                                       formulation="second-order").stepper == "dense"
    model = elastic_double_pendulum()[0]
    assert model.integrate(t_end=0.002, dt=1e-3, progress=False).stepper == "dense"
    assert model.integrate(t_end=0.002, dt=1e-3, progress=False,
                           stepper="ts").stepper == "ts"
    hub = mbs.frames.Hinge(name="hub")
    bar = mbs.RigidBody(mass=1.0, inertia=0.1, frame=hub, centre=(0.5, 0, 0), name="bar")
    model = mbs.Model([bar])
    model.spring(bar, (1.0, 0.0, 0.0), None, (1.5, 0.0, 0.0), stiffness=10.0)
    with pytest.raises(ValueError, match="springs"):
        model.integrate(t_end=0.01, dt=0.005, stepper="dense", progress=False)


def test_stiff_elastic_double_pendulum():
    """Two elastic links (reduced, on their chord frames) made 1e5 times stiffer than steel
    swing as the rigid double pendulum: against the Lagrange equations of the rigid bars of
    the strips' masses and inertias m (L^2 + h^2) / 12 within the scheme's error (BDF2, dt =
    2.5e-3: the rigid bars' own is 1.25e-3 rad), and against the same pendulum of
    ``RigidBody`` bars on the dense path, whose discrete equations are the same, within
    1e-5 rad; the elbow closed to round-off, the links' midpoint deflections below 1e-8 m."""
    T, dt = 0.3, 2.5e-3
    model, l1, l2 = elastic_double_pendulum(e_scale=1e5)
    r = model.integrate(t_end=T, dt=dt, stepper="dense", progress=False,
                        probes=[(l1, (L1 / 2, 0.0)), (l2, (0.0, 0.0))])
    m = [ERHO * EH * EB * x for x in (L1, L2)]
    J = [mi * (x ** 2 + EH ** 2) / 12 for mi, x in zip(m, (L1, L2))]
    ref = double_pendulum_reference(T, masses=m, inertias=J).sol(r.times)
    th = np.array([r.frames["h1"].angle, r.frames["f2"].angle])
    err = np.abs(th - ref[:2]).max()
    assert err < 2e-3, err
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="h1")
    b1 = mbs.RigidBody(mass=m[0], inertia=J[0], frame=hub, centre=(L1 / 2, 0, 0), name="b1")
    fr2 = mbs.frames.Free(position=(L1 + L2 / 2, 0, 0), name="f2", dim=2)
    b2 = mbs.RigidBody(mass=m[1], inertia=J[1], frame=fr2, centre=(0, 0, 0), name="b2")
    rigid = mbs.Model([b1, b2], gravity=(0, -9.81, 0))
    rigid.revolute(b1, b2, point=(L1, 0.0), name="elbow")
    rr = rigid.integrate(t_end=T, dt=dt, stepper="dense", progress=False)
    th_r = np.array([rr.frames["h1"].angle, rr.frames["f2"].angle])
    assert np.abs(th - th_r).max() < 1e-5, (err, np.abs(th - th_r).max())
    assert np.nanmax(r.joints["elbow"].drift) < 1e-10
    assert np.abs(r.probes[:, :, 1]).max() < 1e-8


@pytest.mark.parametrize("which", ["elastic slider-crank", "elastic double pendulum",
                                   "elastic slide 3D"])
def test_dense_rows_derivatives(which, monkeypatch):
    """The rows' derivatives Maggi's stages use, from one evaluation of the rows (B, g_p: the
    nodes' rates' coefficients the joints give) and from differences over the frames'
    coordinates and the nodes' displacements (h_p, d(B^T lam)/dp), against central
    differences of g and h in the dense state's own coordinates (each mode's coordinate
    and rate, each frame unknown), at a state of a run (after a few steps, lam nonzero)."""
    from dolfinx_mbs.integrate.dense import coupled as dc
    seen = []
    solve = dc.MaggiStage.solve
    dt = STEP.get(which, 1e-3)

    def keep(self, t, ca, da, cb, db, *args):
        X = solve(self, t, ca, da, cb, db, *args)
        if t > 6 * dt:
            seen.append((self.dj, t, ca * X + da, self.lam.copy()))
        return X
    monkeypatch.setattr(dc.MaggiStage, "solve", keep)
    monkeypatch.setattr(dc.MaggiStage, "runs", lambda self, started: False)   # step by step
    MODELS[which]().integrate(t_end=8 * dt, dt=dt, stepper="dense", progress=False)
    dj, t, y, lam = seen[-1]
    g, h, B, gp = dj.evaluate(t, y)
    hp, fp = dj.position_derivatives(t, y, lam)

    def diff(fn, idx):
        out = []
        for i in idx:
            step = 1e-6 * max(1.0, abs(y[i]))
            lo, hi = y.copy(), y.copy()
            lo[i] -= step
            hi[i] += step
            out.append((fn(hi) - fn(lo)) / (2 * step))
        return np.array(out).T

    def close(a, b, what):
        assert a.shape == b.shape, what
        err = np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)
        assert err < 1e-6, (what, err)
    assert np.abs(B).max() > 0 and np.abs(gp).max() > 0 and np.abs(fp).max() > 0
    close(B, diff(lambda x: dj.values(t, x)[1], dj.V), "B")
    close(gp, diff(lambda x: dj.values(t, x)[0][dj.pos], dj.P), "g_p")
    close(hp, diff(lambda x: dj.values(t, x)[1], dj.P), "h_p")
    close(fp, diff(lambda x: dj.velocity_matrix(t, x).T @ lam, dj.P), "d(B^T lam)/dp")
    # the elastic coordinates' columns are the nodes' (not zero: the joints sit at nodes)
    assert np.abs(B[:, :dj.n]).max() > 0 and np.abs(hp[:, :dj.n]).max() > 0


@pytest.mark.parametrize("which", list(MODELS))
def test_kernel_rows_equal_object_form(which, monkeypatch):
    """The compiled rows (:mod:`~dolfinx_mbs.integrate.dense.joint_kernels`) against the
    joints' object form (:class:`~dolfinx_mbs.systems.coupled_dense_joints.DenseJoints`, the
    TS path's rows), at a state of a run: g, h, B and g_p in closed form to round-off, h_p and
    d(B^T lam)/dp (central differences in both) to 1e-6 of their size; the outputs (forces,
    torques, drifts) alike."""
    from dolfinx_mbs.integrate.dense import coupled as dc
    from dolfinx_mbs.integrate.dense import coupled_kernels, joint_kernels
    if not coupled_kernels.COMPILED:
        pytest.skip("numba is not installed: the object form steps the joints")
    seen = []
    solve = dc.MaggiStage.solve
    dt = STEP.get(which, 1e-3)

    def keep(self, t, ca, da, cb, db, X, Xs, par):
        X = solve(self, t, ca, da, cb, db, X, Xs, par)
        if t > 6 * dt:
            seen.append((self, t, ca * X + da, self.lam.copy(), par))
        return X
    monkeypatch.setattr(dc.MaggiStage, "solve", keep)
    monkeypatch.setattr(dc.MaggiStage, "runs", lambda self, started: False)   # step by step
    MODELS[which]().integrate(t_end=8 * dt, dt=dt, stepper="dense", progress=False)
    stage, t, y, lam, par = seen[-1]
    dj = stage.dj
    assert joint_kernels.tables_reason(dj.system) is None and stage.tables is not None
    g0, h0, B0, gp0 = dj.evaluate(t, y)
    hp0, fp0 = dj.position_derivatives(t, y, lam)
    g, h, B, gp = stage._rows(t, y, par)
    stage.lam = lam
    hp, fp = stage._position_derivatives(t, y, par)
    scale = max(np.abs(B0).max(), 1.0)
    for a, b, what in ((g, g0, "g"), (h, h0, "h"), (B, B0, "B"), (gp, gp0, "g_p")):
        assert a.shape == b.shape and np.abs(a - b).max() < 1e-13 * scale, what
    for a, b, what in ((hp, hp0, "h_p"), (fp, fp0, "d(B^T lam)/dp")):
        assert np.abs(a - b).max() <= 1e-6 * np.abs(b).max() + 1e-8 * scale, what
    want, got = dj.outputs(t, y, lam), stage.outputs(t, y, lam)
    assert set(want) == set(got)
    for name in want:
        for k in want[name]:
            assert np.allclose(np.asarray(got[name][k]), np.asarray(want[name][k]),
                               rtol=1e-12, atol=1e-14), (name, k)


def _same_motion(ref, r):
    """The frames' angles and origins of two runs alike to 1e-9 of their size (Newton's
    tolerance)."""
    for name in ref.frames:
        for key in ("angle", "r_O"):
            a = np.asarray(getattr(ref.frames[name], key, np.zeros(1)))
            b = np.asarray(getattr(r.frames[name], key, np.zeros(1)))
            assert np.abs(a - b).max() <= 1e-9 * max(np.abs(a).max(), 1e-3), (name, key)


@pytest.mark.parametrize("which", ["slider-crank", "elastic double pendulum"])
def test_compiled_stage_falls_back(which, monkeypatch):
    """Where the compiled stage must choose its dependent coordinates again (it returns
    CHOOSE), :meth:`~dolfinx_mbs.integrate.dense.coupled.MaggiStage.solve` takes the stage
    from its guess with a matrix of its own: forced at every third stage, the run equals the
    run of compiled stages alone to the Newton tolerance, and the compiled stages after a
    fallback start from a matrix of their own (nothing of the failed call kept). The steps
    are taken one by one from Python here (no compiled run of steps: its stages are not
    Python's to patch; test_compiled_run_falls_back has its fallback)."""
    from dolfinx_mbs.integrate.dense import coupled as dense_coupled
    from dolfinx_mbs.integrate.dense import coupled_kernels, joint_kernels
    if not coupled_kernels.COMPILED:
        pytest.skip("numba is not installed: the object form steps the joints")
    dt = STEP.get(which, 5e-3)
    T = 40 * dt
    ref = MODELS[which]().integrate(t_end=T, dt=dt, stepper="dense", progress=False)
    monkeypatch.setattr(dense_coupled.MaggiStage, "runs", lambda self, started: False)
    calls = {"n": 0, "choose": 0}
    stage = joint_kernels.stage

    def sometimes(*args):
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            calls["choose"] += 1
            args[7][:] = 1e30    # (a failed call's garbage in its iterate and kept factors)
            args[9][:] = 1e30
            return joint_kernels.CHOOSE
        return stage(*args)
    monkeypatch.setattr(joint_kernels, "stage", sometimes)
    r = MODELS[which]().integrate(t_end=T, dt=dt, stepper="dense", progress=False)
    assert calls["choose"] > 10
    _same_motion(ref, r)



@pytest.mark.parametrize("formulation", ["first-order", "second-order"])
@pytest.mark.parametrize("which", ["slider-crank", "elastic double pendulum"])
def test_compiled_run_falls_back(which, formulation, monkeypatch):
    """The compiled run of Maggi's steps (joint_kernels.maggi_run) against the same steps
    taken one by one from Python: the same states and multipliers to the bit. Where a run's
    stage must choose its dependent coordinates again (made to after every third step, the
    kept matrix left as garbage), the step is Python's from its guess with a matrix of its
    own and the run goes on after it: the same motion as without to the Newton tolerance."""
    from dolfinx_mbs.integrate.dense import coupled as dense_coupled
    from dolfinx_mbs.integrate.dense import coupled_kernels, joint_kernels
    if not coupled_kernels.COMPILED:
        pytest.skip("numba is not installed: the object form steps the joints")
    dt = STEP.get(which, 5e-3)
    T = 40 * dt

    def run(**kw):
        return MODELS[which]().integrate(t_end=T, dt=dt, stepper="dense", progress=False,
                                         formulation=formulation, **kw)
    ref = run()
    with monkeypatch.context() as mp:
        mp.setattr(dense_coupled.MaggiStage, "runs", lambda self, started: False)
        steps = run()
    for name, h in ref.frames.items():
        for key in h.names:
            assert np.array_equal(getattr(h, key), getattr(steps.frames[name], key)), key
    for name, h in ref.joints.items():
        for key in h.names:
            assert np.array_equal(getattr(h, key), getattr(steps.joints[name], key),
                                  equal_nan=True), key
    whole = joint_kernels.maggi_run
    calls = {"choose": 0}

    def stops(*args):
        tt, out, kept, mem, info = args[4], args[11], args[12], args[13], args[15]
        m = min(3, tt.shape[0] - 1)
        whole(*args[:4], tt[:m + 1], *args[5:11], (out[0][:m], out[1][:m]), *args[12:])
        if info[1] == coupled_kernels.OK and m < tt.shape[0] - 1:
            calls["choose"] += 1
            kept[0][:] = 1e30
            mem[joint_kernels.S_KEPT] = 0.0
            info[1] = joint_kernels.CHOOSE
    monkeypatch.setattr(joint_kernels, "maggi_run", stops)
    r = run()
    assert calls["choose"] > 5
    _same_motion(ref, r)


def test_prismatic_at_an_elastic_node():
    """A prismatic joint whose guide is an elastic body's node, the body unreduced: the TS
    path (its force on the node lam times the rows' coefficients of the node's rate, in the
    body's sparse rows) against Maggi's dense stages to 1e-10 of the slide's travel, in the
    plane; in 3D ("auto": the dense path for the reduced bar, the same run twice alike) the
    block slides down the bar as a block on a rigid guide does to the bar's deflection (the
    same model with the bar rigid, on the TS path: 1e-3 of the slide's travel)."""
    out = {st: _elastic_slide_2d(reduce=False).integrate(
        t_end=0.03, dt=1e-3, stepper=st, progress=False,
        options=TIGHT if st == "ts" else DENSE_TIGHT) for st in ("ts", "dense")}
    a, b = out["ts"].frames["f3"].r_O, out["dense"].frames["f3"].r_O
    moved = np.abs(a - a[0]).max()
    assert moved > 1e-3, moved
    assert np.abs(a - b).max() < 1e-10 * moved, (np.abs(a - b).max(), moved)
    model = _elastic_pendulum_3d()
    r = model.integrate(t_end=0.05, dt=1e-3, progress=False)
    assert r.stepper == "dense"
    for i in range(2):   # the same run twice: the first left nothing behind
        again = model.integrate(t_end=0.05, dt=1e-3, progress=False)
        assert np.array_equal(again.frames["f3"].r_O, r.frames["f3"].r_O)
    stiff = _elastic_pendulum_3d(E=2e13).integrate(t_end=0.05, dt=1e-3, progress=False)
    rigid = _elastic_pendulum_3d(rigid=True).integrate(t_end=0.05, dt=1e-3, progress=False,
                                                       stepper="ts")
    assert stiff.stepper == "dense" and rigid.stepper == "ts"
    travel = np.abs(rigid.frames["f3"].r_O[-1] - rigid.frames["f3"].r_O[0]).max()
    assert travel > 1e-3
    err = np.abs(stiff.frames["f3"].r_O - rigid.frames["f3"].r_O).max()
    assert err < 1e-3 * travel, (err, travel)
    # the softer bar's deflection shows (not the rigid motion)
    soft = np.abs(r.frames["f3"].r_O - rigid.frames["f3"].r_O).max()
    assert soft > 10 * err, (soft, err)


@pytest.mark.parametrize("dim", [2, 3])
def test_prismatic_force(dim):
    """A prismatic joint's recorded force is the guide's force on the sliding body across the
    axis: a block on a fixed rail under gravity, on both paths, carries -m g across the rail
    (its component along it accelerates the block: g_x). (At an elastic node the two paths'
    forces agree: ``test_dense_equals_ts``.)"""
    fr = (mbs.frames.Free(position=(0.0, 0.0, 0.0), dim=2, name="f") if dim == 2
          else mbs.frames.Free(position=(0.0, 0.0, 0.0), name="f"))
    m = 2.0
    blk = mbs.RigidBody(mass=m, inertia=1e-2 if dim == 2 else np.diag([1e-2] * 3), frame=fr,
                        name="blk")
    g = np.array([1.0, -9.81, 0.0 if dim == 2 else 3.0])
    model = mbs.Model([blk], gravity=tuple(g))
    model.prismatic(None, blk, point=(0.0,) * dim, axis=(1.0, 0.0, 0.0)[:dim], name="rail")
    for stepper in ("ts", "dense"):
        r = model.integrate(t_end=0.02, dt=1e-3, stepper=stepper, progress=False)
        want = -m * g
        want[0] = 0.0
        assert np.abs(r.joints["rail"].force[1:] - want).max() < 1e-9, stepper
        acc_x = np.diff(r.frames["f"].r_O[:, 0], 2)[-5:] / 1e-6   # (BDF2's start-up decays)
        assert np.abs(acc_x - g[0]).max() < 1e-6
    # the batch form by hand: the rail's rows (across, and its angle in 2D), then bad shapes
    rail = next(j for j in model.frame_joints if j.name == "rail")
    lam = np.zeros((2, rail.n_rows))
    lam[:, 0] = [1.0, 2.0]
    F = rail.forces_on_b(np.broadcast_to(np.eye(3), (2, 3, 3)), lam)
    assert np.allclose(F, -np.outer([1.0, 2.0], rail.normals_a[0]))
    with pytest.raises(ValueError, match="rail: forces_on_b's Ra"):
        rail.forces_on_b(np.eye(3), lam)
    with pytest.raises(ValueError, match=r"rail: forces_on_b's lam .*\(2, %d\)" % rail.n_rows):
        rail.forces_on_b(np.broadcast_to(np.eye(3), (2, 3, 3)), lam[:, :1])


def test_nonlinear_tensors_kept_between_runs(monkeypatch):
    """A model integrated again keeps the reduced links' nonlinear-strain tensors (no
    assembly of them: the coupled system and its parts are the model's), and its run equals
    the first to the bit and a new model's; reduced again to other modes, the tensors are
    found anew for the new basis, the run as a new model's with that basis (to 1e-10: a model
    reduced again differs from a new one by 5e-12 rad and m, with the tensors kept or not)."""
    from dolfinx_mbs.systems import coupled_dense
    found = {"n": 0}
    tensors = coupled_dense.nonlinear_tensors

    def counted(*args):
        found["n"] += 1
        return tensors(*args)
    monkeypatch.setattr(coupled_dense, "nonlinear_tensors", counted)

    def run(model):
        with warnings.catch_warnings():   # (the links' bases without derivatives: fine here)
            warnings.simplefilter("ignore", UserWarning)
            r = model.integrate(t_end=0.02, dt=1e-3, progress=False)
        assert r.stepper == "dense"
        return np.concatenate([r.frames["h1"].angle, r.frames["f2"].r_O.ravel()])
    model, l1, l2 = elastic_double_pendulum(e_scale=1e-3, stiffening="nonlinear")
    first = run(model)
    assert found["n"] == 2                       # the two links
    again = run(model)
    assert found["n"] == 2 and np.array_equal(first, again)
    assert np.array_equal(first, run(elastic_double_pendulum(
        e_scale=1e-3, stiffening="nonlinear")[0]))
    assert found["n"] == 4
    model.reduce(l1, modes=3, derivatives=1)
    found["n"] = 0
    other = run(model)
    assert found["n"] >= 1 and not np.array_equal(first, other)
    fresh, f1, _ = elastic_double_pendulum(e_scale=1e-3, stiffening="nonlinear")
    fresh.reduce(f1, modes=3, derivatives=1)
    new = run(fresh)   # (a model reduced again is a new one's to 5e-12, kept tensors or not)
    assert np.abs(other - new).max() < 1e-10
