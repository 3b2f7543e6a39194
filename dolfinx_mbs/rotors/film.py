"""Plain journal bearings from the Reynolds equation: the oil film solved with DOLFINx, its
static equilibrium under a load, its eight stiffness and damping coefficients by the exact
linearization of the film, and its force at any position and velocity of the journal.

    film = mbs.rotors.PlainJournal(diameter=0.1, length=0.05, clearance=1e-4, viscosity=0.03)
    eq = film.equilibrium(load=(0.0, -2000.0), speed=300.0)  # eq.eccentricity, eq.attitude,
                                                             # eq.min_film, eq.pressure (Pa)
    K, C = film.coefficients(load=(0.0, -2000.0), speed=300.0)     # 2 x 2 each (N/m, N s/m)
    s = film.force(position=(1e-5, -5e-5), velocity=(0, 0), speed=300.0)   # s.force (N) ...

**The film.** Reynolds' equation on the unwrapped film (theta, z) in [0, 2 pi] x [-L/2, L/2]
(the weak form and its units: :mod:`dolfinx_mbs.forms.film`), on a structured mesh of
quadrilaterals (``cells``, Lagrange ``degree``, 2 by default: the pressure across a short film
is a parabola, which degree 2 holds exactly). theta is periodic and P = 0 at the ends: both by
one map of the mesh's dofs to the film's unknowns (the dofs at theta = 2 pi are those at
theta = 0; the ends' dofs are dropped), so the film's matrix is P^T A P (PETSc's PtAP) on a
mesh that needs no periodic topology and works on every DOLFINx version alike. An axial
supply groove (``groove``: its angle) holds P = 0 along its line instead: the film starts and
ends there.

The film is small (some 10^4 unknowns) and is solved **on MPI.COMM_SELF, replicated on every
rank**: each rank holds the whole film and finds the same pressure, force and coefficients
bit for bit (its operations are sequential and deterministic), so a rotor on any number of
ranks sees the same bearing without a communication per solve, and the film needs no
partition across its periodic seam. A film of 10^4 unknowns takes a few milliseconds per
solve; distributing it would cost more in messages than it saves.

**Cavitation.** ``"reynolds"`` (Swift-Stieber): P >= 0 everywhere, and where P > 0 the equation
holds; the discrete problem is the complementarity problem P >= 0, A P - b >= 0,
P . (A P - b) = 0 on the film's unknowns, solved by PETSc's reduced-space active-set Newton
(SNESVINEWTONRSLS) with the bound P >= 0 (no clipping: the film is cut where its equation
would need a negative pressure, and the boundary where it ruptures carries P = dP/dn = 0 in
the limit). ``"half-sommerfeld"`` (Guembel): the full film's pressure, of which only the
positive part carries load (the short- and long-bearing closed forms use it). ``"none"``: the
full (Sommerfeld) film, negative pressures kept.

**Coefficients.** The film's force F(x, x', Omega) on the journal (x its centre, from the
bearing's centre, in the bearing's x, y) is linear in the pressure, and the pressure solves
A(x) P = b(x, x', Omega). The exact derivatives are P_j = A^-1 (-dR/dx_j) (the perturbation
equations, solved with the film's own operator; the residual's derivatives at fixed P are
those of the operator's polynomial in x and of b, the same as ``ufl.diff`` gives from the
form, :func:`dolfinx_mbs.forms.film.sensitivities`) and dF/dx_j = F(P_j); K = -dF/dx,
C = -dF/dx' (the force on the journal is -K dx - C dx' about the state). With the Reynolds
condition the derivative is that of the discrete film on its active set: the cavitated
unknowns stay at zero (P_j = 0 there) and the perturbation solves the equation on the film
that carries pressure; it is exact where the
active set does not change under a small motion (strict complementarity, which holds away
from a measure-zero set of states). With half-Sommerfeld the derivative of int max(P, 0) n is
int_{P > 0} P_j n. These are the coefficients of the discrete film (not finite differences of
its force): a check against central differences of the force agrees to the differences' own
error (tests/rotors/test_film.py).

**Equilibrium.** Under a load W (the force the journal puts on the film, e.g. its weight
(0, -m g)) at a spin speed Omega the journal sits where F(x, 0, Omega) + W = 0: Newton's
method on x with the Jacobian dF/dx = -K (quadratic convergence), from the short-bearing
(Ocvirk) estimate, its steps held inside ``max_eccentricity``.

**Bad input.** A non-positive or non-finite geometry or viscosity raises ``ValueError`` naming
the bearing. A load the film cannot carry at a speed (its equilibrium would need an
eccentricity ratio above ``max_eccentricity``), a journal at or past the wall (eccentricity
ratio >= 1) and a speed of zero with a load raise ``ValueError`` naming the bearing and what
to change; an equilibrium above ``warn_eccentricity`` logs a warning (a thin film: refine the
mesh around its minimum). Every rank holds the same film, so every rank raises alike.

Units: SI (m, Pa s, N, rad/s; pressures in Pa, coefficients in N/m and N s/m).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple

import numpy as np
import ufl
from dolfinx import fem, mesh
from dolfinx.fem import petsc as fpetsc
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import checks, compat
from dolfinx_mbs.assembly.body_loads import assembled
from dolfinx_mbs.assembly.operator_memory import assemble_into
from dolfinx_mbs.bodies.attachments import Coefficients
from dolfinx_mbs.forms import film as FF
from dolfinx_mbs.petsc_options import SolverOptions, reason_name

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["CAVITATION", "Equilibrium", "FilmState", "FilmTable", "LoadedJournal", "PlainJournal",
           "short_bearing"]

log = logging.getLogger(__name__)

#: the cavitation conditions a film takes
CAVITATION = ("reynolds", "half-sommerfeld", "none")
#: the options prefix of the film's VI Newton (the database may change its solver)
PREFIX = "mbs_film_"
#: the quadrature degree of the half-Sommerfeld force and torque, whose integrands jump where
#: the full film's pressure changes sign (Gauss points resolve the cut cells to O(h / degree))
CUT_QUADRATURE = 16

_ids = itertools.count()


@dataclasses.dataclass(frozen=True)
class FilmTable:
    """A film's coefficients over speed under one load (:meth:`PlainJournal.table`).

    Attributes:
        coefficients: the eight coefficients over the speeds (``coefficients.kxx``, ...,
            ``coefficients.speeds``).
        eccentricity: the equilibrium's eccentricity ratio at each speed.
        attitude: its attitude angle at each speed (rad).
    """

    coefficients: Coefficients
    eccentricity: np.ndarray
    attitude: np.ndarray

    @property
    def speeds(self) -> np.ndarray:
        """The speeds (rad/s)."""
        assert self.coefficients.speeds is not None  # (a film's table has its speeds)
        return self.coefficients.speeds


@dataclasses.dataclass
class FilmState:
    """The film at one position and velocity of the journal.

    Attributes:
        position: the journal's centre from the bearing's centre (m, bearing x, y).
        velocity: its velocity (m/s).
        speed: the spin speed (rad/s).
        force: the film's force on the journal (N).
        stiffness: K = -dF/dposition (N/m), or None when not asked.
        damping: C = -dF/dvelocity (N s/m), or None when not asked.
        torque: the friction torque against the spin (N m; NaN when not asked).
        cavitated: the fraction of the film's unknowns without pressure (Reynolds: at the
            bound P = 0; half-Sommerfeld: P < 0; "none": 0).
    """

    position: np.ndarray
    velocity: np.ndarray
    speed: float
    force: np.ndarray
    stiffness: np.ndarray | None
    damping: np.ndarray | None
    torque: float
    cavitated: float


@dataclasses.dataclass
class Equilibrium:
    """The journal's static equilibrium under a load at a speed (:meth:`PlainJournal.equilibrium`).

    Attributes:
        load: the load on the journal (N, bearing x, y).
        speed: the spin speed (rad/s).
        position: the journal's centre from the bearing's centre (m).
        eccentricity: the eccentricity ratio abs(position) / c.
        attitude: the attitude angle (rad): from the load's direction to the journal's
            displacement, positive in the sense of the spin.
        min_film: the minimum film thickness c (1 - eccentricity) (m).
        friction_torque: the film's torque against the spin (N m).
        power_loss: friction_torque * abs(speed) (W).
        sommerfeld: Sommerfeld's number S = mu N L D / W (R / c)^2 (N in rev/s).
        pressure: the film's pressure (Pa) as a DOLFINx Function on the film's mesh
            (coordinates theta in rad, z in m; MPI.COMM_SELF: every rank holds it whole).
        stiffness: K (N/m) at the equilibrium.
        damping: C (N s/m) at the equilibrium.
        iterations: Newton's iterations.
        cavitated: the fraction of the film without pressure.
    """

    load: np.ndarray
    speed: float
    position: np.ndarray
    eccentricity: float
    attitude: float
    min_film: float
    friction_torque: float
    power_loss: float
    sommerfeld: float
    pressure: fem.Function
    stiffness: np.ndarray
    damping: np.ndarray
    iterations: int
    cavitated: float


def short_bearing(diameter: float, length: float, clearance: float, viscosity: float,
                  load: float, speed: float) -> Tuple[float, float]:
    """The short-bearing (Ocvirk, half-Sommerfeld) eccentricity ratio and attitude angle under
    ``load`` at ``speed``: the root in (0, 1) of Friswell et al.'s quartic in eps^2 with the
    modified Sommerfeld number S_s = D Omega mu L^3 / (8 c^2 W), and
    tan(attitude) = pi sqrt(1 - eps^2) / (4 eps). The film's starting estimate; a closed form
    for checks.

    Args:
        diameter: D (m).
        length: L (m).
        clearance: c (m).
        viscosity: mu (Pa s).
        load: |W| (N, > 0).
        speed: |Omega| (rad/s, > 0).

    Returns:
        ``(eps, attitude)``.
    """
    s = diameter * abs(speed) * viscosity * length ** 3 / (8.0 * clearance ** 2 * abs(load))
    roots = np.roots([1.0, -4.0, 6.0 - s * s * (16.0 - math.pi ** 2), -(4.0 + math.pi ** 2 * s * s),
                      1.0])
    real = [float(r.real) for r in roots if abs(r.imag) < 1e-9 and 0.0 < r.real < 1.0]
    e = math.sqrt(min(real)) if real else 1.0 - 1e-9
    return e, math.atan2(math.pi * math.sqrt(max(1.0 - e * e, 0.0)), 4.0 * e)


class PlainJournal:
    """A plain (360 degree, cylindrical) journal bearing: its oil film from the Reynolds
    equation (module docstring).

    Args:
        diameter: the journal's diameter D (m).
        length: the bearing's length L (m).
        clearance: the radial clearance c (m).
        viscosity: the oil's dynamic viscosity mu (Pa s), constant over the film.
        cavitation: ``"reynolds"`` (Swift-Stieber, by SNESVI), ``"half-sommerfeld"``
            (Guembel) or ``"none"`` (the full Sommerfeld film).
        cells: (around, along): the film mesh's quadrilaterals around the journal and along
            it.
        degree: the pressure's Lagrange degree.
        name: a label (in errors and warnings).
        max_eccentricity: the largest eccentricity ratio of an equilibrium; a load that needs
            more is refused (the film cannot carry it at that speed).
        warn_eccentricity: an equilibrium above it logs a warning (a thin film).
        groove: the angle (rad, from x in the sense of the spin) of an axial supply groove
            along the whole length where the film's pressure is the ambient 0 (a line
            source of oil: the film starts there), or None for a complete film (periodic
            around).

    Raises:
        ValueError: a geometry, viscosity or limit that is not positive and finite, an unknown
            cavitation, a mesh too coarse (naming the bearing).
    """

    def __init__(self, diameter: float, length: float, clearance: float, viscosity: float,
                 cavitation: str = "reynolds", cells: Tuple[int, int] = (64, 12),
                 degree: int = 2, name: str | None = None, max_eccentricity: float = 0.95,
                 warn_eccentricity: float = 0.9, groove: float | None = None) -> None:
        self.name = name or f"journal{next(_ids)}"
        label = f"journal bearing {self.name!r}"
        vals = {}
        for key, v in (("diameter", diameter), ("length", length), ("clearance", clearance),
                       ("viscosity", viscosity)):
            try:
                vals[key] = checks.positive(v, f"{label}: {key}")
            except TypeError as err:
                raise TypeError(str(err)) from None
        self.diameter, self.length = vals["diameter"], vals["length"]
        self.clearance, self.viscosity = vals["clearance"], vals["viscosity"]
        self.radius = 0.5 * self.diameter
        if self.clearance >= self.radius:
            raise ValueError(f"{label}: the clearance {self.clearance!r} m must be smaller "
                             f"than the journal's radius {self.radius!r} m")
        if cavitation not in CAVITATION:
            raise ValueError(f"{label}: cavitation must be one of {CAVITATION}, got "
                             f"{cavitation!r}")
        self.cavitation = cavitation
        if len(tuple(cells)) != 2 or any(int(n) != n or n < 4 for n in cells):
            raise ValueError(f"{label}: cells must be two integers >= 4 (around, along), got "
                             f"{cells!r}")
        self.cells = (int(cells[0]), int(cells[1]))
        if degree not in (1, 2, 3):
            raise ValueError(f"{label}: degree must be 1, 2 or 3, got {degree!r}")
        self.degree = int(degree)
        #: the angle of an axial supply groove at ambient pressure (None: a complete film)
        self.groove = None if groove is None else checks.real(groove, f"{label}: groove")
        self.max_eccentricity = checks.positive(max_eccentricity, f"{label}: max_eccentricity")
        self.warn_eccentricity = checks.positive(warn_eccentricity,
                                                 f"{label}: warn_eccentricity")
        if self.max_eccentricity >= 1.0:
            raise ValueError(f"{label}: max_eccentricity must be below 1 (the wall), got "
                             f"{max_eccentricity!r}")
        self._film: _Film | None = None
        self._coefficients: Dict[tuple, Tuple[np.ndarray, np.ndarray]] = {}
        self._equilibria: Dict[tuple, Equilibrium] = {}

    @property
    def label(self) -> str:
        """The bearing as errors name it."""
        return f"journal bearing {self.name!r}"

    @property
    def film(self) -> _Film:
        """The film's discrete problem (made at first use)."""
        if self._film is None:
            self._film = _Film(self)
        return self._film

    # -- the film at a state ----------------------------------------------------------------
    def force(self, position: ArrayLike, velocity: ArrayLike = (0.0, 0.0),
              speed: float = 0.0, derivatives: bool = True,
              torque: bool = False) -> FilmState:
        """The film's force on the journal at ``position`` and ``velocity`` (m, m/s, in the
        bearing's x, y) and spin ``speed`` (rad/s), and with ``derivatives`` its stiffness
        and damping there (the exact linearization).

        Args:
            position: the journal's centre from the bearing's centre (m).
            velocity: its velocity (m/s).
            speed: the spin speed (rad/s).
            derivatives: compute K and C.
            torque: compute the friction torque (else ``FilmState.torque`` is NaN).

        Returns:
            The :class:`FilmState`.

        Raises:
            ValueError: a journal at or past the wall, non-finite input.
        """
        x = checks.vector(position, 2, f"{self.label}: position")
        v = checks.vector(velocity, 2, f"{self.label}: velocity")
        w = checks.real(speed, f"{self.label}: speed")
        e = float(np.linalg.norm(x)) / self.clearance
        if e >= 1.0:
            raise ValueError(f"{self.label}: the journal touches the bearing's wall "
                             f"(eccentricity ratio {e:.6g} >= 1 at position {x.tolist()} m, "
                             f"clearance {self.clearance:g} m): the film breaks down; a run "
                             "past this point needs a contact model, a smaller load or a "
                             "higher speed")
        return self.film.state(x / self.clearance, v / self.clearance, w, derivatives, torque)

    # -- equilibrium and coefficients -------------------------------------------------------
    def _load_speed(self, load: ArrayLike, speed: float) -> Tuple[np.ndarray, float]:
        W = checks.vector(load, 2, f"{self.label}: load")
        w = checks.real(speed, f"{self.label}: speed")
        if w == 0.0 and np.any(W != 0.0):
            raise ValueError(f"{self.label}: a film at rest (speed 0) carries no steady load "
                             f"({W.tolist()} N): give a spin speed, or leave the bearing out "
                             "of analyses at rest")
        return W, w

    def equilibrium(self, load: ArrayLike, speed: float) -> Equilibrium:
        """The journal's static equilibrium under ``load`` (N, the force the journal puts on
        the film, in the bearing's x, y) at the spin ``speed`` (rad/s): Newton's method on the
        journal's position (module docstring).

        Args:
            load: the load (2-vector, N).
            speed: the spin speed (rad/s, not 0 with a load).

        Returns:
            The :class:`Equilibrium` (kept: the same load and speed give the same object).

        Raises:
            ValueError: a load the film cannot carry at this speed (an eccentricity ratio
                above ``max_eccentricity``), a speed of zero, non-finite input.
            RuntimeError: Newton's method did not converge.
        """
        W, w = self._load_speed(load, speed)
        key = (float(W[0]), float(W[1]), w)
        eq = self._equilibria.get(key)
        if eq is None:
            eq = self._equilibria[key] = self._solve_equilibrium(W, w)
        return eq

    def coefficients(self, load: ArrayLike, speed: float) -> Tuple[np.ndarray, np.ndarray]:
        """The eight coefficients at the equilibrium under ``load`` at ``speed``: K (N/m) and
        C (N s/m), 2 x 2 each in the bearing's x, y (the rotor's transverse axes); the film's
        force about the equilibrium is -K dx - C dx'.

        Args:
            load: the load (2-vector, N).
            speed: the spin speed (rad/s).

        Returns:
            ``(K, C)`` (copies).
        """
        eq = self.equilibrium(load, speed)
        return eq.stiffness.copy(), eq.damping.copy()

    def table(self, load: ArrayLike, speeds: Sequence[float],
              extrapolate: bool = False) -> "FilmTable":
        """The eight coefficients over ``speeds`` under ``load`` (a bearing's table, as
        ``Model.bearing(..., journal=film, speeds=...)`` takes it) with the equilibria's
        eccentricity and attitude.

        Args:
            load: the load (2-vector, N).
            speeds: the spin speeds (rad/s), strictly increasing.
            extrapolate: the table's coefficients allow speeds outside it (ends held).

        Returns:
            The table.
        """
        s = np.asarray(speeds, dtype=float).reshape(-1)
        K, C, ecc, att = [], [], [], []
        for w in s:
            eq = self.equilibrium(load, float(w))
            K.append(eq.stiffness)
            C.append(eq.damping)
            ecc.append(eq.eccentricity)
            att.append(eq.attitude)
        k, c = np.array(K).reshape(-1, 4).T, np.array(C).reshape(-1, 4).T
        coeffs = Coefficients(kxx=k[0], kxy=k[1], kyx=k[2], kyy=k[3], cxx=c[0], cxy=c[1],
                              cyx=c[2], cyy=c[3], speeds=s, extrapolate=extrapolate)
        return FilmTable(coeffs, np.array(ecc), np.array(att))

    def loaded(self, load: ArrayLike) -> "LoadedJournal":
        """The film under a fixed ``load``: its coefficients as functions of the speed,
        ``K(speed)``, ``C(speed)`` (what a bearing with coefficients over speed, as ROSS's
        ``BearingElement``, asks of it).

        Args:
            load: the load (2-vector, N).

        Returns:
            The :class:`LoadedJournal`.
        """
        return LoadedJournal(self, load)

    def _initial(self, W: np.ndarray, w: float) -> np.ndarray:
        """The starting position (units of c): the nearest speed's equilibrium under this load,
        else the short bearing's, inside 0.8 max_eccentricity."""
        near = [(abs(k[2] - w), eq) for k, eq in self._equilibria.items()
                if k[:2] == (W[0], W[1]) and np.sign(k[2]) == np.sign(w)]
        if near:
            return min(near, key=lambda t: t[0])[1].position / self.clearance
        e, phi = short_bearing(self.diameter, self.length, self.clearance, self.viscosity,
                               float(np.linalg.norm(W)), w)
        e = min(e, 0.8 * self.max_eccentricity)
        phi *= np.sign(w)
        d = W / np.linalg.norm(W)
        c, s = math.cos(phi), math.sin(phi)
        return e * np.array([c * d[0] - s * d[1], s * d[0] + c * d[1]])

    def _solve_equilibrium(self, W: np.ndarray, w: float) -> Equilibrium:
        film, c = self.film, self.clearance
        Wn = float(np.linalg.norm(W))
        X = np.zeros(2) if Wn == 0.0 else self._initial(W, w)
        zero = np.zeros(2)
        st = film.state(X, zero, w, True)
        R = st.force + W
        tol = 1e-10 * max(Wn, 1e-300)
        emax = self.max_eccentricity
        it = 0
        for it in range(1, 60):
            if Wn == 0.0 or np.linalg.norm(R) <= tol:
                break
            assert st.stiffness is not None  # (a state with derivatives)
            J = -c * st.stiffness                 # dF/dX
            try:
                dX = -np.linalg.solve(J, R)
            except np.linalg.LinAlgError:
                raise RuntimeError(f"{self.label}: the film's stiffness is singular at "
                                   f"eccentricity ratio {np.linalg.norm(X):.4g} under load "
                                   f"{W.tolist()} N at {w:g} rad/s") from None
            step, accepted = 1.0, False
            for _ in range(30):
                Xn = X + step * dX
                en = float(np.linalg.norm(Xn))
                if en > emax:   # inside the limit: a little beyond the boundary the film
                    Xn *= emax / en       # would need to go, the load cannot be carried
                stn = film.state(Xn, zero, w, True)
                Rn = stn.force + W
                if np.linalg.norm(Rn) < (1.0 - 1e-4 * step) * np.linalg.norm(R):
                    accepted = True
                    break
                step *= 0.5
            if not accepted:
                break
            X, st, R = Xn, stn, Rn
        e = float(np.linalg.norm(X))
        if np.linalg.norm(R) > tol:
            if e >= emax * (1.0 - 1e-9):
                raise ValueError(
                    f"{self.label} cannot carry the load {W.tolist()} N at {w:g} rad/s: its "
                    f"equilibrium needs an eccentricity ratio above max_eccentricity = "
                    f"{emax:g} (the film force there is {(-st.force).tolist()} N; minimum film "
                    f"{c * (1.0 - emax):.3g} m). Raise the speed, the viscosity, the length or "
                    "lower the load (or max_eccentricity, on a mesh that resolves the thin film)")
            raise RuntimeError(f"{self.label}: Newton's method on the equilibrium under "
                               f"{W.tolist()} N at {w:g} rad/s stopped at eccentricity ratio "
                               f"{e:.6g} with a force residual {np.linalg.norm(R):.3g} N after "
                               f"{it} iterations")
        if e > self.warn_eccentricity:
            log.warning("%s: the equilibrium under %s N at %g rad/s has eccentricity ratio %.4f "
                        "(minimum film %.3g m): a thin film, check the coefficients on a finer "
                        "mesh (cells=)", self.label, W.tolist(), w, e, c * (1.0 - e))
        tq = film.state(X, zero, w, False, torque=True).torque
        pos = c * X
        if Wn > 0.0 and e > 0.0:
            att = math.atan2(W[0] * X[1] - W[1] * X[0], W[0] * X[0] + W[1] * X[1])
            att *= 1.0 if w >= 0.0 else -1.0
        else:
            att = 0.0
        N = abs(w) / (2.0 * math.pi)
        S = (self.viscosity * N * self.length * self.diameter / Wn
             * (self.radius / c) ** 2) if Wn > 0.0 else math.inf
        assert st.stiffness is not None and st.damping is not None  # (with derivatives)
        return Equilibrium(load=W.copy(), speed=w, position=pos, eccentricity=e, attitude=att,
                           min_film=c * (1.0 - e), friction_torque=tq,
                           power_loss=tq * abs(w), sommerfeld=S,
                           pressure=film.pressure_copy(), stiffness=st.stiffness,
                           damping=st.damping, iterations=it, cavitated=st.cavitated)

    def __repr__(self) -> str:
        return (f"PlainJournal({self.name!r}, D={self.diameter:g}, L={self.length:g}, "
                f"c={self.clearance:g}, mu={self.viscosity:g}, {self.cavitation})")


