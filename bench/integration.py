"""Benchmark: time integration with dolfinx_mbs, its three formulations at equal accuracy, its
scaling, and its overhead over a plain DOLFINx elastodynamics loop.

    python bench/integration.py                      # everything, serial (~20 min)
    mpirun -n 2 python bench/integration.py --studies scaling   # 2-rank scaling rows
    python bench/integration.py --quick              # smoke run (seconds), nothing written

Studies (``--studies rod,scaling``; the overhead study runs with the scaling one):

1. ``rod``: seed 003's Table 3 study. The rotating rod (L = 1 m, 1 kg, A = 0.2 cm^2,
   E = 210 GPa, nu = 0, transverse components clamped, spin 15 rad/s about z through the root,
   axial end traction 1 kN/A sin(200 t)), 5..25 linear hexahedra along the rod (1 x 1 across),
   0.1 s of motion from the steady state ``model.solve_static()``, for the formulations
   "second-order", "first-order" and "hamiltonian" (their default schemes: generalized-alpha
   with spectral radius 1, Crank-Nicolson, implicit midpoint).
   *Equal accuracy*: the reference is the exact solution of the semi-discrete equations of the
   same mesh (M q'' + C q' + K q = f_c + f_t sin(200 t), q(0) = static, q'(0) = 0; M, C, K, f
   taken from ``model.system().at(t)`` on one rank, solved in closed form by an eigen-
   decomposition of the first-order state matrix and the harmonic particular solution); every
   formulation converges to it as dt -> 0 (the error histories are recorded). For each element
   count and formulation, dt is halved from 1e-4 until the tip-displacement history (probe at
   (L, 0, 0), dynamic part u(t) - u(0)) differs from the reference by less than ``--tol``
   (1e-3) times the maximum of the reference's dynamic response. The run at that dt is timed
   (wall time of ``model.integrate(progress=False)``, no output; max over ranks, barriers
   around), median of ``--repeats`` (3) runs, the accepted search run being the first.
2. ``scaling``: a 1 m x 0.1 m x 0.1 m bar of hexahedra (10n x n x n cells, degree 1),
   LinearElastic(E=210e9, nu=0.3, density=7850), ConstantSpin about z at 15 rad/s, root
   clamped, tip traction (0, 1 MPa sin(200 t), 0), about 1e4, 1e5 and 1e6 dofs. dt = 1e-4, one
   warm-up step (Jacobian assembly and factorization) and ``--steps`` (20) timed steps: the
   step times are taken from the per-step monitor of ``integrate`` (the bench wraps
   ``dolfinx_mbs.io.Probes.evaluate``, called once per step by the monitor, to record a time
   stamp; nothing of dolfinx_mbs is changed). A size above the smallest runs only if an
   extrapolation from the previous size fits ``--mem-limit-gib`` and ``--time-limit``.
   Solver: direct LU (MUMPS, the default) up to ``--iterative-from`` dofs, above that
   ``-mbs_ksp_type gmres -mbs_pc_type gamg -mbs_ksp_rtol 1e-10`` (the Jacobian is not symmetric:
   Coriolis), with the rigid-body modes as GAMG's near null space in both codes.
3. overhead (with ``scaling``): a plain DOLFINx loop on the same mesh without frame terms: M and
   K assembled once with dolfinx.fem.petsc, Newmark average acceleration (beta = 1/4,
   gamma = 1/2), K + 4/dt^2 M factorized once (same solver as the dolfinx_mbs run), the
   traction vector re-assembled each step (a fem.Constant amplitude), the same probe; same dt
   and number of steps. Ratio = (dolfinx_mbs second-order s/step) / (plain s/step); target
   <= 1.05 (issue 17). The second-order form runs on the path ``integrate`` picks
   (``--stepper auto``: the linear path for these constant frame states, with the direct
   solver or GMRES + GAMG alike) and on the TS path beside it.
   The second-order run of the largest measured size is profiled with cProfile (serial runs).
   The divergence check (``stability=``), made at the first step before the timed ones, is
   left off in the multigrid rows (by LOBPCG it takes minutes at 1e6 dofs).

Results: a run appended to bench/results/integration.json, a Markdown section appended to
bench/results/integration.md (machine, versions, date, load average), and the plot
bench/results/integration.png redrawn from all runs in the JSON (latest per study and process
count).
"""

from __future__ import annotations

import cProfile
import gc
import io
import json
import logging
import math
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from benchlib import (BAR, BAR_PROBE, ROOT, append_results, bar_cells, bar_dofs, bar_model,
                      barrier, command_line, context_lines, git_rev, gmax, load_text, loadavg,
                      log, machine, md_table, parser, rss_sum, step_times, timed, utc_now,
                      versions, wait_for_load)
from mpi4py import MPI

import dolfinx.fem.petsc as fpetsc
import dolfinx.mesh as dmesh
import ufl
from dolfinx import fem
from petsc4py import PETSc

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import dolfinx_mbs as mbs  # noqa: E402
from dolfinx_mbs import io as mbs_io  # noqa: E402
from dolfinx_mbs.assembly import orthonormal_nullspace, rigid_body_modes  # noqa: E402

logging.getLogger().setLevel(logging.WARNING)

COMM = MPI.COMM_WORLD
RANK = COMM.rank

