"""The rotor terms of a body's operators: the stationary frame's spin terms and the bearings and
disks on its journals (docs/theory.md section 9; the forms in :mod:`dolfinx_mbs.forms.stationary`,
the definitions in :mod:`dolfinx_mbs.bodies.attachments`).

**Stationary frame.** A body in a :class:`~dolfinx_mbs.frames.Stationary` frame has the constant
unit matrices g_s (gyroscopic), -k_theta (circumferential softening) and c_theta (spin
acceleration) and the unit centrifugal load q, assembled once; at a state of spin Omega the
operators' ``gyroscopic`` matrix is Omega g_s (plus the disks'), ``spin_softening`` is
Omega^2 (-k_theta), ``angular_acceleration`` Omegadot c_theta, and the load gains Omega^2 q.
The body must be axisymmetric about the axis (:func:`check_axisymmetric`). The drive that
prescribes the speed is taken to balance the rotor's inertia torque: the torque load
-Omegadot int rho w.v of a run-up is not applied.

**Journals.** Bearings and disks act on a surface's mean motion ubar = L u (translation and
small rotation, the least-squares rigid fit, :func:`dolfinx_mbs.forms.stationary.journal_forms`;
L has 6 rows, dense over the journal's dofs). A bearing adds L^T K_b L to the stiffness and
L^T C_b L to the damping, a disk L^T M_d L to the mass and Omega L^T G_d L to the gyroscopic
matrix: explicit dense blocks on the journal's dofs. Every matrix of the body shares one
pattern (the operators combine them on it), so the pattern of each is widened once by the
journal blocks (:func:`widened`): (3 n_j)^2 entries more per matrix for a journal of n_j
nodes (bench/results/rotors.md has the numbers at 1e5 dofs).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable, Dict, List, Protocol, Sequence, Tuple, cast

import numpy as np
import ufl
from dolfinx import fem
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import compat
from dolfinx_mbs.assembly.body_loads import assembled
from dolfinx_mbs.assembly.operator_memory import assemble_into, combine
from dolfinx_mbs.bodies.attachments import Bearing, Disk, Unbalance
from dolfinx_mbs.forms import stationary as S
from dolfinx_mbs.frames.axis import ConstantSpin
from dolfinx_mbs.frames.base import FrameState
from dolfinx_mbs.frames.stationary import Ground, Stationary, transverse_basis
from dolfinx_mbs.materials.isotropic import Isotropic

if TYPE_CHECKING:
    from dolfinx.mesh import Mesh
    from numpy.typing import ArrayLike

    from dolfinx_mbs.bodies.body import Body

__all__ = ["BodyMatrices", "JournalMap", "RotorTerms", "check_axisymmetric", "widened"]

log = logging.getLogger(__name__)

_ADD = PETSc.InsertMode.ADD_VALUES


class BodyMatrices(Protocol):
    """What the rotor terms read and fill of a body's operators
    (:class:`dolfinx_mbs.assembly.operators.BodyOperators`)."""

    @property
    def K(self) -> PETSc.Mat:
        """The stiffness matrix."""

    @property
    def M(self) -> PETSc.Mat:
        """The mass matrix."""

    def matrix(self, name: str) -> PETSc.Mat | None:
        """The matrix ``name`` (None while it is not made)."""

    def made(self, name: str) -> PETSc.Mat:
        """The matrix ``name``, made of the coupling matrices' pattern when it is not."""


def _sum(comm: MPI.Comm, x: float) -> float:
    return cast(float, comm.allreduce(x, op=MPI.SUM))


def _const(mesh: Mesh, value: ArrayLike) -> fem.Constant:
    return fem.Constant(mesh, np.asarray(value, dtype=compat.scalar_type))


def _basis(axis: np.ndarray) -> np.ndarray:
    """Rows e1, e2, a: the transverse directions of ``axis`` and the axis."""
    return np.vstack([transverse_basis(axis), axis[None, :]])


