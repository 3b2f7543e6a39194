"""The builders of a model's holonomic constraints and velocity rows: the bodies checked, the
constraint made (:mod:`~dolfinx_mbs.constraints.base`, :mod:`~dolfinx_mbs.constraints.joints`,
:mod:`~dolfinx_mbs.constraints.rows`).

``Model.clamp``, ``.prescribe``, ``.tie``, ``.pin``, ``.slider``, ``.rigid``, ``.constrain`` and
``.constrain_velocity`` forward here and keep what is returned (:func:`unique_name` first). A
builder changes nothing of the model: a failed call leaves it as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Collection, Mapping, Protocol, Sequence, Tuple

from dolfinx_mbs.constraints import base as cons
from dolfinx_mbs.constraints import joints
from dolfinx_mbs.constraints.base import Clamp, Constraint
from dolfinx_mbs.constraints.rows import LinearRows, VelocityRows

if TYPE_CHECKING:
    from dolfinx.mesh import MeshTags
    from numpy.typing import ArrayLike

    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.bodies.body import Body

__all__ = ["ConstraintModel", "check_body", "elastic_space", "unique_name", "clamp",
           "prescribe", "tie", "pin", "slider", "rigid", "constrain", "velocity_rows"]

Facets = Tuple["MeshTags", int]
Rows = Sequence[Mapping[int, "float | Callable[[float], float]"]]


class ConstraintModel(Protocol):
    """What the builders read of a model (a later part: not named here)."""

    @property
    def bodies(self) -> Sequence[Any]:
        """The model's elastic bodies."""

    @property
    def space(self) -> FullSpace | None:
        """The numbering of their dofs (None: rigid bodies only)."""


def check_body(model: ConstraintModel, body: Body) -> None:
    """Refuse a body that is not one of the model's elastic bodies.

    Args:
        model: the model.
        body: the body.

    Raises:
        ValueError: ``body`` is not part of the model.
    """
    if not any(body is b for b in model.bodies):
        raise ValueError(f"body {getattr(body, 'name', body)!r} is not part of this model")


def elastic_space(model: ConstraintModel) -> FullSpace:
    """The model's dof numbering.

    Args:
        model: the model.

    Returns:
        Its :class:`~dolfinx_mbs.assembly.space.FullSpace`.

    Raises:
        ValueError: a model of rigid bodies alone.
    """
    if model.space is None:
        raise ValueError("the model has no elastic body (its rigid bodies' frames alone): "
                         "this needs the elastic bodies' dofs")
    return model.space


def unique_name(name: str, names: Collection[str]) -> str:
    """``name``, or ``name#2``, ``name#3`` ... when a kept constraint has it (reactions and
    reports are keyed by the names).

    Args:
        name: the new constraint's name.
        names: the names of the constraints kept.

    Returns:
        A name no kept constraint has.
    """
    if name not in names:
        return name
    i = 2
    while f"{name}#{i}" in names:
        i += 1
    return f"{name}#{i}"


def clamp(model: ConstraintModel, body: Body, where: Callable | None = None,
          components: Sequence[int] | None = None, facets: Facets | None = None,
          name: str | None = None) -> Clamp:
    """A clamp (``Model.clamp``).

    Args:
        model: the model.
        body: the elastic body.
        where: ``where(x)`` true at the clamped nodes.
        components: the components fixed (default all).
        facets: ``(meshtags, tag)`` of the clamped facets instead.
        name: the constraint's name.

    Returns:
        The clamp.
    """
    check_body(model, body)
    return Clamp(body, where=where, facets=facets, components=components, name=name)


def prescribe(model: ConstraintModel, body: Body, value: ArrayLike | Callable[[float], ArrayLike],
              where: Callable | None = None, facets: Facets | None = None,
              components: Sequence[int] | None = None, time_scale: float = 1.0,
              name: str | None = None) -> cons.Prescribed:
    """A prescribed displacement (``Model.prescribe``).

    Args:
        model: the model.
        body: the elastic body.
        value: g: a gdim-vector or ``t -> vector`` (m).
        where: ``where(x)`` true at the nodes prescribed.
        facets: ``(meshtags, tag)`` of their facets instead.
        components: the components prescribed (default all).
        time_scale: the shortest time over which g changes (s).
        name: the constraint's name.

    Returns:
        The constraint.
    """
    check_body(model, body)
    return cons.Prescribed(body, where=where, facets=facets, components=components,
                           value=value, time_scale=time_scale, name=name)


