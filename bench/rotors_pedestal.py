"""Benchmark: the rotor of bench/rotors.py on bearings to elastic pedestals, beside ROSS.

Its damped Campbell diagram and unbalance response beside ROSS's beam model of the same
machine (bench/ross_pedestal.py).

    /path/to/ross-venv/bin/python bench/ross_pedestal.py --json-out /tmp/ross_pedestal.json
    mpirun -n 2 python bench/rotors_pedestal.py --ross /tmp/ross_pedestal.json
    python bench/rotors_pedestal.py --size 0.03 --no-write      # a quick check

The machine: bench/rotors.py's shaft (P2 tetrahedra of ``--size``), disks and journal
bearings, each bearing now between the journal (the shaft's end face) and a pedestal: a cube
of side 0.1 m (7.85 kg at steel's density, P1 hexahedra) in a ``frames.Ground`` frame centred
on the journal, the bearing acting on the mean motion of its two faces across the axis
(z = journal +- 0.05 m: that mean is the cube's translation, its rotations do not enter), and a
foundation bearing (:data:`ross_pedestal.FOUNDATIONS`) from the same faces to the ground. The
cubes' Young's modulus is ``--housing-stiffness`` times steel's (default 1000: their first
elastic mode lies far above the range, their compliance between the two bearings is ~1e-6 of
the bearings', so they act as the point masses of the ROSS model); their free motions (axial
and the rotations, which no bearing sees) are held by the sweeps like the shaft's torsion.
Timed as in bench/rotors.py (set-up, Campbell of ``--modes`` damped modes at ``--speeds``
speeds, unbalance response at ``--response-speeds`` speeds; maximum over ranks). Recorded in
results/ross_pedestal.{json,md}: both models' frequencies and log decs at three speeds
(sorted by frequency at each), response peaks, times and the load average.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["OMP_NUM_THREADS"])

import json  # noqa: E402
import platform
import time

import dolfinx
import dolfinx.mesh as dmesh
import numpy as np
from benchlib import barrier, gmax, load_runs, parser, save_runs, utc_now
from mpi4py import MPI
from ross_pedestal import FOUNDATIONS, PEDESTAL
from rotors import BEARINGS, DISKS, LENGTH, RADIUS, SEATS, sweeps

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

COMM = MPI.COMM_WORLD
RPM = 30.0 / np.pi
STEEL = dict(E=210e9, nu=0.3, density=7850.0)


def _faces(zc: float, half: float):
    """The pedestal's two faces across the axis, z = zc +- half."""
    return lambda x: np.isclose(x[2], zc - half) | np.isclose(x[2], zc + half)


def build(size: float, stiffness: float):
    """The rotor on its pedestals: (model, rotor body, disks)."""
    cuts = tuple(z for seat in SEATS for z in seat)
    mesh, _, facets = meshes.shaft(COMM, LENGTH, RADIUS, size, cuts)
    rotor = mbs.Body(mesh, mbs.materials.LinearElastic(**STEEL),
                     mbs.frames.Stationary((0.0, 0.0, 1.0), 0.0), degree=2, name="rotor",
                     stiffening="prestress")
    s = PEDESTAL["side"]
    stiff = mbs.materials.LinearElastic(E=stiffness * STEEL["E"], nu=STEEL["nu"],
                                        density=STEEL["density"])
    houses = []
    for k, zc in enumerate((0.0, LENGTH)):
        box = dmesh.create_box(COMM, [np.array([-s / 2, -s / 2, zc - s / 2]),
                                      np.array([s / 2, s / 2, zc + s / 2])],
                               [2, 2, 2], dmesh.CellType.hexahedron)
        houses.append(mbs.Body(box, stiff, mbs.frames.Ground((0.0, 0.0, 1.0)), degree=1,
                               name=f"pedestal{k + 1}"))
    model = mbs.Model([rotor, *houses])
    for tag, house, zc, brg, fnd in zip((meshes.BEARING_A, meshes.BEARING_B), houses,
                                        (0.0, LENGTH), BEARINGS, FOUNDATIONS):
        model.bearing(rotor, facets=(facets, tag), other=house,
                      other_where=_faces(zc, s / 2), **brg)
        model.bearing(house, where=_faces(zc, s / 2), **fnd)
    disks = [model.disk(rotor, facets=(facets, meshes.SHAFT_SEGMENT + 2 * k + 1), **d)
             for k, d in enumerate(DISKS)]
    return model, rotor, houses, disks


