"""Output read back by independent readers, and probes against an interpolated polynomial.

The fields file of a run is read without DOLFINx (``readback.py``: VTX with the ``adios2``
module, XDMF with its XML and h5py) and its ``motion`` compared with the closed-form frame
motion r_O + R (X + u) - X at the written times.
"""

import dolfinx.mesh as dm
import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import compat
from dolfinx_mbs.io import Probes
from tests.models.readback import read_back

RATE = 100.0  # rad/s about z
PIVOT = np.array([0.2, -0.1, 0.0])


def spinning_blade(comm):
    """A P2 blade clamped at x = 0, spinning about the z axis through PIVOT."""
    mesh = dm.create_box(comm, [np.zeros(3), np.array([1.0, 0.1, 0.1])], [6, 1, 1],
                         dm.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=70e9, nu=0.3, density=2700.0)
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=RATE, origin=PIVOT)
    body = mbs.Body(mesh, mat, frame, degree=2, name="blade")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model, body


def frame_motion(t, X, u):
    """r_O + R (X + u) - X for the rotation by RATE t about z through PIVOT."""
    c, s = np.cos(RATE * t), np.sin(RATE * t)
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return PIVOT - R @ PIVOT + (X + u) @ R.T - X


def by_position(X, *arrays):
    """Rows sorted by their coordinates X (n, 3): one order for any node numbering."""
    order = np.lexsort(np.round(X, 9).T[::-1])
    return [X[order]] + [a[..., order, :] for a in arrays]


def owned_nodes(u):
    """Coordinates and values of a vector Function's owned nodes, gathered on rank 0."""
    V = u.function_space
    n = V.dofmap.index_map.size_local
    X = V.tabulate_dof_coordinates()[:n]
    vals = np.zeros((n, 3))
    bs = V.dofmap.index_map_bs
    vals[:, :bs] = u.x.array[: n * bs].reshape(n, bs)
    parts = V.mesh.comm.gather((X, vals), root=0)
    if parts is None:
        return None
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def on_root(comm, fn):
    """``fn()`` on rank 0; its result on every rank, or its exception raised on every rank
    (so no rank waits in a later collective for one that failed)."""
    out = None
    if comm.rank == 0:
        try:
            out = (fn(), None)
        except Exception as e:  # noqa: BLE001 - handed to every rank
            out = (None, e)
    result, error = comm.bcast(out)
    if error is not None:
        raise error
    return result


def test_motion_file_reads_back(tmp_path_factory):
    """The fields written by integrate(output=...): the nodes of the stored space (P2 in VTX,
    the mesh's P1 in XDMF), the output times, u at the last time equal to the body's, and the
    motion equal to the frame's closed form at each written time."""
    comm = MPI.COMM_WORLD
    stem = comm.bcast(str(tmp_path_factory.mktemp("io") / "run") if comm.rank == 0 else None)
    model, body = spinning_blade(comm)
    # without the energy monitor nothing else brings the frame to the output time: the writer
    # must take the frame's state at t itself, not the last one the integrator evaluated
    r = model.integrate(t_end=4e-4, dt=1e-4, u0=model.solve_static(), output=stem,
                        output_every=2, energy=False, progress=False)
    written = r.times[::2]
    assert len(r.times) == 5 and len(written) == 3
    if compat.has_vtx:
        space, u_end = body.V, body.u
    else:
        from dolfinx import fem

        space = compat.vector_space(body.mesh, 1)
        u_end = fem.Function(space)
        u_end.interpolate(body.u)
    n_global = space.dofmap.index_map.size_global
    ref = owned_nodes(u_end)

    def check():  # on rank 0; returns why the values could not be read, if so
        data = read_back(stem + ("_blade.bp" if compat.has_vtx else "_blade.xdmf"))
        if isinstance(data, str):
            return data
        assert np.allclose(data["times"], written, rtol=1e-14, atol=0)
        if "skip" in data:
            assert data["nodes"] == n_global
            return data["skip"]
        X, u, motion = by_position(data["geometry"], data["u"], data["motion"])
        assert len(X) == n_global
        if "ids" in data:
            assert np.array_equal(data["ids"], np.arange(n_global))
        Xr, ur = by_position(*ref)
        assert np.allclose(X, Xr, rtol=0, atol=1e-12)
        assert np.abs(u[-1] - ur).max() <= 1e-12 * np.abs(ur).max()
        assert np.abs(u[0]).max() > 0  # the centrifugal elongation at t = 0
        for k, t in enumerate(written):
            err = np.abs(motion[k] - frame_motion(t, X, u[k])).max()
            assert err <= 1e-12, (t, err)
        return None

    reason = on_root(comm, check)
    if reason is not None:
        pytest.skip(reason)


