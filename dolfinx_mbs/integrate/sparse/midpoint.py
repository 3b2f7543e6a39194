"""Hamilton's form on the linear path of :func:`dolfinx_mbs.integrate.integrate`: a system
whose frame state is constant in time, stepped by the TS path's implicit midpoint (TSTHETA,
theta = 1/2, no endpoint) written on the sparse reduced operators, without PETSc TS.

With y = (q, p), M q' + G_p q + pi_0 - p = 0 and p' + (G_p + D) q' + K_h q + h - f_a = 0
(:class:`~dolfinx_mbs.systems.records.Hamiltonian`), the step from t0 to t0 + dt takes the
rate yd at the midpoint (y_mid = y0 + dt/2 yd, the vectors at t0 + dt/2) and y1 = y0 + dt yd.
Eliminating pd from the first equation,

    [M + dt/2 (2 G_p + D) + dt^2/4 K_h] qd = dt/2 (f_a - h - K_h q0) + w0,
    w1 = 2 M qd - w0,        w = p - G_p q - pi_0 = M v,

so the state is carried as (q, w) rather than (q, p): w is what the step reads, and it is
the small difference of the large momenta p and pi_0 that the TS path forms at every state
(M, G_p and pi_0 are constant here: p = w + G_p q + pi_0). The velocity at the step's end
follows as the TS path's :class:`~dolfinx_mbs.integrate.state_products.SteppedVelocity` takes it,
v1 = 2 qd - v0 (M v1 = w1 exactly in exact arithmetic: no mass solve); v0 is the user's, or
M^-1 w0 (one mass solve) where the user gave p0. The step matrix is (dt^2/4) times the
second-order form's K + (2/dt) C + (4/dt^2) M, factorized once per run.

In the node-block form (:class:`~dolfinx_mbs.systems.records.InertiaBlocks`) a step is one
solve and one pass of the scalar mass over qd's node components
(:class:`~dolfinx_mbs.integrate.sparse.stepper.MassProducts`): G_p q = W_p M q, K_h q = K_s q + W_w
M q,
D = a_R M; M q and K_s q follow the step (K_s qd from the step relation
K_s qd = (4/dt^2) (r - (I + dt/2 (2 W_p + a_R I) + dt^2/4 W_w) M qd), formed by a product every
:attr:`SparseMidpoint.refresh` steps as :class:`~dolfinx_mbs.integrate.sparse.alpha2.SparseAlpha2`
does,
at every step under an iterative step solve). The step solver reads the run's options as
:class:`~dolfinx_mbs.integrate.sparse.alpha2.SparseAlpha2`'s does (``-mbs_pc_type gamg``: multigrid
with
the rigid-body modes as near null space).
Without it, a step takes K_h q0 (shared with the energies' K q) and M qd by products.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Tuple

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.integrate.sparse.stepper import SparseStepper, refresh_interval
from dolfinx_mbs.integrate.state_products import blocks_into
from dolfinx_mbs.integrate.step_solvers import cheapest_lu
from dolfinx_mbs.integrate.stepper import RunSpec
from dolfinx_mbs.petsc_options import SAME, converged, reason_name

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.sparse.load_series import SeriesRecord
    from dolfinx_mbs.systems.records import SecondOrder
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["SparseMidpoint"]



class SparseMidpoint(SparseStepper):
    """The implicit midpoint on Hamilton's form with constant operators, on the system's
    PETSc objects: the state q, w = M v and v (local arrays wrapped as Vecs), one LU of the
    step matrix per (operators, dt).

    Args:
        system: the run's typed system.
        run: the run (:class:`~dolfinx_mbs.integrate.stepper.RunSpec`).
    """

    name = "theta"
    formulation, method = "hamiltonian", "linear midpoint"

    names = ("X", "V", "W", "MX", "KX", "dX", "MdX", "F", "w", "w2", "w3")
    mass_columns = 1
    load_names = ("f", "fa")

    def __init__(self, system: SecondOrderSystem, run: RunSpec) -> None:
        super().__init__(system, run)
        # (key, [(segment, gdim, E)]) of the K_s recursion
        self._step_blocks: Tuple[tuple | None, list] = (None, [])
        self._khx: int | None = None  # the version whose K_h q "KX" holds (no node blocks), or None

    # --- state --------------------------------------------------------------------------
    def initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                p0: PETSc.Vec | None = None) -> None:
        """The state at t0: q0 and v0, or q0 and the momentum p0 (v0 then from M v0 = w0 =
        p0 - G_p q0 - pi_0, one mass solve).

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum, or None.
        """
        a, vec = self.a, self.vec
        s = self.system.at(self.t0)
        a["X"][:] = q0.getArray(readonly=True)
        if self.segs is not None:
            self._node_mass([a["X"]], [a["MX"]])
            self._node_Ks.mult(vec["X"], vec["KX"])
            self._since = 0
        self._khx = None
        if p0 is None:
            a["V"][:] = v0.getArray(readonly=True)
            if self.segs is not None:
                self._node_mass([a["V"]], [a["W"]])
            else:
                s.M.mult(vec["V"], vec["W"])
            return
        a["W"][:] = p0.getArray(readonly=True) - s.pi0.getArray(readonly=True)
        if self.segs is not None:  # G_p q = W_p M q
            assert s.blocks is not None  # (segments come from the node blocks)
            blocks_into(s.blocks.momentum, a["MX"], a["W"], 2, add=True, scale=-1.0)
        else:
            s.Gp.mult(vec["X"], vec["w"])
            a["W"] -= a["w"]
        ksp = PETSc.KSP().create(self.comm)
        try:
            cheapest_lu(ksp, self.small)
            ksp.setOperators(s.M)
            ksp.solve(vec["W"], vec["V"])
            if not converged(ksp):
                reason = reason_name(PETSc.KSP.ConvergedReason, ksp.getConvergedReason())
                raise RuntimeError(f"p0: the mass matrix solve for v0 failed ({reason})")
        finally:
            ksp.destroy()

    def _stiffness(self, measure: bool = True) -> None:
        """K_s q and M q by products (with ``measure``, K_s q's drift from the recursion
        measured and the interval adapted)."""
        a, v = self.a, self.vec
        if measure:
            a["w"][:] = a["KX"]
        self._node_Ks.mult(v["X"], v["KX"])
        self._node_mass([a["X"]], [a["MX"]])
        if measure:
            drift, self.refresh = refresh_interval(self.comm, a["w"], a["KX"], self.f2,
                                                   self.refresh)
            self.drift = max(self.drift, drift)
        self._since = 0

    # --- the step -----------------------------------------------------------------------
    def _solve(self, s: SecondOrder | SeriesRecord, h: float) -> None:
        """Solve for qd: [M + h/2 (2 G_p + D) + h^2/4 K_h] qd = F, factorized when the operators or
        h changed."""
        def fill(J: PETSc.Mat) -> None:
            s.Kh.copy(J, structure=SAME)
            J.scale(0.25 * h * h)
            J.axpy(h, s.Gp, structure=SAME)
            if s.D is not None:
                J.axpy(0.5 * h, s.D, structure=SAME)
            J.axpy(1.0, s.M, structure=SAME)
        self._solve_keyed((s.version, h), fill)  # h as step_size took it

    def _recursion_blocks(self, s: SecondOrder | SeriesRecord, h: float) -> list:
        """Per node, E = h/2 (2 W_p + a_R I) + h^2/4 W_w: K_s qd = (4/h^2)(F - M qd - E M qd)."""
        key = (s.version, h)
        if self._step_blocks[0] != key:
            assert s.blocks is not None  # (the node-block form)
            E = [(seg, g, 0.5 * h * (Wp + WpD) + 0.25 * h * h * Ww)
                 for seg, g, Wp, WpD, Ww, _ in s.blocks.momentum]
            self._step_blocks = (key, E)
        return self._step_blocks[1]

    def step(self, t: float, h: float) -> None:
        """The step from t to t + h (the operators and vectors at t + h/2; ``h`` as
        :meth:`~dolfinx_mbs.integrate.sparse.stepper.SparseStepper.step_size` takes it).

        Args:
            t: the step's start (s).
            h: its size (s).
        """
        h = self.step_size(h)
        a, vec = self.a, self.vec
        s = self.record(t + 0.5 * h)
        X, F, dX, MdX = a["X"], a["F"], a["dX"], a["MdX"]
        np.subtract(s.fa.getArray(readonly=True), s.h.getArray(readonly=True), out=F)
        self.f2 = float(F @ F)
        if self.segs is not None:  # K_h q0 = K_s q0 + W_w M q0
            assert s.blocks is not None  # (segments come from the node blocks)
            F -= a["KX"]
            blocks_into(s.blocks.momentum, a["MX"], F, 4, add=True, scale=-1.0)
        else:
            if self._khx != s.version:
                s.Kh.mult(vec["X"], vec["KX"])
            F -= a["KX"]
        F *= 0.5 * h
        F += a["W"]
        self._solve(s, h)
        if self.segs is not None:
            self._node_mass([dX], [MdX])
            KdX = a["w"]
            np.subtract(F, MdX, out=KdX)
            blocks_into(self._recursion_blocks(s, h), MdX, KdX, 2, add=True, scale=-1.0)
            KdX *= 4.0 / (h * h)
            a["KX"] += h * KdX
            a["MX"] += h * MdX
        else:
            s.M.mult(vec["dX"], vec["MdX"])
            self._khx = None
        X += h * dX
        a["W"] *= -1.0
        a["W"] += 2.0 * MdX
        a["V"] *= -1.0
        a["V"] += 2.0 * dX
        if self.segs is not None:
            self._since += 1
            if self.iterative:  # the step relation holds to the solver's tolerance only
                self._node_Ks.mult(vec["X"], vec["KX"])
            if self._since >= self.refresh:  # (M q follows the step whatever the solve)
                self._stiffness(measure=not self.iterative)

    # --- what the observers ask of a stepper -----------------------------------------------
    def energy_products(self, s: SecondOrder | SeriesRecord, q: PETSc.Vec, v: PETSc.Vec,
                        Mv: PETSc.Vec | None = None) -> tuple:
        """(M v, K_el q, K_pot q) of the stepped state: M v = w (the state), K_s q and M q
        kept in the node-block form, products else (K_h q kept for the next step).

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
            kpot = vec["w2"]
            if s.Kpot is s.Kh:
                if self._khx != s.version:
                    s.Kh.mult(q, vec["KX"])
                    self._khx = s.version
                kpot = vec["KX"]
            else:
                s.Kpot.mult(q, kpot)
            kel = kpot
            if s.Kel is not s.Kpot:
                s.Kel.mult(q, vec["w3"])
                kel = vec["w3"]
            return vec["W"], kel, kpot
        ks = vec["KX"]
        assert s.blocks is not None  # (segments come from the node blocks)
        if s.version != self.version:  # K_s of this time (a prestress following gravity)
            s.blocks.Ks.mult(q, vec["w"])
            ks = vec["w"]
        a["w2"][:] = ks.getArray(readonly=True)
        blocks_into(s.blocks.blocks, a["MX"], a["w2"], 3, add=True)
        kel = ks
        if s.blocks.Ks is not s.Kel:  # K_s = K_el + K_sigma
            s.Kel.mult(q, vec["w3"])
            kel = vec["w3"]
        return vec["W"], kel, vec["w2"]