# seed 003's rod
ROD = dict(L=1.0, A=0.2e-4, E=210e9, mass=1.0, omega=15.0, F0=1000.0, wf=200.0)
ROD["rho"] = ROD["mass"] / (ROD["A"] * ROD["L"])
ROD["side"] = math.sqrt(ROD["A"])
PAPER = "seed 003 (Matlab): 31-460 s (Lagrange) vs 28-322 s (Hamilton) for 5-25 elements"

ITERATIVE = {"ksp_type": "gmres", "pc_type": "gamg", "ksp_rtol": 1e-10}


def collect():
    gc.collect()
    barrier()


# --- step time stamps: the integrator's monitor calls Probes.evaluate once per step ----------

STAMPS: list = []
_evaluate = mbs_io.Probes.evaluate


def _stamped_evaluate(self):
    out = _evaluate(self)
    STAMPS.append(time.perf_counter())
    return out


mbs_io.Probes.evaluate = _stamped_evaluate


def rigid_modes(V) -> PETSc.NullSpace:
    """The six rigid-body modes of the plain loop's space as GAMG's near null space."""
    vecs = []
    for m in rigid_body_modes(V):
        f = fem.Function(V)  # alive while its vector is copied (DOLFINx 0.11 wraps its array)
        v = mbs.compat.petsc_vec(f).copy()
        v.getArray()[: len(m)] = m
        vecs.append(v)
    return orthonormal_nullspace(vecs, V.mesh.comm)


def set_solver_options(prefix: str, opts: dict | None) -> None:
    o = PETSc.Options()
    for k in ITERATIVE:
        if o.hasName(prefix + k):
            o.delValue(prefix + k)
    for k, v in (opts or {}).items():
        o[prefix + k] = v


# =============================================================================================
# Study 1: seed 003's rod
# =============================================================================================

def rod_model(n: int, comm=COMM):
    L, a = ROD["L"], ROD["side"]
    mesh = dmesh.create_box(comm, [np.zeros(3), np.array([L, a, a])], [n, 1, 1],
                            dmesh.CellType.hexahedron)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=ROD["E"], nu=0.0, density=ROD["rho"]),
                    mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=ROD["omega"]), degree=1)
    body.add_traction(lambda t: (ROD["F0"] / ROD["A"] * np.sin(ROD["wf"] * t), 0.0, 0.0),
                      where=lambda x: np.isclose(x[0], L))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=[1, 2])
    return model, body


def _dense(A: PETSc.Mat) -> np.ndarray:
    return A.convert("dense").getDenseArray().copy()


class RodReference:
    """Exact solution of the semi-discrete rod equations (one rank, COMM_SELF):
    tip u_x(t) - u_x(0) for q(0) = static, q'(0) = 0, f = f_c + f_t sin(wf t)."""

    def __init__(self, n: int):
        model, body = rod_model(n, MPI.COMM_SELF)
        s = model.system().at(0.0)
        M, K, C = _dense(s.M), _dense(s.K), _dense(s.C)
        fc = s.f.getArray().copy()
        t1 = 0.3 / ROD["wf"]
        ft = (model.system().at(t1).f.getArray() - fc) / np.sin(ROD["wf"] * t1)
        red = model.reducer
        pr = mbs_io.Probes(model.bodies, [(ROD["L"], 0.0, 0.0)])
        m = M.shape[0]
        T = np.zeros(m)  # tip u_x of each reduced unit vector
        q = red.create_reduced_vec()
        for i in range(m):
            q.set(0.0)
            q.setValue(i, 1.0)
            q.assemble()
            model.space.scatter(red.expand(q), model.functions())
            T[i] = _evaluate(pr)[0, 0]
        Mi = np.linalg.inv(M)
        As = np.block([[np.zeros((m, m)), np.eye(m)], [-Mi @ K, -Mi @ C]])
        b = np.concatenate([np.zeros(m), Mi @ ft])
        w = ROD["wf"]
        self.X = np.linalg.solve(1j * w * np.eye(2 * m) - As, b)  # particular: Im(X e^{iwt})
        self.lam, V = np.linalg.eig(As)
        self.Vt = V[:m].T
        self.c = np.linalg.solve(V, -self.X.imag)  # homogeneous part cancels x_p(0)
        self.T = T
        self.m = m
        self.C_norm = float(np.abs(C).max())
        self.omega1 = float(np.sort(np.abs(self.lam.imag))[0])

    def tip(self, t: np.ndarray) -> np.ndarray:
        w = ROD["wf"]
        zp = np.imag(np.outer(np.exp(1j * w * t), self.X[: self.m]))
        zh = np.real((np.exp(np.outer(t, self.lam)) * self.c) @ self.Vt)
        return (zp + zh) @ self.T


def rod_run(n: int, form: str, dt: float, t_end: float, stepper: str = "ts", **kw):
    """One timed run of the rod (``stepper``: the path of ``integrate``, PETSc TS here; the
    dense paths in bench/dense.py)."""
    def run():  # the model is freed on return
        model, _ = rod_model(n)
        u0 = model.solve_static()
        collect()
        return timed(lambda: model.integrate(t_end=t_end, dt=dt, formulation=form, u0=u0,
                                             probes=[(ROD["L"], 0.0, 0.0)], progress=False,
                                             stepper=stepper, **kw))
    out = run()
    collect()
    return out


