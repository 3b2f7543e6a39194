r"""The ``dolfinx-mbs`` command: run a case described in a TOML file, or sweep its parameters.

    dolfinx-mbs run case.toml [--set key=value ...] [--json out.json]
    mpirun -n 4 dolfinx-mbs run case.toml              # the case on 4 ranks
    dolfinx-mbs sweep case.toml --set parameters.A=1e-5,2e-5 --set frame.rate=0:100:11 \
        [--ranks N] [--jobs J] [--out DIR] [--plot frequencies.w1]

Also ``python -m dolfinx_mbs.cli``. The case file: :mod:`dolfinx_mbs.cli.case`; the sweep:
:mod:`dolfinx_mbs.cli.sweep`. Exit status: 0 done, 1 the case (``run``) or some case (``sweep``)
failed, 2 a bad command line or case file, 3 (``run``) the case ran but the state is unstable:
a reported frequency is imaginary (a divergent mode, printed as a negative value -s, growth
rate s); the results are printed and written as for 0, the JSON file's ``unstable`` names
them, and a line on standard error says so. A sweep records such a case as done (the
negative frequencies in its results).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, List, Tuple, cast

if TYPE_CHECKING:
    from mpi4py import MPI

__all__ = ["main", "parser", "UNSTABLE"]

#: the exit status of ``run`` when the case ran and a reported frequency is imaginary
UNSTABLE = 3

_SET_HELP = ("set a value of the case: a dotted key (table.key, e.g. material.density, "
             "parameters.A, clamp.0.where) = a TOML value or an expression; repeatable")


def parser() -> argparse.ArgumentParser:
    """The command line's parser (``run`` and ``sweep`` subcommands)."""
    p = argparse.ArgumentParser(
        prog="dolfinx-mbs", description="Elastic bodies in moving frames (dolfinx_mbs): run a "
        "case described in a TOML file, or a sweep of its parameters.",
        epilog="Case files: the user guide's page 'Case files and sweeps' "
        "(docs/guide/80-cases-sweeps.md in the source tree) and the examples "
        "demos/cases/*.toml.")
    sub = p.add_subparsers(dest="command", metavar="{run,sweep}")
    sub.required = True
    r = sub.add_parser("run", help="run one case", description="Build the case of a TOML file "
                       "and run its analyses (static, frequencies, campbell, transient); print "
                       "the results. Under mpirun the case runs on all ranks.")
    r.add_argument("case", help="the case file (.toml)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=_SET_HELP)
    r.add_argument("--json", metavar="FILE", help="write the results (and status, error, "
                   "seconds) to this JSON file, also when the case fails")
    r.add_argument("--quiet", action="store_true", help="print nothing but errors")
    s = sub.add_parser("sweep", help="run a case over a grid of parameter values",
                       description="Run a case for every combination of the --set values "
                       "(a grid), writing one JSON line and one CSV row per case as it "
                       "finishes, and a plot at the end. A failed case is recorded with its "
                       "error and the sweep goes on. With --ranks 1 and --jobs 1 the cases "
                       "run one after another in this process; otherwise each is a separate "
                       "process (mpiexec -n RANKS python -m dolfinx_mbs.cli run ...), JOBS at "
                       "a time.")
    s.add_argument("case", help="the case file (.toml)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUES", required=True,
                   help="a swept key and its values: v1,v2,... or start:stop:count (count "
                        "evenly spaced values, ends included); several --set make a grid")
    s.add_argument("--fix", action="append", default=[], metavar="KEY=VALUE",
                   help="a value set in every case (as run's --set)")
    s.add_argument("--ranks", type=int, default=1, help="MPI ranks per case (default 1)")
    s.add_argument("--jobs", type=int, default=1, help="cases run at the same time, each a "
                   "separate process (default 1)")
    s.add_argument("--timeout", type=float, help="seconds after which a case run as a process "
                   "is killed and recorded as failed")
    s.add_argument("--out", metavar="DIR", help="output folder (default sweep_<case name>)")
    s.add_argument("--plot", metavar="RESULT", help="the result plotted, a CSV column such as "
                   "frequencies.w1 or static.tip.x (default: the first result column)")
    s.add_argument("--x", metavar="KEY", help="the swept key on the plot's x axis (default: "
                   "the first --set)")
    return p


def _assignments(texts: List[str], what: str, sweep: bool = False) -> List[Tuple[str, Any]]:
    from dolfinx_mbs.cli.casefile import is_range, parse_assignment, parse_value, sweep_values

    out = []
    for text in texts:
        try:
            key, value = parse_assignment(text)
            if not sweep and is_range(value):
                raise ValueError("a range start:stop:count is swept: dolfinx-mbs sweep ... "
                                 f"--set {key}={value}; {what} takes one value")
            out.append((key, sweep_values(value) if sweep else parse_value(value)))
        except ValueError as e:  # a bad command line: status 2, as argparse's own errors
            from mpi4py import MPI

            if MPI.COMM_WORLD.rank == 0:
                print(f"dolfinx-mbs: error: {what} {text!r}: {e}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None
    return out


def _writable(comm: MPI.Comm, path: str) -> bool:
    """True (on every rank) when rank 0 can write the file ``path``; else says why on stderr.

    Checked before the case runs, so that a run is not lost for want of its JSON file (a file
    the check creates is removed again).
    """
    why = None
    if comm.rank == 0:
        existed = os.path.exists(path)
        try:
            with open(path, "a"):
                pass
        except OSError as e:
            why = f"dolfinx-mbs: error: --json {path}: cannot write the results there ({e})"
        else:
            if not existed:
                os.unlink(path)
    why = comm.bcast(why, root=0)
    if why and comm.rank == 0:
        print(why, file=sys.stderr, flush=True)
    return why is None


def _run(args: argparse.Namespace) -> int:
    from mpi4py import MPI

    from dolfinx_mbs.cli.analyses import flatten, imaginary
    from dolfinx_mbs.cli.case import Case
    from dolfinx_mbs.cli.casefile import CaseError, describe

    comm = MPI.COMM_WORLD
    overrides = _assignments(args.set, "--set")
    record = {"case": args.case, "set": {k: v for k, v in overrides}, "ranks": comm.size}
    if args.json and not _writable(comm, args.json):
        return 2
    t0 = time.perf_counter()
    status = 0
    read = False
    try:
        case = Case(args.case, overrides)
        read = True
        record.update(status="ok", error="", results=case.run(
            comm, progress=not args.quiet and sys.stderr.isatty()).to_json())
        record["unstable"] = dict(imaginary(record["results"]))
        status = UNSTABLE if record["unstable"] else 0
    except Exception as e:  # noqa: BLE001 - reported, and in the JSON file
        record.update(status="failed", error=describe(e), results={})
        # a case file that cannot be read is bad input, as a bad one is
        status = 2 if isinstance(e, CaseError) or (isinstance(e, OSError) and not read) else 1
    record["seconds"] = time.perf_counter() - t0
    if comm.rank == 0:
        if args.json:
            try:
                with open(args.json, "w") as f:
                    json.dump(record, f, indent=1)
            except OSError as e:  # it was writable when the run began
                print(f"dolfinx-mbs: error: --json {args.json}: {e}", file=sys.stderr)
                status = status or 1
        if status and status != UNSTABLE and record["error"]:
            print(f"dolfinx-mbs: error: {record['error']}", file=sys.stderr, flush=True)
        elif not args.quiet:
            for k, v in flatten(record["results"]).items():
                print(f"{k} = {v:.10g}" if isinstance(v, float) else f"{k} = {v}")
            print(f"({record['seconds']:.2f} s on {comm.size} rank(s)"
                  f"{', results in ' + args.json if args.json else ''})", flush=True)
        if status == UNSTABLE:
            listed = ", ".join(f"{k} = {v:.6g}" for k, v in record["unstable"].items())
            print(f"dolfinx-mbs: the state is unstable: imaginary frequencies (divergent "
                  f"modes, growth rate = -value in 1/s): {listed}", file=sys.stderr,
                  flush=True)
    return cast(int, comm.bcast(status, root=0))  # rank 0's: it alone writes the JSON file


def _sweep(args: argparse.Namespace) -> int:
    from mpi4py import MPI

    from dolfinx_mbs.cli.analyses import flatten
    from dolfinx_mbs.cli.casefile import CaseError
    from dolfinx_mbs.cli.sweep import Sweep, plot

    comm = MPI.COMM_WORLD
    sets = _assignments(args.set, "--set", sweep=True)
    fixed = _assignments(args.fix, "--fix")
    out = args.out or f"sweep_{__import__('pathlib').Path(args.case).stem}"
    try:
        sw = Sweep(args.case, sets, out, ranks=args.ranks, jobs=args.jobs,
                   timeout=args.timeout, fixed=fixed, comm=comm, echo=True, show=args.plot)
        records = sw.run()
    except (CaseError, ValueError, OSError) as e:
        if comm.rank == 0:
            print(f"dolfinx-mbs: error: {e}", file=sys.stderr, flush=True)
        return 2
    failed = [r for r in records if r["status"] != "ok"]
    if comm.rank == 0:
        x = args.x or sets[0][0]
        if x not in dict(sets):
            print(f"dolfinx-mbs: no plot: --x {x} is not a swept key", file=sys.stderr)
        else:
            y = args.plot or next((k for r in records if r["status"] == "ok"
                                   for k, v in flatten(r["results"]).items()
                                   if isinstance(v, float)), None)
            why = (plot(records, x, y, sw.out / "plot.png", [k for k, _ in sets])
                   if y else "no case has a numeric result")
            print(f"no plot: {why}" if why else f"plot: {sw.out / 'plot.png'} ({y} against {x})")
        print(f"{len(records) - len(failed)} of {len(records)} cases done, {len(failed)} "
              f"failed; results in {sw.out / 'results.csv'} and {sw.out / 'results.jsonl'}",
              flush=True)
    return 1 if failed else 0


def main(argv: List[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    Args:
        argv: the arguments (None: ``sys.argv[1:]``).
    """
    args = parser().parse_args(argv)
    return _run(args) if args.command == "run" else _sweep(args)

