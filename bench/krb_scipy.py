"""Benchmark: the Kane-Ryan-Banerjee spin-up with ``model.integrate`` against the script a user
would otherwise write (raw DOLFINx + scipy Newmark), side by side (issue 17).

    python bench/krb_scipy.py                 # 3 alternating pairs, results appended
    python bench/krb_scipy.py --pairs 1 --t-end 1 --no-write      # a quick look
    python bench/krb_scipy.py --profile out.prof                   # cProfile of the plugin run
    python bench/krb_scipy.py --before /tmp/old    # also the plugin of another checkout

The case (``demos/spin_up_beam.py``, Omega_s = 6 rad/s): a 10 m beam as a 2D plane-stress strip,
100 x 1 Q2 quadrilaterals (1,206 dofs, 1,200 free), E = 4.67 GPa, rho = 200 kg/m^3, square
section b = h = 7.75 cm (EI = 14,000 N m^2, rho A = 1.2 kg/m), clamped at x = 0, spun up about
z by ``SpinUp(final_rate=6, ramp_time=15)``, with the centrifugal prestress; from rest, dt =
5e-3 s to 10 s (2,000 steps); the probe is the tip's mid-node (L, 0), its y-displacement the
deflection normal to the beam (-0.574 m near 6.8 s).

* ``scipy``: the forty-line script of :func:`raw_scipy`: DOLFINx assembles M, K, the unit
  gyroscopic, angular-acceleration and geometric stiffness matrices and the unit loads once
  (the geometric one from the static solve of the unit centrifugal load), scipy slices out the
  clamped dofs and steps Newmark's average-acceleration rule (beta = 1/4, gamma = 1/2),
  forming M + dt/2 C(t) + dt^2/4 K(t) and solving it with ``scipy.sparse.linalg.spsolve`` (a
  new factorization) at every step.
* ``plugin``: :func:`plugin`: ``Body``, ``Model.clamp`` and ``model.integrate(formulation=
  "second-order")`` with its defaults (TSALPHA2 with spectral radius 1, which is the same
  average-acceleration rule, the energy monitor on), a probe at (L, 0), no progress bar.

Each run is a fresh serial process (``PYTHONPATH`` this checkout, or the ``--before`` one for a
third case, the plugin as it was); the cases alternate (scipy, plugin[, before], scipy, ...)
over ``--pairs``. Wall time = from building the mesh to the tip history in hand (imports
excluded, the same for both; form compilation is cached after the first run), measured in the
process, with its CPU time (``time.process_time``: what a shared machine's load does not
inflate); the process's total wall time is recorded too. Reported: the medians, their ratio
plugin / scipy, and the largest difference of the tip histories (must be below 1e-3 of the
peak). ``--profile FILE`` runs the plugin once under cProfile instead and prints the top of
the profile.

Results: bench/results/per_step.json (all runs) and a section appended to
bench/results/per_step.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (ROOT, append_results, command_line, context_lines,  # noqa: E402
                      git_rev, load_text, loadavg, log, machine, md_table, parser, run_json,
                      utc_now, versions, wait_for_load)

L, EI, RHO_A, EA = 10.0, 14000.0, 1.2, 2.8e7
H = np.sqrt(12.0 * EI / EA)
B = H
E, RHO, NU = EA / (B * H), RHO_A / (B * H), 0.3
FINAL_RATE, RAMP = 6.0, 15.0
NX = 100


def spin(t):
    """Omega(t), Omegadot(t) of the spin-up (as frames.SpinUp, written out for the script)."""
    if t >= RAMP:
        return FINAL_RATE, 0.0
    s = 2.0 * np.pi / RAMP
    return (FINAL_RATE / RAMP * (t - np.sin(s * t) / s),
            FINAL_RATE / RAMP * (1.0 - np.cos(s * t)))


def strip(comm):
    from dolfinx import mesh as dmesh

    return dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                  [NX, 1], dmesh.CellType.quadrilateral)


# --- the user's script: raw DOLFINx + scipy ------------------------------------------------

def raw_scipy(t_end: float, dt: float):
    """(times, tip deflection): the spin-up stepped by Newmark in scipy."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    import ufl
    from dolfinx import fem
    from dolfinx.fem import petsc as fpetsc
    from mpi4py import MPI

    from dolfinx_mbs.compat import vector_space

    mesh = strip(MPI.COMM_SELF)
    V = vector_space(mesh, 2)
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    X = ufl.SpatialCoordinate(mesh)
    J = ufl.as_matrix([[0.0, -1.0], [1.0, 0.0]])        # e_z x (.)
    mu, lam = E / (2 * (1 + NU)), E * NU / (1 - NU**2)   # plane stress

    def sigma(w):
        eps = ufl.sym(ufl.grad(w))
        return 2 * mu * eps + lam * ufl.tr(eps) * ufl.Identity(2)

    def mat(a):
        A = fpetsc.assemble_matrix(fem.form(a))
        A.assemble()
        return sp.csr_matrix(A.getValuesCSR()[::-1])

    def vec(f):
        b = fpetsc.assemble_vector(fem.form(f))
        return b.array.copy()

    M = mat(B * RHO * ufl.inner(u, v) * ufl.dx)
    K = mat(B * ufl.inner(sigma(u), ufl.sym(ufl.grad(v))) * ufl.dx)
    G1 = mat(B * 2 * RHO * ufl.inner(J * u, v) * ufl.dx)      # Coriolis / Omega
    Ka1 = mat(B * RHO * ufl.inner(J * u, v) * ufl.dx)         # angular acceleration / alpha
    qc1 = vec(B * RHO * ufl.inner(X, v) * ufl.dx)             # centrifugal load / Omega^2
    qe1 = vec(-B * RHO * ufl.inner(J * X, v) * ufl.dx)        # Euler load / alpha
    x = V.tabulate_dof_coordinates()
    free = np.flatnonzero(np.repeat(~np.isclose(x[:, 0], 0.0), 2))
    sub = [A[free][:, free].tocsc() for A in (M, K, G1, Ka1)]
    M, K, G1, Ka1 = sub
    qc1, qe1 = qc1[free], qe1[free]
    u1 = fem.Function(V)                                      # prestress of Omega = 1
    u1.x.array[free] = spla.spsolve(K, qc1)
    Ks1 = mat(B * ufl.inner(ufl.grad(u) * sigma(u1), ufl.grad(v)) * ufl.dx)[free][:, free]
    Kw1 = Ks1.tocsc() - M                                     # geometric - spin softening
    tip = np.flatnonzero(np.isclose(x[:, 0], L) & np.isclose(x[:, 1], 0.0))[0]
    tip = int(np.searchsorted(free, 2 * tip + 1))
    n = len(free)
    d, vel, acc = np.zeros(n), np.zeros(n), np.zeros(n)
    steps = int(round(t_end / dt))
    times, w = [0.0], [0.0]
    for k in range(1, steps + 1):
        t = k * dt
        W, A = spin(t)
        C, Kt = W * G1, K + W * W * Kw1 + A * Ka1
        f = W * W * qc1 + A * qe1
        up = d + dt * vel + 0.25 * dt * dt * acc
        vp = vel + 0.5 * dt * acc
        acc = spla.spsolve((M + 0.5 * dt * C + 0.25 * dt * dt * Kt).tocsc(),
                           f - C @ vp - Kt @ up)
        d, vel = up + 0.25 * dt * dt * acc, vp + 0.5 * dt * acc
        times.append(t)
        w.append(d[tip])
    return np.array(times), np.array(w)


