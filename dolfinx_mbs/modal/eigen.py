"""Natural frequencies with SLEPc: the symmetric pencil (K, M) and the gyroscopic quadratic
problem lambda^2 M + lambda G + K (rad/s throughout).

Solvers use shift-and-invert about a real target with a direct factorization (MUMPS when
PETSc has it) and read options with the prefix ``mbs_modal_`` (e.g. ``-mbs_modal_eps_tol``).

Frequencies are reported signed: a non-negative value is a frequency; a negative value -s
marks a divergent (statically unstable) mode, eigenvalue omega^2 = -s^2, growth rate s.

Free bodies: when the constraints leave rigid-body motions free, the routines on a system
(:func:`natural_frequencies`, :func:`modes`, and :func:`dolfinx_mbs.campbell.campbell`) solve
for the elastic modes, M-orthogonal to the rigid motions, and log the rigid motions' count and
eigenvalues (:mod:`dolfinx_mbs.systems.rigid_modes` says how, why, and what these are); the elastic
modes are the same on every rank count and in every routine.
"""

from __future__ import annotations

import logging
from typing import List, Optional, Tuple

import numpy as np
from petsc4py import PETSc
from slepc4py import SLEPc

from dolfinx_mbs import checks
from dolfinx_mbs.petsc_options import EIGEN_PREFIX, direct_lu, solve_in_words
from dolfinx_mbs.systems.rigid_modes import RigidSubspace, rigid_subspace

__all__ = ["generalized_frequencies", "gyroscopic_frequencies", "gyroscopic_modes",
           "natural_frequencies", "modes", "pencil_modes", "representatives",
           "signed_frequencies"]

log = logging.getLogger(__name__)

PREFIX = EIGEN_PREFIX


def _direct_st(st: SLEPc.ST) -> None:
    st.setType(SLEPc.ST.Type.SINVERT)
    direct_lu(st.getKSP())


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
    shift = checks.real(shift, "shift")
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
    solve_in_words(eps, "the eigenvalue solve (SLEPc EPS)")
    nconv = eps.getConverged()
    if nconv < n:
        raise RuntimeError(f"SLEPc converged {nconv} of the {n} requested eigenpairs "
                           f"(reason {eps.getConvergedReason()})")
    lam = np.array([eps.getEigenvalue(i).real for i in range(nconv)])
    eps.destroy()
    lam = np.sort(lam[np.argsort(np.abs(lam - shift))[:n]])
    return np.sign(lam) * np.sqrt(np.abs(lam))


def _new_pep(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, nev: int, shift: float,
             tol: float, start: Optional[PETSc.Vec] = None) -> SLEPc.PEP:
    pep = SLEPc.PEP().create(K.getComm())
    pep.setOperators([K, G, M])
    pep.setProblemType(SLEPc.PEP.ProblemType.GENERAL)
    pep.setDimensions(nev=nev)
    pep.setTarget(float(shift))
    pep.setWhichEigenpairs(SLEPc.PEP.Which.TARGET_MAGNITUDE)
    pep.setTolerances(tol=tol, max_it=1000)
    # the coefficients differ by omega^2 ~ 1e8 and more: scale lambda, or TOAR stagnates
    pep.setScale(SLEPc.PEP.Scale.SCALAR)
    _direct_st(pep.getST())
    if start is not None:
        pep.setInitialSpace([start])
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
        v = K.createVecRight()
        rnd = PETSc.Random().create(K.getComm())
        rnd.setSeed(20261123)
        v.setRandom(rnd)
        rnd.destroy()
        pep = _new_pep(K, G, M, nev, shift, tol, start=v)
        v.destroy()
        try:
            solve_in_words(pep, what)
        except RuntimeError:
            pep.destroy()
            raise
    nconv = pep.getConverged()
    if nconv < nev:
        reason = pep.getConvergedReason()
        pep.destroy()
        raise RuntimeError(f"SLEPc converged {nconv} of the {nev} requested eigenvalues "
                           f"(reason {reason})")
    return pep


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
    pep = _solve_pep(K, G, M, 2 * n, shift, tol)
    nconv = pep.getConverged()
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


