"""Natural frequencies with SLEPc: the symmetric pencil (K, M) and the gyroscopic quadratic
problem lambda^2 M + lambda G + K (rad/s throughout).

Solvers use shift-and-invert about a real target with a direct factorization (MUMPS when
PETSc has it) and read options with the prefix ``mbs_modal_`` (e.g. ``-mbs_modal_eps_tol``).

Frequencies are reported signed: a non-negative value is a frequency; a negative value -s
marks a divergent (statically unstable) mode, eigenvalue omega^2 = -s^2, growth rate s.

**Which modes, in which order.** :func:`natural_frequencies`, :func:`modes` (and each speed of
:func:`dolfinx_mbs.campbell.campbell`) return first the unstable modes, fastest growth first
(Re(lambda) > 1e-6 abs(lambda); a divergence -s is listed by its rate s), then the stable
ones nearest the shift (with the default shift 0: the lowest), ascending. An unstable mode is
never left out for a lower stable one: shift-and-invert about a real target finds the
eigenvalues nearest it, and a divergence rate larger than the frequencies asked for lies far
from 0. So the negative eigenvalues of the stiffness are counted first (the inertia of its
LDL^T factorization by MUMPS, Sylvester's law), and when the solve about the shift did not
find them all, the most negative ones of (K, M) are solved for about a target below the
spectrum (lowered until the inertia of K - sigma M is 0); with Coriolis coupling the
unstable roots are then sought about the largest rate s_max = (-lambda_min(K, M))^(1/2),
which bounds their real parts (for G skew: x^H (lambda^2 M + lambda G + K) x = 0 gives
Re(lambda)^2 <= -x^H K x / x^H M x). Real unstable roots lie in (0, s_max], nearer s_max than
any stable root; complex ones (flutter) far from the real axis may be missed.

Free bodies: when the constraints leave rigid-body motions free, the routines on a system
(:func:`natural_frequencies`, :func:`modes`, and :func:`dolfinx_mbs.campbell.campbell`) solve
for the elastic modes, M-orthogonal to the rigid motions, and log the rigid motions' count and
eigenvalues (:mod:`dolfinx_mbs.systems.rigid_modes` says how, why, and what these are); the elastic
modes are the same on every rank count and in every routine.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, List, Tuple

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc
from slepc4py import SLEPc

from dolfinx_mbs import checks
from dolfinx_mbs.modal.spread import SpreadRows
from dolfinx_mbs.petsc_options import DIFFERENT, EIGEN_PREFIX, direct_lu, solve_in_words
from dolfinx_mbs.records import Record
from dolfinx_mbs.static.solver import negative_eigenvalues
from dolfinx_mbs.systems.rigid_modes import RigidSubspace, rigid_subspace

if TYPE_CHECKING:
    from dolfinx_mbs.systems.second_order import SecondOrderSystem
    from dolfinx_mbs.systems.velocity import VelocitySystem

__all__ = ["ModalResult", "generalized_frequencies", "gyroscopic_frequencies",
           "gyroscopic_modes", "natural_frequencies", "modes", "negative_count", "pencil_modes",
           "representatives", "signed_frequencies", "spectrum_order", "unstable"]

log = logging.getLogger(__name__)

PREFIX = EIGEN_PREFIX
#: the PEP attribute holding its :class:`~dolfinx_mbs.modal.spread.SpreadRows`
ROWS = "mbs_rows"
#: a root grows (is unstable) when Re(lambda) > UNSTABLE abs(lambda)
UNSTABLE = 1e-6
#: a PEP eigenpair counts when its backward error ||(lambda^2 M + lambda G + K) x|| /
#: ((|lambda|^2 ||M|| + |lambda| ||G|| + ||K||) ||x||) is at most ACCEPT_FACTOR times the
#: solver's tolerance (and ACCEPT_MAX): SLEPc's convergence test reads its Krylov estimate,
#: which on a pencil with a singular M (the border of free rigid motions, M_b = [[M, 0],
#: [0, 0]], has infinite eigenvalues) can pass a wrong pair: measured on the rotor of
#: demos/rotor_instability.py, a real root 6.6e4 1/s (backward error 4.8e-3) and complex
#: ones (3.6e-5 to 7.7e-5) beside the true ones (at most 1.9e-8; tol 1e-10); and on the
#: damped Jeffcott rotor of tests/rotors on curved cells with SLEPc 3.18 an axial pair of
#: backward error 6.5e-7 whose real part, 1.7e-6 |lambda|, read as growth (the true ones at
#: most 1.5e-8, its refound pair 2.9e-9 and 3.5e-9 |lambda|)
ACCEPT_FACTOR = 1e3
#: the largest backward error accepted at any tolerance
ACCEPT_MAX = 1e-5


def _direct_st(st: SLEPc.ST) -> None:
    st.setType(SLEPc.ST.Type.SINVERT)
    direct_lu(st.getKSP())


def _check(n: int, name: str = "n") -> int:
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def _eps_values(K: PETSc.Mat, M: PETSc.Mat, n: int, target: float, tol: float,
                inertia: bool = False) -> Tuple[np.ndarray, int]:
    """The ``n`` eigenvalues of K x = w^2 M x nearest ``target`` (w^2 units), ascending, the
    same on every rank; with ``inertia``, also the number of eigenvalues below ``target``
    read from the shift-and-invert's own factorization (-1 when it cannot be read).

    With ``inertia`` and K symmetric to round-off, K - target M is factored as LDL^T (MUMPS's
    symmetric indefinite factorization), whose negative pivots count the eigenvalues below
    the target (Sylvester's law of inertia): one factorization gives the solve and the count
    that :func:`negative_count` would make a second one for."""
    eps = SLEPc.EPS().create(K.getComm())
    eps.setOperators(K, M)
    eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
    eps.setDimensions(nev=n)
    eps.setTarget(float(target))
    eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
    eps.setTolerances(tol=tol, max_it=1000)
    st = eps.getST()
    st.setType(SLEPc.ST.Type.SINVERT)
    ldlt = inertia and _symmetric(K) and (target == 0.0 or _symmetric(M))
    direct_lu(st.getKSP(), PETSc.PC.Type.CHOLESKY if ldlt else PETSc.PC.Type.LU)
    eps.setOptionsPrefix(PREFIX)
    eps.setFromOptions()
    below = -1
    try:
        solve_in_words(eps, "the eigenvalue solve (SLEPc EPS)")
        nconv = eps.getConverged()
        if nconv < n:
            raise RuntimeError(f"SLEPc converged {nconv} of the {n} requested eigenpairs "
                               f"(reason {eps.getConvergedReason()})")
        lam = np.array([eps.getEigenvalue(i).real for i in range(nconv)])
        # the count is of the eigenvalues below the shift the options left: only the target's
        if ldlt and eps.getTarget() == target and st.getShift() == target:
            below = _factor_inertia(st.getKSP())
    finally:
        eps.destroy()
    lam = K.getComm().tompi4py().bcast(lam, root=0)
    return np.sort(lam[np.argsort(np.abs(lam - target), kind="stable")[:n]]), below


def _factor_inertia(ksp: PETSc.KSP) -> int:
    """The negative pivots of the LDL^T factorization a solved KSP holds (MUMPS's INFOG(12),
    the same on every rank), or -1 when it holds another (or none)."""
    pc = ksp.getPC()
    if pc.getType() != PETSc.PC.Type.CHOLESKY or pc.getFactorSolverType() != "mumps":
        return -1
    return int(pc.getFactorMatrix().getMumpsInfog(12))


def _symmetric(A: PETSc.Mat) -> bool:
    """Whether ``A`` is symmetric to round-off (then flagged so: an LDL^T factorization takes
    it). Collective."""
    sym = bool(A.isSymmetric(1e-13 * A.norm(PETSc.NormType.INFINITY)))
    if sym:
        A.setOption(PETSc.Mat.Option.SYMMETRIC, True)
    return sym


def negative_count(K: PETSc.Mat, M: PETSc.Mat | None = None, sigma: float = 0.0,
                   border: int = 0) -> int:
    """The number of eigenvalues of the symmetric part of (K, M) below ``sigma`` (of K below 0
    without M): the negative pivots of an LDL^T factorization of K_s - sigma M by MUMPS
    (Sylvester's law of inertia), less ``border`` (the negative directions of a border,
    :meth:`dolfinx_mbs.systems.rigid_modes.RigidSubspace.border`); -1 when MUMPS is not
    there to count them. Collective.

    Args:
        K: the stiffness.
        M: the mass (None: K alone).
        sigma: the shift.
        border: the negative directions of a border.

    Returns:
        The count.
    """
    S = K.transpose(PETSc.Mat())
    S.axpy(1.0, K)   # K + K^T: the inertia of the symmetric part
    if sigma != 0.0:
        S.axpy(-2.0 * sigma, M, structure=DIFFERENT)
    S.setOption(PETSc.Mat.Option.SYMMETRIC, True)
    ksp = PETSc.KSP().create(K.getComm())
    try:
        direct_lu(ksp, PETSc.PC.Type.CHOLESKY)
        ksp.setOptionsPrefix(PREFIX + "inertia_")
        ksp.setFromOptions()
        count = negative_eigenvalues(ksp, S)
    finally:
        ksp.destroy()
        S.destroy()
    return count - border if count >= 0 else -1


def _most_negative(K: PETSc.Mat, M: PETSc.Mat, count: int, hint: float, tol: float,
                   border: int) -> np.ndarray:
    """The ``count`` most negative eigenvalues of (K, M) (ascending): shift-and-invert about
    a target below the spectrum, lowered from ``hint`` (a negative eigenvalue or an estimate
    of one) until the inertia of K - sigma M counts no eigenvalue below it."""
    sigma = 2.0 * hint
    for _ in range(60):
        below = negative_count(K, M, sigma, border)
        if below == 0:
            return _eps_values(K, M, count, sigma, tol)[0]
        sigma *= 4.0
    raise RuntimeError(f"no lower bound of the spectrum found down to {sigma:.3e} rad^2/s^2")


def _sym_spectrum(K: PETSc.Mat, M: PETSc.Mat, n: int, shift: float, tol: float,
                  border: int = 0) -> np.ndarray:
    """The eigenvalues w^2 of :func:`generalized_frequencies` (the module docstring's choice
    and order), ascending."""
    near, negative = _eps_values(K, M, n, shift, tol, inertia=shift == 0.0)
    if negative >= 0:   # the solve's own LDL^T gave the count (shift 0: the inertia of K)
        negative -= border
    else:
        negative = negative_count(K, border=border)
    if negative < 0:   # no count without MUMPS: what the solve found
        return near
    found = near[near < 0.0]
    if negative <= len(found):
        return near
    u = min(n, negative)
    scale = float(np.max(np.abs(near)))
    hint = float(found.min()) if len(found) else -scale
    low = _most_negative(K, M, u, hint, tol, border)
    stable = near[near >= 0.0]
    stable = stable[np.argsort(np.abs(stable - shift), kind="stable")[: n - u]]
    return np.concatenate([np.sort(low), np.sort(stable)])


def generalized_frequencies(K: PETSc.Mat, M: PETSc.Mat, n: int, shift: float = 0.0,
                            tol: float = 1e-12) -> np.ndarray:
    """The ``n`` lowest frequencies of K x = w^2 M x, as signed w (a divergence -s), the
    divergent ones first, fastest first, then the stable ones nearest ``shift`` (in w^2),
    ascending (the module docstring): ascending signed values.

    Args:
        K: symmetric stiffness (may be indefinite).
        M: symmetric positive definite mass.
        n: number of frequencies.
        shift: target of shift-and-invert in w^2 units (rad^2/s^2); must not be an eigenvalue.
        tol: relative residual tolerance.

    Returns:
        The signed frequencies (rad/s), the same on every rank.

    Raises:
        ValueError: ``n`` not a positive integer, ``shift`` not a real number.
        RuntimeError: the eigensolver did not converge.
    """
    n = _check(n)
    shift = checks.real(shift, "shift")
    lam = _sym_spectrum(K, M, n, shift, tol)
    return np.sign(lam) * np.sqrt(np.abs(lam))


def _new_pep(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, nev: int, shift: float,
             tol: float, random_start: bool = False) -> SLEPc.PEP:
    """A PEP set up for (K, G, M): on copies with rows on every rank when some rank owns none
    (:mod:`.spread`; the layout kept as the PEP's attribute ``ROWS``)."""
    pep = SLEPc.PEP().create(K.getComm())
    rows = SpreadRows(K)
    pep.setAttr(ROWS, rows)
    pep.setOperators(rows.mats([K, G, M]))
    pep.setProblemType(SLEPc.PEP.ProblemType.GENERAL)
    pep.setDimensions(nev=nev)
    pep.setTarget(float(shift))
    pep.setWhichEigenpairs(SLEPc.PEP.Which.TARGET_MAGNITUDE)
    pep.setTolerances(tol=tol, max_it=1000)
    # the coefficients differ by omega^2 ~ 1e8 and more: scale lambda, or TOAR stagnates
    pep.setScale(SLEPc.PEP.Scale.SCALAR)
    _direct_st(pep.getST())
    if random_start:
        v = rows.create_vec(K)
        rnd = PETSc.Random().create(K.getComm())
        rnd.setSeed(20261123)
        v.setRandom(rnd)
        rnd.destroy()
        pep.setInitialSpace([v])
        v.destroy()
    pep.setOptionsPrefix(PREFIX)
    pep.setFromOptions()
    return pep


def _solve_pep(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, nev: int, shift: float,
               tol: float) -> SLEPc.PEP:
    """A solved PEP for (lambda^2 M + lambda G + K) x = 0, at least ``nev`` eigenvalues
    converged (else RuntimeError)."""
    shift = checks.real(shift, "shift")
    what = "the quadratic eigenvalue solve (SLEPc PEP)"
    pep = _new_pep(K, G, M, nev, shift, tol)
    try:
        solve_in_words(pep, what)
    except RuntimeError as e:
        # LAPACK's reordering of the projected Schur form (trexc) can fail on eigenvalues
        # that are equal to round-off (a square section's two bending pairs at rest): the
        # Krylov space decides, so start a new solver from another vector, once
        pep.destroy()
        if "trexc" not in str(e):
            raise
        log.info("SLEPc PEP: %s; solving again from another initial vector", e)
        pep = _new_pep(K, G, M, nev, shift, tol, random_start=True)
        try:
            solve_in_words(pep, what)
        except RuntimeError:
            pep.destroy()
            raise
    nconv = pep.getConverged()
    if nconv < nev:
        reason = pep.getConvergedReason()
        pep.destroy()
        raise RuntimeError(_not_converged(K, nconv, nev, reason))
    return pep


def _not_converged(K: PETSc.Mat, nconv: int, nev: int, reason: int) -> str:
    """The words for a PEP that stopped short of ``nev`` eigenvalues (collective: the
    stiffness matrix's diagonal span, the usual cause of it)."""
    d = K.getDiagonal()
    a = np.abs(d.getArray(readonly=True))
    d.destroy()
    comm = K.getComm().tompi4py()
    top = comm.allreduce(float(a.max()) if a.size else 0.0, op=MPI.MAX)
    low = comm.allreduce(float(a[a > 0].min()) if np.any(a > 0) else np.inf, op=MPI.MIN)
    words = {-1: "its tolerance cannot be reached (DIVERGED_TOL)",
             -2: "it reached its iteration limit (DIVERGED_ITS)",
             -3: "it broke down (DIVERGED_BREAKDOWN)",
             -4: "its symmetry was lost (DIVERGED_SYMMETRY_LOST)"}.get(
                 reason, f"it stopped (reason {reason})")
    msg = (f"the quadratic eigenvalue solve (SLEPc PEP) converged {nconv} of the {nev} "
           f"requested eigenvalues: {words}")
    if top > 0.0 and np.isfinite(low) and top / low > 1e4:   # a sound model: 1e1 to 1e3
        msg += (f". The stiffness matrix's diagonal spans {top / low:.1e} ({low:.3g} to "
                f"{top:.3g}): a support orders of magnitude stiffer than the body it holds (a "
                "bearing of 1e17 N/m on a shaft) gives such a spectrum; clamp a support meant "
                "to be rigid, or give it a stiffness near the body's")
    return msg + f" (or raise the solver's limit: -{PREFIX}pep_max_it)"


def gyroscopic_frequencies(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, n: int,
                           shift: float = 0.0, tol: float = 1e-10) -> np.ndarray:
    """The ``n`` lowest frequencies of (lambda^2 M + lambda G + K) x = 0, lambda = +/- i w:
    the signed frequencies (:func:`signed_frequencies`) of :func:`gyroscopic_modes`, in its
    order (unstable first, fastest growth first; then stable ones nearest ``shift``).

    Stable modes give conjugate pairs +/- i w; ``w`` is returned once per pair. A real pair
    +/- s (divergence) is returned as -s; a complex pair with a positive real part (flutter)
    is logged and its imaginary part returned (among the unstable ones).

    Args:
        K: stiffness matrix (symmetric).
        G: gyroscopic (+ damping) matrix.
        M: mass matrix.
        n: number of frequencies.
        shift: real target of shift-and-invert (in lambda units, 1/s).
        tol: relative residual tolerance.
    """
    lam, vecs = gyroscopic_modes(K, G, M, n, shift, tol)
    for xr, xi in vecs:
        xr.destroy()
        xi.destroy()
    return signed_frequencies(lam)


def signed_frequencies(lam: np.ndarray, rel: float = 1e-8) -> np.ndarray:
    """Signed frequencies of eigenvalues given one per conjugate pair (Im >= 0), as
    :func:`gyroscopic_modes` returns them: Im(lambda), or -Re(lambda) for a real root (a
    divergent mode). ``lam`` may be 1D or 2D (rows scaled separately).

    Args:
        lam: the eigenvalues.
        rel: the relative tolerance.

    Returns:
        The signed frequencies (rad/s), of ``lam``'s shape.
    """
    lam = np.asarray(lam, dtype=complex)
    scale = np.abs(lam).max(axis=-1, keepdims=True)
    real = np.abs(lam.imag) <= rel * np.maximum(scale, np.finfo(float).tiny)
    return np.where(real, -lam.real, lam.imag)


def representatives(lam: np.ndarray, scale: float, rel: float = 1e-8) -> np.ndarray:
    """Which of the eigenvalues ``lam`` of a real pencil represent their conjugate pair (the
    convention of :func:`gyroscopic_modes`): Im(lambda) > rel ``scale``, or, for a real pair
    +/- s (Im within rel ``scale`` of 0), the member with Re > 0 and Im >= 0. Boolean mask.

    Args:
        lam: the eigenvalues.
        scale: the eigenvalues' scale.
        rel: the relative tolerance.

    Returns:
        The boolean mask.
    """
    lam = np.asarray(lam, dtype=complex)
    small = rel * scale
    return (lam.imag > small) | ((np.abs(lam.imag) <= small) & (lam.imag >= 0.0)
                                 & (lam.real > 0.0))


def unstable(lam: np.ndarray, rel: float = UNSTABLE) -> np.ndarray:
    """Which eigenvalues grow: Re(lambda) > ``rel`` abs(lambda) (boolean mask).

    Args:
        lam: the eigenvalues.
        rel: the relative tolerance.

    Returns:
        The boolean mask.
    """
    lam = np.asarray(lam, dtype=complex)
    return lam.real > rel * np.abs(lam)


def spectrum_order(lam: np.ndarray, n: int, shift: float = 0.0) -> np.ndarray:
    """Indices of the ``n`` of the representatives ``lam`` (one per conjugate pair) that a
    spectrum reports, in its order (module docstring): the unstable ones by growth rate,
    fastest first, then the stable ones nearest ``shift``, by signed frequency.

    Args:
        lam: the representatives, one per conjugate pair.
        n: how many.
        shift: the target of the stable modes.

    Returns:
        The indices.
    """
    lam = np.asarray(lam, dtype=complex)
    up = np.flatnonzero(unstable(lam))
    up = up[np.argsort(-lam[up].real, kind="stable")][:n]
    rest = np.flatnonzero(~unstable(lam))
    rest = rest[np.argsort(np.abs(lam[rest] - shift), kind="stable")][: n - len(up)]
    rest = rest[np.argsort(signed_frequencies(lam[rest]) if len(rest) else rest,
                           kind="stable")]
    return np.concatenate([up, rest]).astype(int)


def _duplicates(lam: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Which of ``lam`` are roots already in ``ref`` (to 1e-8 of the largest; a multiple root
    counts as often as it appears in each): boolean mask."""
    scale = max(float(np.abs(np.concatenate([lam, ref])).max(initial=0.0)), 1e-300)
    used = np.zeros(len(ref), dtype=bool)
    out = np.zeros(len(lam), dtype=bool)
    for i, z in enumerate(lam):
        for j, w in enumerate(ref):
            if not used[j] and min(abs(z - w), abs(z - np.conj(w))) <= 1e-8 * scale:
                used[j] = out[i] = True
                break
    return out


def gyroscopic_modes(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, n: int, shift: float = 0.0,
                     tol: float = 1e-10, border: int = 0
                     ) -> Tuple[np.ndarray, List[Tuple[PETSc.Vec, PETSc.Vec]]]:
    """The ``n`` eigenpairs of (lambda^2 M + lambda G + K) x = 0 that a spectrum reports (the
    module docstring): the unstable ones, fastest growth first, then the stable ones nearest
    ``shift``; one per conjugate pair.

    The pencil is real, so eigenvalues come in conjugate pairs (and, for a conservative
    gyroscopic system with G skew, in pairs +/- lambda as well). Each pair is represented by
    its member with Im(lambda) > 0; a real pair +/- s (divergence) by the positive root s.
    The signed frequency of :func:`gyroscopic_frequencies` is Im(lambda), or -s for a real
    root.

    Args:
        K: stiffness matrix (real).
        G: gyroscopic (+ damping) matrix (real).
        M: mass matrix (real).
        n: number of eigenpairs.
        shift: real target of shift-and-invert (in lambda units, 1/s) for the stable modes;
            it must not be an eigenvalue (a singular K with shift 0, e.g. at a critical
            speed, needs a nonzero shift).
        tol: relative residual tolerance.
        border: negative directions of a border of K not to count (the free motions' border
            of :mod:`dolfinx_mbs.systems.rigid_modes`).

    Returns:
        ``(lam, vecs)``: the eigenvalues (complex array, in the order above) and, for each,
        the real and imaginary parts ``(xr, xi)`` of its eigenvector (new PETSc vectors of
        K's layout; the physical motion is Re(x e^{lambda t}) = e^{Re(lambda) t} (xr cos(w t)
        - xi sin(w t)), w = Im(lambda)). The values are the same on every rank.

    Raises:
        RuntimeError: SLEPc did not converge enough eigenpairs.
    """
    n = _check(n)
    shift = checks.real(shift, "shift")
    lam, vecs, pep = _solved_pairs(K, G, M, n, shift, tol)
    pep.destroy()
    negative = negative_count(K, border=border)
    if negative < 0:   # no count without MUMPS: as many as the solve shows
        negative = n if np.any(unstable(lam)) else 0
    if negative > 0:
        lam, vecs = _with_unstable(K, G, M, n, lam, vecs, negative, tol, border)
    keep = spectrum_order(lam, n, shift)
    for i in set(range(len(lam))) - set(keep.tolist()):
        vecs[i][0].destroy()
        vecs[i][1].destroy()
    return lam[keep], [vecs[i] for i in keep]


def _with_unstable(K: PETSc.Mat, G: PETSc.Mat | None, M: PETSc.Mat, n: int, lam: np.ndarray,
                   vecs: list, negative: int, tol: float, border: int) -> Tuple[np.ndarray, list]:
    """``lam``, ``vecs`` and the unstable roots about s_max (module docstring) not among
    them."""
    hint = -float(np.abs(lam).max()) ** 2
    lowest = float(_most_negative(K, M, 1, hint, tol, border)[0])
    s_max = float(np.sqrt(max(-lowest, 0.0)))
    # just above s_max: the real roots lie in (0, s_max], a stable one no nearer than s_max
    target = 1.01 * s_max
    want = min(n, negative)
    more, mvecs, pep = _solved_pairs(K, G, M, want, target, tol,
                                     _solve_pep(K, G, M, 2 * want + 2, target, tol))
    pep.destroy()
    new = unstable(more) & ~_duplicates(more, lam)
    for i in np.flatnonzero(~new):
        mvecs[i][0].destroy()
        mvecs[i][1].destroy()
    log.info("%d negative eigenvalue(s) of the stiffness, growth rates up to %.6g 1/s without "
             "coupling; unstable roots found: %s", negative, s_max,
             np.array2string(np.concatenate([lam[unstable(lam)], more[new]]), precision=6))
    return (np.concatenate([lam, more[new]]),
            list(vecs) + [mvecs[i] for i in np.flatnonzero(new)])


def reused_gyroscopic_modes(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, n: int,
                            pep: SLEPc.PEP | None, shift: float = 0.0, tol: float = 1e-10,
                            least: int | None = None
                            ) -> Tuple[np.ndarray, List[Tuple[PETSc.Vec, PETSc.Vec]], SLEPc.PEP]:
    """:func:`gyroscopic_modes` with a PEP kept from an earlier call on matrices of the same
    objects and patterns (None: a new one): its ST keeps the symbolic factorization and only
    refactorizes numerically. Returns ``(lam, vecs, pep)``; the caller destroys ``pep``.

    Args:
        K: the stiffness.
        G: the gyroscopic matrix.
        M: the mass.
        n: how many, at most.
        pep: a PEP of an earlier call (None: a new one).
        shift: the target of the stable modes.
        tol: the solver's tolerance.
        least: how many at least (None: ``n``): the pairs beyond them are taken as far as
            their backward errors are accepted (a Campbell sweep's extra pairs, which only
            seed its subspace: on an ill-conditioned pencil the pairs far from the shift
            converge to a backward error above the bound). As with ``n``, the accepted pairs
            are counted, a rejected one taken as spurious: the nearest of those accepted are
            returned.

    Returns:
        ``(lam, vecs, pep)``.
    """
    n = _check(n)
    least = n if least is None else min(_check(least, "least"), n)
    if pep is not None:
        pep.setOperators(pep.getAttr(ROWS).mats([K, G, M]))
        try:
            solve_in_words(pep, "the quadratic eigenvalue solve (SLEPc PEP)")
            if pep.getConverged() < 2 * n:
                raise RuntimeError("not converged")
        except RuntimeError as e:  # a new solver from another vector (see _solve_pep)
            log.info("SLEPc PEP reused: %s; a new solver", e)
            pep.destroy()
            pep = None
    return _solved_pairs(K, G, M, n, shift, tol, pep, least)


class _Short(RuntimeError):
    """Fewer eigenpairs than requested (``missing`` of them)."""

    def __init__(self, missing: int, message: str) -> None:
        super().__init__(message)
        self.missing = missing


#: solves of a PEP with more eigenvalues asked when too few of its pairs were accepted
MORE_SOLVES = 2


def _solved_pairs(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, n: int, shift: float, tol: float,
                  pep: SLEPc.PEP | None = None, least: int | None = None
                  ) -> Tuple[np.ndarray, list, SLEPc.PEP]:
    """``(lam, vecs, pep)``: :func:`_pairs` of ``pep`` (solved; None: a new PEP of 2 ``n``
    eigenvalues); when fewer than ``least`` (None: ``n``) are accepted, a new PEP asked for
    more (the missing ones and 2 beyond them, twice as many at the next), up to
    :data:`MORE_SOLVES` times. The caller destroys ``pep``."""
    nev = 2 * n
    for attempt in range(MORE_SOLVES + 1):
        if pep is None:
            pep = _solve_pep(K, G, M, nev, shift, tol)
        try:
            lam, vecs = _pairs(pep, K, n, shift, n if least is None else least)
            return lam, vecs, pep
        except _Short as e:
            nev = max(nev, pep.getDimensions()[0]) + 2 * (e.missing + 1) * 2 ** attempt
            pep.destroy()
            pep = None
            if attempt == MORE_SOLVES:
                raise RuntimeError(str(e)) from None
            log.info("%s: solving for %d eigenvalues", e, nev)
        except RuntimeError:
            pep.destroy()
            raise
    raise AssertionError("unreachable")  # pragma: no cover


def accepted_error(tol: float) -> float:
    """The largest backward error of a PEP eigenpair taken as an eigenpair, for the solver's
    tolerance ``tol``: :data:`ACCEPT_FACTOR` ``tol``, at most :data:`ACCEPT_MAX`.

    Args:
        tol: the solver's tolerance.

    Returns:
        The bound.
    """
    return min(ACCEPT_FACTOR * tol, ACCEPT_MAX)


def _pairs(pep: SLEPc.PEP, K: PETSc.Mat, n: int, shift: float, least: int
           ) -> Tuple[np.ndarray, list]:
    """The ``n`` representatives nearest ``shift`` of a solved PEP's eigenpairs, those whose
    backward error exceeds :func:`accepted_error` left out (at least ``least`` of them, else
    :class:`_Short`)."""
    nconv = pep.getConverged()
    lam = np.array([complex(pep.getEigenpair(i)) for i in range(nconv)])
    # the choices below must be the same on every rank
    comm = K.getComm().tompi4py()
    lam = comm.bcast(lam, root=0)
    scale = np.abs(lam).max()
    small = 1e-8 * scale
    bound = accepted_error(pep.getTolerances()[0])
    keep = list(np.flatnonzero(representatives(lam, scale)))
    # collective (norms of the pencil's residual), one per conjugate pair
    err = comm.bcast([pep.computeError(i, SLEPc.PEP.ErrorType.BACKWARD) for i in keep], root=0)
    wrong = [i for i, e in zip(keep, err) if not e <= bound]
    if wrong:
        log.info("SLEPc PEP: %d converged eigenvalue(s) left out, their backward error above "
                 "%.1e: %s", len(wrong), bound,
                 ", ".join(f"{lam[i]:.6g} ({e:.1e})" for i, e in zip(keep, err) if i in wrong))
        keep = [i for i in keep if i not in wrong]
    if len(keep) < least:
        raise _Short(least - len(keep),
                     f"SLEPc converged {nconv} eigenvalues, of which only {len(keep)} "
                     f"represent distinct conjugate pairs with a backward error below "
                     f"{bound:.1e}; {least} requested (the bound is {ACCEPT_FACTOR:g} x tol: on an "
                     f"ill-conditioned pencil, supports or parts far stiffer than the rest, "
                     f"a larger tol accepts more)")
    keep = sorted(keep, key=lambda i: abs(lam[i] - shift))[:n]
    signed = [lam[i].imag if lam[i].imag > small else -lam[i].real for i in keep]
    keep = [keep[j] for j in np.argsort(signed, kind="stable")]
    vecs = []
    rows = pep.getAttr(ROWS)
    for i in keep:
        xr, xi = rows.create_vec(K), rows.create_vec(K)
        pep.getEigenpair(i, xr, xi)
        vecs.append((rows.back(xr), rows.back(xi)))
        if lam[i].imag > small and abs(lam[i].real) > 1e-6 * abs(lam[i]):
            log.info("flutter-type eigenvalue %s (real part %.3e)", lam[i], lam[i].real)
    return lam[keep], vecs


# -- on a typed system ------------------------------------------------------------------------
def _log_rigid(rigid: RigidSubspace, Kr: PETSc.Mat, Gr: PETSc.Mat | None) -> np.ndarray:
    lam = rigid.eigenvalues(Kr, Gr)
    log.info("%d free rigid-body motion(s) left out of the elastic modes; their eigenvalues "
             "(%s): %s", rigid.dim, "w^2" if Gr is None else "lambda, one per pair",
             np.array2string(lam, precision=6))
    return lam


def natural_frequencies(system: SecondOrderSystem | VelocitySystem, t: float = 0.0, n: int = 4,
                        gyroscopic: bool = False, shift: float = 0.0) -> np.ndarray:
    """The ``n`` lowest natural frequencies (rad/s) of ``system`` (a typed system with
    ``pencil``, :mod:`dolfinx_mbs.systems`), constrained and undamped, about the frame state at
    ``t``, spin softening included.

    When the constraints leave free motions (:mod:`dolfinx_mbs.systems.rigid_modes`: rigid
    motions nothing resists), these are the modes M-orthogonal to them; their count and
    eigenvalues are logged. A mechanism that the spin or gravity stiffens (a centrifugal
    pendulum) is among the modes.

    Args:
        system: the typed system.
        t: time of the frame state.
        n: how many frequencies.
        gyroscopic: include the Coriolis coupling (quadratic eigenproblem) or not
            (symmetric pencil K + K_omega, M).
        shift: shift-and-invert target for the stable modes: in rad^2/s^2 without gyroscopic
            coupling, in rad/s (real axis) with it. Must differ from an eigenvalue.

    Returns:
        Signed frequencies (a negative value -s: a divergent mode of growth rate s): the
        unstable modes first, fastest growth first, then the stable ones nearest ``shift``
        (the lowest), ascending (module docstring); the same on every rank.

    Raises:
        ValueError: bad arguments, or ``n`` beyond the model's dofs.
        RuntimeError: the eigensolver did not converge.
    """
    n = _check(n)
    shift = checks.real(shift, "shift")
    Kr, Gr, Mr = system.pencil(t, n, "gyroscopic" if gyroscopic else None)
    rigid = rigid_subspace(system, t, at_time=True)
    border = 0
    try:
        if rigid is not None:
            _check_elastic(n, Kr, rigid)
            _log_rigid(rigid, Kr, Gr)
            Kr, Gr, Mr = rigid.border(Kr, Gr, Mr)
            border = rigid.dim
        if not gyroscopic:
            lam = _sym_spectrum(Kr, Mr, n, shift, 1e-12, border)
            if getattr(system, "copies", 1) == 2:
                lam = paired(lam, n)
            return np.sign(lam) * np.sqrt(np.abs(lam))
        lam, vecs = gyroscopic_modes(Kr, Gr, Mr, n, shift, border=border)
        for xr, xi in vecs:
            xr.destroy()
            xi.destroy()
        return signed_frequencies(lam)
    finally:
        if rigid is not None:
            rigid.destroy()


def paired(lam: np.ndarray, n: int, rtol: float = 1e-8) -> np.ndarray:
    """The ``n`` lowest eigenvalues of a pencil whose eigenvalues all come in equal pairs (the
    two copies of a harmonic index 0 < k < N/2 without the Coriolis coupling,
    :mod:`dolfinx_mbs.cyclic.harmonic`), from a list that may lack one member of a pair: a
    Krylov solve finds the second member of an exact pair only through rounding.

    Args:
        lam: the eigenvalues found (ascending, at least ``n``).
        n: how many to return.
        rtol: values closer than this (relative) are one pair.

    Returns:
        Each distinct value of ``lam`` twice, ascending, the first ``n`` (``lam`` itself when
        it has divergent modes: negative values).
    """
    lam = np.sort(np.asarray(lam, dtype=float))
    if len(lam) == 0 or lam[0] <= 0.0:
        return lam[:n]
    distinct: List[float] = []
    for v in lam:
        if not distinct or v - distinct[-1] > rtol * v:
            distinct.append(float(v))
    return np.repeat(distinct, 2)[:n]


def _check_elastic(n: int, Kr: PETSc.Mat, rigid: RigidSubspace) -> None:
    free = Kr.getSize()[0] - rigid.dim
    if n > free:
        raise ValueError(f"n={n} exceeds the {free} elastic dofs of the model ({rigid.dim} "
                         "free rigid-body motions)")


def pencil_modes(Kr: PETSc.Mat, Gr: PETSc.Mat, Mr: PETSc.Mat, n: int,
                 rigid: RigidSubspace | None, shift: float = 0.0, tol: float = 1e-10
                 ) -> Tuple[np.ndarray, List[Tuple[PETSc.Vec, PETSc.Vec]], dict]:
    """:func:`gyroscopic_modes` of a system's pencil with the free rigid motions ``rigid``
    (:func:`dolfinx_mbs.systems.rigid_modes.rigid_subspace`, None: none) left out.

    Args:
        Kr: the reduced stiffness.
        Gr: the reduced velocity coupling.
        Mr: the reduced mass.
        n: how many.
        rigid: the free rigid motions (None: none).
        shift: the target of the stable modes.
        tol: the solver's tolerance.

    Returns:
        ``(lam, vecs, info)``: as :func:`gyroscopic_modes` (vectors in the pencil's
        coordinates), and ``info`` with ``rigid_dim`` and ``rigid_eigenvalues`` (0 and empty
        without free motions).
    """
    if rigid is None:
        lam, vecs = gyroscopic_modes(Kr, Gr, Mr, n, shift=shift, tol=tol)
        return lam, vecs, {"rigid_dim": 0, "rigid_eigenvalues": np.zeros(0, complex)}
    _check_elastic(n, Kr, rigid)
    info = {"rigid_dim": rigid.dim, "rigid_eigenvalues": _log_rigid(rigid, Kr, Gr)}
    lam, bvecs = gyroscopic_modes(*rigid.border(Kr, Gr, Mr), n, shift=shift, tol=tol,  # type: ignore[call-arg, misc]
                                  border=rigid.dim)
    vecs = [(rigid.elastic_part(xr, Kr), rigid.elastic_part(xi, Kr)) for xr, xi in bvecs]
    for xr, xi in bvecs:
        xr.destroy()
        xi.destroy()
    return lam, vecs, info


@dataclasses.dataclass
class ModalResult(Record):
    """The complex modes of :func:`modes`, the same on every rank (rad/s, 1/s).

    Attributes are also read as keys (``result["frequencies"]``), as the dict this used to
    be; prefer the attributes.

    Attributes:
        eigenvalues: lambda, one per conjugate pair (Im >= 0; a real pair by its positive
            root), in the order of the module docstring: the unstable modes first, fastest
            growth first, then the stable ones nearest the shift, ascending.
        frequencies: signed frequencies, Im(lambda), or -s for a real root s (divergence).
        damping_ratios: -Re(lambda) / abs(lambda) (negative: growing).
        growth: Re(lambda) (positive: growing).
        unstable: which of them grow (Re(lambda) > 1e-6 abs(lambda)).
        rigid_dim: the free motions left out (:mod:`dolfinx_mbs.systems.rigid_modes`), 0 when
            none.
        rigid_eigenvalues: the eigenvalues of the free motions alone, one per pair (empty
            without them): for information, see :mod:`dolfinx_mbs.systems.rigid_modes`.
        shapes: with ``modes(..., shapes=True)``, per mode one (re, im) pair of DOLFINx
            Functions per body (body frame, the mode scaled to a unit largest displacement;
            the motion is Re((re + i im) e^(lambda t))), for :mod:`dolfinx_mbs.plot`; None
            otherwise.
    """

    eigenvalues: np.ndarray
    frequencies: np.ndarray
    damping_ratios: np.ndarray
    growth: np.ndarray
    unstable: np.ndarray
    rigid_dim: int
    rigid_eigenvalues: np.ndarray
    shapes: list | None = None



def modes(system: SecondOrderSystem | VelocitySystem, t: float = 0.0, n: int = 6,
          damping: bool = True, shift: float = 0.0, output: str | None = None,
          shapes: bool = False) -> ModalResult:
    """Complex modes of (lambda^2 M + lambda (G + D) + K_eff) x = 0 of ``system`` about the frame
    state at ``t`` (Coriolis, damping when ``damping`` and the materials have it, spin
    softening, stiffening): the unstable ones, fastest growth first, then the ``n`` (in all)
    stable ones nearest ``shift`` (1/s) (module docstring).

    When the constraints leave free motions (rigid motions nothing resists), these are the
    modes M-orthogonal to them, and the result says how many and their eigenvalues
    (:mod:`dolfinx_mbs.systems.rigid_modes` says what they mean).

    With ``output``, ``<output>_<body>.bp`` (VTX, in the body's space; ``.xdmf`` in the
    linear space on DOLFINx 0.5, see :class:`dolfinx_mbs.io.FieldFile`) receives the shapes
    (body frame, normalized to a unit largest displacement) as fields ``mode<k>_re`` and
    ``mode<k>_im`` at time 0 (the motion is Re((re + i im) e^(lambda t))), for ParaView.

    Args:
        system: a typed system with ``pencil`` (:mod:`dolfinx_mbs.systems`).
        t: time of the frame state.
        n: how many modes.
        damping: include the materials' damping.
        shift: real shift-and-invert target (1/s) of the stable modes.
        output: file stem of the shapes, or None.
        shapes: keep the shapes as DOLFINx Functions (``ModalResult.shapes``).

    Returns:
        A :class:`ModalResult`.

    Raises:
        ValueError: bad arguments, or ``n`` beyond the model's dofs.
        RuntimeError: the eigensolver did not converge.
    """
    n = _check(n)
    shift = checks.real(shift, "shift")
    if not isinstance(shapes, (bool, np.bool_)):
        raise TypeError(f"shapes must be True or False, got {shapes!r}")
    Kr, Cr, Mr = system.pencil(t, n, "damping" if damping else "gyroscopic")
    rigid = rigid_subspace(system, t, at_time=True)
    try:
        lam, vecs, info = pencil_modes(Kr, Cr, Mr, n, rigid, shift)
    finally:
        if rigid is not None:
            rigid.destroy()
    freq = signed_frequencies(lam)
    zeta = -lam.real / np.maximum(np.abs(lam), 1e-300)
    from dolfinx_mbs.io.output import mode_functions, write_mode_functions

    funcs = None
    try:
        if output is not None or shapes:
            funcs = mode_functions(system, vecs)
        if output is not None:
            assert funcs is not None
            write_mode_functions(system, output, funcs)
    finally:
        for xr, xi in vecs:
            xr.destroy()
            xi.destroy()
    return ModalResult(eigenvalues=lam, frequencies=freq, damping_ratios=zeta,
                       growth=lam.real.copy(), unstable=unstable(lam),
                       rigid_dim=int(info["rigid_dim"]),
                       rigid_eigenvalues=info["rigid_eigenvalues"],
                       shapes=funcs if shapes else None)
