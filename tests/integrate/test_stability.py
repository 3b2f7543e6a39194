"""Divergence named during a run (issue 15, item 4): a beam spun about an axis across it, above
its divergence speed, grows like e^(s t); the run reports the state at its first step with the
rate s that its own motion then shows (an independent measure: the time integration), and says
nothing below the divergence speed."""

import warnings

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI
from scipy.linalg import eigh

import dolfinx_mbs as mbs
from dolfinx_mbs.integrate.dense.operators import gather_matrix
from dolfinx_mbs.integrate.stability import InstabilityError, InstabilityWarning

TIP = (1.0, 0.05, 0.05)


def beam(rate):
    """A soft 1 m beam along x (E = 1e6 Pa: first bending frequency 1.6 rad/s), clamped at
    x = 0, spinning about y: spin softening in the plane of rotation (x, z)."""
    mesh = dmesh.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0, 0.05, 0.05])],
                            [10, 1, 1])
    body = mbs.Body(mesh, mbs.materials.Isotropic(E=1e6, nu=0.3, density=1000.0),
                    mbs.frames.ConstantSpin(axis=(0, 1, 0), rate=rate))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    # a short push of the tip in z starts the motion
    model.apply_load(body, point=TIP, force=lambda t: (0.0, 0.0, 1e-3 if t < 1e-3 else 0.0))
    return model


def test_divergence_reported_at_once_with_the_rate_the_motion_shows():
    model = beam(200.0)
    with pytest.warns(InstabilityWarning, match=r"unstable \(divergent\) state at t=0: .* "
                                                r"growth rate 10\d\.\d+ 1/s"):
        r = model.integrate(t_end=0.2, dt=5e-4, probes=[TIP], progress=False)
    (found,) = r.instabilities
    assert found.t == 0.0 and found.negative > 0   # at the first step: within one e-folding
    assert found.where[0] == model.bodies[0].name and found.where[2] == 2  # the tip, along z
    assert np.allclose(found.where[1], TIP)
    tip = np.linalg.norm(r.probes[:, 0, :], axis=1)
    late = r.times > 0.1
    measured = np.polyfit(r.times[late], np.log(tip[late]), 1)[0]
    assert abs(measured - found.rate) < 0.01 * found.rate, (measured, found.rate)
    with pytest.raises(InstabilityError, match="unstable .* at t=0"):
        model.integrate(t_end=2e-3, dt=5e-4, stability="error", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InstabilityWarning)
        assert model.integrate(t_end=2e-3, dt=5e-4, stability="off",
                               progress=False).instabilities == []
    with pytest.raises(ValueError, match="stability must be one of"):
        model.integrate(t_end=2e-3, dt=5e-4, stability="loud")


def test_no_report_below_the_divergence_speed():
    model = beam(1.0)   # below the first bending frequency (1.6 rad/s): stable
    with warnings.catch_warnings():
        warnings.simplefilter("error", InstabilityWarning)
        r = model.integrate(t_end=2e-2, dt=5e-4, probes=[TIP], progress=False)
    assert r.instabilities == []
    assert np.abs(r.probes).max() < 1e-3


def test_free_rigid_motions_are_not_reported():
    """A free bar spinning about its long axis: its rigid translations across the axis have
    negative spin-softened stiffness (-Omega^2 m) but are a body at rest in the inertial frame,
    not a divergence (rigid_modes); its elastic modes are far above the spin: no report."""
    mesh = dmesh.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0, 0.1, 0.1])],
                            [6, 1, 1])
    body = mbs.Body(mesh, mbs.materials.Isotropic(E=70e9, nu=0.3, density=2700.0),
                    mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=100.0))
    model = mbs.Model([body])
    with warnings.catch_warnings():
        warnings.simplefilter("error", InstabilityWarning)
        r = model.integrate(t_end=5e-4, dt=1e-4, progress=False)
    assert r.instabilities == []


GAMG = {"ksp_type": "gmres", "pc_type": "gamg", "ksp_rtol": 1e-12}


@pytest.mark.parametrize("rate", [200.0, 1.0])
def test_multigrid_runs_check_without_a_factorization(rate):
    """With a multigrid step solver the check takes the lowest eigenvalues by LOBPCG (no
    factorization of the stiffness): the lowest eigenvalue that of the dense problem (a second
    method), the same report as the factorization's (its growth rate from the same
    eigenproblem), the count a lower bound."""
    model = beam(rate)
    system = model.system()
    s = system.at(0.0)
    count, lowest = mbs.integrate.stability.negative_by_lobpcg(s.K, s.M, s.Kel, system.near_nullspace())
    K, M = (gather_matrix(A, MPI.COMM_WORLD) for A in (s.K, s.M))
    lam = eigh(0.5 * (K + K.T), M, eigvals_only=True)   # dense reference (120 unknowns)
    assert lowest == pytest.approx(lam[0], rel=1e-5)
    assert count == int(np.count_nonzero(lam[:2] < 0))
    run = dict(t_end=5e-3, dt=5e-4, progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InstabilityWarning)
        direct = model.integrate(**run)
        mg = model.integrate(options=GAMG, **run)
    if rate < 1.6:   # below the first bending frequency: nothing to report
        assert direct.instabilities == mg.instabilities == []
        assert not caught
        return
    (a,), (b,) = direct.instabilities, mg.instabilities
    assert b.t == a.t == 0.0 and b.rate == pytest.approx(a.rate, rel=1e-8)
    assert not b.exact_count and 1 <= b.negative <= a.negative
    assert "at least" in b.message() and "at least" not in a.message()
