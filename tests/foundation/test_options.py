"""PETSc options: the solvers leave the global options database as they found it (also when a
call raises, and while a callback runs), options in the database override the package's
defaults, and ``integrate(..., options=)`` overrides the database."""

import contextlib

import numpy as np
import pytest
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.integrate.ts import second_order as formulations
from dolfinx_mbs.petsc_options import SolverOptions
from tests.models.rodmodel import ROD, axial_rod


def end_loaded_rod(n=4, degree=1):
    """Seed 003's rod (axial model) with its sinusoidal end force (period pi/100, 1 kN)."""
    model, body = axial_rod(MPI.COMM_WORLD, n, 15.0, 3, None, degree)
    body.add_traction(lambda t: (1000.0 / ROD["A"] * np.sin(200.0 * t), 0.0, 0.0),
                      where=lambda x: np.isclose(x[0], ROD["L"]))
    return model



def test_solver_options_order_and_exact_restore(database):
    """Inside the block: database over defaults, values over both; afterwards every entry is
    back (value, bare flag, absence), also when the block raises."""
    database["t_opts_kept"] = 3
    database["t_opts_flag"] = None
    before = database.getAll()
    opts = SolverOptions("t_opts_", defaults={"kept": 7, "added": 1, "flag": 2},
                         values={"flag": 5, "value": "x"})
    for fail in (False, True):
        with pytest.raises(KeyError) if fail else contextlib.nullcontext():
            with opts.inserted():
                assert database.getInt("t_opts_kept") == 3
                assert database.getInt("t_opts_added") == 1
                assert database.getInt("t_opts_flag") == 5
                assert database.getString("t_opts_value") == "x"
                if fail:
                    raise KeyError("inside")
        assert database.getAll() == before
    assert database.getAll()["t_opts_flag"] is None


def test_database_unchanged_by_every_solver(database):
    """Static solves (reduced and saddle point), a modal solve and time integration (every
    formulation, both constraint forms) leave the database exactly as found, and a callback
    never sees the run's options in it."""
    database["mbs_snes_linesearch_type"] = "basic"  # a user's entry the runs override
    before = database.getAll()
    seen = []

    def callback(t, u, v):
        seen.append(PETSc.Options().getAll() == before)

    model = end_loaded_rod()
    model.solve_static()
    assert database.getAll() == before
    model.natural_frequencies(n=2)
    assert database.getAll() == before
    model.saddle_point.solve_static()
    assert database.getAll() == before
    for form, cons in (("second-order", "maggi"), ("first-order", "maggi"),
                       ("hamiltonian", "maggi"), ("second-order", "multipliers")):
        model.integrate(t_end=5e-5, dt=1e-5, formulation=form, constraints=cons,
                        callback=callback, progress=False,
                        options={"snes_linesearch_type": "bt", "ts_max_snes_failures": 2})
        assert database.getAll() == before, (form, cons)
    assert len(seen) == 4 * 6 and all(seen)


def test_database_unchanged_when_a_run_raises(database):
    """A callback that raises, a bad TS type (setFromOptions) and a bad factorization package
    (read when the step solver is set up, during the first step) leave no trace."""
    before = database.getAll()
    model = end_loaded_rod()

    def callback(t, u, v):
        if t > 1.5e-5:
            raise ValueError("from the callback")

    # the callback's exception comes through as it is (PETSc 3.18) or as a failed step (3.25)
    with pytest.raises((ValueError, RuntimeError)):
        model.integrate(t_end=5e-5, dt=1e-5, callback=callback, progress=False)
    assert database.getAll() == before
    with pytest.raises(PETSc.Error):
        model.integrate(t_end=5e-5, dt=1e-5, progress=False, options={"ts_type": "no_such"})
    assert database.getAll() == before
    with pytest.raises(RuntimeError, match="at t=0"):
        model.integrate(t_end=5e-5, dt=1e-5, formulation="first-order", progress=False,
                        options={"fieldsplit_s_pc_factor_mat_solver_type": "no_such"})
    assert database.getAll() == before


