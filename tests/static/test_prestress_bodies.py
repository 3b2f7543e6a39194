"""Prestress stiffening of models with several bodies (issue 27, items 1 and 4).

* Frames count by their motion, not their identity (``frames.equal_motion``): a cantilever cut
  in two tied halves, the halves in two equal frame objects, has the frequencies of the same
  model with one frame object (1e-10), and both those of the uncut cantilever (a second
  assembly of the same physics).
* Bodies that move differently and are joined by no constraint each have their own steady
  stress: the frequencies of two cantilevers spinning about different axes at different rates
  are those of each cantilever alone in a one-body model.
* Joined bodies that move differently are refused, on every call, with the same error.
* A call that fails leaves nothing behind: the next call fails the same way, and once the
  model is fixed it gives the answer of a model built right from the start; new constraints
  give new prestress fields (a model built with them from the start is the reference).
"""

import dolfinx.mesh as dm
import numpy as np
import pytest
from mpi4py import MPI
from petsc4py import PETSc

import dolfinx_mbs as mbs
from dolfinx_mbs import frames, static
from dolfinx_mbs.constraints import Constraint, Rows
from dolfinx_mbs.frames import ConstantSpin, SpinUp

E, RHO, NU = 70e9, 2700.0, 0.3
L, H = 1.0, 0.02
N_CELLS = 16
SPIN = 300.0      # rad/s: lambda = SPIN / sqrt(EI / rho A L^4) = 7.4, a strong stiffening


def beam(comm, frame, x0=0.0, x1=L, y0=0.0, name=None, stiffening="prestress"):
    """Return a slender square beam along x from x0 to x1, centred on y = y0, z = 0."""
    n = max(1, round(N_CELLS * (x1 - x0) / L))
    mesh = dm.create_box(comm, [np.array([x0, y0 - H / 2, -H / 2]),
                                np.array([x1, y0 + H / 2, H / 2])], [n, 1, 1],
                         dm.CellType.hexahedron)
    return mbs.Body(mesh, mbs.materials.LinearElastic(E=E, nu=NU, density=RHO), frame,
                    degree=2, stiffening=stiffening, name=name)


def at(x0):
    """Return the predicate of the mesh nodes at x = x0."""
    return lambda x: np.isclose(x[0], x0)


def cut_cantilever(comm, frame_a, frame_b):
    """Return the cantilever of length L clamped at x = 0, cut at L/2 into two tied halves."""
    a = beam(comm, frame_a, 0.0, L / 2, name="root")
    b = beam(comm, frame_b, L / 2, L, name="tip")
    model = mbs.Model([a, b])
    model.clamp(a, at(0.0))
    model.tie(a, b, at(L / 2))
    return model


def cantilever(comm, frame, y0=0.0):
    """Return the uncut cantilever clamped at x = 0."""
    body = beam(comm, frame, y0=y0)
    model = mbs.Model([body])
    model.clamp(body, at(0.0))
    return model


def rel(a, b):
    """Return the largest relative difference of ``a`` from ``b``."""
    return float(np.max(np.abs(np.asarray(a) / np.asarray(b) - 1.0)))


# -- frames of equal motion ----------------------------------------------------------------
def _states_equal(f, g, times):
    """Return True when the frames' states agree at ``times``."""
    return all(np.allclose(getattr(f.state(t), k), getattr(g.state(t), k), rtol=1e-13,
                           atol=1e-13)
               for t in times for k in ("R", "r_O", "omega", "alpha", "v_O", "a_O"))


