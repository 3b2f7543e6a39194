"""Pictures of bodies with PyVista, off-screen: deformed states, mode shapes, whirl, animations.

Every function is collective (each rank calls it with its part of the Functions); rank 0
gathers the bodies (:mod:`dolfinx_mbs.plot.gather`), renders without a display and writes the
file, and every rank returns its path. An error while rendering is raised on every rank.
Displacements are drawn magnified: ``scale`` is the largest displacement drawn as a fraction
of the bodies' largest extent (bounding-box diagonal), unless a factor is given. Lengths in m.

A displacement in a body frame is drawn in that frame; with the frames' states
(:class:`dolfinx_mbs.frames.FrameState`) it is drawn where the body is in the global frame,
``r_O + R (X + u)``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Sequence, Tuple, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.plot.display import pyvista, quiet_vtk
from dolfinx_mbs.plot.gather import Gathered, gather, on_root

if TYPE_CHECKING:
    from types import ModuleType

    from dolfinx.fem import Function
    from mpi4py import MPI
    from numpy.typing import ArrayLike

    from dolfinx_mbs.frames.base import FrameState
    from dolfinx_mbs.modal.eigen import ModalResult

#: the camera directions ``view`` names (pyvista's ``view_*`` methods)
VIEWS = ("iso", "xy", "xz", "yz")

_COLORMAP = "viridis"


def _functions(u: Function | Sequence[Function]) -> list:
    """A Function or a sequence of Functions (one per body) as a list."""
    if isinstance(u, (list, tuple)):
        return list(u)
    return [u]


def _comm(functions: Sequence[Function]) -> MPI.Comm:
    return functions[0].function_space.mesh.comm


def _check_common(path: str, view: str | Sequence, window_size: Tuple[int, int] | None,
                  comm: MPI.Comm) -> tuple:
    msg = None
    if not isinstance(path, str) or not path.lower().endswith((".png", ".gif")):
        msg = f"path must be a .png or .gif file name, got {path!r}"
    elif not (view in VIEWS or (isinstance(view, (list, tuple)) and len(view) == 3)):
        msg = f"view must be one of {VIEWS} or a camera position (3 points), got {view!r}"
    elif (not isinstance(window_size, (list, tuple)) or len(window_size) != 2
          or not all(isinstance(s, (int, np.integer)) and s > 0 for s in window_size)):
        msg = f"window_size must be two positive integers (pixels), got {window_size!r}"
    checks.raise_everywhere(comm, msg)
    assert window_size is not None  # (checked above)
    return tuple(int(s) for s in window_size)


def _scale(scale: float | Tuple[str, float], amplitude: float, extent: float) -> float:
    """The factor that draws ``amplitude`` as ``scale`` times ``extent``.

    ``scale`` is a number, or a factor given as ``("factor", f)``.
    """
    if isinstance(scale, tuple):
        return float(scale[1])
    return float(scale) * extent / amplitude if amplitude > 0 else 0.0


def _check_scale(scale: float | Tuple[str, float], comm: MPI.Comm) -> None:
    """``scale``: a fraction (number > 0) of the extent, or ``("factor", f)``."""
    msg = None
    if isinstance(scale, tuple):
        if len(scale) != 2 or scale[0] != "factor" or not (
                isinstance(scale[1], (int, float)) and math.isfinite(scale[1])):
            msg = f"scale must be a number > 0 or ('factor', f), got {scale!r}"
    elif not isinstance(scale, (int, float)) or not (scale > 0 and math.isfinite(scale)):
        msg = f"scale must be a number > 0 or ('factor', f), got {scale!r}"
    checks.raise_everywhere(comm, msg)


def _extent(points: Sequence[np.ndarray]) -> float:
    allp = np.concatenate(points)
    return float(np.linalg.norm(allp.max(axis=0) - allp.min(axis=0))) or 1.0


def _place(points: np.ndarray, state: FrameState | None) -> np.ndarray:
    """Body-frame positions in the global frame of ``state`` (None: left in the body frame)."""
    return points if state is None else state.r_O + points @ np.asarray(state.R).T


def _camera(plotter: Any, view: str | Sequence) -> None:
    if isinstance(view, str):
        getattr(plotter, "view_isometric" if view == "iso" else f"view_{view}")()
    else:
        plotter.camera_position = [tuple(map(float, p)) for p in view]


def _grid(pv: ModuleType, g: Gathered, points: np.ndarray) -> Any:
    return pv.UnstructuredGrid(g.cells, g.types, points)


def _render(comm: MPI.Comm, what: str, draw: Callable[[], None]) -> None:
    """Run ``draw()`` on rank 0 with VTK's warnings held back; its error on every rank."""
    with checks.collective(comm, what):
        if comm.rank == 0:
            with quiet_vtk():
                draw()


