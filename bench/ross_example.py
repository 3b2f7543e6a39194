"""ROSS's own example rotor, ``ross.rotor_example()``, as ROSS ships it and with each shaft
element split in four: its damped natural frequencies and whirl directions at 0, 200 and
400 rad/s, timed, for bench/rotor_example.py.

    /path/to/ross-venv/bin/python bench/ross_example.py --json-out ross_example.json

Runs in its own environment (ROSS 2.3 on Python 3.11 with plotly < 6; not the project's
venvs): it imports nothing of dolfinx_mbs. The rotor: a steel shaft (ROSS's ``steel``:
E = 211 GPa, G = 81.2 GPa, 7810 kg/m^3) 1.5 m long, 50 mm across, as 6 Timoshenko elements
with shear, rotary inertia and gyroscopic effects; two disks from geometry (0.07 m wide,
0.28 m across, on 0.05 m bores) at 0.5 and 1.0 m; two bearings kxx = 1e6, kyy = 0.8e6 N/m,
undamped, at the ends. ROSS 2.3's elements have 6 dofs a node (axial and torsional too).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

SPEEDS = (0.0, 200.0, 400.0)


def refined(split: int):
    """rotor_example with each of its six shaft elements split into ``split`` equal ones (the
    disks and bearings at the same stations)."""
    import ross as rs

    base = rs.rotor_example()
    shaft = []
    for el in base.shaft_elements:
        for _ in range(split):
            shaft.append(rs.ShaftElement(el.L / split, el.idl, el.odl, material=el.material,
                                         shear_effects=True, rotary_inertia=True,
                                         gyroscopic=True))
    disks = [rs.DiskElement(n=d.n * split, m=d.m, Id=d.Id, Ip=d.Ip) for d in base.disk_elements]
    bearings = [rs.BearingElement(n=b.n * split, kxx=1e6, kyy=0.8e6, cxx=0)
                for b in base.bearing_elements]
    return rs.Rotor(shaft, disks, bearings)


def modal(rotor, modes: int) -> dict:
    """The frequencies (rad/s) and whirl directions at SPEEDS, and the time of the solves."""
    out = {"wd": [], "whirl": [], "seconds": 0.0}
    t0 = time.perf_counter()
    for w in SPEEDS:
        m = rotor.run_modal(speed=w, num_modes=2 * modes)
        out["wd"].append(np.asarray(m.wd[:modes]).tolist())
        out["whirl"].append([str(x) for x in m.whirl_direction()[:modes]])
    out["seconds"] = time.perf_counter() - t0
    return out


def main() -> None:
    """Both rotors' modes, printed and written to the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", type=int, default=8)
    ap.add_argument("--split", type=int, default=4)
    ap.add_argument("--json-out", default=None)
    args = ap.parse_args()
    import ross as rs

    t0 = time.perf_counter()
    example = rs.rotor_example()
    t1 = time.perf_counter()
    disk = example.disk_elements[0]
    out = {"version": rs.__version__, "speeds": list(SPEEDS), "setup": t1 - t0,
           "disk": dict(m=float(disk.m), Ip=float(disk.Ip), Id=float(disk.Id)),
           "example": modal(example, args.modes),
           "refined": modal(refined(args.split), args.modes), "split": args.split,
           "elements": len(example.shaft_elements)}
    for key in ("example", "refined"):
        print(key, np.round(np.array(out[key]["wd"]), 3).tolist(), out[key]["whirl"])
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(out, fh)


if __name__ == "__main__":
    main()
