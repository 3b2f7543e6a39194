"""Joints between frames whose motion is computed, springs and motors on them: the elements.

    j = model.revolute(crank, rod, point=(0.1, 0.0))       # 2D: the points coincide
    j = model.revolute(arm, link, point=p, axis=(0, 0, 1)) # 3D: and the axes stay aligned
    s = model.prismatic(slider, None, point=p, axis=(1, 0))  # slides along a line
    model.motor(j, speed=lambda t: 10.0)                    # or angle=..., torque=...
    model.spring(arm, p, None, q, stiffness=k, damping=c)   # a spring-damper to the ground

A joint holds a point of one body to a point of another (or of the ground): a node of an
elastic body, which moves with its deformation, or a point of a rigid body or of a computed
frame (:mod:`dolfinx_mbs.constraints.frame_points`). Its rows depend on the configuration (the
frames' coordinates and the nodes' displacements), so they are not rows of the Maggi reducer
(whose basis is fixed) but rows of the coupled equations
(:mod:`dolfinx_mbs.systems.coupled_joints`), solved with the frames' unknowns: the joint
forces are unknowns there, and the position rows are kept exactly at every step by the
stabilization of Gear, Gupta and Leimkuhler (the velocity rows beside the position rows, with
a second multiplier on the kinematic rows that vanishes with the drift): no projection between
steps, no drift beyond Newton's tolerance.

Each element is a class that owns its constants and its rows, given the kinematics of its two
points (:class:`End`, which the coupled system computes at its unknowns):

- :class:`Revolute`: the points coincide (2D: 2 rows; 3D: 3 and 2 that keep the axes aligned);
- :class:`Prismatic`: ``b``'s point slides along the axis fixed in ``a``'s frame and the frames
  keep their relative orientation (2D: 1 across the axis and the relative angle; 3D: 2 and 3);
- :class:`Spring`: a linear spring and damper between the points (its force components are
  unknowns with the rows F - s e = 0, no position rows);
- :class:`Motor`: a driven angle (a position row), a driven speed (a velocity row) or an
  applied torque (no row) on a 2D revolute joint or a hinge.

The revolute, prismatic and spring elements are :class:`FrameJoint` s (two points); every
element's rows are all position rows or none, and a revolute joint's and a spring's first
``gdim`` rows are the force on the points (``n_point_rows``): their terms in the residual
(inertia minus applied forces) are +lam e_k on ``a``'s point and -lam e_k on ``b``'s, so the
force the joint applies on ``b`` is +lam e_k (on ``a`` -lam e_k), the force its output
records. The builders (:mod:`dolfinx_mbs.constraints.frame_builders`) check a model's
bodies and names and make the elements.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Mapping, Sequence, Tuple, Union

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.frame_points import (
    JointPoint,
    joint_point,
    planar_angle,
    start_state,
)
from dolfinx_mbs.frames.base import cross3, skew

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dolfinx_mbs.frames.computed import ComputedFrame

__all__ = ["End", "FrameJoint", "Revolute", "Prismatic", "Spring", "Motor", "RelativeState",
           "JointOutput", "MotorOutput", "SpringOutput", "ElementOutput", "JointPoint",
           "joint_point", "planar_angle", "start_state"]

#: a row's coefficients of the frames' speeds: {frame index: dh/dw (k,)}
SpeedCoefficients = Dict[int, np.ndarray]


class _Record(Mapping[str, object]):
    """An element's outputs at a state, read also as a mapping of its fields (the run's
    observers keep and extrapolate them by name)."""

    def __getitem__(self, key: str) -> object:
        if key not in self._names():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def _names(self) -> Tuple[str, ...]:
        return _field_names(type(self))


@functools.lru_cache(maxsize=None)
def _field_names(cls: type) -> Tuple[str, ...]:
    """A record class's field names (looked up once a class: a run reads them every step)."""
    return tuple(f.name for f in dataclasses.fields(cls))


@dataclasses.dataclass(frozen=True, eq=False)
class JointOutput(_Record):
    """A revolute or prismatic joint's outputs at a state.

    Attributes:
        force: the force on the second body's point (global components; a prismatic joint's
            across its axis, without its moment).
        drift: the largest of its position rows' values.
    """

    force: np.ndarray
    drift: float


@dataclasses.dataclass(frozen=True, eq=False)
class MotorOutput(_Record):
    """A driven motor's outputs at a state.

    Attributes:
        torque: the torque it applies (N m).
        drift: its row's value (a driven angle's; 0 for a speed).
    """

    torque: float
    drift: float


@dataclasses.dataclass(frozen=True, eq=False)
class SpringOutput(_Record):
    """A spring's outputs at a state.

    Attributes:
        tension: s = k (L - L0) + c L' (N).
        length: L (m).
    """

    tension: float
    length: float


