"""Constraints between meshes and bodies through the Maggi reducer: ties, pins and sliders
between bodies in different frames, prescribed motion, DirichletBC objects, general rows,
reactions; checked against the uncut body, closed forms, the Lagrange-multiplier form and a
second process count."""

import dolfinx.mesh as dm
import numpy as np
import pytest
from dolfinx import fem
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.rodmodel import ROD, axial_rod

ALU = dict(E=70e9, nu=0.3, density=2700.0)


def _block(comm, x0, x1, n, dim):
    if dim == 3:
        return dm.create_box(comm, [np.array([x0, 0.0, 0.0]), np.array([x1, 0.1, 0.05])],
                             [n, 2, 1], dm.CellType.hexahedron)
    return dm.create_rectangle(comm, [np.array([x0, 0.0]), np.array([x1, 0.1])], [n, 2],
                               dm.CellType.quadrilateral)


def _material(dim):
    if dim == 3:
        return mbs.materials.LinearElastic(**ALU)
    return mbs.materials.PlaneStress(thickness=0.02, **ALU)


def _cantilever(comm, dim, cut):
    """A spinning cantilever, whole or cut at x = 0.5 into two meshes tied together."""
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=40.0, origin=(-0.3, 0.0, 0.0))
    mat = _material(dim)
    if not cut:
        b = mbs.Body(_block(comm, 0.0, 1.0, 8, dim), mat, frame, degree=2, name="whole")
        model = mbs.Model([b])
        model.clamp(b, lambda x: np.isclose(x[0], 0.0))
        tip = b
    else:
        a = mbs.Body(_block(comm, 0.0, 0.5, 4, dim), mat, frame, degree=2, name="a")
        b = mbs.Body(_block(comm, 0.5, 1.0, 4, dim), mat, frame, degree=2, name="b")
        model = mbs.Model([a, b])
        model.clamp(a, lambda x: np.isclose(x[0], 0.0))
        model.tie(a, b, lambda x: np.isclose(x[0], 0.5))
        tip = b
    force = (0.0, 200.0, 50.0)[:dim]
    model.apply_load(tip, point=(1.0, 0.1) + ((0.05,) if dim == 3 else ()),
                     force=lambda t: np.array(force) * min(t / 2e-3, 1.0))
    return model, tip


@pytest.mark.parametrize("dim", [2, 3])
def test_tied_cut_body_equals_uncut(dim):
    comm = MPI.COMM_WORLD
    whole, tw = _cantilever(comm, dim, cut=False)
    cut, tc = _cantilever(comm, dim, cut=True)
    assert cut.reducer.n_reduced == whole.reducer.n_reduced
    w0 = whole.natural_frequencies(n=6, gyroscopic=True)
    w1 = cut.natural_frequencies(n=6, gyroscopic=True)
    assert np.max(np.abs(w1 / w0 - 1)) < 1e-8, (w0, w1)
    p = [(1.0, 0.1) + ((0.05,) if dim == 3 else ()), (0.75, 0.05) + ((0.0,) if dim == 3 else ())]
    r0 = whole.integrate(4e-3, 1e-4, probes=[(tw, x) for x in p], progress=False)
    r1 = cut.integrate(4e-3, 1e-4, probes=[(tc, x) for x in p], progress=False)
    scale = np.abs(r0.probes).max()
    assert scale > 1e-7
    assert np.abs(r1.probes - r0.probes).max() < 1e-8 * scale


def test_chained_and_redundant_constraints_are_resolved():
    """Clamping the bottom face of both halves makes the tie's rows on that face redundant;
    declared in either order the result equals the uncut body clamped on the same face."""
    comm = MPI.COMM_WORLD
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=20.0)
    mat = _material(3)
    whole = mbs.Body(_block(comm, 0.0, 1.0, 8, 3), mat, frame, degree=1, name="whole")
    ref = mbs.Model([whole])
    ref.clamp(whole, lambda x: np.isclose(x[1], 0.0))
    w_ref = ref.natural_frequencies(n=4)
    a = mbs.Body(_block(comm, 0.0, 0.5, 4, 3), mat, frame, degree=1, name="a")
    b = mbs.Body(_block(comm, 0.5, 1.0, 4, 3), mat, frame, degree=1, name="b")
    # interface nodes on the clamped face y = 0 (P1 box, 1 cell thick: 2 nodes), 3 comps each
    n_shared = 2 * 3
    for order in ("tie-first", "tie-last"):
        model = mbs.Model([a, b])
        if order == "tie-first":
            model.tie(a, b, lambda x: np.isclose(x[0], 0.5))
        model.clamp(a, lambda x: np.isclose(x[1], 0.0))
        model.clamp(b, lambda x: np.isclose(x[1], 0.0))
        if order == "tie-last":
            model.tie(a, b, lambda x: np.isclose(x[0], 0.5))
        w = model.natural_frequencies(n=4)
        assert np.max(np.abs(w / w_ref - 1)) < 1e-10
        red = model.reducer.redundancy()
        assert sum(red.values()) == n_shared, red
        (name, by), = red.keys()
        if order == "tie-first":
            assert name == "clamp(b)" and set(by) == {"tie(a,b)", "clamp(a)"}
        else:
            assert name == "tie(a,b)" and set(by) == {"clamp(a)", "clamp(b)"}


