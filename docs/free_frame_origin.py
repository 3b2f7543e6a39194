"""A Free frame's origin and the time error: the table of the user guide's mechanisms section.

    python docs/free_frame_origin.py        (serially; about a minute)

The double pendulum of ``tests/systems/test_coupled_joints.py`` (a bar on a Hinge, a bar on a planar
Free frame, a revolute joint between them, released horizontal) with the second bar's frame
origin moved along the bar's line, the bar, its mass and its inertia unchanged. Printed: the
largest error of the two absolute angles over 0.5 s against the Lagrange equations (scipy,
rtol 1e-12) for each origin and step, with the observed order, or where Newton failed.
"""

from __future__ import annotations

import math
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import dolfinx_mbs as mbs  # noqa: E402
from tests.systems import test_coupled_joints as T  # noqa: E402

T_END = 0.5
CENTRE = T.L1 + T.L2 / 2
#: (origin's x, its distance from the centre of mass described, the steps)
CASES = [(CENTRE, "at its centre of mass", (5e-3, 2.5e-3)),
         (T.L1, "at the elbow joint", (5e-3, 2.5e-3)),
         (0.0, "at the ground pin", (5e-3, 2.5e-3)),
         (-0.5, "beyond the ground pin", (2.5e-3, 1.25e-3)),
         (-2.0, "far beyond the ground pin", (5e-3, 2.5e-3))]


def pendulum(origin_x: float) -> mbs.Model:
    """The test's double pendulum with the second frame's origin at (origin_x, 0)."""
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="h1")
    l1 = mbs.RigidBody(mass=T.M1, inertia=T.J1, frame=hub, centre=(T.L1 / 2, 0, 0),
                       name="link1")
    fr2 = mbs.frames.Free(position=(origin_x, 0, 0), name="f2", dim=2)
    l2 = mbs.RigidBody(mass=T.M2, inertia=T.J2, frame=fr2, centre=(CENTRE - origin_x, 0, 0),
                       name="link2")
    model = mbs.Model([l1, l2], gravity=(0, -T.G, 0))
    model.revolute(l1, l2, point=(T.L1, 0.0), name="elbow")
    return model


def main() -> None:
    """Print the table (Markdown)."""
    ref = T._lagrange(T_END)
    print("| origin of the second bar's frame | distance from the centre (m) | dt | "
          "largest angle error (rad) |")
    print("|---|---|---|---|")
    for x, where, steps in CASES:
        errors = []
        for dt in steps:
            try:
                r = pendulum(x).integrate(t_end=T_END, dt=dt, progress=False)
            except RuntimeError as e:
                t_fail = str(e).split("at t=")[1].split(":")[0] if "at t=" in str(e) else "?"
                print(f"| {where} | {abs(CENTRE - x):.1f} | {dt:g} | Newton failed at "
                      f"t = {t_fail} |")
                continue
            yr = ref.sol(r.times)
            err = max(np.abs(r.frames["h1"].angle - yr[0]).max(),
                      np.abs(r.frames["f2"].angle - yr[1]).max())
            errors.append(err)
            print(f"| {where} | {abs(CENTRE - x):.1f} | {dt:g} | {err:.2e} |")
        if len(errors) == 2:
            print(f"| | | order | {math.log2(errors[0] / errors[1]):.2f} |")


if __name__ == "__main__":
    main()