def check_axisymmetric(body: Body, axis: np.ndarray, center: np.ndarray, tol: float,
                       mode: str) -> Tuple[float, tuple]:
    """The largest relative circumferential mass moment of ``body`` about the axis
    (:func:`dolfinx_mbs.forms.stationary.axisymmetry_moments`: orders m = 1..4, powers of the
    axial coordinate 0..2) and where it is; above ``tol`` an error (``mode="error"``) or a
    warning (``"warn"``), the same on every rank. Also refuses a material that is not
    isotropic (its stiffness would change along the circles).

    Args:
        body: the body.
        axis: the spin axis.
        center: a point of the axis.
        tol: the largest allowed relative moment.
        mode: ``"error"`` or ``"warn"`` above ``tol`` (``"off"``: no check).

    Returns:
        ``(largest moment, where)``.
    """
    if mode == "off":
        return 0.0, ()
    if not isinstance(body.material, Isotropic):
        msg = (f"body {body.name!r} in a Stationary frame: its material "
               f"{type(body.material).__name__} is not isotropic, so the body is not "
               "axisymmetric about the spin axis (its stiffness changes along the circles)")
        if mode == "error":
            raise ValueError(msg)
        log.warning(msg)
    mesh = body.mesh
    orders, powers = (1, 2, 3, 4), (0, 1, 2)
    wm, wi, wp = _const(mesh, np.zeros(4)), _const(mesh, np.zeros(4)), _const(mesh, np.zeros(3))
    ref = _const(mesh, 0.0)
    form = compat.form(S.axisymmetry_moments(body.rho, axis, center, ufl.SpatialCoordinate(mesh),
                                          wm, wi, wp, ref, orders, powers))

    def moment(j: int, p: int, which: str) -> float:
        wm.value, wi.value, wp.value = np.zeros(4), np.zeros(4), np.zeros(3)
        wp.value[p] = 1.0
        if which == "im":
            wi.value[j] = 1.0
        else:
            wm.value[j] = 1.0
        ref.value = 1.0 if which == "ref" else 0.0
        return _sum(body.comm, fem.assemble_scalar(form))

    where: Tuple[int, ...]
    worst, where = 0.0, ()
    for j, m in enumerate(orders):
        for p in range(len(powers)):
            dev = float(np.hypot(moment(j, p, "re"), moment(j, p, "im"))
                        / max(moment(j, p, "ref"), 1e-300))
            if dev > worst:
                worst, where = dev, (m, powers[p])
    if worst > tol:
        m, p = where  # type: ignore[misc]
        msg = (f"body {body.name!r} is not axisymmetric about the spin axis {axis.tolist()} "
               f"through {center.tolist()}: its mass moment of circumferential order {m} "
               f"(int rho (xi + i eta)^{m} zeta^{p}) is {worst:.3e} of int rho r^{m} "
               f"|zeta|^{p} (axisymmetry_tol {tol:g}). The stationary frame holds for "
               "bodies of revolution only: check the mesh's axis and centre, or describe the "
               "body in a rotating frame (frames.ConstantSpin)")
        if mode == "error":
            raise ValueError(msg)
        log.warning(msg)
    return worst, where


