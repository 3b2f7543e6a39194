"""Benchmark: the elastic slider-crank in dolfinx_mbs and in Exudyn, side by side.

The mechanism of demos/elastic_slider_crank.py, in dolfinx_mbs and in Exudyn (ANCF cable
elements): the rod's midpoint deflection from the chord and the slider's position over one
crank turn, their largest differences, and both wall times.

    python bench/exudyn_compare.py                 # both models, the refinements, written
    python bench/exudyn_compare.py --quick --no-write
    python bench/exudyn_compare.py --shear          # also the gap against the shear compliance

Exudyn (``pip install exudyn``; 1.13 here) runs in the same process after dolfinx_mbs, one
thread each. The data are the demo's (read from its source: crank 0.152 m at 150 rad/s from
angle 0, rod 0.304 m of aluminium with a 10 mm round bar's A and I, slider of half the rod's
mass, no gravity), one turn, dt = 1e-4 s. The two models:

* dolfinx_mbs: the demo's coupled model, built here the same way (a rigid crank on a Hinge
  driven by an angle motor, the rod a plane-stress strip of the bar's EA and EI, 24 x 2 P2
  quadrilaterals, on a computed planar frame with the chord as reference, revolute joints at
  the pins, the slider a rigid body on a prismatic guide); consistent initial speeds (the
  rigid mechanism's); ``model.integrate`` with its default for joints (BDF2, the joints' rows
  at the step's end). The deflection is the midpoint probe's displacement across the chord.
* Exudyn: the crank an ObjectRigidBody2D on a revolute joint to ground, its angle rate held
  at the crank speed by a velocity-level coordinate constraint (so the angle is exactly
  omega t); the rod ``--elements`` ObjectANCFCable2D elements (Euler-Bernoulli, geometrically
  nonlinear; mass per length rho A, EI, EA) joined to the crank pin and to the slider (a
  MassPoint2D whose y is held at 0) by revolute joints; initial velocities those of the rigid
  mechanism at angle 0 (the rod turning at -r omega / l about the crank pin); implicit
  generalized-alpha (spectral radius ``--radius``, index-3 constraints). The deflection is the
  midpoint node's distance from the chord through the end nodes.

What differs by construction: the beam theory (the strip is a 2D continuum: shear deformation
and the Poisson effect, which the cable has not; the cable's axial and bending strains are
nonlinear, the strip's are linear in a frame that follows the chord), the time integrator
(BDF2 against generalized-alpha: different numerical damping of the rod's vibration), and the
slider's and crank's inertia about their own axes (immaterial: the slider cannot turn, the
crank's angle is prescribed). Exudyn is also run at twice the elements and at half the step,
and dolfinx_mbs with generalized-alpha, so that each of these parts of the difference is
measured. Results: bench/results/exudyn_compare.json and .md.
"""

from __future__ import annotations

import ast
import math
import os
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

DEMO = ROOT / "demos" / "elastic_slider_crank.py"
VERBOSE = 0
NAMES = ("R", "L", "OMEGA", "E", "NU", "RHO", "AREA", "INERTIA", "H", "THICK", "M_ROD",
         "M_SLIDER", "M_CRANK", "NX")


def demo_data(quick: bool = False) -> dict:
    """The demo's data, read from its source.

    Its module-level assignments of :data:`NAMES` are evaluated in order, so that a change of
    the demo's data changes this comparison too.

    Args:
        quick: the value of the demo's ``quick`` flag.

    Returns:
        The names and their values.

    Raises:
        RuntimeError: the demo no longer assigns one of the names.
    """
    tree = ast.parse(DEMO.read_text())
    ns: dict = {"math": math, "quick": quick}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets
                       if isinstance(t, ast.Tuple) or isinstance(t, ast.Name)]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if names and names <= set(NAMES):
                exec(compile(ast.Module([node], []), str(DEMO), "exec"), ns)
    missing = [n for n in NAMES if n not in ns]
    if missing:
        raise RuntimeError(f"{DEMO} no longer assigns {missing}")
    return {n: ns[n] for n in NAMES}


