"""Hamilton's form on the linear path (:mod:`dolfinx_mbs.integrate.sparse.midpoint`): the implicit
midpoint on the sparse operators of a constant frame state, without PETSc TS.

References: PETSc's own TSTHETA (theta = 1/2, no endpoint) on the same system
(``stepper="ts"``): probes and all energies agree to 1e-9 of their largest value, with the
node-block products (a spinning 3D bar clamped at its root, prestressed, under a tip traction;
with gravity, whose prestress turns in the frame and changes the operators at every step,
and without, where K_s q follows the step relation between products), with mass-proportional
damping (node blocks), with Rayleigh damping and with a clamp of one component (no node
blocks), from v0 and from the momentum p0; a run from p0 = M v0 + G_p q0 + pi_0 is the run
from v0. A second formulation: the second-order form at spectral radius 1 (generalized-alpha
is then the midpoint rule on (q, q')) gives the same states. Closed form: the implicit
midpoint conserves the quadratic Hamiltonian exactly, so the Jacobi integral of the undamped
bar under constant loads stays constant to round-off, and with damping it never grows
(H1 - H0 = -dt v_mid.D v_mid). Matching TS case by case, being taken by ``"auto"`` and
refusing what the path cannot step are in the steppers' conformance suite
(``test_steppers.py``). Under GMRES + GAMG (the step solver's options) the
path agrees with the direct TS path to the solver's tolerance.
"""

import logging

import numpy as np
import pytest

from tests.models.spinbar import TIP, agree, bar

H = "hamiltonian"


def _linear(model, caplog, **run):
    """The run on the linear path, and whether it took the node-block products."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="dolfinx_mbs"):
        r = model.integrate(stepper="linear", formulation=H, **run)
    assert "hamiltonian (linear midpoint)" in caplog.text
    return r, "node-block mass products" in caplog.text


def _v0(system, scale=0.05):
    """A smooth reduced velocity (m/s), the same whatever the ranks."""
    v = system.create_reduced_vec()
    r0, r1 = v.getOwnershipRange()
    v.getArray()[:] = scale * np.sin(0.01 * np.arange(r0, r1))
    return v


# case: (bar's arguments, node-block form expected)
CASES = {"node-blocks": (dict(), True),
         "node-blocks, gravity": (dict(gravity=True), True),
         "mass damping": (dict(damping=(2.0, 0.0)), True),
         "rayleigh": (dict(damping=(2.0, 1e-5)), False),
         "two components": (dict(components=[2]), False)}


def test_linear_by_multigrid_matches_ts(caplog):
    """GMRES + GAMG (rigid-body modes as near null space) on the step matrix, solved to 1e-12:
    K_s q by a product at every step (an iterative solve's residual would accumulate in the
    step relation); the direct TS path agrees to the solver's tolerance."""
    model = bar()
    gamg = {"ksp_type": "gmres", "pc_type": "gamg", "ksp_rtol": 1e-12}
    run = dict(t_end=0.0305, dt=1e-3, probes=[TIP], progress=False)
    lin, blocks = _linear(model, caplog, options=gamg, **run)
    assert blocks
    assert model.integrate(formulation=H, options=gamg, **run).stepper == "linear"  # auto
    direct = model.integrate(stepper="ts", formulation=H, **run)
    agree(direct, lin, tol=1e-8)


@pytest.mark.parametrize("case", ["node-blocks", "two components"])
def test_initial_momentum(case, caplog):
    """p0 = M v0 + G_p q0 + pi_0 starts the run that v0 starts (v0 then from a mass solve);
    the TS path from the same p0 agrees."""
    model = bar(traction=False, **CASES[case][0])
    system = model.system(H)
    v0 = _v0(system)
    s = system.at(0.0)
    p0 = system.create_reduced_vec()
    s.M.mult(v0, p0)  # q0 = 0
    p0.axpy(1.0, s.pi0)
    run = dict(t_end=0.0205, dt=1e-3, probes=[TIP], progress=False)
    from_v, _ = _linear(model, caplog, v0=v0, **run)
    from_p, _ = _linear(model, caplog, p0=p0, **run)
    ts = model.integrate(stepper="ts", formulation=H, p0=p0, **run)
    assert from_v.energy["kinetic"][0] > 1e-3  # v0 moves it
    agree(from_v, from_p, 1e-10)
    agree(ts, from_p)


@pytest.mark.parametrize("damping", [None, (2.0, 0.0), (2.0, 1e-5)])
def test_jacobi_integral(damping, caplog):
    """Constant loads (the centrifugal load; no traction or gravity): the implicit midpoint
    keeps the Jacobi integral (the Hamiltonian) to round-off without damping, and lets it
    only decrease with it; 200 steps take the K_s q recursion past several products."""
    model = bar(damping=damping, traction=False)
    system = model.system(H)
    r, blocks = _linear(model, caplog, t_end=0.2005, dt=1e-3, progress=False,
                        v0=_v0(system))
    assert blocks == (damping is None or damping[1] == 0.0)
    J, kin = r.energy["jacobi"], r.energy["kinetic"]
    scale = np.abs(r.energy["potential"]).max() + kin.max()
    assert kin.max() > 1e-3
    if damping is None:
        assert np.abs(J - J[0]).max() <= 2e-11 * scale  # 3.4e-12 measured
    else:
        assert np.diff(J).max() <= 2e-11 * scale
        assert J[0] - J[-1] > 1e-3 * kin[0]  # it dissipated


@pytest.mark.parametrize("case", ["node-blocks", "rayleigh"])
def test_second_order_at_radius_one(case, caplog):
    """A second formulation: generalized-alpha at spectral radius 1 (alpha_m = alpha_f =
    gamma = 1/2, beta = 1/4) is the midpoint rule on (q, q'), M (v1 - v0) / dt + C v_mid +
    K q_mid = f(t_mid) with (q1 - q0) / dt = v_mid, whatever its initial acceleration: the
    second-order form's linear path at radius 1 steps to the same states and energies."""
    model = bar(**CASES[case][0])
    run = dict(t_end=0.0405, dt=1e-3, probes=[TIP], progress=False)
    ham, _ = _linear(model, caplog, **run)
    so = model.integrate(stepper="linear", spectral_radius=1.0, **run)
    assert so.ts_type == "alpha2"
    agree(ham, so)
