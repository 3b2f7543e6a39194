"""The quadratic eigensolve when a rank owns no row of the matrices (a Maggi-reduced system whose
rank holds only dependent dofs): SLEPc's final normalization of the eigenvectors failed in
LAPACK (lascl, info = -9) on that rank. On any rank count, the first rank here owns no row;
the frequencies equal the closed form of uncoupled gyroscopic pairs, and the eigenvectors,
mapped back to the matrices' layout, satisfy the pencil's equations."""

import numpy as np
import pytest
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.modal import gyroscopic_modes
from dolfinx_mbs.modal.eigen import reused_gyroscopic_modes
from dolfinx_mbs.modal.spread import SpreadRows

K_PAIR = np.array([4.0, 9.0, 25.0, 49.0, 121.0, 169.0])     # stiffness of each pair's two dofs
G_PAIR = np.array([1.0, 0.5, 3.0, 0.2, 2.0, 7.0])           # each pair's gyroscopic coupling


def pencil(comm, scale=1.0, k_pair=K_PAIR, g_pair=G_PAIR):
    """K = diag(k_j, k_j), G = [[0, -g_j], [g_j, 0]] per pair, M = I; rank 0 owns no row, the
    others share the rows."""
    N = 2 * len(k_pair)
    size, rank = comm.size, comm.rank
    counts = [0] + [N // (size - 1) + (r < N % (size - 1)) for r in range(size - 1)] \
        if size > 1 else [N]
    lo = sum(counts[:rank])
    n = counts[rank]
    mats = []
    for kind in "KGM":
        A = PETSc.Mat().createAIJ(((n, N), (n, N)), nnz=2, comm=comm)
        for i in range(lo, lo + n):
            j = i // 2
            if kind == "K":
                A.setValue(i, i, scale * k_pair[j])
            elif kind == "M":
                A.setValue(i, i, 1.0)
            else:
                A.setValue(i, i + 1 if i % 2 == 0 else i - 1,
                           -g_pair[j] if i % 2 == 0 else g_pair[j])
        A.assemble()
        mats.append(A)
    return mats


def closed_form(scale=1.0, n=4, k_pair=K_PAIR, g_pair=G_PAIR):
    """lambda = i w, w^2 -+ g w - k = 0: the n lowest positive w."""
    k, g = scale * k_pair, g_pair
    w = np.concatenate([(g + np.sqrt(g * g + 4 * k)) / 2, (-g + np.sqrt(g * g + 4 * k)) / 2])
    return np.sort(w)[:n]


def residual(K, G, M, lam, xr, xi):
    """|(lam^2 M + lam G + K) x| / |K| |x| for x = xr + i xi, in the matrices' layout."""
    out = []
    for part in (xr, xi):
        y = K.createVecLeft()
        out.append([y.copy() for _ in range(3)])
        K.mult(part, out[-1][0])
        G.mult(part, out[-1][1])
        M.mult(part, out[-1][2])
    (kr, gr, mr), (ki, gi, mi) = out
    a, b = lam.real, lam.imag
    l2r, l2i = a * a - b * b, 2 * a * b
    re = kr.copy()
    re.axpy(a, gr)
    re.axpy(-b, gi)
    re.axpy(l2r, mr)
    re.axpy(-l2i, mi)
    im = ki.copy()
    im.axpy(a, gi)
    im.axpy(b, gr)
    im.axpy(l2r, mi)
    im.axpy(l2i, mr)
    num = np.hypot(re.norm(), im.norm())
    den = K.norm(PETSc.NormType.INFINITY) * np.hypot(xr.norm(), xi.norm())
    for v in (re, im, *out[0], *out[1]):
        v.destroy()
    return num / den


def test_a_rank_without_rows_gets_the_closed_form():
    comm = MPI.COMM_WORLD
    K, G, M = pencil(comm)
    assert comm.allreduce(K.getLocalSize()[0], op=MPI.MIN) == 0 or comm.size == 1
    lam, vecs = gyroscopic_modes(K, G, M, 4)
    assert np.allclose(lam.real, 0.0, atol=1e-9 * np.abs(lam).max())
    np.testing.assert_allclose(lam.imag, closed_form(), rtol=1e-10)
    for lm, (xr, xi) in zip(lam, vecs):
        assert xr.getLocalSize() == K.getLocalSize()[0]
        assert residual(K, G, M, lm, xr, xi) < 1e-10
        xr.destroy()
        xi.destroy()
    for A in (K, G, M):
        A.destroy()


def test_a_kept_solver_follows_new_values():
    """The Campbell sweep's reuse: a PEP kept across calls refreshes its spread copies from
    matrices of the same pattern and new values (the stiffness scaled by 4)."""
    comm = MPI.COMM_WORLD
    pep = None
    for scale in (1.0, 4.0):
        K, G, M = pencil(comm, scale)
        lam, vecs, pep = reused_gyroscopic_modes(K, G, M, 3, pep)
        np.testing.assert_allclose(lam.imag, closed_form(scale, 3), rtol=1e-10)
        for lm, (xr, xi) in zip(lam, vecs):
            assert residual(K, G, M, lm, xr, xi) < 1e-10
            xr.destroy()
            xi.destroy()
        for A in (K, G, M):
            A.destroy()
    pep.destroy()


def test_far_pairs_of_an_ill_conditioned_pencil_are_optional():
    """A Campbell sweep asks for pairs beyond those it reports, to seed its subspace; on a
    pencil whose stiffness spans 1e12 the pairs far from the shift converge to a backward error
    above the bound (1e-7), in a number that varies with the rank count and MUMPS's rounding
    (a stiff rotor's critical speed map failed on 2 ranks in 3 of 20 runs). Asked for 8 pairs
    with all of them required, the solve fails; with 4 required, it returns the accurate ones:
    the two slow gyroscopic pairs' four frequencies."""
    comm = MPI.COMM_WORLD
    k = np.array([4.0, 9.0, 1e12, 2e12, 3e12, 5e12, 7e12, 1e13])
    g = np.array([1.0, 0.5, 3e5, 2e5, 2e6, 7e5, 1e6, 3e6])
    K, G, M = pencil(comm, k_pair=k, g_pair=g)
    with pytest.raises(RuntimeError, match="SLEPc"):
        reused_gyroscopic_modes(K, G, M, 8, None)
    with pytest.raises(ValueError, match="least must be a positive integer, got 0"):
        reused_gyroscopic_modes(K, G, M, 8, None, least=0)
    lam, vecs, pep = reused_gyroscopic_modes(K, G, M, 8, None, least=4)
    assert 4 <= len(lam) <= 8
    low = np.sort(lam.imag)[:4]
    np.testing.assert_allclose(low, closed_form(n=4, k_pair=k, g_pair=g), rtol=1e-5)
    for xr, xi in vecs:
        xr.destroy()
        xi.destroy()
    pep.destroy()
    for A in (K, G, M):
        A.destroy()


@pytest.mark.skipif(MPI.COMM_WORLD.size == 1, reason="one rank owns every row")
def test_spread_only_when_a_rank_is_empty():
    """With an empty rank, every rank of the copies owns rows and the global numbering is kept
    (the copy's product, mapped back, is the matrix's); matrices with rows on every rank are
    given to the solver as they are."""
    comm = MPI.COMM_WORLD
    K, G, M = pencil(comm)
    rows = SpreadRows(K)
    assert rows.active
    (Gs,) = rows.mats([G])
    assert comm.allreduce(Gs.getLocalSize()[0], op=MPI.MIN) > 0
    x, y = K.createVecRight(), rows.create_vec(K)
    for v in (x, y):
        lo, hi = v.getOwnershipRange()
        v.array[:] = np.sin(np.arange(lo, hi, dtype=float))
    Gx, Gy = K.createVecLeft(), rows.create_vec(K)
    G.mult(x, Gx)
    Gs.mult(y, Gy)
    Gy = rows.back(Gy)
    assert Gx.norm() > 1.0
    assert np.array_equal(Gy.array, Gx.array)
    rows.destroy()
    full = PETSc.Mat().createAIJ(((None, 12), (None, 12)), nnz=1, comm=comm)
    full.setUp()
    full.assemble()
    assert not SpreadRows(full).active
    for A in (K, G, M, x, y, Gx, Gy, full):
        A.destroy()
