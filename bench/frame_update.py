"""Benchmark: the cost of a new frame state for BodyOperators, against compilation and first
assembly.

    python bench/frame_update.py                       # serial
    mpirun -n 2 python bench/frame_update.py           # 2 ranks
    python bench/frame_update.py --sizes 1e4 --degrees 1 --no-write   # quick check

For 3D hexahedral box meshes (the unit cube, in the body's local coordinates, n x n x n cells),
vector Lagrange of degree 1 and 2, and about 1e4, 1e5 and 1e6 dofs, it measures

* ``compile_warm``: ``BodyOperators.timings["compile"]`` (``fem.form`` of the five bilinear forms
  and the load form) with the FFCx/JIT disk cache already holding these forms (a warm-up
  ``BodyOperators`` on a tiny mesh of the same degree fills it). This is the number reported.
* ``compile_cold`` (once per degree, on the smallest mesh): the same six ``fem.form`` calls with
  a fresh, empty JIT cache directory, i.e. including the FFCx code generation and the C
  compilation. Element/dofmap modules (compiled when the function space is created) are not in
  either number.
* ``first_assembly``: ``BodyOperators.timings["first_assembly"]``: creating all five matrices
  and the load vector, and assembling mass and stiffness. Split for reference into
  ``create_matrix_one`` (one ``fem.petsc.create_matrix``, i.e. one sparsity pattern) and
  ``duplicate_one`` (``Mat.duplicate`` of an existing matrix).
* ``update_spinup``: wall time of ``ops.update(state)`` for SpinUp states during the ramp (omega
  and alpha both change: gyroscopic, spin softening and angular acceleration are re-assembled,
  and the load), median over ``--repeats`` calls after one untimed call; with its split
  ``update_matrices`` / ``update_load`` from ``ops.timings``.
* ``update_constant``: the same for ConstantSpin states after a first call (omega unchanged,
  alpha zero: only the load vector is re-assembled), median.
* ``assemble_stiffness``: reference, zeroEntries + ``fem.petsc.assemble_matrix`` of the stiffness
  form into the existing stiffness matrix + final ``Mat.assemble``, median. Likewise
  ``assemble_mass`` and ``assemble_gyroscopic`` (one frame matrix alone), and ``mat_axpy``
  (one ``MatAXPY`` with SAME_NONZERO_PATTERN between two of the operators' matrices).

Every timed region is bracketed by MPI barriers and timed with ``time.perf_counter``; the
figure reported is the maximum over ranks (for the ``ops.timings`` splits too).

The 1e6-dof cases are run only if an extrapolation from the 1e5-dof case of the same degree
(memory summed over ranks and wall time, both scaled by the dof ratio) stays below
``--mem-limit-gib`` (10) and ``--time-limit`` (300 s); otherwise they are recorded as skipped,
with the estimate. ``--force`` runs them anyway.

Results: a table on rank 0, a Markdown section appended to bench/results/frame_update.md and a
run appended to bench/results/frame_update.json (machine, date, versions, process count).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import logging

import numpy as np
from mpi4py import MPI

import dolfinx
import dolfinx.fem.petsc as fpetsc
import dolfinx.mesh as dmesh
from dolfinx import fem
from petsc4py import PETSc

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import dolfinx_mbs as mbs  # noqa: E402
from dolfinx_mbs.operators import BodyOperators  # noqa: E402

logging.getLogger().setLevel(logging.WARNING)  # cffi's "building extension" chatter

# count the JIT compilations (cache misses), so that a "warm" compile can be checked to be one
import ffcx.codegeneration.jit as _ffcx_jit  # noqa: E402

JIT_BUILDS = [0]
_compile_objects = _ffcx_jit._compile_objects


def _counting_compile(*a, **k):
    JIT_BUILDS[0] += 1
    return _compile_objects(*a, **k)


_ffcx_jit._compile_objects = _counting_compile

COMM = MPI.COMM_WORLD
RANK = COMM.rank
SAME = PETSc.Mat.Structure.SAME_NONZERO_PATTERN

MATERIAL = dict(E=210e9, nu=0.3, density=7850.0)
SPINUP = dict(axis=(0.0, 0.0, 1.0), final_rate=6.0, ramp_time=15.0)
CONSTANT = dict(axis=(0.0, 0.0, 1.0), rate=6.0)


def log(*a):
    if RANK == 0:
        print(*a, flush=True)


# --- measurement helpers -------------------------------------------------------------------

def timed(fn):
    """(max over ranks of the wall time of fn(), its result), barriers on both sides."""
    COMM.Barrier()
    t0 = time.perf_counter()
    out = fn()
    COMM.Barrier()
    dt = time.perf_counter() - t0
    return COMM.allreduce(dt, op=MPI.MAX), out


def gmax(x: float) -> float:
    return COMM.allreduce(float(x), op=MPI.MAX)


def rss_bytes() -> tuple[int, int]:
    """(current, peak) resident set size of this process, bytes."""
    cur = peak = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
    return cur, peak


def rss_sum() -> tuple[int, int]:
    cur, peak = rss_bytes()
    return COMM.allreduce(cur, op=MPI.SUM), COMM.allreduce(peak, op=MPI.SUM)


def mat_nnz(A: PETSc.Mat) -> int:
    return int(A.getInfo(PETSc.Mat.InfoType.GLOBAL_SUM)["nz_allocated"])


def destroy_ops(ops: BodyOperators) -> None:
    """Collective: destroy every PETSc object of ``ops`` on all ranks at the same point."""
    for A in ops.mats.values():
        A.destroy()
    ops.Q.destroy()
    if ops._D is not None:
        ops._D.destroy()
    gc.collect()
    COMM.Barrier()


# --- cases ---------------------------------------------------------------------------------

def cells_per_side(target_dofs: float, degree: int) -> int:
    """n such that 3 (degree n + 1)^3 is closest to target_dofs."""
    side = (target_dofs / 3.0) ** (1.0 / 3.0)
    return max(1, int(round((side - 1.0) / degree)))


def make_body(n: int, degree: int):
    mesh = dmesh.create_box(COMM, [np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0])],
                            [n, n, n], dmesh.CellType.hexahedron)
    frame = mbs.frames.SpinUp(**SPINUP)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(**MATERIAL), frame, degree=degree)
    body.set_gravity((0.0, -9.81, 0.0))
    return body


def compile_cold(degree: int) -> float:
    """The six fem.form calls of BodyOperators with an empty JIT cache directory."""
    body = make_body(2, degree)
    tmp = tempfile.mkdtemp(prefix="mbs_jit_cold_") if RANK == 0 else None
    tmp = COMM.bcast(tmp, root=0)
    jit = {"cache_dir": tmp}

    def go():
        forms = [fem.form(a, jit_params=jit) for a in body.bilinear_forms().values()]
        forms.append(fem.form(body.load_form(), jit_params=jit))
        return forms

    dt, _ = timed(go)
    COMM.Barrier()
    if RANK == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    return dt


def warm_up(degree: int) -> float:
    """A BodyOperators on a tiny mesh: fills the JIT cache; returns its compile time."""
    body = make_body(2, degree)
    ops = BodyOperators(body)
    t = gmax(ops.timings["compile"])
    ops.update(body.frame.state(1.0))
    destroy_ops(ops)
    return t


def median_of(fn, repeats: int) -> tuple[float, list]:
    ts = [timed(fn)[0] for _ in range(repeats)]
    return statistics.median(ts), ts


def run_case(degree: int, target: float, repeats: int) -> dict:
    n = cells_per_side(target, degree)
    rss0, _ = rss_sum()
    t_case0 = time.perf_counter()
    cpu0 = time.process_time()
    t_mesh, body = timed(lambda: make_body(n, degree))
    dofs = body.V.dofmap.index_map.size_global * body.V.dofmap.index_map_bs
    ncells = body.mesh.topology.index_map(3).size_global
    log(f"  degree {degree}, n = {n}: {ncells} cells, {dofs} dofs")

    builds0 = COMM.allreduce(JIT_BUILDS[0], op=MPI.SUM)
    t_ops, ops = timed(lambda: BodyOperators(body))
    jit_builds = COMM.allreduce(JIT_BUILDS[0], op=MPI.SUM) - builds0
    r = dict(degree=degree, target_dofs=target, n=n, cells=ncells, dofs=dofs,
             mesh_and_space=t_mesh, construct_total=t_ops,
             compile_warm=gmax(ops.timings["compile"]),
             first_assembly=gmax(ops.timings["first_assembly"]),
             jit_builds_in_compile=jit_builds)
    if jit_builds:
        # the disk cache missed (another process may have changed ~/.cache/fenics): keep that
        # figure, and time the same six fem.form calls again, now against a filled cache
        r["compile_with_builds"] = r["compile_warm"]
        forms = list(body.bilinear_forms().values()) + [body.load_form()]
        r["compile_warm"], _ = timed(lambda: [fem.form(a) for a in forms])
        log(f"  note: {jit_builds} JIT build(s) in BodyOperators' compile "
            f"({r['compile_with_builds']:.2f} s); re-timed warm: {r['compile_warm'] * 1e3:.1f} ms")
    r["nnz_per_matrix"] = mat_nnz(ops.K)
    r["matrices_bytes_est"] = 5 * r["nnz_per_matrix"] * (8 + PETSc.IntType(0).itemsize)

    # SpinUp during the ramp: omega and alpha change at every state
    spin = mbs.frames.SpinUp(**SPINUP)
    ops.update(spin.state(0.5))  # untimed: first call
    walls, mats, loads = [], [], []
    for k in range(repeats):
        st = spin.state(1.0 + k)
        assert np.any(st.alpha != 0.0) and st.t < SPINUP["ramp_time"]
        dt, _ = timed(lambda: ops.update(st))
        walls.append(dt)
        mats.append(gmax(ops.timings["update_matrices"]))
        loads.append(gmax(ops.timings["update_load"]))
    r["update_spinup"] = statistics.median(walls)
    r["update_spinup_all"] = walls
    r["update_spinup_matrices"] = statistics.median(mats)
    r["update_spinup_load"] = statistics.median(loads)

    # ConstantSpin: after the first call, omega is unchanged and alpha stays zero
    const = mbs.frames.ConstantSpin(**CONSTANT)
    r["update_constant_first"], _ = timed(lambda: ops.update(const.state(0.0)))
    walls, mats, loads = [], [], []
    for k in range(repeats):
        st = const.state(1.0 + k)
        dt, _ = timed(lambda: ops.update(st))
        walls.append(dt)
        mats.append(gmax(ops.timings["update_matrices"]))
        loads.append(gmax(ops.timings["update_load"]))
    r["update_constant"] = statistics.median(walls)
    r["update_constant_all"] = walls
    r["update_constant_matrices"] = statistics.median(mats)
    r["update_constant_load"] = statistics.median(loads)

    # references: plain assemblies into the existing matrices (same steps as BodyOperators)
    def reassemble(name):
        A, a = ops.mats[name], ops.forms[name]

        def go():
            A.zeroEntries()
            fpetsc.assemble_matrix(A, a)
            A.assemble()
        return go

    r["assemble_stiffness"], r["assemble_stiffness_all"] = median_of(reassemble("stiffness"),
                                                                     repeats)
    r["assemble_mass"], _ = median_of(reassemble("mass"), max(3, repeats // 2))
    r["assemble_gyroscopic"], _ = median_of(reassemble("gyroscopic"), max(3, repeats // 2))
    Ka, G = ops.mats["angular_acceleration"], ops.mats["gyroscopic"]
    r["mat_axpy"], _ = median_of(lambda: Ka.axpy(1.0, G, structure=SAME), max(3, repeats // 2))

    # matrix creation: one sparsity pattern vs a duplicate of an existing matrix
    t, A = timed(lambda: fpetsc.create_matrix(ops.forms["stiffness"]))
    r["create_matrix_one"] = t
    A.destroy()
    t, A = timed(lambda: ops.K.duplicate())
    r["duplicate_one"] = t
    A.destroy()

    r["ratio_update_first_assembly"] = r["update_spinup"] / r["first_assembly"]
    r["ratio_update_stiffness"] = r["update_spinup"] / r["assemble_stiffness"]
    r["ratio_constant_first_assembly"] = r["update_constant"] / r["first_assembly"]
    rss1, peak = rss_sum()
    r["rss_delta_bytes"] = rss1 - rss0
    r["peak_rss_bytes"] = peak
    destroy_ops(ops)
    del ops, body
    gc.collect()
    COMM.Barrier()
    r["case_wall"] = gmax(time.perf_counter() - t_case0)
    # CPU time / wall time of the case (min over ranks): well below 1 means the process
    # waited (other load on the machine, or MPI waits), and the timings are less reliable
    r["cpu_fraction"] = COMM.allreduce((time.process_time() - cpu0) / r["case_wall"], op=MPI.MIN)
    r["loadavg_after"] = open("/proc/loadavg").read().split()[:3]
    r["status"] = "ok"
    return r


# --- machine description -------------------------------------------------------------------

def _cmd(args) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception as e:  # pragma: no cover
        return f"({args[0]} failed: {e})"


def machine() -> dict:
    lscpu = _cmd(["lscpu"])
    keep = ("Architecture", "Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket",
            "Socket(s)", "L1d cache", "L2 cache", "L3 cache", "Hypervisor vendor", "BogoMIPS")
    info = {}
    for line in lscpu.splitlines():
        k, _, v = line.partition(":")
        if k.strip() in keep:
            info[k.strip()] = v.strip()
    mem = ""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    return dict(lscpu=info, nproc=_cmd(["nproc", "--all"]),
                nproc_bound=_cmd(["nproc"]), memory=mem, hostname=platform.node(),
                kernel=platform.release(), python=platform.python_version())


def versions() -> dict:
    import ffcx
    import ufl
    import basix
    return dict(dolfinx=dolfinx.__version__, petsc=".".join(map(str, PETSc.Sys.getVersion())),
                petsc4py=__import__("petsc4py").__version__, ufl=ufl.__version__,
                ffcx=ffcx.__version__, basix=basix.__version__,
                mpi=MPI.Get_library_version().replace("\x00", "").splitlines()[0].strip(),
                dolfinx_mbs=mbs.__version__, petsc_int_bytes=PETSc.IntType(0).itemsize)


def git_rev() -> str:
    rev = _cmd(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = _cmd(["git", "-C", str(ROOT), "status", "--porcelain", "--", "dolfinx_mbs"])
    return rev + (" (dolfinx_mbs/ modified)" if dirty else "")


# --- output --------------------------------------------------------------------------------

def ms(x):
    return "—" if x is None else (f"{x * 1e3:.1f}" if x < 10 else f"{x * 1e3:.0f}")


COLUMNS = [
    ("deg", lambda r: str(r["degree"])),
    ("n", lambda r: str(r["n"])),
    ("dofs", lambda r: f"{r['dofs']:,}"),
    ("compile warm [ms]", lambda r: ms(r["compile_warm"])),
    ("first assembly [ms]", lambda r: ms(r["first_assembly"])),
    ("update SpinUp [ms]", lambda r: ms(r["update_spinup"])),
    ("(matrices / load)", lambda r: f"{ms(r['update_spinup_matrices'])} / "
                                    f"{ms(r['update_spinup_load'])}"),
    ("update ConstantSpin [ms]", lambda r: ms(r["update_constant"])),
    ("update / first asm", lambda r: f"{r['ratio_update_first_assembly']:.2f}"),
    ("K assembly [ms]", lambda r: ms(r["assemble_stiffness"])),
    ("update / K asm", lambda r: f"{r['ratio_update_stiffness']:.2f}"),
]

EXTRA = [
    ("deg", lambda r: str(r["degree"])),
    ("dofs", lambda r: f"{r['dofs']:,}"),
    ("mesh+space [ms]", lambda r: ms(r["mesh_and_space"])),
    ("create_matrix x1 [ms]", lambda r: ms(r["create_matrix_one"])),
    ("duplicate x1 [ms]", lambda r: ms(r["duplicate_one"])),
    ("M asm [ms]", lambda r: ms(r["assemble_mass"])),
    ("G asm [ms]", lambda r: ms(r["assemble_gyroscopic"])),
    ("MatAXPY [ms]", lambda r: ms(r["mat_axpy"])),
    ("JIT builds in warm compile", lambda r: str(r["jit_builds_in_compile"])),
    ("ConstantSpin 1st call [ms]", lambda r: ms(r["update_constant_first"])),
    ("nnz/matrix", lambda r: f"{r['nnz_per_matrix']:,}"),
    ("RSS delta [MiB]", lambda r: f"{r['rss_delta_bytes'] / 2**20:.0f}"),
    ("case wall [s]", lambda r: f"{r['case_wall']:.1f}"),
    ("CPU/wall", lambda r: f"{r['cpu_fraction']:.2f}"),
]


def md_table(rows, columns) -> str:
    head = "| " + " | ".join(c for c, _ in columns) + " |"
    sep = "|" + "|".join("---:" for _ in columns) + "|"
    body = ["| " + " | ".join(f(r) for _, f in columns) + " |" for r in rows]
    return "\n".join([head, sep] + body)


def text_table(rows, columns) -> str:
    cells = [[c for c, _ in columns]] + [[f(r) for _, f in columns] for r in rows]
    w = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(s.rjust(w[i]) for i, s in enumerate(row)) for row in cells]
    lines.insert(1, "  ".join("-" * x for x in w))
    return "\n".join(lines)


def markdown_section(run: dict) -> str:
    ok = [r for r in run["cases"] if r["status"] == "ok"]
    skipped = [r for r in run["cases"] if r["status"] != "ok"]
    m, v = run["machine"], run["versions"]
    cpu = m["lscpu"]
    out = [
        f"## {run['date']}: {run['nprocs']} MPI process{'es' if run['nprocs'] > 1 else ''}",
        "",
        f"- machine: {cpu.get('Model name', '?')}, {cpu.get('CPU(s)', '?')} CPUs "
        f"(nproc {m['nproc']}, {cpu.get('Core(s) per socket', '?')} cores/socket, "
        f"{cpu.get('Thread(s) per core', '?')} thread/core, {cpu.get('Hypervisor vendor', 'bare metal')}"
        f" VM), L2 {cpu.get('L2 cache', '?')}, L3 {cpu.get('L3 cache', '?')}, memory {m['memory']}; "
        f"kernel {m['kernel']}, Python {m['python']}",
        f"- DOLFINx {v['dolfinx']}, PETSc {v['petsc']} ({v['petsc_int_bytes'] * 8}-bit indices), "
        f"petsc4py {v['petsc4py']}, UFL {v['ufl']}, FFCx {v['ffcx']}, Basix {v['basix']}; "
        f"{v['mpi']}",
        f"- dolfinx_mbs {v['dolfinx_mbs']} at {run['git']}; command: `{run['command']}`",
        f"- unit cube, hexahedra, vector Lagrange; LinearElastic(E=210e9, nu=0.3, "
        f"density=7850); SpinUp(axis z, final_rate=6, ramp_time=15) states at t = 1..{run['repeats']} s; "
        f"ConstantSpin(rate=6) states after a first call; medians of {run['repeats']} "
        f"(max over ranks, barriers around each call)",
        "",
        md_table(ok, COLUMNS),
        "",
        "Reference timings:",
        "",
        md_table(ok, EXTRA),
        "",
    ]
    cold = ", ".join(f"degree {d}: {t:.2f} s" for d, t in run["compile_cold"].items())
    first = ", ".join(f"degree {d}: {t * 1e3:.0f} ms" for d, t in run["compile_first"].items())
    out.append(f"- compile: the table shows the **warm** JIT cache (forms already compiled on "
               f"disk). With an empty cache (FFCx + C compiler, six forms): {cold or 'not measured'}. "
               f"First BodyOperators of the process, tiny mesh: {first}.")
    out.append(f"- load average at start {' '.join(run['loadavg_start'])} on {m['nproc']} CPUs; "
               "CPU/wall is process CPU time over wall time per case (min over ranks): values "
               "well below 1 mean the process was waiting for a CPU, i.e. other load on the "
               "machine inflated the timings (under MPI, busy-waiting hides this).")
    for r in [r for r in ok if r.get("compile_with_builds") is not None]:
        out.append(f"- degree {r['degree']}, {r['dofs']:,} dofs: the JIT disk cache missed during "
                   f"BodyOperators' compile ({r['jit_builds_in_compile']} build(s), "
                   f"{r['compile_with_builds']:.2f} s); the table shows the re-timed warm compile.")
    for r in skipped:
        out.append(f"- skipped: degree {r['degree']}, ~{r['target_dofs']:.0e} dofs "
                   f"(n = {r['n']}, {r['dofs']:,} dofs): {r['reason']}")
    out.append("")
    return "\n".join(out) + "\n"


# --- main ----------------------------------------------------------------------------------

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1e4,1e5,1e6", help="target dof counts (comma list)")
    p.add_argument("--degrees", default="1,2")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--mem-limit-gib", type=float, default=10.0)
    p.add_argument("--time-limit", type=float, default=300.0, help="seconds, per case")
    p.add_argument("--force", action="store_true", help="run every size, no extrapolated skip")
    p.add_argument("--no-cold", action="store_true", help="skip the empty-cache compile")
    p.add_argument("--no-write", action="store_true", help="print only, write no results")
    p.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = p.parse_args(argv)
    sizes = sorted(float(s) for s in args.sizes.split(","))
    degrees = [int(d) for d in args.degrees.split(",")]

    run = dict(date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
               nprocs=COMM.size, command=" ".join([Path(sys.executable).name] + sys.argv),
               repeats=args.repeats, git=git_rev() if RANK == 0 else "",
               machine=machine() if RANK == 0 else {}, versions=versions(),
               compile_cold={}, compile_first={}, cases=[], rss_start_bytes=rss_sum()[0],
               loadavg_start=open("/proc/loadavg").read().split()[:3])
    log(f"frame_update benchmark: {COMM.size} process(es), DOLFINx {dolfinx.__version__}")

    for degree in degrees:
        if not args.no_cold:
            run["compile_cold"][degree] = compile_cold(degree)
            log(f"degree {degree}: compile with an empty JIT cache {run['compile_cold'][degree]:.2f} s")
        run["compile_first"][degree] = warm_up(degree)
        prev = None
        for target in sizes:
            n = cells_per_side(target, degree)
            dofs = 3 * (degree * n + 1) ** 3
            if prev is not None and not args.force:
                f = dofs / prev["dofs"]
                base = run["rss_start_bytes"]
                mem = base + f * max(prev["rss_delta_bytes"], prev["matrices_bytes_est"])
                wall = f * prev["case_wall"]
                if mem > args.mem_limit_gib * 2**30 or wall > args.time_limit:
                    reason = (f"extrapolated from {prev['dofs']:,} dofs: ~{mem / 2**30:.1f} GiB "
                              f"(limit {args.mem_limit_gib:g}), ~{wall:.0f} s (limit "
                              f"{args.time_limit:g} s)")
                    log(f"  degree {degree}, n = {n} ({dofs:,} dofs): skipped, {reason}")
                    run["cases"].append(dict(degree=degree, target_dofs=target, n=n, dofs=dofs,
                                             status="skipped", reason=reason,
                                             est_mem_bytes=mem, est_wall=wall))
                    continue
            r = run_case(degree, target, args.repeats)
            run["cases"].append(r)
            prev = r
            log(text_table([r], COLUMNS))

    ok = [r for r in run["cases"] if r["status"] == "ok"]
    log("\n" + text_table(ok, COLUMNS) + "\n\n" + text_table(ok, EXTRA))
    log(f"compile: warm cache in the table; empty cache: "
        + ", ".join(f"degree {d}: {t:.2f} s" for d, t in run["compile_cold"].items()))
    for r in run["cases"]:
        if r["status"] != "ok":
            log(f"skipped degree {r['degree']} {r['dofs']:,} dofs: {r['reason']}")

    if RANK == 0 and not args.no_write:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        md = out / "frame_update.md"
        if not md.exists():
            md.write_text("# Frame-state update cost of BodyOperators\n\n"
                          "Written by `bench/frame_update.py` (one section per run; times in ms, "
                          "see the script's docstring for what each column measures).\n\n")
        with md.open("a") as f:
            f.write(markdown_section(run))
        js = out / "frame_update.json"
        data = json.loads(js.read_text()) if js.exists() else {"runs": []}
        data["runs"].append(run)
        js.write_text(json.dumps(data, indent=1, default=str) + "\n")
        log(f"wrote {md} and {js}")


if __name__ == "__main__":
    main()
