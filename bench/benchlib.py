"""What the benchmark studies share: the run's context (machine, versions, git revision, load,
command line), timing and memory figures, tables, the results files, starting a study in a
fresh process (serial or under mpiexec) and the flags every study takes.

Importable without MPI or DOLFINx (drivers that only start workers use it): the collective
helpers work on ``comm`` or, by default, on MPI.COMM_WORLD once the process has imported mpi4py,
and on this process alone before that.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


# --- the run's context -------------------------------------------------------------------

def cmd(args) -> str:
    """stdout of a short command, or a note of its failure."""
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception as e:  # pragma: no cover
        return f"({args[0]} failed: {e})"


LSCPU = ("Architecture", "Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket",
         "Socket(s)", "L1d cache", "L2 cache", "L3 cache", "Hypervisor vendor", "BogoMIPS")


def machine() -> dict:
    info = {}
    for line in cmd(["lscpu"]).splitlines():
        k, _, v = line.partition(":")
        if k.strip() in LSCPU:
            info[k.strip()] = v.strip()
    mem = ""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    return dict(lscpu=info, nproc=cmd(["nproc", "--all"]), nproc_bound=cmd(["nproc"]),
                memory=mem, hostname=platform.node(), kernel=platform.release(),
                python=platform.python_version())


def versions() -> dict:
    """The versions of the stack this process runs (imports DOLFINx and dolfinx_mbs)."""
    import basix
    import dolfinx
    import ffcx
    import petsc4py
    import ufl
    from mpi4py import MPI
    from petsc4py import PETSc

    import dolfinx_mbs

    return dict(dolfinx=dolfinx.__version__, petsc=".".join(map(str, PETSc.Sys.getVersion())),
                petsc4py=petsc4py.__version__, ufl=ufl.__version__, ffcx=ffcx.__version__,
                basix=basix.__version__, numpy=np.__version__,
                mpi=MPI.Get_library_version().replace("\x00", "").splitlines()[0].strip(),
                dolfinx_mbs=getattr(dolfinx_mbs, "__version__", "?"),
                petsc_int_bytes=PETSc.IntType(0).itemsize)


def git_rev(root: Path = ROOT) -> str:
    rev = cmd(["git", "-C", str(root), "rev-parse", "--short", "HEAD"])
    dirty = cmd(["git", "-C", str(root), "status", "--porcelain", "--", "dolfinx_mbs"])
    return rev + (" (dolfinx_mbs/ modified)" if dirty else "")


def loadavg() -> list:
    return open("/proc/loadavg").read().split()[:3]


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def command_line(nproc: int = 1) -> str:
    """How this process was started: python <script> <args>, behind mpirun -n N under MPI."""
    script = Path(sys.argv[0]).resolve()
    if script.is_relative_to(ROOT):
        script = script.relative_to(ROOT)
    line = shlex.join(["python", str(script)] + sys.argv[1:])
    return line if nproc == 1 else f"mpirun -n {nproc} {line}"


def machine_line(m: dict) -> str:
    """Markdown bullet of a machine() description."""
    cpu = m["lscpu"]
    return (f"- machine: {cpu.get('Model name', '?')}, {m['nproc']} CPUs "
            f"({cpu.get('Core(s) per socket', '?')} cores/socket, "
            f"{cpu.get('Thread(s) per core', '?')} thread/core, "
            f"{cpu.get('Hypervisor vendor', 'no')} VM), L2 {cpu.get('L2 cache', '?')}, "
            f"L3 {cpu.get('L3 cache', '?')}, memory {m['memory']}; kernel {m['kernel']}, "
            f"Python {m['python']}")


def versions_line(v: dict) -> str:
    """Markdown bullet of a versions() record (older records lack some entries)."""
    bits = f" ({v['petsc_int_bytes'] * 8}-bit indices)" if "petsc_int_bytes" in v else ""
    names = dict(dolfinx="DOLFINx", petsc="PETSc", petsc4py="petsc4py", ufl="UFL", ffcx="FFCx",
                 basix="Basix", numpy="NumPy")
    return ("- " + ", ".join(f"{name} {v[k]}" + (bits if k == "petsc" else "")
                             for k, name in names.items() if k in v) + f"; {v.get('mpi', '')}")


def context_lines(run: dict) -> list:
    """Markdown bullets: machine, versions, dolfinx_mbs revision and command of ``run`` (its
    keys machine, versions, git, command)."""
    v = run.get("versions") or {}
    return [machine_line(run["machine"]), versions_line(v),
            f"- dolfinx_mbs {v.get('dolfinx_mbs', '?')} at {run['git']}; command: "
            f"`{run['command']}`"]


# --- the spinning bar of integration.py's scaling study (and of commits.py) ----------------

BAR = dict(L=1.0, W=0.1, E=210e9, nu=0.3, density=7850.0, omega=15.0, traction=1e6, wf=200.0)
BAR_PROBE = (1.0, 0.05, 0.05)  # the tip


def bar_dofs(n: int) -> int:
    return 3 * (10 * n + 1) * (n + 1) ** 2


def bar_cells(target: float) -> int:
    """n (10n x n x n hexahedra) whose dof count is closest to target."""
    return min(range(1, 80), key=lambda n: abs(bar_dofs(n) - target))


def bar_model(n: int, comm=None):
    """(model, body): the bar of 10n x n x n hexahedra of degree 1, spinning about z, root
    clamped, tip traction (0, traction sin(wf t), 0); the package's public API only."""
    import dolfinx.mesh as dmesh

    import dolfinx_mbs as mbs

    L, W = BAR["L"], BAR["W"]
    mesh = dmesh.create_box(comm or world(), [np.zeros(3), np.array([L, W, W])],
                            [10 * n, n, n], dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=BAR["E"], nu=BAR["nu"], density=BAR["density"])
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=BAR["omega"]),
                    degree=1)
    body.add_traction(lambda t: (0.0, BAR["traction"] * np.sin(BAR["wf"] * t), 0.0),
                      where=lambda x: np.isclose(x[0], L))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model, body


