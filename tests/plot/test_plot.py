"""Pictures of results (dolfinx_mbs.plot): what is gathered and drawn against closed forms.

The gathered nodes and values against the interpolated field's formula (any rank count), the
phase of a complex mode's largest motion against the phase it was built with, the mode shapes
kept by ``modes(shapes=True)`` against the rod's axial modes sin((2k-1) pi x / 2L), a run's
recorded displacement against its probes, and the files the renders write (PyVista, skipped
without it).
"""

import math

import dolfinx.fem as fem
import dolfinx.mesh as dm
import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.plot.gather import gather
from tests.models.rodmodel import ROD, rod_mesh


def _field(x):
    return np.stack([x[0] + 2 * x[1], x[1] ** 2 - x[2], x[0] * x[2]])


def _tmp(tmp_path_factory, name):
    comm = MPI.COMM_WORLD
    return comm.bcast(str(tmp_path_factory.mktemp("plot") / name) if comm.rank == 0 else None)


@pytest.mark.parametrize("degree", [1, 2])
def test_gather_nodes_and_values(degree):
    """Rank 0 holds every owned cell once and, at every node, the field's value there."""
    comm = MPI.COMM_WORLD
    mesh = dm.create_box(comm, [np.zeros(3), np.array([1.0, 0.4, 0.2])], [5, 3, 2],
                         dm.CellType.hexahedron)
    V = mbs.compat.vector_space(mesh, degree)
    u = fem.Function(V)
    u.interpolate(_field)
    g = gather([u, u])
    n_cells = mesh.topology.index_map(3).size_global
    if comm.rank != 0:
        assert g is None
        return
    assert g.types.size == n_cells == 30
    per = (degree + 1) ** 3
    cells = g.cells.reshape(n_cells, per + 1)
    assert np.all(cells[:, 0] == per) and cells[:, 1:].max() < g.n_points
    exact = _field(g.points.T).T
    assert np.allclose(g.values[0], exact, atol=1e-12)
    assert np.array_equal(g.values[0], g.values[1])
    # every node of the box is some cell's node (each rank's nodes cover its cells)
    used = np.unique(cells[:, 1:])
    assert np.unique(np.round(g.points[used], 12), axis=0).shape[0] == \
        (5 * degree + 1) * (3 * degree + 1) * (2 * degree + 1)


def test_gather_2d_pads_the_third_component():
    """A 2D body's nodes and vectors get a zero third component."""
    comm = MPI.COMM_WORLD
    mesh = dm.create_rectangle(comm, [np.zeros(2), np.array([2.0, 1.0])], [4, 2],
                               dm.CellType.quadrilateral)
    u = fem.Function(mbs.compat.vector_space(mesh, 1))
    u.interpolate(lambda x: np.stack([x[0], -x[1]]))
    g = gather([u])
    if comm.rank == 0:
        assert np.allclose(g.values[0][:, :2], g.points[:, :2] * [1, -1])
        assert np.all(g.values[0][:, 2] == 0) and np.all(g.points[:, 2] == 0)


def test_gather_refuses_two_spaces_on_every_rank():
    """Functions of two spaces, or none, are refused on every rank."""
    comm = MPI.COMM_WORLD
    mesh = dm.create_box(comm, [np.zeros(3), np.ones(3)], [2, 2, 2], dm.CellType.hexahedron)
    a = fem.Function(mbs.compat.vector_space(mesh, 1))
    b = fem.Function(mbs.compat.vector_space(mesh, 2))
    with pytest.raises(ValueError, match=r"functions\[1\] is on another space"):
        gather([a, b])
    with pytest.raises(ValueError, match="at least one"):
        gather([])