#: the monomials X_x^i X_y^j of the film's operator, cubic in the position (H^3)
MONOMIALS = ((0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 0), (2, 1), (1, 2), (0, 3))
#: where the operator is assembled to find its monomials' matrices (in units of c), and the
#: point of the check
SAMPLES = tuple((0.5 * math.cos(2 * math.pi * k / 7 + r), 0.5 * math.sin(2 * math.pi * k / 7 + r))
                for k, r in ((k, 0.0) for k in range(7))) + ((0.0, 0.0), (0.25, 0.0), (0.0, 0.25))
CHECK = (0.3, -0.2)
#: the largest relative Frobenius difference of the combined operator at the check point
COMBINATION_TOL = 1e-10


def _monomials(X: ArrayLike) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    return np.array([X[0] ** i * X[1] ** j for i, j in MONOMIALS])


def _monomial_derivatives(X: ArrayLike) -> np.ndarray:
    """(2, 10): d monomial / d X_x and d X_y."""
    X = np.asarray(X, dtype=float)
    out = np.zeros((2, len(MONOMIALS)))
    for m, (i, j) in enumerate(MONOMIALS):
        if i:
            out[0, m] = i * X[0] ** (i - 1) * X[1] ** j
        if j:
            out[1, m] = j * X[0] ** i * X[1] ** (j - 1)
    return out


