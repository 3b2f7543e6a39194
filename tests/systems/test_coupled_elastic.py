"""Elastic bodies on frames whose motion is computed (issue 29, part A).

* The Newton step's Jacobian is exact: the bordered solve undoes central differences of the
  residual (an independent path: residual evaluations only), for a hinge (with gravity,
  prestress and a state-dependent torque), a hinge on a spinning parent, and free frames in 2D
  and 3D (the momentum balance's auxiliary unknowns included), and a spring from a node of
  the body on each of these frames to the ground.
* A stiff elastic pendulum swings with the rigid pendulum's period (elliptic integral).
* A free elastic body tumbling and vibrating, no load: linear momentum constant to 1e-10
  over 1000 steps; angular momentum and energy drift at second order in dt.
* Inverse against forward dynamics on the Kane-Ryan-Banerjee beam: the drive torque of the
  prescribed spin-up (``drives=True``), applied to a hinge, gives back the angle history and
  the tip deflection, closer as dt shrinks; the computed frame motion, given back as a Sampled
  frame, reproduces the coupled run's elastic response.
* Bad models are refused.
"""

import copy
import math

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI
from petsc4py import PETSc
from scipy.interpolate import CubicSpline

import dolfinx_mbs as mbs
from dolfinx_mbs.integrate.ts.coupled import CoupledProblem
from dolfinx_mbs.petsc_options import SolverOptions
from tests.models import krb
from tests.models.freebox import bending, box, free_box
from tests.models.rigidref import pendulum_period

COMM = MPI.COMM_WORLD


def _strip(frame, L=1.0, H=0.05, n=(6, 2), E=1e7, rho=1000.0, stiffening=None, name="beam"):
    msh = dmesh.create_rectangle(COMM, [np.array([0.0, -H / 2]), np.array([L, H / 2])], list(n),
                                 dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=E, nu=0.3, density=rho, thickness=0.01)
    return mbs.Body(msh, mat, frame, degree=2, stiffening=stiffening, name=name)




def _check_jacobian(model, sigma=37.0, seed=1):
    """max relative error of J^-1 (J d) = d over random directions, J d by central
    differences of the residual at a random state."""
    system = model.coupled_system()
    ts = PETSc.TS().create(COMM)
    prob = CoupledProblem(system, ts, SolverOptions("mbs_", {}, None), "first-order")
    rng = np.random.default_rng(seed + COMM.rank)
    X, Xd = prob.F.duplicate(), prob.F.duplicate()
    X.setArray(rng.normal(size=X.getLocalSize()) * 1e-3)
    Xd.setArray(rng.normal(size=X.getLocalSize()) * 1e-2)
    n = prob.n_local
    f0 = COMM.bcast(np.random.default_rng(seed).normal(size=system.m) * 0.1, root=0)
    start = system.initial_unknowns()       # collective
    if prob.owner:
        X.getArray()[2 * n:] = start + f0
        Xd.getArray()[2 * n:] = f0[::-1]
    F, Fp, Fm = (prob.F.duplicate() for _ in range(3))
    worst = 0.0
    for trial in range(2):
        d = X.duplicate()
        d.setArray(rng.normal(size=X.getLocalSize()))
        if prob.owner:
            d.getArray()[2 * n:] = np.random.default_rng(seed + 10 + trial).normal(size=system.m)
        h = 1e-6
        for sign, out in ((1.0, Fp), (-1.0, Fm)):
            Xs, Xds = X.copy(), Xd.copy()
            Xs.axpy(sign * h, d)
            Xds.axpy(sign * sigma * h, d)
            prob._function(ts, 0.1, Xs, Xds, out)
        Fp.axpy(-1.0, Fm)
        Fp.scale(1.0 / (2.0 * h))            # J d
        prob._function(ts, 0.1, X, Xd, F)
        prob._jacobian(ts, 0.1, X, Xd, sigma, None, None)
        assert prob.linearize()
        back = prob.solve_bordered(Fp)
        back.axpy(-1.0, d)
        worst = max(worst, back.norm(PETSc.NormType.INFINITY) / d.norm(PETSc.NormType.INFINITY))
    prob.destroy()
    ts.destroy()
    return worst


