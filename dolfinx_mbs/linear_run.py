"""The linear path of :func:`dolfinx_mbs.integrate.integrate`: a system whose frame state is
constant in time, stepped in the second-order form by PETSc's TSALPHA2 scheme written on the
sparse reduced operators, without PETSc TS and its callbacks.

With the operators constant, a step is one solve with a step matrix factorized once for the
run (twice more for the restart's half steps) and the load vector at the step's time. The step
solver reads the run's ``ksp_``, ``pc_`` and ``mat_`` options (:data:`SOLVER_OPTIONS`, under
the run's prefix): with ``-mbs_pc_type gamg`` it is preconditioned by multigrid with the
bodies' rigid-body modes as near null space, set up once for the run. In the
node-block form (:class:`dolfinx_mbs.system_records.InertiaBlocks`: constraints that fix whole
nodes, no stiffness-proportional damping) every inertia term of the residual is the mass times
a small matrix per node, and the mass is the scalar mass times the identity per node:

* :class:`MassProducts` forms M X, M V, M A and M dX of a step's new state in one product of
  the scalar mass (a ninth of M's entries in 3D) with the state's node components as columns;
  the next step's residual M A_a + C V_a + K X_0 is then combinations of them and K_s X_0;
* K_s X, the only stiffness product, follows the step relation
  K_s dX = F - (s_a + s_v W_C + W_K) M dX (J dX = F, J = K + s_v C + s_a M) instead of a
  product, and is formed by a product again every :attr:`SparseAlpha2.refresh` steps, that
  interval halved when the recursion drifted by more than :data:`DRIFT` of K_s X, doubled
  (up to :data:`MAX_REFRESH`) below a tenth of it; with an iterative step solve, whose
  residual the relation would accumulate, by a product at every step;
* the energies read M V, M X and K_s X (no product of their own).

Without the node-block form the residual takes its three products
(:func:`dolfinx_mbs.formulations.second_order_residual`) and the energies theirs. The steps
are TSALPHA2's up to round-off (its restart by two backward-Euler half steps included), so
the TS path is this path's reference. :func:`applies` says when the path can take a run.
"""

from __future__ import annotations

import logging
from typing import Optional

import numpy as np
from petsc4py import PETSc

from . import observers as obs
from .compat import alpha2_restart_step
from .dense import BACKWARD_EULER, alpha2_parameters, constant_frame
from .formulations import cheapest_lu, reduced_initial, second_order_residual, small_lu
from .petsc_options import SolverOptions, converged, reason_name
from .state_products import blocks_into

__all__ = ["applies", "node_segments", "refresh_interval", "MassProducts", "SparseAlpha2",
           "run", "DRIFT", "MAX_REFRESH", "SOLVER_OPTIONS"]

log = logging.getLogger(__name__)

#: largest drift of the recursive K_s X tolerated between two products, relative to the
#: larger of |K_s X| and |f| (one step of the recursion errs by ~1e-11 at dt = 1e-4 on a steel
#: bar; the error grows as 1 / dt^2: below some dt every step takes its product)
DRIFT = 1e-10
#: longest interval (steps) between two products K_s X
MAX_REFRESH = 256
SAME = PETSc.Mat.Structure.SAME_NONZERO_PATTERN
#: the options (under the run's prefix) the path reads: its step solver's
SOLVER_OPTIONS = ("ksp_", "pc_", "mat_")


