"""The coupled rigid-elastic equations in small dense arrays: each elastic body's inertia
invariants projected once onto its reduced coordinates, the rows formed per step from them.

:class:`~dolfinx_mbs.systems.coupled.CoupledSystem` forms its elastic terms with the bodies'
PETSc operators at every evaluation (docs/theory.md section 8). Where the elastic unknowns are
few (reduced bodies, a small mesh) every one of those terms is a small polynomial in the
reduced coordinates q, their rates and the frame state, whose coefficients are products of the
same assembled matrices with a few fields. With u = T q (T the reduced coordinates' full
fields, :meth:`~dolfinx_mbs.systems.coupled.CoupledSystem.expand` of the unit vectors) and the
fields Z = [X, t_1 .. t_g, T] of a body (its nodes' positions, the unit translations, the
reduced fields), the coupling matrices c_E = M (I kron E) of the package's forms
(``forms.inertia_coupling``, assembled as ``BodyOperators.coupling_matrices``) give the one
invariant

    P(E) = Z^T c_E Z        ((1 + g + n) x (1 + g + n), one per basis matrix E of
                             ``assembly.operators.coupling_basis``: 4 in 2D, 9 in 3D),

linear in E, so that P(W) = sum_E coeff_E(W) P(E) for any 3 x 3 W. Every term of the coupled
rows is a contraction of P(W) with coefficient vectors of x = X + u = Z xi, xi = (1, 0, q):

    elastic rows   T^T e = P(I) b0 + P(W_g) b_g + P(W_k) xi   (T rows),
                   b0 = (0, a_O - g_loc, q''), b_g = (0, 0, q'),
                   W_g = 2 skew(omega), W_k = skew(omega)^2 + skew(alpha)
                   (the mass matrix, Coriolis, centrifugal and Euler terms, the base and
                   gravity loads: the rows of ``CoupledSystem._body_terms``), with K_r q,
                   the prestress cases' sum of c_case P_case,r q and D_r q' (T^T K T, ...)
    resultant      t_k^T e (the t rows of the same product): m a_O + alpha x s + ...
    moment about O sum_n x_n x e_n = -sum_W xi^T P(skew(e_k) W) b_W  (k = 1..3; z in 2D):
                   the inertia tensor's dependence on q, linear and quadratic, and the
                   rigid-elastic coupling are these contractions

and the energies and momenta of :func:`~dolfinx_mbs.systems.coupled.monitors` likewise.
A body with nonlinear strain (``stiffening="nonlinear"``, the St Venant-Kirchhoff remainder
of ``forms.moving_frame.svk_remainder``, cubic and quartic in u) adds to its elastic rows
the projected remainder, a polynomial in q: tangent T^T K_N(T q) T = H(q) + 1/2 C(q, q),
force (1/2 H(q) + 1/6 C(q, q)) q, energy q.(1/6 H(q) + 1/24 C(q, q)) q, with H(q) =
sum_i q_i H_i, C(q, q) = sum_ij q_i q_j C_ij found once, exactly, by polarization of the
assembled tangent (:func:`nonlinear_tensors`: 2 n assemblies and about n^2 / 6 more, C's
other entries by its symmetry). The
frames' own rows, their kinematics, rigid bodies, applied frame loads and the prestress
coefficients are :class:`CoupledSystem`'s (numpy already). The Jacobian is exact: every
derivative is a contraction of the same invariants (the derivatives of W by the frame state
as in ``CoupledSystem._state_columns``).

What the dense form takes (:func:`dense_reason` names what it does not): elastic bodies on
computed frames (:class:`~dolfinx_mbs.frames.Hinge`, :class:`~dolfinx_mbs.frames.Free`),
with constant applied loads and gravity, prestress,
nonlinear strain (on at most :data:`NONLINEAR_MAX` elastic coordinates) and Rayleigh
damping, time-invariant constraints; rigid bodies and applied frame loads; joints and motors
(:mod:`~dolfinx_mbs.systems.coupled_dense_joints`); no springs, no bodies on prescribed
frames. Everything here is replicated on every rank (the invariants are reduced over the
ranks once).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from typing import TYPE_CHECKING, Any, List, Tuple, cast

import numpy as np
from mpi4py import MPI

from dolfinx_mbs.assembly.operators import coupling_basis
from dolfinx_mbs.frames.base import FrameState, cross3, skew
from dolfinx_mbs.frames.computed import Free, Hinge
from dolfinx_mbs.systems.coupled import FrameView
from dolfinx_mbs.systems.coupled_dense_joints import dense_joints_reason

if TYPE_CHECKING:
    from petsc4py import PETSc

    from dolfinx_mbs.bodies.rigid import RigidBody
    from dolfinx_mbs.frames.computed import ComputedFrame
    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["DenseCoupled", "Plan", "LazyView", "StateRead", "dense_reason", "nonlinear_tensors",
           "point_tensors", "polarized_tensors", "kept_nonlinear_tensors", "NONLINEAR_MAX"]

#: the kernels' table sizes (:mod:`dolfinx_mbs.integrate.dense.coupled_kernels`: FI, FF, BI,
#: PAR; checked equal there)
K_FI, K_FF, K_BI, K_PAR = 7, 66, 18, 24
#: the most elastic reduced coordinates the dense form takes with nonlinear strain (the
#: projected quartic term has n^4 / 2 numbers, n^2 / 2 tangent assemblies at the start)
NONLINEAR_MAX = 40
#: the frames' kinds (the kernels' KIND_HINGE, KIND_FREE2, KIND_FREE3)
KIND_HINGE, KIND_FREE2, KIND_FREE3 = 0, 1, 2

_E = np.eye(3)
_S = [skew(_E[k]) for k in range(3)]


def dense_reason(system: CoupledSystem) -> str | None:
    """Why the coupled ``system`` cannot be stepped in dense form, or None.

    Args:
        system: the coupled system.

    Returns:
        The reason in words, or None.
    """
    s = system
    why = dense_joints_reason(s)
    if why is not None:
        return why
    for fr in s.frames:
        if not (isinstance(fr, Hinge) and type(fr).jet is Hinge.jet
                or isinstance(fr, Free) and type(fr).jet is Free.jet):
            return f"frame {fr.name!r}: a computed frame other than Hinge or Free"
    if not s.parts:
        return None
    if s.elastic_assembly.nonlinear and s.n_reduced > NONLINEAR_MAX:
        return (f"nonlinear strain (stiffening='nonlinear') on {s.n_reduced} elastic "
                f"coordinates (the dense form projects the strain's cubic and quartic terms "
                f"once: at most {NONLINEAR_MAX} coordinates; reduce the body)")
    if s.elastic_reducer.time_dependent:
        return "constraints that move in time"
    for p in s.parts:
        if p.frame is None:
            return f"body {p.body.name!r} on a prescribed frame"
        if not p.kron:
            return f"body {p.body.name!r}: its mass matrix has terms of its own"
        if any(case[0] == "carried" for case, _ in p.ops.prestress_matrices):
            return f"body {p.body.name!r}: prestress of the bodies joined to it"
        terms = p.ops.loads.unit_terms()
        unit_loads = p.ops.loads.unit_loads
        assert unit_loads is not None  # (strategy 'basis', which the parts ask for)
        accel = unit_loads.accel
        if terms is None or any(units is not accel for _, units, _ in terms):
            return (f"body {p.body.name!r}: loads that change in time (body forces, tractions, "
                    "point loads or a user load with an update)")
    return None


def nonlinear_tensors(system: CoupledSystem, p: Any, T: np.ndarray
                      ) -> Tuple[np.ndarray, np.ndarray]:
    """The nonlinear strain's tangent on a body's reduced coordinates as a polynomial:
    K_n(q) = T^T K_N(T q) T = sum_i q_i H_i + 1/2 sum_ij q_i q_j C_ij (the remainder of St
    Venant-Kirchhoff's strain, ``forms.moving_frame.svk_remainder``: its tangent is linear
    plus quadratic in u). Summed at the quadrature points of the nonlinear forms' rule
    (:func:`point_tensors`: one evaluation of the strain's point terms, no assembly) where
    ``compat.EXPRESSIONS_KEPT``; elsewhere by polarization of the assembled tangent
    (:func:`polarized_tensors`). Collective.

    Args:
        system: the coupled system.
        p: the body's part.
        T: the body's reduced fields (local rows of the whole elastic space, the body's
            columns; only the body's own rows are read).

    Returns:
        (H: n x n x n, H[i] = H_i; C: the pairs i <= j row by row (n (n + 1) / 2 x n x n),
        C_ii, and 2 C_ij for i < j, so that sum_pairs q_i q_j C[pair] = sum_ij q_i q_j C_ij).
    """
    from dolfinx_mbs import compat
    if compat.EXPRESSIONS_KEPT:
        return cast(Tuple[np.ndarray, np.ndarray], p.ops.strain_points().tensors(T[p.slice]))
    return polarized_tensors(system, p, T)


def point_tensors(body: Any, Tb: np.ndarray, comm: MPI.Comm, key: str | None = None
                  ) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`nonlinear_tensors` summed at the points of the nonlinear forms' quadrature rule
    (:meth:`~dolfinx_mbs.assembly.strain_points.StrainPoints.tensors`: the strain's point
    terms evaluated once, the remainder's energy t (eps : S(Q) + 1/2 Q : S(Q)) on u = sum q_i
    phi_i a polynomial whose coefficients are array products). The same numbers as the
    polarization (the same rule, the same integrands) to round-off, at a few assemblies' cost.
    Collective.

    Args:
        body: the body (nonlinear stiffening, a law linear in the strain).
        Tb: its reduced fields on its owned dofs (owned dofs x n).
        comm: the communicator.
        key: the UFL signature of the body's stiffness form where known (it names the point
            terms' compiled code, ``StrainPoints``); None: their own signature.

    Returns:
        (H, C) as :func:`nonlinear_tensors` returns them.
    """
    from dolfinx_mbs.assembly.strain_points import StrainPoints
    return StrainPoints(body, comm, key=key).tensors(Tb)


def polarized_tensors(system: CoupledSystem, p: Any, T: np.ndarray
                      ) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`nonlinear_tensors` found exactly by polarization of the package's assembled
    tangent P(s) = K_n(s): H_i = (P(e_i) - P(-e_i)) / 2, C_ii = P(e_i) + P(-e_i),
    C_ij = P(e_i + e_j) - P(e_i) - P(e_j) (i < j). The tangent is the derivative of the force
    f_n = (1/2 H(q) + 1/6 C(q, q)) q and of the energy's excess U_n = q.(1/6 H(q) +
    1/24 C(q, q)) q, so H and C are fully symmetric: C_ijkl with a repeated index is in some
    C_ii, and C_ij is needed only for the pairs (i, j) within three groups of the indices
    (:func:`_polarization_pairs`: four distinct indices always hold two of one group); the
    other entries follow by symmetry. 2 n assemblies and about n^2 / 6 more (27 for n = 9,
    where all the pairs took 54). Collective.

    Args:
        system: the coupled system.
        p: the body's part.
        T: the body's reduced fields (local rows of the whole elastic space, the body's
            columns; only the body's own rows are read).

    Returns:
        (H, C) as :func:`nonlinear_tensors` returns them.
    """
    asm = system.elastic_assembly
    n = T.shape[1]
    Tb = np.zeros_like(T)
    Tb[p.slice] = T[p.slice]        # the body's rows: K_N is block-diagonal by body
    u = system.elastic_space.create_vec()
    proj = _Projection(Tb, u)

    def P(s: np.ndarray) -> np.ndarray:
        u.array[:] = Tb @ s
        KN = asm.nonlinear_terms(u, force=False, tangent=True)[1]
        assert KN is not None  # (asked for)
        return proj.of(KN)
    eye = np.eye(n)
    pairs = _polarization_pairs(n)
    with asm.nonlinear_state_kept():
        Pp = np.array([P(eye[i]) for i in range(n)]).reshape(n, n, n)
        Pm = np.array([P(-eye[i]) for i in range(n)]).reshape(n, n, n)
        Pij = np.array([P(eye[i] + eye[j]) - Pp[i] - Pp[j] for i, j in pairs]
                       ).reshape(len(pairs), n, n)
    proj.destroy()
    u.destroy()
    out = np.concatenate([Pp.reshape(-1), Pm.reshape(-1), Pij.reshape(-1)])
    tot = np.empty_like(out)
    system.comm.Allreduce(out, tot, op=MPI.SUM)
    Pp, Pm, Pij = (tot[:n ** 3].reshape(n, n, n), tot[n ** 3:2 * n ** 3].reshape(n, n, n),
                   tot[2 * n ** 3:].reshape(len(pairs), n, n))
    H = 0.5 * (Pp - Pm)
    C4 = np.full((n, n, n, n), np.nan)   # C_ijkl, found where known, then by symmetry
    C4[np.arange(n), np.arange(n)] = Pp + Pm
    for (i, j), X in zip(pairs, Pij):
        C4[i, j] = C4[j, i] = X
    for perm in itertools.permutations(range(4)):
        gap = np.isnan(C4)
        if not gap.any():
            break
        C4[gap] = C4.transpose(perm)[gap]
    assert not np.isnan(C4).any()  # (every index set holds a repeated index or a pair)
    iu, ju = np.triu_indices(n)
    return H, C4[iu, ju] * np.where(iu == ju, 1.0, 2.0)[:, None, None]


def _polarization_pairs(n: int) -> List[Tuple[int, int]]:
    """The pairs i < j within three groups of 0..n-1 (of near-equal size, consecutive): any
    four distinct indices hold two of one group, so these C_ij give every C_ijkl whose
    indices are distinct (the complement of the groups' pairs is Turan's graph, free of
    four-cliques; its pairs, about n^2 / 3, are the most that can be left out)."""
    groups = np.array_split(np.arange(n), 3)
    return [(int(g[a]), int(g[b])) for g in groups for a in range(len(g))
            for b in range(a + 1, len(g))]


def kept_nonlinear_tensors(system: CoupledSystem, p: Any, T: np.ndarray
                           ) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`nonlinear_tensors`, kept on the body's part for its basis: a model integrated
    again keeps its coupled system, whose parts keep the tensors of the basis they were found
    for (the basis' rows of the body, by digest; found again where any rank's differ: the
    same decision on every rank). Collective.

    Args:
        system: the coupled system.
        p: the body's part.
        T: the body's reduced fields (as :func:`nonlinear_tensors` takes them).

    Returns:
        (H, C) of :func:`nonlinear_tensors` (read-only: shared by the runs).
    """
    digest = hashlib.sha1(np.ascontiguousarray(T[p.slice]).tobytes()).hexdigest()
    if not system.comm.allreduce(digest in p.dense_tensors, op=MPI.LAND):
        H, C = nonlinear_tensors(system, p, T)
        H.setflags(write=False)
        C.setflags(write=False)
        p.dense_tensors.clear()
        p.dense_tensors[digest] = (H, C)
    return cast(Tuple[np.ndarray, np.ndarray], p.dense_tensors[digest])


