"""Bearings between two bodies (a journal and a housing, ``Model.bearing(..., other=)``): the
coupled two-body system against the closed form of two masses on springs, a housing held
rigidly against the same rotor on bearings to the ground, and bad input."""

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

RHO = 7850.0
L_B, A_R, A_H = 0.5, 0.04, 0.08     # the bodies' length; rotor and housing section sides (m)


def _box(side, n_side=1, n_len=4):
    return dmesh.create_box(MPI.COMM_WORLD, [np.array([-side / 2, -side / 2, 0.0]),
                                             np.array([side / 2, side / 2, L_B])],
                            [n_side, n_side, n_len], dmesh.CellType.hexahedron)


def _frame(kind):
    if kind == "stationary":  # square sections are not axisymmetric: the speed is 0 here
        return mbs.frames.Stationary((0, 0, 1), 0.0, check="off")
    return mbs.frames.Ground((0, 0, 1))


def _end(z):
    return lambda x: np.isclose(x[2], z)


def rotor_in_housing(rotor_frame="stationary", housing_frame="ground", swap=False, kb=1e6,
                     cb=0.0, kg=4e6):
    """A square rotor in a square housing (P1 hexahedra, E 1000 times steel's: both nearly
    rigid), tied at both end faces by bearings kb (x, y and z alike, damping cb) to the
    housing, which stands on bearings kg to the ground at its end faces. ``swap``: each
    bearing given from the housing's side (journal on the housing, other= the rotor)."""
    law = mbs.materials.LinearElastic(E=210e12, nu=0.3, density=RHO)
    rotor = mbs.Body(_box(A_R), law, _frame(rotor_frame), degree=1, name="rotor")
    house = mbs.Body(_box(A_H), law, _frame(housing_frame), degree=1, name="housing")
    model = mbs.Model([rotor, house])
    for z in (0.0, L_B):
        inner, outer = (house, rotor) if swap else (rotor, house)
        model.bearing(inner, where=_end(z), other=outer, other_where=_end(z), kxx=kb, kyy=kb,
                      kzz=kb, cxx=cb, cyy=cb, czz=cb)
        model.bearing(house, where=_end(z), kxx=kg, kyy=kg, kzz=kg)
    return model


