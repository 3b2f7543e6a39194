"""A rotor on plain journal bearings (``Model.bearing(..., journal=film, load=...)``): the
film's coefficients at every speed of a Campbell sweep, oil whirl's onset against a separate
4-dof model built from the same coefficients, the whirl frequency ratio near 1/2."""

import numpy as np
import pytest

from tests.models.journal_rotor import (
    film,
    four_dof_eigenvalues,
    four_dof_threshold,
    rigid_properties,
    rigid_rotor,
)


def _whirl_log_dec(table):
    """The least log dec of the modes below the speed (the whirl modes; not the stiff
    shaft's bending, some 10^5 times higher, nearly undamped), and its column."""
    ld = np.where(table.stationary < np.abs(table.speeds)[:, None], table.log_dec, np.inf)
    return ld.min(axis=1), ld.argmin(axis=1)


def _threshold(model, speeds, table):
    """The speed where the least log dec of the whirl modes crosses zero: bracketed by the
    sweep, then found by regula falsi (Illinois) on single-speed sweeps to 1e-5."""
    ld = _whirl_log_dec(table)[0]
    i = int(np.flatnonzero(np.sign(ld[:-1]) != np.sign(ld[1:]))[0])
    a, b, fa, fb = speeds[i], speeds[i + 1], ld[i], ld[i + 1]
    side = 0
    for _ in range(8):
        w = (a * fb - b * fa) / (fb - fa)
        t = model.campbell([w], n=4, n_extra=0)
        fw = _whirl_log_dec(t)[0][0]
        if abs(b - a) < 1e-5 * w or abs(fw) < 1e-9:
            break
        if np.sign(fw) == np.sign(fa):
            a, fa = w, fw
            fb = fb / 2 if side == -1 else fb
            side = -1
        else:
            b, fb = w, fw
            fa = fa / 2 if side == 1 else fa
            side = 1
    j = int(_whirl_log_dec(t)[1][0])
    return w, t.stationary[0, j], int(t.whirl_stationary[0, j]), (speeds[i], speeds[i + 1])


def test_oil_whirl_threshold_against_four_dof_model():
    """The Campbell sweep takes the film's coefficients at each speed: its eigenvalues are
    the 4-dof model's (the rotor is rigid: 1e-3), and the speed where a log dec passes
    through zero is the 4-dof model's threshold to 2e-3; the unstable mode whirls forward
    at about half the speed (0.4 ... 0.55 at this load, eps ~ 0.2)."""
    jb = film()
    model, body, bearings, facets = rigid_rotor(jb, load=2000.0)
    props = rigid_properties(body, facets)
    speeds = np.array([500.0, 800.0, 1100.0, 1400.0])
    table = model.campbell(speeds, n=4, n_extra=0)
    for i, w in enumerate(speeds):
        K, C = jb.coefficients((0.0, -2000.0), w)
        lam = four_dof_eigenvalues(props, K, C, w)
        # the whirl modes: a mode damped to |Re| > |Im| (its damping force C |lambda| ~ 1e-3 of
        # the shaft's stiffness) sees the shaft's flexibility, and an overdamped one is real
        for mu in lam[(lam.imag > 0) & (np.abs(lam.real) < lam.imag)]:
            assert np.abs(table.eigenvalues[i] - mu).min() < 1e-3 * abs(mu), (w, mu, lam)
    w_fe, freq, whirl, (lo, hi) = _threshold(model, speeds, table)
    w_ref, freq_ref = four_dof_threshold(jb, props, 2000.0, lo, hi)
    assert abs(w_fe / w_ref - 1) < 2e-3, (w_fe, w_ref)
    assert whirl == 1 and 0.4 < freq / w_fe < 0.55
    assert freq == pytest.approx(freq_ref, rel=2e-3)


def test_whirl_ratio_at_low_load():
    """A light rotor (200 N per bearing, eps < 0.05 at the onset): the unstable mode's
    frequency is half the speed to 2 %."""
    jb = film()
    light = dict(mass=400.0 / 9.81, polar=0.82, diametral=0.43)
    model, body, *_ = rigid_rotor(jb, load=200.0, disk=light)
    speeds = np.array([400.0, 700.0, 1000.0, 1300.0])
    table = model.campbell(speeds, n=4, n_extra=0)
    w, freq, whirl, _ = _threshold(model, speeds, table)
    assert jb.equilibrium((0.0, -200.0), w).eccentricity < 0.05
    assert whirl == 1 and abs(freq / w - 0.5) < 1e-2
