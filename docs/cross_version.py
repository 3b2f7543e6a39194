"""The validation report's rod, Southwell and Kane-Ryan-Banerjee numbers at full precision, for
comparing two DOLFINx installations.

    python docs/cross_version.py run OUT.json            # under each installation
    python docs/cross_version.py compare A.json B.json   # prints a Markdown table

``run`` computes, with the same models as ``docs/validation.py``: seed 003's rod (10 P2
elements, 3D hexahedra and 2D quadrilaterals, three spins: tip elongation and the first three
axial frequencies), the Southwell sweep of the spinning cantilever with prestress (first two
flap and chord frequencies at seven speeds) and the KRB spin-up to 4 rad/s with prestress (tip
deflection history, 20 s at dt = 0.02 s). ``compare`` gives, per group, the largest relative
difference between the two files (value by value; a history relative to its peak).
"""

import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def run(path: str) -> None:
    import dolfinx
    from mpi4py import MPI

    import dolfinx_mbs  # noqa: F401  (the PyPI wheel's MPI first)
    from tests.forms import test_nonlinear as TN
    from tests.models.rodmodel import ROD, axial_rod, tip_displacement
    from tests.static import test_stiffening as TS

    comm = MPI.COMM_WORLD
    w1 = np.pi / (2 * ROD["L"]) * np.sqrt(ROD["E"] / ROD["rho"])
    res = {"dolfinx": dolfinx.__version__, "ranks": comm.size}
    rod = []
    for dim, cell in ((3, "hex"), (2, "quad")):
        for frac in (15.0 / w1, 0.5, 0.9):
            model, body = axial_rod(comm, 10, frac * w1, dim, cell, 2)
            model.solve_static()
            rod.append([tip_displacement(body), *model.natural_frequencies(n=3)])
    res["rod: tip and 3 axial frequencies (6 cases)"] = np.ravel(rod).tolist()
    bm, bframe = TS.beam(comm, "prestress")
    res["Southwell: 4 frequencies at 7 speeds"] = np.ravel(
        TS.sweep(bm, bframe, (0.0, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0))).tolist()
    _, tip = TN.fe_tip(4.0, "prestress", t_end=20.0)
    res["KRB spin-up to 4 rad/s: tip history"] = np.asarray(tip).tolist()
    if comm.rank == 0:
        pathlib.Path(path).write_text(json.dumps(res, indent=1))


def compare(a_path: str, b_path: str) -> None:
    a, b = (json.loads(pathlib.Path(p).read_text()) for p in (a_path, b_path))
    print(f"| quantity | values | DOLFINx {a['dolfinx']} vs {b['dolfinx']}: max relative "
          "difference |")
    print("|---|---:|---:|")
    for key in a:
        if key in ("dolfinx", "ranks"):
            continue
        x, y = np.asarray(a[key]), np.asarray(b[key])
        # a history starts at zero: relative to its peak; anything else value by value
        d = (np.abs(x - y).max() / np.abs(x).max() if "history" in key
             else (np.abs(x - y) / np.abs(x)).max())
        print(f"| {key} | {x.size} | {d:.1e} |")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        run(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
