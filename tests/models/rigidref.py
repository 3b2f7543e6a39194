"""Closed forms of rigid-body motion for the tests of computed frames.

* :func:`pendulum_period`: the period of a physical pendulum released from rest at an angle
  theta0 from the bottom, 4 sqrt(J_O / (m g d)) K(sin^2(theta0 / 2)) (complete elliptic
  integral of the first kind, parameter m = k^2).
* :func:`euler_omega`: the torque-free motion of an asymmetric rigid body, the angular
  velocity in its principal axes as Jacobi elliptic functions (Landau and Lifshitz, Mechanics,
  section 37): for I1 < I2 < I3, energy E and momentum M, when M^2 > 2 E I2

      w1 = A1 cn(tau, k),  w2 = A2 sn(tau, k),  w3 = A3 dn(tau, k),
      A1^2 = (2 E I3 - M^2) / (I1 (I3 - I1)),  A2^2 = (2 E I3 - M^2) / (I2 (I3 - I2)),
      A3^2 = (M^2 - 2 E I1) / (I3 (I3 - I1)),
      tau = t sqrt((I3 - I2) (M^2 - 2 E I1) / (I1 I2 I3)) + tau0,
      k^2 = (I2 - I1) (2 E I3 - M^2) / ((I3 - I2) (M^2 - 2 E I1)),

  and the same with axes 1 and 3 exchanged when M^2 < 2 E I2. tau0 and the signs come from
  the initial angular velocity (the amplitude phi0 with cn = w1 / A1, sn = w2 / A2).
"""

import math

import numpy as np
from scipy.special import ellipj, ellipk, ellipkinc


def pendulum_period(J_O: float, m: float, g: float, d: float, theta0: float) -> float:
    """The period of a physical pendulum released from rest at ``theta0`` (rad)."""
    return 4.0 * math.sqrt(J_O / (m * g * d)) * ellipk(math.sin(theta0 / 2.0) ** 2)


def euler_omega(I, w0, t) -> np.ndarray:
    """The body-axes angular velocity (len(t), 3) of a torque-free rigid body with principal
    moments ``I`` (strictly increasing) from ``w0`` at t = 0."""
    I1, I2, I3 = (float(x) for x in I)
    assert I1 < I2 < I3
    w0 = np.asarray(w0, dtype=float)
    E = 0.5 * float(np.dot(I, w0 * w0))
    M2 = float(np.sum((np.asarray(I) * w0) ** 2))
    flip = M2 < 2.0 * E * I2
    if flip:  # exchange axes 1 and 3
        I1, I3 = I3, I1
        w0 = w0[::-1]
    A1 = math.sqrt((2 * E * I3 - M2) / (I1 * (I3 - I1)))
    A2 = math.sqrt((2 * E * I3 - M2) / (I2 * (I3 - I2)))
    A3 = math.sqrt((M2 - 2 * E * I1) / (I3 * (I3 - I1)))
    rate = math.sqrt((I3 - I2) * (M2 - 2 * E * I1) / (I1 * I2 * I3))
    k2 = (I2 - I1) * (2 * E * I3 - M2) / ((I3 - I2) * (M2 - 2 * E * I1))
    s3 = 1.0 if w0[2] >= 0 else -1.0
    phi0 = math.atan2(w0[1] / A2, w0[0] / A1)
    tau0 = ellipkinc(phi0, k2)
    # the signs of Euler's equations: I1 w1' = (I2 - I3) w2 w3 gives w1' ~ -sn dn for
    # s3 = +1; with s3 = -1 time runs the other way along the same curve
    tau = s3 * rate * np.asarray(t, dtype=float) + tau0
    sn, cn, dn, _ = ellipj(tau, k2)
    out = np.column_stack([A1 * cn, A2 * sn, s3 * A3 * dn])
    if flip:
        out = out[:, ::-1]
    return out
