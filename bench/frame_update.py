"""Benchmark: the cost of a new frame state for BodyOperators, against compilation and first
assembly, for both strategies of forming the frame matrices ("assemble" and "basis").

    python bench/frame_update.py                       # serial
    mpirun -n 2 python bench/frame_update.py           # 2 ranks
    python bench/frame_update.py --sizes 1e4 --degrees 1 --no-write   # quick check
    python bench/frame_update.py --sizes-for 2:1e4,1e5                # fewer sizes at degree 2
    python bench/frame_update.py --strategies basis                   # one strategy

The three frame-dependent matrices (gyroscopic, spin softening, angular acceleration) all come
from one inertia-coupling form ``forms["coupling"]`` = int rho (W u).v with a constant 3x3 W.
``BodyOperators(body, strategy="assemble")`` sets W and assembles that form into each matrix
whose W changed; ``strategy="basis"`` assembles it once for each of the 9 basis matrices of W
(3D) at construction and then forms every frame matrix as a linear combination (MatAXPY on the
shared sparsity). Both are measured on the same mesh and function space, one after the other
(the first strategy's operators are destroyed before the second's are built).

For 3D hexahedral box meshes (the unit cube, in the body's local coordinates, n x n x n cells),
vector Lagrange of degree 1 and 2, and about 1e4, 1e5 and 1e6 dofs, it measures per strategy

* ``compile_warm``: ``BodyOperators.timings["compile"]`` (``fem.form`` of the three bilinear
  forms mass, stiffness, coupling and the load form) with the FFCx/JIT disk cache already
  holding these forms (a warm-up ``BodyOperators`` on a tiny mesh of the same degree fills it).
* ``compile_cold`` (once per degree, on the smallest mesh, not per strategy): the same four
  ``fem.form`` calls with a fresh, empty JIT cache directory, i.e. including the FFCx code
  generation and the C compilation. Element/dofmap modules (compiled when the function space
  is created) are not in either number.
* ``first_assembly``: ``BodyOperators.timings["first_assembly"]``: creating mass, stiffness and
  the coupling template (each filled by one assembly), duplicating the three frame matrices,
  the load vector, and for "basis" creating and assembling the 9 basis matrices. The basis
  part is reported as ``first_assembly(basis) - first_assembly(assemble)`` (same mesh).
* ``update_spinup``: wall time of ``ops.update(state)`` for SpinUp states during the ramp (omega
  and alpha both change: all three frame matrices are re-formed, and the load), median over
  ``--repeats`` calls after one untimed call; with its split ``update_matrices`` /
  ``update_load`` from ``ops.timings``.
* ``update_constant``: the same for ConstantSpin states after a first call (omega unchanged,
  alpha zero: only the load vector is re-assembled), median.
* memory: ``n_matrices`` PETSc matrices of one shared pattern (6 for "assemble": mass,
  stiffness, coupling template, three frame matrices; 15 for "basis"); ``basis_bytes_est`` =
  9 x nnz x (8 + index bytes) + row arrays, the extra memory of the basis; ``rss_delta_bytes``
  the resident-set growth from before the ``BodyOperators`` to after its measurements (summed
  over ranks) and ``peak_rss_bytes`` the peak resident set (the kernel's high-water mark, reset
  before each strategy through /proc/self/clear_refs, summed over ranks). Freed memory is
  handed back with glibc's malloc_trim after each strategy and case; even so the second
  strategy may reuse heap the first one freed, so ``peak_rss_bytes`` is the better figure.

and once per case (with the first strategy's operators) the references: zeroEntries +
``fem.petsc.assemble_matrix`` of the stiffness form into the existing stiffness matrix + final
``Mat.assemble`` (``assemble_stiffness``), likewise ``assemble_mass`` and ``assemble_coupling``
(the coupling form with W = 2 skew(omega) into one frame matrix: what "assemble" does per
changed frame matrix), ``mat_axpy`` (one ``MatAXPY`` with SAME_NONZERO_PATTERN between two
frame matrices: what "basis" does up to 9 times per frame matrix), ``create_matrix_one`` (one
``fem.petsc.create_matrix``, i.e. one sparsity pattern) and ``duplicate_one`` (``Mat.duplicate``).

Every timed region is bracketed by MPI barriers and timed with ``time.perf_counter``; the
figure reported is the maximum over ranks (for the ``ops.timings`` splits too).

A case larger than the smallest one is run for a strategy only if an extrapolation from the
previous case of the same degree (scaled by the dof ratio) stays below ``--mem-limit-gib`` (18)
and ``--time-limit`` (300 s). Memory: the current resident set (summed over ranks) plus the
scaled mesh/space growth plus the scaled larger of the strategy's measured RSS growth and
(``n_matrices`` + 1 temporary) matrices of the scaled nnz, so the 9 basis matrices count. Time:
the scaled wall time of that strategy's measurements (references excluded). Otherwise the
strategy is recorded as skipped, with the estimate; ``--force`` runs everything.

Results: tables on rank 0, a Markdown section appended to bench/results/frame_update.md and a
run appended to bench/results/frame_update.json (machine, date, versions, process count, load
averages).
"""

