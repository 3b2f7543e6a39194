"""The reduced load as a sum of known vectors (:mod:`dolfinx_mbs.integrate.sparse.load_series`), what the linear
path reads at each time instead of the system's record.

The reference is the system's own record (``system.at(t)``: the bodies brought to the frame
state, the loads assembled and projected) at times the series was not built from: gravity
turning with a spinning frame, a traction and a body force given as functions of time, a
point load in global components (it turns with the frame) and a constant one, on the
second-order and Hamilton's systems, to 1e-12 of the load. The linear path with the series
equals the TS path (which assembles) to 1e-9. Where the loads are not such a sum (the user's
load form with an update, a prestress that follows gravity) the series is refused and the
linear path assembles.
"""

import logging

import numpy as np
import pytest
from mpi4py import MPI

from dolfinx_mbs.integrate.sparse.load_series import LoadSeries
from tests.models.spinbar import TIP, agree
from tests.models.spinbar import bar as spinning_bar

COMM = MPI.COMM_WORLD
TIMES = (0.0013, 0.0071, 0.0305, 0.2)


def bar(prestress=False, user_load=False, points=True, gravity=True):
    """The spinning bar (``spinbar.bar``) under a tip traction, a body force, and (by default)
    gravity and point loads."""
    return spinning_bar(prestress=prestress, user_load=user_load, points=points,
                        gravity=gravity, body_force=True)


@pytest.mark.parametrize("formulation,names", [("second-order", ("f",)),
                                               ("hamiltonian", ("f", "fa"))])
@pytest.mark.parametrize("turning", [True, False])
def test_series_equals_the_record(formulation, names, turning):
    """``turning``: gravity and a point load in global components (the coefficients read the
    frame's rotation), else loads in local components alone (they read the time alone)."""
    model = bar(gravity=turning, points=turning)  # the system holds its model weakly
    system = model.system(formulation)
    series = LoadSeries.make(system, 0.0, 0.01, names)
    assert series is not None
    # gravity, traction, body force, point load: three components each
    assert series.U.shape[1] == (12 if turning else 6)
    for t in TIMES:
        mine = series.record(t)
        s = system.at(t)
        for k in names:
            ref = s.__dict__[k].getArray(readonly=True)
            got = getattr(mine, k).getArray(readonly=True)
            err = COMM.allreduce(float(np.abs(got - ref).max(initial=0.0)), op=MPI.MAX)
            scale = COMM.allreduce(float(np.abs(ref).max(initial=0.0)), op=MPI.MAX)
            assert err <= 1e-12 * scale, (k, t, err, scale)
        # every other field is the record's
        assert mine.M is s.M and mine.version == s.version
    series.destroy()


@pytest.mark.parametrize("model_kw", [dict(user_load=True), dict(prestress=True)])
def test_series_refused(model_kw):
    """The user's load with an update is no sum of known vectors; a prestress that follows
    gravity turning in the frame changes the matrices."""
    model = bar(**model_kw)
    system = model.system("second-order")
    assert LoadSeries.make(system, 0.0, 0.01) is None


@pytest.mark.parametrize("formulation", ["second-order", "hamiltonian"])
@pytest.mark.parametrize("user_load", [False, True])
def test_linear_path_with_series_equals_ts(formulation, user_load, caplog):
    model = bar(user_load=user_load)
    run = dict(t_end=0.0305, dt=1e-3, probes=[TIP], progress=False, formulation=formulation)
    ts = model.integrate(stepper="ts", **run)
    with caplog.at_level(logging.INFO, logger="dolfinx_mbs"):
        lin = model.integrate(stepper="linear", **run)
    said = "assembled" if user_load else "as a sum of known vectors"
    assert any(said in r.getMessage() for r in caplog.records)
    assert lin.stepper == "linear" and lin.steps == ts.steps == 31
    assert np.abs(ts.probes[-1]).max() > 1e-6
    agree(ts, lin)
