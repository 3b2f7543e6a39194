"""Benchmark: the three formulations at ~1e6 dofs with GAMG (the 2n forms on their Schur
complement) against the plain DOLFINx loop with GMRES + GAMG: time per step and peak
memory, each case in its own processes.

    python bench/schur_gamg.py --ranks 2 --size 1e6 --steps 5     # every case, one after another
    python bench/schur_gamg.py --ranks 2 --size 1e4 --steps 3 --no-write   # a smoke run
    mpirun -n 2 python bench/schur_gamg.py --case first-order --size 1e4 --json-out r.json

The model is the spinning bar of ``bench/integration.py``'s scaling study (10n x n x n
hexahedra of degree 1, root clamped, tip traction, 15 rad/s about z; n from ``--size`` as
there), dt = 1e-4 s, one warm-up step (assembly, GAMG set-up) and ``--steps`` timed steps,
measured as in that study (``integration.mbs_steps``: the monitor's time stamps, energy
monitor on, divergence check off unless ``--stability warn``: it factorizes the stiffness;
``integration.plain_newmark``: Newmark average acceleration on the same mesh).
Solver of every case: the scaling study's iterative one, ``-mbs_ksp_type gmres -mbs_pc_type
gamg -mbs_ksp_rtol 1e-10`` with the rigid-body modes as GAMG's near null space: for the
second-order form and the plain loop on the step matrix; for the first-order and Hamilton
forms the same options put GMRES + GAMG on the Schur complement S on n unknowns
(:mod:`dolfinx_mbs.integrate.ts.step_solvers`), the 2n step solved by the exact Schur factorization.

Memory: each case runs in fresh processes (``--ranks`` ranks); its peak resident set (VmHWM)
summed over the ranks, whole processes (interpreter and libraries included; the RSS after the
imports is given too). The driver starts a case only when the machine has ``--min-free-gib``
available (``MemAvailable``), else it waits up to ``--max-wait`` and records the case as
skipped. Results: bench/results/schur_gamg.json and .md (machine, versions, load).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from benchlib import (ROOT, append_results, bar_cells, bar_dofs, context_lines, git_rev,
                      loadavg, log, machine, md_table, parser, run_json, utc_now, versions)

CASES = ("plain", "second-order", "first-order", "hamiltonian")
DT = 1e-4


def mem_available_gib() -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def worker(args) -> dict:
    """One case in this process set: build, run, figures (rank 0 writes the JSON)."""
    from benchlib import gsum, rss, timed
    from mpi4py import MPI

    import integration as bi  # the scaling study's model, step timing and plain loop

    comm = MPI.COMM_WORLD
    n = bar_cells(args.size)
    rss_imports = gsum(rss()[0])
    if args.case == "plain":
        import dolfinx.mesh as dmesh
        import numpy as np

        import dolfinx_mbs as mbs
        from benchlib import BAR

        def build():  # the mesh and the space only: no model
            mesh = dmesh.create_box(comm, [np.zeros(3), np.array([BAR["L"], BAR["W"],
                                                                   BAR["W"]])],
                                    [10 * n, n, n], dmesh.CellType.hexahedron)
            mat = mbs.materials.LinearElastic(E=BAR["E"], nu=BAR["nu"],
                                              density=BAR["density"])
            return mbs.Body(mesh, mat, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=0.0),
                            degree=1)

        t_build, body = timed(build)
        res = bi.plain_newmark(body, DT, args.steps, bi.ITERATIVE)
    else:
        t_build, (model, body) = timed(lambda: bi.bar_model(n))
        res, _ = bi.mbs_steps(model, args.case, DT, args.steps, bi.ITERATIVE,
                              stability=args.stability, stepper=args.stepper)
    cur, peak = rss()
    res.update(case=args.case, stability=args.stability, stepper=res.get("stepper", "plain"),
               n=n, dofs=bar_dofs(n),
               nproc=comm.size, build=t_build,
               rss_imports=rss_imports, rss_end=gsum(cur), rss_peak=gsum(peak),
               rss_peak_ranks=comm.gather(peak))
    return res


def gib(x) -> str:
    return f"{x / 2**30:.2f}"


def markdown(run: dict) -> str:
    rows, notes = [], []
    plain = run["cases"].get("plain")
    for case in CASES:
        r = run["cases"].get(case)
        if r is None or "per_step" not in r:
            notes.append(f"- {case}: {run['skipped'].get(case, 'not run')}")
            continue
        rel_t = rel_m = "—"
        if plain and "per_step" in plain:
            rel_t = f"{r['per_step'] / plain['per_step']:.2f}"
            rel_m = f"**{r['rss_peak'] / plain['rss_peak']:.2f}**"
        rows.append([f"{case} ({r.get('stepper', 'ts')})", f"{r['dofs']:,}",
                     f"{r['per_step'] * 1e3:.0f} "
                     f"({r['per_step_median'] * 1e3:.0f})", f"{r['warmup']:.1f}",
                     rel_t, gib(r["rss_peak"]), " + ".join(gib(x) for x in r["rss_peak_ranks"]),
                     gib(r["rss_imports"]), rel_m, f"{r['build']:.1f}",
                     f"{r['load_before'][0]} / {r['load_after'][0]}"])
    hdr = ["case (path)", "dofs", "ms/step mean (median)", "warm-up step [s]", "time / plain",
           "peak RSS, sum over ranks [GiB]", "per rank [GiB]", "RSS after imports [GiB]",
           "peak RSS / plain", "build [s]", "load before / after"]
    out = [f"## {run['date']}: {run['nproc']} MPI process(es), ~{run['size']:g} dofs, "
           f"{run['steps']} timed steps", "", *context_lines(run),
           f"- load average at start {' '.join(run['loadavg_start'])}, at end "
           f"{' '.join(run['loadavg_end'])}; total wall {run['wall']:.0f} s", "",
           md_table(hdr, rows), "", *notes,
           "- solver: GMRES + GAMG, rtol 1e-10, rigid-body near null space; on the TS path "
           "(the path in brackets) the first-order and Hamilton forms put it on their Schur "
           "complement S (n unknowns), the 2n step by the exact elimination of its a I block "
           "(`-mbs_pc_type gamg`, dolfinx_mbs.integrate.ts.schur_shell); on the linear path (second-order "
           "and Hamilton forms with `stepper=\"auto\"`) on the n-unknown step matrix; plain: "
           "Newmark on K + 4/dt^2 M. dt = 1e-4 s, energy monitor on, divergence check "
           f"(`stability=`) {run['stability']!r}.",
           "- ms/step: (time after the last step - time after the warm-up step) / steps, max "
           "over ranks; warm-up: the first step (assembly, GAMG set-up).",
           "- peak RSS: VmHWM of each rank's process (whole process, from start to end of the "
           "case), summed; each case in fresh processes."]
    return "\n".join(out) + "\n"


def driver(args) -> None:
    from mpi4py import MPI  # before DOLFINx: its libraries need the MPI loaded

    if MPI.COMM_WORLD.size > 1:
        raise SystemExit("the driver runs in one process: give --ranks (or --case for a worker)")

    run = dict(date=utc_now(), nproc=args.ranks, size=args.size, steps=args.steps,
               stability=args.stability,
               command="python bench/schur_gamg.py " + " ".join(sys.argv[1:]),
               machine=machine(), versions=versions(), git=git_rev(), loadavg_start=loadavg(),
               cases={}, skipped={})
    t0 = time.perf_counter()
    for case in args.cases.split(","):
        waited = 0.0
        while mem_available_gib() < args.min_free_gib and waited < args.max_wait:
            time.sleep(30)
            waited += 30
        free = mem_available_gib()
        if free < args.min_free_gib:
            run["skipped"][case] = f"skipped: {free:.1f} GiB available (< {args.min_free_gib})"
            log(f"{case}: {run['skipped'][case]}")
            continue
        before = loadavg()
        log(f"{case}: ~{args.size:g} dofs on {args.ranks} rank(s), load {before[0]}, "
            f"{free:.1f} GiB available")
        try:
            r = run_json([Path(__file__).resolve(), "--case", case, "--size", args.size,
                          "--steps", args.steps, "--stability", args.stability,
                          "--stepper", args.stepper],
                         ranks=args.ranks, timeout=args.timeout)
        except Exception as e:  # a failed or killed case is recorded, the others still run
            run["skipped"][case] = f"failed: {str(e).splitlines()[0][:300]}"
            log(f"{case}: {run['skipped'][case]}")
            continue
        r.update(load_before=before, load_after=loadavg(), mem_available_before=free)
        run["cases"][case] = r
        log(f"{case}: {r['per_step'] * 1e3:.0f} ms/step (median "
            f"{r['per_step_median'] * 1e3:.0f}), warm-up {r['warmup']:.1f} s, peak RSS "
            f"{gib(r['rss_peak'])} GiB over ranks, build {r['build']:.1f} s")
    run["loadavg_end"] = loadavg()
    run["wall"] = time.perf_counter() - t0
    md = markdown(run)
    print(md)
    if not args.no_write:
        append_results("schur_gamg", run, md, "First-order and Hamilton forms at scale: GAMG "
                       "on the Schur complement", args.results_dir)
        print(f"written: {args.results_dir}/schur_gamg.json, .md")


def main():
    p = parser(__doc__, load=None, max_wait=600.0)
    p.add_argument("--case", choices=CASES, help="run this case here (a worker)")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--size", type=float, default=1e6)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--min-free-gib", type=float, default=12.0)
    p.add_argument("--timeout", type=float, default=3600.0, help="per case (s)")
    p.add_argument("--stability", default="off", choices=("off", "warn"),
                   help="integrate's divergence check (it factorizes the stiffness)")
    p.add_argument("--stepper", default="auto", choices=("auto", "ts"),
                   help="integrate's stepper (auto: what a user gets, the linear path for the "
                        "second-order and Hamilton forms)")
    p.add_argument("--json-out", type=Path)
    args = p.parse_args()
    if args.case is None:
        return driver(args)
    res = worker(args)
    from mpi4py import MPI

    if MPI.COMM_WORLD.rank == 0 and args.json_out:
        args.json_out.write_text(json.dumps(res, default=float))


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    main()
