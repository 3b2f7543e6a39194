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
* Joints and motors: the Newton step stays exact with the joints' rows (the slider-crank, a
  bar pinned to an elastic node); their convergence is tests/systems/test_coupled_joints.py's.
* Springs and dampers: the Newton step stays exact with their force rows (ends on rigid bodies,
  elastic nodes, prescribed frames); a mass hanging from a spring and damper and a bar held at
  its tip node by one follow the damped oscillator's closed form at second order in dt; two
  free bodies tied by one keep their linear and angular momentum to round-off.
* What the form does not take is refused by name.
"""

import logging
import math

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models import springs
from tests.models.freebox import bending, free_box
from tests.models.mechanisms import slider_crank
from tests.models.rigidref import euler_omega, pendulum_period

COMM = MPI.COMM_WORLD
# the runs' sizes: short enough for two ranks under DOLFINx 0.5, long enough for the rates to
# be those of the schemes (measured: the rates below are 1.9 to 2.1)
T_BOX, DTS_BOX = 0.08, (8e-3, 4e-3)
T_HUB, DTS_HUB, N_STRIP = 0.2, (1e-2, 5e-3), (6, 1)
T_RIGID, DTS_RIGID = 4.5, (0.09, 0.045)
N_PEND = (50, 100)








@pytest.mark.slow
def test_free_elastic_body_conserves_momenta():
    """1000 steps, no load: at each step's midpoint (where the velocities are those of the
    momenta p_m = (p0 + p1) / 2) the linear and angular momentum stay at their initial values to
    1e-10 (relative)."""
    model, body = free_box()
    # Newton's method solved to round-off (its default stops at 1e-9 of the unknowns, which
    # over 1000 steps adds up to 1e-10)
    r = model.integrate(t_end=1.0, dt=1e-3, v0=bending(body), formulation="hamiltonian",
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
    drift falls fourfold too. The second-order form's angular momentum drifts (at O(dt^2), by
    5e-6 to 2e-5 here); Hamilton's (at its midpoints and its steps' ends) stays to round-off."""
    diffs, drifts, dH = [], [], {"hamiltonian": [], "second-order": []}
    for dt in DTS_BOX:
        ends = {}
        for form in ("hamiltonian", "second-order"):
            model, body = free_box()
            r = model.integrate(t_end=T_BOX, dt=dt, v0=bending(body), formulation=form,
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
                # the step ends' velocities are those of the momenta carried: their momenta
                # (the monitors' own evaluation) keep the initial values too
                assert np.abs(r.momentum["linear"] - P0).max() <= 1e-12 * np.linalg.norm(P0)
                assert (np.abs(r.momentum["angular"] - H0).max()
                        <= 1e-10 * np.linalg.norm(H0))
            if form == "hamiltonian":
                E = r.midpoints["total"]
                drifts.append(np.abs(E - r.energy["total"][0]).max() / r.energy["total"][0])
        diffs.append(np.abs(ends["hamiltonian"] - ends["second-order"]).max())
    rate = np.log2(np.array(diffs[:-1]) / np.array(diffs[1:]))
    assert np.all(rate > 1.8) and diffs[-1] < 1e-4, (diffs, rate)
    rate = np.log2(np.array(drifts[:-1]) / np.array(drifts[1:]))
    assert np.all(rate > 1.8), (drifts, rate)
    assert max(dH["hamiltonian"]) < min(1e-10, 1e-5 * min(dH["second-order"])), dH


def _strip(frame, L=1.0, H=0.05, n=(8, 2), E=5e7, rho=1000.0):
    msh = dmesh.create_rectangle(COMM, [np.array([0.0, -H / 2]), np.array([L, H / 2])], list(n),
                                 dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=E, nu=0.3, density=rho, thickness=0.01)
    return mbs.Body(msh, mat, frame, degree=2, name="beam")


def _bending(body):
    """A bending velocity of a strip (its local y component 0.3 x^2)."""
    from dolfinx import fem
    v = fem.Function(body.V)
    v.interpolate(lambda x: np.vstack([0 * x[0], 0.3 * x[0] ** 2]))
    return v


def _hub_beam(v0: bool = False) -> tuple:
    """A beam clamped to a hub on a hinge, driven by a torque with a damper on the hub's rate
    (and with ``v0`` a bending velocity). The torque starts smoothly (2 sin^2(4 t)): one
    switched on at once excites the beam's highest modes, which no step here resolves, and the
    two forms' difference over a short run is then not yet the schemes' O(dt^2)."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
    body = _strip(hub, n=N_STRIP)
    model = mbs.Model([body])
    model.attach(body, lambda x: np.isclose(x[0], 0.0))
    model.apply_torque(hub, lambda t, s: 2.0 * math.sin(4.0 * t) ** 2 - 0.01 * s.rate)
    return model, _bending(body) if v0 else None


def test_hub_beam_converges_to_the_second_order_form():
    """A beam clamped to a hub on a hinge, driven by a torque with a damper on the hub's rate:
    the hub's angle and the beam's elastic energy in both forms agree to O(dt^2)."""
    diffs = []
    for dt in DTS_HUB:
        ends = {}
        for form in ("hamiltonian", "second-order"):
            model, _ = _hub_beam()
            r = model.integrate(t_end=T_HUB, dt=dt, formulation=form, progress=False)
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
    for dt in DTS_RIGID:
        R0 = mbs.frames.rotation_about((1.0, 1.0, 0.0), 0.3)
        sat = mbs.frames.Free(position=(1.0, 0.0, 0.0), orientation=R0,
                              velocity=(0.5, 0.2, 0.0), angular_velocity=R0 @ W0, name="sat")
        body = mbs.RigidBody(mass=3.0, inertia=np.diag(I_P), frame=sat, centre=(0, 0, 0),
                             name="body")
        r = mbs.Model([body]).integrate(t_end=T_RIGID, dt=dt, formulation="hamiltonian",
                                        options={"snes_stol": 1e-15}, progress=False)
        om = r.frames["sat"].omega
        errors.append(np.abs(om - euler_omega(I_P, W0, r.times)).max())
        H0 = r.momentum["angular"][0]
        assert np.abs(r.midpoints["angular"] - H0).max() <= 1e-11 * np.linalg.norm(H0)
        assert np.abs(r.momentum["angular"] - H0).max() <= 1e-11 * np.linalg.norm(H0)
    assert om[:, 1].min() < -0.5 and om[:, 1].max() > 1.5      # the flip
    order = math.log2(errors[0] / errors[1])
    assert order > 1.8, (errors, order)


def test_pendulum_period():
    """A physical pendulum released horizontal is back after the elliptic-integral period, the
    error falling at second order in dt."""
    M, D, JC, G = 2.0, 0.5, 0.01, 9.81
    T = pendulum_period(JC + M * D * D, M, G, D, math.pi / 2)
    errors = []
    for n in N_PEND:
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
    """What the form does not take is refused by name: a spectral radius other than the
    midpoint rule's, a computed frame other than a Hinge or a Free frame, a body whose coupling
    matrices are not its mass matrix node by node (the last two on a stand-in system: no model
    builds them today)."""
    from types import SimpleNamespace

    from dolfinx_mbs.systems.coupled_hamilton import HamiltonForm

    model, body = free_box()
    with pytest.raises(ValueError, match="spectral_radius"):
        model.integrate(t_end=0.01, dt=1e-3, formulation="hamiltonian", spectral_radius=0.8,
                        progress=False)
    other = type("Wheel", (), {"name": "wheel"})()
    with pytest.raises(ValueError, match=r"hamiltonian.*'wheel' is a Wheel"):
        HamiltonForm(SimpleNamespace(frames=[other], parts=[]))
    part = SimpleNamespace(kron=False, body=SimpleNamespace(name="blade"))
    with pytest.raises(ValueError, match=r"hamiltonian.*body 'blade'"):
        HamiltonForm(SimpleNamespace(frames=[], parts=[part]))


# -- springs and dampers ----------------------------------------------------------------------
def test_spring_damper_mass():
    """A mass hanging from the ground by a spring and damper, released at the spring's rest
    length (tests/models/springs): its height against the damped oscillator's, the error
    falling at second order in dt (1.91e-3 and 4.78e-4 of the static deflection at dt = 4 and
    2 ms, measured; BDF2's 7.5e-3 and 1.9e-3); the reported tension is k (L - L0) + c L' of the
    step ends' state."""
    errors = []
    for dt in (0.004, 0.002):
        r = springs.hanging_mass().integrate(t_end=0.4, dt=dt, formulation="hamiltonian",
                                     progress=False)
        y, yd = springs.hanging_height(r.times)
        h = r.frames["f"]
        assert np.abs(h.r_O[:, 0]).max() < 1e-12
        errors.append(np.abs(h.r_O[:, 1] - y).max() / (springs.M * springs.G / springs.K))
        want = springs.K * (-h.r_O[:, 1]) + springs.C * (-h.v_O[:, 1])
        assert np.abs(r.joints["s"].tension - want).max() < 1e-9 * springs.K
    order = math.log2(errors[0] / errors[1])
    assert order > 1.9 and errors[1] < 1e-3, (errors, order)


def test_damped_spring_at_an_elastic_node():
    """A stiff bar on a hinge, held across at its tip node by a spring and damper to the ground
    (tests/models/springs): its swing against the damped oscillator J_O th'' + c L^2 th' +
    k L^2 th = 0 (damping ratio 0.05) over a period, the error falling at second order in dt
    (9.4e-3 and 2.4e-3 of the amplitude at 40 and 80 steps, measured)."""
    J_O, LB = springs.J_O, springs.LB
    k, zeta, w = 100.0 * J_O / LB ** 2, 0.05, 10.0
    c = 2.0 * zeta * w * J_O / LB ** 2
    period = 2.0 * math.pi / w
    errors = []
    for n in (40, 80):
        model, _, bar = springs.tip_bar()
        model.spring(bar, (LB, 0.0), None, (LB, -0.5), stiffness=k, damping=c, name="tip")
        r = model.integrate(t_end=period, dt=period / n, formulation="hamiltonian",
                            progress=False)
        th, w_ = springs.tip_swing(r.times, k, c)
        errors.append(np.abs(r.frames["hub"].angle - th).max() / (springs.RATE0 / w_))
    order = math.log2(errors[0] / errors[1])
    assert order > 1.9 and errors[1] < 3e-3, (errors, order)


def _two_bodies() -> mbs.Model:
    """Two rigid bodies on planar Free frames, spinning and drifting, tied by a stretched spring
    and damper, no gravity."""
    f1 = mbs.frames.Free(position=(0.0, 0.0, 0), velocity=(0.3, 0.5, 0),
                         angular_velocity=(0, 0, 2.0), name="a", dim=2)
    f2 = mbs.frames.Free(position=(1.0, 0.2, 0), velocity=(-0.2, -0.1, 0),
                         angular_velocity=(0, 0, -1.0), name="b", dim=2)
    a = mbs.RigidBody(mass=1.0, inertia=0.02, frame=f1, centre=(0, 0, 0), name="A")
    b = mbs.RigidBody(mass=2.0, inertia=0.05, frame=f2, centre=(1.0, 0.2, 0), name="B")
    model = mbs.Model([a, b])
    model.spring(a, (0.1, 0.05), b, (0.9, 0.1), stiffness=200.0, damping=3.0, length=0.6,
                 name="s")
    return model


def test_spring_between_free_bodies_keeps_the_momenta():
    """Two free rigid bodies tied by a spring and damper: its forces are internal and central,
    so the linear and the angular momentum (global, about the origin; the monitors' own
    evaluation from the state) keep their initial values at the steps' midpoints and ends to
    round-off (3e-14 and 1e-14, measured), as the midpoint rule keeps linear and quadratic
    invariants, while the damper takes energy out. (Newton's method solved to round-off: at
    its default relative tolerance, 1e-8 of the residual, the linear momentum is kept to
    3e-11.)"""
    r = _two_bodies().integrate(t_end=0.5, dt=0.01, formulation="hamiltonian",
                                options={"snes_rtol": 1e-14, "snes_stol": 1e-14},
                                progress=False)
    P0, H0 = r.momentum["linear"][0], r.momentum["angular"][0]
    for P, H in ((r.midpoints["linear"], r.midpoints["angular"]),
                 (r.momentum["linear"], r.momentum["angular"])):
        dP = np.abs(P - P0).max() / np.linalg.norm(P0)
        dH = np.abs(H - H0).max() / np.linalg.norm(H0)
        assert dP < 1e-12 and dH < 1e-12, (dP, dH)
    E = r.energy["total"]
    assert E[-1] < 0.9 * E[0] and np.ptp(r.joints["s"].length) > 0.1


# -- Newton's method on Hamilton's rows ---------------------------------------------------------
def _case(name: str) -> tuple:
    """(model, initial elastic velocity, step) of the Newton tests' models."""
    if name == "free_box":
        model, body = free_box()
        return model, bending(body), 8e-3
    if name == "hub_beam":
        model, v = _hub_beam(v0=True)
        return model, v, 5e-3
    if name == "planar_free":
        # a strip on a free frame in the plane, with a rigid body on the same frame
        fr = mbs.frames.Free(position=(0.1, 0.2, 0.0),
                             orientation=mbs.frames.rotation_about((0, 0, 1), 0.3),
                             velocity=(0.3, -0.1, 0.0), angular_velocity=(0.0, 0.0, 2.0),
                             name="plane")
        body = _strip(fr, n=N_STRIP)
        tip = mbs.RigidBody(mass=0.5, inertia=np.eye(3) * 0.01, frame=fr, centre=(0.5, 0.1, 0),
                            name="tip")
        model = mbs.Model([body, tip])
        model.attach(body, lambda x: x[0] < 0.2)
        return model, _bending(body), 5e-3
    if name == "slider_crank":   # joints and a driven motor (tests/models/mechanisms)
        return slider_crank(), None, 0.01
    if name == "pinned":
        # a rigid bar on a planar free frame pinned to the hub-beam's tip node (a revolute
        # joint at a node: its mu border H on the elastic rates)
        hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), rate=0.7, name="hub")
        body = _strip(hub, n=N_STRIP)
        fr = mbs.frames.Free(position=(1.0, 0.025, 0), velocity=(0.0, 0.7, 0),
                             angular_velocity=(0, 0, -1.0), name="tip", dim=2)
        bar = mbs.RigidBody(mass=0.5, inertia=1e-2, frame=fr, centre=(1.15, 0.025, 0),
                            name="bar")
        model = mbs.Model([body, bar], gravity=(0, -9.81, 0))
        model.attach(body, lambda x: np.isclose(x[0], 0.0))
        model.revolute(body, bar, point=(1.0, 0.025), name="pin")
        return model, _bending(body), 5e-3
    if name == "spring_node":
        # a damped spring, stretched, from the tip node of a beam on a turning hinge to the
        # ground
        hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), rate=0.7, name="hub")
        body = _strip(hub, n=N_STRIP)
        model = mbs.Model([body], gravity=(0, -9.81, 0))
        model.attach(body, lambda x: np.isclose(x[0], 0.0))
        model.spring(body, (1.0, 0.025), None, (1.1, -0.5), stiffness=1e3, damping=10.0,
                     length=0.4, name="tip")
        return model, _bending(body), 5e-3
    if name == "spring_free_node":
        # the same from a node of a strip on a planar free frame
        fr = mbs.frames.Free(position=(0.1, 0.2, 0.0), velocity=(0.3, -0.1, 0.0),
                             angular_velocity=(0.0, 0.0, 2.0), name="plane")
        body = _strip(fr, n=N_STRIP)
        model = mbs.Model([body])
        model.attach(body, lambda x: x[0] < 0.2)
        model.spring(body, (1.1, 0.225), None, (1.2, -0.3), stiffness=1e3, damping=10.0,
                     length=0.4, name="tip")
        return model, _bending(body), 5e-3
    if name == "spring_prescribed":
        # the same from a node of the strip on a spinning (prescribed) frame: springs the only
        # unknowns beside the elastic ones
        body = _strip(mbs.frames.ConstantSpin(rate=3.0), n=N_STRIP)
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.spring(body, (1.0, 0.025), None, (1.2, 0.3), stiffness=1e3, damping=10.0,
                     length=0.2, name="tip")
        return model, _bending(body), 5e-3
    R0 = mbs.frames.rotation_about((1.0, 1.0, 0.0), 0.3)
    sat = mbs.frames.Free(position=(1.0, 0.0, 0.0), orientation=R0, velocity=(0.5, 0.2, 0.0),
                          angular_velocity=R0 @ W0, name="sat")
    body = mbs.RigidBody(mass=3.0, inertia=np.diag(I_P), frame=sat, centre=(0.1, 0.05, 0.0),
                         name="body")
    model = mbs.Model([body])
    if name == "spring_rigid":   # a damped spring, stretched, from a point of it to the ground
        model.spring(body, (1.3, 0.1, 0.05), None, (1.5, 1.0, 0.2), stiffness=400.0,
                     damping=5.0, length=0.8, name="s")
    return model, None, 0.02


