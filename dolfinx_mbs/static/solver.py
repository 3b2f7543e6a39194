"""Static solves on the Maggi-reduced system: the steady deformation at a frame state, and
the unit prestress fields of bodies with ``stiffening="prestress"``.

    q = StaticSolver(comm).solve(system, t)          # reduced coordinates
    system.expand(t, q)                              # the full displacement

Linear solves use PETSc KSP with the options prefix ``mbs_static_`` (default: direct LU with
MUMPS, which counts null pivots so that a singular reduced stiffness is reported); with
nonlinear strain, Newton's method (PETSc SNES, same prefix).
"""

from __future__ import annotations

import dataclasses
import weakref
from types import SimpleNamespace
from typing import TYPE_CHECKING, Dict, List, Protocol, Sequence, Tuple

import numpy as np
from dolfinx import fem
from petsc4py import PETSc

from dolfinx_mbs import checks, compat
from dolfinx_mbs.frames.base import FrameState, equal_motion, key_floats
from dolfinx_mbs.petsc_options import SAME, SUBSET, SolverOptions, direct_lu, factorize
from dolfinx_mbs.systems.rigid_modes import rigid_subspace

if TYPE_CHECKING:
    from mpi4py import MPI

    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.constraints.maggi import MaggiReducer
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["StaticSolver", "null_pivots", "negative_eigenvalues", "prestress", "Prestress",
           "joined_bodies", "FrameLink"]

#: Options of the linear static solves: MUMPS counts null pivots (see :func:`null_pivots`);
#: the database's options win
STATIC_OPTIONS = SolverOptions("mbs_static_", compat.MUMPS_NULL_PIVOT_OPTIONS)


def null_pivots(ksp: PETSc.KSP) -> int:
    """Number of null pivots MUMPS found in the factorization of ``ksp``'s operator.

    0 when the preconditioner is not a factorization by MUMPS (other solvers report a
    singular matrix through the KSP's reason). With MUMPS, a failure to read its count is an
    error, not a silent 0: the singularity check would be off.

    Args:
        ksp: the KSP whose factorization is read.

    Returns:
        The number of null pivots.
    """
    pc = ksp.getPC()
    if pc.getType() not in (PETSc.PC.Type.LU, PETSc.PC.Type.CHOLESKY):
        return 0
    if pc.getFactorSolverType() != "mumps":
        return 0
    return int(pc.getFactorMatrix().getMumpsInfog(28))


def negative_eigenvalues(ksp: PETSc.KSP, S: PETSc.Mat) -> int:
    """The number of negative eigenvalues of the symmetric matrix ``S``: the negative pivots of
    its LDL^T factorization by MUMPS (Sylvester's law of inertia), made with ``ksp`` (a KSP
    set up for it by :meth:`StaticSolver.inertia`). -1 when the factorization is not by MUMPS
    (no count is then known).

    Args:
        ksp: a KSP set up by :meth:`StaticSolver.inertia`.
        S: the symmetric matrix.

    Returns:
        The count, or -1.
    """
    ksp.setOperators(S)
    factorize(ksp, "the symmetric matrix whose negative eigenvalues are counted")
    pc = ksp.getPC()
    if pc.getFactorSolverType() != "mumps":
        return -1
    return int(pc.getFactorMatrix().getMumpsInfog(12))


def free_motions(system: SecondOrderSystem, t: float) -> str:
    """The rigid motions ``system``'s constraints leave free at ``t``, in words (for an error
    message).

    Args:
        system: the typed system.
        t: time (s).

    Returns:
        The text.
    """
    rigid = rigid_subspace(system, t, frames=False)  # what the constraints leave free
    if rigid is None:
        return ("No rigid motion is left free: is the spin at a divergence speed (spin "
                "softening equal to the stiffness)?")
    names, dim = rigid.names, rigid.dim
    rigid.destroy()
    listed = f": {'; '.join(names)}" if names else ""
    more = "" if len(names) == dim else \
        f" ({dim - len(names)} of them only combined, a mechanism)" if names else \
        " (combinations of several bodies' motions, a mechanism)"
    return (f"The constraints leave {dim} rigid motion(s) free{listed}{more}: constrain them "
            "(model.clamp, model.pin, ...) for a static solve")


