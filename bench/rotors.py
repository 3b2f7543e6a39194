"""Benchmark: a 3D rotor on bearings in the stationary frame, its damped Campbell diagram and
its unbalance response side by side in one run (issue 30).

    mpirun -n 2 python bench/rotors.py                 # the ~1e5-dof rotor, 2 ranks
    python bench/rotors.py --size 0.02 --no-write      # a quick check

The rotor: a steel shaft (``--length`` 1.2 m, radius 40 mm, P2 tetrahedra of ``--size``) cut
into segments, two rigid disks (20 kg and 30 kg, model.disk) on the lateral surfaces of two
seats, two anisotropic bearings with damping on its end faces (model.bearing), centrifugal
prestress. Timed: the set-up (mesh, operators, prestress), the Campbell diagram of ``--modes``
damped modes at ``--speeds`` speeds (0 ... ``--top`` rpm) and the unbalance response at
``--response-speeds`` speeds over the same range (one unbalance on each disk, both disks
probed), each the maximum over ranks. Recorded: dofs, the journals' dofs and the entries their
dense blocks add to each matrix's pattern, times, frequencies, log decs, critical speeds and
amplification factors. One BLAS thread per process.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["OMP_NUM_THREADS"])

import platform  # noqa: E402
import time

import dolfinx
import numpy as np
from benchlib import barrier, gmax, load_runs, parser, save_runs, utc_now
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

COMM = MPI.COMM_WORLD
RPM = 30.0 / np.pi

#: the rotor (m, kg, kg m^2, N/m, N s/m)
LENGTH, RADIUS = 1.2, 0.04
SEATS = ((0.36, 0.38), (0.82, 0.84))
DISKS = (dict(mass=20.0, polar=0.25, diametral=0.13), dict(mass=30.0, polar=0.45, diametral=0.24))
BEARINGS = (dict(kxx=5e7, kyy=8e7, kxy=1e6, kyx=-1e6, cxx=2e3, cyy=3e3),
            dict(kxx=6e7, kyy=9e7, cxx=2.5e3, cyy=3.5e3))


def build(size: float):
    """The bench rotor with its mesh size: (model, body, disks)."""
    cuts = tuple(z for seat in SEATS for z in seat)
    mesh, _, facets = meshes.shaft(COMM, LENGTH, RADIUS, size, cuts)
    frame = mbs.frames.Stationary((0.0, 0.0, 1.0), 0.0)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0), frame,
                    degree=2, name="rotor", stiffening="prestress")
    model = mbs.Model([body])
    for tag, coeffs in zip((meshes.BEARING_A, meshes.BEARING_B), BEARINGS):
        model.bearing(body, facets=(facets, tag), **coeffs)
    disks = [model.disk(body, facets=(facets, meshes.SHAFT_SEGMENT + 2 * k + 1), **d)
             for k, d in enumerate(DISKS)]
    return model, body, disks


def sweeps(model, disks, speeds: int, modes: int, response_speeds: int, top: float) -> tuple:
    """The Campbell diagram over ``speeds`` speeds up to ``top`` rpm and the unbalance
    response (one unbalance on each disk, both probed) over ``response_speeds``: ``(speeds
    (rad/s), table, response, time after the diagram, time after the response)``."""
    w = np.linspace(0.0, top / RPM, speeds)
    table = model.campbell(w, n=modes)
    t2 = time.perf_counter()
    wr = np.linspace(top / RPM / response_speeds, top / RPM, response_speeds)
    resp = model.unbalance_response(wr, unbalances=[(disks[0], 1e-4, 0.0),
                                                    (disks[1], 1e-4, np.pi / 2)], probes=disks,
                                  directions=("major",))
    return w, table, resp, t2, time.perf_counter()


def run(size: float, speeds: int, modes: int, response_speeds: int, top: float) -> dict:
    """Build, sweep and respond, timed (maximum over ranks)."""
    barrier()
    t0 = time.perf_counter()
    model, body, disks = build(size)
    ops = model.assembly.at(0.0)[0]
    journal = int(ops.rotor.block.size)
    t1 = time.perf_counter()
    w, table, resp, t2, t3 = sweeps(model, disks, speeds, modes, response_speeds, top)
    nnz = COMM.allreduce(int(ops.K.getInfo(ops.K.InfoType.LOCAL)["nz_used"]), op=MPI.SUM)
    blocks = sum(int(b.size) ** 2 for b in ops.rotor.blocks)
    return dict(dofs=body.V.dofmap.index_map.size_global * 3, journal_dofs=journal,
                block_entries=blocks, nnz=nnz, response_stats=resp.stats, setup=gmax(t1 - t0),
                campbell=gmax(t2 - t1), response=gmax(t3 - t2), speeds=speeds,
                response_speeds=response_speeds, modes=modes,
                frequencies_hz=(table.frequencies[-1] / (2 * np.pi)).tolist(),
                log_dec=table.log_dec[-1].tolist(),
                critical_rpm=[c.speed * RPM for c in table.critical_speeds if c.order == 1],
                peaks=[(resp.probes[p.probe], p.direction, p.speed * RPM, p.amplitude,
                        p.amplification) for p in resp.critical_speeds
                       if p.direction == "major"])


def main():
    """Run, record in bench/results/rotors.{json,md} (rank 0) and print."""
    ap = parser(__doc__, load=None, max_wait=None)
    ap.add_argument("--size", type=float, default=0.0105)
    ap.add_argument("--speeds", type=int, default=21)
    ap.add_argument("--modes", type=int, default=8)
    ap.add_argument("--response-speeds", type=int, default=100)
    ap.add_argument("--top", type=float, default=20000.0, help="top speed (rpm)")
    ap.add_argument("--ross", type=str, default=None,
                    help="the JSON of bench/ross_compare.py (the same rotor in ROSS), "
                         "recorded beside this run")
    args = ap.parse_args()
    load0 = os.getloadavg()
    res = run(args.size, args.speeds, args.modes, args.response_speeds, args.top)
    if COMM.rank != 0:
        return
    res.update(date=utc_now(), ranks=COMM.size, load=load0, load_end=os.getloadavg(),
               machine=platform.processor() or platform.machine(), cpus=os.cpu_count(),
               dolfinx=dolfinx.__version__, size=args.size)
    if args.ross:
        import json

        with open(args.ross) as fh:
            ross = json.load(fh)
        R = np.array([[np.array(v["x_re"]) + 1j * np.array(v["x_im"]),
                       np.array(v["y_re"]) + 1j * np.array(v["y_im"])]
                      for v in ross["probes"].values()])        # (probes, 2, speeds)
        major = np.sqrt(0.5 * (np.abs(R[:, 0]) ** 2 + np.abs(R[:, 1]) ** 2)
                        + np.abs(0.5 * (R[:, 0] ** 2 + R[:, 1] ** 2)))
        ws = np.array(ross["response_speeds"])
        peaks = [(f"disk {j + 1}", float(ws[i] * RPM), float(major[j, i]))
                 for j in range(major.shape[0]) for i in range(1, len(ws) - 1)
                 if major[j, i] > major[j, i - 1] and major[j, i] >= major[j, i + 1]]
        res["ross"] = dict(setup=ross["setup"], campbell=ross["campbell"],
                           response=ross["response"], elements=ross["elements"],
                           frequencies_hz=(np.array(ross["wd"])[-1] / (2 * np.pi)).tolist(),
                           log_dec=ross["log_dec"][-1], peaks=peaks)
    jpath = args.results_dir / "rotors.json"
    runs = load_runs(jpath)
    runs.append(res)
    lines = ["# A rotor on bearings in the stationary frame (bench/rotors.py)", "",
             "Shaft 1.2 m x 40 mm radius with two rigid disks and two anisotropic damped "
             "bearings, P2 tetrahedra, prestress; Campbell = damped modes over the speeds "
             "(one carried subspace, one factorization); response = the unbalance response "
             "over its speeds (one real factorization, the space grown by preconditioned "
             "residuals). Journal dofs: the dofs of the bearings' and disks' journals; each "
             "matrix's pattern holds their dense block (journal dofs squared entries) beside "
             "the nnz of the form. Times: maximum over ranks; load average of the shared "
             "machine at the start and end. From 2026-11-29 the shaft's cells are curved "
             "(second-order, `meshes.shaft`'s default); the runs before had straight-sided "
             "cells, whose polygonal section put the solid's frequencies 0.06-0.66 % below "
             "ROSS's (the same dofs: only the geometry's nodes moved onto the circle).", "",
             "| date (UTC) | DOLFINx | ranks | dofs | nnz of K | journal dofs | block entries | "
             "set-up (s) | Campbell (s) | speeds x modes | response (s) | response speeds | "
             "load avg | load at end |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---:|"]
    for r in runs:
        lines.append(f"| {r['date']} | {r['dolfinx']} | {r['ranks']} | {r['dofs']} | "
                     f"{r['nnz']} | {r['journal_dofs']} | {r['block_entries']} | "
                     f"{r['setup']:.1f} | {r['campbell']:.1f} | {r['speeds']} x {r['modes']} | "
                     f"{r['response']:.1f} | {r['response_speeds']} | "
                     f"{', '.join(f'{x:.2f}' for x in r['load'])} | {r['load_end'][0]:.2f} |")
    last = runs[-1]
    lines += ["", "Last run: frequencies at the top speed (Hz): "
              + ", ".join(f"{x:.1f}" for x in last["frequencies_hz"]),
              "log dec there: " + ", ".join(f"{x:.3f}" for x in last["log_dec"]),
              "critical speeds (1x crossings, rpm): "
              + ", ".join(f"{x:.0f}" for x in last["critical_rpm"]),
              "response peaks (probe, rpm, major semi-axis m, amplification factor): "
              + "; ".join(f"{p[0]} {p[2]:.0f} {p[3]:.3e} {p[4]:.1f}" for p in last["peaks"])]
    if "ross" in last:
        r = last["ross"]
        lines += ["", f"ROSS 2.3 (bench/ross_compare.py: the same rotor as {r['elements']} "
                  "Timoshenko beam elements with shear, rotary inertia and gyroscopic "
                  "effects, in its own Python 3.11 environment, serial), run beside it: "
                  f"set-up {r['setup']:.1f} s, Campbell {r['campbell']:.1f} s, response "
                  f"{r['response']:.1f} s.", "",
                  "| mode at the top speed | 3D solid (Hz) | ROSS beam (Hz) | rel. diff | "
                  "log dec 3D | log dec ROSS |", "|---:|---:|---:|---:|---:|---:|"]
        for j, (a, b) in enumerate(zip(last["frequencies_hz"], r["frequencies_hz"])):
            lines.append(f"| {j} | {a:.2f} | {b:.2f} | {(a - b) / b:+.2%} | "
                         f"{last['log_dec'][j]:.4f} | {r['log_dec'][j]:.4f} |")
        lines += ["", "ROSS response peaks on its speed grid (probe, rpm, major semi-axis m): "
                  + "; ".join(f"{p[0]} {p[1]:.0f} {p[2]:.3e}" for p in r["peaks"])]
    print("\n".join(lines))
    if not args.no_write:
        save_runs(jpath, runs)
        (args.results_dir / "rotors.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
