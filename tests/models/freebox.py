"""The free elastic box of the coupled tests: a 1 x 0.2 x 0.1 hexahedral box carried by a
:class:`~dolfinx_mbs.frames.Free` frame, tumbling (a spin mostly about its intermediate axis)
and drifting, attached to its frame at its middle, set vibrating by a bending velocity field."""

import numpy as np
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs


def box(frame, n=(4, 2, 2), E=2e6, rho=1000.0, stiffening=None):
    """The box on ``frame`` with ``n`` cells (degree 1, nu = 0.3)."""
    msh = dmesh.create_box(MPI.COMM_WORLD,
                           [np.array([-0.5, -0.1, -0.05]), np.array([0.5, 0.1, 0.05])],
                           list(n), dmesh.CellType.hexahedron)
    return mbs.Body(msh, mbs.materials.LinearElastic(E=E, nu=0.3, density=rho), frame,
                    degree=1, name="box", stiffening=stiffening)


def free_box(R0=None):
    """(model, body): the soft 4 x 1 x 1 box on a Free frame turned by ``R0`` (default a
    rotation of 0.4 about (1, 2, 0)), moving and spinning, attached at |x| < 0.26."""
    R0 = mbs.frames.rotation_about((1, 2, 0), 0.4) if R0 is None else R0
    sat = mbs.frames.Free(position=(0.5, 0.0, 0.2), orientation=R0, velocity=(0.2, 0.1, 0.0),
                          angular_velocity=R0 @ np.array([0.3, 4.0, 0.2]), name="sat")
    body = box(sat, n=(4, 1, 1), E=2e5)
    model = mbs.Model([body])
    model.attach(body, lambda x: np.abs(x[0]) < 0.26)
    return model, body


def bending(body):
    """A bending velocity field (local components): the body vibrates while it tumbles."""
    v = fem.Function(body.V)
    v.interpolate(lambda x: np.vstack([0 * x[0], 0.2 * x[0] ** 2, 0.1 * x[0] ** 2]))
    return v
