"""Benchmark: a 24-blade wheel from one sector (issue 43): the lowest 6 frequencies of every
harmonic index k = 0 ... 12 at one speed, beside the whole wheel meshed as one body.

    mpirun -n 2 python bench/cyclic.py                     # the issue's case, 2 ranks
    python bench/cyclic.py --size 0.02 --blade-size 0.01 --no-write   # quick check

The wheel of `demos/bladed_wheel.py` (bore 50 mm, rim 200 mm, disk 20 mm thick, 24 flat blades
100 x 30 x 4 mm staggered 30 degrees; steel), one sector of gmsh (`meshes.bladed_sector`,
second-order tetrahedra of ``--size`` in the disk and ``--blade-size`` on the blade, its cut
faces periodic), P2, clamped at the bore, spinning at ``--rpm`` with centrifugal prestress.

Timed (maximum over ranks, barriers around each part):

* ``setup``: mesh, model, operators and the prestress's unit solves (the k = 0 problem);
* ``harmonics``: for each k, ``model.natural_frequencies(n=6, harmonic=k)`` (spin softening and
  prestress; the package's default, without the Coriolis coupling: a symmetric pencil per k,
  of twice the sector's free dofs for 0 < k < 12), each k's time and their sum;
* ``at once``: the same 13 indices by ``model.harmonic_frequencies(n=6)`` (one factorization
  of the sector, its cut faces condensed, Lanczos for every index in lock step:
  :mod:`dolfinx_mbs.cyclic.condensed`), and its largest relative difference from the above;
* with ``--gyroscopic``, the same with the Coriolis coupling (the quadratic eigenproblem: the
  forward and backward travelling waves).

The whole wheel (``--wheel-sizes``: one or more pairs ``size:blade_size`` of coarser sector
meshes; each sector's mesh turned 24 times and merged by ``cyclic.WheelMesh``, one body of 24
times the sector's dofs, clamped at its bore, the same speed and prestress): its frequencies up
to the sector lists' common top (the lowest six of every k; the wheel's count below it) with
one ``natural_frequencies`` call, timed with its set-up, beside the sector's 13 harmonic
indices on the same sector mesh; their largest relative difference is recorded. The wheel at
the issue's size (1.2e6 dofs) does not fit: the largest that does is the last pair given
(a wheel whose set-up or solve fails, or exceeds ``--wheel-limit`` seconds in the sector
estimate, is skipped and said so).

Recorded: machine, versions, commit, date, the 1-minute/5/15 load average at the start and end
(the machine is shared: the times are what this run got), dofs, times, frequencies.
One BLAS thread per process.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["OMP_NUM_THREADS"])

import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from benchlib import (  # noqa: E402
    append_results,
    barrier,
    command_line,
    context_lines,
    git_rev,
    gmax,
    loadavg,
    log,
    machine,
    parser,
    utc_now,
    versions,
)
from mpi4py import MPI  # noqa: E402

import dolfinx_mbs as mbs  # noqa: E402
from dolfinx_mbs import meshes  # noqa: E402

COMM = MPI.COMM_WORLD
N = 24
STEEL = dict(E=210e9, nu=0.3, density=7850.0)


def sector_model(size: float, blade_size: float, rate: float):
    mesh, _, facets = meshes.bladed_sector(COMM, n_sectors=N, size=size, blade_size=blade_size)
    sector = mbs.cyclic.Sector(N, low=(facets, meshes.LOW), high=(facets, meshes.HIGH))
    body = mbs.Body(mesh, mbs.materials.LinearElastic(**STEEL),
                    mbs.frames.ConstantSpin(rate=rate), degree=2, stiffening="prestress",
                    cyclic=sector, name="sector")
    model = mbs.Model([body])
    model.clamp(body, facets=(facets, meshes.BORE))
    return model, body, sector, mesh


def harmonics(model, gyroscopic: bool) -> tuple:
    per_k, times = {}, []
    for k in range(N // 2 + 1):
        barrier()
        t = time.perf_counter()
        per_k[k] = model.natural_frequencies(n=6, harmonic=k, gyroscopic=gyroscopic)
        times.append(gmax(time.perf_counter() - t))
        log(f"  k = {k:2d}: {times[-1]:6.1f} s  {np.round(per_k[k] / (2 * np.pi), 1)} Hz")
    return per_k, times


def sector_case(size: float, blade_size: float, rate: float, gyroscopic: bool) -> dict:
    barrier()
    t0 = time.perf_counter()
    model, body, sector, mesh = sector_model(size, blade_size, rate)
    model.assembly.at(0.0)
    setup = gmax(time.perf_counter() - t0)
    dofs = body.V.dofmap.index_map.size_global * 3
    log(f"sector {size:g}/{blade_size:g}: {dofs} dofs, set-up {setup:.1f} s")
    out = dict(size=size, blade_size=blade_size, dofs=dofs, setup=setup)
    per_k, times = harmonics(model, False)
    out.update(times=times, total=float(sum(times)),
               hz={k: (w / (2 * math.pi)).tolist() for k, w in per_k.items()})
    log(f"  13 harmonic indices: {out['total']:.1f} s")
    barrier()
    t = time.perf_counter()
    spec = model.harmonic_frequencies(n=6)
    out["condensed"] = gmax(time.perf_counter() - t)
    out["condensed_methods"] = list(spec.method)
    out["condensed_hz"] = {int(k): (w / (2 * math.pi)).tolist()
                           for k, w in zip(spec.harmonic, spec.frequencies)}
    out["condensed_max_rel_diff"] = float(max(
        np.max(np.abs(spec[k] - w) / w) for k, w in per_k.items()))
    log(f"  13 harmonic indices at once (harmonic_frequencies, {set(spec.method)}): "
        f"{out['condensed']:.1f} s, max rel. diff from the per-index solves "
        f"{out['condensed_max_rel_diff']:.1e}")
    if gyroscopic:
        per_g, tg = harmonics(model, True)
        out.update(times_gyroscopic=tg, total_gyroscopic=float(sum(tg)),
                   hz_gyroscopic={k: (w / (2 * math.pi)).tolist() for k, w in per_g.items()})
        log(f"  13 harmonic indices with Coriolis: {out['total_gyroscopic']:.1f} s")
    return out, model, per_k, sector, mesh


def wheel_case(size: float, blade_size: float, rate: float) -> dict:
    res, model, per_k, sector, mesh = sector_case(size, blade_size, rate, False)
    cut = min(np.max(w) for w in per_k.values())
    union = np.sort(np.concatenate(list(per_k.values())))
    union = union[union <= cut * (1 + 1e-9)]
    barrier()
    t0 = time.perf_counter()
    wheel = mbs.cyclic.WheelMesh(mesh, sector)
    body = mbs.Body(wheel.mesh, mbs.materials.LinearElastic(**STEEL),
                    mbs.frames.ConstantSpin(rate=rate), degree=2, stiffening="prestress",
                    name="wheel")
    wm = mbs.Model([body])
    wm.clamp(body, lambda x: np.hypot(x[0], x[1]) <= 0.05 + 1e-9)
    wm.assembly.at(0.0)
    t1 = time.perf_counter()
    w = wm.natural_frequencies(n=len(union))
    t2 = time.perf_counter()
    res.update(wheel_dofs=body.V.dofmap.index_map.size_global * 3,
               wheel_setup=gmax(t1 - t0), wheel_solve=gmax(t2 - t1), wheel_count=len(union),
               wheel_max_rel_diff=float(np.abs(w - union).max() / union.max()))
    log(f"  whole wheel: {res['wheel_dofs']} dofs, set-up {res['wheel_setup']:.1f} s, "
        f"{len(union)} frequencies {res['wheel_solve']:.1f} s, max rel. diff "
        f"{res['wheel_max_rel_diff']:.1e}")
    return res


def main():
    ap = parser(__doc__, load=None, max_wait=None)
    ap.add_argument("--size", type=float, default=0.006)
    ap.add_argument("--blade-size", type=float, default=0.0035)
    ap.add_argument("--rpm", type=float, default=10000.0)
    ap.add_argument("--gyroscopic", action="store_true")
    ap.add_argument("--wheel-sizes", default="0.03:0.012,0.02:0.008")
    args = ap.parse_args()
    rate = args.rpm * math.pi / 30
    run = dict(date=utc_now(), ranks=COMM.size, machine=machine(), versions=versions(),
               git=git_rev(), command=command_line(COMM.size), loadavg_start=loadavg(),
               rpm=args.rpm)
    run["sector"], *_ = sector_case(args.size, args.blade_size, rate, args.gyroscopic)
    run["wheels"] = []
    for pair in args.wheel_sizes.split(",") if args.wheel_sizes else []:
        s, b = (float(v) for v in pair.split(":"))
        try:
            run["wheels"].append(wheel_case(s, b, rate))
        except Exception as e:  # a wheel that does not fit: said so, the run goes on
            log(f"  whole wheel {pair}: {type(e).__name__}: {e}")
            run["wheels"].append(dict(size=s, blade_size=b, failed=f"{type(e).__name__}: {e}"))
    run["loadavg_end"] = loadavg()
    if COMM.rank != 0:
        return
    sec = run["sector"]
    lines = [f"## {run['date']}: {run['ranks']} MPI process(es)", ""]
    lines += context_lines(run)
    lines += [f"- load average (1, 5, 15 min) at start {' '.join(run['loadavg_start'])}, at "
              f"end {' '.join(run['loadavg_end'])} (a shared machine: 2 cores, other work "
              "running)", ""]
    lines += [f"Sector of {N} ({sec['size']:g} m / blade {sec['blade_size']:g} m): "
              f"**{sec['dofs']} dofs** (the whole wheel: {N * sec['dofs']}), set-up "
              f"{sec['setup']:.1f} s; the lowest 6 frequencies of each harmonic index at "
              f"{args.rpm:g} rpm (prestress, spin softening):", ""]
    head = "| k | " + " | ".join(str(k) for k in range(N // 2 + 1)) + " | all |"
    lines += [head, "|---|" + "---:|" * (N // 2 + 2)]
    lines.append("| time [s] | " + " | ".join(f"{t:.1f}" for t in sec["times"])
                 + f" | **{sec['total']:.1f}** |")
    if "times_gyroscopic" in sec:
        lines.append("| with Coriolis [s] | " + " | ".join(f"{t:.1f}" for t in
                                                          sec["times_gyroscopic"])
                     + f" | **{sec['total_gyroscopic']:.1f}** |")
    lines.append("| lowest [Hz] | " + " | ".join(f"{sec['hz'][k][0]:.1f}"
                                                 for k in range(N // 2 + 1)) + " | |")
    lines += ["", f"All 13 indices at once, `model.harmonic_frequencies(n=6)` "
              f"({', '.join(sorted(set(sec['condensed_methods'])))}): "
              f"**{sec['condensed']:.1f} s** against {sec['total']:.1f} s one index at a time; "
              f"largest relative difference of the 78 frequencies "
              f"{sec['condensed_max_rel_diff']:.1e}."]
    if run["wheels"]:
        lines += ["", "Beside the whole wheel (coarser sector meshes, the same wheel: each "
                  "sector mesh turned 24 times, one body):", "",
                  "| sector mesh | sector dofs | 13 indices [s] | at once [s] | wheel dofs "
                  "| wheel set-up [s] | wheel solve [s] | frequencies | max rel. diff |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for w in run["wheels"]:
            if "failed" in w:
                lines.append(f"| {w['size']:g} / {w['blade_size']:g} | | | | | | | | "
                             f"{w['failed'][:60]} |")
                continue
            lines.append(f"| {w['size']:g} / {w['blade_size']:g} | {w['dofs']} | "
                         f"{w['total']:.1f} | {w['condensed']:.1f} | {w['wheel_dofs']} | "
                         f"{w['wheel_setup']:.1f} | "
                         f"{w['wheel_solve']:.1f} | {w['wheel_count']} | "
                         f"{w['wheel_max_rel_diff']:.1e} |")
    md = "\n".join(lines) + "\n"
    print(md)
    if not args.no_write:
        append_results("cyclic", run, md, "A 24-blade wheel from one sector (issue 43)")


if __name__ == "__main__":
    main()