@pytest.mark.serial
def test_equal_motion_follows_the_states():
    """equal_motion is True exactly where the two frames' states agree.

    Checked at five times against the states themselves.
    """
    times = (0.0, 0.13, 0.5, 1.7, 4.0)
    z, y = (0.0, 0.0, 1.0), (0.0, 1.0, 0.0)
    P = mbs.frames.Prescribed(lambda t: mbs.frames.rotation_about(z, t))
    samples = np.linspace(0.0, 5.0, 11)
    pairs_same = [
        (ConstantSpin(z, 3.0), ConstantSpin(z, 3.0)),
        (ConstantSpin(z, 3.0, (1.0, 2.0, 0.0)), ConstantSpin((0, 0, -2.0), -3.0, (1.0, 2.0, 7.0))),
        (ConstantSpin(z, 0.0, (5.0, 0.0, 0.0)), ConstantSpin(y, 0.0)),     # both at rest
        (ConstantSpin(z, 0.0), SpinUp(y, 0.0, 2.0)),
        (SpinUp(z, 4.0, 2.0, (0.5, 0, 0)), SpinUp(z, 4.0, 2.0, (0.5, 0, 3.0))),
        (mbs.frames.Composed(ConstantSpin(z, 3.0), SpinUp(y, 1.0, 1.0)),
         mbs.frames.Composed(ConstantSpin(z, 3.0), SpinUp(y, 1.0, 1.0))),
        (mbs.frames.Composed(ConstantSpin(z, 3.0), ConstantSpin(y, 0.0)), ConstantSpin(z, 3.0)),
        (mbs.frames.Sampled(samples, 0.3 * samples**2), mbs.frames.Sampled(samples,
                                                                          0.3 * samples**2)),
        (P, P),
    ]
    pairs_other = [
        (ConstantSpin(z, 3.0), ConstantSpin(z, 3.5)),
        (ConstantSpin(z, 3.0), ConstantSpin(y, 3.0)),
        (ConstantSpin(z, 3.0), ConstantSpin(z, 3.0, (0.0, 0.1, 0.0))),
        (ConstantSpin(z, 3.0), ConstantSpin((0, 0, -1.0), 3.0)),
        (SpinUp(z, 4.0, 2.0), SpinUp(z, 4.0, 2.5)),
        (SpinUp(z, 3.0, 2.0), ConstantSpin(z, 3.0)),
        (mbs.frames.Sampled(samples, 0.3 * samples**2), mbs.frames.Sampled(samples,
                                                                          0.31 * samples**2)),
    ]
    for f, g in pairs_same:
        assert frames.equal_motion(f, g) and frames.equal_motion(g, f), (f, g)
        assert _states_equal(f, g, times), (f, g)
    for f, g in pairs_other:
        assert not frames.equal_motion(f, g) and not frames.equal_motion(g, f), (f, g)
        assert not _states_equal(f, g, times), (f, g)
    # callables cannot be compared: only the object itself
    Q = mbs.frames.Prescribed(lambda t: mbs.frames.rotation_about(z, t))
    assert _states_equal(P, Q, times) and not frames.equal_motion(P, Q)
    # parameters are read when asked: a frame changed later is another motion
    f, g = ConstantSpin(z, 3.0), ConstantSpin(z, 3.0)
    g.rate = 4.0
    assert not frames.equal_motion(f, g)


# -- equal frames count as one ---------------------------------------------------------------
def test_joined_bodies_are_found_through_the_constraints():
    """Three bodies: two tied, one clamped alone.

    On 2 ranks the tie's rows and the columns they share lie on different ranks.
    """
    comm = MPI.COMM_WORLD
    f = ConstantSpin(rate=SPIN)
    a, b = beam(comm, f, 0.0, L / 2), beam(comm, f, L / 2, L)
    c = beam(comm, f, y0=0.5)
    model = mbs.Model([a, c, b])
    model.clamp(a, at(0.0))
    model.clamp(c, at(0.0))
    assert static.joined_bodies(model.reducer, model.space) == [[0], [1], [2]]
    model.tie(a, b, at(L / 2))
    assert static.joined_bodies(model.reducer, model.space) == [[0, 2], [1]]


def test_equal_frame_objects_give_the_one_object_result():
    """Two equal frame objects give the frequencies of one object.

    The cut cantilever in one frame object, in two equal objects, and in two objects of the
    same motion written differently (axis and rate reversed, another point of the axis): the
    same frequencies to 1e-10. The uncut cantilever (one mesh, no tie) agrees to 1e-8, and
    the prestress raised the first flapwise frequency (mode 2) more than 2.5 times above the
    Euler-Bernoulli cantilever's.
    """
    comm = MPI.COMM_WORLD
    one = ConstantSpin(rate=SPIN)
    ref = cut_cantilever(comm, one, one).natural_frequencies(n=4)
    two = cut_cantilever(comm, ConstantSpin(rate=SPIN), ConstantSpin(rate=SPIN))
    other = cut_cantilever(comm, ConstantSpin(rate=SPIN),
                           ConstantSpin(axis=(0, 0, -1), rate=-SPIN, origin=(0, 0, 0.3)))
    for model in (two, other):
        assert rel(model.natural_frequencies(n=4), ref) < 1e-10
    uncut = cantilever(comm, ConstantSpin(rate=SPIN)).natural_frequencies(n=4)
    assert rel(ref, uncut) < 1e-8, (ref, uncut)
    # flapwise without stiffening: 3.5160 sqrt(EI / rho A L^4) (Euler-Bernoulli)
    assert ref[1] > 2.5 * 3.5160 * np.sqrt(E * H**2 / (12 * RHO * L**4))


