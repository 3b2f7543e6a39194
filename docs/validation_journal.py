"""The validation report's section on journal bearings from the Reynolds equation (issue 44):
``section(out, number)`` writes it through ``out``; ``python docs/validation_journal.py``
prints it alone.

Every figure is computed here: the film against the short-bearing (Ocvirk) and long-bearing
(Sommerfeld) closed forms and Raimondi and Boyd's table, the exact linearization against
differences of the force, oil whirl's onset against a 4-dof model of the same coefficients,
and the film's nonlinear force in time (decay below the onset, the energy balance, one
process against two, the oil-whip limit cycle above it).
"""

import math
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from dolfinx import fem
from mpi4py import MPI

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import dolfinx_mbs as mbs  # noqa: E402
from dolfinx_mbs import compat  # noqa: E402
from tests.models.journal_rotor import (  # noqa: E402
    film,
    flexible_rotor,
    rigid_support_frequency,
    four_dof_eigenvalues,
    four_dof_threshold,
    friswell,
    ocvirk_force,
    rigid_properties,
    rigid_rotor,
    whirl_frequency,
    whirl_onset,
)
from tests.models.journal_run_cases import LOAD, SPEED, rotor, short_run, translated  # noqa: E402

D, C, MU, W0 = 0.1, 1e-4, 0.03, 300.0
R = D / 2


