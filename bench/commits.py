"""Benchmark: the same integration at two git commits of this repository, side by side.

    python bench/commits.py --refs bff995d,HEAD                  # serial
    python bench/commits.py --refs bff995d,HEAD --ranks 2        # 2 MPI ranks
    python bench/commits.py --refs bff995d,HEAD --sizes 2e3 --pairs 1 --results-dir /tmp/c
                                                                 # end-to-end check

Each ref (old first, new second) gets a temporary detached ``git worktree`` (removed at the
end; uncommitted changes are not in it). Every run is a fresh process of this interpreter with
``PYTHONPATH=<that worktree>``; the process checks that ``dolfinx_mbs`` was imported from that
worktree and fails otherwise. For each size and formulation the two refs alternate
(A B A B ...) over ``--pairs``, serially, each run ``--ranks`` ranks (the launcher of
``dolfinx_mbs.compat.mpiexec_command``).

The case is the spinning bar of ``bench/integration.py``'s scaling study (1 m x 0.1 m x
0.1 m, 10n x n x n hexahedra of degree 1, about ``--sizes`` dofs, LinearElastic(E=210e9,
nu=0.3, density=7850), ConstantSpin about z at 15 rad/s, root clamped, tip traction
(0, 1 MPa sin(200 t), 0), a probe at the tip), built and run with the public API only
(``Body``, ``Model``, ``model.clamp``, ``model.integrate``), so that both commits run the
same script. Each run integrates one formulation ("second-order", "first-order" or
"hamiltonian", their default schemes and solvers) for one warm-up step (Jacobian assembly
and factorization) and ``--steps`` timed steps at dt = ``--dt``; a time stamp per step comes
from ``integrate``'s ``callback`` (called once per step, on every rank). Time per step = (stamp
after the last step - stamp after the warm-up step) / steps, max over ranks. Peak memory =
``resource.getrusage`` max RSS of each rank at the end of the process (interpreter, DOLFINx,
model, integration), its maximum over ranks. Reported: medians over the pairs and the ratio
new / old; |u| at the end must agree between the refs (same motion).

With ``--table3 5,25`` each ref also runs its own ``bench/dense.py`` (seed 003's Table 3 study
on the rod of those element counts: the ``dense-fit`` path at the dt its search accepts and the
``exact`` path, three formulations; ``--repeats`` runs each, median) in a fresh process, the
refs alternating over ``--pairs``: wall times side by side and the tip errors of both.

With ``--coupled small`` (or dof counts) each ref also runs its own ``bench/coupled.py`` worker:
the Kane-Ryan-Banerjee hub-beam driven by a torque on a computed Hinge (a coupled run) and the
same motion given back as a prescribed frame, ``--coupled-steps`` steps each, the refs
alternating over ``--pairs``: the time per step of both cases side by side, and the tip's peak
of both refs (the same motion).

With ``--campbell 0.015`` (a mesh size of ``bench/campbell.py``'s rotor) each ref also runs its
own ``bench/campbell.py`` (``--campbell-speeds`` speeds, 6 branches, results into a temporary
directory), the refs alternating over ``--pairs``: set-up and sweep times side by side (medians)
and the largest relative difference between the two refs' frequencies.

With ``--free 2e3,2e4`` each ref also runs, in this script's worker and with the public API
only, a free elastic box in space (1 m x 0.2 m x 0.1 m, 10n x 2n x n hexahedra of degree 1,
about that many dofs, LinearElastic(E=2e7, nu=0.3, density=1000)) on a
:class:`~dolfinx_mbs.frames.Free` frame (position (0.5, 0, 0.2), turned by 0.4 rad about
(1, 2, 0), velocity (0.2, 0.1, 0), angular velocity about its intermediate axis, 4 rad/s, with
0.3 and 0.2 rad/s about the others), attached to the frame at |x| < 0.26, set vibrating by a
bending velocity (0, 0.2 x^2, 0.1 x^2): ``--free-steps`` steps at dt = 4e-3 s after a warm-up
step, in each of ``--formulations``: the time per step of both refs side by side, and the
frame's angular velocity at the end (the same motion).

Results: bench/results/commits.json (all runs) and a section appended to
bench/results/commits.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import (BAR_PROBE, ROOT, append_results, bar_cells, bar_dofs, bar_model,
                      callgrind, cmd, command_line, git_rev, launch, loadavg, log, machine,
                      machine_line, max_rss, md_table, parser, run_json, step_times, timed,
                      utc_now, versions, versions_line)

FORMULATIONS = ("second-order", "first-order", "hamiltonian")


# --- worker: one (ref, size, formulation) in its own process -----------------------------

def worker(args) -> None:
    import numpy as np
    from mpi4py import MPI

    import dolfinx_mbs as mbs

    comm = MPI.COMM_WORLD
    where = Path(mbs.__file__).resolve()
    if not where.is_relative_to(Path(args.checkout).resolve()):
        raise SystemExit(f"commits.py worker: dolfinx_mbs imported from {where}, not from the "
                         f"checkout {args.checkout} (PYTHONPATH={os.environ.get('PYTHONPATH')})")
    n = bar_cells(args.size)
    t_build, (model, _) = timed(lambda: bar_model(n))
    stamps, u_norm = [], []

    def stamp(t, u, v):
        stamps.append(time.perf_counter())
        u_norm[:] = [u.norm()]
        if len(stamps) == 2:            # after the warm-up step (bench/instructions.py)
            callgrind("-i", "on")

    wall, r = timed(lambda: model.integrate(
        t_end=(args.steps + 1) * args.dt, dt=args.dt, formulation=args.formulation,
        probes=[BAR_PROBE], progress=False, callback=stamp))
    callgrind("-i", "off")
    callgrind("-d")
    res = step_times(stamps)
    peak = comm.gather(max_rss(), root=0)
    res.update(module=str(where), size=args.size, n=n, dofs=bar_dofs(n),
               formulation=args.formulation, nproc=comm.size, build=t_build, integrate=wall,
               u_norm=u_norm[0], tip=np.asarray(r.probes)[-1].tolist(),
               max_rss=peak and max(peak), max_rss_ranks=peak, versions=versions())
    if comm.rank == 0:
        Path(args.json_out).write_text(json.dumps(res))


def free_worker(args) -> None:
    """One run of the free elastic box (module docstring), its JSON to ``args.json_out``."""
    import dolfinx.mesh as dmesh
    import numpy as np
    from dolfinx import fem
    from mpi4py import MPI

    import dolfinx_mbs as mbs

    comm = MPI.COMM_WORLD
    n = min(range(1, 60), key=lambda k: abs(free_dofs(k) - args.size))
    R0 = mbs.frames.rotation_about((1, 2, 0), 0.4)
    sat = mbs.frames.Free(position=(0.5, 0.0, 0.2), orientation=R0, velocity=(0.2, 0.1, 0.0),
                          angular_velocity=R0 @ np.array([0.3, 4.0, 0.2]), name="sat")
    msh = dmesh.create_box(comm, [np.array([-0.5, -0.1, -0.05]), np.array([0.5, 0.1, 0.05])],
                           [10 * n, 2 * n, n], dmesh.CellType.hexahedron)
    body = mbs.Body(msh, mbs.materials.LinearElastic(E=2e7, nu=0.3, density=1000.0), sat,
                    degree=1, name="box")
    model = mbs.Model([body])
    model.attach(body, lambda x: np.abs(x[0]) < 0.26)
    v0 = fem.Function(body.V)
    v0.interpolate(lambda x: np.vstack([0 * x[0], 0.2 * x[0] ** 2, 0.1 * x[0] ** 2]))
    stamps = []
    wall, r = timed(lambda: model.integrate(
        t_end=(args.steps + 1) * FREE_DT, dt=FREE_DT, formulation=args.formulation, v0=[v0],
        progress=False, callback=lambda *a: stamps.append(time.perf_counter())))
    res = step_times(stamps)
    res.update(size=args.size, n=n, dofs=free_dofs(n), formulation=args.formulation,
               nproc=comm.size, integrate=wall, omega=np.asarray(
                   r.frames["sat"].omega[-1]).tolist(), versions=versions())
    if comm.rank == 0:
        Path(args.json_out).write_text(json.dumps(res))


FREE_DT = 4e-3


def free_dofs(n: int) -> int:
    """The free box's dof count with 10n x 2n x n hexahedra of degree 1."""
    return 3 * (10 * n + 1) * (2 * n + 1) * (n + 1)


