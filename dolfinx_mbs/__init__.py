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

The subpackages follow the flow: ``frames`` and ``materials`` make a ``bodies.Body``, whose
``forms`` (UFL) are assembled by ``assembly``; ``constraints`` give the Maggi reducer, which
``reduction`` composes with reduced bodies and ``systems`` turn into the reduced operators of a
formulation (``cyclic``: a wheel of N sectors per harmonic index); ``static``, ``modal``,
``campbell`` and ``integrate`` solve them; ``io`` and
``meshes`` serve them; ``model.Model`` ties it together for the user, ``plot`` draws the
results and ``cli`` runs case files.
"""

import importlib.util as _ilu

# The PyPI wheel of DOLFINx (dolfinx-solver-*) must load its MPI before dolfinx/petsc4py do.
if _ilu.find_spec("dolfinx_solver") is not None:  # pragma: no branch
    import dolfinx_solver  # noqa: F401

from dolfinx_mbs import (
    assembly,
    campbell,
    compat,
    constraints,
    cyclic,
    forms,
    frames,
    integrate,
    io,
    lifetime,
    materials,
    meshes,
    modal,
    plot,
    reduction,
    rotors,
    static,
    systems,
)
from dolfinx_mbs.assembly import operators, space
from dolfinx_mbs.bodies import Body, RigidBody
from dolfinx_mbs.campbell import CampbellTable, CriticalSpeed
from dolfinx_mbs.constraints import joints, maggi, rows
from dolfinx_mbs.model import Model

__version__ = "0.1.0"

__all__ = [
    "Body",
    "CampbellTable",
    "CriticalSpeed",
    "Model",
    "RigidBody",
    "assembly",
    "campbell",
    "compat",
    "constraints",
    "cyclic",
    "forms",
    "frames",
    "integrate",
    "io",
    "joints",
    "lifetime",
    "maggi",
    "materials",
    "meshes",
    "modal",
    "operators",
    "plot",
    "reduction",
    "rotors",
    "rows",
    "space",
    "static",
    "systems",
]