def _film_section(out):
    out("### The film against closed forms and a table")
    out()
    out("The bearing D = 0.1 m, c = 0.1 mm, mu = 0.03 Pa s at 300 rad/s unless said; Q2 "
        "quadrilaterals (64 x 8 around x along, unless said). **Short bearing** (Ocvirk, "
        "half-Sommerfeld): the film's force on a journal displaced by eps c against "
        "F_t = mu Omega R L^3 / c^2 pi eps / (4 (1 - eps^2)^(3/2)), "
        "F_r = mu Omega R L^3 / c^2 eps^2 / (1 - eps^2)^2, relative difference of the force "
        "vector; the difference is the finite film's own (the mesh changes it in the 4th "
        "digit), shrinking as (L/D)^2:")
    out()
    out("| L/D | eps 0.1 | eps 0.4 | eps 0.7 | ratio to the next L/D (eps 0.7) |")
    out("|---|---:|---:|---:|---:|")
    rows = []
    for LD in (1 / 4, 1 / 8, 1 / 16, 1 / 32):
        jb = mbs.rotors.PlainJournal(D, LD * D, C, MU, cavitation="half-sommerfeld",
                                     cells=(64, 8))
        row = []
        for e in (0.1, 0.4, 0.7):
            s = jb.force((0.0, -e * C), speed=W0, derivatives=False)
            ref = ocvirk_force(LD * D, e)
            row.append(np.linalg.norm(s.force - ref) / np.linalg.norm(ref))
        rows.append((LD, row))
    for i, (LD, row) in enumerate(rows):
        ratio = f"{row[2] / rows[i + 1][1][2]:.2f}" if i + 1 < len(rows) else ""
        out(f"| 1/{round(1 / LD)} | {row[0]:.2e} | {row[1]:.2e} | {row[2]:.2e} | {ratio} |")
    out()
    out("The equilibrium and the eight coefficients at L/D = 1/32 under the load that gives "
        "the short bearing's eps, against Ocvirk's eccentricity and attitude and Friswell et "
        "al.'s coefficients (Dynamics of Rotating Machines, section 5.5; relative Frobenius "
        "differences):")
    out()
    out("| eps | eps FE | attitude FE (deg) | attitude Ocvirk | K diff | C diff |")
    out("|---:|---:|---:|---:|---:|---:|")
    L = D / 32
    jb = mbs.rotors.PlainJournal(D, L, C, MU, cavitation="half-sommerfeld", cells=(64, 8))
    s0 = MU * W0 * R * L ** 3 / C ** 2
    for e in (0.1, 0.3, 0.5, 0.7):
        load = s0 / 4 * e / (1 - e * e) ** 2 * math.sqrt(math.pi ** 2 * (1 - e * e) + 16 * e * e)
        eq = jb.equilibrium((0.0, -load), W0)
        _, phi = mbs.rotors.film.short_bearing(D, L, C, MU, load, W0)
        K0, C0 = friswell(e, load, W0)
        out(f"| {e} | {eq.eccentricity:.5f} | {math.degrees(eq.attitude):.3f} | "
            f"{math.degrees(phi):.3f} | "
            f"{np.linalg.norm(eq.stiffness - K0) / np.linalg.norm(K0):.1e} | "
            f"{np.linalg.norm(eq.damping - C0) / np.linalg.norm(C0):.1e} |")
    out()
    out("**Long bearing** (Sommerfeld, the full film): L/D = 16, 64 x 32 cells; the mid-plane "
        "pressure against p = 6 mu Omega (R/c)^2 eps sin t (2 + eps cos t) / ((2 + eps^2) "
        "(1 + eps cos t)^2), largest difference over the peak, and the load against the "
        "infinitely long bearing's:")
    out()
    out("| eps | mid-plane difference / peak | load / long bearing's |")
    out("|---:|---:|---:|")
    L = 16 * D
    jb = mbs.rotors.PlainJournal(D, L, C, MU, cavitation="none", cells=(64, 32))
    for e in (0.3, 0.5, 0.7):
        s = jb.force((0.0, -e * C), speed=W0, derivatives=False)
        p = jb.film.pressure_copy()
        xy = jb.film.V.tabulate_dof_coordinates()
        mid = np.abs(xy[:, 1]) < 1e-12
        t = xy[mid, 0] - math.pi / 2
        ref = 6 * MU * W0 * (R / C) ** 2 * e * np.sin(t) * (2 + e * np.cos(t)) / \
            ((2 + e * e) * (1 + e * np.cos(t)) ** 2)
        long = 12 * math.pi * MU * W0 * R * L * (R / C) ** 2 * e / \
            ((2 + e * e) * math.sqrt(1 - e * e))
        out(f"| {e} | {np.abs(p.x.array[mid] - ref).max() / np.abs(ref).max():.1e} | "
            f"{np.linalg.norm(s.force) / long:.4f} |")
    out()
    out("**Reynolds condition** (SNESVINEWTONRSLS, p >= 0) at L/D = 1 (the default 64 x 12 "
        "cells) against Raimondi and Boyd's table (1958; their film starts at the largest "
        "thickness, ours reforms where its equation says: at small eps, where the table's "
        "inlet matters most, the two differ most):")
    out()
    out("| eps | S FE | S table | diff | attitude FE (deg) | table | cavitated |")
    out("|---:|---:|---:|---:|---:|---:|---:|")
    jb = mbs.rotors.PlainJournal(D, D, C, MU)
    for e, S0, p0 in ((0.2, 0.631, 74.02), (0.4, 0.264, 63.10), (0.6, 0.121, 50.58),
                      (0.8, 0.0446, 36.24), (0.9, 0.0188, 26.45)):
        s = jb.force((0.0, -e * C), speed=W0, derivatives=False)
        Wn = np.linalg.norm(s.force)
        S = (R / C) ** 2 * MU * W0 / (2 * math.pi) * D * D / Wn
        phi = math.degrees(math.acos(s.force[1] / Wn))
        out(f"| {e} | {S:.4g} | {S0} | {S / S0 - 1:+.1%} | {phi:.2f} | {p0} | "
            f"{s.cavitated:.0%} |")
    out()
    out("**The exact linearization** against central differences of the film's force (steps "
        "1e-5 c and 1e-5 c Omega) at the state x = (0.2, -0.45) c, x' = (0.05, 0.03) c Omega, "
        "L/D = 1/2, 48 x 8 cells; relative Frobenius differences, and the time of one state "
        "with its coefficients (the operator combined from its cubic polynomial in x, "
        "assembled once):")
    out()
    out("| cavitation | K | C | ms per state (with K, C) |")
    out("|---|---:|---:|---:|")
    for cav in ("reynolds", "half-sommerfeld", "none"):
        jb = mbs.rotors.PlainJournal(D, 0.5 * D, C, MU, cavitation=cav, cells=(48, 8))
        x0, v0 = np.array([0.2, -0.45]) * C, np.array([0.05, 0.03]) * C * W0
        t0 = time.perf_counter()
        st = jb.force(x0, v0, W0)
        for _ in range(4):
            jb.force(x0, v0, W0)
        ms = (time.perf_counter() - t0) / 5 * 1e3
        h, hv = 1e-5 * C, 1e-5 * C * W0
        K, Cd = np.zeros((2, 2)), np.zeros((2, 2))
        for j in range(2):
            d = np.eye(2)[j]
            K[:, j] = -(jb.force(x0 + h * d, v0, W0, False).force
                        - jb.force(x0 - h * d, v0, W0, False).force) / (2 * h)
            Cd[:, j] = -(jb.force(x0, v0 + hv * d, W0, False).force
                         - jb.force(x0, v0 - hv * d, W0, False).force) / (2 * hv)
        out(f"| {cav} | {np.linalg.norm(st.stiffness - K) / np.linalg.norm(K):.1e} | "
            f"{np.linalg.norm(st.damping - Cd) / np.linalg.norm(Cd):.1e} | {ms:.1f} |")
    out()


