"""Rigid bodies: mass, centre of mass and inertia tensor, carried by a frame.

    disk = RigidBody(mass=2.0, inertia=np.diag([0.01, 0.01, 0.02]), frame=hub,
                     centre=(0.0, 0.0, 0.0), name="disk")

A rigid body has no unknowns of its own: it moves with its frame (docs/theory.md section 8, the
case without elastic unknowns: first moment m c and inertia J constant). On a computed frame
it adds to the frame's rows of the equations of motion, its generalized inertia force being

    F = m (a_O + alpha x c + omega x (omega x c)),     M_O = c x F + J alpha + omega x J omega

(local components, J about the centre in the frame's axes), tested with the frame's partial
velocities: T_j . F + Om_j . M_O; gravity acts as m R^T g at the centre. On a prescribed frame
it contributes to the force and torque that drive the frame (inverse dynamics). SI units.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.bodies.bundles import ForceDerivatives
from dolfinx_mbs.frames.base import Frame, FrameState, cross3, skew

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["RigidBody", "rigid_inertia_forces"]


def _inertia(value: ArrayLike, name: str) -> np.ndarray:
    """A symmetric positive definite 3x3 inertia tensor whose principal moments satisfy the
    triangle inequality (a scalar: the moment about z, for planar bodies)."""
    try:
        J = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 3x3 symmetric positive definite matrix (or a "
                         f"positive number for a planar body), got {value!r}") from None
    if J.ndim == 0:
        j = checks.positive(float(J), name)
        # a planar body turns about z only; the in-plane moments are irrelevant, kept
        # consistent with a thin plate (J_z = J_x + J_y)
        return np.diag([0.5 * j, 0.5 * j, j])
    if J.shape != (3, 3) or not np.all(np.isfinite(J)):
        raise ValueError(f"{name} must be a finite 3x3 matrix, got shape {J.shape}")
    scale = float(np.abs(J).max())
    if scale == 0.0 or np.abs(J - J.T).max() > 1e-12 * scale:
        raise ValueError(f"{name} must be symmetric and nonzero, got {J.tolist()}")
    lam = np.linalg.eigvalsh(J)
    if lam[0] <= 0.0:
        raise ValueError(f"{name} must be positive definite; its principal moments are "
                         f"{lam.tolist()}")
    if lam[0] + lam[1] < lam[2] * (1.0 - 1e-12):
        raise ValueError(f"{name}: the principal moments {lam.tolist()} break the triangle "
                         "inequality (I1 + I2 >= I3): no mass distribution has them")
    return J


class RigidBody:
    """A rigid body moving with ``frame``.

    Args:
        mass: its mass (kg, > 0).
        inertia: its inertia tensor about the centre of mass in the frame's axes (kg m^2;
            3x3 symmetric positive definite, principal moments satisfying the triangle
            inequality), or the moment about z (a number) for a planar (2D) model.
        frame: the frame carrying it (computed or prescribed).
        centre: the centre of mass in the frame's coordinates (m).
        name: its name (unique among the model's bodies).
    """

    def __init__(self, mass: float, inertia: ArrayLike, frame: Frame,
                 centre: ArrayLike = (0.0, 0.0, 0.0), name: str = "rigid") -> None:
        self.mass = checks.positive(mass, "mass")
        self.inertia = _inertia(inertia, "inertia")
        #: the inertia was given as a number: the moment about z of a planar body (a model
        #: refuses it on a frame that turns about another axis)
        self.planar_inertia = np.ndim(inertia) == 0
        if not isinstance(frame, Frame):
            raise TypeError(f"frame must be a dolfinx_mbs.frames.Frame, got {frame!r}")
        self.frame = frame
        self.centre = checks.point3(centre, "centre")
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"RigidBody(name={self.name!r}, mass={self.mass:g})"

    # -- the rows ---------------------------------------------------------------------------
    def forces(self, state: FrameState, gravity: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """The generalized inertia force minus gravity, as a force F and a moment M_O about
        the frame's origin (local components) at ``state``.

        Args:
            state: the frame state.
            gravity: the gravitational acceleration, global components (None: none).

        Returns:
            ``(F, M_O)``.
        """
        m, c, J = self.mass, self.centre, self.inertia
        w, a = state.omega, state.alpha
        acc = state.a_O + cross3(a, c) + cross3(w, cross3(w, c))
        if gravity is not None:
            acc = acc - state.R.T @ gravity
        F = m * acc
        M = cross3(c, F) + J @ a + cross3(w, J @ w)
        return F, M

    def force_derivatives(self, state: FrameState) -> ForceDerivatives:
        """d(F, M_O)/d(omega, alpha, a_O) (each a (6, 3) array: rows F then M_O) and
        d(F, M_O)/d g_loc (the local gravity, which turns with the frame).

        Args:
            state: the frame state.

        Returns:
            The derivatives, also read by name (``d["omega"]``).
        """
        m, c, J = self.mass, self.centre, self.inertia
        w = state.omega
        C = skew(c)
        dF = {"a_O": m * np.eye(3), "alpha": -m * C,
              "omega": m * (np.outer(w, c) + float(w @ c) * np.eye(3) - 2.0 * np.outer(c, w)),
              "g_loc": -m * np.eye(3)}
        out = {}
        for k, d in dF.items():
            dM = C @ d
            if k == "alpha":
                dM = dM + J
            elif k == "omega":
                dM = dM + skew(w) @ J - skew(J @ w)
            out[k] = np.vstack([d, dM])
        return ForceDerivatives(**out)

    def energy(self, state: FrameState, gravity: np.ndarray | None = None) -> tuple[float, float]:
        """Kinetic energy and gravity's potential energy (J) at ``state``.

        Args:
            state: the frame state.
            gravity: the gravitational acceleration, global components (None: none).

        Returns:
            ``(kinetic, potential)``.
        """
        vc = state.v_O + cross3(state.omega, self.centre)
        T = 0.5 * self.mass * float(vc @ vc) + 0.5 * float(state.omega @ self.inertia
                                                          @ state.omega)
        V = 0.0
        if gravity is not None:
            V = -self.mass * float(gravity @ state.to_global(self.centre))
        return T, V

    def momenta(self, state: FrameState) -> tuple[np.ndarray, np.ndarray]:
        """Linear momentum and angular momentum about the global origin, global components.

        Args:
            state: the frame state.

        Returns:
            ``(linear, angular)``.
        """
        vc = state.v_O + cross3(state.omega, self.centre)
        P = self.mass * (state.R @ vc)
        rc = state.to_global(self.centre)
        H = state.R @ (self.inertia @ state.omega) + cross3(rc, P)
        return P, H


def rigid_inertia_forces(bodies: Sequence[RigidBody], state: FrameState,
                         gravity: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The sum of :meth:`RigidBody.forces` over ``bodies`` at ``state``.

    Args:
        bodies: the rigid bodies.
        state: the frame state.
        gravity: the gravitational acceleration, global components (None: none).

    Returns:
        ``(F, M_O)``.
    """
    F, M = np.zeros(3), np.zeros(3)
    for b in bodies:
        f, m = b.forces(state, gravity)
        F += f
        M += m
    return F, M