# --- the same with the plugin ----------------------------------------------------------------

def plugin(t_end: float, dt: float):
    """(times, tip deflection) from ``model.integrate``."""
    from mpi4py import MPI

    import dolfinx_mbs as mbs

    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=FINAL_RATE, ramp_time=RAMP)
    material = mbs.materials.PlaneStress(E=E, nu=NU, density=RHO, thickness=B)
    body = mbs.Body(strip(MPI.COMM_WORLD), material, frame, degree=2, stiffening="prestress")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    r = model.integrate(t_end=t_end, dt=dt, formulation="second-order", probes=[(L, 0.0)],
                        progress=False)
    return r.times, r.probes[:, 0, 1]


CASES = {"scipy": raw_scipy, "plugin": plugin, "before": plugin}
NAMES = {"scipy": "raw DOLFINx + scipy Newmark", "plugin": "model.integrate (second-order)",
         "before": "model.integrate, --before checkout"}


def worker(args) -> None:
    from mpi4py import MPI  # noqa: F401  (before DOLFINx)

    import dolfinx_mbs

    t0, c0 = time.perf_counter(), time.process_time()
    times, w = CASES[args.case](args.t_end, args.dt)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    i = int(np.argmax(np.abs(w)))
    out = dict(case=args.case, wall=wall, cpu=cpu, steps=len(times) - 1, peak=float(w[i]),
               t_peak=float(times[i]), times=times.tolist(), tip=w.tolist(),
               module=dolfinx_mbs.__file__, versions=versions())
    Path(args.json_out).write_text(json.dumps(out))


def profile(args) -> None:
    import cProfile
    import pstats

    from mpi4py import MPI  # noqa: F401

    cProfile.runctx("plugin(args.t_end, args.dt)", globals(), dict(args=args), args.profile)
    st = pstats.Stats(args.profile)
    st.sort_stats("tottime").print_stats(25)
    st.sort_stats("cumulative").print_stats(40)


