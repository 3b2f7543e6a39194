"""Benchmark: Maggi's reduced equations against the Lagrange-multiplier saddle point, as the
number of constrained dofs grows (``integrate(..., constraints="maggi" | "multipliers")``).

    python bench/constraints.py                  # everything (~26 min here), results written
    python bench/constraints.py --quick          # smoke run (about a minute), nothing written
    python bench/constraints.py --rerender --notes-file N --conclusion-file C
                                                 # add notes/conclusion to the last run

The claim measured (seeds, ``docs/theory.md`` section 5): Maggi's equations are cheaper than the
saddle point because they have n - m unknowns instead of n + m.

Model family: a steel block 1 m x 0.3 m x 0.3 m (E = 210 GPa, nu = 0.3, 7850 kg/m^3),
hexahedra of degree 1, P = 33 node planes along x and (c + 1)^2 nodes in each plane, cut into k
slabs along x: slab i is its own Body (own mesh; one ConstantSpin frame object shared by all,
15 rad/s about z) and neighbouring slabs are tied (``model.tie``) at their k - 1 interfaces,
whose nodes are duplicated; slab 0 is clamped at x = 0; a tip traction (0, 1 MPa sin(200 t), 0)
on x = 1. The block has nx = P - k cells along x, so the number of full dofs
n = 3 P (c + 1)^2 is the same for every k, the number of constraint rows m = 3 k (c + 1)^2
(clamp + ties) grows linearly with k, and the Maggi system has n - m = 3 (P - k)(c + 1)^2
unknowns, the saddle point n + m.

Studies (``--studies k,parallel,size``): the k sweep (k = 1, 2, 4, 8, 16 at c = 9,
n = 9,900), a 2-rank run of one mid-size case (k = 8, c = 17, n = 32,076), and a size sweep at
k = 8 (c = 9, 17, 31: n ~ 1e4, 3e4, 1e5; a size is skipped when the previous one extrapolates
past ``--time-limit``/``--mem-limit-gib``).

Each (case, method) runs in a fresh process (``mpirun -n 2`` for the 2-rank case), which
measures:

* set-up: time to build the constraint machinery and the matrices the integrator uses. The
  common part (mesh, bodies, ties, full operator assembly) is timed apart. Maggi: the reducer
  (sparse elimination, A) + ``model.system().at(0)`` (PtAP products). Multipliers: the saddle point
  (``model.saddle_point``: B, B^T) + its ``at(0)`` (the augmented AIJ matrices); the saddle
  point also builds the Maggi reducer to drop redundant rows, timed apart and included in the
  "as implemented" figure.
* time per steady step: ``integrate(t_end=steps dt, dt, constraints=...)``, second-order,
  TSALPHA2 (PETSc's default spectral radius), fixed dt = 1e-4 s, MUMPS LU (PETSc defaults),
  from rest, one probe at the tip; a time stamp per step from the integrator's monitor (the
  bench wraps ``dolfinx_mbs.io.Probes.evaluate``, called once per step), median (and mean) of
  the steps after the first ``--skip`` (5), max over ranks. The first step holds the Jacobian
  assembly and the factorizations.
* the integrator's own factorization (its KSP is taken from a wrapper around
  ``formulations.SecondOrderForm._jacobian``; nothing of dolfinx_mbs is changed): MUMPS INFOG(29) (entries in
  the factors), RINFOG(3) (flops of the elimination), INFOG(22) (MB used, all ranks),
  INFOG(13) (delayed pivots), INFOG(7) (ordering).
* up to ``--standalone-max-n`` dofs, a standalone LU of the same Jacobian
  J = K + s_v C + s_a M (the shifts the integrator used), reduced (n - m) or augmented (n + m),
  in a new KSP with MUMPS (the saddle point with ICNTL(14) = 200, as the integrator sets it):
  analysis + factorization time, median of 5 forward/backward solves, the same MUMPS numbers.
* peak memory: ``resource.getrusage`` max RSS (summed over ranks) after the integration, and its
  growth over the max RSS after the common part (the method's own memory: reducer or saddle
  point, products, integrator, factorization). The standalone LU runs after this.
* the probe history (tip displacement at every step): maggi and multipliers must agree to a
  relative difference <= 1e-8 (time-invariant constraints: both solve the same equations).

A third variant, "maggi-a0" (up to ``--a0-max-n`` dofs), is the Maggi run with the reducer's
prescribed part a0 set to zero by the bench before the integration. A tie between coincident
meshes leaves a round-off gap (|a0| ~ 1e-16 m), which makes ``MaggiReducer.prescribed`` true, and
the second-order system then re-forms the full stiffness and multiplies it with a0 at every
time evaluation; the variant measures what this costs (the solution changes by ~1e-11
relative).

Results: a run appended to bench/results/constraints.json, a section appended to
bench/results/constraints.md (machine, versions, date, load average) and the plot
bench/results/constraints.png (time per step and factorization vs m, size sweep).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchlib import (ROOT, append_results, command_line, context_lines, git_rev, gsum, launch,
                      load_runs, load_text, loadavg, log, machine, max_rss, md_table, parser,
                      save_runs, step_times, timed, utc_now, versions, wait_for_load)

METHODS = ("maggi", "multipliers")
TITLE = "Constraints: Maggi's reduced equations vs a Lagrange-multiplier saddle point"

BLOCK = dict(L=1.0, E=210e9, nu=0.3, density=7850.0, omega=15.0, traction=1e6, wf=200.0)
PLANES = 33  # node planes along x: n = 3 * PLANES * (c + 1)^2 for every k

# =============================================================================================
# worker: one (case, method) in its own process
# =============================================================================================


def worker(case: dict, method: str, out: str) -> None:
    import logging

    from mpi4py import MPI
    from petsc4py import PETSc
    import dolfinx.mesh as dmesh

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import dolfinx_mbs as mbs
    from dolfinx_mbs import io as mbs_io
    from dolfinx_mbs.integrate.ts import second_order as mbs_formulations

    logging.getLogger().setLevel(logging.WARNING)
    comm = MPI.COMM_WORLD

    def maxrss():  # bytes, summed over ranks
        return gsum(max_rss())

    # per-step stamps (the monitor calls Probes.evaluate once per step)
    stamps = []
    _evaluate = mbs_io.Probes.evaluate

    progress = out + ".stamps"

    def stamped(self):
        v = _evaluate(self)
        stamps.append(time.perf_counter())
        if comm.rank == 0:  # for the driver, should the run time out
            with open(progress, "a") as f:
                f.write(f"{stamps[-1]!r}\n")
        return v

    mbs_io.Probes.evaluate = stamped
    # the integrator's Jacobian shifts and its KSP (to read MUMPS' numbers after the run)
    seen = {}
    _jac = mbs_formulations.SecondOrderForm._jacobian

    def jac(self, ts, t, U, V, A, shift_v, shift_a, J, P):
        seen["shifts"] = (float(shift_v), float(shift_a))
        seen["ksp"] = ts.getSNES().getKSP()
        return _jac(self, ts, t, U, V, A, shift_v, shift_a, J, P)

    mbs_formulations.SecondOrderForm._jacobian = jac
    # the integrator releases its TS (and the factors) at the end of a run: read MUMPS' numbers
    # just before
    _destroy = mbs_formulations.SecondOrderForm.destroy

    def destroy(self):
        if "ksp" in seen:
            seen["lu"] = mumps_numbers(seen["ksp"])
        return _destroy(self)

    mbs_formulations.SecondOrderForm.destroy = destroy

    def mumps_numbers(ksp):
        try:
            F = ksp.getPC().getFactorMatrix()
            g = F.getMumpsInfog
            e = g(29)
            return dict(factor_entries=float(e if e >= 0 else -e * 1e6),
                        flops=float(F.getMumpsRinfog(3)), mem_mb_total=int(g(22)),
                        mem_mb_max=int(g(21)), delayed_pivots=int(g(13)),
                        null_pivots=int(g(28)), ordering=int(g(7)))
        except Exception as e:  # pragma: no cover
            return dict(error=str(e))

    c, k = case["c"], case["k"]
    W = case["W"]
    L = BLOCK["L"]
    nx = PLANES - k
    cells = [nx // k + (1 if i < nx % k else 0) for i in range(k)]
    xs = np.concatenate([[0.0], np.cumsum(cells) / nx]) * L

    def build():
        mat = mbs.materials.LinearElastic(E=BLOCK["E"], nu=BLOCK["nu"],
                                          density=BLOCK["density"])
        frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=BLOCK["omega"])  # one, shared
        bodies = []
        for i in range(k):
            mesh = dmesh.create_box(comm, [np.array([xs[i], 0.0, 0.0]),
                                           np.array([xs[i + 1], W, W])],
                                    [cells[i], c, c], dmesh.CellType.hexahedron)
            bodies.append(mbs.Body(mesh, mat, frame, degree=1, name=f"slab{i}"))
        bodies[-1].add_traction(lambda t: (0.0, BLOCK["traction"] * np.sin(BLOCK["wf"] * t),
                                           0.0), where=lambda x: np.isclose(x[0], L))
        model = mbs.Model(bodies)
        model.clamp(bodies[0], lambda x: np.isclose(x[0], 0.0))
        for i in range(k - 1):
            xi = xs[i + 1]
            model.tie(bodies[i], bodies[i + 1], lambda x, xi=xi: np.isclose(x[0], xi))
        return model, bodies

    res = dict(case=case, method=method, nproc=comm.size, cells_x=cells)
    rss_start = maxrss()
    t_build, (model, bodies) = timed(build)

    def operators():
        asm = model.assembly
        asm.mass()
        asm.damping(0.0)
        asm.stiffness(0.0)
        asm.elastic()
        asm.load(0.0)

    t_ops, _ = timed(operators)
    rss_common = maxrss()
    n = model.space.n_global
    if method.startswith("maggi"):
        t_red, red = timed(lambda: model.reducer)
        res.update(a0_max=red.a0.norm(PETSc.NormType.NORM_INFINITY),
                   prescribed=bool(red.prescribed))
        if method == "maggi-a0":  # the tie's round-off gap dropped: a0 = 0 (see docstring)
            red.a0.set(0.0)
        t_sys, s = timed(lambda: model.system().at(0.0))
        setup = dict(reducer=t_red, system=t_sys, total=t_red + t_sys, own=t_red + t_sys)
        m = red.n_dependent
        size = red.n_reduced
    else:
        t_red, red = timed(lambda: model.reducer)
        t_sp, sp = timed(lambda: model.saddle_point)
        t_sys, s = timed(lambda: sp.at(0.0))
        setup = dict(reducer=t_red, saddle=t_sp, system=t_sys, total=t_red + t_sp + t_sys,
                     own=t_sp + t_sys)
        m = sp.m
        size = s.K.getSize()[0]
    res.update(n=n, m=int(m), system_size=int(size), redundant=len(model.reducer.redundant),
               build=t_build, operators=t_ops, setup=setup,
               nnz_system=int(s.K.getInfo(PETSc.Mat.InfoType.GLOBAL_SUM)["nz_used"]))
    comm.Barrier()

    if comm.rank == 0:
        Path(out + ".setup").write_text(json.dumps(res))
    steps, dt, skip = case["steps"], case["dt"], case["skip"]
    tip = (bodies[-1], (L, W / 2, W / 2))
    stamps.clear()
    cons = "multipliers" if method == "multipliers" else "maggi"
    t_int, r = timed(lambda: model.integrate(t_end=steps * dt, dt=dt, constraints=cons,
                                             probes=[tip], progress=False, stepper="ts"))
    rss_peak = maxrss()
    dur = np.array(step_times(stamps, skip)["durations"])  # each step, max over ranks
    steady = dur[skip:]
    res.update(integrate_wall=t_int, steps=int(r.steps), ts_type=r.ts_type,
               durations=[float(x) for x in dur],
               first_step=float(dur[0]), per_step_median=float(np.median(steady)),
               per_step_mean=float(np.mean(steady)), steps_timed=len(steady),
               slowest_steady=float(steady.max()),
               slowest_steady_index=int(skip + np.argmax(steady) + 1),
               probes=r.probes[:, 0, :].tolist(), times=r.times.tolist(),
               rss_start=rss_start, rss_common=rss_common, rss_peak=rss_peak,
               rss_own=rss_peak - rss_common,
               integrator_lu=seen.pop("lu"), shifts=seen["shifts"])
    seen.pop("ksp")

    res["versions"] = versions()
    if not case.get("standalone", True):
        if comm.rank == 0:
            Path(out).write_text(json.dumps(res))
        return
    # standalone LU of the same Jacobian
    sv, sa = seen["shifts"]
    s = model.saddle_point.at(0.0) if method == "multipliers" else model.system().at(0.0)
    J = s.K.copy()
    J.axpy(sv, s.C, structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN)
    J.axpy(sa, s.M, structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN)
    opts = PETSc.Options()
    prefix = "bench_lu_"
    if method == "multipliers":
        opts[prefix + "mat_mumps_icntl_14"] = 200
    ksp = PETSc.KSP().create(comm)
    ksp.setOptionsPrefix(prefix)
    ksp.setType("preonly")
    ksp.getPC().setType("lu")
    ksp.getPC().setFactorSolverType("mumps")
    ksp.setFromOptions()
    ksp.setOperators(J)
    t_fact, _ = timed(ksp.setUp)
    b = J.createVecLeft()
    b.setRandom()
    x = J.createVecRight()
    solves = []
    for _ in range(5):
        ts_, _ = timed(lambda: ksp.solve(b, x))
        solves.append(ts_)
    rres = J.createVecLeft()
    J.mult(x, rres)
    rres.axpy(-1.0, b)
    res["standalone_lu"] = dict(factorize=t_fact, solve_median=statistics.median(solves),
                                relative_residual=rres.norm() / b.norm(),
                                nnz=int(J.getInfo(PETSc.Mat.InfoType.GLOBAL_SUM)["nz_used"]),
                                **mumps_numbers(ksp))
    res["rss_after_standalone"] = maxrss()
    if comm.rank == 0:
        Path(out).write_text(json.dumps(res))


# =============================================================================================
# driver (no MPI here: it starts the workers)
# =============================================================================================

def n_of(c: int) -> int:
    return 3 * PLANES * (c + 1) ** 2


def run_case(case: dict, method: str, nproc: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        t0 = time.perf_counter()
        try:
            p = launch([Path(__file__).resolve(), "--worker", json.dumps(case), "--method",
                        method, "--out", out], nproc, timeout=timeout,
                       env=dict(OMPI_MCA_mpi_yield_when_idle="1"))
        except subprocess.TimeoutExpired:
            # what the worker got done: its set-up numbers and the steps it finished
            r = dict(case=case, method=method, nproc=nproc, status="timeout",
                     process_wall=time.perf_counter() - t0, timeout=timeout)
            if os.path.exists(out + ".setup"):
                r.update(json.loads(Path(out + ".setup").read_text()))
            st = []
            if os.path.exists(out + ".stamps"):
                st = [float(x) for x in Path(out + ".stamps").read_text().split()]
            r.update(stamps_done=len(st), durations=np.diff(st).tolist(),
                     seconds_since_last_stamp=(time.time() - os.path.getmtime(out + ".stamps"))
                     if st else None)
            r["status"] = "timeout"
            return r
        wall = time.perf_counter() - t0
        if p.returncode != 0 or not os.path.exists(out):
            return dict(case=case, method=method, nproc=nproc, status="failed",
                        returncode=p.returncode, stderr=p.stderr[-3000:], process_wall=wall)
        r = json.loads(Path(out).read_text())
        r.update(status="ok", process_wall=wall)
        return r


def compare(a: dict, b: dict) -> dict:
    pa, pb = np.array(a["probes"]), np.array(b["probes"])
    scale = float(np.abs(pa).max())
    return dict(probe_rel_diff=float(np.abs(pa - pb).max() / scale), probe_max=scale)


def lu_of(r: dict) -> dict:
    """MUMPS numbers of a run: the standalone LU when it ran, else the integrator's own."""
    lu = dict(r.get("standalone_lu") or r["integrator_lu"])
    lu.setdefault("factorize", None)
    lu.setdefault("solve_median", None)
    return lu


