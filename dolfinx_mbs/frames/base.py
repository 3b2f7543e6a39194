"""The frame's state and the base class every frame implements.

:class:`FrameState` holds a frame's motion at one time in local components, :class:`Frame` is the
interface (``state(t)``), :class:`FrameConstants` the same state as ``fem.Constant`` s for UFL
forms. The frames themselves are in :mod:`dolfinx_mbs.frames` (axis rotations) and
:mod:`dolfinx_mbs.frames.prescribed` (motions given as callables); import them from ``frames``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Hashable, Sequence, cast

import numpy as np
from dolfinx import fem

from dolfinx_mbs import checks, compat

if TYPE_CHECKING:
    from dolfinx.mesh import Mesh
    from numpy.typing import ArrayLike


def skew(w: ArrayLike) -> np.ndarray:
    """The matrix of ``y -> w x y``.

    Args:
        w: a 3-vector.

    Returns:
        The 3x3 matrix.
    """
    w = np.asarray(w, dtype=float)
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def cross3(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray:
    """A x b of two 3-vectors (numpy's ``cross`` costs microseconds of argument handling:
    this is for the many small products of a step).

    Args:
        a: a 3-vector.
        b: a 3-vector.

    Returns:
        The product (3,).
    """
    a0, a1, a2 = float(a[0]), float(a[1]), float(a[2])
    b0, b1, b2 = float(b[0]), float(b[1]), float(b[2])
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def vee(W: np.ndarray) -> np.ndarray:
    """Axial vector of the skew part of a 3x3 matrix (inverse of :func:`skew`).

    Args:
        W: a 3x3 matrix.

    Returns:
        The axial vector (3,).
    """
    return 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])


def rotation_about(axis: ArrayLike, angle: float, unit: bool = False) -> np.ndarray:
    """Rotation matrix by ``angle`` (rad) about ``axis`` (normalised, unless ``unit`` says it
    is a unit vector already; Rodrigues' formula).

    Args:
        axis: the rotation axis.
        angle: the angle (rad).
        unit: ``axis`` is a unit vector already (not normalised again).

    Returns:
        The 3x3 rotation matrix.
    """
    n = np.asarray(axis, dtype=float) if unit else checks.unit_axis(axis)
    K = skew(n)
    return cast(np.ndarray, np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K))


@dataclasses.dataclass(frozen=True)
class FrameState:
    """The motion of a frame at time ``t``; vectors in local components except ``R`` and ``r_O``.

    Attributes:
        t: time (s).
        R: rotation, local axes as columns in global components (3x3).
        r_O: origin position in global components (m).
        omega: angular velocity (rad/s).
        alpha: angular acceleration (rad/s^2).
        v_O: origin velocity (m/s).
        a_O: origin acceleration (m/s^2).
    """

    t: float
    R: np.ndarray
    r_O: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray
    v_O: np.ndarray
    a_O: np.ndarray

    def is_planar(self, tol: float = 1e-12) -> bool:
        """True when the motion keeps the xy-plane: rotation about z, in-plane origin motion.

        Args:
            tol: relative tolerance on the out-of-plane components of the rates.

        Returns:
            Whether the motion is planar.
        """
        scale = 1.0 + np.abs(self.omega).max() + np.abs(self.alpha).max()
        lin = 1.0 + np.abs(self.v_O).max() + np.abs(self.a_O).max()
        return bool(
            abs(self.omega[0]) + abs(self.omega[1]) + abs(self.alpha[0]) + abs(self.alpha[1])
            <= tol * scale
            and abs(self.v_O[2]) + abs(self.a_O[2]) <= tol * lin
        )

    def to_global(self, X: np.ndarray) -> np.ndarray:
        """Global positions ``r_O + R X`` of local points ``X`` (shape (n, 3) or (3,)).

        Args:
            X: local positions, (n, 3) or (3,).

        Returns:
            The global positions, of ``X``'s shape.
        """
        X = np.asarray(X, dtype=float)
        return cast(np.ndarray, self.r_O + X @ self.R.T)

    def carried(self, Q: np.ndarray, d: np.ndarray) -> "FrameState":
        """The state of a frame fixed in this one with the constant axes ``Q`` and origin ``d``.

        The same rigid motion seen in other axes (an element frame): R' = R Q,
        r_O' = r_O + R d, and in the new components omega' = Q^T omega, alpha' = Q^T alpha,
        v_O' = Q^T (v_O + omega x d), a_O' = Q^T (a_O + alpha x d + omega x (omega x d)).

        Args:
            Q: 3x3 rotation, the new axes as columns in this frame's components.
            d: the new origin in this frame's components (m).

        Returns:
            The carried frame's state at the same time.
        """
        Q, d = np.asarray(Q, dtype=float), np.asarray(d, dtype=float)
        wd = np.cross(self.omega, d)
        return FrameState(t=self.t, R=self.R @ Q, r_O=self.r_O + self.R @ d,
                          omega=Q.T @ self.omega, alpha=Q.T @ self.alpha,
                          v_O=Q.T @ (self.v_O + wd),
                          a_O=Q.T @ (self.a_O + np.cross(self.alpha, d)
                                     + np.cross(self.omega, wd)))


@dataclasses.dataclass(frozen=True)
class FrameStates:
    """The states of a frame at many times ``t`` (N,): the fields of :class:`FrameState`
    stacked along a first axis (R (N, 3, 3), the vectors (N, 3))."""

    t: np.ndarray
    R: np.ndarray
    r_O: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray
    v_O: np.ndarray
    a_O: np.ndarray

    @classmethod
    def stack(cls, states: Sequence[FrameState]) -> "FrameStates":
        """The states of a list of :class:`FrameState` s.

        Args:
            states: the states, one per time.

        Returns:
            The stacked states.
        """
        names = [f.name for f in dataclasses.fields(FrameState)]
        return cls(**{k: np.array([getattr(s, k) for s in states], dtype=float)
                      for k in names})

    def at(self, k: int) -> FrameState:
        """The state of the k-th time.

        Args:
            k: the time's index.

        Returns:
            The state.
        """
        return FrameState(**{f.name: (float(self.t[k]) if f.name == "t" else  # type: ignore[arg-type]
                                      getattr(self, f.name)[k])
                             for f in dataclasses.fields(FrameState)})

    def planar(self, tol: float = 1e-12) -> np.ndarray:
        """:meth:`FrameState.is_planar` at every time (a boolean array).

        Args:
            tol: relative tolerance on the out-of-plane components of the rates.

        Returns:
            One boolean per time.
        """
        def top(x: np.ndarray) -> np.ndarray:
            return np.abs(x).max(axis=1)
        scale = 1.0 + top(self.omega) + top(self.alpha)
        lin = 1.0 + top(self.v_O) + top(self.a_O)
        rot = np.abs(self.omega[:, :2]).sum(axis=1) + np.abs(self.alpha[:, :2]).sum(axis=1)
        planar: np.ndarray = (rot <= tol * scale) & (np.abs(self.v_O[:, 2])
                                                     + np.abs(self.a_O[:, 2]) <= tol * lin)
        return planar


class Frame:
    """Base class: a rigid frame whose motion is known as a function of time.

    Subclasses implement :meth:`state`. ``time_invariant`` is True when the local-component state
    (omega, alpha, v_O, a_O) does not change with time, so operators can be assembled once.
    """

    time_invariant: bool = False
    #: True when :meth:`state` runs the user's code (motion functions, a user's subclass), which
    #: may fail on some ranks only: the assembly then evaluates it under a collective guard
    calls_user_code: bool = True
    #: False only when the origin's acceleration a_O is zero at all times (then the prestress
    #: needs no unit cases for it)
    origin_accelerates: bool = True

    def state(self, t: float) -> FrameState:  # pragma: no cover - abstract
        """The frame state (R, r_O, omega, alpha, v_O, a_O) at time ``t``.

        Args:
            t: time (s).

        Returns:
            The :class:`FrameState`.
        """
        raise NotImplementedError

    def motion_key(self) -> Hashable:
        """A key equal for frames that describe the same motion (see :func:`equal_motion`).

        Built from the defining parameters of the analytic frames, read when asked (a frame's
        parameters may be changed between solves). This default is the frame itself: a frame
        given by the user's code (callables, a subclass) describes the same motion as itself
        only.
        """
        return self

    def states(self, times: Sequence[float] | np.ndarray) -> FrameStates:
        """The states at all ``times`` at once (:class:`FrameStates`); by :meth:`state` at each
        unless a frame has a closed form for arrays of times.

        Args:
            times: the times (s).

        Returns:
            The states.
        """
        return FrameStates.stack([self.state(float(t)) for t in times])

    def omega(self, t: float) -> np.ndarray:
        """Angular velocity (rad/s) in local components.

        Args:
            t: time (s).

        Returns:
            The angular velocity (3,).
        """
        return self.state(t).omega

    def alpha(self, t: float) -> np.ndarray:
        """Angular acceleration (rad/s^2) in local components.

        Args:
            t: time (s).

        Returns:
            The angular acceleration (3,).
        """
        return self.state(t).alpha

    def rotation(self, t: float) -> np.ndarray:
        """Rotation matrix R(t).

        Args:
            t: time (s).

        Returns:
            The 3x3 rotation matrix.
        """
        return self.state(t).R

    def origin(self, t: float) -> np.ndarray:
        """Origin r_O(t) in global components.

        Args:
            t: time (s).

        Returns:
            The origin (3,).
        """
        return self.state(t).r_O

    def constants(self, mesh: Mesh) -> "FrameConstants":
        """The frame state as UFL constants on ``mesh``.

        For the forms of :mod:`dolfinx_mbs.forms` in a user's own solver loop::

            consts = frame.constants(mesh)
            k_w = forms.spin_softening(rho, consts.omega, u, v)
            ...
            consts.update(t)        # before assembling at time t

        See :class:`FrameConstants`.

        Args:
            mesh: the mesh the constants live on.

        Returns:
            The constants (:class:`FrameConstants`).
        """
        return FrameConstants(self, mesh)


def equal_motion(a: Frame, b: Frame) -> bool:
    """True when frames ``a`` and ``b`` describe the same motion.

    The same R(t) and r_O(t) at every time, so the same :class:`FrameState`, whether or not
    they are one object.

    Decided by :meth:`Frame.motion_key`: equal defining parameters for the analytic frames
    (:class:`~dolfinx_mbs.frames.ConstantSpin`, :class:`~dolfinx_mbs.frames.SpinUp`, also
    with the axis and rate both reversed or the point given elsewhere on the axis; any two
    at rest), equal samples for :class:`~dolfinx_mbs.frames.Sampled`, equal parts for
    :class:`~dolfinx_mbs.frames.Composed`, and the identity of the object for frames given
    by callables (:class:`~dolfinx_mbs.frames.Prescribed`, :class:`~dolfinx_mbs.frames.Planar`),
    whose functions cannot be compared. Frames of one rigid motion seen in different constant
    axes (the element frames of ``Model.tie(..., same_motion=True)``) do not count: their
    local components differ.

    Args:
        a: a frame.
        b: another frame.

    Returns:
        True for the same motion.
    """
    return a is b or a.motion_key() == b.motion_key()


def key_floats(x: ArrayLike) -> tuple:
    """A vector as a tuple of Python floats (-0.0 made 0.0): a part of a motion key.

    Args:
        x: the vector.

    Returns:
        The tuple.
    """
    return tuple(float(v) + 0.0 for v in np.asarray(x, dtype=float).ravel())


#: the motion key of every frame at rest (R = I, r_O = 0 at all times)
AT_REST = ("at rest",)


class FrameConstants:
    """A frame's state at one time as ``dolfinx.fem.Constant`` s on a mesh, in local components.

    Args:
        frame: the frame (None: at rest).
        mesh: the mesh.

    Attributes:
        omega, alpha, v_O, a_O: 3-vector constants (rad/s, rad/s^2, m/s, m/s^2); for a 2D mesh
            only the planar parts act in the forms (rotation about z, in-plane translation).
        R: the 3x3 rotation (local axes as columns, global components), e.g. to turn a global
            gravity into local components: ``ufl.dot(ufl.transpose(consts.R), g)``.
        state: the :class:`FrameState` last set (None before the first :meth:`update`).

    All constants are zero until :meth:`update` or :meth:`set` fills them.
    """

    def __init__(self, frame: Frame | None, mesh: Mesh) -> None:
        self.frame = frame
        st = compat.scalar_type
        self.omega = fem.Constant(mesh, np.zeros(3, dtype=st))
        self.alpha = fem.Constant(mesh, np.zeros(3, dtype=st))
        self.v_O = fem.Constant(mesh, np.zeros(3, dtype=st))
        self.a_O = fem.Constant(mesh, np.zeros(3, dtype=st))
        self.R = fem.Constant(mesh, np.eye(3, dtype=st))
        self.state: FrameState | None = None

    def set(self, state: FrameState) -> FrameState:
        """Fill the constants with ``state``; returns it.

        Args:
            state: the frame state.

        Returns:
            ``state``.
        """
        if not isinstance(state, FrameState):
            raise TypeError(f"state must be a dolfinx_mbs.frames.FrameState, got {state!r}")
        self.omega.value = state.omega
        self.alpha.value = state.alpha
        self.v_O.value = state.v_O
        self.a_O.value = state.a_O
        self.R.value = state.R
        self.state = state
        return state

    def update(self, t: float) -> FrameState:
        """Fill the constants with the frame's state at time ``t`` (s); returns that state.

        Args:
            t: time (s).

        Returns:
            The frame state at ``t``.
        """
        if self.frame is None:
            raise ValueError("these constants belong to no frame: use set(state)")
        return self.set(self.frame.state(checks.real(t, "t")))
