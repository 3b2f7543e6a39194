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
(:func:`dolfinx_mbs.integrate.ts.second_order.second_order_residual`) and the energies theirs. The steps
are TSALPHA2's up to round-off (its restart by two backward-Euler half steps included), so
the TS path is this path's reference. :func:`applies` says when the path can take a run.
"""

from __future__ import annotations

import logging
from typing import Optional

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.compat import alpha2_restart_step
from dolfinx_mbs.integrate import observers as obs
from dolfinx_mbs.integrate.initial import reduced_initial
from dolfinx_mbs.integrate.schemes import BACKWARD_EULER, alpha2_parameters
from dolfinx_mbs.integrate.sparse.stepper import MAX_REFRESH, SparseStepper, refresh_interval
from dolfinx_mbs.integrate.state_products import blocks_into, second_order_residual
from dolfinx_mbs.integrate.step_solvers import small_lu
from dolfinx_mbs.petsc_options import SAME, SolverOptions
from dolfinx_mbs.systems.records import constant_frame

__all__ = ["applies", "SparseAlpha2", "run", "SOLVER_OPTIONS"]

log = logging.getLogger(__name__)


def applies(system, formulation: str, reactions) -> Optional[str]:
    """None when the linear path can step this run, else why not (words for the log or an
    error): the second-order or Hamilton form (:mod:`dolfinx_mbs.integrate.sparse.midpoint`) of a
    linear system with a constant frame state, no multipliers or velocity rows, no reactions
    (they need the equations' acceleration)."""
    if formulation not in ("second-order", "hamiltonian"):
        return (f"the {formulation} form (the linear path steps the second-order and "
                "hamiltonian forms)")
    if system.has_multipliers or hasattr(system, "basis"):
        return "multipliers or velocity constraints"
    if not constant_frame(system):
        return "a frame state or constraints changing in time, or nonlinear strain"
    if reactions:
        return "reactions (recorded on the TS path)"
    return None


class SparseAlpha2(SparseStepper):
    """TSALPHA2 on M q'' + C q' + K q = f with constant operators, on the system's PETSc
    objects: the state X, V, A (local arrays wrapped as Vecs), one LU per step matrix
    (the run's, and the restart's two half steps), the step's mass products kept for the
    next residual and the energies (node-block form) or formed when asked (else)."""

    name = "alpha2"
    #: the form stepped and the scheme, as the log and the errors name them
    formulation, scheme = "second-order", "linear alpha2"

    names = ("X", "V", "A", "MX", "MV", "MA", "MdX", "KX", "F", "dX", "w", "w2", "w3")
    mass_columns = 4

    def __init__(self, system, t0: float, radius: Optional[float], small: bool,
                 opts: Optional[SolverOptions] = None):
        super().__init__(system, t0, small, opts)
        self.params = alpha2_parameters(radius)
        self.restart = alpha2_restart_step()
        self.started = False
        self._mass_since = 0  # steps since M X, M V, M A were formed by a product

    # --- state --------------------------------------------------------------------------
    def initial(self, q0: PETSc.Vec, v0: PETSc.Vec, p0=None) -> None:
        """The state at t0 (``p0``: Hamilton's form's, not this form's)."""
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
        self.mass([a["X"], a["V"], a["A"], last[0]], [a["MX"], a["MV"], a["MA"], last[1]])

    def _stiffness(self, measure: bool = True) -> None:
        """K_s X by a product (with ``measure``, after the first, its drift from the
        recursion measured)."""
        a, v = self.a, self.vec
        measure = measure and self.started
        if measure:
            a["w"][:] = a["KX"]
        self.Ks.mult(v["X"], v["KX"])
        if measure:
            drift, self.refresh = refresh_interval(self.comm, a["w"], a["KX"], self.f2,
                                                   self.refresh)
            self.drift = max(self.drift, drift)
        self._since = 0

    # --- the step -----------------------------------------------------------------------
    def _solve(self, s, sv: float, sa: float) -> None:
        def fill(J):
            s.K.copy(J, structure=SAME)
            J.axpy(sv, s.C, structure=SAME)
            J.axpy(sa, s.M, structure=SAME)
        self._solve_keyed((s.version, sv, sa), fill)  # h as step_size took it

    @staticmethod
    def _stage_values(V, A, h: float, params, out_v, out_a) -> None:
        """out_v, out_a = V_a, A_a, the stage's velocity and acceleration before the solve
        (the predictor A_1 = -V/(h b) + c_A A, V_1 = V + h (1 - g) A + h g A_1, weighted by
        alpha_f, alpha_m), of the state or of its image under M (local arrays)."""
        am, af, g, b = params
        cA = -(1.0 - 2.0 * b) / (2.0 * b)
        np.multiply(A, 1.0 - am + am * cA, out=out_a)
        out_a -= (am / (h * b)) * V
        np.multiply(V, 1.0 - af * g / b, out=out_v)
        out_v += (af * h * ((1.0 - g) + g * cA)) * A

    @staticmethod
    def _advance(V, A, dX, h: float, params, w) -> None:
        """V, A to the step's end from the solve's dX (in place), of the state or of its
        image under M: A_1 = c_A A - (dX + h V)/(h^2 b), V_1 = V + h (1 - g) A + h g A_1;
        ``w`` a work array."""
        am, af, g, b = params
        cA = -(1.0 - 2.0 * b) / (2.0 * b)
        np.multiply(V, h, out=w)
        w += dX
        V += (h * ((1.0 - g) + g * cA)) * A
        V -= (g / (h * b)) * w
        A *= cA
        A -= w / (h * h * b)

    def _stage(self, t: float, h: float, params, zero_a: bool) -> None:
        """One stage from the state in ``a`` (A taken as zero with ``zero_a``) to t + h."""
        am, af, g, b = params
        a = self.a
        if zero_a:
            a["A"][:] = 0.0
        s = self.record(t + af * h)
        sv, sa = g / (h * b), am / (af * h * h * b)
        F = a["F"]
        if self.segs is not None:
            if zero_a:
                a["MA"][:] = 0.0
            self._stage_values(a["MV"], a["MA"], h, params, a["w"], a["w2"])
            f = s.f.getArray(readonly=True)
            self.f2 = float(f @ f)
            np.add(a["w2"], a["KX"], out=F)
            F -= f
            blocks_into(self.segs, a["w"], F, 2, add=True)
            blocks_into(self.segs, a["MX"], F, 3, add=True)
        else:
            self._stage_values(a["V"], a["A"], h, params, a["w"], a["w2"])
            second_order_residual(s, self.vec["X"], self.vec["w"], self.vec["w2"],
                                  self.vec["F"], self.vec["dX"])
        F /= af
        self._solve(s, sv, sa)
        dX = a["dX"]
        a["X"] -= dX
        self._advance(a["V"], a["A"], dX, h, params, a["w"])
        if self.segs is None:
            return
        MdX = a["MdX"]
        self._mass_since += 1
        if self._mass_since >= MAX_REFRESH:  # the round-off of the recursion below
            self._products()
        else:  # M X, M V, M A follow the step's relations from M dX (one product)
            self.mass([dX], [MdX])
            a["MX"] -= MdX
            self._advance(a["MV"], a["MA"], MdX, h, params, a["w"])
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
        :meth:`~dolfinx_mbs.integrate.sparse.stepper.SparseStepper.step_size` takes it)."""
        h = self.step_size(h)
        if not self.started:  # TSAlpha_Restart: A0 from two backward-Euler half steps
            be = BACKWARD_EULER
            a = self.a
            X0, V0 = a["X"].copy(), a["V"].copy()
            keep = {k: a[k].copy() for k in ("MX", "MV", "MA", "KX")} if self.segs else {}
            self._stage(t, 0.5 * h, be, True)
            V1 = a["V"].copy()
            self._stage(t + 0.5 * h, 0.5 * h, be, True)
            V2 = a["V"]
            A0 = (-3.0 * V0 + 4.0 * V1 - V2) / (self.restart * h)
            a["X"][:], a["V"][:], a["A"][:] = X0, V0, A0
            for k, x in keep.items():
                a[k][:] = x
            if self.segs is not None:
                self._products(dX=False)  # M A0 (M X0, M V0 again)
            self.started = True
        self._stage(t, h, self.params, False)

    # --- what the observers ask of a form -------------------------------------------------
    mass_velocity = None

    def state(self, t: float, need_v: bool = True):
        return self.vec["X"], self.vec["V"]

    def energy_products(self, s, q, v, Mv=None) -> tuple:
        """(M v, K_el q, K_pot q) of the stepped state: from the kept products in the
        node-block form, by products else."""
        a, vec = self.a, self.vec
        if self.segs is None:
            s.M.mult(v, vec["MV"])
            s.Kel.mult(q, vec["w"])
            s.Kpot.mult(q, vec["w2"])
            return vec["MV"], vec["w"], vec["w2"]
        ks = vec["KX"]
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


def run(system, t0: float, times, initial, radius, make_observers, prefix: str, options,
        scheme=SparseAlpha2):
    """Step ``system`` through ``times`` (after ``t0``) on the linear path with the observers
    from ``make_observers(label, n_steps)``; ``initial``: (u0, v0, p0) as the user gave them;
    ``scheme``: the class of the form's steps (:class:`SparseAlpha2`, or Hamilton's
    :class:`dolfinx_mbs.integrate.sparse.midpoint.SparseMidpoint`). Returns (times, observers, scheme
    name, steps)."""
    small = small_lu(system, prefix, options)
    opts = SolverOptions(prefix, {}, {k: v for k, v in (options or {}).items()
                                      if k.startswith(SOLVER_OPTIONS)})
    sch = scheme(system, t0, radius, small, opts)
    try:
        u0, v0 = (reduced_initial(system, x, n) for x, n in zip(initial[:2], ("u0", "v0")))
        p0 = None if initial[2] is None else reduced_initial(system, initial[2], "p0")
        if len(times):
            sch.use_series(times[0])
        sch.initial(u0, v0, p0)
        label = f"{sch.formulation} ({sch.scheme})"
        watch = make_observers(label, len(times))
        log.info("integrate: linear path, %s, %d unknowns, %s, loads %s", label,
                 system.n_reduced,
                 "node-block mass products" if sch.segs is not None else "full products",
                 "as a sum of known vectors" if sch.series is not None else "assembled")
        set_u = any(o.needs_u for o in watch.values())
        full = system.space.create_vec()
        funcs = [b.u for b in system.bodies]
        out_t = [t0] + list(times)
        t = t0
        try:
            for index, t in enumerate(out_t):
                if index:
                    sch.step(out_t[index - 1], t - out_t[index - 1])
                q, v = sch.state(t)
                step = obs.Step(index=index, t=t, q=q, v=v, u=full, form=sch)
                obs.notify(watch, step, system, full, funcs, set_u=set_u)
            if not set_u:
                system.expand(q, out=full)
                system.space.scatter(full, funcs)
        except FloatingPointError as e:
            msg = watch["finite"].failure or str(e)
            raise RuntimeError(f"time integration failed ({sch.formulation}, {sch.scheme}) "
                               f"at t={t:g}: {msg}") from None
        finally:
            for o in watch.values():
                o.close()
            full.destroy()
        log.info("integrate: linear path: %d factorizations, K_s X recursion drift %.1e "
                 "(product every %d steps at the end)", sch.factorizations, sch.drift,
                 sch.refresh)
    finally:
        sch.destroy()
    return out_t, watch, sch.name, len(times)


#: the options (under the run's prefix) the path reads: its step solver's
SOLVER_OPTIONS = ("ksp_", "pc_", "mat_")