# --- driver --------------------------------------------------------------------------------

def alternate(trees: list, args, argv, label, more=lambda r: "") -> dict:
    """One case run by each ref in turn, ``args.pairs`` times (``argv(tree)``: the worker's
    command line): {"runs": {sha: [results]}, "dofs": ...}, each run logged."""
    case: dict = dict(runs={t["sha"]: [] for t in trees})
    for k in range(args.pairs):
        for t in trees:
            r = run_json(argv(t), ranks=args.ranks, timeout=args.timeout,
                         env=dict(PYTHONPATH=t["path"]))
            case["runs"][t["sha"]].append(r)
            case["dofs"] = r["dofs"]
            log(f"pair {k + 1}, {label(r)} {t['ref']:>10s}: {r['per_step'] * 1e3:8.2f} ms/step"
                f"{more(r)} (load {loadavg()[0]})")
    return case


def checkout(ref: str, where: str) -> dict:
    """A detached worktree of ``ref`` in ``where``; its short hash and subject."""
    sha = cmd(["git", "-C", str(ROOT), "rev-parse", "--verify", "--short", f"{ref}^{{commit}}"])
    if not sha or " " in sha:
        sys.exit(f"--refs: {ref!r} is no commit of {ROOT}")
    p = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", where, sha],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"git worktree add {where} {sha} failed:\n{p.stderr}")
    return dict(ref=ref, sha=sha, path=where,
                subject=cmd(["git", "-C", str(ROOT), "log", "-1", "--format=%s", sha]))


