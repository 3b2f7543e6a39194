"""The unbalance response of a rotor in the stationary frame: the synchronous forced response
over a speed range, solved in the frequency domain (docs/theory.md section 9).

    resp = model.unbalance_response(speeds, unbalances=[(disk, 1e-4, 0.0)], probes=[disk])
    resp.amplitude        # (speeds, probes, 2): |x|, |y| at each probe (m)
    resp.phase            # the same, degrees (lag of the response behind the unbalance: < 0)
    resp.critical_speeds  # peaks with their API 684 half-power amplification factors

An unbalance m_e (kg m) at the angle ``phase`` turns with the rotor: its force on the rotor is
Re(F e^{i Omega t}) with F = Omega^2 m_e e^{i phase} (e1 - i e2)
(:func:`dolfinx_mbs.forms.stationary.unbalance_force`), and the synchronous response
x = Re(X e^{i Omega t}) solves, at each speed,

    Z(Omega) X = Omega^2 f,   Z = K(Omega) - Omega^2 M + i Omega (G(Omega) + C(Omega)),

on the constrained system (reduced coordinates), K, G, C from the sweep's pencil
(:class:`dolfinx_mbs.campbell.SweepPencil`: constant matrices with speed coefficients).

**Solver.** One real factorization P = K + s C + s^2 M at a real shift s (the speed range's
middle) serves every speed: the response is sought in a space X (real, orthonormal columns)
by Galerkin projection of Z (a small complex solve per speed), and each speed's residual
r = Z X y - Omega^2 f is checked by one solve, ||P^-1 r|| <= ``tol`` ||X y||, its P^-1 r
(real and imaginary parts) joining X where it is not (a preconditioned residual step). The
space starts from P^-1 f and grows with the speeds, holding the critical speeds' modes once
they were met. The products of the constant matrices with X are kept, so a speed costs
small dense algebra and, while converged, one block solve.

**Critical speeds.** Each local maximum of a probe's amplitude (x and y, and the orbit's major
semi-axis) is refined (golden-section search between its neighbouring speeds, each evaluation
a projected solve with its check), and its half-power speeds N1 < Nc < N2 found where the
amplitude is peak / sqrt(2) (Brent's method): the amplification factor is
AF = Nc / (N2 - N1) (API 684). Units: SI, rad/s, degrees for phases.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from typing import TYPE_CHECKING, Callable, List, Mapping, Sequence, Tuple, cast

import numpy as np
from mpi4py import MPI

from dolfinx_mbs import checks, compat
from dolfinx_mbs.bodies.attachments import Bearing, Disk
from dolfinx_mbs.campbell.pencil import SweepPencil, speed_terms
from dolfinx_mbs.campbell.subspace import ShiftedFactor, block_mult
from dolfinx_mbs.frames.stationary import Stationary

if TYPE_CHECKING:
    import os

    from numpy.typing import ArrayLike
    from petsc4py import PETSc

    from dolfinx_mbs.campbell.subspace import Terms
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["unbalance_response", "UnbalanceResponse", "Peak"]

#: rad/s -> rpm
RPM = 30.0 / math.pi


@dataclasses.dataclass(frozen=True)
class Peak:
    """A peak of a probe's response (a critical speed) and its API 684 amplification factor.

    Attributes:
        probe: the probe's index.
        direction: "x", "y" (across the axis) or "major" (the orbit's major semi-axis).
        speed: Nc, the speed of the peak (rad/s).
        amplitude: the peak amplitude (m).
        lower, upper: N1, N2, the half-power speeds (rad/s; NaN where outside the range).
        amplification: Nc / (N2 - N1) (NaN when a half-power speed is missing).
    """

    probe: int
    direction: str
    speed: float
    amplitude: float
    lower: float
    upper: float
    amplification: float


@dataclasses.dataclass
class UnbalanceResponse:
    """The synchronous response over the speeds, the same on every rank.

    Attributes:
        speeds: (rad/s).
        response: complex amplitudes (speeds, probes, 2) along the axes e1, e2 across the spin
            axis (m): the motion is Re(X e^{i Omega t}).
        probes: the probes' labels.
        critical_speeds: the peaks (:class:`Peak`).
        stats: the solver's counts: ``solves`` (block solves with the factorization),
            ``columns`` (of the response's space), ``evaluations`` (speeds solved, the
            refinement's included).
        rank: this process's rank (rank 0 writes files).
    """

    speeds: np.ndarray
    response: np.ndarray
    probes: List[str]
    critical_speeds: List[Peak]
    stats: dict = dataclasses.field(default_factory=dict)
    rank: int = dataclasses.field(default=0, repr=False, compare=False)

    @property
    def amplitude(self) -> np.ndarray:
        """``|X|`` per direction (m)."""
        return np.abs(self.response)

    @property
    def phase(self) -> np.ndarray:
        """Arg X per direction (degrees): the phase of the response against the unbalance's
        force along that axis (lag negative)."""
        return cast(np.ndarray, np.degrees(np.angle(self.response)))

    @property
    def major(self) -> np.ndarray:
        """The orbit's major semi-axis at each speed and probe (m)."""
        return _major(self.response)

    def to_csv(self, path: str | os.PathLike) -> None:
        """One row per speed and probe: speed (rad/s, rpm), probe, the real and imaginary
        parts, amplitudes and phases (degrees) along x and y, the orbit's major semi-axis.
        Rank 0 writes.

        Args:
            path: the file to write.
        """
        if self.rank != 0:
            return
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["speed_rad_s", "speed_rpm", "probe", "x_re", "x_im", "y_re", "y_im",
                        "x_amplitude", "x_phase_deg", "y_amplitude", "y_phase_deg", "major"])
            amp, ph, maj = self.amplitude, self.phase, self.major
            for i, s in enumerate(self.speeds):
                for j, name in enumerate(self.probes):
                    X = self.response[i, j]
                    vals = [X[0].real, X[0].imag, X[1].real, X[1].imag, amp[i, j, 0],
                            ph[i, j, 0], amp[i, j, 1], ph[i, j, 1], maj[i, j]]
                    w.writerow([repr(float(s)), repr(float(s * RPM)), name]
                               + [repr(float(v)) for v in vals])

    def peaks_to_csv(self, path: str | os.PathLike) -> None:
        """The critical speeds and amplification factors, one row each (rank 0 writes).

        Args:
            path: the file to write.
        """
        if self.rank != 0:
            return
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["probe", "direction", "speed_rad_s", "speed_rpm", "amplitude",
                        "n1_rad_s", "n2_rad_s", "amplification_factor"])
            for p in self.critical_speeds:
                w.writerow([self.probes[p.probe], p.direction]
                           + [repr(float(v)) for v in (p.speed, p.speed * RPM, p.amplitude,
                                                       p.lower, p.upper, p.amplification)])

    def plot(self, path: str | os.PathLike, probe: int = 0, title: str | None = None) -> None:
        """The Bode plot (amplitude and phase against speed) and the polar plot of ``probe``
        (matplotlib, Agg; rank 0 draws).

        Args:
            path: the file to write.
            probe: the probe's index.
            title: the plot's title.
        """
        if self.rank != 0:
            return
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(11.0, 5.0))
        FigureCanvasAgg(fig)
        x = self.speeds * RPM
        a1 = fig.add_subplot(2, 2, 1)
        a2 = fig.add_subplot(2, 2, 3, sharex=a1)
        a3 = fig.add_subplot(1, 2, 2)
        for d, lab in ((0, "x"), (1, "y")):
            a1.semilogy(x, self.amplitude[:, probe, d], label=lab)
            a2.plot(x, self.phase[:, probe, d], label=lab)
            X = self.response[:, probe, d]
            a3.plot(X.real, X.imag, ".-", ms=3, label=lab)
        a1.semilogy(x, self.major[:, probe], "k--", lw=0.8, label="major semi-axis")
        for p in self.critical_speeds:
            if p.probe == probe and p.direction == "major":
                a1.axvline(p.speed * RPM, color="grey", lw=0.6)
                a1.annotate(f"AF {p.amplification:.1f}", (p.speed * RPM, p.amplitude),
                            fontsize=8)
        a1.set_ylabel("amplitude (m)")
        a2.set_ylabel("phase (deg)")
        a2.set_xlabel("spin speed (rpm)")
        a3.set_xlabel("Re (m)")
        a3.set_ylabel("Im (m)")
        a3.set_aspect("equal", adjustable="datalim")
        for a in (a1, a2, a3):
            a.grid(alpha=0.3)
            a.legend(fontsize=8)
        fig.suptitle(title or f"Unbalance response at {self.probes[probe]}")
        fig.tight_layout()
        fig.savefig(path, dpi=120)


