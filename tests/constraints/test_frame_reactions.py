"""Reactions in the body frame's components (``Result.reactions_frame``): a cantilever spinning
steadily about z from its static equilibrium in the frame, so that the only load is the
steady centrifugal one. Its root reaction in the frame's components is constant in time and
equals minus the centrifugal force of the deformed body, -Omega^2 (m r_c + int rho u dx): the
rigid part m Omega^2 r_c in closed form, the deformation's part assembled from the run's
final field (not from the constraint forces the reaction sums). In global components the same
force turns with the frame: R(Omega t) times the frame's components, its x component changing
sign over half a turn."""

import numpy as np
import pytest
import ufl
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import compat

L, H, THICK, RHO, OMEGA = 1.0, 0.1, 0.01, 7800.0, 10.0


def spinning_cantilever():
    mesh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.zeros(2), np.array([L, H])], [10, 2],
                                  dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=2.1e11, nu=0.3, density=RHO, thickness=THICK)
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=OMEGA)
    body = mbs.Body(mesh, mat, frame, degree=2, name="blade")
    model = mbs.Model([body])
    root = model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model, body, root


@pytest.mark.parametrize("stepper", ["ts", "dense"])
def test_reaction_of_a_steady_spin_is_steady_in_frame_components(stepper):
    model, body, root = spinning_cantilever()
    u0 = model.solve_static(0.0)
    half_turn = np.pi / OMEGA
    r = model.integrate(half_turn, half_turn / 24, u0=u0, reactions=[root], stepper=stepper,
                        progress=False)
    frame_f, glob_f = r.reactions_frame[root.name], r.reactions[root.name]
    assert frame_f.shape == glob_f.shape == (25, 2)

    # the reference: minus the centrifugal force of the deformed body, in frame components
    mass = RHO * THICK * L * H
    rigid = mass * OMEGA**2 * np.array([L / 2, H / 2])
    comm = body.mesh.comm
    shift = np.array([comm.allreduce(fem.assemble_scalar(compat.form(
        RHO * THICK * body.u[i] * ufl.dx)), op=MPI.SUM) for i in range(2)])
    reference = -(rigid + OMEGA**2 * shift)
    # the deformation's part is small (its bending by the y offset: 2e-5) but not below the
    # tolerance
    assert 1e-7 < np.abs(OMEGA**2 * shift).max() / np.abs(rigid).max() < 1e-4

    scale = np.abs(reference).max()
    spread = np.abs(frame_f - frame_f[0]).max() / scale
    assert spread < 1e-8, spread
    error = np.abs(frame_f - reference).max() / scale
    assert error < 1e-8, error

    # global components: the frame's turned by R(Omega t)
    c, s = np.cos(OMEGA * r.times), np.sin(OMEGA * r.times)
    turned = np.stack([c * frame_f[:, 0] - s * frame_f[:, 1],
                       s * frame_f[:, 0] + c * frame_f[:, 1]], axis=1)
    assert np.abs(glob_f - turned).max() < 1e-12 * scale
    assert glob_f[0, 0] < -0.9 * scale and glob_f[-1, 0] > 0.9 * scale