# --- MPI-aware measurement ---------------------------------------------------------------

def world():
    """MPI.COMM_WORLD once this process has imported mpi4py, else None (one process)."""
    mpi = sys.modules.get("mpi4py.MPI")
    return None if mpi is None else mpi.COMM_WORLD


def rank(comm=None) -> int:
    comm = comm or world()
    return 0 if comm is None else comm.rank


def log(*a) -> None:
    if rank() == 0:
        print(*a, flush=True)


def _reduce(x, op: str, comm):
    comm = comm or world()
    if comm is None or comm.size == 1:
        return x
    from mpi4py import MPI

    return comm.allreduce(x, op=getattr(MPI, op))


def gmax(x: float, comm=None) -> float:
    return _reduce(float(x), "MAX", comm)


def gmin(x: float, comm=None) -> float:
    return _reduce(float(x), "MIN", comm)


def gsum(x, comm=None):
    return _reduce(x, "SUM", comm)


def barrier(comm=None) -> None:
    comm = comm or world()
    if comm is not None:
        comm.Barrier()


def timed(fn, comm=None):
    """(wall time of fn(), max over ranks, barriers on both sides; its result)."""
    barrier(comm)
    t0 = time.perf_counter()
    out = fn()
    barrier(comm)
    return gmax(time.perf_counter() - t0, comm), out


def median_of(fn, repeats: int, comm=None) -> tuple:
    """(median, all) of ``repeats`` timed calls of fn."""
    ts = [timed(fn, comm)[0] for _ in range(repeats)]
    return statistics.median(ts), ts


def step_times(stamps, warm: int = 1, comm=None) -> dict:
    """Step times from one time stamp per monitor call (call 0 = the initial state, then one
    per step): mean over the steps after the ``warm`` first ones (span / steps) and their
    median, the warm-up, each step's duration (all max over ranks) and the slowest step."""
    s = np.array(stamps)
    d = np.diff(s[warm:])
    dur = np.diff(s)
    comm = comm or world()
    if comm is not None and comm.size > 1:
        from mpi4py import MPI

        loc, dur = dur.copy(), np.empty_like(dur)
        comm.Allreduce(loc, dur, op=MPI.MAX)
    late = len(dur) > warm
    if not late:
        raise ValueError(f"step_times: {len(s)} stamps, none after {warm} warm-up step(s)")
    return dict(per_step=gmax(s[-1] - s[warm], comm) / len(d),
                per_step_median=gmax(float(np.median(d)), comm),
                warmup=gmax(s[warm] - s[0], comm), steps_timed=len(d),
                durations=[float(x) for x in dur],
                slowest_step=int(warm + np.argmax(dur[warm:])),
                slowest=float(np.max(dur[warm:])))


def callgrind(*opts: str) -> None:
    """``callgrind_control *opts <this process>`` when ``BENCH_CALLGRIND`` is set in the
    environment (bench/instructions.py runs the workers under valgrind's callgrind with the
    counting off, and they turn it on with ``callgrind("-i", "on")`` where the measured part
    starts, off and dump with ``callgrind("-i", "off")``, ``callgrind("-d")`` where it ends);
    nothing otherwise."""
    if os.environ.get("BENCH_CALLGRIND"):
        subprocess.run(["callgrind_control", *opts, str(os.getpid())], capture_output=True,
                       check=True)


def wait_for_load(threshold: float, max_wait: float, step: float = 30.0, comm=None) -> dict:
    """Sleep until the 1-minute load average is <= threshold (rank 0 reads it), at most
    max_wait seconds; returns what happened."""
    comm = comm or world()
    before = loadavg()
    t0 = time.perf_counter()
    while True:
        load, waited = float(loadavg()[0]), time.perf_counter() - t0
        done = load <= threshold or waited >= max_wait
        if (comm.bcast(done if comm.rank == 0 else None, root=0) if comm else done):
            break
        log(f"  load {load:.2f} > {threshold:g}: waiting {step:.0f} s ({waited:.0f} s so far, "
            f"at most {max_wait:.0f} s)")
        time.sleep(step)
    return dict(before=before, after=loadavg(), seconds=time.perf_counter() - t0,
                threshold=threshold)


