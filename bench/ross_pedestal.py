"""The rotor of bench/ross_compare.py on bearings to pedestals, in ROSS.

Each bearing ties the journal (end node) to a point mass (``BearingElement(n, n_link=...)``
and ``PointMass``), which stands on a foundation bearing to the ground; damped frequencies
and log dec over speed and the unbalance response at the disks, with the times.

    /path/to/ross-venv/bin/python bench/ross_pedestal.py --json-out ross_pedestal.json

Runs in ROSS's own environment (imports nothing of dolfinx_mbs); bench/rotors_pedestal.py
reads its JSON (``--ross``) and tabulates both. The shaft, disks and journal bearings are
bench/ross_compare.py's; the pedestals (mass and foundation coefficients) are
:data:`PEDESTAL` and :data:`FOUNDATIONS` here, which bench/rotors_pedestal.py reads as well.
"""

from __future__ import annotations

import time

import numpy as np
from ross_compare import BEARINGS, DISKS, LENGTH, RADIUS, SEATS, arguments, sweep, write

#: the pedestals: steel cubes of side ``side`` (m), their mass (kg)
PEDESTAL = dict(side=0.1, mass=7850.0 * 0.1**3)
#: the foundation bearings under the pedestals (N/m, N s/m), one per pedestal
FOUNDATIONS = (dict(kxx=1.0e8, kyy=1.5e8, cxx=1.0e3, cyy=1.5e3),
               dict(kxx=1.2e8, kyy=1.8e8, cxx=1.0e3, cyy=1.5e3))


def model(per_segment: int):
    """The rotor in ROSS with ``per_segment`` beam elements between stations.

    Its bearings are linked to two point masses (nodes after the shaft's) on foundation
    bearings.
    """
    import ross as rs

    steel = rs.Material(name="steel_bench", rho=7850.0, E=210e9, Poisson=0.3)
    z = [0.0, SEATS[0], SEATS[1], LENGTH]
    lengths = []
    for a, b in zip(z[:-1], z[1:]):
        lengths += [(b - a) / per_segment] * per_segment
    shaft = [rs.ShaftElement(L=float(le), idl=0.0, odl=2 * RADIUS, material=steel,
                             shear_effects=True, rotary_inertia=True, gyroscopic=True)
             for le in lengths]
    nodes = [per_segment, 2 * per_segment]
    disks = [rs.DiskElement(n=n, **d) for n, d in zip(nodes, DISKS)]
    last = 3 * per_segment
    pedestals = (last + 1, last + 2)
    bearings = [rs.BearingElement(n=n, n_link=p, **b)
                for n, p, b in zip((0, last), pedestals, BEARINGS)]
    bearings += [rs.BearingElement(n=p, **f) for p, f in zip(pedestals, FOUNDATIONS)]
    masses = [rs.PointMass(n=p, m=PEDESTAL["mass"]) for p in pedestals]
    return rs.Rotor(shaft, disks, bearings, point_mass_elements=masses), nodes


def major_axis(fr, ndof: int, node: int) -> np.ndarray:
    """The major semi-axis of the whirl orbit at ``node`` from ROSS's forced response."""
    x, y = fr[ndof * node + 0], fr[ndof * node + 1]
    return np.sqrt(0.5 * (np.abs(x) ** 2 + np.abs(y) ** 2) + np.abs(0.5 * (x**2 + y**2)))


def main():
    """Build, sweep and respond in ROSS, timed; print and write the JSON."""
    ap = arguments(__doc__, 10)
    ap.add_argument("--refine", type=int, default=201,
                    help="speeds of a second response between the neighbours of the largest "
                         "peak of the first (0: none)")
    args = ap.parse_args()
    rpm = 30.0 / np.pi
    rotor, nodes, out, fr = sweep(model, args)
    ndof = rotor.number_dof
    w, wr = np.asarray(out["speeds"]), np.asarray(out["response_speeds"])
    refined = {}
    if args.refine:
        # the first response's grid (200 rpm) is too coarse for a peak of log dec ~0.01:
        # the largest peak again, between its grid neighbours
        i = int(np.argmax(major_axis(fr, ndof, nodes[0])))
        wf = np.linspace(wr[max(i - 1, 0)], wr[min(i + 1, len(wr) - 1)], args.refine)
        t4 = time.perf_counter()
        ff = np.asarray(rotor.run_unbalance_response(
            node=nodes, unbalance_magnitude=[1e-4, 1e-4], unbalance_phase=[0.0, np.pi / 2],
            frequency=wf).forced_resp)
        refined["time"] = time.perf_counter() - t4
        for k, n in enumerate(nodes):
            a = major_axis(ff, ndof, n)
            refined[f"disk {k + 1}"] = (float(wf[np.argmax(a)] * rpm), float(a.max()))
        refined["step_rpm"] = float((wf[1] - wf[0]) * rpm)
        print("refined peak (rpm, major semi-axis m):", refined)
    out.update(refined_peak=refined, pedestal=PEDESTAL, foundations=list(FOUNDATIONS),
               total_dof=int(rotor.ndof))
    for j in (0, len(w) // 2, len(w) - 1):
        print(f"{w[j] * rpm:.0f} rpm: damped frequencies (Hz)",
              np.round(np.asarray(out["wd"])[j] / (2 * np.pi), 1),
              "log dec", np.round(np.asarray(out["log_dec"])[j], 4))
    write(out, args.json_out)


if __name__ == "__main__":
    main()
