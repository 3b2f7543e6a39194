"""Pictures of results: bodies deformed, mode shapes, whirl orbits, animations of a run.

PyVista renders off-screen (no display needed: EGL or OSMesa under VTK); matplotlib draws
curves (the Campbell diagram is :meth:`dolfinx_mbs.CampbellTable.plot`). Both are optional:
a function that needs one says how to install it. Every function is collective; rank 0
renders and writes the file. In a Jupyter page :func:`show` displays a written picture.

    u, = model.solve_static()
    mbs.plot.deformed(u, "static.png")
    m = model.modes(n=4, shapes=True)
    mbs.plot.mode_shapes(m, "modes.png")
    table = model.campbell(speeds, harmonics="all")      # a cyclic model
    mbs.plot.interference(table, "zzenf.png", engine_orders=range(1, 5))
    rec = mbs.plot.Recorder(model, every=10)
    model.integrate(1.0, 1e-3, callback=rec)
    mbs.plot.animate(rec, "run.gif")
"""

from dolfinx_mbs.plot.display import in_jupyter, pyplot, pyvista, show
from dolfinx_mbs.plot.gather import Gathered, gather
from dolfinx_mbs.plot.interference import interference
from dolfinx_mbs.plot.motion import Recorder, animate
from dolfinx_mbs.plot.render import VIEWS, deformed, largest_phase, mode_shapes, whirl

__all__ = ["Gathered", "Recorder", "VIEWS", "animate", "deformed", "gather", "in_jupyter",
           "interference", "largest_phase", "mode_shapes", "pyplot", "pyvista", "show",
           "whirl"]
