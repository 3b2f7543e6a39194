"""A sparse matrix's Schur complement on a set of its unknowns, computed by MUMPS during its
factorization (``ICNTL(19)``), through PETSc's ``MatFactorSetSchurIS`` and
``MatFactorCreateSchurComplement``.

petsc4py does not wrap those two functions; they are called from the PETSc library petsc4py
has loaded (found in the process's memory map, so that it is the same library and the same
objects), with ``ctypes``. With several processes MUMPS gathers the Schur complement on rank 0
(PETSc's interface accepts only a centralized one); it is broadcast to every rank here.

    S = schur_complement(X, B)   # X_BB - X_BI X_II^-1 X_IB, dense, on every rank

Used by :mod:`dolfinx_mbs.cyclic.condensed` for the cut faces of a sector.
"""

from __future__ import annotations

import ctypes
import functools
import re

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

__all__ = ["SchurUnavailable", "schur_complement"]


class SchurUnavailable(RuntimeError):
    """PETSc's Schur-complement functions or MUMPS cannot be reached in this process."""


@functools.lru_cache(maxsize=None)
def _library() -> ctypes.CDLL:
    """The PETSc library petsc4py has loaded, with the signatures used here."""
    path = None
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                name = line.split()[-1] if line.strip() else ""
                if re.search(r"/libpetsc[^/]*\.so", name):
                    path = name
                    break
    except OSError as e:
        raise SchurUnavailable(f"cannot read the process's memory map: {e}") from None
    if path is None:
        raise SchurUnavailable("petsc4py's PETSc library is not in the process's memory map")
    lib = ctypes.CDLL(path)
    vp = ctypes.c_void_p
    for name in ("MatFactorSetSchurIS", "MatFactorCreateSchurComplement",
                 "MatDenseGetArrayRead", "MatDenseRestoreArrayRead", "MatDestroy",
                 "MatGetSize"):
        if not hasattr(lib, name):
            raise SchurUnavailable(f"{path} has no {name}")
    lib.MatFactorSetSchurIS.argtypes = [vp, vp]
    lib.MatFactorCreateSchurComplement.argtypes = [vp, ctypes.POINTER(vp),
                                                   ctypes.POINTER(ctypes.c_int)]
    dptr = ctypes.POINTER(ctypes.POINTER(ctypes.c_double))
    lib.MatDenseGetArrayRead.argtypes = [vp, dptr]
    lib.MatDenseRestoreArrayRead.argtypes = [vp, dptr]
    lib.MatDestroy.argtypes = [ctypes.POINTER(vp)]
    lib.MatGetSize.argtypes = [vp, ctypes.c_void_p, ctypes.c_void_p]
    for f in (lib.MatFactorSetSchurIS, lib.MatFactorCreateSchurComplement,
              lib.MatDenseGetArrayRead, lib.MatDenseRestoreArrayRead, lib.MatDestroy,
              lib.MatGetSize):
        f.restype = ctypes.c_int
    return lib


def available(comm: MPI.Comm) -> bool:
    """True when PETSc's Schur-complement functions and MUMPS can be reached (on every rank
    of ``comm``; collective).

    Args:
        comm: the communicator.

    Returns:
        Whether :func:`schur_complement` can run.
    """
    try:
        _library()
        ok = PETSc.Sys.hasExternalPackage("mumps") and np.dtype(PETSc.ScalarType) == np.float64
    except SchurUnavailable:
        ok = False
    return bool(comm.allreduce(bool(ok), op=MPI.LAND))


def schur_complement(X: PETSc.Mat, B: np.ndarray) -> np.ndarray:
    """X_BB - X_BI X_II^-1 X_IB of the symmetric matrix ``X`` on its global rows ``B`` (in that
    order), I the others: MUMPS's LDL^T factorization of X with B last (collective).

    Args:
        X: a symmetric (distributed) AIJ matrix whose block X_II is nonsingular.
        B: the global indices of the Schur complement's unknowns, the same on every rank.

    Returns:
        The dense Schur complement (len(B) x len(B)) on every rank.

    Raises:
        SchurUnavailable: PETSc's functions cannot be reached, or a PETSc call fails.
    """
    lib = _library()
    comm = X.getComm().tompi4py()
    root = comm.rank == 0
    ksp = PETSc.KSP().create(comm)
    idx = np.asarray(B, dtype=PETSc.IntType) if root else np.zeros(0, PETSc.IntType)
    iset = PETSc.IS().createGeneral(idx, comm=comm)
    out = np.empty((len(B), len(B)))
    try:
        ksp.setType("preonly")
        ksp.setOperators(X)
        pc = ksp.getPC()
        pc.setType("cholesky")
        pc.setFactorSolverType("mumps")
        pc.setFactorSetUpSolverType()
        F = pc.getFactorMatrix()
        vp = ctypes.c_void_p
        rc = lib.MatFactorSetSchurIS(vp(F.handle), vp(iset.handle))
        if comm.allreduce(rc, op=MPI.MAX) != 0:
            raise SchurUnavailable("MatFactorSetSchurIS failed")
        ksp.setUp()
        S = vp()
        status = ctypes.c_int()
        rc = lib.MatFactorCreateSchurComplement(vp(F.handle), ctypes.byref(S),
                                                ctypes.byref(status))
        if comm.allreduce(rc, op=MPI.MAX) != 0:
            raise SchurUnavailable("MatFactorCreateSchurComplement failed")
        error = None
        try:
            if root:
                m = ctypes.c_int64(0) if PETSc.IntType == np.int64 else ctypes.c_int32(0)
                n = type(m)(0)
                lib.MatGetSize(S, ctypes.byref(m), ctypes.byref(n))
                if (m.value, n.value) != (len(B), len(B)):
                    error = (f"a Schur complement of {m.value} x {n.value}, expected "
                             f"{len(B)} x {len(B)}")
                else:
                    ptr = ctypes.POINTER(ctypes.c_double)()
                    lib.MatDenseGetArrayRead(S, ctypes.byref(ptr))
                    # column-major storage, leading dimension len(B)
                    out[:] = np.ctypeslib.as_array(ptr, shape=(len(B), len(B))).T
                    lib.MatDenseRestoreArrayRead(S, ctypes.byref(ptr))
        finally:
            lib.MatDestroy(ctypes.byref(S))
        error = comm.bcast(error, root=0)
        if error is not None:
            raise SchurUnavailable(error)
    finally:
        ksp.destroy()
        iset.destroy()
    comm.Bcast(out, root=0)
    return out