def _second_order_jacobian(ham) -> None:
    """Make a :class:`HamiltonForm` step with the second-order form's Jacobian (the Newton
    step before it had its own)."""
    ham.correct = lambda *args: None
    ham.elastic_states = lambda: None
    ham.correct_rates = lambda *args: None


#: the central differences' step (relative, default 1e-5) and the joints' mu set to zero at
#: the checked point, per case: the Jacobian leaves out the curvature of the joints' position
#: rows weighted by mu, which vanishes with the drift (coupled_joints' module docstring; at
#: the random mu of the point 8e-7 of the step, measured), and the pinned bar's J^-1 r is
#: large along the bar's free rotation, so that a step of 1e-5 |y| along it leaves the other
#: unknowns a step of round-off's size (1.7e-6 measured, 2e-9 at 1e-2)
_CHECK = {"pinned": (1e-2, True)}


def _jacobian_error(model, v0, dt: float, exact: bool, step: float = 1e-5,
                    no_mu: bool = False) -> float:
    """|(F(y + e dx) - F(y - e dx)) / (2 e) - r| / |r| for dx = J^-1 r, r random: the Newton
    step's Jacobian J against central differences of the residual F of Hamilton's rows, at a
    point off the first step's start (y, with the TS's rates y' = (2 / dt) (y - y0)), e =
    ``step`` |y| / |dx|; with ``no_mu`` the joints' mu zero at y."""
    from petsc4py import PETSc

    from dolfinx_mbs.integrate.initial import reduced_initial
    from dolfinx_mbs.integrate.ts.coupled import CoupledProblem
    from dolfinx_mbs.petsc_options import SolverOptions

    system = model.coupled_system()
    ts = PETSc.TS().create(system.comm)
    prob = CoupledProblem(system, ts, SolverOptions("jac_", {"ts_adapt_type": "none"}, None),
                          "hamiltonian")
    try:
        q0 = system.create_reduced_vec()
        v0v = reduced_initial(system, v0, "v0") if v0 is not None else q0.duplicate()
        if v0 is None:
            v0v.zeroEntries()
        X0 = prob.initial_state(q0, v0v, system.initial_unknowns(q0, v0v, 0.0))
        prob.start(0.0, X0)
        ts.setTimeStep(dt)
        s = 2.0 / dt
        t = 0.5 * dt
        rng = np.random.default_rng(3 + COMM.rank)

        def residual(Y):
            Yd = Y.copy()
            Yd.axpy(-1.0, X0)
            Yd.scale(s)
            F = Y.duplicate()
            prob._function(ts, t, Y, Yd, F)
            return F, Yd

        X = X0.copy()
        X.array[:] += rng.uniform(-1e-3, 1e-3, X.getLocalSize()) * (np.abs(X.array) + 1e-2)
        npos = system.jointset.n_position
        a = X.getArray()      # on every rank (PETSc's object state)
        if no_mu and npos and prob.owner:
            a[-npos:] = 0.0
        F, Xd = residual(X)
        if not exact:
            _second_order_jacobian(prob.ham)
        prob._jacobian(ts, t, X, Xd, s, prob.J, prob.J)
        assert prob.linearize()
        r = F.duplicate()
        r.array[:] = rng.uniform(-1.0, 1.0, r.getLocalSize())
        dx = prob.solve_bordered(r).copy()
        h = step * X.norm() / dx.norm()
        Xp, Xm = X.copy(), X.copy()
        Xp.axpy(h, dx)
        Xm.axpy(-h, dx)
        Fp, Fm = residual(Xp)[0], residual(Xm)[0]
        Fp.axpy(-1.0, Fm)
        Fp.scale(0.5 / h)
        Fp.axpy(-1.0, r)
        return Fp.norm() / r.norm()
    finally:
        prob.destroy()
        ts.destroy()


