"""Benchmark: a plain journal bearing's equilibrium and eight coefficients from the Reynolds
equation (``mbs.rotors.PlainJournal``) beside ROSS's ``PlainJournal`` with the same data
(issue 44).

    python bench/journal.py --ross ross_journal.json      # the JSON of bench/ross_journal.py

The bearing: D = 0.1 m, L = 0.05 m, c = 0.1 mm, mu = 0.03 Pa s, load (0, -2000) N, speeds
300 and 1000 rad/s (``--speeds``). Ours: the film on ``--cells`` meshes (Q2 quadrilaterals)
with ROSS's two modelling choices, half-Sommerfeld cavitation and a groove at theta = 0 (its
360 degree pad's edges hold p = 0 there), and with the Reynolds condition on a complete film
(our default); each the equilibrium by Newton's method and the coefficients by the exact
linearization, timed (the first film of a process also compiles its forms: a warm-up film is
solved first). ROSS's side (``bench/ross_journal.py``, its own Python 3.11 environment): its
equilibrium (Nelder-Mead), the force residual left there, its ``perturbation`` and ``lund``
coefficients and central differences of its own force at its equilibrium. Written to
``bench/results/journal.{json,md}`` with the differences and their causes.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
from benchlib import (
    command_line,
    context_lines,
    git_rev,
    load_runs,
    machine,
    parser,
    save_runs,
    utc_now,
    versions,
)

import dolfinx_mbs as mbs

D, L, C, MU, LOAD = 0.1, 0.05, 1e-4, 0.03, (0.0, -2000.0)


def ours(speed: float, cells: tuple, cavitation: str, groove: float | None) -> dict:
    """Equilibrium and coefficients of our film, timed."""
    film = mbs.rotors.PlainJournal(D, L, C, MU, cavitation=cavitation, cells=cells,
                                   groove=groove)
    film.force((0.0, -0.3 * C), speed=speed)        # the mesh, the map, the first solve
    t0 = time.perf_counter()
    eq = film.equilibrium(LOAD, speed)
    t1 = time.perf_counter()
    F = film.force(eq.position, speed=speed, derivatives=False).force
    return dict(speed=speed, cells=list(cells), cavitation=cavitation, groove=groove,
                time=t1 - t0, iterations=eq.iterations, eccentricity=eq.eccentricity,
                angle=math.atan2(eq.position[1], eq.position[0]),
                residual=(F + np.array(LOAD)).tolist(), K=eq.stiffness.tolist(),
                C=eq.damping.tolist())


def _fmt(X) -> str:
    X = np.asarray(X)
    return " ".join(f"{v:.4g}" for v in X.ravel())


def table(last: dict) -> list:
    """The markdown of a run."""
    lines = []
    for w in last["speeds"]:
        lines += ["", f"## {w:g} rad/s", "",
                  "| model | eps | angle (rad) | force residual (N) | kxx kxy kyx kyy (MN/m) | "
                  "cxx cxy cyx cyy (kN s/m) | time (s) |", "|---|---:|---:|---:|---|---|---:|"]
        for r in last["ours"]:
            if r["speed"] != w:
                continue
            name = (f"ours {r['cells'][0]}x{r['cells'][1]} Q2, {r['cavitation']}"
                    + (", groove at 0" if r["groove"] is not None else ""))
            lines.append(f"| {name} | {r['eccentricity']:.5f} | {r['angle']:.5f} | "
                         f"{np.linalg.norm(r['residual']):.1e} | "
                         f"{_fmt(np.array(r['K']) / 1e6)} | {_fmt(np.array(r['C']) / 1e3)} | "
                         f"{r['time']:.2f} |")
        for r in last.get("ross", {}).get("runs", []):
            if r["speed"] != w:
                continue
            g = f"{r['grid'][0]}x{r['grid'][1]}"
            lines.append(f"| ROSS {g} FV, {r['method']} | {r['eccentricity']:.5f} | "
                         f"{r['angle']:.5f} | {np.linalg.norm(r['residual']):.2f} | "
                         f"{_fmt(np.array(r['K']) / 1e6)} | {_fmt(np.array(r['C']) / 1e3)} | "
                         f"{r['time']:.1f} |")
            if "K_differences" in r:
                lines.append(f"| ROSS {g}, its force differentiated | | | | "
                             f"{_fmt(np.array(r['K_differences']) / 1e6)} | "
                             f"{_fmt(np.array(r['C_differences']) / 1e3)} | |")
    return lines


def main() -> None:
    """Run ours, read ROSS's, record and print."""
    ap = parser(__doc__, load=None, max_wait=None)
    ap.add_argument("--speeds", type=float, nargs="+", default=[300.0, 1000.0])
    ap.add_argument("--cells", type=str, nargs="+", default=["32x6", "64x12", "128x24"])
    ap.add_argument("--ross", type=str, default=None, help="bench/ross_journal.py's JSON")
    args = ap.parse_args()
    mbs.rotors.PlainJournal(D, L, C, MU).force((0.0, -0.3 * C), speed=300.0)   # warm-up
    runs = []
    for w in args.speeds:
        for g in args.cells:
            cells = tuple(int(n) for n in g.split("x"))
            runs.append(ours(w, cells, "half-sommerfeld", 0.0))
        runs.append(ours(w, tuple(int(n) for n in args.cells[-1].split("x")), "reynolds",
                         None))
    res = dict(date=utc_now(), git=git_rev(), command=command_line(), machine=machine(),
               versions=versions(), speeds=args.speeds, ours=runs)
    if args.ross:
        with open(args.ross) as fh:
            res["ross"] = json.load(fh)
    jpath = args.results_dir / "journal.json"
    all_runs = load_runs(jpath)
    all_runs.append(res)
    lines = ["# A plain journal bearing beside ROSS (bench/journal.py)", "",
             "D = 0.1 m, L = 0.05 m, c = 0.1 mm, mu = 0.03 Pa s, load (0, -2000) N. Ours: "
             "`mbs.rotors.PlainJournal` (the Reynolds equation by DOLFINx, Q2 quadrilaterals; "
             "equilibrium by Newton, coefficients by the exact linearization). ROSS "
             f"{res.get('ross', {}).get('ross', '?')}: `PlainJournal` (finite volumes, "
             "isoviscous here: one viscosity at both reference temperatures), one 360 degree "
             "pad, flooded; equilibrium by Nelder-Mead (its tolerance 0.8), coefficients by "
             "its `perturbation` and `lund` methods, and central differences of its own force "
             "at its equilibrium (bench/ross_journal.py). Angle: the journal centre's, from x. "
             "Times: equilibrium and coefficients of one speed (ROSS: its constructor, which "
             "does both).", "", *context_lines(res)] + table(res)
    print("\n".join(lines))
    if not args.no_write:
        save_runs(jpath, all_runs)
        (args.results_dir / "journal.md").write_text("\n".join(lines) + "\n" + NOTES)


