"""The steppers' conformance suite: one test per duty, parametrized over the steppers.

What every stepper that steps in Python (:class:`dolfinx_mbs.integrate.stepper.Stepper`) must do:

* It matches TS: PETSc's own scheme (``stepper="ts"``) on the same system is the reference.
  The dense path (:mod:`dolfinx_mbs.integrate.dense.stepper`) on seed 003's steadily spinning
  rod and on a damped, prestressed beam spun up about a skewed axis (operators changing at
  every step), the three formulations, with a last step shorter than dt: the same times and
  callback times, probes to 1e-9 of the largest, energies and reactions to 1e-8. The linear
  path's TSALPHA2 (:mod:`dolfinx_mbs.integrate.sparse.alpha2`) on the spinning 3D bar under
  its tip traction and gravity, with the node-block products at spectral radii 1 and 0.5
  (the restart's initial acceleration matters at 0.5) and without them (Rayleigh damping; a
  clamp of one component), and its implicit midpoint on Hamilton's form
  (:mod:`dolfinx_mbs.integrate.sparse.midpoint`; with gravity, whose prestress turns in the
  frame, with mass-proportional and Rayleigh damping, a clamp of one component): times to
  1e-14, probes and every energy to 1e-9 of their largest value. On every path the bodies'
  displacement after the run is the run's last state (1e-9 of the largest).
* ``"auto"`` takes the path where it should: the dense path for a small linear system
  (PETSc options given: TS), the linear path above the dense path's size for the
  second-order and Hamilton forms of a constant frame state (the step solver's options alone
  too), TS for reactions, the first-order form, other PETSc options or frames changing in
  time.
* Every backend's stepper (TS, sparse alpha2 and midpoint, dense, exact, batched dense) is a
  :class:`~dolfinx_mbs.integrate.stepper.Stepper` (the protocol's attributes and methods) and
  says itself that it applies to the run it was chosen for.
* It refuses what it cannot step, with an error naming why, on every rank: multipliers on the
  dense path, loads outside the exact path's span or a frame state changing in time there,
  an unknown stepper, and the linear path's first-order form, reactions and spin-up.
"""

import logging

import numpy as np
import pytest

import dolfinx_mbs as mbs
from dolfinx_mbs.integrate.choice import DENSE_MAX, choose, make
from dolfinx_mbs.integrate.dense.exact import LoadBasis
from dolfinx_mbs.integrate.stepper import RunSpec, Stepper
from tests.models.denseruns import TIP as ROD_TIP
from tests.models.denseruns import seed_rod, spun_up_beam
from tests.models.spinbar import TIP, agree, bar

H = "hamiltonian"
FORMS = ("second-order", "first-order", "hamiltonian")


def _gravity_bar(**kw):
    """The spinning bar (``spinbar.bar``) under its tip traction and gravity."""
    return bar(gravity=True, **kw)


# --- it matches TS ---------------------------------------------------------------------------

def _dense_case(case, formulation):
    rod = case == "steady-rod"
    return dict(
        stepper="dense", model=seed_rod if rod else spun_up_beam,
        u0=(lambda model: model.solve_static()) if rod else None,
        run=dict(t_end=0.0105, dt=1e-3 if rod else 5e-4, formulation=formulation,
                 probes=[ROD_TIP, (0.5, 0.0, 0.0)], reactions=True, progress=False),
        probes_tol=1e-9, energy_tol=1e-8, reactions_tol=1e-8, exact_times=True,
        moved=lambda ts: np.abs(ts.probes - ts.probes[0]).max()
        > 1e-3 * np.abs(ts.probes).max(),
        short_last=True)


def _alpha2_case(kw, radius):
    return dict(
        stepper="linear", model=lambda: _gravity_bar(**kw), ts_type="alpha2", steps=31,
        run=dict(t_end=0.0305, dt=1e-3, probes=[TIP], progress=False,
                 spectral_radius=radius),
        probes_tol=1e-9, energy_tol=1e-9, moved=lambda ts: np.abs(ts.probes[-1]).max() > 1e-6)


def _midpoint_case(kw, blocks):
    return dict(
        stepper="linear", model=lambda: bar(**kw), ts_type="theta", steps=41, blocks=blocks,
        run=dict(t_end=0.0405, dt=1e-3, probes=[TIP], progress=False, formulation=H),
        probes_tol=1e-9, energy_tol=1e-9, moved=lambda ts: np.abs(ts.probes[-1]).max() > 1e-6)


MATCH = {f"dense-{case}-{f}": _dense_case(case, f)
         for case in ("steady-rod", "spun-up-beam") for f in FORMS}
