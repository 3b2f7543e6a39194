"""The command line where a new user meets it.

Misspelt and malformed values, files it cannot write, field output of transient cases, and the
exit status of each.

Exit status: 0 done, 1 the case failed, 2 a bad command line or case file (checked before any
model is built where it can be). Numbers are checked against seed 003's closed forms
(``docs/theory.md`` section 6) and against a second path (the fields file read back).
"""

import json
import pathlib

import numpy as np
import pytest
from mpi4py import MPI

from dolfinx_mbs import cli, compat
from dolfinx_mbs.cli import Case
from dolfinx_mbs.cli.casefile import CaseError, sweep_values
from tests.models import ROOT
from tests.models.readback import read_back
from tests.models.seed003c import rod_closed_forms

ROD = str(ROOT / "demos" / "cases" / "seed003_rod.toml")
EXCITATION = str(ROOT / "demos" / "cases" / "seed003_rod_excitation.toml")
comm = MPI.COMM_WORLD


def shared_dir(factory, name):
    """A temporary folder of rank 0, on every rank."""
    return pathlib.Path(comm.bcast(str(factory.mktemp(name)) if comm.rank == 0 else None))


def status_and_error(capsys, argv):
    """The exit status of the command ``argv`` and what rank 0 wrote on stderr."""
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    return code, capsys.readouterr().err


def rel(a, b):
    """Relative difference."""
    return abs(a / b - 1.0)


def test_misspelt_parameter_refused(tmp_path_factory, capsys):
    """A misspelt parameter (--set parameters.spn for spin) is refused.

    Exit 2 naming the parameter meant, no case run; a new parameter that an expression set on
    the command line uses is taken (frequency against the closed form).
    """
    d = shared_dir(tmp_path_factory, "spn")
    code, err = status_and_error(capsys, ["sweep", ROD, "--set", "parameters.spn=0,100",
                                          "--out", str(d / "out")])
    assert code == 2
    assert not (d / "out" / "results.csv").exists()
    if comm.rank == 0:
        assert "--set parameters.spn: 'spn' is not a known parameter" in err
        assert "did you mean 'spin'?" in err
    with pytest.raises(CaseError, match="'spn' is not a known parameter"):
        Case(ROD, [("parameters.spn", 100.0)])
    # a parameter the command line adds and uses
    case = Case(ROD, [("parameters.w2", 300.0), ("frame.rate", "w2")])
    w = case.run(comm)["frequencies"]
    assert rel(w["w1"], rod_closed_forms(0.2e-4, 1.0, 300.0)[1][0]) < 1e-3


def test_json_unwritable_checked_first(capsys, monkeypatch):
    """--json into a folder that does not exist: exit 2 before the case is built."""
    def never(*args, **kwargs):
        raise AssertionError("the case ran although its results could not be written")

    monkeypatch.setattr(Case, "run", never)
    code, err = status_and_error(capsys, ["run", ROD, "--json", "/nonexistent/dir/r.json"])
    assert code == 2
    if comm.rank == 0:
        assert "--json /nonexistent/dir/r.json: cannot write the results there" in err


def test_values_blamed_where_they_were_given(tmp_path_factory, capsys):
    """A bad value is blamed where it was given.

    From --set on the command line, from the file on its own line (the key's, not the
    table's); a NaN is shown as nan; exit 2.
    """
    with pytest.raises(CaseError, match=r"^--set material\.E: E must be positive and finite, "
                                        r"got -1$"):
        Case(ROD, [("material.E", -1)]).run(comm)
    with pytest.raises(CaseError, match=r"^--set frame\.axis: axis must have nonzero length, "
                                        r"got \[0\.0, 0\.0, 0\.0\]$"):
        Case(ROD, [("frame.axis", [0, 0, 0])]).run(comm)
    with pytest.raises(CaseError, match=r"^--set parameters\.spin: must be a finite number, "
                                        r"got nan$"):
        Case(ROD, [("parameters.spin", "inf * 0")])
    d = shared_dir(tmp_path_factory, "blame")
    text = pathlib.Path(ROD).read_text().replace('nu = 0.0', 'nu = 0.7')
    comm.Barrier()
    if comm.rank == 0:
        (d / "nu.toml").write_text(text)
    comm.Barrier()
    line = 1 + text.splitlines().index("nu = 0.7")
    with pytest.raises(CaseError, match=rf"nu.toml:{line}: material\.nu: nu \(Poisson's "
                                        r"ratio\) must lie in \(-1, 0.5\), got 0.7"):
        Case(d / "nu.toml").run(comm)
    code, err = status_and_error(capsys, ["run", ROD, "--set", "material.E=-1"])
    assert code == 2