@pytest.mark.parametrize("beta", [0.0, 0.4, 1.2, -0.9, math.pi / 2])
def test_largest_phase_of_a_phased_real_mode(beta):
    """A real shape turned by beta moves largest at phi = -beta (mod pi).

    (re, im) = (w cos beta, w sin beta) moves as w cos(phi + beta).
    """
    comm = MPI.COMM_WORLD
    mesh = dm.create_box(comm, [np.zeros(3), np.ones(3)], [3, 2, 2], dm.CellType.hexahedron)
    V = mbs.compat.vector_space(mesh, 1)
    re, im = fem.Function(V), fem.Function(V)
    re.interpolate(lambda x: np.cos(beta) * _field(x))
    im.interpolate(lambda x: np.sin(beta) * _field(x))
    phi = mbs.plot.largest_phase([(re, im)], comm)
    assert abs(math.sin(phi + beta)) < 1e-12, (phi, beta)
    assert mbs.plot.largest_phase([(re, None)], comm) == 0.0


def _axial_rod(n=20):
    comm = MPI.COMM_WORLD
    rho = ROD["rho"]
    body = mbs.Body(rod_mesh(comm, n), mbs.materials.LinearElastic(E=ROD["E"], nu=0.0,
                                                                    density=rho),
                    mbs.frames.ConstantSpin(rate=0.0), degree=2, name="rod")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=[1, 2])
    return model, body


def test_mode_shapes_kept_are_the_rods_axial_modes():
    """modes(shapes=True): the k-th shape is sin((2k-1) pi x / 2L) along x, unit largest."""
    comm = MPI.COMM_WORLD
    model, body = _axial_rod()
    r = model.modes(n=3, shapes=True)
    assert len(r.shapes) == 3 and all(len(m) == 1 for m in r.shapes)
    x = body.V.tabulate_dof_coordinates()[:, 0]
    for k, ((re, im),) in enumerate(r.shapes, start=1):
        phi = mbs.plot.largest_phase([(re, im)], comm)
        u = (np.cos(phi) * re.x.array - np.sin(phi) * im.x.array).reshape(-1, 3)
        top = comm.allreduce(np.abs(u[:, 0]).max(initial=0.0), op=MPI.MAX)
        exact = np.sin((2 * k - 1) * np.pi * x / (2 * ROD["L"]))
        sign = np.sign(comm.allreduce(float(u[:, 0] @ exact), op=MPI.SUM))
        err = comm.allreduce(np.abs(sign * u[:, 0] / top - exact).max(initial=0.0), op=MPI.MAX)
        assert err < 2e-3 * k, (k, err)
        assert np.abs(u[:, 1:]).max(initial=0.0) < 1e-12
    assert model.modes(n=3).shapes is None
    with pytest.raises(TypeError, match="shapes must be True or False"):
        model.modes(n=3, shapes="yes")


def test_recorder_keeps_what_the_probes_saw():
    """The displacement kept at every 3rd output time, read at the tip, is the tip probe's."""
    comm = MPI.COMM_WORLD
    model, body = _axial_rod(n=6)
    body.add_point_load((ROD["L"], 0.0, 0.0), lambda t: (1e3 * math.sin(2e3 * t), 0.0, 0.0))
    rec = mbs.plot.Recorder(model, every=3)
    r = model.integrate(2e-4, 1e-5, probes=[(ROD["L"], 0.0, 0.0)], callback=rec,
                        progress=False)
    n_calls = len(r.times)
    assert len(rec.times) == len(range(0, n_calls, 3))
    assert np.allclose(rec.times, r.times[::3], rtol=0, atol=1e-15)
    x = body.V.tabulate_dof_coordinates()
    tip = np.flatnonzero(np.isclose(x[:, 0], ROD["L"]) & np.isclose(x[:, 1], 0.0)
                         & np.isclose(x[:, 2], 0.0))
    for k in range(len(rec.times)):
        (u,) = rec.functions(k)
        mine = u.x.array.reshape(-1, 3)[tip[:1], 0] if tip.size else np.zeros(0)
        vals = [v for v in comm.allgather(mine.tolist()) for v in v]
        assert vals and np.isclose(vals[0], r.probes[3 * k, 0, 0], rtol=1e-12, atol=1e-18)
    assert np.abs(r.probes[:, 0, 0]).max() > 0
    with pytest.raises(ValueError, match="every must be a positive integer"):
        mbs.plot.Recorder(model, every=0)