def _major(R: np.ndarray) -> np.ndarray:
    """The major semi-axis of the ellipse Re((X, Y) e^{i t}) for the last axis (X, Y)."""
    X, Y = R[..., 0], R[..., 1]
    p = 0.5 * (np.abs(X) ** 2 + np.abs(Y) ** 2)
    q = np.abs(0.5 * (X * X + Y * Y))
    return cast(np.ndarray, np.sqrt(p + q))


# -- loads and probes on the full vector -----------------------------------------------------
class _Sites:
    """The unbalances' load vector (complex, per Omega^2) and the probes' functionals, as full
    vectors (real and imaginary parts), on a system of stationary-frame bodies."""

    def __init__(self, system: SecondOrderSystem, unbalances: Sequence[tuple],
                 probes: Sequence) -> None:
        self.system = system
        space = system.space
        self.f = [space.create_vec(), space.create_vec()]   # Re, Im of f (per Omega^2)
        for v in self.f:
            v.zeroEntries()
        if not unbalances:
            raise ValueError("unbalance_response: give at least one unbalance (where, m_e, "
                             "phase)")
        for k, u in enumerate(unbalances):
            try:
                where, me, phase = u
            except (TypeError, ValueError):
                raise ValueError(f"unbalances[{k}] must be (point or disk, m_e, phase), got "
                                 f"{u!r}") from None
            me = checks.real(me, f"unbalances[{k}] m_e")
            phase = checks.real(phase, f"unbalances[{k}] phase")
            F = me * np.exp(1j * phase) * np.array([1.0, -1.0j])   # along e1, e2
            self._add(where, F, f"unbalances[{k}]")
        self.probes, self.labels = [], []
        if not probes:
            raise ValueError("unbalance_response: give at least one probe (a point or an "
                             "attachment)")
        for k, p in enumerate(probes):
            vecs = [space.create_vec(), space.create_vec()]
            for d, v in enumerate(vecs):
                v.zeroEntries()
                self._add(p, np.eye(2)[d], f"probes[{k}]", v)
            self.probes.append(vecs)
            self.labels.append(p.name if isinstance(p, (Disk, Bearing)) else
                               "point " + np.array2string(np.asarray(p, dtype=float),
                                                          precision=4, separator=", "))

    def _body(self, where: Disk | Bearing | ArrayLike) -> int | None:
        bodies = self.system.bodies
        if isinstance(where, (Disk, Bearing)):
            if not any(where.body is b for b in bodies):
                raise ValueError(f"{where.kind} {where.name!r} is not on a body of this model")
            return bodies.index(where.body)
        return None

    def _add(self, where: Disk | Bearing | ArrayLike, F: np.ndarray, what: str,
             out: PETSc.Vec | None = None) -> None:
        """Add the complex (e1, e2) force F at ``where`` to ``self.f`` (or, real, to ``out``:
        a probe's functional of the mean motion or the node's displacement)."""
        space = self.system.space
        ib = self._body(where)
        targets = self.f if out is None else [out]
        parts = [F.real, F.imag] if out is None else [np.asarray(F, dtype=float)]
        if ib is not None:  # a disk or a bearing
            body = cast("Disk | Bearing", where).body
            ops = self.system.assembly.body_operators[ib]
            assert ops.rotor is not None  # (a body with disks or bearings)
            jm = ops.rotor.maps[id(where)]
            lo = space.offsets[ib]
            bs = body.V.dofmap.index_map_bs
            start = body.V.dofmap.index_map.local_range[0] * bs
            n_own = body.V.dofmap.index_map.size_local * bs
            own = (jm.index >= start) & (jm.index < start + n_own)
            loc = jm.index[own] - start + lo
            for vec, Fp in zip(targets, parts):
                vals = Fp[0] * jm.L[0, own] + Fp[1] * jm.L[1, own]
                vec.array[loc] += vals
            return
        p = checks.point3(cast("ArrayLike", where), what)
        found = None
        for jb, body in enumerate(self.system.bodies):
            if not isinstance(body.frame, Stationary):
                continue
            cells = compat.colliding_cells(body.mesh, p[None, :])
            inside = body.comm.allreduce(len(cells.links(0)) > 0, op=MPI.LOR)
            if inside:
                found = jb
                break
        if found is None:
            raise ValueError(f"{what}: the point {p.tolist()} lies in no body of the model in "
                             "a Stationary frame (an unbalance or probe must be inside a rotor)")
        body = self.system.bodies[found]
        node = body.locate_node(p, tol=1.0)
        E = body.frame.transverse  # (2, 3)
        if node is not None:
            lo = space.offsets[found]
            for vec, Fp in zip(targets, parts):
                vec.array[lo + node * 3: lo + node * 3 + 3] += Fp @ E

    def destroy(self) -> None:
        for v in self.f + [v for pair in self.probes for v in pair]:
            v.destroy()


