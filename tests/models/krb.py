"""The Kane-Ryan-Banerjee beam (constants) and its plane-stress strip spun up in a SpinUp frame."""

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

L, EI, RHO_A, EA = 10.0, 14000.0, 1.2, 2.8e7
T_S = 15.0
H = np.sqrt(12.0 * EI / EA)   # rectangular section b x h with EA/EI = 12/h^2
B = H
W_REF = np.sqrt(EI / (RHO_A * L**4))


def fe_tip(final_rate, stiffening, t_end, dt=0.02, nx=40, comm=MPI.COMM_WORLD):
    """The plane-stress strip (P2 quadrilaterals, nx x 1) in a SpinUp frame: times and the
    y-displacement of the tip mid-node (L, 0)."""
    mesh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                  [nx, 1], dmesh.CellType.quadrilateral)
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=final_rate, ramp_time=T_S)
    material = mbs.materials.PlaneStress(E=EA / (B * H), nu=0.3, density=RHO_A / (B * H),
                                         thickness=B)
    body = mbs.Body(mesh, material, frame, degree=2, stiffening=stiffening)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    r = model.integrate(t_end=t_end, dt=dt, probes=[(L, 0.0)], spectral_radius=0.8,
                        progress=False)
    return r.times, r.probes[:, 0, 1]
