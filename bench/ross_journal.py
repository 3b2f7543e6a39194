"""The plain journal bearing of bench/journal.py in ROSS: its PlainJournal (finite volumes,
thermo-hydro-dynamic, here isoviscous) with the same data, for a side-by-side comparison of
the equilibrium and the eight coefficients, with the times.

    /path/to/ross-venv/bin/python bench/ross_journal.py --json-out ross_journal.json

Runs in its own environment (ROSS 2.3 on Python 3.11 with plotly < 6; not the project's
venvs): it imports nothing of dolfinx_mbs. The bearing: D = 0.1 m, L = 0.05 m, c = 0.1 mm,
mu = 0.03 Pa s (a lubricant of one viscosity at both of its reference temperatures, so the
thermal loop leaves the viscosity alone), load (0, -2000) N, one 360 degree pad (whose edges,
at theta = 0, hold p = 0: an axial groove there), flooded. For each grid
(``--grids``, circumferential x axial volumes) and speed: ROSS's equilibrium (Nelder-Mead on
the force residual, its tolerance 0.8), the force left at it, the coefficients by its
``perturbation`` and ``lund`` methods, and central differences of its own dimensional force
(``_forces``) at its equilibrium (steps 1e-4 c and 1e-4 c Omega), which show what its
``perturbation`` scaling does. bench/journal.py reads the JSON (``--ross``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

D, L, C, MU, LOAD = 0.1, 0.05, 1e-4, 0.03, (0.0, -2000.0)


def lubricant() -> dict:
    """An isoviscous oil in ROSS's lubricant format (SI)."""
    return {"liquid_viscosity1": MU, "temperature1": 313.15, "liquid_viscosity2": MU,
            "temperature2": 373.15, "liquid_density": 870.0, "liquid_specific_heat": 1950.0,
            "liquid_thermal_conductivity": 0.13}


def bearing(speed: float, grid: tuple, method: str):
    """ROSS's PlainJournal at one speed (its constructor solves the equilibrium and the
    coefficients)."""
    from ross.bearings.plain_journal import PlainJournal

    return PlainJournal(
        n=0, axial_length=L, journal_radius=D / 2, radial_clearance=C,
        elements_circumferential=grid[0], elements_axial=grid[1], n_pad=1,
        pad_arc_length=360, preload=0, geometry="circular", reference_temperature=50,
        frequency=[speed], fxs_load=LOAD[0], fys_load=LOAD[1], groove_factor=[0.52],
        lubricant=lubricant(), sommerfeld_type=2, initial_guess=[0.3, -1.0], method=method,
        operating_type="flooded")


def differences(b, speed: float) -> tuple:
    """K, C by central differences of ROSS's dimensional force at its equilibrium."""
    e, a = b.equilibrium_pos
    x0 = np.array([e * C * np.cos(a), e * C * np.sin(a)])
    h, hv = 1e-4 * C, 1e-4 * C * speed

    def force(x, v):
        return np.array(b._forces(x[0], speed, x[1], v[0], v[1]))

    K, Cd = np.zeros((2, 2)), np.zeros((2, 2))
    for j in range(2):
        d = np.eye(2)[j]
        K[:, j] = -(force(x0 + h * d, np.zeros(2)) - force(x0 - h * d, np.zeros(2))) / (2 * h)
        Cd[:, j] = -(force(x0, hv * d) - force(x0, -hv * d)) / (2 * hv)
    return K, Cd


def main() -> None:
    """Run the grids, speeds and methods; print and write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--speeds", type=float, nargs="+", default=[300.0, 1000.0])
    ap.add_argument("--grids", type=str, nargs="+", default=["40x10", "80x20"])
    ap.add_argument("--lund", type=str, default="80x20", help="the grid of the lund runs")
    ap.add_argument("--json-out", default=None)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import ross

    runs = []
    for g in args.grids:
        grid = tuple(int(n) for n in g.split("x"))
        for w in args.speeds:
            for method in ("perturbation", "lund") if g == args.lund else ("perturbation",):
                t0 = time.perf_counter()
                b = bearing(w, grid, method)
                t1 = time.perf_counter()
                e, a = b.equilibrium_pos
                F = np.array(b._forces([e, a], w))
                K = [[float(b.kxx[0]), float(b.kxy[0])], [float(b.kyx[0]), float(b.kyy[0])]]
                Cm = [[float(b.cxx[0]), float(b.cxy[0])], [float(b.cyx[0]), float(b.cyy[0])]]
                run = dict(grid=list(grid), speed=w, method=method, time=t1 - t0,
                           eccentricity=float(e), angle=float(a),
                           residual=(F + np.array(LOAD)).tolist(), K=K, C=Cm)
                if method == "perturbation":
                    Kd, Cd = differences(b, w)
                    run.update(K_differences=Kd.tolist(), C_differences=Cd.tolist())
                runs.append(run)
                print(f"ROSS {g} {w:g} rad/s {method}: eps {e:.5f}, angle {a:.5f} rad, "
                      f"residual {np.linalg.norm(F + np.array(LOAD)):.3g} N, {t1 - t0:.1f} s")
    out = dict(ross=ross.__version__, runs=runs)
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(out, fh)


if __name__ == "__main__":
    main()
