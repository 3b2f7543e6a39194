"""A Campbell sweep that carries its solver from speed to speed (dolfinx_mbs.campbell.pencil)
against independent solves: at every speed a fresh SLEPc PEP on the system's own pencil.

The sweep forms the pencil as K_0 + W^2 K_2, G_0 + W G_1, keeps one factorization object
(numeric refactorization per speed) and solves each speed after the first by block
shift-and-invert from the last speed's eigenvectors; none of that is in the reference, which
asks the system for its pencil at the speed and SLEPc for its eigenpairs from scratch.
"""

import importlib
import logging

import numpy as np
import pytest
from mpi4py import MPI
from petsc4py import PETSc

import dolfinx_mbs as mbs
from dolfinx_mbs.campbell import SubspaceSolver, SweepPencil
from tests.models.shaft import shaft


def independent(model, body, speeds, m, shift=0.0):
    """The m pairs nearest ``shift`` at each speed, fresh SLEPc solver and pencil per speed."""
    system = model.system()
    out = []
    for sp in speeds:
        K, G, M = system.pencil(0.0, m, "gyroscopic", [body.frame.at_rate(sp).state(0.0)])
        lam, vecs = mbs.modal.gyroscopic_modes(K, G, M, m, shift=shift)
        for xr, xi in vecs:
            xr.destroy()
            xi.destroy()
        out.append(mbs.modal.signed_frequencies(lam))
    return out


def assert_in_reference(table, ref, rtol=1e-8):
    """Each branch's frequency at each speed is one of the independent solve's, to 1e-8 of
    the largest at that speed. (Near a critical speed the forward branch's frequency is small
    and its error is that of the pencil's round-off, which is not the same in the combined
    pencil as in the assembled one: at 220 rad/s, w = 8.13 rad/s here, they differ by 3e-7
    rad/s, 4e-8 of w and 5e-11 of the largest frequency; independent solves of the assembled
    pencil agree to 1e-10 of w there, at tol 1e-10 to 1e-14.)"""
    for row, r in zip(table.frequencies, ref):
        for f in row:
            d = np.min(np.abs(r - f)) / np.abs(r).max()
            assert d <= rtol, (f, r, d)


@pytest.mark.parametrize("shift", [0.0, 25.0])
def test_sweep_equals_independent_solves(shift, caplog):
    """Through the first critical speed (w1 = 211 rad/s; K_eff indefinite above it) and with
    a nonzero shift (P(sigma) not symmetric: LU instead of LDL^T)."""
    model, body = shaft(MPI.COMM_WORLD, nx=8)
    speeds = np.linspace(20.0, 420.0, 9)
    n, n_extra = 4, 4
    with caplog.at_level(logging.INFO, logger="dolfinx_mbs.campbell"):
        table = model.campbell(speeds, n=n, n_extra=n_extra, shift=shift)
    ref = independent(model, body, speeds, n + n_extra, shift)
    assert_in_reference(table, ref)
    # the speeds after the first were solved by the carried block solver, not SLEPc again
    msg = [r.getMessage() for r in caplog.records if "by block solves" in r.getMessage()]
    assert msg and int(msg[-1].split(",")[1].split()[0]) >= len(speeds) - 2, msg


def test_compressed_space_and_stale_factorization(monkeypatch):
    """The space cut to the last two speeds' Ritz vectors whenever it exceeds 24 columns, and
    one factorization of P kept over speeds (checked residuals scaled by the norm ratio): the
    same frequencies as independent solves, with fewer factorizations than speeds."""
    model, body = shaft(MPI.COMM_WORLD, nx=8)
    speeds = np.linspace(20.0, 420.0, 9)
    made = []

    def solver(*args, **kwargs):
        made.append(SubspaceSolver(*args, **kwargs, max_dim=24, keep=2))
        return made[-1]

    # the sweep's module, where campbell() looks the solver up
    monkeypatch.setattr(importlib.import_module("dolfinx_mbs.campbell.sweep"), "SubspaceSolver",
                        solver)
    table = model.campbell(speeds, n=4, n_extra=4)
    assert_in_reference(table, independent(model, body, speeds, 8))
    stats = made[0].stats
    assert stats["compressions"] >= 3, stats
    assert stats["block"] == len(speeds) - 1, stats
    assert stats["factorizations"] < len(speeds) - 1, stats


def test_combined_pencil_equals_the_systems():
    """K_0 + W^2 K_2 and G_0 + W G_1 at a speed not used to make them equal the system's
    pencil there (1e-12), and a pencil that is not of that form is asked at every speed."""
    model, body = shaft(MPI.COMM_WORLD, nx=4)
    system = model.system()

    def pencil(sp):
        return system.pencil(0.0, 2, "gyroscopic", [body.frame.at_rate(sp).state(0.0)])

    sp = SweepPencil(pencil, np.array([0.0, 100.0, 300.0]))
    assert sp.combined
    K, G, M = sp(217.0)
    Ks, Gs, Ms = pencil(217.0)
    for X, Y in ((K, Ks), (G, Gs), (M, Ms)):
        D = X.copy()
        D.axpy(-1.0, Y, structure=PETSc.Mat.Structure.DIFFERENT_NONZERO_PATTERN)
        assert D.norm(PETSc.NormType.FROBENIUS) <= 1e-12 * Y.norm(PETSc.NormType.FROBENIUS)
        D.destroy()
    sp.destroy()

    def cubic(s):  # a stiffness with a term in W^3: the check at the third speed fails
        K, G, M = pencil(s)
        K.shift(1e-3 * s ** 3)
        return K, G, M

    sp = SweepPencil(cubic, np.array([0.0, 100.0, 300.0]))
    assert not sp.combined
    assert sp(217.0)[0] is pencil(0.0)[0]  # the system's own matrix object


def test_shifted_factor_leaves_ldlt_when_the_stiffness_turns_unsymmetric():
    """The sweep's factor at shift 0 starts as LDL^T on a symmetric K (a bearing's
    cross-coupling is 0 at rest) and must factor the K of a later speed with k_xy = -k_yx
    as it is: its solves against numpy's dense solve of the same K (LDL^T reads one
    triangle: it solved the symmetric part instead)."""
    from dolfinx_mbs.campbell.subspace import ShiftedFactor

    n = 40
    rng = np.random.default_rng(7)
    S = rng.standard_normal((n, n))
    sym = S @ S.T + n * np.eye(n)                       # symmetric positive definite
    skew = np.zeros((n, n))
    for i in range(0, n - 1, 2):                        # k_xy = -k_yx pairs
        skew[i, i + 1], skew[i + 1, i] = 5.0, -5.0

    def aij(dense):
        A = PETSc.Mat().createAIJ([n, n], comm=MPI.COMM_WORLD)
        A.setPreallocationNNZ(n)
        r0, r1 = A.getOwnershipRange()
        for i in range(r0, r1):
            A.setValues([i], np.arange(n, dtype=PETSc.IntType), dense[i])
        A.assemble()
        return A

    G, M = aij(np.zeros((n, n))), aij(np.eye(n))
    factor = ShiftedFactor(MPI.COMM_WORLD, 0.0)
    rhs = rng.standard_normal((n, 3))
    for dense in (sym, sym + skew, sym + 2 * skew):
        K = aij(dense)
        factor.update(K, G, M)
        r0, r1 = K.getOwnershipRange()
        X = factor.solve(rhs[r0:r1])
        assert np.allclose(X, np.linalg.solve(dense, rhs)[r0:r1], rtol=1e-10, atol=1e-12)
        K.destroy()
    assert not factor.symmetric
    factor.destroy()
    G.destroy()
    M.destroy()
