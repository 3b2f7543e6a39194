"""Campbell diagrams: the natural frequencies of spinning bodies against the spin speed.

    table = model.campbell(np.linspace(0.0, 600.0, 31), n=6)   # or campbell(model.system(), ...)
    table.frequencies            # (speeds, modes), rad/s, rotating frame
    table.stationary             # the same modes seen from the ground (axisymmetric rotors)
    table.critical_speeds        # crossings with the engine-order lines k * Omega
    table.to_csv("campbell.csv"); table.plot("campbell.png")

At each speed Omega every body whose frame is a :class:`~dolfinx_mbs.frames.ConstantSpin` is
taken spinning at Omega (its frame object is left as it is), and the gyroscopic quadratic
eigenproblem of the constrained system is solved in the rotating frame (``docs/theory.md``
sections 2, 3 and 5):

    (lambda^2 M_r + lambda G_r + K_r) q = 0,
    M_r = A^T M A,   G_r = A^T G A,   K_r = A^T K_eff A,

with A the Maggi basis, G the Coriolis (gyroscopic) matrix (plus Rayleigh damping with
``damping=True``) and K_eff what :meth:`Model.full_stiffness` gives without the angular
acceleration term: K + K_omega (spin softening), plus the geometric stiffening of bodies built
with ``stiffening="prestress"``. Units: rad/s for speeds, frequencies and growth rates, except
where a name or label says rpm or Hz.

Sign conventions (as in :mod:`dolfinx_mbs.modal`): each eigenvalue pair is represented by its
member with Im(lambda) >= 0; the frequency is Im(lambda), or -s for a real pair +/- s
(divergence); the growth rate is Re(lambda) (negative: decay, positive: instability).

**Mode tracking.** A branch follows one mode across the sweep by the modal assurance
criterion with the reduced mass, MAC(x, y) = abs(x^H M_r y)^2 / ((x^H M_r x) (y^H M_r y)),
for complex x and y. A mode is the pair (lambda, x), (conj lambda, conj x); which of the two
continues a branch can change, e.g. when a forward whirl branch passes through zero frequency
at a critical speed, so both orientations are compared. The forward and backward whirl of one
bending pair of an axisymmetric rotor span the same real subspace, so their MACs with either
orientation agree; eigenvalue continuity separates them: the cost of continuing branch j with
mode k is (1 - MAC) + 0.1 abs(lambda_k - lambda_j,predicted) / abs(Delta Omega), with
lambda_j,predicted extrapolated linearly from the branch's last two speeds. (The frame terms
are linear (Coriolis) and quadratic (spin softening, stiffening) in Omega, so a branch moves by
about abs(Delta Omega) per step: the second term is small for the right mode and large for a
mode whose eigenvalue lies several steps away.) The assignment minimises the total cost
(``scipy.optimize.linear_sum_assignment``). ``n_extra`` more modes than reported are computed
and tracked, so that a branch is not lost when a higher mode enters the lowest ``n``.
``mac`` records the MAC of each branch with its previous speed.

**Whirl and kind** (:mod:`dolfinx_mbs.campbell.shapes`). The mass-weighted orbit sense h of
each mode about the spin axis of the bodies that spin (h = +1 a circular orbit in the sense of
the spin, -1 against it, 0 a straight line), and what the mode does to that axis: "lateral"
(its line moves: bending, whirl), "torsional", "axial" or "other". ``whirl`` is sign(h)
relative to the spin direction for lateral (and other) modes when abs(h) > ``whirl_tol`` and
no other mode has the same eigenvalue, else 0; torsional and axial modes do not whirl (0),
and every mode at zero speed has 0 (the two members of a bending pair are degenerate there).
It is the orbit sense in the *rotating* frame: +1 (forward) for the w0 - Omega branch of a
shaft below its critical speed, -1 (backward) for the w0 + Omega branch.
A system with an ``orbit_sense()`` gives its own index in place of h (its modes then have no
kind, "other"): the harmonic systems of a cyclic model
(:class:`dolfinx_mbs.cyclic.TravellingWaves`), whose index is the direction of the travelling
wave, +1 along the spin and -1 against it.

**Stationary frame.** For an axisymmetric rotor (or one with cyclic symmetry of order 3 or
more), a whirl mode of rotating-frame frequency w and sense d = ``whirl`` is seen from the
ground at d w + Omega: ``stationary`` = abs(w + Omega) for forward, abs(w - Omega) for
backward whirl, w for modes without whirl (axial, torsional: the same in both frames). Its sign
gives ``whirl_stationary`` (+1 forward, -1 backward whirl seen from the ground; it differs from
``whirl`` above a critical speed, where the forward whirl lags the shaft). For rotors without
such symmetry the rotating-frame system has no stationary-frame counterpart with constant
coefficients, and ``stationary`` has no meaning.

**Solver.** The speeds share their solver: the pencil combined as K_0 + Omega^2 K_2,
G_0 + Omega G_1 (:mod:`dolfinx_mbs.campbell.pencil`), one factorization of P(shift) refactorized
numerically per speed, and one subspace for the whole sweep (SLEPc's PEP vectors at the first
speed, the corrections of every speed since) in which each speed is projected, its pairs
checked by one block solve and corrected by the same solve (:mod:`dolfinx_mbs.
campbell_subspace`; SLEPc's PEP as fallback): the frequencies are those of independent
solves at each speed (to 1e-8 of the largest), at a fraction of their cost.

The table (its CSV file, plot and the crossings with the engine-order lines k Omega: the critical
speeds) is :class:`~dolfinx_mbs.campbell.table.CampbellTable`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, List, Sequence, Tuple, cast

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import checks
from dolfinx_mbs.campbell.pencil import SweepPencil, speed_terms
from dolfinx_mbs.campbell.shapes import ModeShapes, kinds_of
from dolfinx_mbs.campbell.subspace import SubspaceSolver, block_mult
from dolfinx_mbs.campbell.table import CampbellTable
from dolfinx_mbs.frames.axis import ConstantSpin
from dolfinx_mbs.frames.computed import Hinge
from dolfinx_mbs.frames.stationary import Stationary
from dolfinx_mbs.modal import eigen as modal
from dolfinx_mbs.systems.rigid_modes import rigid_subspace

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dolfinx_mbs.frames.base import Frame
    from dolfinx_mbs.systems.rigid_modes import RigidSubspace
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["campbell"]

log = logging.getLogger(__name__)

#: the frames whose spin rate a sweep sets: rotating (the body turns with the frame) and
#: stationary (the body spins through the ground, docs/theory.md section 9); a computed
#: :class:`~dolfinx_mbs.frames.Hinge` on the ground as well (held at its angle, turning
#: steadily: :meth:`~dolfinx_mbs.frames.Hinge.at_rate`)
SPINNING = (ConstantSpin, Stationary)


def _spins(frame: Frame) -> bool:
    """Whether a sweep sets ``frame``'s spin rate (see :data:`SPINNING`)."""
    return isinstance(frame, SPINNING) or (isinstance(frame, Hinge) and frame.parent is None)

