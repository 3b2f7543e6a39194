"""A small coupled run for the checkpoint tests of models with computed frames: an elastic beam
on a hub (a :class:`~dolfinx_mbs.frames.Hinge` with a rigid disk's inertia) driven by a torque
and, with ``joint``, a rigid link on a planar free frame pinned to the hub by a revolute joint
under gravity (the joint's multipliers are frame unknowns; the default formulation is then
first-order, BDF2).

``python coupled_checkpoint_cases.py <stem> <t_end> <every> <tag> [restart] [joint] [dense]``
runs it (continuing from ``<stem>.ckpt`` with ``restart``; on the dense path with ``dense``)
and writes ``<stem>.<tag>.npz`` on rank 0:
the final state (:func:`summary`). Several such commands separated by ``+`` run one after the
other in one process.
"""

import math
import sys

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.io import evaluate
from dolfinx_mbs.io.dof_keys import dof_keys

DT = 2e-3
#: the beam's tip and a point off the nodes (body coordinates, m)
POINTS = np.array([[1.0, 0.025, 0.0], [0.61, -0.01, 0.0]])


def model(comm=MPI.COMM_WORLD, joint=False, cells=(6, 2), modes=None):
    """(model, beam); ``cells``: the beam's mesh; ``modes``: the beam reduced to so many
    modes (the dense path's small model), or None."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), name="hub")
    msh = dmesh.create_rectangle(comm, [np.array([0.0, -0.025]), np.array([1.0, 0.025])],
                                 list(cells), dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=5e8, nu=0.3, density=2700.0, thickness=0.01)
    beam = mbs.Body(msh, mat, hub, degree=2, name="beam")
    disk = mbs.RigidBody(mass=5.0, inertia=0.05, frame=hub, centre=(0.0, 0.0, 0.0),
                         name="disk")
    parts = [beam, disk]
    if joint:
        fr2 = mbs.frames.Free(position=(0.3, -0.2, 0.0), name="arm", dim=2)
        link = mbs.RigidBody(mass=0.5, inertia=0.5 * 0.4 ** 2 / 12, frame=fr2,
                             centre=(0.0, 0.0, 0.0), name="link")
        parts.append(link)
    m = mbs.Model(parts, gravity=(0.0, -9.81, 0.0) if joint else None)
    m.attach(beam, lambda x: x[0] < 1e-8)
    m.apply_torque(hub, lambda t, s: 3.0 + 2.0 * math.sin(60.0 * t) - 0.2 * s.rate)
    if joint:
        m.revolute(disk, link, point=(0.3, 0.0), name="pin")
    if modes:
        m.reduce(beam, modes=modes)
    return m, beam


def run(stem, t_end, every=None, restart=False, joint=False, dt=DT, cells=(6, 2), modes=None,
        **kw):
    """(result, model, beam) of a run of :func:`model` with output ``stem``."""
    m, beam = model(joint=joint, cells=cells, modes=modes)
    kw.setdefault("output_every", 2)
    r = m.integrate(t_end=t_end, dt=dt, output=stem, checkpoint_every=every, restart=restart,
                    progress=False, probes=[POINTS[0]], **kw)
    return r, m, beam


def summary(r, beam) -> dict:
    """The run's final state, gathered on rank 0: the hub's angle and rate, the beam's
    displacement at ``POINTS`` and at every owned dof (``u``) with the dofs' partition-free
    names (``keys``), the times and the restart's time (-1 if none)."""
    V = beam.u.function_space
    n = V.dofmap.index_map.size_local * V.dofmap.index_map_bs
    comm = V.mesh.comm
    keys = comm.gather(dof_keys(V), root=0)
    u = comm.gather(beam.u.x.array[:n].copy(), root=0)
    out = dict(angle=r.frames["hub"].angle, rate=r.frames["hub"].rate, times=r.times,
               at=evaluate(beam.u, POINTS), probes=r.probes, steps=r.steps,
               restarted_from=-1.0 if r.restarted_from is None else r.restarted_from,
               ranks=comm.size)
    if "arm" in r.frames:
        out["arm_angle"] = r.frames["arm"].angle
    if comm.rank == 0:
        out.update(keys=np.concatenate(keys), u=np.concatenate(u))
    return out


def main(argv) -> None:
    """One run of the command line (see the module docstring)."""
    stem, t_end, every, tag = argv[0], float(argv[1]), int(argv[2]), argv[3]
    r, _, beam = run(stem, t_end, every, restart="restart" in argv[4:],
                     joint="joint" in argv[4:],
                     stepper="dense" if "dense" in argv[4:] else "auto")
    out = summary(r, beam)
    if MPI.COMM_WORLD.rank == 0:
        np.savez(f"{stem}.{tag}.npz", **out)


if __name__ == "__main__":
    args = sys.argv[1:]
    while args:  # several runs, separated by "+", in one process
        cut = args.index("+") if "+" in args else len(args)
        main(args[:cut])
        args = args[cut + 1:]
