"""Frames whose motion is computed: their coordinates and speeds are unknowns of the model.

    hub = Hinge(axis=(0, 0, 1), origin=(0, 0, 0), angle=0.0, rate=0.0, name="hub")
    sat = Free(position=(0, 0, 0), orientation=np.eye(3), velocity=(0, 0, 0),
               angular_velocity=(0, 0, 0), name="sat")

A computed frame has coordinates z (its configuration) and speeds w (docs/theory.md section
8): independent velocities that need not be derivatives of the coordinates (quasi-velocities,
as Maggi's and Gibbs-Appell's equations allow). The speeds give the frame's state linearly,

    omega = Om w + omega_b,    v_O = T w + v_b,    alpha = Om w' + alpha_b,    a_O = T w' + a_b,

in local components, with the *partial* angular and origin velocities Om, T (3 x k) and biases
from a prescribed parent frame and from the moving axes (a_O = v_O' + omega x v_O). A material
point at x (local) then has the partial velocity T_j + Om_j x x for speed j: the rigid field
the frame's rows of the equations of motion test the bodies' dynamic residual with.

* :class:`Hinge`: one angle theta about an axis through a point, in the ground or in a
  prescribed parent frame; speed theta'. At theta = 0 the frame coincides with its parent (as
  :class:`~dolfinx_mbs.frames.ConstantSpin` does with the ground), so a mesh is given in the
  parent's coordinates.
* :class:`Free`: a free rigid motion. In 3D: the origin r_O (global) and a unit quaternion
  (why a quaternion: a rotation vector is singular at 2 pi and needs a change of chart on the
  way there; the quaternion has no singularity, its kinematics q' = q (0, omega) / 2 is
  bilinear, and the implicit midpoint rule keeps |q| = 1 exactly, since |q|^2 is a quadratic
  invariant of that equation; other schemes drift in |q| at their order, and the rotation is
  formed from q / |q|); speeds v_O and omega in local components. On a 2D mesh
  (all its bodies 2D): (x, y, theta) and speeds (v_O local, theta').

The model decides the dimension (:meth:`ComputedFrame.bind`) and owns the unknowns; the frame
maps them to a :class:`~dolfinx_mbs.frames.FrameState` and gives the derivatives that Newton's
method needs (:class:`FrameJet`). ``state(t)`` is the state last set (:meth:`set_state`: by a
run at its end, or by the user), else the initial one: eigenproblems and Campbell diagrams
about a state from a computed run read it there.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Dict, Mapping, Tuple, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.base import Frame, FrameState, cross3, rotation_about, skew
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

_I3 = np.eye(3)   # read only: sums with it make new arrays
_I3.flags.writeable = False

__all__ = ["ComputedFrame", "FrameJet", "Hinge", "Free", "quaternion_to_rotation",
           "rotation_to_quaternion"]


@dataclasses.dataclass
class FrameJet:
    """A computed frame's state and its first derivatives at (t, z, w, w').

    Attributes:
        state: the :class:`~dolfinx_mbs.frames.FrameState`.
        Om, T: the partial angular and origin velocities (3 x k, local components):
            d omega/dw = d alpha/dw' = Om and d v_O/dw = d a_O/dw' = T.
        dw: d(omega, alpha, v_O, a_O)/dw, each 3 x k (the bias terms included).
        dz: d(omega, alpha, v_O, a_O)/dz, each 3 x nz.
        dphi_dz: the rotation d phi (local components, dR = R skew(d phi)) per coordinate,
            3 x nz.
        drO_dz: d r_O / dz (global components), 3 x nz.
    """

    state: FrameState
    Om: np.ndarray
    T: np.ndarray
    dw: dict
    dz: dict
    dphi_dz: np.ndarray
    drO_dz: np.ndarray


def quaternion_to_rotation(q: np.ndarray) -> np.ndarray:
    """The rotation matrix of a quaternion (w, x, y, z), normalized first.

    Args:
        q: a quaternion (w, x, y, z).

    Returns:
        The 3x3 rotation matrix.
    """
    q = np.asarray(q, dtype=float)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def rotation_to_quaternion(R: np.ndarray) -> np.ndarray:
    """A unit quaternion (w, x, y, z), w >= 0, of a rotation matrix (Shepperd's method).

    Args:
        R: a 3x3 rotation matrix.

    Returns:
        The unit quaternion.
    """
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    k = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2.0 * math.sqrt(1.0 + tr)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif k == 1:
        s = 2.0 * math.sqrt(1.0 + 2 * R[0, 0] - tr)
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif k == 2:
        s = 2.0 * math.sqrt(1.0 + 2 * R[1, 1] - tr)
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + 2 * R[2, 2] - tr)
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    qa = np.array(q)
    return qa if qa[0] >= 0 else -qa


def _quat_G(q: np.ndarray) -> np.ndarray:
    """The 3 x 4 matrix with omega_local = 2 G q' for a unit quaternion q (and q' = G^T omega
    / 2, since G G^T = I and G q = 0)."""
    w, x, y, z = q
    return np.array([[-x, w, z, -y], [-y, -z, w, x], [-z, y, -x, w]])


def _rotation_check(R: ArrayLike, name: str, tol: float = 1e-8) -> np.ndarray:
    """A 3x3 proper rotation (orthonormal, det +1, to ``tol``), as given."""
    try:
        R = np.asarray(R, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 3x3 rotation matrix, got {R!r}") from None
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ValueError(f"{name} must be a finite 3x3 rotation matrix, got shape "
                         f"{np.shape(R)}")
    err = float(np.abs(R.T @ R - np.eye(3)).max())
    if err > tol or np.linalg.det(R) < 0:
        raise ValueError(f"{name} must be orthonormal with determinant +1 (R^T R = I to {tol:g}); "
                         f"got |R^T R - I| = {err:.3g}, det = {np.linalg.det(R):.6g}")
    return R


class ComputedFrame(Frame):
    """Base class of frames whose coordinates and speeds are unknowns of the model.

    Subclasses set ``n_coordinates`` and ``n_speeds`` (after :meth:`bind`), and implement
    :meth:`initial`, :meth:`rates`, :meth:`rates_jacobian` and :meth:`jet`.

    Args:
        name: the frame's name (results are keyed by it); unique in a model.
    """

    calls_user_code = False
    time_invariant = False
    origin_accelerates = True
    #: set by :meth:`bind` (the model): the dimension of the bodies the frame carries
    gdim: int = 3

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.name = name
        self._last: FrameState | None = None
        self._last_zw: tuple[np.ndarray, np.ndarray] | None = None
        self._bound = False

    # -- sizes and the unknowns ------------------------------------------------------------
    n_coordinates: int = 0
    n_speeds: int = 0
    #: auxiliary unknowns (a free frame's relative momentum, :class:`Free`)
    n_aux: int = 0
    #: True when the frame's first ``n_translations`` speeds are its origin's velocity in
    #: global components and its translation rows are the momentum balance
    momentum_balance: bool = False
    n_translations: int = 0
    #: True when the partial velocities Om and T (:class:`FrameJet`) do not depend on the
    #: frame's unknowns (a hinge's): a load of local components that reads nothing of the
    #: state then has a generalized force independent of them
    constant_partials: bool = False

    def bind(self, gdim: int) -> None:
        """Fix the dimension of the bodies the frame carries (2 or 3); called by the model.

        Args:
            gdim: the bodies' geometric dimension (2 or 3).
        """
        if gdim not in (2, 3):
            raise ValueError(f"gdim must be 2 or 3, got {gdim!r}")
        self.gdim = gdim
        self._bound = True

    def initial(self) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        """The initial coordinates z0 and speeds w0."""
        raise NotImplementedError

    def rates(self, z: np.ndarray, w: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Z' from the speeds (the kinematic relation).

        Args:
            z: the frame's coordinates.
            w: the frame's speeds.

        Returns:
            z'.
        """
        raise NotImplementedError

    def rates_jacobian(self, z: np.ndarray, w: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        """D z'/dz (nz x nz) and d z'/dw (nz x k).

        Args:
            z: the frame's coordinates.
            w: the frame's speeds.

        Returns:
            ``(dz'/dz, dz'/dw)``.
        """
        raise NotImplementedError

    def jet(self, t: float, z: np.ndarray, w: np.ndarray, wd: np.ndarray
            ) -> FrameJet:  # pragma: no cover - abstract
        """The state at (t, z, w, w') with its derivatives (:class:`FrameJet`).

        Args:
            t: time (s).
            z: the frame's coordinates.
            w: the frame's speeds.
            wd: the speeds' rates.

        Returns:
            The jet.
        """
        raise NotImplementedError

    def normalize(self, z: np.ndarray) -> np.ndarray:
        """The coordinates brought back onto their manifold (a unit quaternion); as given for
        coordinates without a constraint.

        Args:
            z: the frame's coordinates.

        Returns:
            The normalized coordinates.
        """
        return z

    def describe(self, z: np.ndarray, w: np.ndarray) -> Mapping[str, float | np.ndarray]:
        """Named outputs of the frame at (z, w) (e.g. ``angle``, ``rate``), floats and numpy
        arrays.

        Args:
            z: the frame's coordinates.
            w: the frame's speeds.

        Returns:
            The outputs by name (read-only; the CSV columns of a run are its scalars).
        """
        return FrozenMapping({})

    def describe_many(self, Z: np.ndarray, W: np.ndarray) -> Dict[str, np.ndarray]:
        """:meth:`describe` at many states (rows of ``Z``, ``W``), each output stacked.

        Args:
            Z: the frame's coordinates (rows).
            W: its speeds (rows).

        Returns:
            The outputs by name, arrays with a first axis of the states.
        """
        recs = [self.describe(z, w) for z, w in zip(Z, W)]
        return {k: np.array([r[k] for r in recs]) for k in (recs[0] if recs else {})}

    # -- the state as a Frame ----------------------------------------------------------------
    def state_at(self, t: float, z: np.ndarray, w: np.ndarray,
                 wd: np.ndarray | None = None) -> FrameState:
        """The frame's state at (t, z, w, w') (w' = 0 when not given).

        Args:
            t: time (s).
            z: the frame's coordinates.
            w: the frame's speeds.
            wd: the speeds' rates (None: zero).

        Returns:
            The frame state.
        """
        wd = np.zeros(self.n_speeds) if wd is None else wd
        return self.jet(t, np.asarray(z, float), np.asarray(w, float),
                        np.asarray(wd, float)).state

    def set_state(self, t: float, z: np.ndarray, w: np.ndarray,
                  wd: np.ndarray | None = None) -> FrameState:
        """Make (z, w, w') the state that :meth:`state` returns (a run does this at its end):
        eigenproblems and Campbell diagrams are then taken about it.

        Args:
            t: time (s).
            z: the frame's coordinates.
            w: the frame's speeds.
            wd: the speeds' rates (None: zero).

        Returns:
            The frame state.
        """
        self._last = self.state_at(t, z, w, wd)
        self._last_zw = (np.array(z, dtype=float), np.array(w, dtype=float))
        return self._last

    def reset(self) -> None:
        """Forget the state set by :meth:`set_state`: :meth:`state` is the initial one again."""
        self._last = None
        self._last_zw = None

    def state(self, t: float) -> FrameState:
        """The state last set by :meth:`set_state` (its time replaced by ``t``), else the
        initial state at ``t`` (speeds as given, zero accelerations).

        Args:
            t: time (s).

        Returns:
            The frame state.
        """
        t = checks.real(t, "t")
        if self._last is not None:
            return dataclasses.replace(self._last, t=t)
        z0, w0 = self.initial()
        return self.state_at(t, z0, w0)


class Hinge(ComputedFrame):
    """A frame turning by an unknown angle theta about a fixed axis.

    At theta = 0 the frame coincides with its parent (the ground when ``parent`` is None): a
    point at local X is at ``origin + R_rel (X - origin)`` in the parent, R_rel the rotation
    by theta about ``axis`` (as :class:`~dolfinx_mbs.frames.ConstantSpin` turns about its
    axis). The coordinate is theta (rad), the speed theta' (rad/s).

    Args:
        axis: the hinge axis (parent components; normalized).
        origin: a point on the axis (parent coordinates, m).
        angle: theta at the start (rad).
        rate: theta' at the start (rad/s).
        parent: a prescribed frame carrying the hinge (None: the ground).
        name: the frame's name.
    """

    #: Om = n and T = -n x c, in the frame's components, whatever theta is (a subclass whose
    #: :meth:`jet` makes them depend on theta sets this False)
    constant_partials = True

    def __init__(self, axis: ArrayLike = (0.0, 0.0, 1.0), origin: ArrayLike = (0.0, 0.0, 0.0),
                 angle: float = 0.0, rate: float = 0.0, parent: Frame | None = None,
                 name: str = "hinge") -> None:
        super().__init__(name)
        self.axis = checks.unit_axis(axis, "axis")
        self.pivot = checks.point3(origin, "origin")
        self.angle0 = checks.real(angle, "angle")
        self.rate0 = checks.real(rate, "rate")
        if parent is not None:
            if not isinstance(parent, Frame):
                raise TypeError(f"parent must be a dolfinx_mbs.frames.Frame or None, got "
                                f"{parent!r}")
            if isinstance(parent, ComputedFrame):
                raise ValueError("parent: a hinge on a computed frame is a joint between two "
                                 "computed frames (model.revolute); give a prescribed frame or "
                                 "None (the ground)")
        self.parent = parent
        self.calls_user_code = parent is not None and parent.calls_user_code
        self._for: tuple | None = None
        self.n_coordinates = 1
        self.n_speeds = 1

    def bind(self, gdim: int) -> None:
        """Fix the dimension of the bodies the frame carries (2 or 3); called by the model.

        Args:
            gdim: the bodies' dimension.

        Raises:
            ValueError: a 2D body on a hinge whose axis is not z.
        """
        super().bind(gdim)
        if gdim == 2 and np.abs(self.axis[:2]).max() > 1e-12:
            raise ValueError(f"hinge {self.name!r}: a 2D body turns about z; the axis "
                             f"{self.axis.tolist()} is not (0, 0, 1)")

    def initial(self) -> tuple[np.ndarray, np.ndarray]:
        """The initial angle and rate.

        Returns:
            ``(z0, w0)``: ``[angle0]`` and ``[rate0]``.
        """
        return np.array([self.angle0]), np.array([self.rate0])

    def rates(self, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The coordinates' rates z' from the speeds (the kinematic relation).

        Args:
            z: the frame's coordinates.
            w: the frame's speeds.

        Returns:
            z'.
        """
        return np.array([w[0]])

    def rates_jacobian(self, z: np.ndarray, w: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The derivatives of :meth:`rates`.

        Args:
            z: the frame's coordinates.
            w: the frame's speeds.

        Returns:
            ``(dz'/dz, dz'/dw)``.
        """
        return np.zeros((1, 1)), np.ones((1, 1))

    def describe(self, z: np.ndarray, w: np.ndarray) -> Mapping[str, float | np.ndarray]:
        """The hinge's named outputs.

        Args:
            z: the frame's coordinates (the angle).
            w: the frame's speeds (the rate).

        Returns:
            ``angle`` and ``rate`` (read-only mapping).
        """
        return FrozenMapping({"angle": float(z[0]), "rate": float(w[0])})

    def _constants(self) -> tuple:
        """(K, K K, n x c, n x (n x c)) of the axis n (K = skew(n)) and the pivot c.

        Kept while the axis and pivot are the same arrays: a step asks for the hinge's motion
        many times, and these small products cost more than the motion itself.
        """
        kept = self._for
        if kept is None or kept[0] is not self.axis or kept[1] is not self.pivot:
            n, c = self.axis, self.pivot
            K = skew(n)
            nc = cross3(n, c)
            self._consts = (K, K @ K, nc, cross3(n, nc))
            self._for = (n, c)
        return self._consts

    def _rotation(self, th: float) -> np.ndarray:
        """R_rel: Rodrigues' formula as :func:`rotation_about` has it (the same operations)."""
        K, KK = self._constants()[:2]
        return cast(np.ndarray, _I3 + math.sin(th) * K + (1.0 - math.cos(th)) * KK)

    def _local(self, th: float, thd: float, thdd: float) -> FrameState:
        """The hinge's motion relative to its parent (as ConstantSpin's closed form)."""
        n, c = self.axis, self.pivot
        R = self._rotation(th)
        nc, nnc = self._constants()[2:]
        return FrameState(t=0.0, R=R, r_O=c - R @ c, omega=thd * n, alpha=thdd * n,
                          v_O=-thd * nc, a_O=-thdd * nc - thd * thd * nnc)

    def _compose(self, t: float, th: float, thd: float, thdd: float) -> FrameState:
        c = self._local(th, thd, thdd)
        if self.parent is None:
            return dataclasses.replace(c, t=t)
        p = self.parent.state(t)
        Rc_T = c.R.T
        w_p = Rc_T @ p.omega
        v_rel = c.R @ c.v_O
        a_par = (p.a_O + cross3(p.alpha, c.r_O)
                 + cross3(p.omega, cross3(p.omega, c.r_O)) + 2.0 * cross3(p.omega, v_rel))
        return FrameState(t=t, R=p.R @ c.R, r_O=p.r_O + p.R @ c.r_O, omega=w_p + c.omega,
                          alpha=Rc_T @ p.alpha + c.alpha + cross3(w_p, c.omega),
                          v_O=Rc_T @ (p.v_O + cross3(p.omega, c.r_O)) + c.v_O,
                          a_O=Rc_T @ a_par + c.a_O)

    def at_rate(self, rate: float) -> Frame:
        """The hinge held at its angle and turning steadily at ``rate`` (a new, prescribed
        frame): what a Campbell sweep takes at each speed. The angle is the one last set
        (:meth:`set_state`, by a run at its end), else the initial one.

        Args:
            rate: theta' (rad/s), about :attr:`axis`.

        Returns:
            A time-invariant :class:`~dolfinx_mbs.frames.Frame` with omega = rate n, alpha = 0
            and the origin's motion of a steady spin about the axis through :attr:`pivot`.

        Raises:
            ValueError: a hinge on a prescribed parent frame (its state changes with the
                parent's motion: there is no steady spin to sweep).
        """
        if self.parent is not None:
            raise ValueError(f"hinge {self.name!r} turns in a prescribed parent frame: a "
                             f"Campbell sweep needs a hinge on the ground")
        angle = self.angle0 if self._last_zw is None else float(self._last_zw[0][0])
        return _SteadyHinge(self, angle, checks.real(rate, "rate"))

    def jet(self, t: float, z: np.ndarray, w: np.ndarray, wd: np.ndarray) -> FrameJet:
        """The state at (t, z, w, w') with its derivatives in the frame's speeds.

        Args:
            t: time (s).
            z: the frame's coordinates.
            w: the frame's speeds.
            wd: the speeds' rates.

        Returns:
            The :class:`FrameJet`.
        """
        th, thd, thdd = float(z[0]), float(w[0]), float(wd[0])
        st = self._compose(t, th, thd, thdd)
        n = self.axis
        nc, nnc = self._constants()[2:]
        names = ("omega", "alpha", "v_O", "a_O")
        if self.parent is None:
            # omega = thd n, alpha = thdd n, v_O = -thd n x c, a_O = -thdd n x c - thd^2 n x (n x c)
            dw = {"omega": n[:, None], "alpha": np.zeros((3, 1)), "v_O": -nc[:, None],
                  "a_O": (-2.0 * thd * nnc)[:, None]}
            dz = {k: np.zeros((3, 1)) for k in names}
        else:
            # the state is quadratic in thd and linear in thdd: central differences are exact
            # (to round-off); in theta it is smooth (a trigonometric function), differenced
            # with a step whose truncation error is below 1e-10 of the state's scale
            def vecs(s: FrameState) -> dict:
                return {k: getattr(s, k) for k in names}
            h = max(1.0, abs(thd))
            up, dn = vecs(self._compose(t, th, thd + h, thdd)), vecs(
                self._compose(t, th, thd - h, thdd))
            dw = {k: ((up[k] - dn[k]) / (2 * h))[:, None] for k in names}
            e = 1e-4
            up, dn = vecs(self._compose(t, th + e, thd, thdd)), vecs(
                self._compose(t, th - e, thd, thdd))
            up2, dn2 = vecs(self._compose(t, th + 2 * e, thd, thdd)), vecs(
                self._compose(t, th - 2 * e, thd, thdd))
            dz = {k: ((8 * (up[k] - dn[k]) - (up2[k] - dn2[k])) / (12 * e))[:, None]
                  for k in names}
        # r_O = r_p + R_p (c - R_rel c), dR_rel/dtheta = R_rel skew(n): d r_O/dtheta =
        # -R_p R_rel (n x c)
        if self.parent is None:
            drO = (-st.R @ nc)[:, None]    # R_p = I: st.R is R_rel
        else:
            drO = (-self.parent.state(t).R @ self._rotation(th) @ nc)[:, None]
        return FrameJet(state=st, Om=n[:, None].copy(), T=-nc[:, None].copy(), dw=dw, dz=dz,
                        dphi_dz=n[:, None].copy(), drO_dz=drO)


class _SteadyHinge(Frame):
    """A ground hinge held at ``angle`` turning steadily at ``rate`` (:meth:`Hinge.at_rate`)."""

    time_invariant = True
    calls_user_code = False

    def __init__(self, hinge: Hinge, angle: float, rate: float) -> None:
        self.hinge, self.angle, self.rate = hinge, angle, rate
        self.axis, self.pivot = hinge.axis, hinge.pivot

    def state(self, t: float) -> FrameState:
        """The state at ``t``: the hinge's at (angle, rate, 0), the same at every time.

        Args:
            t: time (s).

        Returns:
            The :class:`~dolfinx_mbs.frames.FrameState`.
        """
        return self.hinge._compose(checks.real(t, "t"), self.angle, self.rate, 0.0)

    def __repr__(self) -> str:
        return f"Hinge({self.hinge.name!r}).at_rate({self.rate}) at angle {self.angle}"


class Free(ComputedFrame):
    """A frame in free rigid motion: six unknowns in 3D, three on a 2D mesh.

    3D: coordinates (r_O, q), r_O the origin (global, m) and q a unit quaternion (w, x, y, z)
    of R; speeds (v_O, omega): the origin's velocity in *global* components (so r_O' = v_O
    and the translation's equations are the momentum balance P' = F in global components) and
    the angular velocity in local components. 2D: coordinates (x, y, theta), speeds (v_O global,
    theta').

    The linear momentum P = m v_O + R p_rel of what the frame carries (p_rel = int rho v - m
    v_O, local) enters as the auxiliary unknown pi = R p_rel (``n_aux``), so that the
    translation rows read m v_O' + pi' = F: P is then a linear function of the unknowns, and
    every time stepping scheme keeps it constant when no force acts (to round-off).

    Place the origin at (or near) the carried bodies' centre of mass: the rotation rows then
    carry little of the translation's inertia, and the time step's error constant stays that
    of the body's own motion (an origin far from the centre of mass couples the two and gives
    a much larger O(dt^2) error constant; docs/free_frame_origin.py measures it).

    Args:
        position: the origin at the start (global, m).
        orientation: R at the start (3x3 rotation, local axes as columns; checked
            orthonormal); on a 2D mesh a rotation about z.
        velocity: the origin's velocity at the start, in global components (m/s).
        angular_velocity: the angular velocity at the start, in global components (rad/s).
        name: the frame's name.
        dim: 2 for planar motion when the frame carries rigid bodies only (a frame carrying
            elastic bodies takes their dimension); None: by the bodies (3 for rigid bodies).
    """

    #: the auxiliary unknowns pi (the carried bodies' relative linear momentum, global)
    momentum_balance = True

    def __init__(self, position: ArrayLike = (0.0, 0.0, 0.0), orientation: ArrayLike | None = None,
                 velocity: ArrayLike = (0.0, 0.0, 0.0),
                 angular_velocity: ArrayLike = (0.0, 0.0, 0.0), name: str = "free",
                 dim: int | None = None) -> None:
        super().__init__(name)
        if dim not in (None, 2, 3):
            raise ValueError(f"dim must be 2, 3 or None (by the bodies), got {dim!r}")
        #: the dimension asked for (None: the bodies' own)
        self.dim = dim
        self.r0 = checks.point3(position, "position")
        self.R0 = _rotation_check(np.eye(3) if orientation is None else orientation,
                                  "orientation")
        self.v0 = checks.point3(velocity, "velocity")
        self.w0 = checks.point3(angular_velocity, "angular_velocity")
        self.bind(3)

    def bind(self, gdim: int) -> None:
        """Fix the dimension of the bodies the frame carries (2 or 3); called by the model.

        Args:
            gdim: the bodies' dimension.

        Raises:
            ValueError: a 2D body on a frame whose initial state is not planar.
        """
        super().bind(gdim)
        if gdim == 2:
            ok = (abs(self.R0[2, 2] - 1.0) < 1e-10 and abs(self.r0[2]) == 0.0
                  and abs(self.v0[2]) == 0.0 and np.abs(self.w0[:2]).max() == 0.0)
            if not ok:
                raise ValueError(f"frame {self.name!r} carries 2D bodies: its orientation must "
                                 "be a rotation about z and its position, velocity and angular "
                                 "velocity planar (z-components of position and velocity, x-y "
                                 "components of the angular velocity zero)")
            self.n_coordinates, self.n_speeds, self.n_translations = 3, 3, 2
        else:
            self.n_coordinates, self.n_speeds, self.n_translations = 7, 6, 3
        self.n_aux = self.n_translations

    def initial(self) -> Tuple[np.ndarray, np.ndarray]:
        """The initial coordinates and speeds.

        Returns:
            ``(z0, w0)``: in 3D position and unit quaternion, velocity and local angular velocity;
            in 2D (x, y, angle) and their rates.
        """
        R = self.R0
        if self.gdim == 2:
            th = math.atan2(R[1, 0], R[0, 0])
            return (np.array([self.r0[0], self.r0[1], th]),
                    np.array([self.v0[0], self.v0[1], self.w0[2]]))
        return (np.concatenate([self.r0, rotation_to_quaternion(R)]),
                np.concatenate([self.v0, R.T @ self.w0]))

    def _rotation(self, z: np.ndarray) -> np.ndarray:
        """R of the coordinates ``z``."""
        if self.gdim == 2:
            return rotation_about((0.0, 0.0, 1.0), float(z[2]), unit=True)
        return quaternion_to_rotation(z[3:])

    def normalize(self, z: np.ndarray) -> np.ndarray:
        """The coordinates with the quaternion brought back to unit length (3D; as given in 2D).

        Args:
            z: the frame's coordinates.

        Returns:
            The normalized coordinates.
        """
        if self.gdim == 3:
            z = np.array(z, dtype=float)
            z[3:] /= np.linalg.norm(z[3:])
        return z

    def rates(self, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The coordinates' rates z' from the speeds (the kinematic relation).

        Args:
            z: the frame's coordinates.
            w: the frame's speeds.

        Returns:
            z'.
        """
        if self.gdim == 2:
            return np.array([w[0], w[1], w[2]])
        # q' = q (0, omega) / 2: linear in q, so |q| is kept by the exact flow
        return np.concatenate([w[:3], 0.5 * _quat_G(z[3:]).T @ w[3:]])

    def rates_jacobian(self, z: np.ndarray, w: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The derivatives of :meth:`rates`.

        Args:
            z: the frame's coordinates.
            w: the frame's speeds.

        Returns:
            ``(dz'/dz, dz'/dw)``.
        """
        if self.gdim == 2:
            return np.zeros((3, 3)), np.eye(3)
        Jz = np.zeros((7, 7))
        o = w[3:]
        Jz[3:, 3:] = 0.5 * np.array([[0, -o[0], -o[1], -o[2]], [o[0], 0, o[2], -o[1]],
                                     [o[1], -o[2], 0, o[0]], [o[2], o[1], -o[0], 0]])
        Jw = np.zeros((7, 6))
        Jw[:3, :3] = np.eye(3)
        Jw[3:, 3:] = 0.5 * _quat_G(z[3:]).T
        return Jz, Jw

    def describe(self, z: np.ndarray, w: np.ndarray) -> Mapping[str, float | np.ndarray]:
        """The frame's named outputs (read-only mapping).

        Args:
            z: the frame's coordinates.
            w: the frame's speeds.

        Returns:
            ``R``, ``r_O``, ``omega`` and ``v_O`` (local components), and ``angle`` in 2D.
        """
        many = self.describe_many(np.asarray(z, dtype=float)[None],
                                  np.asarray(w, dtype=float)[None])
        return FrozenMapping({k: float(v[0]) if k == "angle" else v[0]
                              for k, v in many.items()})

    def describe_many(self, Z: np.ndarray, W: np.ndarray) -> Dict[str, np.ndarray]:
        """:meth:`describe` at many states at once, as arrays (a run's history).

        Args:
            Z: the frame's coordinates (rows).
            W: its speeds (rows).

        Returns:
            ``R`` (S, 3, 3), ``r_O``, ``omega``, ``v_O`` (S, 3), and ``angle`` (S,) in 2D.
        """
        S = Z.shape[0]
        if self.gdim == 2:   # Rodrigues' formula about z (rotation_about's)
            K = skew((0.0, 0.0, 1.0))
            ang = Z[:, 2]
            R = (np.eye(3) + np.sin(ang)[:, None, None] * K
                 + (1.0 - np.cos(ang))[:, None, None] * (K @ K))
            v = np.zeros((S, 3))
            v[:, :2] = W[:, :2]
            r = np.zeros((S, 3))
            r[:, :2] = Z[:, :2]
            om = np.zeros((S, 3))
            om[:, 2] = W[:, 2]
            return {"R": R, "r_O": r, "omega": om, "v_O": np.einsum("sji,sj->si", R, v),
                    "angle": Z[:, 2].copy()}
        q = Z[:, 3:] / np.linalg.norm(Z[:, 3:], axis=1)[:, None]   # quaternion_to_rotation's
        w_, x, y, z_ = q.T
        R = np.array([
            [1 - 2 * (y * y + z_ * z_), 2 * (x * y - w_ * z_), 2 * (x * z_ + w_ * y)],
            [2 * (x * y + w_ * z_), 1 - 2 * (x * x + z_ * z_), 2 * (y * z_ - w_ * x)],
            [2 * (x * z_ - w_ * y), 2 * (y * z_ + w_ * x), 1 - 2 * (x * x + y * y)]]
        ).transpose(2, 0, 1)
        return {"R": R, "r_O": Z[:, :3].copy(), "omega": W[:, 3:].copy(),
                "v_O": np.einsum("sji,sj->si", R, W[:, :3])}

    def jet(self, t: float, z: np.ndarray, w: np.ndarray, wd: np.ndarray) -> FrameJet:
        """The state at (t, z, w, w') with its derivatives in the frame's speeds.

        Args:
            t: time (s).
            z: the frame's coordinates.
            w: the frame's speeds.
            wd: the speeds' rates.

        Returns:
            The :class:`FrameJet`.
        """
        g = self.gdim
        R = self._rotation(z)
        nt = self.n_translations
        vG = np.zeros(3)
        vG[:nt] = w[:nt]
        aG = np.zeros(3)
        aG[:nt] = wd[:nt]
        if g == 2:
            om, al = np.array([0.0, 0.0, w[2]]), np.array([0.0, 0.0, wd[2]])
            r_O = np.array([z[0], z[1], 0.0])
            k, nz = 3, 3
            Om = np.zeros((3, 3))
            Om[2, 2] = 1.0
            dphi = np.zeros((3, 3))
            dphi[2, 2] = 1.0
            drO = np.zeros((3, 3))
            drO[0, 0] = drO[1, 1] = 1.0
        else:
            om, al = np.array(w[3:], dtype=float), np.array(wd[3:], dtype=float)
            r_O = np.array(z[:3], dtype=float)
            k, nz = 6, 7
            Om = np.hstack([np.zeros((3, 3)), np.eye(3)])
            nq = np.linalg.norm(z[3:])
            dphi = np.hstack([np.zeros((3, 3)), 2.0 * _quat_G(z[3:] / nq) / nq])
            drO = np.hstack([np.eye(3), np.zeros((3, 4))])
        v_O, a_O = R.T @ vG, R.T @ aG
        st = FrameState(t=t, R=R, r_O=r_O, omega=om, alpha=al, v_O=v_O, a_O=a_O)
        T = np.zeros((3, k))
        T[:, :nt] = R.T[:, :nt]          # d v_O(local)/d v_O(global) = R^T
        dw = {"omega": Om, "alpha": np.zeros((3, k)), "v_O": T, "a_O": np.zeros((3, k))}
        # d(R^T y)/dz = skew(R^T y) d phi/dz for the global y = v_O, a_O
        dz = {"omega": np.zeros((3, nz)), "alpha": np.zeros((3, nz)),
              "v_O": skew(v_O) @ dphi, "a_O": skew(a_O) @ dphi}
        return FrameJet(state=st, Om=Om, T=T, dw=dw, dz=dz, dphi_dz=dphi, drO_dz=drO)