def signed_frequencies(lam: np.ndarray, rel: float = 1e-8) -> np.ndarray:
    """Signed frequencies of eigenvalues given one per conjugate pair (Im >= 0), as
    :func:`gyroscopic_modes` returns them: Im(lambda), or -Re(lambda) for a real root (a
    divergent mode). ``lam`` may be 1D or 2D (rows scaled separately)."""
    lam = np.asarray(lam, dtype=complex)
    scale = np.abs(lam).max(axis=-1, keepdims=True)
    real = np.abs(lam.imag) <= rel * np.maximum(scale, np.finfo(float).tiny)
    return np.where(real, -lam.real, lam.imag)


def representatives(lam: np.ndarray, scale: float, rel: float = 1e-8) -> np.ndarray:
    """Which of the eigenvalues ``lam`` of a real pencil represent their conjugate pair (the
    convention of :func:`gyroscopic_modes`): Im(lambda) > rel ``scale``, or, for a real pair
    +/- s (Im within rel ``scale`` of 0), the member with Re > 0 and Im >= 0. Boolean mask."""
    lam = np.asarray(lam, dtype=complex)
    small = rel * scale
    return (lam.imag > small) | ((np.abs(lam.imag) <= small) & (lam.imag >= 0.0)
                                 & (lam.real > 0.0))


def gyroscopic_modes(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, n: int, shift: float = 0.0,
                     tol: float = 1e-10) -> Tuple[np.ndarray, List[Tuple[PETSc.Vec, PETSc.Vec]]]:
    """The ``n`` eigenpairs of (lambda^2 M + lambda G + K) x = 0 nearest ``shift``, one per
    conjugate pair.

    The pencil is real, so eigenvalues come in conjugate pairs (and, for a conservative
    gyroscopic system with G skew, in pairs +/- lambda as well). Each pair is represented by
    its member with Im(lambda) > 0; a real pair +/- s (divergence) by the positive root s.
    The signed frequency of :func:`gyroscopic_frequencies` is Im(lambda), or -s for a real
    root.

    Args:
        K, G, M: stiffness, gyroscopic (+ damping) and mass matrices (real).
        n: number of eigenpairs.
        shift: real target of shift-and-invert (in lambda units, 1/s); it must not be an
            eigenvalue (a singular K with shift 0, e.g. at a critical speed, needs a nonzero
            shift).
        tol: relative residual tolerance.

    Returns:
        ``(lam, vecs)``: the eigenvalues (complex array, ascending by signed frequency) and,
        for each, the real and imaginary parts ``(xr, xi)`` of its eigenvector (new PETSc
        vectors of K's layout; the physical motion is Re(x e^{lambda t}) =
        e^{Re(lambda) t} (xr cos(w t) - xi sin(w t)), w = Im(lambda)). The values are the same
        on every rank.

    Raises:
        RuntimeError: SLEPc did not converge enough eigenpairs.
    """
    n = _check(n)
    pep = _solve_pep(K, G, M, 2 * n, shift, tol)
    try:
        return _pairs(pep, K, n, shift)
    finally:
        pep.destroy()