def _ratio(a, b):
    try:
        return a / b
    except (ZeroDivisionError, TypeError):
        return None


def run_pair(case: dict, nproc: int, args, study: str, a0_variant: bool) -> dict:
    row = dict(study=study, case=case, nproc=nproc, n_target=n_of(case["c"]))
    row["load_wait"] = wait_for_load(args.load_threshold, args.max_wait_case, step=15.0)
    row["loadavg_before"] = loadavg()
    t0 = time.perf_counter()
    for method in METHODS + (("maggi-a0",) if a0_variant else ()):
        r = run_case(case, method, nproc, args.timeout)
        row[method] = r
        if r["status"] == "timeout":
            d = r["durations"]
            log(f"  k={case['k']:2d} c={case['c']:2d} np={nproc} {method:11s}: TIMEOUT after "
                f"{r['process_wall']:.0f} s; n={r.get('n', 0):,} m={r.get('m', 0):,} "
                f"size={r.get('system_size', 0):,}; steps done: {len(d)}"
                + (f" (first {d[0]:.1f} s)" if d else "")
                + f"; {r['seconds_since_last_stamp'] or 0:.0f} s since the last monitor call")
            row["status"] = "timeout"
            continue
        if r["status"] != "ok":
            log(f"  {method}: FAILED (rc {r.get('returncode')}):\n{r.get('stderr')}")
            row["status"] = "failed"
            return row
        lu = lu_of(r)
        log(f"  k={case['k']:2d} c={case['c']:2d} np={nproc} {method:11s}: n={r['n']:,} "
            f"m={r['m']:,} size={r['system_size']:,}  setup {r['setup']['total']:.3f} s  "
            f"step {r['per_step_median'] * 1e3:.2f} ms (mean {r['per_step_mean'] * 1e3:.2f}) "
            f"first {r['first_step']:.2f} s  LU {_g(lu['factorize'])} s "
            f"({lu.get('factor_entries', 0):.3g} entries, {lu.get('flops', 0):.3g} flops, "
            f"{lu.get('delayed_pivots')} delayed)  solve {_g(lu['solve_median'])} s  "
            f"RSS peak {r['rss_peak'] / 2**20:.0f} MiB (+{r['rss_own'] / 2**20:.0f})  "
            f"[{r['process_wall']:.1f} s, load {loadavg()[0]}]")
    if row.get("status") == "timeout":
        row["loadavg_after"] = loadavg()
        row["wall"] = time.perf_counter() - t0
        return row
    row["check"] = compare(row["maggi"], row["multipliers"])
    if a0_variant:
        row["check_a0"] = compare(row["maggi"], row["maggi-a0"])
    mg, mu = row["maggi"], row["multipliers"]
    lg, lm = lu_of(mg), lu_of(mu)
    row["ratios"] = dict(
        per_step=mu["per_step_median"] / mg["per_step_median"],
        per_step_mean=mu["per_step_mean"] / mg["per_step_mean"],
        per_step_a0=(mu["per_step_median"] / row["maggi-a0"]["per_step_median"]
                     if a0_variant else None),
        first_step=mu["first_step"] / mg["first_step"],
        setup=mu["setup"]["total"] / mg["setup"]["total"],
        setup_own=mu["setup"]["own"] / mg["setup"]["own"],
        factorize=_ratio(lm["factorize"], lg["factorize"]),
        solve=_ratio(lm["solve_median"], lg["solve_median"]),
        factor_entries=_ratio(lm.get("factor_entries"), lg.get("factor_entries")),
        flops=_ratio(lm.get("flops"), lg.get("flops")),
        rss_peak=mu["rss_peak"] / mg["rss_peak"],
        rss_own=mu["rss_own"] / max(mg["rss_own"], 1))
    row["loadavg_after"] = loadavg()
    row["wall"] = time.perf_counter() - t0
    row["status"] = "ok"
    q = row["ratios"]
    log(f"  -> multipliers/maggi: step {q['per_step']:.2f}"
        + (f" (vs maggi a0=0: {q['per_step_a0']:.2f})" if a0_variant else "")
        + f", LU {_g(q['factorize'], '{:.2f}')}, entries {_g(q['factor_entries'], '{:.2f}')}, "
        f"flops {_g(q['flops'], '{:.2f}')}, RSS own {q['rss_own']:.2f}; probe rel. diff "
        f"{row['check']['probe_rel_diff']:.2e}; load {row['loadavg_before'][0]} -> "
        f"{row['loadavg_after'][0]}")
    return row