def _states(states: FrameState | Sequence[FrameState | None] | None, n: int,
            comm: MPI.Comm) -> Sequence[FrameState | None]:
    if states is None:
        return [None] * n
    states = list(states) if isinstance(states, (list, tuple)) else [states]  # type: ignore[list-item]
    checks.raise_everywhere(comm, None if len(states) == n else
                            f"states must hold one frame state per body ({n}), got "
                            f"{len(states)}")
    return states


def deformed(u: Function | Sequence[Function], path: str, *,
             states: FrameState | Sequence[FrameState | None] | None = None,
             scale: float | Tuple[str, float] = 0.1, title: str | None = None,
             label: str = "displacement [m]", view: str | Sequence = "iso",
             window_size: Tuple[int, int] | None = (900, 600), undeformed: bool = True) -> str:
    """Draw bodies deformed by their displacement, colored by its magnitude.

    Args:
        u: a body's displacement (a DOLFINx vector Function, as ``model.solve_static()``
            returns), or a list of them, one per body.
        path: the PNG file to write.
        states: the frame state of each body (a :class:`dolfinx_mbs.frames.FrameState`, or a
            list, one per body) to draw the bodies where they are in the global frame; None
            draws each in its own frame.
        scale: the largest displacement drawn as this fraction of the bodies' extent, or
            ``("factor", f)`` for a magnification f (1: true size).
        title: text at the top.
        label: the color bar's title.
        view: "iso", "xy", "xz", "yz", or a camera position (position, focal point, up).
        window_size: the picture's size in pixels.
        undeformed: also draw the undeformed bodies, in translucent gray.

    Returns:
        ``path``, on every rank.

    Raises:
        ValueError: bad arguments, on every rank.
        ImportError: PyVista is missing.
        RuntimeError: the rendering failed (on every rank).
    """
    funcs = _functions(u)
    comm = _comm(funcs)
    size = _check_common(path, view, window_size, comm)
    _check_scale(scale, comm)
    states = _states(states, len(funcs), comm)
    pv = pyvista()
    gathered = [gather([f]) for f in funcs]

    def draw() -> None:
        bodies = on_root(gathered)
        amp = max(np.linalg.norm(g.values[0], axis=1).max(initial=0.0) for g in bodies)
        s = _scale(scale, amp, _extent([g.points for g in bodies]))
        top = amp if amp > 0 else 1.0
        plotter = pv.Plotter(off_screen=True, window_size=size)
        for g, st in zip(bodies, states):
            if undeformed:
                plotter.add_mesh(_grid(pv, g, _place(g.points, st)), color="#bbbbbb",
                                 opacity=0.3)
            grid = _grid(pv, g, _place(g.points + s * g.values[0], st))
            grid.point_data[label] = np.linalg.norm(g.values[0], axis=1)
            plotter.add_mesh(grid, scalars=label, cmap=_COLORMAP, clim=(0.0, top),
                             scalar_bar_args={"title": label})
        if title:
            plotter.add_text(title, font_size=10)
        _camera(plotter, view)
        plotter.screenshot(path)
        plotter.close()

    _render(comm, f"plot.deformed to {path}", draw)
    return path


