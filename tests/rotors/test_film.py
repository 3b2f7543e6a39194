"""The oil film of a plain journal bearing (dolfinx_mbs.rotors.film): the Reynolds equation
against the short-bearing (Ocvirk) and long-bearing (Sommerfeld) closed forms, Raimondi and
Boyd's table for the Reynolds condition, Petroff's torque; the exact linearization against
central differences of the film's force; bad input. The film is replicated on every rank:
under mpirun every rank's numbers are the same and pass the same closed forms."""

import logging
import math

import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.rotors.film import short_bearing
from tests.models.journal_rotor import C, D, MU, SPEED, friswell, ocvirk_force

R = D / 2


def same_on_every_rank(x):
    """The film is replicated: every rank has the same numbers, bit for bit."""
    got = MPI.COMM_WORLD.allgather(np.asarray(x, dtype=float))
    assert all(np.array_equal(got[0], g) for g in got)


def test_short_bearing_limit():
    """Half-Sommerfeld forces converge to Ocvirk's as (L/D)^2: the difference shrinks by
    about 4 per halving of L/D and is within 0.5 % at L/D = 1/32 for eps = 0.1 ... 0.7."""
    eps = (0.1, 0.4, 0.7)
    diff = []
    for LD in (1 / 8, 1 / 16, 1 / 32):
        film = mbs.rotors.PlainJournal(D, LD * D, C, MU, cavitation="half-sommerfeld",
                                       cells=(64, 8))
        row = []
        for e in eps:
            s = film.force((0.0, -e * C), speed=SPEED, derivatives=False)
            ref = ocvirk_force(LD * D, e)
            row.append(np.linalg.norm(s.force - ref) / np.linalg.norm(ref))
            same_on_every_rank(s.force)
        diff.append(row)
    diff = np.array(diff)
    assert np.all(diff[-1] < 5e-3), diff
    ratio = diff[:-1] / diff[1:]
    assert np.all((ratio > 3.6) & (ratio < 4.4)), ratio


def test_short_bearing_equilibrium_and_coefficients():
    """At L/D = 1/32 the equilibrium under the short bearing's load for eps = 0.1 ... 0.7 has
    Ocvirk's eccentricity and attitude (1e-3, 0.05 degrees), and the eight coefficients are
    Friswell's (1 % of the matrices' norms: half-Sommerfeld's cut cells converge as O(h))."""
    L = D / 32
    film = mbs.rotors.PlainJournal(D, L, C, MU, cavitation="half-sommerfeld", cells=(64, 8))
    s = MU * SPEED * R * L ** 3 / C ** 2
    for e in (0.1, 0.3, 0.5, 0.7):
        load = s / 4 * e / (1 - e * e) ** 2 * math.sqrt(math.pi ** 2 * (1 - e * e) + 16 * e * e)
        eq = film.equilibrium((0.0, -load), SPEED)
        e0, phi0 = short_bearing(D, L, C, MU, load, SPEED)
        assert abs(e0 - e) < 1e-9
        assert abs(eq.eccentricity - e) < 1e-3
        assert abs(math.degrees(eq.attitude - phi0)) < 0.05
        assert eq.min_film == pytest.approx(C * (1 - eq.eccentricity))
        K0, C0 = friswell(e0, load, SPEED)
        K, Cb = film.coefficients((0.0, -load), SPEED)
        assert np.linalg.norm(K - K0) < 1e-2 * np.linalg.norm(K0), (e, K, K0)
        assert np.linalg.norm(Cb - C0) < 1e-2 * np.linalg.norm(C0), (e, Cb, C0)
        same_on_every_rank(np.concatenate([K.ravel(), Cb.ravel()]))


