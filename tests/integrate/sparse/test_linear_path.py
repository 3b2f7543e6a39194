"""The linear path (:mod:`dolfinx_mbs.integrate.sparse.alpha2`): TSALPHA2's steps on the sparse
operators of a constant frame state, without PETSc TS.

What every stepper must do (match TS, be taken by ``"auto"``, refuse what it cannot step) is in
``test_steppers.py``. Here, against PETSc's own TSALPHA2 (``stepper="ts"``) on the same
spinning 3D bar under its tip traction and gravity: GMRES + GAMG on both paths agree to the
solver's tolerance, and a long run whose output times scatter by round-off factorizes its step
matrix once (twice with the restart's half steps) and equals the TS path.
"""

import logging

from tests.models.spinbar import TIP, agree
from tests.models.spinbar import bar as spinning_bar


def bar(**kw):
    """The spinning bar (``spinbar.bar``) under its tip traction and gravity."""
    return spinning_bar(gravity=True, **kw)


def test_linear_by_multigrid_matches_ts():
    """GMRES + GAMG (rigid-body modes as near null space) on both paths, solved to 1e-12:
    the K_s X recursion is replaced by a product per step (an iterative solve's residual would
    accumulate in it); the paths agree to the solver's tolerance."""
    model = bar()
    gamg = {"ksp_type": "gmres", "pc_type": "gamg", "ksp_rtol": 1e-12}
    run = dict(t_end=0.0305, dt=1e-3, probes=[TIP], progress=False, options=gamg)
    ts = model.integrate(stepper="ts", **run)
    lin = model.integrate(**run)
    assert lin.stepper == "linear" and ts.stepper == "ts"
    agree(ts, lin, tol=1e-8)
    direct = model.integrate(stepper="ts", probes=[TIP], t_end=0.0305, dt=1e-3,
                             progress=False)
    agree(direct, lin, tol=1e-8)


def test_one_factorization_over_a_long_run(caplog):
    """A long run's step matrix is factorized once (twice with the restart's half steps),
    whatever round-off the differences of its output times carry, and the run equals the TS
    path."""
    model = bar(prestress=False)
    run = dict(t_end=0.4, dt=2e-4, probes=[TIP], progress=False)
    with caplog.at_level(logging.INFO, logger="dolfinx_mbs"):
        lin = model.integrate(stepper="linear", **run)
    said = [r.getMessage() for r in caplog.records if "factorizations" in r.getMessage()]
    assert said and "linear path: 2 factorizations" in said[-1], said
    ts = model.integrate(stepper="ts", **run)
    agree(ts, lin)
