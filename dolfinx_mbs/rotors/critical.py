"""The critical speed map: the undamped critical speeds of a rotor against the stiffness of its
bearings.

    cmap = model.critical_speed_map(np.logspace(5, 9, 9), n=3)
    cmap.speeds          # (stiffnesses, n): the first n forward critical speeds (rad/s)
    cmap.to_csv("map.csv"); cmap.plot("map.png")

For each stiffness k every bearing of the model is replaced by a new bearing on the same journal
with kxx = kyy = k, no cross-coupling and no damping (its axial and tilting stiffness kept:
:meth:`~dolfinx_mbs.bodies.attachments.Bearing.replaced`), read by the operators in place of the
model's own (:meth:`~dolfinx_mbs.assembly.full.Assembly.bearings_replaced`): the model and its
bearings are not changed, also after an error. A critical speed is a
speed Omega at which a forward whirl frequency of the undamped gyroscopic problem equals Omega
(lateral modes that do not whirl backward: a degenerate pair has no definite whirl; torsional
and axial modes are not excited by an unbalance, :mod:`dolfinx_mbs.campbell.shapes`).

**The synchronous whirl problem.** The stationary frame's undamped pencil at the speed Omega is
K_0 + Omega^2 K_2 + lambda Omega G_1 + lambda^2 M (:class:`~dolfinx_mbs.campbell.SweepPencil`);
a whirl at the spin's own frequency, lambda = i Omega, solves

    K_0 x = Omega^2 (M - K_2 - i G_1) x,

a linear eigenproblem in mu = Omega^2 whose eigenvalues are all the crossings of the branches
with the 1x line at once (Hermitian: G_1 is skew). It is solved in real form, x = a + i b,

    [[K_0, 0], [0, K_0]] (a, b) = mu [[M', G_1], [-G_1, M']] (a, b),   M' = M - K_2,

by SLEPc's shift-and-invert about a negative target (each mu twice: x and i x; the rotor's free
torsion and axial motion at mu = 0), and each real mu's vector tells its whirl and kind. One
eigen-solve a stiffness (and one at rest for the target's scale), where the secant method on
w_j(Omega) - Omega took one eigen-solve per iterate. A rotor whose pencil is not
K_0 + Omega^2 K_2, Omega G_1 (a nonlinear body) is mapped by that secant method. Units: N/m,
rad/s.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import math
from typing import TYPE_CHECKING, Callable, List, Sequence, cast

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import checks
from dolfinx_mbs.bodies.attachments import AxialTilt, Bearing, Coefficients
from dolfinx_mbs.campbell.pencil import SweepPencil
from dolfinx_mbs.campbell.shapes import ModeShapes, kinds_of
from dolfinx_mbs.campbell.sweep import campbell
from dolfinx_mbs.frames.stationary import Stationary
from dolfinx_mbs.petsc_options import EIGEN_PREFIX, direct_lu, solve_in_words

if TYPE_CHECKING:
    import os

    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["critical_speed_map", "CriticalSpeedMap"]

RPM = 30.0 / math.pi


@dataclasses.dataclass
class CriticalSpeedMap:
    """Undamped forward critical speeds against the bearing stiffness (the same on every rank).

    Attributes:
        stiffnesses: the bearings' stiffness k (N/m).
        speeds: (stiffnesses, n) critical speeds (rad/s; NaN where none was found).
        rank: this process's rank (rank 0 writes files).
    """

    stiffnesses: np.ndarray
    speeds: np.ndarray
    rank: int = dataclasses.field(default=0, repr=False, compare=False)

    def to_csv(self, path: str | os.PathLike) -> None:
        """One row per stiffness: k, then each critical speed in rad/s and rpm (rank 0).

        Args:
            path: the file to write.
        """
        if self.rank != 0:
            return
        n = self.speeds.shape[1]
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["stiffness_n_m"] + [f"critical_{j + 1}_{u}" for j in range(n)
                                            for u in ("rad_s", "rpm")])
            for k, row in zip(self.stiffnesses, self.speeds):
                w.writerow([repr(float(k))] + [repr(float(v * f)) for v in row
                                               for f in (1.0, RPM)])

    def plot(self, path: str | os.PathLike, title: str = "Critical speed map") -> None:
        """Critical speeds (rpm) against the bearing stiffness, log-log (rank 0 draws).

        Args:
            path: the file to write.
            title: the plot's title.
        """
        if self.rank != 0:
            return
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6.5, 5.0))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        for j in range(self.speeds.shape[1]):
            ax.loglog(self.stiffnesses, self.speeds[:, j] * RPM, "o-", ms=4,
                      label=f"critical speed {j + 1}")
        ax.set_xlabel("bearing stiffness (N/m)")
        ax.set_ylabel("critical speed (rpm)")
        ax.set_title(title)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
        fig.savefig(path, dpi=120)


def _bearings(system: SecondOrderSystem) -> List[Bearing]:
    return [a for b in system.bodies for a in getattr(b, "attachments", ())
            if isinstance(a, Bearing)]


def _isotropic(b: Bearing, k: float) -> Bearing:
    """A new bearing on ``b``'s journal: kxx = kyy = k, no cross-coupling, no damping, its
    axial and tilting stiffness kept."""
    return b.replaced(Coefficients(kxx=k, kyy=k),
                      AxialTilt(kzz=b.axial.kzz, ktilt=b.axial.ktilt))


def _forward(system: SecondOrderSystem, speed: float, n: int, t: float) -> np.ndarray:
    """The frequencies at ``speed`` (undamped) of the modes that do not whirl backward,
    ascending (a pair that the gyroscopic moments leave degenerate, e.g. a disk's
    translation at mid-span, has no definite whirl: both senses are modes); at rest the
    pairs'."""
    tab = campbell(system, [speed], n=2 * n + 2, t=t, damping=False, engine_orders=(1,))
    f = tab.stationary[0]
    assert tab.kind is not None  # (a table's kinds default to lateral)
    lateral = tab.kind[0] == "lateral"   # torsional and axial modes have no critical speed
    if speed == 0.0:  # each pair once (divergent modes, negative, left out)
        return cast(np.ndarray, np.sort(f[(f > 0.0) & lateral])[::2])
    f = np.sort(f[(tab.whirl_stationary[0] != -1) & (f > 0.0) & lateral])
    # a degenerate pair (split by the mesh's asymmetry alone) counts once
    keep = np.r_[True, np.diff(f) > 1e-4 * f[1:]] if f.size else np.zeros(0, bool)
    return cast(np.ndarray, f[keep])


