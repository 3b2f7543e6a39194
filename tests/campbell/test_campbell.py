"""Campbell diagrams: the slender spinning shaft of docs/theory.md section 6 against the beam limit
and the Rayleigh beam, mode tracking, critical speeds, 1 rank against 2.

The shaft: steel, L = 1 m, square section a = 4 cm (a/L = 0.04), clamped at x = 0, spinning
about its own axis (x), viewed in the rotating frame with Coriolis and spin softening and no
stiffening. In the beam limit each bending pair of frequency w0 appears at w0 - Omega (forward
whirl, with the spin) and w0 + Omega (backward whirl); both are w0 seen from the ground.

The 3D solid adds the inertia of the cross sections' tilt, a relative correction
eps = (I/A) int phi'^2 / int phi^2 (Euler-Bernoulli mode shape phi; 6.2e-4 for mode 1 here).
In the rotating frame the tilt (axial displacement) feels neither Coriolis nor spin softening,
so with psi = v + i w the Rayleigh beam reads

    rho A (psi_tt + 2 i Omega psi_t - Omega^2 psi) - rho I psi_ttxx + EI psi_xxxx = 0,

and psi = phi(x) exp(i nu t) (Galerkin on phi) gives the stationary frequencies s = nu + Omega:

    (1 + eps) s^2 - 2 eps Omega s + eps Omega^2 - (1 + eps) w0^2 = 0,
    s = eps Omega / (1 + eps) +/- sqrt(w0^2 - eps Omega^2 / (1 + eps)^2),

w0 the frequency at rest (the same model at zero speed, so the discretisation cancels). The
deviation from the beam limit is at most eps (Omega + Omega^2 / w0): the gyroscopic moment
(linear in Omega) and the unsoftened tilt inertia (quadratic, as there is no stiffening).
"""

import os

import numpy as np

_trapz = getattr(np, "trapezoid", None) or np.trapz
import pytest
from mpi4py import MPI
from scipy.optimize import brentq

import dolfinx_mbs as mbs
from tests.models.shaft import A_SIDE, STEEL, L, shaft


def tilt_eps(n):
    """(I/A) int phi'^2 / int phi^2 for the n-th clamped-free Euler-Bernoulli mode."""
    b = brentq(lambda x: np.cos(x) * np.cosh(x) + 1.0, (n - 0.5) * np.pi - 0.6,
               (n - 0.5) * np.pi + 0.6)
    x = np.linspace(0.0, 1.0, 20001)
    s = (np.cosh(b) + np.cos(b)) / (np.sinh(b) + np.sin(b))
    phi = np.cosh(b * x) - np.cos(b * x) - s * (np.sinh(b * x) - np.sin(b * x))
    dphi = b * (np.sinh(b * x) + np.sin(b * x) - s * (np.cosh(b * x) - np.cos(b * x)))
    return _trapz(dphi**2, x) / _trapz(phi**2, x) / L**2 * A_SIDE**2 / 12.0


def rayleigh(w0, eps, om):
    """Rotating-frame frequencies of the forward and backward branch (module docstring)."""
    root = np.sqrt(w0**2 - eps * om**2 / (1.0 + eps) ** 2)
    g = eps * om / (1.0 + eps)
    return np.abs(root + g - om), root - g + om


@pytest.fixture(scope="module")
def sweep():
    """The shaft from rest to 2.9 w1 (past the first critical speed and past the crossing of
    the first backward with the second forward branch at about 2.6 w1). No speed sits on the
    critical speed, where K + K_omega is singular."""
    model, body = shaft(MPI.COMM_WORLD)
    w = model.natural_frequencies(n=4)
    speeds = w[0] * np.r_[0.0, np.arange(0.1, 3.0, 0.2)]
    table = model.campbell(speeds, n=4)
    return dict(w=w, speeds=speeds, table=table)


def branches(table, cols):
    """(forward, backward) columns of a bending pair, by their whirl just above rest."""
    f = [c for c in cols if table.whirl[1, c] == 1]
    b = [c for c in cols if table.whirl[1, c] == -1]
    assert len(f) == 1 and len(b) == 1, table.whirl[1]
    return f[0], b[0]


