"""The typed results' two readings: a frozen record read also by name, a read-only mapping of
names that crosses ranks (mpi4py pickles it) and equals the dict it replaced."""

import dataclasses
import pickle

import numpy as np
import pytest
from mpi4py import MPI

from dolfinx_mbs.cli.analyses import CaseResults
from dolfinx_mbs.forms.moving_frame import frame_coupling
from dolfinx_mbs.records import FrozenMapping


def test_a_record_is_frozen_and_read_by_name():
    """frame_coupling(omega) by attribute and by name: the same arrays, 2 skew(omega) the
    gyroscopic one (its closed form); the record refuses assignment and unknown names."""
    w = np.array([0.3, -1.2, 2.0])
    W = frame_coupling(w)
    skew = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    assert np.array_equal(W.gyroscopic, 2.0 * skew)
    assert W["gyroscopic"] is W.gyroscopic
    assert list(W) == ["gyroscopic", "spin_softening", "angular_acceleration"]
    assert np.allclose(W.spin_softening, skew @ skew, rtol=0.0, atol=1e-15)
    with pytest.raises(dataclasses.FrozenInstanceError):
        W.gyroscopic = skew  # type: ignore[misc]
    with pytest.raises(KeyError):
        W["mass"]


def test_a_frozen_mapping_crosses_ranks_and_equals_its_dict():
    """Equal to the dict of its items, read-only, and the same after a pickle and after an
    allgather over the ranks."""
    items = {("second", ("first",)): 3, ("b", ()): 1}
    m = FrozenMapping(items)
    assert m == items and dict(m) == items and list(m) == list(items)
    with pytest.raises(TypeError):
        m["c"] = 2  # type: ignore[index]
    assert pickle.loads(pickle.dumps(m)) == m
    assert all(r == items for r in MPI.COMM_WORLD.allgather(m))


def test_case_results_hold_only_the_analyses_that_ran():
    """A case's results as the mapping of the analyses that ran; to_json the same table."""
    r = CaseResults(frequencies={"w1": 1.5, "w2": -0.5})
    assert list(r) == ["frequencies"] and "static" not in r
    assert r["frequencies"]["w2"] == -0.5 and r.static is None
    assert r.to_json() == {"frequencies": {"w1": 1.5, "w2": -0.5}}
    with pytest.raises(KeyError):
        r["static"]