MATCH.update({
    "alpha2-node-blocks": _alpha2_case({}, None),
    "alpha2-node-blocks-r=0.5": _alpha2_case({}, 0.5),
    "alpha2-rayleigh": _alpha2_case(dict(damping=(2.0, 1e-5)), None),
    "alpha2-two-components": _alpha2_case(dict(components=[2]), None),
    "midpoint-node-blocks": _midpoint_case({}, True),
    "midpoint-node-blocks-gravity": _midpoint_case(dict(gravity=True), True),
    "midpoint-mass-damping": _midpoint_case(dict(damping=(2.0, 0.0)), True),
    "midpoint-rayleigh": _midpoint_case(dict(damping=(2.0, 1e-5)), False),
    "midpoint-two-components": _midpoint_case(dict(components=[2]), False),
})


@pytest.mark.parametrize("case", list(MATCH))
def test_matches_ts(case, caplog):
    """The stepper's run equals PETSc TS's on the same system (see the module docstring)."""
    c = MATCH[case]
    res, calls, u_end = {}, {}, {}
    # one model for both runs: its bodies' u compared entry by entry (one partition)
    model = c["model"]()
    u0 = [f.copy() for f in c["u0"](model)] if c.get("u0") else None
    for stepper in ("ts", c["stepper"]):
        seen = calls[stepper] = []
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="dolfinx_mbs"):
            res[stepper] = model.integrate(stepper=stepper, u0=u0,
                                           callback=lambda t, u, v: seen.append(t),
                                           **c["run"])
        u_end[stepper] = model.bodies[0].u.x.array.copy()
    ts, other = res["ts"], res[c["stepper"]]
    assert (ts.stepper, other.stepper) == ("ts", c["stepper"])
    assert other.formulation == ts.formulation
    assert other.ts_type == ts.ts_type == c.get("ts_type", ts.ts_type)
    assert other.steps == ts.steps == c.get("steps", ts.steps)
    if c.get("exact_times"):
        assert np.array_equal(other.times, ts.times), (other.times, ts.times)
    else:
        np.testing.assert_allclose(other.times, ts.times, rtol=0, atol=1e-14)
    assert calls[c["stepper"]] == calls["ts"]
    if c.get("short_last"):
        assert abs(ts.times[-1] - 0.0105) < 1e-15 and ts.times[-1] - ts.times[-2] < 0.99e-3
    assert c["moved"](ts)  # it moved
    if "blocks" in c:  # the node-block products where the constraints fix whole nodes
        assert "hamiltonian (linear midpoint)" in caplog.text
        assert ("node-block mass products" in caplog.text) == c["blocks"]
    if c["probes_tol"] == c["energy_tol"]:
        agree(ts, other, c["probes_tol"])
    else:
        assert np.abs(other.probes - ts.probes).max() < c["probes_tol"] * np.abs(ts.probes).max()
        for k, e in ts.energy.items():
            assert np.abs(other.energy[k] - e).max() <= c["energy_tol"] * np.abs(e).max() \
                + 1e-300, k
    if "reactions_tol" in c:
        assert len(ts.reactions) == len(other.reactions) > 0
        for f, g in zip(ts.reactions.values(), other.reactions.values()):
            assert np.abs(g - f).max() < c["reactions_tol"] * np.abs(f).max()
    # the bodies' displacement is the run's last state on both paths
    u_ts = u_end["ts"]
    assert np.abs(u_end[c["stepper"]] - u_ts).max() <= 1e-9 * np.abs(u_ts).max()


# --- "auto" takes the path -----------------------------------------------------------------------

AUTO = {
    "dense": dict(model=lambda: seed_rod(n=3), run=dict(t_end=2e-3, dt=1e-3),
                  path="dense", ts_type="alpha2",
                  others=[(dict(options={"ts_type": "alpha2"}), "ts")]),
    "linear-alpha2": dict(
        model=_gravity_bar, run=dict(t_end=0.004, dt=1e-3), path="linear", larger=True,
        said="linear path",
        others=[(dict(reactions=True), "ts"), (dict(formulation="first-order"), "ts"),
                (dict(options={"ts_adapt_type": "none"}), "ts"),
                # the step solver's options alone: the linear path reads them
                (dict(options={"ksp_type": "gmres"}), "linear")],
        spin_up=lambda: _gravity_bar(frame=mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=15.0,
                                                             ramp_time=1.0), prestress=False)),
    "linear-midpoint": dict(
        model=bar, run=dict(t_end=0.004, dt=1e-3, formulation=H), path="linear",
        larger=True,
        others=[(dict(reactions=True), "ts"), (dict(options={"ts_adapt_type": "none"}), "ts"),
                (dict(options={"ksp_type": "gmres"}), "linear")]),
}