def test_inconsistent_constraints_raise_everywhere():
    comm = MPI.COMM_WORLD
    frame = mbs.frames.ConstantSpin(rate=0.0)
    body = mbs.Body(_block(comm, 0.0, 1.0, 4, 2), _material(2), frame, degree=1, name="p")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0), name="support")
    model.prescribe(body, (1e-3, 0.0), where=lambda x: np.isclose(x[0], 0.0), name="shaker")
    with pytest.raises(ValueError, match="'shaker' contradicts 'support'"):
        model.reducer


def test_clamp_reaction_balances_centrifugal_load():
    """Seed 003's rod at Omega = 0.5 w1: the hub reaction is -EA u'(0) = -EA (1/cos kL - 1)."""
    E, A, L, rho = ROD["E"], ROD["A"], ROD["L"], ROD["rho"]
    w1 = np.pi / 2 * np.sqrt(E / rho) / L
    om = 0.5 * w1
    model, body = axial_rod(MPI.COMM_WORLD, 10, om, dim=3)
    model.solve_static()
    hub = model.constraints[0]
    R = model.reactions()[hub.name]
    k = om * np.sqrt(rho / E)
    exact = -E * A * (1.0 / np.cos(k * L) - 1.0)
    assert abs(R[0] / exact - 1) < 1e-6, (R, exact)
    # Lagrange multipliers: the same displacement and the same hub force
    u_m = model.space.gather([mbs.compat.petsc_vec(body.u)]).copy()
    sp = model.saddle_point
    u_l, _ = sp.solve_static()
    assert np.abs(u_l.getArray() - u_m.getArray()).max() <= 1e-10 * u_m.norm(3)
    Rl = model.reactions(sp.constraint_forces(0.0, sp.solution), constraints=[hub])[hub.name]
    assert abs(Rl[0] / exact - 1) < 1e-6, (Rl, exact)


def _linkage(comm, n_crank=6, n_coupler=18):
    """Slider-crank: an elastic crank (driven, clamped at its hub in its rotating frame) pinned
    to an elastic coupler whose frame follows the rigid mechanism; the coupler's far end slides
    on the ground x-axis. The pin and the slider are rheonomic."""
    r, l, w = 0.1, 0.3, 0.01
    om = 2 * np.pi * 5

    def strip(L, n):
        return dm.create_rectangle(comm, [np.array([0.0, -w / 2]), np.array([L, w / 2])],
                                   [n, 2], dm.CellType.quadrilateral)

    mat = mbs.materials.PlaneStress(thickness=0.01, **ALU)
    th = lambda t: om * t  # noqa: E731
    crank_frame = mbs.frames.Planar(theta=th, time_scale=0.01)
    tip = lambda t: np.array([r * np.cos(th(t)), r * np.sin(th(t))])  # noqa: E731
    phi = lambda t: np.arcsin(-r * np.sin(th(t)) / l)  # noqa: E731
    coupler_frame = mbs.frames.Planar(theta=phi, origin=tip, time_scale=0.01)
    crank = mbs.Body(strip(r, n_crank), mat, crank_frame, degree=2, name="crank")
    coupler = mbs.Body(strip(l, n_coupler), mat, coupler_frame, degree=2, name="coupler")
    model = mbs.Model([crank, coupler])
    model.clamp(crank, lambda x: np.isclose(x[0], 0.0), name="motor")
    pin = model.pin(crank, coupler, (r, 0.0))
    slider = model.slider(coupler, (r + l, 0.0), (1.0, 0.0))
    return model, coupler, pin, slider