def run(size: float, stiffness: float, speeds: int, modes: int, response_speeds: int,
        top: float) -> dict:
    """Build, sweep and respond, timed (maximum over ranks)."""
    barrier()
    t0 = time.perf_counter()
    model, rotor, houses, disks = build(size, stiffness)
    model.assembly.at(0.0)
    t1 = time.perf_counter()
    w, table, resp, t2, t3 = sweeps(model, disks, speeds, modes, response_speeds, top)
    dofs = [b.V.dofmap.index_map.size_global * 3 for b in (rotor, *houses)]
    return dict(dofs=dofs, setup=gmax(t1 - t0), campbell=gmax(t2 - t1),
                response=gmax(t3 - t2), speeds=w.tolist(), response_speeds=response_speeds,
                modes=modes, wd=np.asarray(table.frequencies).tolist(),
                log_dec=np.asarray(table.log_dec).tolist(),
                critical_rpm=[c.speed * RPM for c in table.critical_speeds if c.order == 1],
                peaks=[(resp.probes[p.probe], p.direction, p.speed * RPM, p.amplitude,
                        p.amplification) for p in resp.critical_speeds
                       if p.direction == "major"])


def ross_peaks(ross: dict) -> list:
    """ROSS's response peaks on its speed grid: (probe, rpm, major semi-axis m)."""
    R = np.array([[np.array(v["x_re"]) + 1j * np.array(v["x_im"]),
                   np.array(v["y_re"]) + 1j * np.array(v["y_im"])]
                  for v in ross["probes"].values()])        # (probes, 2, speeds)
    major = np.sqrt(0.5 * (np.abs(R[:, 0]) ** 2 + np.abs(R[:, 1]) ** 2)
                    + np.abs(0.5 * (R[:, 0] ** 2 + R[:, 1] ** 2)))
    ws = np.array(ross["response_speeds"])
    return [(f"disk {j + 1}", float(ws[i] * RPM), float(major[j, i]))
            for j in range(major.shape[0]) for i in range(1, len(ws) - 1)
            if major[j, i] > major[j, i - 1] and major[j, i] >= major[j, i + 1]]


def _sorted(wd, ld, i):
    """Frequencies (Hz) and log decs at speed index ``i``, by frequency."""
    f, d = np.asarray(wd)[i] / (2 * np.pi), np.asarray(ld)[i]
    o = np.argsort(f)
    return f[o], d[o]