from __future__ import annotations

import gc
import inspect
import logging
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
from benchlib import (ROOT, append_results, command_line, context_lines, git_rev, gmax, gmin,
                      gsum, load_text, loadavg, log, machine, md_table, median_of, parser,
                      release_heap, reset_peak_rss, rss_sum, timed, utc_now, versions,
                      wait_for_load)
from mpi4py import MPI

import dolfinx
import dolfinx.fem.petsc as fpetsc
import dolfinx.mesh as dmesh
from dolfinx import fem
from petsc4py import PETSc

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import dolfinx_mbs as mbs  # noqa: E402
from dolfinx_mbs.assembly import BodyOperators  # noqa: E402

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


def mat_nnz(A: PETSc.Mat) -> int:
    return int(A.getInfo(PETSc.Mat.InfoType.GLOBAL_SUM)["nz_allocated"])


def mat_bytes_est(nnz: int, rows: int) -> int:
    """Bytes of one AIJ matrix: values and column indices, plus ~4 row arrays."""
    ib = PETSc.IntType(0).itemsize
    return nnz * (8 + ib) + 4 * rows * ib


NBASIS = 9  # basis matrices of W in 3D (3 skew + 6 symmetric)


def n_matrices(strategy: str) -> int:
    """PETSc matrices a BodyOperators holds (3D): mass, stiffness, coupling template, three
    frame matrices, and the basis for "basis"."""
    return 6 + (NBASIS if strategy == "basis" else 0)


def destroy_ops(ops: BodyOperators) -> None:
    """Collective: destroy every PETSc object of ``ops`` on all ranks at the same point."""
    for A in ops.mats.values():
        A.destroy()
    ops._template.destroy()
    for _, B in ops._basis:
        B.destroy()
    ops._basis = []
    ops.Q.destroy()
    if ops._D is not None:
        ops._D.destroy()
    gc.collect()
    release_heap()
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
    """The four fem.form calls of BodyOperators with an empty JIT cache directory."""
    body = make_body(2, degree)
    tmp = tempfile.mkdtemp(prefix="mbs_jit_cold_") if RANK == 0 else None
    tmp = COMM.bcast(tmp, root=0)
    # the keyword: jit_params on older DOLFINx (0.5), jit_options on newer (0.11)
    kw = "jit_options" if "jit_options" in inspect.signature(fem.form).parameters else "jit_params"
    jit = {kw: {"cache_dir": tmp}}

    def go():
        return [fem.form(a, **jit) for a in
                list(body.bilinear_forms().values()) + [body.load_form()]]

    dt, _ = timed(go)
    COMM.Barrier()
    if RANK == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    return dt


def warm_up(degree: int) -> float:
    """A BodyOperators on a tiny mesh: fills the JIT cache; returns its compile time."""
    body = make_body(2, degree)
    ops = BodyOperators(body, strategy="basis")
    t = gmax(ops.timings["compile"])
    ops.update(body.frame.state(1.0))
    destroy_ops(ops)
    return t


