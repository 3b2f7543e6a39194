"""Unstable spectra hold their fastest modes (issue 27, item 3): at a divergent state
natural_frequencies, modes and campbell report the unstable modes first, fastest growth first,
then the lowest stable ones (:mod:`dolfinx_mbs.modal`), and the command line says the state is
unstable.

References: the spinning rod's closed form (docs/theory.md section 6, axial motion only: no Coriolis
coupling), w_n^2 = (E / rho) ((2n - 1) pi / 2L)^2 - Omega^2, spun at 20000 rad/s above its first
three axial frequencies (3219, 9657, 16095 rad/s); a beam spun about an axis across it (Coriolis
coupling) against all the eigenvalues of its reduced pencil, computed densely on rank 0, and
against the divergence check of a run (:mod:`dolfinx_mbs.integrate.stability`: same state, same
operators).
"""

import json
import pathlib
import warnings

import numpy as np
import scipy.linalg
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import cli
from dolfinx_mbs.cli.main import UNSTABLE
from dolfinx_mbs.integrate.dense.operators import gather_matrix
from dolfinx_mbs.integrate.stability import InstabilityWarning
from tests.models import ROOT
from tests.models.rodmodel import ROD, rod_exact, rod_mesh

comm = MPI.COMM_WORLD
SPIN = 20000.0


def rod(rate):
    """Seed 003's rod, axial motion only (transverse components held), spun about z."""
    mesh = rod_mesh(comm, 20)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=ROD["E"], nu=0.0, density=ROD["rho"]),
                    mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=rate), degree=2)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=[1, 2])
    return model


def test_rod_spun_past_three_frequencies():
    """The three divergent modes -19736, -17538, -11876 rad/s first (fastest first), then the
    lowest stable ones 10392, 20954, in natural_frequencies (with and without Coriolis), modes
    (growth rates) and a Campbell point; shift-and-invert about 0 alone finds 10392, -11876 and
    -17538 first and misses -19736."""
    model = rod(SPIN)
    _, exact = rod_exact(SPIN, 5)
    w0 = np.sqrt(exact**2 * np.sign(exact) + SPIN**2)   # the frequencies at rest
    order = np.argsort(np.where(exact < 0, exact, np.inf))[:3].tolist() + [3, 4]
    expected, rest = exact[order], w0[order]

    def close(w, n):
        # w^2 = w0^2 - Omega^2: the mesh's error is that of w0^2 (20 quadratic elements:
        # 3.4e-4 for the 5th mode)
        return np.all(np.abs(np.sign(w) * w**2 - np.sign(expected[:n]) * expected[:n] ** 2)
                      < 5e-4 * rest[:n] ** 2)

    for n in (1, 3, 5):
        w = model.natural_frequencies(n=n)
        assert close(w, n), (n, w, expected)
    gyro = model.natural_frequencies(n=5, gyroscopic=True)
    assert np.allclose(gyro, model.natural_frequencies(n=5), rtol=1e-8, atol=0)
    res = model.modes(n=5, damping=False)
    assert list(res.unstable) == [True] * 3 + [False] * 2
    assert close(-res.growth[:3], 3)
    assert np.allclose(res.frequencies, gyro, rtol=1e-8)
    table = model.campbell([SPIN], n=5)
    assert np.allclose(table.frequencies[0], gyro, rtol=1e-8), (table.frequencies, gyro)
    assert list(table.stable[0]) == [False] * 3 + [True] * 2


def beam(rate):
    """A 1 m aluminium beam (5 cm square, first bending 258 rad/s) along x, clamped at x = 0,
    spun about y: in-plane (x, z) bending and axial motion softened, coupled by Coriolis."""
    mesh = dmesh.create_box(comm, [np.zeros(3), np.array([1.0, 0.05, 0.05])], [10, 1, 1])
    body = mbs.Body(mesh, mbs.materials.Isotropic(E=70e9, nu=0.3, density=2700.0),
                    mbs.frames.ConstantSpin(axis=(0, 1, 0), rate=rate))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.apply_load(body, point=(1.0, 0.05, 0.05),
                     force=lambda t: (0.0, 0.0, 1e-3 if t < 1e-4 else 0.0))
    return model


def dense_spectrum(model, rate):
    """All eigenvalues of the reduced pencil on rank 0 (broadcast): the representatives of the
    quadratic problem (Im > 0, or the positive real root) and those of (K, M)."""
    system = model.system()
    K, G, M = system.pencil(0.0, 1, "gyroscopic")
    Kd, Gd, Md = (gather_matrix(X, comm) for X in (K, G, M))
    out = None
    if comm.rank == 0:
        n = Kd.shape[0]
        A = np.block([[np.zeros((n, n)), np.eye(n)], [-Kd, -Gd]])
        B = np.block([[np.eye(n), np.zeros((n, n))], [np.zeros((n, n)), Md]])
        lam = scipy.linalg.eigvals(A, B)
        lam = lam[mbs.modal.representatives(lam, np.abs(lam).max())]
        out = (lam, scipy.linalg.eigh(Kd, Md, eigvals_only=True))
    return comm.bcast(out, root=0)