#: what :meth:`FrameJoint.output` and :meth:`Motor.output` give
ElementOutput = Union[JointOutput, MotorOutput, SpringOutput]


class End:
    """The kinematics of a joint's point at the coupled system's unknowns (global components).

    Args:
        r: the point's position.
        rd: its velocity.
        Pw: its partial velocities d r'/dw (3 x k) of its computed frame (None otherwise).
        R: its frame's rotation (the identity for the ground).
        x: its position in the frame, X + u (u the node's displacement).
        omega: its frame's angular velocity (local components).
        domega: d omega/dw of a computed frame (None otherwise).
        dphi: d phi/dz of a computed frame (None otherwise).
        drO: d r_O/dz of a computed frame (None otherwise).
        index: its computed frame's index among the system's (None: prescribed or ground).
    """

    __slots__ = ("r", "rd", "Pw", "R", "x", "omega", "domega", "dphi", "drO", "index")

    def __init__(self, *, r: np.ndarray, rd: np.ndarray, Pw: np.ndarray | None, R: np.ndarray,
                 x: np.ndarray, omega: np.ndarray, domega: np.ndarray | None,
                 dphi: np.ndarray | None, drO: np.ndarray | None, index: int | None) -> None:
        self.r, self.rd, self.Pw, self.R, self.x = r, rd, Pw, R, x
        self.omega, self.domega, self.dphi, self.drO, self.index = omega, domega, dphi, drO, index

    def planar(self) -> Tuple[float, float, SpeedCoefficients]:
        """A 2D frame's angle about z, its rate and d(rate)/dw.

        Returns:
            ``(angle, rate, {index: d rate/dw})``.
        """
        G = {} if self.index is None else {self.index: self.domega[2]}  # type: ignore[index]
        return planar_angle(self.R), float(self.omega[2]), G