class JournalMap:
    """The mean motion's map L of a journal (6 rows: translation along e1, e2, a and rotation
    about them, (e1, e2, a) the frame's axes, about the journal's centroid), as the global
    indices of the dofs it touches and its values there, the same on every rank.

    Args:
        body: the body.
        ds: the journal's measure.
        basis: rows e1, e2, a (3 x 3).

    Raises:
        ValueError: a journal whose rigid fit is singular (e.g. its facets lie on a line).
    """

    def __init__(self, body: Body, ds: ufl.Measure, basis: np.ndarray, name: str) -> None:
        comm, mesh = body.comm, body.mesh
        x = ufl.SpatialCoordinate(mesh)
        c, d, P = _const(mesh, np.zeros(3)), _const(mesh, np.zeros(3)), _const(mesh,
                                                                               np.zeros((3, 3)))
        t, w = _const(mesh, np.zeros(3)), _const(mesh, np.zeros(3))
        forms = {k: compat.form(f) for k, f in S.journal_forms(x, ufl.TestFunction(body.V), ds,
                                                             c, d, P, t, w).items()}

        def scalar(key: str) -> float:
            return _sum(comm, fem.assemble_scalar(forms[key]))

        area = scalar("area")
        cent = np.zeros(3)
        for i in range(3):
            d.value = np.eye(3)[i]
            cent[i] = scalar("first") / area
        c.value = cent
        #: the journal's centroid (m) and area (m^2)
        self.center, self.area = cent, area
        second = np.zeros((3, 3))  # int r r^T
        for i in range(3):
            for j in range(i, 3):
                E = np.zeros((3, 3))
                E[i, j] = 1.0
                P.value = E
                second[i, j] = second[j, i] = scalar("second")
        gram = np.zeros((6, 6))
        gram[:3, :3] = area * np.eye(3)
        gram[3:, 3:] = np.trace(second) * np.eye(3) - second
        ev = np.linalg.eigvalsh(gram[3:, 3:])
        if ev[0] <= 1e-10 * max(ev[-1], 1e-300):
            raise ValueError(f"{name}: the journal's mean rotation is not defined (its facets "
                             "do not span a surface: the least-squares rigid fit is singular)")
        b = compat.create_vector(forms["row"])
        vecs = []
        for k in range(6):
            t.value, w.value = (np.eye(3)[k], np.zeros(3)) if k < 3 else \
                (np.zeros(3), np.eye(3)[k - 3])
            assembled(b, forms["row"])
            vecs.append(b.getArray(readonly=True).copy())
        b.destroy()
        R = np.linalg.solve(gram, np.array(vecs))          # rows in global axes
        T = np.zeros((6, 6))
        T[:3, :3] = T[3:, 3:] = basis
        L = T @ R
        bs = body.V.dofmap.index_map_bs
        start = body.V.dofmap.index_map.local_range[0] * bs
        big = comm.allreduce(float(np.abs(L).max()) if L.size else 0.0, op=MPI.MAX)
        keep = np.flatnonzero(np.abs(L).max(axis=0) > 1e-14 * big) if L.size else \
            np.zeros(0, int)
        parts = comm.allgather((start + keep, L[:, keep]))
        self.index = np.concatenate([p[0] for p in parts]).astype(PETSc.IntType)
        #: L (6 x n) on the dofs ``index`` (global)
        self.L = np.hstack([p[1] for p in parts])


def widened(A: PETSc.Mat, blocks: List[np.ndarray]) -> PETSc.Mat:
    """A new matrix of ``A``'s layout, block sizes and local-to-global map whose pattern is
    ``A``'s with the dense blocks ``b`` x ``b`` of ``blocks`` (global indices) added, values
    zero.

    Args:
        A: the matrix.
        blocks: the blocks' global indices.

    Returns:
        The new matrix.
    """
    ai, aj, _ = A.getValuesCSR()
    r0, r1 = A.getOwnershipRange()
    cols: Dict[int, list] = {}
    for b in blocks:
        for r in b[(b >= r0) & (b < r1)] - r0:
            cols.setdefault(int(r), []).append(b)
    counts = np.diff(ai).astype(np.int64)
    merged = {}
    for r, bs in cols.items():
        m = np.unique(np.concatenate([aj[ai[r]:ai[r + 1]]] + bs))
        merged[r] = m
        counts[r] = len(m)
    ni = np.zeros(len(counts) + 1, dtype=PETSc.IntType)
    np.cumsum(counts, out=ni[1:])
    nj = np.empty(ni[-1], dtype=PETSc.IntType)
    for r in range(len(counts)):
        nj[ni[r]:ni[r + 1]] = merged[r] if r in merged else aj[ai[r]:ai[r + 1]]
    B = PETSc.Mat().create(comm=A.getComm())
    B.setSizes(A.getSizes())
    B.setBlockSizes(*A.getBlockSizes())
    B.setType(A.getType())
    B.setPreallocationCSR((ni, nj))
    B.setLGMap(*A.getLGMap())
    B.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, True)
    return B


def block_matrix(like: PETSc.Mat, index: np.ndarray) -> PETSc.Mat:
    """A matrix of ``like``'s layout and local-to-global map whose pattern is the dense block
    ``index`` x ``index`` alone (global indices), values zero.

    Args:
        like: a matrix of the wanted layout.
        index: the block's global indices.

    Returns:
        The new matrix.
    """
    r0, r1 = like.getOwnershipRange()
    own = np.sort(index[(index >= r0) & (index < r1)])
    counts = np.zeros(r1 - r0, dtype=np.int64)
    counts[own - r0] = len(index)
    ni = np.zeros(r1 - r0 + 1, dtype=PETSc.IntType)
    np.cumsum(counts, out=ni[1:])
    nj = np.tile(np.sort(index).astype(PETSc.IntType), len(own))
    B = PETSc.Mat().create(comm=like.getComm())
    B.setSizes(like.getSizes())
    B.setType(like.getType())
    B.setPreallocationCSR((ni, nj))
    B.setLGMap(*like.getLGMap())
    return B


