"""Seed 003's example c (parameter studies, Figs. 9-14) as sweeps of the case files
demos/cases/seed003_rod*.toml through the dolfinx-mbs command, against the closed forms of
docs/theory.md section 6; writes docs/seed003_studies.md and docs/seed003_studies.png.

    python docs/seed003_studies.py [--ranks N] [--jobs J] [--keep DIR]      (make studies)

--ranks/--jobs are passed to the sweeps (default: one case after another in one process).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.models.seed003c import rod_closed_forms, static_tip, tip_excitation  # noqa: E402

CASES = ROOT / "demos" / "cases"
AREAS = (1e-5, 2e-5, 4e-5, 6e-5)
MASSES = (1.0, 0.5, 0.25)
SPINS = (15.0, 300.0)
EXCITATIONS = (100.0, 200.0, 300.0)  # rad/s: 50/pi, 100/pi, 150/pi Hz
BASE = dict(A=2e-5, mass=1.0, spin=15.0, F0=1000.0)  # the excitation case's parameters


def sweep(case, sets, out, args, plot):
    cmd = [sys.executable, "-m", "dolfinx_mbs.cli", "sweep", str(case), "--out", str(out),
           "--ranks", str(args.ranks), "--jobs", str(args.jobs), "--plot", plot]
    for s in sets:
        cmd += ["--set", s]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT)
    lines = (out / "results.jsonl").read_text().splitlines()
    return sorted((json.loads(s) for s in lines), key=lambda r: r["case"]), \
        time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--keep", help="keep the sweeps' output in this folder")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="seed003_"))

    sets = [f"parameters.A={','.join(map(str, AREAS))}",
            f"parameters.mass={','.join(map(str, MASSES))}",
            f"parameters.spin={','.join(map(str, SPINS))}"]
    rows, t_rod = sweep(CASES / "seed003_rod.toml", sets, work / "rod", args,
                        "frequencies.w1")
    table = []
    for r in rows:
        s = r["set"]
        A, m, W = s["parameters.A"], s["parameters.mass"], s["parameters.spin"]
        assert r["status"] == "ok", r
        tip, (w1,) = rod_closed_forms(A, m, W, n=1)
        fe_tip = r["results"]["static"]["tip"]["x"]
        fe_w1 = r["results"]["frequencies"]["w1"]
        table.append((A, m, W, fe_w1, w1, abs(fe_w1 / w1 - 1), fe_tip, tip,
                      abs(fe_tip / tip - 1)))
    worst_w = max(t[5] for t in table)
    worst_tip = max(t[8] for t in table)
    assert worst_w < 1e-3 and worst_tip < 1e-3, (worst_w, worst_tip)

    exc, t_exc = sweep(CASES / "seed003_rod_excitation.toml",
                       [f"parameters.w={','.join(map(str, EXCITATIONS))}"], work / "exc", args,
                       "transient.tip.x.excursion")
    u_st = static_tip(BASE["A"], BASE["mass"], BASE["spin"], BASE["F0"])
    amp = []
    histories = []
    for r in exc:
        assert r["status"] == "ok", r
        w = r["set"]["parameters.w"]
        tr = r["results"]["transient"]
        t = np.array(tr["series"]["times"])
        u = np.array(tr["series"]["tip"])[:, 0]
        ref, quasi = tip_excitation(t, BASE["A"], BASE["mass"], BASE["spin"], BASE["F0"], w)
        fine, _ = tip_excitation(np.linspace(0, t[-1], 20001), BASE["A"], BASE["mass"],
                                 BASE["spin"], BASE["F0"], w)
        d_fe = tr["tip"]["x"]["excursion"] / u_st
        d_ex = np.max(np.abs(fine)) / u_st
        amp.append((w, quasi / u_st, d_fe, d_ex, abs(d_fe / d_ex - 1),
                    np.max(np.abs(u - u[0] - ref)) / np.max(np.abs(ref))))
        histories.append((w, t, u - u[0], ref))
    worst_amp = max(a[4] for a in amp)
    assert worst_amp < 1e-3, amp

    out = ROOT / "docs" / "seed003_studies.md"
    with open(out, "w") as f:
        f.write(_report(table, worst_w, worst_tip, amp, u_st, t_rod, t_exc, args))
    _plot(table, histories, u_st, ROOT / "docs" / "seed003_studies.png")
    print(f"wrote {out} and docs/seed003_studies.png (sweeps in {work})")


def _list(values):
    return ",".join(f"{v:g}" for v in values)


def _header(*names):
    return "| " + " | ".join(names) + " |\n" + "|---" * len(names) + "|"


def _report(table, worst_w, worst_tip, amp, u_st, t_rod, t_exc, args):
    head = _header("A (m^2)", "m (kg)", "Omega (rad/s)", "w1 FE (rad/s)", "w1 exact",
                   "rel. error", "tip FE (m)", "tip exact", "rel. error")
    how = (f"as MPI jobs: --ranks {args.ranks} --jobs {args.jobs}"
           if (args.ranks, args.jobs) != (1, 1) else "one after another in one process")
    s = f"""# Seed 003, example c: parameter studies of the rotating rod from the command line

