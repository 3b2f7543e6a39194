"""Benchmark: the elastic slider-crank's time at equal accuracy, dolfinx_mbs and Exudyn side by
side in one process (issue 41: "at most 1x Exudyn's time at equal accuracy").

    python bench/exudyn_crank_speed.py
    python bench/exudyn_crank_speed.py --no-write --repeats 1

The model is ``bench/exudyn_compare.py``'s (the data of ``demos/elastic_slider_crank.py``,
one crank turn at 150 rad/s): dolfinx_mbs with the rod reduced to ``--modes`` Craig-Bampton
modes (6) and the static modal derivatives of the lowest ``--derivatives`` (2: 3 vectors, 9
coordinates in all) and its nonlinear strain (``stiffening="nonlinear"``), stepped by
``stepper="auto"`` (Maggi's dense stages), generalized-alpha of radius ``--radius`` as
Exudyn's (``--bdf2``: the BDF2 default of a model with joints); Exudyn with 16 ANCF cable
elements (generalized-alpha, radius 0.8). Each code runs at dt = ``--dt`` / k, k = 1, 2, 4,
8. Its accuracy at a step is the largest difference of the rod's midpoint deflection history
from the code's own converged history (Richardson's extrapolation of its two finest runs),
relative to that history's peak: the step's error, which the step controls. (The two codes'
converged histories differ by about 1.1 % of the peak, the model's difference: the strip's
mesh and shear deformation against the cable; ``exudyn_compare.py --converged`` and
``--shear`` isolate it.) The basis's own error, recorded in the same run: the reduced
rod's midpoint history against the unreduced rod's (the TS path, not timed) at dt and dt/2,
for the basis timed and for 10 modes with the derivatives of the lowest 3 (16
coordinates). Timed: dolfinx_mbs' ``model.integrate`` (which computes the reduction, the
nonlinear tensors and the invariants, then the steps; the model built before), Exudyn's
``SolveDynamic``; wall and CPU time, best of ``--repeats`` after a first run of each
(numba's kernels and the forms compiled, loaded), the codes' runs taken in turn. At equal
accuracy: Exudyn's time at each dolfinx_mbs run's error, interpolated log-log between
Exudyn's runs (its error falls as dt^2, its time grows as 1/dt). dolfinx_mbs is timed twice:
as a user runs it by default (the energies and momenta recorded at every step,
``energy=True``), and with ``energy=False`` (Exudyn's run computes no energies; its sensors
record positions, as dolfinx_mbs' probes and frames do; the joints' forces and drift are
recorded either way); the second's histories are checked equal to the first's.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib as bl  # noqa: E402
import exudyn_compare as xc  # noqa: E402


def best_of(fns: list, repeats: int) -> list:
    """Each of ``fns``' runs with the least wall time of ``repeats``, the functions called in
    turn (a first run of each before, untimed): a burst of load on the machine falls on all
    of them alike. Python's garbage is collected before each run (untimed): the collection
    that the runs before left due falls on none of them (in turn, it fell on the same one of
    them at each round)."""
    import gc

    for fn in fns:
        fn()
    runs: list = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, runs):
            gc.collect()
            out.append(fn())
    return [min(r, key=lambda x: x["integrate"]) for r in runs]


def errors(runs: list, ref: dict) -> list:
    """Each run's largest midpoint difference from ``ref`` relative to ``ref``'s peak."""
    import numpy as np

    peak = float(np.abs(ref["mid"]).max())
    return [float(np.abs(xc.on_grid(r, ref["t"])["mid"] - ref["mid"]).max()) / peak
            for r in runs]


def at_error(e: float, errs: list, times: list) -> tuple:
    """The time at error ``e`` by log-log interpolation (extrapolation beyond the ends:
    flagged) of the points (errs, times)."""
    pts = sorted(zip(errs, times))
    for (e0, t0), (e1, t1) in zip(pts, pts[1:]):
        if e0 <= e <= e1:
            w = (math.log(e) - math.log(e0)) / (math.log(e1) - math.log(e0))
            return math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0))), False
    (e0, t0), (e1, t1) = (pts[0], pts[1]) if e < pts[0][0] else (pts[-2], pts[-1])
    w = (math.log(e) - math.log(e0)) / (math.log(e1) - math.log(e0))
    return math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0))), True


def main() -> None:
    p = bl.parser(__doc__)
    p.add_argument("--dt", type=float, default=1e-4)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--elements", type=int, default=16)
    p.add_argument("--radius", type=float, default=0.8)
    p.add_argument("--bdf2", action="store_true",
                   help="dolfinx_mbs by BDF2 (formulation 'first-order') instead")
    p.add_argument("--modes", type=int, default=6, help="the rod's Craig-Bampton modes")
    p.add_argument("--derivatives", type=int, default=2,
                   help="the static modal derivatives of this many of the lowest modes")
    args = p.parse_args()
    load = bl.wait_for_load(args.load_threshold, args.max_wait)
    start = bl.loadavg()
    import exudyn
    import numpy as np

    d = xc.demo_data()
    t_end = 2 * math.pi / d["OMEGA"]
    ks = (1, 2, 4, 8)
    scheme = (dict(formulation="first-order") if args.bdf2 else
              dict(formulation="second-order", spectral_radius=args.radius))
    mbs, off, exu = [], [], []
    for k in ks:
        dt = args.dt / k
        fns = [lambda dt=dt, energy=energy: xc.run_mbs(
            d, dt, t_end, stiffening="nonlinear", modes=args.modes,
            derivatives=args.derivatives, again=2, energy=energy, **scheme)
            for energy in (True, False)]
        fns.append(lambda dt=dt: xc.run_exudyn(d, dt, t_end, args.elements, args.radius))
        on, no_energy, ex = best_of(fns, args.repeats)
        no_energy["same"] = no_energy["same"] and bool(np.array_equal(no_energy["mid"],
                                                                      on["mid"]))
        mbs.append(on)
        off.append(no_energy)
        exu.append(ex)
        bl.log(f"dt/{k}: dolfinx_mbs {mbs[-1]['integrate']:.3f} s ({mbs[-1]['stepper']}; "
               f"the model run again {mbs[-1]['again']:.3f} s; energy=False "
               f"{off[-1]['integrate']:.3f} s), Exudyn {exu[-1]['integrate']:.3f} s")
    basis = []   # the reduction's own error: reduced against unreduced at the same step
    for k in (1, 2):
        dt = args.dt / k
        full = xc.run_mbs(d, dt, t_end, stiffening="nonlinear", **scheme)
        peak = float(np.abs(full["mid"]).max())
        for modes, der in ((args.modes, args.derivatives), (10, 3)):
            red = xc.run_mbs(d, dt, t_end, stiffening="nonlinear", modes=modes, derivatives=der,
                             **scheme)
            basis.append(dict(k=k, modes=modes, derivatives=der,
                              coordinates=modes + der * (der + 1) // 2,
                              error=float(np.abs(red["mid"] - full["mid"]).max()) / peak))
        bl.log(f"dt/{k}: the bases against the unreduced rod: "
               f"{[round(b['error'], 6) for b in basis[-2:]]}")
    refs = {"mbs": xc.extrapolated(mbs[-2], mbs[-1]), "exudyn": xc.extrapolated(exu[-2], exu[-1])}
    e_mbs, e_exu = errors(mbs, refs["mbs"]), errors(exu, refs["exudyn"])
    cross = float(np.abs(xc.on_grid(refs["mbs"], refs["exudyn"]["t"])["mid"]
                         - refs["exudyn"]["mid"]).max() / np.abs(refs["exudyn"]["mid"]).max())
    rows, cases = [], []
    for k, r, o, e in zip(ks, mbs, off, e_mbs):
        tx, out = at_error(e, e_exu, [x["integrate"] for x in exu])
        cx, _ = at_error(e, e_exu, [x["cpu"] for x in exu])
        cases.append(dict(k=k, code="dolfinx_mbs", error=e, wall=r["integrate"], cpu=r["cpu"],
                          again=r["again"], again_same=r["same"],
                          wall_energy_off=o["integrate"], again_energy_off=o["again"],
                          energy_off_same=o["same"],
                          steps=r["steps"], stepper=r["stepper"], exudyn_wall_at_error=tx,
                          exudyn_cpu_at_error=cx, extrapolated=out))
        rows.append([f"dt/{k}", "dolfinx_mbs", f"{e:.2e}", f"{r['integrate']:.3f}",
                     f"{r['cpu']:.3f}", f"{r['again']:.3f}" + ("" if r["same"] else " (differs)"),
                     f"{o['integrate']:.3f}" + ("" if o["same"] else " (differs)"),
                     f"{tx:.3f}{' (extrapolated)' if out else ''}",
                     f"{r['integrate'] / tx:.2f}", f"{r['again'] / tx:.2f}",
                     f"{o['integrate'] / tx:.2f}"])
    for k, r, e in zip(ks, exu, e_exu):
        cases.append(dict(k=k, code="Exudyn", error=e, wall=r["integrate"], cpu=r["cpu"],
                          steps=r["steps"]))
        rows.append([f"dt/{k}", "Exudyn", f"{e:.2e}", f"{r['integrate']:.3f}", f"{r['cpu']:.3f}",
                     "", "", "", "", "", ""])
    run = dict(date=bl.utc_now(), machine=bl.machine(), versions=bl.versions(), git=bl.git_rev(),
               command=bl.command_line(), load_wait=load, loadavg_start=start,
               loadavg_end=bl.loadavg(), exudyn=exudyn.__version__, dt=args.dt, t_end=t_end,
               repeats=args.repeats, cases=cases, converged_difference=cross, basis=basis,
               modes=args.modes, derivatives=args.derivatives,
               scheme="BDF2" if args.bdf2 else f"generalized-alpha radius {args.radius}")
    md = [f"## {run['date']}: the elastic slider-crank's time at equal accuracy", ""]
    md += bl.context_lines(run)
    md += [f"- Exudyn {run['exudyn']}; {bl.load_text(run)[2:]}; one process, one thread; best "
           f"of {args.repeats} after a first run of each, the codes' runs in turn", "",
           f"- dolfinx_mbs: rod 24 x 2 P2 reduced to {args.modes} Craig-Bampton modes + "
           f"{args.derivatives * (args.derivatives + 1) // 2} modal derivatives, "
           f"stiffening='nonlinear', stepper '{mbs[0]['stepper']}', "
           f"{run['scheme']}; Exudyn: "
           f"{args.elements} ANCF cable elements, generalized-alpha radius {args.radius}; one "
           f"turn ({t_end:.5f} s), dt = {args.dt:g} s / k; 'run again': the same model "
           f"integrated twice more after its first run (best of the two; a parameter study's "
           f"runs: the reduction and the nonlinear tensors kept); 'energy=False': a first "
           f"run without the energies and momenta that dolfinx_mbs records at every step by "
           f"default (Exudyn's run records its sensors' positions alone; both record the "
           f"histories compared, dolfinx_mbs also the joints' forces and drift)", ""]
    md.append(bl.md_table(["step", "code", "midpoint error / peak (own dt -> 0)",
                           "wall (s)", "CPU (s)", "wall, the model run again (s)",
                           "wall, energy=False (s)",
                           "Exudyn's wall at this error (s)",
                           "dolfinx_mbs / Exudyn at equal error",
                           "the same, the model run again", "the same, energy=False"], rows))
    md += ["", f"- The two codes' converged histories (each extrapolated to dt -> 0) differ by "
           f"{100 * cross:.2f} % of Exudyn's peak: the models' difference, not the steps'."]
    md += ["- The bases against the unreduced rod (its midpoint history at the same step, "
           "largest difference / its peak): " + "; ".join(
               f"{b['modes']} modes + derivatives of {b['derivatives']} ({b['coordinates']} "
               f"coordinates) at dt/{b['k']}: {b['error']:.2e}" for b in basis), ""]
    text = "\n".join(md) + "\n"
    print(text)
    if not args.no_write:
        bl.append_results("exudyn_crank_speed", run, text, "The elastic slider-crank's time at "
                          "equal accuracy: dolfinx_mbs and Exudyn", results=args.results_dir)


if __name__ == "__main__":
    if str(bl.ROOT) not in sys.path:
        sys.path.insert(0, str(bl.ROOT))
    main()
