"""The steel bar of the spring tests on prescribed frames: a plane-stress strip (nu = 0) that moves
axially as a 1D bar, the first root beta of its spring-held frequency equation and its first
mode (for ``tests/model/test_springs_prescribed.py`` and
``tests/integrate/test_checkpoint_coupled.py``)."""

import math

import numpy as np
import scipy.optimize
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

E, RHO, L, H = 210e9, 7850.0, 1.0, 0.02
C = math.sqrt(E / RHO)
EA = E * H * H          # plane stress, thickness H
GAP = 0.5               # the spring's length at t = 0 (m)
AMP = 1e-6              # the initial mode's amplitude (m)


def _beta(k):
    """The first root of EA beta cos(beta L) + k sin(beta L) = 0 (rad/m)."""
    return scipy.optimize.brentq(lambda b: EA * b * math.cos(b * L) + k * math.sin(b * L),
                                 0.5 * math.pi / L + 1e-9, math.pi / L - 1e-9)


def _bar(frame, name, x0=0.0, nx=8):
    """A bar on ``frame`` from x0 to x0 + L in its own coordinates (P2, nx by 2 cells)."""
    msh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([x0, -H / 2]),
                                                  np.array([x0 + L, H / 2])], [nx, 2])
    mat = mbs.materials.PlaneStress(E=E, nu=0.0, density=RHO, thickness=H)
    return mbs.Body(msh, mat, frame, degree=2, name=name)


def _mode(body, beta, x0=0.0, sign=1.0):
    u = fem.Function(body.V)
    u.interpolate(lambda x: np.vstack([sign * AMP * np.sin(beta * (x[0] - x0)),
                                       np.zeros(x.shape[1])]))
    return u
