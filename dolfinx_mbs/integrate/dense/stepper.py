"""The dense backend's :class:`~dolfinx_mbs.integrate.stepper.Stepper` s: small systems
stepped in dense form, replicated on every rank.

* :class:`DenseStepper` (``stepper="dense"``) steps with the TS path's own schemes
  (:mod:`dolfinx_mbs.integrate.dense.operators`: the same results up to round-off, without the
  per-step cost of PETSc TS and its callbacks);
* :class:`ExactStepper` (``stepper="exact"``) propagates a system whose frame state is constant
  in time by matrix exponentials (:mod:`dolfinx_mbs.integrate.dense.exact`): exact for loads in
  the span of polynomials and the sinusoids of ``load_frequencies``;
* :class:`BatchStepper` (``stepper="dense"`` where frames change in time and the operators are
  combinations of constant reduced matrices, :mod:`dolfinx_mbs.integrate.dense.varying`) forms a
  whole run's steps in batch (:mod:`dolfinx_mbs.integrate.dense.batch`).

The observers are those of the TS path, but for two that read the reduced state directly:
:class:`DenseEnergies` (the energies from the dense operators) and :class:`ProbeMatrix` (the
probes as a matrix applied to q, found once by expanding the unit vectors; probes read the
bodies' fields where the constraints prescribe motion). Where the loads need no assembly
(fitted, or combined from unit loads) and every observer can see a whole run at once, the
observers are given the run after all its steps are taken (:meth:`_DenseStepper.march`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, List, Mapping, Protocol, Sequence, Tuple, Type, cast

import numpy as np

from dolfinx_mbs.integrate import observers as obs
from dolfinx_mbs.integrate.dense.batch import WholeRun
from dolfinx_mbs.integrate.dense.exact import Exact, LoadBasis, LoadFit
from dolfinx_mbs.integrate.dense.operators import SCHEMES, DenseOperators, gather_vector
from dolfinx_mbs.integrate.dense.varying import VaryingOperators
from dolfinx_mbs.integrate.dense.varying import applies as varying_applies
from dolfinx_mbs.integrate.motion_range import RotationRange
from dolfinx_mbs.integrate.stability import Stability
from dolfinx_mbs.integrate.stepper import (
    Needs,
    PythonLoop,
    RunSpec,
    State,
    steps_in_python,
    ts_only,
)
from dolfinx_mbs.io.output import Probes, probe_columns

if TYPE_CHECKING:
    from petsc4py import PETSc

    from dolfinx_mbs.integrate.config import RunSystem
    from dolfinx_mbs.integrate.dense.operators import Alpha2, CrankNicolson, Midpoint, Ops
    from dolfinx_mbs.integrate.stepper import Boundary
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["DenseStepper", "ExactStepper", "BatchStepper", "DenseEnergies", "ProbeMatrix"]

log = logging.getLogger(__name__)


class DenseEnergies(obs.Energies):
    """:class:`~dolfinx_mbs.integrate.observers.Energies` from the dense operators of the step
    (``Step.dense``), with no product of the system's matrices."""

    whole_run = True
    reads_vectors = False

    def observe(self, step: obs.Step) -> List[float]:
        """Record the energies of the step from its dense state and operators.

        Args:
            step: the step (its ``dense`` state and operators read).

        Returns:
            The CSV columns of the energies.
        """
        assert step.dense is not None  # (the dense path's steps)
        q, v, ops = step.dense
        o = ops.at(step.t)
        kin = 0.5 * float(v @ (o.M @ v))
        pot = 0.5 * float(q @ (o.Kpot @ q))
        return self.record(step.t, kin, 0.5 * float(q @ (o.Kel @ q)), pot,
                           kin + pot - float(q @ o.f), float(v @ o.f))

    def observe_all(self, T: np.ndarray, Q: np.ndarray, V: np.ndarray, F: np.ndarray,
                    o: Ops) -> None:
        """The energies of a whole run at once.

        Args:
            T: the times (N,).
            Q: the reduced displacements (N, n), rows.
            V: the reduced velocities (N, n).
            F: the loads (N, n).
            o: the operators, constant (n, n) or one per time (N, n, n).
        """
        def quad(X: np.ndarray, A: np.ndarray) -> np.ndarray:
            return cast(np.ndarray, 0.5 * (np.einsum("ij,ij->i", X, X @ A.T) if A.ndim == 2
                                           else np.einsum("ki,kij,kj->k", X, A, X)))
        assert o.Kpot is not None  # (formed where the energies are observed)
        kin, ela, pot = quad(V, o.M), quad(Q, o.Kel), quad(Q, o.Kpot)
        jac = kin + pot - np.einsum("ij,ij->i", Q, F)
        power = np.einsum("ij,ij->i", V, F)
        self.record_all(T, kin, ela, pot, jac, power)


