"""Natural frequencies with SLEPc: the symmetric pencil (K, M) and the gyroscopic quadratic
problem lambda^2 M + lambda G + K (rad/s throughout).

Solvers use shift-and-invert about a real target with a direct factorization (MUMPS when
PETSc has it) and read options with the prefix ``mbs_modal_`` (e.g. ``-mbs_modal_eps_tol``).

Frequencies are reported signed: a non-negative value is a frequency; a negative value -s
marks a divergent (statically unstable) mode, eigenvalue omega^2 = -s^2, growth rate s.
"""

from __future__ import annotations

import logging

import numpy as np
from petsc4py import PETSc
from slepc4py import SLEPc

__all__ = ["generalized_frequencies", "gyroscopic_frequencies"]

log = logging.getLogger(__name__)

PREFIX = "mbs_modal_"


def _direct_st(st: SLEPc.ST) -> None:
    st.setType(SLEPc.ST.Type.SINVERT)
    ksp = st.getKSP()
    ksp.setType(PETSc.KSP.Type.PREONLY)
    pc = ksp.getPC()
    pc.setType(PETSc.PC.Type.LU)
    try:
        pc.setFactorSolverType("mumps")
    except PETSc.Error:  # pragma: no cover - builds without MUMPS
        pass


def _check(n: int) -> int:
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return int(n)


def generalized_frequencies(K: PETSc.Mat, M: PETSc.Mat, n: int, shift: float = 0.0,
                            tol: float = 1e-12) -> np.ndarray:
    """The ``n`` eigenvalues of K x = w^2 M x nearest ``shift`` (in w^2), as signed w, ascending.

    Args:
        K: symmetric stiffness (may be indefinite).
        M: symmetric positive definite mass.
        n: number of frequencies.
        shift: target of shift-and-invert in w^2 units (rad^2/s^2); must not be an eigenvalue.
        tol: relative residual tolerance.
    """
    n = _check(n)
    eps = SLEPc.EPS().create(K.getComm())
    eps.setOperators(K, M)
    eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
    eps.setDimensions(nev=n)
    eps.setTarget(float(shift))
    eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
    eps.setTolerances(tol=tol, max_it=1000)
    _direct_st(eps.getST())
    eps.setOptionsPrefix(PREFIX)
    eps.setFromOptions()
    eps.solve()
    nconv = eps.getConverged()
    if nconv < n:
        raise RuntimeError(f"SLEPc converged {nconv} of the {n} requested eigenpairs "
                           f"(reason {eps.getConvergedReason()})")
    lam = np.array([eps.getEigenvalue(i).real for i in range(nconv)])
    eps.destroy()
    lam = np.sort(lam[np.argsort(np.abs(lam - shift))[:n]])
    return np.sign(lam) * np.sqrt(np.abs(lam))


def gyroscopic_frequencies(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, n: int,
                           shift: float = 0.0, tol: float = 1e-10) -> np.ndarray:
    """The ``n`` lowest frequencies of (lambda^2 M + lambda G + K) x = 0, lambda = +/- i w.

    Stable modes give conjugate pairs +/- i w; ``w`` is returned once per pair. A real pair
    +/- s (divergence) is returned as -s; a complex pair with a real part (flutter) is logged
    and its imaginary part returned.

    Args:
        K, G, M: stiffness (symmetric), gyroscopic (+ damping), mass.
        n: number of frequencies.
        shift: real target of shift-and-invert (in lambda units, 1/s).
    """
    n = _check(n)
    pep = SLEPc.PEP().create(K.getComm())
    pep.setOperators([K, G, M])
    pep.setProblemType(SLEPc.PEP.ProblemType.GENERAL)
    pep.setDimensions(nev=2 * n)
    pep.setTarget(float(shift))
    pep.setWhichEigenpairs(SLEPc.PEP.Which.TARGET_MAGNITUDE)
    pep.setTolerances(tol=tol, max_it=1000)
    # the coefficients differ by omega^2 ~ 1e8 and more: scale lambda, or TOAR stagnates
    pep.setScale(SLEPc.PEP.Scale.SCALAR)
    _direct_st(pep.getST())
    pep.setOptionsPrefix(PREFIX)
    pep.setFromOptions()
    pep.solve()
    nconv = pep.getConverged()
    if nconv < 2 * n:
        raise RuntimeError(f"SLEPc converged {nconv} of the {2 * n} requested eigenvalues "
                           f"(reason {pep.getConvergedReason()})")
    lam = np.array([complex(pep.getEigenpair(i)) for i in range(nconv)])
    pep.destroy()
    scale = np.abs(lam).max()
    out = []
    for z in lam:
        if abs(z.imag) > 1e-8 * scale:
            if z.imag > 0:
                if abs(z.real) > 1e-6 * abs(z):
                    log.warning("flutter-type eigenvalue %s (real part %.3e)", z, z.real)
                out.append(z.imag)
        elif z.real > 0:
            out.append(-z.real)
    out = np.sort(np.array(out))
    order = np.argsort(np.abs(out))[:n]
    return np.sort(out[order])
