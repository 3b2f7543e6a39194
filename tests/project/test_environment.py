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


@pytest.mark.serial
def test_a_script_beside_a_clone_named_like_the_package(tmp_path):
    """A clone's folder is named dolfinx_mbs: a script saved beside it (its folder first on
    sys.path) imports the installed package, not that folder as an empty namespace package
    (the Makefile's editable install is path-based, getting-started says why)."""
    (tmp_path / "dolfinx_mbs").mkdir()
    (tmp_path / "dolfinx_mbs" / "README.md").write_text("a clone's folder\n")
    script = tmp_path / "script.py"
    script.write_text("import dolfinx_mbs as mbs\nprint(mbs.__file__, mbs.Model.__name__)\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[1] == "Model" and "__init__.py" in r.stdout
