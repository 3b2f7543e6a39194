"""A square steel shaft clamped at one end, spinning about its axis (P2 hexahedra)."""

import numpy as np
from dolfinx import mesh as dmesh

import dolfinx_mbs as mbs

L, A_SIDE = 1.0, 0.04
STEEL = dict(E=210e9, nu=0.3, density=7850.0)


def shaft(comm, nx=12, rate=0.0):
    mesh = dmesh.create_box(comm, [np.array([0.0, -A_SIDE / 2, -A_SIDE / 2]),
                                   np.array([L, A_SIDE / 2, A_SIDE / 2])],
                            [nx, 2, 2], dmesh.CellType.hexahedron)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(**STEEL),
                    mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=rate), degree=2)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model, body