@pytest.mark.parametrize("case", ["free_box", "hub_beam", "planar_free", "rigid",
                                  "slider_crank", "pinned", "spring_rigid", "spring_node",
                                  "spring_free_node", "spring_prescribed"])
def test_newton_step_is_exact(case):
    """The Newton step's Jacobian is the derivative of Hamilton's rows: against central
    differences of the residual in a random direction it is right to the differences' own
    error (1e-8 measured), where the second-order form's Jacobian (the step before) is off by
    1e-2 to 1 (the momenta's derivatives it lacks). The pinned bar: a revolute joint at an
    elastic node, whose mu moves the elastic rates (q' - v + g_q^T mu), which Hamilton's
    elastic rows see through their own column of the rates (2e-9; 3e-2 with the second-order
    form's column). Damped, stretched springs from a rigid body on a free frame, from an
    elastic node on a hinge, on a planar free frame and on a prescribed frame to the ground:
    9e-11, 3e-10, 1e-9, 3e-11 (with the node force's arm counted twice, as before, the nodes
    on computed frames were 0.17 and 0.75 off)."""
    model, v0, dt = _case(case)
    step, no_mu = _CHECK.get(case, (1e-5, False))
    exact = _jacobian_error(model, v0, dt, exact=True, step=step, no_mu=no_mu)
    before = _jacobian_error(model, v0, dt, exact=False, step=step, no_mu=no_mu)
    assert exact < 1e-6 and before > 1e-3, (exact, before)


