"""Assembled frame operators: both strategies equal the direct forms of the physics (matrices,
the frame load vector and the unit loads of prestress); updates re-form only what changed;
all matrices share one sparsity pattern."""

import dataclasses

import numpy as np
import pytest
import ufl
from petsc4py import PETSc

import dolfinx_mbs as mbs
from dolfinx_mbs import forms as F
from dolfinx_mbs.assembly import BodyOperators
from tests.models.formcases import CASES, make_body, mat, rel_mat, rel_vec, vec


def generic_states(body):
    """States of the test body's frame at t = 0.9 and 1.3, and the second with another alpha
    only (the matrices and the load must follow a change of alpha alone)."""
    s1, s2 = body.frame.state(0.9), body.frame.state(1.3)
    return [check_generic(body, s)
            for s in (s1, s2, dataclasses.replace(s2, alpha=-0.5 * s2.alpha))]


def check_generic(body, state):
    """``state``, checked to be generic: omega and alpha with all three components nonzero in
    3D, planar (about z, both nonzero) in 2D; a_O nonzero in the body's space."""
    nonzero = [0, 1, 2] if body.gdim == 3 else [2]
    assert np.all(np.abs(state.omega[nonzero]) > 0.05), state.omega
    assert np.all(np.abs(state.alpha[nonzero]) > 0.05), state.alpha
    assert np.all(np.abs(state.a_O[: body.gdim]) > 0.05), state.a_O
    if body.gdim == 2:
        assert state.is_planar()
    return state


@pytest.mark.parametrize("case", CASES, ids=["tet1", "hex2", "tri2", "quad1"])
@pytest.mark.parametrize("strategy", ["assemble", "basis"])
def test_frame_operators_equal_direct_forms(case, strategy):
    """The matrices and the load vector BodyOperators assembles at generic frame states equal
    the direct forms g, k_omega, k_alpha and q_omega + q_alpha + q_O, each assembled on its
    own (the body has no gravity and no applied loads, so Q is the frame load alone)."""
    body = make_body(*case)
    ops = BodyOperators(body, strategy=strategy)
    for n, state in enumerate(generic_states(body)):
        ops.update(state)
        u, v = body.trial_test()
        r = body.rho
        ref = {"gyroscopic": F.gyroscopic(r, body.omega, u, v),
               "spin_softening": F.spin_softening(r, body.omega, u, v),
               "angular_acceleration": F.angular_acceleration(r, body.alpha, u, v)}
        for k, a in ref.items():
            assert rel_mat(ops.mats[k], mat(a)) < 1e-12, (k, n)
        q = (vec(F.centrifugal_load(r, body.omega, body.X, v))
             + vec(F.euler_load(r, body.alpha, body.X, v))
             + vec(F.base_acceleration_load(r, body.a_O, v)))
        assert rel_vec(ops.Q, q) < 1e-12, n


@pytest.mark.parametrize("case", [CASES[0], CASES[2]], ids=["tet1", "tri2"])
def test_prestress_unit_loads_combine_to_centrifugal_load(case):
    """The unit loads of prestress stiffening, weighted by Body.prestress_coefficient
    (omega_i omega_j, and -a_O for the uniform cases, the frame's origin accelerating), sum to
    the direct q_omega + q_O at a generic state: the steady stress they give is that of the
    centrifugal load and of the origin's acceleration."""
    body = make_body(*case, stiffening="prestress")
    ops = BodyOperators(body)
    cases = body.prestress_cases()
    assert body.frame.origin_accelerates  # no gravity, no applied loads, a_O != 0
    assert cases == list(F.unit_spin_cases(body.gdim)) + [("g", k) for k in range(body.gdim)]
    for n, state in enumerate(generic_states(body)[:2]):
        ops.update(state)
        q = ops.Q.duplicate()
        q.zeroEntries()
        for c in cases:
            q.axpy(body.prestress_coefficient(c, state), ops.unit_prestress_load(c))
        v = ufl.TestFunction(body.V)
        ref = (vec(F.centrifugal_load(body.rho, body.omega, body.X, v))
               + vec(F.base_acceleration_load(body.rho, body.a_O, v)))
        assert rel_vec(q, ref) < 1e-12, n


def test_unchanged_spin_reassembles_nothing():
    body = make_body(*CASES[0])
    ops = BodyOperators(body, strategy="assemble")
    frame = mbs.frames.ConstantSpin(axis=(1, 1, 1), rate=3.0)
    ops.update(frame.state(0.0))
    assert ops.mats["angular_acceleration"] is None  # no alpha yet: not allocated
    before = {k: m.copy() for k, m in ops.mats.items() if m is not None}
    body.W.value = np.full((3, 3), np.nan)  # would poison any re-assembly
    ops.update(frame.state(5.0))
    for k, m in before.items():
        d = ops.mats[k].copy()
        d.axpy(-1.0, before[k], structure=PETSc.Mat.Structure.SAME_NONZERO_PATTERN)
        assert d.norm() == 0.0, k


@pytest.mark.serial
def test_one_sparsity_pattern():
    body = make_body(*CASES[1])
    ops = BodyOperators(body, strategy="basis")
    ops.update(mbs.frames.SpinUp(axis=(1, 2, 3), final_rate=4.0).state(0.3))  # alpha != 0
    ia, ja, _ = ops.K.getValuesCSR()
    for k, m in list(ops.mats.items()) + [(f"basis{i}", B) for i, (_, B) in enumerate(ops._basis)]:
        ib, jb, _ = m.getValuesCSR()
        assert np.array_equal(ia, ib) and np.array_equal(ja, jb), k