# --- markdown and plot ----------------------------------------------------------------------


def _ms(x):
    return "—" if x is None else f"{x * 1e3:.3g}" if x < 0.01 else f"{x * 1e3:.1f}"


def _g(x, f="{:.3g}"):
    return "—" if x is None else f.format(x)


ORDERINGS = {0: "AMD", 1: "user", 2: "AMF", 3: "SCOTCH", 4: "PORD", 5: "METIS", 6: "QAMD"}

HEADER = ["k", "n", "m", "m/n", "unknowns maggi / mult.",
          "set-up [s] maggi / mult. (without reducer)", "step [ms] maggi / mult.",
          "**step ratio**", "step [ms] maggi, a0 = 0 (ratio)", "first step [s] maggi / mult.",
          "whole integrate [s] maggi / mult. (ratio)",
          "LU [s] maggi / mult.", "**LU ratio**", "LU solve [ms] maggi / mult.",
          "factor entries maggi / mult. (ratio)", "LU flops maggi / mult. (ratio)",
          "delayed pivots mult.", "max RSS [MiB] (+ own) maggi / mult.",
          "**memory ratio** own (peak)", "probe rel. diff", "load before / after"]


def table_rows(rows):
    out = []
    for r in rows:
        if r.get("status") == "timeout" and r.get("maggi", {}).get("status") == "ok":
            mg, mu = r["maggi"], r["multipliers"]
            lg = lu_of(mg)
            d = mu.get("durations") or []
            first = (f"{d[0]:.0f}" if d else f"> {mu['process_wall'] - mu.get('build', 0):.0f}")
            out.append([
                str(r["case"]["k"]), f"{mg['n']:,}", f"{mg['m']:,}", f"{mg['m'] / mg['n']:.2f}",
                f"{mg['system_size']:,} / {mu.get('system_size', 0):,}",
                f"{mg['setup']['total']:.3f} / "
                + (f"{mu['setup']['total']:.3f} ({mu['setup']['own']:.3f})"
                   if "setup" in mu else "—"),
                f"{_ms(mg['per_step_median'])} / — (timeout after {mu['process_wall']:.0f} s, "
                f"{max(len(d), 0)} steps done)", "—", "—",
                f"{mg['first_step']:.2f} / {first}",
                f"{mg['integrate_wall']:.1f} / > {mu['process_wall']:.0f}",
                f"{_g(lg['factorize'], '{:.3f}')} / —", "—", "—",
                f"{_g(lg.get('factor_entries'))} / —", f"{_g(lg.get('flops'))} / —", "—",
                f"{mg['rss_peak'] / 2**20:.0f} (+{mg['rss_own'] / 2**20:.0f}) / —", "—", "—",
                f"{r['loadavg_before'][0]} / {r['loadavg_after'][0]}"])
            continue
        if r.get("status") != "ok":
            c = r["case"]
            out.append([str(c["k"]), f"~{r['n_target']:,}", "", "", "",
                        r.get("status", "?") + (": " + r["reason"] if r.get("reason") else "")]
                       + [""] * (len(HEADER) - 6))
            continue
        mg, mu, q = r["maggi"], r["multipliers"], r["ratios"]
        lg, lm = lu_of(mg), lu_of(mu)
        a0 = r.get("maggi-a0")
        out.append([
            str(r["case"]["k"]), f"{mg['n']:,}", f"{mg['m']:,}", f"{mg['m'] / mg['n']:.2f}",
            f"{mg['system_size']:,} / {mu['system_size']:,}",
            f"{mg['setup']['total']:.3f} / {mu['setup']['total']:.3f} "
            f"({mu['setup']['own']:.3f})",
            f"{_ms(mg['per_step_median'])} / {_ms(mu['per_step_median'])}",
            f"**{q['per_step']:.2f}**",
            "—" if a0 is None else f"{_ms(a0['per_step_median'])} ({q['per_step_a0']:.2f})",
            f"{mg['first_step']:.2f} / {mu['first_step']:.2f}",
            f"{mg['integrate_wall']:.1f} / {mu['integrate_wall']:.1f} "
            f"({mu['integrate_wall'] / mg['integrate_wall']:.2f})",
            f"{_g(lg['factorize'], '{:.3f}')} / {_g(lm['factorize'], '{:.3f}')}",
            f"**{_g(q['factorize'], '{:.2f}')}**",
            f"{_ms(lg['solve_median'])} / {_ms(lm['solve_median'])}",
            f"{_g(lg.get('factor_entries'))} / {_g(lm.get('factor_entries'))} "
            f"({_g(q['factor_entries'], '{:.2f}')})",
            f"{_g(lg.get('flops'))} / {_g(lm.get('flops'))} ({_g(q['flops'], '{:.2f}')})",
            f"{lm.get('delayed_pivots', '—')}",
            f"{mg['rss_peak'] / 2**20:.0f} (+{mg['rss_own'] / 2**20:.0f}) / "
            f"{mu['rss_peak'] / 2**20:.0f} (+{mu['rss_own'] / 2**20:.0f})",
            f"**{q['rss_own']:.2f}** ({q['rss_peak']:.2f})",
            f"{r['check']['probe_rel_diff']:.1e}",
            f"{r['loadavg_before'][0]} / {r['loadavg_after'][0]}"])
    return out