class StaticSolver:
    """The KSP (and, with nonlinear strain, the SNES) of static solves, made once.

    Args:
        comm: the model's communicator.
    """

    def __init__(self, comm: MPI.Comm) -> None:
        self.comm = comm
        self.ksp: PETSc.KSP | None = None
        self._ksp_sizes = None
        self._snes: PETSc.SNES | None = None
        self._snes_for = (None, None)
        self._q: PETSc.Vec | None = None
        self._br: PETSc.Vec | None = None
        self._for: MaggiReducer | None = None  # the reducer the reduced vectors belong to
        self._inertia_ksp: PETSc.KSP | None = None
        #: Newton iterations of the last nonlinear solve
        self.newton_iterations = 0

    def destroy(self) -> None:
        """Destroy the solvers (collective: on every rank at the same point); they are made
        again when next asked for."""
        for name in ("ksp", "_inertia_ksp", "_snes"):
            obj = getattr(self, name)
            if obj is not None:
                obj.destroy()
                setattr(self, name, None)
        self._ksp_sizes, self._snes_for = None, (None, None)

    def linear(self, A: PETSc.Mat) -> PETSc.KSP:
        """The KSP with operator ``A``, set up (factorized if ``A`` changed; a new KSP when
        the size changed: the prestress of a model with reduced bodies is solved on the full
        reducer, its static states on the reduced one).

        Args:
            A: the operator.

        Returns:
            The KSP.
        """
        if self.ksp is not None and self._ksp_sizes != A.getSizes():
            self.ksp.destroy()
            self.ksp = None
        self._ksp_sizes = A.getSizes()
        if self.ksp is None:
            ksp = PETSc.KSP().create(self.comm)
            direct_lu(ksp)
            ksp.setOptionsPrefix(STATIC_OPTIONS.prefix)
            STATIC_OPTIONS.set_from_options(ksp)
            self.ksp = ksp
        self.ksp.setOperators(A)
        STATIC_OPTIONS.set_up(self.ksp)
        return self.ksp

    def inertia(self, Kr: PETSc.Mat) -> int:
        """The number of negative eigenvalues of the symmetric part of ``Kr`` (a second
        factorization: Cholesky (LDL^T) by MUMPS, about half the cost of the LU of the
        solve); -1 when MUMPS is not available.

        Args:
            Kr: the reduced stiffness.

        Returns:
            The count, or -1.
        """
        if self._inertia_ksp is None:
            ksp = PETSc.KSP().create(self.comm)
            direct_lu(ksp, PETSc.PC.Type.CHOLESKY)
            self._inertia_ksp = ksp
        S = Kr.transpose(PETSc.Mat())
        S.axpy(1.0, Kr)   # Kr + Kr^T: the same inertia as the symmetric part
        S.setOption(PETSc.Mat.Option.SYMMETRIC, True)
        try:
            return negative_eigenvalues(self._inertia_ksp, S)
        finally:
            S.destroy()

    def solve(self, system: SecondOrderSystem, t: float,
              states: Sequence[FrameState] | None = None) -> PETSc.Vec:
        """The static equilibrium of ``system`` (a :class:`dolfinx_mbs.systems.SecondOrderSystem`)
        at ``t`` in reduced coordinates (a Vec kept by this solver): one linear solve, or
        Newton's method from the last equilibrium with nonlinear strain.

        Args:
            system: the typed system.
            t: time (s).
            states: one frame state per body instead of ``frame.state(t)``.

        Returns:
            The reduced coordinates of the equilibrium.

        Raises:
            RuntimeError: the reduced stiffness is singular or Newton's method failed.
        """
        asm, red = system.assembly, system.reducer
        red.update(t)
        K = asm.stiffness(t, states=states)
        Q = asm.load(t, states=states)
        rhs = Q.copy(asm.create_vec("static_rhs"))
        K.mult(red.a0, rhs)
        rhs.aypx(-1.0, Q)  # Q - K a0
        Kr = red.reduce(K, key="K")
        if self._for is not red:  # new constraints: new reduced vectors
            self._for, self._br = red, None
            self._q = red.create_reduced_vec()
            self._q.zeroEntries()
        br = self._br = red.project(rhs, self._br)
        q = self._q
        assert q is not None  # (made with self._for above)
        if asm.nonlinear:
            self._newton(system, t, Kr, br, q)
            return q
        ksp = self.linear(Kr)
        ksp.solve(br, q)
        reason = ksp.getConvergedReason()
        pivots = null_pivots(ksp)
        if reason < 0 or pivots or not np.isfinite(q.norm()):
            q.zeroEntries()
            raise RuntimeError(
                f"static solve failed at t={t:g} (KSP reason {reason}, {pivots} null "
                f"pivots): the reduced stiffness is singular. {free_motions(system, t)}")
        negative = self.inertia(Kr)
        if negative > 0:
            q.zeroEntries()
            raise RuntimeError(
                f"static solve at t={t:g}: the reduced stiffness (with spin softening) has "
                f"{negative} negative eigenvalue(s), so the equilibrium is unstable: spin "
                "softening exceeds the elastic stiffness in that many directions. Either a "
                "body is held at too few points to resist rigid motion (e.g. at one corner: it "
                "can swing about it), or the spin is above a divergence speed.")
        return q

    def _newton(self, system: SecondOrderSystem, t: float, Kr: PETSc.Mat, br: PETSc.Vec,
                q: PETSc.Vec) -> None:
        """K_r q + A^T n(A q + a0) = b_r by SNES (newtonls, backtracking line search unless
        the options database says otherwise), from the guess in ``q``; the SNES is made once
        for these operators."""
        if self._snes is None or self._snes_for[0] is not Kr or self._snes_for[1] is not br:

            def residual(snes: PETSc.SNES, x: PETSc.Vec, F: PETSc.Vec) -> None:
                Kr.mult(x, F)
                F.axpy(-1.0, br)
                F.axpy(1.0, system.nonlinear_reduced(t, x, tangent=False)[0])

            def jacobian(snes: PETSc.SNES, x: PETSc.Vec, A: PETSc.Mat, P: PETSc.Mat) -> None:
                Kr.copy(A, structure=SAME)
                A.axpy(1.0, system.nonlinear_reduced(t, x, force=False)[1],
                       structure=SUBSET)

            J = Kr.duplicate(copy=True)
            snes = PETSc.SNES().create(self.comm)
            snes.setOptionsPrefix("mbs_static_")
            snes.setType(PETSc.SNES.Type.NEWTONLS)
            snes.setFunction(residual, br.duplicate())
            snes.setJacobian(jacobian, J, J)
            direct_lu(snes.getKSP())
            snes.setFromOptions()
            self._snes, self._snes_for = snes, (Kr, br)
        snes = self._snes
        snes.setTolerances(rtol=1e-10, atol=1e-12 * max(br.norm(), 1e-300), max_it=50)
        snes.solve(None, q)
        reason, its = snes.getConvergedReason(), snes.getIterationNumber()
        if reason < 0 or not np.isfinite(q.norm()):
            q.zeroEntries()
            raise RuntimeError(
                f"nonlinear static solve failed at t={t:g} (SNES reason {reason} after {its} "
                "Newton iterations): is every body constrained against rigid motion, and the "
                "load within what the structure carries? (-mbs_static_snes_monitor shows the "
                "residuals)")
        self.newton_iterations = its


