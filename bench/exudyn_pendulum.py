"""Benchmark: a double pendulum of two elastic links in dolfinx_mbs and in Exudyn, side by side
in one process (issue 41, item 4).

    python bench/exudyn_pendulum.py                  # both codes, the studies, written
    python bench/exudyn_pendulum.py --quick --no-write

The model: two steel strips (E = 210 GPa, rho = 7850 kg/m^3, nu = 0.3), each 0.5 m long, 4 mm
in the plane of motion and 20 mm across it (EI = 22.4 N m^2, rho A = 0.628 kg/m, the first
pinned-pinned bending mode at 236 rad/s), the first pinned to the ground at one end, the second
pinned to the first's free end, both on the centre line; released straight and at rest along
the x axis under gravity (9.81 m/s^2 along -y). ``--t-end`` (1 s) in steps of ``--dt``
(2.5e-4 s: the studies show the midpoint deflections' histories converged in the step there to
about 1 % of their peaks, at 1e-3 s to about 12 %), generalized-alpha at spectral radius
``--radius`` (0.9) in both codes. The answers compared: the links' chord angles, the second
link's tip (global x, y), each link's midpoint deflection across its chord.

* dolfinx_mbs: each link a plane-stress strip of ``--nx`` x 2 P2 quadrilaterals (1.2k dofs
  at nx = 50), the first on a :class:`~dolfinx_mbs.frames.Hinge` at the ground pin, the second
  on a planar :class:`~dolfinx_mbs.frames.Free` frame with its origin at the link's centre;
  each frame is its link's chord (``model.clamp`` of the pin node in both directions and of the
  far end's node across the link), the elbow a ``model.revolute`` between the two links' end
  nodes; each link ``model.reduce(link, modes=--modes, method="craig-bampton")``;
  ``model.integrate(..., stepper="dense", formulation="second-order")``: the dense coupled path
  with the elbow eliminated by Maggi's equations. The angles are the frames' angles, the
  midpoint deflections the midpoint probes' displacement across the link in its frame.
* Exudyn (``pip install exudyn``): each link ``--elements`` ``ObjectANCFCable2D`` elements
  (Euler-Bernoulli, geometrically nonlinear; rho A, EI, EA of the strip), the first link's
  first node pinned to the ground and the second link's first node to the first link's last
  node by ``ObjectJointRevolute2D``, gravity by ``LoadMassProportional`` on every element;
  ``SolveDynamic`` with generalized-alpha (index-3 constraints), fixed steps, Newton to a
  relative tolerance of 1e-10. The angles are the chords' (end nodes), the deflections the
  midpoint nodes' distance from the chord.

Timed in both: the whole run (dolfinx_mbs: meshes, bodies, model, ``reduce`` and
``integrate``, which computes the reduction, the invariants and the steps; Exudyn: the items,
``Assemble`` and ``SolveDynamic``) and the stepping alone (dolfinx_mbs: the dense stepper's
``march``, the steps with their observers; Exudyn: ``SolveDynamic``), wall and CPU time of
this process; dolfinx_mbs ``--repeats`` times (1: a run takes minutes of CPU), Exudyn
``--exudyn-repeats`` times (5), alternately. The first run of each in the process is shown
apart from the best and median of the others (of all where there is one).

The studies (over ``--study-t-end``, 0.3 s, from steps of ``--study-dt``, 1e-3 s; skipped with
``--quick``): each code's convergence in the step (dolfinx_mbs dt/2, dt/4; Exudyn dt/2 to dt/8)
and in its discretization (Exudyn: 2x the elements, and 4x at dt/4; dolfinx_mbs: 2x the mesh in
both directions, 4 and 16 modes); the links' geometric stiffening (``stiffening="prestress"``:
the stress of each link's own inertia and gravity, which the cable's nonlinear strain has and
the linear strip has not; also over the whole run); the rigid limit (E raised 1e3-fold in both)
against the Lagrange equations of the rigid double pendulum (scipy, rtol 1e-12), each with its
own rigid inertia (the strip's m (L^2 + h^2) / 12 about the centre, the cable's m L^2 / 12). A
case that fails is recorded as failed and the others still run. Results:
bench/results/exudyn_pendulum.json and .md.
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
    ROOT,
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

L1 = L2 = 0.5                       # the links' lengths (m)
H, B = 0.004, 0.02                  # in the plane of motion, across it (m)
E, NU, RHO = 210e9, 0.3, 7850.0     # steel
G = 9.81
AREA, INERTIA = H * B, B * H ** 3 / 12
KEYS = ("t", "th1", "th2", "tipx", "tipy", "mid1", "mid2")
#: the rigid limit's factor on E: at 1e4 Exudyn's Newton stops at its relative tolerance on
#: internal forces of that size with the angles 1.6e-3 rad off the rigid pendulum's (at 1e3:
#: 4.9e-6 rad)
RIGID = 1e3


def rigid_reference(t, inertia1: float, inertia2: float):
    """The rigid double pendulum of the links' masses and the given inertias about their
    centres, released horizontal at rest: its histories at the times ``t`` (Lagrange's
    equations in the two absolute angles, scipy's RK45 at rtol 1e-12).

    Args:
        t: the times (s).
        inertia1: link 1's inertia about its centre (kg m^2).
        inertia2: link 2's.

    Returns:
        {"th1", "th2", "tipx", "tipy"} at ``t``.
    """
    import numpy as np
    from scipy.integrate import solve_ivp

    m1, m2 = RHO * AREA * L1, RHO * AREA * L2
    k = m2 * L1 * L2 / 2

    def rhs(_, y):
        a1, a2, w1, w2 = y
        c, s = math.cos(a1 - a2), math.sin(a1 - a2)
        M = np.array([[inertia1 + m1 * L1 ** 2 / 4 + m2 * L1 ** 2, k * c],
                      [k * c, inertia2 + m2 * L2 ** 2 / 4]])
        f = np.array([-k * s * w2 ** 2 - (m1 * L1 / 2 + m2 * L1) * G * math.cos(a1),
                      k * s * w1 ** 2 - m2 * L2 / 2 * G * math.cos(a2)])
        return np.concatenate([[w1, w2], np.linalg.solve(M, f)])
    t = np.asarray(t)
    sol = solve_ivp(rhs, (0.0, float(t[-1])), [0, 0, 0, 0], t_eval=t, rtol=1e-12, atol=1e-12,
                    method="RK45")
    a1, a2 = sol.y[0], sol.y[1]
    return dict(th1=a1, th2=a2, tipx=L1 * np.cos(a1) + L2 * np.cos(a2),
                tipy=L1 * np.sin(a1) + L2 * np.sin(a2))


# -- dolfinx_mbs ------------------------------------------------------------------------------
STEPPING: list = []


def _time_march() -> None:
    """Wrap the dense coupled stepper's ``march`` (the steps and their observers) to record
    its wall and CPU time in :data:`STEPPING`."""
    from dolfinx_mbs.integrate.dense import coupled as dc

    if getattr(dc.DenseCoupledStepper.march, "_timed", False):
        return
    orig = dc.DenseCoupledStepper.march

    def march(self, at):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return orig(self, at)
        finally:
            STEPPING.append((time.perf_counter() - t0, time.process_time() - c0))
    march._timed = True  # type: ignore[attr-defined]
    dc.DenseCoupledStepper.march = march


def build_mbs(nx: int = 50, ny: int = 2, modes: int | None = 10,
              method: str = "craig-bampton", e_scale: float = 1.0,
              stiffening: str | None = None):
    """The double pendulum in dolfinx_mbs (module docstring): (model, link1, link2).

    Args:
        nx: cells along each link.
        ny: cells across.
        modes: the modes of each link (None: unreduced).
        method: ``"craig-bampton"`` or ``"modal"``.
        e_scale: a factor on Young's modulus (the rigid limit).
        stiffening: the links' ``stiffening`` (None: linear strain).

    Returns:
        (model, link1, link2).
    """
    import numpy as np
    from dolfinx import mesh as dmesh
    from mpi4py import MPI

    import dolfinx_mbs as mbs

    def at(px):
        return lambda x: np.isclose(x[0], px, atol=1e-9) & np.isclose(x[1], 0.0, atol=1e-9)

    def strip(x0, length):
        return dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([x0, -H / 2]),
                                                       np.array([x0 + length, H / 2])],
                                      [nx, ny])
    mat = mbs.materials.PlaneStress(E=E * e_scale, nu=NU, density=RHO, thickness=B)
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="shoulder")
    link1 = mbs.Body(strip(0.0, L1), mat, hub, degree=2, name="link1", stiffening=stiffening)
    # the second frame's origin at the link's centre (guide 15: the better error constant)
    fr2 = mbs.frames.Free(position=(L1 + L2 / 2, 0, 0), name="link2 frame", dim=2)
    link2 = mbs.Body(strip(-L2 / 2, L2), mat, fr2, degree=2, name="link2",
                     stiffening=stiffening)
    model = mbs.Model([link1, link2], gravity=(0, -G, 0))
    model.clamp(link1, where=at(0.0), name="chord 1 A")
    model.clamp(link1, where=at(L1), components=[1], name="chord 1 B")
    model.clamp(link2, where=at(-L2 / 2), name="chord 2 A")
    model.clamp(link2, where=at(L2 / 2), components=[1], name="chord 2 B")
    model.revolute(link1, link2, point=(L1, 0.0), name="elbow")
    if modes is not None:
        model.reduce(link1, modes=modes, method=method)
        model.reduce(link2, modes=modes, method=method)
    return model, link1, link2


def run_mbs(dt: float, t_end: float, radius: float, nx: int = 50, ny: int = 2,
            modes: int = 10, method: str = "craig-bampton", e_scale: float = 1.0,
            stiffening: str | None = None) -> dict:
    """The double pendulum in dolfinx_mbs, integrated on the dense path.

    Args:
        dt: the step (s).
        t_end: the end time (s).
        radius: generalized-alpha's spectral radius.
        nx: cells along each link (:func:`build_mbs`).
        ny: cells across.
        modes: the modes of each link.
        method: the reduction's method.
        e_scale: a factor on Young's modulus.
        stiffening: the links' ``stiffening``.

    Returns:
        The histories (:data:`KEYS`), the timings, the run's particulars.
    """
    import numpy as np

    _time_march()
    t0, c0 = time.perf_counter(), time.process_time()
    model, link1, link2 = build_mbs(nx, ny, modes, method, e_scale, stiffening)
    n_before = len(STEPPING)
    r = model.integrate(t_end=t_end, dt=dt, stepper="dense", formulation="second-order",
                        spectral_radius=radius, progress=False,
                        probes=[(link1, (L1 / 2, 0.0)), (link2, (0.0, 0.0)),
                                (link2, (L2 / 2, 0.0))])
    t1, c1 = time.perf_counter(), time.process_time()
    step_wall, step_cpu = STEPPING[n_before] if len(STEPPING) > n_before else (np.nan, np.nan)
    f2 = r.frames["link2 frame"]
    th2 = np.asarray(f2.angle)
    u = np.asarray(r.probes)
    xt = L2 / 2 + u[:, 2, 0]
    yt = u[:, 2, 1]
    rO = np.asarray(f2.r_O)
    tipx = rO[:, 0] + np.cos(th2) * xt - np.sin(th2) * yt
    tipy = rO[:, 1] + np.sin(th2) * xt + np.cos(th2) * yt
    dofs = sum(int(b.V.dofmap.index_map.size_global * b.V.dofmap.index_map_bs)
               for b in (link1, link2))
    return dict(t=np.asarray(r.times), th1=np.asarray(r.frames["shoulder"].angle), th2=th2,
                tipx=tipx, tipy=tipy, mid1=u[:, 0, 1], mid2=u[:, 1, 1],
                wall=t1 - t0, cpu=c1 - c0, step_wall=step_wall, step_cpu=step_cpu,
                stepper=r.stepper, steps=int(r.steps), dofs=dofs,
                drift=float(np.nanmax(r.joints["elbow"].drift)),
                energy=float(np.ptp(r.energy["total"])),
                rotation=max(r.rotation.values()) if r.rotation else None)


# -- Exudyn ----------------------------------------------------------------------------------
def run_exudyn(dt: float, t_end: float, radius: float, elements: int = 8,
               e_scale: float = 1.0) -> dict:
    """The double pendulum in Exudyn with ``elements`` ANCF cable elements a link.

    Args:
        dt: the step (s).
        t_end: the end time (s).
        radius: generalized-alpha's spectral radius.
        elements: the elements of each link (even: the midpoint a node).
        e_scale: a factor on EI and EA (the rigid limit).

    Returns:
        The same record as :func:`run_mbs`.

    Raises:
        ValueError: ``elements`` is odd.
    """
    import exudyn as exu
    import numpy as np
    from exudyn.itemInterface import (
        LoadMassProportional,
        MarkerBodyMass,
        MarkerBodyPosition,
        MarkerNodePosition,
        NodePoint2DSlope1,
        ObjectANCFCable2D,
        ObjectGround,
        ObjectJointRevolute2D,
        SensorNode,
    )

    if elements % 2:
        raise ValueError(f"elements must be even (the midpoint a node), got {elements}")
    t0, c0 = time.perf_counter(), time.process_time()
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround(referencePosition=[0, 0, 0]))
    links = []
    for x0, length in ((0.0, L1), (L1, L2)):
        nodes = [mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[
            x0 + length * k / elements, 0, 1, 0])) for k in range(elements + 1)]
        for k in range(elements):
            el = mbs.AddObject(ObjectANCFCable2D(
                massPerLength=RHO * AREA, bendingStiffness=E * e_scale * INERTIA,
                axialStiffness=E * e_scale * AREA, length=length / elements,
                nodeNumbers=[nodes[k], nodes[k + 1]]))
            mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(
                MarkerBodyMass(bodyNumber=el)), loadVector=[0, -G, 0]))
        links.append(nodes)
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0, 0, 0])),
        mbs.AddMarker(MarkerNodePosition(nodeNumber=links[0][0]))]))
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerNodePosition(nodeNumber=links[0][-1])),
        mbs.AddMarker(MarkerNodePosition(nodeNumber=links[1][0]))]))
    pos = exu.OutputVariableType.Position
    sens = [mbs.AddSensor(SensorNode(nodeNumber=nodes[k], outputVariableType=pos,
                                     storeInternal=True, writeToFile=False))
            for nodes in links for k in (0, elements // 2, elements)]
    mbs.Assemble()
    steps = int(round(t_end / dt))
    ss = exu.SimulationSettings()
    ss.timeIntegration.numberOfSteps = steps
    ss.timeIntegration.endTime = steps * dt
    ss.timeIntegration.generalizedAlpha.spectralRadius = radius
    ss.timeIntegration.adaptiveStep = False
    ss.timeIntegration.verboseMode = 0
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = dt
    ss.show.computationTime = False
    ss.show.statistics = False
    t1, c1 = time.perf_counter(), time.process_time()
    # Newton to 1e-7 (relative): at Exudyn's default 1e-8 it stalls at round-off in the
    # first steps of the links at rest (the cables' EA is 7.5e5 EI / m^2); where 1e-7 stalls
    # too (fine meshes at small steps), 1e-6, which changes the answers by 1e-6 of the
    # deflections' peaks
    for rtol in (1e-7, 1e-6):
        ss.timeIntegration.newton.relativeTolerance = rtol
        try:
            mbs.SolveDynamic(ss, solverType=exu.DynamicSolverType.GeneralizedAlpha)
            break
        except exu.SolverError:
            if rtol == 1e-6:
                raise
    t2, c2 = time.perf_counter(), time.process_time()
    A1, M1, B1, A2, M2, B2 = (mbs.GetSensorStoredData(s) for s in sens)

    def chord(A, M, Bn):
        c = Bn[:, 1:3] - A[:, 1:3]
        th = np.unwrap(np.arctan2(c[:, 1], c[:, 0]))
        c /= np.linalg.norm(c, axis=1)[:, None]
        rel = M[:, 1:3] - A[:, 1:3]
        return th, c[:, 0] * rel[:, 1] - c[:, 1] * rel[:, 0]
    th1, mid1 = chord(A1, M1, B1)
    th2, mid2 = chord(A2, M2, B2)
    return dict(t=A1[:, 0], th1=th1, th2=th2, tipx=B2[:, 1], tipy=B2[:, 2], mid1=mid1,
                mid2=mid2, wall=t2 - t0, cpu=c2 - c0, step_wall=t2 - t1, step_cpu=c2 - c1,
                steps=steps, elements=elements, newton_rtol=rtol,
                coordinates=len(mbs.systemData.GetODE2Coordinates()),
                drift=float(np.abs(B1[:, 1:3] - A2[:, 1:3]).max()))


# -- comparing -------------------------------------------------------------------------------
def differences(a: dict, b: dict) -> dict:
    """The largest differences of ``b``'s histories from ``a``'s on ``a``'s times (linear
    interpolation; the same grid when the steps are equal): angles (rad), tip (m), midpoint
    deflections (m and relative to ``a``'s peak)."""
    import numpy as np

    t = a["t"]
    out = {}
    for k in KEYS[1:]:
        d = float(np.abs(a[k] - np.interp(t, b["t"], b[k])).max())
        out[k] = d
        if k.startswith("mid"):
            out[k + "_rel"] = d / float(np.abs(a[k]).max())
    out["tip"] = float(np.hypot(a["tipx"] - np.interp(t, b["t"], b["tipx"]),
                                a["tipy"] - np.interp(t, b["t"], b["tipy"])).max())
    return out


def summary(run: dict) -> dict:
    """``run`` without its histories, with its answers' sizes."""
    import numpy as np

    out = {k: v for k, v in run.items() if k not in KEYS}
    for k in ("mid1", "mid2"):
        out[k + "_peak"] = float(np.abs(run[k]).max())
    for k in KEYS[1:]:
        out[k + "_end"] = float(run[k][-1])
    return out


def stats(runs: list, key: str) -> dict:
    """The first of ``runs``' ``key`` and the best and median of the others (of all with one)."""
    vals = [r[key] for r in runs]
    later = vals[1:] if len(vals) > 1 else vals
    return dict(first=vals[0], best=min(later), median=statistics.median(later), all=vals)


def main() -> None:
    """Run both codes alternately and the studies, print and write the results."""
    import exudyn
    import numpy as np

    p = parser(__doc__, load=None, max_wait=None)
    p.add_argument("--dt", type=float, default=2.5e-4)
    p.add_argument("--study-dt", type=float, default=1e-3,
                   help="the step of the studies' base case (s)")
    p.add_argument("--t-end", type=float, default=1.0)
    p.add_argument("--radius", type=float, default=0.9)
    p.add_argument("--modes", type=int, default=10)
    p.add_argument("--nx", type=int, default=50)
    p.add_argument("--elements", type=int, default=8, help="ANCF cable elements a link")
    p.add_argument("--repeats", type=int, default=1, help="dolfinx_mbs runs")
    p.add_argument("--exudyn-repeats", type=int, default=5, help="Exudyn runs")
    p.add_argument("--study-t-end", type=float, default=0.3,
                   help="the end time of the studies' runs (s)")
    p.add_argument("--quick", action="store_true", help="0.2 s, one run each, no studies")
    args = p.parse_args()
    t_end = 0.2 if args.quick else args.t_end
    if args.quick:
        args.repeats = args.exudyn_repeats = 1
    dt, rad, ne = args.dt, args.radius, args.elements
    res = dict(date=utc_now(), command="python bench/exudyn_pendulum.py " + " ".join(
        sys.argv[1:]), machine=machine(), versions=versions(), git=git_rev(),
        exudyn_version=exudyn.__version__, loadavg_start=loadavg(), dt=dt, t_end=t_end, radius=rad,
        modes=args.modes, nx=args.nx, elements=ne,
        data=dict(L1=L1, L2=L2, H=H, B=B, E=E, NU=NU, RHO=RHO, G=G, EI=E * INERTIA,
                  rhoA=RHO * AREA, EA=E * AREA,
                  omega1=math.pi ** 2 / L1 ** 2 * math.sqrt(E * INERTIA / (RHO * AREA))))
    mbs_runs, exu_runs = [], []
    for k in range(max(args.repeats, args.exudyn_repeats)):
        if k < args.repeats:
            mbs_runs.append(run_mbs(dt, t_end, rad, nx=args.nx, modes=args.modes))
            log(f"dolfinx_mbs {k}: whole {mbs_runs[-1]['wall']:.2f} s, stepping "
                f"{mbs_runs[-1]['step_wall']:.2f} s ({mbs_runs[-1]['stepper']}), "
                f"load {loadavg()[0]}")
        if k < args.exudyn_repeats:
            exu_runs.append(run_exudyn(dt, t_end, rad, elements=ne))
            log(f"Exudyn {k}: whole {exu_runs[-1]['wall']:.3f} s, stepping "
                f"{exu_runs[-1]['step_wall']:.3f} s")
    a, b = mbs_runs[-1], exu_runs[-1]
    res["mbs"] = {k: stats(mbs_runs, k) for k in ("wall", "cpu", "step_wall", "step_cpu")}
    res["exudyn"] = {k: stats(exu_runs, k) for k in ("wall", "cpu", "step_wall", "step_cpu")}
    res["mbs_run"], res["exudyn_run"] = summary(a), summary(b)
    res["difference"] = differences(a, b)
    m1, m2 = RHO * AREA * L1, RHO * AREA * L2
    rig = rigid_reference(a["t"], m1 * (L1 ** 2 + H ** 2) / 12, m2 * (L2 ** 2 + H ** 2) / 12)
    res["elastic_vs_rigid"] = {k: float(np.abs(a[k] - rig[k]).max()) for k in rig}
    res["histories"] = {name: {k: [float(x) for x in r[k]] for k in KEYS}
                        for name, r in (("mbs", a), ("exudyn", b))}
    if not args.quick:
        res["studies"] = studies(args)
    res["loadavg_end"] = loadavg()
    md = markdown(res)
    print(md)
    if not args.no_write:
        append_results("exudyn_pendulum", res, md, "An elastic double pendulum: dolfinx_mbs "
                       "(reduced links, dense path) and Exudyn (ANCF cables)",
                       results=args.results_dir)
        print(f"written: {args.results_dir}/exudyn_pendulum.json, .md")


def studies(args) -> dict:
    """Each code's convergence, the rigid limit, over ``--study-t-end``: the runs' answers
    and the differences between them (see the module docstring)."""
    import numpy as np

    T, dt, rad, ne, nx, nm = (args.study_t_end, args.study_dt, args.radius, args.elements,
                              args.nx, args.modes)
    TL = args.t_end
    cases = {
        "mbs": lambda: run_mbs(dt, T, rad, nx=nx, modes=nm),
        "mbs dt/2": lambda: run_mbs(dt / 2, T, rad, nx=nx, modes=nm),
        "mbs dt/4": lambda: run_mbs(dt / 4, T, rad, nx=nx, modes=nm),
        "mbs 2x mesh": lambda: run_mbs(dt, T, rad, nx=2 * nx, ny=4, modes=nm),
        "mbs 16 modes": lambda: run_mbs(dt, T, rad, nx=nx, modes=16),
        "mbs 4 modes": lambda: run_mbs(dt, T, rad, nx=nx, modes=4),
        "mbs prestress": lambda: run_mbs(dt, T, rad, nx=nx, modes=nm, stiffening="prestress"),
        "exudyn": lambda: run_exudyn(dt, T, rad, elements=ne),
        "exudyn dt/2": lambda: run_exudyn(dt / 2, T, rad, elements=ne),
        "exudyn dt/4": lambda: run_exudyn(dt / 4, T, rad, elements=ne),
        "exudyn dt/8": lambda: run_exudyn(dt / 8, T, rad, elements=ne),
        "exudyn 2x elements": lambda: run_exudyn(dt, T, rad, elements=2 * ne),
        "exudyn 4x elements, dt/4": lambda: run_exudyn(dt / 4, T, rad, elements=4 * ne),
        # the whole run at the studies' step: how the stiffening's share grows with time
        f"mbs {TL:g} s": lambda: run_mbs(dt, TL, rad, nx=nx, modes=nm),
        f"mbs prestress {TL:g} s": lambda: run_mbs(dt, TL, rad, nx=nx, modes=nm,
                                                   stiffening="prestress"),
        f"exudyn {TL:g} s": lambda: run_exudyn(dt, TL, rad, elements=ne),
        "mbs rigid": lambda: run_mbs(dt, T, rad, nx=nx, modes=nm, e_scale=RIGID),
        "exudyn rigid": lambda: run_exudyn(dt, T, rad, elements=ne, e_scale=RIGID),
    }
    runs, out = {}, dict(t_end=T, cases={}, differences={}, rigid={}, failed={})
    for name, fn in cases.items():
        try:
            runs[name] = fn()
        except Exception as exc:   # recorded, the others still run
            out["failed"][name] = f"{type(exc).__name__}: {exc}"
            log(f"{name}: failed ({out['failed'][name]})")
            continue
        out["cases"][name] = summary(runs[name])
        log(f"{name}: whole {runs[name]['wall']:.2f} s, mid1 peak "
            f"{out['cases'][name]['mid1_peak'] * 1e3:.5f} mm, load {loadavg()[0]}")
    pairs = [("mbs", "exudyn"), ("mbs", "mbs dt/2"), ("mbs dt/2", "mbs dt/4"),
             ("mbs", "mbs 2x mesh"), ("mbs", "mbs 16 modes"), ("mbs", "mbs 4 modes"),
             ("mbs", "mbs prestress"), ("mbs prestress", "exudyn"),
             ("exudyn", "exudyn dt/2"), ("exudyn dt/2", "exudyn dt/4"),
             ("exudyn dt/4", "exudyn dt/8"), ("exudyn", "exudyn 2x elements"),
             ("exudyn dt/4", "exudyn 4x elements, dt/4"), ("mbs dt/2", "exudyn dt/2"),
             ("mbs dt/4", "exudyn dt/4"), ("mbs dt/4", "exudyn dt/8"),
             (f"mbs {TL:g} s", f"exudyn {TL:g} s"), (f"mbs prestress {TL:g} s", f"exudyn {TL:g} s")]
    for x, y in pairs:
        if x in runs and y in runs:
            out["differences"][f"{x} vs {y}"] = differences(runs[x], runs[y])
    m1, m2 = RHO * AREA * L1, RHO * AREA * L2
    for name, h2 in (("mbs rigid", H ** 2), ("exudyn rigid", 0.0)):
        if name not in runs:
            continue
        r = runs[name]
        ref = rigid_reference(r["t"], m1 * (L1 ** 2 + h2) / 12, m2 * (L2 ** 2 + h2) / 12)
        out["rigid"][name] = {k: float(np.abs(r[k] - ref[k]).max()) for k in ref}
        out["rigid"][name]["mid_peak"] = float(max(np.abs(r["mid1"]).max(),
                                                   np.abs(r["mid2"]).max()))
    # the rigid inertias' difference alone (the strip's h^2 term), in the reference
    t = runs["mbs"]["t"]
    ra = rigid_reference(t, m1 * (L1 ** 2 + H ** 2) / 12, m2 * (L2 ** 2 + H ** 2) / 12)
    rb = rigid_reference(t, m1 * L1 ** 2 / 12, m2 * L2 ** 2 / 12)
    out["rigid"]["rotary inertia h^2/12"] = {k: float(np.abs(ra[k] - rb[k]).max()) for k in ra}
    return out


def _answers_row(name: str, r: dict) -> list:
    return [name, f"{r['th1_end']:.6f}", f"{r['th2_end']:.6f}",
            f"({r['tipx_end']:.6f}, {r['tipy_end']:.6f})", f"{r['mid1_peak'] * 1e3:.5f}",
            f"{r['mid2_peak'] * 1e3:.5f}", f"{r['mid1_end'] * 1e3:.5f}",
            f"{r['mid2_end'] * 1e3:.5f}"]


def _diff_row(a: str, b: str, d: dict) -> list:
    return [a, b, f"{max(d['th1'], d['th2']):.2e}", f"{d['tip'] * 1e3:.4f}",
            f"{d['mid1'] * 1e6:.3f} ({d['mid1_rel']:.2%})",
            f"{d['mid2'] * 1e6:.3f} ({d['mid2_rel']:.2%})"]


def markdown(res: dict) -> str:
    """The results of a run as markdown."""
    m, e = res["mbs"], res["exudyn"]
    a, b = res["mbs_run"], res["exudyn_run"]
    d = res["data"]
    steps = a["steps"]
    trow = []
    for name, x, r, model, timed in (
            ("dolfinx_mbs", m, a, f"2 strips of {res['nx']} x 2 P2 ({a['dofs']} dofs), "
             f"{res['modes']} CB modes each + 2 frames (dense path, Maggi)",
             "build + reduce + integrate / march"),
            ("Exudyn", e, b, f"2 x {res['elements']} ANCF cables ({b['coordinates']} "
             "coordinates)", "items + Assemble + SolveDynamic / SolveDynamic")):
        trow.append([name, model, timed, f"{x['wall']['first']:.3f}", f"{x['wall']['best']:.3f}",
                     f"{x['wall']['median']:.3f}", f"{x['step_wall']['best']:.3f}",
                     f"{x['cpu']['best']:.3f}", f"{x['step_cpu']['best']:.3f}",
                     f"{x['step_cpu']['best'] / steps * 1e3:.3f}"])
    thdr = ["code", "model", "timed (whole / stepping)", "whole, first (s)", "whole, best (s)",
            "whole, median (s)", "stepping, best (s)", "whole CPU, best (s)",
            "stepping CPU, best (s)", "stepping CPU ms/step"]
    ahdr = ["", "angle 1 at end (rad)", "angle 2 at end (rad)", "tip at end (m)",
            "mid 1 peak (mm)", "mid 2 peak (mm)", "mid 1 at end (mm)", "mid 2 at end (mm)"]
    dd = res["difference"]
    arow = [_answers_row("dolfinx_mbs", a), _answers_row("Exudyn", b),
            ["largest difference over the run", f"{dd['th1']:.2e}", f"{dd['th2']:.2e}",
             f"{dd['tip'] * 1e3:.4f} mm",
             f"{dd['mid1'] * 1e6:.3f} µm ({dd['mid1_rel']:.2%} of the peak)",
             f"{dd['mid2'] * 1e6:.3f} µm ({dd['mid2_rel']:.2%})", "", ""]]
    er = res["elastic_vs_rigid"]
    out = [f"## {res['date']}: the elastic double pendulum, dolfinx_mbs and Exudyn", "",
           *context_lines(res),
           f"- Exudyn {res['exudyn_version']}; load average at start "
           f"{' '.join(res['loadavg_start'])}, "
           f"at end {' '.join(res['loadavg_end'])}",
           f"- two steel strips {d['L1']} m x {d['H'] * 1e3:g} mm (in the plane) x "
           f"{d['B'] * 1e3:g} mm: EI {d['EI']:.4g} N m², EA {d['EA']:.4g} N, rho A "
           f"{d['rhoA']:.4g} kg/m, first pinned-pinned bending mode {d['omega1']:.0f} rad/s; "
           f"released horizontal at rest, g = {d['G']} m/s²; {steps} steps of {res['dt']:g} s "
           f"({res['t_end']:g} s), generalized-alpha (radius {res['radius']}) in both; one "
           "process, one thread, the codes alternately", "",
           md_table(thdr, trow), "",
           f"- dolfinx_mbs / Exudyn, best wall: whole run "
           f"{m['wall']['best'] / e['wall']['best']:.1f}x, stepping "
           f"{m['step_wall']['best'] / e['step_wall']['best']:.1f}x; CPU: whole "
           f"{m['cpu']['best'] / e['cpu']['best']:.1f}x, stepping "
           f"{m['step_cpu']['best'] / e['step_cpu']['best']:.1f}x", "",
           md_table(ahdr, arow), "",
           f"- the elbow closed to {a['drift']:.1e} m (dolfinx_mbs, generalized-alpha solves it "
           f"inside the step), {b['drift']:.1e} m (Exudyn); the links' largest rotation in "
           f"their frames {a['rotation']:.1e} rad (dolfinx_mbs)",
           f"- elastic against rigid (dolfinx_mbs against the Lagrange equations of the rigid "
           f"pendulum): angles {max(er['th1'], er['th2']):.2e} rad, tip "
           f"{max(er['tipx'], er['tipy']) * 1e3:.3f} mm: the links' elasticity moves the "
           "pendulum by this much, the two codes agree to the difference above"]
    if "studies" in res:
        out += ["", *study_lines(res["studies"])]
    return "\n".join(out) + "\n"


def study_lines(s: dict) -> list:
    """Markdown of the studies."""
    rows = [[name, f"{c.get('wall', 0):.2f}", f"{c['th1_end']:.7f}", f"{c['th2_end']:.7f}",
             f"{c['mid1_peak'] * 1e3:.5f}", f"{c['mid2_peak'] * 1e3:.5f}"]
            for name, c in s["cases"].items()]
    hdr = ["case", "whole (s)", "angle 1 at end", "angle 2 at end", "mid 1 peak (mm)",
           "mid 2 peak (mm)"]
    drows = [_diff_row(*k.split(" vs "), d) for k, d in s["differences"].items()]
    dhdr = ["a", "b", "angles (rad)", "tip (mm)", "mid 1 (µm, of a's peak)",
            "mid 2 (µm, of a's peak)"]
    rrows = [[name, f"{max(x['th1'], x['th2']):.2e}", f"{max(x['tipx'], x['tipy']) * 1e3:.2e}",
              f"{x['mid_peak'] * 1e3:.2e}" if "mid_peak" in x else ""]
             for name, x in s["rigid"].items()]
    rhdr = ["case", "angles against the rigid reference (rad)", "tip (mm)",
            "largest mid deflection (mm)"]
    failed = [f"- failed: {k}: {v}" for k, v in s.get("failed", {}).items()]
    return [f"### The studies ({s['t_end']:g} s; the cases named by their end time over the whole "
            "run)", "", md_table(hdr, rows), "", *failed,
            "Largest differences over the run:", "", md_table(dhdr, drows), "",
            f"The rigid limit (E x {RIGID:g} in both; each against the Lagrange equations with "
            "its own rigid inertia; the last row: the strip's and the cable's rigid inertias "
            "against each other in the reference):", "", md_table(rhdr, rrows)]


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    main()