def study_rod(args) -> list:
    rows = []
    for n in args.elements:
        ref = RodReference(n) if RANK == 0 else None
        for form in mbs.integrate.FORMULATIONS:
            dt, tries, accepted = args.dt0, [], None
            for _ in range(args.max_halvings + 1):
                wall, r = rod_run(n, form, dt, args.t_end)
                err = None
                if RANK == 0:
                    d = r.probes[:, 0, 0] - r.probes[0, 0, 0]
                    exact = ref.tip(r.times)
                    err = float(np.abs(d - exact).max() / np.abs(exact).max())
                err = COMM.bcast(err, root=0)
                tries.append(dict(dt=dt, steps=r.steps, wall=wall, error=err))
                log(f"  n={n:2d} {form:12s} dt={dt:.4e} ({r.steps:6d} steps) "
                    f"error {err:.3e} wall {wall:7.2f} s")
                if err < args.tol:
                    accepted = (dt, r.steps, r.ts_type)
                    break
                dt /= 2.0
            row = dict(elements=n, formulation=form, tries=tries, tol=args.tol,
                       reduced_dofs=None if ref is None else ref.m)
            row["reduced_dofs"] = COMM.bcast(row["reduced_dofs"], root=0)
            if accepted is None:
                row.update(status="no dt met the tolerance")
                rows.append(row)
                continue
            dt, steps, ts_type = accepted
            walls = [tries[-1]["wall"]]
            for _ in range(args.repeats - 1):
                w, _r = rod_run(n, form, dt, args.t_end)
                walls.append(w)
            wall = statistics.median(walls)
            row.update(status="ok", dt=dt, steps=steps, ts_type=ts_type, walls=walls,
                       wall=wall, per_step=wall / steps, error=tries[-1]["error"],
                       error_2dt=tries[-2]["error"] if len(tries) > 1 else None,
                       loadavg_after=loadavg())
            log(f"  n={n:2d} {form:12s} -> dt={dt:.4e}, {steps} steps, wall median "
                f"{wall:.2f} s ({', '.join(f'{w:.2f}' for w in walls)}), "
                f"{wall / steps * 1e3:.3f} ms/step (load {loadavg()[0]})")
            rows.append(row)
        if RANK == 0:
            log(f"  n={n}: reduced dofs {ref.m}, |C|max {ref.C_norm:.2e}, "
                f"omega_1 {ref.omega1:.1f} rad/s")
    by = {(r["elements"], r["formulation"]): r for r in rows if r.get("status") == "ok"}
    for n in args.elements:
        so, fo, h = (by.get((n, f)) for f in mbs.integrate.FORMULATIONS)
        if h and so:
            h["ratio_vs_second_order"] = h["wall"] / so["wall"]
        if h and fo:
            h["ratio_vs_first_order"] = h["wall"] / fo["wall"]
    return rows


# =============================================================================================
# Studies 2 and 3: scaling and overhead
# =============================================================================================

def mbs_steps(model, form: str, dt: float, steps: int, solver: dict | None, profile=False,
              energy: bool = True, stability: str = "warn", stepper: str = "ts"):
    set_solver_options("mbs_", solver)
    STAMPS.clear()
    collect()
    prof = cProfile.Profile() if profile else None
    t_end = (steps + 1) * dt

    def go():
        if prof:
            prof.enable()
        r = model.integrate(t_end=t_end, dt=dt, formulation=form, probes=[BAR_PROBE],
                            progress=False, energy=energy, stepper=stepper, stability=stability)
        if prof:
            prof.disable()
        return r

    wall, r = timed(go)
    out = step_times(STAMPS)
    out.update(wall=wall, steps=r.steps, ts_type=r.ts_type, tip=r.probes[-1, 0].tolist(),
               stepper=r.stepper)
    STAMPS.clear()
    set_solver_options("mbs_", None)
    collect()
    return out, prof