def joined_bodies(reducer: MaggiReducer, space: FullSpace) -> List[List[int]]:
    """The groups of bodies that the constraints of ``reducer`` join into one elastic system.

    The connected groups of the graph whose edges are the reduced coordinates shared by
    several bodies (a column of the null-space basis A with rows in two bodies). A body held
    by rows of its own only (clamps, pins to the ground, prescribed motion) is a group by
    itself. The same list on every rank (collective).

    Args:
        reducer: a :class:`~dolfinx_mbs.constraints.MaggiReducer` over ``space``.
        space: the model's :class:`~dolfinx_mbs.assembly.FullSpace`.

    Returns:
        The groups, each a sorted list of body indices, in the order of their first body.
    """
    nb = len(space.bodies)
    if nb == 1:
        return [[0]]
    A = reducer.A
    indptr, cols, vals = A.getValuesCSR()
    # the pattern of A with ones: a body's rows can sum to zero in a column (a tie's rotation)
    P = PETSc.Mat().createAIJ(A.getSizes(), csr=(indptr, cols, np.ones_like(vals)),
                              comm=space.comm)
    P.assemble()
    e, z = P.createVecLeft(), P.createVecRight()
    first = np.full(z.getLocalSize(), -1, np.int64)   # the first body seen in each column
    edges = set()
    for ib in range(nb):
        e.zeroEntries()
        e.array[space.offsets[ib]: space.offsets[ib + 1]] = 1.0
        P.multTranspose(e, z)
        touched = np.flatnonzero(z.getArray(readonly=True) > 0.0)
        seen = first[touched]
        edges.update((int(jb), ib) for jb in np.unique(seen[seen >= 0]))
        first[touched[seen < 0]] = ib
    for obj in (P, e, z):
        obj.destroy()
    parent = list(range(nb))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, j in sorted(set().union(*space.comm.allgather(edges))):
        ri, rj = root(i), root(j)
        parent[max(ri, rj)] = min(ri, rj)
    groups: Dict[int, List[int]] = {}
    for i in range(nb):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


