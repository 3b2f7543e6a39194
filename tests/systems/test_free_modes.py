"""Elastic modes of unconstrained (free) and partly constrained bodies, at rest and spinning
(issue 15, item 6; :mod:`dolfinx_mbs.systems.rigid_modes`).

Run serially and on 2 ranks: each test also builds the same model on ``COMM_SELF`` (one
process), so under ``mpiexec -n 2`` it compares the 2-rank results with a serial run.
"""

import dolfinx.mesh as dmesh
import numpy as np
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.systems import rigid_subspace

E, NU, RHO = 70e9, 0.3, 2700.0
L, H = 1.0, 0.1


def _model(comm, rate, n=(8, 2, 2), degree=None):
    mesh = dmesh.create_box(comm, [np.zeros(3), np.array([L, H, H])], list(n),
                            dmesh.CellType.hexahedron)
    body = mbs.Body(mesh, mbs.materials.Isotropic(E=E, nu=NU, density=RHO),
                    frame=mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=rate), degree=degree)
    return mbs.Model([body]), body


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b) / np.abs(b))


def test_free_body_at_rest():
    """At rest: the symmetric solve, the gyroscopic solve (zero Coriolis), modes() and a
    Campbell point agree (1e-8) and with a serial run; 6 rigid motions found, their eigenvalues
    0; the first bending pair against the Euler-Bernoulli free-free beam, beta L = 4.7300."""
    model, _ = _model(MPI.COMM_WORLD, 0.0, (8, 1, 1), degree=2)
    sym = model.natural_frequencies(n=6)
    gyro = model.natural_frequencies(n=6, gyroscopic=True)
    res = model.modes(n=6, damping=False)
    table = model.campbell([0.0], n=6)
    assert np.all(sym > 0.0)
    assert _rel(gyro, sym) < 1e-8
    assert _rel(res.frequencies, sym) < 1e-8
    assert _rel(np.sort(table.frequencies[0]), sym) < 1e-8
    assert res.rigid_dim == 6
    # a double 0 (lambda^2 = 0): round-off in Q^T K Q shows as its square root
    assert np.all(np.abs(res.rigid_eigenvalues) < 1e-5 * sym[0])
    serial, _ = _model(MPI.COMM_SELF, 0.0, (8, 1, 1), degree=2)
    assert _rel(serial.natural_frequencies(n=6), sym) < 1e-8
    # Euler-Bernoulli: w1 = (beta L)^2 (E I / (rho A))^(1/2) / L^2, I / A = H^2 / 12. A 3D
    # beam of L/H = 10 is lower by shear and rotary inertia, ~ (beta r)^2 (1 + E / (k G)) / 2
    # ~ 3 %; quadratic hexes, 8 along: 5 % band.
    w1 = 4.7300 ** 2 * np.sqrt(E * H ** 2 / 12.0 / RHO) / L ** 2
    assert abs(sym[0] - sym[1]) < 1e-6 * sym[0]  # the square section's bending pair
    assert 0.95 * w1 < sym[0] < 1.01 * w1


