"""The dolfinx-mbs command: cases from TOML files and sweeps, through the real entry
(``dolfinx_mbs.cli.main`` and ``python -m dolfinx_mbs.cli``), against the closed forms of
docs/theory.md section 6 (seed 003's rotating rod)."""

import csv
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from mpi4py import MPI

from dolfinx_mbs import cli
from dolfinx_mbs.cli import Case
from dolfinx_mbs.cli.casefile import CaseError, key_lines, sweep_values
from dolfinx_mbs.cli.expressions import Expression, ExpressionError
from tests.models import ROOT
from tests.models.seed003c import rod_closed_forms, static_tip, tip_excitation

ROD = ROOT / "demos" / "cases" / "seed003_rod.toml"
EXCITATION = ROOT / "demos" / "cases" / "seed003_rod_excitation.toml"
comm = MPI.COMM_WORLD


def shared_dir(factory, name):
    return pathlib.Path(comm.bcast(str(factory.mktemp(name)) if comm.rank == 0 else None))


def rel(a, b):
    return abs(a / b - 1.0)


def test_help(capsys):
    """--help on the command and on every subcommand."""
    for argv in ([], ["run"], ["sweep"]):
        with pytest.raises(SystemExit) as e:
            cli.main(argv + ["--help"])
        assert e.value.code == 0
        out = capsys.readouterr().out
        assert out.startswith("usage: dolfinx-mbs")
    assert "--ranks" in out and "start:stop:count" in out