class ProbeMatrix(obs.ProbeHistory):
    """The probes as P q: P found once, by expanding each unit vector of the reduced
    coordinates and evaluating the probes (exact: the expansion A q is linear). For systems
    without prescribed motion (a0 = 0). The probes' history as
    :class:`~dolfinx_mbs.integrate.observers.ProbeHistory` keeps it, without the bodies'
    displacement.

    Args:
        system: the run's typed system.
        points: the probes (points of the first body, or (body, point) pairs).
    """

    needs_u = False
    whole_run = True

    def __init__(self, system: SecondOrderSystem, points: Sequence) -> None:
        self.probes = Probes(system.bodies, list(points))
        self.columns = probe_columns(self.probes.n, self.probes.dim)
        self.values: List[np.ndarray] = []
        q, full = system.create_reduced_vec(), system.space.create_vec()
        funcs = [b.u for b in system.bodies]
        r0, r1 = q.getOwnershipRange()
        cols = []
        for i in range(system.n_reduced):
            q.zeroEntries()
            if r0 <= i < r1:
                q.setValue(i, 1.0)
            q.assemble()
            system.expand(q, out=full, homogeneous=True)
            system.space.scatter(full, funcs)
            cols.append(self.probes.evaluate().reshape(-1))
        self.P = np.array(cols).T

    def observe(self, step: obs.Step) -> List[float]:
        """Record the probes' values of the step: one product with the probe matrix.

        Args:
            step: the step (its dense state read).

        Returns:
            The CSV columns of the probes.
        """
        assert step.dense is not None  # (the dense path's steps)
        pv = (self.P @ step.dense[0]).reshape(self.probes.n, self.probes.dim)
        self.values.append(pv)
        return cast(List[float], pv.reshape(-1).tolist())

    def observe_all(self, Q: np.ndarray) -> None:
        """The probes of all the states of a run.

        Args:
            Q: the reduced displacements, rows.
        """
        self.values.extend((Q @ self.P.T).reshape(len(Q), self.probes.n, self.probes.dim))


class DenseScheme(Protocol):
    """What the dense steppers read of their scheme.

    The dense path's schemes (those of :mod:`dolfinx_mbs.integrate.dense.operators`,
    :class:`~dolfinx_mbs.integrate.dense.exact.Exact`,
    :class:`~dolfinx_mbs.integrate.dense.batch.WholeRun`): its name, whether its state holds
    the momentum, its initial state, its steps and its state as arrays.
    """

    name: str
    momentum: bool

    def initial(self, t0: float, q0: np.ndarray, v0: np.ndarray,
                p0: np.ndarray | None = None) -> None:
        """Start at ``t0``.

        Args:
            t0: the start time.
            q0: the reduced coordinates.
            v0: their rates.
            p0: Hamilton's momentum, which replaces ``v0`` in Hamilton's form.
        """

    def step(self, t: float, h: float) -> None:
        """Take the step from ``t`` to ``t + h``.

        Args:
            t: the time reached.
            h: the step.
        """

    def state(self, t: float, need_v: bool = True) -> Tuple[np.ndarray, np.ndarray]:
        """The state at the time just reached.

        Args:
            t: that time.
            need_v: whether the rates are wanted (a scheme may skip forming them).

        Returns:
            ``(q, v)``.
        """

    def raw(self) -> Tuple[np.ndarray, np.ndarray]:
        """The scheme's own state: (q, v), or (q, p) in Hamilton's form."""


