"""Element frames with Maggi assembly (seeds 000 and 002): one elastic body cut into parts, each
meshed in its own frame (the same rigid motion, other constant axes Q_e and origin d_e: mesh
coordinates X_e = Q_e^T (X - d_e), displacements in the part's components), the parts tied at
every shared node. Its Maggi-reduced operators, frequencies and transient response equal the
uncut body's in one frame (a second formulation of the same physics): 2D with a moving origin
and theta'' != 0, and a general 3D motion."""

import numpy as np
import pytest
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.frames import Frame, FrameState, rotation_about

L, H, W = 1.0, 0.1, 0.05
ALU = dict(E=70e9, nu=0.3, density=2700.0)
T_STATE = 0.7          # where the operators and frequencies are compared
T0, DT, STEPS = 0.5, 2e-4, 20     # the transient


class ElementFrame(Frame):
    """The frame of one part: fixed in the body's frame ``parent`` with the constant axes ``Q``
    and origin ``d`` (parent components): R_e = R Q, r_e = r_O + R d, and in the part's
    components omega_e = Q^T omega, alpha_e = Q^T alpha, v_e = Q^T (v_O + omega x d),
    a_e = Q^T (a_O + alpha x d + omega x (omega x d)), exactly from the parent's state."""

    def __init__(self, parent, Q, d):
        self.parent, self.Q, self.d = parent, np.asarray(Q, float), np.asarray(d, float)
        self.time_invariant = parent.time_invariant

    def state(self, t):
        p, Q, d = self.parent.state(t), self.Q, self.d
        wd = np.cross(p.omega, d)
        return FrameState(t=t, R=p.R @ Q, r_O=p.r_O + p.R @ d, omega=Q.T @ p.omega,
                          alpha=Q.T @ p.alpha, v_O=Q.T @ (p.v_O + wd),
                          a_O=Q.T @ (p.a_O + np.cross(p.alpha, d) + np.cross(p.omega, wd)))


def parent_frame(dim):
    if dim == 2:
        return mbs.frames.Planar(theta=lambda t: 0.7 * t**2 + 0.2 * t + 0.3 * np.sin(3 * t),
                                 origin=lambda t: (0.2 * np.cos(2 * t), 0.1 * t**2))
    Rz = lambda t: rotation_about((0, 0, 1), 0.8 * t**2)  # noqa: E731
    Rx = lambda t: rotation_about((1, 0.5, 0), 0.3 * np.sin(2 * t))  # noqa: E731
    return mbs.frames.Prescribed(rotation=lambda t: Rz(t) @ Rx(t),
                                 origin=lambda t: (0.3 * np.cos(t), 0.2 * t**2, np.sin(3 * t)))


# parts: x-range in cells of the uncut mesh, constant axes Q_e and origin d_e in the body frame
N_CELLS = 6
CUTS = [(0, 2), (2, 4), (4, 6)]


def part_axes(dim):
    if dim == 2:
        Qs = [rotation_about((0, 0, 1), a) for a in (0.4, -1.1, 2.5)]
        ds = [(0.0, 0.0, 0.0), (0.3, 0.07, 0.0), (-0.2, 0.5, 0.0)]
    else:
        Qs = [rotation_about(ax, a) for ax, a in
              (((1, 2, 3), 0.7), ((0, 1, 0), -1.3), ((-1, 0.2, 0.5), 2.9))]
        ds = [(0.1, -0.2, 0.05), (0.4, 0.0, -0.3), (0.0, 0.6, 0.2)]
    return [np.asarray(Q) for Q in Qs], [np.asarray(d, float) for d in ds]


def block(comm, dim, i0, i1):
    x0, x1 = L * i0 / N_CELLS, L * i1 / N_CELLS
    if dim == 2:
        return dmesh.create_rectangle(comm, [np.array([x0, 0.0]), np.array([x1, H])],
                                      [i1 - i0, 1], dmesh.CellType.quadrilateral)
    return dmesh.create_box(comm, [np.array([x0, 0.0, 0.0]), np.array([x1, H, W])],
                            [i1 - i0, 2, 1], dmesh.CellType.hexahedron)


def material(dim):
    if dim == 2:
        return mbs.materials.PlaneStress(thickness=0.02, **ALU)
    return mbs.materials.LinearElastic(**ALU)