def markdown_section(run: dict) -> str:
    out = [f"## {run['date']}: Maggi vs Lagrange multipliers"
           + (" (quick smoke run)" if run.get("quick") else ""), "", *context_lines(run),
           f"{load_text(run)}; 1-minute load before / after each case in the tables; total "
           f"wall {run['wall']:.0f} s"]
    for x in run.get("resumed", []):
        out.append(f"- resumed {x['date']} with `{x['command']}` (kept {x['kept']} cases; "
                   f"1-minute load {x['loadavg'][0]})")
    c0 = run["settings"]
    out.append(f"- model: block 1 m x 0.3 m x 0.3 m, hexahedra P1, {PLANES} node planes along "
               "x, k slabs (one Body each, one shared ConstantSpin frame, 15 rad/s about z) tied "
               "at k - 1 interfaces, slab 0 clamped at x = 0, tip traction 1 MPa sin(200 t); "
               f"n = 3 x {PLANES} x (c + 1)^2 for every k, m = 3 k (c + 1)^2. Second-order, "
               f"TSALPHA2, dt = {c0['dt']:g} s, {c0['steps']} steps from rest, MUMPS LU (PETSc "
               f"defaults); step time = median of the last {c0['steps'] - c0['skip']} steps "
               f"(the first {c0['skip']} excluded), max over ranks; one fresh process per "
               "(case, method).")
    out.append("")
    for study, title in (("k", "Growing m at fixed n (k sweep)"),
                         ("size", "Size sweep at fixed k"),
                         ("parallel", "2 MPI ranks")):
        rows = [r for r in run["rows"] if r["study"] == study]
        if not rows:
            continue
        c = rows[0]["case"]
        cs = ", ".join(str(r["case"]["c"]) for r in rows)
        extra = (f"c = {c['c']} cells across ({(c['c'] + 1) ** 2} nodes per plane), serial"
                 if study == "k" else f"k = {c['k']}, c = {cs}, serial" if study == "size"
                 else f"k = {c['k']}, c = {c['c']}, {rows[0]['nproc']} ranks (times: max over "
                 "ranks; memory: sum over ranks)")
        out += [f"### {title}: {extra}", ""]
        out += [md_table(HEADER, table_rows(rows)), ""]
    ords = {ORDERINGS.get(lu_of(r[mm]).get("ordering"), "?") for r in run["rows"]
            if r.get("status") == "ok" for mm in METHODS}
    out += [
        "Columns: unknowns = size of the system the integrator factorizes (n - m for Maggi, "
        "n + m for multipliers). Set-up = building the constraint machinery and the matrices "
        "the integrator uses, after the common part (mesh, bodies, ties, full operators): "
        "Maggi = reducer (elimination, A) + PtAP products; multipliers = Maggi reducer (the "
        "saddle point uses it to find redundant rows) + saddle point (B, B^T) + augmented "
        "matrices; in brackets the multipliers' set-up without the reducer. Step = median wall "
        "time of a steady step of `model.integrate` (residual, one Newton iteration with the "
        "kept factorization, monitor with energies and the probe). Maggi, a0 = 0: the same "
        "Maggi run with the reducer's prescribed part a0 (the ties' round-off gap, |a0| ~ "
        "4e-16 m) set to zero by the bench, see the notes. First step = the step holding the "
        "Jacobian assembly and factorizations (two: PETSc's TSALPHA2 starts with a half step, "
        "whose shifts differ). Whole integrate = wall time of the `model.integrate` call "
        "(the multipliers' also holds a third factorization, of [[M, B^T], [B, 0]], for "
        "consistent initial multipliers). LU = a standalone MUMPS analysis + "
        "factorization of the same Jacobian K + s_v C + s_a M in a new KSP (— where skipped "
        "for time; the factor numbers are then the integrator's own factorization, identical "
        "where both were measured); LU solve = one forward/backward solve; factor entries = "
        "INFOG(29), flops = RINFOG(3), delayed pivots = INFOG(13) (Maggi: 0 everywhere); "
        f"ordering chosen by MUMPS: {', '.join(sorted(ords))} (INFOG(7)). Max RSS = getrusage "
        "peak after the integration (MiB, summed over ranks), own = its growth over the peak "
        "after the common part. Ratios: multipliers / maggi (> 1: Maggi cheaper). Probe rel. "
        "diff = max |tip_maggi - tip_mult| / max |tip| over the 31 recorded states.",
        ""]
    if run.get("notes"):
        out += ["### Notes", ""] + [f"- {x}" for x in run["notes"]] + [""]
    if run.get("conclusion"):
        out += ["### Conclusion", "", run["conclusion"], ""]
    return "\n".join(out) + "\n"