def test_rheonomic_joints_converge_to_multiplier_solution():
    """Maggi's equations with the A-dot/A-ddot terms and the saddle-point form (which uses
    B(t) itself) are two discretizations of one DAE: they approach each other as dt^2."""
    model, coupler, pin, slider = _linkage(MPI.COMM_WORLD)
    assert model.reducer.rheonomic
    diffs, rdiffs = [], []
    for dt in (2e-4, 1e-4):
        out = {}
        for cons in ("maggi", "multipliers"):
            out[cons] = model.integrate(0.01, dt, constraints=cons, probes=[(coupler, (0.15, 0.0))],
                                        reactions=[pin, slider], progress=False)
        a, b = out["maggi"], out["multipliers"]
        diffs.append(np.abs(a.probes - b.probes).max() / np.abs(a.probes).max())
        rdiffs.append(np.abs(a.reactions[pin.name] - b.reactions[pin.name]).max()
                      / np.abs(a.reactions[pin.name]).max())
        # the slider pushes normal to its axis only
        assert np.abs(a.reactions[slider.name][:, 0]).max() < 1e-9 * np.abs(
            a.reactions[slider.name][:, 1]).max()
    assert diffs[-1] < 1e-6
    assert diffs[0] / diffs[1] > 2.5, diffs   # second order
    assert rdiffs[0] / rdiffs[1] > 2.5, rdiffs


def test_linkage_world_equals_self():
    res = []
    for comm in (MPI.COMM_WORLD, MPI.COMM_SELF):
        model, coupler, pin, slider = _linkage(comm)
        r = model.integrate(4e-3, 2e-4, probes=[(coupler, (0.15, 0.0)), (coupler, (0.3, 0.0))],
                            reactions=[pin], progress=False)
        res.append((r.probes, r.reactions[pin.name]))
    (p1, r1), (p2, r2) = res
    assert np.abs(p1 - p2).max() <= 1e-10 * np.abs(p2).max()
    assert np.abs(r1 - r2).max() <= 1e-8 * np.abs(r2).max()


def _shaken_rod():
    """Seed 003's rod (2D, 8 elements, spinning at 0.2 w1) whose root is moved axially by
    u(0, t) = U sin^3(w t), w = 0.7 w1; sin^3 starts with zero velocity and acceleration,
    consistent with the rod at rest. Returns (model, body, U)."""
    E, L, rho = ROD["E"], ROD["L"], ROD["rho"]
    w1 = np.pi / 2 * np.sqrt(E / rho) / L
    _, body = axial_rod(MPI.COMM_WORLD, 8, 0.2 * w1, dim=2)
    model = mbs.Model([body])
    U, w = 1e-4, 0.7 * w1
    model.prescribe(body, lambda t: (U * np.sin(w * t) ** 3, 0.0),
                    where=lambda x: np.isclose(x[0], 0.0), components=[0], time_scale=0.1 / w,
                    name="shaker")
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=[1], name="guide")
    return model, body, U


def test_prescribed_motion_equals_multipliers():
    """Base excitation u(0, t) = U sin^3(w t) of seed 003's rod: Maggi (a0, a0', a0'' from the
    numerically differentiated motion) and multipliers (which impose u(0, t) itself) approach
    each other as dt^2; with a constant spin the centrifugal terms act on the prescribed
    motion too."""
    model, body, U = _shaken_rod()
    L = ROD["L"]
    diffs = []
    for dt in (4e-6, 2e-6):
        a, b = [model.integrate(1e-3, dt, constraints=c, probes=[(body, (L, 0.0))],
                                spectral_radius=0.9, progress=False)
                for c in ("maggi", "multipliers")]
        assert np.abs(a.probes).max() > U
        diffs.append(np.abs(a.probes - b.probes).max() / U)  # relative to the shaker's stroke
    assert diffs[-1] < 1e-6 and diffs[0] / diffs[1] > 3.0, diffs