def load_text(run: dict) -> str:
    """Markdown bullet: the load at start (and the wait for it) and at end."""
    w = run.get("load_wait")
    waited = ""
    if w and w["seconds"] >= 1:
        missed = "" if float(w["after"][0]) <= w["threshold"] else ", not reached: ran anyway"
        waited = (f" (waited {w['seconds']:.0f} s for the 1-minute load to drop to "
                  f"{w['threshold']:g}: {w['before'][0]} -> {w['after'][0]}{missed})")
    return (f"- load average at start {' '.join(run['loadavg_start'])}{waited}, at end "
            f"{' '.join(run['loadavg_end'])}")


# --- memory ------------------------------------------------------------------------------

def rss() -> tuple:
    """(current, peak) resident set of this process, bytes (the peak resettable, see
    reset_peak_rss)."""
    cur = peak = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
    return cur, peak


def rss_sum(comm=None) -> tuple:
    """rss() summed over ranks."""
    cur, peak = rss()
    return gsum(cur, comm), gsum(peak, comm)


def max_rss() -> int:
    """Peak resident set of this process since its start (getrusage), bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) of this process; False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def release_heap() -> None:
    """Hand freed heap memory back to the system (glibc malloc_trim), so that the resident-set
    figures of a later case are not hidden by what an earlier one left in the heap."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


# --- tables and results files ------------------------------------------------------------

def md_table(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def load_runs(path: Path, key: str | None = None) -> list:
    """The runs recorded in a results JSON (a list, or a dict holding it under ``key``)."""
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return data[key] if key else data


def save_runs(path: Path, runs: list, key: str | None = None) -> None:
    """Write the runs back in the file's layout; a final newline if the file had one."""
    end = "\n" if not path.exists() or path.read_text().endswith("\n") else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({key: runs} if key else runs, indent=1, default=str) + end)


def append_results(name: str, run, markdown: str, title: str, results: Path = RESULTS,
                   intro: str | None = None, key: str | None = None) -> list:
    """Append ``run`` to <results>/<name>.json and ``markdown`` to <name>.md (headed by
    ``title`` and ``intro``, by default a line naming the script, when the file is new);
    returns all runs."""
    results = Path(results)
    jpath, mpath = results / f"{name}.json", results / f"{name}.md"
    runs = load_runs(jpath, key) + [run]
    save_runs(jpath, runs, key)
    intro = intro or f"Written by `bench/{name}.py` (see its docstring for the method)."
    head = "" if mpath.exists() else f"# {title}\n\n{intro}\n\n"
    with open(mpath, "a") as f:
        f.write(head + markdown + "\n")
    return runs


# --- starting a study in fresh processes -------------------------------------------------

ENV = dict(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")


def launcher(ranks: int, python: str = sys.executable) -> list:
    """The command prefix that starts ``ranks`` ranks of ``python``'s MPI ([] for one):
    dolfinx_mbs.compat.mpiexec_command of this tree."""
    if ranks <= 1:
        return []
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from dolfinx_mbs.compat import mpiexec_command

    return mpiexec_command(ranks, python)


def launch(args: list, ranks: int = 1, python: str = sys.executable, timeout=None,
           env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``python args`` in a fresh process (``ranks`` MPI ranks), output captured;
    subprocess.TimeoutExpired after ``timeout`` seconds."""
    cmd_ = launcher(ranks, python) + [python] + [str(a) for a in args]
    return subprocess.run(cmd_, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **ENV, **(env or {})))


def run_json(args: list, out_flag: str = "--json-out", **kw) -> dict:
    """launch(args + [out_flag, <a temporary file>]) and the JSON the process wrote there;
    RuntimeError with the tail of its stderr when it failed."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "run.json"
        p = launch(list(args) + [out_flag, out], **kw)
        if p.returncode != 0 or not out.exists():
            raise RuntimeError(f"{shlex.join(map(str, args))} ({kw.get('ranks', 1)} rank(s)) "
                               f"failed ({p.returncode}):\n{p.stderr[-3000:]}")
        return json.loads(out.read_text())


# --- the flags every study takes ---------------------------------------------------------

def parser(doc: str, load: float | None = 0.5, load_flag: str = "--load-threshold",
           max_wait: float | None = 600.0,
           results_flags=("--results-dir",)) -> argparse.ArgumentParser:
    """An ArgumentParser described by the docstring's first paragraph, with --no-write,
    the results directory and, unless None, the load threshold and the longest wait for it."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    if load is not None:
        p.add_argument(load_flag, dest="load_threshold", type=float, default=load,
                       help="wait at start until the 1-minute load average is at most this")
    if max_wait is not None:
        p.add_argument("--max-wait", type=float, default=max_wait,
                       help="seconds to wait at most for the load (then run anyway)")
    p.add_argument("--no-write", action="store_true", help="print only, write no results")
    p.add_argument(*results_flags, dest="results_dir", type=Path, default=RESULTS,
                   help="directory of the results files (default bench/results)")
    return p