# weight of an eigenvalue mismatch of one speed step against a MAC of 1 in the tracking cost
_STEP_WEIGHT = 0.1


# -- the sweep --------------------------------------------------------------------------------
def _check_speeds(speeds: ArrayLike) -> np.ndarray:
    W = np.asarray(speeds, dtype=float).reshape(-1)
    if W.size == 0 or not np.all(np.isfinite(W)):
        raise ValueError(f"speeds must be a non-empty sequence of finite numbers, got {speeds!r}")
    d = np.diff(W)
    if W.size > 1 and not (np.all(d > 0.0) or np.all(d < 0.0)):
        raise ValueError("speeds must be strictly increasing or strictly decreasing")
    return W


def _states(system: SecondOrderSystem, spinning: Sequence[bool], speed: float, t: float) -> list:
    """The bodies' frame states at ``speed`` (those in ConstantSpin frames) and ``t``."""
    return [b.frame.at_rate(speed).state(t) if spin else b.frame.state(t)
            for b, spin in zip(system.bodies, spinning)]


def _allsum(comm: MPI.Comm, local: np.ndarray) -> np.ndarray:
    """Sum over ranks, the result taken from rank 0 so every rank decides alike."""
    return cast(np.ndarray, comm.bcast(comm.reduce(local, op=MPI.SUM, root=0), root=0))