GRAVITY = (0.0, -9.81, 3.0)
DEGREE = {2: 2, 3: 1}


def uncut(comm, dim):
    b = mbs.Body(block(comm, dim, 0, N_CELLS), material(dim), parent_frame(dim),
                 degree=DEGREE[dim], name="whole")
    model = mbs.Model([b], gravity=GRAVITY[:2] + (0.0,) if dim == 2 else GRAVITY)
    model.clamp(b, lambda x: np.isclose(x[0], 0.0))
    return model


def to_body(Q, d):
    """x (3, n) in a part's coordinates -> the body frame's: Q x + d."""
    return lambda x: Q @ x + d[:, None]


def cut(comm, dim):
    """The same body as three parts in element frames, tied at the shared nodes."""
    parent = parent_frame(dim)
    Qs, ds = part_axes(dim)
    parts = []
    for k, ((i0, i1), Q, d) in enumerate(zip(CUTS, Qs, ds)):
        msh = block(comm, dim, i0, i1)
        x = msh.geometry.x
        x[:] = (x - d) @ Q      # rows: Q^T (X - d)
        parts.append(mbs.Body(msh, material(dim), ElementFrame(parent, Q, d),
                              degree=DEGREE[dim], name=f"part{k}"))
    model = mbs.Model(parts, gravity=GRAVITY[:2] + (0.0,) if dim == 2 else GRAVITY)
    model.clamp(parts[0], lambda x: np.isclose(to_body(Qs[0], ds[0])(x)[0], 0.0))
    for k in range(1, len(parts)):
        xc = L * CUTS[k][0] / N_CELLS
        model.tie(parts[k - 1], parts[k],
                  where=lambda x, k=k: np.isclose(to_body(Qs[k - 1], ds[k - 1])(x)[0], xc),
                  where_b=lambda x, k=k: np.isclose(to_body(Qs[k], ds[k])(x)[0], xc),
                  same_motion=True)
    return model, Qs, ds


@pytest.fixture(scope="module", params=[2, 3], ids=["2d", "3d"])
def pair(request):
    comm = MPI.COMM_WORLD
    dim = request.param
    return dim, uncut(comm, dim), cut(comm, dim)


def fields(dim):
    """Two smooth displacement fields in the body frame, zero on the clamped face x = 0."""
    def f(X):
        x, y = X[0], X[1]
        z = X[2] if dim == 3 else 0.0 * x
        u = [x * (np.sin(3 * x + 1) + y), x * (np.cos(2 * x) - y * y + z), x * x * (1 + z - y)]
        return np.array(u[:dim])

    def g(X):
        x, y = X[0], X[1]
        z = X[2] if dim == 3 else 0.0 * x
        u = [x * x * (y - 0.5), x * (1 + np.sin(5 * y) + z), x * (0.3 - np.cos(4 * x * y))]
        return np.array(u[:dim])
    return f, g


def full_vector(model, field, axes=None):
    """The full coordinates of a body-frame field: each part's nodes get Q_e^T f(Q_e X_e + d_e)
    (the part's components), the uncut body's f(X)."""
    funcs = []
    for k, b in enumerate(model.bodies):
        fn = fem.Function(b.V)
        dim = b.gdim
        if axes is None:
            fn.interpolate(field)
        else:
            Q, d = axes[0][k], axes[1][k]
            fn.interpolate(lambda x, Q=Q, d=d: Q[:dim, :dim].T @ field(to_body(Q, d)(x)))
        fn.x.scatter_forward()
        funcs.append(fn)
    return model.space.gather([mbs.compat.petsc_vec(fn) for fn in funcs]).copy()