def reused_gyroscopic_modes(K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat, n: int,
                            pep: Optional[SLEPc.PEP], shift: float = 0.0, tol: float = 1e-10
                            ) -> Tuple[np.ndarray, List[Tuple[PETSc.Vec, PETSc.Vec]], SLEPc.PEP]:
    """:func:`gyroscopic_modes` with a PEP kept from an earlier call on matrices of the same
    objects and patterns (None: a new one): its ST keeps the symbolic factorization and only
    refactorizes numerically. Returns ``(lam, vecs, pep)``; the caller destroys ``pep``."""
    n = _check(n)
    if pep is None:
        pep = _solve_pep(K, G, M, 2 * n, shift, tol)
    else:
        pep.setOperators([K, G, M])
        try:
            solve_in_words(pep, "the quadratic eigenvalue solve (SLEPc PEP)")
            if pep.getConverged() < 2 * n:
                raise RuntimeError("not converged")
        except RuntimeError as e:  # a new solver from another vector (see _solve_pep)
            log.info("SLEPc PEP reused: %s; a new solver", e)
            pep.destroy()
            pep = _solve_pep(K, G, M, 2 * n, shift, tol)
    try:
        lam, vecs = _pairs(pep, K, n, shift)
    except RuntimeError:
        pep.destroy()
        raise
    return lam, vecs, pep


def _pairs(pep: SLEPc.PEP, K: PETSc.Mat, n: int, shift: float):
    """The ``n`` representatives nearest ``shift`` of a solved PEP's eigenpairs."""
    nconv = pep.getConverged()
    lam = np.array([complex(pep.getEigenpair(i)) for i in range(nconv)])
    # the choices below must be the same on every rank
    lam = K.getComm().tompi4py().bcast(lam, root=0)
    scale = np.abs(lam).max()
    small = 1e-8 * scale
    keep = list(np.flatnonzero(representatives(lam, scale)))
    if len(keep) < n:
        raise RuntimeError(f"SLEPc converged {nconv} eigenvalues, of which only {len(keep)} "
                           f"represent distinct conjugate pairs; {n} requested")
    keep = sorted(keep, key=lambda i: abs(lam[i] - shift))[:n]
    signed = [lam[i].imag if lam[i].imag > small else -lam[i].real for i in keep]
    keep = [keep[j] for j in np.argsort(signed, kind="stable")]
    vecs = []
    for i in keep:
        xr, xi = K.createVecs()
        pep.getEigenpair(i, xr, xi)
        vecs.append((xr, xi))
        if lam[i].imag > small and abs(lam[i].real) > 1e-6 * abs(lam[i]):
            log.info("flutter-type eigenvalue %s (real part %.3e)", lam[i], lam[i].real)
    return lam[keep], vecs


# -- on a typed system ------------------------------------------------------------------------
def _log_rigid(rigid: RigidSubspace, Kr: PETSc.Mat, Gr: Optional[PETSc.Mat]) -> np.ndarray:
    lam = rigid.eigenvalues(Kr, Gr)
    log.info("%d free rigid-body motion(s) left out of the elastic modes; their eigenvalues "
             "(%s): %s", rigid.dim, "w^2" if Gr is None else "lambda, one per pair",
             np.array2string(lam, precision=6))
    return lam


def natural_frequencies(system, t: float = 0.0, n: int = 4, gyroscopic: bool = False,
                        shift: float = 0.0) -> np.ndarray:
    """The ``n`` lowest natural frequencies (rad/s) of ``system`` (a typed system with
    ``pencil``, :mod:`dolfinx_mbs.systems`), constrained and undamped, about the frame state at
    ``t``, spin softening included.

    When the constraints leave rigid-body motions free, these are the elastic modes,
    M-orthogonal to them; their count and eigenvalues are logged (:mod:`dolfinx_mbs.
    rigid_modes`).

    Args:
        t: time of the frame state.
        n: how many frequencies.
        gyroscopic: include the Coriolis coupling (quadratic eigenproblem) or not
            (symmetric pencil K + K_omega, M).
        shift: shift-and-invert target: in rad^2/s^2 without gyroscopic coupling, in rad/s
            (real axis) with it. Must differ from an eigenvalue.

    Returns:
        Ascending signed frequencies: a negative value marks a divergent mode.
    """
    n = _check(n)
    Kr, Gr, Mr = system.pencil(t, n, "gyroscopic" if gyroscopic else None)
    rigid = rigid_subspace(system, t, at_time=True)
    try:
        if rigid is not None:
            _check_elastic(n, Kr, rigid)
            _log_rigid(rigid, Kr, Gr)
            Kr, Gr, Mr = rigid.border(Kr, Gr, Mr)
        if not gyroscopic:
            return generalized_frequencies(Kr, Mr, n, shift=shift)
        return gyroscopic_frequencies(Kr, Gr, Mr, n, shift=shift)
    finally:
        if rigid is not None:
            rigid.destroy()