def applies(system, formulation: str, reactions) -> Optional[str]:
    """None when the linear path can step this run, else why not (words for the log or an
    error): the second-order or Hamilton form (:mod:`dolfinx_mbs.hamilton_linear`) of a
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


def node_segments(kr, n_local: int):
    """The node-block segments of ``kr`` (:class:`~dolfinx_mbs.system_records.InertiaBlocks`)
    when they cover the local rows with one gdim and no stiffness-proportional damping, else
    None."""
    if kr is None or any(b for *_, b in kr.blocks):
        return None
    segs = kr.blocks
    if len({g for _, g, *_ in segs}) != 1 or sum(hi - lo for (lo, hi), *_ in segs) != n_local:
        return None
    return segs


def refresh_interval(comm, kept: np.ndarray, formed: np.ndarray, f2: float, refresh: int
                     ) -> tuple:
    """(drift, interval): the drift of a product kept by a recursion (``kept``) from the same
    product formed (``formed``; local arrays), relative to the larger of |formed| and |f|
    (``f2``: |f|^2 on this rank), over the ranks; and the interval (steps) to the next
    product: ``refresh`` halved above :data:`DRIFT`, doubled (up to :data:`MAX_REFRESH`)
    below a tenth of it."""
    d = kept - formed
    sums = comm.allreduce(np.array([d @ d, formed @ formed, f2]))
    ref = np.sqrt(max(sums[1], sums[2]))
    drift = float(np.sqrt(sums[0]) / ref) if ref > 0.0 else 0.0
    if drift > DRIFT:
        refresh = max(1, refresh // 2)
    elif drift < 0.1 * DRIFT:
        refresh = min(MAX_REFRESH, 2 * refresh)
    return drift, refresh


class MassProducts:
    """M x_1, ..., M x_k in one pass: with ``segs`` (uniform node blocks) the scalar mass
    (M's rows and columns of each node's first component) times the nodes' components as
    k * gdim dense columns; else M times k dense columns."""

    def __init__(self, M: PETSc.Mat, segs, k: int):
        comm, r0 = M.getComm(), M.getOwnershipRange()[0]
        self.k = k
        if segs is not None:
            g = segs[0][1]
            rows = np.concatenate([np.arange(lo, hi, g) for (lo, hi), *_ in segs]) + r0
            iset = PETSc.IS().createGeneral(rows.astype(PETSc.IntType), comm=comm)
            self.A = M.createSubMatrix(iset, iset)
            iset.destroy()
        else:
            g = 1
            self.A = M
        self.g = g
        n_loc, n = self.A.getLocalSize()[0], self.A.getSize()[0]
        self.B = PETSc.Mat().createDense(((n_loc, n), (k * g, k * g)), comm=comm)
        self.B.setUp()
        self.B.assemble()
        self.C = None

    def __call__(self, xs, outs) -> None:
        """outs[j][:] = M xs[j] (local arrays)."""
        g, B = self.g, self.B.getDenseArray()
        for j, x in enumerate(xs):
            B[:, j * g:(j + 1) * g] = x.reshape(-1, g)
        self.C = self.A.matMult(self.B, result=self.C)
        C = self.C.getDenseArray(readonly=True)
        for j, out in enumerate(outs):
            out[:] = C[:, j * g:(j + 1) * g].ravel()

    def destroy(self) -> None:
        """Destroy the dense columns, their product and the scalar mass (collective)."""
        owned = [self.B, self.C] + ([self.A] if self.g > 1 else [])  # M is the system's
        for m in owned:
            if m is not None:
                m.destroy()


class SparseAlpha2:
    """TSALPHA2 on M q'' + C q' + K q = f with constant operators, on the system's PETSc
    objects: the state X, V, A (local arrays wrapped as Vecs), one LU per step matrix
    (the run's, and the restart's two half steps), the step's mass products kept for the
    next residual and the energies (node-block form) or formed when asked (else)."""

    name = "alpha2"
    #: the form stepped and the scheme, as the log and the errors name them
    formulation, scheme = "second-order", "linear alpha2"

    def __init__(self, system, t0: float, radius: Optional[float], small: bool,
                 opts: Optional[SolverOptions] = None):
        self.system, self.comm = system, system.comm
        self.opts = opts if opts is not None else SolverOptions("mbs_")
        s = system.at(t0)
        self.version = s.version
        self.params = alpha2_parameters(radius)
        self.restart = alpha2_restart_step()
        n_local = s.M.getLocalSize()[0]
        self.segs = node_segments(s.blocks, n_local)
        names = ("X", "V", "A", "MX", "MV", "MA", "MdX", "KX", "F", "dX", "w", "w2", "w3")
        self.a = {k: np.zeros(n_local) for k in names}
        self.vec = {k: PETSc.Vec().createWithArray(self.a[k], comm=self.comm) for k in names}
        self.mass = MassProducts(s.M, self.segs, 4) if self.segs is not None else None
        self.Ks = s.blocks.Ks if self.segs is not None else None
        self.J = s.M.duplicate()
        self.ksp = PETSc.KSP().create(self.comm)
        cheapest_lu(self.ksp, small)
        self.ksp.setOptionsPrefix(self.opts.prefix)
        self.opts.set_from_options(self.ksp)
        #: the step solve is iterative (e.g. GAMG): K_s X by a product at every step
        self.iterative = self.ksp.getType() != PETSc.KSP.Type.PREONLY
        if self.ksp.getPC().getType() == PETSc.PC.Type.GAMG and \
                hasattr(system, "near_nullspace"):
            self.J.setNearNullSpace(system.near_nullspace())
        self._key = None
        self.started = False
        #: steps between two products K_s X (node-block form), adapted to the drift
        self.refresh = 16
        self._since = 0
        self.f2 = 0.0  # |f|^2 of the last stage (local)
        #: the largest relative drift of the recursive K_s X found at a product
        self.drift = 0.0
        #: factorizations made
        self.factorizations = 0

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
    def _operators(self, t: float):
        """The record at ``t``; where its matrices changed (a prestress that follows gravity
        turning in the frame), the node-block form taken anew and K_s X formed again."""
        s = self.system.at(t)
        if s.version != self.version:
            self.version = s.version
            if self.segs is not None:
                self.segs = node_segments(s.blocks, len(self.a["X"]))
                if self.segs is None:
                    raise RuntimeError("linear path: the node-block form was lost at t="
                                       f"{t:g}; use stepper='ts'")
                self.Ks = s.blocks.Ks
                self._stiffness(measure=False)
        return s

    def _solve(self, s, sv: float, sa: float) -> None:
        key = (s.version, float(f"{sv:.12e}"), float(f"{sa:.12e}"))
        if key != self._key:
            s.K.copy(self.J, structure=SAME)
            self.J.axpy(sv, s.C, structure=SAME)
            self.J.axpy(sa, s.M, structure=SAME)
            self.ksp.setOperators(self.J)
            self.opts.set_up(self.ksp)
            self._key = key
            self.factorizations += 1
        self.ksp.solve(self.vec["F"], self.vec["dX"])
        if not converged(self.ksp) or not np.isfinite(self.a["dX"]).all():
            reason = reason_name(PETSc.KSP.ConvergedReason, self.ksp.getConvergedReason())
            raise FloatingPointError(f"the step's linear solve failed ({reason})")

    def _stage(self, t: float, h: float, params, zero_a: bool) -> None:
        """One stage from the state in ``a`` (A taken as zero with ``zero_a``) to t + h."""
        am, af, g, b = params
        a = self.a
        X, V, A = a["X"], a["V"], (np.zeros_like(a["A"]) if zero_a else a["A"])
        s = self._operators(t + af * h)
        sv, sa = g / (h * b), am / (af * h * h * b)
        cA = -(1.0 - 2.0 * b) / (2.0 * b)
        F = a["F"]
        if self.segs is not None:
            MA = np.zeros_like(A) if zero_a else a["MA"]
            MA1 = -a["MV"] / (h * b) + cA * MA
            MV1 = a["MV"] + h * g * ((1.0 - g) / g * MA + MA1)
            MAa, MVa = MA + am * (MA1 - MA), a["MV"] + af * (MV1 - a["MV"])
            f = s.f.getArray(readonly=True)
            self.f2 = float(f @ f)
            F[:] = MAa + a["KX"] - f
            blocks_into(self.segs, MVa, F, 2, add=True)
            blocks_into(self.segs, a["MX"], F, 3, add=True)
        else:
            A1 = -V / (h * b) + cA * A
            V1 = V + h * g * ((1.0 - g) / g * A + A1)
            a["w"][:] = V + af * (V1 - V)
            a["w2"][:] = A + am * (A1 - A)
            second_order_residual(s, self.vec["X"], self.vec["w"], self.vec["w2"],
                                  self.vec["F"], self.vec["dX"])
        F /= af
        self._solve(s, sv, sa)
        dX = a["dX"]
        A1 = (-dX - h * V) / (h * h * b) + cA * A
        a["V"][:] = V + h * g * ((1.0 - g) / g * A + A1)
        a["A"][:] = A1
        X -= dX
        if self.segs is None:
            return
        self._products()
        KdX = F - sa * a["MdX"]  # K_s dX = F - (s_a + s_v W_C + W_K) M dX
        blocks_into(self.segs, a["MdX"], KdX, 2, add=True, scale=-sv)
        blocks_into(self.segs, a["MdX"], KdX, 3, add=True, scale=-1.0)
        a["KX"] -= KdX
        self._since += 1
        if self.iterative:  # the step relation holds to the solver's tolerance only
            self._stiffness(measure=False)
        elif self._since >= self.refresh:
            self._stiffness()

    def step(self, t: float, h: float) -> None:
        """The step from t to t + h (the first one after TSALPHA2's restart)."""
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

    def destroy(self) -> None:
        for x in self.vec.values():
            x.destroy()
        self.ksp.destroy()
        self.J.destroy()
        if self.mass is not None:
            self.mass.destroy()


def run(system, t0: float, times, initial, radius, make_observers, prefix: str, options,
        scheme=SparseAlpha2):
    """Step ``system`` through ``times`` (after ``t0``) on the linear path with the observers
    from ``make_observers(label, n_steps)``; ``initial``: (u0, v0, p0) as the user gave them;
    ``scheme``: the class of the form's steps (:class:`SparseAlpha2`, or Hamilton's
    :class:`dolfinx_mbs.hamilton_linear.SparseMidpoint`). Returns (times, observers, scheme
    name, steps)."""
    small = small_lu(system, prefix, options)
    opts = SolverOptions(prefix, {}, {k: v for k, v in (options or {}).items()
                                      if k.startswith(SOLVER_OPTIONS)})
    sch = scheme(system, t0, radius, small, opts)
    try:
        u0, v0 = (reduced_initial(system, x, n) for x, n in zip(initial[:2], ("u0", "v0")))
        p0 = None if initial[2] is None else reduced_initial(system, initial[2], "p0")
        sch.initial(u0, v0, p0)
        label = f"{sch.formulation} ({sch.scheme})"
        watch = make_observers(label, len(times))
        log.info("integrate: linear path, %s, %d unknowns, %s", label, system.n_reduced,
                 "node-block mass products" if sch.segs is not None else "full products")
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