def markdown(run: dict) -> str:
    rows = [[NAMES[k], f"{statistics.median(r['walls']):.2f}",
             " ".join(f"{x:.2f}" for x in r["walls"]), f"{statistics.median(r['cpus']):.2f}",
             " ".join(f"{x:.1f}" for x in r["process"]),
             f"{r['peak']:.4f} at {r['t_peak']:.2f} s"]
            for k, r in ((k, run[k]) for k in CASES if k in run)]
    head = ["run", "median wall (s)", "walls (s)", "median CPU (s)", "process walls (s)",
            "tip peak (m)"]
    before = ""
    if "before" in run:
        before = (f" The `--before` checkout ({run['before']['module']}): "
                  f"{run['ratio_before']:.2f} x scipy.")
    return "\n".join([
        f"## {run['date']}: {run['steps']} steps of dt = {run['dt']:g} s, "
        f"{run['pairs']} alternating pairs, serial", "",
        *context_lines(run), load_text(run), "",
        md_table(head, rows), "",
        f"plugin / scipy = **{run['ratio']:.2f}** (median walls; "
        f"{run['ratio_cpu']:.2f} in CPU time); tip histories differ by at most "
        f"{run['diff']:.2e} m = {run['diff_rel']:.1e} of the peak.{before}", ""])


def main() -> None:
    ap = parser(__doc__, load=1.0)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--t-end", type=float, default=10.0)
    ap.add_argument("--dt", type=float, default=5e-3)
    ap.add_argument("--timeout", type=float, default=1200.0, help="per process (s)")
    ap.add_argument("--profile", help="run the plugin once under cProfile into this file")
    ap.add_argument("--before", help="a checkout of dolfinx_mbs whose plugin runs as a third "
                    "case (its PYTHONPATH)")
    ap.add_argument("--case", choices=tuple(CASES), help=argparse.SUPPRESS)
    ap.add_argument("--json-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        return worker(args)
    if args.profile:
        return profile(args)
    wait = wait_for_load(args.load_threshold, args.max_wait)
    run = dict(date=utc_now(), machine=machine(), git=git_rev(), command=command_line(),
               loadavg_start=loadavg(), load_wait=wait, pairs=args.pairs, dt=args.dt,
               t_end=args.t_end)
    cases = ["scipy", "plugin"] + (["before"] if args.before else [])
    paths = dict(scipy=str(ROOT), plugin=str(ROOT), before=args.before)
    res = {k: dict(walls=[], cpus=[], process=[]) for k in cases}
    for i in range(args.pairs):
        for case in cases:
            t0 = time.perf_counter()
            r = run_json([__file__, "--case", case, "--t-end", args.t_end, "--dt", args.dt],
                         timeout=args.timeout, env=dict(PYTHONPATH=paths[case]))
            res[case]["process"].append(time.perf_counter() - t0)
            res[case]["walls"].append(r["wall"])
            res[case]["cpus"].append(r["cpu"])
            res[case].update({k: r[k] for k in ("peak", "t_peak", "times", "tip", "steps",
                                                "versions", "module")})
            log(f"pair {i + 1}: {case:6s} {r['wall']:7.2f} s (process "
                f"{res[case]['process'][-1]:.1f} s), tip peak {r['peak']:.4f} m at "
                f"{r['t_peak']:.2f} s")
    s, p = res["scipy"], res["plugin"]
    if len(s["tip"]) != len(p["tip"]):
        raise SystemExit(f"the runs have {len(s['tip'])} and {len(p['tip'])} output times")
    diff = max(float(np.max(np.abs(np.array(s["tip"]) - np.array(res[k]["tip"]))))
               for k in cases[1:])
    med = {k: (statistics.median(r["walls"]), statistics.median(r["cpus"]))
           for k, r in res.items()}
    run.update(steps=p["steps"], ratio=med["plugin"][0] / med["scipy"][0],
               ratio_cpu=med["plugin"][1] / med["scipy"][1], diff=diff,
               diff_rel=diff / abs(p["peak"]), loadavg_end=loadavg(), versions=p["versions"])
    if args.before:
        run["ratio_before"] = med["before"][0] / med["scipy"][0]
    for r in res.values():
        r.pop("times"), r.pop("tip"), r.pop("versions")
    run.update(res)
    md = markdown(run)
    log(md)
    if run["diff_rel"] > 1e-3:
        raise SystemExit(f"the tip histories differ by {run['diff_rel']:.1e} of the peak")
    if not args.no_write:
        append_results("per_step", run, md, "A step as cheap as its solve (issue 17)",
                       args.results_dir, intro="Written by `bench/krb_scipy.py` (see its "
                       "docstring for the method).")


if __name__ == "__main__":
    main()