def test_equal_spin_up_frames_during_the_ramp():
    """Time-varying frames: two equal SpinUp objects give the one-object frequencies.

    A tie between them has constant rows; in the middle of the ramp and after it, to 1e-10.
    """
    comm = MPI.COMM_WORLD
    one = SpinUp(final_rate=SPIN, ramp_time=1.0)
    ref = cut_cantilever(comm, one, one)
    two = cut_cantilever(comm, SpinUp(final_rate=SPIN, ramp_time=1.0),
                         SpinUp(final_rate=SPIN, ramp_time=1.0))
    assert not two.reducer.rheonomic
    for t in (0.5, 2.0):
        assert rel(two.natural_frequencies(t=t, n=4), ref.natural_frequencies(t=t, n=4)) < 1e-10


# -- bodies moving differently -------------------------------------------------------------
def test_bodies_in_different_motions_have_their_own_prestress():
    """Bodies moving differently, joined by no constraint, have their own prestress.

    A cantilever spinning about z at 300 rad/s and one about y at 200 rad/s through another
    point, each clamped to its own frame: the two-body model's frequencies are those of the
    two one-body models together (1e-8), and differ from the frequencies without stiffening.
    """
    comm = MPI.COMM_WORLD
    fa = ConstantSpin(axis=(0.0, 0.0, 1.0), rate=SPIN)
    fb = ConstantSpin(axis=(0.0, 1.0, 0.0), rate=200.0, origin=(0.0, 0.0, -0.1))
    a, b = beam(comm, fa, name="a"), beam(comm, fb, y0=0.5, name="b")
    model = mbs.Model([a, b])
    model.clamp(a, at(0.0))
    model.clamp(b, at(0.0))
    n = 6
    both = model.natural_frequencies(n=n)
    alone = np.sort(np.concatenate([
        cantilever(comm, ConstantSpin(axis=(0.0, 0.0, 1.0), rate=SPIN)).natural_frequencies(n=n),
        cantilever(comm, ConstantSpin(axis=(0.0, 1.0, 0.0), rate=200.0,
                                      origin=(0.0, 0.0, -0.1)), y0=0.5).natural_frequencies(
                                          n=n)]))[:n]
    assert rel(both, alone) < 1e-8, (both, alone)
    # again (nothing changed by the first call), and the unstiffened model is another one
    assert rel(model.natural_frequencies(n=n), both) < 1e-12
    for body in (a, b):
        body.stiffening = None
    plain = mbs.Model([a, b])
    plain.clamp(a, at(0.0))
    plain.clamp(b, at(0.0))
    assert rel(plain.natural_frequencies(n=n), both) > 0.1


class ElementFrame(mbs.frames.Frame):
    """The frame fixed in ``parent`` with the constant axes ``Q`` and origin ``d``.

    Its state written out here (R Q, r_O + R d, Q^T omega, ...; test_element_frames.py has
    the same).
    """

    def __init__(self, parent, Q, d):
        """Carry ``parent`` by ``Q`` and ``d`` (parent components)."""
        self.parent, self.Q, self.d = parent, np.asarray(Q, float), np.asarray(d, float)
        self.time_invariant = parent.time_invariant

    def state(self, t):
        """Return the state at ``t`` from the parent's."""
        p, Q, d = self.parent.state(t), self.Q, self.d
        wd = np.cross(p.omega, d)
        return mbs.frames.FrameState(
            t=t, R=p.R @ Q, r_O=p.r_O + p.R @ d, omega=Q.T @ p.omega, alpha=Q.T @ p.alpha,
            v_O=Q.T @ (p.v_O + wd),
            a_O=Q.T @ (p.a_O + np.cross(p.alpha, d) + np.cross(p.omega, wd)))


def parts(on_axis):
    """Return the parts: x-range in the body frame, the element frame's axes Q and origin d.

    With ``on_axis`` the origins are on the spin axis z.
    """
    ds = [(0.1, -0.2, 0.05), (0.4, 0.0, -0.3)]
    if on_axis:
        ds = [(0.0, 0.0, z) for _, _, z in ds]
    return [(0.0, 0.25, mbs.frames.rotation_about((1, 2, 3), 0.7), ds[0]),
            (0.25, 0.5, mbs.frames.rotation_about((0, 1, 0), -1.3), ds[1]),
            (0.5, L, np.eye(3), (0.0, 0.0, 0.0))]


