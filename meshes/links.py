"""The slider-crank's links of demos/elastic_linkage.py, each a 2D strip of width 0.01 m along x
from 0 in its own frame: the crank (0.1 m) and the coupler (0.3 m), written to two files.
Quadrilaterals; physical groups: surface 1 "crank" / "coupler", lines 1 "root" (x = 0: the
crank's motor pivot, the coupler's crank pin) and 2 "tip" (x = length: the crank pin, the
coupler's slider pin). Units: m. The geometry is dolfinx_mbs.meshes.strip_model.

    python meshes/links.py [--size h] [--across n] [-o crank.msh coupler.msh]
"""

import argparse
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's package

from dolfinx_mbs import meshes  # noqa: E402

LINKS = {"crank": 0.1, "coupler": 0.3}
SIDE = 0.01
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--size", type=float, default=0.0125, help="cell length along a link (m)")
parser.add_argument("--across", type=int, default=2, help="cells across a link")
parser.add_argument("-o", "--output", nargs=2, metavar=("CRANK", "COUPLER"),
                    default=[str(HERE / f"{k}.msh") for k in LINKS], help="the two .msh files")
args = parser.parse_args()
for (name, length), out in zip(LINKS.items(), args.output):
    cells = (math.ceil(length / args.size - 1e-9), args.across)
    print(meshes.write("strip", out, length=length, height=SIDE, cells=cells, name=name))