def _whirl_section(out):
    out("### Oil whirl: the Campbell sweep against a 4-dof model")
    out()
    out("A rigid rotor (a disk of 4000/g kg at mid-span of a 0.4 m shaft 1000 times as stiff "
        "as steel and nearly massless, `tests/models/journal_rotor.py`) on two bearings D = "
        "0.1 m, L = 0.05 m, c = 0.1 mm, mu = 0.03 Pa s, each loaded by 2000 N "
        "(`model.bearing(..., journal=film, load=...)`): the Campbell sweep takes the film's "
        "coefficients at every speed. The onset: where the least log dec of the whirling "
        "modes crosses zero, bracketed by the sweep and found by regula falsi on single-speed "
        "sweeps; the 4-dof model (x, y, theta_x, theta_y of the rigid rotor, its mass and "
        "inertia from the mesh, the same film's coefficients at each speed) by brentq:")
    out()
    out("| load per bearing | onset FE (rad/s) | onset 4-dof | rel. diff | whirl / speed FE | "
        "4-dof | eps at the onset |")
    out("|---:|---:|---:|---:|---:|---:|---:|")
    for load, disk, speeds in ((2000.0, None, (500.0, 800.0, 1100.0, 1400.0)),
                               (200.0, dict(mass=400.0 / 9.81, polar=0.82, diametral=0.43),
                                (400.0, 700.0, 1000.0, 1300.0))):
        jb = film()
        kw = {} if disk is None else dict(disk=disk)
        model, body, _, facets = rigid_rotor(jb, load=load, **kw)
        props = rigid_properties(body, facets, **kw)
        table = model.campbell(np.array(speeds), n=4, n_extra=0)
        w, freq, whirl, (lo, hi) = whirl_onset(model, np.array(speeds), table)
        w_ref, f_ref = four_dof_threshold(jb, props, load, lo, hi)
        eps = jb.equilibrium((0.0, -load), w).eccentricity
        out(f"| {load:g} N | {w:.2f} | {w_ref:.2f} | {w / w_ref - 1:+.1e} | "
            f"{freq / w:.4f} | {f_ref / w_ref:.4f} | {eps:.3f} |")
        if load == 2000.0:
            K, Cm = jb.coefficients((0.0, -load), 800.0)
            lam = four_dof_eigenvalues(props, K, Cm, 800.0)
            t8 = model.campbell([800.0], n=4, n_extra=0)
            pairs = lam[lam.imag > 0]
            devs = [(-m.real / abs(m), np.abs(t8.eigenvalues[0] - m).min() / abs(m))
                    for m in pairs]
            dev = max(d for z, d in devs if z < 0.7)
            damped = [(z, d) for z, d in devs if z >= 0.7]
    out()
    out(f"The rotor's shaft is P2 on the mesh's curved cells (P1 there cannot hold its rigid "
        f"tilts). At 800 rad/s every complex eigenvalue of the 4-dof model is in the Campbell "
        f"table: those of damping ratio below 0.7 to {dev:.1e} (relative), the most damped "
        + ", ".join(f"(ratio {z:.2f}) to {d:.1e}" for z, d in damped)
        + ": their damping forces reach some 1e-3 of the shaft's bending stiffness, which the "
        "4-dof model takes as infinite.")
    out()


