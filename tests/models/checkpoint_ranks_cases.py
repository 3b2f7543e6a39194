"""Runs of the checkpoint tests' cantilever (:mod:`checkpoint_cases`) in processes of their own,
for a checkpoint written on one number of ranks and read on another.

``python checkpoint_ranks_cases.py run <form> <stem> <t_end> <every> <tag> [restart]
[multipliers]`` integrates (continuing from ``<stem>.ckpt`` with ``restart``; with Lagrange
multipliers for the clamp with ``multipliers``) and writes the beam's final
displacement; ``python checkpoint_ranks_cases.py read <form> <stem> <tag>`` reads the
checkpoint of ``<stem>`` back (:func:`dolfinx_mbs.integrate.checkpoint.read_state`) and writes
its displacement and velocity. Either writes ``<stem>.<tag>.npz`` on rank 0: every owned dof's
value (``u``; ``v`` when read), named by :func:`dolfinx_mbs.io.dof_keys.dof_keys` (``keys``:
the same on any partition), the displacement evaluated at ``POINTS`` (``at``), the time
(``t``) and, for a run, its probe history and times. Several such commands separated by ``+``
run one after the other in one process.
"""

import sys

import numpy as np
from mpi4py import MPI

from dolfinx_mbs.integrate.checkpoint import read_state
from dolfinx_mbs.io import evaluate
from dolfinx_mbs.io.dof_keys import dof_keys
from tests.models.checkpoint_cases import DT, model

#: where the displacement is compared (body coordinates, m): tip, mid-span, off the nodes
POINTS = np.array([[1.0, 0.05, 0.0], [0.5, 0.0, 0.0], [0.3, 0.1, 0.0], [0.81, 0.027, 0.0]])


def gathered(f) -> tuple:
    """(names, values) of the owned dofs of the Function ``f``, gathered on rank 0."""
    V = f.function_space
    n = V.dofmap.index_map.size_local * V.dofmap.index_map_bs
    comm = V.mesh.comm
    k = comm.gather(dof_keys(V), root=0)
    x = comm.gather(f.x.array[:n].copy(), root=0)
    return (np.concatenate(k), np.concatenate(x)) if comm.rank == 0 else (None, None)


def main(argv) -> None:
    what, form, stem = argv[0], argv[1], argv[2]
    m, body = model()
    out = {}
    if what == "run":
        t_end, every, tag = float(argv[3]), int(argv[4]), argv[5]
        r = m.integrate(t_end=t_end, dt=DT, formulation=form, output=stem,
                        checkpoint_every=every, restart="restart" in argv[6:],
                        progress=False, probes=[(1.0, 0.05)], output_every=2,
                        constraints="multipliers" if "multipliers" in argv[6:] else "maggi")
        u_fn = body.u
        out = dict(probes=r.probes, times=r.times, steps=r.steps,
                   restarted_from=-1.0 if r.restarted_from is None else r.restarted_from,
                   t=r.times[-1])
    else:
        tag = argv[3]
        st = read_state(m.system(form), stem)
        u_fn = st.displacement["beam"]
        _, v = gathered(st.velocity["beam"])
        out = dict(v=v, t=st.t, index=st.index)
    keys, u = gathered(u_fn)
    at = evaluate(u_fn, POINTS)
    if MPI.COMM_WORLD.rank == 0:
        np.savez(f"{stem}.{tag}.npz", keys=keys, u=u, at=at, ranks=MPI.COMM_WORLD.size, **out)


if __name__ == "__main__":
    args = sys.argv[1:]
    while args:  # several runs, separated by "+", in one process
        cut = args.index("+") if "+" in args else len(args)
        main(args[:cut])
        args = args[cut + 1:]
