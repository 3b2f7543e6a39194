"""Benchmark: reduced-order bodies (Model.reduce) against the full model, side by side in one
run (issue 16): the offline phase (the shapes) stated apart from the online one (the run).

    python bench/reduction.py                          # both cases, results appended
    mpirun -n 2 python bench/reduction.py              # the same on 2 ranks
    python bench/reduction.py --krb-t-end 1 --rotor-size 0.03 --rotor-t-end 0.01 --no-write

* ``krb``: Kane, Ryan & Banerjee's spin-up (the strip of bench/krb_scipy.py: 100 x 1 Q2 cells,
  prestress, Omega_s = 6 rad/s), ``--krb-t-end`` (10 s) at dt = 5e-3 s, full and with the
  strip reduced to ``--krb-modes`` (10) Craig-Bampton modes computed at rest; the tip histories'
  largest difference over the peak is stated with the times (online: the median of
  ``--krb-repeats`` (3) runs of the same model, all kept in the JSON).
* ``rotor``: the rotor of demos/reduced_rotor.py (``meshes.rotor(size=--rotor-size)``: 0.006
  gives about 1e5 dofs), spinning at 6000 rpm under gravity, reduced to ``--rotor-modes`` (20)
  modes with the loads' static shapes; ``--rotor-t-end`` (1 s) of motion at dt = 1e-4 s from
  its static state. The full model runs once (its set-up), then 1 step and ``--full-steps``
  + 1 (5 + 1) steps; the difference of the two gives its time per step, extrapolated to the
  whole interval.

Wall times are the largest over the ranks (barriers on both sides). The machine is shared:
the 1-minute load average at the start and at the end is recorded with the results.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402


def krb(args, comm):
    import dolfinx_mbs as mbs
    from dolfinx import mesh as dmesh

    L, H = 10.0, 0.0775
    B, EA, RHO_A = H, 2.8e7, 1.2

    def model_of(modes):
        mesh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                      [100, 1], dmesh.CellType.quadrilateral)
        frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=6.0, ramp_time=15.0)
        mat = mbs.materials.PlaneStress(E=EA / (B * H), nu=0.3, density=RHO_A / (B * H),
                                        thickness=B)
        body = mbs.Body(mesh, mat, frame, degree=2, stiffening="prestress")
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        if modes:
            model.reduce(body, modes=modes)
        return model

    out = {}
    for name, modes in (("full", None), ("reduced", args.krb_modes)):
        model = model_of(modes)
        t_off, _ = bl.timed(lambda: model.system(), comm)
        def run():
            return model.integrate(args.krb_t_end, 5e-3, probes=[(L, 0.0)], progress=False)
        t_on, r = bl.timed(run, comm)
        walls = [t_on] + [bl.timed(run, comm)[0] for _ in range(args.krb_repeats - 1)]
        out[name] = dict(offline=t_off, online=float(np.median(walls)), walls=walls,
                         n=model.system().n_reduced, tip=r.probes[:, 0, 1], stepper=r.stepper)
    peak = np.abs(out["full"]["tip"]).max()
    err = np.abs(out["reduced"]["tip"] - out["full"]["tip"]).max() / peak
    for v in out.values():
        v.pop("tip")
    return dict(case="krb", t_end=args.krb_t_end, modes=args.krb_modes, error=float(err),
                speedup=out["full"]["online"] / out["reduced"]["online"], **out)


def rotor(args, comm):
    import dolfinx_mbs as mbs
    from dolfinx_mbs import meshes

    speed = 6000 * 2 * np.pi / 60
    dt = 1e-4

    def model_of(modes):
        mesh, _, facets = meshes.rotor(comm, size=args.rotor_size)
        frame = mbs.frames.ConstantSpin(axis=(0.0, 0.0, 1.0), rate=speed)
        steel = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0)
        body = mbs.Body(mesh, steel, frame, degree=2, name="rotor", stiffening="prestress")
        model = mbs.Model([body], gravity=(0.0, -9.81, 0.0))
        model.clamp(body, facets=(facets, meshes.BEARING_A))
        model.clamp(body, facets=(facets, meshes.BEARING_B))
        if modes:
            model.reduce(body, modes=modes, residual=[0.0, np.pi / 2 / speed])
        return model, body

    res = {}
    model, body = model_of(args.rotor_modes)
    ndofs = body.V.dofmap.index_map.size_global * 3
    t_off, _ = bl.timed(lambda: model.system(), comm)
    model.solve_static()
    u0 = [body.u.copy()]
    t_on, _ = bl.timed(lambda: model.integrate(args.rotor_t_end, dt, u0=u0, progress=False,
                                               energy=False), comm)
    res["reduced"] = dict(offline=t_off, online=t_on, n=model.system().n_reduced)
    model, body = model_of(None)
    t_first, _ = bl.timed(lambda: model.integrate(dt, dt, progress=False, energy=False), comm)
    n = args.full_steps   # then one run of 1 step and one of n + 1: the set-up cancels
    t_1, _ = bl.timed(lambda: model.integrate(dt, dt, progress=False, energy=False), comm)
    t_n, _ = bl.timed(lambda: model.integrate((n + 1) * dt, dt, progress=False,
                                              energy=False), comm)
    per_step = (t_n - t_1) / n
    steps = int(round(args.rotor_t_end / dt))
    res["full"] = dict(first_step=t_first, per_step=per_step, online=per_step * steps,
                       extrapolated=True, n=model.system().n_reduced)
    return dict(case="rotor", dofs=ndofs, t_end=args.rotor_t_end, modes=args.rotor_modes,
                speedup=res["full"]["online"] / (res["reduced"]["online"]
                                                 + res["reduced"]["offline"]), **res)


def main():
    p = bl.parser(__doc__)
    p.add_argument("--krb-t-end", type=float, default=10.0)
    p.add_argument("--krb-modes", type=int, default=10)
    p.add_argument("--krb-repeats", type=int, default=3,
                   help="online runs of each krb model (the median is stated)")
    p.add_argument("--rotor-size", type=float, default=0.006)
    p.add_argument("--rotor-modes", type=int, default=20)
    p.add_argument("--rotor-t-end", type=float, default=1.0)
    p.add_argument("--full-steps", type=int, default=5)
    p.add_argument("--cases", default="krb,rotor")
    args = p.parse_args()
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    waited = bl.wait_for_load(args.load_threshold, args.max_wait, comm=comm)
    load0 = bl.loadavg()
    cases = [c for c in args.cases.split(",") if c]
    results = [dict(krb=krb, rotor=rotor)[c](args, comm) for c in cases]
    run = dict(date=bl.utc_now(), machine=bl.machine(), versions=bl.versions(),
               git=bl.git_rev(), command=bl.command_line(comm.size), ranks=comm.size,
               load=[load0, bl.loadavg()], waited=waited, results=results)
    rows = []
    for r in results:
        red, full = r["reduced"], r["full"]
        rows.append([r["case"], str(r.get("dofs", full["n"])), str(red["n"]),
                     f"{r['t_end']:g}", f"{red['offline']:.2f}", f"{red['online']:.2f}",
                     f"{full['online']:.1f}" + (" (extrapolated)" if full.get("extrapolated")
                                                else ""),
                     f"{r['speedup']:.0f}x", f"{r['error']:.1e}" if "error" in r else ""])
    md = "\n".join([f"## {run['date']}, {comm.size} rank(s)\n"] + bl.context_lines(run) + [
        f"- load average (1, 5, 15 min) at the start {load0}, at the end {bl.loadavg()}", "",
        bl.md_table(["case", "full dofs/coordinates", "reduced coordinates", "t_end (s)",
                     "offline (s)", "reduced online (s)", "full (s)",
                     "speed-up (rotor: incl. offline)", "tip error / peak"], rows), ""])
    if comm.rank == 0:
        print(md, flush=True)
        if not args.no_write:
            bl.append_results("reduction", run, md, "Reduced-order bodies: full against "
                              "reduced", results=args.results_dir)


if __name__ == "__main__":
    main()