def test_reduced_operators_equal_the_uncut_body(pair):
    """y^T X_r x for X = M, C (Coriolis), K (with k_alpha, k_omega) and f^T x, over the reduced
    coordinates of two body-frame fields, equal the uncut body's to 1e-12 (relative to
    |X_r x| |y|) at a state with omega, alpha, v_O, a_O nonzero."""
    dim, whole, (parts, Qs, ds) = pair
    s = parent_frame(dim).state(T_STATE)
    assert min(np.linalg.norm(w) for w in (s.omega, s.alpha, s.v_O, s.a_O)) > 0.1
    assert abs(s.alpha[2]) > 0.1    # theta'' != 0 in 2D
    assert whole.reducer.n_reduced == parts.reducer.n_reduced
    assert not parts.reducer.time_dependent    # same_motion: constant rows
    f, g = fields(dim)
    worst = 0.0
    ops = []
    for model, axes in ((whole, None), (parts, (Qs, ds))):
        sys_ = model.system("second-order")
        op = sys_.at(T_STATE)
        q = [sys_.restrict(full_vector(model, h, axes)) for h in (f, g)]
        vals = {}
        for key in ("M", "C", "K"):
            A = getattr(op, key)
            for i in range(2):
                Ax = A.createVecLeft()
                A.mult(q[i], Ax)
                for j in range(2):
                    vals[key, i, j] = (Ax.dot(q[j]), Ax.norm() * q[j].norm())
        for i in range(2):
            vals["f", i] = (op.f.dot(q[i]), op.f.norm() * q[i].norm())
        ops.append(vals)
    for k, (a, scale) in ops[0].items():
        e = abs(ops[1][k][0] - a) / scale
        worst = max(worst, e)
        assert e < 1e-12, (k, e)


def test_frequencies_equal_the_uncut_body(pair):
    """Natural frequencies at a moving-frame state (spin softening; and with the Coriolis
    coupling, a quadratic eigenproblem) of the parts in element frames equal the uncut body's
    to 1e-10. (The lowest one is sensitive to round-off as (w_max / w_1)^2: one element
    through the 2D beam's height keeps that ratio where 1e-10 is meaningful.)"""
    dim, whole, (parts, _, _) = pair
    for gyro in (False, True):
        w0 = whole.natural_frequencies(t=T_STATE, n=4, gyroscopic=gyro)
        w1 = parts.natural_frequencies(t=T_STATE, n=4, gyroscopic=gyro)
        assert np.abs(w1 / w0 - 1).max() < 1e-10, (gyro, w0, w1)


def test_transient_equals_the_uncut_body(pair):
    """The response to the frame's motion and gravity from rest (generalized-alpha), at probe
    points of the tip and the middle, turned into the body frame's components, equals the
    uncut body's to 1e-10 of its largest value."""
    dim, whole, (parts, Qs, ds) = pair
    pts = [np.array([L, H, W][:dim]), np.array([0.55 * L, 0.5 * H, 0.0][:dim])]
    where = [2, 1]    # the part holding each point
    r0 = whole.integrate(T0 + STEPS * DT, DT, t0=T0, probes=[tuple(p) for p in pts],
                         progress=False)
    probes = []
    for p, k in zip(pts, where):
        X = np.zeros(3)
        X[:dim] = p
        xe = Qs[k].T @ (X - ds[k])
        probes.append((parts.bodies[k], tuple(xe[:dim])))
    r1 = parts.integrate(T0 + STEPS * DT, DT, t0=T0, probes=probes, progress=False)
    got = np.stack([r1.probes[:, i] @ Qs[k][:dim, :dim].T for i, k in enumerate(where)],
                   axis=1)
    scale = np.abs(r0.probes).max()
    assert scale > 1e-8
    assert np.abs(got - r0.probes).max() < 1e-10 * scale, np.abs(got - r0.probes).max() / scale


def test_same_motion_refuses_frames_in_relative_motion():
    """A tie declared same_motion between frames that rotate relative to each other raises on
    every rank, naming the relative rotation rate; a where_b that is no callable is named."""
    comm = MPI.COMM_WORLD
    a = mbs.Body(block(comm, 2, 0, 2), material(2), mbs.frames.ConstantSpin(rate=10.0),
                 degree=1, name="a")
    b = mbs.Body(block(comm, 2, 2, 4), material(2), mbs.frames.ConstantSpin(rate=0.0),
                 degree=1, name="b")
    model = mbs.Model([a, b])
    on_cut = lambda x: np.isclose(x[0], L * 2 / N_CELLS)  # noqa: E731
    with pytest.raises(ValueError, match="same_motion=True.*relative rotation rate"):
        model.tie(a, b, on_cut, same_motion=True)
    with pytest.raises(TypeError, match="`where_b` must be a callable"):
        model.tie(a, b, on_cut, where_b=0.3)
