"""Static modal derivatives in a reduced body with nonlinear strain (``Model.reduce(...,
derivatives=k)``), against the unreduced body: the independent reference.

A body reduced to Craig-Bampton's vibration modes alone locks with nonlinear strain: its bent
shapes stretch, and the few axial shapes of the basis cannot take up the shortening, so it is
far too stiff. The torque-driven hub-beam of Kane, Ryan and Banerjee (the strip of
``tests.models.krb``, 20 x 1 P2, ``stiffening="nonlinear"``, on a computed Hinge, 300 steps of
1 ms, the tip's peak near 0.27 s): unreduced (the TS path) against 10 modes (the dense path),
measured -0.52833 m unreduced, -0.0709 m with the modes alone (87 % off), +7.4 % with the
derivative of the lowest mode with itself, +0.014 %, +0.08 % and +0.017 % with those of the
lowest 2, 3 and 5 modes (3, 6, 15 shapes more); the same on 2 ranks (3e-8).
"""

import math

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models import krb

STEPS, DT = 300, 1e-3


def torque(t, s):
    return 200.0 * math.sin(math.pi * t / 0.5) if t < 0.5 else 0.0


def hub_beam(stiffening="nonlinear"):
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
    msh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([0.0, -krb.H / 2]),
                                                  np.array([krb.L, krb.H / 2])],
                                 [20, 1], dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=krb.EA / (krb.B * krb.H), nu=0.3,
                                    density=krb.RHO_A / (krb.B * krb.H), thickness=krb.B)
    body = mbs.Body(msh, mat, hub, degree=2, stiffening=stiffening, name="beam")
    model = mbs.Model([body])
    model.attach(body, lambda x: np.isclose(x[0], 0.0))
    model.apply_torque(hub, torque)
    return model, body


def tip_peak(model, **kw):
    r = model.integrate(t_end=STEPS * DT, dt=DT, probes=[(krb.L, 0.0)], progress=False,
                        spectral_radius=0.8, **kw)
    tip = np.asarray(r.probes[:, 0, 1])
    return float(tip[np.argmax(np.abs(tip))]), r


@pytest.fixture(scope="module")
def full_peak():
    model, _ = hub_beam()
    return tip_peak(model, stepper="ts")[0]


def test_derivatives_undo_the_locking_of_a_reduced_nonlinear_body(full_peak):
    model, body = hub_beam()
    rb = model.reduce(body, modes=10, method="craig-bampton", derivatives=3)
    peak, r = tip_peak(model)
    assert r.stepper == "dense"
    assert rb.n_coordinates == 10 + 6 + rb.n_interface
    assert abs(peak / full_peak - 1) < 5e-3, (peak, full_peak)
    plain, body = hub_beam()
    with pytest.warns(UserWarning, match="no modal derivatives"):
        plain.reduce(body, modes=10, method="craig-bampton")
    locked = tip_peak(plain)[0]
    assert abs(locked / full_peak - 1) > 0.3, (locked, full_peak)   # what they correct


def test_derivatives_leave_the_body_state_as_found():
    model, body = hub_beam()
    body.u_state.interpolate(lambda x: np.vstack([1e-3 * x[0], 2e-3 * x[0] ** 2]))
    before = body.u_state.x.array.copy()
    rb = model.reduce(body, modes=6, method="craig-bampton", derivatives=2)
    model.system_reducer    # the shapes are made here
    assert rb.n_coordinates == 6 + 3 + rb.n_interface
    assert np.array_equal(body.u_state.x.array, before)


def test_bad_derivatives_raise():
    model, body = hub_beam()
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="derivatives must be an integer"):
            model.reduce(body, modes=4, derivatives=bad)
    with pytest.raises(ValueError, match="at most modes"):
        model.reduce(body, modes=4, derivatives=5)
    linear, lbody = hub_beam(stiffening="prestress")
    with pytest.raises(ValueError, match="stiffening='nonlinear'"):
        linear.reduce(lbody, modes=4, derivatives=2)
    model.reduce(body, modes=6, derivatives=2)   # the failed calls left nothing behind
    assert tip_peak(model)[0] < 0.0