def plain_newmark(body, dt: float, steps: int, solver: dict | None) -> dict:
    """Plain DOLFINx elastodynamics without frame terms on the body's mesh and space."""
    V, mesh = body.V, body.mesh
    E, nu, rho = BAR["E"], BAR["nu"], BAR["density"]
    lmbda = E * nu / ((1 + nu) * (1 - 2 * nu))
    mu = E / (2 * (1 + nu))
    u_, v_ = ufl.TrialFunction(V), ufl.TestFunction(V)

    def eps(w):
        return ufl.sym(ufl.grad(w))

    def sigma(w):
        return 2 * mu * eps(w) + lmbda * ufl.tr(eps(w)) * ufl.Identity(3)

    beta, gamma = 0.25, 0.5
    a0, a2, a3 = 1 / (beta * dt**2), 1 / (beta * dt), 1 / (2 * beta) - 1
    fdim = mesh.topology.dim - 1
    root = dmesh.locate_entities_boundary(mesh, fdim, lambda x: np.isclose(x[0], 0.0))
    bc = fem.dirichletbc(np.zeros(3, dtype=mbs.compat.scalar_type),
                         fem.locate_dofs_topological(V, fdim, root), V)
    tip = dmesh.locate_entities_boundary(mesh, fdim, lambda x: np.isclose(x[0], BAR["L"]))
    tags = dmesh.meshtags(mesh, fdim, tip, np.full(len(tip), 1, dtype=np.int32))
    ds = ufl.Measure("ds", domain=mesh, subdomain_data=tags)
    amp = fem.Constant(mesh, mbs.compat.scalar_type(0.0))
    trac = ufl.as_vector((0.0, amp, 0.0))
    L_form = fem.form(ufl.inner(trac, v_) * ds(1))
    m_form = fem.form(rho * ufl.inner(u_, v_) * ufl.dx)
    keff_form = fem.form(ufl.inner(sigma(u_), eps(v_)) * ufl.dx
                         + a0 * rho * ufl.inner(u_, v_) * ufl.dx)

    def setup():
        M = fpetsc.assemble_matrix(m_form)
        M.assemble()
        Keff = fpetsc.assemble_matrix(keff_form, bcs=[bc])
        Keff.assemble()
        return M, Keff

    t_asm, (M, Keff) = timed(setup)
    ksp = PETSc.KSP().create(COMM)
    ksp.setOptionsPrefix("plain_")
    if solver:
        set_solver_options("plain_", solver)
    else:
        ksp.setType("preonly")
        ksp.getPC().setType("lu")
        ksp.getPC().setFactorSolverType("mumps")
    if solver and solver.get("pc_type") == "gamg":
        Keff.setNearNullSpace(rigid_modes(V))  # as dolfinx_mbs does for its multigrid runs
    ksp.setOperators(Keff)
    ksp.setFromOptions()
    u, v, a = (fem.Function(V) for _ in range(3))
    uv, vv, av = (mbs.compat.petsc_vec(f) for f in (u, v, a))
    b = mbs.compat.create_vector(L_form)
    rhs, work, unew = M.createVecLeft(), M.createVecLeft(), M.createVecLeft()
    pr = mbs_io.Probes([body], [BAR_PROBE])
    pr.items = [(type("B", (), {"u": u, "gdim": 3})(), pr.items[0][1])]  # probe our u

    def step(k):
        t = (k + 1) * dt
        amp.value = BAR["traction"] * np.sin(BAR["wf"] * t)
        with b.localForm() as bl:
            bl.set(0.0)
        fpetsc.assemble_vector(b, L_form)
        b.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
        # rhs = b + M (a0 u + a2 v + a3 a)
        work.set(0.0)
        work.axpy(a0, uv)
        work.axpy(a2, vv)
        work.axpy(a3, av)
        M.mult(work, rhs)
        rhs.axpy(1.0, b)
        fpetsc.set_bc(rhs, [bc])
        ksp.solve(rhs, unew)
        # a1 = a0 (u1 - u) - a2 v - a3 a ;  v1 = v + dt ((1 - gamma) a + gamma a1)
        vv.axpy(dt * (1 - gamma), av)
        work.copy(av)
        av.scale(-1.0)            # -(a0 u + a2 v + a3 a)
        av.axpy(a0, unew)         # a1
        vv.axpy(dt * gamma, av)
        unew.copy(uv)
        u.x.scatter_forward()
        return pr.evaluate()

    STAMPS.clear()
    COMM.Barrier()
    stamps = [time.perf_counter()]
    solve_t = []
    for k in range(steps + 1):
        step(k)
        stamps.append(time.perf_counter())
    # solve share: time the factorized solve alone, on the last rhs
    for _ in range(5):
        t0 = time.perf_counter()
        ksp.solve(rhs, unew)
        solve_t.append(time.perf_counter() - t0)
    STAMPS.clear()
    out = step_times(stamps)
    out.update(assemble_MK=t_asm, solve_only=gmax(statistics.median(solve_t)),
               its=ksp.getIterationNumber(), tip=pr.evaluate()[0].tolist())
    for x in (ksp, M, Keff, b, rhs, work, unew):
        x.destroy()
    set_solver_options("plain_", None)
    collect()
    return out


def alternating_pairs(model, body, args, solver, stepper, stability, plain_step: float,
                      hamilton: bool) -> dict:
    """``args.pairs`` rounds of (dolfinx_mbs second-order, Hamilton, plain loop), each run long
    enough to last about ``args.pair_seconds`` of plain steps: the per-round ratios and their
    medians (a run of 20 steps of a few ms scatters by tens of per cent)."""
    steps = max(args.steps, int(math.ceil(args.pair_seconds / plain_step)))
    out = dict(steps=steps, so=[], plain=[], h=[], so_med=[], plain_med=[], h_med=[])
    for _ in range(args.pairs):
        so, _p = mbs_steps(model, "second-order", args.dt, steps, solver, stepper=stepper,
                           stability=stability)
        out["so"].append(so["per_step"])
        out["so_med"].append(so["per_step_median"])
        if hamilton:
            h, _p = mbs_steps(model, "hamiltonian", args.dt, steps, solver, stepper=stepper,
                              stability=stability)
            out["h"].append(h["per_step"])
            out["h_med"].append(h["per_step_median"])
        pl = plain_newmark(body, args.dt, steps, solver)
        out["plain"].append(pl["per_step"])
        out["plain_med"].append(pl["per_step_median"])
    # per round: ratios of the mean step times, and of the median step times (a step that the
    # machine delays by tens of ms moves the mean of a few-ms step, not the median)
    for key, a, b in (("so_plain", "so", "plain"), ("h_so", "h", "so")):
        out[key] = [x / y for x, y in zip(out[a], out[b])]
        out[key + "_of_medians"] = [x / y for x, y in zip(out[a + "_med"], out[b + "_med"])]
        for k in (key, key + "_of_medians"):
            out[k + "_median"] = statistics.median(out[k]) if out[k] else None
    h_text = (f"; H / SO {', '.join(f'{x:.3f}' for x in out['h_so'])} (median "
              f"{out['h_so_median']:.3f}; of step medians "
              f"{out['h_so_of_medians_median']:.3f})") if out["h_so"] else ""
    log(f"    {args.pairs} alternating rounds of {steps} steps: SO / plain "
        f"{', '.join(f'{x:.3f}' for x in out['so_plain'])} (median "
        f"{out['so_plain_median']:.3f}; of step medians "
        f"{out['so_plain_of_medians_median']:.3f}){h_text}")
    return out


