"""The system of one harmonic index 0 < k < N/2: two copies of the sector, cosine and sine.

The real form of ``docs/theory.md`` section 10: the complex amplitude u_c + i u_s of harmonic
index k is two real copies of the sector's unknowns. The copies share the sector's operators
block-diagonally (M, G, K, K_sigma, K_omega of the sector on each), the sector's other
constraints hold on each copy, and only the cut's rows (:class:`~dolfinx_mbs.cyclic.rows.
CyclicRows`) couple them. The Maggi reducer eliminates them all like any rows, so that the
typed system, its eigenproblems and Campbell sweeps are the ones of any model, on

* :class:`CopiedSpace`: the full space of the two copies, rank r owning its block of the
  cosine copy followed by the same block of the sine copy (the layout of a 2 x 2 MatNest of the
  model's full matrices, so that diag(X, X) needs no renumbering);
* :class:`HarmonicAssembly`: the model's assembly seen on both copies (its bodies' operators,
  brought to one frame state, shared: nothing is assembled twice, and the geometric stiffness is
  the k = 0 prestress of the model's own static solve);
* :class:`HarmonicSystem`: the second-order system on them, which also gives the travelling
  direction of its modes (:class:`TravellingWaves`) in place of a rotor's whirl.

Why two real copies and not one complex sector: the package's PETSc is real (the PyPI wheel
``dolfinx-solver-real`` and Debian's ``python3-dolfinx-real``), its operators, reducer,
eigensolvers (the pairs +/- i w of a real pencil) and Campbell sweeps are written for it, and
the real form of harmonic k holds the whole wheel's k and N - k at once: its frequencies are
the wheel's pairs (two standing waves at rest; the forward and the backward travelling wave,
split by the Coriolis terms, when spinning), each appearing once, as in the whole wheel. A
complex build would halve the unknowns at four times the cost of each operation, and need a
second PETSc for every user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Sequence, Tuple

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.assembly.full import Assembly
from dolfinx_mbs.assembly.space import FullSpace
from dolfinx_mbs.constraints.base import Constraint, Rows
from dolfinx_mbs.petsc_options import SAME, SUBSET
from dolfinx_mbs.systems.second_order import SecondOrderSystem

if TYPE_CHECKING:
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.constraints.maggi import MaggiReducer
    from dolfinx_mbs.frames.base import FrameState

__all__ = ["CopiedSpace", "CopiedRows", "HarmonicAssembly", "HarmonicSystem", "TravellingWaves",
           "COPIES"]

#: the copies of the real form, in the order of the two-copy space
COPIES = ("cos", "sin")


class _Copy:
    """A body seen as one copy of the sector: the body itself in every respect but its name
    (``<name>_cos``, ``<name>_sin``), which labels messages and output files."""

    def __init__(self, body: Body, label: str) -> None:
        self.__dict__["body"] = body
        self.__dict__["label"] = label
        self.__dict__["name"] = f"{body.name}_{label}"

    def __getattr__(self, key: str) -> Any:
        return getattr(self.__dict__["body"], key)

    def __repr__(self) -> str:
        return f"{self.label} copy of {self.body!r}"


class CopiedSpace(FullSpace):
    """The full space of the two copies of a model's space ``base``: on rank r, its owned block
    of the cosine copy, then the same block of the sine copy.

    Args:
        base: the model's full space.
    """

    def __init__(self, base: FullSpace) -> None:
        super().__init__([_Copy(b, lab) for lab in COPIES for b in base.bodies])
        self.base = base
        comm = base.comm
        self._starts = np.array(comm.allgather(base.rstart), dtype=np.int64)
        self._sizes = np.array(comm.allgather(base.n_local), dtype=np.int64)
        self._offsets = comm.allgather(base.offsets)

    def copy_index(self, full: np.ndarray, copy: int) -> np.ndarray:
        """The index in this space of the model's full indices ``full`` in copy ``copy``.

        Args:
            full: full indices of the model's space (any rank's).
            copy: 0 (cosine) or 1 (sine).

        Returns:
            The indices here, of ``full``'s shape.
        """
        f = np.asarray(full, dtype=np.int64)
        r = np.searchsorted(self._starts, f, side="right") - 1
        return f + self._starts[r] + copy * self._sizes[r]

    def where(self, dof: int) -> Tuple[str, int]:
        """(body and copy, local unblocked dof on its owner) of an index here, for messages.

        Args:
            dof: an index of this space.

        Returns:
            ``("<body> (<copy> copy)", local dof)``.
        """
        r = int(np.searchsorted(2 * self._starts, dof, side="right") - 1)
        local = int(dof - 2 * self._starts[r])
        n = int(self._sizes[r])
        copy, local = divmod(local, max(n, 1))
        offs = self._offsets[r]
        ib = int(np.searchsorted(offs, local, side="right") - 1)
        return (f"{self.base.bodies[ib].name} ({COPIES[min(copy, 1)]} copy)",
                int(local - offs[ib]))


class CopiedRows(Constraint):
    """A constraint of the model held by one copy: its rows renumbered into the two-copy
    space, homogeneous (the right-hand sides belong to the k = 0 problem).

    Args:
        constraint: the model's constraint.
        space: the two-copy space.
        copy: 0 (cosine) or 1 (sine).
    """

    def __init__(self, constraint: Constraint, space: CopiedSpace, copy: int) -> None:
        if constraint.time_dependent and getattr(constraint, "rheonomic", False):
            raise ValueError(f"harmonic analyses: the constraint {constraint.name!r} moves "
                             "(rheonomic rows): a cyclic model's constraints must be "
                             "time-invariant")
        self.constraint, self.space, self.copy = constraint, space, copy
        self.name = f"{constraint.name} ({COPIES[copy]} copy)"

    def rows(self, space: FullSpace, t: float) -> Rows:
        """The constraint's rows in this copy, homogeneous.

        Args:
            space: the two-copy space.
            t: time (s).

        Returns:
            The rows.

        Raises:
            ValueError: the constraint's rows move (rheonomic).
        """
        r = self.constraint.rows(self.space.base, t)
        if r.rheonomic:
            raise ValueError(f"harmonic analyses: the constraint {self.constraint.name!r} moves "
                             "(rheonomic rows)")
        ci = self.space.copy_index
        pivot = np.where(r.pivot >= 0, ci(np.maximum(r.pivot, 0), self.copy), -1)
        return Rows(self.name, r.indptr, ci(r.cols, self.copy), r.coef,
                    np.zeros_like(r.rhs), pivot.astype(np.int64))


class HarmonicAssembly(Assembly):
    """The model's assembly ``base`` seen on the two copies: full matrices diag(X, X).

    The bodies' operators are the model's own (brought to a frame state through ``base``, so
    that the model's assembly always knows their state); only the block-diagonal full matrices
    are formed here.

    Args:
        base: the model's assembly.
        space: the two-copy space.
    """

    def __init__(self, base: Assembly, space: CopiedSpace) -> None:
        self.base = base
        super().__init__(space.bodies, space, prestress=None, strategy=base.strategy)
        self._n = len(base.bodies)

    @property
    def generation(self) -> int:  # type: ignore[override]
        """The model's assembly's generation (the bodies' state is brought there)."""
        return self.base.generation

    @generation.setter
    def generation(self, value: int) -> None:
        pass

    @property
    def body_operators(self) -> list:  # type: ignore[override]
        """The model's bodies' operators, once per copy."""
        ops = self.base.body_operators
        if self.base.bearing_links is not None:
            raise ValueError("harmonic analyses: a cyclic model has no bearings between bodies")
        return list(ops) * len(COPIES)

    def states(self, t: float, states: Sequence[FrameState] | None = None
               ) -> List[FrameState]:
        """The frame state of each copy's body at ``t`` (``states`` as given when not None).

        Args:
            t: time (s).
            states: one frame state per body of the two copies, or None.

        Returns:
            The frame states, one per body of the two copies.
        """
        if states is not None:
            return super().states(t, states)
        return list(self.base.states(t)) * len(COPIES)

    def at(self, t: float, states: Sequence[FrameState] | None = None) -> list:
        """The bodies' operators brought to the frame states (the cosine copy's states).

        Args:
            t: time (s).
            states: one frame state per body of the two copies, or None.

        Returns:
            The operators, once per copy.
        """
        sts = self.states(t, states)
        self.base.at(t, sts[: self._n])
        return self.body_operators

    def loads_at(self, t: float, states: Sequence[FrameState] | None = None) -> list:
        """The bodies' operators with their loads brought to the frame states.

        Args:
            t: time (s).
            states: one frame state per body of the two copies, or None.

        Returns:
            The operators, once per copy.
        """
        sts = self.states(t, states)
        self.base.loads_at(t, sts[: self._n])
        return self.body_operators

    def refresh(self) -> None:
        """See :meth:`Assembly.refresh` (the model's assembly's)."""
        self.base.refresh()

    @property
    def releasable(self) -> bool:
        """False: the model's assembly owns the bodies' matrices."""
        return False

    def doubled(self, X: PETSc.Mat, key: str) -> PETSc.Mat:
        """diag(X, X) of a full matrix ``X`` of the model's space (kept under ``key`` and
        refilled).

        Args:
            X: a full matrix of the model's space.
            key: the name it is kept under.

        Returns:
            The matrix of the two-copy space.
        """
        nest = PETSc.Mat().createNest([[X, None], [None, X]], comm=self.comm)
        out = self._work.get("doubled/" + key)
        if out is None:
            out = self._work["doubled/" + key] = nest.convert("aij")
        else:
            nest.convert("aij", out=out)
            nest.destroy()
        return out


class TravellingWaves:
    """The travelling direction of the modes of a two-copy system, for a Campbell sweep (in
    place of the whirl of :mod:`dolfinx_mbs.campbell`).

    Sector j of the wheel moves as R^j Re((x_c cos(j k alpha) - x_s sin(j k alpha)) e^(i w t)),
    i.e. as the waves (x_c - i x_s) e^(i(w t - k theta)) (forward: along the spin, theta the
    angle about the axis) and (x_c + i x_s) e^(i(w t + k theta)) (backward), of mass-weighted
    amplitudes S + 2 Im z and S - 2 Im z, z = x_c^H M x_s, S = x_c^H M x_c + x_s^H M x_s. The
    index tau = 2 Im z / S lies in [-1, 1]: +1 a forward, -1 a backward travelling wave, 0 a
    standing wave.

    Args:
        orientation: +1 when the sector's axis is the frame's spin axis, -1 when opposite.
    """

    def __init__(self, orientation: float) -> None:
        self.orientation = float(orientation)

    def local_terms(self, red: MaggiReducer, M: PETSc.Mat, Z: np.ndarray) -> np.ndarray:
        """This rank's parts of (2 Im z, S, S) of each mode (:class:`TravellingWaves`).

        Args:
            red: the system's reducer.
            M: the two-copy mass matrix.
            Z: this rank's rows of the reduced vectors: the k real parts, then the k
                imaginary parts.

        Returns:
            (k, 3): this rank's parts of the sums of each mode.
        """
        k = Z.shape[1] // 2
        F = _mult(red.A, Z)
        MF = _mult(M, F)
        n = F.shape[0] // 2
        x = F[:, :k] + 1j * F[:, k:]
        Mx = MF[:, :k] + 1j * MF[:, k:]
        z = np.sum(np.conj(x[:n]) * Mx[n:], axis=0)
        S = np.sum(np.real(np.conj(x) * Mx), axis=0)
        out = np.zeros((k, 3))
        out[:, 0] = 2.0 * self.orientation * z.imag
        out[:, 1] = out[:, 2] = S
        return out


def _mult(A: PETSc.Mat, Z: np.ndarray) -> np.ndarray:
    """A times the columns of ``Z`` (this rank's rows), this rank's rows of the product."""
    x, y = A.createVecs()
    out = np.zeros((y.getLocalSize(), Z.shape[1]))
    for j in range(Z.shape[1]):
        x.array[:] = Z[:, j]
        A.mult(x, y)
        out[:, j] = y.getArray(readonly=True)
    x.destroy()
    y.destroy()
    return out


class HarmonicSystem(SecondOrderSystem):
    """The second-order system of harmonic index k > 0: on the two copies (0 < k < N/2), or
    on the model's own space with the rows of k = N/2.

    Args:
        assembly: the :class:`HarmonicAssembly` (two copies), or the model's assembly.
        reducer: the Maggi reducer of the copies' constraints and the cut's rows.
        constraints: those constraints.
        static: the model's static solver.
        k: the harmonic index.
        n_sectors: N.
        base: the model's own (k = 0) system: the equilibrium that nonlinear strain is
            linearized about.
        orientation: +1 when the sector's axis is the frames' spin axis, -1 when opposite.
    """

    def __init__(self, assembly: Assembly, reducer: MaggiReducer,
                 constraints: Sequence, static: Any, k: int, n_sectors: int,
                 base: SecondOrderSystem, orientation: float = 1.0) -> None:
        super().__init__(assembly, reducer, constraints, static)
        self.harmonic, self.n_sectors, self.base = int(k), int(n_sectors), base
        self.orientation = orientation
        self.copies = 2 if isinstance(assembly, HarmonicAssembly) else 1

    def orbit_sense(self) -> TravellingWaves | None:
        """The travelling direction of the modes (what a Campbell sweep reports as whirl) of
        two copies; None for one (k = N/2: standing waves)."""
        return TravellingWaves(self.orientation) if self.copies == 2 else None

    def at(self, t: float, states: Sequence[FrameState] | None = None) -> Any:
        """Refused: a harmonic's system is for eigenproblems; the model's own system is the
        k = 0 one (cyclic loads and motion).

        Args:
            t: time (s).
            states: one frame state per body, or None.

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError(
            f"the system of harmonic index {self.harmonic} is for eigenproblems "
            "(natural_frequencies, modes, campbell); static solves and time integration of a "
            "cyclic model are its k = 0 problem (the model's own system)")

    def pencil(self, t: float, n: int, coupling: str | None = None,
               states: Sequence[FrameState] | None = None
               ) -> Tuple[PETSc.Mat, PETSc.Mat | None, PETSc.Mat]:
        """(K_r, G_r, M_r) as :meth:`SecondOrderSystem.pencil`; with nonlinear strain the
        tangent about the model's cyclic (k = 0) equilibrium, on both copies.

        Args:
            t: time (s).
            n: the number of wanted modes.
            coupling: ``"gyroscopic"``, ``"damping"`` or None.
            states: one frame state per body of the two copies, or None.

        Returns:
            ``(K_r, G_r, M_r)``.
        """
        if not self.nonlinear:
            return super().pencil(t, n, coupling, states)
        asm, red = self.assembly, self.reducer
        red.update(t)
        if n > red.n_reduced:
            raise ValueError(f"n={n} exceeds the {red.n_reduced} free dofs of the model")
        sts = asm.states(t, states)
        base = self.base
        nb = len(base.bodies)
        q0 = base.static.solve(base, t, states=sts[:nb])
        u0 = base.reducer.expand(q0)
        _, KN = base.assembly.nonlinear_terms(u0, force=False)
        u0.destroy()
        Kr = red.reduce(asm.stiffness(t, angular_acceleration=False, states=sts), key="Kw")
        Kt = self._work.get("Kt")
        Kt = Kr.copy(Kt, structure=SAME) if Kt is not None else Kr.copy()
        if isinstance(asm, HarmonicAssembly):
            KN = asm.doubled(KN, "KN")
        Kt.axpy(1.0, red.reduce(KN, key="KN"), structure=SUBSET)
        self._work["Kt"] = Kt
        Mr = red.reduce(asm.mass(), key="M")
        Gr = None
        if coupling == "damping":
            Gr = red.reduce(asm.damping(t, states=sts), key="C")
        elif coupling == "gyroscopic":
            Gr = red.reduce(asm.gyroscopic(t, states=sts), key="Gyro")
        return Kt, Gr, Mr