class _DenseStepper(PythonLoop):
    """What the dense steppers share: the scheme (``stepped``) on dense operators
    (``ops``), the state as arrays and as the run's PETSc vectors, the dense observers, the
    whole run given to observers that can see it at once.

    Args:
        system: the run's typed system.
        run: the run (:class:`~dolfinx_mbs.integrate.stepper.RunSpec`).
    """

    path = "dense"
    energies_observer: Type[obs.Energies] | None = DenseEnergies
    #: the operators (set by each stepper)
    ops: DenseOperators | VaryingOperators
    #: the scheme on them (set by each stepper)
    stepped: DenseScheme
    scheme: str
    method: str
    #: the operators change at every step, combined from stacks (a whole run's steps formed
    #: at once)
    varying = False

    @staticmethod
    def applies(system: RunSystem, run: RunSpec) -> str | None:
        """Whether the dense path can step ``run``.

        Args:
            system: the run's typed system.
            run: the run.

        Returns:
            None where the dense path can step ``run``, else why not.
        """
        return ts_only(system)

    def __init__(self, system: SecondOrderSystem, run: RunSpec) -> None:
        self.system, self.comm, self.formulation = system, system.comm, run.formulation
        system.forget()  # the frames and loads as they are now
        self.times = [run.t0] + run.times()
        self.n_steps = len(self.times) - 1
        self.basis = run.load_basis or LoadBasis()
        self.prescribed = system.reducer.prescribed
        self.probes_observer = None if self.prescribed else \
            (lambda bodies, points: ProbeMatrix(system, points))
        self.fit: LoadFit | None = None
        self.qv = system.create_reduced_vec(), system.create_reduced_vec()
        self.r0, self.r1 = self.qv[0].getOwnershipRange()
        self.q: np.ndarray | None = None
        self.v: np.ndarray | None = None
        self.needs: Needs | None = None

    def _scheme(self, ops: DenseOperators | VaryingOperators,
                radius: float | None) -> Alpha2 | CrankNicolson | Midpoint:
        """The TS path's scheme of the formulation on ``ops``."""
        cls = SCHEMES[self.formulation]
        return cast("Alpha2 | CrankNicolson | Midpoint",
                    cls(ops, radius) if self.formulation == "second-order" else cls(ops))

    def _named(self) -> None:
        self.scheme = self.stepped.name
        self.method = self.scheme if self.path == "exact" else f"dense {self.scheme}"

    def initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                p0: PETSc.Vec | None) -> None:
        """The reduced initial vectors gathered on every rank, into the scheme.

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum, or None.
        """
        self.stepped.initial(t0, gather_vector(q0, self.comm), gather_vector(v0, self.comm),
                             None if p0 is None else gather_vector(p0, self.comm))

    def step(self, t: float, h: float) -> None:
        """The scheme's step from ``t`` to ``t + h``."""
        self.stepped.step(t, h)

    def state(self, t: float, need_v: bool = True) -> State:
        """The state at ``t`` as arrays (``State.dense``), and in the PETSc vectors where
        an observer reads them."""
        if self.prescribed:  # a0(t) of the expansions
            self.system.update(t)
        self.q, self.v = self.stepped.state(t, need_v)
        if self.needs is None or self.needs.vectors:
            self._to_vecs()
        return State(self.qv[0], self.qv[1], None,
                     (self.q, self.v, self.stepped if self.varying else self.ops))

    def _to_vecs(self) -> None:
        for V, x in zip(self.qv, (self.q, self.v)):
            assert x is not None  # (a state was read)
            V.array[:] = x[self.r0:self.r1]

    def record(self, t: float) -> Ops:
        """The dense operators at ``t``.

        Args:
            t: the time (s).

        Returns:
            The operators as arrays.
        """
        return self.ops.at(t)

    def energy_products(self, s: Ops, q: PETSc.Vec, v: PETSc.Vec,
                        Mv: PETSc.Vec | None = None) -> tuple:
        """Not given: the energies are :class:`DenseEnergies`, from the dense operators."""
        raise NotImplementedError("the dense steppers' energies are DenseEnergies")

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec,
                     out: PETSc.Vec) -> PETSc.Vec:
        """Q'' from M q'' = f - C q' - K q at the state.

        Args:
            t: the time (s).
            q: the reduced displacement (the stepped state's arrays are read).
            v: the reduced velocity (likewise).
            out: the vector to fill.

        Returns:
            ``out``.
        """
        o = self.ops.at(t)
        a = np.linalg.solve(o.M, o.f - o.C @ self.v - o.K @ self.q)
        out.array[:] = a[self.r0:self.r1]
        return out

    def _trajectory(self) -> None:
        """The whole run's states before anyone sees them (:class:`BatchStepper`)."""

    def march(self, at: Boundary) -> None:
        """The whole run to the observers at once where they all can see it and the loads
        need no assembly (:meth:`_whole_run`), else the Python loop; the last state in the
        PETSc vectors."""
        self._trajectory()
        whole = self.needs.whole_run if self.needs is not None else None
        if whole is not None and (self.varying or self.fit is not None and self.fit.exact) \
                and not self.prescribed:
            self._whole_run(whole, self.times)
            self.steps, self.time = self.n_steps, self.times[-1]
            at.passed(self.times)
            self.q, self.v = self.stepped.state(self.time, False)
        else:
            super().march(at)
            self.q, self.v = self.stepped.state(self.time, False)
        self._to_vecs()

    def _whole_run(self, watch: Mapping[str, obs.Observer], times: List[float]) -> None:
        """Step through ``times`` keeping the states, then give the observers the whole run
        (the same values as step by step)."""
        N, n = len(times), self.system.n_reduced
        st = obs.named(watch, "stability", Stability)
        sch = self.stepped
        # the varying operators' scheme is BatchStepper's whole run, stepped already
        batch = sch if isinstance(sch, WholeRun) else None
        if st is not None and batch is not None and batch.outputs is not None and \
                batch.outputs.Kpot is not None and st.clear(batch.outputs.Kpot):
            st = None  # no negative stiffness at any step it would check: nothing to report
        if st is not None:  # a constant frame state: checked at the first step only, on the
            # dense operators (no factorization of the system's), else where due (the
            # observer decides)
            for k in range(N if self.varying else 1):
                st.observe(obs.Step(index=k, t=times[k], q=self.qv[0], v=self.qv[1], u=None,
                                    stepper=self, dense=(None, None,
                                                         sch if self.varying else self.ops)))
        if batch is not None:  # stepped already (_trajectory)
            assert batch.Q is not None and batch.V is not None
            Q, W = batch.Q, batch.V
        elif isinstance(sch, Exact):  # exact steps: the loads' part in one product
            Q, W = sch.trajectory(times)
        else:  # the one Python loop, the states kept
            Q, W = np.empty((N, n)), np.empty((N, n))

            def keep(k: int, t: float) -> None:
                Q[k], W[k] = sch.raw()
            self.loop(keep)
        T = np.array(times)
        o: Ops
        vec: Mapping[str, np.ndarray]
        if batch is not None:
            assert batch.outputs is not None
            o = batch.outputs
            vec = {"f": o.f}
        else:
            # the loads fitted exactly (march): no whole run otherwise
            assert self.fit is not None
            vec = self.fit.values_many(T)
            o = self.ops.at(times[0])
        V = W
        if sch.momentum:  # v = M^-1 (p - G_p q - pi_0)
            V = (W - Q @ o.Gp.T - vec["pi0"]) @ self.ops.mass_inverse().T
        en = obs.named(watch, "energy", DenseEnergies)
        fin = obs.named(watch, "finite", obs.Finite)
        if en is not None:
            en.observe_all(T, Q, V, vec["f"], o)
            bad = ~(np.isfinite(en.history["kinetic"]) & np.isfinite(en.history["elastic"]))
        else:
            bad = ~np.isfinite(Q).all(axis=1)
        if bad.any():
            k = int(np.argmax(bad))
            self.time = times[k]
            assert fin is not None  # (every run watches for a non-finite state)
            fin.failure = f"the solution is not finite at t={times[k]:g} (step {k})"
            raise FloatingPointError(fin.failure)
        pr = obs.named(watch, "probes", ProbeMatrix)
        if pr is not None:
            pr.observe_all(Q)
        ro = obs.named(watch, "rotation", RotationRange)
        if ro is not None:
            ro.observe_all(times, Q)
        pb = obs.named(watch, "progress", obs.Progress)
        if pb is not None and pb.bar is not None:
            pb.bar.update(N - 1)

    def destroy(self) -> None:
        """Destroy the PETSc vectors of the state."""
        for V in self.qv:
            V.destroy()


