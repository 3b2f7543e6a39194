"""The sparse backend's :class:`~dolfinx_mbs.integrate.stepper.Stepper`: what its schemes
share (:class:`~dolfinx_mbs.integrate.sparse.alpha2.SparseAlpha2` and
:class:`~dolfinx_mbs.integrate.sparse.midpoint.SparseMidpoint`): :class:`SparseStepper` (when
the path applies, the state's arrays, the step matrix and its solver, the record at a time,
the keyed solve, the protocol's side), the node-block segments (:func:`node_segments`), the
scalar mass products of several state vectors in one pass (:class:`MassProducts`), and the
refresh interval of the recursive K_s q (:func:`refresh_interval`, :data:`DRIFT`,
:data:`MAX_REFRESH`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable, Hashable, Sequence, cast

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.integrate.sparse.load_series import LoadSeries
from dolfinx_mbs.integrate.step_solvers import cheapest_lu, small_lu
from dolfinx_mbs.integrate.stepper import PythonLoop, RunSpec, State
from dolfinx_mbs.petsc_options import SolverOptions, converged, reason_name
from dolfinx_mbs.systems.records import constant_frame

if TYPE_CHECKING:
    from mpi4py import MPI

    from dolfinx_mbs.integrate.config import RunSystem
    from dolfinx_mbs.integrate.sparse.load_series import SeriesRecord
    from dolfinx_mbs.integrate.stepper import Boundary
    from dolfinx_mbs.systems.records import InertiaBlocks, SecondOrder
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["node_segments", "refresh_interval", "MassProducts", "SparseStepper", "DRIFT",
           "MAX_REFRESH", "SAME_STEP", "SOLVER_OPTIONS"]

log = logging.getLogger(__name__)

#: the options (under the run's prefix) the path reads: its step solver's
SOLVER_OPTIONS = ("ksp_", "pc_", "mat_")

#: largest drift of the recursive K_s X tolerated between two products, relative to the
#: larger of |K_s X| and |f| (one step of the recursion errs by ~1e-11 at dt = 1e-4 on a steel
#: bar; the error grows as 1 / dt^2: below some dt every step takes its product)
DRIFT = 1e-10
#: longest interval (steps) between two products K_s X
MAX_REFRESH = 256
#: step sizes this close (relative) are one: the differences of a run's output times t_k =
#: t0 + k dt scatter by ~eps t / dt (1e-12 and more at t / dt = 1e4), which would make a new
#: step matrix and its factorization at many steps of a long run
SAME_STEP = 1e-8


def node_segments(kr: InertiaBlocks | None, n_local: int) -> list | None:
    """The node-block segments of ``kr`` where they serve.

    Args:
        kr: the record's node blocks (:class:`~dolfinx_mbs.systems.records.InertiaBlocks`),
            or None.
        n_local: the reduced rows this rank owns.

    Returns:
        The segments when they cover the local rows with one gdim and no
        stiffness-proportional damping, else None.
    """
    if kr is None or any(b for *_, b in kr.blocks):
        return None
    segs = kr.blocks
    if len({g for _, g, *_ in segs}) != 1 or sum(hi - lo for (lo, hi), *_ in segs) != n_local:
        return None
    return segs


def refresh_interval(comm: MPI.Comm, kept: np.ndarray, formed: np.ndarray, f2: float,
                     refresh: int) -> tuple:
    """The drift of a product kept by a recursion, and the steps to the next product formed.

    Args:
        comm: the system's communicator.
        kept: the product kept by the recursion (local array).
        formed: the same product formed (local array).
        f2: |f|^2 on this rank.
        refresh: the interval (steps) so far.

    Returns:
        (drift, interval): the drift relative to the larger of |formed| and |f| over the
        ranks; ``refresh`` halved above :data:`DRIFT`, doubled (up to :data:`MAX_REFRESH`)
        below a tenth of it.
    """
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
    k * gdim dense columns; else M times k dense columns (``k``: at most; the columns of each
    count made on first use).

    Args:
        M: the mass matrix.
        segs: the node-block segments, or None.
        k: the most columns of one pass.
    """

    def __init__(self, M: PETSc.Mat, segs: list | None, k: int) -> None:
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
        self._BC: dict = {}  # columns: [dense columns, their product or None]

    def _columns(self, k: int) -> list:
        bc = self._BC.get(k)
        if bc is None:
            n_loc, n = self.A.getLocalSize()[0], self.A.getSize()[0]
            B = PETSc.Mat().createDense(((n_loc, n), (k * self.g, k * self.g)),
                                        comm=self.A.getComm())
            B.setUp()
            B.assemble()
            bc = self._BC[k] = [B, None]
        return bc

    def __call__(self, xs: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        """outs[j][:] = M xs[j] (local arrays; at most ``k`` of them)."""
        g, bc = self.g, self._columns(len(xs))
        B = bc[0].getDenseArray()
        for j, x in enumerate(xs):
            B[:, j * g:(j + 1) * g] = x.reshape(-1, g)
        bc[1] = self.A.matMult(bc[0], result=bc[1])
        C = bc[1].getDenseArray(readonly=True)
        for j, out in enumerate(outs):
            out[:] = C[:, j * g:(j + 1) * g].ravel()

    def destroy(self) -> None:
        """Destroy the dense columns, their products and the scalar mass (collective)."""
        owned = [m for bc in self._BC.values() for m in bc] + \
            ([self.A] if self.g > 1 else [])  # M is the system's
        for m in owned:
            if m is not None:
                m.destroy()
        self._BC = {}


class SparseStepper(PythonLoop):
    """What the linear path's schemes share (:class:`SparseAlpha2`, and
    :class:`dolfinx_mbs.integrate.sparse.midpoint.SparseMidpoint`): the state's local arrays ``a``
    (named
    by :attr:`names`) wrapped as Vecs ``vec``, the node-block segments and the scalar mass
    products (:attr:`mass_columns` columns), the step matrix J and its solver (the run's
    ``ksp_``/``pc_``/``mat_`` options; GAMG with the rigid-body modes), the record at a time
    (:meth:`record`), the solve with J set up anew only when its key changed
    (:meth:`_solve_keyed`), and the bookkeeping of the K_s recursion's refresh.

    Args:
        system: the run's typed system (one the path :meth:`applies` to).
        run: the run (:class:`~dolfinx_mbs.integrate.stepper.RunSpec`).
    """

    path = "linear"
    #: the scheme's PETSc TS name (``Result.ts_type``)
    name: str
    names: tuple = ()
    mass_columns = 1
    #: the record's load vectors that change in time (:class:`LoadSeries`)
    load_names: tuple = ("f",)
    #: the form stepped, and the scheme as the log and the errors name it
    formulation, method = "", ""
    mass_velocity = None

    @staticmethod
    def applies(system: RunSystem, run: RunSpec) -> str | None:
        """Whether the linear path can step this run.

        It steps the second-order or Hamilton form of a linear system with a constant frame
        state, no multipliers or velocity rows, no reactions (they need the equations'
        acceleration).

        Args:
            system: the run's typed system.
            run: the run.

        Returns:
            None when the linear path can step this run, else why not (words for the log or
            an error).
        """
        if run.formulation not in ("second-order", "hamiltonian"):
            return (f"the {run.formulation} form (the linear path steps the second-order and "
                    "hamiltonian forms)")
        if system.has_multipliers or hasattr(system, "basis"):
            return "multipliers or velocity constraints"
        # multipliers and velocity rows were refused above: a second-order system
        if not constant_frame(cast("SecondOrderSystem", system)):
            return "a frame state or constraints changing in time, or nonlinear strain"
        if run.reactions:
            return "reactions (recorded on the TS path)"
        return None

    def __init__(self, system: SecondOrderSystem, run: RunSpec) -> None:
        t0 = run.t0
        small = small_lu(system, run.prefix, run.options)
        self.system, self.comm, self.t0, self.small = system, system.comm, t0, small
        self.opts = SolverOptions(run.prefix, {}, {k: v for k, v in (run.options or {}).items()
                                                   if k.startswith(SOLVER_OPTIONS)})
        s = system.at(t0)
        self.version = s.version
        n_local = s.M.getLocalSize()[0]
        self.segs = node_segments(s.blocks, n_local)
        self.a = {k: np.zeros(n_local) for k in self.names}
        self.vec = {k: PETSc.Vec().createWithArray(self.a[k], comm=self.comm)
                    for k in self.names}
        self.mass = MassProducts(s.M, self.segs, self.mass_columns) \
            if self.segs is not None else None
        self.Ks = s.blocks.Ks if self.segs is not None and s.blocks is not None else None
        self.J = s.M.duplicate()
        self.ksp = PETSc.KSP().create(self.comm)
        cheapest_lu(self.ksp, small)
        self.ksp.setOptionsPrefix(self.opts.prefix)
        self.opts.set_from_options(self.ksp)
        #: the step solve is iterative (e.g. GAMG): K_s q by a product at every step
        self.iterative = self.ksp.getType() != PETSc.KSP.Type.PREONLY
        if self.ksp.getPC().getType() == PETSc.PC.Type.GAMG and \
                hasattr(system, "near_nullspace"):
            self.J.setNearNullSpace(system.near_nullspace())
        self._key: Hashable = None
        #: steps between two products K_s q (node-block form), adapted to the drift
        self.refresh = 16
        self._since = 0
        self.f2 = 0.0  # |load|^2 of the last step (local)
        #: the largest relative drift of the recursive K_s q found at a product
        self.drift = 0.0
        #: factorizations made
        self.factorizations = 0
        #: the load vectors as a sum of known vectors (:meth:`use_series`), or None
        self.series: LoadSeries | None = None
        self._h: float | None = None  # the step size of the steps before
        self.times = [t0] + run.times()
        self.n_steps = len(self.times) - 1
        self.scheme = self.name
        try:
            self._started()
        except BaseException:
            self.destroy()
            raise

    # the node-block form's products, where the segments are in use (made with them)
    @property
    def _node_mass(self) -> MassProducts:
        if self.mass is None:
            raise RuntimeError("linear path: no node-block mass products (no segments)")
        return self.mass

    @property
    def _node_Ks(self) -> PETSc.Mat:
        if self.Ks is None:
            raise RuntimeError("linear path: no node-block K_s (no segments)")
        return self.Ks

    def _started(self) -> None:
        """The loads as a series where they can be, and the log's words on the run (after
        the scheme's own set-up)."""
        if len(self.times) > 1:
            self.use_series(self.times[1])
        log.info("integrate: linear path, %s (%s), %d unknowns, %s, loads %s",
                 self.formulation, self.method, self.system.n_reduced,
                 "node-block mass products" if self.segs is not None else "full products",
                 "as a sum of known vectors" if self.series is not None else "assembled")

    def march(self, at: Boundary) -> None:
        """The Python loop (:class:`~dolfinx_mbs.integrate.stepper.PythonLoop`), then the
        log's words on the factorizations and the K_s recursion.

        Args:
            at: the driver's side of the seam.
        """
        super().march(at)
        log.info("integrate: linear path: %d factorizations, K_s X recursion drift %.1e "
                 "(product every %d steps at the end)", self.factorizations, self.drift,
                 self.refresh)

    def state(self, t: float, need_v: bool = True) -> State:
        """The stepped state (q, v).

        Args:
            t: the boundary's time (s).
            need_v: whether the velocity is read (it is at hand).

        Returns:
            The state (the stepper's vectors).
        """
        return State(self.vec["X"], self.vec["V"])

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec,
                     out: PETSc.Vec) -> PETSc.Vec:
        """Refused: the reactions are recorded on the TS path (:meth:`applies`).

        Args:
            t: the time (s).
            q: the reduced displacement.
            v: the reduced velocity.
            out: the vector it would fill.

        Raises:
            ValueError: always.
        """
        raise ValueError("the linear path records no reactions (stepper='ts')")

    def step_size(self, h: float) -> float:
        """The size a step of ``h`` is made with.

        Args:
            h: the step asked (s).

        Returns:
            ``h``, or the size of the steps before where ``h`` differs from it by the time
            grid's round-off alone (:data:`SAME_STEP`): the step matrix is then kept.
        """
        last = self._h
        if last is not None and abs(h - last) <= SAME_STEP * last:
            return last
        self._h = h
        return h

    def use_series(self, t1: float) -> bool:
        """Take the record's load vectors at later times from a
        :class:`~dolfinx_mbs.integrate.sparse.load_series.LoadSeries` where the system's loads
        can be written so (collective).

        Args:
            t1: the time the series is checked at (s).

        Returns:
            True if so.
        """
        self.series = LoadSeries.make(self.system, self.t0, t1, self.load_names)
        return self.series is not None

    def _stiffness(self, measure: bool = True) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def record(self, t: float) -> SecondOrder | SeriesRecord:
        """The record at ``t``: from the load series (:meth:`use_series`) where there is one,
        else the system's; where its matrices changed (a prestress that follows gravity
        turning in the frame), the node-block form taken anew and K_s q formed again.

        Args:
            t: the time (s).

        Returns:
            The record.

        Raises:
            RuntimeError: the node-block form was lost (the run needs the TS path).
        """
        if self.series is not None:
            return self.series.record(t)
        s = self.system.at(t)
        if s.version != self.version:
            self.version = s.version
            if self.segs is not None:
                self.segs = node_segments(s.blocks, len(self.a["X"]))
                if self.segs is None:
                    raise RuntimeError("linear path: the node-block form was lost at t="
                                       f"{t:g}; use stepper='ts'")
                assert s.blocks is not None  # (segments come from the node blocks)
                self.Ks = s.blocks.Ks
                self._stiffness(measure=False)
        return s

    def _solve_keyed(self, key: Hashable, fill: Callable[[PETSc.Mat], None]) -> None:
        """Solve dX = J^-1 F, J made by ``fill(J)`` and set up (factorized) only when ``key`` (the
        operators' version and the step's shifts) changed."""
        if key != self._key:
            fill(self.J)
            self.ksp.setOperators(self.J)
            self.opts.set_up(self.ksp)
            self._key = key
            self.factorizations += 1
        self.ksp.solve(self.vec["F"], self.vec["dX"])
        if not converged(self.ksp) or not np.isfinite(self.a["dX"]).all():
            reason = reason_name(PETSc.KSP.ConvergedReason, self.ksp.getConvergedReason())
            raise FloatingPointError(f"the step's linear solve failed ({reason})")

    def destroy(self) -> None:
        """Destroy the vectors, the solver, the step matrix, the mass products and the load
        series' records."""
        if self.series is not None:
            self.series.destroy()
        for x in self.vec.values():
            x.destroy()
        self.ksp.destroy()
        self.J.destroy()
        if self.mass is not None:
            self.mass.destroy()