#: the differences and their causes (measured in the tables above; kept with the results)
NOTES = """
## Where the two differ, and why

Measured in the tables above (2026-11-29; ROSS on its 40 x 10 and 80 x 20 grids, ours on
32 x 6 to 128 x 24 Q2 cells):

* **Cavitation and the groove.** ROSS clips the full film's pressure at zero (half-Sommerfeld,
  `np.where(P_sol < 0, 0, P_sol)` after a linear solve), and its one 360 degree pad has its
  edges at theta = 0 with p = 0 there (an axial groove on the +x axis). With the same two
  choices (`cavitation="half-sommerfeld", groove=0.0`) our equilibrium is ROSS's 80 x 20 one
  to 0.2 % in eps and 0.001 rad in angle (0.37098 / -0.4485 against 0.37176 / -0.4492 at
  300 rad/s; 0.14211 / -0.1870 against 0.14249 / -0.1873 at 1000 rad/s). Our default, the
  Reynolds condition on a complete film (the film ruptures where its pressure would be
  negative, by SNESVI), moves the equilibrium by 0.2 % in eps and up to 0.015 rad in angle
  and changes the coefficients by up to 20 % (kyy at 1000 rad/s), its damping symmetric.
* **Grid.** ROSS's finite volumes converge towards our film: eps 0.37451 (40 x 10), 0.37176
  (80 x 20), ours 0.37098 on every mesh from 32 x 6 to 128 x 24 (the 5th digit); ROSS's
  differentiated coefficients move towards ours by as much (cxx 340.5, 340.0 against ours
  346.9 kN s/m at 300 rad/s: 2 %, the first-order finite volumes' error).
* **Equilibrium.** ROSS's Nelder-Mead stops with a force residual of 0.65-6.4 N of the
  2000 N (its tolerance 0.8 on the simplex); ours with 2e-7 N or less: part of the 40 x 10
  grid's 1 % in eps.
* **Perturbation method.** ROSS's `perturbation` coefficients scale each difference of its
  nondimensional force by a Sommerfeld number of the force's magnitude, but for kyx and kyy
  it passes two y components to `sommerfeld(speed, force_x, force_y)` (`F1[1], F2[1]` and
  `F3[1], F4[1]`): sqrt(2) |F_y| stands for |F| and kyx, kyy come out 0.705-0.71 of the
  derivative of ROSS's own force (-55.4 against -78.6 MN/m at 300 rad/s, 40 x 10). Central
  differences of ROSS's force at its equilibrium ("its force differentiated") agree with our
  exact linearization of the same film (half-Sommerfeld, the groove) in all eight
  coefficients to 0.1-2 % (the grid's error). ROSS's `lund` method differs from both by
  5-30 % (kxy 28.7 against 41.6 and 42.7 MN/m at 300 rad/s): it perturbs the discretized
  equation on the whole pad, without the clipped film's boundary (its damping comes out
  symmetric).
* **Time.** Ours: 0.1-0.4 s for an equilibrium and its coefficients (up to 2-4 s on the
  finest mesh with the Reynolds condition from a cold start); ROSS: 17-27 s (40 x 10) and
  5-23 min (80 x 20, its dense matrices), at a load of 6-8 on the 2 cores.
"""


if __name__ == "__main__":
    main()
