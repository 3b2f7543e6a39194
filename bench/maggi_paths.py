"""Benchmark: mechanisms (joints and motors between computed frames) on the TS path and on the
dense path's Maggi stages, side by side in one process (issue 41; the table of the guide's
"Where each is used").

    python bench/maggi_paths.py               # the four models, both paths, both schemes
    python bench/maggi_paths.py --no-write --steps 50

The models (``tests/models``): the rigid double pendulum (a Hinge and a planar Free frame, a
revolute joint; dt 5e-3), the rigid slider-crank (a driven crank, a rod and a slider on Free
frames, two revolute joints and a prismatic guide; dt 2.5e-3), the elastic double pendulum of
``bench/exudyn_pendulum.py`` (two plane-stress strips, 10 Craig-Bampton modes each; dt
2.5e-4) and the elastic slider-crank (its rod 24 x 2 P2 cells reduced to 10 Craig-Bampton
modes; dt 1e-4). Each is stepped by ``stepper="ts"`` (the multipliers bordered on the coupled
rows, PETSc TS) and ``stepper="dense"`` (Maggi's stages: the multipliers eliminated, the rows
compiled where numba is installed), with ``formulation="first-order"`` (BDF2, the default
with joints) and ``"second-order"`` (generalized-alpha, radius 1). Timed: this process's CPU
time per step after the set-up, (CPU of ``--steps`` + 5 steps less CPU of 5 steps) /
``--steps``, each run once on a model already run once (compiled kernels and forms loaded).
The answers: the largest difference of the frames' angles between the two paths (the same
discrete equations: Newton's tolerance).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import benchlib as bl  # noqa: E402


def models() -> dict:
    """name: (builder, dt)."""
    import exudyn_pendulum as xp

    from tests.models import mechanisms as mech
    from tests.models import slidercrank as sc

    def elastic_crank():
        model, rod = sc.coupled(24)
        model.reduce(rod, modes=10, method="craig-bampton")
        return model

    return {"rigid double pendulum": (mech.double_pendulum, 5e-3),
            "rigid slider-crank": (mech.slider_crank, 2.5e-3),
            "elastic double pendulum (2 x 10 modes)": (lambda: xp.build_mbs()[0], 2.5e-4),
            "elastic slider-crank (rod 10 modes)": (elastic_crank, 1e-4)}


def per_step(model, dt: float, steps: int, **kw) -> tuple:
    """CPU per step after the set-up (s), and the run of ``steps`` + 5 steps."""
    model.integrate(t_end=5 * dt, dt=dt, progress=False, **kw)   # compiled, loaded
    c0 = time.process_time()
    model.integrate(t_end=5 * dt, dt=dt, progress=False, **kw)
    c1 = time.process_time()
    r = model.integrate(t_end=(steps + 5) * dt, dt=dt, progress=False, **kw)
    c2 = time.process_time()
    return ((c2 - c1) - (c1 - c0)) / steps, r


def angles(r) -> np.ndarray:
    out = []
    for name in sorted(r.frames):
        fh = r.frames[name]
        a = getattr(fh, "angle", None)
        if a is not None:
            out.append(np.asarray(a, dtype=float))
    return np.array(out)


def main() -> None:
    p = bl.parser(__doc__)
    p.add_argument("--steps", type=int, default=200)
    args = p.parse_args()
    load = bl.wait_for_load(args.load_threshold, args.max_wait)
    start = bl.loadavg()
    from dolfinx_mbs.integrate.dense import coupled_kernels

    rows, data = [], {}
    for name, (build, dt) in models().items():
        data[name] = {}
        for form, label in (("first-order", "BDF2"), ("second-order", "generalized-alpha")):
            got = {}
            for stepper in ("ts", "dense"):
                cpu, r = per_step(build(), dt, args.steps, stepper=stepper, formulation=form)
                got[stepper] = (cpu, angles(r))
                bl.log(f"{name}, {label}, {stepper}: {1e3 * cpu:.3f} ms/step")
            diff = float(np.abs(got["ts"][1] - got["dense"][1]).max())
            data[name][label] = dict(ts=got["ts"][0], dense=got["dense"][0], angle_diff=diff)
            rows.append([name, label, f"{1e3 * got['ts'][0]:.3f}", f"{1e3 * got['dense'][0]:.3f}",
                         f"{got['ts'][0] / got['dense'][0]:.1f}", f"{diff:.1e}"])
    run = dict(date=bl.utc_now(), machine=bl.machine(), versions=bl.versions(), git=bl.git_rev(),
               command=bl.command_line(), load_wait=load, loadavg_start=start,
               loadavg_end=bl.loadavg(), steps=args.steps,
               compiled=bool(coupled_kernels.COMPILED), results=data)
    md = [f"## {run['date']}: mechanisms on the TS path and on Maggi's dense stages", ""]
    md += bl.context_lines(run)
    md += [f"{bl.load_text(run)}; dense kernels "
           f"{'compiled (numba)' if run['compiled'] else 'NumPy (numba not installed)'}; "
           f"CPU per step after the set-up ({args.steps} steps), one process", ""]
    md.append(bl.md_table(["model", "scheme", "TS [ms/step]", "dense [ms/step]", "TS / dense",
                           "angles, max diff [rad]"], rows))
    text = "\n".join(md) + "\n"
    print(text)
    if not args.no_write:
        bl.append_results("maggi_paths", run, text, "Mechanisms: the TS path and Maggi's dense "
                          "stages", results=args.results_dir)


if __name__ == "__main__":
    main()
