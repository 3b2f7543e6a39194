"""A model's run: the parts of :meth:`dolfinx_mbs.Model.integrate`'s keyword short form made one
:class:`~dolfinx_mbs.integrate.config.RunConfig`, and the path that runs it chosen: the coupled
equations (:func:`~dolfinx_mbs.integrate.coupled.integrate_coupled`) for a model with computed
frames or springs, else the system of the formulation
(:func:`~dolfinx_mbs.integrate.run.integrate`). ``Model.integrate`` forwards here and calls
the path itself (a deprecated callback's warning then names the user's line).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence, Tuple

from dolfinx_mbs.integrate.config import (
    Checkpoints,
    Initial,
    Observers,
    Output,
    RunConfig,
    Scheme,
    Solver,
    given,
)
from dolfinx_mbs.systems.drives import Drives

if TYPE_CHECKING:
    import numpy as np

    from dolfinx_mbs.static.derived import DerivedState
    from dolfinx_mbs.systems.coupled import CoupledSystem
    from dolfinx_mbs.systems.multipliers import SaddlePoint
    from dolfinx_mbs.systems.second_order import SecondOrderSystem
    from dolfinx_mbs.systems.velocity import VelocitySystem

__all__ = ["RunModel", "config_of", "coupled", "prescribed"]


class RunModel(Protocol):
    """What a run reads of a model (a later part: not named here)."""

    @property
    def frames(self) -> Sequence[Any]:
        """The computed frames."""

    @property
    def springs(self) -> Sequence[Any]:
        """The springs."""

    @property
    def bodies(self) -> Sequence[Any]:
        """The elastic bodies."""

    @property
    def rigid_bodies(self) -> Sequence[Any]:
        """The rigid bodies."""

    @property
    def gravity(self) -> np.ndarray | None:
        """The gravity (m/s^2), or None."""

    @property
    def derived(self) -> DerivedState:
        """What is made from the bodies and constraints."""

    def coupled_system(self) -> CoupledSystem:
        """The coupled system of computed frames and springs."""

    def system(self, formulation: str = ..., constraints: str = ...
               ) -> SecondOrderSystem | VelocitySystem | SaddlePoint:
        """The typed system of a formulation."""


def config_of(t_end: float | RunConfig, dt: float | None, scheme: Scheme, initial: Initial,
              output: Output, checkpoints: Checkpoints, solver: Solver,
              observers: Observers) -> RunConfig:
    """The run's configuration from the keyword short form's parts, or ``t_end`` itself when
    it is a whole :class:`~dolfinx_mbs.integrate.config.RunConfig` (then no part may differ
    from its defaults).

    Args:
        t_end: the final time (s), or a whole RunConfig.
        dt: the step (s), None with a RunConfig.
        scheme: the scheme's part.
        initial: the initial state's part.
        output: the output's part.
        checkpoints: the checkpoints' part.
        solver: the solver options' part.
        observers: the observers' part.

    Returns:
        The run's configuration.

    Raises:
        ValueError: a RunConfig with other arguments.
        TypeError: no ``dt``.
    """
    parts = (scheme, initial, output, checkpoints, solver, observers)
    if isinstance(t_end, RunConfig):
        mixed = ["dt"] * (dt is not None) + [n for part in parts for n in given(part)]
        if mixed:
            raise ValueError("integrate: a RunConfig holds the whole run; got other "
                             f"arguments with it ({', '.join(mixed)})")
        return t_end
    if dt is None:
        raise TypeError("integrate: dt (the step, s) is missing")
    return RunConfig(t_end=t_end, dt=dt, scheme=scheme, initial=initial, output=output,
                     checkpoints=checkpoints, solver=solver, observers=observers)


def coupled(model: RunModel, config: RunConfig) -> CoupledSystem | None:
    """The coupled system a run of ``model`` takes (computed frames or springs), else None.

    Args:
        model: the model.
        config: the run's configuration.

    Returns:
        The :class:`~dolfinx_mbs.systems.coupled.CoupledSystem` for
        :func:`~dolfinx_mbs.integrate.coupled.integrate_coupled`, or None: the prescribed
        frames' path (:func:`prescribed`).

    Raises:
        ValueError: fluid-film bearings or ``constraints="multipliers"`` on the coupled path.
    """
    if not (model.frames or model.springs):
        return None
    if any(getattr(a, "journal", None) is not None for b in model.bodies
           for a in getattr(b, "attachments", ())):
        raise ValueError("integrate: fluid-film bearings (bearing(journal=)) run on "
                         "the prescribed frames' path; a model with computed frames "
                         "or springs does not take them yet")
    if config.scheme.constraints != "maggi":
        raise ValueError(f"constraints must be 'maggi' for a model with computed frames "
                         f"or springs (the coupled equations), got "
                         f"{config.scheme.constraints!r}")
    return model.coupled_system()


def prescribed(model: RunModel, config: RunConfig
               ) -> Tuple[SecondOrderSystem | VelocitySystem | SaddlePoint, Drives | None]:
    """The system a run of ``model`` on the prescribed frames' path takes, and the drives
    it records (``drives=True``).

    Args:
        model: the model.
        config: the run's configuration.

    Returns:
        The system of the formulation and the :class:`~dolfinx_mbs.systems.drives.Drives`
        (or None), for :func:`~dolfinx_mbs.integrate.run.integrate`.
    """
    system = model.system(config.scheme.formulation or "second-order",
                          config.scheme.constraints)
    driven = None
    if config.observers.drives:
        driven = Drives(model.derived.second_order(), model.rigid_bodies, model.gravity)
    return system, driven
