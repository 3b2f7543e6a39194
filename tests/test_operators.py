"""Assembled frame operators: both strategies equal the direct forms of the physics; updates
re-form only what changed; all matrices share one sparsity pattern."""

import numpy as np
import pytest
from petsc4py import PETSc

import dolfinx_mbs as mbs
from dolfinx_mbs import forms as F
from dolfinx_mbs.operators import BodyOperators

from test_forms import CASES, make_body, mat, rel_mat


@pytest.mark.parametrize("case", CASES, ids=["tet1", "hex2", "tri2", "quad1"])
@pytest.mark.parametrize("strategy", ["assemble", "basis"])
def test_frame_matrices_equal_direct_forms(case, strategy):
    body = make_body(*case)
    ops = BodyOperators(body, strategy=strategy)
    for t in (0.9, 1.3):
        state = body.frame.state(t)
        ops.update(state)
        u, v = body.trial_test()
        r = body.rho
        ref = {"gyroscopic": F.gyroscopic(r, body.omega, u, v),
               "spin_softening": F.spin_softening(r, body.omega, u, v),
               "angular_acceleration": F.angular_acceleration(r, body.alpha, u, v)}
        for k, a in ref.items():
            assert rel_mat(ops.mats[k], mat(a)) < 1e-12, (k, t)


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
