"""Distributed PETSc objects gathered onto every rank as scipy and numpy arrays.

For comparisons with products formed independently of PETSc.
"""

import numpy as np
import scipy.sparse as sp


def gather_aij(M):
    """A distributed PETSc AIJ matrix as one scipy CSR matrix, on every rank."""
    comm = M.getComm().tompi4py()
    r0, r1 = M.getOwnershipRange()
    indptr, cols, vals = M.getValuesCSR()
    rows = np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(indptr))
    parts = comm.allgather((rows, np.asarray(cols, np.int64), np.asarray(vals)))
    rows = np.concatenate([p[0] for p in parts])
    cols = np.concatenate([p[1] for p in parts])
    vals = np.concatenate([p[2] for p in parts])
    return sp.csr_matrix((vals, (rows, cols)), shape=M.getSize())


def gather_vec(v):
    """A distributed PETSc vector as one numpy array, on every rank."""
    comm = v.getComm().tompi4py()
    r0, _ = v.getOwnershipRange()
    parts = comm.allgather((r0, v.getArray(readonly=True).copy()))
    out = np.zeros(v.getSize())
    for r, a in parts:
        out[r: r + len(a)] = a
    return out
