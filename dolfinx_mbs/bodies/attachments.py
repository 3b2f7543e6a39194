"""What a rotor rests on and carries: bearings (and seals) and rigid disks, each acting on the
mean motion of a surface of a body (a journal; a distributing coupling, as RBE3).

These are definitions: where they act (a ``ds`` measure of the journal's facets) and their
coefficients as functions of the spin speed. The mean motion's map and the matrices are made
by the operators (:mod:`dolfinx_mbs.assembly.rotor_terms`); the physics (the bearing's force,
the disk's equations) is written in :mod:`dolfinx_mbs.forms.stationary`. Units: SI (N/m,
N s/m, N m/rad, N m s/rad, kg, kg m^2, rad/s).
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any, Callable, Dict, Sequence, Tuple, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.bodies.loads import facet_measure

if TYPE_CHECKING:
    from dolfinx.mesh import MeshTags
    from numpy.typing import ArrayLike

    from dolfinx_mbs.bodies.body import Body

__all__ = ["Bearing", "Disk", "Unbalance", "COEFFICIENTS"]

#: the eight coefficients of a bearing, in the order of its 2 x 2 matrices (K, then C)
COEFFICIENTS = ("kxx", "kxy", "kyx", "kyy", "cxx", "cxy", "cyx", "cyy")
#: the optional axial and tilting coefficients (isotropic, constant)
EXTRA = ("kzz", "czz", "ktilt", "ctilt")
#: the direct coefficients: a passive support has none negative
DIRECT = ("kxx", "kyy", "cxx", "cyy", "kzz", "czz", "ktilt", "ctilt")

_ids = itertools.count()


class _Attachment:
    """A journal: the facets of ``body`` given by ``facets=(meshtags, tag)`` or ``where``."""

    kind = "attachment"

    def __init__(self, body: Body, facets: Tuple[MeshTags, int] | None,
                 where: Callable[[np.ndarray], np.ndarray] | None, name: str | None) -> None:
        self.body = body
        label = f"{self.kind} {name!r}" if name else self.kind
        #: the journal's facet measure (raises on every rank when it holds no facet)
        self.ds = facet_measure(body.mesh, facets, where, f"{label} on body {body.name!r}")
        # named once nothing can fail: a refused call takes no default name
        self.name = name or f"{self.kind}{next(_ids)}"


class Bearing(_Attachment):
    """A linear bearing (or seal) between a journal's mean motion and the ground, or between
    the mean motions of a journal and a housing on two bodies.

    To the ground, the force on the journal is -K_b ubar - C_b ubar' across the spin axis
    (x, y: the frame's transverse directions,
    :func:`dolfinx_mbs.frames.stationary.transverse_basis`), plus, when given,
    -kzz ubar_z - czz ubar_z' along it and -ktilt theta - ctilt theta' on the journal's tilt.
    Between two bodies (``other``), d = d_A - d_B replaces ubar: d_A the journal's mean motion
    on ``body``, d_B the housing's on ``other`` (the mean motion of the surface
    ``other_facets`` or ``other_where``), both in the same directions (x, y across the rotor's
    spin axis); the force -K_b d - C_b d' acts on the journal and its opposite on the housing.

    Coefficients are constant only where both sides are described at rest in the ground: the
    pairs accepted are a rotor in a :class:`~dolfinx_mbs.frames.Stationary` frame with a
    housing in a :class:`~dolfinx_mbs.frames.Ground` frame (either way round), two rotors in
    Stationary frames about one axis line, and two bodies in Ground frames (the same axis);
    rotating frames and moving frames are refused. The x, y directions and the speed at which
    a table is read are those of the rotor (of ``body`` when both spin; none, so no table, when
    neither does).

    A fluid-film bearing gives its coefficients itself: with ``journal`` (a
    :class:`dolfinx_mbs.rotors.PlainJournal`, or any object with ``coefficients(load, speed)
    -> (K, C)``, 2 x 2 each) and ``load`` (the static load the journal puts on its film, N,
    in x, y), the eight coefficients at a speed are the film's at its equilibrium under that
    load, asked at every speed an analysis takes (the film keeps what it solved), or
    tabulated once at ``speeds`` and interpolated. The film's coefficients have the speed's
    sign (a spin the other way mirrors them); at rest a film carries no steady load, so an
    analysis at speed 0 is refused. A run applies the film's whole nonlinear force instead
    (:mod:`dolfinx_mbs.systems.films`), ``load`` with it on the journal.

    Args:
        body: the body whose surface is the journal.
        facets, where: the journal (``(meshtags, tag)`` or a predicate on facet midpoints).
        kxx, kxy, kyx, kyy, cxx, cxy, cyx, cyy: the coefficients (N/m, N s/m): numbers, or
            arrays of ``len(speeds)`` values at ``speeds`` (interpolated linearly).
        speeds: the table's spin speeds (rad/s, strictly increasing), or None.
        journal: a fluid film that gives the coefficients (none of the eight given then).
        load: the static load on the journal's film (2-vector, N), with ``journal``.
        kzz, czz, ktilt, ctilt: axial and tilting stiffness and damping (constant).
        extrapolate: allow speeds outside the table (the end values held); else an error.
        name: a label.
        other: the body that holds the housing, or None for the ground.
        other_facets, other_where: the housing's surface on ``other`` (as ``facets``,
            ``where``).

    Raises:
        ValueError: a coefficient that is not finite or does not match ``speeds``, speeds that
            are not strictly increasing, a journal or housing that holds no facet, ``other``
            the journal's own body, frames that are not a pair named above, or a table of
            speeds where no side spins (on every rank); a ``load`` that is not a finite
            2-vector.
        TypeError: an ``other`` that is not an elastic body, or housing arguments without
            ``other``; a ``journal`` without ``coefficients``, with coefficients given beside
            it, or without ``load``.
    """

    kind = "bearing"

    def __init__(self, body: Body, facets: Tuple[MeshTags, int] | None = None,
                 where: Callable[[np.ndarray], np.ndarray] | None = None,
                 speeds: ArrayLike | None = None, extrapolate: bool = False,
                 name: str | None = None, other: Body | None = None,
                 other_facets: Tuple[MeshTags, int] | None = None,
                 other_where: Callable[[np.ndarray], np.ndarray] | None = None,
                 journal: Any = None, load: ArrayLike | None = None,
                 **coefficients: ArrayLike) -> None:
        unknown = set(coefficients) - set(COEFFICIENTS) - set(EXTRA)
        if unknown:
            raise TypeError(f"bearing: unknown coefficient(s) {sorted(unknown)}; expected "
                            f"{COEFFICIENTS + EXTRA}")
        #: the fluid film that gives the coefficients (None: the table's)
        self.journal = journal
        #: the static load on the journal's film (N, x and y), with ``journal``
        self.load: np.ndarray | None = None
        if journal is not None:
            self.load = _journal_load(journal, load, coefficients)
        elif load is not None:
            raise TypeError("bearing: load= is the static load of a fluid film's journal: "
                            "give journal= with it")
        self.speeds = None
        if speeds is not None:
            s = np.asarray(speeds, dtype=float).reshape(-1)
            if s.size < 2 or not np.all(np.isfinite(s)) or not np.all(np.diff(s) > 0.0):
                raise ValueError(f"bearing speeds must be a strictly increasing finite sequence "
                                 f"of at least 2 speeds (rad/s), got {speeds!r}")
            self.speeds = s
            if journal is not None:  # the film tabulated once, interpolated as any table
                coefficients = {**coefficients, **{k: v for k, v in journal.table(
                    self.load, s).items() if k in COEFFICIENTS}}
        self.table: Dict[str, np.ndarray] = {}
        for key in COEFFICIENTS:
            self.table[key] = self._coefficient(key, coefficients.get(key, 0.0))
        self.extra = {k: checks.real(coefficients.get(k, 0.0), f"bearing {k}") for k in EXTRA}
        label = f"bearing {name!r}" if name else "bearing"
        for key in DIRECT if journal is None else ():   # a film's are its own
            v = self.table[key] if key in self.table else np.asarray([self.extra[key]])
            if np.any(v < 0.0):
                raise ValueError(f"{label} on body {body.name!r}: {key} must not be negative "
                                 f"(a direct stiffness or damping pushes the journal along "
                                 f"its motion; a passive support has none), got "
                                 f"{v.tolist() if v.size > 1 else float(v[0])!r}")
        self.extrapolate = bool(extrapolate)
        #: the body of the housing (None: the ground)
        self.other: Body | None = other
        #: the body whose frame gives the x, y directions and the speed (None: no spin)
        self.rotor: Body | None = None
        #: the axis whose transverse directions are the bearing's x, y (a link; else None)
        self.axis: np.ndarray | None = None
        if other is None:
            if other_facets is not None or other_where is not None:
                raise TypeError("bearing: other_facets= and other_where= give the housing's "
                                "surface on other=, the housing's body (none given)")
            from dolfinx_mbs.frames.stationary import Ground

            if isinstance(body.frame, Ground) and journal is not None:
                raise ValueError(f"bearing on body {body.name!r} in a frames.Ground frame: "
                                 "a fluid film (journal=) needs a spinning journal: put the "
                                 "rotor in a frames.Stationary frame")
            if isinstance(body.frame, Ground) and self.speeds is not None:
                raise ValueError(f"bearing on body {body.name!r} in a frames.Ground frame: "
                                 "the body does not spin, so its coefficients cannot follow a "
                                 "speed table (speeds=); give numbers")
        else:
            self.rotor, self.axis = _link_frames(body, other, self.speeds is not None
                                                 or journal is not None)
        #: the housing's facet measure on ``other`` (None for the ground)
        self.other_ds = None
        if other is not None:
            label = f"bearing {name!r}" if name else "bearing"
            self.other_ds = facet_measure(other.mesh, other_facets, other_where,
                                          f"{label} on body {body.name!r}: its housing on body "
                                          f"{other.name!r} (other_facets= or other_where=)")
        super().__init__(body, facets, where, name)

    def _coefficient(self, key: str, value: ArrayLike) -> np.ndarray:
        a = np.asarray(value, dtype=float)
        if a.ndim == 0:
            if not math.isfinite(float(a)):
                raise ValueError(f"bearing coefficient {key} must be finite, got {value!r}")
            return a.reshape(1)
        a = a.reshape(-1)
        if self.speeds is None or a.size != self.speeds.size:
            n = "no speeds= table" if self.speeds is None else f"{self.speeds.size} speeds"
            raise ValueError(f"bearing coefficient {key}: {a.size} values given for {n} "
                             "(give a number, or one value per speed of speeds=)")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"bearing coefficient {key} must be finite at every speed, got "
                             f"{a.tolist()}")
        return a

    @property
    def speed_dependent(self) -> bool:
        """True when a coefficient changes with the speed."""
        return self._film_asked or any(v.size > 1 and np.ptp(v) != 0.0
                                       for v in self.table.values())

    @property
    def _film_asked(self) -> bool:
        """The film gives the coefficients at every speed (a journal without a table)."""
        return self.journal is not None and self.speeds is None

    def varies(self, key: str) -> bool:
        """True when the coefficient ``key`` changes with the speed (a speed table's, or a
        fluid film's).

        Args:
            key: the coefficient's name (``kxx``, ``cxy``, ...).

        Returns:
            Whether it varies.
        """
        v = self.table[key]
        return self._film_asked or (v.size > 1 and np.ptp(v) != 0.0)

    def support(self, rate: float) -> np.ndarray:
        """The bearing as a support (5 x 5, diagonal): the absolute values of its direct
        stiffnesses at ``rate`` (within its table), or for a fluid film asked at every speed
        the order of a film's direct stiffness, abs(load) / c (c the film's clearance; the
        film carries nothing at rest): what decides which rigid motions are free and what
        a prestress's unit solves stand on.

        Args:
            rate: the rotor's spin rate at t = 0 (rad/s).

        Returns:
            The diagonal matrix.
        """
        if self._film_asked:
            assert self.load is not None  # a journal's bearing has its static load
            k = float(np.linalg.norm(self.load)) / float(getattr(self.journal, "clearance",
                                                                   1.0))
            S = np.zeros((5, 5))
            S[0, 0] = S[1, 1] = k if k > 0.0 else 1.0
            K, _ = self._extra_matrices()
            S[2:, 2:] = np.abs(np.diag(np.diag(K)[2:]))
            return S
        w = abs(float(rate))
        ref = w if self.speeds is None else float(np.clip(w, self.speeds[0], self.speeds[-1]))
        Kb, _ = self.matrices(ref)
        return np.diag(np.abs(np.diag(Kb)))

    @property
    def rows(self) -> Tuple[int, ...]:
        """The mean-motion components the bearing acts on (0, 1: across the axis; 2: along
        it; 3, 4: the tilts)."""
        out = [0, 1]
        if self.extra["kzz"] or self.extra["czz"]:
            out.append(2)
        if self.extra["ktilt"] or self.extra["ctilt"]:
            out += [3, 4]
        return tuple(out)

    def value(self, key: str, speed: float) -> float:
        """The coefficient ``key`` at ``speed`` (rad/s), interpolated in the table.

        Args:
            key: the coefficient's name (``kxx``, ``cxy``, ...).
            speed: the spin speed (rad/s).

        Returns:
            The coefficient.

        Raises:
            ValueError: a speed outside the table without ``extrapolate``.
        """
        if self._film_asked:
            i, j = "xy".index(key[1]), "xy".index(key[2])
            return float(self._film(speed)["KC".index(key[0].upper())][i, j])
        v = self.table[key]
        if v.size == 1:
            return float(v[0])
        s = self.speeds
        assert s is not None  # a table of several values has its speeds
        w = abs(float(speed))
        if not (s[0] <= w <= s[-1]) and not self.extrapolate:
            raise ValueError(f"bearing {self.name!r}: the speed {w:g} rad/s lies outside its "
                             f"table ({s[0]:g} to {s[-1]:g} rad/s); extend the table or pass "
                             "extrapolate=True (the end values are then held)")
        return float(np.interp(w, s, v))

    def matrices(self, speed: float) -> Tuple[np.ndarray, np.ndarray]:
        """(K_b, C_b) at ``speed``: 5 x 5 on (t_x, t_y, t_z, theta_x, theta_y) of the
        journal's mean motion (the transverse axes first).

        Args:
            speed: the spin speed (rad/s).

        Returns:
            ``(K_b, C_b)``.
        """
        from dolfinx_mbs.forms.stationary import bearing_matrices

        if self._film_asked:
            K2, C2 = self._film(speed)
        else:
            K2, C2 = bearing_matrices(*(self.value(k, speed) for k in COEFFICIENTS))
        K, C = self._extra_matrices()
        K[:2, :2], C[:2, :2] = K2, C2
        return K, C

    def _extra_matrices(self) -> Tuple[np.ndarray, np.ndarray]:
        """5 x 5 zeros with the axial and tilting coefficients."""
        K, C = np.zeros((5, 5)), np.zeros((5, 5))
        K[2, 2], C[2, 2] = self.extra["kzz"], self.extra["czz"]
        K[3, 3] = K[4, 4] = self.extra["ktilt"]
        C[3, 3] = C[4, 4] = self.extra["ctilt"]
        return K, C

    def _film(self, speed: float) -> Tuple[np.ndarray, np.ndarray]:
        """The film's (K, C) at ``speed`` (its equilibrium under the load; the film keeps
        them)."""
        w = float(speed)
        if w == 0.0:
            raise ValueError(
                f"bearing {self.name!r} (a fluid film, {self.journal!r}) asked at speed 0: a "
                "film at rest carries no steady load. Give the rotor's frame a spin rate, or "
                "sweep speeds above 0")
        K, C = self.journal.coefficients(self.load, w)
        return np.asarray(K, dtype=float), np.asarray(C, dtype=float)

    def override(self, **coefficients: ArrayLike) -> Dict[str, Any]:
        """Set coefficients (numbers) and return the old table, for :meth:`restore` (the
        critical speed map sets the bearings to one isotropic stiffness at a time).

        Args:
            **coefficients: the coefficients to set, by name (``kxx=1e6``, ...).

        Returns:
            The old table.
        """
        old: Dict[str, Any] = {k: v.copy() for k, v in self.table.items()}
        old["__extra__"] = dict(self.extra)
        old["__journal__"] = self.journal
        self.journal = None  # the coefficients set are the bearing's until restored
        for k, v in coefficients.items():
            if k in EXTRA:
                self.extra[k] = checks.real(v, f"bearing {k}")
            else:
                self.table[k] = self._coefficient(k, v)
        return old

    def restore(self, old: Dict[str, Any]) -> None:
        """Put back the table :meth:`override` returned.

        Args:
            old: what :meth:`override` returned.
        """
        old = dict(old)
        self.extra = old.pop("__extra__")
        self.journal = old.pop("__journal__", self.journal)
        self.table = old

    def __repr__(self) -> str:
        to = "" if self.other is None else f" to {self.other.name!r}"
        return f"Bearing({self.name!r} on {self.body.name!r}{to})"


def _journal_load(journal: Any, load: ArrayLike | None,
                  coefficients: Dict[str, ArrayLike]) -> np.ndarray:
    """The checked static load of a fluid film's journal."""
    if not callable(getattr(journal, "coefficients", None)):
        raise TypeError(f"bearing: journal= must be a fluid film with coefficients(load, "
                        f"speed), e.g. dolfinx_mbs.rotors.PlainJournal, got {journal!r}")
    given = sorted(set(coefficients) & set(COEFFICIENTS))
    if given:
        raise TypeError(f"bearing: journal= gives the eight coefficients; {given} given "
                        "beside it")
    if load is None:
        raise TypeError("bearing: journal= needs load=, the static load on its film (N, in "
                        "the bearing's x, y): the film's coefficients are those at its "
                        "equilibrium under that load")
    return checks.vector(load, 2, "bearing load")


