"""Kane, Ryan & Banerjee's spin-up beam as the 2D strip of demos/spin_up_beam.py: x from 0 to
10 m, y from -h/2 to h/2 with h = sqrt(12 EI/EA) = 0.0775 m (EI = 14 000 N m^2, EA = 2.8e7 N).
Quadrilaterals; physical groups: surface 1 "strip", lines 1 "root" (x = 0) and 2 "tip"
(x = 10). Units: m. The geometry is dolfinx_mbs.meshes.strip_model.

    python meshes/krb_strip.py [--size h] [--across n] [-o file.msh]
"""

import argparse
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's package

from dolfinx_mbs import meshes  # noqa: E402

LENGTH = 10.0
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--size", type=float, default=0.25, help="cell length along the strip (m)")
parser.add_argument("--across", type=int, default=1, help="cells across the strip")
parser.add_argument("-o", "--output", default=str(HERE / "krb_strip.msh"), help="the .msh file")
args = parser.parse_args()
cells = (math.ceil(LENGTH / args.size - 1e-9), args.across)
print(meshes.write("strip", args.output, length=LENGTH, height=meshes.KRB_HEIGHT, cells=cells))