def _check_elastic(n: int, Kr: PETSc.Mat, rigid: RigidSubspace) -> None:
    free = Kr.getSize()[0] - rigid.dim
    if n > free:
        raise ValueError(f"n={n} exceeds the {free} elastic dofs of the model ({rigid.dim} "
                         "free rigid-body motions)")


def pencil_modes(Kr: PETSc.Mat, Gr: PETSc.Mat, Mr: PETSc.Mat, n: int,
                 rigid: Optional[RigidSubspace], shift: float = 0.0, tol: float = 1e-10
                 ) -> Tuple[np.ndarray, List[Tuple[PETSc.Vec, PETSc.Vec]], dict]:
    """:func:`gyroscopic_modes` of a system's pencil with the free rigid motions ``rigid``
    (:func:`dolfinx_mbs.systems.rigid_modes.rigid_subspace`, None: none) left out.

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
    lam, bvecs = gyroscopic_modes(*rigid.border(Kr, Gr, Mr), n, shift=shift, tol=tol)
    vecs = [(rigid.elastic_part(xr, Kr), rigid.elastic_part(xi, Kr)) for xr, xi in bvecs]
    for xr, xi in bvecs:
        xr.destroy()
        xi.destroy()
    return lam, vecs, info


def modes(system, t: float = 0.0, n: int = 6, damping: bool = True, shift: float = 0.0,
          output=None) -> dict:
    """Complex modes of (lambda^2 M + lambda (G + D) + K_eff) x = 0 of ``system`` about the frame
    state at ``t`` (Coriolis, damping when ``damping`` and the materials have it, spin
    softening, stiffening), the ``n`` nearest ``shift`` (1/s).

    Returns:
        ``eigenvalues`` (complex, Im >= 0, one per pair), ``frequencies`` (rad/s, signed:
        negative = divergent), ``damping_ratios`` (-Re(lambda)/|lambda|: negative = growing),
        the same on every rank. When the constraints leave rigid-body motions free, these are
        the elastic modes (M-orthogonal to them), and ``rigid_dim`` (how many) and
        ``rigid_eigenvalues`` (of the rigid motions alone, one per pair:
        :mod:`dolfinx_mbs.systems.rigid_modes` says what they mean) are added (0 and empty otherwise).

    With ``output``, ``<output>_<body>.bp`` (VTX, in the body's space; ``.xdmf`` in the
    linear space on DOLFINx 0.5, see :class:`dolfinx_mbs.io.FieldFile`) receives the shapes
    (body frame, normalized to a unit largest displacement) as fields ``mode<k>_re`` and
    ``mode<k>_im`` at time 0 (the motion is Re((re + i im) e^(lambda t))), for ParaView.
    """
    n = _check(n)
    Kr, Cr, Mr = system.pencil(t, n, "damping" if damping else "gyroscopic")
    rigid = rigid_subspace(system, t, at_time=True)
    try:
        lam, vecs, info = pencil_modes(Kr, Cr, Mr, n, rigid, shift)
    finally:
        if rigid is not None:
            rigid.destroy()
    freq = signed_frequencies(lam)
    zeta = -lam.real / np.maximum(np.abs(lam), 1e-300)
    if output is not None:
        from dolfinx_mbs.io.output import write_modes

        write_modes(system, output, vecs)
    for xr, xi in vecs:
        xr.destroy()
        xi.destroy()
    return {"eigenvalues": lam, "frequencies": freq, "damping_ratios": zeta, **info}
