"""Rigid motion of a body's frame, and its state in the frame's own (local) components.

A frame moves with respect to the inertial (global) frame with origin ``r_O(t)`` and rotation
``R(t)`` (columns are the local axes in global components). A body's mesh coordinates X are
local coordinates, so a material point sits at ``r_O + R (X + u)``. The elastic forms need the
frame's motion in local components (``docs/theory.md`` section 1):

    omega~ = R^T dR/dt,   alpha = d omega / dt,   v_O = R^T dr_O/dt,   a_O = R^T d2r_O/dt2

:class:`FrameState` holds those at one time. Units: SI (s, rad, m).

Frames provided:

* :class:`ConstantSpin`: steady rotation about a fixed axis through a fixed point.
* :class:`SpinUp`: the smooth spin-up of Kane, Ryan & Banerjee (1987) about a fixed axis.
* :class:`Planar`: rotation about z by an angle ``theta(t)``, optional moving origin (2D meshes).
* :class:`Prescribed`: any ``R(t)``, ``r_O(t)`` given as callables. Both take the derivatives
  from the user where given (``omega=``, ``alpha=``, ``origin_velocity=``, ...), from a spline's
  own, or else by Richardson-extrapolated finite differences whose step is chosen from the
  motion, with an error estimate that is checked (:mod:`dolfinx_mbs.frames.prescribed`).
* :class:`Sampled`: rotations and origins at sample times, interpolated or smoothed by splines
  (:mod:`dolfinx_mbs.frames.sampled`); :func:`from_markers` fits one to marker trajectories, which
  :func:`read_markers` reads from CSV (:mod:`dolfinx_mbs.frames.markers`).
* :class:`Composed`: a frame moving in another frame (:mod:`dolfinx_mbs.frames.composed`).
* :class:`Stationary`: the ground, through which an axisymmetric rotor spins at a rate that is
  a parameter, and :class:`Ground`, the ground at rest for a body that does not spin (a bearing
  housing; :mod:`dolfinx_mbs.frames.stationary`).

Frames whose motion is computed with the bodies they carry (:mod:`dolfinx_mbs.frames.computed`):

* :class:`Hinge`: one unknown angle about an axis (in the ground or a prescribed frame).
* :class:`Free`: free rigid motion, six unknowns (three on a 2D mesh).

:func:`equal_motion` tells whether two frames describe the same motion (one object or not).
"""

from dolfinx_mbs.frames.axis import ConstantSpin, SpinUp
from dolfinx_mbs.frames.base import (
    Frame,
    FrameConstants,
    FrameState,
    FrameStates,
    equal_motion,
    rotation_about,
    skew,
)
from dolfinx_mbs.frames.composed import Composed
from dolfinx_mbs.frames.computed import ComputedFrame, FrameJet, Free, Hinge
from dolfinx_mbs.frames.markers import MarkerFrame, from_markers, read_markers
from dolfinx_mbs.frames.prescribed import Planar, Prescribed, differentiate
from dolfinx_mbs.frames.sampled import Sampled
from dolfinx_mbs.frames.stationary import Ground, Stationary, StationaryState, transverse_basis

__all__ = [
    "Composed",
    "ComputedFrame",
    "Free",
    "FrameJet",
    "Hinge",
    "ConstantSpin",
    "Frame",
    "FrameConstants",
    "FrameState",
    "FrameStates",
    "Ground",
    "MarkerFrame",
    "Planar",
    "Prescribed",
    "Sampled",
    "SpinUp",
    "Stationary",
    "StationaryState",
    "differentiate",
    "equal_motion",
    "from_markers",
    "read_markers",
    "rotation_about",
    "skew",
    "transverse_basis",
]