GRAVITY = (2000.0, -500.0, 1000.0)    # m/s^2: large enough to show in the frequencies


def element_frame_cantilever(comm, parent, on_axis):
    """Return the cantilever cut in three parts, two in element frames of ``parent``.

    The parts are tied with constant rows (same_motion=True); the model has gravity.
    """
    PARTS = parts(on_axis)
    parts_ = []
    for k, (x0, x1, Q, d) in enumerate(PARTS):
        b = beam(comm, ElementFrame(parent, Q, d), x0, x1, name=f"part{k}")
        x = b.mesh.geometry.x
        x[:] = (x - np.asarray(d)) @ Q      # rows: Q^T (X - d), the part's coordinates
        parts_.append(b)
    model = mbs.Model(parts_, gravity=GRAVITY)

    def body_x(k, x0):
        Q, d = PARTS[k][2], np.asarray(PARTS[k][3])
        return lambda x: np.isclose((Q @ x + d[:, None])[0], x0)

    model.clamp(parts_[0], body_x(0, 0.0))
    for k in (1, 2):
        xc = PARTS[k][0]
        model.tie(parts_[k - 1], parts_[k], where=body_x(k - 1, xc), where_b=body_x(k, xc),
                  same_motion=True)
    return model


@pytest.mark.parametrize("spin_up", [False, True], ids=["constant", "ramp"])
def test_element_frames_pass_the_prestress_between_them(spin_up):
    """Joined bodies in frames of one rigid motion seen in other axes (element frames).

    The cantilever in one frame against the same cantilever cut in three parts, two of them
    meshed in element frames (rotated axes, shifted origins), tied with constant rows, with
    gravity: the prestressed frequencies agree to 1e-8, at a steady spin (origins off the
    axis: they accelerate) and in the middle of a spin-up ramp. Each part's prestress is its
    own loads' plus the other parts' loads passed through the ties, weighted by the other
    frames' states; without them the frequencies differ by more than 1 %.

    On the ramp the origins are on the spin axis: the prestress takes the origin's
    acceleration but not the Euler load alpha x X, so with alpha != 0 it depends on where a
    frame's origin is (alpha x d moves between the two), for one body as for several.
    """
    comm = MPI.COMM_WORLD
    t = 0.5 if spin_up else 0.0

    def parent():
        return SpinUp(final_rate=SPIN, ramp_time=1.0) if spin_up else ConstantSpin(rate=SPIN)

    whole = cantilever(comm, parent())
    whole.bodies[0].set_gravity(GRAVITY)
    ref = whole.natural_frequencies(t=t, n=4)
    cut = element_frame_cantilever(comm, parent(), on_axis=spin_up)
    assert not cut.reducer.rheonomic
    got = cut.natural_frequencies(t=t, n=4)
    assert rel(got, ref) < 1e-8, (got, ref)
    assert any(k[0] == "carried" for k in cut.bodies[0].prestress_fields)
    # the parts' own loads alone (at the next state: the geometric stiffness is combined
    # anew there): the ties' forces are what the carried cases add
    for b, o in zip(cut.bodies, cut.assembly.body_operators):
        for k in [k for k in b.prestress_fields if k[0] == "carried"]:
            b.prestress_fields[k].x.array[:] = 0.0
        o.set_prestress()
    t2 = t + 1e-3
    assert rel(cut.natural_frequencies(t=t2, n=4), whole.natural_frequencies(t=t2, n=4)) > 0.01


def test_joined_bodies_moving_differently_are_refused_on_every_call():
    """Joined bodies in frames of different motion are refused on every call.

    The cut cantilever with its halves in frames of different rates: every call raises the
    same NotImplementedError naming both bodies (the first used to raise and the second to
    return frequencies without prestress).
    """
    comm = MPI.COMM_WORLD
    model = cut_cantilever(comm, ConstantSpin(rate=SPIN), ConstantSpin(rate=0.9 * SPIN))
    errors = []
    for _ in range(3):
        with pytest.raises(NotImplementedError) as e:
            model.natural_frequencies(n=4)
        errors.append(str(e.value))
    assert errors[0] == errors[1] == errors[2]
    assert "'root' and 'tip' are joined" in errors[0]
    with pytest.raises(NotImplementedError, match="'root' and 'tip' are joined"):
        model.solve_static()


