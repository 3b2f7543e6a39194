"""Direct factorizations that fail: MUMPS short of workspace (its analysis' estimate too small
for the pivoting a matrix needs; in parallel the pivot order, hence the need, may vary from
run to run) is factored again with a larger margin, not left to fail at the solve (a block
solve stopped with INFOG(1) = -3 on 2 ranks); any other failure is an error on every rank
that names the matrix, and leaves the solver able to factor the next matrix."""

import numpy as np
import pytest
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import compat
from dolfinx_mbs.petsc_options import MUMPS_WORKSPACE_ERRORS, direct_lu, factorize

PREFIX = "t_factor_"
N = 600



def zero_diagonal(n=N, singular=False, diagonal=0.0):
    """An n x n matrix with a zero diagonal (1 above it, -1 below, a weak scattered entry in
    each row), assembled on the world's ranks, and its dense copy. Factored without MUMPS's
    column permutation and with strict partial pivoting, every pivot is delayed: the
    factorization outgrows a workspace estimated with no margin. ``singular``: the last row
    repeats the first; ``diagonal``: the diagonal's value instead."""
    A = PETSc.Mat().createAIJ([n, n], comm=MPI.COMM_WORLD)
    A.setPreallocationNNZ(4)
    dense = np.zeros((n, n))
    for i in range(n):
        dense[i, i] = diagonal
        if i + 1 < n:
            dense[i, i + 1] = 1.0
        if i > 0:
            dense[i, i - 1] = -1.0
        j = (i * 7919) % n
        if j != i:
            dense[i, j] += 1e-3
    if singular:
        dense[n - 1] = dense[0]
    r0, r1 = A.getOwnershipRange()
    for i in range(r0, r1):
        cols = np.flatnonzero(dense[i]).astype(PETSc.IntType)
        A.setValues([i], cols, dense[i, cols])
    A.assemble()
    return A, dense


def starved_solver(database, A):
    """A MUMPS LU of ``A`` under :data:`PREFIX` with no workspace margin (ICNTL(14) = 0), no
    column permutation (ICNTL(6) = 0), AMD ordering and strict partial pivoting (CNTL(1) =
    1): options in the database, as a user would give them."""
    for key, value in {"mat_mumps_icntl_14": 0, "mat_mumps_icntl_6": 0, "mat_mumps_icntl_7": 0,
                       "mat_mumps_icntl_8": 0, "mat_mumps_cntl_1": 1.0}.items():
        database[PREFIX + key] = value
    ksp = PETSc.KSP().create(MPI.COMM_WORLD)
    direct_lu(ksp)
    ksp.setOptionsPrefix(PREFIX)
    ksp.setFromOptions()
    ksp.setOperators(A)
    return ksp


def test_the_starved_factorization_fails_without_the_retry(database):
    """The case is real: PETSc's own set-up leaves MUMPS's workspace error (a later solve
    returns no solution)."""
    A, _ = zero_diagonal()
    ksp = starved_solver(database, A)
    ksp.setUp()
    info = ksp.getPC().getFactorMatrix().getMumpsInfog(1)
    assert info in MUMPS_WORKSPACE_ERRORS, info
    assert ksp.getConvergedReason() == PETSc.KSP.ConvergedReason.DIVERGED_PCSETUP_FAILED
    ksp.destroy()
    A.destroy()