def test_dirichletbc_and_rows_match_clamp():
    """A DOLFINx DirichletBC, and general rows that hold an inclined edge on a roller, give
    the frequencies of the equivalent clamp / of the rotated body."""
    comm = MPI.COMM_WORLD
    frame = mbs.frames.ConstantSpin(rate=0.0)
    body = mbs.Body(_block(comm, 0.0, 1.0, 6, 2), _material(2), frame, degree=2, name="p")
    ref = mbs.Model([body])
    ref.clamp(body, lambda x: np.isclose(x[0], 0.0))
    w_ref = ref.natural_frequencies(n=5)
    dofs = fem.locate_dofs_geometrical(body.V, lambda x: np.isclose(x[0], 0.0))
    bc = fem.dirichletbc(np.zeros(2, dtype=mbs.compat.scalar_type), dofs, body.V)
    m2 = mbs.Model([body])
    m2.constrain(bc)
    # both are eigensolves to 1e-12 relative residual: agreement to that order, not exactly
    assert np.max(np.abs(m2.natural_frequencies(n=5) / w_ref - 1)) < 1e-10

    # the same plate rotated by 30 degrees, its edge on rollers normal to n and tangent to t:
    # rows n.u = 0 and t.u = 0 at each edge node: a clamp written in skew components
    c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
    Rm = np.array([[c, -s], [s, c]])
    mesh = _block(comm, 0.0, 1.0, 6, 2)
    mesh.geometry.x[:, :2] = mesh.geometry.x[:, :2] @ Rm.T
    rot = mbs.Body(mesh, _material(2), frame, degree=2, name="rot")
    m3 = mbs.Model([rot])
    ys = np.linspace(0.0, 0.1, 5)  # the edge's P2 nodes (2 cells across)
    rows = []
    for y in ys:
        p = Rm @ np.array([0.0, y])
        d = [m3.dof(rot, p, k) for k in range(2)]
        rows.append({d[0]: c, d[1]: s})
        rows.append({d[0]: -s, d[1]: c})
    m3.constrain(rows, name="skew clamp")
    assert np.max(np.abs(m3.natural_frequencies(n=5) / w_ref - 1)) < 1e-9


def test_moving_constraints_in_every_formulation():
    """Hamilton's form (with its A-dot terms: G_q, K_h and the momentum offset) and the
    first-order form approach the second-order solution as dt^2, for the rheonomic linkage
    and for a prescribed base motion."""
    model, coupler, pin, _ = _linkage(MPI.COMM_WORLD)
    shaken, rod, _ = _shaken_rod()
    L = ROD["L"]
    cases = [(model, (coupler, (0.15, 0.0)), 0.01, (2e-4, 1e-4), ("first-order", "hamiltonian")),
             (shaken, (rod, (L, 0.0)), 1e-3, (4e-6, 2e-6), ("hamiltonian",))]
    for m, probe, t_end, dts, forms in cases:
        diffs = {f: [] for f in forms}
        for dt in dts:
            ref = m.integrate(t_end, dt, probes=[probe], progress=False)
            for f in forms:
                r = m.integrate(t_end, dt, formulation=f, probes=[probe], progress=False)
                diffs[f].append(np.abs(r.probes - ref.probes).max() / np.abs(ref.probes).max())
        for f, d in diffs.items():
            assert d[-1] < 5e-3 and d[0] / d[1] > 2.5, (f, d)


@pytest.mark.parametrize("dim", [2, 3])
def test_maggi_equals_multipliers_for_fixed_constraints(dim):
    """Time-invariant clamp and tie: the reduced system and the saddle point are the same
    discrete equations, so the generalized-alpha histories agree to round-off, and so do the
    clamp reactions (from the full residual vs from the multipliers)."""
    model, tip = _cantilever(MPI.COMM_WORLD, dim, cut=True)
    p = (1.0, 0.1) + ((0.05,) if dim == 3 else ())
    clamp = model.constraints[0]
    a, b = [model.integrate(3e-3, 1e-4, constraints=c, probes=[(tip, p)], reactions=[clamp],
                            progress=False) for c in ("maggi", "multipliers")]
    assert np.abs(a.probes - b.probes).max() < 1e-8 * np.abs(a.probes).max()
    ra, rb = a.reactions[clamp.name][1:], b.reactions[clamp.name][1:]
    assert np.abs(ra - rb).max() < 1e-6 * np.abs(ra).max()