def _run_section(out):
    out("### The film's nonlinear force in time")
    out()
    model, body, jb = rotor()
    eq = jb.equilibrium((0.0, -LOAD), SPEED)
    u0 = translated(body, eq.position + np.array([0.05 * C, 0.0]))
    t0 = time.perf_counter()
    r = model.integrate(0.14, 2e-3, u0=[u0], spectral_radius=0.8, progress=False)
    tr = time.perf_counter() - t0
    d = max(np.linalg.norm(h["position"][-1] - eq.position) / C for h in r.journals.values())
    out(f"**Below the onset** (the rigid rotor at {SPEED:g} rad/s, 24 x 4 film cells), started "
        "0.05 c off the film's static equilibrium: after 0.14 s (70 steps of generalized-alpha, "
        f"radius 0.8; {tr:.0f} s) both journals are within {d:.1e} c of it.")
    out()
    r = short_run()
    e = r.energy
    films = sum(h["work"] for h in r.journals.values())
    change = e["kinetic"] + e["elastic"] - e["kinetic"][0] - e["elastic"][0]
    bal = np.abs(change - e["work"] - films).max() / np.abs(films).max()
    out("**Energy balance**: dropped from the concentric position onto the film (30 steps of "
        "1e-4 s, spectral radius 1: the midpoint rule, the films' work taken at each step's "
        "midpoint state), kinetic + elastic energy change by the loads' and the films' work "
        f"to {bal:.1e} of the films' work.")
    out()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(ROOT), os.environ.get("PYTHONPATH", "")]))
        stem = os.path.join(tmp, "two")
        subprocess.run(compat.mpiexec_command(2) + [
            sys.executable, str(ROOT / "tests" / "models" / "journal_run_cases.py"), stem],
            env=env, check=True, capture_output=True)
        two = np.load(f"{stem}.npz")
        diff = max(np.abs(two[f"x{i}"] - h["position"]).max() / C
                   for i, h in enumerate(r.journals.values()))
    out(f"**One process against two**: the same run on 2 ranks gives the journals' positions "
        f"of the 1-rank run to {diff:.1e} c (the film is replicated; the rotor's partition "
        "changes the sums' order only).")
    out()
    out("**Oil whip**: the flexible rotor of `demos/journal_bearing.py` (a disk of 1000/g kg "
        "at mid-span of a massless steel shaft 0.8 m x 30 mm radius, on two bearings D = 60 mm, "
        "L = 30 mm, c = 60 um, mu = 0.03 Pa s, 500 N each, 32 x 6 film cells) at 1000 rad/s, "
        "above its onset, from the film's equilibrium nudged 0.02 c sideways, 1.5 s in steps "
        "of 1 ms (generalized-alpha, radius 0.9):")
    out()
    whip(out)