@pytest.mark.parametrize("stepper", list(AUTO))
def test_auto_takes_the_path(stepper, caplog):
    """``stepper="auto"`` takes this path where it applies, TS where it must."""
    c = AUTO[stepper]
    model = c["model"]()
    run = dict(progress=False, **c["run"])
    if c.get("larger"):
        assert model.system(run.get("formulation", "second-order")).n_reduced > DENSE_MAX
    with caplog.at_level(logging.INFO, logger="dolfinx_mbs"):
        r = model.integrate(**run)
    assert r.stepper == c["path"]
    if "ts_type" in c:
        assert r.ts_type == c["ts_type"]
    if "said" in c:
        assert c["said"] in caplog.text
    for kw, path in c["others"]:
        assert model.integrate(**dict(run, **kw)).stepper == path, kw
    if "spin_up" in c:
        assert c["spin_up"]().integrate(**run).stepper == "ts"


# --- it refuses what it cannot step ------------------------------------------------------------

def _spin_up_bar(gravity=False):
    return bar(prestress=False, gravity=gravity,
               frame=mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=15.0, ramp_time=1.0))


LINEAR_RUN = dict(t_end=0.002, dt=1e-3, progress=False, stepper="linear")
REFUSALS = {
    "unknown stepper": (lambda: seed_rod(n=3), dict(t_end=1e-3, dt=1e-3, stepper="fast",
                                                   progress=False),
                        "stepper must be one of", None),
    "exact: loads outside the span": (lambda: seed_rod(n=3),
                                      dict(t_end=1e-2, dt=1e-3, stepper="exact",
                                           progress=False), "load_frequencies", None),
    "exact: bad frequencies": (lambda: seed_rod(n=3),
                               dict(t_end=1e-2, dt=1e-3, stepper="exact",
                                    load_frequencies=(-1.0,)),
                               "load_frequencies must be positive", None),
    "dense: multipliers": (lambda: seed_rod(n=3),
                           dict(t_end=1e-3, dt=1e-3, stepper="dense",
                                constraints="multipliers", progress=False),
                           "Lagrange multipliers", None),
    "exact: spin-up": (spun_up_beam, dict(t_end=1e-3, dt=1e-3, stepper="exact",
                                          progress=False), "constant in time", None),
    "alpha2: first-order": (_gravity_bar, dict(LINEAR_RUN, formulation="first-order"),
                            "stepper='linear'", None),
    "alpha2: reactions": (_gravity_bar, dict(LINEAR_RUN, reactions=True), "stepper='linear'",
                          None),
    "alpha2: spin-up": (lambda: _spin_up_bar(gravity=True), LINEAR_RUN, "stepper='linear'",
                        None),
    "midpoint: first-order": (bar, dict(LINEAR_RUN, formulation="first-order"),
                              "stepper='linear'", "first-order form"),
    "midpoint: reactions": (bar, dict(LINEAR_RUN, formulation=H, reactions=True),
                            "stepper='linear'", "reactions"),
    "midpoint: spin-up": (_spin_up_bar, dict(LINEAR_RUN, formulation=H), "stepper='linear'",
                          "changing in time"),
}


@pytest.mark.parametrize("what", list(REFUSALS))
def test_refuses_what_it_cannot_step(what):
    """A stepper asked for a run it cannot step raises an error naming why (every rank)."""
    make, run, match, words = REFUSALS[what]
    model = make()
    with pytest.raises(ValueError, match=match) as e:
        model.integrate(**run)
    if words is not None:
        assert words in str(e.value)


# --- every backend implements the protocol -----------------------------------------------------

PROTOCOL = {  # path: (model, formulation, the stepper's class, run arguments)
    "ts": (lambda: seed_rod(n=3), "first-order", "TSStepper", {}),
    "dense": (lambda: seed_rod(n=3), "second-order", "DenseStepper", {}),
    "exact": (lambda: seed_rod(n=3), "hamiltonian", "ExactStepper",
              dict(load_basis=LoadBasis(0, (200.0,)))),
    "batch": (spun_up_beam, "first-order", "BatchStepper", {}),
    "linear alpha2": (bar, "second-order", "SparseAlpha2", {}),
    "linear midpoint": (bar, H, "SparseMidpoint", {}),
}


@pytest.mark.parametrize("which", list(PROTOCOL))
def test_every_backend_implements_the_protocol(which):
    """The stepper that ``integrate`` would make is a Stepper and applies to its run."""
    make_model, formulation, cls, kw = PROTOCOL[which]
    model = make_model()  # the system's owner: kept for the stepper's life
    system = model.system(formulation)
    run = RunSpec(formulation=formulation, t0=0.0, t_end=2e-3, dt=1e-3, **kw)
    path = which.split()[0] if which != "batch" else "dense"
    assert choose(system, run, path) == path
    stepper = make(system, run, path)
    try:
        assert isinstance(stepper, Stepper)
        assert type(stepper).__name__ == cls
        assert stepper.path == path and stepper.formulation == formulation
        assert type(stepper).applies(system, run) is None
    finally:
        stepper.destroy()