def test_shaft_pairs_split_into_w0_minus_and_plus_omega(sweep):
    tab, w, om = sweep["table"], sweep["w"], sweep["speeds"]
    assert np.allclose(tab.frequencies[0], w, rtol=1e-8)  # at rest: the symmetric problem
    assert np.all(tab.stable)
    for w0, n, cols in ((w[0], 1, (0, 1)), (w[2], 2, (2, 3))):
        eps = tilt_eps(n)
        f, b = branches(tab, cols)
        o = om[1:]
        corr = eps * (o + o**2 / w0)
        wf, wb = tab.frequencies[1:, f], tab.frequencies[1:, b]
        # the beam limit, to the cross sections' tilt inertia (bound above; 1.5: margin for
        # shear deformation and the 3D section, a few per cent of the correction)
        assert np.all(np.abs(wf - np.abs(w0 - o)) <= 1.5 * corr), (wf - np.abs(w0 - o)) / corr
        assert np.all(np.abs(wb - (w0 + o)) <= 1.5 * corr), (wb - (w0 + o)) / corr
        # the correction itself: the Rayleigh beam to 5 % of it (measured 0.3 % for mode 1,
        # 1.3 % for mode 2)
        rf, rb = rayleigh(w0, eps, o)
        assert np.all(np.abs(wf - rf) <= 0.05 * corr), (wf - rf) / corr
        assert np.all(np.abs(wb - rb) <= 0.05 * corr), (wb - rb) / corr
        # whirl in the rotating frame: backward on the w0 + Omega branch; forward on the
        # w0 - Omega branch below the critical speed, backward above it (the shaft outruns
        # the orbit); both are w0 from the ground, forward and backward
        assert np.all(tab.whirl[1:, b] == -1)
        assert np.all(tab.whirl[1:, f] == np.where(o < w0, 1, -1))
        assert np.all(tab.whirl_stationary[1:, f] == 1)
        assert np.all(tab.whirl_stationary[1:, b] == -1)
        assert np.all(np.abs(tab.whirl_index[1:, [f, b]]) > 0.999)  # circular orbits
        for c in (f, b):
            assert np.all(np.abs(tab.stationary[1:, c] - w0) <= 1.5 * corr)
        assert np.all(tab.whirl[0] == 0)  # no spin, no whirl direction
    # the gyroscopic moment splits the stationary frequencies: w_B - w_F = 2 Omega (1 - e),
    # e = eps / (1 + eps), exact in Omega for the Rayleigh beam
    f, b = branches(tab, (0, 1))
    eps = tilt_eps(1)
    split = 1.0 - (tab.frequencies[1:, b] - tab.frequencies[1:, f]) / (2 * om[1:])
    above = om[1:] > w[0]
    split[above] = 1.0 - (tab.frequencies[1:, b] + tab.frequencies[1:, f])[above] / (
        2 * om[1:][above])
    assert np.allclose(split, eps / (1 + eps), rtol=0.02), split / eps


def test_tracking_is_continuous_through_crossings(sweep):
    """The first forward branch passes through zero frequency at the critical speed (its
    representative flips to the conjugate eigenpair) and the first backward branch crosses
    the second forward one near 2.6 w1: each branch keeps its mode (MAC with the previous
    speed > 0.9; from rest the MAC is basis dependent, as each pair is degenerate there)."""
    tab, w, om = sweep["table"], sweep["w"], sweep["speeds"]
    assert np.all(tab.mac[2:] > 0.9), tab.mac
    f1, b1 = branches(tab, (0, 1))
    f2, b2 = branches(tab, (2, 3))
    d = tab.frequencies[:, b1] - tab.frequencies[:, f2]
    assert d[1] < 0 < d[-1]  # the crossing lies inside the sweep
    # the crossing branches keep their whirl and stay on their own lines
    assert np.all(tab.whirl[1:, b1] == -1) and np.all(tab.whirl[1:, f2] == 1)
    assert np.allclose(tab.frequencies[1:, b1], w[0] + om[1:], rtol=2e-3)
    assert np.allclose(tab.frequencies[1:, f2], w[2] - om[1:], rtol=2e-2)
    # the zero crossing of the first forward branch
    assert np.allclose(tab.frequencies[1:, f1], np.abs(w[0] - om[1:]), atol=2e-3 * w[0])


def test_critical_speeds(sweep):
    """The forward whirl (stationary frequency ~ w1) meets the line 1 x Omega at
    Omega = w1 sqrt(1 + eps) (Rayleigh beam: the static critical speed, where the
    rotating-frame frequency is zero); the backward whirl at w1 sqrt((1 + eps) / (1 + 4 eps)).
    Both are w1 in the beam limit, within eps. The interpolation error between sweep points,
    (Delta Omega)^2 / 8 times the branch curvature eps / w1, is below 0.01 eps w1 here."""
    tab, w = sweep["table"], sweep["w"]
    eps = tilt_eps(1)
    f1, b1 = branches(tab, (0, 1))
    one = {c.whirl: c for c in tab.critical_speeds if c.order == 1 and c.mode in (f1, b1)}
    assert set(one) == {1, -1}
    fwd, bwd = one[1], one[-1]
    assert fwd.mode == f1 and bwd.mode == b1
    assert abs(fwd.speed / w[0] - 1.0) <= eps and abs(bwd.speed / w[0] - 1.0) <= 2 * eps
    assert abs(fwd.speed / (w[0] * np.sqrt(1 + eps)) - 1.0) <= 0.05 * eps
    assert abs(bwd.speed / (w[0] * np.sqrt((1 + eps) / (1 + 4 * eps))) - 1.0) <= 0.05 * eps
    assert fwd.frequency == pytest.approx(fwd.speed)
    two = [c for c in tab.critical_speeds if c.order == 2 and c.mode in (f1, b1)]
    assert len(two) == 2 and all(abs(c.speed / w[0] - 0.5) <= eps for c in two)