def profile_summary(prof: cProfile.Profile, steps_total: int) -> dict:
    """Per-step figures of the functions that matter, and the top of the cumulative list."""
    st = pstats.Stats(prof)
    rows = []
    for (fname, line, func), (cc, nc, tt, ct, _) in st.stats.items():
        rows.append(dict(func=f"{Path(fname).name}:{line}({func})", ncalls=nc, tottime=tt,
                         cumtime=ct))
    rows.sort(key=lambda r: -r["cumtime"])
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
    return dict(top=rows[:40], text=s.getvalue(), steps=steps_total)


def study_scaling(args) -> list:
    rows = []
    prev = None
    for target in args.sizes:
        n = bar_cells(target)
        dofs = bar_dofs(n)
        solver = ITERATIVE if dofs >= args.iterative_from else None
        solver_name = ("gmres + gamg (rtol 1e-10)" if solver else "MUMPS LU")
        row = dict(target=target, n=n, dofs=dofs, solver=solver_name, nproc=COMM.size)
        if prev is not None and not args.force:
            f = dofs / prev["dofs"]
            mem = rss_sum()[0] + f * prev["rss_growth"] * (1.5 if solver else 1.0)
            wall = f ** (1.3 if not solver else 1.0) * prev["case_wall"] * (2 if solver else 1)
            row.update(estimate_mem_gib=mem / 2**30, estimate_wall=wall)
            if mem / 2**30 > args.mem_limit_gib or wall > args.time_limit:
                row["status"] = (f"skipped: extrapolated from {prev['dofs']:,} dofs: "
                                 f"~{mem / 2**30:.1f} GiB (limit {args.mem_limit_gib}), "
                                 f"~{wall:.0f} s (limit {args.time_limit:.0f} s)")
                log(f"  {dofs:,} dofs: {row['status']}")
                rows.append(row)
                continue
        row["load_wait"] = wait_for_load(args.load_threshold, args.max_wait)
        row["loadavg_before"] = loadavg()
        t_case = time.perf_counter()
        rss0 = rss_sum()[0]
        t_build, (model, body) = timed(lambda: bar_model(n))
        row.update(build=t_build, cells=body.mesh.topology.index_map(3).size_global)
        log(f"  n={n}: {row['cells']} cells, {dofs:,} dofs, solver {solver_name} "
            f"(load {row['loadavg_before'][0]})")
        row["formulations"] = {}
        forms = mbs.integrate.FORMULATIONS
        if dofs >= args.second_order_only_from:
            forms = ("second-order",)
            row["note"] = (f"first-order and hamiltonian not run at {dofs:,} dofs "
                           f"(--second-order-only-from {args.second_order_only_from:g}: "
                           "time budget; their 2N-dof factorizations dominate)")
        stepper = args.stepper
        # the divergence check runs at the first step, before the timed ones; under multigrid
        # (LOBPCG, minutes at 1e6 dofs) it is left out of these runs to save their time
        stability = "off" if solver else "warn"
        for form in forms:
            res, _ = mbs_steps(model, form, args.dt, args.steps, solver, stepper=stepper,
                               stability=stability)
            row["formulations"][form] = res
            log(f"    {form:12s}: {res['per_step'] * 1e3:8.2f} ms/step (median "
                f"{res['per_step_median'] * 1e3:.2f}), warm-up step {res['warmup']:.2f} s, "
                f"slowest step #{res['slowest_step']} {res['slowest']:.3f} s, "
                f"run {res['wall']:.2f} s, path {res['stepper']}")
        if row["formulations"]["second-order"]["stepper"] != "ts" and args.extras:
            res, _ = mbs_steps(model, "second-order", args.dt, args.steps, solver,
                               stepper="ts", stability=stability)
            row["second_order_ts"] = res
            log(f"    second-order, TS path: {res['per_step'] * 1e3:8.2f} ms/step (median "
                f"{res['per_step_median'] * 1e3:.2f})")
        if args.extras:  # the same with the probe only (no energy monitor): the plain outputs
            res, _ = mbs_steps(model, "second-order", args.dt, args.steps, solver,
                               energy=False, stepper=stepper, stability=stability)
            row["second_order_probe_only"] = res
            log(f"    second-order, probe only (energy=False): {res['per_step'] * 1e3:8.2f} "
                f"ms/step (median {res['per_step_median'] * 1e3:.2f})")
        row["rss_growth"] = rss_sum()[0] - rss0
        plain = plain_newmark(body, args.dt, args.steps, solver)
        row["plain"] = plain
        so = row["formulations"]["second-order"]
        row["ratio_second_order_plain"] = so["per_step"] / plain["per_step"]
        row["ratio_median"] = so["per_step_median"] / plain["per_step_median"]
        po = row.get("second_order_probe_only")
        if po is not None:
            row["ratio_probe_only"] = po["per_step"] / plain["per_step"]
            row["ratio_probe_only_median"] = po["per_step_median"] / plain["per_step_median"]
        log(f"    plain Newmark: {plain['per_step'] * 1e3:8.2f} ms/step (solve alone "
            f"{plain['solve_only'] * 1e3:.2f} ms), warm-up {plain['warmup']:.2f} s; "
            f"ratio mbs second-order / plain = {row['ratio_second_order_plain']:.2f} (medians "
            f"{row['ratio_median']:.2f})" + (
                f"; probe only: {row['ratio_probe_only']:.2f} (medians "
                f"{row['ratio_probe_only_median']:.2f})" if po is not None else ""))
        # the next size's time is extrapolated from this one's without the rounds
        row["case_wall"] = gmax(time.perf_counter() - t_case)
        if args.pairs and dofs <= args.pairs_max_dofs:
            row["pairs"] = alternating_pairs(model, body, args, solver, stepper, stability,
                                             plain["per_step"], "hamiltonian" in forms)
        row["load_after"] = loadavg()
        row["status"] = "ok"
        rows.append(row)
        prev = row
        last = (model, body, row)
    # profile the largest measured size (serial only: cProfile sees one rank)
    if args.profile and prev is not None and COMM.size == 1:
        model, body, row = last
        res, prof = mbs_steps(model, "second-order", args.dt, args.steps, row.get("solver") and
                              (ITERATIVE if row["solver"].startswith("gmres") else None),
                              profile=True)
        row["profile"] = profile_summary(prof, res["steps"])
        row["profile"]["per_step_profiled"] = res["per_step"]
        log(f"  profiled second-order at {row['dofs']:,} dofs "
            f"({res['per_step'] * 1e3:.2f} ms/step under cProfile)")
    return rows


