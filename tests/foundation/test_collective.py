"""Errors that arise on one rank only (the user's code called with that rank's data, a file
opened by rank 0) are raised on every rank, with no hang: each case runs under mpiexec -n 2
with a time limit, and both ranks must report the same error."""

import os
import subprocess
import sys

import pytest

from dolfinx_mbs import compat
from tests.models import HERE as MODELS
from tests.models import ROOT

CASES = {
    "point-load-nan": ("ValueError", "point load of body .* at t=0.05.*not finite|finite"),
    "point-load-raises": ("ZeroDivisionError", "point load of body .* at t=0.05.*table ends"),
    "output-under-a-file": ("NotADirectoryError|FileExistsError", "output .*f/run.*exists|not a directory"),
    "where-raises-on-one-rank": ("KeyError", "clamp.*`where`.*node table"),
    "traction-where-raises-on-one-rank": ("ValueError", "add_traction.*`where`.*last rank"),
    "callback-raises-on-one-rank": ("RuntimeError", "callback at t=0.03.*last rank"),
    "hinge-callback-raises-on-one-rank": ("RuntimeError", "callback at t=0.03.*last rank"),
    "motion-raises-on-one-rank": ("RuntimeError", "frames' motion at t=0.03.*last rank"),
    "output-unwritable": ("FileNotFoundError|PermissionError|OSError", "output .*no-such-place"),
}


@pytest.mark.serial
@pytest.mark.parametrize("ranks", [1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_error_on_one_rank_is_raised_on_every_rank(case, ranks, tmp_path):
    import re

    script = MODELS / "collective_cases.py"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    cmd = compat.mpiexec_command(ranks) + [sys.executable, str(script), case, str(tmp_path)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: hung (no result from {ranks} rank(s) within 240 s)")
    files = [tmp_path / f"rank{r}.txt" for r in range(ranks)]
    assert all(f.is_file() for f in files), (out.stdout, out.stderr)
    kinds, pattern = CASES[case]
    texts = [f.read_text() for f in files]
    assert all(t == texts[0] for t in texts), texts   # the same error on every rank
    exc, msg = texts[0].split(": ", 1)
    assert re.fullmatch(kinds, exc), texts[0]
    assert re.search(pattern, msg), texts[0]