def _pairs(shape: Function | tuple | Sequence) -> list:
    """A mode as a list of (re, im-or-None) pairs, one per body.

    The mode is a Function, a (re, im) pair, or a list of those (one per body).
    """
    if isinstance(shape, tuple) and len(shape) == 2 and not isinstance(shape[0], (list, tuple)):
        return [shape]
    if isinstance(shape, (list, tuple)):
        return [s if isinstance(s, tuple) else (s, None) for s in shape]
    return [(shape, None)]


def _owned(f: Function) -> np.ndarray:
    n = f.function_space.dofmap.index_map.size_local * f.function_space.dofmap.index_map_bs
    return np.asarray(f.x.array[:n]).real


def largest_phase(pairs: Sequence[Tuple[Function, Function | None]], comm: MPI.Comm) -> float:
    """The phase phi at which a complex mode's motion ``re cos(phi) - im sin(phi)`` is largest.

    Largest in the sum of squares over every body's owned dofs: the same on every rank.

    Args:
        pairs: (re, im) Functions, one pair per body (im may be None: phase 0).
        comm: the communicator of the bodies.

    Returns:
        phi in (-pi/2, pi/2].
    """
    a = b = c = 0.0
    for re, im in pairs:
        r = _owned(re)
        a += float(r @ r)
        if im is not None:
            i = _owned(im)
            b += float(i @ i)
            c += float(r @ i)
    from mpi4py import MPI

    a, b, c = comm.allreduce(np.array([a, b, c]), op=MPI.SUM)
    # |re cos - im sin|^2 = (a + b)/2 + (a - b)/2 cos 2phi - c sin 2phi
    return 0.5 * math.atan2(-2.0 * c, a - b)


