"""Small systems in dense form: the operators of a typed system gathered on every rank, and
the schemes of the TS path stepped on them (:mod:`dolfinx_mbs.integrate.dense.stepper` runs
them).

* :class:`DenseOperators`: ``at(t)`` gives the operators of ``system.at(t)`` as numpy arrays,
  replicated on every rank; the matrices are gathered once per distinct frame state (the
  record's ``version``), the vectors at each time. Where the frame state is constant in time
  and the loads lie in the span of a :class:`~dolfinx_mbs.integrate.dense.exact.LoadBasis`,
  the loads come from their fit (:meth:`DenseOperators.fit_loads`) and no time needs an assembly.
* :class:`Alpha2`, :class:`CrankNicolson`, :class:`Midpoint`: the TS path's schemes (PETSc's
  TSALPHA2 with its restart by two half backward-Euler steps, TSTHETA with endpoint, TSTHETA
  without) written on the dense operators, with one LU per distinct step matrix (kept while
  the frame state and step stay), so that both paths give the same steps up to round-off.

Nothing here is of the full problem's size: the arrays are n x n or 2n x 2n for n reduced
unknowns, which :data:`dolfinx_mbs.integrate.choice.DENSE_MAX` bounds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, Hashable, Mapping, Sequence, Tuple, cast

import numpy as np
import scipy.linalg as sla

from dolfinx_mbs.integrate.dense.exact import LoadFit
from dolfinx_mbs.integrate.schemes import (
    Alpha2Steps,
    alpha2_advance,
    alpha2_coefficients,
    alpha2_stage_values,
    crank_nicolson_maps,
    midpoint_maps,
)
from dolfinx_mbs.systems.records import constant_frame

if TYPE_CHECKING:
    from mpi4py import MPI
    from petsc4py import PETSc

    from dolfinx_mbs.integrate.dense.exact import LoadBasis
    from dolfinx_mbs.systems.records import SecondOrder
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["gather_matrix", "gather_vector", "DenseOperators", "Alpha2", "CrankNicolson",
           "Midpoint", "SCHEMES"]

#: the record's fields each formulation steps with (matrices), beside those of the energies
STEP_FIELDS = {"second-order": ("M", "C", "K"), "first-order": ("M", "C", "K"),
               "hamiltonian": ("M", "Gp", "Kh", "Gq")}
ENERGY_FIELDS = ("Kel", "Kpot")
VECTORS = {"second-order": ("f",), "first-order": ("f",),
           "hamiltonian": ("f", "pi0", "h", "fa")}


def gather_matrix(A: PETSc.Mat, comm: MPI.Comm) -> np.ndarray:
    """The PETSc matrix ``A`` as a dense array on every rank of ``comm``.

    Args:
        A: a distributed matrix.
        comm: its communicator.

    Returns:
        The whole matrix, on every rank.
    """
    r0, r1 = A.getOwnershipRange()
    n = A.getSize()[1]
    ip, ix, vals = A.getValuesCSR()
    rows = np.zeros((r1 - r0, n))
    counts = np.diff(ip)
    rows[np.repeat(np.arange(r1 - r0), counts), ix] = vals
    if comm.size == 1:
        return rows
    return np.vstack(comm.allgather(rows))


def gather_vector(v: PETSc.Vec, comm: MPI.Comm) -> np.ndarray:
    """The PETSc vector ``v`` as an array on every rank of ``comm``.

    Args:
        v: a distributed vector.
        comm: its communicator.

    Returns:
        The whole vector (a copy), on every rank.
    """
    a = v.getArray(readonly=True)
    if comm.size == 1:
        return cast(np.ndarray, a.copy())
    return np.concatenate(comm.allgather(a.copy()))


class Ops:
    """The operators at one time, as dense arrays (attributes named as in the records of
    :mod:`dolfinx_mbs.systems`: M, C, K, Kel, Kpot, f; Hamilton's Gp, Kh, Gq, pi0, h, fa, with
    Gq = G_p + D where the record has none).

    Args:
        t: the time (s), or the times of operators stacked over several times.
        version: the record's version of the matrices.
        mats: the matrices by name.
        vecs: the vectors by name.
    """

    # the fields a record may have (set from ``mats`` and ``vecs``)
    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    Kel: np.ndarray
    Kpot: np.ndarray | None
    f: np.ndarray
    Gp: np.ndarray
    Kh: np.ndarray
    Gq: np.ndarray
    pi0: np.ndarray
    h: np.ndarray
    fa: np.ndarray

    def __init__(self, t: float | np.ndarray, version: Hashable,
                 mats: Mapping[str, np.ndarray | None], vecs: Mapping[str, np.ndarray]) -> None:
        self.t, self.version = t, version
        self.__dict__.update(mats)
        self.__dict__.update(vecs)


class DenseOperators:
    """The operators of ``system`` for ``formulation`` as dense arrays on every rank.

    Args:
        system: a typed system (:mod:`dolfinx_mbs.systems`).
        formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
        energy: gather K_el and the potential stiffness too (for the energies).
        acceleration: gather C and K too (Hamilton's form: for the acceleration of reactions).
    """

    def __init__(self, system: SecondOrderSystem, formulation: str, energy: bool = True,
                 acceleration: bool = False) -> None:
        self.system, self.comm = system, system.comm
        self.formulation = formulation
        self.fields = STEP_FIELDS[formulation] + (ENERGY_FIELDS if energy else ())
        if acceleration and formulation == "hamiltonian":
            self.fields += ("C", "K")
        self.vectors = VECTORS[formulation]
        self._mats: Dict[str, np.ndarray] | None = None
        self._version: Hashable = None
        self._last: Dict[float, Ops] = {}
        #: the fitted loads (:class:`~dolfinx_mbs.integrate.dense.exact.LoadFit`) or None
        self.fit: LoadFit | None = None
        #: number of frame states gathered
        self.gathered = 0

    def _matrices(self, s: SecondOrder) -> Dict[str, np.ndarray]:
        if self._mats is None or s.version != self._version:
            mats = {}
            for k in self.fields:
                A = getattr(s, k)
                if k == "Gq" and A is None:  # fixed constraints: G_q = G_p + D
                    A = s.Gp if s.D is None else None
                    mats[k] = mats["Gp"] if A is not None else \
                        mats["Gp"] + gather_matrix(s.D, self.comm)
                    continue
                mats[k] = gather_matrix(A, self.comm)
            self._mats, self._version = mats, s.version
            self.gathered += 1
        return self._mats

    def at(self, t: float) -> Ops:
        """The operators at ``t`` (the last two times are kept).

        Args:
            t: the time (s).

        Returns:
            The operators as arrays.
        """
        t = float(t)
        o = self._last.get(t)
        if o is not None:
            return o
        if self.fit is not None:
            vecs = self.fit.values(t)
            assert self._mats is not None  # (gathered before the loads are fitted)
            o = Ops(t, self._version, self._mats, vecs)
        else:
            s = self.system.at(t)
            mats = self._matrices(s)
            vecs = {k: gather_vector(getattr(s, k), self.comm) for k in self.vectors}
            o = Ops(t, self._version, mats, vecs)
        if len(self._last) >= 2:
            self._last.pop(next(iter(self._last)))
        self._last[t] = o
        return o

    def mass_inverse(self) -> np.ndarray:
        """M^-1 of the last frame state gathered (kept while it stays; a product per use
        where a solve costs more at these sizes)."""
        if getattr(self, "_minv", (None,))[0] != self._version:
            assert self._mats is not None  # (the last frame state's, gathered)
            self._minv = (self._version, np.linalg.inv(self._mats["M"]))
        return self._minv[1]

    def constant_frame(self) -> bool:
        """:func:`constant_frame` of the system (checked again by the record's version over
        the samples of :meth:`fit_loads`)."""
        return constant_frame(self.system)

    def fit_loads(self, basis: LoadBasis, t0: float, t_end: float) -> LoadFit:
        """Fit the load vectors over [t0, t_end] in ``basis``.

        On success (the samples reproduced to round-off, matrices unchanged) later :meth:`at`
        calls need no assembly.

        Args:
            basis: the functions of time (:class:`~dolfinx_mbs.integrate.dense.exact.
                LoadBasis`).
            t0: the fit's first time (s).
            t_end: its last (s).

        Returns:
            The :class:`~dolfinx_mbs.integrate.dense.exact.LoadFit` (its ``exact`` says whether
            it holds).
        """
        times = basis.sample_times(t0, t_end)
        samples, versions = [], set()
        for t in times:
            s = self.system.at(t)
            self._matrices(s)
            versions.add(s.version)
            samples.append({k: gather_vector(getattr(s, k), self.comm) for k in self.vectors})
        fit = LoadFit(basis, t0, times, samples)
        fit.exact = fit.exact and len(versions) == 1
        self._last.clear()
        self.system.forget()
        if fit.exact:
            self.fit = fit
        return fit


class _Cache:
    """LU factorizations by key (a frame state's version and the step's shifts), the last
    few kept; solved with LAPACK's getrs directly (scipy's wrapper costs more than the
    solve at these sizes)."""

    def __init__(self, size: int = 4) -> None:
        self.size, self.lu = size, {}
        #: factorizations made
        self.count = 0

    def solve(self, key: Hashable, make: Callable[[], np.ndarray], b: np.ndarray) -> np.ndarray:
        f = self.lu.get(key)
        if f is None:
            f = sla.lu_factor(make(), check_finite=False)
            self.count += 1
            if len(self.lu) >= self.size:
                self.lu.pop(next(iter(self.lu)))
            self.lu[key] = f
        x, info = _GETRS(f[0], f[1], b)
        return cast(np.ndarray, x)


_GETRS = sla.get_lapack_funcs("getrs", (np.zeros((1, 1)),))


def _key(*x: Hashable) -> tuple:
    # shifts compared to 12 digits: the step that lands on t_end differs from dt by round-off
    return tuple(float(f"{v:.12e}") if isinstance(v, float) else v for v in x)


class Alpha2(Alpha2Steps):
    """PETSc's TSALPHA2 on M q'' + C q' + K q = f: the state (X, V, A), the stage algebra and
    the restart of :mod:`dolfinx_mbs.integrate.schemes` with the dense operators' residual and
    one LU per distinct step matrix.

    Args:
        ops: the dense operators.
        radius: the high-frequency spectral radius (None: 1).
    """

    name = "alpha2"
    momentum = False

    def __init__(self, ops: DenseOperators, radius: float | None = None) -> None:
        self.ops, self.lu = ops, _Cache()
        self._alpha2(radius)
        self.X: np.ndarray | None = None
        self.V: np.ndarray | None = None
        self.A: np.ndarray | None = None

    def initial(self, t0: float, q0: np.ndarray, v0: np.ndarray,
                p0: np.ndarray | None = None) -> None:
        """The state at ``t0``: q0, v0 and a zero acceleration (the restart estimates it).

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum (not this form's).
        """
        self.X, self.V, self.A = q0.copy(), v0.copy(), np.zeros_like(q0)
        self._wv, self._wa, self._w = (np.empty_like(q0) for _ in range(3))
        self.started = False

    def _state_arrays(self) -> tuple:
        return self.X, self.V, self.A

    def _stage(self, t: float, h: float, params: tuple, zero_a: bool) -> None:
        assert self.X is not None and self.V is not None and self.A is not None  # (initial)
        af = params[1]
        if zero_a:
            self.A[:] = 0.0
        o = self.ops.at(t + af * h)
        c = alpha2_coefficients(h, params)
        alpha2_stage_values(self.V, self.A, c, self._wv, self._wa)
        F = (o.M @ self._wa + o.C @ self._wv + o.K @ self.X - o.f) / af
        dX = self.lu.solve(_key(o.version, c.sv, c.sa), lambda: o.K + c.sv * o.C + c.sa * o.M,
                           F)
        self.X -= dX
        alpha2_advance(self.V, self.A, dX, h, c, self._w)

    def state(self, t: float, need_v: bool = True) -> Tuple[np.ndarray, np.ndarray]:
        """(q, v): the stepped state at ``t``.

        Args:
            t: the output time just reached (s).
            need_v: whether v is read (it is at hand).

        Returns:
            (q, v).
        """
        assert self.X is not None and self.V is not None  # (set by initial)
        return self.X, self.V

    def raw(self) -> Tuple[np.ndarray, np.ndarray]:
        """(q, v): the stepped state."""
        assert self.X is not None and self.V is not None  # (set by initial)
        return self.X, self.V


class _Maps:
    """A step's map (:func:`dolfinx_mbs.integrate.schemes.crank_nicolson_maps`,
    :func:`~dolfinx_mbs.integrate.schemes.midpoint_maps`) by key (the frame states' versions
    and the step), the last few kept: with unit load columns, so that a step of operators
    already seen is two small products."""

    def __init__(self, size: int = 4) -> None:
        self.size, self.maps = size, {}
        #: maps formed
        self.count = 0

    def get(self, key: Hashable, make: Callable[[], np.ndarray]) -> np.ndarray:
        P = self.maps.get(key)
        if P is None:
            P = make()
            self.count += 1
            if len(self.maps) >= self.size:
                self.maps.pop(next(iter(self.maps)))
            self.maps[key] = P
        return P


def _stack(o: Ops, names: Sequence[str]) -> Dict[str, np.ndarray]:
    """The operators ``names`` of ``o`` as stacks of one (1, n, n)."""
    return {k: getattr(o, k)[None] for k in names}


class _Theta:
    """TSTHETA (theta = 1/2) on E(t) y' + B(t) y = g(t) for y = (a, b) in two blocks, a step
    the map of :mod:`dolfinx_mbs.integrate.schemes` (formed once per distinct operators and
    step)."""

    def __init__(self, ops: DenseOperators) -> None:
        self.ops, self.maps = ops, _Maps()
        self.y: np.ndarray | None = None

    #: the state's second block is the momentum p (Hamilton's form), not the velocity
    momentum = False

    def state(self, t: float, need_v: bool = True) -> Tuple[np.ndarray, np.ndarray]:
        """The two blocks of the stepped state at ``t``.

        Args:
            t: the output time just reached (s).
            need_v: whether the second block is read.

        Returns:
            (q, v), or (q, p) in Hamilton's form.
        """
        assert self.y is not None  # (set by initial)
        n = self.y.shape[0] // 2
        return self.y[:n], self.y[n:]

    def raw(self) -> Tuple[np.ndarray, np.ndarray]:
        """(q, v) or (q, p): the stepped state."""
        assert self.y is not None  # (set by initial)
        n = self.y.shape[0] // 2
        return self.y[:n], self.y[n:]


class CrankNicolson(_Theta):
    """The first-order form y = (q, v): E = diag(I, M), B = [[0, -I], [K, C]], g = (0, f);
    TSTHETA with endpoint (:func:`dolfinx_mbs.integrate.schemes.crank_nicolson_maps`; PETSc's
    affine term B0 y0 - g0, the mass taken at t1)."""

    name = "theta"

    def initial(self, t0: float, q0: np.ndarray, v0: np.ndarray,
                p0: np.ndarray | None = None) -> None:
        """The state at ``t0``: y = (q0, v0).

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum (not this form's).
        """
        self.y = np.concatenate([q0, v0])

    def step(self, t: float, h: float) -> None:
        """The step from ``t`` to ``t + h``.

        Args:
            t: the step's start (s).
            h: its size (s).
        """
        o0, o1 = self.ops.at(t), self.ops.at(t + h)
        n = o1.M.shape[0]

        def make() -> np.ndarray:
            P = np.empty((1, 2 * n, 3 * n))
            crank_nicolson_maps(_stack(o0, ("K", "C")), _stack(o1, ("K", "C")), o1.M[None],
                                np.array([h]), np.eye(n)[None], P)
            return cast(np.ndarray, P[0])
        P = self.maps.get(_key(o0.version, o1.version, 2.0 / h), make)
        y = P[:, :2 * n] @ self.y
        y += P[:, 2 * n:] @ (o0.f + o1.f)
        self.y = y


class Midpoint(_Theta):
    """Hamilton's form y = (q, p): E = [[M, 0], [G_q, I]], B = [[G_p, -I], [K_h, 0]],
    g = (-pi_0, f_a - h); TSTHETA without endpoint (:func:`dolfinx_mbs.integrate.schemes.
    midpoint_maps`: the stage at t + h/2, y1 = 2 X - y0 as PETSc: y0 + h X')."""

    name = "theta"
    momentum = True

    def initial(self, t0: float, q0: np.ndarray, v0: np.ndarray,
                p0: np.ndarray | None = None) -> None:
        """The state at ``t0``: y = (q0, p0), p0 from v0 where not given.

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity (read where ``p0`` is None).
            p0: the momentum, or None.
        """
        if p0 is None:
            o = self.ops.at(t0)
            p0 = o.M @ v0 + o.Gp @ q0 + o.pi0
        self.y = np.concatenate([q0, p0])

    def step(self, t: float, h: float) -> None:
        """The step from ``t`` to ``t + h``.

        Args:
            t: the step's start (s).
            h: its size (s).
        """
        o = self.ops.at(t + 0.5 * h)
        n = o.M.shape[0]

        def make() -> np.ndarray:
            P = np.empty((1, 2 * n, 4 * n))
            eye, zero = np.eye(n), np.zeros((n, n))
            midpoint_maps(_stack(o, ("Gp", "Gq", "Kh")), o.M[None], np.array([h]),
                          np.hstack([eye, zero])[None], np.hstack([zero, eye])[None], P)
            return cast(np.ndarray, P[0])
        P = self.maps.get(_key(o.version, 2.0 / h), make)
        y = P[:, :2 * n] @ self.y
        y += P[:, 2 * n:3 * n] @ o.pi0
        y += P[:, 3 * n:] @ (o.h - o.fa)
        self.y = y

    def state(self, t: float, need_v: bool = True) -> Tuple[np.ndarray, np.ndarray]:
        """(q, v): v from M v = p - G_p q - pi_0 at ``t``.

        Args:
            t: the output time just reached (s).
            need_v: v is read (else zero; M^-1 kept once per state where it is).

        Returns:
            (q, v).
        """
        assert self.y is not None  # (set by initial)
        n = self.y.shape[0] // 2
        q, p = self.y[:n], self.y[n:]
        if not need_v:
            return q, np.zeros(n)
        o = self.ops.at(t)
        return q, self.ops.mass_inverse() @ (p - o.Gp @ q - o.pi0)


#: the scheme of each formulation
SCHEMES = {"second-order": Alpha2, "first-order": CrankNicolson, "hamiltonian": Midpoint}