#: relative tolerance of frames carried by constant axes and origin (computed frame rates are
#: good to ~1e-7, see ``frames.Prescribed``), and of frames of equal motion (round-off)
CARRIED_RTOL, EQUAL_RTOL = 1e-6, 1e-12


@dataclasses.dataclass(frozen=True)
class FrameLink:
    """Body ``j``'s frame is body ``i``'s carried by the constant axes ``Q`` and origin ``d``.

    (:meth:`FrameState.carried`; Q = I, d = 0 for frames of equal motion.) What the unit
    prestress fields of joined bodies assume, checked at every frame state to ``rtol``.
    """

    i: int
    j: int
    Q: np.ndarray
    d: np.ndarray
    rtol: float

    def holds(self, si: FrameState, sj: FrameState) -> bool:
        """True when the states ``si`` of body i and ``sj`` of body j keep the link.

        Args:
            si: the frame state of body i.
            sj: the frame state of body j.

        Returns:
            Whether the link holds.
        """
        c = si.carried(self.Q, self.d)
        for name in ("R", "r_O", "omega", "alpha", "v_O", "a_O"):
            x, y = getattr(c, name), getattr(sj, name)
            if np.abs(x - y).max() > self.rtol * (1.0 + max(np.abs(x).max(),
                                                            np.abs(y).max())):
                return False
        return True


def _link(bodies: Sequence[Body], i: int, j: int) -> FrameLink:
    """The link of body j's frame to body i's.

    Equal motion, else the constant axes and origin of j's frame in i's at t = 0 (where the
    joints match their nodes).
    """
    if equal_motion(bodies[i].frame, bodies[j].frame):
        return FrameLink(i, j, np.eye(3), np.zeros(3), EQUAL_RTOL)
    si, sj = bodies[i].frame.state(0.0), bodies[j].frame.state(0.0)
    return FrameLink(i, j, si.R.T @ sj.R, si.R.T @ (sj.r_O - si.r_O), CARRIED_RTOL)


def _classes(bodies: Sequence[Body], group: List[int]) -> List[List[int]]:
    """The bodies of ``group`` by the motion of their frames (``frames.equal_motion``)."""
    out: List[List[int]] = []
    for i in group:
        for c in out:
            if equal_motion(bodies[c[0]].frame, bodies[i].frame):
                c.append(i)
                break
        else:
            out.append([i])
    return out


def _refusal(bodies: Sequence[Body], groups: List[List[int]], reducer: MaggiReducer) -> str | None:
    """Why the unit prestress fields cannot represent this model's steady stress, or None.

    Joined bodies whose frames move relative to each other, or constraint coefficients that
    change in time.
    """
    for group in groups:
        a = bodies[group[0]]
        for c in _classes(bodies, group)[1:]:
            b = bodies[c[0]]
            link = _link(bodies, group[0], c[0])
            if not link.holds(a.frame.state(0.0), b.frame.state(0.0)):
                return (
                    f"prestress stiffening: bodies {a.name!r} and {b.name!r} are joined by the "
                    f"constraints but their frames move relative to each other ({a.frame!r} "
                    f"and {b.frame!r}). The steady stress of joined bodies moving differently "
                    "takes the joints' forces from every frame's state, and from the time "
                    "where the joint rows change in time: not a sum of unit cases solved "
                    "once. Give joined bodies frames of equal motion (frames.equal_motion: "
                    "one frame object, or equal parameters) or of one rigid motion seen in "
                    "other constant axes (element frames), or leave out "
                    "stiffening='prestress'")
    if reducer.rheonomic:
        names = [c.name for c in reducer.constraints if c.time_dependent]
        which = f"; constraints that change in time: {', '.join(names)}" if names else ""
        return ("prestress stiffening: the constraints' coefficients change in time "
                f"(rheonomic rows{which}); the unit prestress fields are solved once with the "
                "constraints' null-space basis and would hold at one time only. Use constant "
                "rows (Model.tie(..., same_motion=True) for element frames), or leave out "
                "stiffening='prestress'")
    return None