def _link_frames(body: Body, other: Body, table: bool) -> Tuple[Body | None, np.ndarray]:
    """The rotor of a bearing between ``body`` and ``other`` (the body in a Stationary frame,
    ``body`` when both are; None when neither is) and the axis of its x, y; raises for a pair
    of frames whose bearing coefficients would not be constant (:class:`Bearing`)."""
    from dolfinx_mbs.bodies.body import Body as Elastic
    from dolfinx_mbs.frames.stationary import Ground, Stationary

    if not isinstance(other, Elastic):
        raise TypeError(f"bearing: other= must be an elastic Body of the model (the housing's "
                        f"body), got {other!r}")
    if other is body:
        raise ValueError(f"bearing: other= is the journal's own body {body.name!r}; a bearing "
                         "acts between two bodies, or between a body and the ground "
                         "(other=None)")
    for b in (body, other):
        if not isinstance(b.frame, (Stationary, Ground)):
            raise ValueError(
                f"bearing between bodies {body.name!r} and {other.name!r}: body {b.name!r} is "
                f"in a {type(b.frame).__name__} frame. A bearing's coefficients are constant "
                "only between descriptions at rest in the ground: put a rotor in a "
                "frames.Stationary frame and a housing in a frames.Ground frame (a rotating "
                "frame would see the coefficients turn)")
        if b.gdim != 3:
            raise ValueError(f"bearing: body {b.name!r} is not 3D (rotors and their bearings "
                             "are 3D bodies)")
    fa, fb = body.frame, other.frame
    if isinstance(fa, Stationary) and isinstance(fb, Stationary) or \
            isinstance(fa, Ground) and isinstance(fb, Ground):
        gap = fb.pivot - fa.pivot
        off = float(np.linalg.norm(gap - np.dot(gap, fa.axis) * fa.axis))
        scale = 1.0 + float(np.linalg.norm(fa.pivot)) + float(np.linalg.norm(fb.pivot))
        if np.linalg.norm(fa.axis - fb.axis) > 1e-12 or off > 1e-12 * scale:
            kind = type(fa).__name__
            raise ValueError(
                f"bearing between bodies {body.name!r} and {other.name!r}: their {kind} "
                f"frames' axes differ ({fa.axis.tolist()} through {fa.pivot.tolist()}, "
                f"{fb.axis.tolist()} through {fb.pivot.tolist()}); a bearing between two "
                "rotors (or two bodies at rest) needs one axis line, the same direction")
    rotor = body if isinstance(fa, Stationary) else other if isinstance(fb, Stationary) \
        else None
    if rotor is None and table:
        raise ValueError(f"bearing between bodies {body.name!r} and {other.name!r}: neither "
                         "spins (both in frames.Ground), so coefficients cannot follow a "
                         "speed table (speeds=); give numbers")
    axis_of = cast("Stationary | Ground", (rotor if rotor is not None else body).frame)
    return rotor, axis_of.axis.copy()


