"""Instability named during a run: a divergent state found by the inertia of the stiffness.

A steady frame state is statically unstable (divergent) when the symmetric part of the reduced
stiffness K + K_omega + K_alpha (+ K_sigma) has negative eigenvalues: spin softening exceeds the
elastic stiffness in that many directions (``docs/theory.md`` section 3), and the motion grows like
e^(s t). :class:`Stability` counts them (the negative pivots of an LDL^T factorization by MUMPS,
Sylvester's law of inertia; :meth:`dolfinx_mbs.static.StaticSolver.inertia`), or, in a run whose
step solver is multigrid (where a factorization of the size of the problem is what does not
fit), from the lowest eigenvalues of the symmetric part by LOBPCG preconditioned with GAMG
(:func:`negative_by_lobpcg`: no factorization; a count of at least one), at the first step
and again whenever the frames' state has changed since the last check, at most every
``every`` steps. When some are found, the growth rate s and the shape of the unstable mode
come from the gyroscopic eigenproblem (lambda^2 M + lambda G + K) x = 0 about that state
(:func:`dolfinx_mbs.modal.gyroscopic_modes`, shift-and-invert at the rate estimated without
Coriolis coupling): a real root s > 0 is a divergence. Coriolis coupling can stabilize an even
number of negative directions (gyroscopic stabilization): such a state is logged, not
reported. Bodies with nonlinear strain are not checked (their stiffness is the tangent about
the run's state, which this check does not form).

What is reported (:class:`Instability`, in ``Result.instabilities``) is the same on every rank:
a warning (:class:`InstabilityWarning`) by default, an error (:class:`InstabilityError`) with
``stability="error"``. Not detected here: flutter (complex roots with a positive real part,
from damping or circulatory terms), which :meth:`dolfinx_mbs.Model.modes` shows as negative
damping ratios.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import warnings
from typing import TYPE_CHECKING, List, Tuple, cast

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc
from slepc4py import SLEPc

from dolfinx_mbs.integrate.observers import Observer, Step
from dolfinx_mbs.modal.eigen import generalized_frequencies, pencil_modes
from dolfinx_mbs.petsc_options import SolverOptions
from dolfinx_mbs.static.solver import StaticSolver
from dolfinx_mbs.systems.rigid_modes import rigid_subspace

if TYPE_CHECKING:
    from dolfinx_mbs.systems.rigid_modes import RigidSubspace
    from dolfinx_mbs.systems.second_order import SecondOrderSystem
    from dolfinx_mbs.systems.velocity import VelocitySystem

__all__ = ["Instability", "InstabilityWarning", "InstabilityError", "Stability", "MODES",
           "negative_by_lobpcg", "LOBPCG_OPTIONS"]

log = logging.getLogger(__name__)

#: what ``integrate(stability=...)`` takes
MODES = ("warn", "error", "off")


class InstabilityWarning(RuntimeWarning):
    """A run passed through an unstable (divergent) state."""


class InstabilityError(RuntimeError):
    """A run met an unstable (divergent) state and ``stability="error"`` was asked for."""


@dataclasses.dataclass
class Instability:
    """An unstable state met by a run.

    Attributes:
        t: the time of the check that found it (s).
        negative: the number of negative eigenvalues of the reduced stiffness.
        rate: the growth rate s of the unstable mode (1/s; the motion grows like e^(s t)),
            NaN when the eigensolver did not give it.
        where: the mode's largest displacement: ``(body name, point, component)``.
    """

    t: float
    negative: int
    rate: float
    where: Tuple[str, Tuple[float, ...], int] | None = None
    #: False when ``negative`` is a lower bound (counted among the lowest eigenvalues only)
    exact_count: bool = True

    def message(self) -> str:
        """The warning's or the error's words: the time, the count, the rate and where."""
        rate = (f"growth rate {self.rate:.4g} 1/s (e-folding time {1.0 / self.rate:.3g} s)"
                if math.isfinite(self.rate) and self.rate > 0 else "growth rate unknown")
        at = ""
        if self.where is not None:
            name, p, c = self.where
            at = (f"; the mode's largest motion is at body {name!r}, point "
                  f"({', '.join(f'{x:.4g}' for x in p)}), component {c}")
        return (f"unstable (divergent) state at t={self.t:g}: the reduced stiffness with spin "
                f"softening has {'' if self.exact_count else 'at least '}{self.negative} "
                f"negative eigenvalue(s); {rate}{at}. The spin "
                "is above a divergence speed, or a body is not held against rigid motion")


def dense_inertia(K: np.ndarray) -> int | np.ndarray:
    """The number of negative eigenvalues of the symmetric part of a dense matrix.

    Args:
        K: a matrix (n, n) or a stack of them (N, n, n).

    Returns:
        The number of eigenvalues below round-off of the largest; for a stack, the N counts
        as an array.
    """
    lam = np.linalg.eigvalsh(K + np.swapaxes(K, -1, -2))
    neg = np.count_nonzero(lam < -1e-13 * np.abs(lam).max(axis=-1, keepdims=True), axis=-1)
    return int(neg) if K.ndim == 2 else neg


#: the multigrid check's eigensolver (options prefix ``mbs_stability_``: e.g.
#: ``-mbs_stability_eps_tol``); its defaults
LOBPCG_OPTIONS = SolverOptions("mbs_stability_", {"eps_tol": 1e-6, "eps_max_it": 1000})
#: how many of the lowest eigenvalues the multigrid check computes (the count it reports is
#: of these)
LOBPCG_NEV = 2


def negative_by_lobpcg(K: PETSc.Mat, M: PETSc.Mat, P: PETSc.Mat | None = None,
                       near_nullspace: PETSc.NullSpace | None = None) -> Tuple[int, float]:
    """(count, lowest): how many of the :data:`LOBPCG_NEV` lowest eigenvalues of the symmetric
    part of ``K`` relative to ``M`` are negative, and the lowest (rad^2/s^2), by SLEPc's LOBPCG
    preconditioned by CG + GAMG on ``P`` (to 1e-2; default: that symmetric part; the elastic
    stiffness, positive definite, where spin softening dominates), ``near_nullspace`` the
    rigid-body modes -- no factorization. (0, nan) with a logged warning when it does not
    converge.

    Args:
        K: the stiffness.
        M: the mass.
        P: the matrix GAMG coarsens, or None.
        near_nullspace: the rigid-body modes, or None.

    Returns:
        (count, lowest).
    """
    S = K.transpose(PETSc.Mat())
    S.axpy(1.0, K)  # K + K^T: twice the symmetric part
    S.setOption(PETSc.Mat.Option.SYMMETRIC, True)
    P = S if P is None else P
    if near_nullspace is not None:
        P.setNearNullSpace(near_nullspace)
    eps = SLEPc.EPS().create(K.getComm())
    try:
        eps.setOperators(S, M)
        eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
        eps.setType(SLEPc.EPS.Type.LOBPCG)
        eps.setWhichEigenpairs(SLEPc.EPS.Which.SMALLEST_REAL)
        eps.setDimensions(nev=LOBPCG_NEV)
        st = eps.getST()
        st.setType(SLEPc.ST.Type.PRECOND)
        st.setPreconditionerMat(P)
        ksp = st.getKSP()  # a few CG iterations on P with GAMG (one GAMG application alone
        ksp.setType(PETSc.KSP.Type.CG)  # converges 5-10x slower, and crashes on 2 ranks)
        ksp.setTolerances(rtol=1e-2, max_it=20)
        ksp.getPC().setType(PETSc.PC.Type.GAMG)
        eps.setOptionsPrefix(LOBPCG_OPTIONS.prefix)
        LOBPCG_OPTIONS.set_from_options(eps)
        eps.solve()
        nc = eps.getConverged()
        if nc < 1:
            log.warning("divergence check: LOBPCG did not converge in %d iterations (not "
                        "checked)", eps.getIterationNumber())
            return 0, math.nan
        lam = np.array([0.5 * eps.getEigenvalue(i).real for i in range(min(nc, LOBPCG_NEV))])
        return int(np.count_nonzero(lam < 0.0)), float(lam.min())
    finally:
        eps.destroy()
        S.destroy()


class Stability(Observer):
    """Checks the frames' state of a run for divergence (see the module docstring).

    Args:
        system: the run's typed system (one with ``pencil``; other systems are not checked).
        mode: ``"warn"`` or ``"error"``.
        every: the fewest steps between two checks of a changing frame state.
        multigrid: the run's step solver is multigrid: check by :func:`negative_by_lobpcg`
            (bodies left free by their constraints are still checked by a factorization).
    """

    whole_run = True  # the dense stepper shows it a whole run's states (Step.dense)

    def __init__(self, system: SecondOrderSystem | VelocitySystem, mode: str, every: int,
                 multigrid: bool = False) -> None:
        self.system, self.mode, self.every = system, mode, max(1, int(every))
        self.multigrid = bool(multigrid)
        self._exact = True  # the last count is exact (a factorization's inertia)
        self._lowest = math.nan  # the lowest eigenvalue the multigrid check found
        self.found: List[Instability] = []
        self._solver = StaticSolver(system.comm)
        self._last_state: np.ndarray | None = None  # the frames' (omega, alpha) last checked
        self._last_index: int | None = None
        self._unstable = False
        # the rigid motions the constraints leave free, and whether there are any (None: not
        # looked for yet)
        self._rigid: RigidSubspace | None = None
        self._free: bool | None = None
        # frames whose state does not change: one check
        self._steady = all(b.frame is None or b.frame.time_invariant for b in system.bodies)

    def _frame_state(self, t: float) -> np.ndarray:
        states = [b.frame.state(t) if b.frame is not None else None for b in self.system.bodies]
        return np.array([np.r_[s.omega, s.alpha] if s is not None else np.zeros(6)
                         for s in states])

    def observe(self, step: Step) -> List[float]:
        """Check the frame state of ``step`` where it is due and changed (no columns).

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        if self._last_index is not None and (self._steady or
                                             step.index - self._last_index < self.every):
            return []
        state = self._frame_state(step.t)
        if self._last_state is not None and np.array_equal(state, self._last_state):
            self._last_index = step.index  # unchanged: looked at again ``every`` steps on
            return []
        self._last_state, self._last_index = state, step.index
        dense = step.dense[2].at(step.t) if step.dense is not None else None
        negative = None
        if dense is not None and not self._free and hasattr(dense, "Kpot"):
            negative = cast(int, dense_inertia(dense.Kpot))  # the dense path's K at hand
        if self._free is None and (negative is None or negative > 0):
            # free rigid motions (softened by the spin) count only where negatives are found
            self._rigid = rigid_subspace(self.system, step.t)
            self._free = self._rigid is not None
        if self._free:  # held by the border of rigid_modes: its -cI block adds dim negatives
            ops = self.system.at(step.t)
            assert self._rigid is not None  # (free: rigid motions found)
            negative = self._solver.inertia(self._rigid.border(ops.K, None, ops.M)[0]) - \
                self._rigid.dim
        elif negative is None and self.multigrid:
            ops = self.system.at(step.t)
            nullspace = self.system.near_nullspace() \
                if hasattr(self.system, "near_nullspace") else None
            negative, lowest = negative_by_lobpcg(ops.K, ops.M, ops.Kel, nullspace)
            self._exact, self._lowest = False, lowest
            log.info("divergence check at t=%g by LOBPCG: lowest eigenvalue of the stiffness "
                     "%.6g rad^2/s^2", step.t, lowest)
        elif negative is None:
            negative = self._solver.inertia(self.system.at(step.t).K)
        unstable = negative > 0
        if unstable and not self._unstable:
            found = self._describe(step.t, negative)
            if found is not None:
                self.found.append(found)
                if self.mode == "error":
                    raise InstabilityError(found.message())
                warnings.warn(found.message(), InstabilityWarning, stacklevel=2)
            unstable = found is not None
        self._unstable = unstable
        return []

    def clear(self, Kpot: np.ndarray) -> bool:
        """True when the dense stiffnesses ``Kpot`` (N, n, n) of a whole run's steps have no
        negative eigenvalue at any step this observer would check (every :attr:`every`-th,
        from the first): then it would find nothing, and need not see the steps.

        Args:
            Kpot: the stiffnesses (N, n, n).

        Returns:
            Whether none has a negative eigenvalue.
        """
        return not cast(np.ndarray, dense_inertia(Kpot[::self.every])).any()

    def close(self) -> None:
        """Release the static solver and the rigid motions (collective)."""
        self._solver.destroy()  # its MUMPS factorization: collective, here on every rank
        if self._rigid is not None:
            self._rigid.destroy()
            self._rigid = None

    def _describe(self, t: float, negative: int) -> Instability | None:
        """The unstable root and mode at ``t``, or None when Coriolis coupling stabilizes the
        negative directions."""
        n = min(negative + 2, self.system.n_reduced)
        Kr, Gr, Mr = self.system.pencil(t, n, "gyroscopic")
        try:
            if self._free:  # the rates of spin softening lie below the spin rate
                assert self._last_state is not None  # (kept by observe)
                s0 = 0.5 * float(np.abs(self._last_state[:, :3]).max())
            elif not self._exact and self._lowest < 0.0:  # the rate without Coriolis coupling
                s0 = math.sqrt(-self._lowest)
            else:
                w = generalized_frequencies(Kr, Mr, n)
                s0 = float(-w.min()) if w.min() < 0 else 0.0
            lam, vecs, _ = pencil_modes(Kr, Gr, Mr, min(negative, 4), self._rigid, shift=s0)
        except RuntimeError as e:
            log.warning("t=%g: %d negative eigenvalue(s) of the reduced stiffness; the "
                        "eigensolver gave no growth rate (%s)", t, negative, e)
            return Instability(t=t, negative=negative, rate=math.nan,
                               exact_count=self._exact)
        k = int(np.argmax(lam.real))   # the fastest growing of the roots found
        z = complex(lam[k])
        try:
            if z.real <= 1e-8 * abs(z):
                log.info("t=%g: %d negative eigenvalue(s) of the reduced stiffness, "
                         "stabilized by Coriolis coupling (nearest root %s)", t, negative, z)
                return None
            where = self._largest(vecs[k][0])
        finally:
            for xr, xi in vecs:
                xr.destroy()
                xi.destroy()
        return Instability(t=t, negative=negative, rate=z.real, where=where,
                           exact_count=self._exact)

    def _largest(self, xr: PETSc.Vec) -> Tuple[str, Tuple[float, ...], int]:
        """Body, point and component of the largest entry of the reduced vector ``xr``."""
        system = self.system
        space = system.space
        full = system.expand(xr, out=space.create_vec())
        arr = full.getArray(readonly=True)
        best = (-1.0, 0, 0, 0)   # value, body, node, component (local)
        for i, body in enumerate(system.bodies):
            part = np.abs(arr[space.offsets[i]: space.offsets[i + 1]])
            if part.size:
                k = int(np.argmax(part))
                if part[k] > best[0]:
                    bs = space.bs[i]
                    best = (float(part[k]), i, k // bs, k % bs)
        full.destroy()
        comm = system.comm.tompi4py() if hasattr(system.comm, "tompi4py") else system.comm
        _, owner = comm.allreduce((best[0], comm.rank), op=MPI.MAXLOC)
        info = None
        if comm.rank == owner:
            _, i, node, c = best
            body = system.bodies[i]
            x = body.V.tabulate_dof_coordinates()[node][: body.gdim]
            info = (body.name, tuple(float(v) for v in x), int(c))
        return cast("tuple[str, tuple[float, ...], int]", comm.bcast(info, root=owner))
