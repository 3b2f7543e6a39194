"""What the benchmarks share: the machine's description, the git revision, the load average and
Markdown tables (no MPI, no DOLFINx: importable by drivers that only start workers)."""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cmd(args) -> str:
    """stdout of a short command, or a note of its failure."""
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception as e:  # pragma: no cover
        return f"({args[0]} failed: {e})"


def machine() -> dict:
    info = {}
    for line in cmd(["lscpu"]).splitlines():
        k, _, v = line.partition(":")
        if k.strip() in ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket",
                         "L2 cache", "L3 cache", "Hypervisor vendor"):
            info[k.strip()] = v.strip()
    mem = ""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    return dict(lscpu=info, nproc=cmd(["nproc", "--all"]), memory=mem,
                kernel=platform.release(), python=platform.python_version())


def git_rev() -> str:
    rev = cmd(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = cmd(["git", "-C", str(ROOT), "status", "--porcelain", "--", "dolfinx_mbs"])
    return rev + (" (dolfinx_mbs/ modified)" if dirty else "")


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


def md_table(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def append_results(name: str, run, markdown: str, title: str) -> list:
    """Append ``run`` to bench/results/<name>.json and ``markdown`` to <name>.md (headed by
    ``title`` and a line naming the script when the file is new); returns all runs."""
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    jpath = results / f"{name}.json"
    runs = json.loads(jpath.read_text()) if jpath.exists() else []
    runs.append(run)
    jpath.write_text(json.dumps(runs, indent=1))
    mpath = results / f"{name}.md"
    head = "" if mpath.exists() else (
        f"# {title}\n\nWritten by `bench/{name}.py` (see its docstring for the method).\n\n")
    with open(mpath, "a") as f:
        f.write(head + markdown + "\n")
    return runs

