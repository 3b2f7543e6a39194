"""The spinning bar of the linear-path tests (test_linear_path, test_hamilton_linear,
test_load_series), and their agreement check of two runs."""

import numpy as np
import ufl
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

COMM = MPI.COMM_WORLD
TIP = (1.0, 0.05, 0.05)


def bar(damping=None, components=None, frame=None, prestress=True, traction=True,
        gravity=False, body_force=False, points=False, user_load=False):
    """A 1 x 0.1 x 0.1 m steel bar of 12 x 3 x 3 hexahedra (624 free dofs) spinning about z at
    15 rad/s (or ``frame``), root clamped (and in ``components`` everywhere); optionally:
    a tip traction (0, 1e6 sin(200 t), 0) Pa, gravity along -y, a body force (0, 0, 100 t)
    N/m^3, a point load (1e3 cos(90 t), 0, 500) N in global components at the tip's corner with
    a constant one (0, 0, -200) N beside it, a user load form whose constant follows t."""
    mesh = dmesh.create_box(COMM, [np.zeros(3), np.array([1.0, 0.1, 0.1])], [12, 3, 3],
                            dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0, rayleigh=damping)
    frame = frame or mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=15.0)
    body = mbs.Body(mesh, mat, frame, degree=1, stiffening="prestress" if prestress else None)
    if traction:
        body.add_traction(lambda t: (0.0, 1e6 * np.sin(200.0 * t), 0.0),
                          where=lambda x: np.isclose(x[0], 1.0))
    if body_force:
        body.add_body_force(lambda t: (0.0, 0.0, 100.0 * t))
    if gravity:
        body.set_gravity((0.0, -9.81, 0.0))
    if points:
        body.add_point_load((1.0, 0.1, 0.1), lambda t: (1e3 * np.cos(90.0 * t), 0.0, 500.0),
                            local=False)
        body.add_point_load((1.0, 0.0, 0.1), (0.0, 0.0, -200.0))
    if user_load:
        c = fem.Constant(mesh, 0.0)
        v = body.trial_test()[1]
        body.add_form("load", c * v[1] * ufl.dx, update=lambda s: setattr(c, "value", s.t))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    if components is not None:
        model.clamp(body, lambda x: np.full(x.shape[1], True), components=components)
    return model


def agree(a, b, tol=1e-9):
    """Probes and every energy of the runs ``a`` and ``b`` equal to ``tol`` of their largest
    value."""
    scale = np.abs(a.probes).max()
    assert np.abs(a.probes - b.probes).max() <= tol * scale
    assert set(a.energy) == set(b.energy)
    for k in a.energy:
        s = max(np.abs(a.energy[k]).max(), 1e-300)
        assert np.abs(a.energy[k] - b.energy[k]).max() <= tol * s, k