# =============================================================================================
# output
# =============================================================================================

def ms(x):
    return "—" if x is None else f"{x * 1e3:.3g}" if x < 1e-3 else f"{x * 1e3:.2f}"


def markdown_section(run: dict) -> str:
    out = [f"## {run['date']}: {run['nproc']} MPI process{'es' if run['nproc'] > 1 else ''}, "
           f"studies {', '.join(run['studies'])}", "", *context_lines(run),
           f"{load_text(run)}; total wall {run['wall']:.0f} s", ""]
    rod = run.get("rod")
    if rod:
        out += [f"### Seed 003's rotating rod, {run['rod_t_end']:g} s of motion, equal accuracy",
                "",
                f"Tolerance: max |tip(t) - ref(t)| < {run['rod_tol']:g} x max |ref| (dynamic "
                "part u(t) - u(0) at (L, 0, 0)); ref = exact solution of the semi-discrete "
                "equations of the same mesh. dt halved from "
                f"{run['rod_dt0']:g}; wall = median of {run['repeats']} runs of "
                "`model.integrate(progress=False)` (no output), solver MUMPS LU.", ""]
        hdr = ["elements", "reduced dofs", "formulation", "TS", "dt [s]", "steps",
               "error at dt", "error at 2 dt", "wall [s] (median)", "runs [s]",
               "time/step [ms]", "Hamilton / this"]
        rows = []
        by = {(r["elements"], r["formulation"]): r for r in rod}
        for r in rod:
            if r.get("status") != "ok":
                rows.append([str(r["elements"]), str(r["reduced_dofs"]), r["formulation"],
                             "", "", "", "", "", r["status"], "", "", ""])
                continue
            h = by.get((r["elements"], "hamiltonian"))
            ratio = f"{h['wall'] / r['wall']:.2f}" if h and h.get("status") == "ok" else "—"
            rows.append([str(r["elements"]), str(r["reduced_dofs"]), r["formulation"],
                         r["ts_type"], f"{r['dt']:.4g}", f"{r['steps']:,}",
                         f"{r['error']:.2e}",
                         "—" if r["error_2dt"] is None else f"{r['error_2dt']:.2e}",
                         f"{r['wall']:.2f}", ", ".join(f"{x:.2f}" for x in r["walls"]),
                         f"{r['per_step'] * 1e3:.3f}", ratio])
        out += [md_table(hdr, rows), ""]
        out.append("Hamilton / Lagrange wall-time ratio per element count "
                   "(< 1: Hamilton faster):")
        out.append("")
        rr = []
        for n in sorted({r["elements"] for r in rod}):
            h = by.get((n, "hamiltonian"))
            if not h or h.get("status") != "ok":
                continue
            rr.append([str(n), f"{by[(n, 'second-order')]['wall']:.2f}",
                       f"{by[(n, 'first-order')]['wall']:.2f}", f"{h['wall']:.2f}",
                       f"{h.get('ratio_vs_second_order', float('nan')):.2f}",
                       f"{h.get('ratio_vs_first_order', float('nan')):.2f}"])
        out += [md_table(["elements", "second-order [s]", "first-order [s]", "hamiltonian [s]",
                          "H / second-order", "H / first-order"], rr), ""]
        out.append(f"- context only: {PAPER} (different machine, language, schemes and "
                   "accuracy criterion).")
        out.append("- error history of the dt search per row in integration.json (`tries`).")
        out.append("")
    sc = run.get("scaling")
    if sc:
        out += [f"### Scaling and overhead: bar 1 x 0.1 x 0.1 m, hexahedra degree 1, "
                f"dt = {run['scaling_dt']:g} s, {run['scaling_steps']} timed steps after one "
                f"warm-up step, {run['nproc']} process(es)", ""]
        hdr = ["n", "dofs", "solver", "second-order [ms/step] mean (median), path",
               "second-order, TS path [ms/step]",
               "first-order [ms/step]", "hamiltonian [ms/step]", "H / second-order",
               "plain Newmark [ms/step] mean (median)", "plain solve alone [ms]",
               "mbs second-order / plain, mean (median)",
               "probe only [ms/step] / plain, mean (median)", "slowest step SO [s] (#)",
               "warm-up step SO / plain [s]", "load before / after"]
        rows = []
        notes = []
        for r in sc:
            if r.get("status") != "ok":
                notes.append(f"- {r['dofs']:,} dofs (n = {r['n']}): {r['status']}")
                continue
            f = r["formulations"]
            def mm(x):
                return "—" if x is None else f"{ms(x['per_step'])} ({ms(x['per_step_median'])})"
            so = f["second-order"]
            h = f.get("hamiltonian")
            if r.get("note"):
                notes.append(f"- {r['dofs']:,} dofs: {r['note']}")
            rows.append([str(r["n"]), f"{r['dofs']:,}", r["solver"],
                         f"{mm(so)}, {so.get('stepper', 'ts')}", mm(r.get("second_order_ts")),
                         mm(f.get("first-order")), mm(h),
                         "—" if h is None else f"{h['per_step'] / so['per_step']:.2f}",
                         mm(r["plain"]), ms(r["plain"]["solve_only"]),
                         f"**{r['ratio_second_order_plain']:.2f}** ({r['ratio_median']:.2f})",
                         (f"{mm(r['second_order_probe_only'])}: **{r['ratio_probe_only']:.2f}** "
                          f"({r['ratio_probe_only_median']:.2f})")
                         if "second_order_probe_only" in r else "—",
                         f"{so['slowest']:.3f} (#{so['slowest_step']})",
                         f"{f['second-order']['warmup']:.2f} / {r['plain']['warmup']:.2f}",
                         f"{r['loadavg_before'][0]} / {r['load_after'][0]}"])
        out += [md_table(hdr, rows), ""] + notes
        pr = [r for r in sc if r.get("pairs")]
        if pr:
            out += ["", "Alternating rounds (second-order, Hamilton, plain loop; each run "
                    "about `--pair-seconds` long): per round the ratio of the mean step times; "
                    "the median over the rounds, and the same of the ratios of the median "
                    "step times:", ""]

            def med(p, key):
                x = p.get(key + "_median")
                return "—" if x is None else f"**{x:.3f}**"
            out += [md_table(["dofs", "rounds x steps", "SO / plain per round",
                              "**SO / plain** median", "of step medians", "H / SO per round",
                              "**H / SO** median", "of step medians"],
                             [[f"{r['dofs']:,}", f"{len(r['pairs']['so'])} x "
                               f"{r['pairs']['steps']}",
                               ", ".join(f"{x:.3f}" for x in r["pairs"]["so_plain"]),
                               med(r["pairs"], "so_plain"),
                               med(r["pairs"], "so_plain_of_medians"),
                               ", ".join(f"{x:.3f}" for x in r["pairs"]["h_so"]) or "—",
                               med(r["pairs"], "h_so"), med(r["pairs"], "h_so_of_medians")]
                              for r in pr]), ""]
        out.append("- ms/step = (time of the monitor call after the last step - time after the "
                   "warm-up step) / steps, max over ranks; the warm-up step holds the Jacobian "
                   "assembly and factorization (plain: the first solve's factorization).")
        out.append("- plain Newmark: M and K + 4/dt^2 M assembled once (not timed), one "
                   "factorization, per step traction re-assembly, M-mult rhs, solve, updates, "
                   "the same probe; target (issue 17): mbs / plain <= 1.05 with the energies "
                   "on. \"probe only\": the dolfinx_mbs run with `energy=False` (no energy "
                   "monitor: the outputs of the plain loop).")
        for r in sc:
            p = r.get("profile")
            if not p:
                continue
            out += ["", f"#### Where the time of a second-order step goes ({r['dofs']:,} dofs, "
                    f"cProfile, {p['steps']} steps incl. warm-up; "
                    f"{p['per_step_profiled'] * 1e3:.1f} ms/step under the profiler)", ""]
            keep = p["top"][:25]
            out += [md_table(["function", "calls", "cumulative [s]", "own [s]",
                              "cumulative per step [ms]"],
                             [[x["func"].replace("|", "/"), str(x["ncalls"]),
                               f"{x['cumtime']:.3f}", f"{x['tottime']:.3f}",
                               f"{x['cumtime'] / p['steps'] * 1e3:.2f}"] for x in keep]), ""]
    return "\n".join(out) + "\n"