def two_masses(m1, m2, k1, k2, c1=0.0):
    """The eigenvalues (upper half-plane) of m1 x1'' + c1 (x1' - x2') + k1 (x1 - x2) = 0,
    m2 x2'' + c1 (x2' - x1') + k1 (x2 - x1) + k2 x2 = 0 (companion form)."""
    M = np.diag([m1, m2])
    K = np.array([[k1, -k1], [-k1, k1 + k2]])
    C = np.array([[c1, -c1], [-c1, c1]])
    A = np.block([[np.zeros((2, 2)), np.eye(2)],
                  [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    lam = np.linalg.eigvals(A)
    return lam[lam.imag > 0]


@pytest.mark.parametrize("rotor_frame, housing_frame, swap, reduced", [
    ("stationary", "ground", False, False), ("stationary", "ground", True, False),
    ("stationary", "stationary", False, False), ("ground", "ground", False, False),
    ("stationary", "ground", False, True)])
def test_rotor_in_a_housing_against_two_masses(rotor_frame, housing_frame, swap, reduced):
    """Two nearly rigid bodies, a rotor tied to a housing by bearings kb, cb at both ends and
    the housing on bearings kg to the ground, at rest: the 10 lowest modes are the rigid
    motions' two-mass systems, m_r, m_h with 2 kb, 2 cb and 2 kg for the translations (x, y
    and, with kzz = kb, z: each eigenvalue three times) and the inertias J = m (L^2 + s^2) / 12
    with 2 kb L^2 / 4, 2 cb L^2 / 4 and 2 kg L^2 / 4 for the tilts (twice). Complex
    eigenvalues to 2e-5: the bodies' elasticity (E 1000 times steel's: their first bending is
    30 times the highest of these) shifts them by ~1e-5. The same for each pair of frames
    accepted, with the journal given on either body, and with the housing reduced
    (Craig-Bampton, 12 modes: the model's basis, not the reduced-basis combinations, carries
    the bearings' blocks; measured 5e-7 from the full model)."""
    kb, cb, kg = 1e6, 60.0, 4e6
    model = rotor_in_housing(rotor_frame, housing_frame, swap, kb, cb, kg)
    if reduced:
        model.reduce(model.bodies[1], modes=12)
    res = model.modes(n=10)   # damped complex modes (the bearings' damping)
    mr, mh = RHO * A_R**2 * L_B, RHO * A_H**2 * L_B
    jr, jh = mr * (L_B**2 + A_R**2) / 12, mh * (L_B**2 + A_H**2) / 12
    q = L_B**2 / 4
    ref = np.concatenate([np.tile(two_masses(mr, mh, 2 * kb, 2 * kg, 2 * cb), 3),
                          np.tile(two_masses(jr, jh, 2 * kb * q, 2 * kg * q, 2 * cb * q), 2)])
    lam = np.asarray(res.eigenvalues)
    lam = lam[np.argsort(lam.imag)]
    ref = ref[np.argsort(ref.imag)]
    assert np.all(np.abs(lam - ref) < 2e-5 * np.abs(ref)), (lam, ref)
    # the damping across the bodies: the log decs of the closed form (to the same 2e-5 of
    # the eigenvalue: the growth rate is 1e-2 of it here, so 2e-3 of itself)
    assert np.allclose(lam.real, ref.real, rtol=2e-3, atol=0), (lam.real, ref.real)


def test_time_integration_of_a_rotor_in_a_housing():
    """Gravity across the axis applied at t = 0 to the rotor in its housing at rest,
    integrated in time (the default stepper): each body's mean displacement across the axis
    against the two masses' equations m_r x_r'' = m_r g - 2 kb (x_r - x_h) - 2 cb (x_r' -
    x_h'), m_h x_h'' = m_h g + 2 kb (x_r - x_h) + 2 cb (x_r' - x_h') - 2 kg x_h integrated by
    scipy, over 2.4 periods of the higher mode, to 3e-3 of the largest value (the scheme's
    period error at 80 steps per period, 1e-3 measured)."""
    from scipy.integrate import solve_ivp

    kb, cb, kg, g = 1e6, 60.0, 4e6, 9.81
    model = rotor_in_housing("stationary", "ground", False, kb, cb, kg)
    for body in model.bodies:
        body.set_gravity((g, 0.0, 0.0))
    space, comm = model.space, MPI.COMM_WORLD
    hist = []

    def record(t, u, v):
        a = u.getArray(readonly=True)
        row = [t]
        for ib in range(2):  # the mean of the nodes' x: the body's translation (rigid)
            x = a[space.offsets[ib]:space.offsets[ib + 1]][0::3]
            row.append(comm.allreduce(float(x.sum())) / comm.allreduce(x.size))
        hist.append(row)

    t_end = 0.02
    model.integrate(t_end=t_end, dt=1e-4, callback=record, energy=False)
    h = np.array(hist)
    mr, mh = RHO * A_R**2 * L_B, RHO * A_H**2 * L_B
    M = np.diag([mr, mh])
    K = np.array([[2 * kb, -2 * kb], [-2 * kb, 2 * kb + 2 * kg]])
    C = 2 * cb * np.array([[1.0, -1.0], [-1.0, 1.0]])
    F = np.array([mr * g, mh * g])

    def rhs(t, y):
        return np.concatenate([y[2:], np.linalg.solve(M, F - K @ y[:2] - C @ y[2:])])

    ref = solve_ivp(rhs, (0.0, t_end), np.zeros(4), t_eval=h[:, 0], rtol=1e-11, atol=1e-16)
    for j in range(2):
        err = np.abs(h[:, 1 + j] - ref.y[j]).max() / np.abs(ref.y[j]).max()
        assert err < 3e-3, (j, err)


# -- a housing held rigidly is the ground -------------------------------------------------------
L_J, R_J = 0.6, 0.02


def shaft_rotor(housed):
    """A steel shaft (P2 tetrahedra) in a stationary frame, on a bearing at each end face:
    anisotropic, cross-coupled and damped, the cross-coupling and one damping tabulated over
    the speed; to the ground, or (``housed``) to a box housing in a Ground frame whose every
    node is clamped."""
    mesh, _, facets = meshes.shaft(MPI.COMM_WORLD, L_J, R_J, 0.02)
    law = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=RHO)
    rotor = mbs.Body(mesh, law, mbs.frames.Stationary((0, 0, 1), 0.0), degree=2, name="rotor")
    bodies = [rotor]
    if housed:
        hm = dmesh.create_box(MPI.COMM_WORLD, [np.array([-0.05, -0.05, 0.0]),
                                               np.array([0.05, 0.05, L_J])], [1, 1, 2],
                              dmesh.CellType.hexahedron)
        house = mbs.Body(hm, law, mbs.frames.Ground((0, 0, 1)), degree=1, name="housing")
        bodies.append(house)
    model = mbs.Model(bodies)
    speeds = [0.0, 3000.0]
    for tag, z in ((meshes.BEARING_A, 0.0), (meshes.BEARING_B, L_J)):
        kw = dict(kxx=2e7, kyy=3e7, kxy=[0.0, 6e6], kyx=[0.0, -6e6], cxx=[400.0, 900.0],
                  cyy=500.0, cxy=50.0, speeds=speeds, ktilt=1e4, ctilt=2.0)
        if housed:
            kw.update(other=house, other_where=_end(z))
        model.bearing(rotor, facets=(facets, tag), **kw)
    if housed:
        model.clamp(house, lambda x: np.full(x.shape[1], True))
    return model


def test_a_housing_held_rigidly_is_the_ground():
    """The same rotor on the same bearings to the ground and to a housing whose every node is
    clamped (d_B = 0: the bearing's force is the ground bearing's): the damped Campbell
    diagram's eigenvalues over a sweep whose tables change with the speed (the sweep's
    combined pencil and its speed terms) and the unbalance response to 1e-7 (the solvers'
    tolerances, 1e-10 on the eigenpairs' residuals and 1e-9 on the response's; the matrices are
    assembled on different paths: the bearing's blocks in the body's matrices or in the
    full ones)."""
    speeds = np.array([0.0, 1500.0, 3000.0])
    out = []
    for housed in (False, True):
        model = shaft_rotor(housed)
        tab = model.campbell(speeds, n=4)
        bearing = model.bodies[0].attachments[0]
        resp = model.unbalance_response(speeds[1:], unbalances=[((0.0, 0.0, 0.3), 1e-4, 0.3)],
                                        probes=[bearing, (0.0, 0.0, 0.45)], refine=False)
        out.append((tab.eigenvalues, tab.log_dec, resp.response))
    (l0, d0, r0), (l1, d1, r1) = out
    assert np.all(np.abs(l1 - l0) < 1e-7 * np.abs(l0)), np.abs(l1 / l0 - 1).max()
    assert np.allclose(d1, d0, rtol=1e-6, atol=1e-9), (d0, d1)
    assert np.all(np.abs(r1 - r0) < 1e-7 * np.abs(r0).max()), np.abs(r1 - r0).max()
    # the tables were read: the cross-coupling destabilises the forward whirl at speed
    assert np.any(np.abs(l0[-1].real - l0[0].real) > 1e-3 * np.abs(l0[0].real))


# -- bad input ------------------------------------------------------------------------------------
def test_bad_input_is_refused_and_leaves_the_model_unchanged():
    """Each refusal names the argument, on every rank, and leaves the model as it was: its
    modes after the refused calls are those before."""
    model = rotor_in_housing()
    rotor, house = model.bodies
    before = model.campbell([0.0], n=4).eigenvalues
    held = [(list(b.attachments), list(b.housings)) for b in model.bodies]
    law = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=RHO)
    stranger = mbs.Body(_box(A_H), law, mbs.frames.Ground(), degree=1, name="stranger")
    with pytest.raises(ValueError, match="other= body 'stranger' is not part of this model"):
        model.bearing(rotor, where=_end(0.0), other=stranger, other_where=_end(0.0), kxx=1.0)
    with pytest.raises(ValueError, match="other= is the journal's own body 'rotor'"):
        model.bearing(rotor, where=_end(0.0), other=rotor, other_where=_end(L_B), kxx=1.0)
    with pytest.raises(TypeError, match="other= must be an elastic Body"):
        model.bearing(rotor, where=_end(0.0), other="housing", other_where=_end(0.0), kxx=1.0)
    with pytest.raises(TypeError, match="other_facets= and other_where= give the housing"):
        model.bearing(rotor, where=_end(0.0), other_where=_end(0.0), kxx=1.0)
    with pytest.raises(ValueError, match=r"its housing on body 'housing' .* holds no facet"):
        model.bearing(rotor, where=_end(0.0), other=house, other_where=lambda x: x[2] > 9.0,
                      kxx=1.0)
    with pytest.raises(ValueError, match="exactly one of facets"):
        model.bearing(rotor, where=_end(0.0), other=house, kxx=1.0)
    with pytest.raises(ValueError, match="does not spin, so its coefficients cannot follow"):
        model.bearing(house, where=_end(0.0), speeds=[0.0, 1.0], kxx=[1.0, 2.0])
    # frames: both at rest with a table, a rotating frame, a moving frame, two rotors about
    # different axes (new bodies: a body belongs to one model)
    for frame, match in ((mbs.frames.Ground(), "neither spins .* speed table"),
                         (mbs.frames.ConstantSpin((0, 0, 1), 0.0), "in a ConstantSpin frame"),
                         (mbs.frames.Prescribed(lambda t: np.eye(3)), "in a Prescribed frame"),
                         (mbs.frames.Stationary((0, 0, 1), 0.0, origin=(0.1, 0.0, 0.0),
                                                check="off"), "frames' axes differ")):
        kind = "ground" if "neither" in match else "stationary"
        first = mbs.Body(_box(A_R), law, _frame(kind), degree=1, name="first")
        other = mbs.Body(_box(A_H), law, frame, degree=1, name="other")
        two = mbs.Model([first, other])
        with pytest.raises(ValueError, match=match):
            two.bearing(first, where=_end(0.0), other=other, other_where=_end(0.0),
                        speeds=[0.0, 1.0], kxx=[1.0, 2.0])
        assert not first.attachments and not other.housings
    assert [(list(b.attachments), list(b.housings)) for b in model.bodies] == held
    after = model.campbell([0.0], n=4).eigenvalues
    assert np.array_equal(after, before) or np.allclose(after, before, rtol=1e-12)


def test_a_restart_is_refused_with_other_bearings(tmp_path):
    """A checkpoint of the rotor in its housing is continued by the same model and refused,
    on every rank, by one whose bearing stiffness or axial stiffness differs, naming the
    bearing's coefficient (the checkpoint's model digest records each bearing's numbers)."""
    d = MPI.COMM_WORLD.bcast(str(tmp_path) if MPI.COMM_WORLD.rank == 0 else None)
    stem = f"{d}/run"

    def run(kb=1e6, kg=4e6, **kw):
        model = rotor_in_housing("stationary", "ground", False, kb, 60.0, kg)
        for body in model.bodies:
            body.set_gravity((9.81, 0.0, 0.0))
        return model.integrate(t_end=kw.pop("t_end", 4e-4), dt=1e-4, output=stem,
                               checkpoint_every=2, energy=False, progress=False, **kw)

    run()
    for kw, what in ((dict(kb=2e6), r"body 'rotor': its bearing \(attachment 0\) (extra|table)"),
                     (dict(kg=5e6), r"body 'housing': its bearing \(attachment 0\) "
                                    r"(extra|table)")):
        with pytest.raises(ValueError, match=r"written by another model.*" + what):
            run(t_end=6e-4, restart=True, **kw)
    r = run(t_end=6e-4, restart=True)
    assert r.restarted_from == pytest.approx(4e-4) and r.times[-1] == pytest.approx(6e-4)