def test_a_frame_changed_after_the_solve_is_refused():
    """A frame changed after the prestress solve is refused on every call.

    Two equal frame objects of joined bodies, their prestress solved as one motion; one
    frame's rate changed afterwards: every call raises (not a silent stale prestress).
    """
    comm = MPI.COMM_WORLD
    fb = ConstantSpin(rate=SPIN)
    model = cut_cantilever(comm, ConstantSpin(rate=SPIN), fb)
    model.natural_frequencies(n=2)
    fb.rate = 0.9 * SPIN
    for _ in range(2):
        with pytest.raises(NotImplementedError, match="no longer are"):
            model.natural_frequencies(n=2)


# -- a failed call leaves nothing behind ---------------------------------------------------
def test_a_failed_prestress_solve_fails_again_then_recovers():
    """A failed prestress solve fails again, and the fixed model gives the right answer.

    The static solver's options ask for one iteration of unpreconditioned CG: the unit
    prestress solve does not converge and every call raises the same RuntimeError (the second
    used to return frequencies without prestress). With the options removed and the solver
    made again, the model gives the frequencies of a model that never failed (1e-10).
    """
    comm = MPI.COMM_WORLD
    opts = PETSc.Options()
    bad = {"mbs_static_ksp_type": "cg", "mbs_static_pc_type": "none",
           "mbs_static_ksp_max_it": 1}
    model = cantilever(comm, ConstantSpin(rate=SPIN))
    errors = []
    try:
        for k, v in bad.items():
            opts[k] = v
        for _ in range(2):
            with pytest.raises(RuntimeError, match="prestress solve failed") as e:
                model.natural_frequencies(n=4)
            errors.append(str(e.value))
    finally:
        for k in bad:
            opts.delValue(k)
    assert errors[0] == errors[1]
    model.static.destroy()
    ref = cantilever(comm, ConstantSpin(rate=SPIN)).natural_frequencies(n=4)
    assert rel(model.natural_frequencies(n=4), ref) < 1e-10


def test_new_constraints_give_new_prestress_fields():
    """Constraints added after a solve give new prestress fields.

    A cantilever at 100 rad/s solved, then held axially at its tip too: its bending
    frequencies change through the prestress only (the axial hold leaves the bending
    boundary conditions of the cantilever). They equal those of a model built with both
    constraints (1e-10), and differ from the cantilever's by more than 1 % (the unit fields
    are solved again and their stiffness reassembled, not kept from the first solve).
    """
    comm = MPI.COMM_WORLD

    def model_with(tip):
        """Return the cantilever, held axially at its tip with ``tip``."""
        m = cantilever(comm, ConstantSpin(rate=100.0))
        if tip:
            m.clamp(m.bodies[0], at(L), components=[0])
        return m

    model = model_with(False)
    cantilevered = model.natural_frequencies(n=2)
    model.clamp(model.bodies[0], at(L), components=[0])
    held = model.natural_frequencies(n=2)
    ref = model_with(True).natural_frequencies(n=2)
    assert rel(held, ref) < 1e-10, (held, ref)
    assert rel(held, cantilevered) > 0.01, (held, cantilevered)


class TurningTip(Constraint):
    """u_y - c(t) u_z = 0 at one node, c(t) = 1 + 0.1 t: rows whose coefficient changes."""

    name = "turning tip"
    time_dependent = True

    def __init__(self, comm, uy, uz):
        """Tie the full dofs ``uy`` and ``uz``."""
        self.comm, self.uy, self.uz = comm, uy, uz

    def rows(self, space, t):
        """Return the row on rank 0 (rows are gathered from every rank)."""
        if self.comm.rank != 0:
            return Rows.empty(self.name)
        coef = np.array([[1.0, 0.0, 0.0], [-(1.0 + 0.1 * t), -0.1, 0.0]])
        return Rows(self.name, np.array([0, 2]), np.array([self.uy, self.uz]), coef,
                    np.zeros((1, 3)), np.array([-1]), rheonomic=True)


def test_time_dependent_constraint_coefficients_are_refused_on_every_call():
    """Rows whose coefficients change in time are refused on every call.

    A cantilever whose tip's y and z displacements are tied by a coefficient c(t): the unit
    fields, solved with the constraints' basis at one time, would not hold at another.
    """
    comm = MPI.COMM_WORLD
    model = cantilever(comm, ConstantSpin(rate=SPIN))
    body = model.bodies[0]
    tip = (L, H / 2, H / 2)
    model.constrain(TurningTip(comm, model.dof(body, tip, 1), model.dof(body, tip, 2)))
    assert model.reducer.rheonomic
    errors = []
    for _ in range(2):
        with pytest.raises(NotImplementedError) as e:
            model.natural_frequencies(n=2)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "change in time: turning tip" in errors[0]
