"""Closed forms of seed 003's spinning rod (docs/theory.md section 6), for the command-line tests
and docs/seed003_studies.py: a rod of length L and Young's modulus E along the spin's radius,
clamped at the axis, free at the tip, of cross-section A and mass m."""

import numpy as np

L, E = 1.0, 210e9


def rod_closed_forms(A, mass, spin, n=3):
    """Tip elongation (m) and the first n axial frequencies (rad/s) of the spinning rod."""
    rho = mass / (A * L)
    beta = spin * np.sqrt(rho / E)
    tip = np.tan(beta * L) / beta - L
    k = (2 * np.arange(1, n + 1) - 1) * np.pi / (2 * L)
    return tip, np.sqrt(E / rho * k**2 - spin**2)


def static_tip(A, mass, spin, F0):
    """Tip displacement under a static axial end force F0 on the spinning rod."""
    b = spin * np.sqrt(mass / (A * L) / E)
    return F0 * np.tan(b * L) / (E * A * b)


def tip_excitation(t, A, mass, spin, F0, w, n_modes=400):
    """Tip displacement of the spinning rod from rest under F0 sin(w t) at its tip: the modal
    series, its quasi-static part summed in closed form, F0 tan(kL)/(EAk) sin(wt) with
    k^2 = rho (w^2 + spin^2)/E, minus the free vibrations started at t = 0. Returns the
    history and the quasi-static amplitude."""
    rho = mass / (A * L)
    k = (2 * np.arange(1, n_modes + 1) - 1) * np.pi / (2 * L)
    wn = np.sqrt(E / rho * k**2 - spin**2)
    kap = np.sqrt(rho * (w**2 + spin**2) / E)
    quasi = F0 * np.tan(kap * L) / (E * A * kap)
    free = 2 * F0 * w / (rho * A * L * wn * (wn**2 - w**2))
    return quasi * np.sin(w * t) - np.sin(np.outer(t, wn)) @ free, quasi
