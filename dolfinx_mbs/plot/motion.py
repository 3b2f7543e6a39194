"""A run's motion kept while it runs, and played back as an animated GIF.

:class:`Recorder` is a ``callback`` of :meth:`dolfinx_mbs.Model.integrate`: it keeps every
body's displacement at every ``every``-th output time. :func:`animate` draws them, in the
global frame where the bodies are (``r_O + R (X + u)``, their frames' states at each time) or
each body in its own frame, with PyVista off-screen, one picture per kept time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Sequence, Tuple, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.plot.display import pyvista
from dolfinx_mbs.plot.gather import gather, on_root
from dolfinx_mbs.plot.render import (
    _COLORMAP,
    _camera,
    _check_common,
    _check_scale,
    _extent,
    _grid,
    _place,
    _render,
    _scale,
)

if TYPE_CHECKING:

    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.integrate.config import StepState
    from dolfinx_mbs.model import Model


class Recorder:
    """Keeps the bodies' displacements during a run: ``model.integrate(..., callback=rec)``.

    Each rank keeps its own part (owned and ghost values) of every body's displacement at
    every ``every``-th call; memory grows with the kept times (``len(rec.times)`` copies of
    the displacement).

    Args:
        model: the :class:`dolfinx_mbs.Model` whose run it watches (its bodies and the
            numbering of their dofs, ``model.space``).
        every: keep one call in this many (the run calls at every output time).

    Raises:
        ValueError: ``every`` is not a positive integer.
    """

    def __init__(self, model: Model, every: int = 1) -> None:
        """Watch ``model``'s runs, keeping one call in ``every``."""
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be a positive integer, got {every!r}")
        from dolfinx import fem

        if model.space is None:
            raise ValueError("MotionRecorder: the model has no elastic body to record")
        self.space = model.space
        # a model's bodies are its elastic ones (the rigid ones are ``model.rigid_bodies``)
        self.bodies = cast("List[Body]", list(model.bodies))
        self.every = every
        #: the times kept (s)
        self.times: list[float] = []
        #: per kept time, each body's local displacement values (owned and ghost)
        self.values: list[list[np.ndarray]] = []
        self._funcs = [fem.Function(b.V) for b in self.bodies]
        self._calls = 0

    def __call__(self, state: StepState) -> None:
        """Keep the displacement ``state.u`` (the full layout's PETSc Vec) when this call is
        due.

        Args:
            state: the run's :class:`~dolfinx_mbs.integrate.StepState` (``t``, ``u``).
        """
        t, u = state.t, state.u
        if u is None:
            raise ValueError("plot.Recorder records the displacement of a run of prescribed "
                             "frames; a run of computed frames gives none (record "
                             "state.frames, or probes, instead)")
        if self._calls % self.every == 0:
            self.space.scatter(u, self._funcs)
            self.times.append(float(t))
            self.values.append([np.asarray(f.x.array).copy() for f in self._funcs])
        self._calls += 1

    def functions(self, k: int) -> list:
        """The bodies' displacements at the ``k``-th kept time, as DOLFINx Functions.

        Args:
            k: index into :attr:`times`.

        Returns:
            One Function per body (new Functions each call).
        """
        from dolfinx import fem

        out = []
        for b, arr in zip(self.bodies, self.values[k]):
            f = fem.Function(b.V)
            f.x.array[:] = arr
            out.append(f)
        return out


def animate(recorder: Recorder, path: str, *, global_frame: bool = True,
            scale: Tuple[str, float] | float = ("factor", 1.0), title: str | None = None,
            label: str = "displacement [m]", view: str | Sequence = "xy",
            window_size: Tuple[int, int] = (800, 600), fps: int = 12, edges: float = 0.0) -> str:
    """An animated GIF of a recorded run, one picture per kept time.

    Args:
        recorder: the :class:`Recorder` that watched the run.
        path: the GIF file to write.
        global_frame: draw each body where its frame is at each time (``r_O + R (X + u)``);
            False: each body in its own frame.
        scale: ``("factor", f)``, the displacement magnified f times (default true size),
            or a number: the largest displacement of the run drawn as this fraction of the
            bodies' extent.
        title: text before the time in the top line.
        label: the color bar's title.
        view: "iso", "xy", "xz", "yz", or a camera position; the camera stays where the
            whole run is in view.
        window_size: pixels.
        fps: pictures per second.
        edges: the width (pixels) of the cells' edges drawn over the bodies, in their colors:
            a slender body seen from afar stays visible; 0 draws none.

    Returns:
        ``path``, on every rank.

    Raises:
        ValueError: bad arguments, or a recorder that kept nothing, on every rank.
        ImportError: PyVista or imageio is missing.
        RuntimeError: the rendering failed (on every rank).
    """
    comm = recorder.space.comm
    checks.raise_everywhere(comm, None if recorder.times else
                            "animate: the recorder kept no time (was it the run's callback?)")
    size = _check_common(path, view, window_size, comm)
    checks.raise_everywhere(comm, None if path.lower().endswith(".gif") else
                            f"path must be a .gif file name, got {path!r}")
    _check_scale(scale, comm)
    if not isinstance(fps, int) or fps < 1:
        checks.raise_everywhere(comm, f"fps must be a positive integer, got {fps!r}")
    if not isinstance(edges, (int, float)) or not edges >= 0:
        checks.raise_everywhere(comm, f"edges must be a width >= 0 (pixels), got {edges!r}")
    pv = pyvista()
    frames = []
    for k in range(len(recorder.times)):
        funcs = recorder.functions(k)
        frames.append([gather([f]) for f in funcs])
    states = [[b.frame.state(t) if global_frame else None for b in recorder.bodies]
              for t in recorder.times]

    def draw() -> None:
        kept = [on_root(bodies) for bodies in frames]
        amp = max(np.linalg.norm(g.values[0], axis=1).max(initial=0.0)
                  for bodies in kept for g in bodies)
        s = _scale(scale, amp, _extent([g.points for g in kept[0]]))
        top = amp if amp > 0 else 1.0
        placed = [[_place(g.points + s * g.values[0], st) for g, st in zip(bodies, sts)]
                  for bodies, sts in zip(kept, states)]
        allp = np.concatenate([p for ps in placed for p in ps])
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        plotter = pv.Plotter(off_screen=True, window_size=size)
        grids = []
        for g, p in zip(kept[0], placed[0]):
            grid = _grid(pv, g, p)
            grid.point_data[label] = np.linalg.norm(g.values[0], axis=1)
            plotter.add_mesh(grid, scalars=label, cmap=_COLORMAP, clim=(0.0, top),
                             scalar_bar_args={"title": label})
            if edges > 0:
                plotter.add_mesh(grid, style="wireframe", line_width=edges, scalars=label,
                                 cmap=_COLORMAP, clim=(0.0, top), show_scalar_bar=False)
            grids.append(grid)
        # the whole run in view: an invisible box around every position it takes
        plotter.add_mesh(pv.Box(bounds=(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2])),
                         opacity=0.0)
        _camera(plotter, view)
        plotter.open_gif(path, fps=fps)
        head = f"{title}: " if title else ""
        for k, t in enumerate(recorder.times):
            for grid, g, p in zip(grids, kept[k], placed[k]):
                grid.points[:] = p
                grid.point_data[label][:] = np.linalg.norm(g.values[0], axis=1)
            plotter.add_text(f"{head}t = {t:.3g} s", font_size=10, name="time")
            plotter.write_frame()
        plotter.close()

    _render(comm, f"plot.animate to {path}", draw)
    return path

