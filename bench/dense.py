"""Benchmark: seed 003's Table 3 study on the PETSc TS path and the dense paths of
``integrate`` (``stepper="ts" | "dense" | "exact"``), side by side in one run; and the size up
to which the dense path steps faster (``dolfinx_mbs.integrate.choice.DENSE_MAX``).

    python bench/dense.py                        # both studies (~20 min on an idle machine)
    python bench/dense.py --studies size         # the size study only (~3 min)
    python bench/dense.py --quick                # smoke run (seconds), nothing written

Studies (``--studies table3,size``):

1. ``table3``: bench/integration.py's rod study (the rotating rod of seed 003, 5..25 linear
   hexahedra, 0.1 s from the steady state, tip history within ``--tol`` (1e-3) of the largest
   dynamic response of the semi-discrete equations' exact solution, ``integration.RodReference``)
   for the three formulations, on four paths:

   * ``dense-fit``: ``stepper="dense"`` with ``load_frequencies=(200,)``, ``load_degree=0``
     (the end force F0 sin(200 t) and the constant centrifugal load are fitted once, no load
     assembly per step): dt halved from ``--dt0`` until the criterion holds (the accepted dt);
   * ``dense``: ``stepper="dense"`` without load information (the loads assembled at each step)
     at the accepted dt;
   * ``ts``: ``stepper="ts"``, PETSc TS at the accepted dt (the dense schemes are TS's: the
     same errors; recorded);
   * ``exact``: ``stepper="exact"`` (matrix exponentials) at the output step ``--dt0``: no
     time-discretization error, the step set by the output wanted.

   Wall time of ``model.integrate(progress=False)`` (probe at the tip, energies on, no output
   file; the model built and its static state solved outside), median of ``--repeats`` runs
   for the fast paths, ``--slow-repeats`` for ``dense`` and ``ts``. Against the seed's Matlab
   times (Lagrange 31-460 s for second- and first-order, Hamilton 28-322 s): the speed-up, and
   the Hamilton / Lagrange ratio of each path.
2. ``size``: the rod with ``n`` elements (4n unknowns), steady spin (``ConstantSpin``) and a
   spin-up over the run (``SpinUp``: operators new at every step), second-order form,
   dt = 1e-5: time per step of ``stepper="dense"`` and ``"ts"`` from two runs of
   ``--size-steps`` and 10 steps (difference / step difference: set-up excluded). With
   ``--size-load constant`` the end load is constant, so that the spin-up's dense path
   combines its loads from unit loads (``dolfinx_mbs.integrate.dense.varying``): the study behind
   ``DENSE_MAX_VARYING`` (``--size-elements 5,10,15,20,25 --size-steps 1010``).

One BLAS thread (``OMP_NUM_THREADS=1`` set before numpy loads, unless given): the matrices are
small, and threads fight over a shared machine's cores (a 203 x 203 expm took 1.1 s with two
threads under load 5, 0.02 s with one).

Results: a run appended to bench/results/dense.json and a section to bench/results/dense.md
(machine, versions, date, load).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import integration as I  # noqa: E402
from benchlib import (append_results, command_line, context_lines, git_rev, gmax,  # noqa: E402
                      load_text, loadavg, log, machine, md_table, parser, timed, utc_now,
                      versions, wait_for_load)
from mpi4py import MPI  # noqa: E402

import dolfinx_mbs as mbs  # noqa: E402
from dolfinx_mbs import io as mbs_io  # noqa: E402

mbs_io.Probes.evaluate = I._evaluate  # integration.py's time stamps are not wanted here

COMM = MPI.COMM_WORLD
RANK = COMM.rank
FORMS = mbs.integrate.FORMULATIONS
PATHS = ("ts", "dense", "dense-fit", "exact")
FIT = dict(load_frequencies=(200.0,), load_degree=0)
#: seed 003's Table 3 (s): Lagrange (second- and first-order here), Hamilton
MATLAB = {"lagrange": {5: 31, 10: 84, 15: 176, 20: 291, 25: 460},
          "hamilton": {5: 28, 10: 68, 15: 139, 20: 224, 25: 322}}


def kw_of(path: str) -> dict:
    return dict(stepper="exact" if path == "exact" else path.split("-")[0],
                **(FIT if path in ("dense-fit", "exact") else {}))


def error(ref, r) -> float:
    err = None
    if RANK == 0:
        d = r.probes[:, 0, 0] - r.probes[0, 0, 0]
        exact = ref.tip(r.times)
        err = float(np.abs(d - exact).max() / np.abs(exact).max())
    return COMM.bcast(err, root=0)


def timed_runs(n, form, dt, t_end, path, repeats):
    walls, r = [], None
    for _ in range(repeats):
        w, r = I.rod_run(n, form, dt, t_end, **kw_of(path))
        walls.append(w)
    return statistics.median(walls), walls, r


def study_table3(args) -> list:
    rows = []
    for n in args.elements:
        ref = I.RodReference(n) if RANK == 0 else None
        for form in FORMS:
            row = dict(elements=n, formulation=form, paths={}, tries=[])
            dt = args.dt0
            search = any(p != "exact" for p in args.paths)
            for _ in range(args.max_halvings + 1 if search else 0):
                w, r = I.rod_run(n, form, dt, args.t_end, **kw_of("dense-fit"))
                err = error(ref, r)
                row["tries"].append(dict(dt=dt, steps=r.steps, wall=w, error=err))
                log(f"  n={n:2d} {form:12s} dense-fit dt={dt:.4e} error {err:.3e} "
                    f"wall {w:.3f} s")
                if err < args.tol:
                    break
                dt /= 2.0
            row["dt"] = dt
            for path in args.paths:
                d = args.dt0 if path == "exact" else dt
                reps = args.repeats if path in ("dense-fit", "exact") else args.slow_repeats
                wall, walls, r = timed_runs(n, form, d, args.t_end, path, reps)
                err = error(ref, r)
                row["paths"][path] = dict(dt=d, steps=r.steps, wall=wall, walls=walls,
                                          error=err, per_step=wall / r.steps,
                                          scheme=r.ts_type, stepper=r.stepper,
                                          load=loadavg()[0])
                log(f"  n={n:2d} {form:12s} {path:9s} dt={d:.4e} ({r.steps:6d} steps) error "
                    f"{err:.3e} wall {wall:8.3f} s ({', '.join(f'{x:.3f}' for x in walls)}) "
                    f"load {loadavg()[0]}")
            rows.append(row)
    return rows


def size_model(n: int, spin_up: bool, comm=COMM, constant_load: bool = False):
    """integration.rod_model's rod, in a spin-up to its rate over 1 ms with ``spin_up``; its
    end load F0 sin(wf t), or F0 constant with ``constant_load``."""
    R = I.ROD
    mesh = I.dmesh.create_box(comm, [np.zeros(3), np.array([R["L"], R["side"], R["side"]])],
                              [n, 1, 1], I.dmesh.CellType.hexahedron)
    frame = (mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=R["omega"], ramp_time=1e-3)
             if spin_up else mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=R["omega"]))
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=R["E"], nu=0.0, density=R["rho"]),
                    frame, degree=1)
    load = (R["F0"] / R["A"], 0.0, 0.0) if constant_load else \
        (lambda t: (R["F0"] / R["A"] * np.sin(R["wf"] * t), 0.0, 0.0))
    body.add_traction(load, where=lambda x: np.isclose(x[0], R["L"]))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=[1, 2])
    return model


def study_size(args) -> list:
    rows = []
    const = args.size_load == "constant"
    for n in args.size_elements:
        for spin_up in (False, True):
            row = dict(elements=n, unknowns=4 * n, frame=("spin-up" if spin_up else "steady")
                       + (", constant load" if const else ""))
            for stepper in ("dense", "ts"):
                walls = {}
                for steps in (10, args.size_steps):
                    model = size_model(n, spin_up, constant_load=const)
                    w, r = timed(lambda: model.integrate(t_end=steps * 1e-5, dt=1e-5,
                                                         probes=[(1.0, 0.0, 0.0)],
                                                         progress=False, stepper=stepper))
                    walls[steps] = w
                per = (walls[args.size_steps] - walls[10]) / (args.size_steps - 10)
                row[stepper] = per
            row["ratio"] = row["dense"] / row["ts"]
            row["load"] = loadavg()[0]
            log(f"  {4 * n:4d} unknowns {row['frame']:8s}: dense {row['dense'] * 1e3:.3f} "
                f"ms/step, ts {row['ts'] * 1e3:.3f} ms/step, ratio {row['ratio']:.2f} "
                f"(load {row['load']})")
            rows.append(row)
    return rows


def markdown(run: dict) -> str:
    out = [f"## {run['date']}: {run['nproc']} MPI process{'es' if run['nproc'] > 1 else ''},"
           f" studies {', '.join(run['studies'])}", "", *context_lines(run),
           f"{load_text(run)}; total wall {run['wall']:.0f} s; OMP_NUM_THREADS="
           f"{run['omp_threads']}", ""]
    t3 = run.get("table3")
    if t3:
        out += ["### Seed 003's Table 3 study: TS and dense paths at equal accuracy", "",
                f"Rod, {run['t_end']:g} s, tolerance {run['tol']:g} of the largest dynamic tip "
                "response (semi-discrete exact solution). dt: halved from "
                f"{run['dt0']:g} on the dense-fit path until the tolerance holds; ts and dense "
                f"at that dt; exact at dt = {run['dt0']:g} (output step). Wall: "
                "`model.integrate(progress=False)`, energies and tip probe on.", ""]
        paths = [k for k in PATHS if k in t3[0]["paths"]]
        fast = [k for k in ("exact", "dense-fit") if k in paths]
        hdr = ["elements", "formulation", "dt [s]", "steps"] + \
            [f"{p} [s] (error)" for p in paths] + ["Matlab [s]"] + \
            [f"{k}: x faster" for k in fast]
        body = []
        for row in t3:
            p = row["paths"]
            mat = MATLAB["hamilton" if row["formulation"] == "hamiltonian" else "lagrange"][
                row["elements"]]
            steps = p["ts"]["steps"] if "ts" in p else p[paths[0]]["steps"]
            body.append([str(row["elements"]), row["formulation"], f"{row['dt']:.3e}",
                         f"{steps:,}"]
                        + [f"{p[k]['wall']:.3f} ({p[k]['error']:.1e})" for k in paths]
                        + [str(mat)] + [f"**{mat / p[k]['wall']:,.0f}**" for k in fast])
        out += [md_table(hdr, body), "", "Hamilton / Lagrange wall-time ratio of each path "
                "(Lagrange: second-order form; < 1: Hamilton faster):", ""]
        by = {(r["elements"], r["formulation"]): r["paths"] for r in t3}
        hdr = ["elements"] + [f"{p}: H / second-order" for p in paths] + \
            ["seed (Matlab) H / L"]
        body = []
        for n in sorted({r["elements"] for r in t3}):
            so, h = by.get((n, "second-order")), by.get((n, "hamiltonian"))
            if so and h:
                body.append([str(n)] + [f"{h[p]['wall'] / so[p]['wall']:.2f}" for p in paths]
                            + [f"{MATLAB['hamilton'][n] / MATLAB['lagrange'][n]:.2f}"])
        out += [md_table(hdr, body), ""]
    sz = run.get("size")
    if sz:
        out += ["### Size: dense and TS time per step (second-order, dt = 1e-5, set-up "
                "excluded)", ""]
        out += [md_table(["unknowns", "frame", "dense [ms/step]", "ts [ms/step]",
                          "dense / ts", "load"],
                         [[str(r["unknowns"]), r["frame"], f"{r['dense'] * 1e3:.3f}",
                           f"{r['ts'] * 1e3:.3f}", f"{r['ratio']:.2f}", str(r["load"])]
                          for r in sz]), ""]
    return "\n".join(out)


def main():
    p = parser(__doc__, load=1.0, max_wait=300.0)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--studies", default="table3,size")
    p.add_argument("--elements", default="5,10,15,20,25")
    p.add_argument("--t-end", type=float, default=0.1)
    p.add_argument("--dt0", type=float, default=1e-4)
    p.add_argument("--tol", type=float, default=1e-3)
    p.add_argument("--max-halvings", type=int, default=7)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--slow-repeats", type=int, default=1)
    p.add_argument("--size-elements", default="25,50,100,150,200")
    p.add_argument("--size-steps", type=int, default=110)
    p.add_argument("--size-load", choices=("sine", "constant"), default="sine",
                   help="the size study's end load: F0 sin(wf t) (taken from the system at "
                   "every time on the varying dense path) or F0 (combined from unit loads)")
    p.add_argument("--paths", default=",".join(PATHS),
                   help="the paths of the table3 study (exact alone needs no dt search)")
    p.add_argument("--json-out")
    args = p.parse_args()
    if args.quick:
        args.elements, args.t_end, args.repeats = "5", 0.004, 1
        args.size_elements, args.size_steps, args.max_wait = "25", 20, 0.0
    args.elements = [int(x) for x in args.elements.split(",")]
    args.paths = [x for x in args.paths.split(",") if x]
    args.size_elements = [int(x) for x in args.size_elements.split(",")]
    studies = [s for s in args.studies.split(",") if s]
    t0 = time.perf_counter()
    run = dict(date=utc_now(), nproc=COMM.size, studies=studies, quick=args.quick,
               command=command_line(COMM.size), machine=machine(), versions=versions(),
               git=git_rev(), loadavg_start=loadavg(), t_end=args.t_end, tol=args.tol,
               dt0=args.dt0, omp_threads=os.environ.get("OMP_NUM_THREADS"))
    run["load_wait"] = wait_for_load(args.load_threshold, args.max_wait)
    m, _ = I.rod_model(2)  # warm the JIT cache (not timed)
    m.solve_static()
    for form in FORMS:
        for path in args.paths:
            m.integrate(t_end=2e-4, dt=1e-4, formulation=form, progress=False, **kw_of(path))
    if "size" in studies:
        log("study: size")
        run["size"] = study_size(args)
    if "table3" in studies:
        log("study: seed 003's Table 3")
        run["table3"] = study_table3(args)
    run["loadavg_end"] = loadavg()
    run["wall"] = gmax(time.perf_counter() - t0)
    if RANK == 0:
        md = markdown(run)
        print(md)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(run, indent=1))
        if not args.quick and not args.no_write:
            append_results("dense", run, md, "Small systems: the dense paths of integrate",
                           results=args.results_dir)


if __name__ == "__main__":
    sys.exit(main())