def reference_order(lam, n):
    """The documented order, written out: unstable roots (Re > 1e-6 abs) by growth, fastest
    first, then the stable ones nearest 0 by signed frequency."""
    grow = lam.real > 1e-6 * np.abs(lam)
    up = lam[grow][np.argsort(-lam[grow].real)][:n]
    st = lam[~grow][np.argsort(np.abs(lam[~grow]))][: n - len(up)]
    st = st[np.argsort(st.imag)]
    return np.concatenate([up, st])


def signed(lam):
    return np.where(np.abs(lam.imag) <= 1e-8 * np.abs(lam), -lam.real, lam.imag)


def test_beam_across_the_spin_against_dense_and_the_run():
    """Spun at 6000 rad/s about y (two divergent modes without Coriolis coupling, -5954 and
    -4104 rad/s, and two with it, rates 3928 and 2544 1/s; a stable one at 714 rad/s, nearer 0
    than both): the fastest growth is the first mode of natural_frequencies (symmetric:
    -(-min eig(K, M))^(1/2); with Coriolis: the largest real root), of modes() and of a Campbell
    point, also for n = 1 and 2, equal to the dense spectrum's (1e-8 symmetric, 1e-6 quadratic:
    the roots far from the shift-and-invert targets) and to the divergence check's rate of a
    run at the same state (1e-6); the list is the dense spectrum's unstable roots by growth,
    then its lowest stable frequencies."""
    rate = 6000.0
    model = beam(rate)
    lam, sym = dense_spectrum(model, rate)
    ref_sym = np.sign(sym) * np.sqrt(np.abs(sym))
    assert np.sum(sym < 0) == 2 and np.sum(lam.real > 1e-6 * np.abs(lam)) == 2
    for n in (1, 2, 4):
        w_sym = model.natural_frequencies(n=n)
        assert np.allclose(w_sym, ref_sym[:n], rtol=1e-8), (n, w_sym, ref_sym[:n])
        ref = signed(reference_order(lam, n))
        gyro = model.natural_frequencies(n=n, gyroscopic=True)
        assert np.allclose(gyro, ref, rtol=1e-6), (n, gyro, ref)
    res = model.modes(n=4, damping=False)
    assert np.allclose(res.eigenvalues, reference_order(lam, 4), rtol=1e-6)
    assert list(res.unstable) == [True, True, False, False]
    fastest = res.growth[0]
    table = model.campbell([rate], n=4)
    assert abs(table.growth[0, 0] - fastest) < 1e-6 * fastest
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InstabilityWarning)
        r = model.integrate(t_end=2e-5, dt=1e-5, progress=False)
    assert any(issubclass(c.category, InstabilityWarning) for c in caught)
    (found,) = r.instabilities
    assert abs(found.rate - fastest) < 1e-6 * fastest, (found.rate, fastest)


def test_command_line_unstable(tmp_path_factory):
    """``run`` of seed 003's rod case spun at 20000 rad/s: the results as usual (w1 the fastest
    divergence, -19736 rad/s, to 1e-3), exit status 3 and the JSON naming the imaginary ones;
    at 300 rad/s, 0."""
    d = pathlib.Path(comm.bcast(str(tmp_path_factory.mktemp("cli")) if comm.rank == 0
                                else None))
    case = d / "rod.toml"   # seed 003's case without its static analysis (unstable there)
    if comm.rank == 0:
        text = (ROOT / "demos" / "cases" / "seed003_rod.toml").read_text()
        head, tail = text.split("[analysis.static]")
        case.write_text(head + "[analysis.frequencies]" + tail.split("[analysis.frequencies]")[1])
    comm.Barrier()
    case = str(case)
    code = cli.main(["run", case, "--set", f"parameters.spin={SPIN}", "--json",
                     str(d / "unstable.json"), "--quiet"])
    assert code == UNSTABLE == 3
    comm.Barrier()
    r = json.loads((d / "unstable.json").read_text())
    _, exact = rod_exact(SPIN, 3)
    assert r["status"] == "ok"
    w1 = r["results"]["frequencies"]["w1"]
    assert abs(w1 / exact[0] - 1) < 1e-3, (w1, exact)
    assert sorted(r["unstable"]) == ["frequencies.w1", "frequencies.w2", "frequencies.w3"]
    assert cli.main(["run", case, "--set", "parameters.spin=300", "--quiet"]) == 0
