"""Kirchhoff's thin annular plate clamped at its inner radius b and free at its outer radius a:
the roots of the characteristic determinant in Bessel functions (Leissa, Vibration of Plates,
NASA SP-160, 1969, section 2.3), computed with scipy.special.

    w = W(r) cos(n theta),  W = A J_n(l r) + B Y_n(l r) + C I_n(l r) + E K_n(l r),
    l^4 = rho h w^2 / D,  D = E h^3 / (12 (1 - nu^2))

with W(b) = W'(b) = 0 (clamped) and, at r = a (free), the radial moment and the Kirchhoff
shear force zero:

    W'' + nu (W'/r - n^2 W / r^2) = 0,
    W''' + W''/r - (1 + (2 - nu) n^2) W'/r^2 + (3 - nu) n^2 W / r^3 = 0.
"""

import math

import numpy as np
from scipy import optimize, special


def _matrices(n, x, rb, nu):
    """The 4 x 4 matrices of the conditions at l a = x (an array; a = 1, b = rb), columns J,
    Y, I, K, each column scaled to unit norm (the sign of the determinant is kept)."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    cols = []
    for f, fp in ((special.jv, special.jvp), (special.yv, special.yvp),
                  (special.iv, special.ivp), (special.kv, special.kvp)):
        b0, b1 = f(n, x * rb), fp(n, x * rb, 1)
        a0, a1, a2, a3 = f(n, x), fp(n, x, 1), fp(n, x, 2), fp(n, x, 3)
        # W(r) = Z(x r): W' = x Z', W'' = x^2 Z'', W''' = x^3 Z''' (a = 1)
        w0, w1, w2, w3 = a0, x * a1, x * x * a2, x ** 3 * a3
        col = np.stack([b0, x * b1, w2 + nu * (w1 - n * n * w0),
                        w3 + w2 - (1 + (2 - nu) * n * n) * w1 + (3 - nu) * n * n * w0], axis=-1)
        cols.append(col / np.linalg.norm(col, axis=-1, keepdims=True))
    return np.stack(cols, axis=-1)


def roots(n, b_over_a, nu, count=2, top=40.0):
    """The first ``count`` roots l a of the determinant for n nodal diameters."""
    def det(x):
        return float(np.linalg.det(_matrices(n, x, b_over_a, nu))[0])

    xs = np.linspace(0.5, top, 2000)
    d = np.linalg.det(_matrices(n, xs, b_over_a, nu))
    out = []
    for i in np.flatnonzero(np.sign(d[:-1]) != np.sign(d[1:])):
        r = optimize.brentq(det, xs[i], xs[i + 1], xtol=1e-14)
        # a true root, not a pole of the scaled determinant: small on both sides
        if abs(det(r)) < 1e-8:
            out.append(r)
        if len(out) == count:
            break
    return np.array(out)


def frequencies(n, a, b, h, E, nu, rho, count=2):
    """The first ``count`` frequencies (rad/s) with n nodal diameters."""
    D = E * h ** 3 / (12 * (1 - nu ** 2))
    lam = roots(n, b / a, nu, count) / a
    return lam ** 2 * math.sqrt(D / (rho * h))


def shooting_root(n, b_over_a, nu, guess):
    """The root l a near ``guess`` found without Bessel functions: the plate's ODE
    (d^2/dr^2 + d/(r dr) - n^2/r^2)^2 W = l^4 W integrated from the clamped edge (a = 1) for the
    two free starting values, and the free edge's 2 x 2 determinant set to zero (an
    independent check of :func:`roots`)."""
    from scipy.integrate import solve_ivp

    rb = b_over_a

    def edge(x):
        l4 = x ** 4

        def rhs(r, y):
            W, Wp, V, Vp = y
            Wpp = V - Wp / r + n * n * W / r ** 2
            Vpp = l4 * W - Vp / r + n * n * V / r ** 2
            return [Wp, Wpp, Vp, Vpp]

        rows = []
        for y0 in ([0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]):
            W, Wp, V, Vp = solve_ivp(rhs, (rb, 1.0), y0, rtol=1e-12, atol=1e-14,
                                     method="DOP853").y[:, -1]
            Wpp = V - Wp + n * n * W
            Wppp = Vp - (Wpp - Wp) + n * n * (Wp - 2 * W)
            rows.append([Wpp + nu * (Wp - n * n * W),
                         Wppp + Wpp - (1 + (2 - nu) * n * n) * Wp + (3 - nu) * n * n * W])
        return float(np.linalg.det(np.array(rows)))

    lo, hi = 0.97 * guess, 1.03 * guess
    return optimize.brentq(edge, lo, hi, xtol=1e-13)