class _Tracker:
    """Follows ``m`` branches across the speeds by MAC and eigenvalue continuity."""

    def __init__(self, comm: MPI.Comm, m: int) -> None:
        self.comm = comm
        self.m = m
        self.speeds: List[float] = []
        self.lam: List[np.ndarray] = []   # representatives (Im >= 0), branch order
        self.h: List[np.ndarray] = []
        self.f: List[np.ndarray] = []      # lateral, torsional, axial fractions
        self.mac: List[np.ndarray] = []
        self.oriented: List[np.ndarray] = []  # the orientation that continues each branch
        self.X: np.ndarray | None = None   # local parts of the oriented vectors
        self.nx: np.ndarray | None = None  # x^H M_r x

    def add(self, speed: float, lam: np.ndarray, Y: np.ndarray, MY: np.ndarray,
            h: np.ndarray, f: np.ndarray) -> None:
        ny = _allsum(self.comm, np.real(np.sum(np.conj(Y) * MY, axis=0)))
        if self.X is None:
            cols = np.arange(self.m)
            conj = np.zeros(self.m, dtype=bool)
            mac = np.full(self.m, np.nan)
        else:
            prod = _allsum(self.comm, np.stack([np.conj(self.X).T @ MY, self.X.T @ MY]))
            assert self.nx is not None  # (kept with X)
            norm = np.outer(self.nx, ny)
            mac2 = np.abs(prod) ** 2 / norm  # (orientation, branch, mode)
            W1 = self.speeds[-1]
            pred = self.oriented[-1].copy()
            if len(self.speeds) > 1:
                W2 = self.speeds[-2]
                pred += (self.oriented[-1] - self.oriented[-2]) * (speed - W1) / (W1 - W2)
            step = abs(speed - W1)
            dist = np.stack([np.abs(pred[:, None] - lam[None, :]),
                             np.abs(pred[:, None] - np.conj(lam)[None, :])])
            cost = (1.0 - mac2) + _STEP_WEIGHT * dist / step
            which = np.argmin(cost, axis=0)
            best = np.min(cost, axis=0)
            from scipy.optimize import linear_sum_assignment

            rows, cols = linear_sum_assignment(best)
            cols = cols[np.argsort(rows)]
            conj = which[np.arange(self.m), cols] == 1
            mac = mac2[which[np.arange(self.m), cols], np.arange(self.m), cols]
        X = Y[:, cols].copy()
        X[:, conj] = np.conj(X[:, conj])
        self.X = X
        self.nx = ny[cols]
        lam_b = lam[cols]
        self.oriented.append(np.where(conj, np.conj(lam_b), lam_b))
        self.lam.append(lam_b)
        self.h.append(h[cols])
        self.f.append(f[cols])
        self.mac.append(mac)
        self.speeds.append(float(speed))