def critical_speed_map(system: SecondOrderSystem, stiffnesses: Sequence[float], n: int = 4,
                       t: float = 0.0, tol: float = 1e-6, max_iter: int = 30) -> CriticalSpeedMap:
    """The first ``n`` undamped forward critical speeds at each bearing stiffness (module
    docstring). Collective.

    Args:
        system: a second-order system with bearings (``Model.bearing``) on rotors in
            stationary frames.
        stiffnesses: the bearing stiffnesses k (N/m), positive.
        n: critical speeds per stiffness.
        t: time of the constraints.
        tol: relative tolerance of w_j(Omega) = Omega where the secant method maps (a rotor
            whose pencil is not quadratic in the speed; the eigenvalues carry the solver's
            and a degenerate pair's scatter).
        max_iter: secant steps per critical speed there.

    Raises:
        ValueError: no bearing, a stiffness that is not positive and finite.
    """
    ks = np.asarray(stiffnesses, dtype=float).reshape(-1)
    if ks.size == 0 or not np.all(np.isfinite(ks)) or np.any(ks <= 0.0):
        raise ValueError(f"stiffnesses must be positive finite numbers (N/m), got "
                         f"{stiffnesses!r}")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    bearings = _bearings(system)
    if not bearings:
        raise ValueError("critical_speed_map: the model has no bearing (Model.bearing)")
    tol = checks.positive(tol, "tol")
    out = np.full((ks.size, n), np.nan)
    scale = None   # the target's scale: the last stiffness's lowest critical speed
    try:
        for i, k in enumerate(ks):
            with system.assembly.bearings_replaced(functools.partial(_isotropic, k=float(k))):
                system.forget()
                found = None
                if scale is None:   # the first stiffness: from the frequencies at rest
                    start = _forward(system, 0.0, n, t)
                    scale = float(start[0]) if start.size else None
                if scale is not None:
                    found = _synchronous(system, n, t, scale * min(1.0, k / ks[max(i - 1, 0)]))
                if found is not None:
                    out[i, :min(n, found.size)] = found[:n]
                    scale = float(found[0]) if found.size else scale
                else:
                    start = _forward(system, 0.0, n, t)
                    for j in range(min(n, len(start))):
                        out[i, j] = _secant(lambda w: _pick(_forward(system, w, n, t), j) - w,
                                            float(start[j]), tol, max_iter)
    finally:
        system.forget()
    return CriticalSpeedMap(stiffnesses=ks, speeds=out, rank=system.comm.rank)