def run_mbs(d: dict, dt: float, t_end: float, formulation: str | None = None,
            stiffening: str | None = None, refine: int = 1, modes: int = 0,
            derivatives: int = 0, again: int = 0, **options) -> dict:
    """The demo's coupled model in dolfinx_mbs, integrated.

    Args:
        d: the demo's data (:func:`demo_data`).
        dt: the time step (s).
        t_end: the end time (s).
        formulation: ``model.integrate``'s formulation (None: its default, BDF2 with joints).
        stiffening: the rod's ``Body(stiffening=...)`` (None: the demo's linear rod).
        refine: the rod's cells along and across, times this.
        modes: reduce the rod to this many Craig-Bampton modes (its pins the interface; 0:
            the full rod).
        derivatives: with ``modes``, the static modal derivatives of this many of the lowest
            modes join the basis (``Model.reduce(..., derivatives=)``).
        again: integrate the same model this many times more (a parameter study's runs: the
            model's reduction and tensors kept); ``again`` in the result is the least wall
            time of those, ``same`` whether their midpoint histories equal the first's.
        **options: more of ``model.integrate``'s arguments (``spectral_radius``, ...).

    Returns:
        The times, crank angle, midpoint deflection and slider x (arrays), the wall times of
        building and integrating, and the run's particulars.
    """
    import numpy as np
    from dolfinx import mesh as dmesh
    from mpi4py import MPI

    import dolfinx_mbs as mbs

    comm = MPI.COMM_WORLD
    R, L, H = d["R"], d["L"], d["H"]
    t0 = time.perf_counter()

    def at(px, py=0.0):
        return lambda x: np.isclose(x[0], px, atol=1e-9) & np.isclose(x[1], py, atol=1e-9)

    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
    crank = mbs.RigidBody(mass=d["M_CRANK"], inertia=d["M_CRANK"] * R ** 2 / 12, frame=hub,
                          centre=(R / 2, 0, 0), name="crank")
    msh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                 [refine * d["NX"], 2 * refine])
    mat = mbs.materials.PlaneStress(E=d["E"], nu=d["NU"], density=d["RHO"],
                                    thickness=d["THICK"])
    rod = mbs.Body(msh, mat, mbs.frames.Free(position=(R, 0, 0), name="rod_frame", dim=2),
                   degree=2, name="rod", stiffening=stiffening)
    sl = mbs.RigidBody(mass=d["M_SLIDER"], inertia=1e-6, centre=(0, 0, 0), name="slider",
                       frame=mbs.frames.Free(position=(R + L, 0, 0), name="slider_frame",
                                             dim=2))
    model = mbs.Model([crank, rod, sl])
    model.clamp(rod, where=at(0.0), name="chord A")
    model.clamp(rod, where=at(L), components=[1], name="chord B")
    model.revolute(crank, rod, point=(R, 0.0), name="A")
    model.revolute(rod, sl, point=(R + L, 0.0), name="B")
    model.prismatic(None, sl, point=(R + L, 0.0), axis=(1.0, 0.0), name="guide")
    omega = d["OMEGA"]
    model.motor(hub, angle=lambda t: omega * t, name="drive")
    if modes:
        model.reduce(rod, modes=modes, method="craig-bampton", derivatives=derivatives)
    t1, c1 = time.perf_counter(), time.process_time()
    r = model.integrate(t_end=t_end, dt=dt, probes=[(rod, (L / 2, 0.0))], progress=False,
                        formulation=formulation, **options)
    t2, c2 = time.perf_counter(), time.process_time()
    walls, same = [], True
    for _ in range(again):
        ta = time.perf_counter()
        ra = model.integrate(t_end=t_end, dt=dt, probes=[(rod, (L / 2, 0.0))], progress=False,
                             formulation=formulation, **options)
        walls.append(time.perf_counter() - ta)
        same = same and bool(np.array_equal(ra.probes[:, 0, 1], r.probes[:, 0, 1]))
    return dict(t=np.asarray(r.times), theta=np.asarray(r.frames["hub"].angle),
                again=min(walls) if walls else math.nan, same=same,
                mid=np.asarray(r.probes[:, 0, 1]),
                slider=np.asarray(r.frames["slider_frame"].r_O[:, 0]),
                build=t1 - t0, integrate=t2 - t1, cpu=c2 - c1, steps=int(r.steps),
                ts_type=r.ts_type, stepper=r.stepper,
                formulation=r.formulation, dofs=int(rod.V.dofmap.index_map.size_global
                                                    * rod.V.dofmap.index_map_bs))