def test_jacobian_hinge():
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0.1, 0.05, 0), angle=0.3, rate=2.0,
                           name="hub")
    body = _strip(hub, stiffening="prestress")
    model = mbs.Model([body], gravity=(0, -9.81, 0))
    model.attach(body, lambda x: x[0] < 1e-8)
    model.apply_torque(hub, lambda t, s: -3.0 * s.rate + 0.5 * math.sin(s.angle) + 0.1 * t)
    assert _check_jacobian(model) < 1e-5


def test_jacobian_hinge_loads_of_time_alone():
    """Loads whose functions read nothing of the frame's state: a torque of time alone about
    a hinge's axis (its generalized force does not depend on the unknowns: no differencing)
    and a force of constant global components at a point (it does, through R: differenced)."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0.1, 0.05, 0), angle=0.3, rate=2.0,
                           name="hub")
    body = _strip(hub, stiffening="prestress")
    model = mbs.Model([body], gravity=(0, -9.81, 0))
    model.attach(body, lambda x: x[0] < 1e-8)
    model.apply_torque(hub, lambda t, s: 0.5 + 0.1 * t)
    model.apply_force(hub, lambda t, s: np.array([0.0, 2.0, 0.0]), point=(1.0, 0.0, 0.0),
                      local=False)
    assert _check_jacobian(model) < 1e-5


@pytest.mark.parametrize("which", ["time", "rate", "copy", "global"])
def test_load_derivative_closed_form(which):
    """-dQ/d(theta, theta') of a hinge's applied loads against the closed form: a torque of
    time alone (0: the differencing is skipped), a PD law -kp theta - kd theta' (kp, kd; read
    directly or from a copy of the state), a global force F = (0, 2, 0) at the local point
    (1, 0, 0) about the z axis (Q = 2 cos theta: 2 sin theta, 0)."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), angle=0.3, rate=2.0, name="hub")
    rb = mbs.RigidBody(mass=1.0, inertia=np.diag([0.1, 0.1, 0.1]), frame=hub)
    model = mbs.Model([rb])
    if which == "time":
        model.apply_torque(hub, lambda t, s: 0.5 + 0.1 * t)
        expected = [0.0, 0.0]
    elif which == "rate":
        model.apply_torque(hub, lambda t, s: -40.0 * s.angle - 3.0 * s.rate)
        expected = [40.0, 3.0]
    elif which == "copy":
        model.apply_torque(hub, lambda t, s: -40.0 * copy.copy(s).angle
                           - 3.0 * vars(s)["rate"])
        expected = [40.0, 3.0]
    else:
        model.apply_force(hub, lambda t, s: np.array([0.0, 2.0, 0.0]), point=(1.0, 0.0, 0.0),
                          local=False)
        expected = [2.0 * math.sin(0.3), 0.0]
    system = model.coupled_system()
    f = np.array([0.3, 2.0])
    Ff, last = system.evaluate(0.2, None, None, None, f, np.zeros(2), None)
    system.set_unknowns(f, np.zeros(2))
    D = system._load_derivative(0.2, 0, 1.0, last["jets"][0])
    assert np.allclose(D[0], expected, rtol=1e-6, atol=1e-12 if which == "time" else 1e-7)
    if which == "time":
        assert np.all(D == 0.0)


def test_jacobian_hinge_on_a_spinning_parent():
    parent = mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=3.0)
    hub = mbs.frames.Hinge(axis=(0, 1, 1), origin=(0.2, 0.0, 0.1), angle=0.4, rate=-1.0,
                           parent=parent, name="pitch")
    body = box(hub, n=(3, 1, 1))
    disk = mbs.RigidBody(mass=2.0, inertia=np.diag([0.1, 0.2, 0.25]), frame=hub,
                         centre=(0.3, 0.1, 0.0), name="disk")
    model = mbs.Model([body, disk], gravity=(0, 0, -9.81))
    model.attach(body, lambda x: x[0] < -0.5 + 1e-8)
    assert _check_jacobian(model) < 1e-5


