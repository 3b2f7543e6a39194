"""A run's initial state from the user's input: None, a PETSc Vec (full or reduced layout) or a
DOLFINx Function per body, as a reduced vector."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from dolfinx import fem
from petsc4py import PETSc

from dolfinx_mbs import checks, compat
from dolfinx_mbs.systems import records

if TYPE_CHECKING:
    from dolfinx_mbs.bodies.body import Body

log = logging.getLogger(__name__)

__all__ = ["Coordinates", "reduced_initial", "on_body_space"]


class Coordinates(records.Coordinates, Protocol):
    """What the initial state and the motion's range read of a system: its coordinates
    (:class:`~dolfinx_mbs.systems.records.Coordinates`) and the bodies they belong to (the
    typed systems with Maggi's coordinates and the coupled system satisfy it)."""

    @property
    def comm(self) -> Any:
        """The system's communicator."""

    @property
    def space(self) -> Any:
        """The bodies' full space (:class:`~dolfinx_mbs.assembly.space.FullSpace`)."""

    @property
    def bodies(self) -> Sequence[Any]:
        """The elastic bodies, in the full space's order."""


def reduced_initial(system: Coordinates, x: Any, name: str) -> PETSc.Vec:
    """A reduced vector of ``system`` from the user's initial value.

    Args:
        system: the run's typed system.
        x: None (zero), a PETSc Vec in full or reduced layout (size and distribution checked
            on every rank), or a Function per body (a Function on another space of the body's
            mesh is interpolated into the body's space, and the log says so).
        name: the argument, for the errors.

    Returns:
        A new reduced vector.

    Raises:
        ValueError: ``x`` fits neither layout, is distributed otherwise than the model's
            vectors, or gives another number of Functions than bodies.
    """
    red = system
    q = red.create_reduced_vec()
    q.set(0.0)
    if x is None:
        return q
    space = red.space
    if isinstance(x, PETSc.Vec):
        full = space.create_vec()
        sizes = {"reduced": q.getSizes(), "full": full.getSizes()}
        full.destroy()
        n = x.getSize()
        layout = [k for k, (loc, glob) in sizes.items() if glob == n]
        msg = None
        if not layout:
            msg = (f"{name}: a Vec of {n} entries fits neither layout (reduced: "
                   f"{sizes['reduced'][1]}, full: {sizes['full'][1]})")
        elif x.getLocalSize() != sizes[layout[0]][0]:
            msg = (f"{name}: a Vec in the {layout[0]} layout must be distributed as the "
                   f"model's ({layout[0]} vector of the system): this rank owns "
                   f"{x.getLocalSize()} entries, not {sizes[layout[0]][0]}")
        checks.raise_everywhere(red.comm, msg)
        if layout[0] == "reduced":
            x.copy(q)
        else:
            red.restrict(x, q)
        return q
    funcs = list(x) if isinstance(x, (list, tuple)) else [x]
    bodies = red.bodies
    if len(funcs) != len(bodies):
        raise ValueError(f"{name}: give one Function per body ({len(bodies)}), got "
                         f"{len(funcs)}")
    vecs = [compat.petsc_vec(on_body_space(f, b, name)) for f, b in zip(funcs, bodies)]
    full = space.gather(vecs, space.create_vec())
    red.restrict(full, q)
    return q


def on_body_space(f: Any, body: Body, name: str) -> fem.Function:
    """``f`` as a Function of ``body``'s space.

    Args:
        f: a Function of the body's space, or of another space of the same mesh
            (interpolated).
        body: the body.
        name: the argument, for the errors.

    Returns:
        ``f`` itself, or a new Function of ``body.V``.

    Raises:
        ValueError: ``f`` is not a Function, is on another mesh or has another value shape.
    """
    if not isinstance(f, fem.Function):
        raise ValueError(f"{name}: expected None, a PETSc Vec (full or reduced layout) or "
                         f"a dolfinx Function per body, got {type(f).__name__}")
    V = f.function_space
    if compat.same_space(V, body.V):
        return f
    if not compat.same_mesh(V, body.V):
        raise ValueError(f"{name}: the Function for body {body.name!r} is on another mesh; "
                         "interpolate it onto the body's space (body.V) first")
    if compat.value_shape(V) != compat.value_shape(body.V):
        raise ValueError(f"{name}: the Function for body {body.name!r} has value shape "
                         f"{compat.value_shape(V)}, the body's space "
                         f"{compat.value_shape(body.V)}")
    g = fem.Function(body.V)
    g.interpolate(f)
    log.info("%s: interpolated from %s into the space of body %r", name,
             V.ufl_element(), body.name)
    return g