def test_workspace_shortfall_factored_again_and_solved(database):
    """factorize: the factorization succeeds with a larger margin (the database's 0 overridden
    for the retry only), a solve and a block solve (MatMatSolve, the one that stopped with
    INFOG(1) = -3) match a dense LU of the same matrix, the next numeric factorization keeps
    the margin, and the database is left as it was."""
    A, dense = zero_diagonal()
    ksp = starved_solver(database, A)
    before = database.getAll()
    assert factorize(ksp, "the test matrix") == 0
    assert database.getAll() == before
    F = ksp.getPC().getFactorMatrix()
    assert F.getMumpsInfog(1) >= 0
    margin = F.getMumpsIcntl(14)
    assert margin >= 40
    r0, r1 = A.getOwnershipRange()
    # a solve against numpy's dense LU
    b = A.createVecLeft()
    rhs = np.cos(np.arange(N))
    b.array[:] = rhs[r0:r1]
    x = b.duplicate()
    ksp.solve(b, x)
    ref = np.linalg.solve(dense, rhs)
    assert ksp.getConvergedReason() > 0
    assert np.allclose(x.array, ref[r0:r1], rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    # three right-hand sides at once
    B = PETSc.Mat().createDense([[r1 - r0, N], [None, 3]], comm=MPI.COMM_WORLD)
    B.setUp()
    cols = np.stack([rhs, np.sin(np.arange(N)), np.ones(N)], axis=1)
    B.getDenseArray()[:] = cols[r0:r1]
    B.assemble()
    X = B.duplicate()
    compat.mat_solve(ksp, B, X)
    refs = np.linalg.solve(dense, cols)
    assert np.allclose(X.getDenseArray(), refs[r0:r1], atol=1e-10 * np.abs(refs).max())
    # new values on the same pattern: a numeric factorization with the margin kept
    A.scale(2.0)
    ksp.setOperators(A)
    assert factorize(ksp, "the test matrix") == 0
    assert ksp.getPC().getFactorMatrix().getMumpsIcntl(14) == margin
    ksp.solve(b, x)
    assert np.allclose(x.array, ref[r0:r1] / 2.0, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    for obj in (B, X, b, x, ksp, A):
        obj.destroy()


def test_singular_matrix_named_on_every_rank_and_solver_reusable(database):
    """A singular matrix: without ``what`` the failure is returned (negative), with it a
    RuntimeError on every rank naming the matrix and MUMPS's INFOG(1); the same solver then
    factors a regular matrix of another pattern and solves it right."""
    S, _ = zero_diagonal(200, singular=True)
    ksp = PETSc.KSP().create(MPI.COMM_WORLD)
    direct_lu(ksp)
    ksp.setOptionsPrefix(PREFIX)
    ksp.setFromOptions()
    ksp.setOperators(S)
    assert factorize(ksp) < 0
    ksp.setOperators(S)
    with pytest.raises(RuntimeError, match=r"factorization of the singular one failed "
                                           r"\(MUMPS INFOG\(1\) = -10"):
        factorize(ksp, "the singular one")
    # the solver after the failure: a regular matrix, another pattern
    A, dense = zero_diagonal(201)
    ksp.reset()
    ksp.setOperators(A)
    assert factorize(ksp, "the regular one") == 0
    b = A.createVecLeft()
    r0, r1 = A.getOwnershipRange()
    rhs = np.linspace(-1.0, 2.0, 201)
    b.array[:] = rhs[r0:r1]
    x = b.duplicate()
    ksp.solve(b, x)
    assert np.allclose(x.array, np.linalg.solve(dense, rhs)[r0:r1], atol=1e-10)
    for obj in (b, x, ksp, A, S):
        obj.destroy()


def test_krylov_solver_passes_through():
    """A Krylov solver (no factorization): factorize is its set-up, nothing to check; the
    solve after it matches numpy's."""
    A, dense = zero_diagonal(50, diagonal=10.0)
    ksp = PETSc.KSP().create(MPI.COMM_WORLD)
    ksp.setType("gmres")
    ksp.getPC().setType("jacobi")
    ksp.setTolerances(rtol=1e-12)
    ksp.setOperators(A)
    assert factorize(ksp, "the diagonally dominant matrix") == 0
    b = A.createVecLeft()
    b.set(1.0)
    x = b.duplicate()
    ksp.solve(b, x)
    r0, r1 = A.getOwnershipRange()
    assert np.allclose(x.array, np.linalg.solve(dense, np.ones(50))[r0:r1], atol=1e-10)
    for obj in (b, x, ksp, A):
        obj.destroy()


def test_shift_and_invert_eigensolve_factored_again(database):
    """SLEPc's shift-and-invert factors inside its set-up: with the starved MUMPS options on
    its ST's solver, ``solve_in_words`` factors again and the eigenvalues nearest 0 equal
    numpy's dense ones of the same matrix (the plain solve fails: it is the case)."""
    from slepc4py import SLEPc

    from dolfinx_mbs.petsc_options import solve_in_words

    A, dense = zero_diagonal(300)

    def eps_of(prefix):
        for key, value in {"mat_mumps_icntl_14": 0, "mat_mumps_icntl_6": 0,
                           "mat_mumps_icntl_7": 0, "mat_mumps_icntl_8": 0,
                           "mat_mumps_cntl_1": 1.0}.items():
            database[prefix + "st_" + key] = value
        eps = SLEPc.EPS().create(MPI.COMM_WORLD)
        eps.setOperators(A)
        eps.setProblemType(SLEPc.EPS.ProblemType.NHEP)
        eps.setDimensions(nev=4)
        eps.setTarget(0.0)
        eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
        st = eps.getST()
        st.setType(SLEPc.ST.Type.SINVERT)
        direct_lu(st.getKSP())
        eps.setOptionsPrefix(prefix)
        eps.setFromOptions()
        return eps

    plain = eps_of("t_plain_")
    with pytest.raises((PETSc.Error, SystemError)):
        plain.solve()
    plain.destroy()
    eps = eps_of(PREFIX)
    solve_in_words(eps, "the test eigensolve")
    assert eps.getConverged() >= 4
    lam = np.array([complex(eps.getEigenvalue(i)) for i in range(4)])
    ref = np.linalg.eigvals(dense)
    ref = ref[np.argsort(np.abs(ref))][:8]
    for x in lam:
        assert np.min(np.abs(ref - x)) < 1e-8 * np.abs(ref).max(), (x, ref)
    eps.destroy()
    A.destroy()
