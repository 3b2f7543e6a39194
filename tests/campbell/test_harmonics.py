"""Campbell diagrams per harmonic index of a cyclic model (dolfinx_mbs.campbell.harmonics):
the table against independent solves at each speed and index, its stationary frequencies
against the travelling direction, the engine orders' harmonic indices against k = +/-E mod N,
and an interference against a solve at its speed."""

import math

import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.campbell import excited_harmonic
from tests.models.wheels import sector_model

SPEEDS = np.linspace(0.0, 4000.0, 5)


@pytest.fixture(scope="module")
def table():
    model, *_ = sector_model(6, 0.0, stiffening="prestress")
    return model.campbell(SPEEDS, n=4, harmonics=[0, 1, 3])


def test_table_against_solves(table):
    """Each speed and index of the table: the frequencies of the harmonic system at that
    speed (a model spinning at it), to 1e-8."""
    assert table.frequencies.shape == (len(SPEEDS), 3, 4)
    np.testing.assert_array_equal(table.harmonic, [0, 1, 3])
    for i in (1, 4):
        model, *_ = sector_model(6, float(SPEEDS[i]), stiffening="prestress")
        for ik, k in enumerate(table.harmonic):
            w = model.natural_frequencies(n=4, harmonic=int(k), gyroscopic=True)
            np.testing.assert_allclose(np.sort(table.frequencies[i, ik]), w, rtol=1e-8)


def test_travelling_and_stationary(table):
    """Standing waves for k = 0 and N/2 and at rest; spinning, each pair of 0 < k < N/2 one
    forward and one backward wave, seen from the ground at abs(w + d k Omega)."""
    assert np.all(table.travelling[:, [0, 2]] == 0)
    assert np.all(table.travelling[0] == 0)
    for ik in (1,):
        d = table.travelling[1:, ik]
        assert np.all(np.sort(d, axis=1) == [[-1, -1, 1, 1]] * (len(SPEEDS) - 1))
    k = table.harmonic[None, :, None]
    expect = np.abs(table.frequencies + table.travelling * k * np.abs(SPEEDS)[:, None, None])
    np.testing.assert_allclose(table.stationary, expect, rtol=1e-14)


@pytest.mark.parametrize("E, N, k", [(1, 6, 1), (5, 6, 1), (6, 6, 0), (7, 6, 1), (3, 6, 3),
                                     (4, 6, 2), (8, 6, 2), (9, 7, 2), (24, 24, 0), (13, 24, 11)])
def test_engine_order_harmonic(E, N, k):
    assert excited_harmonic(E, N) == k


def test_interference_against_a_solve(table):
    """An engine order's crossing with a branch of the index it excites: at its speed the
    harmonic system has a frequency E Omega (within the linear interpolation's error)."""
    crossings = [c for c in table.interferences(range(1, 7)) if c.speed > 0.0]
    assert crossings, "no interference in the sweep"
    c = crossings[0]
    assert c.harmonic == excited_harmonic(c.order, 6)
    model, *_ = sector_model(6, c.speed, stiffening="prestress")
    w = model.natural_frequencies(n=4, harmonic=c.harmonic, gyroscopic=True)
    assert np.min(np.abs(w - c.order * c.speed)) < 2e-3 * c.order * c.speed


def test_output(table, tmp_path_factory):
    comm = MPI.COMM_WORLD
    d = comm.bcast(str(tmp_path_factory.mktemp("harm")) if comm.rank == 0 else None)
    table.to_csv(f"{d}/t.csv")
    table.plot(f"{d}/c.png", engine_orders=(1, 2))
    mbs.plot.interference(table, f"{d}/z.png", engine_orders=range(1, 5))
    comm.Barrier()
    if comm.rank == 0:
        import csv
        import os

        with open(f"{d}/t.csv") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == table.frequencies.size
        r = rows[-1]
        assert int(r["harmonic"]) == 3
        assert math.isclose(float(r["frequency_rad_s"]), table.frequencies[-1, -1, -1])
        for name in ("c.png", "z.png"):
            assert os.path.getsize(f"{d}/{name}") > 10_000
    with pytest.raises(ValueError, match="speed 1 is not one of the table's speeds"):
        mbs.plot.interference(table, f"{d}/z.png", speed=1.0)
    with pytest.raises(ValueError, match="engine_orders must be positive integers"):
        mbs.plot.interference(table, f"{d}/z.png", engine_orders=[0, 1])
    with pytest.raises(TypeError, match="cyclic Campbell table"):
        mbs.plot.interference(table.tables[0], f"{d}/z.png")