def whip(out, t_end=1.5):
    """The demo's rotor above its onset: the limit cycle and its whirl frequency."""
    comm = MPI.COMM_WORLD
    C2, W = 6e-5, 500.0
    model, rot, jb = flexible_rotor(1000.0)
    sweep = np.array([500.0, 600.0, 700.0, 1000.0])
    tab = model.campbell(sweep, n=4, n_extra=2)
    ld = np.where(tab.stationary < sweep[:, None], tab.log_dec, np.inf)
    j = np.argmin(ld, axis=1)
    least = ld[np.arange(len(sweep)), j]
    i = int(np.flatnonzero(least < 0)[0])
    onset = sweep[i - 1] - least[i - 1] * (sweep[i] - sweep[i - 1]) / (least[i] - least[i - 1])
    crit = tab.stationary[-1, j[-1]]
    eq = jb.equilibrium((0.0, -W), 1000.0)
    x0 = eq.position + np.array([0.02 * C2, 0.0])
    u0 = fem.Function(rot.V)
    u0.interpolate(lambda x: np.vstack([x0[0] + 0 * x[0], x0[1] + 0 * x[0], 0 * x[0]]))
    t0 = time.perf_counter()
    r = model.integrate(t_end, 1e-3, u0=[u0], spectral_radius=0.9, progress=False)
    tr = time.perf_counter() - t0
    rows = []
    for name, h in r.journals.items():
        e = h["eccentricity"]
        late = r.times > 0.6 * t_end
        wf = whirl_frequency(r.times[late], h["position"][late, 0])
        rows.append((name, e.max(), e[late].min(), e[late].max(), wf))
    out(f"The onset from the Campbell sweep: {onset:.0f} rad/s; the unstable mode (the shaft's "
        f"first bending on the films) at 1000 rad/s: {crit:.1f} rad/s ({onset / crit:.2f} "
        f"times it at the onset). The run ({r.steps} steps, {tr:.0f} s on "
        f"{comm.size} process(es)):")
    out()
    rigid = rigid_support_frequency()
    out("| journal | largest eccentricity | over the last 40 %: min | max | whirl (rad/s) | "
        "whirl / first critical | whirl / rigid supports' | whirl / spin |")
    out("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, emax, lo, hi, wf in rows:
        out(f"| {name} | {emax:.3f} | {lo:.3f} | {hi:.3f} | {wf:.1f} | {wf / crit:.3f} | "
            f"{wf / rigid:.3f} | {wf / 1000.0:.3f} |")
    out()
    out(f"The equilibrium's eccentricity at 1000 rad/s is {eq.eccentricity:.3f}: the orbit grows "
        "from its nudge to a bounded limit cycle whose whirl locks near the first critical "
        "speed, not to half the spin: oil whip. It lies between the first critical of the "
        "Campbell table (the films' coefficients at their equilibrium) and the shaft's "
        f"frequency on rigid supports pinned at the journals' middles ({rigid:.1f} rad/s, "
        "Jeffcott's 48 E I / span^3 with the disk's mass): on the limit cycle the journals run "
        "far from their bearings' centres, where the films are much stiffer than at their "
        "equilibrium.")
    out()
    return rows, crit


def section(out, number=10):
    """Write the section through ``out``."""
    out(f"## {number}. Journal bearings from the Reynolds equation")
    out()
    out("`mbs.rotors.PlainJournal` (docs/guide/55-rotors-bearings.md, `dolfinx_mbs/forms/film.py`, "
        "`dolfinx_mbs/rotors/film.py`): the isoviscous Reynolds equation on the unwrapped film, "
        "solved on one rank and replicated; its coefficients by the exact linearization; "
        "`Model.bearing(..., journal=film, load=...)` in the Campbell sweep and, with the "
        "film's nonlinear force, in `Model.integrate`. Tests: `tests/rotors/test_film.py`, "
        "`test_journal_rotor.py`, `test_journal_run.py`; ROSS beside it: "
        "`bench/results/journal.md`.")
    out()
    _film_section(out)
    _whirl_section(out)
    _run_section(out)


if __name__ == "__main__":
    lines = []

    def _out(s=""):
        lines.append(s)

    section(_out, int(sys.argv[1]) if len(sys.argv) > 1 else 10)
    if MPI.COMM_WORLD.rank == 0:
        print("\n".join(lines))
