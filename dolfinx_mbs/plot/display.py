"""The optional libraries of the pictures, and showing a picture in a Jupyter page.

PyVista (VTK) and matplotlib are not dependencies of the package: a function that needs one
imports it when called and, when it is missing, raises an ImportError that names the package
to install (the package's ``plot`` extra brings both).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Iterator, cast

if TYPE_CHECKING:
    from types import ModuleType

    from mpi4py import MPI


def pyvista() -> ModuleType:
    """The ``pyvista`` module, set for off-screen rendering.

    Returns:
        The module.

    Raises:
        ImportError: pyvista is not installed (the message says how to install it).
    """
    try:
        import pyvista as pv
    except ImportError as err:
        raise ImportError(
            "dolfinx_mbs.plot renders with PyVista, which is not installed: "
            "pip install pyvista imageio (or the package's extra: pip install "
            "'dolfinx_mbs[plot]')") from err
    pv.OFF_SCREEN = True
    return pv


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` with the file-only Agg backend (inside Jupyter: its own backend).

    Returns:
        The module.

    Raises:
        ImportError: matplotlib is not installed (the message says how to install it).
    """
    try:
        import matplotlib
    except ImportError as err:
        raise ImportError("dolfinx_mbs.plot draws curves with matplotlib, which is not "
                          "installed: pip install matplotlib") from err
    if not in_jupyter():
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return cast("ModuleType", plt)


@contextlib.contextmanager
def quiet_vtk() -> Iterator[None]:
    """VTK's warnings held back while a picture renders.

    Without a display VTK first tries X and logs a warning before it takes EGL or OSMesa; the
    picture is the same, and a page showing a demo's output would carry the warning.
    """
    try:
        from vtkmodules.vtkCommonCore import vtkLogger
    except ImportError:  # pragma: no cover - an old VTK without the logger
        yield
        return
    before = vtkLogger.GetCurrentVerbosityCutoff()
    vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_ERROR)
    try:
        yield
    finally:
        vtkLogger.SetStderrVerbosity(before)


def in_jupyter() -> bool:
    """Whether this process is a Jupyter kernel (a notebook, a page being executed)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def show(path: str, comm: MPI.Comm | None = None) -> str:
    """Show the picture ``path`` (PNG, GIF) in a Jupyter page; do nothing in a script.

    The demos call it after writing a figure, so that their pages show it; a script leaves
    the file where it was written. Rank 0 shows it (the others have nothing to do).

    Args:
        path: a PNG or GIF file.
        comm: the communicator whose rank 0 shows it; default ``MPI.COMM_WORLD``.

    Returns:
        ``path``.

    Raises:
        FileNotFoundError: in a Jupyter kernel, ``path`` does not exist.
    """
    if comm is None:
        from mpi4py import MPI

        comm = MPI.COMM_WORLD
    if comm.rank == 0 and in_jupyter():
        if not os.path.isfile(path):
            raise FileNotFoundError(f"show: no picture at {path!r}")
        from IPython.display import Image, display

        display(Image(filename=path))
    return path