def references(ops: BodyOperators, body, repeats: int) -> dict:
    """Plain assemblies into the existing matrices (the same steps as BodyOperators), one
    MatAXPY, one create_matrix and one duplicate. Leaves the frame matrices modified."""
    r = {}

    def reassemble(A, a):
        def go():
            A.zeroEntries()
            fpetsc.assemble_matrix(A, a)
            A.assemble()
        return go

    r["assemble_stiffness"], r["assemble_stiffness_all"] = median_of(
        reassemble(ops.mats["stiffness"], ops.forms["stiffness"]), repeats)
    few = max(3, repeats // 2)
    r["assemble_mass"], _ = median_of(reassemble(ops.mats["mass"], ops.forms["mass"]), few)
    body.W.value = mbs.forms.frame_coupling(mbs.frames.SpinUp(**SPINUP).state(1.0).omega)[
        "gyroscopic"]
    r["assemble_coupling"], _ = median_of(
        reassemble(ops.mats["gyroscopic"], ops.forms["coupling"]), few)
    Ka, G = ops.mats["spin_softening"], ops.mats["gyroscopic"]
    r["mat_axpy"], _ = median_of(lambda: Ka.axpy(1.0, G, structure=SAME), few)

    # matrix creation: one sparsity pattern vs a duplicate of an existing matrix
    t, A = timed(lambda: fpetsc.create_matrix(ops.forms["stiffness"]))
    r["create_matrix_one"] = t
    A.destroy()
    t, A = timed(lambda: ops.K.duplicate())
    r["duplicate_one"] = t
    A.destroy()
    return r


def time_updates(ops: BodyOperators, name: str, states: list) -> dict:
    """ops.update for each state: median wall time, all of them, median matrix/load split."""
    walls, mats, loads = [], [], []
    for st in states:
        walls.append(timed(lambda: ops.update(st))[0])
        mats.append(gmax(ops.timings["update_matrices"]))
        loads.append(gmax(ops.timings["update_load"]))
    return {f"update_{name}": statistics.median(walls), f"update_{name}_all": walls,
            f"update_{name}_matrices": statistics.median(mats),
            f"update_{name}_load": statistics.median(loads)}


def run_strategy(body, strategy: str, repeats: int, with_refs: bool) -> tuple[dict, dict]:
    """Measurements of one BodyOperators(body, strategy); (its results, references or {})."""
    COMM.Barrier()
    reset_peak_rss()
    rss0, _ = rss_sum()
    t_start = time.perf_counter()
    cpu0 = time.process_time()

    builds0 = gsum(JIT_BUILDS[0])
    t_ops, ops = timed(lambda: BodyOperators(body, strategy=strategy))
    assert ops.strategy == strategy
    jit_builds = gsum(JIT_BUILDS[0]) - builds0
    s = dict(strategy=strategy, construct_total=t_ops,
             compile_warm=gmax(ops.timings["compile"]),
             first_assembly=gmax(ops.timings["first_assembly"]),
             jit_builds_in_compile=jit_builds,
             n_matrices=len(ops.mats) + 1 + len(ops._basis), n_basis=len(ops._basis))
    assert s["n_matrices"] == n_matrices(strategy), s["n_matrices"]
    if jit_builds:
        # the disk cache missed (another process may have changed ~/.cache/fenics): keep that
        # figure, and time the same four fem.form calls again, now against a filled cache
        s["compile_with_builds"] = s["compile_warm"]
        forms = list(body.bilinear_forms().values()) + [body.load_form()]
        s["compile_warm"], _ = timed(lambda: [fem.form(a) for a in forms])
        log(f"  note: {jit_builds} JIT build(s) in BodyOperators' compile "
            f"({s['compile_with_builds']:.2f} s); re-timed warm: {s['compile_warm'] * 1e3:.1f} ms")
    s["rss_after_construct_bytes"] = rss_sum()[0] - rss0
    nnz = mat_nnz(ops.K)
    rows = ops.K.getSize()[0]
    s["nnz_per_matrix"] = nnz
    s["matrix_bytes_est"] = mat_bytes_est(nnz, rows)
    s["matrices_bytes_est"] = s["n_matrices"] * s["matrix_bytes_est"]
    s["basis_bytes_est"] = s["n_basis"] * s["matrix_bytes_est"]

    # SpinUp during the ramp: omega and alpha change at every state
    spin = mbs.frames.SpinUp(**SPINUP)
    ops.update(spin.state(0.5))  # untimed: first call
    states = [spin.state(1.0 + k) for k in range(repeats)]
    assert all(np.any(st.alpha != 0.0) and st.t < SPINUP["ramp_time"] for st in states)
    s.update(time_updates(ops, "spinup", states))
    # ConstantSpin: after the first call, omega is unchanged and alpha stays zero
    const = mbs.frames.ConstantSpin(**CONSTANT)
    s["update_constant_first"], _ = timed(lambda: ops.update(const.state(0.0)))
    s.update(time_updates(ops, "constant", [const.state(1.0 + k) for k in range(repeats)]))
    s["ratio_update_first_assembly"] = s["update_spinup"] / s["first_assembly"]
    s["ratio_constant_first_assembly"] = s["update_constant"] / s["first_assembly"]
    # wall time of this strategy's own measurements (the extrapolation uses it)
    s["wall"] = gmax(time.perf_counter() - t_start)

    refs = {}
    if with_refs:
        t_refs = time.perf_counter()
        refs = references(ops, body, repeats)
        refs["references_wall"] = gmax(time.perf_counter() - t_refs)

    rss1, peak = rss_sum()
    s["rss_delta_bytes"] = rss1 - rss0
    s["peak_rss_bytes"] = peak
    destroy_ops(ops)
    ops = None
    gc.collect()
    COMM.Barrier()
    wall = gmax(time.perf_counter() - t_start)
    # CPU time / wall time (min over ranks): well below 1 means the process waited (other
    # load on the machine, or MPI waits), and the timings are less reliable
    s["cpu_fraction"] = gmin((time.process_time() - cpu0) / wall)
    s["loadavg_after"] = loadavg()
    s["status"] = "ok"
    return s, refs


def run_case(degree: int, target: float, repeats: int, strategies: list,
             skipped: dict) -> dict:
    """One mesh and space; every strategy in ``strategies`` not in ``skipped`` (name -> skip
    record) measured on it, the references with the first one."""
    n = cells_per_side(target, degree)
    rss0, _ = rss_sum()
    t_case0 = time.perf_counter()
    t_mesh, body = timed(lambda: make_body(n, degree))
    dofs = body.V.dofmap.index_map.size_global * body.V.dofmap.index_map_bs
    ncells = body.mesh.topology.index_map(3).size_global
    r = dict(degree=degree, target_dofs=target, n=n, cells=ncells, dofs=dofs,
             mesh_and_space=t_mesh, rss_body_bytes=rss_sum()[0] - rss0,
             loadavg_before=loadavg(), strategies={})
    log(f"  degree {degree}, n = {n}: {ncells} cells, {dofs} dofs "
        f"(load {' '.join(r['loadavg_before'])})")
    for name in strategies:
        if name in skipped:
            r["strategies"][name] = skipped[name]
            continue
        s, refs = run_strategy(body, name, repeats, with_refs="assemble_stiffness" not in r)
        r.update(refs)
        r["strategies"][name] = s
        log(f"    {name}: first assembly {ms(s['first_assembly'])} ms, update SpinUp "
            f"{ms(s['update_spinup'])} ms, ConstantSpin {ms(s['update_constant'])} ms")
    for s in r["strategies"].values():
        if s["status"] == "ok":
            s["ratio_update_stiffness"] = s["update_spinup"] / r["assemble_stiffness"]
    a, b = r["strategies"].get("assemble"), r["strategies"].get("basis")
    if a and b and a["status"] == b["status"] == "ok":
        r["speedup_spinup_basis"] = a["update_spinup"] / b["update_spinup"]
        r["speedup_spinup_matrices_basis"] = (a["update_spinup_matrices"]
                                              / b["update_spinup_matrices"])
        r["first_assembly_basis_extra"] = b["first_assembly"] - a["first_assembly"]
        gain = a["update_spinup"] - b["update_spinup"]
        r["break_even_updates"] = (r["first_assembly_basis_extra"] / gain if gain > 0
                                   else None)
    del body
    gc.collect()
    release_heap()
    COMM.Barrier()
    r["case_wall"] = gmax(time.perf_counter() - t_case0)
    r["loadavg_after"] = loadavg()
    r["status"] = "ok"
    return r


def estimate(prev: dict, strategy: str, dofs: int) -> tuple[float, float]:
    """(memory summed over ranks [bytes], wall [s]) of ``strategy`` at ``dofs``, scaled from
    the previous case ``prev`` of the same degree."""
    f = dofs / prev["dofs"]
    s = prev["strategies"].get(strategy, {})
    done = [x for x in prev["strategies"].values() if x.get("status") == "ok"]
    one = max(x["matrix_bytes_est"] for x in done)
    mats = (n_matrices(strategy) + 1) * one  # + 1: the temporary of the references
    grow = max(s.get("rss_delta_bytes", 0), s.get("rss_after_construct_bytes", 0), mats)
    mem = rss_sum()[0] + f * (max(prev["rss_body_bytes"], 0) + grow)
    if s.get("status") == "ok":
        wall = f * s["wall"]
    else:  # not measured at the previous size: the slowest measured strategy
        wall = f * max(x["wall"] for x in done)
    return mem, wall


# --- output --------------------------------------------------------------------------------

def ms(x):
    return "—" if x is None else (f"{x * 1e3:.1f}" if x < 10 else f"{x * 1e3:.0f}")


def mib(x):
    return "—" if x is None else f"{x / 2**20:.0f}"


def strategy_rows(cases):
    """One row per (case, measured strategy): the strategy's dict with the case's fields."""
    rows = []
    for r in cases:
        for name, s in r["strategies"].items():
            if s["status"] == "ok":
                rows.append({**{k: v for k, v in r.items() if k != "strategies"}, **s})
    return rows


def both(cases):
    return [r for r in cases if r.get("speedup_spinup_basis") is not None]


# one row per (case, strategy)
COLUMNS = [
    ("deg", lambda r: str(r["degree"])),
    ("n", lambda r: str(r["n"])),
    ("dofs", lambda r: f"{r['dofs']:,}"),
    ("strategy", lambda r: r["strategy"]),
    ("compile warm [ms]", lambda r: ms(r["compile_warm"])),
    ("first assembly [ms]", lambda r: ms(r["first_assembly"])),
    ("update SpinUp [ms]", lambda r: ms(r["update_spinup"])),
    ("(matrices / load)", lambda r: f"{ms(r['update_spinup_matrices'])} / "
                                    f"{ms(r['update_spinup_load'])}"),
    ("update ConstantSpin [ms]", lambda r: ms(r["update_constant"])),
    ("update / first asm", lambda r: f"{r['ratio_update_first_assembly']:.3f}"),
    ("K assembly [ms]", lambda r: ms(r["assemble_stiffness"])),
    ("update / K asm", lambda r: f"{r['ratio_update_stiffness']:.3f}"),
]

# one row per case with both strategies
COMPARE = [
    ("deg", lambda r: str(r["degree"])),
    ("dofs", lambda r: f"{r['dofs']:,}"),
    ("SpinUp update, assemble [ms]", lambda r: ms(r["strategies"]["assemble"]["update_spinup"])),
    ("SpinUp update, basis [ms]", lambda r: ms(r["strategies"]["basis"]["update_spinup"])),
    ("speed-up (matrices only)", lambda r: f"{r['speedup_spinup_basis']:.1f} "
                                           f"({r['speedup_spinup_matrices_basis']:.1f})"),
    ("first asm, assemble [ms]", lambda r: ms(r["strategies"]["assemble"]["first_assembly"])),
    ("first asm, basis [ms]", lambda r: ms(r["strategies"]["basis"]["first_assembly"])),
    ("basis extra first asm [ms]", lambda r: ms(r["first_assembly_basis_extra"])),
    ("break-even [updates]", lambda r: "—" if r["break_even_updates"] is None
                                       else f"{r['break_even_updates']:.1f}"),
    ("basis memory, 9 matrices [MiB]", lambda r: mib(r["strategies"]["basis"]["basis_bytes_est"])),
    ("peak RSS assemble / basis [MiB]",
     lambda r: f"{mib(r['strategies']['assemble']['peak_rss_bytes'])} / "
               f"{mib(r['strategies']['basis']['peak_rss_bytes'])}"),
]

# one row per case
REFS = [
    ("deg", lambda r: str(r["degree"])),
    ("dofs", lambda r: f"{r['dofs']:,}"),
    ("mesh+space [ms]", lambda r: ms(r["mesh_and_space"])),
    ("create_matrix x1 [ms]", lambda r: ms(r["create_matrix_one"])),
    ("duplicate x1 [ms]", lambda r: ms(r["duplicate_one"])),
    ("K asm [ms]", lambda r: ms(r["assemble_stiffness"])),
    ("M asm [ms]", lambda r: ms(r["assemble_mass"])),
    ("coupling asm [ms]", lambda r: ms(r["assemble_coupling"])),
    ("MatAXPY [ms]", lambda r: ms(r["mat_axpy"])),
    ("nnz/matrix", lambda r: f"{next(s for s in r['strategies'].values() if s['status'] == 'ok')['nnz_per_matrix']:,}"),
    ("case wall [s]", lambda r: f"{r['case_wall']:.1f}"),
    ("load before / after", lambda r: f"{r['loadavg_before'][0]} / {r['loadavg_after'][0]}"),
]

# one row per (case, strategy)
EXTRA = [
    ("deg", lambda r: str(r["degree"])),
    ("dofs", lambda r: f"{r['dofs']:,}"),
    ("strategy", lambda r: r["strategy"]),
    ("matrices", lambda r: str(r["n_matrices"])),
    ("matrices est. [MiB]", lambda r: mib(r["matrices_bytes_est"])),
    ("RSS delta [MiB]", lambda r: mib(r["rss_delta_bytes"])),
    ("peak RSS [MiB]", lambda r: mib(r["peak_rss_bytes"])),
    ("ConstantSpin 1st call [ms]", lambda r: ms(r["update_constant_first"])),
    ("JIT builds in warm compile", lambda r: str(r["jit_builds_in_compile"])),
    ("wall [s]", lambda r: f"{r['wall']:.1f}"),
    ("CPU/wall", lambda r: f"{r['cpu_fraction']:.2f}"),
    ("load after", lambda r: r["loadavg_after"][0]),
]


def table(rows, columns) -> str:
    """Markdown table of rows (dicts) in ``columns`` (header, row -> text)."""
    return md_table([c for c, _ in columns], [[f(r) for _, f in columns] for r in rows])


def skipped_records(run):
    out = []
    for r in run["cases"]:
        for name, s in r["strategies"].items():
            if s["status"] != "ok":
                out.append((r, name, s))
    return out


def markdown_section(run: dict) -> str:
    ok = [r for r in run["cases"] if r["status"] == "ok"]
    out = [
        f"## {run['date']}: {run['nprocs']} MPI process{'es' if run['nprocs'] > 1 else ''}, "
        f"strategies {', '.join(run['strategies'])}",
        "",
        *context_lines(run),
        f"- operators: frame matrices from the one coupling form, strategy \"assemble\" (set W, "
        f"assemble) and \"basis\" ({NBASIS} basis matrices assembled at construction, MatAXPY "
        f"combinations); both on the same mesh and space, one after the other",
        f"- unit cube, hexahedra, vector Lagrange; LinearElastic(E=210e9, nu=0.3, "
        f"density=7850); SpinUp(axis z, final_rate=6, ramp_time=15) states at t = 1..{run['repeats']} s; "
        f"ConstantSpin(rate=6) states after a first call; medians of {run['repeats']} "
        f"(max over ranks, barriers around each call)",
        "",
        table(strategy_rows(ok), COLUMNS),
        "",
    ]
    if both(ok):
        out += ["Basis against assemble (speed-up = SpinUp update time of assemble / basis; "
                "break-even = extra first assembly of basis / update time saved; basis memory = "
                f"{NBASIS} x one matrix, estimated from nnz; peak RSS summed over ranks):", "",
                table(both(ok), COMPARE), ""]
    out += ["Reference timings (per case, with the first strategy's operators):", "",
            table(ok, REFS), "", "Per strategy:", "", table(strategy_rows(ok), EXTRA), ""]
    cold = ", ".join(f"degree {d}: {t:.2f} s" for d, t in run["compile_cold"].items())
    first = ", ".join(f"degree {d}: {t * 1e3:.0f} ms" for d, t in run["compile_first"].items())
    out.append(f"- compile: the table shows the **warm** JIT cache (forms already compiled on "
               f"disk). With an empty cache (FFCx + C compiler, four forms): {cold or 'not measured'}. "
               f"First BodyOperators of the process, tiny mesh: {first}.")
    out.append(f"{load_text(run)}; per case and strategy in the tables. CPU/wall is process "
               "CPU time over wall time (min over ranks): values well below 1 mean the process "
               "was waiting for a CPU, i.e. other load on the machine inflated the timings "
               "(under MPI, busy-waiting hides this).")
    for r in strategy_rows(ok):
        if r.get("compile_with_builds") is not None:
            out.append(f"- degree {r['degree']}, {r['dofs']:,} dofs, {r['strategy']}: the JIT "
                       f"disk cache missed during BodyOperators' compile "
                       f"({r['jit_builds_in_compile']} build(s), {r['compile_with_builds']:.2f} s); "
                       f"the table shows the re-timed warm compile.")
    for r, name, s in skipped_records(run):
        out.append(f"- skipped: degree {r['degree']}, ~{r['target_dofs']:.0e} dofs "
                   f"(n = {r['n']}, {r['dofs']:,} dofs), strategy {name}: {s['reason']}")
    out.append("")
    return "\n".join(out)


# --- main ----------------------------------------------------------------------------------

def main(argv=None):
    p = parser(__doc__, load=0.5, load_flag="--max-load", max_wait=600.0,
               results_flags=("--results-dir", "--out"))
    p.add_argument("--sizes", default="1e4,1e5,1e6", help="target dof counts (comma list)")
    p.add_argument("--sizes-for", action="append", default=[], metavar="DEG:SIZES",
                   help="target dof counts for one degree, e.g. 2:1e4,1e5 (repeatable)")
    p.add_argument("--degrees", default="1,2")
    p.add_argument("--strategies", default="assemble,basis",
                   help="comma list of BodyOperators strategies (assemble, basis)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--mem-limit-gib", type=float, default=18.0)
    p.add_argument("--time-limit", type=float, default=300.0,
                   help="seconds, per case and strategy (references excluded)")
    p.add_argument("--force", action="store_true", help="run every size, no extrapolated skip")
    p.add_argument("--no-cold", action="store_true", help="skip the empty-cache compile")
    args = p.parse_args(argv)
    degrees = [int(d) for d in args.degrees.split(",")]
    sizes = {d: sorted(float(s) for s in args.sizes.split(",")) for d in degrees}
    for item in args.sizes_for:
        d, _, lst = item.partition(":")
        sizes[int(d)] = sorted(float(s) for s in lst.split(","))
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    for s in strategies:
        if s not in ("assemble", "basis"):
            p.error(f"unknown strategy {s!r}")

    load_wait = wait_for_load(args.load_threshold, args.max_wait)
    run = dict(date=utc_now(), nprocs=COMM.size, command=command_line(COMM.size),
               schema=2, strategies=strategies, sizes={d: sizes[d] for d in degrees},
               repeats=args.repeats, git=git_rev() if RANK == 0 else "",
               machine=machine() if RANK == 0 else {}, versions=versions(),
               compile_cold={}, compile_first={}, cases=[], rss_start_bytes=rss_sum()[0],
               load_wait=load_wait, loadavg_start=loadavg(),
               limits=dict(mem_gib=args.mem_limit_gib, time_s=args.time_limit,
                           force=args.force))
    log(f"frame_update benchmark: {COMM.size} process(es), DOLFINx {dolfinx.__version__}, "
        f"strategies {', '.join(strategies)}, load {' '.join(run['loadavg_start'])}")

    for degree in degrees:
        if not args.no_cold:
            run["compile_cold"][degree] = compile_cold(degree)
            log(f"degree {degree}: compile with an empty JIT cache {run['compile_cold'][degree]:.2f} s")
        run["compile_first"][degree] = warm_up(degree)
        prev = None
        for target in sizes[degree]:
            n = cells_per_side(target, degree)
            dofs = 3 * (degree * n + 1) ** 3
            skipped = {}
            if prev is not None and not args.force:
                for name in strategies:
                    mem, wall = estimate(prev, name, dofs)
                    if mem > args.mem_limit_gib * 2**30 or wall > args.time_limit:
                        reason = (f"extrapolated from {prev['dofs']:,} dofs: ~{mem / 2**30:.1f} "
                                  f"GiB (limit {args.mem_limit_gib:g}), ~{wall:.0f} s (limit "
                                  f"{args.time_limit:g} s)")
                        log(f"  degree {degree}, n = {n} ({dofs:,} dofs), {name}: skipped, "
                            f"{reason}")
                        skipped[name] = dict(strategy=name, status="skipped", reason=reason,
                                             est_mem_bytes=mem, est_wall=wall)
            if len(skipped) == len(strategies):
                run["cases"].append(dict(degree=degree, target_dofs=target, n=n, dofs=dofs,
                                         status="skipped", strategies=skipped))
                continue
            r = run_case(degree, target, args.repeats, strategies, skipped)
            run["cases"].append(r)
            prev = r

    run["loadavg_end"] = loadavg()
    if RANK == 0:
        md = markdown_section(run)
        print(md)
        if not args.no_write:
            append_results("frame_update", run, md, "Frame-state update cost of BodyOperators",
                           args.results_dir, key="runs", intro="Written by "
                           "`bench/frame_update.py` (one section per run; times in ms, see the "
                           "script's docstring for what each column measures).")
            log(f"wrote {args.results_dir}/frame_update.md and .json")


if __name__ == "__main__":
    main()