# -- the solver ------------------------------------------------------------------------------
class _Space:
    """The response's space X with the constant matrices' products and projections."""

    def __init__(self, comm: MPI.Comm) -> None:
        self.mpi = comm.tompi4py() if hasattr(comm, "tompi4py") else comm
        self.X: np.ndarray | None = None
        self.prods, self.proj = {}, {}

    def dots(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, self.mpi.allreduce(A.T @ B, op=MPI.SUM))

    def extend(self, W: np.ndarray, mats: Mapping[str, PETSc.Mat]) -> int:
        scale = max(float(np.max(np.diag(self.dots(W, W)))), 1e-300)
        for _ in range(2):
            if self.X is not None:
                W = W - self.X @ self.dots(self.X, W)
            gram = self.dots(W, W)
            d, U = self.mpi.bcast(np.linalg.eigh(gram) if self.mpi.rank == 0 else None, root=0)
            keep = d > 1e-22 * scale
            W = W @ (U[:, keep] / np.sqrt(d[keep]))
            scale = 1.0
        c = int(W.shape[1])
        if c == 0:
            return 0
        for name, A in mats.items():
            AW = block_mult(A, W)
            if self.X is None:
                self.prods[name], self.proj[name] = AW, self.dots(W, AW)
                continue
            AX = self.prods[name]
            top = np.hstack([self.proj[name], self.dots(self.X, AW)])
            self.proj[name] = np.vstack([top, np.hstack([self.dots(W, AX), self.dots(W, AW)])])
            self.prods[name] = np.hstack([AX, AW])
        self.X = W if self.X is None else np.hstack([self.X, W])
        return c