class _BorderedTerms:
    """The bordered pencil of the elastic modes (:meth:`RigidSubspace.border`) of a combined
    sweep pencil as constant matrices with the speed's coefficients: the border (rigid
    motions held) goes with K_0, the other terms are padded with zeros; so that free rigid
    motions (a rotor on radial bearings: its torsion and axial motion) keep the sweep's one
    factorization and carried products."""

    def __init__(self, rigid: RigidSubspace, sp: SweepPencil) -> None:
        self.K0b = rigid.padded(sp.K0, sp.M, border=True)
        self.G0b, self.Mb = rigid.padded(sp.G0, sp.M), rigid.padded(sp.M, sp.M)
        self.K2b, self.G1b = rigid.padded(sp.K2, sp.M), rigid.padded(sp.G1, sp.M)
        self.extra = [(which, name, rigid.padded(B, sp.M), f) for which, name, B, f in
                      sp.extra]
        self.K, self.G = self.K0b.duplicate(), self.G0b.duplicate()

    def terms(self, speed: float) -> dict:
        """The bordered pencil's constant matrices with the coefficients of ``speed``."""
        t = {"K": [("K0", self.K0b, 1.0), ("K2", self.K2b, speed * speed)],
             "G": [("G0", self.G0b, 1.0), ("G1", self.G1b, speed)],
             "M": [("M", self.Mb, 1.0)]}
        for which, name, B, f in self.extra:
            t[which].append((name, B, f(speed)))
        return t

    def __call__(self, speed: float) -> Tuple[PETSc.Mat, PETSc.Mat, PETSc.Mat, dict]:
        """(K, G, M, terms) of the bordered pencil at ``speed`` (K and G summed: the
        padded matrices' patterns differ, so each sum is a sparse merge)."""
        sub = PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN
        t = self.terms(speed)
        for out, key in ((self.K, "K"), (self.G, "G")):
            out.zeroEntries()
            for _, X, c in t[key]:
                if c != 0.0:
                    out.axpy(c, X, structure=sub)
        return self.K, self.G, self.Mb, t

    def destroy(self) -> None:
        for X in [self.K0b, self.G0b, self.Mb, self.K2b, self.G1b, self.K, self.G] + \
                [B for _, _, B, _ in self.extra]:
            X.destroy()