def _plan(bodies: Sequence[Body], own: Sequence[Sequence[tuple]], groups: List[List[int]],
          stiffened: List[List[int]]) -> Tuple[list, list, List[FrameLink]]:
    """The unit solves and the links between the frames of the ``stiffened`` groups.

    Solve s loads class s (of equal motion) of every joined group: the whole group when its
    frames are of one motion. Returns, per solve, its (case, body, field key) rows and the
    bodies it loads, then the links.
    """
    plan: List[List[tuple]] = []
    loaded: List[List[int]] = []
    links: List[FrameLink] = []
    for group in groups:
        classes = _classes(bodies, group)
        for s, cls in enumerate(classes):
            if s == len(plan):
                plan.append([])
                loaded.append([])
            loaded[s] += cls
            given = []   # the load cases of this class, for the other classes' bodies
            for i in cls:
                given += [c for c in bodies[i].load_cases() if c not in given]
            for i in group:
                if not own[i]:
                    continue
                if i in cls:
                    plan[s] += [(c, i, c) for c in own[i]]
                    continue
                link = _link(bodies, i, cls[0])
                rel = ("carried", key_floats(link.Q), key_floats(link.d))
                plan[s] += [(c, i, rel + (c,)) for c in given]
        if group in stiffened:
            links += [_link(bodies, group[0], i) for i in group[1:]]
    return plan, loaded, links


def _field_name(case: tuple) -> str:
    if case[0] == "carried":
        return "u_prestress_carried_" + "".join(str(k) for k in case[3])
    return "u_prestress_" + "".join(str(k) for k in case)