def test_range_without_count(tmp_path_factory, capsys):
    """A range start:stop without its count (or with a bad one) is said in words, exit 2.

    A range given to run is pointed to sweep.
    """
    for text, why in (("0:100", r"'0:100' has no count \(e\.g\. 0:100:11\)"),
                      ("0:100:2.5", "the count of '0:100:2.5' must be an integer >= 1"),
                      ("0:x:3", "the stop of '0:x:3' is not a number")):
        with pytest.raises(ValueError, match=r"a range is start:stop:count .*" + why):
            sweep_values(text)
    assert sweep_values("0:100:3") == [0.0, 50.0, 100.0]
    assert sweep_values("mesh:a.msh") == ["mesh:a.msh"]  # not a range: a value
    d = shared_dir(tmp_path_factory, "range")
    code, err = status_and_error(capsys, ["sweep", ROD, "--set", "parameters.spin=0:100",
                                          "--out", str(d / "out")])
    assert code == 2
    if comm.rank == 0:
        assert "has no count" in err and "invalid syntax" not in err
    code, err = status_and_error(capsys, ["run", ROD, "--set", "parameters.spin=0:100:3"])
    assert code == 2
    if comm.rank == 0:
        assert "a range start:stop:count is swept" in err


def test_empty_clamp_is_a_case_error(capsys):
    """A clamp that selects no node is an error of the case file: exit 2, naming the clamp."""
    with pytest.raises(CaseError, match=r"clamp\[0\]: clamp\(body0\): the selection holds no "
                                        r"node of body 'body0' \(values set with --set: "
                                        r"clamp\.0\.where\)"):
        Case(ROD, [("clamp.0.where", "x < -1")]).run(comm)
    code, err = status_and_error(capsys, ["run", ROD, "--set", "clamp.0.where=x < -1"])
    assert code == 2


def test_transient_writes_fields(tmp_path_factory):
    """With analysis.transient.output the run writes its CSV and its fields.

    The CSV has a row per step; the fields file's last tip displacement equals the probe's final
    value (two paths: the file read back, the probe by point ownership), at the output times.
    """
    d = shared_dir(tmp_path_factory, "fields")
    stem = str(d / "exc")
    dt, steps = 1e-5, 12
    code = cli.main(["run", EXCITATION, "--set", f"analysis.transient.t_end={steps * dt}",
                     "--set", f"analysis.transient.output={stem}", "--set",
                     "analysis.transient.output_every=3", "--json", str(d / "r.json"),
                     "--quiet"])
    assert code == 0
    comm.Barrier()
    r = json.loads((d / "r.json").read_text())["results"]["transient"]
    assert r["steps"] == steps
    rows = (d / "exc.csv").read_text().splitlines()
    assert len(rows) == 1 + steps + 1
    tip_final = r["tip"]["x"]["final"]
    assert abs(tip_final) > 0

    def check():
        data = read_back(stem + ("_body0.bp" if compat.has_vtx else "_body0.xdmf"))
        if isinstance(data, str) or "skip" in data:
            return data if isinstance(data, str) else data["skip"]
        np.testing.assert_allclose(data["times"], np.arange(0, steps + 1, 3) * dt, rtol=1e-9)
        X, u = data["geometry"], data["u"][-1]
        at_tip = np.flatnonzero(np.all(np.isclose(X, [1.0, 0.0, 0.0], atol=1e-12), axis=1))
        assert len(at_tip) == 1
        assert abs(u[at_tip[0], 0] - tip_final) <= 1e-12 * abs(tip_final)
        return None

    reason = comm.bcast(check() if comm.rank == 0 else None)
    if reason is not None:
        pytest.skip(reason)


def test_sweep_gives_each_case_its_fields(tmp_path_factory):
    """In a sweep of a case that writes fields each case writes its own.

    They go to out/cases/case_<i>, the CSV of each its own run (their tip histories differ as
    the force frequency does).
    """
    d = shared_dir(tmp_path_factory, "sweepfields") / "out"
    code = cli.main(["sweep", EXCITATION, "--set", "parameters.w=100,300", "--fix",
                     "analysis.transient.t_end=1e-4", "--fix",
                     f"analysis.transient.output={d / 'ignored'}", "--out", str(d)])
    assert code == 0
    comm.Barrier()
    tips = []
    for i in (0, 1):
        rows = (d / "cases" / f"case_{i:04d}.csv").read_text().splitlines()
        assert len(rows) == 1 + 10 + 1
        tips.append([float(r.split(",")[1]) for r in rows[1:]])
    assert not (d / "ignored.csv").exists()
    assert np.abs(np.subtract(*tips)).max() > 0


def test_a_case_file_met_elsewhere(tmp_path_factory, capsys):
    """The rotor case copied into another folder: its relative mesh path is read from the
    copy's folder, and the error shows where it looked (exit 2); a case file that is not
    there is a bad case file too (exit 2, as every input error); --help names a page that
    exists."""
    d = shared_dir(tmp_path_factory, "copied")
    src = ROOT / "demos" / "cases" / "rotor_on_bearings.toml"
    copy = d / "rotor.toml"
    if comm.rank == 0:
        copy.write_text(src.read_text())
    comm.Barrier()
    code, err = status_and_error(capsys, ["run", str(copy)])
    assert code == 2
    if comm.rank == 0:
        near = (d / "../../meshes/shaft.msh").resolve()
        assert f"no file '../../meshes/shaft.msh'" in err and str(near) in err, err
        assert "is not a file" in err and "exists" not in err, err
    code, err = status_and_error(capsys, ["run", str(d / "nowhere.toml")])
    assert code == 2
    if comm.rank == 0:
        assert "nowhere.toml" in err, err
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "docs/guide/80-cases-sweeps.md" in out.replace("\n", " ").replace("  ", " ")
    assert (ROOT / "docs" / "guide" / "80-cases-sweeps.md").is_file()
