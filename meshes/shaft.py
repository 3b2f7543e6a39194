"""The shaft of demos/cases/rotor_on_bearings.toml and demos/rotor_on_bearings.py: a steel shaft
along z (1.2 m, radius 0.04 m) cut at 0.36, 0.38, 0.82 and 0.84 m into five segments, whose
lateral surfaces are tagged apart (segment1 and segment3: the disks' seats). Tetrahedra;
physical groups: volume 1 "shaft", surfaces 1 "bearing_a" (z = 0), 2 "bearing_b" (z = 1.2) and
3 + k "segment<k>". Units: m. The geometry is dolfinx_mbs.meshes.shaft_model.

    python meshes/shaft.py [--size h] [-o file.msh]
"""

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's package

from dolfinx_mbs import meshes  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--size", type=float, default=0.03, help="characteristic length (m)")
parser.add_argument("-o", "--output", default=str(HERE / "shaft.msh"), help="the .msh file")
args = parser.parse_args()
print(meshes.write("shaft", args.output, length=1.2, radius=0.04, size=args.size,
                   cuts=(0.36, 0.38, 0.82, 0.84)))