@pytest.mark.parametrize("dim", [2, 3])
def test_jacobian_free(dim):
    if dim == 2:
        sat = mbs.frames.Free(position=(0.1, 0.2, 0), velocity=(0.3, -0.2, 0),
                              angular_velocity=(0, 0, 1.5), name="sat")
        body = _strip(sat)
        where = lambda x: x[0] < 1e-8  # noqa: E731
    else:
        R0 = mbs.frames.rotation_about((1, 2, 3), 0.7)
        sat = mbs.frames.Free(position=(0.1, 0.2, 0.3), orientation=R0,
                              velocity=(0.3, -0.2, 0.1), angular_velocity=(0.5, 1.5, -0.3),
                              name="sat")
        body = box(sat, n=(3, 1, 1))
        where = lambda x: np.abs(x[0]) < 0.2  # noqa: E731
    model = mbs.Model([body], gravity=(0, -9.81, 0))
    model.attach(body, where)
    model.apply_force(sat, lambda t, s: np.array([1.0, -2.0, 0.5 if dim == 3 else 0.0])
                      * s.omega[2], point=(0.5, 0.0, 0.0), local=False)
    assert _check_jacobian(model) < 1e-5


@pytest.mark.parametrize("frame", ["hinge", "free", "free3d"])
def test_jacobian_spring_at_a_node(frame):
    """A damped spring, stretched, from an elastic body's node to the ground: its force on
    the node enters the frame's rows through the body's inertia residual e, whose derivative
    by the node's displacement holds the force's arm (-Om_j x e). Measured: 2e-7, 3e-7, 5e-8;
    with the arm counted a second time (the Jacobian before), 61, 60 and 93."""
    if frame == "hinge":
        fr = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), angle=0.3, rate=2.0, name="f")
        body = _strip(fr)
        where = lambda x: x[0] < 1e-8  # noqa: E731
        local = np.array([1.0, 0.025, 0.0])
    elif frame == "free":
        fr = mbs.frames.Free(position=(0.1, 0.2, 0), velocity=(0.3, -0.2, 0),
                             angular_velocity=(0, 0, 1.5), name="f")
        body = _strip(fr)
        where = lambda x: x[0] < 0.2  # noqa: E731
        local = np.array([1.0, 0.025, 0.0])
    else:
        fr = mbs.frames.Free(position=(0.1, 0.2, 0.3),
                             orientation=mbs.frames.rotation_about((1, 2, 3), 0.7),
                             velocity=(0.3, -0.2, 0.1), angular_velocity=(0.5, 1.5, -0.3),
                             name="f")
        body = box(fr, n=(3, 1, 1))
        where = lambda x: np.abs(x[0]) < 0.2  # noqa: E731
        local = np.array([0.5, 0.1, 0.05])
    model = mbs.Model([body], gravity=(0, -9.81, 0))
    model.attach(body, where)
    st = fr.state(0.0)
    a = st.r_O + st.R @ local
    b = a + np.array([0.1, -0.5, 0.2 if frame == "free3d" else 0.0])
    g = 3 if frame == "free3d" else 2
    model.spring(body, tuple(a[:g]), None, tuple(b[:g]), stiffness=2e3, damping=20.0,
                 length=0.4, name="s")
    assert _check_jacobian(model) < 1e-5


def test_stiff_pendulum_is_the_rigid_pendulum():
    """An elastic strip on a hinge under gravity, released horizontal, stiff (its first bending
    frequency 80 times the swing's): back after the rigid pendulum's period to 1e-5 rad."""
    L, H, rho, g, t = 1.0, 0.05, 1000.0, 9.81, 0.01
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
    body = _strip(hub, L=L, H=H, n=(10, 1), E=1e11, rho=rho)
    model = mbs.Model([body], gravity=(0, -g, 0))
    model.attach(body, lambda x: x[0] < 1e-8)
    m = rho * L * H * t
    T = pendulum_period(m * (L**2 / 3 + H**2 / 12), m, g, L / 2, math.pi / 2)
    r = model.integrate(t_end=T, dt=T / 200, progress=False)
    th = r.frames["hub"].angle
    assert abs(th[-1]) < 1e-5 and abs(th[100] + math.pi) < 1e-5
    assert np.ptp(r.energy["total"]) < 1e-4 * m * g * L