@pytest.mark.serial
def test_entry_point_and_module():
    """pyproject declares the console script; ``python -m dolfinx_mbs.cli`` answers."""
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["dolfinx-mbs"] == "dolfinx_mbs.cli:main"
    r = subprocess.run([sys.executable, "-m", "dolfinx_mbs.cli", "sweep", "--help"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0 and "usage: dolfinx-mbs sweep" in r.stdout, r.stderr


def test_run_rod_against_closed_forms(tmp_path_factory):
    """``run`` with --set: elongation and three frequencies within 0.1 % of the closed forms
    (docs/theory.md section 6)."""
    d = shared_dir(tmp_path_factory, "run")
    A, mass, spin = 4e-5, 0.5, 300.0
    code = cli.main(["run", str(ROD), "--set", f"parameters.A={A}", "--set",
                     f"parameters.mass={mass}", "--set", f"parameters.spin={spin}",
                     "--json", str(d / "rod.json"), "--quiet"])
    assert code == 0
    comm.Barrier()
    r = json.loads((d / "rod.json").read_text())
    assert r["status"] == "ok" and r["ranks"] == comm.size
    tip, w = rod_closed_forms(A, mass, spin)
    res = r["results"]
    assert rel(res["static"]["tip"]["x"], tip) < 1e-3, (res["static"], tip)
    fe = [res["frequencies"][f"w{i}"] for i in (1, 2, 3)]
    assert np.all(np.abs(np.array(fe) / w - 1) < 1e-3), (fe, w)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_sweep_grid_records_failure_and_goes_on(tmp_path_factory):
    """A 2 x 3 grid (in-process) with an impossible mass in it: the two failed cases are
    recorded with the error naming the density, the four others match the closed forms, and
    one JSON line and CSV row per case are written, and a plot."""
    d = shared_dir(tmp_path_factory, "sweep") / "out"
    code = cli.main(["sweep", str(ROD), "--set", "parameters.A=1e-5,6e-5", "--set",
                     "parameters.mass=1,-1,0.25", "--out", str(d), "--plot", "frequencies.w1"])
    assert code == 1  # some case failed
    comm.Barrier()
    rows = read_csv(d / "results.csv")
    lines = [json.loads(s) for s in (d / "results.jsonl").read_text().splitlines()]
    assert len(rows) == len(lines) == 6
    assert [int(r["case"]) for r in rows] == list(range(6))
    failed = [r for r in rows if r["status"] == "failed"]
    assert [float(r["parameters.mass"]) for r in failed] == [-1.0, -1.0]
    assert all("density must be positive" in r["error"] for r in failed)
    for r in rows:
        if r["status"] != "ok":
            continue
        tip, w = rod_closed_forms(float(r["parameters.A"]), float(r["parameters.mass"]), 15.0)
        assert rel(float(r["static.tip.x"]), tip) < 1e-3
        assert rel(float(r["frequencies.w1"]), w[0]) < 1e-3
    pytest.importorskip("matplotlib")
    assert (d / "plot.png").stat().st_size > 1000


@pytest.mark.serial
def test_sweep_as_mpi_jobs_matches_in_process(tmp_path):
    """--ranks 2: every case is ``mpiexec -n 2 python -m dolfinx_mbs.cli run ...``; its numbers
    equal the one-process run of the same case and the closed forms."""
    out = tmp_path / "mpi"
    sets = ["--set", "parameters.A=2e-5,6e-5", "--set", "parameters.spin=150"]
    assert cli.main(["sweep", str(ROD), *sets, "--ranks", "2", "--out", str(out)]) == 0
    rows = read_csv(out / "results.csv")
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    for r in rows:
        A = float(r["parameters.A"])
        one = tmp_path / f"one_{A}.json"
        assert cli.main(["run", str(ROD), "--set", f"parameters.A={A}", "--set",
                         "parameters.spin=150", "--json", str(one), "--quiet"]) == 0
        ref = json.loads(one.read_text())["results"]
        assert json.loads((out / "cases" / f"case_{int(r['case']):04d}.json").read_text())[
            "ranks"] == 2
        assert rel(float(r["static.tip.x"]), ref["static"]["tip"]["x"]) < 1e-9
        for i in (1, 2, 3):
            assert rel(float(r[f"frequencies.w{i}"]), ref["frequencies"][f"w{i}"]) < 1e-8
        tip, w = rod_closed_forms(A, 1.0, 150.0)
        assert rel(float(r["static.tip.x"]), tip) < 1e-3 and rel(float(r["frequencies.w1"]),
                                                                  w[0]) < 1e-3


def test_transient_tip_amplification(tmp_path_factory):
    """The excitation case (Hamilton form, from the steady spinning state) at w = 300 rad/s:
    the tip's largest excursion over one period of the force, divided by the static tip
    deflection under F0, against the modal closed form within 0.1 %."""
    d = shared_dir(tmp_path_factory, "excitation")
    A, mass, spin, F0, w = 2e-5, 1.0, 15.0, 1000.0, 300.0
    assert cli.main(["run", str(EXCITATION), "--set", f"parameters.w={w}", "--json",
                     str(d / "e.json"), "--quiet"]) == 0
    comm.Barrier()
    res = json.loads((d / "e.json").read_text())["results"]["transient"]
    t = np.array(res["series"]["times"])
    static = static_tip(A, mass, spin, F0)
    ref = np.max(np.abs(tip_excitation(np.linspace(0, t[-1], 20001), A, mass, spin, F0, w)[0]))
    amp = res["tip"]["x"]["excursion"] / static
    assert rel(amp, ref / static) < 1e-3, (amp, ref / static)
    assert amp > 1.0 / (1 - (w / 3219.0)**2)  # above the steady-state value: the start adds


def write(path, text):
    """Write on rank 0 once every rank is done with the file's previous text."""
    comm.Barrier()
    if comm.rank == 0:
        path.write_text(text)
    comm.Barrier()


BAD = """\
[parameters]
L = 1.0
[mesh]
type = "box"
size = ["L", 0.1, 0.1]
cells = [4, 1, 1]
[material]
law = "LinearElastic"
E = 1e9
nu = 0.3
density = 1000.0
[[clamp]]
where = "near(x, 0)"
[[clamp]]
where = "true"
component = [1, 2]
[analysis.frequencies]
n = 2
"""


def test_bad_key_names_key_file_and_line(tmp_path_factory, capsys):
    """A misspelled key: the error names the file, the line and the key (and the key meant);
    through ``run`` the exit status is 2, on every rank."""
    d = shared_dir(tmp_path_factory, "bad")
    path = d / "bad.toml"
    write(path, BAD)
    with pytest.raises(CaseError, match=r"bad.toml:16: clamp\[1\]\.component: 'component' is "
                                        r"not a known key \(did you mean 'components'\?\)"):
        Case(path)
    write(path, BAD.replace("density = 1000.0", "densty = 1000.0"))
    with pytest.raises(CaseError, match=r"bad.toml:11: .*'densty'.*LinearElastic"):
        Case(path)
    assert cli.main(["run", str(path)]) == 2
    if comm.rank == 0:
        assert "bad.toml:11" in capsys.readouterr().err
    write(path, BAD.replace("component =", "components ="))
    with pytest.raises(CaseError, match=r"--set frame\.rte: .*'rte'.*did you mean 'rate'"):
        Case(path, [("frame.rte", 3.0)])
    write(path, BAD.replace("component =", "components =").replace("near(x, 0)", "near(x, L2)"))
    with pytest.raises(CaseError, match=r"bad.toml:13: clamp\[0\]\.where: unknown name 'L2'"):
        Case(path)
    assert cli.main(["sweep", str(path), "--set", "frame.rat=1,2", "--out",
                     str(d / "never")]) == 2


def test_case_text_lines_and_values():
    """The line scanner (headers, arrays of tables, inline tables, multi-line arrays) and the
    sweep values."""
    text = 'a = 1\n[t]\nx = [1,\n  2]\ny = {p = 1, q = {r = 2}}\n[[c]]\nk = 1\n[[c]]\nk = 2\n'
    lines = key_lines(text)
    assert lines[("a",)] == 1 and lines[("t", "x")] == 3 and lines[("t", "y", "q", "r")] == 5
    assert lines[("c", 1, "k")] == 9 and lines[("c", 0)] == 6
    assert sweep_values("0:100:11") == list(np.linspace(0, 100, 11))
    assert sweep_values("1e-5, [1, 2], SpinUp, 50/pi") == [1e-5, [1, 2], "SpinUp", "50/pi"]


def test_expressions_are_arithmetic_only():
    x = np.array([0.0, 0.5, 1.0])
    assert list(Expression("near(x, 1) or x < 0.1").evaluate({"x": x})) == [True, False, True]
    assert list(Expression("0 < x <= 0.5").evaluate({"x": x})) == [False, True, False]
    assert Expression("sqrt(A) * 2 if A > 0 else 0").evaluate({"A": 4.0}) == 4.0
    for bad in ("__import__('os')", "x.real", "(lambda: 1)()", "x[0]", "'a'"):
        with pytest.raises(ExpressionError):
            Expression(bad)
    with pytest.raises(ExpressionError, match="unknown name 'B'"):
        Expression("B + 1").evaluate({"A": 1.0})
    with pytest.raises(ExpressionError, match="sqrt"):
        Expression("sqrt(A)").evaluate({"A": -1.0})  # no silent NaN


GEO = """\
SetFactory("OpenCASCADE");
Rectangle(1) = {0, 0, 0, 1, 0.1};
Transfinite Curve{1, 3} = nx + 1;
Transfinite Curve{2, 4} = 3;
Transfinite Surface{1};
Recombine Surface{1};
Physical Surface("plate", 1) = {1};
Physical Curve("root", 1) = {4};
"""

PLATE = """\
[mesh]
{mesh}
[material]
law = "PlaneStress"
E = 70e9
nu = 0.3
density = 2700.0
thickness = 0.01
[frame]
type = "ConstantSpin"
rate = 50.0
[[clamp]]
{clamp}
[analysis.frequencies]
n = 3
"""


def test_gmsh_script_with_named_facets(tmp_path_factory):
    """A .geo script meshed by gmsh (nx x 2 structured quads, nx given by the case), clamped on
    its physical group "root", gives the frequencies of the same mesh built in (clamped where
    x = 0); a group the mesh has not is named in the error."""
    pytest.importorskip("gmsh")
    d = shared_dir(tmp_path_factory, "gmsh")
    write(d / "plate.geo", GEO)
    write(d / "a.toml", PLATE.format(mesh='type = "gmsh"\nscript = "plate.geo"\n'
                                          'numbers = {nx = "2 * 5"}', clamp='facets = "root"'))
    write(d / "b.toml", PLATE.format(
        mesh='type = "rectangle"\nsize = [1, 0.1]\ncells = [10, 2]', clamp='where = "x < 1e-9"'))
    wa = Case(d / "a.toml").run(comm)["frequencies"]
    wb = Case(d / "b.toml").run(comm)["frequencies"]
    for k in wb:
        assert rel(wa[k], wb[k]) < 1e-9, (wa, wb)
    write(d / "c.toml", PLATE.format(mesh='type = "gmsh"\nscript = "plate.geo"\n'
                                          'numbers = {nx = 10}', clamp='facets = "tip"'))
    with pytest.raises(CaseError, match=r"c.toml:15: clamp\[0\]\.facets: 'tip' is not a known "
                                        r"physical group.*plate, root"):
        Case(d / "c.toml").run(comm)