def plot(runs: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    rod = next((r for r in reversed(runs) if r.get("rod") and not r.get("quick")), None)
    if rod:
        for form, mk in zip(mbs.integrate.FORMULATIONS, ("o-", "s--", "^:")):
            pts = sorted((r["elements"], r["wall"]) for r in rod["rod"]
                         if r["formulation"] == form and r.get("status") == "ok")
            if pts:
                a1.plot(*zip(*pts), mk, label=form)
        a1.set_xlabel("elements along the rod")
        a1.set_ylabel("wall time for 0.1 s of motion [s]")
        a1.set_title(f"seed 003 rod, equal accuracy ({rod['rod_tol']:g}), {rod['nproc']} proc.")
        a1.legend()
        a1.grid(alpha=0.3)
    seen = set()
    for run in reversed(runs):
        if not run.get("scaling") or run.get("quick") or run["nproc"] in seen:
            continue
        seen.add(run["nproc"])
        ok = [r for r in run["scaling"] if r.get("status") == "ok"]
        style = "-" if run["nproc"] == 1 else "--"
        for form, mk in zip(mbs.integrate.FORMULATIONS, "os^"):
            okf = [r for r in ok if form in r["formulations"]]
            a2.loglog([r["dofs"] for r in okf],
                      [r["formulations"][form]["per_step"] for r in okf], mk + style,
                      label=f"{form}, np={run['nproc']}")
        a2.loglog([r["dofs"] for r in ok], [r["plain"]["per_step"] for r in ok], "kx" + style,
                  label=f"plain Newmark, np={run['nproc']}")
    a2.set_xlabel("dofs")
    a2.set_ylabel("seconds per time step")
    a2.set_title("bar 1 x 0.1 x 0.1 m, hexahedra P1")
    a2.legend(fontsize=7)
    a2.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    p = parser(__doc__, load=0.5, max_wait=600.0)
    p.add_argument("--quick", action="store_true", help="smoke run (seconds); nothing written "
                   "unless --write")
    p.add_argument("--studies", default="rod,scaling")
    p.add_argument("--elements", default="5,10,15,20,25")
    p.add_argument("--t-end", type=float, default=0.1)
    p.add_argument("--dt0", type=float, default=1e-4)
    p.add_argument("--tol", type=float, default=1e-3)
    p.add_argument("--max-halvings", type=int, default=7)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--sizes", default="1e4,1e5,1e6")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--dt", type=float, default=1e-4)
    p.add_argument("--second-order-only-from", type=float, default=float("inf"))
    p.add_argument("--iterative-from", type=float, default=5e5)
    p.add_argument("--mem-limit-gib", type=float, default=16.0)
    p.add_argument("--time-limit", type=float, default=240.0, help="per size (s)")
    p.add_argument("--force", action="store_true")
    p.add_argument("--stepper", default="auto",
                   help="integrate's stepper (auto: what a user gets; the second-order TS "
                        "path is measured beside it)")
    p.add_argument("--no-profile", dest="profile", action="store_false")
    p.add_argument("--no-extras", dest="extras", action="store_false",
                   help="no TS-path and probe-only runs beside the second-order one")
    p.add_argument("--pairs", type=int, default=3,
                   help="alternating rounds (SO, Hamilton, plain) for the ratios (0: none)")
    p.add_argument("--pair-seconds", type=float, default=1.0,
                   help="each round's run lasts about this long (s of plain steps)")
    p.add_argument("--pairs-max-dofs", type=float, default=5e5,
                   help="no rounds above this size (their runs take minutes)")
    p.add_argument("--write", action="store_true", help="write results even with --quick")
    p.add_argument("--json-out", help="also write this run as JSON to this path (any mode)")
    args = p.parse_args()
    if args.quick:
        args.elements, args.t_end, args.repeats = "5", 0.005, 1
        args.sizes, args.steps, args.max_wait = "2e3", 3, 0.0
        args.pairs, args.pair_seconds = 2, 0.05
    args.elements = [int(x) for x in args.elements.split(",")]
    args.sizes = [float(x) for x in args.sizes.split(",")]
    studies = [s for s in args.studies.split(",") if s]
    write = (not args.quick or args.write) and not args.no_write

    t0 = time.perf_counter()
    run = dict(date=utc_now(), nproc=COMM.size, studies=studies, quick=args.quick,
               command=command_line(COMM.size), machine=machine(), versions=versions(),
               git=git_rev(), loadavg_start=loadavg(), repeats=args.repeats)
    run["load_wait"] = wait_for_load(args.load_threshold, args.max_wait)
    log(f"load {' '.join(run['load_wait']['before'])} -> {' '.join(loadavg())}; "
        f"{COMM.size} process(es)")
    # warm the JIT cache and PETSc/MUMPS (not timed)
    _m, _b = rod_model(2)
    _m.solve_static()
    for form in mbs.integrate.FORMULATIONS:
        _m.integrate(t_end=2e-5, dt=1e-5, formulation=form, progress=False, stepper="ts")
    del _m, _b
    collect()
    if "rod" in studies:
        log("study 1: seed 003's rod at equal accuracy")
        run.update(rod_t_end=args.t_end, rod_tol=args.tol, rod_dt0=args.dt0)
        run["rod"] = study_rod(args)
    if "scaling" in studies:
        log("studies 2 and 3: scaling and overhead")
        run.update(scaling_dt=args.dt, scaling_steps=args.steps)
        run["scaling"] = study_scaling(args)
    run["loadavg_end"] = loadavg()
    run["wall"] = gmax(time.perf_counter() - t0)
    if RANK == 0:
        md = markdown_section(run)
        print(md)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(run, indent=1))
        if write:
            runs = append_results(
                "integration", run, md,
                "Time integration: formulations at equal accuracy, scaling, overhead",
                args.results_dir)
            plot(runs, args.results_dir / "integration.png")
            print(f"written: {args.results_dir}/integration.json, .md, .png")
    COMM.Barrier()


if __name__ == "__main__":
    main()