def test_free_elastic_body_momenta():
    """No load. BDF2 (``"first-order"``) meets the whole residual at every step's end, the
    relation of the auxiliary momentum unknowns included, so the linear momentum m v_O + pi (a
    linear function of the unknowns) is the body's momentum there: constant to 1e-10 over 1000
    steps. Generalized-alpha (``"second-order"``; at radius 1 the implicit midpoint rule) meets
    it at a stage inside the step: there, as for the angular momentum about the origin and the
    energy under both, the drift shrinks at second order in dt."""
    model, body = free_box()
    r = model.integrate(t_end=1.0, dt=1e-3, v0=bending(body), formulation="first-order",
                        progress=False)
    assert r.steps == 1000
    P = r.momentum["linear"]
    assert np.abs(P - P[0]).max() <= 1e-10 * np.linalg.norm(P[0])
    assert np.abs(r.energy["elastic"]).max() > 1e-3 * r.energy["kinetic"][0]   # it vibrates
    for formulation, options in (("second-order", None), ("first-order", None)):
        drift = []
        for dt in (4e-3, 2e-3):
            model, body = free_box()
            rr = model.integrate(t_end=0.4, dt=dt, v0=bending(body),
                                 formulation=formulation, options=options, progress=False)
            P, H, E = rr.momentum["linear"], rr.momentum["angular"], rr.energy["total"]
            drift.append([np.abs(P - P[0]).max() / np.linalg.norm(P[0]),
                          np.abs(H - H[0]).max() / np.linalg.norm(H[0]),
                          np.abs(E - E[0]).max() / E[0]])
        for a, b in zip(*drift):
            assert b < 1e-3 and (b < 1e-11 or a / b > 3.0), (formulation, options, drift)


# --- the Kane-Ryan-Banerjee beam (tests/models/krb.py): inverse and forward dynamics ------------


def test_inverse_and_forward_dynamics():
    """The spin-up's drive torque, applied to a hinge, gives the spin-up back: angle to 1e-4
    of its range, tip deflection to 1e-3 of its peak, both closer at the smaller step."""
    errs = []
    for dt in (0.08, 0.04):
        rp, angle = krb.prescribed(dt, 16.0)
        (label, hist), = rp.frames.items()
        tq = hist.torque[:, 2]
        assert 250.0 < np.abs(tq).max() < 400.0     # ~ J alpha of the beam, 400 kg m^2
        spl = CubicSpline(rp.times, tq)
        rc = krb.driven(lambda t, s: float(spl(t)), dt, 16.0)
        tip_p, tip_c = rp.probes[:, 0, 1], rc.probes[:, 0, 1]
        errs.append((np.abs(rc.frames["hub"].angle - angle).max() / np.ptp(angle),
                     np.abs(tip_c - tip_p).max() / np.abs(tip_p).max()))
    for a, b in zip(*errs):
        assert b < a
    assert errs[-1][0] < 1e-4 and errs[-1][1] < 1e-3, errs


def test_computed_motion_replayed_as_a_sampled_frame():
    """The replay reproduces the coupled run's tip deflection; the difference (two second-order
    schemes: generalized-alpha on the first-order coupled system, TSALPHA2 on the second-order
    one, and the spline of the sampled angle) shrinks with dt: 3.3e-4 of the peak at dt = 0.04,
    1.2e-4 at 0.02 (measured), 1e-4 at 0.01 (``slow``). With prestress the deflection stays
    bounded past the first bending frequency."""
    errs = []
    for dt in (0.04, 0.02):
        tip, replay, rate = krb.replay(dt)
        assert rate > 4.0                                  # past the first bending frequency
        assert 0.2 < np.abs(tip).max() < 0.8               # bounded
        errs.append(np.abs(replay - tip).max() / np.abs(tip).max())
    assert errs[1] < 0.5 * errs[0] and errs[1] < 2e-4, errs


