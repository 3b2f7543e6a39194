"""A frame moving in another frame: a blade pitching on a spinning hub, a part on a vehicle.

Import :class:`Composed` from :mod:`dolfinx_mbs.frames`.
"""

from __future__ import annotations

from typing import Hashable

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.base import AT_REST, Frame, FrameState

__all__ = ["Composed"]


class Composed(Frame):
    """The frame ``child`` whose motion is given relative to the frame ``parent``.

    The child's rotation R_c and origin r_c are read in the parent's axes (the child's state
    is computed as if the parent were fixed), so the composed frame has

        R = R_p R_c,        r_O = r_p + R_p r_c,

    and, in the composed frame's local components (``docs/theory.md`` section 1; p: parent state,
    c: child state, each in its own local components, w_p' = R_c^T omega_p)::

        omega = w_p' + omega_c
        alpha = R_c^T alpha_p + alpha_c + w_p' x omega_c
        v_O   = R_c^T (v_p + omega_p x r_c) + v_c
        a_O   = R_c^T (a_p + alpha_p x r_c + omega_p x (omega_p x r_c)
                       + 2 omega_p x (R_c v_c)) + a_c

    exactly (no differentiation). Composed frames nest: a child may itself be
    ``Composed``. ``state(t)`` is defined where both frames' states are.

    Args:
        parent: the frame carrying the child (any :class:`Frame`).
        child: the child's motion relative to the parent (any :class:`Frame`).
    """

    time_invariant = False
    #: a rotating parent turns any offset or motion of the child's origin into an acceleration
    origin_accelerates = True

    def __init__(self, parent: Frame, child: Frame) -> None:
        for name, f in (("parent", parent), ("child", child)):
            if not isinstance(f, Frame):
                raise TypeError(f"{name} must be a dolfinx_mbs.frames.Frame, got {f!r}")
        self.parent, self.child = parent, child
        self.calls_user_code = parent.calls_user_code or child.calls_user_code

    def motion_key(self) -> Hashable:
        """Equal for parts of equal motions (see ``frames.equal_motion``).

        A part at rest leaves the other's motion.
        """
        parent, child = self.parent.motion_key(), self.child.motion_key()
        if child == AT_REST:
            return parent
        if parent == AT_REST:
            return child
        return ("Composed", parent, child)

    def state(self, t: float) -> FrameState:
        """The composed frame's state at ``t`` (s).

        Args:
            t: time (s).

        Returns:
            The state.
        """
        t = checks.real(t, "t")
        p = self.parent.state(t)
        c = self.child.state(t)
        Rc_T = c.R.T
        w_p = Rc_T @ p.omega
        v_rel = c.R @ c.v_O                                       # in the parent's axes
        a_par = (p.a_O + np.cross(p.alpha, c.r_O)
                 + np.cross(p.omega, np.cross(p.omega, c.r_O)) + 2.0 * np.cross(p.omega, v_rel))
        return FrameState(
            t=t,
            R=p.R @ c.R,
            r_O=p.r_O + p.R @ c.r_O,
            omega=w_p + c.omega,
            alpha=Rc_T @ p.alpha + c.alpha + np.cross(w_p, c.omega),
            v_O=Rc_T @ (p.v_O + np.cross(p.omega, c.r_O)) + c.v_O,
            a_O=Rc_T @ a_par + c.a_O,
        )

    def __repr__(self) -> str:
        return f"Composed(parent={self.parent!r}, child={self.child!r})"