def _newton_histories(records) -> list:
    """The residual norms of each step's Newton iterations, from the Newton step's log."""
    steps = []
    for rec in records:
        if rec.name == "dolfinx_mbs.integrate.ts.coupled" and rec.msg.startswith("Newton %d"):
            it, fnorm = rec.args[0], rec.args[1]
            if it == 0:
                steps.append([])
            steps[-1].append(fnorm)
    return steps


@pytest.mark.parametrize("case", ["free_box", "hub_beam"])
def test_newton_converges_quadratically(case, caplog):
    """Four steps to a residual of 1e-10 of its first value: Newton's method with the exact
    Jacobian takes at most three iterations a step, the residual's contraction squaring from
    one iteration to the next (down to round-off); with the second-order form's Jacobian (the
    step before) it takes more, contracting linearly; the two trajectories are the same to the
    solver's tolerance."""
    from dolfinx_mbs.systems import coupled_hamilton

    out = {}
    for exact in (True, False):
        model, v0, dt = _case(case)
        keep = coupled_hamilton.HamiltonForm.__init__
        if not exact:
            def init(self, system, keep=keep):
                keep(self, system)
                _second_order_jacobian(self)
            coupled_hamilton.HamiltonForm.__init__ = init
        caplog.clear()
        try:
            with caplog.at_level(logging.DEBUG, logger="dolfinx_mbs.integrate.ts.coupled"):
                r = model.integrate(t_end=4 * dt, dt=dt, v0=v0, formulation="hamiltonian",
                                    options={"snes_rtol": 1e-10}, progress=False)
        finally:
            coupled_hamilton.HamiltonForm.__init__ = keep
        hist = _newton_histories(caplog.records)
        assert len(hist) == 4 == r.steps
        name = next(iter(r.frames))
        h = r.frames[name]
        end = np.concatenate([np.ravel(getattr(h, k)[-1]) for k in ("R", "r_O", "omega",
                                                                     "angle", "rate")
                              if hasattr(h, k)] + [r.energy["elastic"][-1:]])
        out[exact] = (hist, end)
    hist, end = out[True]
    iters = [len(h) - 1 for h in hist]
    assert max(iters) <= 3, hist
    squared = 0
    for h in hist:
        # squaring: the second contraction at most ten times the first's square, where the
        # second residual is above the tolerance (below it, the hub-beam's 4e-12 of 0.85, it
        # is at round-off and tells nothing)
        if len(h) > 2 and h[2] > 1e-10 * h[0]:
            assert h[2] / h[1] <= 10.0 * (h[1] / h[0]) ** 2, h
            squared += 1
    assert squared or case == "hub_beam", hist
    before = [len(h) - 1 for h in out[False][0]]
    assert sum(before) > sum(iters), (iters, before)
    scale = np.abs(end).max()
    assert np.abs(end - out[False][1]).max() <= 1e-8 * scale, np.abs(end - out[False][1]).max()


