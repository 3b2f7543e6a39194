"""Runs of the rigid rotor on two plain journal bearings (:mod:`journal_rotor`) with the
film's nonlinear force, shared by the tests and run as a script in a process of its own (the
same run on another number of ranks).

``python journal_run_cases.py <stem>`` runs :func:`short_run` and writes ``<stem>.npz`` on
rank 0: the times, each journal's position, and the energies.
"""

import sys

import numpy as np
from dolfinx import fem

from tests.models.journal_rotor import film, rigid_rotor

#: the spin speed of the runs below the oil-whirl threshold (rad/s)
SPEED = 300.0
LOAD = 2000.0


def rotor(speed=SPEED):
    """(model, body, film): the rigid rotor spinning at ``speed`` on a coarse film (24 x 4
    cells of degree 2: a run's film, consistent with the equilibrium the same film gives)."""
    jb = film(cells=(24, 4))
    model, body, _, _ = rigid_rotor(jb, load=LOAD, rate=speed)
    return model, body, jb


def translated(body, offset):
    """The displacement Function of a rigid translation by ``offset`` (x, y)."""
    u = fem.Function(body.V)
    u.interpolate(lambda x: np.vstack([offset[0] + 0 * x[0], offset[1] + 0 * x[0], 0 * x[0]]))
    return u


def short_run(t_end=30 * 1e-4, dt=1e-4):
    """From the concentric position at rest, the journals dropping onto their film (spectral
    radius 1: the midpoint rule)."""
    model, body, jb = rotor()
    return model.integrate(t_end, dt, spectral_radius=1.0, progress=False)


if __name__ == "__main__":
    from mpi4py import MPI

    r = short_run()
    if MPI.COMM_WORLD.rank == 0:
        np.savez(sys.argv[1], times=r.times,
                 **{f"x{i}": h["position"] for i, h in enumerate(r.journals.values())},
                 kinetic=r.energy["kinetic"])