def markdown(runs: list) -> str:
    """The results page of ``runs``."""
    lines = ["# A rotor on bearings to elastic pedestals, beside ROSS "
             "(bench/rotors_pedestal.py, bench/ross_pedestal.py)", "",
             "bench/rotors.py's rotor (shaft 1.2 m x 40 mm radius, P2 tetrahedra, two rigid "
             "disks, prestress) with each anisotropic damped bearing between its journal and "
             "a pedestal: a cube of side 0.1 m (7.85 kg) in a `frames.Ground` frame, its "
             "Young's modulus a multiple of steel's, on a foundation bearing to the ground "
             "(`model.bearing(rotor, ..., other=pedestal, other_where=...)`, "
             "`model.bearing(pedestal, ...)`). ROSS: the same rotor as Timoshenko beam "
             "elements, each `BearingElement(n, n_link=p)` to a `PointMass(p, m=7.85)` with "
             "a `BearingElement(p, ...)` to the ground. Times: maximum over ranks (the package), "
             "serial (ROSS, its own Python 3.11 environment, run just before); load average "
             "of the shared 2-core machine at the start and end of each. From 2026-11-29 the "
             "shaft's cells are curved (second-order, `meshes.shaft`'s default): the solid "
             "within -0.14 % to +0.18 % of ROSS (+0.18 %: the torsional mode); the runs "
             "before had straight-sided cells, whose polygonal section put it 0.01-0.62 % "
             "below.", "",
             "| date (UTC) | DOLFINx | ranks | dofs (rotor + pedestals) | pedestal E / steel's | "
             "set-up (s) | Campbell (s) | speeds x modes | response (s) | response speeds | "
             "load avg | load at end | ROSS set-up (s) | ROSS Campbell (s) | "
             "ROSS response (s) | ROSS load avg |",
             "|---|---|---:|---|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---|"]
    for r in runs:
        ro = r.get("ross") or {}
        rt = (f"{ro['setup']:.1f} | {ro['campbell']:.1f} | {ro['response']:.1f} | "
              + (", ".join(f"{x:.2f}" for x in ro["load"]) if "load" in ro else "-")
              if ro else "- | - | - | -")
        lines.append(f"| {r['date']} | {r['dolfinx']} | {r['ranks']} | "
                     f"{' + '.join(map(str, r['dofs']))} | {r['stiffness']:g} | "
                     f"{r['setup']:.1f} | {r['campbell']:.1f} | "
                     f"{len(r['speeds'])} x {r['modes']} | {r['response']:.1f} | "
                     f"{r['response_speeds']} | {', '.join(f'{x:.2f}' for x in r['load'])} | "
                     f"{r['load_end'][0]:.2f} | {rt} |")
    last = runs[-1]
    lines += ["", "Last run: critical speeds (1x crossings, rpm): "
              + ", ".join(f"{x:.0f}" for x in last["critical_rpm"]),
              "response peaks (probe, rpm, major semi-axis m, amplification factor): "
              + "; ".join(f"{p[0]} {p[2]:.0f} {p[3]:.3e} {p[4]:.1f}" for p in last["peaks"])]
    ro = last.get("ross")
    if ro:
        lines += ["", "Damped frequencies and log decs, sorted by frequency at each speed:", "",
                  "| rpm | mode | 3D solid (Hz) | ROSS beam (Hz) | rel. diff | log dec 3D | "
                  "log dec ROSS |", "|---:|---:|---:|---:|---:|---:|---:|"]
        n = len(last["speeds"])
        for i in sorted({0, n // 2, n - 1}):
            fa, da = _sorted(last["wd"], last["log_dec"], i)
            fb, db = _sorted(ro["wd"], ro["log_dec"], i)
            for j in range(min(len(fa), len(fb))):
                lines.append(f"| {last['speeds'][i] * RPM:.0f} | {j} | {fa[j]:.2f} | "
                             f"{fb[j]:.2f} | {(fa[j] - fb[j]) / fb[j]:+.2%} | {da[j]:.4f} | "
                             f"{db[j]:.4f} |")
        lines += ["", "ROSS response peaks on its speed grid (probe, rpm, major semi-axis m): "
                  + "; ".join(f"{p[0]} {p[1]:.0f} {p[2]:.3e}" for p in ro["peaks"])]
        rp = ro.get("refined_peak") or {}
        if rp:
            lines += ["", f"ROSS's largest peak again at {rp['step_rpm']:.1f} rpm steps "
                      f"({rp['time']:.1f} s; probe, rpm, major semi-axis m): "
                      + "; ".join(f"{k} {v[0]:.0f} {v[1]:.3e}" for k, v in rp.items()
                                  if k.startswith("disk"))]
    return "\n".join(lines)


def main():
    """Run, record in bench/results/ross_pedestal.{json,md} (rank 0) and print."""
    ap = parser(__doc__, load=None, max_wait=None)
    ap.add_argument("--size", type=float, default=0.0105)
    ap.add_argument("--housing-stiffness", type=float, default=1000.0,
                    help="the pedestals' Young's modulus over steel's")
    ap.add_argument("--speeds", type=int, default=21)
    ap.add_argument("--modes", type=int, default=10)
    ap.add_argument("--response-speeds", type=int, default=100)
    ap.add_argument("--top", type=float, default=20000.0, help="top speed (rpm)")
    ap.add_argument("--ross", type=str, default=None,
                    help="the JSON of bench/ross_pedestal.py, recorded beside this run")
    ap.add_argument("--ross-load", type=float, nargs=3, default=None,
                    help="the load average at the start of the ROSS run")
    args = ap.parse_args()
    load0 = os.getloadavg()
    res = run(args.size, args.housing_stiffness, args.speeds, args.modes,
              args.response_speeds, args.top)
    if COMM.rank != 0:
        return
    res.update(date=utc_now(), ranks=COMM.size, load=load0, load_end=os.getloadavg(),
               machine=platform.processor() or platform.machine(), cpus=os.cpu_count(),
               dolfinx=dolfinx.__version__, size=args.size, stiffness=args.housing_stiffness)
    if args.ross:
        with open(args.ross) as fh:
            ross = json.load(fh)
        res["ross"] = dict(setup=ross["setup"], campbell=ross["campbell"],
                           response=ross["response"], elements=ross["elements"],
                           wd=ross["wd"], log_dec=ross["log_dec"], peaks=ross_peaks(ross),
                           refined_peak=ross.get("refined_peak") or {})
        if args.ross_load:
            res["ross"]["load"] = list(args.ross_load)
    jpath = args.results_dir / "ross_pedestal.json"
    runs = load_runs(jpath)
    runs.append(res)
    text = markdown(runs)
    print(text)
    if not args.no_write:
        save_runs(jpath, runs)
        (args.results_dir / "ross_pedestal.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
