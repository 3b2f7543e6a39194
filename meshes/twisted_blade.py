"""A pretwisted blade: span 0.3 m along x from the root at x = 0, rectangular section with a chord
of 0.05 m (along y at the root) and 0.004 m thickness (along z at the root), turned linearly
about the x axis from 0 at the root to 30 degrees at the tip (right-handed about +x).
Hexahedra in layers along the span; physical groups: volume 1 "blade", surfaces 1 "root"
(x = 0) and 2 "tip" (x = 0.3). Units: m. The geometry is dolfinx_mbs.meshes.twisted_blade_model.

    python meshes/twisted_blade.py [--size h] [--through n] [--twist degrees] [-o file.msh]
"""

import argparse
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's package

from dolfinx_mbs import meshes  # noqa: E402

SPAN, CHORD, THICKNESS = 0.3, 0.05, 0.004
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--size", type=float, default=0.01,
                    help="cell length along the span and the chord (m)")
parser.add_argument("--through", type=int, default=1, help="cells through the thickness")
parser.add_argument("--twist", type=float, default=30.0, help="tip twist (degrees)")
parser.add_argument("-o", "--output", default=str(HERE / "twisted_blade.msh"),
                    help="the .msh file")
args = parser.parse_args()
cells = (math.ceil(SPAN / args.size - 1e-9), math.ceil(CHORD / args.size - 1e-9), args.through)
print(meshes.write("twisted_blade", args.output, span=SPAN, chord=CHORD, thickness=THICKNESS,
                   twist_degrees=args.twist, cells=cells))
