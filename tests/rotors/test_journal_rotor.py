"""A rotor on plain journal bearings (``Model.bearing(..., journal=film, load=...)``): the
film's coefficients at every speed of a Campbell sweep, oil whirl's onset against a separate
4-dof model built from the same coefficients, the whirl frequency ratio near 1/2."""

import numpy as np
import pytest

import dolfinx_mbs as mbs
from tests.models.journal_rotor import (
    film,
    four_dof_eigenvalues,
    four_dof_matrices,
    four_dof_threshold,
    rigid_properties,
    rigid_rotor,
    whirl_onset,
)


def test_oil_whirl_threshold_against_four_dof_model():
    """The Campbell sweep takes the film's coefficients at each speed: its eigenvalues are
    the 4-dof model's (the rotor is rigid: 1e-3; P2 on the curved cells, where P1 cannot
    hold the rigid tilts and the stiff shaft's strain in them lost the damped modes), and
    the speed where a log dec passes through zero is the 4-dof model's threshold to 2e-3;
    the unstable mode whirls forward at about half the speed (0.4 ... 0.55 at this load,
    eps ~ 0.2)."""
    jb = film()
    model, body, bearings, facets = rigid_rotor(jb, load=2000.0)
    props = rigid_properties(body, facets)
    speeds = np.array([500.0, 800.0, 1100.0, 1400.0])
    # tol 1e-9: the shaft's own modes, 1e5 times higher, reach backward errors of 1e-7 on
    # this pencil (stiffness 1000 times steel's beside the films'), above 1e3 x 1e-10
    table = model.campbell(speeds, n=4, n_extra=0, tol=1e-9)
    for i, w in enumerate(speeds):
        K, C = jb.coefficients((0.0, -2000.0), w)
        lam = four_dof_eigenvalues(props, K, C, w)
        # every complex pair: damping ratios to 0.7 within 1e-3 (measured 1.2e-4 at most);
        # the most damped (ratio 0.9 to 0.99, |lambda| to 4600 1/s) within 1e-2 (measured
        # 4.8e-3): their damping forces C |lambda| reach some 1e-3 of the "rigid" shaft's
        # bending stiffness, which the 4-dof model takes as infinite
        pairs = lam[lam.imag > 0]
        assert len(pairs) >= 2
        for mu in pairs:
            tol = 1e-3 if -mu.real < 0.7 * abs(mu) else 1e-2
            assert np.abs(table.eigenvalues[i] - mu).min() < tol * abs(mu), (w, mu, lam)
    w_fe, freq, whirl, (lo, hi) = whirl_onset(model, speeds, table)
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
    w, freq, whirl, _ = whirl_onset(model, speeds, table)
    assert jb.equilibrium((0.0, -200.0), w).eccentricity < 0.05
    assert whirl == 1 and abs(freq / w - 0.5) < 1e-2


def test_unbalance_response_against_four_dof_model():
    """The unbalance response takes the film's coefficients at every speed too: the disk's
    synchronous response to an unbalance on it is the 4-dof model's, Z q = Omega^2 m_e
    (1, -i, 0, 0), Z = K - Omega^2 M + i Omega (C + Omega G), to 1e-3."""
    jb = film()
    model, body, _, facets = rigid_rotor(jb, load=2000.0)
    props = rigid_properties(body, facets)
    disk = next(a for a in body.attachments if isinstance(a, mbs.bodies.Disk))
    speeds = np.array([500.0, 900.0, 1100.0])
    resp = model.unbalance_response(speeds, unbalances=[(disk, 1e-3, 0.0)], probes=[disk])
    for i, w in enumerate(speeds):
        K, C = jb.coefficients((0.0, -2000.0), w)
        Kq, Cq, M, G = four_dof_matrices(props, K, C)
        Z = Kq - w * w * M + 1j * w * (Cq + w * G)
        q = np.linalg.solve(Z, w * w * 1e-3 * np.array([1.0, -1j, 0.0, 0.0]))
        assert np.abs(resp.response[i, 0] - q[:2]).max() < 1e-3 * np.abs(q[:2]).max(), w


def test_bad_bearing_input_names_it():
    """A film without its load, beside coefficients, a NaN load, an analysis at rest and a
    run at a speed the film cannot carry its load at: errors naming what, on every rank."""
    jb = film(name="oil")
    model, body, _, facets = rigid_rotor(jb, load=2000.0)
    with pytest.raises(TypeError, match="needs load="):
        model.bearing(body, facets=(facets, 1), journal=jb)
    with pytest.raises(TypeError, match="gives the eight coefficients"):
        model.bearing(body, facets=(facets, 1), journal=jb, load=(0, -1.0), kxx=1e6)
    with pytest.raises(ValueError, match="bearing load"):
        model.bearing(body, facets=(facets, 1), journal=jb, load=(0.0, float("nan")))
    with pytest.raises(TypeError, match="journal= must be a fluid film"):
        model.bearing(body, facets=(facets, 1), journal=object(), load=(0.0, -1.0))
    with pytest.raises(ValueError, match="asked at speed 0"):
        model.campbell([0.0, 100.0], n=2, n_extra=0)
    slow, *_ = rigid_rotor(jb, load=2000.0, rate=2.0)
    with pytest.raises(ValueError, match="journal bearing 'oil' cannot carry the load"):
        slow.integrate(1e-3, 1e-3, progress=False)


def test_a_film_tabulated_over_speed_is_the_film_at_its_speeds():
    """``speeds=`` with a film: the bearing holds the film's eight coefficients at those
    speeds (each the film's own ``coefficients(load, speed)``, solved anew by a second film),
    linearly interpolated in between, and a replaced bearing leaves it so."""
    jb, again = film(), film()
    model, body, _, facets = rigid_rotor(jb, load=2000.0)
    speeds = [300.0, 600.0]
    b = model.bearing(body, facets=(facets, 1), journal=jb, load=(0.0, -2000.0), speeds=speeds)
    assert b.journal is jb and b.coefficients.speeds.tolist() == speeds
    KC = [again.coefficients((0.0, -2000.0), w) for w in speeds]
    for i, w in enumerate(speeds):
        K, C = b.matrices(w)
        assert np.allclose(K[:2, :2], KC[i][0], rtol=1e-8, atol=0.0)
        assert np.allclose(C[:2, :2], KC[i][1], rtol=1e-8, atol=0.0)
    mid = 0.5 * (KC[0][0][0, 1] + KC[1][0][0, 1])
    assert b.value("kxy", 450.0) == pytest.approx(mid, rel=1e-12)
    assert np.allclose(b.coefficients.kxy, [K[0][0, 1] for K in KC], rtol=1e-8, atol=0.0)
    stiff = b.replaced(mbs.rotors.Coefficients(kxx=1e9, kyy=1e9))
    assert stiff.journal is None and stiff.value("kxy", 450.0) == 0.0
    assert b.journal is jb and b.value("kxy", 450.0) == pytest.approx(mid, rel=1e-12)
    # the film turning the other way mirrors its cross-coupling: its table is not read there
    with pytest.raises(ValueError, match="read at positive speeds only.*-450"):
        b.matrices(-450.0)
    assert b.value("kxy", 450.0) == pytest.approx(mid, rel=1e-12)
