"""A small run for the checkpoint tests: a 2D cantilever spun up from rest with an end
traction (operators that change in time, a load, P2), and a driver for running it in a
process of its own (``python checkpoint_cases.py <formulation> <stem> <t_end> <every>
[restart] [slow]``) that writes the final reduced state to ``<stem>.final<rank>.npy``."""

import os
import sys
import time

import numpy as np
from dolfinx import mesh as dmesh  # noqa: E402
from mpi4py import MPI  # before dolfinx: the wheel's MPI library is found through mpi4py

import dolfinx_mbs as mbs

DT = 1e-4


def model(comm=MPI.COMM_WORLD, slow=False, prestress=False, damping=None, length=1.0,
          E=2e9, clamp_at=0.0):
    """The beam; ``prestress``: its stiffening by the spin's steady state; ``damping``:
    Rayleigh's (a, b); ``length``, ``E``, ``clamp_at`` (the x of the clamped end nodes) make
    other models of the same cells (for restarts that must be refused)."""
    mesh = dmesh.create_rectangle(comm, [np.array([0.0, 0.0]), np.array([length, 0.1])],
                                  [8, 2], dmesh.CellType.quadrilateral)
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=40.0, ramp_time=0.01)
    mat = mbs.materials.PlaneStress(E=E, nu=0.3, density=2700.0, thickness=0.01,
                                    rayleigh=damping)
    body = mbs.Body(mesh, mat, frame, degree=2, name="beam",
                    stiffening="prestress" if prestress else None)
    m = mbs.Model([body])
    m.clamp(body, lambda x: np.isclose(x[0], clamp_at))

    def push(t):
        if slow:  # room for a signal to arrive mid-run
            time.sleep(0.02)
        return (0.0, 2e4 * np.sin(300.0 * t))

    body.add_traction(push, where=lambda x: np.isclose(x[0], length))
    return m, body


def run(formulation, stem, t_end, every, restart=False, slow=False, prestress=False,
        damping=None, **kw):
    m, body = model(slow=slow, prestress=prestress, damping=damping)
    r = m.integrate(t_end=t_end, dt=DT, formulation=formulation, output=stem,
                    checkpoint_every=every, restart=restart, progress=False,
                    probes=[(1.0, 0.05)], **kw)
    return r, body.u.x.array.copy()


if __name__ == "__main__":
    form, stem, t_end, every = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    flags = sys.argv[5:]
    with open(f"{stem}.pid{MPI.COMM_WORLD.rank}", "w") as f:  # for the test to signal
        f.write(str(os.getpid()))
    r, u = run(form, stem, t_end, every, restart="restart" in flags, slow="slow" in flags,
               output_every=2)
    np.save(f"{stem}.final{MPI.COMM_WORLD.rank}.npy", u)