Written by `docs/seed003_studies.py` (`make studies`): two sweeps of the case files
`demos/cases/seed003_rod.toml` and `demos/cases/seed003_rod_excitation.toml` through
`dolfinx-mbs sweep`, compared with the closed forms of `docs/theory.md` section 6 (cases run
{how}).
The rod (seed 003): L = 1 m, E = 210 GPa, spinning about z through its root, axial motion only
(nu = 0, transverse displacement clamped), 10 quadratic hexahedra along it.

## First axial frequency and steady elongation (Figs. 9-12: area and spin; Fig. 14: mass)

    dolfinx-mbs sweep demos/cases/seed003_rod.toml --set parameters.A={_list(AREAS)} \\
        --set parameters.mass={_list(MASSES)} --set parameters.spin={_list(SPINS)}

{len(table)} cases in {t_rod:.0f} s. Closed forms: w1^2 = (E/rho)(pi/2L)^2 - Omega^2 and the tip
elongation tan(beta L)/beta - L, beta = Omega sqrt(rho/E), rho = m/(A L). Largest relative
error: w1 {worst_w:.1e}, elongation {worst_tip:.1e} (required: 1e-3).

{head}
"""
    for A, m, W, fw, ew, rw, ft, et, rt in table:
        s += (f"| {A:.0e} | {m:g} | {W:g} | {fw:.3f} | {ew:.3f} | {rw:.1e} | {ft:.6e} | "
              f"{et:.6e} | {rt:.1e} |\n")
    s += f"""
## Tip response to the axial end force (Fig. 13: excitation 50/pi, 100/pi, 150/pi Hz)

    dolfinx-mbs sweep demos/cases/seed003_rod_excitation.toml \\
        --set parameters.w={_list(EXCITATIONS)}

A = 2e-5 m^2, m = 1 kg, Omega = 15 rad/s, F(t) = F0 sin(w t) at the tip with F0 = 1 kN,
starting at rest in the steady spinning state; one period of the force, dt = 1e-5 s, Hamilton's
form with the implicit midpoint rule (no numerical damping). {len(amp)} cases in {t_exc:.0f} s.
Dynamic amplification D = max |u_tip(t) - u_tip(0)| / u_static, u_static = F0 tan(b L)/(E A b)
= {u_st:.6e} m the tip deflection under a static F0 (b = Omega sqrt(rho/E)). The closed form is
the modal series of the rod started from rest (every mode: the quasi-static part F0 tan(kL)/(EAk)
sin(wt), k^2 = rho (w^2 + Omega^2)/E, in closed form, minus the free vibrations, 400 modes),
its maximum over the same period; the steady-state amplification (the quasi-static part alone)
is given for comparison: starting from rest adds the free vibrations to it.

| w (rad/s) | f (Hz) | steady-state | D FE | D closed form | rel. error | history error |
|---|---|---|---|---|---|---|
"""
    for w, ss, dfe, dex, err, herr in amp:
        s += (f"| {w:g} | {w / (2 * np.pi):.2f} = {w / 2:g}/pi | {ss:.5f} | {dfe:.5f} | "
              f"{dex:.5f} | {err:.1e} | {herr:.1e} |\n")
    s += """
History error: max over the period of |u_FE - u_exact| / max |u_exact| of the dynamic tip
displacement (the higher modes' phase: they are resolved in space and time less well than the
first).

![w1, elongation and tip histories](seed003_studies.png)
"""
    return s


def _plot(table, histories, u_st, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    tab = np.array(table)
    for m, c in zip(MASSES, ("C0", "C1", "C2")):
        for W, mk in zip(SPINS, ("o", "s")):
            sel = (tab[:, 1] == m) & (tab[:, 2] == W)
            ax[0].plot(tab[sel, 0] * 1e5, tab[sel, 3], mk, color=c, mfc="none",
                       label=f"m = {m:g} kg, Omega = {W:g}")
            ax[1].plot(tab[sel, 0] * 1e5, tab[sel, 6] * 1e3, mk, color=c, mfc="none",
                       label=f"m = {m:g} kg, Omega = {W:g}")
            a = np.linspace(AREAS[0], AREAS[-1], 100)
            ex = np.array([(lambda r: (r[0], r[1][0]))(rod_closed_forms(x, m, W, n=1)) for x in a])
            ax[0].plot(a * 1e5, ex[:, 1], "-", color=c, lw=0.8)
            ax[1].plot(a * 1e5, ex[:, 0] * 1e3, "-", color=c, lw=0.8)
    ax[0].set(xlabel="A (1e-5 m^2)", ylabel="w1 (rad/s)", title="first axial frequency")
    ax[1].set(xlabel="A (1e-5 m^2)", ylabel="tip elongation (mm)", yscale="log",
              title="steady elongation (lines: closed forms)")
    ax[0].legend(fontsize=7)
    for (w, t, u, ref), c in zip(histories, ("C0", "C1", "C2")):
        ax[2].plot(t * 1e3, u / u_st, "-", color=c, label=f"w = {w:g} rad/s, FE")
        ax[2].plot(t * 1e3, ref / u_st, "--", color="k", lw=0.7)
    ax[2].set(xlabel="t (ms)", ylabel="(u_tip - u_tip(0)) / u_static",
              title="tip under F0 sin(w t) (dashed: modal closed form)")
    ax[2].legend(fontsize=7)
    for a in ax:
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