def test_world_equals_self():
    """The same sweep on all ranks and on one process: same frequencies (1e-8), same
    tracking and whirl."""
    speeds = [60.0, 180.0, 240.0, 400.0, 590.0]  # w1 = 211 rad/s
    out = []
    for comm in (MPI.COMM_WORLD, MPI.COMM_SELF):
        model, _ = shaft(comm, nx=8)
        out.append(model.campbell(speeds, n=4))
    a, b = out
    assert np.allclose(a.frequencies, b.frequencies, rtol=1e-8, atol=0), (a.frequencies,
                                                                          b.frequencies)
    assert np.allclose(a.stationary, b.stationary, rtol=1e-8, atol=0)
    assert np.allclose(a.whirl_index, b.whirl_index, rtol=1e-6, atol=1e-8)
    assert np.array_equal(a.whirl, b.whirl) and np.array_equal(a.stable, b.stable)
    assert len(a.critical_speeds) == len(b.critical_speeds) > 0
    assert np.allclose([c.speed for c in a.critical_speeds],
                       [c.speed for c in b.critical_speeds], rtol=1e-8)


def test_sweep_restores_the_model(monkeypatch):
    """The sweep leaves the frame's spin rate alone (also after an error), and the reduced
    systems and operators after it are those of the model's own rate."""
    model, body = shaft(MPI.COMM_WORLD, nx=6, rate=50.0)
    w_before = model.natural_frequencies(n=4, gyroscopic=True)
    s = model.system("hamiltonian").at(0.0)
    kh = s.Kh.norm(), s.Gp.norm()
    tab = model.campbell([100.0, 300.0], n=2)
    assert body.frame.rate == 50.0
    s = model.system("hamiltonian").at(0.0)
    assert np.allclose((s.Kh.norm(), s.Gp.norm()), kh, rtol=1e-12)
    assert np.allclose(model.natural_frequencies(n=4, gyroscopic=True), w_before, rtol=1e-9)
    assert tab.frequencies.shape == (2, 2)

    calls = []
    real = mbs.campbell.subspace.SubspaceSolver.solve

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("no convergence (test)")
        return real(*args, **kwargs)

    monkeypatch.setattr(mbs.campbell.subspace.SubspaceSolver, "solve", failing)
    with pytest.raises(RuntimeError, match="test"):
        model.campbell([100.0, 300.0, 500.0], n=2)
    assert body.frame.rate == 50.0
    assert np.allclose(model.natural_frequencies(n=4, gyroscopic=True), w_before, rtol=1e-9)


def test_bad_arguments():
    model, body = shaft(MPI.COMM_WORLD, nx=2)
    with pytest.raises(ValueError, match="monotonic|increasing"):
        model.campbell([1.0, 3.0, 2.0])
    with pytest.raises(ValueError, match="positive"):
        model.campbell([1.0], engine_orders=(0,))
    with pytest.raises(ValueError, match="free dofs"):
        model.campbell([1.0], n=10**6)
    other = mbs.Body(body.mesh, mbs.materials.LinearElastic(**STEEL),
                     mbs.frames.SpinUp(axis=(1, 0, 0), final_rate=10.0, ramp_time=1.0))
    m2 = mbs.Model([other])
    m2.clamp(other, lambda x: np.isclose(x[0], 0.0))
    with pytest.raises(ValueError, match="ConstantSpin"):
        m2.campbell([1.0, 2.0])


def test_csv_and_plot(sweep, tmp_path):
    tab = sweep["table"]
    comm = MPI.COMM_WORLD
    d = comm.bcast(str(tmp_path), root=0)
    csv_path, png = os.path.join(d, "campbell.csv"), os.path.join(d, "campbell.png")
    tab.to_csv(csv_path)
    tab.plot(png)
    tab.plot(os.path.join(d, "rotating.png"), frame="rotating")
    if comm.rank == 0:
        rows = np.genfromtxt(csv_path, delimiter=",", names=True)
        assert len(rows) == tab.frequencies.size
        assert np.allclose(rows["frequency_rad_s"].reshape(tab.frequencies.shape),
                           tab.frequencies, rtol=1e-15)
        assert np.allclose(rows["speed_rpm"][::tab.n_modes], tab.speeds * 30 / np.pi)
        for p in (png, os.path.join(d, "rotating.png")):
            assert os.path.getsize(p) > 10_000
    comm.Barrier()