def test_fields_of_curved_cells_read_back(tmp_path_factory):
    """A field on the curved (second-order) cells of meshes.shaft written and read back: the
    nodes in the file on the round surface (radius within 1e-12 of 0.05 for the outer ones),
    the values at every node the closed form's there (a quadratic field, exact at the nodes of
    P2 in VTX and of the straight-sided copy DOLFINx 0.5's XDMF is written on)."""
    from dolfinx import fem

    from dolfinx_mbs import meshes
    from dolfinx_mbs.io import FieldFile

    comm = MPI.COMM_WORLD
    stem = comm.bcast(str(tmp_path_factory.mktemp("io") / "curved") if comm.rank == 0 else None)
    mesh, _, _ = meshes.shaft(comm, length=0.2, radius=0.05, size=0.03)
    assert compat.geometry_degree(mesh) == 2
    V = compat.vector_space(mesh, 2)
    g = fem.Function(V)

    def field(x, scale):
        return scale * np.vstack([x[0] ** 2 - x[1] * x[2], 2.0 * x[1] + x[2] ** 2, x[0] * x[1]])

    with FieldFile(comm, stem, V, ["u"]) as f:
        for t in (0.0, 0.5):
            g.interpolate(lambda x: field(x, 1.0 + t))
            f.assign("u", g)
            f.write(t)

    def check():
        data = read_back(f.path)
        if isinstance(data, str):
            return data
        assert np.allclose(data["times"], [0.0, 0.5], rtol=0, atol=1e-14)
        if "skip" in data:
            return data["skip"]
        X = data["geometry"]
        r = np.hypot(X[:, 0], X[:, 1])
        assert r.max() <= 0.05 * (1 + 1e-12) and np.sum(np.abs(r - 0.05) < 1e-12) > 20
        for k, t in enumerate((0.0, 0.5)):
            err = np.abs(data["u"][k] - field(X.T, 1.0 + t).T).max()
            assert err <= 1e-14, (t, err)
        return None

    reason = on_root(comm, check)
    if reason is not None:
        pytest.skip(reason)


def polynomial(x):
    """In the P2 space of quadrilaterals and hexahedra, so interpolation reproduces it."""
    return np.vstack([1.0 + x[0] ** 2 - 2.0 * x[1], x[0] * x[1] + 0.5 * x[1] ** 2,
                      x[0] * x[1] * x[2]])


def probe_body(comm, dim):
    if dim == 3:
        mesh = dm.create_box(comm, [np.zeros(3), np.array([1.0, 0.5, 0.5])], [4, 2, 2],
                             dm.CellType.hexahedron)
        mat = mbs.materials.LinearElastic(E=1.0, nu=0.3, density=1.0)
    else:
        mesh = dm.create_rectangle(comm, [np.zeros(2), np.array([1.0, 0.5])], [4, 2],
                                   dm.CellType.quadrilateral)
        mat = mbs.materials.PlaneStress(E=1.0, nu=0.3, density=1.0, thickness=1.0)
    body = mbs.Body(mesh, mat, mbs.frames.Planar(), degree=2, name="probe")
    body.u.interpolate(lambda x: polynomial(x)[:dim])
    return body


