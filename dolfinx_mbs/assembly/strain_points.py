"""A body's St Venant-Kirchhoff remainder summed at the quadrature points of its nonlinear
forms' rule, on a few fields: the reduced body's cubic and quartic tensors and its modal
derivatives' loads without the nonlinear forms (their UFL, their compilation, an assembly per
field).

The point terms (``forms.moving_frame.svk_point_terms``: per point and cell dof the gradient of
the dof's basis function and t |J| S(sym grad), the law's stress of its small strain) are
evaluated once per chunk of cells by a DOLFINx Expression at the rule of
``Body.nonlinear_degree`` (basix's default, FFCx's). At each point the law's matrix D is the
least-squares fit of the dofs' stresses to their strains (exact for a law linear in the
strain). With E = eps + Q (eps = sym G, Q = 1/2 G^T G, G = grad u) and S linear and symmetric
the remainder's density is t (eps : S(Q) + 1/2 Q : S(Q)) (``forms.moving_frame.
svk_remainder_energy``), and on fields a, b, v with Q(a, b) = 1/4 (G_a^T G_b + G_b^T G_a):

* the energy on u = sum_i q_i phi_i: sum_ijk q_i q_j q_k eps_i : S(Q_jk) + 1/2 sum_ijkl
  q_i q_j q_k q_l Q_ij : S(Q_kl), whose third and fourth derivatives are H and C
  (:meth:`StrainPoints.tensors`);
* the part of the tangent linear in the displacement, L(a) b . v = 2 eps_v : S(Q(a, b)) +
  2 eps_a : S(Q(b, v)) + 2 eps_b : S(Q(a, v)) (the force's even part polarized;
  :meth:`StrainPoints.linear_tangent`).

Both are the assembled forms' numbers to round-off (the same rule, the same integrands):
``tests/integrate/dense`` and ``tests/reduction`` hold them against the polarized assembled
tangent and force. Used where ``compat.EXPRESSIONS_KEPT`` (a fresh model's expression costs no
FFCx lookup); elsewhere the forms are assembled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, List, Sequence, Tuple, cast

import numpy as np
from mpi4py import MPI

from dolfinx_mbs import compat

if TYPE_CHECKING:
    from dolfinx_mbs.bodies.body import Body

__all__ = ["StrainPoints", "POINT_CHUNK", "KEPT"]

#: the most doubles of the point arrays held at once (the cells taken in chunks)
POINT_CHUNK = 4_000_000
#: the most doubles of evaluated point terms kept for the next use (a small body's)
KEPT = 1_000_000


def _inverse(A: np.ndarray) -> np.ndarray:
    """The inverses of a stack of symmetric positive definite matrices (..., m, m): 3 x 3 by
    their adjugates (a batched solve's overhead is most of its cost there), else solved."""
    if A.shape[-1] != 3:
        return cast(np.ndarray, np.linalg.inv(A))
    a, b, c = A[..., 0, 0], A[..., 0, 1], A[..., 0, 2]
    e, f, i = A[..., 1, 1], A[..., 1, 2], A[..., 2, 2]
    co = np.stack([e * i - f * f, c * f - b * i, b * f - c * e,
                   a * i - c * c, b * c - a * f, a * e - b * b], axis=-1)
    det = a * co[..., 0] + b * co[..., 1] + c * co[..., 2]
    out = co[..., [0, 1, 2, 1, 3, 4, 2, 4, 5]] / det[..., None]
    return cast(np.ndarray, out.reshape(A.shape))


class StrainPoints:
    """The strain's point terms of ``body`` (module docstring).

    Args:
        body: the body (nonlinear stiffening, a law linear in the strain).
        comm: its communicator.
        key: the UFL signature of the body's stiffness form where known: the point terms are
            made of what it fixes (the law, the thickness, the space's and the mesh's
            elements), so it names their compiled code (``compat.expression``); None: their
            own signature.
    """

    def __init__(self, body: Body, comm: MPI.Comm, key: str | None = None) -> None:
        import basix
        import ufl

        from dolfinx_mbs.forms.moving_frame import VOIGT, svk_point_terms
        self.body, self.comm = body, comm
        V = body.V
        self.msh = msh = V.mesh
        self.d = d = msh.geometry.dim
        self.voigt = VOIGT[d]
        self.nv = len(self.voigt)
        X, self.w = basix.make_quadrature(getattr(basix.CellType, compat.cell_type_name(msh)),
                                          body.nonlinear_degree())
        self.ex = compat.expression(svk_point_terms(body.material, ufl.TestFunction(V)), X,
                                    comm, key=None if key is None else "svk_point_terms:" + key)
        self.nc = msh.topology.index_map(msh.topology.dim).size_local
        self.nodes = compat.cell_table(V.dofmap.list)
        #: X : Y = sum_k shear_k X_k Y_k over the Voigt components
        self.shear = np.array([1.0 if a == b else 2.0 for a, b in self.voigt])
        #: the evaluated terms where they are few (:data:`KEPT`): one chunk, kept for the
        #: next use (the reduction's derivatives, then the dense path's tensors)
        self._kept: Tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _ghosted(self, F: np.ndarray) -> np.ndarray:
        """Fields on the owned dofs (owned dofs x m) with their ghosts, as (nodes, d, m)."""
        from dolfinx import la
        m = F.shape[1]
        x = la.vector(self.body.V.dofmap.index_map, bs=self.d * m)
        x.array[:F.size] = F.reshape(-1)
        x.scatter_forward()
        return cast(np.ndarray, x.array.reshape(-1, self.d, m))

    def _chunks(self, per_point: int) -> Iterator[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(cells, B, Dw) chunk by chunk: B the dofs' gradients (cells, points, d, d, dofs),
        Dw the law's matrix times the weights at each point, the Voigt weights in its rows
        (cells x points, nv, nv); ``per_point`` doubles the caller holds a point."""
        d, nv, w = self.d, self.nv, self.w
        nq = len(w)
        if self._kept is not None:
            yield self._kept
            return
        step = max(1, int(POINT_CHUNK // max(nq * per_point, 1)))
        size = self.nc * nq * (d * d * self.body.V.dofmap.dof_layout.num_dofs * d + nv * nv)
        keep = step >= self.nc and size <= KEPT
        for c0 in range(0, self.nc, step):
            cells = np.arange(c0, min(c0 + step, self.nc), dtype=np.int32)
            vals = compat.eval_expression(self.ex, self.msh, cells).reshape(
                len(cells), nq, d * d + nv, -1)
            B = vals[:, :, :d * d]
            Gd = np.ascontiguousarray(B.reshape(len(cells), nq, d, d, -1)
                                      .transpose(2, 3, 0, 1, 4))
            E = np.stack([0.5 * (Gd[a, b] + Gd[b, a]) for a, b in self.voigt], axis=2)
            Sd = vals[:, :, d * d:]
            D = np.matmul(np.matmul(Sd, E.transpose(0, 1, 3, 2)),
                          _inverse(np.matmul(E, E.transpose(0, 1, 3, 2))))
            Dw = (D * w[None, :, None, None]).reshape(-1, nv, nv) * self.shear[None, :, None]
            chunk = (cells, np.ascontiguousarray(B).reshape(len(cells), nq, d, d, -1), Dw)
            if keep:
                self._kept = chunk
            yield chunk

    def _gradients(self, cols: np.ndarray, cells: np.ndarray, B: np.ndarray) -> np.ndarray:
        """The fields' gradients G_i[a, b] at the chunk's points (m x d x d x points), from
        their ghosted values ``cols`` (nodes, d, m)."""
        d, m = self.d, cols.shape[2]
        U = cols[self.nodes[cells]].reshape(len(cells), -1, m)
        nc, nq = B.shape[0], B.shape[1]
        return np.ascontiguousarray(np.matmul(B.reshape(nc, nq, d * d, -1), U[:, None])
                                    .reshape(-1, d, d, m).transpose(3, 1, 2, 0))

    def _eps(self, G: np.ndarray) -> List[np.ndarray]:
        """The small strains' Voigt components (each m x points)."""
        return [0.5 * (G[:, a, b] + G[:, b, a]) for a, b in self.voigt]

    def _pairs(self, Gi: np.ndarray, Gj: np.ndarray) -> List[np.ndarray]:
        """Q(i, j) = 1/4 (G_i^T G_j + G_j^T G_i) of the rows of Gi and Gj, Voigt components."""
        return [0.25 * sum(Gi[:, c, a] * Gj[:, c, b] + Gi[:, c, b] * Gj[:, c, a]
                           for c in range(self.d)) for a, b in self.voigt]

    def tensors(self, Tb: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """H and C of the fields ``Tb`` (owned dofs x n; ``systems.coupled_dense.
        nonlinear_tensors``' layout). Collective.

        Args:
            Tb: the reduced fields on the body's owned dofs.

        Returns:
            (H: n x n x n; C: the pairs i <= j row by row x n x n, C_ii and 2 C_ij).
        """
        n, nv = Tb.shape[1], self.nv
        iu, ju = np.triu_indices(n)
        npair = len(iu)
        cols = self._ghosted(Tb)
        X3 = np.zeros((n, npair))
        Y4 = np.zeros((npair, npair))
        for cells, B, Dw in self._chunks((npair + n) * nv * 3):
            G = self._gradients(cols, cells, B)
            eps = self._eps(G)
            Q = self._pairs(G[iu], G[ju])
            for k in range(nv):            # (D Q_p)_k
                DQk = sum(Dw[:, k, m] * Q[m] for m in range(nv))
                X3 += eps[k] @ DQk.T
                Y4 += Q[k] @ DQk.T
        tot = np.empty(X3.size + Y4.size)
        self.comm.Allreduce(np.concatenate([X3.reshape(-1), Y4.reshape(-1)]), tot, op=MPI.SUM)
        X3, Y4 = tot[:X3.size].reshape(X3.shape), tot[X3.size:].reshape(Y4.shape)
        pair = np.zeros((n, n), dtype=np.int64)
        pair[iu, ju] = pair[ju, iu] = np.arange(npair)
        c3 = X3[:, pair]                        # eps_i : S(Q_jk), symmetric in j, k
        H = 2.0 * (c3 + c3.transpose(1, 0, 2) + c3.transpose(2, 1, 0))
        c4 = Y4[pair][:, :, pair]               # Q_ij : S(Q_kl)
        C4 = 4.0 * (c4 + c4.transpose(0, 2, 1, 3) + c4.transpose(0, 3, 2, 1))
        return H, C4[iu, ju] * np.where(iu == ju, 1.0, 2.0)[:, None, None]

    def linear_tangent(self, F: np.ndarray, pairs: Sequence[Tuple[int, int]]) -> np.ndarray:
        """L(a) b for the pairs of the fields ``F`` (owned dofs x m): the loads on the body's
        owned dofs (owned dofs x len(pairs), owned values complete). Collective.

        Args:
            F: the fields on the body's owned dofs.
            pairs: (i, j) of F's columns.

        Returns:
            The loads.
        """
        from dolfinx import la
        d, voigt = self.d, self.voigt
        npr = len(pairs)
        cols = self._ghosted(F)
        ia = np.array([i for i, _ in pairs], dtype=np.int64)
        ib = np.array([j for _, j in pairs], dtype=np.int64)
        out = la.vector(self.body.V.dofmap.index_map, bs=d * npr)
        acc = out.array.reshape(-1, d, npr)
        acc[:] = 0.0
        for cells, B, Dw in self._chunks(4 * d * d * npr + 2 * F.shape[1] * d * d):
            G = self._gradients(cols, cells, B)          # m x d x d x points
            eps = np.stack(self._eps(G), axis=1)          # m x nv x points
            sig = np.einsum("pkl,ikp->ilp", Dw, eps)      # D^T eps (Voigt weights in D)
            Ga, Gb = G[ia], G[ib]
            tau = np.einsum("pkl,ilp->ikp", Dw, np.stack(self._pairs(Ga, Gb), axis=1))
            # A : G_v, the load's density on a test field v (pairs x d x d x points), of
            # eps_v . D Q(a, b) + eps_a . D Q(b, v) + eps_b . D Q(a, v), then twice it
            A = np.zeros((npr, d, d, G.shape[3]))
            for k, (r, s) in enumerate(voigt):
                A[:, r, s] += 0.5 * tau[:, k]
                A[:, s, r] += 0.5 * tau[:, k]
                for Gx, sx in ((Gb, sig[ia]), (Ga, sig[ib])):
                    A[:, :, s] += 0.25 * sx[:, k, None] * Gx[:, :, r]
                    A[:, :, r] += 0.25 * sx[:, k, None] * Gx[:, :, s]
            A *= 2.0
            nc, nq = B.shape[0], B.shape[1]
            Ar = A.reshape(npr, d * d, nc, nq)
            el = np.einsum("ikcq,cqkd->cdi", Ar, B.reshape(nc, nq, d * d, -1))  # cells x dofs
            dofs = self.nodes[cells]                                            # cells x nodes
            np.add.at(acc, dofs.reshape(-1), el.reshape(nc, dofs.shape[1], d, npr)
                      .reshape(-1, d, npr))
        out.scatter_reverse(la.InsertMode.add)
        n_owned = F.shape[0]
        return cast(np.ndarray, out.array[:n_owned * npr].reshape(n_owned, npr).copy())