def prestress(assembly: Assembly, reducer: MaggiReducer, solver: StaticSolver) -> List[FrameLink]:
    """Unit prestress fields of the bodies with ``stiffening="prestress"``.

    K u_c = q_c (elastic stiffness, the constraints of ``reducer``) for each unit case c of
    ``Body.prestress_cases`` (centrifugal, gravity, constant applied loads; every body loaded
    at once), then each body's geometric stiffness matrices.

    A body's prestress at a frame state is the sum of its unit fields weighted by
    ``Body.prestress_coefficient`` at its own frame's state. The bodies that no constraint
    joins (:func:`joined_bodies`: each clamped to its own frame, or to the ground) may move
    in any way: the system is block-diagonal over the joined groups, so one solve per case
    gives each group the fields of its own loads, weighted by its own frame's state. Within a
    joined group the frames must describe

    * the same motion (``frames.equal_motion``: one frame object, or equal parameters): the
      group is loaded at once and its joints pass the forces of the whole group; or
    * one rigid motion seen in other constant axes (element frames, the frames of
      ``Model.tie(..., same_motion=True)``): the loads of each class of equal motion are then
      solved on their own, and a body's field from another class's case c is a case
      ``("carried", Q, d, c)`` whose factor is c's at the other frame's state, computed from
      the body's own state by the constant axes Q and origin d between the frames
      (:meth:`FrameState.carried`). The relation is taken at t = 0 and checked at every
      frame state the assembly is brought to (:class:`FrameLink`).

    Refused, on every call, with a NotImplementedError: joined bodies whose frames move
    relative to each other (their steady stress takes the joints' forces from every frame's
    state, and for rheonomic joint rows from A(t) at the time asked), and constraint
    coefficients that change in time (unit fields solved with A at one time do not hold at
    another). Nothing is changed by a call that raises: the fields and matrices are filled
    only once every case is solved.

    Args:
        assembly: the model's :class:`~dolfinx_mbs.assembly.Assembly`.
        reducer: the Maggi reducer of the model's holonomic constraints.
        solver: the model's static solver (its KSP factorizes the reduced elastic stiffness).

    Returns:
        The links between the frames of joined bodies (one body of a group with prestress
        to each other body of it), which must hold at every frame state.

    Raises:
        NotImplementedError: joined bodies whose frames move relative to each other, or
            rheonomic constraints (on every rank).
        RuntimeError: a unit solve failed (its KSP did not converge, or a singular stiffness).
    """
    bodies, space = assembly.bodies, assembly.space
    own = [b.prestress_cases() for b in bodies]
    if not any(own):
        return []
    groups = joined_bodies(reducer, space)
    stiffened = [g for g in groups if len(g) > 1 and any(own[i] for i in g)]
    # the frames' states at t = 0 (the user's motion functions may fail on some ranks only)
    with checks.collective(space.comm, "prestress: the joined bodies' frames at t=0"):
        refused = _refusal(bodies, stiffened, reducer)
        if refused is None:
            plan, loaded, links = _plan(bodies, own, groups, stiffened)
    checks.raise_everywhere(space.comm, refused, NotImplementedError)
    ops = assembly.body_operators
    K = assembly.supported()  # bearings hold the rotor as the constraints do
    Kr = reducer.reduce(K, key="Kel" if K is assembly.elastic() else "Ksup")
    # a mechanism (a link pinned to an arm) has free motions: held by the border of
    # rigid_modes, K u + s M Q Q^T M u = b, i.e. K u = b - M Q Q^T b (a load's part that does
    # work on them balanced by their inertia) and no free motion in u: they carry no stress
    free = rigid_subspace(SimpleNamespace(reducer=reducer, space=space, assembly=assembly,
                                          bodies=bodies, comm=space.comm), frames=False)
    A = Kr if free is None else \
        free.border(Kr, None, reducer.reduce(assembly.mass(), key="M"))[0]
    ksp = solver.linear(A)
    x = space.create_vec()
    q = reducer.create_reduced_vec()
    br = reducer.create_reduced_vec()
    xb, bb = A.createVecs()
    solved = []   # (full solution, {body: its field key})
    try:
        for rows, these in zip(plan, loaded):
            cases = []
            for c, _, _ in rows:
                if c not in cases:
                    cases.append(c)
            for case in cases:
                loads = [o.unit_prestress_load(case) for o in ops]
                for i, b in enumerate(loads):
                    if i not in these:
                        b.zeroEntries()
                space.gather(loads, x)
                for b in loads:
                    b.destroy()
                reducer.project(x, br)
                bb.zeroEntries()
                bb.array[: br.getLocalSize()] = br.getArray(readonly=True)
                ksp.solve(bb, xb)
                q.array[:] = xb.getArray(readonly=True)[: q.getLocalSize()]
                reason = ksp.getConvergedReason()
                if reason < 0 or null_pivots(ksp) or not np.isfinite(q.norm()):
                    raise RuntimeError(
                        f"prestress solve failed (KSP reason {reason}): is every body "
                        "constrained against rigid motion?")
                solved.append((reducer.expand(q, out=x.duplicate(), homogeneous=True),
                               {i: key for c, i, key in rows if c == case}))
        # every case solved: now the fields (kept Functions refilled) and the matrices
        for ib, b in enumerate(bodies):
            keys = [fields[ib] for _, fields in solved if ib in fields]
            for k in [k for k in b.prestress_fields if k not in keys]:
                del b.prestress_fields[k]
            for k in keys:
                if k not in b.prestress_fields:
                    b.prestress_fields[k] = fem.Function(b.V, name=_field_name(k))
        temps = [fem.Function(b.V) for b in bodies]
        for xc, fields in solved:
            space.scatter(xc, [b.prestress_fields[fields[i]] if i in fields else tmp
                               for i, (b, tmp) in enumerate(zip(bodies, temps))])
        for o in ops:
            if o.body.prestress_fields:
                o.set_prestress()
    finally:
        for v in [xc for xc, _ in solved] + [x, q, br, xb, bb]:
            v.destroy()
        if free is not None:
            free.destroy()
    return links


class _Owner(Protocol):
    """What :class:`Prestress` reads of its owner (a model, a later part: not named here)."""

    @property
    def reducer(self) -> MaggiReducer: ...

    @property
    def static(self) -> StaticSolver | None: ...


class Prestress:
    """:func:`prestress` as an assembly's call: ``prestress(assembly, owner.reducer,
    owner.static)``, the owner (a model) held by a weak reference. The model owns its
    assembly: a strong reference back would make the model a reference cycle, freed only when
    Python's garbage collector runs (at different times on different ranks).

    Args:
        owner: the model.
    """

    def __init__(self, owner: _Owner) -> None:
        self.owner = weakref.ref(owner)

    def __call__(self, assembly: Assembly) -> List[FrameLink]:
        """The prestress of ``assembly`` from the owner's static solve.

        Args:
            assembly: the owner's assembly.

        Returns:
            The frame links of the prestress cases (:func:`prestress`).
        """
        if not any(b.prestress_cases() for b in assembly.bodies):
            return []   # (the owner's reducer and static solver not made for nothing)
        owner = self.owner()
        if owner is None or owner.static is None:  # an assembly outlives its model
            raise RuntimeError("the prestress of an assembly whose model (with elastic bodies) "
                               "is gone")
        return prestress(assembly, owner.reducer, owner.static)