class _Projection:
    """This rank's part of Z^T A Z for matrices A of the space of ``x``: Z a PETSc dense
    matrix made once, A Z one product (MatMatMult), its result kept for the next A of the same
    object (the product's reuse: a matrix assembled again in place).

    Args:
        Z: local rows of the columns.
        x: a vector of the space (its layout).
    """

    def __init__(self, Z: np.ndarray, x: PETSc.Vec) -> None:
        from petsc4py import PETSc
        self.Z = Z
        self.Zm = PETSc.Mat().createDense(((x.getLocalSize(), x.getSize()),
                                           (None, Z.shape[1])), comm=x.getComm())
        self.Zm.setUp()
        self.Zm.getDenseArray()[:] = Z
        self.Zm.assemble()
        self._last: tuple = (None, None)

    def of(self, A: PETSc.Mat) -> np.ndarray:
        """Z^T A Z (this rank's part)."""
        src, Y = self._last
        if src is A:
            A.matMult(self.Zm, Y)
        else:
            if Y is not None:
                Y.destroy()
            Y = A.matMult(self.Zm)
            self._last = (A, Y)
        return cast(np.ndarray, self.Z.T @ Y.getDenseArray(readonly=True))

    def destroy(self) -> None:
        """Free the PETSc objects."""
        if self._last[1] is not None:
            self._last[1].destroy()
        self._last = (None, None)
        self.Zm.destroy()


