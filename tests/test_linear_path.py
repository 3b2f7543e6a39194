"""The linear path (:mod:`dolfinx_mbs.integrate.sparse.alpha2`): TSALPHA2's steps on the sparse operators
of a constant frame state, without PETSc TS.

The reference is PETSc's own TSALPHA2 (``stepper="ts"``) on the same system: the probes and
all energies agree to 1e-9 of their largest value, with the node-block products (a spinning
3D bar clamped at its root, prestressed, under a tip traction and gravity, at spectral radii
1 and 0.5: the restart's initial acceleration matters at 0.5) and without them (the same
bar with stiffness-proportional damping, and clamped in two components only). ``"auto"``
takes the path above the dense path's size for the second-order form of a constant frame
state (Hamilton's form: ``test_hamilton_linear.py``), and the TS path where it does not apply
(the first-order form, reactions, frames changing in time); ``stepper="linear"`` asked where
it does not apply is an error that names why.
"""

import logging

import numpy as np
import pytest
from spinbar import TIP, agree
from spinbar import bar as spinning_bar

import dolfinx_mbs as mbs
from dolfinx_mbs.integrate.choice import DENSE_MAX


def bar(**kw):
    """The spinning bar (``spinbar.bar``) under its tip traction and gravity."""
    return spinning_bar(gravity=True, **kw)


CASES = {"node-blocks": (dict(), None), "node-blocks r=0.5": (dict(), 0.5),
         "rayleigh": (dict(damping=(2.0, 1e-5)), None),
         "two components": (dict(components=[2]), None)}


@pytest.mark.parametrize("case", list(CASES))
def test_linear_matches_ts(case):
    kw, radius = CASES[case]
    model = bar(**kw)
    run = dict(t_end=0.0305, dt=1e-3, probes=[TIP], progress=False, spectral_radius=radius)
    ts = model.integrate(stepper="ts", **run)
    lin = model.integrate(stepper="linear", **run)
    assert lin.stepper == "linear" and ts.stepper == "ts"
    assert lin.ts_type == "alpha2" and lin.steps == ts.steps == 31
    np.testing.assert_allclose(lin.times, ts.times, rtol=0, atol=1e-14)
    assert np.abs(ts.probes[-1]).max() > 1e-6  # it moved
    agree(ts, lin)
    # the bodies' displacement is the run's last state on both paths
    model.integrate(stepper="ts", **run)
    u_ts = model.bodies[0].u.x.array.copy()
    model.integrate(stepper="linear", **run)
    assert np.abs(model.bodies[0].u.x.array - u_ts).max() <= 1e-9 * np.abs(u_ts).max()


def test_linear_by_multigrid_matches_ts():
    """GMRES + GAMG (rigid-body modes as near null space) on both paths, solved to 1e-12:
    the K_s X recursion is replaced by a product per step (an iterative solve's residual would
    accumulate in it); the paths agree to the solver's tolerance."""
    model = bar()
    gamg = {"ksp_type": "gmres", "pc_type": "gamg", "ksp_rtol": 1e-12}
    run = dict(t_end=0.0305, dt=1e-3, probes=[TIP], progress=False, options=gamg)
    ts = model.integrate(stepper="ts", **run)
    lin = model.integrate(**run)
    assert lin.stepper == "linear" and ts.stepper == "ts"
    agree(ts, lin, tol=1e-8)
    direct = model.integrate(stepper="ts", probes=[TIP], t_end=0.0305, dt=1e-3,
                             progress=False)
    agree(direct, lin, tol=1e-8)


def test_auto_takes_the_linear_path(caplog):
    model = bar()
    assert model.system().n_reduced > DENSE_MAX
    run = dict(t_end=0.004, dt=1e-3, progress=False)
    with caplog.at_level(logging.INFO, logger="dolfinx_mbs"):
        r = model.integrate(**run)
    assert r.stepper == "linear"
    assert "linear path" in caplog.text
    assert model.integrate(reactions=True, **run).stepper == "ts"
    assert model.integrate(formulation="first-order", **run).stepper == "ts"
    assert model.integrate(options={"ts_adapt_type": "none"}, **run).stepper == "ts"
    # the step solver's options alone: the linear path reads them
    assert model.integrate(options={"ksp_type": "gmres"}, **run).stepper == "linear"
    spin_up = bar(frame=mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=15.0, ramp_time=1.0),
                  prestress=False)
    assert spin_up.integrate(**run).stepper == "ts"


@pytest.mark.parametrize("what", ["first-order", "reactions", "spin-up"])
def test_linear_refuses_what_it_cannot_step(what):
    model = bar(prestress=what != "spin-up",
                frame=mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=15.0, ramp_time=1.0)
                if what == "spin-up" else None)
    kw = {"first-order": dict(formulation="first-order"), "reactions": dict(reactions=True),
          "spin-up": {}}[what]
    with pytest.raises(ValueError, match="stepper='linear'"):
        model.integrate(t_end=0.002, dt=1e-3, progress=False, stepper="linear", **kw)


def test_one_factorization_over_a_long_run(caplog):
    """The differences of a long run's output times scatter by round-off (here over more than
    one 12-digit value): the step matrix is factorized once for the run all the same (twice
    with the restart's half steps), and the run equals the TS path."""
    model = bar(prestress=False)
    run = dict(t_end=0.4, dt=2e-4, probes=[TIP], progress=False)
    with caplog.at_level(logging.INFO, logger="dolfinx_mbs"):
        lin = model.integrate(stepper="linear", **run)
    sizes = {f"{h:.12e}" for h in np.diff(lin.times)}
    assert len(sizes) > 1  # the grid's round-off alone
    said = [r.getMessage() for r in caplog.records if "factorizations" in r.getMessage()]
    assert said and "linear path: 2 factorizations" in said[-1], said
    ts = model.integrate(stepper="ts", **run)
    agree(ts, lin)
