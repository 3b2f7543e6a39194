"""Benchmark: the Kane-Ryan-Banerjee spin-up with ``model.integrate`` against the script a user
would otherwise write (raw DOLFINx + scipy Newmark), side by side (issue 17).

    python bench/krb_scipy.py                 # 3 alternating pairs, results appended
    python bench/krb_scipy.py --pairs 1 --t-end 1 --no-write      # a quick look
    python bench/krb_scipy.py --profile out.prof                   # cProfile of the plugin run

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

Each run is a fresh serial process; the two alternate (scipy, plugin, scipy, plugin, ...) over
``--pairs``. Wall time = from building the mesh to the tip history in hand (imports excluded,
the same for both; form compilation is cached after the first run), measured in the process;
the process's total wall time is recorded too. Reported: the medians, their ratio
plugin / scipy, and the largest difference of the two tip histories (must be below 1e-3 of the
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
from benchlib import (append_results, command_line, context_lines, git_rev,  # noqa: E402
                      load_text, loadavg, log, machine, md_table, parser, run_json,
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


CASES = {"scipy": raw_scipy, "plugin": plugin}


def worker(args) -> None:
    from mpi4py import MPI  # noqa: F401  (before DOLFINx)

    import dolfinx_mbs

    t0 = time.perf_counter()
    times, w = CASES[args.case](args.t_end, args.dt)
    wall = time.perf_counter() - t0
    i = int(np.argmax(np.abs(w)))
    out = dict(case=args.case, wall=wall, steps=len(times) - 1, peak=float(w[i]),
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
    s, p = run["scipy"], run["plugin"]
    rows = [[name, f"{statistics.median(r['walls']):.2f}",
             " ".join(f"{x:.2f}" for x in r["walls"]),
             " ".join(f"{x:.1f}" for x in r["process"]),
             f"{r['peak']:.4f} at {r['t_peak']:.2f} s"]
            for name, r in (("raw DOLFINx + scipy Newmark", s),
                            ("model.integrate (second-order)", p))]
    head = ["run", "median wall (s)", "walls (s)", "process walls (s)", "tip peak (m)"]
    return "\n".join([
        f"## {run['date']}: {run['steps']} steps of dt = {run['dt']:g} s, "
        f"{run['pairs']} alternating pairs, serial", "",
        *context_lines(run), load_text(run), "",
        md_table(head, rows), "",
        f"plugin / scipy = **{run['ratio']:.2f}** (medians); tip histories differ by at most "
        f"{run['diff']:.2e} m = {run['diff_rel']:.1e} of the peak.", ""])


def main() -> None:
    ap = parser(__doc__, load=1.0)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--t-end", type=float, default=10.0)
    ap.add_argument("--dt", type=float, default=5e-3)
    ap.add_argument("--timeout", type=float, default=1200.0, help="per process (s)")
    ap.add_argument("--profile", help="run the plugin once under cProfile into this file")
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
    res = {k: dict(walls=[], process=[]) for k in CASES}
    for i in range(args.pairs):
        for case in CASES:
            t0 = time.perf_counter()
            r = run_json([__file__, "--case", case, "--t-end", args.t_end, "--dt", args.dt],
                         timeout=args.timeout)
            res[case]["process"].append(time.perf_counter() - t0)
            res[case]["walls"].append(r["wall"])
            res[case].update({k: r[k] for k in ("peak", "t_peak", "times", "tip", "steps",
                                                "versions")})
            log(f"pair {i + 1}: {case:6s} {r['wall']:7.2f} s (process "
                f"{res[case]['process'][-1]:.1f} s), tip peak {r['peak']:.4f} m at "
                f"{r['t_peak']:.2f} s")
    s, p = res["scipy"], res["plugin"]
    if len(s["tip"]) != len(p["tip"]):
        raise SystemExit(f"the runs have {len(s['tip'])} and {len(p['tip'])} output times")
    diff = float(np.max(np.abs(np.array(s["tip"]) - np.array(p["tip"]))))
    run.update(steps=p["steps"], ratio=statistics.median(p["walls"])
               / statistics.median(s["walls"]), diff=diff, diff_rel=diff / abs(p["peak"]),
               loadavg_end=loadavg(), versions=p["versions"])
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
