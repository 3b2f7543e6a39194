"""Assembled PETSc operators of a body at a frame state.

The forms are compiled and the matrices (one sparsity pattern, shared by all of them) are
created once. Mass and stiffness are assembled once. A new frame state re-assembles only the
matrices whose constants changed (gyroscopic and spin softening with omega, angular
acceleration with alpha) into the existing objects, and the load vector: no recompilation, no
new sparsity.
"""

from __future__ import annotations

import time
from typing import Dict, Optional

import numpy as np
from dolfinx import fem
from dolfinx.fem import petsc as fpetsc
from petsc4py import PETSc

from .body import Body
from .frames import FrameState

__all__ = ["BodyOperators", "combine"]

SAME = PETSc.Mat.Structure.SAME_NONZERO_PATTERN

# which frame quantity each frame-dependent matrix depends on
_DEPENDS = {"gyroscopic": "omega", "spin_softening": "omega", "angular_acceleration": "alpha"}


def _assemble_into(A: PETSc.Mat, a) -> None:
    A.zeroEntries()
    fpetsc.assemble_matrix(A, a)
    A.assemble()


def combine(out: PETSc.Mat, terms) -> PETSc.Mat:
    """out = sum of c * X over ``terms`` [(c, X), ...]; all matrices share one sparsity."""
    (c0, X0), rest = terms[0], terms[1:]
    X0.copy(out, structure=SAME)
    if c0 != 1.0:
        out.scale(c0)
    for c, X in rest:
        if X is not None and c != 0.0:
            out.axpy(c, X, structure=SAME)
    return out


class BodyOperators:
    """PETSc matrices and load vector of one body, kept up to date with its frame state.

    Attributes:
        mats: ``mass``, ``stiffness`` (constant), ``gyroscopic``, ``spin_softening``,
            ``angular_acceleration`` (at the current state).
        Q: load vector (frame inertia, gravity, body, traction and point loads); owned values
            complete (ghost contributions summed).
        timings: seconds: ``compile`` (form compilation), ``first_assembly`` (creating every
            matrix and assembling mass and stiffness), and for the last :meth:`update`
            ``update_matrices`` and ``update_load``.
    """

    def __init__(self, body: Body):
        self.body = body
        t0 = time.perf_counter()
        self.forms = {k: fem.form(a) for k, a in body.bilinear_forms().items()}
        self.load_form = fem.form(body.load_form())
        t1 = time.perf_counter()
        self.mats: Dict[str, PETSc.Mat] = {k: fpetsc.create_matrix(a)
                                           for k, a in self.forms.items()}
        self.Q = fpetsc.create_vector(self.load_form)
        for k in ("mass", "stiffness"):
            _assemble_into(self.mats[k], self.forms[k])
        t2 = time.perf_counter()
        self._keys: Dict[str, Optional[tuple]] = {k: None for k in _DEPENDS}
        self.state: Optional[FrameState] = None
        self.timings = {"compile": t1 - t0, "first_assembly": t2 - t1}
        self._D: Optional[PETSc.Mat] = None

    @property
    def M(self) -> PETSc.Mat:
        return self.mats["mass"]

    @property
    def K(self) -> PETSc.Mat:
        return self.mats["stiffness"]

    def update(self, state: FrameState) -> None:
        """Bring the frame-dependent matrices and Q to ``state``."""
        t0 = time.perf_counter()
        self.body.set_state(state)
        for name, dep in _DEPENDS.items():
            key = tuple(getattr(state, dep))
            if key != self._keys[name]:
                if any(key) or self._keys[name] is None:
                    _assemble_into(self.mats[name], self.forms[name])
                else:
                    self.mats[name].zeroEntries()
                self._keys[name] = key
        t1 = time.perf_counter()
        with self.Q.localForm() as ql:
            ql.set(0.0)
        fpetsc.assemble_vector(self.Q, self.load_form)
        self.Q.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
        self.body.add_point_loads(self.Q, state)
        t2 = time.perf_counter()
        self.state = state
        self.timings["update_matrices"] = t1 - t0
        self.timings["update_load"] = t2 - t1

    @property
    def D(self) -> Optional[PETSc.Mat]:
        """Rayleigh damping a M + b K, or None when the material has none."""
        a, b = self.body.material.rayleigh
        if a == 0.0 and b == 0.0:
            return None
        if self._D is None:
            self._D = self.M.duplicate()
            combine(self._D, [(a, self.M), (b, self.K)])
        return self._D

    def dynamic_stiffness(self, out: Optional[PETSc.Mat] = None,
                          angular_acceleration: bool = True) -> PETSc.Mat:
        """K + K_omega (+ K_alpha): the stiffness of the equations of motion at the state."""
        out = out if out is not None else self.K.duplicate()
        terms = [(1.0, self.K), (1.0, self.mats["spin_softening"])]
        if angular_acceleration:
            terms.append((1.0, self.mats["angular_acceleration"]))
        return combine(out, terms)

    def damping(self, out: Optional[PETSc.Mat] = None, gyroscopic: bool = True) -> PETSc.Mat:
        """G (+ D): the velocity operator of the equations of motion at the state."""
        out = out if out is not None else self.K.duplicate()
        terms = [(1.0 if gyroscopic else 0.0, self.mats["gyroscopic"])]
        if self.D is not None:
            terms.append((1.0, self.D))
        return combine(out, terms)