class DenseStepper(_DenseStepper):
    """The TS path's schemes on the operators of a system gathered densely on every rank,
    the loads fitted where they can be (see the module docstring).

    Args:
        system: the run's typed system.
        run: the run (:class:`~dolfinx_mbs.integrate.stepper.RunSpec`).
    """

    def __init__(self, system: SecondOrderSystem, run: RunSpec) -> None:
        super().__init__(system, run)
        ops = self.ops = DenseOperators(system, run.formulation, run.energy, bool(run.reactions))
        if ops.constant_frame() and 2 * self.n_steps > 2 * self.basis.m + 4:
            self.fit = ops.fit_loads(self.basis, run.t0, run.t_end)
        self.stepped = self._scheme(ops, run.spectral_radius)
        self._named()
        log.info("integrate: dense path, %s (%s), %d unknowns on every rank%s",
                 self.formulation, self.method, system.n_reduced,
                 "" if self.fit is None else f", loads fitted on {self.basis.describe()} "
                 f"(residual {self.fit.residual:.1e}"
                 f"{'' if self.fit.exact else ': sampled instead'})")


class ExactStepper(_DenseStepper):
    """A constant frame state's exact solution at the steps (matrix exponentials), whatever
    the step, for loads in the span of the run's load basis.

    Args:
        system: the run's typed system.
        run: the run (:class:`~dolfinx_mbs.integrate.stepper.RunSpec`).
    """

    path = "exact"

    @staticmethod
    def applies(system: RunSystem, run: RunSpec) -> str | None:
        """Whether the exact path can step ``run``.

        Args:
            system: the run's typed system.
            run: the run.

        Returns:
            None where the exact path can step ``run``, else why not.
        """
        return ts_only(system)  # the frame state and the loads' fit: checked when made

    def __init__(self, system: SecondOrderSystem, run: RunSpec) -> None:
        super().__init__(system, run)
        ops = self.ops = DenseOperators(system, run.formulation, run.energy, bool(run.reactions))
        if not ops.constant_frame():
            raise ValueError("stepper='exact' needs a frame state constant in time (time-"
                             "invariant frames, fixed constraints, linear strain); use "
                             "stepper='dense'")
        fit = self.fit = ops.fit_loads(self.basis, run.t0, run.t_end)
        if not fit.exact:
            raise ValueError(
                "stepper='exact': the loads over [t0, t_end] are not in the span of "
                f"{self.basis.describe()} (fit residual {fit.residual:.2e} of their "
                "variation): give load_degree= and load_frequencies= (rad/s) that span them, "
                "or use stepper='dense'")
        self.stepped = Exact(ops, run.formulation, run.t0)
        self._named()
        log.info("integrate: exact path, %s (%s), %d unknowns on every rank, loads fitted on "
                 "%s (residual %.1e)", self.formulation, self.method, system.n_reduced,
                 self.basis.describe(), fit.residual)


