"""A large 3D run for a cluster: a spinning steel bar stepped with GMRES + GAMG, checkpointed.

The checkpoints make a batch system's time limit cost nothing.

    mpirun -n 64 python scripts/cluster/spinning_bar.py --n 69 --t-end 0.05 --out run/bar

The bar is 1 m x 0.1 m x 0.1 m, 10n x n x n hexahedra of degree 1: 3 (10n + 1)(n + 1)^2 dofs
(n = 32: 1.0e6, n = 69: 1.0e7), clamped at its root, spinning at 15 rad/s about z, with a
sinusoidal tip traction (the scaling study of ``bench/integration.py``). Run it again with
``--restart`` after a kill or a time limit: it continues from its last checkpoint.
"""

import argparse
import time

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
p.add_argument("--n", type=int, default=32, help="cells across the bar (dofs ~ 30 n^3)")
p.add_argument("--t-end", type=float, default=0.01, help="end time (s)")
p.add_argument("--dt", type=float, default=1e-4, help="time step (s)")
p.add_argument("--out", default="run/bar", help="stem of the CSV, field and checkpoint files")
p.add_argument("--output-every", type=int, default=50, help="steps between field outputs")
p.add_argument("--checkpoint-every", type=int, default=50, help="steps between checkpoints")
p.add_argument("--restart", action="store_true", help="continue from the last checkpoint")
args = p.parse_args()

comm = MPI.COMM_WORLD
n = args.n
mesh = dmesh.create_box(comm, [np.zeros(3), np.array([1.0, 0.1, 0.1])], [10 * n, n, n],
                        dmesh.CellType.hexahedron)
steel = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0)
body = mbs.Body(mesh, steel, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=15.0), degree=1,
                name="bar")
body.add_traction(lambda t: (0.0, 1e5 * np.sin(2 * np.pi * 50.0 * t), 0.0),
                  where=lambda x: np.isclose(x[0], 1.0))
model = mbs.Model([body])
model.clamp(body, lambda x: np.isclose(x[0], 0.0))
dofs = 3 * body.V.dofmap.index_map.size_global
if comm.rank == 0:
    print(f"{dofs:,} dofs on {comm.size} ranks ({dofs // comm.size:,} per rank)", flush=True)

# Multigrid: GMRES preconditioned by PETSc's algebraic multigrid, the body's rigid-body modes
# as its near null space (handed over by the package). The divergence check factorizes the
# stiffness once: at this size it is left out ("off").
options = {"ksp_type": "gmres", "pc_type": "gamg", "ksp_rtol": 1e-10}
t0 = time.perf_counter()
r = model.integrate(args.t_end, args.dt, options=options, probes=[(1.0, 0.05, 0.05)],
                    output=args.out, output_every=args.output_every,
                    checkpoint_every=args.checkpoint_every, restart=args.restart,
                    stability="off", progress=False)
wall = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
if comm.rank == 0:
    print(f"{r.steps} steps in {wall:.1f} s ({wall / max(r.steps, 1):.2f} s per step); "
          f"tip deflection at t = {r.times[-1]:g} s: {r.probes[-1, 0, 1]:.4e} m", flush=True)