class FrameJoint:
    """A joint (or spring) between the points ``a`` and ``b``: the common part of
    :class:`Revolute`, :class:`Prismatic` and :class:`Spring`.

    Args:
        a: the first point (its frame carries a prismatic joint's axis).
        b: the second point (the force rows give the force on it).
        gdim: 2 or 3.
        name: its name.
    """

    #: the rows that are the components of the force on the points (+ on a, - on b)
    n_point_rows = 0

    def __init__(self, a: JointPoint, b: JointPoint, gdim: int, name: str) -> None:
        self.a, self.b, self.gdim, self.name = a, b, gdim, name
        #: a motor on the joint (none here: :class:`Motor` refers to its joint)
        self.motor: Motor | None = None
        #: the joint's axis at t = 0 (global; None for a spring)
        self.axis: np.ndarray | None = None
        #: the relative angle at t = 0 (2D: a motor's angle counts from it)
        self.angle0 = 0.0
        #: how many rows, and how many of them are position rows (all or none)
        self.n_rows = 0
        self.n_position = 0

    def _start(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The frames' rotations and the points' global positions at t = 0."""
        sa = start_state(self.a.frame) if self.a.frame is not None else None
        sb = start_state(self.b.frame) if self.b.frame is not None else None
        Ra = sa.R if sa is not None else np.eye(3)
        Rb = sb.R if sb is not None else np.eye(3)
        pa = sa.to_global(self.a.X) if sa is not None else self.a.X
        pb = sb.to_global(self.b.X) if sb is not None else self.b.X
        return Ra, Rb, pa, pb

    def relative_angle(self, a: End, b: End) -> Tuple[float, float, SpeedCoefficients]:
        """The 2D relative angle of ``b``'s frame to ``a``'s, unwrapped near the joint's angle at
        t = 0 (the angle wraps at +-pi from it), its rate and d(rate)/dw.

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.

        Returns:
            ``(angle, rate, {frame index: d rate/dw})``.
        """
        tha, wa, Ga = a.planar()
        thb, wb, Gb = b.planar()
        G = {i: -v for i, v in Ga.items()}
        for i, v in Gb.items():
            G[i] = G.get(i, 0.0) + v
        d = (thb - tha - self.angle0 + np.pi) % (2 * np.pi) - np.pi
        return d + self.angle0, wb - wa, G

    def relative_angle_gz(self, a: End, b: End, row: np.ndarray,
                          zslice: Sequence[slice]) -> None:
        """Add d(relative angle)/dz to ``row``.

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            row: the row over the frames' unknowns (added to).
            zslice: each computed frame's coordinates in ``row``.
        """
        for end, sign in ((a, -1.0), (b, 1.0)):
            if end.index is not None:
                row[zslice[end.index]] += sign * end.dphi[2]  # type: ignore[index]

    def rows(self, a: End, b: End, lam: np.ndarray, g: np.ndarray, h: np.ndarray,
             G: Sequence[SpeedCoefficients], dr: np.ndarray | None = None) -> None:
        """The joint's rows at the points' kinematics: position values ``g``, velocity values
        ``h`` (h = dg/dt; a spring's: F - s e) and the speeds' coefficients ``G`` of h.

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            lam: the joint's multipliers (a spring's force components).
            g: its position values (written).
            h: its velocity values (written).
            G: its rows' speed coefficients (added to).
            dr: the rows' coefficients of the points' velocities, dh/dr'_a and dh/dr'_b
                (rows x 2 x 3, global components; added to), or None. h is linear in them;
                for a position row they are also dg/dr (h = dg/dt).
        """
        raise NotImplementedError

    def gz(self, a: End, b: End, rows: np.ndarray, zslice: Sequence[slice]) -> None:
        """dg/dz of the position rows in closed form, the nodes held (a point's
        d r/dz = d r_O/dz - R skew(x) d phi/dz, a direction's d(R e)/dz = -R skew(e) d phi/dz,
        a planar angle's d phi_z/dz).

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            rows: the position rows over the frames' unknowns (added to).
            zslice: each computed frame's coordinates in a row.
        """

    def output(self, a: End, b: End, lam: np.ndarray, g: np.ndarray) -> ElementOutput:
        """What a run records of the joint: its force on ``b`` (global components, a
        revolute joint's) and its drift (the largest position value).

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            lam: the joint's multipliers.
            g: its position values.

        Returns:
            The :class:`JointOutput`.
        """
        return self.output_at(a.R, lam, g)

    def output_at(self, Ra: np.ndarray, lam: np.ndarray, g: np.ndarray) -> JointOutput:
        """:meth:`output` from what it reads of the points' kinematics: ``a``'s frame's
        rotation.

        Args:
            Ra: the first point's frame's rotation.
            lam: the joint's multipliers.
            g: its position values.

        Returns:
            The :class:`JointOutput`.
        """
        drift = 0.0
        for v in g:
            drift = max(drift, abs(float(v)))
        return JointOutput(force=self.force_on_b(Ra, lam), drift=drift)

    def force_on_b(self, Ra: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """The joint's force on ``b``'s point (global components) (:meth:`forces_on_b` at one
        state).

        Args:
            Ra: the first point's frame's rotation.
            lam: the joint's multipliers.

        Returns:
            The force (3,).
        """
        force: np.ndarray = self.forces_on_b(np.asarray(Ra)[None], np.asarray(lam)[None])[0]
        return force

    def forces_on_b(self, Ra: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """The joint's force on ``b``'s point (global components) at a batch of states: its
        force rows' multipliers (a revolute joint's; none: zero).

        Args:
            Ra: the first point's frame's rotation at each state (S, 3, 3).
            lam: the joint's multipliers at each (S, rows).

        Returns:
            The forces (S, 3).

        Raises:
            ValueError: ``Ra`` is not (S, 3, 3) or ``lam`` not (S, rows) for the same S.
        """
        Ra, lam = self._batch(Ra, lam)
        force = np.zeros((len(lam), 3))
        force[:, :self.n_point_rows] = lam[:, :self.n_point_rows]
        return force

    def _batch(self, Ra: np.ndarray, lam: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``Ra`` and ``lam`` of :meth:`forces_on_b` as float arrays, their shapes checked."""
        Ra, lam = np.asarray(Ra, dtype=float), np.asarray(lam, dtype=float)
        if Ra.ndim != 3 or Ra.shape[1:] != (3, 3):
            raise ValueError(f"{self.name}: forces_on_b's Ra must be the rotations at the states, "
                             f"shape (S, 3, 3), not {Ra.shape}")
        if lam.shape != (len(Ra), self.n_rows):
            raise ValueError(f"{self.name}: forces_on_b's lam must be the joint's multipliers at "
                             f"the {len(Ra)} states, shape ({len(Ra)}, {self.n_rows}), not "
                             f"{lam.shape}")
        return Ra, lam

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _across(axis: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Two unit directions across a 3D ``axis`` (t1, t2 = axis x t1)."""
    t1 = np.cross(axis, [1.0, 0.0, 0.0])
    if np.linalg.norm(t1) < 0.5:
        t1 = np.cross(axis, [0.0, 1.0, 0.0])
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(axis, t1)


class _Axial(FrameJoint):
    """A joint with an axis (revolute, prismatic): its constants at t = 0 and the alignment
    rows of 3D.

    Args:
        a: the first point.
        b: the second point.
        gdim: 2 or 3.
        axis: the joint's axis at t = 0, global components (2D: z when None).
        name: its name.
    """

    word = "joint"

    def __init__(self, a: JointPoint, b: JointPoint, gdim: int, axis: ArrayLike | None,
                 name: str) -> None:
        super().__init__(a, b, gdim, name)
        if gdim == 3 and axis is None:
            raise ValueError(f"{name}: a {self.word} joint in 3D needs its axis (axis=)")
        self.axis = np.array([0.0, 0.0, 1.0]) if axis is None else checks.unit_axis(axis,
                                                                                      "axis")
        Ra, Rb, self._pa0, self._pb0 = self._start()
        self.angle0 = planar_angle(Rb) - planar_angle(Ra)
        #: the axis in a's frame
        self.axis_a = Ra.T @ self.axis
        #: 3D: pairs (p in a's frame, q in b's frame) of directions that stay at right angles,
        #: (R_a p) . (R_b q) = 0: the axis against two directions across it (a prismatic
        #: joint's also one direction across against the other: no turn about it)
        self.lock: List[Tuple[np.ndarray, np.ndarray]] = []
        self._Ra0, self._Rb0 = Ra, Rb

    def _align(self, a: End, b: End, g: np.ndarray, h: np.ndarray,
               G: Sequence[SpeedCoefficients]) -> None:
        """The alignment rows, (R_a p) . (R_b q): their rate omega_a,G . c - omega_b,G . c,
        c = a_G x b_G."""
        for k, (pa_, qb_) in enumerate(self.lock):
            aG, bG = a.R @ pa_, b.R @ qb_
            c = cross3(aG, bG)
            g[k] = float(aG @ bG)
            h[k] = float((a.R @ a.omega - b.R @ b.omega) @ c)
            if a.index is not None:
                G[k][a.index] = G[k].get(a.index, 0.0) + (a.R.T @ c) @ a.domega  # type: ignore[operator]
            if b.index is not None:
                G[k][b.index] = G[k].get(b.index, 0.0) - (b.R.T @ c) @ b.domega  # type: ignore[operator]

    def _align_gz(self, a: End, b: End, rows: np.ndarray, zslice: Sequence[slice]) -> None:
        for k, (pa_, qb_) in enumerate(self.lock):
            aG, bG = a.R @ pa_, b.R @ qb_
            if a.index is not None:
                rows[k, zslice[a.index]] -= bG @ (a.R @ skew(pa_) @ a.dphi)
            if b.index is not None:
                rows[k, zslice[b.index]] -= aG @ (b.R @ skew(qb_) @ b.dphi)


class Revolute(_Axial):
    """A revolute joint: the points coincide (rows r_a - r_b = 0, 2 in 2D, 3 in 3D) and, in 3D,
    the joint's axis, fixed in both frames, stays aligned (2 rows). The multipliers of the
    first ``gdim`` rows are the force on ``b``'s point (global components).

    Args:
        a: the first point (None-framed: the ground).
        b: the second point.
        gdim: 2 or 3.
        axis: the joint's axis at t = 0, global components (3D; in 2D z, None).
        name: its name.
    """

    word = "revolute"

    def __init__(self, a: JointPoint, b: JointPoint, gdim: int, *,
                 axis: ArrayLike | None = None, name: str = "revolute") -> None:
        super().__init__(a, b, gdim, axis, name)
        assert self.axis is not None  # (set by _Axial)
        if gdim == 2 and np.abs(self.axis[:2]).max() > 1e-12:
            raise ValueError(f"{name}: in 2D a revolute joint turns about z, got axis "
                             f"{self.axis.tolist()}")
        if gdim == 3:
            t1, t2 = _across(self.axis)
            self.lock = [(self.axis_a, self._Rb0.T @ t1), (self.axis_a, self._Rb0.T @ t2)]
        self.n_point_rows = gdim
        self.n_rows = self.n_position = gdim + len(self.lock)

    def rows(self, a: End, b: End, lam: np.ndarray, g: np.ndarray, h: np.ndarray,
             G: Sequence[SpeedCoefficients], dr: np.ndarray | None = None) -> None:
        """See :meth:`FrameJoint.rows`: the coincidence rows, then the alignment rows.

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            lam: the joint's multipliers (not read).
            g: its position values (written).
            h: its velocity values (written).
            G: its rows' speed coefficients (added to).
            dr: the rows' coefficients of the points' velocities (added to), or None.
        """
        for k in range(self.gdim):
            g[k], h[k] = a.r[k] - b.r[k], a.rd[k] - b.rd[k]
            if dr is not None:
                dr[k, 0, k] += 1.0
                dr[k, 1, k] -= 1.0
            if a.index is not None:
                G[k][a.index] = G[k].get(a.index, 0.0) + a.Pw[k]  # type: ignore[index]
            if b.index is not None:
                G[k][b.index] = G[k].get(b.index, 0.0) - b.Pw[k]  # type: ignore[index]
        n = self.gdim
        self._align(a, b, g[n:], h[n:], G[n:])

    def gz(self, a: End, b: End, rows: np.ndarray, zslice: Sequence[slice]) -> None:
        """See :meth:`FrameJoint.gz`.

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            rows: the position rows over the frames' unknowns (added to).
            zslice: each computed frame's coordinates in a row.
        """
        for k in range(self.gdim):
            for end, sign in ((a, 1.0), (b, -1.0)):
                if end.index is None:
                    continue
                R, dphi, drO = end.R, end.dphi, end.drO
                rows[k, zslice[end.index]] += sign * (
                    drO[k] - (R[k] @ skew(end.x)) @ dphi)  # type: ignore[index,operator]
        self._align_gz(a, b, rows[self.gdim:], zslice)


class Prismatic(_Axial):
    """A prismatic joint: ``b``'s point moves along the axis fixed in ``a``'s frame (its
    offsets across the axis keep their values at t = 0) and the two frames keep their relative
    orientation (2D: 1 row across and the relative angle; 3D: 2 across and 3 alignments).

    Args:
        a: the first point (the guide's; None-framed: a guide fixed in the ground).
        b: the point that slides.
        gdim: 2 or 3.
        axis: the guide's direction at t = 0, global components.
        name: its name.
    """

    word = "prismatic"

    def __init__(self, a: JointPoint, b: JointPoint, gdim: int, *,
                 axis: ArrayLike | None = None, name: str = "prismatic") -> None:
        super().__init__(a, b, gdim, axis, name)
        assert self.axis is not None  # (set by _Axial)
        Ra, Rb = self._Ra0, self._Rb0
        if gdim == 3:
            t1, t2 = _across(self.axis)
            self.lock = [(self.axis_a, Rb.T @ t1), (self.axis_a, Rb.T @ t2), (Ra.T @ t1,
                                                                               Rb.T @ t2)]
            across: Tuple[np.ndarray, ...] = (t1, t2)
        else:
            across = (np.array([-self.axis[1], self.axis[0], 0.0]),)
        #: the directions across the axis (in a's frame) and b's point's offsets along them at
        #: t = 0: b's point stays on the line
        self.normals_a = [Ra.T @ n for n in across]
        self.offsets = [float(n @ (self._pb0 - self._pa0)) for n in across]
        self.n_rows = self.n_position = len(across) + len(self.lock) + (1 if gdim == 2 else 0)

    def rows(self, a: End, b: End, lam: np.ndarray, g: np.ndarray, h: np.ndarray,
             G: Sequence[SpeedCoefficients], dr: np.ndarray | None = None) -> None:
        """See :meth:`FrameJoint.rows`: the rows across the axis, n_a . (r_b - r_a) - d0 with
        n_a = R_a n0 turning with ``a``; in 2D the relative angle; in 3D the alignments.

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            lam: the joint's multipliers (not read).
            g: its position values (written).
            h: its velocity values (written).
            G: its rows' speed coefficients (added to).
            dr: the rows' coefficients of the points' velocities (added to), or None.
        """
        d = b.r - a.r
        for k, n0 in enumerate(self.normals_a):
            n = a.R @ n0
            nd = a.R @ cross3(a.omega, n0)
            g[k] = float(n @ d) - self.offsets[k]
            h[k] = float(nd @ d + n @ (b.rd - a.rd))
            if dr is not None:
                dr[k, 0] -= n
                dr[k, 1] += n
            if a.index is not None:
                # d(nd . d)/dw_a = d/dw_a [(R_a (om_a x n0)) . d] = (R_a^T d) . (dom x n0)
                G[k][a.index] = (G[k].get(a.index, 0.0) - n @ a.Pw
                                 - (skew(n0) @ a.domega).T @ (a.R.T @ d))  # type: ignore[operator]
            if b.index is not None:
                G[k][b.index] = G[k].get(b.index, 0.0) + n @ b.Pw  # type: ignore[operator]
        k = len(self.normals_a)
        if self.gdim == 2:
            th, thd, Gs = self.relative_angle(a, b)
            g[k] = th - self.angle0
            h[k] = thd
            for i, v in Gs.items():
                G[k][i] = G[k].get(i, 0.0) + v
            k += 1
        self._align(a, b, g[k:], h[k:], G[k:])

    def forces_on_b(self, Ra: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """See :meth:`FrameJoint.forces_on_b`: the guide's force on ``b``'s point across the
        axis, -sum_k lam_k n_k over the rows across it (the joint's moment, of its angle or
        alignment rows, is not in it).

        Args:
            Ra: the first point's frame's rotation at each state (S, 3, 3).
            lam: the joint's multipliers at each (S, rows).

        Returns:
            The forces (S, 3).

        Raises:
            ValueError: as :meth:`FrameJoint.forces_on_b`.
        """
        Ra, lam = self._batch(Ra, lam)
        force = np.zeros((len(lam), 3))
        for k, n0 in enumerate(self.normals_a):
            force -= lam[:, k:k + 1] * (Ra @ n0)
        return force

    def gz(self, a: End, b: End, rows: np.ndarray, zslice: Sequence[slice]) -> None:
        """See :meth:`FrameJoint.gz`.

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            rows: the position rows over the frames' unknowns (added to).
            zslice: each computed frame's coordinates in a row.
        """
        d = b.r - a.r
        for k, n0 in enumerate(self.normals_a):
            n = a.R @ n0
            for end, sign in ((a, -1.0), (b, 1.0)):
                if end.index is None:
                    continue
                R, dphi, drO = end.R, end.dphi, end.drO
                rows[k, zslice[end.index]] += sign * (
                    n @ (drO - R @ skew(end.x) @ dphi))  # type: ignore[operator]
                if end is a:   # n turns with a
                    rows[k, zslice[end.index]] -= d @ (R @ skew(n0) @ dphi)
        k = len(self.normals_a)
        if self.gdim == 2:
            self.relative_angle_gz(a, b, rows[k], zslice)
            k += 1
        self._align_gz(a, b, rows[k:], zslice)


class Spring(FrameJoint):
    """A linear spring and damper between the points: the force on ``b`` is s e, e the unit
    vector from ``b``'s point to ``a``'s, s = k (L - L0) + c L' the tension. Its components are
    unknowns with a row each, F - s e = 0, so that the force enters the bodies as a revolute
    joint's does; no position rows (a damper: ``stiffness=0``).

    Args:
        a: the first point.
        b: the second point (None-framed: the ground).
        gdim: 2 or 3.
        stiffness: k >= 0 (N/m).
        damping: c >= 0 (N s/m).
        length: the rest length L0 (None: the points' distance at t = 0).
        name: its name.
    """

    def __init__(self, a: JointPoint, b: JointPoint, gdim: int, *, stiffness: float,
                 damping: float = 0.0, length: float | None = None,
                 name: str = "spring") -> None:
        super().__init__(a, b, gdim, name)
        self.stiffness = checks.real(stiffness, f"{name}: stiffness")
        self.damping = checks.real(damping, f"{name}: damping")
        if self.stiffness < 0.0 or self.damping < 0.0:
            raise ValueError(f"{name}: stiffness and damping must be >= 0, got "
                             f"stiffness={self.stiffness:g}, damping={self.damping:g}")
        _, _, pa, pb = self._start()
        dist = float(np.linalg.norm(pa - pb))
        if dist <= 1e-12 * max(1.0, float(np.abs(pa).max())):
            raise ValueError(f"{name}: the spring's two points coincide at t = 0 (its "
                             "direction is undefined); join coincident points with a revolute "
                             "joint and a torsional spring")
        self.length = dist if length is None else checks.real(length, f"{name}: length")
        if self.length < 0.0:
            raise ValueError(f"{name}: length must be >= 0, got {self.length:g}")
        self.n_point_rows = self.n_rows = gdim

    def force(self, d: np.ndarray, dd: np.ndarray
              ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
        """The force on ``b``'s point, s e (global), its derivatives with respect to
        d = r_a - r_b and to d', the tension s and the length L.

        Args:
            d: r_a - r_b.
            dd: its rate.

        Returns:
            ``(s e, d(s e)/dd, d(s e)/dd', s, L)``.

        Raises:
            FloatingPointError: the points met (length 0).
        """
        L = float(np.linalg.norm(d))
        if not L > 0.0:
            raise FloatingPointError(f"spring {self.name!r}: its two points met (length 0): "
                                     "its direction is undefined")
        e = d / L
        P = (np.eye(3) - np.outer(e, e)) / L     # d e / d d
        Ld = float(e @ dd)
        sT = self.stiffness * (L - self.length) + self.damping * Ld
        ds = self.stiffness * e + self.damping * (P @ dd)
        Jd = np.outer(e, ds) + sT * P
        Jdd = self.damping * np.outer(e, e)
        return sT * e, Jd, Jdd, sT, L

    def energy(self, a: End, b: End) -> float:
        """The potential 1/2 k (L - L0)^2 at the points.

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.

        Returns:
            The potential (J).
        """
        d = a.r - b.r
        return 0.5 * self.stiffness * (float(np.linalg.norm(d)) - self.length) ** 2

    def rows(self, a: End, b: End, lam: np.ndarray, g: np.ndarray, h: np.ndarray,
             G: Sequence[SpeedCoefficients], dr: np.ndarray | None = None) -> None:
        """The force rows F_k - s e_k (in ``h``; F the force on ``b``, the multipliers ``lam``),
        with the speeds' coefficients of the points' velocities in ``G`` (the force's
        direction on the frames, as a revolute joint's).

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            lam: the force components.
            g: its position values (none: left zero).
            h: the force rows (written).
            G: the points' speed coefficients (added to).
            dr: the rows' coefficients of the points' velocities, -+ d(s e)/dd' (added to),
                or None.
        """
        for k in range(self.gdim):
            if a.index is not None:
                G[k][a.index] = G[k].get(a.index, 0.0) + a.Pw[k]  # type: ignore[index]
            if b.index is not None:
                G[k][b.index] = G[k].get(b.index, 0.0) - b.Pw[k]  # type: ignore[index]
        force, _, Jdd, _, _ = self.force(a.r - b.r, a.rd - b.rd)
        if dr is not None:
            dr[:self.gdim, 0] -= Jdd[:self.gdim]
            dr[:self.gdim, 1] += Jdd[:self.gdim]
        F = np.zeros(3)
        F[:self.gdim] = lam[:self.gdim]
        h[:self.gdim] = (F - force)[:self.gdim]

    def add_speed_jacobian(self, Jdd: np.ndarray, G: Sequence[SpeedCoefficients],
                           D: np.ndarray, rows: int, wslice: Sequence[slice]) -> None:
        """The force rows' derivatives by the force components (the identity) and by the
        speeds, through d' = sum_l G_l w: -J_d' G.

        Args:
            Jdd: d(s e)/dd'.
            G: the rows' speed coefficients.
            D: the dense Jacobian (added to).
            rows: the first row's index in ``D`` (its column of the force is the same).
            wslice: each computed frame's speeds in ``D``.
        """
        for k in range(self.gdim):
            r = rows + k
            D[r, r] += 1.0
            for c in range(self.gdim):
                for i, v in G[c].items():
                    D[r, wslice[i]] -= Jdd[k, c] * v

    def output(self, a: End, b: End, lam: np.ndarray, g: np.ndarray) -> ElementOutput:
        """What a run records of the spring: its tension and length.

        Args:
            a: the first point's kinematics.
            b: the second point's kinematics.
            lam: the force components (not read).
            g: no position values.

        Returns:
            The :class:`SpringOutput`.
        """
        _, _, _, sT, L = self.force(a.r - b.r, a.rd - b.rd)
        return SpringOutput(tension=sT, length=L)


class RelativeState:
    """What a torque motor's function sees: the driven ``angle`` (from its value at t = 0)
    and its ``rate``.

    Args:
        angle: the angle (rad).
        rate: its rate (rad/s).
    """

    def __init__(self, angle: float, rate: float) -> None:
        self.angle, self.rate = angle, rate


def _rate(fn: Callable[[float], float], t: float) -> float:
    """D fn / dt by central differences (a driven angle's rate)."""
    h = 1e-6 * max(1.0, abs(t))
    return (float(fn(t + h)) - float(fn(t - h))) / (2 * h)


class Motor:
    """A motor on a joint's relative rotation (2D revolute) or on a hinge's angle.

    Exactly one of ``angle`` (a function of t: the relative angle is driven, a position row
    whose multiplier is the torque), ``speed`` (its rate is driven, a velocity row) or
    ``torque`` (``torque(t, s)``, an applied pair of torques, no row) is given.

    Args:
        target: the :class:`Revolute` (2D) or a :class:`~dolfinx_mbs.frames.Hinge`.
        angle: ``angle(t)`` (rad), the rotation since t = 0.
        speed: ``speed(t)`` (rad/s).
        torque: ``torque(t, s)`` -> N m, s the relative state (:class:`RelativeState`).
        name: the motor's name.
        angle0: the driven coordinate's value at t = 0 (the angle counts from it).
    """

    def __init__(self, target: FrameJoint | ComputedFrame, *, angle: Callable | None = None,
                 speed: Callable | None = None, torque: Callable | None = None,
                 name: str = "motor", angle0: float = 0.0) -> None:
        given = [k for k, v in (("angle", angle), ("speed", speed), ("torque", torque))
                 if v is not None]
        if len(given) != 1:
            raise ValueError(f"{name}: give exactly one of angle=, speed=, torque= (got "
                             f"{given or 'none'})")
        for k, v in (("angle", angle), ("speed", speed), ("torque", torque)):
            if v is not None and not callable(v):
                raise ValueError(f"{name}: {k} must be a function, got {v!r}")
        self.target, self.name = target, name
        self.angle, self.speed, self.torque = angle, speed, torque
        #: what the motor drives or applies, a word for messages
        self.drives = given[0]
        fn = angle if angle is not None else speed if speed is not None else torque
        assert fn is not None  # (exactly one is given)
        self.fn: Callable = fn
        #: the driven coordinate's value at t = 0 (the angle rows are relative to it)
        self.angle0 = float(angle0)

    @property
    def n_rows(self) -> int:
        """1 for a driven angle or speed, 0 for an applied torque."""
        return 0 if self.torque is not None else 1

    @property
    def n_position(self) -> int:
        """1 for a driven angle (a position row), else 0."""
        return 1 if self.angle is not None else 0

    def prescribed(self, t: float) -> Tuple[float | None, float]:
        """What a driven motor prescribes at ``t``: (the angle or None, the rate), checked
        finite.

        Args:
            t: time (s).

        Returns:
            ``(angle or None, rate)``.

        Raises:
            ValueError: the user's function gave a value that is not finite.
        """
        if self.angle is not None:
            a, r = float(self.angle(t)), _rate(self.angle, t)
            shown = a
        else:
            assert self.speed is not None  # (a driven motor: angle or speed)
            a, r = None, float(self.speed(t))
            shown = r
        if not (math.isfinite(r) and (a is None or math.isfinite(a))):
            raise ValueError(f"its {self.drives} function returned {shown!r} (rate {r!r}): "
                             "expected finite values")
        return a, r

    def prescribed_many(self, times: np.ndarray) -> np.ndarray | None:
        """:meth:`prescribed` at each of ``times`` in one call of the user's function with the
        array of times (a function of NumPy operations: the same arithmetic as at each time),
        as (len(times), 2) (NaN angles for a speed motor); None where the function does not
        take an array, gives another shape or a value that is not finite (then
        :meth:`prescribed` at each time says which).

        Args:
            times: the times (s).

        Returns:
            The values, or None.
        """
        t = np.asarray(times, dtype=float)
        out = np.empty((t.size, 2))
        try:
            with np.errstate(all="ignore"):
                if self.angle is not None:
                    h = 1e-6 * np.maximum(1.0, np.abs(t))
                    a = np.asarray(self.angle(t), dtype=float)
                    r = (np.asarray(self.angle(t + h), dtype=float)
                         - np.asarray(self.angle(t - h), dtype=float)) / (2 * h)
                else:
                    assert self.speed is not None  # (a driven motor: angle or speed)
                    a = np.full(t.shape, math.nan)
                    r = np.asarray(self.speed(t), dtype=float)
        except Exception:
            return None
        if a.shape != t.shape or r.shape != t.shape or not np.isfinite(r).all() \
                or (self.angle is not None and not np.isfinite(a).all()):
            return None
        out[:, 0], out[:, 1] = a, r
        return out

    def row(self, driven: Tuple[float, float, SpeedCoefficients],
            prescribed: Tuple[float | None, float]) -> Tuple[float, float, SpeedCoefficients]:
        """A driven motor's row: angle (position) or speed (velocity), relative to what it
        drives.

        Args:
            driven: the driven coordinate's (angle, rate, d rate/dw).
            prescribed: what the motor prescribes at the time (:meth:`prescribed`).

        Returns:
            ``(g, h, G)``.
        """
        th, thd, G = driven
        a, r = prescribed
        if a is not None:
            return th - self.angle0 - a, thd - r, G
        return 0.0, thd - r, G

    def torque_at(self, t: float, angle: float, rate: float) -> float:
        """A torque motor's torque at the driven coordinate's ``angle`` (absolute) and rate.

        Args:
            t: time (s).
            angle: the coordinate (rad; the function sees it from its value at t = 0).
            rate: its rate (rad/s).

        Returns:
            The torque (N m).

        Raises:
            ValueError: the function gave a torque that is not finite.
        """
        assert self.torque is not None  # (a torque motor)
        tau = float(self.torque(t, RelativeState(angle - self.angle0, rate)))
        if not math.isfinite(tau):
            raise ValueError(f"motor {self.name!r} returned {tau!r}: expected a finite torque")
        return tau

    def output(self, lam: float, g: float) -> MotorOutput:
        """What a run records of a driven motor: its torque (lam G enters the residual,
        inertia minus applied: the motor applies -lam) and its row's drift.

        Args:
            lam: the row's multiplier.
            g: its position value (0 for a speed).

        Returns:
            The :class:`MotorOutput`.
        """
        return MotorOutput(torque=-float(lam), drift=abs(float(g)))

    def __repr__(self) -> str:
        return f"Motor(name={self.name!r}, {self.drives}=...)"
