"""Benchmark: a coupled step of the Kane-Ryan-Banerjee hub-beam (the hub's angle computed from
a torque) against a prescribed step of the same mesh (the same motion given as a frame), side by
side in one run, at a small and a large size, on 1 and 2 ranks (issue 29's speed requirement:
a coupled step costs at most 1.3x a prescribed step).

    python bench/coupled.py                                  # every size on 1 and 2 ranks
    python bench/coupled.py --sizes small --ranks 1 --no-write   # a quick check
    mpirun -n 2 python bench/coupled.py --size 1e5 --json-out r.json   # one worker

The model is the hub-beam of ``tests/systems/test_coupled_elastic.py`` (length 10 m, EI 14000 N m^2,
rho A 1.2 kg/m, EA 2.8e7 N; centrifugal prestress, ``stiffening="prestress"``): ``small``
is that test's mesh (20 x 1 plane-stress quadrilaterals of degree 2, 246 dofs); a number is a
3D beam of square section (n x 2 x 2 hexahedra of degree 2, n chosen for about that many
dofs). In each worker, one after another:

* coupled: a :class:`~dolfinx_mbs.frames.Hinge` at the root, the beam attached there, driven
  by the torque 160 (1 - cos(2 pi t / 12)) N m (the test's spin-up past the first bending
  frequency), ``model.integrate``;
* prescribed: the hub angle that run computed, given back as a
  :class:`~dolfinx_mbs.frames.Sampled` frame, the beam clamped at the root, ``model.integrate``
  (what a user gets: ``stepper="auto"``).

Both: generalized-alpha (spectral radius 0.8), the same dt and steps, the tip probed, the energy
monitors on (the defaults), the default direct solver (MUMPS). The difference of the two runs'
tip deflections is recorded (the two schemes and the spline of the sampled angle: it shrinks
with dt, see the test), as a check that the two runs compute the same motion. Time per step:
a time stamp at each step's callback, the mean over the steps after the first (the warm-up:
symbolic factorization), maximum over ranks; ``--repeats`` alternating runs of each case, the
fastest kept (the machine is shared: the load is recorded before and after each case).

Where the time goes: one more run of each case with PETSc's event log on (factorizations,
triangular solves, matrix combinations, matrix-vector products, vector work) and the package's
phases timed by wrapping them for that run (the residual, the bordered derivatives, the elastic
block, the Schur complement, the bordered solves, the convergence test, the monitors; the
coupled system's Python-level MPI collectives through a timed communicator), each the maximum
over ranks; and for every coupled run its Newton iterations, Jacobians (factorizations),
residual evaluations and elastic solves per step (counted by wrapping the Newton solver's
methods). Results: bench/results/coupled.json and .md.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["OMP_NUM_THREADS"])

from benchlib import (ROOT, append_results, context_lines, git_rev, loadavg,  # noqa: E402
                      log, machine, md_table, parser, run_json, utc_now, versions,
                      wait_for_load)

KL, EI, RHO_A, EA = 10.0, 14000.0, 1.2, 2.8e7
KH = math.sqrt(12.0 * EI / EA)
DT = 0.04
CASES = ("coupled", "prescribed")

#: PETSc's logged events by category (none nested in another of the list)
EVENTS = {
    "factorization": ("MatLUFactorSym", "MatLUFactorNum", "MatCholFctrSym", "MatCholFctrNum"),
    "elastic solves": ("MatSolve",),
    "operator combination": ("MatAXPY", "MatCopy", "MatScale", "MatZeroEntries",
                             "MatAssemblyBegin", "MatAssemblyEnd", "MatConvert"),
    "matrix-vector products": ("MatMult", "MatMultAdd", "MatMultTranspose",
                               "MatMultTransposeAdd"),
    "vector work": ("VecAXPY", "VecAYPX", "VecWAXPY", "VecMAXPY", "VecAXPBYCZ", "VecCopy",
                    "VecSet", "VecScale", "VecDot", "VecTDot", "VecMDot", "VecNorm",
                    "VecPointwiseMult", "VecScatterBegin", "VecScatterEnd",
                    "VecAssemblyBegin", "VecAssemblyEnd", "VecReduceArith", "VecReduceComm"),
}
#: the Python phases timed in each case (inclusive wall times): (module, class, method, label)
PHASES = {
    "coupled": (
        ("dolfinx_mbs.systems.coupled", "CoupledSystem", "evaluate", "residual (frame rows, "
         "inertia terms)"),
        ("dolfinx_mbs.systems.coupled", "CoupledSystem", "derivatives", "bordered derivatives"),
        ("dolfinx_mbs.systems.coupled", "CoupledSystem", "elastic_block", "elastic block S"),
        ("dolfinx_mbs.integrate.ts.coupled", "CoupledProblem", "linearize",
         "Schur complement (m solves)"),
        ("dolfinx_mbs.integrate.ts.coupled", "CoupledProblem", "solve_bordered",
         "bordered solves"),
        ("dolfinx_mbs.integrate.ts.coupled", "CoupledProblem", "block_norms",
         "convergence test"),
        ("dolfinx_mbs.integrate.coupled", None, "monitors", "energy monitors"),
    ),
    "prescribed": (
        ("dolfinx_mbs.integrate.ts.second_order", "SecondOrderProblem", "_function", "residual"),
        ("dolfinx_mbs.integrate.ts.second_order", "SecondOrderProblem", "_jacobian",
         "step matrix and factorization"),
        ("dolfinx_mbs.integrate.observers", None, None, "observers"),
    ),
}


class Clock:
    """Inclusive wall times of wrapped functions, and of an mpi4py communicator's collectives
    (bench only: the package's functions are wrapped for one run, then restored)."""

    def __init__(self):
        self.t: dict = {}
        self.saved: list = []

    def add(self, label: str, dt: float) -> None:
        self.t[label] = self.t.get(label, 0.0) + dt

    def wrap(self, owner, name: str, label: str) -> None:
        orig = getattr(owner, name)
        self.saved.append((owner, name, orig))
        clock = self

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                clock.add(label, time.perf_counter() - t0)
        setattr(owner, name, timed)

    def restore(self) -> None:
        for owner, name, orig in reversed(self.saved):
            setattr(owner, name, orig)
        self.saved = []


class TimedComm:
    """A communicator's stand-in that adds the time of its collectives to a clock and hands
    every other attribute to the communicator (for Python-level calls only: PETSc objects
    need the communicator itself)."""

    COLLECTIVES = ("allreduce", "Allreduce", "bcast", "Bcast", "exscan", "gather", "allgather",
                   "Barrier", "barrier", "scan")

    def __init__(self, comm, clock: Clock):
        self._comm, self._clock = comm, clock

    def __getattr__(self, name):
        attr = getattr(self._comm, name)
        if name not in self.COLLECTIVES:
            return attr

        def f(*a, **k):
            t0 = time.perf_counter()
            try:
                return attr(*a, **k)
            finally:
                self._clock.add("MPI collectives (Python level)", time.perf_counter() - t0)
        return f


def time_collectives(clock: Clock) -> None:
    """Give each coupled problem, once made (its PETSc objects on the communicator itself),
    and its system a :class:`TimedComm`."""
    from dolfinx_mbs.integrate.ts import coupled as tsc

    orig = tsc.CoupledProblem.__init__
    clock.saved.append((tsc.CoupledProblem, "__init__", orig))

    def init(self, system, *a, **k):
        orig(self, system, *a, **k)
        self.comm = system.comm = TimedComm(system.comm, clock)
    tsc.CoupledProblem.__init__ = init


def petsc_events() -> dict:
    """The logged time of :data:`EVENTS` by category (seconds, this rank)."""
    from petsc4py import PETSc

    return {c: sum(PETSc.Log.Event(e).getPerfInfo()["time"] for e in evs)
            for c, evs in EVENTS.items()}


def cells(target: float) -> int:
    """n of the n x 2 x 2 hexahedra of degree 2 whose dof count is closest to ``target``."""
    return max(1, round((target / 75.0 - 1.0) / 2.0))


def beam(frame, size):
    """The hub-beam body on ``frame``: the test's 2D strip (``"small"``) or a 3D beam."""
    import numpy as np
    from dolfinx import mesh as dmesh
    from mpi4py import MPI

    import dolfinx_mbs as mbs

    comm = MPI.COMM_WORLD
    if size == "small":
        msh = dmesh.create_rectangle(comm, [np.array([0.0, -KH / 2]), np.array([KL, KH / 2])],
                                     [20, 1], dmesh.CellType.quadrilateral)
        mat = mbs.materials.PlaneStress(E=EA / KH**2, nu=0.3, density=RHO_A / KH**2,
                                        thickness=KH)
    else:
        msh = dmesh.create_box(comm, [np.array([0.0, -KH / 2, -KH / 2]),
                                      np.array([KL, KH / 2, KH / 2])],
                               [cells(float(size)), 2, 2], dmesh.CellType.hexahedron)
        mat = mbs.materials.LinearElastic(E=EA / KH**2, nu=0.3, density=RHO_A / KH**2)
    return mbs.Body(msh, mat, frame, degree=2, stiffening="prestress", name="beam")


def torque(t: float, s) -> float:
    return 160.0 * (1.0 - math.cos(2.0 * math.pi * t / 12.0))


def root(x):
    import numpy as np

    return np.isclose(x[0], 0.0)


class Counters:
    """Newton's work in a coupled run, counted by wrapping the bordered Newton solver's
    methods (bench only)."""

    def __init__(self):
        from dolfinx_mbs.integrate.ts import coupled as tsc

        self.tsc = tsc
        self.saved = {}
        self.n = dict(steps=0, newton=0, residuals=0, jacobians=0, solves=0)
        n = self.n

        def wrap(cls, name, key, after=None):
            orig = getattr(cls, name)
            self.saved[(cls, name)] = orig

            def f(obj, *a, **k):
                if key:
                    n[key] += 1
                out = orig(obj, *a, **k)
                if after:
                    after(obj, *a)
                return out
            setattr(cls, name, f)

        def steps(obj, snes, b, x):
            n["steps"] += 1
            n["newton"] += snes.getIterationNumber()
        wrap(tsc.BorderedNewton, "solve", None, steps)
        wrap(tsc.CoupledProblem, "_function", "residuals")
        wrap(tsc.CoupledProblem, "_jacobian", "jacobians")
        wrap(tsc.CoupledProblem, "_S_solve", "solves")

    def restore(self):
        for (cls, name), f in self.saved.items():
            setattr(cls, name, f)

    def per_step(self) -> dict:
        st = max(self.n["steps"], 1)
        return {k: v / st for k, v in self.n.items() if k != "steps"} | {"steps": st}


def run_case(case: str, size, steps: int, angle=None, profile: bool = False):
    """One run: (timings, tip deflections, the hub's (times, angles) of a coupled run, the
    profile or None)."""
    import importlib

    import numpy as np
    from mpi4py import MPI

    import dolfinx_mbs as mbs
    from benchlib import barrier, callgrind, gmax, step_times

    comm = MPI.COMM_WORLD
    t_end = steps * DT
    if case == "coupled":
        hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
        body = beam(hub, size)
        model = mbs.Model([body])
        model.attach(body, root)
        model.apply_torque(hub, torque, name="motor")
    else:
        times, ang = angle
        body = beam(mbs.frames.Sampled(times, rotations=ang), size)
        model = mbs.Model([body])
        model.clamp(body, root)
    stamps = []
    marks = {}

    def stamp(*a):
        stamps.append(time.perf_counter())
        if len(stamps) == 2:            # after the first step (bench/instructions.py)
            callgrind("-i", "on")
        if profile and len(stamps) == 2:   # after the first step: what the later ones cost
            marks.update(events=petsc_events(), phases=dict(clock.t))
    counters = Counters() if case == "coupled" else None
    clock = None
    if profile:
        from petsc4py import PETSc

        PETSc.Log.begin()
        clock = Clock()
        for mod, cls, name, label in PHASES[case]:
            m = importlib.import_module(mod)
            if case == "prescribed" and label == "observers":
                clock.wrap(m.Energies, "observe", "energy monitors")
                clock.wrap(m.ProbeHistory, "observe", "probes")
                continue
            clock.wrap(getattr(m, cls) if cls else m, name, label)
        if case == "coupled":
            time_collectives(clock)
        ev0 = petsc_events()
    barrier()
    t0 = time.perf_counter()
    try:
        r = model.integrate(t_end=t_end, dt=DT, probes=[(body, (KL,) + (0.0,) * (
            body.gdim - 1))], spectral_radius=0.8, progress=False, callback=stamp)
    finally:
        callgrind("-i", "off")
        callgrind("-d")
        if counters is not None:
            counters.restore()
        if clock is not None:
            clock.restore()
    wall = gmax(time.perf_counter() - t0)
    out = step_times(stamps)
    out.update(wall=wall, steps=int(r.steps), stepper=getattr(r, "stepper", "?"),
               ts_type=r.ts_type, dofs=int(body.V.dofmap.index_map.size_global
                                            * body.V.dofmap.index_map_bs))
    out.pop("durations")
    if counters is not None:
        out["newton"] = counters.per_step()
    prof = None
    if profile:
        ev = petsc_events()
        ph0 = marks["phases"]
        prof = dict(petsc={k: ev[k] - marks["events"][k] for k in ev},
                    phases={k: v - ph0.get(k, 0.0) for k, v in clock.t.items()},
                    whole=dict(petsc={k: ev[k] - ev0[k] for k in ev}, phases=dict(clock.t)),
                    wall=wall, steps=out["steps"] - 1, per_step_profiled=out["per_step"])
        prof = {k: (maxed(v, comm) if isinstance(v, dict) and k != "whole" else v)
                for k, v in prof.items()}
        prof["whole"] = {k: maxed(v, comm) for k, v in prof["whole"].items()}
    tip = r.probes[:, 0, 1]
    hub = (r.times, np.asarray(r.frames["hub"].angle)) if case == "coupled" else None
    return out, tip, hub, prof


def maxed(d: dict, comm) -> dict:
    """The values of ``d`` (the same keys on every rank), maximum over ranks."""
    from mpi4py import MPI

    keys = sorted(set().union(*comm.allgather(list(d))))
    return {k: comm.allreduce(float(d.get(k, 0.0)), op=MPI.MAX) for k in keys}


def worker(args) -> dict:
    import numpy as np
    from mpi4py import MPI

    from benchlib import gmax

    comm = MPI.COMM_WORLD
    size = args.size if args.size == "small" else float(args.size)
    steps = args.steps
    res = dict(size=args.size, nproc=comm.size, steps=steps, dt=DT, runs={c: [] for c in CASES})
    angle = None
    tips = {}
    for rep in range(args.repeats):
        for case in CASES:
            before = loadavg()
            out, tip, hub, _ = run_case(case, size, steps, angle)
            out.update(load_before=before, load_after=loadavg())
            res["runs"][case].append(out)
            tips[case] = tip
            if hub is not None:
                angle = hub
            log(f"  {case} ({args.size}, {comm.size} rank(s)): "
                f"{out['per_step'] * 1e3:.1f} ms/step, load {before[0]}")
    diff = gmax(float(np.abs(tips["coupled"] - tips["prescribed"]).max()))
    res["tip_peak"] = gmax(float(np.abs(tips["coupled"]).max()))
    res["tip_difference"] = diff / res["tip_peak"]
    res["final_rate"] = float(np.gradient(angle[1], angle[0])[-1])
    if args.profile:
        res["profile"] = {}
        for case in CASES:
            res["profile"][case] = run_case(case, size, steps, angle, profile=True)[3]
    for case in CASES:
        best = min(res["runs"][case], key=lambda r: r["per_step"])
        res[case] = best
    res["ratio"] = res["coupled"]["per_step"] / res["prescribed"]["per_step"]
    return res


def fmt_ms(x: float) -> str:
    return f"{x * 1e3:.1f}" if x < 1.0 else f"{x * 1e3:.0f}"


def markdown(run: dict) -> str:
    rows = []
    for w in run["workers"]:
        c, p = w["coupled"], w["prescribed"]
        nw = c.get("newton", {})
        rows.append([str(w["size"]), f"{c['dofs']:,}", str(w["nproc"]), str(w["steps"]),
                     f"{fmt_ms(p['per_step'])} ({fmt_ms(p['per_step_median'])})",
                     f"{fmt_ms(c['per_step'])} ({fmt_ms(c['per_step_median'])})",
                     f"**{w['ratio']:.2f}**",
                     f"{nw.get('newton', 0):.2f} / {nw.get('jacobians', 0):.2f} / "
                     f"{nw.get('residuals', 0):.2f} / {nw.get('solves', 0):.2f}",
                     f"{w['tip_difference']:.1e}",
                     f"{c['load_before'][0]}-{p['load_after'][0]}"])
    hdr = ["size", "dofs", "ranks", "steps", "prescribed ms/step mean (median)",
           "coupled ms/step mean (median)", "coupled / prescribed",
           "Newton its / Jacobians / residuals / elastic solves per step",
           "tip difference / peak", "load"]
    out = [f"## {run['date']}: coupled against prescribed steps of the hub-beam", "",
           *context_lines(run),
           f"- load average at start {' '.join(run['loadavg_start'])}, at end "
           f"{' '.join(run['loadavg_end'])}; total wall {run['wall']:.0f} s", "",
           md_table(hdr, rows), ""]
    for name, why in run.get("failed", {}).items():
        out.append(f"- {name}: {why}")
    met = [f"{w['size']} on {w['nproc']}: {'yes' if w['ratio'] <= 1.3 else 'no'}"
           for w in run["workers"]]
    if met:
        out.append("- at most 1.3x a prescribed step (issue 29): " + "; ".join(met))
    out += ["- dt = 0.04 s, generalized-alpha (radius 0.8), energy monitors and a tip probe on, "
            "the default direct solver (MUMPS); prescribed: the coupled run's hub angle as a "
            "Sampled frame, `stepper=\"auto\"` (the stepper is in the JSON); ms/step: mean "
            "(median) over the steps after the first, maximum over ranks, the fastest of "
            f"{run['repeats']} alternating runs.", ""]
    for w in run["workers"]:
        prof = w.get("profile")
        if prof:
            out += profile_lines(w, prof)
    return "\n".join(out) + "\n"


def profile_lines(w: dict, prof: dict) -> list:
    """Markdown: where a worker's steps spent their time (PETSc's events and the timed Python
    phases, ms per step over the whole run, maximum over ranks)."""
    out = [f"Where the time goes, {w['size']} ({w['coupled']['dofs']:,} dofs) on "
           f"{w['nproc']} rank(s): ms per step over the steps after the first, maximum over "
           "ranks; PETSc's logged events by kind, then the package's phases (inclusive wall "
           "times: they contain the events above).", ""]
    rows = []
    for kind in ("petsc", "phases"):
        labels = []
        for c in CASES:
            labels += [k for k in prof[c][kind] if k not in labels]
        for k in labels:
            rows.append([("PETSc: " if kind == "petsc" else "") + k]
                        + [f"{prof[c][kind][k] / prof[c]['steps'] * 1e3:.2f}"
                           if k in prof[c][kind] else "—" for c in CASES])
    rows.append(["step under the profile (after the first)"]
                + [f"{prof[c]['per_step_profiled'] * 1e3:.2f}" for c in CASES])
    return out + [md_table(["where", "coupled", "prescribed"], rows), ""]


def driver(args) -> None:
    from mpi4py import MPI

    if MPI.COMM_WORLD.size > 1:
        raise SystemExit("the driver runs in one process: give --ranks (or --size for a worker)")
    run = dict(date=utc_now(), command="python bench/coupled.py " + " ".join(sys.argv[1:]),
               machine=machine(), versions=versions(), git=git_rev(), repeats=args.repeats,
               workers=[], failed={})
    if args.load_threshold is not None:
        run["load_wait"] = wait_for_load(args.load_threshold, args.max_wait)
    run["loadavg_start"] = loadavg()
    t0 = time.perf_counter()
    for size in args.sizes.split(","):
        steps = args.steps_small if size == "small" else args.steps
        for ranks in (int(r) for r in args.ranks.split(",")):
            log(f"{size}: {ranks} rank(s), {steps} steps, load {loadavg()[0]}")
            flags = ["--size", size, "--steps", steps, "--repeats", args.repeats]
            if not args.profile:
                flags.append("--no-profile")
            try:
                w = run_json([Path(__file__).resolve()] + flags, ranks=ranks,
                             timeout=args.timeout)
            except Exception as e:
                run["failed"][f"{size} on {ranks}"] = str(e).splitlines()[0][:300]
                log(f"  failed: {e}")
                continue
            run["workers"].append(w)
            log(f"  ratio {w['ratio']:.2f}: coupled {fmt_ms(w['coupled']['per_step'])} ms, "
                f"prescribed {fmt_ms(w['prescribed']['per_step'])} ms per step")
    run["loadavg_end"] = loadavg()
    run["wall"] = time.perf_counter() - t0
    md = markdown(run)
    print(md)
    if not args.no_write:
        append_results("coupled", run, md, "Coupled against prescribed steps: the hub-beam",
                       args.results_dir)
        print(f"written: {args.results_dir}/coupled.json, .md")


def main():
    p = parser(__doc__, load=None, max_wait=600.0)
    p.add_argument("--load-threshold", dest="load_threshold", type=float, default=None,
                   help="wait at start until the 1-minute load average is at most this")
    p.add_argument("--size", help="run this size here (a worker): 'small' or a dof count")
    p.add_argument("--sizes", default="small,1e5")
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--steps", type=int, default=10, help="steps of the 3D sizes")
    p.add_argument("--steps-small", type=int, default=100)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--no-profile", dest="profile", action="store_false")
    p.add_argument("--timeout", type=float, default=3600.0, help="per worker (s)")
    p.add_argument("--json-out", type=Path)
    args = p.parse_args()
    if args.size is None:
        return driver(args)
    if args.size == "small":
        args.steps = args.steps or 100
    res = worker(args)
    from mpi4py import MPI

    if MPI.COMM_WORLD.rank == 0 and args.json_out:
        args.json_out.write_text(json.dumps(res, default=float))


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    main()