def test_argument_errors_on_every_rank(tmp_path_factory):
    """Bad arguments raise a ValueError naming them, on every rank."""
    model, body = _axial_rod(n=4)
    u = fem.Function(body.V)
    with pytest.raises(ValueError, match="path must be a .png or .gif"):
        mbs.plot.deformed(u, "picture.jpg")
    with pytest.raises(ValueError, match="view must be one of"):
        mbs.plot.deformed(u, "p.png", view="top")
    with pytest.raises(ValueError, match="scale must be a number > 0"):
        mbs.plot.deformed(u, "p.png", scale=-1.0)
    with pytest.raises(ValueError, match="states must hold one frame state per body"):
        mbs.plot.deformed(u, "p.png", states=[body.frame.state(0.0)] * 2)
    r = model.modes(n=2)
    with pytest.raises(ValueError, match="holds no shapes"):
        mbs.plot.mode_shapes(r, "p.png")
    with pytest.raises(ValueError, match="a real mode does not whirl"):
        mbs.plot.whirl(u, "p.png")
    rec = mbs.plot.Recorder(model)
    with pytest.raises(ValueError, match="kept no time"):
        mbs.plot.animate(rec, _tmp(tmp_path_factory, "run.gif"))


def _image(path):
    imageio = pytest.importorskip("imageio.v2")
    return imageio.mimread(path) if path.endswith(".gif") else [imageio.imread(path)]


def test_renders_write_their_pictures(tmp_path_factory):
    """Each picture is written at its size, shows the body, a GIF has its frame count.

    The body: pixels other than the background's; a GIF has one picture per kept time (per
    phase step for a whirl).
    """
    pytest.importorskip("pyvista")
    comm = MPI.COMM_WORLD
    model, body = _axial_rod(n=4)
    (u,) = model.solve_static()
    u.interpolate(lambda x: np.stack([0.01 * x[0], 0 * x[0], 0 * x[0]]))
    stem = _tmp(tmp_path_factory, "p")
    assert mbs.plot.deformed(u, stem + "_u.png", window_size=(320, 240),
                             states=body.frame.state(0.0)) == stem + "_u.png"
    m = model.modes(n=2, shapes=True)
    mbs.plot.mode_shapes(m, stem + "_modes.png", columns=2, window_size=(400, 200))
    re, im = m.shapes[0][0]
    im.interpolate(lambda x: np.stack([0 * x[0], np.sin(x[0]), 0 * x[0]]))
    mbs.plot.whirl((re, im), stem + "_whirl.png", axis=(1, 0, 0), window_size=(320, 240))
    mbs.plot.whirl((re, im), stem + "_whirl.gif", axis=(1, 0, 0), window_size=(160, 120),
                   frames=5)
    rec = mbs.plot.Recorder(model, every=2)
    model.integrate(5e-5, 1e-5, callback=rec, progress=False)
    mbs.plot.animate(rec, stem + "_run.gif", window_size=(160, 120))
    if comm.rank == 0:
        for name, size, count in (("_u.png", (240, 320), 1), ("_modes.png", (200, 400), 1),
                                  ("_whirl.png", (240, 320), 1), ("_whirl.gif", (120, 160), 5),
                                  ("_run.gif", (120, 160), len(rec.times))):
            pictures = _image(stem + name)
            assert len(pictures) == count, name
            for p in pictures:
                assert p.shape[:2] == size, name
                # the body: pixels that are not the background's color
                background = p[0, 0, :3]
                assert (np.abs(p[..., :3].astype(int) - background).sum(axis=-1) > 30).mean() \
                    > 1e-3, name
