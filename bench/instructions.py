"""Benchmark: instructions per step of the same runs at two git commits, counted by valgrind.

    python bench/instructions.py --refs d923005,HEAD
    python bench/instructions.py --refs d923005,HEAD --bar-steps 3,6 --hub-steps 4,8 --no-write
                                                                 # end-to-end check

``bench/commits.py`` times steps; on a shared 2-core machine the same process's steps vary by
10-20 % between runs (another process's cache and memory traffic, the CPU's clock), more than
the 5 % a comparison of two commits needs. This study counts instead: each run is a fresh
process under valgrind's ``callgrind`` with the counting off; the worker turns it on after its
first (warm-up) step and off at the end of ``model.integrate``, and dumps the count
(``benchlib.callgrind``). The count does not depend on the machine's load. Each case runs at
two step counts N1 < N2 per ref, and

    instructions per step = (I(N2) - I(N1)) / (N2 - N1),

which cancels what a run does once (the last callback, the result's assembly). The cases:

* the spinning bar of ``bench/commits.py`` (its worker, this tree's script run with each ref's
  package: ``PYTHONPATH=<worktree>``), ``--size`` dofs, each of ``--formulations``;
* the hub-beam of ``bench/coupled.py`` (this tree's script with each ref's package): the
  torque-driven hub on a computed Hinge (coupled) and the same motion prescribed, each counted
  on its own.

Each ref gets a temporary detached ``git worktree`` (``commits.checkout``; removed at the
end). Both scripts must be the same at both refs for the counts to compare the package alone:
``git diff <ref> -- bench/commits.py bench/coupled.py`` shows what differs (the callgrind hooks
in the worker). Instruction counts are not times: a commit may move time between instructions
and memory stalls; they are what the package asks the machine to do, so equal counts with
unequal times point at the machine. One rank (valgrind under MPI is not set up here).
Results: bench/results/instructions.json and .md.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchlib import (ENV, ROOT, append_results, git_rev, loadavg, log, machine, machine_line,
                      md_table, parser, utc_now, versions, versions_line)
from commits import FORMULATIONS, checkout

HERE = Path(__file__).resolve().parent


def counted(script: list, tree: dict, out: str, timeout: float) -> list:
    """Run ``python script`` with ``tree``'s package under callgrind (counting off until the
    worker turns it on); the counts of the worker's dumps, in order."""
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
           f"--callgrind-out-file={out}", sys.executable] + [str(a) for a in script]
    env = dict(os.environ, **ENV, PYTHONPATH=tree["path"], BENCH_CALLGRIND="1",
               PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, script))} with {tree['ref']} failed "
                           f"({p.returncode}):\n{p.stderr[-3000:]}")
    dumps = sorted(glob.glob(out + ".*"), key=lambda f: int(f.rsplit(".", 1)[1]))
    counts = []
    for f in dumps:
        with open(f) as fh:
            total = [ln for ln in fh if ln.startswith(("totals:", "summary:"))]
        counts.append(int(total[-1].split()[1]))
    if not counts:
        raise RuntimeError(f"{script[0]} with {tree['ref']}: no callgrind dump (is the worker "
                           "calling benchlib.callgrind?)")
    return counts


def jobs(trees: list, args, tmp: str) -> list:
    """(label, ref, steps, names of the dumps, the worker's command) of every run."""
    out = []
    size = args.size
    for t in trees:
        for n in args.bar_steps:
            for form in args.formulations:
                out.append((f"bar {form}", t, n, [f"bar {form}"], [
                    HERE / "commits.py", "--worker", "--checkout", t["path"], "--size", size,
                    "--formulation", form, "--steps", n, "--dt", 1e-4, "--json-out",
                    Path(tmp) / f"bar_{t['sha']}_{form}_{n}.json"]))
        for n in args.hub_steps:
            out.append(("hub-beam", t, n, ["hub-beam coupled", "hub-beam prescribed"], [
                HERE / "coupled.py", "--size", "small", "--steps", n, "--repeats", 1,
                "--no-profile", "--json-out", Path(tmp) / f"hub_{t['sha']}_{n}.json"]))
    return out


