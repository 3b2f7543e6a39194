"""Two models for the reduced-body comparisons (also docs/reduction.py): the Kane-Ryan-Banerjee
strip spun up (its tip history), and demos/elastic_linkage.py's slider-crank, coarser."""

import math

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

ALU = dict(E=70e9, nu=0.3, density=2700.0)


def krb_tip(reduce=None, t_end=20.0, comm=MPI.COMM_WORLD, formulation="second-order",
            rayleigh=None):
    from tests.models.krb import EA, RHO_A, T_S, B, H, L

    mesh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                  [40, 1], dmesh.CellType.quadrilateral)
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=6.0, ramp_time=T_S)
    mat = mbs.materials.PlaneStress(E=EA / (B * H), nu=0.3, density=RHO_A / (B * H),
                                    thickness=B, rayleigh=rayleigh)
    body = mbs.Body(mesh, mat, frame, degree=2, stiffening="prestress")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    if reduce:
        model.reduce(body, **reduce)
    opts = {"spectral_radius": 0.8} if formulation == "second-order" else {}
    r = model.integrate(t_end=t_end, dt=0.02, probes=[(L, 0.0)], formulation=formulation,
                        progress=False, **opts)
    return r.probes[:, 0, 1]


def slider_crank(comm, cells=(6, 18)):
    """demos/elastic_linkage.py's mechanism (600 rpm after a smooth ramp), coarser."""
    r, l, side, omega, ramp = 0.1, 0.3, 0.01, 20 * np.pi, 0.05  # noqa: E741

    def theta(t):
        if t >= ramp:
            return omega * ramp / 2 + omega * (t - ramp)
        s = 2 * np.pi / ramp
        return (omega / ramp) * (t * t / 2 + (math.cos(s * t) - 1) / (s * s))

    tip = lambda t: np.array([r * np.cos(theta(t)), r * np.sin(theta(t))])  # noqa: E731
    phi = lambda t: math.asin(-r * math.sin(theta(t)) / l)                     # noqa: E731

    def strip(length, n):
        return dmesh.create_rectangle(comm, [np.array([0.0, -side / 2]),
                                             np.array([length, side / 2])],
                                      [n, 2], dmesh.CellType.quadrilateral)

    mat = mbs.materials.PlaneStress(thickness=side, **ALU)
    ts = 0.2 / omega
    crank = mbs.Body(strip(r, cells[0]), mat, mbs.frames.Planar(theta=theta, time_scale=ts),
                     degree=2, name="crank")
    coupler = mbs.Body(strip(l, cells[1]), mat,
                       mbs.frames.Planar(theta=phi, origin=tip, time_scale=ts),
                       degree=2, name="coupler")
    model = mbs.Model([crank, coupler])
    model.clamp(crank, lambda x: np.isclose(x[0], 0.0), name="motor")
    model.pin(crank, coupler, (r, 0.0), name="pin")
    model.slider(coupler, (r + l, 0.0), axis=(1, 0), name="slider")
    return model, coupler
