"""dolfinx_mbs: elastic bodies in moving frames for FEniCSx (DOLFINx).

Moving-frame inertia as UFL forms, a Maggi reducer for constraints, and PETSc/SLEPc solvers,
in serial and in parallel. SI units throughout.

    import dolfinx_mbs as mbs
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=15.0)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0), frame)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    u, = model.solve_static(t=0.0)
    w = model.natural_frequencies(t=0.0, n=4)
"""

import importlib.util as _ilu

# The PyPI wheel of DOLFINx (dolfinx-solver-*) must load its MPI before dolfinx/petsc4py do.
if _ilu.find_spec("dolfinx_solver") is not None:  # pragma: no branch
    import dolfinx_solver  # noqa: F401

from . import (assembly, compat, constraints, forms, frames, integrate, io, joints, lifetime,
               maggi, materials, modal, operators, rows, space, static, systems)
from .body import Body
from .model import Model
# the function shadows its module as a package attribute: import the module's other names
# with ``from dolfinx_mbs.campbell import ...``
from .campbell import CampbellTable, CriticalSpeed, campbell

__version__ = "0.1.0"

__all__ = [
    "Body",
    "CampbellTable",
    "CriticalSpeed",
    "Model",
    "campbell",
    "compat",
    "constraints",
    "forms",
    "frames",
    "integrate",
    "io",
    "joints",
    "lifetime",
    "maggi",
    "materials",
    "modal",
    "operators",
    "rows",
    "space",
    "static",
    "systems",
    "assembly",
]
