"""The rotor of demos/rotor_campbell.py: a steel shaft along z (0.6 m, radius 0.02 m) with a disk
(radius 0.12 m, 0.02 m thick) centred at z = 0.4 m, optionally with flat radial blades on its rim.
Tetrahedra; physical groups: volume 1 "rotor", surfaces 1 "bearing_a" (z = 0) and 2 "bearing_b"
(z = 0.6). Units: m. The geometry is dolfinx_mbs.meshes.rotor_model.

    python meshes/rotor.py [--size h] [--blades n] [-o file.msh]
"""

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's package

from dolfinx_mbs import meshes  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--size", type=float, default=0.025, help="characteristic length (m)")
parser.add_argument("--blades", type=int, default=0, help="number of blades on the disk's rim")
parser.add_argument("-o", "--output", default=str(HERE / "rotor.msh"), help="the .msh file")
args = parser.parse_args()
print(meshes.write("rotor", args.output, size=args.size, blades=args.blades))
