"""A sweep: a case file run over a grid of parameter values, each case's results written as it
finishes, a failed case recorded with its error while the others go on.

    records = Sweep("rod.toml", [("parameters.A", [1e-5, 2e-5]), ("frame.rate", [0, 100])],
                    out="sweep_rod", ranks=1, jobs=1).run()

How cases run (``ranks`` MPI ranks per case, ``jobs`` cases at a time):

* ``ranks == 1`` and ``jobs == 1``: one after the other in this process, on ``MPI.COMM_WORLD``
  (no start-up cost per case; the sweep may itself run under ``mpirun``, every case then on all
  its ranks). A case that crashes the interpreter (a segmentation fault) ends the sweep.
* otherwise: each case is a separate process, ``mpiexec -n ranks python -m dolfinx_mbs.cli run
  case.toml --set ... --json`` (the launcher of the interpreter's MPI,
  :func:`dolfinx_mbs.compat.mpiexec_command`; no launcher for one rank), ``jobs`` of them at a
  time, each with its log and JSON in ``out/cases/``, killed after ``timeout`` seconds. A crash
  or a hang is then that case's failure only. The sweep itself then runs on one process.

A case whose transient analysis writes its fields (``output = "stem"``) writes them, in a sweep,
to ``out/cases/case_<i>`` (``.csv``, ``_<body>.bp``) unless ``output`` is itself swept: the
cases would otherwise overwrite one another.

Written in ``out`` (rank 0): ``results.jsonl`` (one JSON line per case, appended as it
finishes: the values set, status, error, seconds, results), ``results.csv`` (one row per
finished case, its scalar results as columns: rewritten at every case, in case order, so that a
column that only a later case has still gets its header) and, at the end, ``plot.png``: a
result against the first swept parameter, one line per combination of the others.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from mpi4py import MPI

from dolfinx_mbs import checks, compat
from dolfinx_mbs.cli.analyses import flatten
from dolfinx_mbs.cli.casefile import describe

__all__ = ["Sweep", "value_text", "plot"]

_OUTPUT = ("analysis", "transient", "output")


def value_text(v: object) -> str:
    """A value as ``--set`` text that :func:`dolfinx_mbs.cli.casefile.parse_value` reads back.

    Args:
        v: the value.

    Returns:
        The text.
    """
    return v if isinstance(v, str) else json.dumps(v)


def _cell(v: object) -> int | float | str:
    return v if isinstance(v, (int, float, str)) else value_text(v)


class Sweep:
    """The grid of ``sets`` over a case file.

    Args:
        case: the TOML file.
        sets: ``(dotted key, values)`` per swept parameter; several make a grid (the first
            varies slowest).
        out: the output folder (made if missing).
        ranks: MPI ranks per case.
        jobs: cases run at the same time (separate processes).
        timeout: seconds after which a case run as a process is killed (None: no limit).
        fixed: ``(dotted key, value)`` set in every case (``run``'s ``--set``).
        comm: the communicator of in-process runs and of the files' writer (rank 0).
        echo: print a line per finished case (rank 0).
        show: the result printed in that line (a flattened key; default the first three).
    """

    def __init__(self, case: str | os.PathLike, sets: Sequence[Tuple[str, Sequence]],
                 out: str | os.PathLike, ranks: int = 1, jobs: int = 1,
                 timeout: float | None = None, fixed: Sequence[Tuple[str, object]] = (),
                 comm: MPI.Comm = MPI.COMM_WORLD, echo: bool = True,
                 show: str | None = None) -> None:
        self.case = Path(case)
        self.sets = [(k, list(v)) for k, v in sets]
        if not self.sets or any(not v for _, v in self.sets):
            raise ValueError("a sweep needs at least one --set key=v1,v2,... with values")
        keys = [k for k, _ in self.sets]
        if len(set(keys)) != len(keys):
            raise ValueError(f"a key is swept twice: {keys}")
        for name, n in (("ranks", ranks), ("jobs", jobs)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {n!r}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        self.out = Path(out)
        self.ranks, self.jobs, self.timeout = ranks, jobs, timeout
        self.fixed = list(fixed)
        self.comm = comm
        self.echo = echo
        self.show = show
        self.in_process = ranks == 1 and jobs == 1
        if not self.in_process and comm.size > 1:
            raise ValueError("a sweep whose cases run as separate MPI jobs (--ranks or --jobs "
                             "> 1) runs on one process: start it without mpirun")
        self.grid: List[Dict[str, object]] = [
            dict(zip(keys, combo)) for combo in itertools.product(*(v for _, v in self.sets))]
        self.records: List[Dict] = []
        self._outputs = False

    # -- running ------------------------------------------------------------------------------
    def check(self) -> None:
        """Read the case with every swept key at its first value (no model is built): a key
        that the case does not take raises :class:`dolfinx_mbs.cli.casefile.CaseError`."""
        from dolfinx_mbs.cli.case import Case

        case = Case(self.case, self.fixed + list(self.grid[0].items()))
        self._outputs = (case.get(_OUTPUT) is not None
                         and ".".join(_OUTPUT) not in dict(self.sets))

    def overrides(self, i: int, values: Dict) -> List[Tuple[str, object]]:
        """The ``--set`` values of case ``i``.

        The fixed ones, the swept ones and, for a case that writes fields, its own output stem.

        Args:
            i: the case's index.
            values: the case's swept values.

        Returns:
            ``[(key, value), ...]``.
        """
        own = [(".".join(_OUTPUT), str(self._case_file(i, "")))] if self._outputs else []
        return self.fixed + list(values.items()) + own

    def run(self) -> List[Dict]:
        """Run every case; returns the records (in case order), also written to ``out``."""
        self.check()
        with checks.collective(self.comm, f"--out {self.out}"):
            if self.comm.rank == 0:
                (self.out / "cases").mkdir(parents=True, exist_ok=True)
                (self.out / "results.jsonl").write_text("")
        if self.in_process:
            for i, values in enumerate(self.grid):
                self._finished(self._run_here(i, values))
        else:
            self._run_processes()
        self.records.sort(key=lambda r: r["case"])
        return self.records

    def _run_here(self, i: int, values: Dict) -> Dict:
        from dolfinx_mbs.cli.case import Case

        record = {"case": i, "set": values}
        t0 = time.perf_counter()
        try:
            results = Case(self.case, self.overrides(i, values)).run(self.comm)
            record.update(status="ok", error="", results=results.to_json())
        except Exception as e:  # noqa: BLE001 - the case fails, the sweep goes on
            record.update(status="failed", error=describe(e), results={})
        record["seconds"] = self.comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        return record

    def command(self, i: int, values: Dict) -> List[str]:
        """The command that runs case ``i`` as a process.

        Args:
            i: the case's index.
            values: the case's swept values.

        Returns:
            The command's words.
        """
        launcher = compat.mpiexec_command(self.ranks) if self.ranks > 1 else []
        sets = []
        for k, v in self.overrides(i, values):
            sets += ["--set", f"{k}={value_text(v)}"]
        return launcher + [sys.executable, "-m", "dolfinx_mbs.cli", "run", str(self.case),
                           *sets, "--json", str(self._case_file(i, ".json")), "--quiet"]

    def _case_file(self, i: int, suffix: str) -> Path:
        return self.out / "cases" / f"case_{i:04d}{suffix}"

    def _run_processes(self) -> None:
        (self.out / "cases").mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        here = str(Path(__file__).resolve().parents[2])  # this package first
        env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in env.get("PYTHONPATH", "")
                                                      .split(os.pathsep) if p])
        pending = list(enumerate(self.grid))
        running: Dict = {}
        while pending or running:
            while pending and len(running) < self.jobs:
                i, values = pending.pop(0)
                self._case_file(i, ".json").unlink(missing_ok=True)
                log = open(self._case_file(i, ".log"), "w")
                proc = subprocess.Popen(self.command(i, values), stdout=log,
                                        stderr=subprocess.STDOUT, env=env,
                                        start_new_session=True)
                running[proc] = (i, values, time.perf_counter(), log)
            time.sleep(0.05)
            for proc in list(running):
                i, values, t0, log = running[proc]
                late = self.timeout is not None and time.perf_counter() - t0 > self.timeout
                if proc.poll() is None and not late:
                    continue
                if late and proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                log.close()
                del running[proc]
                self._finished(self._collect(i, values, proc.returncode, late,
                                             time.perf_counter() - t0))

    def _collect(self, i: int, values: Dict, code: int, late: bool, seconds: float) -> Dict:
        record = {"case": i, "set": values, "status": "failed", "results": {},
                  "seconds": seconds}
        path = self._case_file(i, ".json")
        if late:
            record["error"] = (f"timed out after {self.timeout:g} s (log: "
                               f"{path.with_suffix('.log')})")
        elif path.is_file():
            done = json.loads(path.read_text())
            record.update(status=done["status"], error=done.get("error", ""),
                          results=done.get("results", {}))
        else:
            tail = path.with_suffix(".log").read_text().strip().splitlines()[-3:]
            record["error"] = (f"exit code {code} without a result; log: "
                               f"{' | '.join(tail) or '(empty)'}")
        return record

    # -- output -------------------------------------------------------------------------------
    def _finished(self, record: Dict) -> None:
        self.records.append(record)
        if self.comm.rank != 0:
            return
        with open(self.out / "results.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")
        self._write_csv()
        if self.echo:
            done = len(self.records)
            what = ", ".join(f"{k}={value_text(v)}" for k, v in record["set"].items())
            flat = flatten(record["results"])
            shown = [self.show] if self.show is not None and self.show in flat else [
                k for k, v in flat.items() if isinstance(v, float)][:3]
            tail = (record["error"] if record["status"] != "ok" else
                    "  ".join(f"{k}={flat[k]:.6g}" for k in shown))
            print(f"[{done}/{len(self.grid)}] case {record['case']} {record['status']} "
                  f"({record['seconds']:.1f} s) {what}: {tail}", flush=True)

    def columns(self) -> List[str]:
        """The CSV columns: case, the swept keys, status, seconds, the results, error."""
        keys = [k for k, _ in self.sets]
        results: List[str] = []
        for r in sorted(self.records, key=lambda r: r["case"]):
            for k in flatten(r["results"]):
                if k not in results:
                    results.append(k)
        return ["case"] + keys + ["status", "seconds"] + results + ["error"]

    def _write_csv(self) -> None:
        cols = self.columns()
        tmp = self.out / "results.csv.tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(cols)
            for r in sorted(self.records, key=lambda r: r["case"]):
                row = dict(flatten(r["results"]), case=r["case"], status=r["status"],
                           seconds=f"{r['seconds']:.3f}", error=r["error"], **r["set"])
                w.writerow([_cell(row.get(c, "")) for c in cols])
        os.replace(tmp, self.out / "results.csv")


def plot(records: Sequence[Dict], x: str, y: str, path: str | os.PathLike,
         swept: Sequence[str]) -> str | None:
    """A plot of the result ``y`` (a flattened key, e.g. ``frequencies.w1``) against the swept
    parameter ``x``, one line per combination of the other swept keys, failed cases left out;
    saved to ``path``. Returns None, or why there is no plot.

    Args:
        records: the sweep's records.
        x: the swept parameter.
        y: the result's flattened key.
        path: the image file.
        swept: the swept parameters.
    """
    from dolfinx_mbs.io.output import pyplot

    plt = pyplot()
    if plt is None:
        return "matplotlib is not installed"
    others = [k for k in swept if k != x]
    lines: Dict[tuple, List[Tuple[float, float]]] = {}
    for r in records:
        v = flatten(r["results"]).get(y)
        if r["status"] != "ok" or not isinstance(v, (int, float)):
            continue
        xv = r["set"][x]
        if not isinstance(xv, (int, float)):
            return f"the swept values of {x} are not numbers"
        lines.setdefault(tuple(value_text(r["set"][k]) for k in others), []).append((xv, v))
    if not lines:
        return f"no finished case has a number {y!r}"
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label, pts in sorted(lines.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                label=", ".join(f"{k}={v}" for k, v in zip(others, label)) or None)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if others:
        ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None