#: the speeds the synchronous problem's constant matrices are fitted at (rad/s; the pencil is
#: exactly quadratic in the speed, so any three distinct speeds do)
_FIT = np.array([0.0, 500.0, 1000.0])


def _synchronous(system: SecondOrderSystem, n: int, t: float,
                 scale: float) -> np.ndarray | None:
    """The forward critical speeds (ascending) of the synchronous whirl problem (module
    docstring), or None where the pencil is not K_0 + Omega^2 K_2, Omega G_1 (the caller maps
    by the secant method then). ``scale``: about the lowest critical speed (rad/s), for the
    target -(scale / 2)^2."""
    spinning = [isinstance(b.frame, Stationary) for b in system.bodies]

    def pencil(speed: float) -> tuple:
        states = [b.frame.at_rate(speed).state(t) if s else b.frame.state(t)
                  for b, s in zip(system.bodies, spinning)]
        return system.pencil(t, 1, "gyroscopic", states)

    sp = SweepPencil(pencil, _FIT)
    if not sp.combined:
        return None
    comm = system.comm
    mats: list = []
    try:
        if comm.allreduce(sp.G0.norm(PETSc.NormType.FROBENIUS), op=MPI.MAX) > 0.0:
            return None   # a coupling that does not grow with the speed: not synchronous
        Mp = sp.M.copy()
        Mp.axpy(-1.0, sp.K2, structure=PETSc.Mat.Structure.DIFFERENT)
        Gn = sp.G1.copy()
        Gn.scale(-1.0)
        mats += [Mp, Gn]
        A = PETSc.Mat().createNest([[sp.K0, None], [None, sp.K0]], comm=comm)
        B = PETSc.Mat().createNest([[Mp, sp.G1], [Gn, Mp]], comm=comm)
        mats += [A, B]
        iss = A.getNestISs()[0]
        A2, B2 = A.convert(PETSc.Mat.Type.AIJ), B.convert(PETSc.Mat.Type.AIJ)
        mats += [A2, B2]
        shapes = ModeShapes(system, spinning)
        target = -(0.5 * scale) ** 2
        nev = 4 * n + 8
        for _ in range(3):
            mu, Z = _solve(A2, B2, iss, nev, target)
            found = _forward_crossings(system, shapes, mu, Z)
            if found.size >= n or len(mu) < nev:
                return found
            nev *= 2
        return found
    finally:
        sp.destroy()
        for X in mats:
            X.destroy()


