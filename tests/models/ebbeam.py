"""An Euler-Bernoulli cantilever in Hermite cubics, written for the tests as an independent
reference (no dolfinx_mbs): clamped at x = 0, dofs (w, w') per node, root dofs removed."""

import numpy as np


def cantilever(L, rho_a, ei, n_el=80, tension=None):
    """Mass M, bending stiffness K, the geometric stiffness G of an axial force N(x) (default
    the centrifugal tension of a unit spin about the root, N(x) = rho A (L^2 - x^2) / 2;
    ``tension``: any function of x), and the unit Euler load f (rho A x): for spin Omega, the
    stiffness is K + Omega^2 G."""
    if tension is None:
        tension = lambda x: rho_a * (L**2 - x**2) / 2  # noqa: E731
    h = L / n_el
    size = 2 * (n_el + 1)
    M, K, G = (np.zeros((size, size)) for _ in range(3))
    f = np.zeros(size)
    xg, wg = np.polynomial.legendre.leggauss(6)
    for e in range(n_el):
        idx = np.arange(2 * e, 2 * e + 4)
        for xi, wi in zip(xg, wg):
            s = (xi + 1) / 2
            x, w = e * h + s * h, wi * h / 2
            Hs = np.array([1 - 3 * s**2 + 2 * s**3, h * (s - 2 * s**2 + s**3), 3 * s**2 - 2 * s**3,
                           h * (-s**2 + s**3)])
            d1 = np.array([-6 * s + 6 * s**2, h * (1 - 4 * s + 3 * s**2), 6 * s - 6 * s**2,
                           h * (-2 * s + 3 * s**2)]) / h
            d2 = np.array([-6 + 12 * s, h * (-4 + 6 * s), 6 - 12 * s, h * (-2 + 6 * s)]) / h**2
            M[np.ix_(idx, idx)] += w * rho_a * np.outer(Hs, Hs)
            K[np.ix_(idx, idx)] += w * ei * np.outer(d2, d2)
            G[np.ix_(idx, idx)] += w * tension(x) * np.outer(d1, d1)
            f[idx] += w * rho_a * x * Hs
    return M[2:, 2:], K[2:, 2:], G[2:, 2:], f[2:]
