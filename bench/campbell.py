"""Benchmark: the Campbell sweep of the demo rotor (demos/rotor_campbell.py), serial and in
parallel, with the same numbers.

    python bench/campbell.py                 # serial run, appended to bench/results/campbell.*
    mpirun -n 2 python bench/campbell.py     # 2 ranks; compared with the last serial run
    python bench/campbell.py --size 0.0075 --speeds 21   # the ~1e5-dof rotor of issue 17
    python bench/campbell.py --size 0.04 --speeds 3 --modes 2 --no-write   # quick check

The rotor: shaft 0.6 m x 20 mm radius, disk 120 mm x 20 mm at 0.4 m, P2 tetrahedra (gmsh,
``--size``), both ends clamped, prestress stiffening, ``--speeds`` speeds 0 ... 30 000 rpm,
``--modes`` tracked branches. Timed: building the model (mesh, operators, prestress solves)
and the sweep (max over ranks). Recorded: machine, versions, date, load average (at the start
and the end), dofs, times, how many speeds the sweep solved by its carried block solver and
how many by SLEPc, the frequencies; a 2-rank run also records its largest relative difference
to the last serial run's frequencies. One BLAS thread per process (``OMP_NUM_THREADS=1`` set
before numpy loads, unless given): the ranks are the cores' users.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["OMP_NUM_THREADS"])

import logging  # noqa: E402
import platform
import time

import numpy as np
from benchlib import barrier, gmax, load_runs, parser, save_runs, utc_now
from mpi4py import MPI

import dolfinx
import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

COMM = MPI.COMM_WORLD


class _Counts(logging.Handler):
    """The sweep's count of block and SLEPc solves (its log line)."""

    text = ""

    def emit(self, record):
        msg = record.getMessage()
        if "by block solves" in msg:
            self.text = msg.split(": ", 1)[1]


def run(size: float, speeds: int, modes: int) -> dict:
    barrier()
    t0 = time.perf_counter()
    mesh, _, facets = meshes.rotor(COMM, size=size)
    frame = mbs.frames.ConstantSpin(axis=(0.0, 0.0, 1.0), rate=0.0)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0), frame,
                    degree=2, name="rotor", stiffening="prestress")
    model = mbs.Model([body])
    model.clamp(body, facets=(facets, meshes.BEARING_A))
    model.clamp(body, facets=(facets, meshes.BEARING_B))
    model.assembly.at(0.0)
    t1 = time.perf_counter()
    rpm = np.linspace(0.0, 30000.0, speeds)
    counts = _Counts()
    logging.getLogger("dolfinx_mbs.campbell").addHandler(counts)
    logging.getLogger("dolfinx_mbs.campbell").setLevel(logging.INFO)
    table = model.campbell(rpm * 2 * np.pi / 60, n=modes)
    t2 = time.perf_counter()
    return dict(dofs=body.V.dofmap.index_map.size_global * 3, setup=gmax(t1 - t0),
                sweep=gmax(t2 - t1), per_speed=gmax(t2 - t1) / speeds, solves=counts.text,
                rpm=rpm.tolist(), frequencies=table.frequencies.tolist(),
                critical_rpm=[c.speed * 60 / (2 * np.pi) for c in table.critical_speeds])


def main():
    ap = parser(__doc__, load=None, max_wait=None)
    ap.add_argument("--size", type=float, default=0.015)
    ap.add_argument("--speeds", type=int, default=31)
    ap.add_argument("--modes", type=int, default=6)
    args = ap.parse_args()
    load0 = os.getloadavg()
    res = run(args.size, args.speeds, args.modes)
    if COMM.rank != 0:
        return
    res.update(date=utc_now(), ranks=COMM.size, load=load0, load_end=os.getloadavg(),
               machine=platform.processor() or platform.machine(), cpus=os.cpu_count(),
               dolfinx=dolfinx.__version__, size=args.size, modes=args.modes)
    jpath = args.results_dir / "campbell.json"
    runs = load_runs(jpath)
    # the serial run of the same installation (another gmsh meshes the rotor differently)
    serial = [r for r in runs if r["ranks"] == 1 and r["size"] == args.size
              and len(r["rpm"]) == args.speeds and r["modes"] == args.modes
              and r.get("dolfinx", "0.5.2") == res["dolfinx"] and r["dofs"] == res["dofs"]]
    if COMM.size > 1 and serial:
        a, b = np.array(res["frequencies"]), np.array(serial[-1]["frequencies"])
        res["max_rel_diff_to_serial"] = float(np.max(np.abs(a - b) / np.abs(b).max()))
    runs.append(res)
    lines = ["# Campbell sweep of the demo rotor (bench/campbell.py)", "",
             "Rotor of `demos/rotor_campbell.py` (P2 tetrahedra, prestress stiffening, both "
             "bearings clamped); set-up = mesh + operators + prestress unit solves; sweep = one "
             "gyroscopic quadratic eigenproblem per speed, with branch tracking and whirl: "
             "rows without a 'solves' entry, one SLEPc PEP (shift-and-invert, MUMPS) per speed "
             "(the code before `campbell_solve`; the 102759-dof row of 2026-11-23T22:20 is "
             "main's code run beside the new one); rows with one, the pencil combined from "
             "three evaluations, one "
             "factorization object (numeric refactorization per speed) and block "
             "shift-and-invert solves warm-started from the last speed "
             "(`dolfinx_mbs/campbell_solve.py`); rows whose 'solves' count factorizations, "
             "one subspace carried over the sweep, each speed projected, checked and "
             "corrected by block solves of P^-1 r, the factorization of P kept over speeds "
             "(`dolfinx_mbs/campbell_subspace.py`). Times are the maximum over ranks; the load "
             "average is the machine's (shared, 2 cores) at the start (and end) of the run.", "",
             "| date (UTC) | DOLFINx | ranks | dofs | speeds | modes | set-up (s) | sweep (s) | "
             "per speed (s) | load avg (1, 5, 15 min) | load at end (1 min) | solves | "
             "max rel. diff to serial |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|"]
    for r in runs:
        d = r.get("max_rel_diff_to_serial")
        end = f"{r['load_end'][0]:.2f}" if "load_end" in r else ""
        lines.append(f"| {r['date']} | {r.get('dolfinx', '0.5.2')} | {r['ranks']} | "
                     f"{r['dofs']} | {len(r['rpm'])} | {r['modes']} | {r['setup']:.1f} | "
                     f"{r['sweep']:.1f} | {r['per_speed']:.2f} | "
                     f"{', '.join(f'{x:.2f}' for x in r['load'])} | {end} | "
                     f"{r.get('solves', '')} | {'' if d is None else f'{d:.1e}'} |")
    last = runs[-1]
    lines += ["", f"Machine: {last['machine']}, {last['cpus']} cores. The meshes differ between "
              "installations (gmsh 4.8 with Debian's DOLFINx 0.5.2, gmsh 4.15 from PyPI with "
              "0.11): dofs and frequencies are compared within one installation only.",
              "", "Critical speeds of the last run (rpm, crossings with 1x and 2x): "
              + ", ".join(f"{x:.0f}" for x in last["critical_rpm"])]
    print("\n".join(lines))
    if not args.no_write:
        save_runs(jpath, runs)
        (args.results_dir / "campbell.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
