"""The first-order and Hamilton forms with GAMG on their Schur complement (``-mbs_pc_type
gamg``, :mod:`dolfinx_mbs.integrate.step_solvers`): the probe history of the direct solve to a tolerance
set by the Krylov solver's, the options from the run or the database, and a Schur solve that
does not converge failing the step."""

import logging

import dolfinx.mesh as dmesh
import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs

FORMS = ["first-order", "hamiltonian"]


def spun_up_bar(comm=MPI.COMM_WORLD):
    """A damped 3D bar spinning up about z, root clamped, a tip traction: every block of the
    2n step matrices is present (damping, gyroscopic and rate terms)."""
    mesh = dmesh.create_box(comm, [np.zeros(3), np.array([1.0, 0.1, 0.1])], [8, 2, 2],
                            dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=2.1e11, nu=0.3, density=7850.0, rayleigh=(2.0, 1e-5))
    body = mbs.Body(mesh, mat, mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=100.0,
                                                 ramp_time=1e-3))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.apply_load(body, traction=lambda t: (0.0, 1e6 * np.sin(2000.0 * t), 0.0),
                     where=lambda x: np.isclose(x[0], 1.0))
    return model


def run(formulation, options=None, result=False):
    r = spun_up_bar().integrate(t_end=1e-3, dt=1e-4, formulation=formulation,
                                probes=[(1.0, 0.0, 0.0)], options=options, progress=False)
    return r if result else r.probes



@pytest.mark.parametrize("formulation", FORMS)
def test_multigrid_schur_solve_equals_the_direct_solve(formulation, caplog):
    """GMRES + GAMG on S, right preconditioned: each step's residual is at most rtol of its
    right-hand side, so the probe history departs from the direct solve's (exact Schur
    factorization, LU of S) by a few rtol of its size (bound: 10 rtol) at rtol 1e-10 and
    1e-4; at 1e-4 it does depart (more than 1e-9: the steps are iterative, not LU)."""
    ref = run(formulation, result=True)
    direct, kinetic = ref.probes, ref.energy["kinetic"]
    scale = np.abs(direct).max()
    assert scale > 0 and kinetic.max() > 0
    errs = {}
    for rtol in (1e-10, 1e-4):
        with caplog.at_level(logging.INFO, logger="dolfinx_mbs.integrate.step_solvers"):
            caplog.clear()
            r = run(formulation, {"pc_type": "gamg", "ksp_rtol": rtol}, result=True)
        assert "GAMG" in caplog.text and "near null space" in caplog.text, caplog.text
        errs[rtol] = np.abs(r.probes - direct).max() / scale
        # the velocities (Hamilton's from p by the mass solve, CG + Jacobi under multigrid)
        ek = np.abs(r.energy["kinetic"] - kinetic).max() / kinetic.max()
        print(f"{formulation}: rtol {rtol:g}: {errs[rtol]:.2e} of the direct solve's history, "
              f"kinetic energy {ek:.2e}")
        assert errs[rtol] < 10 * rtol, (rtol, errs[rtol])
        assert ek < 10 * rtol, (rtol, ek)
    assert errs[1e-4] > 1e-9, errs


@pytest.mark.parametrize("formulation", FORMS)
def test_multigrid_options_from_the_database(database, formulation):
    """The second-order form's multigrid options in the database (the scaling bench's:
    ``-mbs_ksp_type gmres -mbs_pc_type gamg -mbs_ksp_rtol 1e-10``) apply to the Schur split
    (history of the direct solve to 1e-9) and stay in the database as they were."""
    direct = run(formulation)
    for key, value in (("ksp_type", "gmres"), ("pc_type", "gamg"), ("ksp_rtol", 1e-10)):
        database["mbs_" + key] = value
    before = database.getAll()
    gamg = run(formulation)
    assert database.getAll() == before
    assert np.abs(gamg - direct).max() < 1e-9 * np.abs(direct).max()


def test_schur_split_option_alone():
    """``fieldsplit_s_pc_type gamg`` alone: GMRES (rtol 1e-10) + GAMG on S, the history of
    the direct solve to 1e-9."""
    direct = run("first-order")
    gamg = run("first-order", {"fieldsplit_s_pc_type": "gamg"})
    assert np.abs(gamg - direct).max() < 1e-9 * np.abs(direct).max()


@pytest.mark.parametrize("formulation", FORMS)
def test_unconverged_schur_solve_fails_the_step(formulation):
    """A Schur solve stopped by its iteration limit (PETSc does not fail the outer solve for
    an inner one's DIVERGED_ITS) fails the step, on every rank, naming the split."""
    with pytest.raises(RuntimeError, match="at t=0.*fieldsplit_s_.*after 1 iterations"):
        run(formulation, {"pc_type": "gamg", "ksp_rtol": 1e-14, "ksp_max_it": 1})


def test_velocity_rows_with_multigrid():
    """Velocity rows (state (q, w)): their S is a product, formed by PETSc's "selfp" rule, so
    they keep PCFIELDSPLIT with GMRES + GAMG on the split (no near null space); the probe
    history of the direct solve to 1e-9."""
    from tests.models.nonholonomic import OMEGA_B, PROBES, cantilever, nonholonomic_rows

    res = []
    for opts in (None, {"pc_type": "gamg", "ksp_rtol": 1e-12}):
        model, body = cantilever(MPI.COMM_WORLD, rate=30.0)
        rows, rhs, _ = nonholonomic_rows(model, body)
        model.constrain_velocity(rows, rhs=rhs, time_scale=0.1 / OMEGA_B)
        res.append(model.integrate(4e-3, 2e-4, formulation="first-order", options=opts,
                                   probes=[(body, p) for p in PROBES], progress=False).probes)
    assert np.abs(res[0]).max() > 0
    assert np.abs(res[1] - res[0]).max() < 1e-9 * np.abs(res[0]).max()
