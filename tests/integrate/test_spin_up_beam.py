"""Kane, Ryan & Banerjee's spin-up beam (docs/theory.md section 7): the tip history of the 2D
plane-stress beam with prestress stiffening against an Euler-Bernoulli beam written here, and
the divergence of both without the centrifugal tension.

The reference: the chordwise deflection w(x, t) in the rotating frame of a beam clamped at the
root, spun up about an axis through the root,

    rho A (w_tt - Omega^2 w) + EI w'''' - (N(t) w')' = -rho A Omegadot(t) x,
    N(t) = rho A Omega(t)^2 (L^2 - x^2) / 2,

Hermite cubic elements in x (20), projected on the lowest eigenmodes of the beam at rest (10 of
40; 10 and 16 modes agree to 4e-6 of the peak) and integrated with scipy's DOP853 at rtol 1e-10.

What the FE solid has and the beam has not, each small here: shear and Poisson flexibility
(Timoshenko correction ~ (h/L)^2 = 6e-5), the coupling of the transverse and the axial motion
by the Coriolis force (the axial motion is quasi-static, its first mode at 760 rad/s, and the
centrifugal elongation is 0.5 mm), the tension computed on the stretched rod ((beta L)^2 ~ 1e-4)
and the distributed moment of the Euler load over the section height (h^2/(12 L^2) ~ 5e-5).
What remains is the discretization: P2 quadrilaterals, one across, and generalized-alpha
(second order, spectral radius 0.8) at dt = 0.02 s, ~ 80 steps per period. Measured: the
histories differ by 1.1e-3 of the peak with 40 cells and dt = 0.02 s, almost all of it the
mesh's excess bending stiffness (its first frequency is 6e-4 above the beam's, so its static
deflection 1.2e-3 below), and by 4e-4 with 100 cells and dt = 0.01 s.
"""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import eigh

import dolfinx_mbs as mbs
from tests.models import ebbeam
from tests.models.krb import EI, RHO_A, T_S, W_REF, L, fe_tip


def spin(t, final_rate):
    """Omega(t), Omegadot(t) of the spin-up (written again here, independent of SpinUp)."""
    if t >= T_S:
        return final_rate, 0.0
    s = 2.0 * np.pi / T_S
    return (final_rate / T_S * (t - np.sin(s * t) / s),
            final_rate / T_S * (1.0 - np.cos(s * t)))


# --- the Euler-Bernoulli reference ------------------------------------------------------------

def eb_matrices(n_el=20):
    """Mass, bending stiffness, unit-spin geometric stiffness and unit Euler load of the
    clamped beam (tests/models/ebbeam.py)."""
    return ebbeam.cantilever(L, RHO_A, EI, n_el)


def eb_tip(final_rate, times, stiffening=True, n_el=20, n_modes=10):
    """Tip deflection w(L, t) of the Euler-Bernoulli beam at ``times`` (from rest at t = 0):
    M w'' + (K + Omega^2 (G - M)) w = -Omegadot f, G only with ``stiffening``."""
    M, K, G, f = eb_matrices(n_el)
    _, Phi = eigh(K, M)
    Phi = Phi[:, :n_modes]   # mass-normalized: Phi^T M Phi = I
    Kq = Phi.T @ K @ Phi
    Sq = Phi.T @ ((G if stiffening else 0.0 * G) - M) @ Phi
    fq = Phi.T @ f
    n = n_modes

    def rhs(t, y):
        W, A = spin(t, final_rate)
        return np.concatenate([y[n:], -(Kq + W**2 * Sq) @ y[:n] - A * fq])

    sol = solve_ivp(rhs, (times[0], times[-1]), np.zeros(2 * n), method="DOP853",
                    t_eval=times, rtol=1e-10, atol=1e-12)
    assert sol.success, sol.message
    return (Phi @ sol.y[:n])[-2]


def eb_first_frequency(n_el=20):
    M, K, _, _ = eb_matrices(n_el)
    return float(np.sqrt(eigh(K, M, eigvals_only=True)[0]))


# --- the FE beam --------------------------------------------------------------------------------



# --- tests ----------------------------------------------------------------------------------------