def mib(x):
    return f"{x / 2**20:.0f}"


def markdown(run: dict) -> str:
    a, b = run["refs"]
    la, lb = a["ref"], b["ref"]
    rows = []
    for c in run["cases"]:
        ta, tb = (statistics.median(x["per_step"] for x in c["runs"][r["sha"]])
                  for r in (a, b))
        ma, mb = (statistics.median(x["max_rss"] for x in c["runs"][r["sha"]])
                  for r in (a, b))
        ua, ub = (c["runs"][r["sha"]][-1]["u_norm"] for r in (a, b))
        rows.append([f"{c['dofs']:,}", c["formulation"], f"{ta * 1e3:.2f}", f"{tb * 1e3:.2f}",
                     f"**{tb / ta:.2f}**", mib(ma), mib(mb), f"{mb / ma:.2f}",
                     f"{abs(ub - ua) / max(abs(ua), 1e-300):.1e}"])
    head = [f"## {run['date']}: {la} ({a['sha']}) vs {lb} ({b['sha']}), {run['ranks']} "
            f"rank(s)", "", machine_line(run["machine"]), versions_line(run["versions"])]
    head += [f"- {r['ref']} = {r['sha']}: " + (r["subject"] if len(r["subject"]) < 90
                                               else r["subject"][:88] + " ...") for r in (a, b)]
    bar = (f"; the bar: {run['steps']} timed steps at dt = {run['dt']:g} s after a warm-up "
           "step, per step max over ranks; peak RSS = getrusage max RSS, max over ranks"
           if run["cases"] else "")
    head += [f"- command: `{run['command']}` (from {run['git']}); {run['pairs']} alternating "
             f"pair(s) of fresh processes per size and formulation, medians{bar}; load at "
             f"start {' '.join(run['loadavg_start'])}, at end "
             f"{' '.join(run['loadavg_end'])}", ""]
    hdr = ["dofs", "formulation", f"{la} [ms/step]", f"{lb} [ms/step]", f"{lb} / {la}",
           f"peak RSS {la} [MiB]", f"{lb} [MiB]", f"{lb} / {la}", "norm of u at end, rel. diff"]
    out = head + ([md_table(hdr, rows), ""] if rows else [])
    if run.get("coupled"):
        out += ["The hub-beam of `bench/coupled.py` (each ref's own script), "
                f"{run['coupled_steps']} steps: time per step after the first, the fastest of "
                "the worker's runs, then the median over the pairs; the tip's peak of the "
                "coupled run.", "", md_table(
                    ["size", "case", f"{la} [ms/step]", f"{lb} [ms/step]", f"{lb} / {la}",
                     f"tip peak {la}", f"tip peak {lb}"], coupled_rows(run)), ""]
    if run.get("free"):
        out += [f"The free elastic box (module docstring), {run['free_steps']} steps at dt = "
                f"{FREE_DT:g} s after a warm-up step: time per step, median over the pairs; "
                "the frame's angular velocity at the end, the largest difference between the "
                "refs.", "", md_table(
                    ["dofs", "formulation", f"{la} [ms/step]", f"{lb} [ms/step]", f"{lb} / {la}",
                     "omega at end, diff"], free_rows(run)), ""]
    if run.get("campbell"):
        out += [f"The Campbell sweep of `bench/campbell.py` (each ref's own script, "
                f"{run['campbell'][0]['speeds']} speeds, 6 branches): set-up (mesh, operators, "
                "prestress) and sweep, max over ranks, medians over the pairs; the largest "
                "relative difference between the refs' frequencies.", "", md_table(
                    ["mesh size", "dofs", f"set-up {la} [s]", f"set-up {lb} [s]",
                     f"sweep {la} [s]", f"sweep {lb} [s]", f"sweep {lb} / {la}",
                     "frequencies, rel. diff"], campbell_rows(run)), ""]
    if run.get("table3"):
        out += [f"Seed 003's Table 3 (`bench/dense.py` of each ref, rod, {run['t_end']} s): "
                "wall time of `model.integrate`, median of each process's repeats, then over "
                "the pairs; the error of the tip history against the exact semi-discrete "
                "solution.", "", md_table(
                    ["elements", "formulation", "path", "dt [s]", f"{la} [s]", f"{lb} [s]",
                     f"{lb} / {la}", f"error {la}", f"error {lb}"], table3_rows(run)), ""]
    return "\n".join(out)


