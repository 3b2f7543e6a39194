"""The products a step shares (dolfinx_mbs.integrate.state_products): energies formed from M q and K_s q
in node-block form, Hamilton's velocity from the step, and the next residual at the observed
state, against the assembled full matrices and against runs without the energy monitor."""

import numpy as np
import pytest
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs


def spinning_bar(stiffening=None, rayleigh=(0.0, 0.0)):
    """A 3D bar spinning steadily about z, clamped at its root (whole nodes: node-block
    form), tip traction sin(2000 t)."""
    mesh = dmesh.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0, 0.1, 0.1])],
                            [8, 2, 2], dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=2e9, nu=0.3, density=7800.0, rayleigh=rayleigh)
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=40.0),
                    stiffening=stiffening)
    body.add_traction(lambda t: (0.0, 1e5 * np.sin(2000.0 * t), 0.0),
                      where=lambda x: np.isclose(x[0], 1.0))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model, body


def _v0(body):
    v0 = fem.Function(body.V)
    v0.interpolate(lambda x: np.vstack([0 * x[0], 0.05 * x[0] ** 2, 0.02 * x[0]]))
    return v0


@pytest.mark.parametrize("formulation", ["second-order", "hamiltonian"])
@pytest.mark.parametrize("stiffening", [None, "prestress"])
def test_energies_equal_the_full_quadratic_forms(formulation, stiffening):
    """Kinetic, elastic and potential energy of every step (from M q and K_s q in node-block
    form; Hamilton's velocity from the step relation, checked by a product every tenth step,
    and v0 at the start) equal 1/2 v.M v, 1/2 u.K_el u and 1/2 u.K u of the full displacement
    and velocity the run reports, with the assembled full matrices (30 steps)."""
    model, body = spinning_bar(stiffening)
    assert model.system(formulation).at(0.0).blocks is not None
    states = []

    def keep(t, u, v):
        states.append((t, u.copy(), v.copy()))

    r = model.integrate(t_end=30 * 2e-5, dt=2e-5, formulation=formulation, v0=_v0(body),
                        progress=False, callback=keep, stability="off", stepper="ts")
    asm = model.assembly
    M, Kel, K = asm.mass(), asm.elastic(), asm.stiffness(0.0)
    w = M.createVecLeft()
    ref = {k: [] for k in ("kinetic", "elastic", "potential")}
    for t, u, v in states:
        for key, A, x in (("kinetic", M, v), ("elastic", Kel, u), ("potential", K, u)):
            A.mult(x, w)
            ref[key].append(0.5 * x.dot(w))
    assert len(states) == len(r.times) == 31
    for key, values in ref.items():
        values = np.array(values)
        scale = np.abs(values).max()
        assert scale > 0
        err = np.abs(r.energy[key] - values).max() / scale
        assert err < 1e-9, (key, err)


@pytest.mark.parametrize("formulation", ["second-order", "hamiltonian"])
def test_residual_at_the_observed_state_same_history(formulation):
    """With the energy monitor the residual at the last observed state reuses its products;
    without it, it forms them: the same probe history to round-off (Rayleigh damping in the
    Hamilton run: its stiffness-proportional part meets the reused K_s q)."""
    out = []
    for energy in (True, False):
        model, body = spinning_bar(rayleigh=(0.5, 1e-5) if formulation == "hamiltonian"
                                   else (0.5, 0.0))
        out.append(model.integrate(t_end=40 * 2e-5, dt=2e-5, formulation=formulation,
                                   v0=_v0(body), probes=[(1.0, 0.05, 0.05)], progress=False,
                                   energy=energy, stability="off", stepper="ts"))
    a, b = out[0].probes, out[1].probes
    assert np.abs(a).max() > 1e-7
    assert np.abs(a - b).max() <= 1e-10 * np.abs(a).max()
    assert out[0].energy and not out[1].energy
