"""The dense paths of small systems (``integrate(stepper=...)``,
:mod:`dolfinx_mbs.integrate.dense.stepper`).

* ``stepper="dense"`` gives the TS path's steps (a second route through the same schemes):
  the three formulations' steps on seed 003's rod and on a spun-up beam are in the steppers'
  conformance suite (``test_steppers.py``, with ``"auto"`` taking the path and the refusals);
  here, with the rod's loads fitted and the observers seeing the whole run at once, and with
  generalized-alpha's dissipation.
* ``stepper="exact"`` on the rod equals the semi-discrete equations' solution found by another
  route (eigen-decomposition of the first-order matrix and the harmonic particular solution)
  to round-off, and the continuous rod's closed form (``seed003c.tip_excitation``) to its
  discretization error; at steps 50 times the TS path's accurate one it stays exact.
"""

import numpy as np
import pytest
from mpi4py import MPI

from dolfinx_mbs.integrate.dense.operators import gather_matrix, gather_vector
from dolfinx_mbs.io import Probes
from tests.models.denseruns import TIP, seed_rod
from tests.models.rodmodel import ROD, axial_rod
from tests.models.seed003c import tip_excitation

COMM = MPI.COMM_WORLD
FORMS = ("second-order", "first-order", "hamiltonian")






def relmax(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("formulation", FORMS)
def test_fitted_loads_and_whole_run_observers_equal_ts(formulation):
    """The rod's loads fitted on sin, cos of 200 rad/s (no assembly per step) and the
    energies and probes computed for the whole run after the steps: the TS path's values
    (1e-9 of the largest)."""
    out = {}
    for stepper, kw in (("ts", {}), ("dense", dict(load_frequencies=(200.0,)))):
        model = seed_rod()
        out[stepper] = model.integrate(t_end=0.006, dt=2e-4, formulation=formulation,
                                       u0=model.solve_static(), probes=[TIP],
                                       progress=False, stepper=stepper, **kw)
    ts, de = out["ts"], out["dense"]
    assert np.abs(de.probes - ts.probes).max() < 1e-9 * np.abs(ts.probes).max()
    assert np.abs(ts.probes[:, 0, 0] - ts.probes[0, 0, 0]).max() > 0
    for k, e in ts.energy.items():
        assert np.abs(de.energy[k] - e).max() <= 1e-9 * np.abs(e).max(), k


@pytest.mark.parametrize("radius", [0.0, 0.6])
def test_dense_generalized_alpha_with_dissipation_equals_ts(radius):
    """With a spectral radius below 1 the initial acceleration of TSALPHA2's restart enters
    the steps: the dense path's equals PETSc's (1e-9 of the largest tip displacement)."""
    out = []
    for stepper in ("ts", "dense"):
        model = seed_rod()
        r = model.integrate(t_end=0.004, dt=2e-4, u0=model.solve_static(), probes=[TIP],
                            spectral_radius=radius, progress=False, stepper=stepper)
        out.append(r.probes[:, 0, 0] - r.probes[0, 0, 0])
    assert np.abs(out[0]).max() > 0
    assert np.abs(out[1] - out[0]).max() < 1e-9 * np.abs(out[0]).max()


class SemiDiscrete:
    """The exact solution of M q'' + C q' + K q = f_c + f_t sin(w t), q(0) = static,
    q'(0) = 0, on every rank: eigen-decomposition of the first-order matrix plus the harmonic
    particular solution; the tip's u_x - u_x(0) by the probes' values of unit vectors."""

    def __init__(self, model, w=200.0):
        system = model.system()
        s = system.at(0.0)
        M, C, K = (gather_matrix(A, COMM) for A in (s.M, s.C, s.K))
        t1 = 0.3 / w
        fc = gather_vector(s.f, COMM)
        ft = (gather_vector(system.at(t1).f, COMM) - fc) / np.sin(w * t1)
        m = M.shape[0]
        Mi = np.linalg.inv(M)
        As = np.block([[np.zeros((m, m)), np.eye(m)], [-Mi @ K, -Mi @ C]])
        b = np.concatenate([np.zeros(m), Mi @ ft])
        self.X = np.linalg.solve(1j * w * np.eye(2 * m) - As, b)
        self.lam, V = np.linalg.eig(As)
        self.Vt, self.c = V[:m].T, np.linalg.solve(V, -self.X.imag)
        self.w, self.m = w, m
        pr = Probes(model.bodies, [TIP])
        q, full = system.create_reduced_vec(), system.space.create_vec()
        r0, r1 = q.getOwnershipRange()
        self.T = np.zeros(m)
        for i in range(m):
            q.zeroEntries()
            if r0 <= i < r1:
                q.setValue(i, 1.0)
            q.assemble()
            model.space.scatter(system.expand(q, out=full), model.functions())
            self.T[i] = pr.evaluate()[0, 0]

    def tip(self, t):
        zp = np.imag(np.outer(np.exp(1j * self.w * t), self.X[: self.m]))
        zh = np.real((np.exp(np.outer(t, self.lam)) * self.c) @ self.Vt)
        return (zp + zh) @ self.T


@pytest.mark.parametrize("formulation", FORMS)
def test_exact_equals_semi_discrete_solution_at_large_steps(formulation):
    """The rod's tip history by matrix exponentials at dt = 5e-4 (first mode's period 2 ms, the
    TS path needs ~3e-6 for 1e-3 accuracy) equals the eigen-decomposition's to 1e-9 of its
    largest value; the TS path at the same dt is off by more than 1 %."""
    model = seed_rod()
    ref = SemiDiscrete(model)
    u0 = [f.copy() for f in model.solve_static()]
    out = {}
    for stepper in ("exact", "ts"):
        r = model.integrate(t_end=0.02, dt=5e-4, formulation=formulation, u0=u0,
                            probes=[TIP], progress=False, stepper=stepper,
                            load_frequencies=(200.0,), load_degree=0)
        out[stepper] = r.probes[:, 0, 0] - r.probes[0, 0, 0]
    exact = ref.tip(r.times)
    assert np.abs(exact).max() > 1e-6
    assert relmax(out["exact"], exact) < 1e-9
    assert relmax(out["ts"], exact) > 1e-2


def test_exact_converges_to_the_continuous_rod():
    """The response to the end force alone (the difference of runs from rest with and without
    it), exact in time, approaches the continuous rod's closed form (modal series, seed003c)
    with degree-2 elements: within 2e-3 of the largest displacement with 8 elements, and at
    least halving with 16 (spatial error only)."""
    errs = []
    for n in (8, 16):
        runs = []
        for model in (seed_rod(n, degree=2), axial_rod(COMM, n, 15.0, 3, None, 2)[0]):
            r = model.integrate(t_end=0.01, dt=2.5e-4, probes=[TIP], progress=False,
                                stepper="exact", load_frequencies=(200.0,), energy=False)
            runs.append(r.probes[:, 0, 0])
        exact, _ = tip_excitation(r.times, ROD["A"], ROD["mass"], 15.0, 1000.0, 200.0)
        errs.append(relmax(runs[0] - runs[1], exact))
    assert errs[0] < 2e-3, errs
    assert errs[1] < 0.5 * errs[0], errs