class Disk(_Attachment):
    """A rigid disk on a surface of a body: its mass and inertia act on the surface's mean
    motion (its translation and tilt, :func:`dolfinx_mbs.forms.stationary.disk_matrices`).

    Args:
        body: the body.
        facets, where: the surface.
        mass: m (kg).
        polar: I_p, the moment of inertia about the spin axis (kg m^2).
        diametral: I_d, about a diameter through the surface's centroid (kg m^2).
        name: a label.

    Raises:
        ValueError: negative or non-finite values, or a surface that holds no facet.
    """

    kind = "disk"

    def __init__(self, body: Body, facets: Tuple[MeshTags, int] | None = None,
                 where: Callable[[np.ndarray], np.ndarray] | None = None, mass: float = 0.0,
                 polar: float = 0.0, diametral: float = 0.0, name: str | None = None) -> None:
        for key, v in (("mass", mass), ("polar", polar), ("diametral", diametral)):
            if checks.real(v, f"disk {key}") < 0.0:
                raise ValueError(f"disk {key} must be >= 0, got {v!r}")
        if float(polar) > 2.0 * float(diametral) * (1.0 + 1e-9):
            raise ValueError(f"disk{' ' + repr(name) if name else ''}: polar={polar!r} exceeds "
                             f"twice diametral={diametral!r}; no rigid body has such moments "
                             "(its principal moments I_d, I_d, I_p keep the triangle inequality "
                             "I_p <= 2 I_d, a thin disk's I_p = 2 I_d)")
        self.mass, self.polar, self.diametral = float(mass), float(polar), float(diametral)
        super().__init__(body, facets, where, name)

    rows: Sequence[int] = (0, 1, 2, 3, 4, 5)

    def __repr__(self) -> str:
        return f"Disk({self.name!r} on {self.body.name!r}, m={self.mass:g})"


class Unbalance:
    """An unbalance on a disk (or a bearing's journal) for time integration: its force
    m_e (Omega^2 cos(phi) + Omega' sin(phi), Omega^2 sin(phi) - Omega' cos(phi)), phi = spin
    angle + ``phase`` (:func:`dolfinx_mbs.forms.stationary.unbalance_force`), acts on the
    journal's mean motion at every time of a stationary frame's spin law (a run-up).

    Args:
        on: the :class:`Disk` or :class:`Bearing` whose journal carries it.
        m_e: mass times eccentricity (kg m).
        phase: its angle from the frame's e1 at spin angle 0 (rad).
    """

    kind = "unbalance"

    def __init__(self, on: Disk | Bearing, m_e: float, phase: float = 0.0) -> None:
        if not isinstance(on, (Disk, Bearing)):
            raise TypeError(f"an unbalance acts on a disk or a bearing's journal, got {on!r}")
        self.on, self.body = on, on.body
        self.m_e = checks.real(m_e, "m_e")
        self.phase = checks.real(phase, "phase")
        self.name = f"unbalance on {on.name}"

    def __repr__(self) -> str:
        return f"Unbalance({self.m_e:g} kg m at {self.phase:g} rad on {self.on.name!r})"