def plot(run: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    ok = [r for r in run["rows"] if r.get("status") == "ok"]
    ks = sorted((r for r in ok if r["study"] == "k"), key=lambda r: r["maggi"]["m"])
    sz = sorted((r for r in ok if r["study"] == "size"), key=lambda r: r["maggi"]["n"])
    par = [r for r in ok if r["study"] == "parallel"]
    a1, a2, a3 = axes
    styles = (("maggi", "o-", "C0", "Maggi (n - m unknowns)"),
              ("multipliers", "s--", "C1", "multipliers (n + m unknowns)"),
              ("maggi-a0", "^:", "C2", "Maggi, a0 = 0 (bench)"))
    for meth, mk, col, lab in styles:
        kk = [r for r in ks if meth in r]
        if kk:
            a1.plot([r["maggi"]["m"] for r in kk], [r[meth]["per_step_median"] * 1e3 for r in kk],
                    mk, color=col, label=lab)
            if meth != "maggi-a0":
                a2.plot([r["maggi"]["m"] for r in kk],
                        [lu_of(r[meth])["factorize"] for r in kk], mk, color=col,
                        label=f"{lab}: LU [s]")
        ss = [r for r in sz if meth in r]
        if ss:
            a3.loglog([r["maggi"]["n"] for r in ss], [r[meth]["per_step_median"] for r in ss],
                      mk, color=col, label=f"{lab}: step")
            if meth != "maggi-a0":
                a3.loglog([r["maggi"]["n"] for r in ss], [r[meth]["first_step"] for r in ss],
                          mk[0] + "-.", color=col, alpha=0.5, label=f"{meth}: first step")
        for r in par:
            if meth in r:
                a3.loglog([r["maggi"]["n"]], [r[meth]["per_step_median"]], mk[0], color=col,
                          mfc="none", ms=11, label=f"{meth}: step, {r['nproc']} ranks")
    if ks:
        n = ks[0]["maggi"]["n"]
        a1.set_title(f"time per steady step vs m (n = {n:,}, serial)")
        a2.set_title(f"standalone LU (analysis + factorization) vs m (n = {n:,})")
        ax = a2.twinx()
        for meth, mk, col, lab in styles[:2]:
            ax.plot([r["maggi"]["m"] for r in ks],
                    [lu_of(r[meth]).get("factor_entries", np.nan) / 1e6 for r in ks],
                    mk[0] + ":", color=col, alpha=0.5, label=f"{meth}: factor entries")
        ax.set_ylabel("factor entries INFOG(29) [1e6] (dotted)")
        ax.legend(fontsize=7, loc="lower right")
    a1.set_xlabel("constrained dofs m")
    a1.set_ylabel("ms per step (median)")
    a2.set_xlabel("constrained dofs m")
    a2.set_ylabel("seconds")
    k = sz[0]["case"]["k"] if sz else "?"
    a3.set_title(f"size sweep, k = {k} (m/n = {k}/{PLANES})")
    a3.set_xlabel("full dofs n")
    a3.set_ylabel("seconds")
    for a in axes:
        a.grid(alpha=0.3, which="both")
        a.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def estimate(prev: dict, c_next: int, args, standalone: bool) -> tuple:
    """Extrapolate a pair from the previous size: factorizations ~ n^2 (3D nested
    dissection flops), the rest ~ n; memory ~ n^1.5."""
    f = n_of(c_next) / prev["maggi"]["n"]
    wall = 0.0
    for mm in METHODS:
        r = prev[mm]
        lu = (r.get("standalone_lu") or {}).get("factorize") or 0.0
        fact = r["first_step"] + (lu if standalone else 0.0)
        rest = max(r["process_wall"] - r["first_step"] - lu, 0.0)
        wall += fact * f ** 2 + rest * f
    mem = max(prev[mm]["rss_peak"] for mm in METHODS) * f ** 1.5 / 2**30
    ok = wall <= args.time_limit and mem <= args.mem_limit_gib
    return ok, wall, (f"extrapolated from n = {prev['maggi']['n']:,}: ~{wall:.0f} s for both "
                      f"methods (limit {args.time_limit:.0f} s), ~{mem:.1f} GiB peak (limit "
                      f"{args.mem_limit_gib:g} GiB)")


def add_notes(run: dict, args) -> None:
    """The notes (one a line, "- " optional) and the conclusion of the files given."""
    if args.notes_file:
        run["notes"] = [x.strip()[2:] if x.strip().startswith("- ") else x.strip()
                        for x in Path(args.notes_file).read_text().splitlines() if x.strip()]
    if args.conclusion_file:
        run["conclusion"] = Path(args.conclusion_file).read_text().strip()


def rerender(args) -> None:
    d = args.results_dir
    runs = load_runs(d / "constraints.json")
    add_notes(runs[-1], args)
    save_runs(d / "constraints.json", runs)
    (d / "constraints.md").write_text(
        f"# {TITLE}\n\nWritten by `bench/constraints.py` (see its docstring for the method)."
        "\n\n" + "\n".join(markdown_section(r) for r in runs))
    plot(runs[-1], d / "constraints.png")
    log(f"rewritten: {d / 'constraints.md'}, {d / 'constraints.png'}")


def main():
    p = parser(__doc__, load=0.6, max_wait=180.0)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--method", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--studies", default="k,parallel,size")
    p.add_argument("--ks", default="1,2,4,8,16")
    p.add_argument("--c", type=int, default=9, help="cells across (k sweep)")
    p.add_argument("--size-k", type=int, default=8)
    p.add_argument("--size-cs", default="9,17,31")
    p.add_argument("--parallel-case", default="8,17", help="k,c of the 2-rank run")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--skip", type=int, default=5)
    p.add_argument("--dt", type=float, default=1e-4)
    p.add_argument("--standalone-max-n", type=float, default=5e4,
                   help="standalone LU only up to this n (time)")
    p.add_argument("--a0-max-n", type=float, default=5e4,
                   help="the Maggi a0 = 0 variant only up to this n (time)")
    p.add_argument("--time-limit", type=float, default=900.0, help="per size pair (s)")
    p.add_argument("--mem-limit-gib", type=float, default=16.0)
    p.add_argument("--timeout", type=float, default=1500.0, help="per worker process (s)")
    p.add_argument("--max-wait-case", type=float, default=30.0, help="before each case (s)")
    p.add_argument("--notes-file", help="markdown bullet lines to add as notes (one a line)")
    p.add_argument("--conclusion-file", help="markdown text to add as the conclusion")
    p.add_argument("--checkpoint", default=os.path.join(tempfile.gettempdir(),
                                                         "constraints_checkpoint.json"),
                   help="the run so far, written after every case")
    p.add_argument("--resume", help="a checkpoint: keep its cases, run the missing ones")
    p.add_argument("--rerender", action="store_true",
                   help="set the notes/conclusion of the last recorded run and rewrite the "
                   "markdown and the plot from the JSON (no measurement)")
    args = p.parse_args()
    if args.worker:
        return worker(json.loads(args.worker), args.method, args.out)
    if args.rerender:
        return rerender(args)
    if args.quick:
        args.ks, args.c, args.size_cs, args.size_k = "1,4", 3, "3,5", 4
        args.parallel_case, args.steps, args.skip = "4,3", 10, 3
        args.max_wait = args.max_wait_case = 0.0
        args.standalone_max_n = 4000
    write = not (args.quick or args.no_write)
    studies = [s for s in args.studies.split(",") if s]

    def case(k, c):
        return dict(k=k, c=c, W=0.3, steps=args.steps, skip=args.skip, dt=args.dt,
                    standalone=n_of(c) <= args.standalone_max_n)

    t0 = time.perf_counter()
    command, now = command_line(), utc_now()
    if args.resume:
        run = json.loads(Path(args.resume).read_text())
        kept = [r for r in run["rows"] if r.get("status") in ("ok", "timeout", "skipped")]
        run.setdefault("resumed", []).append(dict(date=now, command=command,
                                                  loadavg=loadavg(), kept=len(kept),
                                                  wall_before=run.get("wall_so_far", 0.0)))
        run["rows"] = kept
        run["git"] = git_rev()
    else:
        run = dict(date=now, command=command, machine=machine(), git=git_rev(),
                   loadavg_start=loadavg(),
                   settings=dict(dt=args.dt, steps=args.steps, skip=args.skip, planes=PLANES),
                   quick=args.quick, rows=[])
    wall0 = run.get("wall_so_far", 0.0)

    def have(study, k, c, nproc):
        return any(r["study"] == study and r["case"]["k"] == k and r["case"]["c"] == c
                   and r["nproc"] == nproc for r in run["rows"])

    def checkpoint():
        run["wall_so_far"] = wall0 + time.perf_counter() - t0
        Path(args.checkpoint).write_text(json.dumps(run))

    lw = wait_for_load(args.load_threshold, args.max_wait, step=15.0)
    if args.resume:
        run["resumed"][-1]["load_wait"] = lw
    else:
        run["load_wait"] = lw
    log(f"load {' '.join(run['load_wait']['before'])} -> {' '.join(loadavg())}")
    # warm the JIT cache (forms; not timed, not recorded)
    for meth in METHODS:
        w = run_case(dict(case(2, 2), steps=4, skip=1), meth, 1, args.timeout)
        if w["status"] != "ok":
            log(w.get("stderr"))
            raise SystemExit("warm-up run failed")
    for study in studies:
        if study == "k":
            log(f"k sweep at c = {args.c} (n = {n_of(args.c):,})")
            for k in [int(x) for x in args.ks.split(",")]:
                if have("k", k, args.c, 1):
                    continue
                run["rows"].append(run_pair(case(k, args.c), 1, args, "k",
                                            n_of(args.c) <= args.a0_max_n))
                checkpoint()
        elif study == "parallel":
            k, c = (int(x) for x in args.parallel_case.split(","))
            log(f"2 ranks: k = {k}, c = {c}")
            if not have("parallel", k, c, 2):
                run["rows"].append(run_pair(case(k, c), 2, args, "parallel",
                                            n_of(c) <= args.a0_max_n))
                checkpoint()
        elif study == "size":
            log(f"size sweep at k = {args.size_k}")
            prev = None
            for c in [int(x) for x in args.size_cs.split(",")]:
                old = next((r for r in run["rows"] if r["study"] == "size"
                            and r["case"]["c"] == c and r["case"]["k"] == args.size_k), None)
                if old is not None:  # resumed
                    if old.get("status") == "ok":
                        prev = old
                    continue
                done = next((r for r in run["rows"] if r["study"] == "k"
                             and r.get("status") == "ok" and r["case"]["k"] == args.size_k
                             and r["case"]["c"] == c), None)
                if done is not None:  # the k sweep's row
                    run["rows"].append(dict(done, study="size"))
                    prev = done
                    continue
                if prev is not None:
                    ok, wall, why = estimate(prev, c, args, n_of(c) <= args.standalone_max_n)
                    log(f"  c={c}: {why}")
                    if not ok:
                        run["rows"].append(dict(study="size", case=case(args.size_k, c),
                                                nproc=1, n_target=n_of(c), status="skipped",
                                                reason=why))
                        continue
                row = run_pair(case(args.size_k, c), 1, args, "size",
                               n_of(c) <= args.a0_max_n)
                run["rows"].append(row)
                checkpoint()
                if row.get("status") == "ok":
                    prev = row
    run["loadavg_end"] = loadavg()
    run["wall"] = wall0 + time.perf_counter() - t0
    checkpoint()
    okrows = [r for r in run["rows"] if r.get("status") == "ok"]
    run["versions"] = okrows[0]["maggi"]["versions"] if okrows else {}
    add_notes(run, args)
    md = markdown_section(run)
    print(md)
    if write:
        d = args.results_dir
        append_results("constraints", run, md, TITLE, d)
        plot(run, d / "constraints.png")
        log(f"written: {d}/constraints.json, .md, .png")
    else:
        png = Path(tempfile.gettempdir()) / "constraints_quick.png"
        plot(run, png)
        Path(tempfile.gettempdir(), "constraints_quick.json").write_text(json.dumps(run))
        log(f"not recorded; plot {png}")


if __name__ == "__main__":
    main()
