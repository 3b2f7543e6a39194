"""Velocity constraints that are not eliminated from the coordinates (nonholonomic ones
included): Maggi's equations in independent velocities (``docs/theory.md`` section 5).

The holonomic constraints give Delta = A q + a0(t)
(:class:`dolfinx_mbs.constraints.maggi.MaggiReducer`).
Velocity rows ``B_n(t) Delta' = c_n(t)`` (:class:`dolfinx_mbs.constraints.VelocityRows`) act on
q' = v:

    B_n A v = c_n - B_n a0'         (A time-invariant)

and the same reducer, run over the space of q, eliminates them: v = A_n(t) w + a_n(t), with w the
n_w = n - m_n independent velocities. q itself stays free (a nonholonomic row restricts no
position). Maggi's equations for the state (q, w):

    q' - A_n w - a_n = 0                                                     (n equations)
    A_n^T (M_r v' + C_r v + K_r q - f_r) = 0,   v' = A_n w' + A_n' w + a_n'   (n_w equations)

i.e. M_w w' + C_w w + K_w q = f_w with

    M_w = A_n^T M_r A_n,   C_w = A_n^T (C_r A_n + M_r A_n'),   K_w = A_n^T K_r (n_w x n),
    f_w = A_n^T (f_r - M_r a_n' - C_r a_n),

M_r, C_r, K_r, f_r the holonomically reduced operators (:class:`dolfinx_mbs.systems.SecondOrder`).
No multiplier is formed; the constraint forces of the velocity rows are in the full residual
(:meth:`dolfinx_mbs.assembly.Assembly.residual`) like the others'.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Sequence, Tuple

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.constraints.base import Constraint, Rows
from dolfinx_mbs.constraints.maggi import MaggiReducer
from dolfinx_mbs.constraints.rows import VelocityRows
from dolfinx_mbs.petsc_options import SUBSET
from dolfinx_mbs.systems.records import SecondOrder

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.frames.base import FrameState
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["ReducedSpace", "VelocityBasis", "VelocityOperators", "VelocitySystem"]



class ReducedSpace:
    """The space of q (the holonomic reducer's independent coordinates), as the numbering a
    :class:`MaggiReducer` works on: each rank owns its independent dofs, in full order.

    Args:
        holonomic: the holonomic reducer.
    """

    def __init__(self, holonomic: MaggiReducer) -> None:
        self.holonomic = holonomic
        self.comm = comm = holonomic.comm
        self.n_local = len(holonomic.independent)
        self.n_global = holonomic.n_reduced
        self.rstart = comm.exscan(self.n_local) or 0
        self.offsets = np.array([0, self.n_local], np.int64)

    def create_vec(self) -> PETSc.Vec:
        """A zero vector of the holonomic reduction's coordinates q."""
        v = self.holonomic.create_reduced_vec()
        v.set(0.0)
        return v

    def where(self, k: int) -> Tuple[str, int]:
        """(body name, local dof) of reduced index ``k``, for messages.

        Args:
            k: a reduced index.

        Returns:
            ``(body name, local dof)``.
        """
        h = self.holonomic
        return h.where(h.full_index(k))


class _OnReducedSpace(Constraint):
    """A :class:`VelocityRows` seen on the space of q: rows (B A) v = c - B a0'."""

    def __init__(self, rows: VelocityRows, holonomic: MaggiReducer, full_space: FullSpace) -> None:
        self.inner, self.holonomic, self.full_space = rows, holonomic, full_space
        self.name = rows.name
        self.time_dependent = rows.time_dependent or holonomic.time_dependent

    def rows(self, space: FullSpace, t: float) -> Rows:
        self.holonomic.update(t)
        return self.holonomic.substitute_rates(self.inner.rows(self.full_space, t))


class VelocityBasis(MaggiReducer):
    """v = A_n(t) w + a_n(t): the holonomic reducer's elimination run on the velocity rows over
    the space of q (same pivoting, redundancy and consistency checks, messages naming the
    rows and a dof). Attributes as :class:`MaggiReducer`'s, first derivatives only
    (``A`` = A_n, ``A_dot``, ``a0`` = a_n, ``a0_dot``).

    Args:
        holonomic: the holonomic constraints' reducer.
        rows: the velocity constraints (:class:`dolfinx_mbs.constraints.VelocityRows`).
        space: the full space.
    """

    def __init__(self, holonomic: MaggiReducer, rows: Sequence[VelocityRows], space: FullSpace,
                 t: float = 0.0) -> None:
        self.holonomic = holonomic
        on_q = [_OnReducedSpace(c, holonomic, space) for c in rows]
        holonomic.update(t)
        # the reduced coordinates are numbered as a FullSpace numbers the full ones
        super().__init__(ReducedSpace(holonomic), on_q, t=t, order=1)  # type: ignore[arg-type]


@dataclasses.dataclass
class VelocityOperators:
    """Maggi's equations in (q, w) at one frame state: q' = A_n w + a_n,
    M_w w' + C_w w + K_w q = f_w; with the holonomically reduced ``base``
    (:class:`dolfinx_mbs.systems.SecondOrder`, for energies). ``An_dot``/``an_dot`` are None
    when constant; ``version`` changes whenever a matrix did."""

    t: float
    base: SecondOrder
    An: PETSc.Mat
    An_dot: PETSc.Mat | None
    an: PETSc.Vec
    an_dot: PETSc.Vec | None
    Mw: PETSc.Mat
    Cw: PETSc.Mat
    Kw: PETSc.Mat
    fw: PETSc.Vec
    version: int

    def __getattr__(self, name: str) -> Any:
        # the second-order operators of q (M, C, K, Kel, Kpot, f), for the energies
        if name in _BASE:
            return getattr(self.base, name)
        raise AttributeError(name)


_BASE = frozenset(("M", "C", "K", "Kel", "Kpot", "f"))


class VelocitySystem:
    """The operators of Maggi's equations in (q, w): the typed system of a model with velocity
    constraints (first-order form only). Reducer methods (q <-> Delta) are the holonomic
    system's; ``basis`` maps w to v = q'.

    Args:
        base: the holonomically reduced :class:`dolfinx_mbs.systems.SecondOrderSystem`.
        rows: the velocity constraints.
    """

    formulations = ("first-order",)
    has_multipliers = False
    # the holonomic system's coordinates and maps, forwarded by the constructor
    n_reduced: int
    update: Callable[[float], bool]
    create_reduced_vec: Callable[[], PETSc.Vec]
    restrict: Callable[..., PETSc.Vec]
    project: Callable[..., PETSc.Vec]
    expand: Callable[..., PETSc.Vec]
    expand_rate: Callable[..., PETSc.Vec]
    expand_acceleration: Callable[..., PETSc.Vec]
    near_nullspace: Callable[[], PETSc.NullSpace]
    forget: Callable[[], None]

    def __init__(self, base: SecondOrderSystem, rows: Sequence[VelocityRows]) -> None:
        self.base = base
        self.assembly, self.reducer = base.assembly, base.reducer
        self.space, self.bodies, self.comm = base.space, base.bodies, base.comm
        self.constraints = base.constraints
        self.nonlinear = base.nonlinear
        self.basis = VelocityBasis(base.reducer, rows, base.space)
        self._ops: VelocityOperators | None = None
        self._key: tuple | None = None
        self._stamp: object = None
        self._tmp: PETSc.Vec | None = None
        for name in ("n_reduced", "update", "create_reduced_vec", "restrict", "project",
                     "expand", "expand_rate", "expand_acceleration", "near_nullspace",
                     "forget"):
            setattr(self, name, getattr(base, name))

    def at(self, t: float) -> VelocityOperators:
        """The operators at ``t`` (objects reused).

        Args:
            t: time (s).

        Returns:
            The operators.
        """
        s = self.base.at(t)
        key = (float(t), s.version, self.assembly.generation)
        if self._key == key and self._ops is not None:
            return self._ops
        nb = self.basis
        moved = nb.update(t)
        out = self._ops
        stamp = (s.version, moved if nb.rheonomic else False)
        if out is None or stamp != self._stamp or (nb.rheonomic and moved):
            Mw = nb.reduce(s.M, key="M")
            Cw = nb.reduce(s.C, key="C")
            if nb.rheonomic:
                Cw.axpy(1.0, nb.reduce_with(s.M, nb.A_dot, "M.Ad"), structure=SUBSET)
            Kw = nb.A.transposeMatMult(s.K, result=out.Kw if out is not None else None)
            out = VelocityOperators(t=t, base=s, An=nb.A, An_dot=nb.A_dot, an=nb.a0,
                                    an_dot=nb.a0_dot, Mw=Mw, Cw=Cw, Kw=Kw,
                                    fw=out.fw if out is not None else None,
                                    version=1 if out is None else out.version + 1)
            self._stamp = stamp
        out.t, out.base = t, s
        out.An, out.An_dot, out.an, out.an_dot = nb.A, nb.A_dot, nb.a0, nb.a0_dot
        # f_w = A_n^T (f_r - M_r a_n' - C_r a_n)
        rhs = s.f.copy(self._tmp_vec("rhs", s.f))
        if nb.prescribed:
            tmp = self._tmp_vec("tmp", s.f)
            s.C.mult(nb.a0, tmp)
            rhs.axpy(-1.0, tmp)
            if nb.a0_dot is not None:
                s.M.mult(nb.a0_dot, tmp)
                rhs.axpy(-1.0, tmp)
        out.fw = nb.project(rhs, out.fw)
        self._ops, self._key = out, key
        return out

    def _tmp_vec(self, name: str, like: PETSc.Vec) -> PETSc.Vec:
        store = self.__dict__.setdefault("_vecs", {})
        if name not in store:
            store[name] = like.duplicate()
        return store[name]

    def velocity(self, t: float, w: PETSc.Vec, out: PETSc.Vec) -> PETSc.Vec:
        """V = A_n w + a_n at ``t``.

        Args:
            t: time (s).
            w: the speeds.
            out: the vector to fill.

        Returns:
            ``out``.
        """
        s = self.at(t)
        s.An.multAdd(w, s.an, out)
        return out

    def acceleration(self, t: float, w: PETSc.Vec, w_dot: PETSc.Vec, out: PETSc.Vec
                     ) -> PETSc.Vec:
        """V' = A_n w' + A_n' w + a_n' at ``t``.

        Args:
            t: time (s).
            w: the speeds.
            w_dot: their rates.
            out: the vector to fill.

        Returns:
            ``out``.
        """
        s = self.at(t)
        s.An.mult(w_dot, out)
        if s.An_dot is not None:
            s.An_dot.multAdd(w, out, out)
        if s.an_dot is not None:
            out.axpy(1.0, s.an_dot)
        return out

    def constraint_forces(self, t: float, q: PETSc.Vec, v: PETSc.Vec, a: PETSc.Vec,
                          out: PETSc.Vec) -> PETSc.Vec:
        """The full constraint-force vector at (q, q', q'') and ``t`` (the holonomic system's).

        Args:
            t: time (s).
            q: the reduced coordinates.
            v: their rates q'.
            a: their second rates q''.
            out: the full vector to fill.

        Returns:
            ``out``.
        """
        return self.base.constraint_forces(t, q, v, a, out)

    def pencil(self, t: float, n: int, coupling: str | None = None,
               states: Sequence[FrameState] | None = None
               ) -> Tuple[PETSc.Mat, PETSc.Mat | None, PETSc.Mat]:
        """The holonomic pencil reduced once more by the constant rows B_n: the nonzero
        eigenvalues s of q' = A_n w, M_w w' + C_w w + K_w q = 0 solve
        (s^2 A_n^T M A_n + s A_n^T C A_n + A_n^T K A_n) w = 0 (q = A_n w / s); the m_n others
        are zero (the equilibria the rows leave free).

        Args:
            t: time (s).
            n: the number of wanted modes.
            coupling: ``"gyroscopic"`` (G), ``"damping"`` (G + D) or None.
            states: one frame state per body instead of ``frame.state(t)``.

        Returns:
            ``(K, G, M)`` (G None without coupling).
        """
        nb = self.basis
        nb.update(t)
        if n > nb.n_reduced:
            raise ValueError(f"n={n} exceeds the {nb.n_reduced} free dofs of the model")
        if nb.rheonomic:
            raise ValueError("natural frequencies and modes: the velocity constraints' "
                             "coefficients change with time, so the linearized system is "
                             "time-varying and has none")
        Kr, Gr, Mr = self.base.pencil(t, min(n, self.base.n_reduced), coupling, states)
        Kr, Mr = nb.reduce(Kr, key="pencil/K"), nb.reduce(Mr, key="pencil/M")
        Gr = None if Gr is None else nb.reduce(Gr, key=f"pencil/{coupling}")
        return Kr, Gr, Mr

    def expand_mode(self, x: PETSc.Vec, out: PETSc.Vec) -> PETSc.Vec:
        """The full shape of a pencil eigenvector (q = A_n w, up to 1/s).

        Args:
            x: a pencil eigenvector.
            out: the vector to fill.

        Returns:
            ``out``.
        """
        return self.base.expand_mode(self.basis.expand(x, homogeneous=True), out)
