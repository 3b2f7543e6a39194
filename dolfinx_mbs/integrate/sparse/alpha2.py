"""The linear path of :func:`dolfinx_mbs.integrate.integrate`: a system whose frame state is
constant in time, stepped in the second-order form by PETSc's TSALPHA2 scheme written on the
sparse reduced operators, without PETSc TS and its callbacks.

With the operators constant, a step is one solve with a step matrix factorized once for the
run (twice more for the restart's half steps) and the load vector at the step's time. The step
solver reads the run's ``ksp_``, ``pc_`` and ``mat_`` options (:data:`SOLVER_OPTIONS`, under
the run's prefix): with ``-mbs_pc_type gamg`` it is preconditioned by multigrid with the
bodies' rigid-body modes as near null space, set up once for the run. In the
node-block form (:class:`dolfinx_mbs.systems.records.InertiaBlocks`: constraints that fix whole
nodes, no stiffness-proportional damping) every inertia term of the residual is the mass times
a small matrix per node, and the mass is the scalar mass times the identity per node:

* :class:`~dolfinx_mbs.integrate.sparse.stepper.MassProducts` forms M dX, the only mass product of a
  step, by the scalar mass (a ninth of M's entries in 3D) with dX's node components as
  columns; M X, M V and M A follow the step's relations from it (X_1 = X_0 - dX, A_1 and V_1
  linear in dX, V_0, A_0) and are formed by one product of four columns every
  :data:`~dolfinx_mbs.integrate.sparse.stepper.MAX_REFRESH` steps (round-off); the next step's
  residual M A_a + C V_a + K X_0 is then combinations of them and K_s X_0;
* K_s X, the only stiffness product, follows the step relation
  K_s dX = F - (s_a + s_v W_C + W_K) M dX (J dX = F, J = K + s_v C + s_a M) instead of a
  product, and is formed by a product again every :attr:`SparseAlpha2.refresh` steps, that
  interval halved when the recursion drifted by more than
  :data:`~dolfinx_mbs.integrate.sparse.stepper.DRIFT` of K_s X, doubled (up to
  :data:`~dolfinx_mbs.integrate.sparse.stepper.MAX_REFRESH`) below a tenth of it; with an iterative
  step solve, whose residual the relation would accumulate, by a product at every step;
* the energies read M V, M X and K_s X (no product of their own).

Without the node-block form the residual takes its three products
(:func:`dolfinx_mbs.integrate.state_products.second_order_residual`) and the energies theirs.
The steps are TSALPHA2's up to round-off (its restart by two backward-Euler half steps
included; the scheme's algebra is :mod:`dolfinx_mbs.integrate.schemes`'), so the TS path is
this path's reference. :meth:`~dolfinx_mbs.integrate.sparse.stepper.SparseStepper.applies`
says when the path can take a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.integrate.schemes import (
    Alpha2Steps,
    alpha2_advance,
    alpha2_coefficients,
    alpha2_stage_values,
)
from dolfinx_mbs.integrate.sparse.stepper import MAX_REFRESH, SparseStepper, refresh_interval
from dolfinx_mbs.integrate.state_products import blocks_into, second_order_residual
from dolfinx_mbs.integrate.stepper import RunSpec
from dolfinx_mbs.petsc_options import SAME

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.sparse.load_series import SeriesRecord
    from dolfinx_mbs.systems.records import SecondOrder
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["SparseAlpha2"]


class SparseAlpha2(Alpha2Steps, SparseStepper):
    """TSALPHA2 on M q'' + C q' + K q = f with constant operators, on the system's PETSc
    objects: the state X, V, A (local arrays wrapped as Vecs), one LU per step matrix
    (the run's, and the restart's two half steps), the step's mass products kept for the
    next residual and the energies (node-block form) or formed when asked (else).

    Args:
        system: the run's typed system.
        run: the run (:class:`~dolfinx_mbs.integrate.stepper.RunSpec`).
    """

    name = "alpha2"
    formulation, method = "second-order", "linear alpha2"

    names = ("X", "V", "A", "MX", "MV", "MA", "MdX", "KX", "F", "dX", "w", "w2", "w3")
    mass_columns = 4

    def __init__(self, system: SecondOrderSystem, run: RunSpec) -> None:
        super().__init__(system, run)
        self._alpha2(run.spectral_radius)
        self._mass_since = 0  # steps since M X, M V, M A were formed by a product

    # --- state --------------------------------------------------------------------------
    def initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                p0: PETSc.Vec | None = None) -> None:
        """The state at t0 (``p0``: Hamilton's form's, not this form's).

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum, or None.
        """
        a = self.a
        a["X"][:] = q0.getArray(readonly=True)
        a["V"][:] = v0.getArray(readonly=True)
        a["A"][:] = 0.0
        self.started = False
        if self.segs is not None:
            self._products(dX=False)
            self._stiffness()

    def _products(self, dX: bool = True) -> None:
        """M X, M V, M A (and M dX) of the state, in one pass."""
        self._mass_since = 0
        a = self.a
        last = (a["dX"], a["MdX"]) if dX else (np.zeros_like(a["X"]), a["w2"])
        self._node_mass([a["X"], a["V"], a["A"], last[0]], [a["MX"], a["MV"], a["MA"], last[1]])

    def _stiffness(self, measure: bool = True) -> None:
        """K_s X by a product (with ``measure``, after the first, its drift from the
        recursion measured)."""
        a, v = self.a, self.vec
        measure = measure and self.started
        if measure:
            a["w"][:] = a["KX"]
        self._node_Ks.mult(v["X"], v["KX"])
        if measure:
            drift, self.refresh = refresh_interval(self.comm, a["w"], a["KX"], self.f2,
                                                   self.refresh)
            self.drift = max(self.drift, drift)
        self._since = 0

    # --- the step -----------------------------------------------------------------------
    def _solve(self, s: SecondOrder | SeriesRecord, sv: float, sa: float) -> None:
        def fill(J: PETSc.Mat) -> None:
            s.K.copy(J, structure=SAME)
            J.axpy(sv, s.C, structure=SAME)
            J.axpy(sa, s.M, structure=SAME)
        self._solve_keyed((s.version, sv, sa), fill)  # h as step_size took it

    def _state_arrays(self) -> tuple:
        a = self.a
        return a["X"], a["V"], a["A"]

    def _keep(self) -> dict:
        a = self.a
        return {k: a[k].copy() for k in ("MX", "MV", "MA", "KX")} if self.segs else {}

    def _restore(self, kept: dict) -> None:
        for k, x in kept.items():
            self.a[k][:] = x
        if self.segs is not None:
            self._products(dX=False)  # M A0 (M X0, M V0 again)

    def _stage(self, t: float, h: float, params: tuple, zero_a: bool) -> None:
        """One stage from the state in ``a`` (A taken as zero with ``zero_a``) to t + h
        (:mod:`dolfinx_mbs.integrate.schemes`' algebra, on the state or on its image under M
        in the node-block form)."""
        af = params[1]
        a = self.a
        if zero_a:
            a["A"][:] = 0.0
        s = self.record(t + af * h)
        c = alpha2_coefficients(h, params)
        sv, sa = c.sv, c.sa
        F = a["F"]
        if self.segs is not None:
            if zero_a:
                a["MA"][:] = 0.0
            alpha2_stage_values(a["MV"], a["MA"], c, a["w"], a["w2"])
            f = s.f.getArray(readonly=True)
            self.f2 = float(f @ f)
            np.add(a["w2"], a["KX"], out=F)
            F -= f
            blocks_into(self.segs, a["w"], F, 2, add=True)
            blocks_into(self.segs, a["MX"], F, 3, add=True)
        else:
            alpha2_stage_values(a["V"], a["A"], c, a["w"], a["w2"])
            second_order_residual(s, self.vec["X"], self.vec["w"], self.vec["w2"],
                                  self.vec["F"], self.vec["dX"])
        F /= af
        self._solve(s, sv, sa)
        dX = a["dX"]
        a["X"] -= dX
        alpha2_advance(a["V"], a["A"], dX, h, c, a["w"])
        if self.segs is None:
            return
        MdX = a["MdX"]
        self._mass_since += 1
        if self._mass_since >= MAX_REFRESH:  # the round-off of the recursion below
            self._products()
        else:  # M X, M V, M A follow the step's relations from M dX (one product)
            self._node_mass([dX], [MdX])
            a["MX"] -= MdX
            alpha2_advance(a["MV"], a["MA"], MdX, h, c, a["w"])
        F -= sa * MdX  # K_s dX = F - (s_a + s_v W_C + W_K) M dX
        blocks_into(self.segs, MdX, F, 2, add=True, scale=-sv)
        blocks_into(self.segs, MdX, F, 3, add=True, scale=-1.0)
        a["KX"] -= F
        self._since += 1
        if self.iterative:  # the step relation holds to the solver's tolerance only
            self._stiffness(measure=False)
        elif self._since >= self.refresh:
            self._stiffness()

    def step(self, t: float, h: float) -> None:
        """The step from t to t + h (the first one after TSALPHA2's restart; ``h`` as
        :meth:`~dolfinx_mbs.integrate.sparse.stepper.SparseStepper.step_size` takes it).

        Args:
            t: the step's start (s).
            h: its size (s).
        """
        Alpha2Steps.step(self, t, self.step_size(h))

    # --- what the observers ask of a stepper -----------------------------------------------
    def energy_products(self, s: SecondOrder | SeriesRecord, q: PETSc.Vec, v: PETSc.Vec,
                        Mv: PETSc.Vec | None = None) -> tuple:
        """(M v, K_el q, K_pot q) of the stepped state: from the kept products in the
        node-block form, by products else.

        Args:
            s: the record.
            q: the reduced displacement.
            v: the reduced velocity.
            Mv: M v where the caller has it, or None.

        Returns:
            (M v, K_el q, K_pot q).
        """
        a, vec = self.a, self.vec
        if self.segs is None:
            s.M.mult(v, vec["MV"])
            s.Kel.mult(q, vec["w"])
            s.Kpot.mult(q, vec["w2"])
            return vec["MV"], vec["w"], vec["w2"]
        ks = vec["KX"]
        assert s.blocks is not None  # (segments come from the node blocks)
        if s.version != self.version:  # K_s of this time (a prestress following gravity)
            s.blocks.Ks.mult(q, vec["w"])
            ks = vec["w"]
        a["w2"][:] = ks.getArray(readonly=True)
        blocks_into(self.segs, a["MX"], a["w2"], 3, add=True)
        kel = ks
        if s.blocks.Ks is not s.Kel:  # K_s = K_el + K_sigma
            s.Kel.mult(q, vec["w3"])
            kel = vec["w3"]
        return vec["MV"], kel, vec["w2"]