def test_long_bearing_limit():
    """The full (Sommerfeld) film at L/D = 16: its mid-plane pressure is Sommerfeld's profile
    to 1e-3 of the peak, and the load stays some 6 % below the infinitely long bearing's."""
    L = 16 * D
    film = mbs.rotors.PlainJournal(D, L, C, MU, cavitation="none", cells=(64, 32))
    for e in (0.3, 0.7):
        s = film.force((0.0, -e * C), speed=SPEED, derivatives=False)
        eq_p = film.film.pressure_copy()
        xy = film.film.V.tabulate_dof_coordinates()
        mid = np.abs(xy[:, 1]) < 1e-12
        t = xy[mid, 0] - math.pi / 2        # from the largest film thickness
        ref = 6 * MU * SPEED * (R / C) ** 2 * e * np.sin(t) * (2 + e * np.cos(t)) / \
            ((2 + e * e) * (1 + e * np.cos(t)) ** 2)
        assert np.abs(eq_p.x.array[mid] - ref).max() < 1e-3 * np.abs(ref).max()
        long = 12 * math.pi * MU * SPEED * R * L * (R / C) ** 2 * e / \
            ((2 + e * e) * math.sqrt(1 - e * e))
        assert 0.92 < np.linalg.norm(s.force) / long < 0.97
        assert abs(s.force[1]) < 1e-9 * abs(s.force[0])   # all across the line of centres


def test_reynolds_condition_raimondi_boyd():
    """The Reynolds (Swift-Stieber) film at L/D = 1 against Raimondi and Boyd's table (1958)
    at eps = 0.6 and 0.8: Sommerfeld's number within 1 % (0.3 % found), the attitude within
    1.5 degrees (1.4 and 0.55 found). The table's film starts at the largest thickness, the
    VI's film reforms where its equation says: at small eps, where the pressure starts near
    that line anyway, the two differ by some 2 % and 4 degrees."""
    film = mbs.rotors.PlainJournal(D, D, C, MU, cavitation="reynolds")
    for e, S0, phi0 in ((0.6, 0.121, 50.58), (0.8, 0.0446, 36.24)):
        s = film.force((0.0, -e * C), speed=SPEED, derivatives=False)
        W = np.linalg.norm(s.force)
        S = (R / C) ** 2 * MU * SPEED / (2 * math.pi) * D * D / W
        phi = math.degrees(math.acos(s.force[1] / W))
        assert abs(S / S0 - 1) < 1e-2, (e, S, S0)
        assert abs(phi - phi0) < 1.5, (e, phi, phi0)
        assert 0.2 < s.cavitated < 0.5
        assert film.film.P.x.array.min() >= 0.0   # the bound holds at every node


@pytest.mark.parametrize("cavitation", ["reynolds", "half-sommerfeld", "none"])
def test_linearization_is_the_derivative(cavitation):
    """K = -dF/dx and C = -dF/dx' from the perturbation equations are the derivatives of the
    discrete film's force: central differences of the force (steps 1e-5 c, 1e-5 c * speed)
    agree to 1e-5 of the matrices' norms, at a state with a velocity."""
    film = mbs.rotors.PlainJournal(D, 0.5 * D, C, MU, cavitation=cavitation, cells=(48, 8))
    x0, v0 = np.array([0.2, -0.45]) * C, np.array([0.05, 0.03]) * C * SPEED
    st = film.force(x0, v0, SPEED)
    h, hv = 1e-5 * C, 1e-5 * C * SPEED
    K, Cd = np.zeros((2, 2)), np.zeros((2, 2))
    for j in range(2):
        d = np.eye(2)[j]
        K[:, j] = -(film.force(x0 + h * d, v0, SPEED, False).force
                    - film.force(x0 - h * d, v0, SPEED, False).force) / (2 * h)
        Cd[:, j] = -(film.force(x0, v0 + hv * d, SPEED, False).force
                     - film.force(x0, v0 - hv * d, SPEED, False).force) / (2 * hv)
    assert np.linalg.norm(st.stiffness - K) < 1e-5 * np.linalg.norm(K)
    assert np.linalg.norm(st.damping - Cd) < 1e-5 * np.linalg.norm(Cd)


