"""A sector against the whole wheel meshed as one body (docs/theory.md section 10): the
wheel's spectrum is the union over the harmonic indices of the sector's (each 0 < k < N/2 as
a pair), at rest and spinning with prestress and Coriolis; its static state is the k = 0
sector's; an expanded mode is a mode of the wheel."""

import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.wheels import sector_model, union_below, wheel_model


def _per_harmonic(model, sector, n, gyroscopic):
    return {k: model.natural_frequencies(n=n, harmonic=k, gyroscopic=gyroscopic)
            for k in sector.harmonics}


@pytest.mark.parametrize("n_sectors, rate, stiff", [(6, 0.0, None), (7, 2500.0, "prestress"),
                                                    (6, 3000.0, "nonlinear")])
def test_spectrum_is_the_wheels(n_sectors, rate, stiff):
    """Every frequency of the whole wheel below the sector lists' common top, to 1e-8; at
    rest (N even: k = N/2 on one copy) and spinning with Coriolis, stiffened by the prestress
    (N odd) or by nonlinear strain about the cyclic equilibrium (N even)."""
    spin = rate != 0.0
    model, body, sector, msh = sector_model(n_sectors, rate, stiffening=stiff)
    per_k = _per_harmonic(model, sector, 6, spin)
    union, cut = union_below(per_k, n_sectors)
    wheel = mbs.cyclic.WheelMesh(msh, sector)
    wmodel, _ = wheel_model(wheel, rate, stiffening=stiff)
    whole = wmodel.natural_frequencies(n=len(union) + 2, gyroscopic=spin)
    assert len(union) >= 2 * n_sectors          # every harmonic index takes part
    assert np.all(whole[len(union):] > cut * (1 + 1e-9))
    np.testing.assert_allclose(whole[: len(union)], union, rtol=1e-8)
    # each 0 < k < N/2 of the wheel is a pair: two equal frequencies at rest, split spinning
    w1 = per_k[1]
    if spin:
        assert np.all(np.abs(w1[0::2] - w1[1::2]) > 1e-6 * w1[0::2])
    else:
        np.testing.assert_allclose(w1[0::2], w1[1::2], rtol=1e-9)


def test_static_state_is_the_wheels():
    """The k = 0 problem (the model's own constraints) gives the whole wheel's centrifugal
    deflection: compared at points of sector 0 and, turned, of sector 3."""
    rate = 3000.0
    model, body, sector, msh = sector_model(6, rate)
    u, = model.solve_static()
    wheel = mbs.cyclic.WheelMesh(msh, sector)
    wmodel, _ = wheel_model(wheel, rate)
    uw, = wmodel.solve_static()
    pts = np.array([[0.1 * np.cos(0.3), 0.1 * np.sin(0.3), 0.005],
                    [0.14 * np.cos(0.9), 0.14 * np.sin(0.9), 0.002]])
    us = mbs.io.evaluate(u, pts)
    R = sector.rotation(3)
    uw0 = mbs.io.evaluate(uw, pts)
    uw3 = mbs.io.evaluate(uw, pts @ R.T)
    scale = np.abs(us).max()
    assert scale > 1e-7
    np.testing.assert_allclose(uw0, us, atol=1e-9 * scale)
    np.testing.assert_allclose(uw3, us @ R.T, atol=1e-9 * scale)


@pytest.mark.parametrize("k", [2, 3])
def test_expanded_mode_is_a_wheel_mode(k):
    """A sector's complex mode of harmonic index k, spinning with Coriolis, expanded to the
    whole wheel satisfies the wheel's own equations (lambda^2 M + lambda G + K) x = 0 (at the
    free dofs), to 1e-6 of K x: the eigensolver's accuracy (a wrong phase or turn of a
    sector leaves a residual of the order of K x)."""
    rate = 2500.0
    model, body, sector, msh = sector_model(6, rate, degree=1)
    m = model.modes(n=2, harmonic=k, shapes=True)
    wheel = mbs.cyclic.WheelMesh(msh, sector)
    wmodel, wbody = wheel_model(wheel, rate, degree=None)
    system = wmodel.system()
    K, G, M = system.pencil(0.0, 1, "gyroscopic")
    red = system.reducer
    for lam, shape in zip(m.eigenvalues, m.shapes):
        (re, im), = model.expand(shape, harmonic=k)
        x = [red.restrict(mbs.compat.petsc_vec(f)) for f in (re, im)]
        Kx = [K.createVecLeft() for _ in x]
        r = [K.createVecLeft() for _ in x]
        # (lambda^2 M + lambda G + K)(xr + i xi) with lambda = a + i b, split in parts
        a, b = lam.real, lam.imag
        y = K.createVecLeft()
        for part, (xa, xb, sb) in enumerate(((x[0], x[1], -1.0), (x[1], x[0], 1.0))):
            K.mult(xa, Kx[part])
            r[part].array[:] = Kx[part].array
            M.mult(xa, y)
            r[part].axpy(a * a - b * b, y)
            M.mult(xb, y)
            r[part].axpy(sb * 2 * a * b, y)
            G.mult(xa, y)
            r[part].axpy(a, y)
            G.mult(xb, y)
            r[part].axpy(sb * b, y)
        res = np.hypot(r[0].norm(), r[1].norm())
        ref = np.hypot(Kx[0].norm(), Kx[1].norm())
        assert ref > 0.0
        assert res <= 1e-6 * ref, (k, lam, res / ref)


