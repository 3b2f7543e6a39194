"""A 2D cantilever on a spinning frame under a ramped tip load, and two non-integrable velocity
rows on it with time-varying coefficients."""

import dolfinx.mesh as dm
import numpy as np

import dolfinx_mbs as mbs

L, H = 1.0, 0.1
OMEGA_B = 600.0          # rad/s: the rows' coefficients vary at this rate
F0, W_F = 150.0, 2 * np.pi / 4e-3     # tip load F0 (1 - cos(W_F t)) / 2
V0, W_C = 2e-3, 2 * np.pi / 5e-3      # c(t) = V0 (1 - cos(W_C t)) / 2
RAYLEIGH_B = 2e-7        # s: stiffness-proportional damping (zeta = 0.08 at the top mesh mode)
PROBES = [(L, 0.0), (0.5, H)]


def ramp(t, w):
    return 0.5 * (1.0 - np.cos(w * t))


def ramp_dot(t, w):
    return 0.5 * w * np.sin(w * t)


def cantilever(comm, rate):
    mesh = dm.create_rectangle(comm, [np.array([0.0, 0.0]), np.array([L, H])], [8, 2],
                               dm.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=70e9, nu=0.3, density=2700.0, thickness=0.02,
                                    rayleigh=(0.0, RAYLEIGH_B))
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=rate, origin=(-0.2, 0.0, 0.0))
    body = mbs.Body(mesh, mat, frame, degree=2, name="beam")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0), name="root")
    model.apply_load(body, point=(L, H), force=lambda t: np.array([0.2, 1.0]) * F0 * ramp(t, W_F))
    return model, body


def nonholonomic_rows(model, body):
    """Two non-integrable rows with time-varying coefficients and c(t) = (0, V0 ramp):

        u_y'(L, 0) - sin(W t) u_y'(L/2, 0) = 0,   u_x'(L, H) + cos(W t)/2 u_y'(3L/4, H) = c_1(t).

    Returns the rows and rhs for :meth:`Model.constrain_velocity` and, for the reference,
    ``ref(t) -> (dofs (2, 2), B (2, 2), B' (2, 2), c')`` written by hand."""
    i, j = model.dof(body, (L, 0.0), 1), model.dof(body, (0.5, 0.0), 1)
    k, m = model.dof(body, (L, H), 0), model.dof(body, (0.75, H), 1)
    rows = [{i: 1.0, j: lambda t: -np.sin(OMEGA_B * t)},
            {k: 1.0, m: lambda t: 0.5 * np.cos(OMEGA_B * t)}]
    rhs = lambda t: np.array([0.0, V0 * ramp(t, W_C)])  # noqa: E731
    dofs = np.array([[i, j], [k, m]])

    def ref(t):
        s, c = np.sin(OMEGA_B * t), np.cos(OMEGA_B * t)
        B = np.array([[1.0, -s], [1.0, 0.5 * c]])
        Bd = np.array([[0.0, -OMEGA_B * c], [0.0, -0.5 * OMEGA_B * s]])
        return dofs, B, Bd, np.array([0.0, V0 * ramp_dot(t, W_C)])

    return rows, rhs, ref