def tie(model: ConstraintModel, body_a: Body, body_b: Body, where: Callable | None = None,
        tol: float = 1e-8, name: str | None = None,
        facets: Tuple[Facets, Facets] | None = None,
        where_b: Callable | None = None, same_motion: bool = False) -> joints.Joint:
    """A tie of two bodies' interface nodes (``Model.tie``,
    :func:`dolfinx_mbs.constraints.joints.tie`).

    Args:
        model: the model.
        body_a: the first body.
        body_b: the second body (not ``body_a``).
        where: ``where(x)`` true at the interface nodes (local coordinates).
        tol: how far apart two tied nodes may lie (m).
        name: the constraint's name.
        facets: ``((tags_a, tag_a), (tags_b, tag_b))`` instead of ``where``.
        where_b: ``where`` on ``body_b``'s coordinates, where they differ.
        same_motion: the bodies' frames share one rigid motion (constant rows).

    Returns:
        The joint.

    Raises:
        ValueError: the same body twice.
    """
    check_body(model, body_a)
    check_body(model, body_b)
    if body_a is body_b:
        raise ValueError("tie: body_a and body_b must differ")
    return joints.tie(elastic_space(model), body_a, body_b, where, tol=tol, name=name,
                      facets=facets, where_b=where_b, same_motion=same_motion)


def pin(model: ConstraintModel, body_a: Body | None, body_b: Body, point: Sequence[float],
        tol: float = 1e-8, name: str | None = None) -> joints.Joint:
    """A pin between two bodies' nodes, or a node and the ground (``Model.pin``).

    Args:
        model: the model.
        body_a: the first body, or None for the ground.
        body_b: the second body.
        point: the global position at t = 0 (m).
        tol: how far from ``point`` the nodes may lie (m).
        name: the constraint's name.

    Returns:
        The joint.

    Raises:
        ValueError: the same body twice.
    """
    if body_a is not None:
        check_body(model, body_a)
    check_body(model, body_b)
    if body_a is body_b:
        raise ValueError("pin: body_a and body_b must differ")
    return joints.pin(elastic_space(model), body_a, body_b, point, tol=tol, name=name)


def slider(model: ConstraintModel, body: Body, point: Sequence[float], axis: Sequence[float],
           tol: float = 1e-8, name: str | None = None) -> joints.Slider:
    """A node on a fixed global line (``Model.slider``).

    Args:
        model: the model.
        body: the elastic body.
        point: the node's global position at t = 0 (m).
        axis: the line's direction (global).
        tol: how far from ``point`` the node may lie (m).
        name: the constraint's name.

    Returns:
        The slider.
    """
    check_body(model, body)
    return joints.Slider(elastic_space(model), body, point, axis, tol=tol, name=name)


def rigid(model: ConstraintModel, body: Body, where: Callable | None = None,
          facets: Facets | None = None, name: str | None = None) -> joints.RigidRegion:
    """A rigid region (``Model.rigid``).

    Args:
        model: the model.
        body: the elastic body.
        where: ``where(x)`` true at the region's nodes.
        facets: ``(meshtags, tag)`` of the region's facets instead.
        name: the constraint's name.

    Returns:
        The rigid region.
    """
    check_body(model, body)
    return joints.RigidRegion(elastic_space(model), body, where=where, facets=facets, name=name)


def constrain(model: ConstraintModel, rows: Rows | Any,
              rhs: ArrayLike | Callable[[float], ArrayLike] | None = None,
              body: Body | None = None, time_scale: float = 1.0,
              name: str | None = None) -> Constraint:
    """General rows, a DOLFINx ``DirichletBC`` or a ready constraint (``Model.constrain``).

    Args:
        model: the model.
        rows: ``{full_index: coefficient}`` dicts; or a DirichletBC; or a Constraint.
        rhs: c: None (zeros), numbers, or ``t -> numbers``.
        body: the body whose space a DirichletBC is on (one-body model: may be omitted).
        time_scale: the shortest time over which c(t) changes (s).
        name: label for messages.

    Returns:
        The constraint.

    Raises:
        ValueError: a DirichletBC without ``body`` in a model of several bodies.
    """
    if isinstance(rows, Constraint):
        return rows
    if hasattr(rows, "dof_indices"):
        if body is None:
            if len(model.bodies) != 1:
                raise ValueError("constrain: give body= for a DirichletBC in a model with "
                                 "several bodies")
            body = model.bodies[0]
        check_body(model, body)
        return cons.BCConstraint(body, rows, name=name)
    return LinearRows(elastic_space(model), rows, rhs=rhs, time_scale=time_scale, name=name)


def velocity_rows(model: ConstraintModel, rows: Rows,
                  rhs: ArrayLike | Callable[[float], ArrayLike] | None = None,
                  time_scale: float = 1.0, name: str | None = None) -> VelocityRows:
    """Velocity rows ``B(t) Delta' = c(t)`` (``Model.constrain_velocity``).

    Args:
        model: the model.
        rows: ``{full_index: coefficient}`` dicts, a coefficient a number or ``t -> number``.
        rhs: c: None (zeros), numbers, or ``t -> numbers``.
        time_scale: the shortest time over which B(t) or c(t) changes (s).
        name: label for messages.

    Returns:
        The rows.
    """
    return VelocityRows(elastic_space(model), rows, rhs=rhs, time_scale=time_scale, name=name)