class LoadedJournal:
    """A :class:`PlainJournal` under a fixed load (:meth:`PlainJournal.loaded`): the eight
    coefficients as functions of the speed, the film keeping what it solved.

    Args:
        film: the bearing's film.
        load: the load on the journal (2-vector, N).
    """

    def __init__(self, film: PlainJournal, load: ArrayLike) -> None:
        self.film = film
        self.load = checks.vector(load, 2, f"{film.label}: load")

    def K(self, speed: float) -> np.ndarray:
        """The stiffness (2 x 2, N/m) at ``speed`` (rad/s).

        Args:
            speed: the spin speed (rad/s).

        Returns:
            K.
        """
        return self.film.coefficients(self.load, speed)[0]

    def C(self, speed: float) -> np.ndarray:
        """The damping (2 x 2, N s/m) at ``speed`` (rad/s).

        Args:
            speed: the spin speed (rad/s).

        Returns:
            C.
        """
        return self.film.coefficients(self.load, speed)[1]

    def __repr__(self) -> str:
        return f"LoadedJournal({self.film!r}, load={self.load.tolist()})"


class _Film:
    """The discrete film of a :class:`PlainJournal` on MPI.COMM_SELF: mesh, space, forms,
    the periodic map, the solvers (made once, reused for every state).

    The operator a(P, q) = int H^3 grad P . grad q is a cubic polynomial in the journal's
    position X (H = 1 - X . n), and so is its assembled matrix (quadrature is linear): it is
    assembled from the form at ten positions, the matrices of its ten monomials solved from
    them once (checked at an eleventh position to :data:`COMBINATION_TOL`), and every state's
    matrix combined from them on one pattern, without assembly; the right-hand side is linear
    in Omega X and V, combined from four assembled vectors. The residual's derivatives in X
    are those of the polynomial (:func:`dolfinx_mbs.forms.film.sensitivities` gives the same
    by ``ufl.diff``: tests/rotors/test_film.py)."""

    def __init__(self, bearing: PlainJournal) -> None:
        self.bearing = b = bearing
        comm = MPI.COMM_SELF
        nt, nz = b.cells
        L = b.length
        #: the film's first angle: the groove's, else 0 (the mesh covers one turn from it)
        self.start = 0.0 if b.groove is None else b.groove
        self.mesh = mesh.create_rectangle(
            comm, [np.array([self.start, -0.5 * L]),
                   np.array([self.start + 2.0 * math.pi, 0.5 * L])], [nt, nz],
            cell_type=mesh.CellType.quadrilateral)
        self.V = V = compat.scalar_space(self.mesh, b.degree)
        self.P = fem.Function(V)
        q = ufl.TestFunction(V)
        x = ufl.SpatialCoordinate(self.mesh)
        m = self.mesh

        def const(value: Any) -> fem.Constant:
            return fem.Constant(m, np.asarray(value, dtype=compat.scalar_type))

        self.X, self.Vel = const(np.zeros(2)), const(np.zeros(2))
        self.speed, self.R = const(0.0), const(b.radius)
        self.fscale = const(b.viscosity * b.radius ** 3 / b.clearance ** 2)
        self.tscale = const(b.viscosity * b.radius ** 3 / b.clearance)
        dx = ufl.Measure("dx", domain=m, metadata={"quadrature_degree": 2 * b.degree + 4})
        # half-Sommerfeld's weights cut the cells where P changes sign: a finer quadrature
        dxc = ufl.Measure("dx", domain=m, metadata={"quadrature_degree": CUT_QUADRATURE})
        _, a, rhs = FF.reynolds(self.P, q, x, self.X, self.Vel, self.speed, self.R, dx)
        self.a, self.rhs = compat.form(a), compat.form(rhs)
        half = b.cavitation == "half-sommerfeld"
        # the force's weights: F_j = w_j . P (of max(P, 0) where P > 0 for half-Sommerfeld)
        self.weight_forms = [compat.form(f) for f in
                             FF.force(q, x, self.fscale, dxc if half else dx,
                                      where=self.P if half else None)]
        self.torque_form = compat.form(FF.friction_torque(self.P, x, self.X, self.speed,
                                                           self.tscale, dxc if half else dx,
                                                           positive=half))
        self._map()
        self._operator_basis()
        self._weights_r = None if half else self._weights()
        self.xr = self.Pm.createVecRight()
        self.br, self.fr = self.xr.duplicate(), self.xr.duplicate()
        self.dxr = [self.xr.duplicate() for _ in range(4)]
        self.sr = self.xr.duplicate()
        self._Ax = [self.xr.duplicate() for _ in MONOMIALS]
        self._lu: PETSc.KSP | None = None
        self._snes: PETSc.SNES | None = None
        self._pert: PETSc.KSP | None = None
        self._Apert: PETSc.Mat | None = None
        self._guess = False

    def _operator_basis(self) -> None:
        """The reduced matrices of the operator's monomials and the right-hand side's unit
        vectors (class docstring)."""
        A = fpetsc.create_matrix(self.a)
        mats = []
        for X in SAMPLES + (CHECK,):
            self.X.value = np.asarray(X)
            assemble_into(A, self.a)
            mats.append(A.PtAP(self.Pm))
        A.destroy()
        inv = np.linalg.inv(np.array([_monomials(X) for X in SAMPLES]))
        self.basis: List[PETSc.Mat] = []
        for mrow in inv:   # A_m = sum_k inv[m, k] A(X_k)
            B = mats[0].duplicate()
            for c, Ak in zip(mrow, mats[:-1]):
                B.axpy(float(c), Ak, structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN)
            self.basis.append(B)
        self.Ar: PETSc.Mat = mats[0].duplicate()
        self._combine(CHECK)
        D = self.Ar.copy()
        D.axpy(-1.0, mats[-1], structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN)
        err = D.norm(PETSc.NormType.FROBENIUS) / mats[-1].norm(PETSc.NormType.FROBENIUS)
        for Z in mats + [D]:
            Z.destroy()
        if not err <= COMBINATION_TOL:
            raise RuntimeError(f"{self.bearing.label}: the film's operator is not the cubic "
                               f"polynomial in the position its form says (difference {err:.3g}"
                               " at the check point)")
        b = compat.create_vector(self.rhs)
        self.units = []   # -dR/d(Omega X_x), -dR/d(Omega X_y), -dR/dV_x, -dR/dV_y (reduced)
        for X, V, w in (((1.0, 0.0), (0.0, 0.0), 1.0), ((0.0, 1.0), (0.0, 0.0), 1.0),
                        ((0.0, 0.0), (1.0, 0.0), 0.0), ((0.0, 0.0), (0.0, 1.0), 0.0)):
            self.X.value, self.Vel.value, self.speed.value = X, V, w
            assembled(b, self.rhs)
            u = self.Pm.createVecRight()
            self.Pm.multTranspose(b, u)
            self.units.append(u)
        b.destroy()

    def _combine(self, X: ArrayLike) -> None:
        """A_r = sum_m X^m A_m (on one pattern)."""
        self.Ar.zeroEntries()
        for c, B in zip(_monomials(X), self.basis):
            if c != 0.0:
                self.Ar.axpy(float(c), B, structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN)

    def _map(self) -> None:
        """The map Pm from the film's unknowns to the mesh's dofs: theta = 2 pi's dofs are
        theta = 0's, the ends' (P = 0) are dropped, and with a groove both (P = 0 there)."""
        b = self.bearing
        xy = self.V.tabulate_dof_coordinates()[:, :2]
        n = xy.shape[0]
        tol = 1e-9
        theta = xy[:, 0] - self.start
        end = np.abs(np.abs(xy[:, 1]) - 0.5 * b.length) < tol * b.length
        seam = np.abs(theta - 2.0 * math.pi) < tol
        master = np.abs(theta) < tol
        if b.groove is not None:   # the film starts and ends at the groove's ambient pressure
            end |= seam | master
        keep = ~end & ~seam
        index = -np.ones(n, dtype=np.int64)
        index[keep] = np.arange(int(keep.sum()))
        zkey = np.round(xy[:, 1] / b.length * 1e8).astype(np.int64)
        by_z = {int(k): i for i, k in zip(np.flatnonzero(master & ~end),
                                          zkey[master & ~end])}
        for i in np.flatnonzero(seam & ~end):
            j = by_z.get(int(zkey[i]))
            if j is None:
                raise RuntimeError(f"{b.label}: the film mesh's dof at theta = 2 pi, z = "
                                   f"{xy[i, 1]:g} has no partner at theta = 0")
            index[i] = index[j]
        rows = np.flatnonzero(index >= 0)
        nr = int(keep.sum())
        Pm = PETSc.Mat().createAIJ([n, nr], nnz=1, comm=MPI.COMM_SELF)
        for i in rows:
            Pm.setValue(int(i), int(index[i]), 1.0)
        Pm.assemble()
        self.Pm, self.n_unknowns = Pm, nr

    def _weights(self) -> List[PETSc.Vec]:
        out = []
        for f in self.weight_forms:
            w = assembled(compat.create_vector(f), f)
            wr = self.Pm.createVecRight()
            self.Pm.multTranspose(w, wr)
            w.destroy()
            out.append(wr)
        return out

    def _assemble(self, X: np.ndarray, V: np.ndarray, w: float) -> None:
        """The state's reduced matrix and right-hand side (combined, not assembled)."""
        self.X.value, self.Vel.value, self.speed.value = X, V, w
        self._combine(X)
        u = self.units
        self.br.zeroEntries()
        for c, ui in ((w * X[0], u[0]), (w * X[1], u[1]), (V[0], u[2]), (V[1], u[3])):
            if c != 0.0:
                self.br.axpy(float(c), ui)

    def _lu_solver(self) -> PETSc.KSP:
        if self._lu is None:
            ksp = PETSc.KSP().create(MPI.COMM_SELF)
            ksp.setType(PETSc.KSP.Type.PREONLY)
            ksp.getPC().setType(PETSc.PC.Type.LU)
            ksp.getPC().setFactorOrdering(PETSc.Mat.OrderingType.ND)
            self._lu = ksp
        return self._lu

    def _solve_linear(self, ksp: PETSc.KSP, A: PETSc.Mat, rhs: PETSc.Vec, out: PETSc.Vec,
                      what: str) -> None:
        ksp.setOperators(A)
        ksp.solve(rhs, out)
        if ksp.getConvergedReason() < 0 or not math.isfinite(out.norm()):
            reason = reason_name(PETSc.KSP.ConvergedReason, ksp.getConvergedReason())
            raise RuntimeError(f"{self.bearing.label}: the film's {what} solve failed "
                               f"({reason}) at eccentricity ratio "
                               f"{np.linalg.norm(self.X.value):.6g}")

    def _vi(self) -> PETSc.SNES:
        if self._snes is None:
            snes = PETSc.SNES().create(MPI.COMM_SELF)
            snes.setOptionsPrefix(PREFIX)
            snes.setType("vinewtonrsls")
            snes.setFunction(self._residual, self.fr)
            snes.setJacobian(self._jacobian, self.Ar)
            ksp = snes.getKSP()
            ksp.setType(PETSc.KSP.Type.PREONLY)
            ksp.getPC().setType(PETSc.PC.Type.LU)
            snes.setTolerances(rtol=1e-13, atol=0.0, stol=0.0, max_it=100)
            lo, hi = self.xr.duplicate(), self.xr.duplicate()
            lo.set(0.0)
            hi.set(PETSc.INFINITY)
            snes.setVariableBounds(lo, hi)
            self._bounds = (lo, hi)
            SolverOptions(PREFIX, defaults={"snes_linesearch_type": "basic"}).set_from_options(
                snes)
            self._snes = snes
        return self._snes

    def _residual(self, snes: PETSc.SNES, x: PETSc.Vec, f: PETSc.Vec) -> None:
        self.Ar.mult(x, f)
        f.axpy(-1.0, self.br)

    def _jacobian(self, snes: PETSc.SNES, x: PETSc.Vec, J: PETSc.Mat, P: PETSc.Mat) -> None:
        pass  # the film's operator is linear: A_r, assembled at the state

    def _solve_pressure(self) -> None:
        b = self.bearing
        if b.cavitation != "reynolds":
            self._solve_linear(self._lu_solver(), self.Ar, self.br, self.xr, "pressure")
            return
        snes = self._vi()
        if not self._guess:   # the full film's positive part: near the answer
            self._solve_linear(self._lu_solver(), self.Ar, self.br, self.xr, "pressure")
            self._guess = True
        arr = self.xr.getArray()
        np.maximum(arr, 0.0, out=arr)
        scale = self.br.norm()
        if scale == 0.0:   # no source: no pressure (a journal at rest in the centre)
            self.xr.set(0.0)
            return
        snes.setTolerances(rtol=1e-12, atol=1e-11 * scale, stol=0.0, max_it=100)
        snes.setJacobian(self._jacobian, self.Ar)
        snes.solve(None, self.xr)
        reason = snes.getConvergedReason()
        if reason <= 0 or not math.isfinite(self.xr.norm()):
            self._guess = False
            raise RuntimeError(
                f"{b.label}: the film's variational inequality (SNESVINEWTONRSLS) did not "
                f"converge ({reason_name(PETSc.SNES.ConvergedReason, reason)}) at eccentricity "
                f"ratio {np.linalg.norm(self.X.value):.6g}")

    def _active(self) -> np.ndarray:
        """The film's unknowns held at the bound (Reynolds: cavitated)."""
        x = self.xr.getArray(readonly=True)
        return np.flatnonzero(x <= 0.0).astype(PETSc.IntType)

    def _set_pressure(self) -> None:
        """The film's Function from the last state's unknowns."""
        self.Pm.mult(self.xr, compat.petsc_vec(self.P))
        self.P.x.scatter_forward()

    def state(self, X: np.ndarray, V: np.ndarray, w: float, derivatives: bool,
              torque: bool = False) -> FilmState:
        """The film at the position X and velocity V (units of c) and speed ``w``; its
        friction torque with ``torque`` (else NaN)."""
        b = self.bearing
        self._assemble(X, V, w)
        self._solve_pressure()
        half = b.cavitation == "half-sommerfeld"
        if half or torque:
            self._set_pressure()
        weights = self._weights() if half else self._weights_r
        assert weights is not None  # (kept unless half-Sommerfeld)
        F = np.array([wj.dot(self.xr) for wj in weights])
        tq = float(fem.assemble_scalar(self.torque_form)) if torque else math.nan
        x = self.xr.getArray(readonly=True)
        if b.cavitation == "reynolds":
            active = self._active()
            cav = active.size / max(x.size, 1)
        else:
            active = np.zeros(0, dtype=PETSc.IntType)
            cav = float(np.mean(x < 0.0)) if half else 0.0
        K = Cm = None
        if derivatives:
            dF = np.zeros((2, 4))
            if active.size:
                if self._Apert is None:
                    self._Apert = self.Ar.duplicate()
                self.Ar.copy(self._Apert, structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN)
                self._Apert.zeroRowsColumns(active, 1.0)
                ksp, A = self._pert_solver(), self._Apert
            else:
                ksp, A = self._lu_solver(), self.Ar
            dmono = _monomial_derivatives(X)
            for m, B in enumerate(self.basis):
                if np.any(dmono[:, m]):
                    B.mult(self.xr, self._Ax[m])
            for j in range(4):
                rhs = self.sr
                if j < 2:   # -dR/dX_j = -(dA/dX_j) P + Omega b_j
                    rhs.zeroEntries()
                    for m in range(len(MONOMIALS)):
                        if dmono[j, m] != 0.0:
                            rhs.axpy(-float(dmono[j, m]), self._Ax[m])
                    rhs.axpy(w, self.units[j])
                else:       # -dR/dV_j = b's unit
                    self.units[j].copy(rhs)
                if active.size:
                    rhs.setValues(active, np.zeros(active.size))
                    rhs.assemble()
                self._solve_linear(ksp, A, rhs, self.dxr[j], "perturbation")
                dF[:, j] = [wj.dot(self.dxr[j]) for wj in weights]
            c = b.clearance
            K, Cm = -dF[:, :2] / c, -dF[:, 2:] / c
        if half:
            for wj in weights:
                wj.destroy()
        out = FilmState(position=X * b.clearance, velocity=V * b.clearance, speed=w, force=F,
                        stiffness=K, damping=Cm, torque=tq, cavitated=float(cav))
        if not np.all(np.isfinite(F)):
            raise RuntimeError(f"{b.label}: the film's force is not finite at eccentricity "
                               f"ratio {np.linalg.norm(X):.6g}")
        return out

    def _pert_solver(self) -> PETSc.KSP:
        if self._pert is None:
            ksp = PETSc.KSP().create(MPI.COMM_SELF)
            ksp.setType(PETSc.KSP.Type.PREONLY)
            ksp.getPC().setType(PETSc.PC.Type.LU)
            ksp.getPC().setFactorOrdering(PETSc.Mat.OrderingType.ND)
            self._pert = ksp
        return self._pert

    def pressure_copy(self) -> fem.Function:
        """The last state's pressure in Pa (a new Function; max(P, 0) for half-Sommerfeld)."""
        b = self.bearing
        self._set_pressure()
        p = fem.Function(self.V, name="pressure")
        unit = b.viscosity * b.radius ** 2 / b.clearance ** 2
        arr = self.P.x.array * unit
        if b.cavitation == "half-sommerfeld":
            arr = np.maximum(arr, 0.0)
        p.x.array[:] = arr
        return p
