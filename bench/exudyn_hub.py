"""Benchmark: a torque-driven hub carrying a flexible beam in dolfinx_mbs and in Exudyn, side by
side in one process (issue 41's first acceptance).

    python bench/exudyn_hub.py                   # both codes, the full model, written
    python bench/exudyn_hub.py --repeats 2 --no-full --no-write

The model: the Kane-Ryan-Banerjee beam (L = 10 m, EI = 14000 N m^2, rho A = 1.2 kg/m, EA =
2.8e7 N) clamped to a hub of no inertia of its own, turning about z, driven by the torque
200 sin(pi t / 0.5) N m for t < 0.5 s, then free; 6000 steps of 1e-3 s, generalized-alpha at
spectral radius 0.8 in both codes. The answer compared: the tip's deflection across the beam
in the hub's frame, its peak over the run.

* dolfinx_mbs: the beam a plane-stress strip of 100 x 1 P2 quadrilaterals (1.2k dofs,
  ``stiffening="prestress"``) on a :class:`~dolfinx_mbs.frames.Hinge`, attached at its root,
  ``model.reduce(beam, modes=10, method="craig-bampton")`` (11 unknowns with the hinge);
  ``model.integrate`` picks the dense coupled path (``stepper="auto"``), with its defaults
  (energies and momenta recorded, the tip probed). Timed: ``model.reduce`` + ``model.integrate``
  (the reduction is computed in ``integrate``: the assembly, the Craig-Bampton modes by SLEPc,
  the invariants, the steps), wall and CPU time of this process. The full model (the strip
  unreduced, the TS path) gives the reference tip peak once (``--no-full`` skips it).
* Exudyn (``pip install exudyn``): 10 ``ObjectBeamGeometricallyExact2D`` elements (Reissner's
  beam: axial, shear with k = 5/6 and nu = 0.3 as the strip's, bending; rotary inertia
  rho I) on ``NodeRigidBody2D`` nodes, the root node's position held by two coordinate
  constraints, the torque a ``LoadCoordinate`` on its rotation with a Python user function;
  ``SolveDynamic`` with generalized-alpha and its default settings (modified Newton, relative
  tolerance 1e-8, adaptive steps: with fixed steps its Newton stalls at round-off in the
  first step of the beam at rest and the run stops), the sensors kept in memory (no files).
  Timed: ``SolveDynamic`` (wall and CPU); building the items is recorded apart.

The two codes run alternately ``--repeats`` times each in this one process; the first
dolfinx_mbs run includes what a process does once (its forms compiled or read from the cache,
the dense kernels loaded from numba's cache, compiled where the cache is empty: the
``kernels`` line says which), and is shown apart from the best and the median of the others.
Results: bench/results/exudyn_hub.json and .md.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from benchlib import (  # noqa: E402
    append_results,
    context_lines,
    git_rev,
    loadavg,
    log,
    machine,
    md_table,
    parser,
    utc_now,
    versions,
)

L, EI, RHO_A, EA = 10.0, 14000.0, 1.2, 2.8e7
NU = 0.3
TAU, T_PULSE = 200.0, 0.5
DT, STEPS, RADIUS = 1e-3, 6000, 0.8


def torque(t: float) -> float:
    """The hub's torque (N m)."""
    return TAU * math.sin(math.pi * t / T_PULSE) if t < T_PULSE else 0.0


def run_mbs(modes: int | None, steps: int) -> dict:
    """The hub-beam in dolfinx_mbs, reduced to ``modes`` Craig-Bampton modes (None: full).

    Args:
        modes: the modes, or None for the unreduced strip (the TS path).
        steps: the steps of DT.

    Returns:
        Times, tip deflection, the timings, the path.
    """
    import numpy as np

    import dolfinx_mbs as mbs
    from dolfinx_mbs.integrate.dense import coupled_kernels

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    from tests.models import krb

    t0 = time.perf_counter()
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
    body = krb.strip(hub, nx=100)
    model = mbs.Model([body])
    model.attach(body, lambda x: np.isclose(x[0], 0.0))
    model.apply_torque(hub, lambda t, s: torque(t))
    t1, c1 = time.perf_counter(), time.process_time()
    if modes is not None:
        model.reduce(body, modes=modes, method="craig-bampton")
    r = model.integrate(t_end=steps * DT, dt=DT, probes=[(krb.L, 0.0)], progress=False,
                        spectral_radius=RADIUS)
    t2, c2 = time.perf_counter(), time.process_time()
    tip = np.asarray(r.probes[:, 0, 1])
    return dict(t=np.asarray(r.times), tip=tip, build=t1 - t0, wall=t2 - t1, cpu=c2 - c1,
                stepper=r.stepper, steps=int(r.steps), compiled=coupled_kernels.COMPILED,
                dofs=int(body.V.dofmap.index_map.size_global * body.V.dofmap.index_map_bs),
                unknowns=(modes + 1) if modes is not None else None)