def test_step_end_velocities_change_no_step(monkeypatch):
    """The step ends' velocities set to those of the momenta carried (instead of the TS's
    2 v_m - v0) change no step: the frame's motion and the elastic coordinates are those of a
    run that keeps the TS's velocities to round-off, while the step ends' angular momentum
    (the monitors' own evaluation from the state) keeps its initial value to round-off instead
    of drifting at O(dt^2)."""
    from dolfinx_mbs.systems import coupled_hamilton

    out = {}
    for project in (True, False):
        if not project:
            monkeypatch.setattr(coupled_hamilton.HamiltonForm, "velocities",
                                lambda self, t, q, v, f, p, pi, solve: f)
        model, body = free_box()
        r = model.integrate(t_end=0.048, dt=8e-3, v0=bending(body), formulation="hamiltonian",
                            progress=False)
        h = r.frames["sat"]
        H0 = r.momentum["angular"][0]
        out[project] = (np.concatenate([h.R[-1].ravel(), h.r_O[-1], r.energy["elastic"][-1:]]),
                        np.abs(r.momentum["angular"] - H0).max() / np.linalg.norm(H0))
    (end, drift), (end_ts, drift_ts) = out[True], out[False]
    assert np.abs(end - end_ts).max() <= 1e-12 * np.abs(end).max(), np.abs(end - end_ts).max()
    assert drift <= 1e-12 and drift_ts > 1e-7, (drift, drift_ts)