def campbell(system: SecondOrderSystem, speeds: Sequence[float], n: int = 6,
             engine_orders: Sequence[int] = (1, 2), t: float = 0.0, shift: float = 0.0,
             n_extra: int | None = None, damping: bool | None = None, whirl_tol: float = 0.05,
             stability_tol: float = 1e-6, tol: float = 1e-10) -> CampbellTable:
    """The Campbell diagram of ``system``: its ``n`` lowest modes over the spin ``speeds``.

    Collective on the system's communicator; the results are the same on every rank.

    Args:
        system: a :class:`dolfinx_mbs.systems.SecondOrderSystem` (``model.system()``) with at
            least one body in a :class:`~dolfinx_mbs.frames.ConstantSpin` frame (or a
            ``Stationary`` frame, or a computed ``Hinge`` on the ground: held at its last
            angle, :meth:`~dolfinx_mbs.frames.Hinge.at_rate`); each such body is taken at
            each speed (the frame itself is not changed; other frames keep
            their state at ``t``). Constraints must not be rheonomic.
        speeds: spin speeds Omega (rad/s), strictly monotonic; signed about each frame's axis.
        n: number of branches reported.
        engine_orders: the k of the lines k Omega for :attr:`CampbellTable.critical_speeds`.
        t: time of the frame state (of bodies not in ConstantSpin frames) and constraints.
        shift: real shift-and-invert target (1/s). K_eff is singular at a critical speed
            (a forward whirl branch at zero frequency in the rotating frame); if a sweep point
            falls on one, give a shift away from any real eigenvalue.
        n_extra: modes computed and tracked beyond ``n`` (default max(4, n // 2)).
        damping: include the damping in G: Rayleigh damping and bearings (growth rates
            become decay rates, the table's ``log_dec`` that of the damped modes). Default
            (None): with damping for bodies in ``frames.Stationary`` frames (a rotor on
            bearings), without otherwise.
        whirl_tol: abs(whirl index) at or below which the whirl is reported as undetermined
            (0): 0.05 is an elliptic orbit of axes 1 : 40 (an anisotropic bearing's
            elliptic orbits keep their sense; a straight line has none). A mode with a
            partner of the same eigenvalue (to 1e-6) has none either: any combination of the
            two is a mode.
        stability_tol: a mode is unstable when Re(lambda) > stability_tol abs(lambda).
        tol: eigensolver tolerance.

    Returns:
        A :class:`CampbellTable`.

    Raises:
        ValueError: bad arguments, no body in a ConstantSpin frame, rheonomic constraints, or
            more modes than free dofs.
        RuntimeError: the eigensolver did not converge.
    """
    W = _check_speeds(speeds)
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    n = int(n)
    orders = tuple(int(k) for k in engine_orders)
    if any(k < 1 for k in orders):
        raise ValueError(f"engine orders must be positive integers, got {engine_orders!r}")
    if n_extra is None:
        n_extra = max(4, n // 2)
    if not isinstance(n_extra, (int, np.integer)) or n_extra < 0:
        raise ValueError(f"n_extra must be a non-negative integer, got {n_extra!r}")
    spinning = [_spins(b.frame) for b in system.bodies]
    if not any(spinning):
        raise ValueError("campbell: no body of the model is in a frames.ConstantSpin, "
                         "frames.Stationary or ground frames.Hinge frame")
    still = [isinstance(b.frame, Stationary) for b, s in zip(system.bodies, spinning) if s]
    if any(still) and not all(still):
        raise ValueError("campbell: spinning bodies in rotating (ConstantSpin) and stationary "
                         "frames at once: describe every rotor in one kind of frame")
    stationary = all(still)
    if damping is None:
        damping = stationary
    red = system.reducer
    red.update(t)
    if red.rheonomic:
        raise ValueError("campbell: the constraints are rheonomic (e.g. a joint between bodies "
                         "in different frames): the system is not time-invariant at a fixed "
                         "speed")
    if n > red.n_reduced:
        raise ValueError(f"n={n} exceeds the {red.n_reduced} free dofs of the model")
    m = min(n + int(n_extra), red.n_reduced)
    comm = system.comm
    tracker = _Tracker(comm, m)
    # free at every speed: the frame terms are linear and quadratic in the speed, so free at
    # two speeds of different abs(speed) is free at all (free at 0 alone: a sweep at rest)
    picks = np.unique(np.abs(W))
    picks = picks[[0, -1]] if picks.size > 1 else picks
    rigid = rigid_subspace(system, t, states=[_states(system, spinning, float(w), t)
                                              for w in picks])
    if rigid is not None:  # free rigid motions: the elastic modes (modal.pencil_modes)
        if n > red.n_reduced - rigid.dim:
            rigid.destroy()
            raise ValueError(f"n={n} exceeds the {red.n_reduced - rigid.dim} elastic dofs of "
                             f"the model ({rigid.dim} free rigid-body motions)")
        m = min(m, red.n_reduced - rigid.dim)
    # a system may say what its modes' orbit sense is (a cyclic harmonic: its travelling waves)
    orbit = system.orbit_sense() if hasattr(system, "orbit_sense") else None
    shapes = ModeShapes(system, spinning) if orbit is None else None
    coupling = "damping" if damping else "gyroscopic"

    def pencil(speed: float) -> Tuple[PETSc.Mat, PETSc.Mat | None, PETSc.Mat]:
        return system.pencil(t, m, coupling, _states(system, spinning, speed, t))

    free = red.n_reduced - (rigid.dim if rigid is not None else 0)
    extra = speed_terms(system, damping)
    sweep_pencil = SweepPencil(pencil, W, extra)
    bordered = None
    solver = SubspaceSolver(comm, m, checks.real(shift, "shift"), tol,
                            extra=min(max(4, m // 2), free - m))
    try:
        for i, speed in enumerate(W):
            Kr, Gr, Mr = sweep_pencil(float(speed))
            Mf = system.assembly.mass()
            if rigid is None:
                lam, vecs = solver.solve(Kr, Gr, Mr, sweep_pencil.terms(float(speed)))
            else:
                if i == 0:
                    log.info("%d free rigid-body motion(s) left out of the elastic modes",
                             rigid.dim)
                if bordered is None and sweep_pencil.combined:
                    bordered = _BorderedTerms(rigid, sweep_pencil)
                if bordered is not None:   # the sum formed only when a solve needs it
                    lam, bvecs = solver.solve(
                        None, None, None, bordered.terms(float(speed)),
                        pencil=lambda s=float(speed): bordered(s)[:3])  # type: ignore[misc]
                else:
                    lam, bvecs = solver.solve(*rigid.border(Kr, Gr, Mr))
                vecs = [(rigid.elastic_part(xr, Kr), rigid.elastic_part(xi, Kr))
                        for xr, xi in bvecs]
                for xr, xi in bvecs:
                    xr.destroy()
                    xi.destroy()
            Z = np.column_stack([xr.getArray(readonly=True) for xr, _ in vecs]
                                + [xi.getArray(readonly=True) for _, xi in vecs])
            for xr, xi in vecs:
                xr.destroy()
                xi.destroy()
            k = len(vecs)
            Y = Z[:, :k] + 1j * Z[:, k:]
            MZ = block_mult(Mr, Z)   # one pass over M for all the vectors
            MY = MZ[:, :k] + 1j * MZ[:, k:]
            if shapes is not None:
                terms = _allsum(comm, shapes.local_terms(red, Mf, Z))
                h, f = ModeShapes.whirl_index(terms), shapes.fractions(terms)
            else:   # its own orbit sense: (2 a^T M J b, a^T M P a + b^T M P b, ...) of each mode
                assert orbit is not None  # (shapes is None only with an orbit)
                terms = _allsum(comm, orbit.local_terms(red, Mf, Z))
                h, f = ModeShapes.whirl_index(terms), np.full((terms.shape[0], 3), np.nan)
            tracker.add(speed, lam, Y, MY, h, f)
        log.info("Campbell sweep: %d speeds, %d by block solves (%d blocks, %d "
                 "factorizations), %d by SLEPc PEP", len(W), solver.stats["block"],
                 solver.stats["blocks"], solver.stats["factorizations"], solver.stats["slepc"])
    finally:
        solver.destroy()
        sweep_pencil.destroy()
        for _, _, B, _ in extra:
            B.destroy()
        if bordered is not None:
            bordered.destroy()
        if rigid is not None:
            rigid.destroy()
    return _table(tracker, W, n, orders, whirl_tol, stability_tol, comm, stationary)


def _table(tr: _Tracker, W: np.ndarray, n: int, orders: Tuple[int, ...], whirl_tol: float,
           stability_tol: float, comm: MPI.Comm, stationary: bool = False) -> CampbellTable:
    every = np.array(tr.lam)
    lam = every[:, :n]
    h = np.array(tr.h)[:, :n]
    # a degenerate pair (equal eigenvalues) has no definite orbit: whirl undetermined
    gap = np.abs(lam[:, :, None] - every[:, None, :])
    gap[:, np.arange(n), np.arange(n)] = np.inf
    degenerate = np.any(gap <= 1e-6 * np.abs(lam)[:, :, None], axis=2)
    fractions = np.array(tr.f)[:, :n]
    kind = kinds_of(fractions)
    mac = np.array(tr.mac)[:, :n]
    scale = np.abs(lam).max(axis=1, keepdims=True)
    real = np.abs(lam.imag) <= 1e-8 * np.maximum(scale, np.finfo(float).tiny)
    freq = modal.signed_frequencies(lam)
    spin = np.sign(W)[:, None]
    # torsional and axial modes do not whirl: the same frequency in both frames
    turns = (kind != "torsional") & (kind != "axial")
    sense = np.where((np.abs(h) > whirl_tol) & ~real & (spin != 0.0) & turns & ~degenerate,
                     np.sign(h) * spin, 0.0)
    whirl = sense.astype(int)
    if stationary:  # the frequencies are the ground's already
        ground, whirl_st = freq.copy(), whirl.copy()
    else:
        signed = whirl * freq + np.abs(W)[:, None]
        ground = np.where(whirl != 0, np.abs(signed), freq)
        whirl_st = np.where(whirl != 0, np.sign(signed), 0.0).astype(int)
    stable = lam.real <= stability_tol * np.abs(lam)
    table = CampbellTable(speeds=W.copy(), eigenvalues=lam, frequencies=freq, growth=lam.real,
                          whirl=whirl, whirl_index=h, stationary=ground,
                          whirl_stationary=whirl_st, stable=stable, mac=mac,
                          engine_orders=orders, critical_speeds=[], rank=comm.rank,
                          kind=kind, fractions=fractions)
    table.critical_speeds = table.crossings("stationary")
    return table
