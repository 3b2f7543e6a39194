"""Reduced-order bodies: the shapes a reduced body's displacement is made of (the offline phase).

A body reduced by :meth:`dolfinx_mbs.Model.reduce` moves as a few shapes, Delta_b = T_b xi_b,
computed once here by SLEPc at a reference frame state (spin softening and, for bodies with
prestress, the geometric stiffness of that state included), in parallel:

* ``"modal"``: free-interface modal truncation: the lowest modes of the body with only its own
  homogeneous ground constraints (clamps, zero prescribed values: *absorbed* in the shapes),
  the rigid-body modes among them when nothing grounds it; joints to other bodies act on the
  modal coordinates through the Maggi reducer;
* ``"craig-bampton"``: the dofs of the body that other constraints touch (its *interface*:
  joints, rows, moving prescribed values) stay physical coordinates, each with its static
  constraint mode (the interior's static response to a unit interface displacement), plus the
  lowest modes of the body with the interface held fixed.

The count is a number of modes or a frequency ``cutoff``; with ``residual`` the static response
to the body's loads at given times is added (residual flexibility), made M-orthogonal to the
modes. With ``derivatives`` (bodies with ``stiffening="nonlinear"``) the static modal
derivatives of the lowest modes are added: theta_ij = d^2 u / dq_i dq_j of the static
response, K theta_ij = -L(phi_i) phi_j, L(a) the part of the nonlinear tangent linear in the
displacement a (L(a) a = f_N(a) + f_N(-a) exactly, f_N the internal force's excess, quadratic
plus cubic in a); they hold the second-order fields a linear basis lacks (the axial shortening
that a bent beam's ends or interior take up), without which the reduced nonlinear body is too
stiff.
:mod:`dolfinx_mbs.reduction.basis_reducer` composes the shapes with the Maggi reducer.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, List, Sequence, Tuple, cast

import numpy as np
from petsc4py import PETSc
from slepc4py import SLEPc

from dolfinx_mbs import checks, compat
from dolfinx_mbs.petsc_options import EIGEN_PREFIX as PREFIX
from dolfinx_mbs.petsc_options import direct_lu, factorize

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.bodies.body import Body

__all__ = ["METHODS", "ReducedBody", "body_shapes"]

#: the reduction methods of ``Model.reduce`` (``method=``)
METHODS = ("craig-bampton", "modal")
#: the share of the eigenproblem's scale (|K|_inf / |M|_inf) above which the lowest eigenvalue
#: of a reduced body's interior proves its stiffness regular (``ReducedBody.held``)
HELD = 1e-10
#: the backward error below which the eigenpairs found with PETSc's own LU (one process) are
#: kept (SLEPc's tolerance is 1e-12; else MUMPS solves again)
EIGEN_BACKWARD = 1e-9


class ReducedBody:
    """A body of a model reduced to a few coordinates (:meth:`dolfinx_mbs.Model.reduce`).

    Args:
        body: the body.
        modes: number of (fixed-interface or free-interface) modes kept, >= 1.
        method: ``"craig-bampton"`` or ``"modal"``.
        cutoff: instead of a number, keep every mode below this frequency (rad/s; ``modes``
            is then ignored).
        t: the time of the reference frame state (its spin softening and prestress).
        residual: False, True (the static response to the body's loads at ``t``) or a
            sequence of times whose loads' static responses are added.
        derivatives: the static modal derivatives of the lowest ``derivatives`` modes (their
            pairs i <= j: k (k + 1) / 2 shapes for k), for a body with
            ``stiffening="nonlinear"``; 0 for none.

    Attributes (known once the model's systems are made):
        frequencies: the kept modes' frequencies at the reference state (rad/s).
        n_coordinates: the body's coordinates (interface dofs + modes + residual shapes).
        n_interface: its interface dofs (Craig-Bampton).
        held: True where the reduction proved that its shapes hold no rigid motion relative
        to its frame (no interface dofs, the interior's lowest eigenvalue above :data:`HELD`
        of the problem's scale: its stiffness regular); False where not proven (the model
        checks).
    """

    def __init__(self, body: Body, modes: int | None = 20, method: str = "craig-bampton",
                 cutoff: float | None = None, t: float = 0.0,
                 residual: bool | Sequence[float] = False, derivatives: int = 0) -> None:
        if method not in METHODS:
            raise ValueError(f"reduce: method must be one of {METHODS}, got {method!r}")
        if isinstance(derivatives, bool) or not isinstance(derivatives, (int, np.integer)) \
                or derivatives < 0:
            raise ValueError(f"reduce: derivatives must be an integer >= 0, got "
                             f"{derivatives!r}")
        if derivatives and body.stiffening != "nonlinear":
            raise ValueError(f"reduce: derivatives need a body with stiffening='nonlinear'; "
                             f"body {body.name!r} has stiffening={body.stiffening!r}")
        if cutoff is None:
            if isinstance(modes, bool) or not isinstance(modes, (int, np.integer)) \
                    or modes < 1:
                raise ValueError(f"reduce: modes must be an integer >= 1, got {modes!r}")
            modes = int(modes)
        else:   # the count follows from the cut-off
            cutoff, modes = checks.positive(cutoff, "cutoff"), None
        if modes is not None and derivatives > modes:
            raise ValueError(f"reduce: derivatives must be at most modes ({modes}), got "
                             f"{derivatives}")
        self.t = checks.real(t, "t")
        if residual is True:
            residual = [self.t]
        elif residual is False or residual is None:
            residual = []
        else:
            try:
                residual = [checks.real(x, "residual") for x in residual]
            except TypeError:
                raise ValueError("reduce: residual must be True, False or a sequence of "
                                 f"times, got {residual!r}") from None
        self.body, self.modes, self.method, self.cutoff = body, modes, method, cutoff
        self.residual: List[float] = residual
        self.derivatives = int(derivatives)
        if body.stiffening == "nonlinear" and not derivatives:
            warnings.warn(f"reduce: body {body.name!r} has stiffening='nonlinear' and no modal "
                          "derivatives: a basis of modes alone locks (far too stiff); pass "
                          "derivatives=k (the lowest k modes' static modal derivatives)",
                          stacklevel=3)
        self.frequencies: np.ndarray | None = None
        self.held = False
        self.n_coordinates: int | None = None
        self.n_interface: int | None = None

    def __repr__(self) -> str:
        return (f"ReducedBody({self.body.name!r}, method={self.method!r}, "
                f"coordinates={self.n_coordinates})")


def _eigenvectors(K: PETSc.Mat, M: PETSc.Mat, nev: int, cutoff: float | None,
                  factored: PETSc.KSP | None = None
                  ) -> Tuple[np.ndarray, List[PETSc.Vec], float, SLEPc.EPS | None]:
    """The lowest eigenpairs of K x = w^2 M x (shift-and-invert below zero: rigid-body modes
    and the elastic ones in ascending order); with ``cutoff`` all below it; the problem's
    scale |K|_inf / |M|_inf (an eigenvalue's size); and, where ``factored`` (a KSP of K,
    factored) served - K regular, the shift zero, the pairs' backward errors the problem's -
    the solver that shares it, for the caller to destroy after its own solves with
    ``factored`` (else None: the shift below zero with factorizations of its own)."""
    n_free = K.getSize()[0]
    scale = K.norm(PETSc.NormType.NORM_INFINITY) / max(M.norm(PETSc.NormType.NORM_INFINITY),
                                                         1e-300)
    want = min(nev if cutoff is None else max(nev, 8), n_free)
    # K's factorization first where it is given (no factorization of the eigenproblem's own:
    # its pairs are checked); on one process PETSc's own LU next (MUMPS's set-up costs more
    # than a small body's whole eigenproblem), kept where the pairs it gives are the
    # problem's (their backward errors); MUMPS, which pivots, where it fails or they are not
    solvers: List[str | PETSc.KSP] = ["petsc", "mumps"] if K.getComm().getSize() == 1 \
        else ["mumps"]
    if factored is not None:
        solvers.insert(0, factored)
    while True:
        shared = not isinstance(solvers[0], str)
        eps = SLEPc.EPS().create(K.getComm())
        eps.setOperators(K, M)
        eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
        eps.setDimensions(nev=want)
        eps.setTarget(0.0 if shared else -1e-8 * scale)
        eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
        eps.setTolerances(tol=1e-12, max_it=1000)
        st = eps.getST()
        st.setType(SLEPc.ST.Type.SINVERT)
        if not shared:
            direct_lu(st.getKSP(), solver=cast(str, solvers[0]))
        eps.setOptionsPrefix(PREFIX)
        eps.setFromOptions()
        if shared:   # after the options: a factored KSP is not reconfigured by them
            st.setKSP(cast(PETSc.KSP, solvers[0]))
        try:
            eps.solve()
            good = len(solvers) == 1 or all(
                eps.computeError(i, SLEPc.EPS.ErrorType.BACKWARD) < EIGEN_BACKWARD
                for i in range(min(eps.getConverged(), want)))
        except PETSc.Error:
            if len(solvers) == 1:
                raise
            good = False
        if not good:
            solvers.pop(0)
            eps.destroy()
            continue
        nconv = eps.getConverged()
        if nconv < want:
            raise RuntimeError(f"reduce: SLEPc converged {nconv} of the {want} modes")
        lam = np.array([eps.getEigenvalue(i).real for i in range(nconv)])
        order = np.argsort(lam)[:max(want, 1)]
        if cutoff is not None and lam[order].max() <= cutoff ** 2 and want < n_free:
            want = min(2 * want, n_free)   # not past the cutoff yet: more modes
            eps.destroy()
            continue
        if cutoff is not None:
            order = [i for i in order if lam[i] <= cutoff ** 2] or order[:1]  # type: ignore[assignment]
        vecs = []
        Mx = M.createVecLeft()
        for i in order:   # M-normalized
            x = K.createVecRight()
            eps.getEigenvector(int(i), x)
            x.scale(1.0 / _m_norm(M, x, Mx))
            vecs.append(x)
        Mx.destroy()
        w = np.sign(lam[order]) * np.sqrt(np.abs(lam[order]))
        if shared:   # (its destruction resets the KSP it shares: the caller's, after its solves)
            return w, vecs, scale, eps
        eps.destroy()
        return w, vecs, scale, None


def body_shapes(assembly: Assembly, ib: int, reduced: ReducedBody, fixed: np.ndarray,
                interface: np.ndarray) -> np.ndarray:
    """The shapes of body ``ib`` as columns on this rank's owned dofs of the body.

    Args:
        assembly: the model's :class:`~dolfinx_mbs.assembly.Assembly`.
        ib: the body's index.
        reduced: what to compute.
        fixed: bool mask of the body's owned dofs held at zero by absorbed constraints.
        interface: sorted full indices (every rank) of the interface dofs (Craig-Bampton;
            empty for ``"modal"``).

    Returns:
        (n_owned, len(interface) + modes + residual shapes + modal derivatives): the
        constraint modes (in the order of ``interface``), the modes, the residual shapes, the
        modal derivatives; ``reduced``'s ``frequencies`` set.
    """
    space, t = assembly.space, reduced.t
    states = assembly.states(t)
    K = assembly.stiffness(t, angular_acceleration=False, states=states)
    M = assembly.mass()
    start, stop = space.owned_range(ib)
    n = stop - start
    mine = (interface >= start) & (interface < stop)
    held = fixed.copy()
    held[interface[mine] - start] = True
    free = np.flatnonzero(~held)
    iset = PETSc.IS().createGeneral((start + free).astype(PETSc.IntType), comm=space.comm)
    Kii, Mii = K.createSubMatrix(iset, iset), M.createSubMatrix(iset, iset)
    cols: List[np.ndarray] = []
    what = "the stiffness of the reduced body's interior (the interface held)"
    ksp = PETSc.KSP().create(space.comm)
    ksp.setOperators(Kii)
    # K_ii solved below (the same on every rank): factored once for its solves and for the
    # eigenproblem's shift-and-invert at zero (PETSc's LU on one process, checked by the
    # eigenpairs' backward errors), where it is regular; else by MUMPS, which pivots
    solved = bool(interface.size or reduced.derivatives or reduced.residual)
    shared = None
    if solved:
        direct_lu(ksp, solver="petsc" if space.comm.size == 1 else "mumps")
        shared = ksp if factorize(ksp) == 0 else None
    w, vecs, scale, eps = _eigenvectors(Kii, Mii, reduced.modes or 1, reduced.cutoff, shared)
    if eps is None:
        ksp.destroy()
        ksp = PETSc.KSP().create(space.comm)
        ksp.setOperators(Kii)
        direct_lu(ksp)
        if interface.size:   # factored, or an error
            factorize(ksp, what)
    x, rhs = Kii.createVecs()
    e = space.create_vec()
    Ke = space.create_vec()
    for j in interface.tolist():   # static constraint modes: K_ii x = -K_ib e_j
        e.zeroEntries()
        if start <= j < stop:
            e.setValue(j, 1.0)
        e.assemble()
        K.mult(e, Ke)
        rhs.array[:] = -Ke.getArray(readonly=True)[free + space.offsets[ib]]
        ksp.solve(rhs, x)
        col = np.zeros(n)
        col[free] = x.getArray(readonly=True)
        if start <= j < stop:
            col[j - start] = 1.0
        cols.append(col)
    reduced.frequencies = w
    # no interface and K_ii's lowest eigenvalue clear of zero (a singular K_ii's is round-off,
    # below 1e-14 of the scale): every shape vanishes where the body is held and K_ii, which no
    # rigid motion zero there escapes, is regular; prestress (a geometric stiffness that can
    # hold a free body) left to the model's check
    reduced.held = bool(interface.size == 0 and not assembly.bodies[ib].prestress_fields
                        and assembly.bodies[ib].stiffening != "prestress"
                        and w[0] > 0.0 and w[0] ** 2 > HELD * scale)
    for v in vecs:
        col = np.zeros(n)
        col[free] = v.getArray(readonly=True)
        cols.append(col)
    Mx = Mii.createVecLeft()

    def add(x: PETSc.Vec) -> None:
        """Keep a copy of x made M-orthogonal to the shapes so far and M-normalized, unless
        nothing is left of it."""
        norm0 = _m_norm(Mii, x, Mx)
        for v in vecs:
            Mii.mult(v, Mx)
            x.axpy(-x.dot(Mx) / v.dot(Mx), v)
        norm = _m_norm(Mii, x, Mx)
        if norm > 1e-8 * max(norm0, 1e-300):
            x.scale(1.0 / norm)
            vecs.append(x.copy())
            col = np.zeros(n)
            col[free] = x.getArray(readonly=True)
            cols.append(col)

    for tau in reduced.residual:   # residual flexibility: K_ii x = Q_i
        Q = assembly.load(tau, assembly.states(tau))
        rhs.array[:] = Q.getArray(readonly=True)[free + space.offsets[ib]]
        ksp.solve(rhs, x)
        add(x)
    k = min(reduced.derivatives, len(w))
    for d in _derivatives(assembly, ib, free, vecs[:k], ksp, rhs):
        add(d)
        d.destroy()
    for obj in ([eps] if eps is not None else []) + [ksp, x, rhs, e, Ke, Kii, Mii, Mx,
                                                      iset] + vecs:
        obj.destroy()
    return np.column_stack(cols) if cols else np.zeros((n, 0))


def _derivatives(assembly: Assembly, ib: int, free: np.ndarray, modes: List[PETSc.Vec],
                 ksp: PETSc.KSP, rhs: PETSc.Vec) -> List[PETSc.Vec]:
    """The static modal derivatives theta_ij (i <= j) of body ``ib``'s ``modes`` (interior
    vectors on the dofs ``free``): K_ii theta_ij = -L(phi_i) phi_j (module docstring), with
    ``ksp`` the interior's factored stiffness. L(a) b is summed at the quadrature points where
    ``compat.EXPRESSIONS_KEPT`` (``assembly.strain_points``: no nonlinear form made); else
    found from the assembled force's excess f_n (its even part is 1/2 L(u) u, exactly: f_n is
    quadratic plus cubic in u):
    L(a) a = f_n(a) + f_n(-a), and for i < j L(a) b = 1/2 (L(a + b)(a + b) - L(a) a - L(b) b)
    (L symmetric: the tangent of a potential's force): k (k + 1) vector assemblies for k
    modes. The body's nonlinear state is left as found."""
    if not modes:
        return []
    k = len(modes)
    pairs = [(i, j) for i in range(k) for j in range(i, k)]
    if compat.EXPRESSIONS_KEPT:   # summed at the quadrature points: no nonlinear form
        start, stop = assembly.space.owned_range(ib)
        F = np.zeros((stop - start, k))
        for i, v in enumerate(modes):
            F[free, i] = v.getArray(readonly=True)
        L = assembly.body_operators[ib].strain_points().linear_tangent(F, pairs)
        return [_solved(ksp, rhs, -L[free, c]) for c in range(len(pairs))]
    space = assembly.space
    rows = free + space.offsets[ib]
    u = space.create_vec()
    full = []
    for v in modes:   # the modes as full displacements
        f = np.zeros(u.getLocalSize())
        f[rows] = v.getArray(readonly=True)
        full.append(f)

    def even(a: np.ndarray) -> np.ndarray:
        """L(a) a on the interior rows."""
        out = np.zeros(len(rows))
        for sign in (1.0, -1.0):
            u.array[:] = sign * a
            N = assembly.nonlinear_terms(u, force=True, tangent=False)[0]
            assert N is not None  # (force asked)
            out += N.getArray(readonly=True)[rows]
        return out
    prod = {}   # L(phi_i) phi_j, interior rows
    with assembly.nonlinear_state_kept():
        for i in range(k):
            prod[i, i] = even(full[i])
        for i in range(k):
            for j in range(i + 1, k):
                prod[i, j] = 0.5 * (even(full[i] + full[j]) - prod[i, i] - prod[j, j])
    u.destroy()
    return [_solved(ksp, rhs, -prod[ij]) for ij in pairs]


def _solved(ksp: PETSc.KSP, rhs: PETSc.Vec, b: np.ndarray) -> PETSc.Vec:
    """The solution of ``ksp``'s system for the right side ``b`` (a new vector)."""
    rhs.array[:] = b
    x = rhs.duplicate()
    ksp.solve(rhs, x)
    return x


def _m_norm(M: PETSc.Mat, x: PETSc.Vec, work: PETSc.Vec) -> float:
    M.mult(x, work)
    return float(np.sqrt(max(x.dot(work), 0.0)))