class RotorTerms:
    """The rotor terms of one body (module docstring). Use :meth:`make` (None for a body with
    neither a stationary frame nor attachments).

    Args:
        body: the body.
    """

    def __init__(self, body: Body) -> None:
        self.body = body
        # a spin axis (or a ground frame's bearing axis): the checks below refuse other frames
        frame = cast("Stationary | ConstantSpin | Ground", body.frame)
        self.stationary = isinstance(frame, Stationary)
        #: a rotating frame: its ground bearings are seen turning
        self.rotating = isinstance(frame, ConstantSpin)
        every = list(getattr(body, "attachments", ()))
        #: time-domain unbalances (on journals of this body's attachments)
        self.unbalances: List[Unbalance] = [a for a in every if isinstance(a, Unbalance)]
        atts = [a for a in every if not isinstance(a, Unbalance)]
        if not (self.stationary or self.rotating or isinstance(frame, Ground)):
            raise ValueError(f"body {body.name!r}: bearings and disks need a spin axis: put the "
                             "body in a frames.Stationary (or frames.ConstantSpin) frame, or a "
                             "housing in a frames.Ground frame")
        if body.gdim != 3:
            raise ValueError(f"body {body.name!r}: rotors (stationary frame, bearings, disks) "
                             "are 3D bodies")
        disks = [a for a in atts if isinstance(a, Disk)]
        if (disks or self.unbalances) and not self.stationary:
            raise ValueError(f"{(disks + self.unbalances)[0].name!r}: rigid disks and "
                             "unbalances need the body in a frames.Stationary frame")
        self.axis, self.center = frame.axis.copy(), frame.pivot.copy()
        self.basis = _basis(self.axis)
        if isinstance(frame, Stationary):  # self.stationary
            check_axisymmetric(body, self.axis, self.center, frame.axisymmetry_tol,
                               frame.check)
        #: the bearings to the ground (their matrices are this body's)
        self.bearings: List[Bearing] = [a for a in atts if isinstance(a, Bearing)
                                        and a.other is None]
        #: the bearings between this body and another, journal or housing here (their
        #: matrices couple the two bodies: :mod:`dolfinx_mbs.assembly.bearing_links`)
        self.links: List[Bearing] = [a for a in atts if isinstance(a, Bearing)
                                     and a.other is not None] + \
            list(getattr(body, "housings", ()))
        self.disks: List[Disk] = disks
        self.maps: Dict[int, JournalMap] = {}
        for a in atts:
            if isinstance(a, Bearing) and a.other is not None:
                continue
            self.maps[id(a)] = JournalMap(body, a.ds, self.basis,
                                          f"{a.kind} {a.name!r} on body {body.name!r}")
        for a in self.links:  # x, y across the rotor's axis, whichever body holds them
            here = a.body is body
            assert a.axis is not None  # a link's bearing has its axis
            self.maps[id(a)] = JournalMap(
                body, a.ds if here else a.other_ds, _basis(a.axis),
                f"bearing {a.name!r}: its {'journal' if here else 'housing'} on body "
                f"{body.name!r}")
        #: the journals' dofs (global), each attachment's a dense block of the pattern
        self.blocks = [jm.index for jm in self.maps.values()]
        self.block = np.unique(np.concatenate(self.blocks)) if self.blocks else \
            np.zeros(0, PETSc.IntType)
        self._units: Dict[str, PETSc.Mat] = {}
        self._loads: Dict[str, PETSc.Vec] = {}
        self._key: tuple | None = None
        self.Kb: PETSc.Mat | None = None
        self.Cb: PETSc.Mat | None = None
        self.support: PETSc.Mat | None = None
        # the body's own bearings and links, and the replacements of use_bearings
        self._own = (list(self.bearings), list(self.links))
        self._substitutes: List[Bearing] = []

    @classmethod
    def make(cls, body: Body) -> "RotorTerms" | None:
        """The rotor terms of ``body``, or None for a body with neither a stationary frame
        nor attachments nor housings.

        Args:
            body: the body.

        Returns:
            The rotor terms, or None.
        """
        if not isinstance(body.frame, Stationary) and not getattr(body, "attachments", None) \
                and not getattr(body, "housings", None):
            return None
        return cls(body)

    @property
    def varies(self) -> bool:
        """True when the terms change in time (a run-up: a spin rate that is a function; an
        unbalance's turning force)."""
        return self.stationary and (not self.body.frame.time_invariant or bool(self.unbalances))

    # -- set-up ---------------------------------------------------------------------------
    def created(self, A: PETSc.Mat, form: fem.Form) -> PETSc.Mat:
        """``A`` (the form's matrix) with the journal blocks in its pattern, the form
        assembled into it (``A`` destroyed), or ``A`` itself without journals.

        Args:
            A: the matrix.
            form: the compiled form of ``A``.

        Returns:
            The matrix.
        """
        if self.block.size == 0:
            return A
        B = widened(A, self.blocks)
        A.destroy()
        assemble_into(B, form)
        return B

    def _dense(self, out: PETSc.Mat, att: Bearing | Disk, X: np.ndarray,
               rows: Sequence[int]) -> None:
        """Add L_r^T X L_r of attachment ``att`` (rows ``rows`` of its map) to ``out``'s owned
        rows (``out`` not assembled after)."""
        jm = self.maps[id(att)]
        Lr = jm.L[list(rows)]
        r0, r1 = out.getOwnershipRange()
        own = (jm.index >= r0) & (jm.index < r1)
        if not np.any(own):
            return
        B = Lr[:, own].T @ X @ Lr
        out.setValues(jm.index[own], jm.index, B, addv=_ADD)

    def setup(self, ops: BodyMatrices) -> None:
        """Assemble the unit matrices and loads, add the disks' mass to M and make the
        bearings' matrices (``ops``: the body's operators, their matrices made).

        Args:
            ops: the body's operators.
        """
        body = self.body
        K = ops.K
        if self.stationary:
            x = ufl.SpatialCoordinate(body.mesh)
            u, v = body.trial_test()
            a, c = self.axis, self.center
            for name, form in (("gyroscopic", S.gyroscopic(body.rho, a, c, x, u, v)),
                               ("softening", S.circumferential_softening(body.rho, a, c, x,
                                                                         u, v))):
                G = K.duplicate()
                assemble_into(G, compat.form(form))
                self._units[name] = G
            if self.varies:
                G = K.duplicate()
                assemble_into(G, compat.form(S.spin_acceleration(body.rho, a, c, x, u, v)))
                self._units["spin_acceleration"] = G
            f = compat.form(S.centrifugal_load(body.rho, a, c, x, v))
            self._loads["centrifugal"] = assembled(compat.create_vector(f), f)
            for d in self.disks:
                Md, Gd = d.matrices()
                self._dense(ops.M, d, Md, range(6))
                self._dense(self._units["gyroscopic"], d, Gd, range(6))
            ops.M.assemble()
            self._units["gyroscopic"].assemble()
        if self.bearings:
            self.Kb, self.Cb = K.duplicate(), K.duplicate()
            self.support = K.duplicate()
            rate = abs(self._rate(body.frame.state(0.0)))
            for b in self.bearings:
                r = b.rows
                self._dense(self.support, b, b.support(rate)[np.ix_(r, r)], r)
            self.support.assemble()

    def _rate(self, state: FrameState) -> float:
        if self.stationary:
            return float(getattr(state, "spin", 0.0))
        return float(np.dot(state.omega, self.axis))  # zero in a Ground frame

    # -- at a state -----------------------------------------------------------------------
    def update(self, ops: BodyMatrices, state: FrameState) -> bool:
        """Bring the rotor terms of ``ops``' matrices to ``state``; True when one changed.

        Args:
            ops: the body's operators.
            state: the frame state.

        Returns:
            True when a term changed.
        """
        w = self._rate(state)
        wd = float(getattr(state, "spin_acceleration", 0.0)) if self.stationary else 0.0
        mats = [b.blocks(w, self.rotating) for b in self.bearings]
        key = (w, wd, tuple(np.concatenate([np.ravel(m) for pair in mats for m in pair]))
               if mats else ())
        if key == self._key:
            return False

        if self.stationary:
            combine(ops.matrix("gyroscopic"), [(w, self._units["gyroscopic"])])
            combine(ops.matrix("spin_softening"), [(w * w, self._units["softening"])])
            if "spin_acceleration" in self._units:
                combine(ops.made("angular_acceleration"),
                        [(wd, self._units["spin_acceleration"])])
        if self.bearings:
            assert self.Kb is not None and self.Cb is not None  # (made with the bearings)
            self.Kb.zeroEntries()
            self.Cb.zeroEntries()
            for b, (Kb, Cb) in zip(self.bearings, mats):  # (a rotating frame sees them turn)
                self._dense(self.Kb, b, Kb, b.rows)
                self._dense(self.Cb, b, Cb, b.rows)
            self.Kb.assemble()
            self.Cb.assemble()
        self._key = key
        return True

    def speed_terms(self, ops: BodyMatrices) -> list:
        """The bearings' coefficients that change with the speed, as terms of the pencil:
        ``(which, name, E, f)`` with ``which`` "K" or "C", E = L_a^T L_b (a, b across the
        axis) on the journal block alone and f(Omega) the coefficient k_ab or c_ab (a
        stationary frame's bearing adds sum f E). Empty in a rotating frame (its bearings
        there are isotropic and constant) or when no coefficient changes.

        Args:
            ops: the body's operators.

        Returns:
            The terms.
        """
        if not self.stationary:
            return []
        out = []
        for ib, b in enumerate(self.bearings):
            for term in b.speed_terms():
                a, c = term.row, term.col
                E = self.unit_block(ops, b, a, c)
                out.append((term.matrix, f"bearing{ib}/{a}{c}/{term.matrix.lower()}", E,
                            term.at))
        return out

    def unit_block(self, ops: BodyMatrices, b: Bearing, a: int, c: int) -> PETSc.Mat:
        """E = L_a^T L_c of bearing ``b`` (a, c across the axis: 0 or 1) as a body matrix of
        the journal's block alone, made once and kept (the bearing's coefficient (a, c) adds
        that coefficient times E).

        Args:
            ops: the body's operators.
            b: one of this body's bearings to the ground.
            a: the row's direction.
            c: the column's direction.

        Returns:
            The matrix (owned by these terms).
        """
        name = f"bearing{self.bearings.index(b)}/{a}{c}"
        E = self._units.get(name)
        if E is None:
            jm = self.maps[id(b)]
            E = block_matrix(ops.K, jm.index)
            X = np.zeros((2, 2))
            X[a, c] = 1.0
            self._dense(E, b, X, (0, 1))
            E.assemble()
            self._units[name] = E
        return E

    def use_bearings(self, replace: Callable[[Bearing], Bearing] | None) -> None:
        """Read each of this body's bearings (to the ground and between bodies) through
        ``replace`` (a new bearing on the same journal: the critical speed map's), or the
        body's own bearings again (None). The journals' maps and the supports stay.

        Args:
            replace: a bearing's replacement, or None.
        """
        own, own_links = self._own
        for b in self._substitutes:
            self.maps.pop(id(b), None)
        self._substitutes = []
        if replace is None:
            self.bearings, self.links = list(own), list(own_links)
        else:
            self.bearings = [replace(b) for b in own]
            self.links = [replace(b) for b in own_links]
            for old, new in zip(own + own_links, self.bearings + self.links):
                self.maps[id(new)] = self.maps[id(old)]
                self._substitutes.append(new)
        self._key = None

    def add_loads(self, Q: PETSc.Vec, state: FrameState) -> None:
        """Add the centrifugal load Omega^2 q of a stationary frame and the unbalances'
        forces at ``state`` to ``Q`` (owned values).

        Args:
            Q: the load vector.
            state: the frame state.
        """
        if not self.stationary:
            return
        w = self._rate(state)
        if w != 0.0:
            Q.axpy(w * w, self._loads["centrifugal"])
        if not self.unbalances:
            return
        arr = Q.getArray()
        r0, r1 = Q.getOwnershipRange()
        for u in self.unbalances:
            F = S.unbalance_force(u.m_e, u.phase, float(getattr(state, "angle", 0.0)), w,
                                  float(getattr(state, "spin_acceleration", 0.0)))
            jm = self.maps[id(u.on)]
            own = (jm.index >= r0) & (jm.index < r1)
            arr[jm.index[own] - r0] += F[0] * jm.L[0, own] + F[1] * jm.L[1, own]

    def destroy(self) -> None:
        """Destroy the unit matrices and vectors and the bearings' (collective)."""
        for X in list(self._units.values()) + list(self._loads.values()) + \
                [self.Kb, self.Cb, self.support]:
            if X is not None:
                X.destroy()
        self._units, self._loads = {}, {}
        self.Kb = self.Cb = self.support = None
