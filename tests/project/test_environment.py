"""The project's environment as a FEniCSx user meets it (issue 27, item 6).

A script of the project's venv may start with ``import dolfinx`` (as every FEniCSx script
does): with the PyPI wheel of DOLFINx, whose MPI must be loaded first, the venv's start-up
hook (``scripts/mpi_first.py``, installed by ``make``) loads it. Checked in a fresh interpreter
of the interpreter running the tests, with the script's first import ``dolfinx`` (and
``petsc4py``), then a spinning body built the usual way.
"""

import subprocess
import sys

import pytest

SCRIPT = """
import dolfinx
import dolfinx.fem.petsc
import numpy as np
from mpi4py import MPI
import dolfinx_mbs as mbs
msh = dolfinx.mesh.create_unit_square(MPI.COMM_SELF, 2, 2)
body = mbs.Body(msh, mbs.materials.PlaneStress(E=1.0, nu=0.3, density=1.0),
                mbs.frames.ConstantSpin(rate=0.1))
print("ok", dolfinx.__version__)
"""


@pytest.mark.serial
@pytest.mark.parametrize("first", ["dolfinx", "petsc4py"])
def test_dolfinx_imported_first(first):
    code = (f"import {first}\n" + SCRIPT) if first != "dolfinx" else SCRIPT
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("ok")
