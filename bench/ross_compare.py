"""The rotor of bench/rotors.py in ROSS (beam elements), for a side-by-side comparison with the
3D solid model: damped frequencies and log dec over speed, and the unbalance response at the
disks, with the times.

    /path/to/ross-venv/bin/python bench/ross_compare.py --json-out ross.json

Runs in its own environment (ROSS 2.3 on Python 3.11 with plotly < 6; not the project's
venvs): it imports nothing of dolfinx_mbs. The model: the same shaft (1.2 m, 40 mm radius,
steel) as Timoshenko beam elements with shear, rotary inertia and gyroscopic effects, nodes at
the disks' seat centres (z = 0.37 and 0.83 m), the same disks and bearings (at the end nodes).
bench/rotors.py reads its JSON (``--ross``) and tabulates both.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

LENGTH, RADIUS = 1.2, 0.04
SEATS = (0.37, 0.83)
DISKS = (dict(m=20.0, Ip=0.25, Id=0.13), dict(m=30.0, Ip=0.45, Id=0.24))
BEARINGS = (dict(kxx=5e7, kyy=8e7, kxy=1e6, kyx=-1e6, cxx=2e3, cyy=3e3),
            dict(kxx=6e7, kyy=9e7, cxx=2.5e3, cyy=3.5e3))


def model(per_segment: int):
    """The rotor in ROSS with ``per_segment`` beam elements between stations."""
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
    bearings = [rs.BearingElement(n=n, **b) for n, b in zip((0, 3 * per_segment), BEARINGS)]
    return rs.Rotor(shaft, disks, bearings), nodes


def arguments(doc: str, modes: int) -> argparse.ArgumentParser:
    """The command line of a ROSS run: mesh, speeds, modes, response speeds, top speed, JSON."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--per-segment", type=int, default=10)
    ap.add_argument("--speeds", type=int, default=21)
    ap.add_argument("--modes", type=int, default=modes)
    ap.add_argument("--response-speeds", type=int, default=100)
    ap.add_argument("--top", type=float, default=20000.0, help="top speed (rpm)")
    ap.add_argument("--json-out", default=None)
    return ap


def sweep(build, args) -> tuple:
    """Build the rotor (``build(per_segment) -> (rotor, disk nodes)``), its Campbell diagram
    and its unbalance response (one unbalance on each disk), timed.

    Returns ``(rotor, nodes, out, forced)``: ``out`` the JSON's common entries (times,
    speeds, damped frequencies, log decs, the disks' responses), ``forced`` ROSS's forced
    response array."""
    rpm = 30.0 / np.pi
    t0 = time.perf_counter()
    rotor, nodes = build(args.per_segment)
    t1 = time.perf_counter()
    w = np.linspace(0.0, args.top / rpm, args.speeds)
    camp = rotor.run_campbell(w, frequencies=args.modes)
    t2 = time.perf_counter()
    wr = np.linspace(args.top / rpm / args.response_speeds, args.top / rpm,
                     args.response_speeds)
    resp = rotor.run_unbalance_response(node=nodes, unbalance_magnitude=[1e-4, 1e-4],
                                        unbalance_phase=[0.0, np.pi / 2], frequency=wr)
    t3 = time.perf_counter()
    ndof = rotor.number_dof
    fr = np.asarray(resp.forced_resp)
    probes = {}
    for k, n in enumerate(nodes):
        x, y = fr[ndof * n + 0], fr[ndof * n + 1]
        probes[f"disk {k + 1}"] = {"x_re": x.real.tolist(), "x_im": x.imag.tolist(),
                                   "y_re": y.real.tolist(), "y_im": y.imag.tolist()}
    out = dict(setup=t1 - t0, campbell=t2 - t1, response=t3 - t2, speeds=w.tolist(),
               wd=np.asarray(camp.wd).tolist(), log_dec=np.asarray(camp.log_dec).tolist(),
               response_speeds=wr.tolist(), probes=probes, dof_per_node=ndof,
               elements=3 * args.per_segment)
    print(f"ROSS: set-up {t1 - t0:.2f} s, Campbell {t2 - t1:.2f} s, response {t3 - t2:.2f} s")
    return rotor, nodes, out, fr


def write(out: dict, path: str | None) -> None:
    """The JSON, when a path is given."""
    if path:
        with open(path, "w") as fh:
            json.dump(out, fh)


def main():
    """Build, sweep and respond in ROSS, timed; print and write the JSON."""
    args = arguments(__doc__, 8).parse_args()
    _, _, out, _ = sweep(model, args)
    print("damped frequencies at the top speed (Hz):",
          np.round(np.asarray(out["wd"])[-1] / (2 * np.pi), 1))
    print("log dec there:", np.round(np.asarray(out["log_dec"])[-1], 4))
    write(out, args.json_out)


if __name__ == "__main__":
    main()