def interface_node(body):
    """A mesh vertex shared by two ranks (the same on every rank), or the middle vertex when
    the mesh is on one rank."""
    V1 = compat.vector_space(body.mesh, 1)
    n = V1.dofmap.index_map.size_local
    shared = np.concatenate(body.comm.allgather(V1.tabulate_dof_coordinates()[n:]))
    if len(shared) == 0:
        return np.array([0.5, 0.25, 0.25 if body.gdim == 3 else 0.0])
    return shared[np.lexsort(np.round(shared, 9).T[::-1])[0]]


@pytest.mark.parametrize("dim", [2, 3])
def test_probes_interpolate_a_polynomial(dim):
    """At a vertex between two ranks' cells and at an interior point, the probes give the
    polynomial's value, with the mesh on all ranks and on each rank alone."""
    points = [interface_node(probe_body(MPI.COMM_WORLD, dim)), np.array([0.3, 0.17, 0.11])]
    points = [p[:dim] for p in points]
    exact = polynomial(np.array([np.r_[p, np.zeros(3 - dim)] for p in points]).T)[:dim].T
    values = {}
    for name, comm in (("world", MPI.COMM_WORLD), ("self", MPI.COMM_SELF)):
        body = probe_body(comm, dim)
        values[name] = Probes([body], [(body, p) for p in points]).evaluate()
    assert np.allclose(values["world"], exact, rtol=0, atol=1e-12), (values["world"], exact)
    assert np.allclose(values["world"], values["self"], rtol=0, atol=1e-13)


def test_probe_outside_raises_on_every_rank():
    body = probe_body(MPI.COMM_WORLD, 3)
    with pytest.raises(ValueError, match=r"\[2\.0, 0\.1, 0\.1\] lies in no cell of body 'probe'"):
        Probes([body], [(0.5, 0.25, 0.25), (2.0, 0.1, 0.1)])


def test_coupled_run_writes_the_motion(tmp_path_factory):
    """A coupled run's fields: the blade on a Hinge through PIVOT, turning freely at RATE
    with a hub of 1e5 kg m^2 (the blade's 9 kg m^2 and its vibration change the rate by
    ~1e-5), writes at each written time the motion of the hinge's computed state: the closed
    form of the steady spin to 1e-6 m (5e-9 measured; the blade moves by 0.04 m)."""
    comm = MPI.COMM_WORLD
    stem = comm.bcast(str(tmp_path_factory.mktemp("io") / "coupled") if comm.rank == 0
                      else None)
    mesh = dm.create_box(comm, [np.zeros(3), np.array([1.0, 0.1, 0.1])], [6, 1, 1],
                         dm.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=70e9, nu=0.3, density=2700.0)
    hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=PIVOT, rate=RATE, name="hub")
    body = mbs.Body(mesh, mat, hub, degree=2, name="blade")
    disk = mbs.RigidBody(mass=1.0, inertia=np.diag([1e5, 1e5, 1e5]), frame=hub,
                         centre=PIVOT, name="disk")
    model = mbs.Model([disk, body])
    model.attach(body, lambda x: np.isclose(x[0], 0.0))
    r = model.integrate(t_end=4e-4, dt=1e-4, output=stem, output_every=2, progress=False)
    written = r.times[::2]
    assert len(written) == 3
    assert np.abs(r.frames["hub"].rate / RATE - 1.0).max() < 1e-5

    def check():
        data = read_back(stem + ("_blade.bp" if compat.has_vtx else "_blade.xdmf"))
        if isinstance(data, str):
            return data
        assert np.allclose(data["times"], written, rtol=1e-14, atol=0)
        if "skip" in data:
            return data["skip"]
        X, u, motion = by_position(data["geometry"], data["u"], data["motion"])
        assert np.abs(motion[-1]).max() > 0.03
        for k, t in enumerate(written):
            err = np.abs(motion[k] - frame_motion(t, X, u[k])).max()
            assert err <= 1e-6, (t, err)
        return None

    reason = on_root(comm, check)
    if reason is not None:
        pytest.skip(reason)