def test_travelling_direction_is_the_wheels():
    """The direction the sector's Campbell table gives each wave of harmonic index k
    (forward: along the spin) is the one the whole wheel's own complex mode shows: its
    axial displacement at theta + alpha lags by d k alpha."""
    rate = 4000.0
    n_sectors = 6
    model, body, sector, msh = sector_model(n_sectors, rate, stiffening="prestress")
    table = model.campbell([rate], n=4, harmonics=[1, 2])
    wheel = mbs.cyclic.WheelMesh(msh, sector)
    wmodel, _ = wheel_model(wheel, rate, stiffening="prestress")
    wm = wmodel.modes(n=20, shapes=True)
    p0 = np.array([[0.13 * np.cos(0.4), 0.13 * np.sin(0.4), 0.01]])
    p1 = sector.turn(p0)
    a = sector.angle
    checked = 0
    for ik, k in enumerate(table.harmonic):
        for j in range(table.n_modes):
            d = table.travelling[0, ik, j]
            w = table.frequencies[0, ik, j]
            gap = np.abs(wm.frequencies - w)
            i = int(np.argmin(gap))
            near = np.sort(gap)[1]
            if d == 0 or gap[i] > 1e-7 * w or near < 1e-4 * w:
                continue
            re, im = wm.shapes[i][0]
            z0 = complex(*(mbs.io.evaluate(f, p0)[0, 2] for f in (re, im)))
            z1 = complex(*(mbs.io.evaluate(f, p1)[0, 2] for f in (re, im)))
            if abs(z0) < 1e-3 * np.abs(np.array([z0, z1])).max(initial=1.0):
                continue
            lag = np.angle(z1 / z0)
            expect = np.angle(np.exp(-1j * d * k * a))
            assert abs(np.angle(np.exp(1j * (lag - expect)))) < 1e-3, (k, j, d, lag, expect)
            checked += 1
    assert checked >= 4


def test_free_wheel():
    """An unclamped wheel: the rigid motions each harmonic index leaves free (k = 0: the turn
    about the axis and the shift along it; k = 1: the shifts across it and the tilts, on the
    two copies) are deflated, and the elastic frequencies are the free whole wheel's."""
    from tests.models.wheels import HIGH, LOW, RADII, STEEL, THICKNESS, annular_sector

    msh, tags = annular_sector(6, (3, 2, 1), RADII, THICKNESS)
    sector = mbs.cyclic.Sector(6, low=(tags, LOW), high=(tags, HIGH))
    steel = mbs.materials.LinearElastic(**STEEL)
    body = mbs.Body(msh, steel, mbs.frames.ConstantSpin(rate=0.0), degree=2, cyclic=sector)
    model = mbs.Model([body])
    per_k = _per_harmonic(model, sector, 4, False)
    union, _ = union_below(per_k, 6)
    wheel = mbs.cyclic.WheelMesh(msh, sector)
    whole = mbs.Model([mbs.Body(wheel.mesh, steel, mbs.frames.ConstantSpin(rate=0.0),
                                degree=2)]).natural_frequencies(n=len(union))
    np.testing.assert_allclose(whole, union, rtol=1e-8)


def test_two_bodies_tied():
    """A sector made of two bodies (an inner and an outer ring, each a sector with its own cut
    faces) tied at r = 0.1 has the frequencies of the one-body sector with the same nodes, for
    every harmonic index, spinning with prestress and Coriolis: the tie's rows hold on both
    copies."""
    from tests.models.wheels import HIGH, LOW, STEEL, THICKNESS, annular_sector

    rate, n = 2000.0, 6
    steel = mbs.materials.LinearElastic(**STEEL)
    bodies = []
    for name, radii, cells in (("inner", (0.05, 0.1), (2, 2, 1)),
                               ("outer", (0.1, 0.15), (2, 2, 1))):
        msh, tags = annular_sector(n, cells, radii, THICKNESS)
        sector = mbs.cyclic.Sector(n, low=(tags, LOW), high=(tags, HIGH))
        bodies.append(mbs.Body(msh, steel, mbs.frames.ConstantSpin(rate=rate), degree=2,
                               stiffening="prestress", cyclic=sector, name=name))
    model = mbs.Model(bodies)
    model.clamp(bodies[0], lambda x: np.hypot(x[0], x[1]) <= 0.05 + 1e-9)
    # the interface's dof nodes (those between its nodes lie inside r = 0.1, on straight edges)
    model.tie(bodies[0], bodies[1], lambda x: np.abs(np.hypot(x[0], x[1]) - 0.1) < 0.004)
    one, *_ = sector_model(n, rate, cells=(4, 2, 1), stiffening="prestress")
    for k in range(n // 2 + 1):
        w2 = model.natural_frequencies(n=6, harmonic=k, gyroscopic=True)
        w1 = one.natural_frequencies(n=6, harmonic=k, gyroscopic=True)
        np.testing.assert_allclose(w2, w1, rtol=1e-8)