def coupled_rows(run: dict) -> list:
    """The hub-beam's rows side by side: one per size and case (coupled, prescribed)."""
    a, b = (r["sha"] for r in run["refs"])
    rows = []
    for size in run["coupled_sizes"]:
        mine = {s: [x for x in run["coupled"][s] if x["size"] == size] for s in (a, b)}
        for case in ("coupled", "prescribed"):
            ta, tb = (statistics.median(x[case] for x in mine[s]) for s in (a, b))
            pa, pb = (mine[s][-1]["tip_peak"] for s in (a, b))
            rows.append([size, case, f"{ta * 1e3:.2f}", f"{tb * 1e3:.2f}", f"**{tb / ta:.2f}**",
                         f"{pa:.12g}", f"{pb:.12g}"])
    return rows


def campbell_pairs(trees: list, args, tmp: str) -> list:
    """Each ref's own bench/campbell.py per mesh size, the refs alternating over the pairs."""
    cases = []
    for size in [x for x in args.campbell.split(",") if x]:
        case: dict = dict(size=size, speeds=args.campbell_speeds,
                          runs={t["sha"]: [] for t in trees})
        for k in range(args.pairs):
            for t in trees:
                out = Path(tmp) / f"campbell_{t['sha']}_{size}_{k}"
                out.mkdir()
                p = launch([Path(t["path"]) / "bench" / "campbell.py", "--size", size,
                            "--speeds", args.campbell_speeds, "--results-dir", out],
                           ranks=args.ranks, timeout=args.timeout,
                           env=dict(PYTHONPATH=t["path"]))
                if p.returncode != 0:
                    raise RuntimeError(f"{t['ref']}'s bench/campbell.py failed:\n"
                                       f"{p.stderr[-3000:]}")
                r = json.loads((out / "campbell.json").read_text())[-1]
                case["runs"][t["sha"]].append(r)
                log(f"pair {k + 1}, Campbell {size} {t['ref']:>10s}: set-up {r['setup']:.1f} s,"
                    f" sweep {r['sweep']:.1f} s, {r['dofs']} dofs (load {loadavg()[0]})")
        cases.append(case)
    return cases


