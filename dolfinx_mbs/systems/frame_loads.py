"""The builders of the loads on computed frames (:class:`~dolfinx_mbs.systems.coupled.
FrameLoad`): ``Model.apply_torque`` and ``Model.apply_force`` forward here and keep what is
returned. A builder changes nothing of the model: a failed call leaves it as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.frames.computed import ComputedFrame
from dolfinx_mbs.systems.coupled import FrameLoad

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dolfinx_mbs.systems.coupled import FrameView

__all__ = ["check_frame", "torque", "force"]


def check_frame(frames: Sequence[ComputedFrame], frame: object) -> ComputedFrame:
    """``frame``, when it is one of ``frames``.

    Args:
        frames: the model's computed frames.
        frame: the frame given.

    Returns:
        The frame.

    Raises:
        ValueError: not a computed frame of the model.
    """
    if not isinstance(frame, ComputedFrame) or all(frame is not f for f in frames):
        raise ValueError(f"frame must be a computed frame of this model (a Hinge or Free "
                         f"carrying one of its bodies), got {frame!r}")
    return frame


def torque(frames: Sequence[ComputedFrame], frame: ComputedFrame,
           fn: Callable | ArrayLike, local: bool = True, name: str | None = None) -> FrameLoad:
    """A torque ``fn(t, s)`` (or a constant) on a computed frame (``Model.apply_torque``).

    Args:
        frames: the model's computed frames.
        frame: one of them.
        fn: ``fn(t, s)``, or a constant.
        local: the vector's components are the frame's (else global).
        name: the load's name.

    Returns:
        The load.
    """
    check_frame(frames, frame)
    if not callable(fn):
        c = np.asarray(fn, dtype=float)
        fn = (lambda t, s, c=c: c)  # noqa: E731
    return FrameLoad(frame=frame, fn=fn, local=local,
                     name=name or f"torque on {frame.name}")


def force(frames: Sequence[ComputedFrame], frame: ComputedFrame, fn: Callable,
          point: Sequence[float] = (0.0, 0.0, 0.0), local: bool = True,
          name: str | None = None) -> FrameLoad:
    """A force ``fn(t, s)`` (or a constant) on a computed frame at ``point``
    (``Model.apply_force``).

    Args:
        frames: the model's computed frames.
        frame: one of them.
        fn: ``fn(t, s)``, a 3-vector, or a constant.
        point: the point of application (frame coordinates, m).
        local: the force's components are the frame's (else global).
        name: the load's name.

    Returns:
        The load (a wrench: the force and no torque about the point).
    """
    check_frame(frames, frame)
    f = fn if callable(fn) else (lambda t, s, c=np.asarray(fn, float): c)

    def wrench(t: float, s: FrameView, f: Callable = f) -> tuple:
        return f(t, s), np.zeros(3)
    return FrameLoad(frame=frame, fn=wrench, local=local, wrench=True,
                     point=checks.point3(point, "point"), name=name or f"force on {frame.name}")