def mode_shapes(shapes: ModalResult | Sequence, path: str, *, labels: Sequence[str] | None = None,
                columns: int = 3, scale: float | Tuple[str, float] = 0.1,
                view: str | Sequence = "iso", window_size: Tuple[int, int] | None = None,
                undeformed: bool = True) -> str:
    """Draw mode shapes side by side, each at the phase of its largest motion.

    Each is colored by the displacement relative to its largest.

    Args:
        shapes: the modes: a :class:`dolfinx_mbs.modal.ModalResult` computed with
            ``shapes=True`` (labelled with their frequencies), or a list with one entry per
            mode, each a Function, a (re, im) pair of Functions, or a list of those, one per
            body.
        path: the PNG file to write.
        labels: a title per mode (default: the frequencies of a ModalResult, else "mode k").
        columns: pictures per row.
        scale: each mode's largest displacement drawn as this fraction of the bodies' extent.
        view: "iso", "xy", "xz", "yz", or a camera position.
        window_size: pixels; default 350 x 300 per picture.
        undeformed: also draw the undeformed bodies, in translucent gray.

    Returns:
        ``path``, on every rank.

    Raises:
        ValueError: bad arguments (no shapes, a ModalResult without them), on every rank.
        ImportError: PyVista is missing.
        RuntimeError: the rendering failed (on every rank).
    """
    result = cast("ModalResult", shapes) if hasattr(shapes, "eigenvalues") else None
    if result is not None:
        if getattr(result, "shapes", None) is None:
            raise ValueError("shapes: this ModalResult holds no shapes; compute it with "
                             "modes(..., shapes=True)")
        assert result.shapes is not None  # (checked above)
        shapes = result.shapes
        if labels is None:
            labels = [f"{abs(f) / (2 * math.pi):.4g} Hz" + (" (unstable)" if un else "")
                      for f, un in zip(result.frequencies, result.unstable)]
    shapes = list(shapes)
    if not shapes:
        raise ValueError("shapes must hold at least one mode, got none")
    modes = [_pairs(s) for s in shapes]
    comm = _comm([modes[0][0][0]])
    if not isinstance(columns, int) or columns < 1:
        checks.raise_everywhere(comm, f"columns must be a positive integer, got {columns!r}")
    cols = min(columns, len(modes))
    rows = -(-len(modes) // cols)
    size = _check_common(path, view, window_size or (350 * cols, 300 * rows), comm)
    _check_scale(scale, comm)
    if labels is not None and len(labels) != len(modes):
        checks.raise_everywhere(comm, f"labels must hold one title per mode ({len(modes)}), "
                                f"got {len(labels)}")
    labels = list(labels) if labels is not None else [f"mode {k}" for k in range(len(modes))]
    pv = pyvista()
    phases = [largest_phase(m, comm) for m in modes]
    gathered = [[gather([re] if im is None else [re, im]) for re, im in m] for m in modes]

    def draw() -> None:
        plotter = pv.Plotter(off_screen=True, shape=(rows, cols), window_size=size,
                             border=False)
        for k, (mode, phi) in enumerate(zip(gathered, phases)):
            plotter.subplot(k // cols, k % cols)
            bodies = on_root(mode)
            motion = [g.values[0] * math.cos(phi) - (g.values[1] * math.sin(phi)
                                                     if len(g.values) > 1 else 0.0)
                      for g in bodies]
            amp = max(np.linalg.norm(m, axis=1).max(initial=0.0) for m in motion) or 1.0
            s = _scale(scale, amp, _extent([g.points for g in bodies]))
            for g, m in zip(bodies, motion):
                if undeformed:
                    plotter.add_mesh(_grid(pv, g, g.points), color="#bbbbbb",
                                     opacity=0.3)
                grid = _grid(pv, g, g.points + s * m)
                grid.point_data["relative |u|"] = np.linalg.norm(m, axis=1) / amp
                plotter.add_mesh(grid, scalars="relative |u|", cmap=_COLORMAP, clim=(0, 1),
                                 show_scalar_bar=False)
            plotter.add_text(labels[k], font_size=9)
            _camera(plotter, view)
        plotter.screenshot(path)
        plotter.close()

    _render(comm, f"plot.mode_shapes to {path}", draw)
    return path


def _axis_stations(points: np.ndarray, axis: np.ndarray, center: np.ndarray,
                   stations: int) -> np.ndarray:
    """Indices of nodes nearest the axis line, about one per station along it."""
    rel = points - center
    along = rel @ axis
    radial = np.linalg.norm(rel - np.outer(along, axis), axis=1)
    near = radial <= radial.min() + 0.02 * (np.ptp(along) + radial.max())
    idx = np.flatnonzero(near)
    bins = np.linspace(along[idx].min(), along[idx].max(), stations + 1)
    chosen = []
    for lo, hi in zip(bins[:-1], bins[1:]):
        inside = idx[(along[idx] >= lo) & (along[idx] <= hi)]
        if inside.size:
            chosen.append(inside[np.argmin(radial[inside])])
    return np.unique(np.array(chosen, dtype=int))


def whirl(shape: Tuple[Function, Function] | Sequence[Tuple[Function, Function]], path: str, *,
          axis: ArrayLike = (0.0, 0.0, 1.0), center: ArrayLike = (0.0, 0.0, 0.0),
          stations: int = 24, scale: float | Tuple[str, float] = 0.1, title: str | None = None,
          view: str | Sequence = "iso", window_size: Tuple[int, int] | None = (900, 600),
          frames: int = 24, fps: int = 12) -> str:
    """Draw a complex mode of a spinning body as the orbits its axis' nodes run through.

    The motion is ``Re((re + i im) e^(i w t)) = re cos(w t) - im sin(w t)``: every node runs
    through an ellipse. A PNG shows the orbits of the nodes nearest the spin axis (one per
    station along it, tubes, with a cone at each orbit's start pointing the way it turns) and
    the body at the phase of its largest motion; a GIF shows the body through one period.

    Args:
        shape: the mode of one body: a (re, im) pair of DOLFINx Functions (an entry of
            ``ModalResult.shapes``, or its one body's pair).
        path: a PNG or GIF file.
        axis: the spin axis (body frame).
        center: a point of the axis.
        stations: how many orbits along the axis (PNG).
        scale: the largest orbit radius drawn as this fraction of the body's extent.
        title: text at the top.
        view: "iso", "xy", "xz", "yz", or a camera position.
        window_size: pixels.
        frames: pictures per period (GIF).
        fps: pictures per second (GIF).

    Returns:
        ``path``, on every rank.

    Raises:
        ValueError: bad arguments, on every rank.
        ImportError: PyVista (or, for a GIF, imageio) is missing.
        RuntimeError: the rendering failed (on every rank).
    """
    pairs = _pairs(shape)
    re, im = pairs[0]
    comm = _comm([re])
    if len(pairs) != 1 or im is None:
        checks.raise_everywhere(comm, "shape must be one body's (re, im) pair of Functions, "
                                f"got {len(pairs)} bodies" if len(pairs) != 1 else
                                "shape must be a (re, im) pair: a real mode does not whirl")
    size = _check_common(path, view, window_size, comm)
    _check_scale(scale, comm)
    axis = checks.unit_axis(axis, "axis")
    center = checks.point3(center, "center")
    for value, name in ((stations, "stations"), (frames, "frames"), (fps, "fps")):
        if not isinstance(value, int) or value < 1:
            checks.raise_everywhere(comm, f"{name} must be a positive integer, got {value!r}")
    pv = pyvista()
    phi0 = largest_phase(pairs, comm)
    gathered = gather([re, im])

    def draw() -> None:
        g, = on_root([gathered])
        r, i = g.values
        amp = float(np.sqrt((r * r).sum(axis=1) + (i * i).sum(axis=1)).max(initial=0.0)) or 1.0
        s = _scale(scale, amp, _extent([g.points]))
        motion = np.linalg.norm(r * math.cos(phi0) - i * math.sin(phi0), axis=1)
        plotter = pv.Plotter(off_screen=True, window_size=size)
        if path.lower().endswith(".gif"):
            grid = _grid(pv, g, g.points + s * (r * math.cos(phi0) - i * math.sin(phi0)))
            grid.point_data["relative |u|"] = motion / amp
            plotter.add_mesh(_grid(pv, g, g.points), color="#bbbbbb", opacity=0.3)
            plotter.add_mesh(grid, scalars="relative |u|", cmap=_COLORMAP, clim=(0, 1),
                             show_scalar_bar=False)
            if title:
                plotter.add_text(title, font_size=10)
            _camera(plotter, view)
            plotter.open_gif(path, fps=fps)
            for phi in phi0 + np.linspace(0.0, 2 * math.pi, frames, endpoint=False):
                u = r * math.cos(phi) - i * math.sin(phi)
                grid.points[:] = g.points + s * u
                grid.point_data["relative |u|"][:] = np.linalg.norm(u, axis=1) / amp
                plotter.write_frame()
        else:
            body = _grid(pv, g, g.points + s * (r * math.cos(phi0) - i * math.sin(phi0)))
            body.point_data["relative |u|"] = motion / amp
            plotter.add_mesh(body, scalars="relative |u|", cmap=_COLORMAP, clim=(0, 1),
                             opacity=0.35, show_scalar_bar=False)
            ring = np.linspace(0.0, 2 * math.pi, 65)
            radius = 0.004 * _extent([g.points])
            for n in _axis_stations(g.points, axis, center, stations):
                if math.hypot(np.linalg.norm(r[n]), np.linalg.norm(i[n])) < 1e-3 * amp:
                    continue  # a node that hardly moves: no orbit to draw
                orbit = (g.points[n] + s * (np.outer(np.cos(ring), r[n])
                                            - np.outer(np.sin(ring), i[n])))
                plotter.add_mesh(pv.lines_from_points(orbit).tube(radius=radius),
                                 color="#1f77b4")
                start, ahead = orbit[0], -i[n] * s  # d/dphi at phi = 0
                if np.linalg.norm(ahead) > 0:
                    plotter.add_mesh(pv.Cone(center=start, direction=ahead, height=6 * radius,
                                             radius=2.5 * radius), color="#d62728")
            if title:
                plotter.add_text(title, font_size=10)
            _camera(plotter, view)
            plotter.screenshot(path)
        plotter.close()

    _render(comm, f"plot.whirl to {path}", draw)
    return path