def test_bad_constraint_input_raises_everywhere():
    """Clear errors, on every rank, for the new constraint calls."""
    comm = MPI.COMM_WORLD
    frame = mbs.frames.ConstantSpin(rate=0.0)
    a = mbs.Body(_block(comm, 0.0, 0.5, 4, 2), _material(2), frame, degree=1, name="a")
    b = mbs.Body(_block(comm, 0.5, 1.0, 3, 2), _material(2), frame, degree=1, name="b")
    model = mbs.Model([a, b])
    # a non-matching interface: c's nodes shifted by 1 cm along the cut
    c = mbs.Body(_block(comm, 0.5, 1.0, 3, 2), _material(2), frame, degree=1, name="c")
    c.mesh.geometry.x[:, 1] += 0.01
    m2 = mbs.Model([a, c])
    with pytest.raises(ValueError, match="have no partner"):
        m2.tie(a, c, lambda x: np.isclose(x[0], 0.5))
    with pytest.raises(ValueError, match="selects no node"):
        model.tie(a, b, lambda x: np.isclose(x[0], 7.0))
    with pytest.raises(ValueError, match="must differ"):
        model.tie(a, a, lambda x: np.isclose(x[0], 0.5))
    with pytest.raises(ValueError, match="not at a node"):
        model.pin(a, b, (0.5, 0.0123))
    with pytest.raises(ValueError, match="axis"):
        model.slider(b, (1.0, 0.0), (0.0, 0.0))
    with pytest.raises(ValueError, match="do not fix a rigid motion"):
        model.rigid(a, lambda x: np.isclose(x[0], 0.0) & np.isclose(x[1], 0.0))
    with pytest.raises(ValueError, match="outside"):
        model.constrain([{10**9: 1.0}])
    model.clamp(a, lambda x: np.isclose(x[0], 0.0))
    model.tie(a, b, lambda x: np.isclose(x[0], 0.5))
    with pytest.raises(ValueError, match="constraints must be"):
        model.integrate(1e-3, 1e-4, constraints="penalty", progress=False)
    with pytest.raises(ValueError, match="second-order"):
        model.integrate(1e-3, 1e-4, formulation="hamiltonian", constraints="multipliers",
                        progress=False)
    other = mbs.Model([a]).clamp(a, lambda x: np.isclose(x[0], 0.0), name="elsewhere")
    with pytest.raises(ValueError, match="not a constraint of this model"):
        model.integrate(1e-3, 1e-4, reactions=[other], progress=False)


def _facet_tags(mesh, where, tag):
    fdim = mesh.topology.dim - 1
    mesh.topology.create_connectivity(fdim, fdim + 1)
    idx = np.sort(dm.locate_entities_boundary(mesh, fdim, where)).astype(np.int32)
    return dm.meshtags(mesh, fdim, idx, np.full(idx.shape, tag, dtype=np.int32))


def test_tie_by_facet_tags_equals_uncut_body():
    """The interface given as facet tags of each mesh (as a gmsh physical group gives it):
    the cut cantilever tied on those facets has the uncut body's frequencies."""
    comm = MPI.COMM_WORLD
    whole, _ = _cantilever(comm, 2, cut=False)
    w0 = whole.natural_frequencies(n=6, gyroscopic=True)
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=40.0, origin=(-0.3, 0.0, 0.0))
    mat = _material(2)
    ma, mb = _block(comm, 0.0, 0.5, 4, 2), _block(comm, 0.5, 1.0, 4, 2)
    at_cut = lambda x: np.isclose(x[0], 0.5)  # noqa: E731
    tags_a, tags_b = _facet_tags(ma, at_cut, 7), _facet_tags(mb, at_cut, 3)
    a = mbs.Body(ma, mat, frame, degree=2, name="a")
    b = mbs.Body(mb, mat, frame, degree=2, name="b")
    model = mbs.Model([a, b])
    model.clamp(a, lambda x: np.isclose(x[0], 0.0))
    model.tie(a, b, facets=((tags_a, 7), (tags_b, 3)))
    model.apply_load(b, point=(1.0, 0.1), force=lambda t: np.array((0.0, 200.0)))
    w1 = model.natural_frequencies(n=6, gyroscopic=True)
    assert model.reducer.n_reduced == whole.reducer.n_reduced
    assert np.max(np.abs(w1 / w0 - 1)) < 1e-8, (w0, w1)
    bad = mbs.Model([a, b])
    with pytest.raises(ValueError, match="exactly one of"):
        bad.tie(a, b)
    with pytest.raises(ValueError, match="one\n?.*pair per body|pair per body"):
        bad.tie(a, b, facets=(tags_a, 7))
    with pytest.raises(ValueError, match="holds no node.*body 'b'"):
        bad.tie(a, b, facets=((tags_a, 7), (tags_b, 99)))