def test_reference_beam():
    """The Euler-Bernoulli model: first frequency 3.5160 sqrt(EI/rho A L^4) (Wright et al.
    1982), and its modal projection converged."""
    assert abs(eb_first_frequency() / W_REF - 3.5160) < 2e-4
    t = np.linspace(0.0, 10.0, 201)
    a, b = eb_tip(6.0, t, n_modes=10), eb_tip(6.0, t, n_modes=16)
    assert np.abs(a - b).max() < 2e-5 * np.abs(b).max()


def test_spin_up_profile():
    """frames.SpinUp is the Kane-Ryan-Banerjee profile: rate, acceleration, and the angle
    (its integral) at the end of the ramp and after."""
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=6.0, ramp_time=T_S)
    for t in (0.0, 3.0, 7.5, 14.0, 15.0, 22.0):
        s = frame.state(t)
        W, A = spin(t, 6.0)
        assert np.allclose(s.omega, [0, 0, W], atol=1e-14) and np.allclose(s.alpha, [0, 0, A],
                                                                             atol=1e-14)
    ang = lambda t: np.arctan2(frame.rotation(t)[1, 0], frame.rotation(t)[0, 0])  # noqa: E731
    assert abs(ang(T_S) - np.angle(np.exp(1j * 6.0 * T_S / 2))) < 1e-12
    assert abs(ang(T_S + 0.1) - ang(T_S) - 0.6) < 1e-12


@pytest.mark.parametrize("final_rate", [4.0, 6.0])
def test_stiffened_tip_history_matches_euler_bernoulli(final_rate):
    """With prestress stiffening, the tip deflection over the spin-up and 5 s of steady spin
    agrees with the stiffened Euler-Bernoulli beam to 1 % of its peak (measured: 1.1e-3), and
    stays bounded: what is left after the spin-up is a free vibration of a few mm."""
    t, w = fe_tip(final_rate, "prestress", t_end=20.0)
    ref = eb_tip(final_rate, t, stiffening=True)
    peak = np.abs(ref).max()
    assert 0.3 < peak < 0.7       # 0.400 m at Omega_s = 4, 0.574 m at 6
    err = np.abs(w - ref).max() / peak
    assert err < 0.01, err
    assert abs(np.abs(w).max() / peak - 1) < 0.005
    assert np.abs(w[t > T_S]).max() < 0.02 * peak


def test_without_stiffening_both_diverge():
    """Without the tension both models diverge once the spin passes the first bending
    frequency w1 = 3.80 rad/s (t = 9.3 s at Omega_s = 6): in the steady spin both grow at
    sqrt(Omega_s^2 - w1^2) = 4.645 /s (1 %), and their histories agree to 5 % (up to 1e20 m)."""
    ws = 6.0
    t, w = fe_tip(ws, None, t_end=20.0)
    ref = eb_tip(ws, t, stiffening=False)
    exact = np.sqrt(ws**2 - eb_first_frequency()**2)
    steady = t > T_S + 2.0
    for hist in (w, ref):
        assert np.abs(hist[-1]) > 1e15
        rate = np.polyfit(t[steady], np.log(np.abs(hist[steady])), 1)[0]
        assert abs(rate / exact - 1) < 0.01, (rate, exact)
    late = t > 8.0
    assert np.abs(np.log(np.abs(w[late] / ref[late]))).max() < 0.05


@pytest.mark.slow
def test_full_histories_and_slow_divergence():
    """The demo's resolution (100 cells, dt = 0.01 s) over 30 s: the stiffened histories agree
    to 0.1 % of the peak (measured 4e-4); at Omega_s = 4, just above w1, the linear model
    diverges slowly, at sqrt(16 - w1^2) = 1.256 /s (2 %)."""
    for ws in (4.0, 6.0):
        t, w = fe_tip(ws, "prestress", t_end=30.0, dt=0.01, nx=100)
        ref = eb_tip(ws, t)
        assert np.abs(w - ref).max() < 1e-3 * np.abs(ref).max()
    t, w = fe_tip(4.0, None, t_end=30.0)
    ref = eb_tip(4.0, t, stiffening=False)
    exact = np.sqrt(16.0 - eb_first_frequency()**2)
    m = t > 20.0
    for hist in (w, ref):
        rate = np.polyfit(t[m], np.log(np.abs(hist[m])), 1)[0]
        assert abs(rate / exact - 1) < 0.02, (rate, exact)
