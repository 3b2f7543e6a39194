"""The dense path of frames that change in time (:mod:`dolfinx_mbs.integrate.dense.varying`): operators
combined from dense stacks gathered once, the steps of a whole run as affine maps formed in
batch.

* ``stepper="dense"`` gives the TS path's steps (the same schemes through PETSc TS, its
  operators combined in PETSc at every step): probes and energies of the three formulations
  on a reduced spun-up strip (the KRB set-up, Craig-Bampton modes with prestress), a full 3D
  beam spun up about a skewed axis through an offset hub (damping, prestress, gravity turning
  in the frame, a constant traction: the loads combined from unit loads) with its clamp's
  reaction, and two tied 2D bodies in a planar frame given by functions.
* The divergence check on the dense path (eigenvalues of the dense K) finds the instability
  of an unprestressed strip spun past its divergence speed at the time and with the count of
  PETSc's factorization on the TS path.
* ``Frame.states`` (all times at once) equals ``Frame.state`` at each time to round-off (bit
  for bit with numpy 2's sin and cos, not with 1.24's).
* ``stepper="auto"`` takes the path for a small reduced system and says so in the log.
"""

import logging

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.reducedcases import spun_up_3d, tied_2d

COMM = MPI.COMM_WORLD
FORMS = ("second-order", "first-order", "hamiltonian")
L, H = 10.0, 0.0775


def strip(modes=6, prestress=True, rate=6.0, ramp=15.0):
    """KRB's strip (bench/reduction.py) with 20 Q2 cells, spun up, reduced."""
    mesh = dmesh.create_rectangle(COMM, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                  [20, 1], dmesh.CellType.quadrilateral)
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=rate, ramp_time=ramp)
    mat = mbs.materials.PlaneStress(E=2.8e7 / H**2, nu=0.3, density=1.2 / H**2, thickness=H)
    body = mbs.Body(mesh, mat, frame, degree=2,
                    stiffening="prestress" if prestress else None)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    if modes:
        model.reduce(body, modes=modes)
    return model


def loaded_3d():
    model = spun_up_3d()
    model.bodies[0].add_traction((0.0, 0.0, 3e4), where=lambda x: np.isclose(x[0], 1.0))
    return model


CASES = {"reduced-strip": (strip, dict(t_end=2.0, dt=0.05), lambda m: [(L, 0.0)]),
         "spun-up-3d": (loaded_3d, dict(t_end=0.0105, dt=1e-3), lambda m: [(1.0, 0.06, 0.04)]),
         "tied-2d": (tied_2d, dict(t_end=0.0105, dt=1e-3),
                     lambda m: [(m.bodies[1], (1.0, 0.05)), (0.3, 0.05)])}


@pytest.mark.parametrize("formulation", FORMS)
@pytest.mark.parametrize("case", CASES)
def test_varying_dense_steps_equal_ts_steps(case, formulation, caplog):
    """Times equal, probes within 1e-9 of the largest, energies within 1e-8 (or 1e-10 of the
    largest energy, for the Jacobi integral's cancelling terms; reactions within 1e-7 for
    the 3D beam, which the dense path observes step by step): two routes through the same
    schemes, PETSc's factorizations at every step against one batched inverse."""
    make, run, points = CASES[case]
    reactions = case == "spun-up-3d"
    out = {}
    for stepper in ("ts", "dense"):
        with caplog.at_level(logging.INFO, logger="dolfinx_mbs.integrate.dense.stepper"):
            model = make()
            out[stepper] = model.integrate(formulation=formulation, probes=points(model),
                                           reactions=reactions, progress=False,
                                           stepper=stepper, **run)
    ts, de = out["ts"], out["dense"]
    text = caplog.text
    assert "frames changing in time" in text
    # the loads of these frames are combinations of unit loads (gravity, a constant traction)
    assert "loads combined from unit loads" in text, text
    assert de.stepper == "dense" and np.array_equal(de.times, ts.times)
    assert np.abs(ts.probes - ts.probes[0]).max() > 0  # it moved
    assert np.abs(de.probes - ts.probes).max() < 1e-9 * np.abs(ts.probes).max()
    # the Jacobi integral cancels its terms (kinetic + potential - f.q): against the largest,
    # at the states' agreement (1e-9, as the probes; 1.2e-10 of it on DOLFINx 0.5.2, Hamilton)
    scale = max(np.abs(e).max() for e in ts.energy.values())
    for k, e in ts.energy.items():
        assert np.abs(de.energy[k] - e).max() <= max(1e-8 * np.abs(e).max(), 1e-9 * scale), k
    assert len(de.reactions) == len(ts.reactions)  # named by body: in order
    for r, d in zip(ts.reactions.values(), de.reactions.values()):
        # the accelerations in them come from M a = f - C v - K q: the round-off of v (from
        # Hamilton's momentum) amplified by the stiffness (1.1e-8 seen on 0.5.2, 2 ranks)
        assert np.abs(d - r).max() <= 1e-7 * np.abs(r).max()
    assert bool(ts.reactions) == reactions


def test_divergence_found_as_on_the_ts_path():
    """An unprestressed strip spun up past its divergence speed (softening beats the bending
    stiffness, about 3.8 rad/s): both paths name the same first unstable time and count."""
    found = {}
    for stepper in ("ts", "dense"):
        model = strip(modes=4, prestress=False, rate=8.0, ramp=1.0)
        with pytest.warns(mbs.integrate.stability.InstabilityWarning):
            r = model.integrate(1.5, 5e-3, progress=False, stepper=stepper)
        found[stepper] = [(i.t, i.negative) for i in r.instabilities]
    assert found["ts"] and found["dense"] == found["ts"], found


@pytest.mark.parametrize("frame", [
    mbs.frames.SpinUp(axis=(0.2, 0.3, 1.0), final_rate=40.0, ramp_time=1.0,
                      origin=(-0.2, 0.1, 0.0)),
    mbs.frames.ConstantSpin(axis=(1.0, 0.0, 1.0), rate=3.0, origin=(0.0, 1.0, 0.0)),
    mbs.frames.Planar(theta=lambda t: 0.7 * t**2, origin=lambda t: (np.cos(t), t))])
def test_states_at_all_times_equal_states_one_by_one(frame):
    """The closed form on arrays (axis rotations) and the default loop (Planar)."""
    times = np.linspace(-0.5, 2.0, 41)
    many = frame.states(times)
    for k, t in enumerate(times):
        one = frame.state(t)
        for name in ("R", "r_O", "omega", "alpha", "v_O", "a_O"):
            a, b = getattr(many, name)[k], getattr(one, name)
            assert np.abs(a - b).max() <= 1e-14 * (1.0 + np.abs(b).max()), (t, name)


def test_auto_takes_the_varying_dense_path(caplog):
    model = strip()
    with caplog.at_level(logging.INFO, logger="dolfinx_mbs.integrate.dense.stepper"):
        r = model.integrate(0.2, 0.05, progress=False)
    assert r.stepper == "dense" and "frames changing in time" in caplog.text
    r = model.integrate(0.2, 0.05, progress=False, options={"ts_type": "alpha2"})
    assert r.stepper == "ts"
