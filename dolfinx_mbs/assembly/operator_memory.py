"""A body's full matrices released where reduced copies hold what they hold, and made again
from the forms when read: the part of :class:`dolfinx_mbs.assembly.operators.BodyOperators` that
keeps a constant-frame run's memory to its reduced operators (issue 17). Also the assembly
helpers of the operators and the rotor terms (a form into a matrix, a combination of matrices
on one pattern).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, Mapping, Tuple

import numpy as np
from dolfinx.fem import petsc as fpetsc
from petsc4py import PETSc

from dolfinx_mbs.petsc_options import SAME
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from dolfinx import fem

    from dolfinx_mbs.bodies.body import Body

__all__ = ["ReleasableMatrices", "assemble_into", "combine", "create_filled"]


def assemble_into(A: PETSc.Mat, a: fem.Form) -> None:
    """Assemble form ``a`` into ``A`` (zeroed first).

    Args:
        A: the matrix.
        a: the compiled bilinear form.
    """
    A.zeroEntries()
    fpetsc.assemble_matrix(A, a)
    A.assemble()


def combine(out: PETSc.Mat, terms: Iterable[Tuple[float, PETSc.Mat | None]]) -> PETSc.Mat:
    """Out = sum of c * X over ``terms`` [(c, X), ...] (zero c skipped); one shared sparsity.

    Args:
        out: the matrix to fill (of the terms' sparsity).
        terms: ``(c, X)`` pairs (X None: skipped).

    Returns:
        ``out``.
    """
    terms = [(c, X) for c, X in terms if X is not None and c != 0.0]
    if not terms:
        out.zeroEntries()
        out.assemble()
        return out
    (c0, X0), rest = terms[0], terms[1:]
    assert X0 is not None  # (the None terms are left out above)
    X0.copy(out, structure=SAME)
    if c0 != 1.0:
        out.scale(c0)
    for c, X in rest:
        out.axpy(c, X, structure=SAME)
    return out


def create_filled(a: fem.Form) -> PETSc.Mat:
    """A matrix with the sparsity of form ``a``, its whole pattern filled by one assembly.

    (Assembling a freshly created matrix without inserting anything would squeeze its
    preallocated pattern away; later MatCopy/MatAXPY on the shared pattern need it intact.)

    Args:
        a: the compiled bilinear form.

    Returns:
        The matrix.
    """
    A = fpetsc.create_matrix(a)
    assemble_into(A, a)
    return A


class ReleasableMatrices:
    """The matrices of :class:`~dolfinx_mbs.assembly.operators.BodyOperators` by name, each one that
    :meth:`release` destroyed made again (assembled from ``forms`` at the frame state it had,
    the same values) when it is next read. The operators hold ``_mats`` (name: matrix),
    ``_released`` (names), ``_keys`` (the frame-coupling W of each at its state), ``_D``,
    ``_prestress``, ``_user``, ``forms``, ``strategy`` and ``body``."""

    # set by the operators (``BodyOperators.__init__``)
    strategy: str
    body: Body
    forms: Dict[str, fem.Form]
    _mats: Dict[str, PETSc.Mat | None]
    _released: set
    _keys: Dict[str, tuple | None]
    _D: PETSc.Mat | None
    _prestress: list
    _user: Dict[str, list]

    @property
    def releasable(self) -> bool:
        """True when every matrix can be made again from the forms alone at its last frame
        state: a time-invariant frame, the ``"assemble"`` strategy, no prestress, no user
        forms assembled on their own, linear strain."""
        return (self.strategy == "assemble" and self.body.frame.time_invariant
                and not self._prestress and not self._user and self.body.u_state is None
                and getattr(self, "rotor", None) is None)

    def release(self, names: Iterable[str]) -> None:
        """Destroy the full matrices ``names`` (of :attr:`mats`, or ``"damping"``; collective)
        to save memory; each is assembled again, at the frame state it had, when next read.
        Their values, ``version`` and the state's keys are unchanged. Only where
        :attr:`releasable`.

        Args:
            names: the names (of :attr:`mats`, or ``"damping"``).
        """
        if not self.releasable:
            raise ValueError("release: this body's matrices cannot be made again from its "
                             "forms alone (prestress, user forms, nonlinear strain or a frame "
                             "that changes in time)")
        for name in names:
            if name == "damping":
                X, self._D = self._D, None
            else:
                X = self._mats.get(name)
                if X is None:
                    continue
                self._mats[name] = None
                self._released.add(name)
            if X is not None:
                X.destroy()

    @property
    def held(self) -> Mapping[str, PETSc.Mat]:
        """The matrices held now (none made again), by name (``"damping"``: D; read-only)."""
        out = {k: X for k, X in self._mats.items() if X is not None}
        if self._D is not None:
            out["damping"] = self._D
        return FrozenMapping(out)

    def matrix(self, name: str) -> PETSc.Mat | None:
        """The matrix ``name`` of :attr:`mats` (made again first if released; None for one
        that does not exist).

        Args:
            name: the name (of :attr:`mats`).

        Returns:
            The matrix, or None.
        """
        if name in self._released:
            self._released.discard(name)
            if name in ("mass", "stiffness"):
                self._mats[name] = create_filled(self.forms[name])
            else:  # a coupling matrix at the frame state it had
                key = self._keys.get(name)
                self.body.W.value = np.zeros((3, 3)) if key is None else \
                    np.reshape(key, (3, 3))
                self._mats[name] = create_filled(self.forms["coupling"])
        return self._mats.get(name)

    @property
    def mats(self) -> Mapping[str, PETSc.Mat | None]:
        """``mass``, ``stiffness`` (constant), ``gyroscopic``, ``spin_softening``,
        ``angular_acceleration`` (None until an alpha != 0 appears), ``geometric`` (with
        prestress), at the current state; released ones made again first (a read-only view)."""
        for name in list(self._released):
            self.matrix(name)
        return FrozenMapping(self._mats)

    @property
    def M(self) -> PETSc.Mat:
        """The full mass matrix (assembled again if it was released)."""
        return self.matrix("mass")

    @property
    def K(self) -> PETSc.Mat:
        """The full stiffness matrix (assembled again if it was released)."""
        return self.matrix("stiffness")