def campbell_rows(run: dict) -> list:
    """The Campbell sweeps side by side: one row per mesh size."""
    import numpy as np

    a, b = (r["sha"] for r in run["refs"])
    rows = []
    for c in run["campbell"]:
        sa, sb = (statistics.median(x["setup"] for x in c["runs"][s]) for s in (a, b))
        wa, wb = (statistics.median(x["sweep"] for x in c["runs"][s]) for s in (a, b))
        fa, fb = (np.array(c["runs"][s][-1]["frequencies"]) for s in (a, b))
        diff = float(np.abs(fa - fb).max() / np.abs(fa).max())
        rows.append([c["size"], str(c["runs"][a][-1]["dofs"]), f"{sa:.1f}", f"{sb:.1f}",
                     f"{wa:.1f}", f"{wb:.1f}", f"**{wb / wa:.2f}**", f"{diff:.1e}"])
    return rows


def free_rows(run: dict) -> list:
    """The free box's rows side by side: one per size and formulation."""
    import numpy as np

    a, b = (r["sha"] for r in run["refs"])
    rows = []
    for c in run["free"]:
        ta, tb = (statistics.median(x["per_step"] for x in c["runs"][s]) for s in (a, b))
        wa, wb = (np.array(c["runs"][s][-1]["omega"]) for s in (a, b))
        rows.append([f"{c['dofs']:,}", c["formulation"], f"{ta * 1e3:.2f}", f"{tb * 1e3:.2f}",
                     f"**{tb / ta:.2f}**", f"{np.abs(wa - wb).max():.1e}"])
    return rows


def table3_rows(run: dict) -> list:
    """The Table 3 study's rows side by side: one per elements, formulation and path."""
    a, b = (r["sha"] for r in run["refs"])
    rows = []
    first = run["table3"][a][0]
    for i, row in enumerate(first):
        for path in row["paths"]:
            wa, wb = (statistics.median(p[i]["paths"][path]["wall"] for p in run["table3"][s])
                      for s in (a, b))
            ea, eb = (run["table3"][s][-1][i]["paths"][path]["error"] for s in (a, b))
            rows.append([str(row["elements"]), row["formulation"], path,
                         f"{row['paths'][path]['dt']:.3e}", f"{wa:.3f}", f"{wb:.3f}",
                         f"**{wb / wa:.2f}**", f"{ea:.1e}", f"{eb:.1e}"])
    return rows