class _Invariants:
    """One elastic body's projected invariants (see the module docstring)."""

    def __init__(self, system: CoupledSystem, p: Any, T: np.ndarray) -> None:
        comm = system.comm
        g, n = p.gdim, T.shape[1]
        self.g, self.n, self.frame, self.body = g, n, p.frame, p.body
        #: the first of the body's reduced coordinates (DenseCoupled sets it)
        self.q0 = 0
        self.nz = nz = 1 + g + n
        ops = p.ops
        Xf = p.X[:, :g].reshape(-1)
        cols = [Xf] + [np.tile(_E[k, :g], p.n // g) for k in range(g)] + [T[:, i]
                                                                          for i in range(n)]
        Zloc = np.array(cols).T                         # local rows of Z
        basis = coupling_basis(g)

        # Z^T c_E Z, the package's matrices
        x = p.vec()
        proj = _Projection(Zloc, x)
        loc = np.array([proj.of(B) for _, B in p.basis])
        proj.destroy()
        proj = _Projection(T, x)
        P = np.empty_like(loc)
        comm.Allreduce(loc, P, op=MPI.SUM)
        # P(E_ab) for the unit matrices: P(W) = sum_ab W_ab Pe[a, b]
        self.Pe = np.zeros((3, 3, nz, nz))
        for a in range(g):
            for b in range(g):
                Eab = np.zeros((3, 3))
                Eab[a, b] = 1.0
                self.Pe[a, b] = sum(coeff(Eab) * Pk for (coeff, _), Pk in zip(basis, P))
        self.T = slice(1 + g, nz)
        self.t = slice(1, 1 + g)
        #: the stack P(E_ab) over the g x g unit matrices, flattened (g^2, nz, nz)
        self.Pe2 = np.ascontiguousarray(self.Pe[:g, :g].reshape(g * g, nz, nz))
        #: the moments' components: z alone in 2D
        self.ks = (2,) if g == 2 else (0, 1, 2)

        def reduced(A: PETSc.Mat | None) -> np.ndarray:
            if A is None:
                return np.zeros((n, n))
            return cast(np.ndarray, comm.allreduce(proj.of(A)))
        self.K = reduced(ops.K)
        self.D = reduced(ops.D)
        self.cases = [case for case, _ in ops.prestress_matrices]
        self.P_cases = [reduced(Pm) for _, Pm in ops.prestress_matrices]
        # the constant applied loads (gravity apart): T^T f, their resultant and moment
        # about O at x = X + T q: m0 + Mq q
        st0 = system.frames[p.frame].state(0.0)
        p.body.set_state(st0)
        app = ops.loads.applied_at(st0).getArray(readonly=True).copy()
        gl = p.body.gravity_local.value[:g] if hasattr(p.body, "gravity_local") else None
        if gl is not None:
            for k in range(g):
                if gl[k] != 0.0:
                    app -= float(gl[k]) * p.Mt[k].getArray(readonly=True)
        fa = app.reshape(-1, g)
        f3 = np.zeros((fa.shape[0], 3))
        f3[:, :g] = fa
        T3 = np.zeros((fa.shape[0], 3, n))
        T3[:, :g, :] = T.reshape(-1, g, n)
        self.app_T = comm.allreduce(T.T @ app)
        self.app_F = comm.allreduce(f3.sum(axis=0))
        self.app_M0 = comm.allreduce(np.cross(p.X, f3).sum(axis=0))
        # sum_n (T_n q) x f_n = Mq q: column i is sum_n T_n e_i x f_n
        Mq = np.zeros((3, n))
        for i in range(n):
            Mq[:, i] = np.cross(T3[:, :, i], f3).sum(axis=0)
        self.app_Mq = comm.allreduce(Mq)
        self.mass = p.mass
        #: the nonlinear strain's tensors (:func:`nonlinear_tensors`; None for a linear body)
        self.H: np.ndarray | None = None
        self.C: np.ndarray | None = None
        proj.destroy()
        x.destroy()

    def P(self, W: np.ndarray) -> np.ndarray:
        """The invariant of ``W``: the sum over a, b of W_ab times the one of E_ab."""
        g = self.g
        return np.tensordot(W[:g, :g], self.Pe[:g, :g], 2)


class _RigidInvariants:
    """A rigid body's invariants as those of a body without modes (g = 3, Z = [X, t_1..t_3]):
    P(E)_00 = sum_ab E_ab S_ab (S = int rho X X^T = tr(J)/2 I - J + m c c^T about O, J the
    inertia about the centre), P(E)_0k = (E^T s)_k, P(E)_j0 = (E s)_j, P(E)_jk = m E_jk
    (s = m c): the rows of :meth:`~dolfinx_mbs.bodies.RigidBody.forces` (F = m (a_O - g_loc +
    alpha x c + omega x (omega x c)), M_O = c x F + J alpha + omega x J omega) are the body's
    terms of the module docstring with these P."""

    def __init__(self, rb: RigidBody, frame: int) -> None:
        m, c, J = float(rb.mass), np.asarray(rb.centre, float), np.asarray(rb.inertia, float)
        s = m * c
        S2 = 0.5 * np.trace(J) * np.eye(3) - J + m * np.outer(c, c)
        self.g, self.n, self.nz, self.frame = 3, 0, 4, frame
        self.q0 = 0
        self.Pe = np.zeros((3, 3, 4, 4))
        for a in range(3):
            for b in range(3):
                P = self.Pe[a, b]
                P[0, 0] = S2[a, b]
                P[0, 1 + b] = s[a]
                P[1 + a, 0] = s[b]
                P[1 + a, 1 + b] = m
        self.K = self.D = np.zeros((0, 0))
        self.cases, self.P_cases = [], []
        self.app_T = np.zeros(0)
        self.app_F = self.app_M0 = np.zeros(3)
        self.app_Mq = np.zeros((3, 0))
        self.mass = m
        self.H = self.C = None


@dataclasses.dataclass
class Plan:
    """A coupled model as the dense kernels read it
    (:mod:`dolfinx_mbs.integrate.dense.coupled_kernels`: its docstring has the layouts).

    Attributes:
        bi, bf, ci: the bodies' integer table, their floats, the prestress cases.
        fi, ff: the frames' integer table and constants.
        grav: gravity (global components; zero for none).
        n: the elastic reduced coordinates; m: the frame unknowns; N = 2 n + m.
    """

    bi: np.ndarray
    bf: np.ndarray
    ci: np.ndarray
    fi: np.ndarray
    ff: np.ndarray
    grav: np.ndarray
    n: int
    m: int
    N: int

    def arrays(self) -> tuple:
        """(bi, bf, ci, fi, ff, grav, n): the kernels' first argument (``plan`` of
        :func:`dolfinx_mbs.integrate.dense.coupled_kernels.residual`)."""
        return self.bi, self.bf, self.ci, self.fi, self.ff, self.grav, self.n


class DenseCoupled:
    """The coupled equations of ``system`` on the projected invariants (module docstring),
    as flat arrays (:attr:`plan`).

    Collective at construction (the projections); every method after it is local.

    Args:
        system: the coupled system (:func:`dense_reason` None).
    """

    def __init__(self, system: CoupledSystem) -> None:
        why = dense_reason(system)
        if why is not None:
            raise ValueError(f"the dense coupled form does not take {why}")
        self.system = s = system
        self.n = s.n_reduced
        #: the frames' unknowns (coordinates, speeds, auxiliary momenta; the joints'
        #: multipliers of the TS path are not unknowns here: Maggi's equations eliminate them)
        self.m = s.m - s.jointset.n_unknowns
        self.N = 2 * self.n + self.m
        T = self._basis() if s.parts else None
        #: the reduced basis' local rows (the joints' nodes read them)
        self._T_local = T if T is not None else np.zeros((0, 0))
        self.inv: List[Any] = []
        if T is not None:
            for p, cols in zip(s.parts, self._columns(T)):
                self.inv.append(_Invariants(s, p, T[p.slice, cols]))
                self.inv[-1].q0 = cols.start
                if p.body.u_state is not None:
                    self.inv[-1].H, self.inv[-1].C = kept_nonlinear_tensors(s, p, T[:, cols])
        self.inv += [_RigidInvariants(rb, i) for i in range(len(s.frames))
                     for rb in s.rigid_on[i]]
        self.gravity = s.gravity
        self.plan = self._plan()
        #: the frames with a prescribed parent, by index
        self.parents = [(i, cast(Hinge, fr).parent) for i, fr in enumerate(s.frames)
                        if getattr(fr, "parent", None) is not None]
        self._ground = np.zeros((len(s.frames), K_PAR))
        self._ground[:, 0:9] = np.eye(3).reshape(-1)

    def _columns(self, T: np.ndarray) -> List[slice]:
        """Each elastic body's reduced coordinates: the range of the columns of T nonzero on
        its rows (the body's terms are T_b^T (...), zero in any other column, so that a
        range wider than the body's own columns, or shared with another body, is exact too;
        its own block keeps the invariants small)."""
        s = self.system
        used = np.array([np.abs(T[p.slice]).max(axis=0, initial=0.0) > 0.0 for p in s.parts])
        used = s.comm.allreduce(used.astype(np.int64)) > 0
        out = []
        for row in used:
            idx = np.flatnonzero(row)
            out.append(slice(int(idx[0]), int(idx[-1]) + 1) if idx.size else slice(0, 0))
        return out

    def _basis(self) -> np.ndarray:
        """The full fields of the reduced unit vectors (local rows, all columns)."""
        s = self.system
        q = s.create_reduced_vec()
        full = s.elastic_space.create_vec()
        r0, r1 = q.getOwnershipRange()
        cols = []
        for i in range(self.n):
            q.zeroEntries()
            if r0 <= i < r1:
                q.setValue(i, 1.0)
            q.assemble()
            s.expand(q, out=full, homogeneous=True)
            cols.append(full.getArray(readonly=True).copy())
        q.destroy()
        full.destroy()
        return np.array(cols).T if cols else np.zeros((0, 0))

    def _plan(self) -> Plan:
        s = self.system
        fi = np.zeros((len(s.frames), K_FI), dtype=np.int64)
        ff = np.zeros((len(s.frames), K_FF))
        for i, (fr, zs, ws, As) in enumerate(zip(s.frames, s.zslice, s.wslice, s.aslice)):
            Tm = np.zeros((3, 6))
            Om = np.zeros((3, 6))
            if isinstance(fr, Free):   # its translation rows are its momentum balance: T = 0
                kind = KIND_FREE2 if fr.gdim == 2 else KIND_FREE3
                fi[i] = (kind, zs.start, ws.start, zs.stop - zs.start, ws.stop - ws.start,
                         As.start, fr.n_translations)
                if kind == KIND_FREE2:   # omega = theta' e_z
                    Om[2, 2] = 1.0
                else:                    # omega = the last three speeds
                    Om[:, 3:6] = np.eye(3)
            else:
                fr = cast(Hinge, fr)
                fi[i] = (KIND_HINGE, zs.start, ws.start, zs.stop - zs.start,
                         ws.stop - ws.start, -1, 0)
                n_, c = np.asarray(fr.axis, dtype=float), np.asarray(fr.pivot, dtype=float)
                nc = cross3(n_, c)
                K = skew(n_)
                ff[i, 0:30] = np.concatenate([n_, c, nc, cross3(n_, nc), K.reshape(-1),
                                              (K @ K).reshape(-1)])
                Tm[:, 0], Om[:, 0] = -nc, n_
            ff[i, 30:48], ff[i, 48:66] = Tm.reshape(-1), Om.reshape(-1)
        bf: List[np.ndarray] = []
        size = [0]

        def put(a: np.ndarray) -> int:
            off = size[0]
            a = np.ascontiguousarray(a, dtype=float).reshape(-1)
            bf.append(a)
            size[0] += a.size
            return off
        bi = np.zeros((len(self.inv), K_BI), dtype=np.int64)
        cases: List[Tuple[int, int, int, int]] = []
        for b, inv in enumerate(self.inv):
            g, nz, n = inv.g, inv.nz, inv.n
            Pe2 = inv.Pe[:g, :g].reshape(g * g, nz, nz)
            K0 = inv.K.copy()
            first = len(cases)
            for case, Pc in zip(inv.cases, inv.P_cases):
                if case[0] == "applied":
                    K0 = K0 + Pc
                elif case[0] == "g":
                    cases.append((1, int(case[1]), 0, put(Pc)))
                else:
                    cases.append((0, int(case[0]), int(case[1]), put(Pc)))
            app = np.concatenate([inv.app_F, inv.app_M0])
            nl = (put(inv.H), put(inv.C), 1) if inv.H is not None else (0, 0, 0)
            bi[b] = (inv.frame, g, nz, n, inv.q0, put(Pe2), put(np.transpose(Pe2, (0, 2, 1))),
                     put(sum(Pe2[a * g + a] for a in range(g))), put(inv.app_T), put(app),
                     put(inv.app_Mq), put(K0), put(inv.D), first, len(cases) - first, *nl)
        grav = np.zeros(3) if self.gravity is None else np.asarray(self.gravity, float)
        ci = np.array(cases, dtype=np.int64).reshape(-1, 4)
        return Plan(bi=bi, bf=np.concatenate(bf) if bf else np.zeros(0), ci=ci, fi=fi, ff=ff,
                    grav=grav, n=self.n, m=self.m, N=self.N)

    def parent_states(self, t: float, out: np.ndarray | None = None) -> np.ndarray:
        """The frames' parent states at ``t`` (nf x 24: the ground's where a frame has no
        parent); calls the parents' motions (user code, maybe).

        Args:
            t: the time (s).
            out: the array to fill (a copy of the ground's if None).

        Returns:
            ``out``.
        """
        out = self._ground.copy() if out is None else out
        for i, p in self.parents:
            assert p is not None  # (the frames with a parent only)
            st = p.state(t)
            out[i] = np.concatenate([np.asarray(st.R, float).reshape(-1), st.r_O, st.omega,
                                     st.alpha, st.v_O, st.a_O])
        return out

    @property
    def constant_parents(self) -> bool:
        """Whether no frame has a prescribed parent (the parents' states are the ground's at
        every time)."""
        return not self.parents

    def states(self, t: float, f: np.ndarray) -> List[FrameState]:
        """The computed frames' states at the unknowns ``f`` (zero accelerations).

        Args:
            t: the time (s).
            f: the frame unknowns.

        Returns:
            One state per computed frame.
        """
        return [j.state for j in self.system.jets(t, f, np.zeros_like(f))]


class LazyView(FrameView):
    """What a load function sees of a computed frame (as
    :class:`~dolfinx_mbs.systems.coupled.FrameView`), made only when the function reads it:
    the frame's named outputs (``angle``, ``rate``) at the first read, its state (``R``,
    ``r_O``, ``omega``, ``v_O``, ``state``) at the first read of one of those. With
    ``probe``, any read raises :class:`StateRead` instead (a function of time alone reads
    nothing: its value at a time is then known before the state is).

    Args:
        frame: the computed frame.
        t: the time (s).
        z: its coordinates (None for a probe).
        w: its speeds (None for a probe).
        probe: raise at a read.
    """

    _STATE = ("R", "r_O", "omega", "v_O", "state")

    def __init__(self, frame: ComputedFrame, t: float, z: np.ndarray | None,
                 w: np.ndarray | None, probe: bool = False) -> None:
        d = object.__getattribute__(self, "__dict__")
        d.update({"_read_": False, "_lazy_": (frame, t, z, w, probe), "_filled_": 0})

    def _fill(self, level: int) -> None:
        d = object.__getattribute__(self, "__dict__")
        frame, t, z, w, probe = d["_lazy_"]
        if probe:
            raise StateRead()
        if d["_filled_"] < 1:
            d.update({"frame": frame, "z": z, "w": w, **frame.describe(z, w)})
            d["_filled_"] = 1
        if level > 1 and d["_filled_"] < 2:
            st = frame.state_at(t, z, w)
            d.update({"state": st, "R": st.R, "r_O": st.r_O, "omega": st.omega, "v_O": st.v_O})
            d["_filled_"] = 2

    def __getattribute__(self, name: str) -> Any:
        if name in ("_fill", "_STATE", "_read_", "_lazy_", "_filled_", "__class__"):
            return object.__getattribute__(self, name)
        d = object.__getattribute__(self, "__dict__")
        d["_read_"] = True
        level = 2 if (name in LazyView._STATE or name == "__dict__") else 1
        if d["_filled_"] < level:
            object.__getattribute__(self, "_fill")(level)
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        d = object.__getattribute__(self, "__dict__")
        names = sorted(k for k in d if not k.startswith("_"))
        raise AttributeError(f"the frame's state has no {name!r}; it has {', '.join(names)}")


class StateRead(BaseException):
    """A load function read the frame's state where its value was asked for at a time alone
    (:class:`LazyView` with ``probe``): not an error of the function (a BaseException, so
    that its own ``except Exception`` lets it through)."""