def main():
    ap = parser(__doc__, load=None, max_wait=None)
    ap.add_argument("--refs", default="d923005,HEAD", help="two commits, old first")
    ap.add_argument("--size", default="1e4", help="the bar's dof count")
    ap.add_argument("--formulations", default=",".join(FORMULATIONS))
    ap.add_argument("--bar-steps", default="10,40", help="the bar's two step counts")
    ap.add_argument("--hub-steps", default="50,250", help="the hub-beam's two step counts")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once")
    ap.add_argument("--timeout", type=float, default=3600.0, help="per process (s)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("bench/instructions.py needs valgrind (apt install valgrind)")
    args.formulations = [f for f in args.formulations.split(",") if f]
    args.bar_steps, args.hub_steps = ([int(x) for x in s.split(",")]
                                      for s in (args.bar_steps, args.hub_steps))
    for name, s in (("--bar-steps", args.bar_steps), ("--hub-steps", args.hub_steps)):
        if len(s) != 2 or not 1 <= s[0] < s[1]:
            sys.exit(f"{name}: two step counts N1 < N2 expected, got {s}")
    if args.hub_steps[0] < 6:
        sys.exit(f"--hub-steps: at least 6 steps (the prescribed case samples the coupled "
                 f"run's angle at its steps), got {args.hub_steps}")
    refs = args.refs.split(",")
    if len(refs) != 2:
        sys.exit(f"--refs: two commits expected, got {args.refs!r}")
    tmp = tempfile.mkdtemp(prefix="instructions_")
    trees = [checkout(r, str(Path(tmp) / f"tree{i}")) for i, r in enumerate(refs)]
    run = dict(date=utc_now(), command="python bench/instructions.py " + " ".join(sys.argv[1:]),
               machine=machine(), versions=versions(), git=git_rev(), loadavg_start=loadavg(),
               refs=trees, size=args.size, bar_steps=args.bar_steps, hub_steps=args.hub_steps,
               counts={})
    try:
        todo = jobs(trees, args, tmp)

        def one(k_job):
            k, (label, t, n, names, script) = k_job
            counts = counted(script, t, str(Path(tmp) / f"callgrind_{k}.out"), args.timeout)
            if len(counts) != len(names):
                raise RuntimeError(f"{label}: {len(counts)} dumps, {len(names)} expected")
            for name, c in zip(names, counts):
                run["counts"].setdefault(name, {}).setdefault(t["sha"], {})[str(n)] = c
            log(f"{label:22s} {t['ref']:>10s} {n:4d} steps: "
                + ", ".join(f"{c:.4e}" for c in counts) + f" instructions (load {loadavg()[0]})")

        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            list(pool.map(one, enumerate(todo)))
    finally:
        for t in trees:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", t["path"]],
                           capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)
    run["loadavg_end"] = loadavg()
    text = markdown(run)
    print(text)
    if not args.no_write:
        append_results("instructions", run, text, "Instructions per step at two commits "
                       "(valgrind's callgrind)", args.results_dir)
        log(f"written: {args.results_dir}/instructions.json, .md")


def per_step(counts: dict, steps: list) -> float:
    """(I(N2) - I(N1)) / (N2 - N1) of one case and ref."""
    n1, n2 = steps
    return (counts[str(n2)] - counts[str(n1)]) / (n2 - n1)


def markdown(run: dict) -> str:
    a, b = run["refs"]
    la, lb = a["ref"], b["ref"]
    rows = []
    for name, by in run["counts"].items():
        steps = run["hub_steps"] if name.startswith("hub") else run["bar_steps"]
        ia, ib = (per_step(by[r["sha"]], steps) for r in (a, b))
        rows.append([name, f"{steps[0]}, {steps[1]}", f"{ia:.4e}", f"{ib:.4e}",
                     f"**{ib / ia:.4f}**"])
    head = [f"## {run['date']}: {la} ({a['sha']}) vs {lb} ({b['sha']}), instructions per step",
            "", machine_line(run["machine"]), versions_line(run["versions"])]
    head += [f"- {r['ref']} = {r['sha']}: " + (r["subject"] if len(r["subject"]) < 90
                                               else r["subject"][:88] + " ...") for r in (a, b)]
    head += [f"- command: `{run['command']}` (from {run['git']}); the bar: {run['size']} dofs; "
             "instructions counted by callgrind from the end of the first step to the end of "
             "`model.integrate`, per step = (I(N2) - I(N1)) / (N2 - N1), one rank; load at "
             f"start {' '.join(run['loadavg_start'])}, at end {' '.join(run['loadavg_end'])}",
             ""]
    return "\n".join(head + [md_table(["case", "steps N1, N2", f"{la} [instr/step]",
                                       f"{lb} [instr/step]", f"{lb} / {la}"], rows), ""])


if __name__ == "__main__":
    main()