def run_exudyn(elements: int, steps: int) -> dict:
    """The hub-beam in Exudyn with ``elements`` geometrically exact beam elements.

    Args:
        elements: the beam elements.
        steps: the steps of DT.

    Returns:
        Times, tip deflection in the hub's frame, the timings.
    """
    import exudyn as exu
    import numpy as np
    from exudyn.itemInterface import (
        LoadCoordinate,
        MarkerNodeCoordinate,
        NodePointGround,
        NodeRigidBody2D,
        ObjectBeamGeometricallyExact2D,
        ObjectConnectorCoordinate,
        SensorNode,
    )

    t0 = time.perf_counter()
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    nodes = [mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[k * L / elements, 0, 0]))
             for k in range(elements + 1)]
    ga = 5.0 / 6.0 * EA / (2.0 * (1.0 + NU))
    for k in range(elements):
        mbs.AddObject(ObjectBeamGeometricallyExact2D(
            nodeNumbers=[nodes[k], nodes[k + 1]], length=L / elements, massPerLength=RHO_A,
            crossSectionInertia=RHO_A * EI / EA, bendingStiffness=EI, axialStiffness=EA,
            shearStiffness=ga))
    ground = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()),
                                                coordinate=0))
    for c in (0, 1):
        mbs.AddObject(ObjectConnectorCoordinate(markerNumbers=[
            ground, mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=c))]))
    rot = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=2))
    mbs.AddLoad(LoadCoordinate(markerNumber=rot, load=0.0,
                               loadUserFunction=lambda mbs_, t, load: torque(t)))
    coords = exu.OutputVariableType.Coordinates
    s0 = mbs.AddSensor(SensorNode(nodeNumber=nodes[0], storeInternal=True, writeToFile=False,
                                  outputVariableType=coords))
    s1 = mbs.AddSensor(SensorNode(nodeNumber=nodes[-1], storeInternal=True, writeToFile=False,
                                  outputVariableType=coords))
    mbs.Assemble()
    ss = exu.SimulationSettings()
    ss.timeIntegration.numberOfSteps = steps
    ss.timeIntegration.endTime = steps * DT
    ss.timeIntegration.generalizedAlpha.spectralRadius = RADIUS
    ss.timeIntegration.verboseMode = 0
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = DT
    ss.show.computationTime = False
    ss.show.statistics = False
    t1, c1 = time.perf_counter(), time.process_time()
    mbs.SolveDynamic(ss, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    t2, c2 = time.perf_counter(), time.process_time()
    a, b = mbs.GetSensorStoredData(s0), mbs.GetSensorStoredData(s1)
    phi = a[:, 3]
    dx, dy = b[:, 1] + L - a[:, 1], b[:, 2] - a[:, 2]    # displacement coordinates
    tip = -np.sin(phi) * dx + np.cos(phi) * dy           # across the beam, hub's frame
    return dict(t=a[:, 0], tip=tip, build=t1 - t0, wall=t2 - t1, cpu=c2 - c1, steps=steps,
                elements=elements, coordinates=len(mbs.systemData.GetODE2Coordinates()))


def peak(run: dict) -> tuple:
    """(the tip's peak deflection, its time)."""
    import numpy as np

    k = int(np.argmax(np.abs(run["tip"])))
    return float(run["tip"][k]), float(run["t"][k])


def main() -> None:
    """Run both codes alternately, the full model once, print and write the results."""
    p = parser(__doc__, load=None, max_wait=None)
    p.add_argument("--repeats", type=int, default=4, help="runs of each code")
    p.add_argument("--modes", type=int, default=10)
    p.add_argument("--elements", type=int, default=10)
    p.add_argument("--steps", type=int, default=STEPS)
    p.add_argument("--no-full", action="store_true", help="skip the unreduced model")
    args = p.parse_args()
    import exudyn

    from dolfinx_mbs.integrate.dense import coupled_kernels

    res = dict(date=utc_now(), command="python bench/exudyn_hub.py " + " ".join(sys.argv[1:]),
               machine=machine(), versions=versions(), git=git_rev(),
               exudyn_version=exudyn.__version__, loadavg_start=loadavg(), steps=args.steps, dt=DT,
               modes=args.modes, elements=args.elements, radius=RADIUS,
               compiled=coupled_kernels.COMPILED)
    mbs_runs, exu_runs = [], []
    for k in range(args.repeats):
        mbs_runs.append(run_mbs(args.modes, args.steps))
        log(f"dolfinx_mbs {k}: wall {mbs_runs[-1]['wall']:.3f} s, cpu {mbs_runs[-1]['cpu']:.3f}"
            f" s ({mbs_runs[-1]['stepper']}), peak {peak(mbs_runs[-1])}")
        exu_runs.append(run_exudyn(args.elements, args.steps))
        log(f"Exudyn {k}: wall {exu_runs[-1]['wall']:.3f} s, cpu {exu_runs[-1]['cpu']:.3f} s, "
            f"peak {peak(exu_runs[-1])}")
    full = None
    if not args.no_full:
        full = run_mbs(None, args.steps)
        log(f"full model: wall {full['wall']:.1f} s ({full['stepper']}), peak {peak(full)}")
    res["loadavg_end"] = loadavg()

    def stats(runs: list, key: str) -> dict:
        vals = [r[key] for r in runs]
        later = vals[1:] if len(vals) > 1 else vals
        return dict(first=vals[0], best=min(later), median=statistics.median(later), all=vals)
    res["mbs"] = {k: stats(mbs_runs, k) for k in ("wall", "cpu")}
    res["exudyn"] = {k: stats(exu_runs, k) for k in ("wall", "cpu")}
    res["mbs_peak"], res["exudyn_peak"] = peak(mbs_runs[-1]), peak(exu_runs[-1])
    res["mbs_stepper"], res["mbs_dofs"] = mbs_runs[-1]["stepper"], mbs_runs[-1]["dofs"]
    res["exudyn_coordinates"] = exu_runs[-1]["coordinates"]
    res["build"] = dict(mbs=mbs_runs[-1]["build"], exudyn=exu_runs[-1]["build"])
    if full is not None:
        res["full_peak"], res["full_wall"] = peak(full), full["wall"]
        res["full_stepper"] = full["stepper"]
    print(markdown(res))
    if not args.no_write:
        append_results("exudyn_hub", res, markdown(res),
                       "The hub-beam: dolfinx_mbs (reduced, dense path) and Exudyn",
                       results=args.results_dir)


def markdown(res: dict) -> str:
    """The results of a run as markdown."""
    m, e = res["mbs"], res["exudyn"]
    rows = [["dolfinx_mbs", f"strip {res['mbs_dofs']} dofs, {res['modes']} CB modes + hinge "
             f"({res['mbs_stepper']} path)", "reduce + integrate",
             f"{m['wall']['first']:.3f}", f"{m['wall']['best']:.3f}",
             f"{m['wall']['median']:.3f}", f"{m['cpu']['best']:.3f}",
             f"{res['mbs_peak'][0]:.5f} at {res['mbs_peak'][1]:.3f}"],
            ["Exudyn", f"{res['elements']} geometrically exact 2D beams "
             f"({res['exudyn_coordinates']} coordinates)", "SolveDynamic",
             f"{e['wall']['first']:.3f}", f"{e['wall']['best']:.3f}",
             f"{e['wall']['median']:.3f}", f"{e['cpu']['best']:.3f}",
             f"{res['exudyn_peak'][0]:.5f} at {res['exudyn_peak'][1]:.3f}"]]
    hdr = ["code", "model", "timed", "wall, first (s)", "wall, best (s)", "wall, median (s)",
           "CPU, best (s)", "tip peak (m) at (s)"]
    ratio = m["wall"]["best"] / e["wall"]["best"]
    ratio_med = m["wall"]["median"] / e["wall"]["median"]
    out = [f"## {res['date']}: the hub-beam, dolfinx_mbs and Exudyn", "",
           *context_lines(res),
           f"- Exudyn {res['exudyn_version']}; load average at start {' '.join(res['loadavg_start'])}, "
           f"at end {' '.join(res['loadavg_end'])}; dense kernels "
           f"{'compiled (numba)' if res['compiled'] else 'NumPy'}",
           f"- {res['steps']} steps of {res['dt']:g} s, generalized-alpha (radius "
           f"{res['radius']}) in both; torque {TAU:g} sin(pi t / {T_PULSE:g}) N m for t < "
           f"{T_PULSE:g} s; one process, one thread, the codes alternately", "",
           md_table(hdr, rows), "",
           f"- dolfinx_mbs / Exudyn, wall: best {ratio:.2f}, median {ratio_med:.2f}; CPU best "
           f"{m['cpu']['best'] / e['cpu']['best']:.2f} (first dolfinx_mbs run of the process: "
           f"{m['wall']['first'] / e['wall']['best']:.2f})"]
    if "full_peak" in res:
        fp = res["full_peak"][0]
        out.append(f"- full model (the strip unreduced, {res['full_stepper']} path, "
                   f"{res['full_wall']:.1f} s): tip peak {fp:.5f} m at "
                   f"{res['full_peak'][1]:.3f} s; reduced "
                   f"{(res['mbs_peak'][0] - fp) / abs(fp):+.2%}, Exudyn "
                   f"{(res['exudyn_peak'][0] - fp) / abs(fp):+.2%}")
    out.append(f"- build (not timed above): dolfinx_mbs {res['build']['mbs']:.3f} s (mesh, "
               f"body, model), Exudyn {res['build']['exudyn']:.3f} s (items, Assemble)")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
