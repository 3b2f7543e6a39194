"""Start-up hook of the project's venv (DOLFINx 0.11 wheel): the wheel's MPI before DOLFINx.

The PyPI wheel ``dolfinx-solver-real`` must load mpi4py's MPI before ``dolfinx``, ``petsc4py``
or ``slepc4py`` load their compiled modules (otherwise ``ImportError: libmpi.so.12``). ``make``
copies this file into the venv's site-packages with a one-line ``.pth`` file that imports it,
so that any script of the venv may start with ``import dolfinx`` as FEniCSx scripts do. It
imports ``dolfinx_solver`` only when one of those packages is first imported: an interpreter
that never touches them (pip, a linter) does not start MPI.
"""

import importlib.abc
import importlib.util
import sys

_BINDINGS = ("dolfinx", "petsc4py", "slepc4py")


class _MPIFirst(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in _BINDINGS:
            sys.meta_path.remove(self)  # once: dolfinx_solver imports these itself
            if importlib.util.find_spec("dolfinx_solver") is not None:
                import dolfinx_solver  # noqa: F401
        return None


if not any(isinstance(f, _MPIFirst) for f in sys.meta_path):
    sys.meta_path.insert(0, _MPIFirst())