def test_coupled_run_watches_the_small_displacement_range():
    """A spin-up driven 2.5 times harder bends the linear beam past 0.1 rad relative to its
    frame: the coupled run warns on every rank (while it goes on, and at its end), naming the
    beam, and reports the rotation that
    the prescribed path's watch reports for the replayed motion (a second stepper and driver
    over the same motion), to 1e-3 (1.5e-4 measured)."""
    import warnings

    from dolfinx_mbs.integrate.motion_range import LIMIT, SmallDisplacementWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rc = krb.driven(lambda t, s: 400.0 * (1.0 - math.cos(2 * math.pi * t / 12.0))
                         if t < 12.0 else 0.0, 0.04, 14.0)
    caught = [w for w in caught if issubclass(w.category, SmallDisplacementWarning)]
    frame = mbs.frames.Sampled(rc.times, rotations=rc.frames["hub"].angle)
    body = krb.strip(frame)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallDisplacementWarning)
        rp = model.integrate(t_end=14.0, dt=0.04, spectral_radius=0.8, progress=False)
    got, ref = rc.rotation["beam"], rp.rotation["beam"]
    assert got > 1.2 * LIMIT and abs(got - ref) < 1e-3 * ref, (got, ref)
    assert len(caught) == 2 and all("'beam'" in str(w.message) for w in caught), caught
    assert "the run goes on" in str(caught[0].message)


@pytest.mark.slow
def test_replay_to_1e4():
    tip, replay, _ = krb.replay(0.01)
    assert np.abs(replay - tip).max() < 1e-4 * np.abs(tip).max()


# --- bad models ---------------------------------------------------------------------------------

def test_reduced_bodies_held_or_checked():
    """A reduced body's reduction proves it held against its frame's rigid motion (no
    interface, its interior's lowest eigenvalue clear of zero: ``ReducedBody.held``) or leaves
    it to the model's check: a free strip reduced to modes is refused as the full one is
    (its lowest modes the rigid ones), pinned at one node too (a rotation left); clamped along
    an edge it is held and runs."""
    for where in (None, "corner"):
        body = _strip(mbs.frames.Hinge(name="hub"))
        model = mbs.Model([body])
        if where:
            model.attach(body, lambda x: np.isclose(x[0], 0.0) & np.isclose(x[1], 0.0),
                         name="at the corner")
        red = model.reduce(body, modes=4, method="modal")
        with pytest.raises(ValueError, match="rigid motion|no reference condition"):
            model.integrate(t_end=0.02, dt=0.01, progress=False)
        assert red.held is False and abs(red.frequencies[0]) < 1e-3 * red.frequencies[-1]
    body = _strip(mbs.frames.Hinge(name="hub"))
    model = mbs.Model([body])
    model.attach(body, lambda x: x[0] < 1e-8)
    red = model.reduce(body, modes=4, method="craig-bampton")
    assert model.integrate(t_end=0.02, dt=0.01, progress=False).steps == 2
    assert red.held is True and red.n_interface == 0


def test_bad_models():
    hub = mbs.frames.Hinge(name="hub")
    body = _strip(hub)
    model = mbs.Model([body])
    with pytest.raises(ValueError, match="no reference condition"):
        model.integrate(t_end=0.1, dt=0.01, progress=False)
    with pytest.raises(ValueError, match="no reference condition"):   # the same again
        model.integrate(t_end=0.1, dt=0.01, progress=False)
    model.attach(body, lambda x: x[0] < 1e-8)
    r = model.integrate(t_end=0.02, dt=0.01, progress=False)          # then it runs
    assert r.steps == 2
    # held at one node: the rotation about it is free, and the message names the attachment
    pinned = _strip(mbs.frames.Hinge(name="hub1"), name="pinned")
    model1 = mbs.Model([pinned])
    model1.attach(pinned, lambda x: np.isclose(x[0], 0.0) & np.isclose(x[1], 0.0),
                  name="at the corner")
    for _ in range(2):
        with pytest.raises(ValueError, match=r"held by 'at the corner' \(1 node, components "
                                             r"\[0, 1\]\), which leaves a rigid motion"):
            model1.integrate(t_end=0.1, dt=0.01, progress=False)
    model1.clamp(pinned, lambda x: np.isclose(x[0], 1.0) & np.isclose(x[1], 0.0),
                 components=[1])                                   # a chord frame: it runs
    assert model1.integrate(t_end=0.02, dt=0.01, progress=False).steps == 2
    empty = mbs.frames.Hinge(name="empty")
    model2 = mbs.Model([_strip(mbs.frames.Hinge(name="other"), name="b2")])
    with pytest.raises(ValueError, match="computed frame"):
        model2.apply_torque(empty, lambda t, s: 1.0)
    with pytest.raises(ValueError, match="name"):
        mbs.Model([_strip(mbs.frames.Hinge(name="beam"), name="beam")])