def test_database_over_defaults_and_run_options_over_database(database):
    """First-order form: Crank-Nicolson by default; ``-mbs_ts_type bdf`` in the database gives
    BDF2 (same history to its accuracy); ``options={"ts_type": "theta"}`` brings the default
    back over the database (the same history to round-off)."""
    def run(options=None):
        model = end_loaded_rod()
        return model.integrate(t_end=2e-3, dt=1e-5, formulation="first-order",
                               u0=model.solve_static(), probes=[(ROD["L"], 0, 0)],
                               progress=False, options=options)

    default = run()
    assert default.ts_type == "theta"
    database["mbs_ts_type"] = "bdf"
    bdf = run()
    theta = run({"ts_type": "theta"})
    assert database.getString("mbs_ts_type") == "bdf"
    assert bdf.ts_type == "bdf" and theta.ts_type == "theta"
    ref = default.probes[:, 0, 0]
    scale = np.abs(ref - ref[0]).max()
    err = np.abs(bdf.probes[:, 0, 0] - ref).max() / scale
    print(f"BDF2 against Crank-Nicolson: {err:.2e}")
    assert 1e-9 < err < 5e-3, err  # a different scheme, of the same order: (w1 dt)^2 = 1e-3
    assert np.abs(theta.probes[:, 0, 0] - ref).max() < 1e-10 * scale


@pytest.fixture
def factor_icntl14(monkeypatch):
    """ICNTL(14) of the MUMPS factorization each integration step solver was set up with (the
    Schur complement's for the first-order form)."""
    seen = []
    set_up = formulations.TSProblem._set_up_solver

    def spy(self, J, P):
        set_up(self, J, P)
        pc = self.ts.getSNES().getKSP().getPC()
        if pc.getType() == PETSc.PC.Type.FIELDSPLIT:
            pc = pc.getFieldSplitSubKSP()[1].getPC()
        seen.append(pc.getFactorMatrix().getMumpsIcntl(14))

    monkeypatch.setattr(formulations.TSProblem, "_set_up_solver", spy)
    return seen


@pytest.mark.parametrize("form,cons,key,default", [
    ("second-order", "multipliers", "mat_mumps_icntl_14", 200),
    ("first-order", "maggi", "fieldsplit_s_mat_mumps_icntl_14", None)])
def test_set_up_options_reach_the_factorization(database, factor_icntl14, form, cons, key,
                                                default):
    """Options PETSc reads only when it factorizes (MUMPS' controls, the fieldsplit
    sub-solver's included) follow the same order: default < database < ``options=``."""
    def run(options=None):
        factor_icntl14.clear()
        end_loaded_rod().integrate(t_end=3e-5, dt=1e-5, formulation=form, constraints=cons,
                                   progress=False, options=options)
        assert factor_icntl14
        return set(factor_icntl14)

    if default is not None:
        assert run() == {default}
    database["mbs_" + key] = 150
    assert run() == {150}
    assert run({key: 250}) == {250}


def test_static_null_pivot_detection_default_and_override(database):
    """The static solver counts MUMPS null pivots (ICNTL(24) = 1) unless the database says
    otherwise."""
    def icntl24():
        model = end_loaded_rod()
        model.solve_static()
        return model.static.ksp.getPC().getFactorMatrix().getMumpsIcntl(24)

    assert icntl24() == 1
    database["mbs_static_mat_mumps_icntl_24"] = 0
    assert icntl24() == 0


def test_failed_initial_multipliers_raise(database):
    """The saddle-point solve of the initial multipliers reports a failed KSP (its reason was
    ignored and the run went on from wrong multipliers): one CG iteration without a
    preconditioner cannot solve the indefinite system."""
    model = end_loaded_rod()
    for key, value in (("ksp_type", "cg"), ("pc_type", "none"), ("ksp_max_it", 1)):
        database["mbs_saddle_" + key] = value
    with pytest.raises(RuntimeError, match="initial multipliers.*DIVERGED"):
        model.integrate(t_end=2e-5, dt=1e-5, constraints="multipliers", progress=False)
