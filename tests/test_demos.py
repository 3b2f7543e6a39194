"""Every demo runs (serially and under mpirun) and passes its own checks against closed forms."""

import pathlib
import runpy

import pytest

DEMOS = sorted((pathlib.Path(__file__).parent.parent / "demos").glob("*.py"))


@pytest.mark.parametrize("path", DEMOS, ids=[p.stem for p in DEMOS])
def test_demo(path):
    runpy.run_path(str(path), run_name="__main__")