class BatchStepper(_DenseStepper):
    """Frames changing in time: the operators combined from reduced stacks gathered once
    (:class:`~dolfinx_mbs.integrate.dense.varying.VaryingOperators`), a whole run's steps formed
    in batch (:class:`~dolfinx_mbs.integrate.dense.batch.WholeRun`) before the observers see
    them.

    Args:
        system: the run's typed system.
        run: the run (:class:`~dolfinx_mbs.integrate.stepper.RunSpec`).
    """

    varying = True

    @staticmethod
    def applies(system: RunSystem, run: RunSpec) -> str | None:
        """Whether the batched path can step ``run``.

        Args:
            system: the run's typed system.
            run: the run.

        Returns:
            None where the operators change in time as combinations of constant reduced
            matrices (:func:`dolfinx_mbs.integrate.dense.varying.applies`), else why not.
        """
        if not steps_in_python(system):
            return ts_only(system)
        if not varying_applies(system):
            return "operators that are not combinations of constant reduced matrices"
        return None

    def __init__(self, system: SecondOrderSystem, run: RunSpec) -> None:
        super().__init__(system, run)
        ops = self.ops = VaryingOperators(system, run.formulation, run.energy,
                                          bool(run.reactions))
        self.combined = ops.check_loads(run.t0, run.t_end, self.times)
        self.batch = self.stepped = WholeRun(self._scheme(ops, run.spectral_radius), ops)
        self._named()
        log.info("integrate: dense path, %s (%s), %d unknowns on every rank, frames changing "
                 "in time: operators combined from reduced stacks, loads %s, the steps formed "
                 "in batch", self.formulation, self.method, system.n_reduced,
                 "combined from unit loads" if self.combined else "from the system at each time")

    def _trajectory(self) -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            self.batch.trajectory(self.times)