def test_petroff_and_equilibrium_force_balance():
    """At eps = 0 the friction torque is Petroff's 2 pi mu Omega R^3 L / c; at an equilibrium
    the film's force balances the load to 1e-10 and the attitude is in the sense of the spin
    (and mirrored for the opposite spin)."""
    L = 0.5 * D
    film = mbs.rotors.PlainJournal(D, L, C, MU)
    s = film.force((0.0, 0.0), speed=SPEED, torque=True)
    assert s.torque == pytest.approx(2 * math.pi * MU * SPEED * R ** 3 * L / C, rel=1e-9)
    load = np.array([0.0, -2000.0])
    eq = film.equilibrium(load, SPEED)
    F = film.force(eq.position, speed=SPEED, derivatives=False).force
    assert np.linalg.norm(F + load) < 1e-10 * 2000.0
    assert eq.position[0] > 0.0 and 0.0 < eq.attitude < math.pi / 2
    assert eq.pressure.x.array.max() > 0.0 and eq.pressure.x.array.min() >= 0.0
    assert eq.power_loss == pytest.approx(eq.friction_torque * SPEED)
    back = film.equilibrium(load, -SPEED)
    assert back.position[0] == pytest.approx(-eq.position[0], rel=1e-8)
    assert back.position[1] == pytest.approx(eq.position[1], rel=1e-8)
    assert film.equilibrium(load, SPEED) is eq   # kept
    kc = film.loaded(load)                       # K(speed), C(speed): a bearing's table
    assert np.array_equal(kc.K(SPEED), eq.stiffness) and np.array_equal(kc.C(SPEED), eq.damping)


def test_bad_input_names_the_bearing(caplog):
    """A clearance <= 0, a NaN viscosity, a load the film cannot carry, a journal at the wall
    and a load at rest are refused with the bearing's name; a thin film warns."""
    with pytest.raises(ValueError, match="journal bearing 'jb'.*clearance"):
        mbs.rotors.PlainJournal(D, D, 0.0, MU, name="jb")
    with pytest.raises(ValueError, match="journal bearing 'jb'.*viscosity"):
        mbs.rotors.PlainJournal(D, D, C, float("nan"), name="jb")
    with pytest.raises(ValueError, match="cavitation"):
        mbs.rotors.PlainJournal(D, D, C, MU, cavitation="gumbel")
    film = mbs.rotors.PlainJournal(D, 0.5 * D, C, MU, name="jb")
    with pytest.raises(ValueError, match="journal bearing 'jb' cannot carry the load"):
        film.equilibrium((0.0, -1e7), SPEED)
    with pytest.raises(ValueError, match="journal bearing 'jb': the journal touches"):
        film.force((0.0, -C), speed=SPEED)
    with pytest.raises(ValueError, match="journal bearing 'jb': a film at rest"):
        film.coefficients((0.0, -2000.0), 0.0)
    with pytest.raises(ValueError, match="journal bearing 'jb': load"):
        film.equilibrium((0.0, float("nan")), SPEED)
    eq = film.equilibrium((0.0, -2000.0), SPEED)   # nothing left behind by the failures
    assert 0.0 < eq.eccentricity < 0.9
    with caplog.at_level(logging.WARNING):
        film.equilibrium((0.0, -1.5e5), SPEED)
    assert "thin film" in caplog.text and "'jb'" in caplog.text


def test_sensitivities_by_ufl_diff():
    """The perturbation equations' right-hand sides the film forms from its operator's
    polynomial in the position are the residual's derivatives that ``ufl.diff`` gives
    (forms.film.sensitivities): A P_j = -dR/dX_j, -dR/dV_j at a state, to 1e-10."""
    import ufl
    from dolfinx import fem

    from dolfinx_mbs import compat
    from dolfinx_mbs.assembly.body_loads import assembled
    from dolfinx_mbs.forms import film as FF

    jb = mbs.rotors.PlainJournal(D, 0.5 * D, C, MU, cavitation="none", cells=(24, 4))
    f = jb.film
    f.state(np.array([0.2, -0.4]), np.array([0.3, 0.1]), SPEED, True)
    f._set_pressure()
    dx = ufl.Measure("dx", domain=f.mesh, metadata={"quadrature_degree": 2 * jb.degree + 4})
    sens = FF.sensitivities(f.P, ufl.TestFunction(f.V), ufl.SpatialCoordinate(f.mesh), f.X,
                            f.Vel, f.speed, f.R, dx)
    for j, form in enumerate(sens["position"] + sens["velocity"]):
        cf = fem.form(form)
        s = assembled(compat.create_vector(cf), cf)
        sr = f.Pm.createVecRight()
        f.Pm.multTranspose(s, sr)
        y = sr.duplicate()
        f.Ar.mult(f.dxr[j], y)
        y.axpy(1.0, sr)
        assert y.norm() < 1e-10 * sr.norm(), j
