"""A rotor on plain journal bearings in time (``Model.integrate`` with fluid films): the
film's nonlinear force at the journals' motion. Below the oil-whirl threshold the orbit decays
to the film's static equilibrium; the energy balance closes with the film's work; 1 and 2
ranks give the same run; above the threshold (slow) the orbit settles on the oil-whip limit
cycle."""

import os
import subprocess
import sys

import numpy as np
import pytest

from dolfinx_mbs import compat
from tests.models import HERE as MODELS
from tests.models import ROOT
from tests.models.journal_rotor import flexible_rotor, rigid_support_frequency, whirl_frequency
from tests.models.journal_run_cases import LOAD, SPEED, rotor, short_run, translated

C = 1e-4


def test_below_threshold_decays_to_equilibrium():
    """At 300 rad/s (the threshold lies near 1150 rad/s), started 0.05 c off the equilibrium,
    both journals end within 1e-6 c of the film's static equilibrium under the load."""
    model, body, jb = rotor()
    eq = jb.equilibrium((0.0, -LOAD), SPEED)
    u0 = translated(body, eq.position + np.array([0.05 * C, 0.0]))
    r = model.integrate(0.14, 2e-3, u0=[u0], spectral_radius=0.8, progress=False)
    assert r.stepper == "ts" and set(r.journals) == {"journal 0", "journal 1"}
    for h in r.journals.values():
        d = np.linalg.norm(h["position"] - eq.position, axis=1) / C
        assert d[0] == pytest.approx(0.05, rel=1e-6)
        assert d[-1] < 1e-6, d[-1]
        assert np.all(h["eccentricity"] < 0.5)
        assert np.linalg.norm(h["force"][-1] + (0.0, -LOAD)) < 1e-3 * LOAD


def test_energy_balance_with_the_film():
    """Dropped from the concentric position (the midpoint rule: spectral radius 1), the
    kinetic and elastic energy change by the loads' work plus the films' (the film's force
    and the bearing's static load on the journals): to 1e-8 of the films' work."""
    r = short_run()
    e = r.energy
    films = sum(h["work"] for h in r.journals.values())
    change = e["kinetic"] + e["elastic"] - e["kinetic"][0] - e["elastic"][0]
    assert np.abs(change - e["work"] - films).max() < 1e-8 * np.abs(films).max()
    assert e["kinetic"][-1] > 0.0


def test_refused_paths():
    """A film's force is stepped by the second-order form only: others are refused, named."""
    model, _, _ = rotor()
    with pytest.raises(ValueError, match="fluid-film bearings"):
        model.integrate(1e-3, 1e-4, formulation="first-order", progress=False)
    with pytest.raises(ValueError, match="fluid-film bearings"):
        model.integrate(1e-3, 1e-4, stepper="dense", progress=False)


@pytest.mark.serial
def test_one_and_two_ranks_equal(tmp_path):
    """The same run on 2 ranks (a process of its own) gives the journals' positions of this
    1-rank run to 1e-10 of the clearance."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    stem = tmp_path / "two"
    cmd = compat.mpiexec_command(2) + [sys.executable, str(MODELS / "journal_run_cases.py"),
                                       str(stem)]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    r = short_run()
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    two = np.load(f"{stem}.npz")
    assert np.allclose(two["times"], r.times)
    for i, h in enumerate(r.journals.values()):
        assert np.abs(two[f"x{i}"] - h["position"]).max() < 1e-10 * C


@pytest.mark.slow
def test_oil_whip_limit_cycle():
    """Above the onset (the flexible rotor of demos/journal_bearing.py at 1000 rad/s, its
    onset ~600 rad/s), started at the film's equilibrium nudged 0.02 c: the orbit grows to a
    bounded limit cycle (eccentricity < 1, settled: its range over the last 0.3 s within a
    quarter of its top) whirling near the first critical speed, not at half the spin: above
    the Campbell table's unstable mode at that speed (the films' coefficients at their
    equilibrium, eccentricity 0.1; 2 % allowed for the cycle's not being a sine) and below the
    shaft's frequency on rigid supports (the films far from their centre are much stiffer)."""
    model, body, jb = flexible_rotor(1000.0)
    tab = model.campbell([1000.0], n=4, n_extra=2)
    unstable = np.argmin(np.where(tab.stationary[0] < 1000.0, tab.log_dec[0], np.inf))
    critical = tab.stationary[0, unstable]
    eq = jb.equilibrium((0.0, -500.0), 1000.0)
    u0 = translated(body, eq.position + np.array([0.02 * 6e-5, 0.0]))
    r = model.integrate(1.0, 1e-3, u0=[u0], spectral_radius=0.9, progress=False)
    late = r.times > 0.7
    for h in r.journals.values():
        e = h["eccentricity"]
        assert e.max() < 1.0 and e[late].min() > 3 * eq.eccentricity
        assert np.ptp(e[late]) < 0.25 * e[late].max()
        w = whirl_frequency(r.times[late], h["position"][late, 0])
        assert 0.98 * critical < w < rigid_support_frequency() and w < 0.45 * 1000.0, \
            (w, critical)


def test_journal_at_the_wall_is_an_error():
    """A run whose journal is past its bearing's wall (eccentricity ratio 1.2 at the start)
    ends with an error naming the bearing, on every rank."""
    model, body, jb = rotor()
    u0 = translated(body, (0.0, -1.2 * C))
    with pytest.raises(ValueError, match="bearing 'journal 0'.*touches the bearing's wall"):
        model.integrate(2e-3, 1e-3, u0=[u0], progress=False)