def _solve(A: PETSc.Mat, B: PETSc.Mat, iss: list, nev: int, target: float) -> tuple:
    """The real eigenvalues mu > 0 of A y = mu B y nearest ``target`` with this rank's rows of
    their vectors' halves (a, b): (mu (k,), Z (local rows, 2k): the a's, then the b's)."""
    from slepc4py import SLEPc

    eps = SLEPc.EPS().create(A.getComm())
    try:
        eps.setOperators(A, B)
        eps.setProblemType(SLEPc.EPS.ProblemType.GNHEP)
        eps.setDimensions(nev=min(nev, A.getSize()[0]))
        eps.setTarget(float(target))
        eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
        eps.setTolerances(tol=1e-10, max_it=1000)
        st = eps.getST()
        st.setType(SLEPc.ST.Type.SINVERT)
        direct_lu(st.getKSP())
        eps.setOptionsPrefix(EIGEN_PREFIX + "critical_")
        eps.setFromOptions()
        solve_in_words(eps, "the synchronous whirl eigenproblem (SLEPc EPS)")
        yr, yi = A.createVecRight(), A.createVecRight()
        mu, cols_a, cols_b = [], [], []
        for i in range(eps.getConverged()):
            lam = eps.getEigenpair(i, yr, yi)
            if lam.real <= 0.0 or abs(lam.imag) > 1e-8 * abs(lam):
                continue   # no real speed (or the free motions at mu = 0)
            mu.append(float(lam.real))
            cols_a.append(yr.getSubVector(iss[0]).getArray(readonly=True).copy())
            cols_b.append(yr.getSubVector(iss[1]).getArray(readonly=True).copy())
        for v in (yr, yi):
            v.destroy()
    finally:
        eps.destroy()
    mu_a = np.array(mu)
    # rank 0's eigenvalues on every rank (the vectors are each rank's rows of the same pairs)
    mu_a = A.getComm().tompi4py().bcast(mu_a, root=0)
    k = len(mu_a)
    rows = iss[0].getLocalSize()
    Z = np.column_stack(cols_a + cols_b) if k else np.zeros((rows, 0))
    return mu_a, Z


def _forward_crossings(system: SecondOrderSystem, shapes: ModeShapes, mu: np.ndarray,
                       Z: np.ndarray) -> np.ndarray:
    """The crossings sqrt(mu) of lateral modes that do not whirl backward, ascending, each
    once (the real form's two copies of a mode, and a degenerate pair, merged)."""
    from dolfinx_mbs.campbell.sweep import _allsum

    if mu.size == 0:
        return np.zeros(0)
    comm = system.comm
    terms = _allsum(comm, shapes.local_terms(system.reducer, system.assembly.mass(), Z))
    h = shapes.whirl_index(terms)
    lateral = kinds_of(shapes.fractions(terms)) == "lateral"
    w = np.sqrt(mu[lateral & (h > -0.05)])
    w = np.sort(w)
    keep = np.r_[True, np.diff(w) > 1e-4 * w[1:]] if w.size else np.zeros(0, bool)
    return cast(np.ndarray, w[keep])


def _pick(f: np.ndarray, j: int) -> float:
    return float(f[j]) if j < len(f) else math.nan


def _secant(g: Callable[[float], float], w0: float, tol: float, max_iter: int) -> float:
    """A root of g near w0 by the secant method (NaN if none is found)."""
    a, ga = w0, g(w0)
    b = a + ga if math.isfinite(ga) else math.nan
    if not math.isfinite(b) or b <= 0.0:
        return math.nan
    gb = g(b)
    for _ in range(max_iter):
        if not (math.isfinite(ga) and math.isfinite(gb)) or gb == ga:
            return math.nan
        c = b - gb * (b - a) / (gb - ga)
        if c <= 0.0:
            return math.nan
        if abs(c - b) <= tol * abs(c):
            return c
        a, ga, b = b, gb, c
        gb = g(b)
        if abs(gb) <= tol * abs(b):
            return b
    return math.nan
