"""What a rotor rests on and carries: bearings (and seals) and rigid disks, each acting on the
mean motion of a surface of a body (a journal; a distributing coupling, as RBE3).

These are the elements' data and their blocks on the journal's mean motion: where they act (a
``ds`` measure of the journal's facets), a bearing's coefficients as arrays over the spin speed
(:class:`Coefficients`, as ROSS's ``BearingElement`` holds them, interpolated linearly) and its
5 x 5 stiffness and damping at a speed, a disk's mass and gyroscopic 6 x 6. The builders users
call are :mod:`dolfinx_mbs.rotors.parts` (``Model.bearing``, ``Model.disk``); the mean motion's
map and the matrices on the body's dofs are made by the operators
(:mod:`dolfinx_mbs.assembly.rotor_terms`); the physics (the bearing's force, the disk's
equations) is written in :mod:`dolfinx_mbs.forms.stationary`. Units: SI (N/m, N s/m, N m/rad,
N m s/rad, kg, kg m^2, rad/s).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import math
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Sequence, Tuple, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.bodies.loads import facet_measure
from dolfinx_mbs.forms import stationary as S
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from dolfinx.mesh import MeshTags
    from numpy.typing import ArrayLike

    from dolfinx_mbs.bodies.body import Body

__all__ = ["AxialTilt", "Bearing", "Coefficients", "Disk", "Housing", "SpeedTerm", "Unbalance",
           "COEFFICIENTS"]

#: the eight coefficients of a bearing, in the order of its 2 x 2 matrices (K, then C)
COEFFICIENTS = ("kxx", "kxy", "kyx", "kyy", "cxx", "cxy", "cyx", "cyy")
#: the optional axial and tilting coefficients (isotropic, constant)
EXTRA = ("kzz", "czz", "ktilt", "ctilt")
#: each of the eight's place: (0 the stiffness or 1 the damping, row, column; 0 x, 1 y)
_MATRICES: Tuple[Literal["K"], Literal["C"]] = ("K", "C")
PLACES = {f"{m}{a}{b}": (im, i, j) for im, m in enumerate("kc") for i, a in enumerate("xy")
          for j, b in enumerate("xy")}

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


@dataclasses.dataclass(frozen=True)
class SpeedTerm:
    """One coefficient of a bearing that changes with the speed, as a term of a sweep's
    pencil: f(Omega) E, E = L_row^T L_col on the journal's mean motion across the axis.

    Attributes:
        matrix: ``"K"`` (the stiffness) or ``"C"`` (the damping).
        row: the row's direction across the axis (0: x, 1: y).
        col: the column's direction.
        at: the coefficient at a speed (rad/s).
    """

    matrix: Literal["K", "C"]
    row: int
    col: int
    at: Callable[[float], float]


class Coefficients:
    """A linear bearing's eight coefficients across the spin axis, each an array over the
    spin speeds ``speeds`` (one value: constant at every speed), interpolated linearly in
    between, as ROSS's ``BearingElement`` holds them. Read only: a bearing with other
    coefficients is another bearing (:meth:`Bearing.replaced`).

    Args:
        kxx: stiffness k_xx (N/m): a number, or ``len(speeds)`` values at ``speeds``.
        kxy: stiffness k_xy (N/m).
        kyx: stiffness k_yx (N/m).
        kyy: stiffness k_yy (N/m).
        cxx: damping c_xx (N s/m).
        cxy: damping c_xy (N s/m).
        cyx: damping c_yx (N s/m).
        cyy: damping c_yy (N s/m).
        speeds: the table's spin speeds (rad/s, strictly increasing), or None (constants).
        extrapolate: allow speeds outside the table (the end values held); else an error.

    Raises:
        ValueError: a coefficient that is not finite or does not match ``speeds``, speeds that
            are not strictly increasing.
    """

    kxx: np.ndarray
    kxy: np.ndarray
    kyx: np.ndarray
    kyy: np.ndarray
    cxx: np.ndarray
    cxy: np.ndarray
    cyx: np.ndarray
    cyy: np.ndarray

    def __init__(self, kxx: ArrayLike = 0.0, kxy: ArrayLike = 0.0, kyx: ArrayLike = 0.0,
                 kyy: ArrayLike = 0.0, cxx: ArrayLike = 0.0, cxy: ArrayLike = 0.0,
                 cyx: ArrayLike = 0.0, cyy: ArrayLike = 0.0, speeds: ArrayLike | None = None,
                 extrapolate: bool = False) -> None:
        #: the table's speeds (rad/s), or None
        self.speeds: np.ndarray | None = None
        if speeds is not None:
            s = np.asarray(speeds, dtype=float).reshape(-1)
            if s.size < 2 or not np.all(np.isfinite(s)) or not np.all(np.diff(s) > 0.0):
                raise ValueError(f"bearing speeds must be a strictly increasing finite sequence "
                                 f"of at least 2 speeds (rad/s), got {speeds!r}")
            s.setflags(write=False)
            self.speeds = s
        #: allow speeds outside the table (the end values held)
        self.extrapolate = bool(extrapolate)
        for key, value in zip(COEFFICIENTS, (kxx, kxy, kyx, kyy, cxx, cxy, cyx, cyy)):
            setattr(self, key, self._checked(key, value))

    def _checked(self, key: str, value: ArrayLike) -> np.ndarray:
        a = np.array(value, dtype=float)
        if a.ndim == 0:
            if not math.isfinite(float(a)):
                raise ValueError(f"bearing coefficient {key} must be finite, got {value!r}")
            a = a.reshape(1)
        else:
            a = a.reshape(-1)
            if self.speeds is None or a.size != self.speeds.size:
                n = "no speeds= table" if self.speeds is None else f"{self.speeds.size} speeds"
                raise ValueError(f"bearing coefficient {key}: {a.size} values given for {n} "
                                 "(give a number, or one value per speed of speeds=)")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"bearing coefficient {key} must be finite at every speed, "
                                 f"got {a.tolist()}")
        a.setflags(write=False)
        return a

    def arrays(self) -> Tuple[np.ndarray, ...]:
        """The eight arrays in the order kxx, kxy, kyx, kyy, cxx, cxy, cyx, cyy.

        Returns:
            The arrays (read only).
        """
        return (self.kxx, self.kxy, self.kyx, self.kyy, self.cxx, self.cxy, self.cyx,
                self.cyy)

    @staticmethod
    def _varies(v: np.ndarray) -> bool:
        return v.size > 1 and bool(np.ptp(v) != 0.0)

    @property
    def speed_dependent(self) -> bool:
        """True when a coefficient changes with the speed."""
        return any(self._varies(v) for v in self.arrays())

    def interpolated(self, v: np.ndarray, speed: float, label: str = "bearing") -> float:
        """One of the eight arrays ``v`` at ``speed`` (rad/s): its value, or the table's
        linear interpolation at abs(speed).

        Args:
            v: one of the arrays (e.g. ``self.kxy``).
            speed: the spin speed (rad/s).
            label: the bearing's name in an error.

        Returns:
            The coefficient.

        Raises:
            ValueError: a speed outside the table without ``extrapolate``.
        """
        if v.size == 1:
            return float(v[0])
        s = self.speeds
        assert s is not None  # a table of several values has its speeds
        w = abs(float(speed))
        if not (s[0] <= w <= s[-1]) and not self.extrapolate:
            raise ValueError(f"{label}: the speed {w:g} rad/s lies outside its table "
                             f"({s[0]:g} to {s[-1]:g} rad/s); extend the table or pass "
                             "extrapolate=True (the end values are then held)")
        return float(np.interp(w, s, v))

    def _interpolated(self, v: np.ndarray, label: str, speed: float) -> float:
        return self.interpolated(v, speed, label)

    def at(self, speed: float, label: str = "bearing") -> Tuple[np.ndarray, np.ndarray]:
        """(K_b, C_b), 2 x 2 across the axis, at ``speed`` (rad/s).

        Args:
            speed: the spin speed (rad/s).
            label: the bearing's name in an error.

        Returns:
            ``(K_b, C_b)``.
        """
        return S.bearing_matrices(*(self.interpolated(v, speed, label) for v in self.arrays()))

    def speed_terms(self, label: str = "bearing") -> Tuple[SpeedTerm, ...]:
        """The coefficients that change with the speed, as pencil terms.

        Args:
            label: the bearing's name in an error.

        Returns:
            The terms, in the order kxx ... cyy.
        """
        out = []
        for key, v in zip(COEFFICIENTS, self.arrays()):
            if self._varies(v):
                m, i, j = PLACES[key]
                out.append(SpeedTerm(_MATRICES[m], i, j,
                                     functools.partial(self._interpolated, v, label)))
        return tuple(out)

    def __repr__(self) -> str:
        sp = "" if self.speeds is None else f", {self.speeds.size} speeds"
        return f"Coefficients(kxx={self.kxx.tolist()}, kyy={self.kyy.tolist()}{sp})"


@dataclasses.dataclass(frozen=True)
class AxialTilt:
    """A bearing's optional axial and tilting coefficients (isotropic, constant).

    Attributes:
        kzz: axial stiffness (N/m).
        czz: axial damping (N s/m).
        ktilt: tilting stiffness (N m/rad).
        ctilt: tilting damping (N m s/rad).
    """

    kzz: float = 0.0
    czz: float = 0.0
    ktilt: float = 0.0
    ctilt: float = 0.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, checks.real(getattr(self, f.name),
                                                         f"bearing {f.name}"))

    @property
    def rows(self) -> Tuple[int, ...]:
        """The mean-motion rows these act on (2: along the axis; 3, 4: the tilts)."""
        return ((2,) if self.kzz or self.czz else ()) + \
            ((3, 4) if self.ktilt or self.ctilt else ())

    def matrices(self) -> Tuple[np.ndarray, np.ndarray]:
        """5 x 5 zeros with the axial and tilting coefficients.

        Returns:
            ``(K, C)``.
        """
        K, C = np.zeros((5, 5)), np.zeros((5, 5))
        K[2, 2], C[2, 2] = self.kzz, self.czz
        K[3, 3] = K[4, 4] = self.ktilt
        C[3, 3] = C[4, 4] = self.ctilt
        return K, C


@dataclasses.dataclass(frozen=True)
class Housing:
    """The surface of a bearing's housing on another body (``facets=(meshtags, tag)`` or a
    predicate ``where`` on facet midpoints).

    Attributes:
        body: the elastic body that holds the housing.
        facets: the housing's facets, ``(meshtags, tag)``.
        where: the housing's facets by a predicate instead.
    """

    body: Body
    facets: Tuple[MeshTags, int] | None = None
    where: Callable[[np.ndarray], np.ndarray] | None = None

    @classmethod
    def of(cls, other: Body | None, other_facets: Tuple[MeshTags, int] | None,
           other_where: Callable[[np.ndarray], np.ndarray] | None) -> "Housing" | None:
        """The housing of ``Model.bearing``'s ``other``, ``other_facets``, ``other_where``
        (None for the ground).

        Args:
            other: the housing's body, or None (the ground).
            other_facets: its facets, ``(meshtags, tag)``.
            other_where: its facets by a predicate.

        Returns:
            The housing, or None.

        Raises:
            TypeError: housing arguments without ``other``, or an ``other`` that is not an
                elastic body.
        """
        if other is None:
            if other_facets is not None or other_where is not None:
                raise TypeError("bearing: other_facets= and other_where= give the housing's "
                                "surface on other=, the housing's body (none given)")
            return None
        from dolfinx_mbs.bodies.body import Body as Elastic

        if not isinstance(other, Elastic):
            raise TypeError(f"bearing: other= must be an elastic Body of the model (the "
                            f"housing's body), got {other!r}")
        return cls(other, other_facets, other_where)


class Bearing(_Attachment):
    """A linear bearing (or seal) between a journal's mean motion and the ground, or between
    the mean motions of a journal and a housing on two bodies. Made by ``Model.bearing``
    (:func:`dolfinx_mbs.rotors.parts.bearing`).

    To the ground, the force on the journal is -K_b ubar - C_b ubar' across the spin axis
    (x, y: the frame's transverse directions,
    :func:`dolfinx_mbs.frames.stationary.transverse_basis`), plus, when given,
    -kzz ubar_z - czz ubar_z' along it and -ktilt theta - ctilt theta' on the journal's tilt.
    Between two bodies (``housing``), d = d_A - d_B replaces ubar: d_A the journal's mean
    motion on ``body``, d_B the housing's on the housing's body, both in the same directions
    (x, y across the rotor's spin axis); the force -K_b d - C_b d' acts on the journal and its
    opposite on the housing.

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
    load, asked at every speed an analysis takes (the film keeps what it solved) when
    ``coefficients`` is None, or the film's table over speeds given as ``coefficients``. The
    film's coefficients have the speed's sign (a spin the other way mirrors them: a film's
    table is read at positive speeds only); at rest a
    film carries no steady load, so an analysis at speed 0 is refused. A run applies the
    film's whole nonlinear force instead (:mod:`dolfinx_mbs.systems.films`), ``load`` with it
    on the journal.

    Args:
        body: the body whose surface is the journal.
        facets: the journal's facets, ``(meshtags, tag)``.
        where: the journal's facets by a predicate on facet midpoints instead.
        coefficients: the eight coefficients over speed (None: zero, or a film's asked at
            every speed).
        axial: the axial and tilting coefficients (None: none).
        name: a label.
        housing: the housing on another body, or None for the ground.
        journal: a fluid film that gives the coefficients.
        load: the static load on the journal's film (2-vector, N), with ``journal``.

    Raises:
        ValueError: a negative direct coefficient (not a film's), a journal or housing that
            holds no facet, a housing on the journal's own body, frames that are not a pair
            named above, or a table of speeds where no side spins (on every rank); a ``load``
            that is not a finite 2-vector.
        TypeError: a ``journal`` without ``coefficients(load, speed)`` or without ``load``, a
            ``load`` without ``journal``.
    """

    kind = "bearing"

    def __init__(self, body: Body, facets: Tuple[MeshTags, int] | None = None,
                 where: Callable[[np.ndarray], np.ndarray] | None = None,
                 coefficients: Coefficients | None = None, axial: AxialTilt | None = None,
                 name: str | None = None, housing: Housing | None = None,
                 journal: Any = None, load: ArrayLike | None = None) -> None:
        #: the fluid film that gives the coefficients (None: ``coefficients``)
        self.journal = journal
        #: the static load on the journal's film (N, x and y), with ``journal``
        self.load: np.ndarray | None = None
        if journal is not None:
            self.load = journal_load(journal, load)
        elif load is not None:
            raise TypeError("bearing: load= is the static load of a fluid film's journal: "
                            "give journal= with it")
        #: the eight coefficients over speed (None: a film asked at every speed)
        self.coefficients: Coefficients | None = coefficients
        if coefficients is None and journal is None:
            self.coefficients = Coefficients()
        #: the axial and tilting coefficients
        self.axial = axial if axial is not None else AxialTilt()
        label = f"bearing {name!r}" if name else "bearing"
        if journal is None:   # a film's are its own
            _check_passive(self.coefficients, self.axial, f"{label} on body {body.name!r}")
        #: the body of the housing (None: the ground)
        self.other: Body | None = housing.body if housing is not None else None
        #: the body whose frame gives the x, y directions and the speed (None: no spin)
        self.rotor: Body | None = None
        #: the axis whose transverse directions are the bearing's x, y (a link; else None)
        self.axis: np.ndarray | None = None
        if housing is None:
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
            self.rotor, self.axis = _link_frames(body, housing.body, self.speeds is not None
                                                 or journal is not None)
        #: the housing's facet measure on ``other`` (None for the ground)
        self.other_ds = None
        if housing is not None:
            self.other_ds = facet_measure(housing.body.mesh, housing.facets, housing.where,
                                          f"{label} on body {body.name!r}: its housing on body "
                                          f"{housing.body.name!r} (other_facets= or "
                                          "other_where=)")
        super().__init__(body, facets, where, name)

    @property
    def speeds(self) -> np.ndarray | None:
        """The speeds of the coefficients' table (rad/s), or None."""
        return None if self.coefficients is None else self.coefficients.speeds

    @property
    def speed_dependent(self) -> bool:
        """True when a coefficient changes with the speed."""
        return self.coefficients is None or self.coefficients.speed_dependent

    def speed_terms(self) -> Tuple[SpeedTerm, ...]:
        """The coefficients across the axis that change with the speed (a speed table's, or a
        fluid film's, all eight of them), as terms f(Omega) E of a sweep's pencil.

        Returns:
            The terms.
        """
        c = self.coefficients
        if c is not None:
            return c.speed_terms(f"bearing {self.name!r}")
        return tuple(SpeedTerm(_MATRICES[m], i, j, functools.partial(self._film_entry, m, i, j))
                     for m, i, j in PLACES.values())

    def _film_entry(self, m: int, i: int, j: int, speed: float) -> float:
        return float(self._film(speed)[m][i, j])

    def digest(self) -> Mapping[str, Any]:
        """The bearing's numbers a checkpoint records to refuse a restart with another
        bearing: the eight coefficients (``table``, absent for a film asked at every speed),
        the table's speeds (``speeds``, with a table) and the axial and tilting ones
        (``extra``).

        Returns:
            A table of numbers (plain lists and floats).
        """
        out: dict[str, Any] = {"extra": {k: float(getattr(self.axial, k)) for k in EXTRA}}
        c = self.coefficients
        if c is not None:
            out["table"] = {k: [float(x) for x in v] for k, v in zip(COEFFICIENTS, c.arrays())}
            if c.speeds is not None:
                out["speeds"] = [float(x) for x in c.speeds]
        return FrozenMapping(out)

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
        if self.coefficients is None:
            assert self.load is not None  # a journal's bearing has its static load
            k = float(np.linalg.norm(self.load)) / float(getattr(self.journal, "clearance",
                                                                   1.0))
            S5 = np.zeros((5, 5))
            S5[0, 0] = S5[1, 1] = k if k > 0.0 else 1.0
            K, _ = self.axial.matrices()
            S5[2:, 2:] = np.abs(np.diag(np.diag(K)[2:]))
            return S5
        w = abs(float(rate))
        s = self.speeds
        ref = w if s is None else float(np.clip(w, s[0], s[-1]))
        Kb, _ = self.matrices(ref)
        return np.diag(np.abs(np.diag(Kb)))

    @property
    def rows(self) -> Tuple[int, ...]:
        """The mean-motion components the bearing acts on (0, 1: across the axis; 2: along
        it; 3, 4: the tilts)."""
        return (0, 1) + self.axial.rows

    def value(self, key: str, speed: float) -> float:
        """The coefficient ``key`` at ``speed`` (rad/s), interpolated in the table.

        Args:
            key: the coefficient's name (``kxx``, ``cxy``, ...).
            speed: the spin speed (rad/s).

        Returns:
            The coefficient.

        Raises:
            ValueError: a name that is not one of the eight; a speed outside the table without
                ``extrapolate``.
        """
        if key not in PLACES:
            raise ValueError(f"bearing {self.name!r}: no coefficient {key!r}; expected one of "
                             f"{COEFFICIENTS}")
        m, i, j = PLACES[key]
        return float(self._transverse(speed)[m][i, j])

    def _transverse(self, speed: float) -> Tuple[np.ndarray, np.ndarray]:
        """(K_b, C_b) across the axis at ``speed`` (2 x 2 each)."""
        if self.coefficients is None:
            return self._film(speed)
        if self.journal is not None and float(speed) < 0.0:
            raise ValueError(f"bearing {self.name!r}: a fluid film's table of coefficients "
                             f"is read at positive speeds only (a spin the other way mirrors "
                             f"the film's cross-coupling), got speed {float(speed):g} rad/s: "
                             "give coefficients=None to ask the film at every speed")
        return self.coefficients.at(speed, f"bearing {self.name!r}")

    def matrices(self, speed: float) -> Tuple[np.ndarray, np.ndarray]:
        """(K_b, C_b) at ``speed``: 5 x 5 on (t_x, t_y, t_z, theta_x, theta_y) of the
        journal's mean motion (the transverse axes first).

        Args:
            speed: the spin speed (rad/s).

        Returns:
            ``(K_b, C_b)``.
        """
        K2, C2 = self._transverse(speed)
        K, C = self.axial.matrices()
        K[:2, :2], C[:2, :2] = K2, C2
        return K, C

    def blocks(self, speed: float, rotating: bool = False) -> Tuple[np.ndarray, np.ndarray]:
        """The stiffness and damping the bearing adds on its rows of the journal's mean motion
        (:attr:`rows`), at ``speed``; ``rotating``: a ground bearing seen from a frame
        spinning at ``speed`` (:func:`dolfinx_mbs.forms.stationary.bearing_in_rotating_frame`;
        an isotropic tilting damper likewise).

        Args:
            speed: the spin speed (rad/s).
            rotating: the journal's body is described in a frame spinning at ``speed``.

        Returns:
            ``(K, C)`` on :attr:`rows`.
        """
        Kb, Cb = self.matrices(speed)
        if rotating:
            Kb[:2, :2], Cb[:2, :2] = S.bearing_in_rotating_frame(Kb[:2, :2], Cb[:2, :2],
                                                                 speed)
            if Cb[3, 3]:
                Kb[3:5, 3:5] += speed * Cb[3, 3] * np.array([[0.0, -1.0], [1.0, 0.0]])
        r = self.rows
        return Kb[np.ix_(r, r)], Cb[np.ix_(r, r)]

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

    def replaced(self, coefficients: Coefficients, axial: AxialTilt | None = None
                 ) -> "Bearing":
        """A new bearing on the same journal (and housing) with other coefficients and no
        film: this one unchanged (the critical speed map's bearings of one stiffness).

        Args:
            coefficients: the new bearing's eight coefficients.
            axial: its axial and tilting coefficients (None: this one's).

        Returns:
            The new bearing (not attached to a body).

        Raises:
            ValueError: a negative direct coefficient, or a table of speeds where no side
                spins.
        """
        axial = self.axial if axial is None else axial
        _check_passive(coefficients, axial, f"bearing {self.name!r} on body "
                                            f"{self.body.name!r}")
        from dolfinx_mbs.frames.stationary import Ground

        still = self.rotor is None if self.other is not None else \
            isinstance(self.body.frame, Ground)
        if coefficients.speeds is not None and still:
            raise ValueError(f"bearing {self.name!r}: no side spins, so its coefficients "
                             "cannot follow a speed table (speeds=); give numbers")
        new = copy.copy(self)
        new.coefficients, new.axial = coefficients, axial
        new.journal = new.load = None
        return new

    def __repr__(self) -> str:
        to = "" if self.other is None else f" to {self.other.name!r}"
        return f"Bearing({self.name!r} on {self.body.name!r}{to})"


def _check_passive(c: Coefficients | None, axial: AxialTilt, label: str) -> None:
    """Raise for a negative direct stiffness or damping (a passive support has none)."""
    direct = [] if c is None else [("kxx", c.kxx), ("kyy", c.kyy), ("cxx", c.cxx),
                                   ("cyy", c.cyy)]
    direct += [(f.name, np.array([getattr(axial, f.name)])) for f in dataclasses.fields(axial)]
    for key, v in direct:
        if np.any(v < 0.0):
            raise ValueError(f"{label}: {key} must not be negative (a direct stiffness or "
                             f"damping pushes the journal along its motion; a passive support "
                             f"has none), got {v.tolist() if v.size > 1 else float(v[0])!r}")


def journal_load(journal: Any, load: ArrayLike | None) -> np.ndarray:
    """The checked static load of a fluid film's journal.

    Args:
        journal: the film (with ``coefficients(load, speed)``).
        load: its static load (N, x and y).

    Returns:
        The load as a 2-vector.

    Raises:
        TypeError: a journal without ``coefficients``, or no load.
        ValueError: a load that is not a finite 2-vector.
    """
    if not callable(getattr(journal, "coefficients", None)):
        raise TypeError(f"bearing: journal= must be a fluid film with coefficients(load, "
                        f"speed), e.g. dolfinx_mbs.rotors.PlainJournal, got {journal!r}")
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

    def matrices(self) -> Tuple[np.ndarray, np.ndarray]:
        """The disk's mass matrix M_d and its gyroscopic matrix per unit speed G_d (6 x 6 on
        the surface's mean motion, :func:`dolfinx_mbs.forms.stationary.disk_matrices`).

        Returns:
            ``(M_d, G_d)``.
        """
        return S.disk_matrices(self.mass, self.polar, self.diametral)

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
