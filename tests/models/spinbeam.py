"""A slender square cantilever (L/h = 50) spinning about an axis through its root, and its
frequencies over a range of nondimensional spin speeds."""

import dolfinx.mesh as dm
import numpy as np

import dolfinx_mbs as mbs

E, RHO, NU = 70e9, 2700.0, 0.3
L, H = 1.0, 0.02


def beam(comm, stiffening, axis=(0.0, 0.0, 1.0)):
    """A slender square cantilever along x (L/h = 50), root on the spin axis."""
    mesh = dm.create_box(comm, [np.array([0.0, -H / 2, -H / 2]), np.array([L, H / 2, H / 2])],
                         [40, 1, 1], dm.CellType.hexahedron)
    frame = mbs.frames.ConstantSpin(axis=axis, rate=0.0)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=E, nu=NU, density=RHO), frame,
                    degree=2, stiffening=stiffening)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model, frame


W_REF = np.sqrt(E * H**4 / 12 / (RHO * H * H * L**4))


def sweep(model, frame, lams, n=4):
    out = []
    for lam in lams:
        frame.rate = lam * W_REF   # seen at the next frame state (no cache to reset)
        out.append(model.natural_frequencies(n=n) / W_REF)
    return np.array(out)