class _Solver:
    """The frequency-domain solves at any speed (module docstring)."""

    def __init__(self, sweep: SweepPencil, f: Sequence[np.ndarray], probes: np.ndarray,
                 comm: MPI.Comm, shift: float, tol: float, speed: float, max_iter: int = 40
                 ) -> None:
        self.sweep, self.comm, self.tol, self.max_iter = sweep, comm, tol, max_iter
        self.f = f                    # local rows of (Re f, Im f), per Omega^2
        self.P = probes               # local rows of the probes' functionals (n, 2 probes)
        self._px: np.ndarray | None = None
        self.space = _Space(comm)
        self.factor = ShiftedFactor(comm, shift)
        K, G, M = sweep(speed)        # P = K + s G + s^2 M of the pencil at ``speed``
        self.factor.update(K, G, M)
        self.stats = {"solves": 1, "columns": 0, "evaluations": 0}
        self._fp: np.ndarray | None = None
        self._grow(self.factor.solve(np.column_stack(f)), speed)

    def _terms(self, speed: float) -> Terms:
        t = self.sweep.terms(speed)
        if t is None:   # the pencil at this speed, its products made anew
            K, G, M = self.sweep(speed)
            t = {"K": [("K", K, 1.0)], "G": [("G", G, 1.0)], "M": [("M", M, 1.0)]}
            self.space.prods, self.space.proj = {}, {}
            X, self.space.X = self.space.X, None
            if X is not None:
                self.space.extend(X, {n: A for key in "KGM" for n, A, _ in t[key]})
        return t

    def _grow(self, W: np.ndarray, speed: float) -> None:
        t = self._terms(speed)
        self.stats["columns"] += self.space.extend(
            W, {n: A for key in "KGM" for n, A, _ in t[key]})

    def probes(self, speed: float, check: bool = True) -> np.ndarray:
        """The probes' complex values (probes, 2) at ``speed``: with ``check``, the speed's
        solve checked and corrected (:meth:`solve`); without, the projected solve in the
        space as it is (small dense algebra only: the refinement of a peak between speeds
        the space has converged at).

        Args:
            speed: the spin speed (rad/s).
            check: check and correct the speed's solve.

        Returns:
            The complex values, (probes, 2).
        """
        self.stats["evaluations"] += 1
        if speed == 0.0:   # no unbalance force at rest: no response
            return np.zeros((self.P.shape[1] // 2, 2), dtype=complex)
        y = self._solve(float(speed), check)
        sp = self.space
        assert sp.X is not None  # (made by the solve)
        if self._px is None or self._px.shape[1] != sp.X.shape[1]:
            self._px = sp.dots(self.P, sp.X)       # (probe functionals) x (columns)
        return cast(np.ndarray, (self._px @ y).reshape(-1, 2))

    def _solve(self, w: float, check: bool) -> np.ndarray:
        """The coefficients y of the response X y at ``w`` (module docstring)."""
        for _ in range(self.max_iter):
            t = self._terms(w)
            sp = self.space
            assert sp.X is not None  # (the space starts with the first speed's solve)
            k = sp.X.shape[1]
            if self._fp is None or self._fp.shape[0] != k:   # X^T f, kept while X stays
                self._fp = sp.dots(sp.X, np.column_stack(self.f))
            Z = np.zeros((k, k), dtype=complex)
            for key, fac in (("K", 1.0), ("G", 1j * w), ("M", -w * w)):
                for name, _, c in t[key]:
                    Z += fac * c * sp.proj[name]
            fp = w * w * (self._fp[:, 0] + 1j * self._fp[:, 1])
            y = cast(np.ndarray, sp.mpi.bcast(np.linalg.solve(Z, fp) if sp.mpi.rank == 0
                                              else None, root=0))
            if not check:
                return y
            Y = np.column_stack([y.real, y.imag])   # real products: no complex copies of X
            R = -w * w * np.column_stack(self.f)     # (Re r, Im r)
            for key, fac in (("K", 1.0), ("G", 1j * w), ("M", -w * w)):
                for name, _, c in t[key]:
                    P = sp.prods[name] @ Y
                    a = fac * c
                    R[:, 0] += a.real * P[:, 0] - a.imag * P[:, 1]
                    R[:, 1] += a.real * P[:, 1] + a.imag * P[:, 0]
            W = self.factor.solve(R)
            self.stats["solves"] += 1
            err = np.sqrt(sp.mpi.allreduce(float(np.sum(W ** 2)), op=MPI.SUM))
            nx = float(np.linalg.norm(y))   # X has orthonormal columns: ||X y|| = ||y||
            if err <= self.tol * max(nx, 1e-300):
                return y
            if self.space.extend(W, {n: A for key in "KGM" for n, A, _ in t[key]}) == 0:
                return y
            self.stats["columns"] += 2
        raise RuntimeError(f"unbalance response at {w:g} rad/s: not converged in "
                           f"{self.max_iter} corrections (residual {err:.3e} of the response)")

    def destroy(self) -> None:
        self.factor.destroy()


def unbalance_response(system: SecondOrderSystem, speeds: Sequence[float],
                       unbalances: Sequence[tuple], probes: Sequence, t: float = 0.0,
                       tol: float = 1e-9, shift: float | None = None, refine: bool = True,
                       directions: Sequence[str] = ("x", "y", "major")) -> UnbalanceResponse:
    """The synchronous response to ``unbalances`` at ``probes`` over ``speeds`` (module
    docstring). Collective; the results are the same on every rank.

    Args:
        system: a :class:`dolfinx_mbs.systems.SecondOrderSystem` whose spinning bodies are in
            :class:`~dolfinx_mbs.frames.Stationary` frames.
        speeds: spin speeds (rad/s), non-negative and strictly monotonic (at 0 the response
            is 0: an unbalance has no force at rest).
        unbalances: ``(where, m_e, phase)`` each: ``where`` a point inside a rotor (the force
            acts at the nearest node) or a :class:`~dolfinx_mbs.bodies.Disk` /
            :class:`~dolfinx_mbs.bodies.Bearing` (on its journal's mean motion); m_e the
            unbalance (kg m), ``phase`` its angle from e1 (rad).
        probes: points (the nearest node's displacement) or attachments (the journal's mean
            translation).
        t: time of the frame state of other bodies and of the constraints.
        tol: the relative residual of each speed's solve (module docstring).
        shift: the real shift of the factorization (default: the mean of ``|speeds|``).
        refine: find the peaks and their amplification factors.
        directions: the amplitudes whose peaks are refined: "x", "y" (across the axis) and
            "major" (the orbit's major semi-axis).

    Returns:
        An :class:`UnbalanceResponse`.

    Raises:
        ValueError: bad speeds, unbalances or probes (a point outside the rotors), no body in
            a Stationary frame.
        RuntimeError: a speed's solve did not converge.
    """
    try:
        W = np.asarray(speeds, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"speeds must be a sequence of spin speeds (rad/s), got "
                         f"{speeds!r}") from None
    d = np.diff(W)
    if W.size == 0 or not np.all(np.isfinite(W)) or np.any(W < 0.0) or \
            not (np.all(d > 0.0) or np.all(d < 0.0)):
        raise ValueError(f"speeds must be a non-empty, strictly monotonic sequence of finite, "
                         f"non-negative spin speeds (rad/s; the response at -Omega mirrors "
                         f"that at Omega), got {checks.shown(speeds)}")
    tol = checks.positive(tol, "tol")
    if not any(isinstance(b.frame, Stationary) for b in system.bodies):
        raise ValueError("unbalance_response: no body of the model is in a frames.Stationary "
                         "frame (the synchronous response of an unbalance has constant "
                         "coefficients in the stationary frame only)")
    comm = system.comm
    red = system.reducer
    red.update(t)
    sites = _Sites(system, unbalances, probes)
    spinning = [isinstance(b.frame, Stationary) for b in system.bodies]

    def pencil(speed: float) -> Tuple[PETSc.Mat, PETSc.Mat | None, PETSc.Mat]:
        states = [b.frame.at_rate(speed).state(t) if s else b.frame.state(t)
                  for b, s in zip(system.bodies, spinning)]
        return system.pencil(t, 1, "damping", states)

    fit = W if W.size >= 3 else np.linspace(0.0, max(np.abs(W).max(), 1.0), 3)
    extra = speed_terms(system, True)
    sweep = SweepPencil(pencil, fit, extra)

    def reduced(v: PETSc.Vec) -> PETSc.Vec:
        r = red.project(v)
        out = r.getArray(readonly=True).copy()
        r.destroy()
        return out

    f = [reduced(v) for v in sites.f]
    probes_r = [[reduced(v) for v in pair] for pair in sites.probes]
    s = float(np.mean(np.abs(W))) if shift is None else checks.real(shift, "shift")
    P = np.column_stack([p for pair in probes_r for p in pair])
    solver = _Solver(sweep, f, P, comm, s if s > 0.0 else 1.0, tol, float(W[len(W) // 2]))
    try:
        out = np.array([solver.probes(float(w)) for w in W])
        # between the speeds the space has converged at: projected solves, each peak's
        # final speed checked
        peaks = _peaks(W, out, lambda w, check=False: solver.probes(w, check),
                       directions) if refine else []
        stats = dict(solver.stats)
    finally:
        solver.destroy()
        sweep.destroy()
        for _, _, B, _ in extra:
            B.destroy()
        sites.destroy()
    _check_linear_range(system, W, out, sites.labels)
    return UnbalanceResponse(speeds=W.copy(), response=out, probes=sites.labels,
                             critical_speeds=peaks, stats=stats, rank=comm.rank)


#: the largest slope (rad) of the whirl orbit over the rotor's length that passes unremarked
SLOPE_LIMIT = 0.1


def _check_linear_range(system: SecondOrderSystem, W: np.ndarray, R: np.ndarray,
                        labels: Sequence[str]) -> None:
    """Warn (on every rank, the same words) when the largest orbit is past the linear model:
    a major semi-axis A with pi A / L > :data:`SLOPE_LIMIT`, L the rotors' length along the
    spin axis (the slope of a half sine of amplitude A over L)."""
    import warnings

    length = 0.0
    for b in system.bodies:
        if isinstance(b.frame, Stationary):
            z = b.mesh.geometry.x[:, :3] @ np.asarray(b.frame.axis, dtype=float)
            lo = b.comm.allreduce(float(z.min()) if z.size else math.inf, op=MPI.MIN)
            hi = b.comm.allreduce(float(z.max()) if z.size else -math.inf, op=MPI.MAX)
            length = max(length, hi - lo)
    A = _major(R)
    if A.size == 0 or length <= 0.0:
        return
    i, j = (int(v) for v in np.unravel_index(int(np.argmax(A)), A.shape))
    if math.pi * A[i, j] / length > SLOPE_LIMIT:
        warnings.warn(f"unbalance response: the orbit at {labels[j]} reaches a semi-axis of "
                      f"{A[i, j]:.4g} m at {W[i]:.6g} rad/s, a slope of "
                      f"{math.pi * A[i, j] / length:.3g} rad over the rotor's {length:.4g} m "
                      f"(more than {SLOPE_LIMIT} rad): past the range of the linear model; the "
                      f"response is proportional to the unbalance, so scale it to the "
                      f"unbalance's real size", checks.SmallDisplacementWarning, stacklevel=3)


def _peaks(W: np.ndarray, R: np.ndarray, evaluate: Callable[..., np.ndarray],
           directions: Sequence[str] = ("x", "y", "major")) -> List[Peak]:
    """The local maxima of each probe's amplitudes, refined, with their half-power speeds."""
    from scipy.optimize import brentq, minimize_scalar

    def amp(w: float, j: int, d: int) -> float:
        X = evaluate(w)[j]
        return float(_major(X[None, :])[0]) if d == 2 else float(abs(X[d]))

    out = []
    A = np.concatenate([np.abs(R), _major(R)[..., None]], axis=2)
    order = np.argsort(W)
    Ws, As = W[order], A[order]
    for j in range(A.shape[1]):
        for d, name in enumerate(("x", "y", "major")):
            if name not in directions:
                continue
            a = As[:, j, d]
            for i in range(1, len(Ws) - 1):
                if not (a[i] > a[i - 1] and a[i] >= a[i + 1]):
                    continue
                res = minimize_scalar(lambda w: -amp(w, j, d), bounds=(Ws[i - 1], Ws[i + 1]),
                                      method="bounded", options={"xatol": 1e-9 * Ws[i + 1]})
                nc = float(res.x)
                X = evaluate(nc, True)[j]     # checked (and corrected) at the peak
                peak = float(_major(X[None, :])[0]) if d == 2 else float(abs(X[d]))
                half = peak / math.sqrt(2.0)

                def f(w: float) -> float:
                    return amp(w, j, d) - half

                lo = hi = math.nan
                below = [q for q in range(len(Ws)) if Ws[q] < nc]
                for q in reversed(below):  # the first sample under half, going down
                    if a[q] <= half:
                        right = Ws[q + 1] if q + 1 <= below[-1] else nc
                        lo = brentq(f, Ws[q], right, xtol=1e-10 * nc)
                        break
                above = [q for q in range(len(Ws)) if Ws[q] > nc]
                for q in above:
                    if a[q] <= half:
                        left = Ws[q - 1] if q - 1 >= above[0] else nc
                        hi = brentq(f, left, Ws[q], xtol=1e-10 * nc)
                        break
                af = nc / (hi - lo) if math.isfinite(lo) and math.isfinite(hi) else math.nan
                out.append(Peak(j, name, nc, peak, lo, hi, af))
    return out
