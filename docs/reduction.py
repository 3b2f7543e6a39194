"""Convergence of reduced-order bodies (Model.reduce) with the number of modes, against the
full model of each case (the models of tests/reduction/test_reduce.py); writes docs/reduction.md.

    python docs/reduction.py            (make reduction; ~2 min on one core)

Cases: the spinning cantilever's Campbell branches (prestress, lambda = 0 ... 10, shapes at
rest), Kane-Ryan-Banerjee's spin-up tip history (prestress, 20 s, shapes at rest, with and
without the residual shape of the centrifugal load at full speed), the slider-crank's joint
reactions (both links Craig-Bampton, rheonomic pin and slider, dt = 5e-5 s, 0.01 s).
"""

import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from mpi4py import MPI

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.models.reducedruns import krb_tip, slider_crank  # noqa: E402
from tests.models.spinbeam import W_REF, beam  # noqa: E402

COMM = MPI.COMM_WORLD


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def campbell(modes, method="craig-bampton"):
    lams = np.array([0.0, 2.0, 5.0, 10.0])
    model, _ = beam(COMM, "prestress")
    if modes:
        model.reduce(model.bodies[0], modes=modes, method=method)
    return np.sort(model.campbell(lams * W_REF, n=4).frequencies, axis=1)


def linkage(modes):
    model, coupler = slider_crank(COMM)
    if modes:
        for b in model.bodies:
            model.reduce(b, modes=modes)
    r = model.integrate(0.01, 5e-5, probes=[(coupler, (0.15, 0.0))], reactions=True,
                        progress=False)
    return r, model.system().n_reduced


def main():
    rows = []
    ref, t_ref = timed(lambda: campbell(None))
    rows.append("## Spinning cantilever: Campbell branches, lambda = 0 ... 10\n")
    rows.append("3D cantilever of tests/static/test_stiffening.py (40 x 1 x 1 P2 hexahedra, "
                "prestress), 4 branches at lambda = 0, 2, 5, 10; shapes at rest. Largest "
                "relative error of each branch (sorted at each speed) over the speeds.\n")
    rows.append("| modes | branch 1 | branch 2 | branch 3 | branch 4 | time (s) |")
    rows.append("|---|---|---|---|---|---|")
    rows.append(f"| full | | | | | {t_ref:.2f} |")
    for m in (4, 6, 10, 20):
        out, t = timed(lambda: campbell(m))
        err = np.abs(out / ref - 1).max(axis=0)
        rows.append(f"| {m} | " + " | ".join(f"{e:.1e}" for e in err) + f" | {t:.2f} |")
    ref, t_ref = timed(krb_tip)
    peak = np.abs(ref).max()
    rows.append("\n## Kane-Ryan-Banerjee spin-up: tip history\n")
    rows.append(f"Strip of tests/integrate/test_spin_up_beam.py (40 P2 cells, prestress), Omega_s "
                f"= 6 rad/s, 20 s at dt = 0.02 s (peak {peak:.4f} m); largest tip difference over "
                "the history / peak. Residual: the static shape of the load at t = 15 s "
                "(full spin) added.\n")
    rows.append("| modes | error | with residual shape | time (s) |")
    rows.append("|---|---|---|---|")
    rows.append(f"| full | | | {t_ref:.2f} |")
    for m in (2, 5, 10, 20):
        w, t = timed(lambda: krb_tip({"modes": m}))
        wr = krb_tip({"modes": m, "residual": [15.0]})
        rows.append(f"| {m} | {np.abs(w - ref).max() / peak:.1e} | "
                    f"{np.abs(wr - ref).max() / peak:.1e} | {t:.2f} |")
    (ref, n_full), t_ref = timed(lambda: linkage(None))
    rows.append("\n## Slider-crank: joint reactions\n")
    rows.append("demos/elastic_linkage.py's mechanism (crank 6 x 2, coupler 18 x 2 P2 cells), "
                "both links Craig-Bampton (the pin and slider dofs kept), 0.01 s at dt = "
                "5e-5 s; largest difference / peak of each reaction. The floor is the time "
                "discretization: the full model's reaction is its residual at the joint, which "
                "generalized-alpha leaves nonzero inside the body (the pin's difference "
                "falls 4x when dt halves).\n")
    names = ("motor", "pin", "slider")
    rows.append("| modes per link | coordinates | " + " | ".join(names)
                + " | mid-coupler probe | time (s) |")
    rows.append("|---|---|---|---|---|---|---|")
    rows.append(f"| full | {n_full} | | | | | {t_ref:.2f} |")
    for m in (2, 4, 8, 16):
        (r, n), t = timed(lambda: linkage(m))
        errs = [np.abs(r.reactions[k] - ref.reactions[k]).max()
                / np.abs(ref.reactions[k]).max() for k in names]
        perr = np.abs(r.probes - ref.probes).max() / np.abs(ref.probes).max()
        rows.append(f"| {m} | {n} | " + " | ".join(f"{e:.1e}" for e in errs)
                    + f" | {perr:.1e} | {t:.2f} |")
    if COMM.rank == 0:
        head = ["# Reduced-order bodies: convergence with the number of modes\n",
                "Written by `docs/reduction.py` (`make reduction`): each reduced model against "
                "the full model of the same case.",
                f"{COMM.size} rank(s), {platform.node()}, {time.strftime('%Y-%m-%d')}, load "
                f"average {os.getloadavg()[0]:.1f} at the end (times are indicative: the "
                "machine is shared; the reduced runs go through PETSc TS with a full load "
                "vector per step, and with rheonomic joints (the slider-crank) the reduced "
                "operators are formed again by products with the full matrices at every "
                "step: there, and with the frames' numerical derivatives dominating such "
                "a small model, the reduced run is no faster than the full one; profiled "
                "at 1 rank, 17 ms a step for both).\n"]
        (ROOT / "docs" / "reduction.md").write_text("\n".join(head + rows) + "\n")
        print("\n".join(rows))


if __name__ == "__main__":
    main()