def main():
    ap = parser(__doc__, load=None, max_wait=None)
    ap.add_argument("--refs", default="bff995d,HEAD", help="two commits, old first")
    ap.add_argument("--sizes", default="1e4,1e5", help="target dof counts")
    ap.add_argument("--formulations", default=",".join(FORMULATIONS))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--dt", type=float, default=1e-4)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1800.0, help="per process (s)")
    ap.add_argument("--table3", default="", help="element counts of the Table 3 study of "
                    "bench/dense.py (e.g. 5,25; empty: not run)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each Table 3 case in "
                    "one process")
    ap.add_argument("--t-end", type=float, default=0.1, help="the Table 3 runs' end time")
    ap.add_argument("--coupled", default="", help="sizes of bench/coupled.py's hub-beam "
                    "('small' or dof counts; empty: not run)")
    ap.add_argument("--coupled-steps", type=int, default=100)
    ap.add_argument("--free", default="", help="dof counts of the free elastic box "
                    "(module docstring), run in each of --formulations")
    ap.add_argument("--free-steps", type=int, default=20)
    ap.add_argument("--campbell", default="", help="mesh sizes of bench/campbell.py's rotor "
                    "(each ref's own script)")
    ap.add_argument("--campbell-speeds", type=int, default=31)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--free-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--checkout", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--formulation", help=argparse.SUPPRESS)
    ap.add_argument("--json-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if args.free_worker:
        return free_worker(args)
    refs = [x for x in args.refs.split(",") if x]
    if len(refs) != 2:
        sys.exit("--refs: give exactly two commits, old first")
    sizes = [float(x) for x in args.sizes.split(",") if x]
    forms = [x for x in args.formulations.split(",") if x]

    tmp = tempfile.mkdtemp(prefix="mbs_commits_")
    trees = []
    try:
        trees = [checkout(r, os.path.join(tmp, f"{k}_{r.replace('/', '_')}"))
                 for k, r in enumerate(refs)]
        run = dict(date=utc_now(), command=command_line(), git=git_rev(), machine=machine(),
                   refs=[{k: v for k, v in t.items() if k != "path"} for t in trees],
                   ranks=args.ranks, pairs=args.pairs, steps=args.steps, dt=args.dt,
                   loadavg_start=loadavg(), cases=[])
        for size in sizes:
            for form in forms:
                case = alternate(trees, args, lambda t: [
                    Path(__file__).resolve(), "--worker", "--checkout", t["path"], "--size",
                    size, "--formulation", form, "--steps", args.steps, "--dt", args.dt],
                    lambda r: f"{r['dofs']:,} dofs, {form:12s}", lambda r: (
                        f", warm-up {r['warmup']:.2f} s, peak RSS {mib(r['max_rss'])} MiB"))
                case.update(size=size, formulation=form)
                run["cases"].append(case)
        if args.coupled:
            run["coupled_sizes"] = [x for x in args.coupled.split(",") if x]
            run["coupled_steps"] = args.coupled_steps
            run["coupled"] = {t["sha"]: [] for t in trees}
            for size in run["coupled_sizes"]:
                for k in range(args.pairs):
                    for t in trees:
                        r = run_json([Path(t["path"]) / "bench" / "coupled.py", "--size", size,
                                      "--steps", args.coupled_steps, "--repeats", 1,
                                      "--no-profile"], ranks=args.ranks,
                                     timeout=args.timeout, env=dict(PYTHONPATH=t["path"]))
                        run["coupled"][t["sha"]].append(dict(
                            size=size, coupled=r["coupled"]["per_step"],
                            prescribed=r["prescribed"]["per_step"], tip_peak=r["tip_peak"]))
                        log(f"pair {k + 1}, hub-beam {size} {t['ref']:>10s}: coupled "
                            f"{r['coupled']['per_step'] * 1e3:.2f} ms/step, prescribed "
                            f"{r['prescribed']['per_step'] * 1e3:.2f} ms/step "
                            f"(load {loadavg()[0]})")
        if args.free:
            run["free_steps"] = args.free_steps
            run["free"] = []
            for size in [float(x) for x in args.free.split(",") if x]:
                for form in forms:
                    case = alternate(trees, args, lambda t: [
                        Path(__file__).resolve(), "--free-worker", "--size", size,
                        "--formulation", form, "--steps", args.free_steps],
                        lambda r: f"free box {r['dofs']:,} dofs, {form:12s}")
                    case.update(size=size, formulation=form)
                    run["free"].append(case)
        if args.campbell:
            run["campbell"] = campbell_pairs(trees, args, tmp)
        if args.table3:
            run["t_end"] = args.t_end
            run["table3"] = {t["sha"]: [] for t in trees}
            for k in range(args.pairs):
                for t in trees:
                    r = run_json([Path(t["path"]) / "bench" / "dense.py", "--studies", "table3",
                                  "--paths", "dense-fit,exact", "--elements", args.table3,
                                  "--repeats", args.repeats, "--t-end", args.t_end,
                                  "--max-wait", 0, "--no-write"], ranks=1,
                                 timeout=args.timeout, env=dict(PYTHONPATH=t["path"]))
                    run["table3"][t["sha"]].append(r["table3"])
                    run.setdefault("versions", r["versions"])
                    log(f"pair {k + 1}, Table 3 {t['ref']:>10s}: " + ", ".join(
                        f"{x['elements']} {x['formulation']} {p} {v['wall']:.3f} s"
                        for x in r["table3"] for p, v in x["paths"].items()))
        if run["cases"]:
            run["versions"] = run["cases"][0]["runs"][trees[0]["sha"]][0]["versions"]
        run.setdefault("versions", versions())
        run["loadavg_end"] = loadavg()
    finally:
        for t in trees:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", t["path"]],
                           capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)
    text = markdown(run)
    print(text)
    if not args.no_write:
        append_results("commits", run, text, "The same integration at two commits, side by "
                       "side", args.results_dir)
        log(f"written: {args.results_dir}/commits.json, .md")


if __name__ == "__main__":
    main()