def test_spinning_free_body_routines():
    """Spinning at 100 rad/s about its long axis: natural_frequencies(gyroscopic=True),
    modes() and campbell() at that speed give the same elastic modes (1e-8), equal to a
    serial run's; the rigid eigenvalues are those of the rotating-frame equations: a
    translation along the axis at 0, the two across it at i Omega (a body at rest in the
    inertial frame), the rotation about the axis at the real Omega (no prestress)."""
    rate = 100.0
    model, _ = _model(MPI.COMM_WORLD, rate)
    gyro = model.natural_frequencies(n=6, gyroscopic=True)
    res = model.modes(n=6, damping=False)
    table = model.campbell([50.0, rate], n=6)
    assert np.all(gyro > 0.0)  # no rigid motion among them (they were -100, 0, 47.8, ...)
    assert _rel(res.frequencies, gyro) < 1e-8
    assert _rel(np.sort(table.frequencies[-1]), gyro) < 1e-8
    serial, _ = _model(MPI.COMM_SELF, rate)
    assert _rel(serial.natural_frequencies(n=6, gyroscopic=True), gyro) < 1e-8
    assert _rel(serial.modes(n=6, damping=False).frequencies, gyro) < 1e-8
    lam = res.rigid_eigenvalues
    assert res.rigid_dim == 6 and len(lam) == 6
    whirl = lam[np.abs(lam.imag - rate) < 1e-3 * rate]
    assert len(whirl) >= 2 and np.all(np.abs(whirl.real) < 1e-3 * rate)
    assert np.min(np.abs(lam)) < 1e-3 * rate
    assert np.any(np.abs(lam - rate) < 1e-6 * rate)
    # the symmetric solve has no rigid mode left either
    assert np.all(model.natural_frequencies(n=6) > 0.0)


def test_spinning_free_shaft_whirl():
    """A free square shaft spinning about its axis, against the rotating-frame closed forms.

    Bending (Euler-Bernoulli, z = v + i w): (d/dt + i Omega)^2 z + (EI / m) z'''' = 0, so a
    bending pair w_b at rest splits into w_b - Omega (forward whirl in the rotating frame) and
    w_b + Omega (backward). The 3D section also moves axially (u_x = -y v'), which feels
    neither Coriolis nor spin softening: the split is (1 - kappa) Omega with kappa that
    kinetic-energy fraction, (beta r)^2-sized (~2 % in theory, ~4 % on these coarse hexes):
    6 % band on the split, its mean w_b to 1e-4 (a second-order shift, Omega^2 / w_b).
    Torsion: a displacement across the axis only (up to the square's small warping), softened
    by -Omega^2 M: w_t(Omega) = (w_t^2 - Omega^2)^(1/2) (Coriolis couples it to the radial
    breathing at second order): 2e-6 (the spin moves it by 5e-5)."""
    rate = 100.0
    rest, _ = _model(MPI.COMM_WORLD, 0.0)
    w0 = rest.natural_frequencies(n=3)
    wb, wt = w0[0], w0[2]
    model, _ = _model(MPI.COMM_WORLD, rate)
    table = model.campbell([rate / 2, rate], n=3)
    f, whirl = table.frequencies[-1], table.whirl[-1]
    lo, hi = np.argmin(f), np.argsort(f)[1]
    assert abs(0.5 * (f[hi] - f[lo]) - rate) < 0.06 * rate
    assert abs(0.5 * (f[hi] + f[lo]) - wb) < 1e-4 * wb
    assert whirl[lo] == 1 and whirl[hi] == -1
    torsion = f[np.argsort(f)[2]]
    assert abs(torsion - np.sqrt(wt ** 2 - rate ** 2)) < 2e-6 * wt
    assert abs(torsion - wt) > 2e-5 * wt


def test_partly_constrained():
    """A body held axially on one end face (u_x = 0) keeps 3 rigid motions: the translations
    across the axis and the rotation about it; clamped fully, none. The held body's elastic
    modes are the same from the symmetric and the gyroscopic solve at rest."""
    model, body = _model(MPI.COMM_WORLD, 0.0)
    model.clamp(body, where=lambda x: np.isclose(x[0], 0.0), components=[0])
    system = model.system()
    rigid = rigid_subspace(system, 0.0)
    assert rigid is not None and rigid.dim == 3
    rigid.destroy()
    sym = model.natural_frequencies(n=4)
    assert np.all(sym > 0.0)
    assert _rel(model.natural_frequencies(n=4, gyroscopic=True), sym) < 1e-8
    held, hb = _model(MPI.COMM_WORLD, 0.0)
    held.clamp(hb, where=lambda x: np.isclose(x[0], 0.0))
    assert rigid_subspace(held.system(), 0.0) is None
