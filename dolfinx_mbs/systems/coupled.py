"""Bodies on frames whose motion is computed: the coupled rigid-elastic equations of motion.

The unknowns are the computed frames' coordinates z and speeds w
(:mod:`dolfinx_mbs.frames.computed`) and the reduced elastic coordinates q with their rates
v = q' (docs/theory.md section 8). With u = A q, each body's *inertia residual* at the frame
state s(z, w, w') is the vector of the virtual work of its inertia and applied loads,

    e(phi) = int rho a . phi - l(phi),   a = a_O + alpha x x + omega x (omega x x)
                                              + 2 omega x u' + u'',   x = X + u,

which the operators give as e = M u'' + c_Wg u' + c_Wk x + a_O . (M t) - Q_applied (c_W the
inertia coupling int rho (W u).v of ``forms.inertia_coupling``, W_g = 2 skew(omega), W_k =
skew(omega)^2 + skew(alpha) from ``forms.frame_coupling``, M t_k = int rho e_k . v). The
equations are then

    elastic rows       A^T (e + K u + K_sigma u + D u' [+ n(u)]) = 0
    frame rows         sum over the frame's bodies of e(T_j + Om_j x x)
                       + T_j . F_rigid + Om_j . M_rigid - Q_j = 0         (one per speed j)
    kinematics         z' - N(z) w = 0,   q' - v = 0

The frame rows are the bodies' dynamic residual tested with the frame's partial velocities
T_j + Om_j x x (rigid fields, so e(.) is a dot product with their nodal values: exact in the
finite element space); the elastic and geometric stiffness and the damping are internal and do
no work on them. Rigid bodies (:class:`dolfinx_mbs.bodies.RigidBody`) add their Newton-Euler
forces, applied frame loads (:class:`FrameLoad`: motor torques, controllers) their generalized
force.

:class:`CoupledSystem` evaluates the residual and the bordered Jacobian

    [ S    B ] [dq]       S = s^2 M_r + s C_r + K_r  (the elastic block at the state, shift s),
    [ C^T  D ] [df]       B, C: the frame unknowns' columns and rows, D: their own block,

exactly: every derivative of e with respect to the frame state is a combination of products
with the constant matrices c_E of the coupling basis (``assembly.operators.coupling_basis``) and
unit loads, formed once per evaluation.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Callable, Dict, Hashable, List, Mapping, Sequence, cast

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import checks
from dolfinx_mbs.assembly.operators import combine, coupling_basis
from dolfinx_mbs.bodies.rigid import RigidBody
from dolfinx_mbs.forms.moving_frame import frame_coupling
from dolfinx_mbs.frames.base import FrameState, cross3, skew
from dolfinx_mbs.frames.computed import ComputedFrame, FrameJet
from dolfinx_mbs.petsc_options import SAME, SUBSET
from dolfinx_mbs.records import FrozenMapping, Record
from dolfinx_mbs.systems.coupled_joints import JointSet

if TYPE_CHECKING:
    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.assembly.operators import BodyOperators
    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.constraints.frame_joints import FrameJoint, Motor
    from dolfinx_mbs.constraints.maggi import MaggiReducer
    from dolfinx_mbs.systems.records import SecondOrder
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["CoupledSystem", "FrameLoad", "FrameDerivatives", "FrameView", "monitors", "Monitored",
           "check_frames"]

#: the frame-state variables the residual depends on, 3 each (local components)
STATE_VARS = ("omega", "alpha", "a_O", "g_loc")


@dataclasses.dataclass
class FrameLoad:
    """A force and torque applied to a frame, as a function of time and the frame's state.

    Attributes:
        frame: the frame (computed).
        fn: ``fn(t, s)`` -> torque: for a :class:`~dolfinx_mbs.frames.Hinge` a number (about
            its axis) or a 3-vector; otherwise a 3-vector; or, with ``wrench``, a pair
            (force, torque). ``s`` is a :class:`FrameView` (the frame's state: ``angle``,
            ``rate``, ``R``, ``r_O``, ``omega``, ``v_O``, ...).
        local: components in the frame's axes (True) or global (False).
        point: where the force acts (frame coordinates; the torque is about the origin).
        wrench: ``fn`` gives (force, torque), not a torque.
        name: label of the load in the results.
    """

    frame: ComputedFrame
    fn: Callable
    local: bool = True
    point: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    wrench: bool = False
    name: str = "torque"

    def evaluate(self, t: float, view: "FrameView", state: FrameState) -> tuple:
        """(force, moment about O) in local components; checked finite.

        Args:
            t: the time (s).
            view: the frame as the load's function sees it.
            state: the frame's state.

        Returns:
            (force, moment about O), 3-vectors.
        """
        F, M, local = self.values(t, view)
        if not local:
            F, M = state.R.T @ F, state.R.T @ M
        return F, M + cross3(self.point, F)

    def values(self, t: float, view: "FrameView") -> tuple:
        """The function's (force, moment) as it gives them, and whether their components are
        the frame's (a number about a hinge's axis is); checked finite.

        Args:
            t: the time (s).
            view: the frame as the load's function sees it.

        Returns:
            (force, moment, local).
        """
        return self.interpret(self.fn(t, view))

    def interpret(self, out: Any) -> tuple:
        """A value of the function as :meth:`values` gives it.

        Args:
            out: what the function returned.

        Returns:
            (force, moment, local).
        """
        if not self.wrench:
            F = np.zeros(3)
            M = np.asarray(out, dtype=float)
            if M.ndim == 0:
                axis = getattr(self.frame, "axis", None)
                if axis is None:
                    raise ValueError(f"load {self.name!r}: a number is a torque about a "
                                     "hinge's axis; give a 3-vector for this frame")
                if not math.isfinite(float(M)):
                    raise ValueError(f"load {self.name!r} returned {out!r}: expected a finite "
                                     "torque about the hinge's axis")
                M = float(M) * axis
                local = True
            else:
                local = self.local
        else:
            F, M = (np.asarray(x, dtype=float) for x in out)
            local = self.local
        if F.shape != (3,) or M.shape != (3,) or not (np.all(np.isfinite(F))
                                                       and np.all(np.isfinite(M))):
            raise ValueError(f"load {self.name!r} returned {out!r}: expected finite 3-vectors "
                             "(or a number for a hinge's torque)")
        return F, M, local


class FrameView:
    """What a load function sees of a computed frame: its state (``R``, ``r_O``, ``omega``,
    ``v_O``, local components as :class:`~dolfinx_mbs.frames.FrameState`) and its named
    outputs (a hinge's ``angle`` and ``rate``).

    Args:
        frame: the computed frame.
        z: its coordinates.
        w: its speeds.
        state: its state.
    """

    def __init__(self, frame: ComputedFrame, z: np.ndarray, w: np.ndarray,
                 state: FrameState) -> None:
        fields = {"frame": frame, "z": z, "w": w, "state": state, **frame.describe(z, w),
                  "R": state.R, "r_O": state.r_O, "omega": state.omega, "v_O": state.v_O}
        for k, v in fields.items():
            object.__setattr__(self, k, v)
        # whether the function read anything of the view, its __dict__ included (a copy, vars)
        # (then its value may depend on the frame's unknowns: see :func:`was_read`)
        object.__setattr__(self, "_read_", False)

    def __getattribute__(self, name: str) -> Any:
        if name != "_read_":
            object.__setattr__(self, "_read_", True)
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        names = sorted(k for k in object.__getattribute__(self, "__dict__") if k != "_read_")
        raise AttributeError(f"the frame's state has no {name!r}; it has {', '.join(names)}")


def was_read(view: FrameView) -> bool:
    """Whether anything of ``view`` was read since it was made (an attribute, its ``__dict__``,
    a copy of it): a load function that read nothing gives a value independent of the frame's
    state at that state.

    Args:
        view: the view given to a load function.

    Returns:
        Whether it was read.
    """
    return bool(object.__getattribute__(view, "_read_"))


@dataclasses.dataclass
class FrameDerivatives:
    """The pieces of the bordered Jacobian at one state (see the module docstring)."""

    B: list           # m reduced Vecs: d(elastic rows)/d(frame unknowns), shift applied
    C: list           # m reduced Vecs: d(frame rows)/dq + s d/dv + s^2 d/dv'
    Cv: list          # m reduced Vecs: d(frame rows)/dv + s d/dv'
    D: np.ndarray     # m x m: d(frame rows, kinematics)/d(frame unknowns), shift applied
    H: list | None = None   # m reduced Vecs: d(elastic kinematic rows q' - v)/d(frame unknowns)


class _Part:
    """One elastic body's share: its operators, views of its part of full vectors and the
    constant vectors of its frame terms."""

    def __init__(self, index: int, body: Body, ops: BodyOperators, space: FullSpace,
                 frame_index: int | None) -> None:
        self.index, self.body, self.ops, self.frame = index, body, ops, frame_index
        self.gdim = body.gdim
        #: the dense path's tensors of the body's nonlinear strain on a reduced basis, by the
        #: basis' digest (:func:`~dolfinx_mbs.systems.coupled_dense.kept_nonlinear_tensors`:
        #: a model run again keeps its system, its parts and their bases)
        self.dense_tensors: dict = {}
        lo, hi = int(space.offsets[index]), int(space.offsets[index + 1])
        self.slice = slice(lo, hi)
        self.n = hi - lo
        comm = space.comm
        # body-layout work vectors (no ghosts: the matrices' own layout)
        self.M = ops.M
        self.basis = ops.coupling_matrices            # [(coeff functional, c_E)]
        if not self.basis:
            raise ValueError(f"body {body.name!r}: its operators lack the coupling basis "
                             "(strategy 'basis')")
        units = ops.loads.unit_loads
        assert units is not None  # (strategy 'basis' keeps the unit loads)
        self.CX = [b for _, b in units.spin]         # -c_E X: c_E X = -this
        self.Mt = list(units.accel)                   # M t_k = int rho e_k . v
        self.comm = comm
        self._pool: dict = {}
        self.minus_Mt = []
        for Mt in self.Mt:
            v = Mt.copy()
            v.scale(-1.0)
            self.minus_Mt.append(v)
        self.zero = self.vec()
        self.zero.zeroEntries()
        g = self.gdim
        n_nodes = self.n // g
        X = body.V.tabulate_dof_coordinates()[:n_nodes]
        self.X = np.zeros((n_nodes, 3))
        self.X[:, :g] = X[:, :g]
        #: int rho (the x-components of M t_0 sum to it: the shape functions sum to one)
        self.mass = comm.allreduce(float(self.Mt[0].getArray(readonly=True)[0::g].sum()))
        #: int rho X (local components): M t_k . X
        fm = np.zeros(3)
        Xf = self.X[:, :g].reshape(-1)
        for k in range(g):
            fm[k] = float(self.Mt[k].getArray(readonly=True) @ Xf)
        self.first_moment = np.array(comm.allreduce(fm))
        #: the coupling matrices are the mass matrix with E at every node, c_E = M (I kron E)
        #: (forms.inertia_coupling): c_W x is then W applied node by node to M x, one product
        #: with M for every W. Checked on a vector, as a mass matrix with terms of its own
        #: would break it (then the c_E are applied one by one)
        self.MX = self.vec()
        self.MX.array[:] = Xf
        self.kron = self._kron_holds()
        if self.kron:
            self.M.mult(self.MX.copy(), self.MX)   # M X: c_E X = E (M X)

    def nodal(self, W: np.ndarray, y: np.ndarray) -> np.ndarray:
        """c_W x from ``y`` = M x (body-layout arrays): W applied at every node."""
        g = self.gdim
        return cast(np.ndarray, (y.reshape(-1, g) @ W[:g, :g].T).reshape(-1))

    def _kron_holds(self) -> bool:
        """True when every c_E of the basis is M (I kron E), to round-off (collective)."""
        x, y, z = self.vec(), self.vec(), self.vec()
        rng = np.random.default_rng(7 + self.comm.rank)
        x.array[:] = rng.uniform(-1.0, 1.0, x.getLocalSize())
        self.M.mult(x, y)
        ya = y.getArray(readonly=True)
        worst = 0.0
        scale = self.comm.allreduce(float(np.abs(ya).max(initial=0.0)), op=MPI.MAX)
        for (_, B), (_, E) in zip(self.basis, coupling_basis(self.gdim)):
            B.mult(x, z)
            worst = max(worst, float(np.abs(z.getArray(readonly=True)
                                            - self.nodal(E, ya)).max(initial=0.0)))
        for v in (x, y, z):
            v.destroy()
        return bool(self.comm.allreduce(worst, op=MPI.MAX) <= 1e-12 * scale)

    def vec(self) -> PETSc.Vec:
        return self.M.createVecLeft()

    def work(self, key: Hashable) -> PETSc.Vec:
        """A body-layout vector kept under ``key`` (made on first use, reused: the residual
        and the Jacobian of every Newton iteration refill the same objects)."""
        v = self._pool.get(key)
        if v is None:
            v = self._pool[key] = self.vec()
        return v


def _cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a_n x b_n row by row ((n, 3) or a (1, 3) row against (n, 3)): numpy's ``cross`` with
    the same operations (the same numbers), without its argument handling (microseconds, a
    dozen times a step)."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    b0, b1, b2 = b[:, 0], b[:, 1], b[:, 2]
    out = np.empty((max(a.shape[0], b.shape[0]), 3))
    out[:, 0] = a1 * b2 - a2 * b1
    out[:, 1] = a2 * b0 - a0 * b2
    out[:, 2] = a0 * b1 - a1 * b0
    return out


def _as3(a: np.ndarray, g: int) -> np.ndarray:
    """Nodal values (n, g) as (n, 3)."""
    if g == 3:
        return a
    out = np.zeros((a.shape[0], 3))
    out[:, :g] = a
    return out


class CoupledSystem:
    """The equations of motion of bodies on computed frames, with rigid bodies and loads.

    Args:
        base: the second-order system of the elastic bodies
            (:class:`~dolfinx_mbs.systems.SecondOrderSystem`; every body's operators with the
            ``"basis"`` strategy).
        frames: the computed frames, in the order of their unknowns.
        rigid: the rigid bodies (on computed or prescribed frames).
        loads: the applied frame loads.
        gravity: the model's gravity (global components) or None.
        comm: the communicator when there is no elastic body (``base`` None).
        joints: joints between computed frames
            (:mod:`dolfinx_mbs.constraints.frame_joints`; their rows:
            :class:`~dolfinx_mbs.systems.coupled_joints.JointSet`).
        motors: motors on computed frames (their rows in the same set).
    """

    formulations = ("second-order", "first-order", "hamiltonian")
    has_multipliers = False
    nonlinear = True

    def __init__(self, base: SecondOrderSystem | None, frames: Sequence[ComputedFrame],
                 rigid: Sequence[RigidBody], loads: Sequence[FrameLoad],
                 gravity: Sequence[float] | np.ndarray | None = None,
                 comm: MPI.Comm | None = None, joints: Sequence[FrameJoint] = (),
                 motors: Sequence[Motor] = ()) -> None:
        self.base = base
        if base is None:  # rigid bodies only
            self.assembly = self.reducer = self.space = None
            self.bodies, self.constraints = [], []
            self.comm = comm if comm is not None else MPI.COMM_WORLD
        else:
            self.assembly, self.reducer, self.space = base.assembly, base.reducer, base.space
            self.bodies, self.comm = base.bodies, base.comm
            self.constraints = base.constraints
        self.frames = list(frames)
        self.rigid = list(rigid)
        self.loads = list(loads)
        self.gravity = None if gravity is None else np.asarray(gravity, dtype=float)
        if self.reducer is not None and self.reducer.rheonomic:
            raise ValueError("joints whose rows move with the frames (between bodies of "
                             "different motions) are not supported together with computed "
                             "frames")
        # the frames' unknowns: f = (z of frame 0, z of frame 1, ..., w of frame 0, ...)
        self.nz = sum(f.n_coordinates for f in self.frames)
        self.nw = sum(f.n_speeds for f in self.frames)
        self.na = sum(f.n_aux for f in self.frames)
        self.m = self.nz + self.nw + self.na
        zo = np.cumsum([0] + [f.n_coordinates for f in self.frames])
        wo = self.nz + np.cumsum([0] + [f.n_speeds for f in self.frames])
        self.zslice = [slice(int(a), int(b)) for a, b in zip(zo[:-1], zo[1:])]
        self.wslice = [slice(int(a), int(b)) for a, b in zip(wo[:-1], wo[1:])]
        ao = self.nz + self.nw + np.cumsum([0] + [f.n_aux for f in self.frames])
        self.aslice = [slice(int(a), int(b)) for a, b in zip(ao[:-1], ao[1:])]
        index = {id(f): i for i, f in enumerate(self.frames)}
        ops = base.assembly.body_operators if base is not None else []
        self.parts = [_Part(i, b, o, self.elastic_space, index.get(id(b.frame)))
                      for i, (b, o) in enumerate(zip(self.bodies, ops))]
        self.rigid_on = [[rb for rb in self.rigid if rb.frame is f] for f in self.frames]
        self.loads_on = [[ld for ld in self.loads if ld.frame is f] for f in self.frames]
        #: the loads' values at the last evaluation points, by frame (:meth:`frame_loads`)
        self._loads_kept: Dict[int, Dict[tuple, List[tuple]]] = {}
        self.basis3 = {g: [E for _, E in coupling_basis(g)] for g in (2, 3)}
        # the joints' unknowns (their multipliers) come last
        self.jointset: JointSet = JointSet(self, joints, motors)
        self.m += self.jointset.n_unknowns
        #: work vectors of the elastic bodies' full space ("u", "ud", "udd": the displacements
        #: and their rates expanded from the reduced coordinates; "r": a residual), made once
        #: and shared by the forms that expand a state (the Hamilton form, the joints' rows,
        #: the coupled run's outputs); empty without elastic bodies
        self.full_work: Dict[str, PETSc.Vec] = (
            {k: base.space.create_vec() for k in ("u", "ud", "udd", "r")}
            if base is not None else {})
        self._last: dict | None = None  # what the last evaluate() leaves the Jacobian
        #: the elastic coordinates of the last :meth:`set_unknowns`, a copy kept here (the
        #: caller's vector may be a sub-vector given back before the Jacobian reads it)
        self._q: PETSc.Vec | None = None
        self._q_kept: PETSc.Vec | None = None

    # -- sizes -------------------------------------------------------------------------------
    @property
    def n_reduced(self) -> int:
        """The number of the elastic bodies' reduced coordinates (0 without any)."""
        return self.reducer.n_reduced if self.reducer is not None else 0

    def create_reduced_vec(self) -> PETSc.Vec:
        """A vector of the elastic bodies' reduced coordinates."""
        if self.reducer is None:
            return PETSc.Vec().createMPI((0, 0), comm=self.comm)
        return self.reducer.create_reduced_vec()

    # the elastic part's objects where the code has elastic bodies (None without them)
    @property
    def elastic_reducer(self) -> MaggiReducer:
        """The elastic bodies' reducer (an error where the system has no elastic body): what
        the forms and the run's outputs expand the reduced coordinates with."""
        if self.reducer is None:
            raise RuntimeError("the coupled system has no elastic body (no reducer)")
        return self.reducer

    @property
    def elastic_assembly(self) -> Assembly:
        """The elastic bodies' assembly (the system's own; an error where it has no elastic
        body): what the dense and Hamilton forms read the nonlinear strain from."""
        if self.assembly is None:
            raise RuntimeError("the coupled system has no elastic body (no assembly)")
        return self.assembly

    @property
    def elastic_space(self) -> FullSpace:
        """The elastic bodies' full space (an error where the system has no elastic
        body)."""
        if self.space is None:
            raise RuntimeError("the coupled system has no elastic body (no full space)")
        return self.space

    @property
    def elastic_base(self) -> SecondOrderSystem:
        """The elastic bodies' second-order system (an error where the system has no elastic
        body): their reduced operators and nonlinear terms."""
        if self.base is None:
            raise RuntimeError("the coupled system has no elastic body (no base system)")
        return self.base

    # the Reducer protocol of the elastic part (initial states, output)
    def restrict(self, x: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """The reduced coordinates of a full vector (the reducer's).

        Args:
            x: a full vector.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        return self.elastic_reducer.restrict(x, out)

    def project(self, b: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """A full load vector in the reduced coordinates (the reducer's).

        Args:
            b: a full vector.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        return self.elastic_reducer.project(b, out)

    def expand(self, q: PETSc.Vec, out: PETSc.Vec | None = None,
               homogeneous: bool = False) -> PETSc.Vec:
        """The full vector of the reduced coordinates ``q`` (the reducer's).

        Args:
            q: the reduced coordinates.
            out: the vector to fill (new if None).
            homogeneous: leave out the prescribed part a0.

        Returns:
            ``out``.
        """
        return self.elastic_reducer.expand(q, out, homogeneous)

    def expand_rate(self, q: PETSc.Vec, v: PETSc.Vec, out: PETSc.Vec | None = None
                    ) -> PETSc.Vec:
        """The full velocity of the reduced state (q, v) (the reducer's).

        Args:
            q: the reduced coordinates.
            v: their rates.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """
        return self.elastic_reducer.expand_rate(q, v, out)

    def initial_frames(self) -> tuple[np.ndarray, np.ndarray]:
        """The frames' initial coordinates and speeds, concatenated."""
        z = [f.initial()[0] for f in self.frames]
        w = [f.initial()[1] for f in self.frames]
        return (np.concatenate(z) if z else np.zeros(0),
                np.concatenate(w) if w else np.zeros(0))

    def initial_unknowns(self, q0: PETSc.Vec | None = None, v0: PETSc.Vec | None = None,
                         t0: float = 0.0) -> np.ndarray:
        """The frames' unknowns at ``t0``: coordinates, speeds and the auxiliary momenta
        consistent with the elastic state (q0, v0); with joints, the speeds made consistent
        with their velocity rows (:meth:`JointSet.consistent_speeds`). Collective.

        Args:
            q0: the elastic coordinates (None: zero).
            v0: their rates (None: zero).
            t0: the initial time (s).

        Returns:
            The frame unknowns f (replicated).
        """
        z, w = self.initial_frames()
        f = np.concatenate([z, w, np.zeros(self.na), np.zeros(self.jointset.n_unknowns)])
        if self.jointset.n_rows:
            self.jointset.check_start(t0)
            u = ud = None
            if self.parts:
                q, v = self._given_or_zero(q0, v0)
                u = self.elastic_reducer.expand(q, out=self.full_work["u"])
                ud = self.elastic_reducer.expand_rate(q, v, out=self.full_work["ud"])
            self.jointset.consistent_speeds(t0, f, u, ud)
            self.jointset.spring_forces(t0, f, u, ud)
        self.jointset.motor_torques(t0, f)   # a motor's function that fails, before any step
        if self.na:
            q, v = self._given_or_zero(q0, v0)
            jets = self.jets(0.0, f, np.zeros_like(f))
            u = ud = None
            if self.parts:
                u = self.elastic_reducer.expand(q, out=self.full_work["u"])
                ud = self.elastic_reducer.expand_rate(q, v, out=self.full_work["ud"])
            for i, fr in enumerate(self.frames):
                if fr.momentum_balance:
                    nt = fr.n_translations
                    mom = self._momentum(i, jets[i].state, u, ud)
                    f[self.aslice[i]] = (jets[i].state.R @ mom["p_rel"])[:nt]
        return f

    def _given_or_zero(self, q0: PETSc.Vec | None, v0: PETSc.Vec | None) -> tuple:
        """The elastic state (q0, v0), a zero reduced vector for each one not given."""
        out = []
        for x in (q0, v0):
            if x is None:
                x = self.create_reduced_vec()
                x.zeroEntries()
            out.append(x)
        return tuple(out)

    def jets(self, t: float, f: np.ndarray, fd: np.ndarray) -> list[FrameJet]:
        """Each computed frame's :class:`FrameJet` at the unknowns ``f`` and their rates.

        Args:
            t: the time (s).
            f: the frame unknowns.
            fd: their rates.

        Returns:
            One jet per computed frame.
        """
        return [fr.jet(t, f[zs], f[ws], fd[ws])
                for fr, zs, ws in zip(self.frames, self.zslice, self.wslice)]

    def states(self, t: float, jets: list[FrameJet]) -> list[FrameState]:
        """The frame state of each elastic body: its computed frame's, or its prescribed
        frame's at ``t``.

        Args:
            t: the time (s).
            jets: the computed frames' jets (:meth:`jets`).

        Returns:
            One state per elastic body.
        """
        return [jets[p.frame].state if p.frame is not None else self.elastic_assembly.states(
            t)[p.index] for p in self.parts]

    # -- residual --------------------------------------------------------------------------
    def _fields(self, q: PETSc.Vec, v: PETSc.Vec, vd: PETSc.Vec) -> tuple:
        red = self.elastic_reducer
        u = red.expand(q, out=self.full_work["u"])
        ud = red.expand_rate(q, v, out=self.full_work["ud"])
        udd = red.expand_acceleration(q, v, vd, out=self.full_work["udd"])
        return u, ud, udd

    def _body_terms(self, p: _Part, st: FrameState, ua: np.ndarray, uda: np.ndarray,
                    udda: np.ndarray) -> dict:
        """The body's inertia residual e and internal forces at ``st`` (body-layout arrays)
        and the products the derivatives reuse."""
        body, ops = p.body, p.ops
        body.set_state(st)
        W = frame_coupling(st.omega, st.alpha)
        Wg = W["gyroscopic"]
        Wk = W["spin_softening"] + W["angular_acceleration"]
        u, ud, udd = p.work("u"), p.work("ud"), p.work("udd")
        u.array[:] = ua
        ud.array[:] = uda
        udd.array[:] = udda
        e = p.work("e")
        if p.kron:
            # M u'' + c_Wg u' + c_Wk x = M (u'' + Wg u' + Wk u) + Wk (M X), W node by node:
            # one product with M (the derivatives form M x and M u' themselves)
            CEu = CEud = None
            y = p.work("y")
            y.array[:] = udda + p.nodal(Wg, uda) + p.nodal(Wk, ua)
            p.M.mult(y, e)
            e.array[:] += p.nodal(Wk, p.MX.getArray(readonly=True))
        else:
            p.M.mult(udd, e)
            CEu, CEud = [], []
            for k, ((_, B), CX) in enumerate(zip(p.basis, p.CX)):
                a, b = p.work(("CEu", k)), p.work(("CEud", k))
                B.mult(u, a)
                a.axpy(-1.0, CX)          # c_E x = c_E u + c_E X
                B.mult(ud, b)
                CEu.append(a)
                CEud.append(b)
            coeffs_g = [c(Wg) for c, _ in p.basis]
            coeffs_k = [c(Wk) for c, _ in p.basis]
            for cg, ck, a, b in zip(coeffs_g, coeffs_k, CEu, CEud):
                if cg != 0.0:
                    e.axpy(cg, b)
                if ck != 0.0:
                    e.axpy(ck, a)
        for k, Mt in enumerate(p.Mt):
            if st.a_O[k] != 0.0:
                e.axpy(float(st.a_O[k]), Mt)
        app = ops.loads.applied_at(st).copy(p.work("app"))
        e.axpy(-1.0, app)
        r = e.copy(p.work("r"))
        ops.K.multAdd(u, r, r)
        Ps = []   # (case, P u), P u None where the case's coefficient is zero (made if needed)
        for ic, (case, P) in enumerate(ops.prestress_matrices):
            c = body.prestress_coefficient(case, st)
            Pu = None
            if c != 0.0:
                Pu = p.work(("Pu", ic))
                P.mult(u, Pu)
                r.axpy(c, Pu)
            Ps.append((case, Pu))
        if ops.D is not None:
            ops.D.multAdd(ud, r, r)
        return {"e": e, "r": r, "u": u, "ud": ud, "udd": udd, "CEu": CEu, "CEud": CEud,
                "Ps": Ps, "W": W, "app": app}

    @staticmethod
    def _mass_products(p: _Part, u: PETSc.Vec, ud: PETSc.Vec) -> tuple:
        """(M x, M u') with x = X + u, into the part's kept vectors: with ``p.kron``, c_E x
        and c_E u' are E applied node by node to them."""
        Mx, Mud = p.work("Mx"), p.work("Mud")
        p.M.mult(u, Mx)
        Mx.axpy(1.0, p.MX)
        p.M.mult(ud, Mud)
        return Mx, Mud

    def _rigid_moments(self, p: _Part, e: PETSc.Vec, ua: np.ndarray) -> tuple:
        """(sum of e_n, sum of X_n x e_n, sum of u_n x e_n) over the body's nodes, summed over
        ranks: e tested with translations and rotations about the origin (local)."""
        g = p.gdim
        ea = _as3(e.getArray(readonly=True).reshape(-1, g), g)
        u3 = _as3(ua.reshape(-1, g), g)
        loc = np.concatenate([ea.sum(axis=0), _cross_rows(p.X, ea).sum(axis=0),
                              _cross_rows(u3, ea).sum(axis=0)])
        out = np.empty(9)
        self.comm.Allreduce(loc, out, op=MPI.SUM)
        return out[:3], out[3:6], out[6:]

    def evaluate(self, t: float, q: PETSc.Vec, v: PETSc.Vec, vd: PETSc.Vec, f: np.ndarray,
                 fd: np.ndarray, Fv: PETSc.Vec | None) -> tuple[np.ndarray, dict]:
        """The residual's rows at the unknowns.

        Args:
            t: the time (s).
            q: the elastic coordinates.
            v: their rates.
            vd: the rates' rates.
            f: the frame unknowns.
            fd: their rates.
            Fv: the elastic rows' vector (reduced), or None to skip them.

        Returns:
            (the frame rows and kinematics, replicated; what the Jacobian reuses).
        """
        jets = self.jets(t, f, fd)
        states = self.states(t, jets)
        terms = []
        u = ud = udd = None
        if self.parts:
            u, ud, udd = self._fields(q, v, vd)
            ua, uda, udda = (x.getArray(readonly=True) for x in (u, ud, udd))
            r = self.full_work["r"]
            ra = r.getArray()
        for p, st in zip(self.parts, states):
            terms.append(self._body_terms(p, st, ua[p.slice], uda[p.slice], udda[p.slice]))
        Ff = np.zeros(self.m)
        if self.jointset.active:   # the joints' forces into the bodies' residuals, their rows
            self.jointset.residual(t, f, fd, terms, u, ud, Ff)
        for p, bt in zip(self.parts, terms):
            ra[p.slice] = bt["r"].getArray(readonly=True)
        if Fv is not None and self.parts:
            if self.elastic_assembly.nonlinear:
                r.axpy(1.0, self.elastic_assembly.nonlinear_terms(u, tangent=False)[0])
            self.elastic_reducer.project(r, Fv)
        for i, (fr, zs, ws, jet) in enumerate(zip(self.frames, self.zslice, self.wslice, jets)):
            Ff[zs] += fd[zs] - fr.rates(f[zs], f[ws])
            rows = np.zeros(fr.n_speeds)
            for p, bt in zip(self.parts, terms):
                if p.frame != i:
                    continue
                Sf, MX, Mu = self._rigid_moments(p, bt["e"], ua[p.slice])
                rows += jet.T.T @ Sf + jet.Om.T @ (MX + Mu)
            for rb in self.rigid_on[i]:
                F, M = rb.forces(jet.state, self.gravity)
                rows += jet.T.T @ F + jet.Om.T @ M
            if fr.momentum_balance:
                # translation rows m v_O' + pi' - F = 0 (global), pi - R p_rel = 0
                nt, As = fr.n_translations, self.aslice[i]
                mom = self._momentum(i, jet.state, u, ud, terms)
                R = jet.state.R
                rows[:nt] = (mom["mass"] * fd[ws][:nt] + fd[As]
                             - (R @ mom["applied"])[:nt])
                Ff[As] = f[As] - (R @ mom["p_rel"])[:nt]
            rows -= self.generalized_loads(t, i, f, jet)
            Ff[ws] += rows
        self._last = dict(t=t, jets=jets, states=states, terms=terms, u=u, ud=ud, udd=udd)
        return Ff, self._last

    def generalized_loads(self, t: float, i: int, f: np.ndarray, jet: FrameJet) -> np.ndarray:
        """The applied frame loads' generalized force on frame ``i``'s speeds (the user's
        functions run under a collective guard: an error or a non-finite value on one rank
        is raised on every rank).

        Args:
            t: the time (s).
            i: the frame's index.
            f: the frame unknowns.
            jet: the frame's jet.

        Returns:
            The generalized force, one entry per speed of the frame.
        """
        fr = self.frames[i]
        out = np.zeros(fr.n_speeds)
        if not self.loads_on[i]:
            return out
        with checks.collective(self.comm, f"the loads on frame {fr.name!r} at t={t:g}"):
            out += self._loads_here(t, i, f, jet, keep=True)
        return out

    def _loads_here(self, t: float, i: int, f: np.ndarray, jet: FrameJet,
                    keep: bool = False) -> np.ndarray:
        """:meth:`generalized_loads` on this rank alone (the caller guards it); with ``keep``
        the loads' values are kept for :meth:`frame_loads`."""
        fr, zs, ws = self.frames[i], self.zslice[i], self.wslice[i]
        view = FrameView(fr, f[zs], f[ws], jet.state)
        out = np.zeros(fr.n_speeds)
        values = []
        for ld in self.loads_on[i]:
            F, M = ld.evaluate(t, view, jet.state)
            out += jet.T.T @ F + jet.Om.T @ M
            values.append((np.array(F, dtype=float), np.array(M, dtype=float)))
        if keep:
            self._keep_loads(i, self._load_key(t, i, f), values)
        return out

    # -- the loads a step evaluated, for the run's observers ------------------------------------
    #: how many evaluation points of each frame's loads are kept (a step's last residuals)
    KEPT_LOADS = 4

    def _load_key(self, t: float, i: int, f: np.ndarray) -> tuple:
        return (float(t), f[self.zslice[i]].tobytes(), f[self.wslice[i]].tobytes())

    def _keep_loads(self, i: int, key: tuple, values: list) -> None:
        kept = self._loads_kept.setdefault(i, {})
        kept[key] = values
        while len(kept) > self.KEPT_LOADS:
            del kept[next(iter(kept))]

    def forget_loads(self) -> None:
        """Forget the loads' values kept (a run's start and end: a load's function may give
        other values in the next run); the driven motors' prescriptions too."""
        self._loads_kept = {}
        self.jointset.forget()

    def frame_loads(self, t: float, i: int, f: np.ndarray) -> List[tuple]:
        """Each applied load's (force, moment about the origin) on frame ``i`` (local
        components) at time ``t`` and the frame unknowns ``f``.

        The values a residual of the step evaluated at that point when it did (the user's
        functions are not called again there; a load that reads the frame's accelerations
        saw the residual's, those of the step), else evaluated now (under a collective guard,
        the accelerations zero) and kept: a run's observers call each function once a state
        at most.

        Args:
            t: the time (s).
            i: the frame's index.
            f: the frame unknowns (the same on every rank).

        Returns:
            [(F, M)], one pair a load of the frame.
        """
        if not self.loads_on[i]:
            return []
        key = self._load_key(t, i, f)
        values: List[tuple] | None = self._loads_kept.get(i, {}).get(key)
        hit = values is not None
        if self.comm.size > 1:   # one answer on every rank (f is the same on each)
            hit = bool(self.comm.allreduce(hit, op=MPI.LAND))
        if hit:
            assert values is not None
            return values
        fr, zs, ws = self.frames[i], self.zslice[i], self.wslice[i]
        st = fr.state_at(t, f[zs], f[ws])
        view = FrameView(fr, f[zs], f[ws], st)
        with checks.collective(self.comm, f"the loads on frame {fr.name!r} at t={t:g}"):
            values = [tuple(np.array(x, dtype=float) for x in ld.evaluate(t, view, st))
                      for ld in self.loads_on[i]]
        self._keep_loads(i, key, values)
        return values

    def _momentum(self, i: int, st: FrameState, u: PETSc.Vec | None, ud: PETSc.Vec | None,
                  terms: list | None = None) -> dict:
        """What frame ``i``'s momentum balance needs (local components): the carried mass,
        first moment s = int rho x, relative momentum p_rel = omega x s + int rho u', and (with
        ``terms``, a residual's body terms) the applied loads' resultant with gravity and its
        part without gravity."""
        mass, s1, sd = 0.0, np.zeros(3), np.zeros(3)
        app, app_ng = np.zeros(3), np.zeros(3)
        gl = st.R.T @ self.gravity if self.gravity is not None else np.zeros(3)
        for k, p in enumerate(self.parts):
            if p.frame != i:
                continue
            g = p.gdim
            assert u is not None and ud is not None  # (the elastic bodies' fields)
            ua = u.getArray(readonly=True)[p.slice]
            uda = ud.getArray(readonly=True)[p.slice]
            loc = np.zeros(9)
            for c in range(g):
                Mt = p.Mt[c].getArray(readonly=True)
                loc[c] = Mt @ ua
                loc[3 + c] = Mt @ uda
            if terms is not None:
                a = terms[k]["app"].getArray(readonly=True).reshape(-1, g).sum(axis=0)
                loc[6:6 + g] = a
            tot = np.empty(9)
            self.comm.Allreduce(loc, tot, op=MPI.SUM)
            mass += p.mass
            s1 += p.first_moment + tot[:3]
            sd += tot[3:6]
            app += tot[6:9]
            app_ng += tot[6:9] - p.mass * gl * (np.arange(3) < g)
        for rb in self.rigid_on[i]:
            mass += rb.mass
            s1 += rb.mass * rb.centre
            app += rb.mass * gl
        p_rel = cross3(st.omega, s1) + sd
        return {"mass": mass, "s": s1, "p_rel": p_rel, "applied": app, "applied_ng": app_ng}

    # -- Jacobian --------------------------------------------------------------------------
    def _state_columns(self, p: _Part, st: FrameState, bt: dict) -> dict:
        """The derivatives d e / d(state variable) (body layout), 3 per variable of
        :data:`STATE_VARS`, and the prestress cases' coefficient derivatives (d(K_sigma u)/d
        (same) = sum of d c_case * P_case u: :meth:`_prestress_column` forms the products a
        column needs; elastic rows only)."""
        g = p.gdim
        E3 = np.eye(3)
        W = skew(st.omega)

        def combo(key: Hashable, Wm: np.ndarray, vecs: Any,
                  out: PETSc.Vec | None = None) -> PETSc.Vec:
            # vecs: one Vec (node blocks, p.kron) or one per coupling basis matrix
            out = p.work(key) if out is None else out
            if p.kron:  # vecs: M x or M u' (see _body_terms)
                out.array[:] = p.nodal(Wm, vecs.getArray(readonly=True))
                return out
            out.zeroEntries()
            for (coeff, _), x in zip(p.basis, vecs):
                c = coeff(Wm)
                if c != 0.0:
                    out.axpy(c, x)
            return out
        if p.kron and bt["CEu"] is None:   # M x and M u', from which c_E x, c_E u' follow
            bt["CEu"], bt["CEud"] = self._mass_products(p, bt["u"], bt["ud"])
        cols = {k: [] for k in STATE_VARS}
        for j in range(3):
            Ek = skew(E3[j])
            col = combo(("dW", j), 2.0 * Ek, bt["CEud"])
            col.axpy(1.0, combo(("dWk", j), Ek @ W + W @ Ek, bt["CEu"]))
            cols["omega"].append(col)
            cols["alpha"].append(combo(("dA", j), Ek, bt["CEu"]))
            if j < g:
                cols["a_O"].append(p.Mt[j])
                cols["g_loc"].append(p.minus_Mt[j])
            else:
                cols["a_O"].append(p.zero)
                cols["g_loc"].append(p.zero)
        # prestress: d(sum c_case(s) P_case u)/ds = sum d c_case/ds P_case u (the products
        # P_case u of the residual's zero coefficients are formed where a column needs them)
        pre = [self._prestress_coefficient_derivative(case, st) for case, _ in bt["Ps"]]
        return {"e": cols, "pre": pre}

    @staticmethod
    def _prestress_column(p: _Part, bt: dict, pre: list, ch: dict, c: int,
                          out: PETSc.Vec) -> None:
        """Column ``c`` of the prestress forces' derivative into ``out`` (zeroed here): sum
        over the cases of (d c_case/ds . ds/d(unknown)) P_case u, ``ch`` the chain
        ds/d(unknowns) of each state variable (:meth:`_chain`). P_case u is the residual's
        where its coefficient was nonzero, formed (and kept for the step's other columns)
        where it was zero and this column's weight is not (a hinge about z needs no
        omega_x omega_z case)."""
        out.zeroEntries()
        for ic, (d, (case, Pu)) in enumerate(zip(pre, bt["Ps"])):
            wgt = float(sum(d[var] @ ch[var][:, c] for var in STATE_VARS))
            if wgt == 0.0:
                continue
            if Pu is None:
                Pu = p.work(("Pu", ic))
                p.ops.prestress_matrices[ic][1].mult(bt["u"], Pu)
                bt["Ps"][ic] = (case, Pu)
            out.axpy(wgt, Pu)

    @classmethod
    def _prestress_coefficient_derivative(cls, case: tuple, st: FrameState) -> dict:
        """d(prestress coefficient of ``case``)/d(state variables) (3-vectors), as
        ``Body.prestress_coefficient`` defines it."""
        z = {k: np.zeros(3) for k in STATE_VARS}
        if case[0] == "carried":
            # the case of an element frame carried by constant axes Q and origin d: omega' =
            # Q^T omega, alpha' = Q^T alpha, g' = Q^T g, a_O' = Q^T (a_O + alpha x d + omega x
            # (omega x d))
            _, Qf, d, inner = case
            Q, d = np.reshape(Qf, (3, 3)), np.asarray(d, dtype=float)
            di = cls._prestress_coefficient_derivative(inner, st.carried(Q, d))
            w = st.omega
            da = Q @ di["a_O"]
            z["omega"] = Q @ di["omega"] + (np.outer(w, d) + float(w @ d) * np.eye(3)
                                            - 2.0 * np.outer(d, w)).T @ da
            z["alpha"] = Q @ di["alpha"] + skew(d) @ da
            z["a_O"] = da
            z["g_loc"] = Q @ di["g_loc"]
            return z
        if case[0] == "g":
            z["g_loc"][case[1]] = 1.0
            z["a_O"][case[1]] = -1.0
        elif case[0] != "applied":
            i, j = case
            z["omega"][i] += st.omega[j]
            z["omega"][j] += st.omega[i]
        return z

    def _chain(self, jet: FrameJet, st: FrameState, var: str, which: str) -> np.ndarray:
        """d(state variable ``var``)/d(the frame's z or w, or w' with ``which="wd"``), 3 x n."""
        if which == "wd":
            if var == "alpha":
                return jet.Om
            if var == "a_O":
                return jet.T
            return np.zeros((3, jet.Om.shape[1]))
        if var == "g_loc":
            if which == "w" or self.gravity is None:
                n = jet.Om.shape[1] if which == "w" else jet.dphi_dz.shape[1]
                return np.zeros((3, n))
            gl = st.R.T @ self.gravity
            return cast(np.ndarray, skew(gl) @ jet.dphi_dz)  # d(R^T g) = (R^T g) x d phi
        return cast(np.ndarray, jet.dw[var] if which == "w" else jet.dz[var])

    def _reduced_work(self, Fv_shape: PETSc.Vec) -> tuple:
        """The kept vectors of the bordered pieces (B, C, Cv: m reduced Vecs each) and the
        full-layout work vectors, zeroed."""
        if getattr(self, "_bc", None) is None:
            m = self.m
            self._bc = tuple([Fv_shape.duplicate() for _ in range(m)] for _ in range(3))
            self._full_work = ([self.elastic_space.create_vec() for _ in range(m + 2)]
                               if self.parts else [])
        for group in self._bc:
            for v in group:
                v.zeroEntries()
        for v in self._full_work:
            # through the array: these vectors are written through their arrays, which
            # PETSc's zeroEntries does not see (it skips a vector whose cached norm is 0)
            v.array[:] = 0.0
        return self._bc + (self._full_work,)

    def derivatives(self, t: float, shift: float, Fv_shape: PETSc.Vec) -> FrameDerivatives:
        """The bordered Jacobian's frame pieces at the state of the last :meth:`evaluate`,
        for the TS shift ``shift`` (d/dy + shift d/dy'). The vectors returned are kept and
        refilled by the next call.

        Args:
            t: the time (s).
            shift: the TS shift.
            Fv_shape: a reduced vector (the kept vectors' layout).

        Returns:
            The pieces B, C, Cv, D, H.
        """
        last = self._last
        assert last is not None  # (the state of the last evaluate())
        jets, states, terms = last["jets"], last["states"], last["terms"]
        m, red = self.m, self.reducer
        s = shift
        ua = last["u"].getArray(readonly=True) if self.parts else None
        B, C, Cv, fw = self._reduced_work(Fv_shape)
        D = np.zeros((m, m))
        Dloc = np.zeros((m, m))
        Bfull = fw[:m]
        rowC, rowCv = (fw[m], fw[m + 1]) if self.parts else (None, None)
        # kinematics rows
        for fr, zs, ws in zip(self.frames, self.zslice, self.wslice):
            Jz, Jw = fr.rates_jacobian(self._f[zs], self._f[ws])
            D[zs, zs] = s * np.eye(fr.n_coordinates) - Jz
            D[zs, ws] = -Jw
        # columns of the elastic rows and the frame rows' state derivatives
        for p, bt, st in zip(self.parts, terms, states):
            if p.frame is None:
                continue
            i = p.frame
            jet = jets[i]
            zs, ws = self.zslice[i], self.wslice[i]
            # (with elastic bodies: their reducer, fields and rows)
            assert red is not None and ua is not None and rowC is not None and rowCv is not None
            sc = self._state_columns(p, st, bt)
            Sw = {}  # d e / d(frame unknowns) per (which): body-layout vectors per column
            for which, n in (("z", jet.dphi_dz.shape[1]), ("w", jet.Om.shape[1]),
                             ("wd", jet.Om.shape[1])):
                vecs, pvecs = [], []
                ch = {var: self._chain(jet, st, var, which) for var in STATE_VARS}
                for c in range(n):
                    col, pc = p.work(("Sw", which, c)), p.work(("Swp", which, c))
                    col.zeroEntries()
                    for var in STATE_VARS:
                        dv = ch[var][:, c]
                        for k in range(3):
                            if dv[k] != 0.0:
                                col.axpy(float(dv[k]), sc["e"][var][k])
                    self._prestress_column(p, bt, sc["pre"], ch, c, pc)
                    vecs.append(col)
                    pvecs.append(pc)
                Sw[which] = (vecs, pvecs)
            # elastic rows' columns: z: d/dz; w: d/dw + s d/dw'
            for c, j in enumerate(range(zs.start, zs.stop)):
                a = Bfull[j].array[p.slice]
                a += Sw["z"][0][c].getArray(readonly=True)
                a += Sw["z"][1][c].getArray(readonly=True)
                Bfull[j].array[p.slice] = a
            for c, j in enumerate(range(ws.start, ws.stop)):
                a = Bfull[j].array[p.slice]
                a += Sw["w"][0][c].getArray(readonly=True) + Sw["w"][1][c].getArray(readonly=True)
                a += s * (Sw["wd"][0][c].getArray(readonly=True)
                          + Sw["wd"][1][c].getArray(readonly=True))
                Bfull[j].array[p.slice] = a
            # frame rows: (T_j + Om_j x x) . e, differentiated
            g = p.gdim
            x3 = p.X + _as3(ua[p.slice].reshape(-1, g), g)
            ea = _as3(bt["e"].getArray(readonly=True).reshape(-1, g), g)
            W = bt["W"]
            Wg = W["gyroscopic"]
            Wk = W["spin_softening"] + W["angular_acceleration"]
            for jl in range(jet.Om.shape[1]):
                row = ws.start + jl
                om = jet.Om[:, jl]
                wj = (jet.T[:, jl][None, :] + _cross_rows(om[None, :], x3))[:, :g]
                wj_vec = p.work("wj")
                wj_vec.array[:] = wj.reshape(-1)
                # d/d(frame unknowns): w_j . d e/d(...), the owned parts' products (summed over
                # the ranks once, below)
                wa = wj_vec.getArray(readonly=True)
                for which, sl in (("z", zs), ("w", ws)):
                    for c, col in enumerate(Sw[which][0]):
                        val = wa @ col.getArray(readonly=True)
                        if which == "w":
                            val += s * (wa @ Sw["wd"][0][c].getArray(readonly=True))
                        Dloc[row, sl.start + c] += val
                # d/du: C_Wk^T w_j + S_j^T e ; d/du': C_Wg^T w_j ; d/du'': M w_j
                dudd = p.work("dudd")
                p.M.mult(wj_vec, dudd)
                du = self._coupling_T(p, Wk, wj_vec, p.work("du"), dudd)
                du.array[:] += (-_cross_rows(om[None, :], ea)[:, :g]).reshape(-1)
                dud = self._coupling_T(p, Wg, wj_vec, p.work("dud"), dudd)
                ca = rowC.getArray()
                ca[:] = 0.0
                ca[p.slice] = (du.getArray(readonly=True) + s * dud.getArray(readonly=True)
                               + s * s * dudd.getArray(readonly=True))
                cva = rowCv.getArray()
                cva[:] = 0.0
                cva[p.slice] = dud.getArray(readonly=True) + s * dudd.getArray(readonly=True)
                tmp = self.reduced_work(Fv_shape)
                red.project(rowC, tmp)
                C[row].axpy(1.0, tmp)
                red.project(rowCv, tmp)
                Cv[row].axpy(1.0, tmp)
        for j, Bf in enumerate(Bfull):
            assert red is not None  # (Bfull: the elastic bodies' columns)
            red.project(Bf, B[j])
        full = rowC
        if self.parts:  # one reduction for all the products above
            tot = np.empty_like(Dloc)
            self.comm.Allreduce(Dloc, tot, op=MPI.SUM)
            D += tot
        # rigid bodies and applied loads: the frame rows' own derivatives
        for i, (fr, zs, ws, jet) in enumerate(zip(self.frames, self.zslice, self.wslice, jets)):
            st = jet.state
            for rb in self.rigid_on[i]:
                d = rb.force_derivatives(st)
                for which, sl in (("z", zs), ("w", ws), ("wd", ws)):
                    acc = np.zeros((6, sl.stop - sl.start))
                    for var in ("omega", "alpha", "a_O"):
                        acc += d[var] @ self._chain(jet, st, var, which)
                    if self.gravity is not None:
                        acc += d["g_loc"] @ self._chain(jet, st, "g_loc", which)
                    rows = jet.T.T @ acc[:3] + jet.Om.T @ acc[3:]
                    D[ws, sl] += rows * (s if which == "wd" else 1.0)
            if fr.momentum_balance:
                self._momentum_derivatives(i, jet, s, last, D, C, Cv, full)
            if self.loads_on[i]:
                D[ws, :] += self._load_derivative(t, i, s, jet)
        H = None
        if self.jointset.active:
            H = self._h_work(Fv_shape)
            self.jointset.derivatives(t, self._f, s, D, B, C, Cv, H, full)
        return FrameDerivatives(B=B, C=C, Cv=Cv, D=D, H=H)

    def _h_work(self, like: PETSc.Vec) -> list:
        """The kept columns H of the elastic kinematic rows by the frames' unknowns (nonzero
        for the joints' mu only), zeroed."""
        if getattr(self, "_H", None) is None:
            self._H = [like.duplicate() for _ in range(self.m)]
        for v in self._H:
            v.zeroEntries()
        return self._H

    def reduced_work(self, like: PETSc.Vec) -> PETSc.Vec:
        """A work vector of the reduced coordinates of ``like``'s layout, made once and
        shared (by the Jacobian's columns and the joints' rows: its content is the caller's
        until its next call).

        Args:
            like: a vector of the layout.

        Returns:
            The vector.
        """
        if getattr(self, "_tmp", None) is None:
            self._tmp = like.duplicate()
        return self._tmp

    def _momentum_derivatives(self, i: int, jet: FrameJet, s: float, last: dict,
                              D: np.ndarray, C: List[PETSc.Vec], Cv: List[PETSc.Vec],
                              full: PETSc.Vec) -> None:
        """Replace frame ``i``'s translation rows by the momentum balance's derivatives and
        fill its auxiliary rows (see :meth:`evaluate`)."""
        fr, zs, ws, As = self.frames[i], self.zslice[i], self.wslice[i], self.aslice[i]
        nt = fr.n_translations
        st = jet.state
        R = st.R
        mom = self._momentum(i, st, last["u"], last["ud"], last["terms"])
        for j in range(nt):
            r = ws.start + j
            D[r, :] = 0.0
            C[r].zeroEntries()
            Cv[r].zeroEntries()
            D[r, ws.start + j] = s * mom["mass"]
            D[r, As.start + j] = s
        # -R F_applied: gravity's part is R (m R^T g) = m g; the rest turns with the frame
        D[ws.start:ws.start + nt, zs] += (R @ skew(mom["applied_ng"]) @ jet.dphi_dz)[:nt]
        # pi - R (omega x s + int rho u')
        D[As, As] = np.eye(nt)
        D[As, ws] += (R @ skew(mom["s"]) @ jet.Om)[:nt]
        D[As, zs] += (R @ skew(mom["p_rel"]) @ jet.dphi_dz)[:nt]
        if not self.parts:
            return
        RW = R @ skew(st.omega)
        fa = full.getArray()
        for j in range(nt):
            for which, coef in (("u", RW[j]), ("ud", R[j])):
                fa[:] = 0.0
                for p in self.parts:
                    if p.frame != i:
                        continue
                    acc = np.zeros(p.n)
                    for k in range(p.gdim):
                        if coef[k] != 0.0:
                            acc -= coef[k] * p.Mt[k].getArray(readonly=True)
                    fa[p.slice] = acc
                tmp = self.elastic_reducer.project(full, self.reduced_work(C[0]))
                row = As.start + j
                if which == "u":
                    C[row].axpy(1.0, tmp)
                else:
                    C[row].axpy(s, tmp)
                    Cv[row].axpy(1.0, tmp)

    def _coupling_T(self, p: _Part, W: np.ndarray, x: PETSc.Vec, out: PETSc.Vec,
                    Mx: PETSc.Vec) -> PETSc.Vec:
        """c_W^T x = c_{W^T} x (into ``out``): the coupling basis combined into one matrix,
        kept per W (a Jacobian applies it to every frame speed's field); ``Mx`` = M x (the
        node-block case's whole product)."""
        if p.kron:   # c_W^T = (I kron W^T) M
            out.array[:] = p.nodal(W.T, Mx.getArray(readonly=True))
            return out
        key = tuple(np.round(W, 15).ravel())
        cache = p._pool.setdefault("cT", {})
        A = cache.get(key)
        if A is None:
            A = cache.pop(next(iter(cache))) if len(cache) >= 2 else p.basis[0][1].duplicate()
            combine(A, [(coeff(W.T), Bm) for coeff, Bm in p.basis])
            cache[key] = A
        A.mult(x, out)
        return out

    def _load_derivative(self, t: float, i: int, s: float, jet: FrameJet) -> np.ndarray:
        """-d(applied generalized force on frame i)/d(frame unknowns): the user's functions
        are differenced (central differences, step scaled by each unknown), unless the force
        does not depend on the unknowns here (zero, exactly): every function read nothing of
        its view at this state and gave local components, on a frame whose partial
        velocities are constant (a hinge's: a motor curve of time alone). ``jet``: the
        frame's jet at the unknowns."""
        fr, zs, ws = self.frames[i], self.zslice[i], self.wslice[i]
        f0, fd0 = self._f.copy(), self._fd.copy()

        def Q(f: np.ndarray, fd: np.ndarray) -> np.ndarray:
            return self._loads_here(t, i, f, fr.jet(t, f[zs], f[ws], fd[ws]))
        D = np.zeros((fr.n_speeds, self.m))
        if fr.constant_partials:
            with checks.collective(self.comm, f"the loads on frame {fr.name!r} at t={t:g}"):
                view = FrameView(fr, f0[zs], f0[ws], jet.state)
                local = all([ld.values(t, view)[2] for ld in self.loads_on[i]])
                free = local and not was_read(view)
            if self.comm.size > 1:   # one answer on every rank (the functions ran on each)
                free = self.comm.allreduce(free, op=MPI.LAND)
            if free:
                return D
        # one guard for all the evaluations (the user's functions may fail on one rank)
        with checks.collective(self.comm, f"the loads on frame {fr.name!r} at t={t:g}"):
            for j in list(range(zs.start, zs.stop)) + list(range(ws.start, ws.stop)):
                h = 1e-7 * max(1.0, abs(f0[j]))
                fp, fm = f0.copy(), f0.copy()
                fp[j] += h
                fm[j] -= h
                D[:, j] -= (Q(fp, fd0) - Q(fm, fd0)) / (2 * h)
        return D

    # -- the elastic block ------------------------------------------------------------------
    def elastic_block(self, t: float, shift: float, S: PETSc.Mat | None,
                      states: Sequence[FrameState] | None = None
                      ) -> tuple[PETSc.Mat, SecondOrder]:
        """S = shift^2 M_r + shift C_r + K_r (+ the nonlinear tangent) at the last state.

        Args:
            t: the time (s).
            shift: the TS shift.
            S: the matrix to fill (new if None).
            states: the elastic bodies' frame states the operators are formed at (None: the
                last state's).

        Returns:
            (S, the elastic bodies' record at the frames' states).
        """
        assert self._last is not None  # (the state of the last evaluate())
        rec = self.elastic_base.at(t, states=self._last["states"] if states is None else states)
        if S is None:
            S = rec.K.duplicate(copy=True)
        else:
            rec.K.copy(S, structure=SAME)
        S.axpy(shift, rec.C, structure=SAME)
        S.axpy(shift * shift, rec.M, structure=SAME)
        if self.elastic_assembly.nonlinear:
            S.axpy(1.0, self.elastic_base.nonlinear_reduced(t, self._q, force=False)[1],
                   structure=SUBSET)
        return S, rec

    # -- outputs ----------------------------------------------------------------------------
    def frame_outputs(self, f: np.ndarray) -> Mapping[str, Mapping[str, float | np.ndarray]]:
        """Each computed frame's named outputs at the unknowns ``f``.

        Args:
            f: the frame unknowns.

        Returns:
            By frame name, its outputs by name (:meth:`~dolfinx_mbs.frames.computed.
            ComputedFrame.describe`), read-only.
        """
        return FrozenMapping({fr.name: fr.describe(f[zs], f[ws])
                                 for fr, zs, ws in zip(self.frames, self.zslice, self.wslice)})

    def set_unknowns(self, f: np.ndarray, fd: np.ndarray, q: PETSc.Vec | None = None) -> None:
        """Remember the unknowns the next :meth:`derivatives` is taken at.

        Args:
            f: the frame unknowns.
            fd: their rates.
            q: the elastic coordinates, or None.
        """
        self._f, self._fd = np.asarray(f, float), np.asarray(fd, float)
        if q is None:
            self._q = None
            return
        # a copy: the TS hands its state's sub-vectors, given back before the Jacobian reads
        # them (the nonlinear tangent of :meth:`elastic_block` read a restored one: SIGSEGV)
        if self._q_kept is None:
            self._q_kept = self.create_reduced_vec()
        q.copy(self._q_kept)
        self._q = self._q_kept


def check_frames(frames: Sequence[ComputedFrame], bodies: Sequence[Body],
                 rigid: Sequence[RigidBody]) -> None:
    """Errors for computed frames that carry no mass.

    Args:
        frames: the computed frames.
        bodies: the elastic bodies.
        rigid: the rigid bodies.

    Raises:
        ValueError: a computed frame carries no body.
    """
    for fr in frames:
        carried = [b for b in bodies if b.frame is fr] + [r for r in rigid if r.frame is fr]
        if not carried:
            raise ValueError(f"computed frame {fr.name!r} carries no body: a frame whose "
                             "motion is computed needs mass (a Body or a RigidBody on it)")
    checks.real(0.0, "t")


@dataclasses.dataclass(frozen=True, eq=False)
class Monitored(Record):
    """Energy and momenta of the whole model at a state (:func:`monitors`; replicated), read
    also by name (``m["total"]``).

    Attributes:
        kinetic: 1/2 int rho |v|^2 with the absolute velocity v = v_O + omega x x + u', and
            the rigid bodies' (J).
        elastic: 1/2 u.(K + K_sigma) u plus the nonlinear strain energy's excess, and the
            springs' 1/2 k (L - L0)^2 (J).
        gravity: -int rho g.r (J).
        total: their sum (J).
        momentum: the linear momentum (global components).
        angular_momentum: the angular momentum about the global origin (global components).
    """

    kinetic: float
    elastic: float
    gravity: float
    total: float
    momentum: np.ndarray
    angular_momentum: np.ndarray


def monitors(system: CoupledSystem, t: float, q: PETSc.Vec, v: PETSc.Vec,
             f: np.ndarray) -> Monitored:
    """Energy and momenta of the whole model at the state (q, v, f) (replicated).

    Args:
        system: the coupled system.
        t: the time (s).
        q: the elastic coordinates.
        v: their rates.
        f: the frame unknowns.

    Returns:
        The :class:`Monitored` energies and momenta (the kinetic energy exact for the finite
        element fields, since the nodal values of v interpolate it).
    """
    s = system
    jets = s.jets(t, f, np.zeros_like(f))
    states = s.states(t, jets)
    u = None
    if s.parts:
        red = s.elastic_reducer
        u = red.expand(q, out=s.full_work["u"])
        ud = red.expand_rate(q, v, out=s.full_work["ud"])
        ua, uda = u.getArray(readonly=True), ud.getArray(readonly=True)
    T = Vel = Vg = 0.0
    P, H = np.zeros(3), np.zeros(3)
    for p, st in zip(s.parts, states):
        g = p.gdim
        x3 = p.X + _as3(ua[p.slice].reshape(-1, g), g)
        vel = (st.v_O[None, :] + _cross_rows(st.omega[None, :], x3)
               + _as3(uda[p.slice].reshape(-1, g), g))
        vv, Mv, uu, Ku, xv, Mx = (p.vec() for _ in range(6))
        vv.array[:] = vel[:, :g].reshape(-1)
        p.M.mult(vv, Mv)
        xv.array[:] = x3[:, :g].reshape(-1)
        p.M.mult(xv, Mx)
        uu.array[:] = ua[p.slice]
        p.ops.K.mult(uu, Ku)
        el = 0.5 * Ku.dot(uu)
        for case, Pm in p.ops.prestress_matrices:
            c = p.body.prestress_coefficient(case, st)
            if c != 0.0:
                Pm.mult(uu, Ku)
                el += 0.5 * c * Ku.dot(uu)
        T += 0.5 * vv.dot(Mv)
        Vel += el
        Mva = _as3(Mv.getArray(readonly=True).reshape(-1, g), g)
        Mxa = _as3(Mx.getArray(readonly=True).reshape(-1, g), g)
        local = np.concatenate([Mva.sum(axis=0), _cross_rows(x3, Mva).sum(axis=0),
                                Mxa.sum(axis=0)])
        tot = np.empty(9)
        s.comm.Allreduce(local, tot, op=MPI.SUM)
        Pg = st.R @ tot[:3]                      # int rho v, global
        P += Pg
        H += st.R @ tot[3:6] + cross3(st.r_O, Pg)
        if s.gravity is not None:                # -g . int rho (r_O + R x)
            Vg -= float(s.gravity @ (p.mass * st.r_O + st.R @ tot[6:]))
    if s.parts and s.elastic_assembly.nonlinear:
        Vel += s.elastic_assembly.nonlinear_energy(u)
    Vel += s.jointset.spring_energy(t, f, u, ud if s.parts else None)
    for i, jet in enumerate(jets):
        for rb in s.rigid_on[i]:
            Tr, Vr = rb.energy(jet.state, s.gravity)
            Pr, Hr = rb.momenta(jet.state)
            T += Tr
            Vg += Vr
            P += Pr
            H += Hr
    return Monitored(kinetic=T, elastic=Vel, gravity=Vg, total=T + Vel + Vg, momentum=P,
                     angular_momentum=H)