def run_exudyn(d: dict, dt: float, t_end: float, elements: int, radius: float) -> dict:
    """The same mechanism in Exudyn, integrated.

    Args:
        d: the demo's data (:func:`demo_data`).
        dt: the time step (s).
        t_end: the end time (s).
        elements: the number of ANCF cable elements (even: the midpoint a node).
        radius: generalized-alpha's spectral radius.

    Returns:
        The same record as :func:`run_mbs`.

    Raises:
        ValueError: ``elements`` is odd.
    """
    import exudyn as exu
    import numpy as np
    from exudyn.itemInterface import (
        MarkerBodyPosition,
        MarkerNodeCoordinate,
        MarkerNodePosition,
        MassPoint2D,
        NodePoint2D,
        NodePoint2DSlope1,
        NodePointGround,
        NodeRigidBody2D,
        ObjectANCFCable2D,
        ObjectConnectorCoordinate,
        ObjectGround,
        ObjectJointRevolute2D,
        ObjectRigidBody2D,
        SensorNode,
    )

    if elements % 2:
        raise ValueError(f"elements must be even (the midpoint a node), got {elements}")
    R, L, w = d["R"], d["L"], d["OMEGA"]
    t0 = time.perf_counter()
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround(referencePosition=[0, 0, 0]))
    n_gnd = mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 0]))
    m_gnd_c = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n_gnd, coordinate=0))
    m_gnd_o = mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0, 0, 0]))
    # the crank: centre of mass at the ground pin (its inertia is immaterial: angle driven)
    n_crank = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[0, 0, 0],
                                          initialVelocities=[0, 0, w]))
    crank = mbs.AddObject(ObjectRigidBody2D(mass=d["M_CRANK"],
                                            inertia=d["M_CRANK"] * R ** 2 / 3,
                                            nodeNumber=n_crank))
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        m_gnd_o, mbs.AddMarker(MarkerBodyPosition(bodyNumber=crank, localPosition=[0, 0, 0]))]))
    mbs.AddObject(ObjectConnectorCoordinate(
        markerNumbers=[m_gnd_c, mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n_crank,
                                                                   coordinate=2))],
        offset=w, velocityLevel=True))
    # the rod: the rigid mechanism's velocities at angle 0 (turning at -R w / L about A)
    rate = -R * w / L
    nodes = []
    for k in range(elements + 1):
        s = L * k / elements
        nodes.append(mbs.AddNode(NodePoint2DSlope1(
            referenceCoordinates=[R + s, 0, 1, 0],
            initialVelocities=[0, R * w + rate * s, 0, rate])))
    for k in range(elements):
        mbs.AddObject(ObjectANCFCable2D(
            massPerLength=d["RHO"] * d["AREA"],
            bendingStiffness=d["E"] * d["INERTIA"],
            axialStiffness=d["E"] * d["AREA"], length=L / elements,
            nodeNumbers=[nodes[k], nodes[k + 1]]))
    m_pin = mbs.AddMarker(MarkerBodyPosition(bodyNumber=crank, localPosition=[R, 0, 0]))
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        m_pin, mbs.AddMarker(MarkerNodePosition(nodeNumber=nodes[0]))]))
    # the slider: a mass point at B held on the x axis
    n_sl = mbs.AddNode(NodePoint2D(referenceCoordinates=[R + L, 0]))
    mbs.AddObject(MassPoint2D(mass=d["M_SLIDER"], nodeNumber=n_sl))
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerNodePosition(nodeNumber=nodes[-1])),
        mbs.AddMarker(MarkerNodePosition(nodeNumber=n_sl))]))
    mbs.AddObject(ObjectConnectorCoordinate(markerNumbers=[
        m_gnd_c, mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n_sl, coordinate=1))]))
    pos = exu.OutputVariableType.Position
    sens = [mbs.AddSensor(SensorNode(nodeNumber=n, outputVariableType=pos, storeInternal=True))
            for n in (nodes[0], nodes[elements // 2], nodes[-1], n_sl)]
    sens.append(mbs.AddSensor(SensorNode(nodeNumber=n_crank, storeInternal=True,
                                         outputVariableType=exu.OutputVariableType.Rotation)))
    mbs.Assemble()
    steps = int(round(t_end / dt))
    ss = exu.SimulationSettings()
    ss.timeIntegration.numberOfSteps = steps
    ss.timeIntegration.endTime = steps * dt
    ss.timeIntegration.generalizedAlpha.spectralRadius = radius
    # fixed steps, as dolfinx_mbs takes them (Exudyn would otherwise shrink a step whose
    # Newton iteration stalls at round-off); Newton to Exudyn's default tolerances
    ss.timeIntegration.adaptiveStep = False
    ss.timeIntegration.verboseMode = VERBOSE
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = dt
    ss.show.computationTime = False
    ss.show.statistics = False
    t1, c1 = time.perf_counter(), time.process_time()
    mbs.SolveDynamic(ss, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    t2, c2 = time.perf_counter(), time.process_time()
    A, M, B, S, rot = (mbs.GetSensorStoredData(s) for s in sens)
    chord = B[:, 1:3] - A[:, 1:3]
    chord /= np.linalg.norm(chord, axis=1)[:, None]
    rel = M[:, 1:3] - A[:, 1:3]
    mid = chord[:, 0] * rel[:, 1] - chord[:, 1] * rel[:, 0]     # across the chord
    return dict(t=A[:, 0], theta=rot[:, -1], mid=mid, slider=S[:, 1], build=t1 - t0,
                integrate=t2 - t1, cpu=c2 - c1, steps=steps, elements=elements, radius=radius,
                coordinates=len(mbs.systemData.GetODE2Coordinates()))


def on_grid(run: dict, t):
    """``run``'s histories at the times ``t``.

    Linear interpolation; the same grid when the steps are equal.
    """
    import numpy as np

    return {k: np.interp(t, run["t"], run[k]) for k in ("theta", "mid", "slider")}


def differences(a: dict, b: dict, d: dict) -> dict:
    """The largest differences of ``b``'s histories from ``a``'s, on ``a``'s times.

    midpoint deflection relative to ``a``'s peak, slider position absolute, relative to the
    stroke and to ``a``'s largest departure from the rigid mechanism's closed form.
    """
    import numpy as np

    t = a["t"]
    bg = on_grid(b, t)
    th = a["theta"]
    rigid = d["R"] * np.cos(th) + np.sqrt(d["L"] ** 2 - (d["R"] * np.sin(th)) ** 2)
    peak = float(np.abs(a["mid"]).max())
    ds = float(np.abs(a["slider"] - bg["slider"]).max())
    return dict(mid=float(np.abs(a["mid"] - bg["mid"]).max()) / peak,
                mid_abs=float(np.abs(a["mid"] - bg["mid"]).max()),
                peak_a=peak, peak_b=float(np.abs(bg["mid"]).max()),
                slider_abs=ds, slider_stroke=ds / (2 * d["R"]),
                slider_elastic=ds / float(np.abs(a["slider"] - rigid).max()),
                elastic_a=float(np.abs(a["slider"] - rigid).max()),
                elastic_b=float(np.abs(bg["slider"] - rigid).max()),
                theta=float(np.abs(th - bg["theta"]).max()))


def extrapolated(coarse: dict, fine: dict) -> dict:
    """Richardson's extrapolation of two runs of a second-order integrator at steps h and h/2:
    fine + (fine - coarse) / 3, on ``fine``'s times (the crank angle and slider alike)."""
    c = on_grid(coarse, fine["t"])
    return dict(t=fine["t"], **{k: fine[k] + (fine[k] - c[k]) / 3.0
                                for k in ("theta", "mid", "slider")})


def summary(run: dict) -> dict:
    """``run`` without its histories."""
    return {k: v for k, v in run.items() if k not in ("t", "theta", "mid", "slider")}


def markdown(res: dict) -> str:
    """The results of a run as markdown."""
    cases = res["cases"]
    rows = []
    for name, c in cases.items():
        rows.append([name, c["code"], c["discretization"], c["integrator"],
                     f"{c['build']:.2f}", f"{c['integrate']:.2f}", f"{c['cpu']:.2f}",
                     f"{c['cpu'] / c['steps'] * 1e3:.2f}",
                     f"{c['peak'] * 1e3:.4f}", f"{c['elastic_slider'] * 1e6:.2f}"])
    hdr = ["case", "code", "discretization", "integrator", "build (s)", "integrate (s)",
           "integrate, CPU (s)", "CPU ms/step", "midpoint peak (mm)", "slider off rigid, max (µm)"]
    drows = []
    for key, x in res["differences"].items():
        a, b = key.split(" vs ")
        drows.append([a, b, f"{x['mid']:.2e}", f"{x['mid_abs'] * 1e6:.3f}",
                      f"{x['slider_abs'] * 1e6:.3f}", f"{x['slider_stroke']:.1e}",
                      f"{x['slider_elastic']:.2e}"])
    dhdr = ["a", "b", "midpoint: max diff / a's peak", "midpoint: max diff (µm)",
            "slider: max diff (µm)", "slider diff / stroke", "slider diff / a's departure "
            "from the rigid mechanism"]
    out = [f"## {res['date']}: the elastic slider-crank, dolfinx_mbs and Exudyn", "",
           *context_lines(res),
           f"- Exudyn {res['exudyn']}; load average at start {' '.join(res['loadavg_start'])}, "
           f"at end {' '.join(res['loadavg_end'])}",
           f"- data of `demos/elastic_slider_crank.py`: crank {res['data']['R']} m at "
           f"{res['data']['OMEGA']} rad/s, rod {res['data']['L']} m, EA "
           f"{res['data']['E'] * res['data']['AREA']:.4g} N, EI "
           f"{res['data']['E'] * res['data']['INERTIA']:.4g} N m², rho A "
           f"{res['data']['RHO'] * res['data']['AREA']:.4g} kg/m, slider "
           f"{res['data']['M_SLIDER']:.4g} kg, no gravity; t_end {res['t_end']:.5f} s "
           f"(one turn), dt {res['dt']:g} s; one process, one thread", "",
           md_table(hdr, rows), "", md_table(dhdr, drows), "",
           "- wall times: build = the model and its forms (dolfinx_mbs: mesh, bodies, joints; "
           "Exudyn: items and Assemble), integrate = `model.integrate` / `SolveDynamic` (wall "
           "time; and this process's CPU time, which the machine's load does not inflate as "
           "much); the midpoint deflection is measured across the chord through the pins in "
           "both.", ""]
    out += notes(res)
    return "\n".join(out) + "\n"


#: the shear study's Poisson's ratios and mesh refinements
SHEAR_CASES = tuple((nu, refine) for refine in (1, 2) for nu in (0.3, 0.0, -0.5))


def shear_compliance(nu: float) -> float:
    """E / (kappa G) of a rectangular section: Cowper's kappa = 10 (1 + nu) / (12 + 11 nu),
    G = E / 2 (1 + nu) (Timoshenko's beam: the shear's share of the deflection and of the
    frequencies scales with it)."""
    return (12.0 + 11.0 * nu) / 5.0


def shear_study(d: dict, dt: float, t_end: float, elements: int, radius: float) -> dict:
    """The two codes' converged gap against the strip's shear compliance: the rod reduced
    (10 Craig-Bampton modes, the derivatives of the lowest 3) and stiffened, at each of
    :data:`SHEAR_CASES` (Poisson's ratio, mesh refinement), generalized-alpha of ``radius``
    at dt/4 and dt/8 extrapolated, against Exudyn's cable at dt/4 and dt/8 extrapolated.
    The plane-stress strip's EA, EI and rho A do not depend on Poisson's ratio, its shear
    modulus does; the cable has no shear deformation. Returns each case's peak and history
    differences and their least-squares lines in E / (kappa G) at each mesh."""
    import numpy as np

    ex = extrapolated(*(run_exudyn(d, dt / k, t_end, elements, radius) for k in (4, 8)))
    peak = float(np.abs(ex["mid"]).max())
    cases = []
    for nu, refine in SHEAR_CASES:
        dn = d | dict(NU=nu)
        mb = extrapolated(*(run_mbs(dn, dt / k, t_end, stiffening="nonlinear", modes=10,
                                    derivatives=3, refine=refine, formulation="second-order",
                                    spectral_radius=radius) for k in (4, 8)))
        diff = on_grid(mb, ex["t"])["mid"] - ex["mid"]
        cases.append(dict(nu=nu, refine=refine, compliance=shear_compliance(nu),
                          peak=float(np.abs(mb["mid"]).max()),
                          peak_rel=float(np.abs(mb["mid"]).max()) / peak - 1.0,
                          history=float(np.abs(diff).max()) / peak))
        log(f"shear study: nu {nu:+.1f}, mesh x{refine}: peak {cases[-1]['peak_rel']:+.3%}, "
            f"history {cases[-1]['history']:.3%} of Exudyn's peak")
    fits = {}
    for refine in sorted({r for _, r in SHEAR_CASES}):
        one = [c for c in cases if c["refine"] == refine]
        x = np.array([c["compliance"] for c in one])
        fits[str(refine)] = {key: [float(v) for v in np.polyfit(x, [c[key] for c in one], 1)]
                             for key in ("peak_rel", "history")}
    return dict(exudyn_peak=peak, cases=cases, fits=fits)


def notes(res: dict) -> list:
    """Markdown bullets: what the differences consist of (from this run's refinements)."""
    d, dif = res["data"], res["differences"]
    ea, ei, rho_a = d["E"] * d["AREA"], d["E"] * d["INERTIA"], d["RHO"] * d["AREA"]
    w, r, l_ = d["OMEGA"], d["R"], d["L"]
    force = d["M_SLIDER"] * r * w ** 2 * (1 + r / l_)      # the slider's peak inertia force
    euler = math.pi ** 2 * ei / l_ ** 2
    bend = math.pi ** 2 * math.sqrt(ei / (rho_a * l_ ** 4))   # pinned-pinned, first mode
    axial = math.sqrt(ea / l_ / (d["M_SLIDER"] + d["M_ROD"] / 3))
    dt = res["dt"]
    conv = []
    if "exudyn dt->0 vs mbs nonlinear dt->0" in dif:
        x = dif["exudyn dt->0 vs mbs nonlinear dt->0"]
        pk = res["extrapolated_peaks"]
        conv = [
            f"- Converged steps (`--converged`): with the rod's nonlinear strain "
            f"(`stiffening='nonlinear'`), both codes extrapolated to dt -> 0 (dolfinx_mbs from "
            f"dt/2 and dt/4, Exudyn from dt/4 and dt/8) differ by {x['mid']:.2%} of Exudyn's "
            f"peak in the whole midpoint history (peaks {pk['mbs nonlinear dt->0'] * 1e3:.4f} "
            f"and {pk['exudyn dt->0'] * 1e3:.4f} mm: "
            f"{pk['mbs nonlinear dt->0'] / pk['exudyn dt->0'] - 1:+.2%}); "
            f"at the finest steps run (dt/4 and dt/8) by "
            f"{dif['exudyn dt/8 vs mbs nonlinear dt/4']['mid']:.2%}. The linear rod at dt/4 "
            f"differs from Exudyn at dt/8 by {dif['exudyn dt/8 vs mbs dt/4']['mid']:.2%}: the "
            f"axial force's effect on bending is that difference less the one above. What "
            f"remains: the steps ({dif['mbs nonlinear dt/4 vs mbs nonlinear dt/2']['mid']:.2%} "
            f"between dt/2 and dt/4 here, "
            f"{dif['exudyn dt/8 vs exudyn dt/4']['mid']:.2%} between dt/4 and dt/8 in Exudyn; "
            f"the extrapolation removes most of it), the strip's mesh "
            f"({dif['mbs nonlinear dt/2 vs mbs nonlinear dt/2 mesh x2']['mid']:.2%} from twice "
            f"the cells each way) and the beam theories (the strip's shear deformation adds "
            f"about 9.6 (1 + nu) / 5 (h / l)^2 = "
            f"{9.6 * (1 + d['NU']) / 5 * (d['H'] / l_) ** 2:.2%} to a pinned-pinned beam's "
            f"deflection under a uniform load; the cable has none).",
            f"- The rod reduced (10 Craig-Bampton modes and the 6 static modal derivatives of "
            f"the lowest 3, 16 + interface coordinates) with nonlinear strain: "
            f"{dif['mbs nonlinear dt/4 vs mbs reduced nonlinear dt/4']['mid']:.2%} of the "
            f"unreduced rod's peak from it at dt/4; extrapolated, "
            f"{dif['exudyn dt->0 vs mbs reduced nonlinear dt->0']['mid']:.2%} of Exudyn's peak "
            f"from Exudyn (peak {pk['mbs reduced nonlinear dt->0'] * 1e3:.4f} mm)."]
    if "shear" in res:
        sh = res["shear"]
        rows = "; ".join(f"nu {c['nu']:+.1f} (E/kappa G {c['compliance']:.2f}), mesh "
                         f"x{c['refine']}: peak {c['peak_rel']:+.2%}, history {c['history']:.2%}"
                         for c in sh["cases"])
        lines = "; ".join(
            f"mesh x{r}: the peak's by {f['peak_rel'][0]:.2%} and the history's by "
            f"{f['history'][0]:.2%} a unit, to {f['peak_rel'][1]:+.2%} and "
            f"{f['history'][1]:.2%} at none" for r, f in sh["fits"].items())
        conv.append(
            f"- Shear (`--shear`): the stiffened rod reduced (10 modes, the derivatives of 3), "
            f"both codes extrapolated from dt/4 and dt/8 (generalized-alpha), against Exudyn's "
            f"peak {sh['exudyn_peak'] * 1e3:.4f} mm: {rows}. The plane-stress strip's EA, EI "
            f"and rho A do not depend on Poisson's ratio, its shear modulus does. The "
            f"differences fall with the shear compliance E / (kappa G) (least-squares lines; "
            f"none: the cable's Euler-Bernoulli beam, rotary inertia left in the strip): "
            f"{lines}.")
    if "mbs w/3 vs exudyn w/3" not in dif:
        return conv
    return conv + [
        f"- Midpoint: the two codes differ by {dif['mbs vs exudyn']['mid']:.1%} of the peak. "
        f"Of that, the integrators account for about {dif['mbs vs mbs g-alpha']['mid']:.1%} "
        f"(dolfinx_mbs with BDF2 against generalized-alpha), Exudyn's own step for "
        f"{dif['exudyn vs exudyn dt/2']['mid']:.1%} (dt halved) and its elements for "
        f"{dif['exudyn vs exudyn 2n']['mid']:.0e} (doubled). At a third of the crank speed, "
        f"the same steps, the codes differ by {dif['mbs w/3 vs exudyn w/3']['mid']:.1%} "
        f"(a ninth of the difference would be {dif['mbs vs exudyn']['mid'] / 9:.1%}): most of "
        f"it scales with the speed squared, as the rod's axial force does. The cable is "
        f"geometrically nonlinear: the axial force (the slider's inertia alone reaches "
        f"m_s r w² (1 + r/l) = {force:.0f} N, against the buckling load pi² EI / l² = "
        f"{euler:.0f} N) changes its bending stiffness; the demo's rod is linear in its "
        f"frame (no `stiffening`), so it has no such term.",
        f"- The rod's first bending mode (pinned-pinned, {bend:.0f} rad/s) has "
        f"{2 * math.pi / bend / dt:.0f} steps per period; its axial mode with the slider "
        f"(EA/l against the slider and a third of the rod, {axial:.0f} rad/s) "
        f"{2 * math.pi / axial / dt:.1f}: the step does not resolve it and each integrator "
        f"damps it in its own way. The slider's departure from the rigid mechanism's "
        f"closed form (tens of µm, the rod's shortening) is therefore the integrator's as "
        f"much as the model's: it changes by its own size with the integrator in one code "
        f"(`mbs vs mbs g-alpha`, `exudyn vs exudyn dt/2`) as between the codes. The slider "
        f"positions agree to {dif['mbs vs exudyn']['slider_stroke']:.0e} of the stroke.",
        "- Beam theories: the strip has shear deformation and rotary inertia (slenderness "
        f"l / h = {l_ / d['H']:.0f}: a fraction of a percent on the bending frequency), the "
        "cable neither.",
        "- Wall times: dolfinx_mbs assembles a 2D continuum (the forms compiled at the first "
        "run, cached after) and solves the coupled system with a bordered Newton from Python "
        "at every step; Exudyn is C++ on a few dozen coordinates. The dolfinx_mbs model is "
        "built for meshes where the Exudyn one has no counterpart (3D solids, parallel).",
    ]


def main():
    """Run both codes (and the refinements), print and write the results."""
    p = parser(__doc__, load=None, max_wait=None)
    p.add_argument("--dt", type=float, default=1e-4)
    p.add_argument("--turns", type=float, default=1.0)
    p.add_argument("--elements", type=int, default=16, help="ANCF cable elements")
    p.add_argument("--radius", type=float, default=0.8,
                   help="Exudyn's generalized-alpha spectral radius (and dolfinx_mbs' in "
                   "the generalized-alpha case)")
    p.add_argument("--quick", action="store_true", help="a quarter turn, no refinements")
    p.add_argument("--shear", action="store_true",
                   help="also the strip's shear compliance against the gap: the stiffened, "
                   "reduced rod at Poisson's ratios 0.3, 0 and -0.5 (the strip's EA, EI and "
                   "rho A do not depend on it; its shear modulus does), meshes x1 and x2, "
                   "generalized-alpha at dt/4 and dt/8 extrapolated, against Exudyn's "
                   "extrapolated from dt/4 and dt/8")
    p.add_argument("--converged", action="store_true",
                   help="also the rod with stiffening='nonlinear' at dt/2 and dt/4 (and the "
                   "mesh doubled at dt/2, the linear rod at dt/4), Exudyn at dt/4 and dt/8, "
                   "and both extrapolated to dt -> 0 (Richardson, second order)")
    args = p.parse_args()
    import exudyn
    import numpy as np

    d = demo_data()
    turns = 0.25 if args.quick else args.turns
    t_end = turns * 2 * math.pi / d["OMEGA"]
    dt = args.dt
    res = dict(date=utc_now(), command="python bench/exudyn_compare.py " + " ".join(
        sys.argv[1:]), machine=machine(), versions=versions(), git=git_rev(),
        exudyn=exudyn.__version__, loadavg_start=loadavg(), data=d, dt=dt, t_end=t_end,
        cases={}, differences={})
    runs = {}

    def record(name, run, code, disc, integ):
        runs[name] = run
        th = run["theta"]
        rigid = d["R"] * np.cos(th) + np.sqrt(d["L"] ** 2 - (d["R"] * np.sin(th)) ** 2)
        res["cases"][name] = summary(run) | dict(
            code=code, discretization=disc, integrator=integ,
            peak=float(abs(run["mid"]).max()),
            elastic_slider=float(abs(run["slider"] - rigid).max()))
        log(f"{name}: build {run['build']:.2f} s, integrate {run['integrate']:.2f} s, "
            f"peak {res['cases'][name]['peak'] * 1e3:.4f} mm")

    ne = args.elements
    log(f"dolfinx_mbs: {d['NX']} x 2 P2, dt {dt:g}, {t_end:.4f} s, load {loadavg()[0]}")
    record("mbs", run_mbs(d, dt, t_end), "dolfinx_mbs", f"{d['NX']} x 2 P2 quadrilaterals",
           "BDF2 (default with joints)")
    record("exudyn", run_exudyn(d, dt, t_end, ne, args.radius), "Exudyn",
           f"{ne} ANCF cable elements", f"generalized-alpha, radius {args.radius}")
    if not args.quick:
        record("exudyn 2n", run_exudyn(d, dt, t_end, 2 * ne, args.radius), "Exudyn",
               f"{2 * ne} ANCF cable elements", f"generalized-alpha, radius {args.radius}")
        record("exudyn dt/2", run_exudyn(d, dt / 2, t_end, ne, args.radius), "Exudyn",
               f"{ne} ANCF cable elements, dt/2", f"generalized-alpha, radius {args.radius}")
        record("mbs g-alpha", run_mbs(d, dt, t_end, "second-order"), "dolfinx_mbs",
               f"{d['NX']} x 2 P2 quadrilaterals", "generalized-alpha (default radius)")
        # a third of the crank speed (the same steps: a third of a turn): the rod's axial
        # forces, and with them the cable's geometric stiffness, fall to a ninth
        slow = d | dict(OMEGA=d["OMEGA"] / 3)
        record("mbs w/3", run_mbs(slow, dt, t_end / 3), "dolfinx_mbs",
               f"{d['NX']} x 2 P2 quadrilaterals, crank speed / 3, a third of a turn",
               "BDF2 (default with joints)")
        record("exudyn w/3", run_exudyn(slow, dt, t_end / 3, ne, args.radius), "Exudyn",
               f"{ne} ANCF cable elements, crank speed / 3, a third of a turn",
               f"generalized-alpha, radius {args.radius}")
    pairs = [("mbs", "exudyn")]
    if not args.quick:
        pairs += [("mbs g-alpha", "exudyn"), ("exudyn", "exudyn 2n"), ("exudyn", "exudyn dt/2"),
                  ("mbs", "mbs g-alpha"), ("mbs w/3", "exudyn w/3")]
    if args.converged:
        nl, ex = "mbs nonlinear", "exudyn"
        for k in (2, 4):
            record(f"{nl} dt/{k}", run_mbs(d, dt / k, t_end, stiffening="nonlinear"),
                   "dolfinx_mbs", f"{d['NX']} x 2 P2 quadrilaterals, stiffening='nonlinear', "
                   f"dt/{k}", "BDF2 (default with joints)")
        record(f"{nl} dt/2 mesh x2", run_mbs(d, dt / 2, t_end, stiffening="nonlinear",
                                              refine=2), "dolfinx_mbs",
               f"{2 * d['NX']} x 4 P2 quadrilaterals, stiffening='nonlinear', dt/2",
               "BDF2 (default with joints)")
        red = "mbs reduced nonlinear"
        for k in (2, 4):
            record(f"{red} dt/{k}", run_mbs(d, dt / k, t_end, stiffening="nonlinear",
                                            modes=10, derivatives=3), "dolfinx_mbs",
                   f"{d['NX']} x 2 P2 quadrilaterals reduced to 10 Craig-Bampton modes and the "
                   f"6 modal derivatives of the lowest 3, stiffening='nonlinear', dt/{k}",
                   "BDF2 (default with joints)")
        record("mbs dt/4", run_mbs(d, dt / 4, t_end), "dolfinx_mbs",
               f"{d['NX']} x 2 P2 quadrilaterals (linear rod), dt/4", "BDF2 (default with joints)")
        for k in (4, 8):
            record(f"{ex} dt/{k}", run_exudyn(d, dt / k, t_end, ne, args.radius), "Exudyn",
                   f"{ne} ANCF cable elements, dt/{k}", f"generalized-alpha, radius {args.radius}")
        runs[f"{nl} dt->0"] = extrapolated(runs[f"{nl} dt/2"], runs[f"{nl} dt/4"])
        runs[f"{ex} dt->0"] = extrapolated(runs[f"{ex} dt/4"], runs[f"{ex} dt/8"])
        runs[f"{red} dt->0"] = extrapolated(runs[f"{red} dt/2"], runs[f"{red} dt/4"])
        res["extrapolated_peaks"] = {k: float(abs(runs[k]["mid"]).max())
                                     for k in (f"{nl} dt->0", f"{ex} dt->0", f"{red} dt->0")}
        pairs += [(f"{ex} dt->0", f"{nl} dt->0"), (f"{ex} dt->0", f"{red} dt->0"),
                  (f"{nl} dt/4", f"{red} dt/4"), (f"{ex} dt/8", f"{nl} dt/4"),
                  (f"{ex} dt/8", "mbs dt/4"), (f"{nl} dt/4", f"{nl} dt/2"),
                  (f"{nl} dt/2", f"{nl} dt/2 mesh x2"), (f"{ex} dt/8", f"{ex} dt/4")]
    if args.shear:
        res["shear"] = shear_study(d, dt, t_end, ne, args.radius)
    for a, b in pairs:
        res["differences"][f"{a} vs {b}"] = differences(runs[a], runs[b], d)
        x = res["differences"][f"{a} vs {b}"]
        log(f"{a} vs {b}: midpoint {x['mid']:.2e} of the peak, slider {x['slider_abs']:.2e} m")
    res["loadavg_end"] = loadavg()
    res["histories"] = {k: {q: [float(v) for v in r[q]] for q in ("t", "theta", "mid",
                                                                     "slider")}
                        for k, r in runs.items() if k in ("mbs", "exudyn")}
    md = markdown(res)
    print(md)
    if not args.no_write:
        append_results("exudyn_compare", res, md, "The elastic slider-crank: dolfinx_mbs and "
                       "Exudyn", args.results_dir)
        print(f"written: {args.results_dir}/exudyn_compare.json, .md")


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    main()
