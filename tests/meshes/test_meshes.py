"""The meshes of dolfinx_mbs.meshes, read from the committed meshes/*.msh and built by the
builders, against closed forms of their geometry: volumes (areas), tagged facet areas (lengths)
and section moments, summed over the ranks (the same numbers serially and under mpirun).

Exact references where the discretization is exact: the blade's and the strips' nodes lie on
the exact geometry and their faces are flat or ruled, so their volumes are closed forms of the
mesh (the twisted blade's trilinear layers shrink between sections by a known factor). The
rotor's circles are polygons; its flat bearing faces are regular polygons (checked exactly,
with the number of corners counted on the mesh), its volume lies between the exact one and the
exact one reduced by the coarsest polygon's area deficit, and the gmsh (OpenCASCADE) geometry
before meshing has the closed-form volume.
"""

import contextlib
import math
import os
import tempfile

import numpy as np
import pytest
import ufl
from dolfinx import fem
from mpi4py import MPI

from dolfinx_mbs import compat, meshes

COMM = MPI.COMM_WORLD
Q = {"quadrature_degree": 4}


def total(form, comm=COMM):
    return comm.allreduce(fem.assemble_scalar(fem.form(form)), op=MPI.SUM)


def measures(mesh, ft):
    return (ufl.Measure("dx", domain=mesh, metadata=Q),
            ufl.Measure("ds", domain=mesh, subdomain_data=ft, metadata=Q))


def n_cells(mesh):
    return mesh.topology.index_map(mesh.topology.dim).size_global


def test_committed_files_and_their_groups():
    """Every committed mesh is documented in PHYSICAL_GROUPS with the groups its file names,
    and is small."""
    assert sorted(meshes.available()) == sorted(meshes.PHYSICAL_GROUPS)
    for name, groups in meshes.PHYSICAL_GROUPS.items():
        assert meshes.physical_groups(name) == groups, name
        assert os.path.getsize(meshes.mesh_dir() / f"{name}.msh") < 600_000, name
    assert meshes.BODY == 1 and (meshes.BEARING_A, meshes.BEARING_B) == (1, 2)
    assert (meshes.ROOT, meshes.TIP) == (1, 2)


# --- the twisted blade

def blade_checks(mesh, ct, ft, span, chord, thickness, twist_deg, hub, cells):
    c, t, th = chord, thickness, math.radians(twist_deg)
    dx, ds = measures(mesh, ft)
    x = ufl.SpatialCoordinate(mesh)
    assert mesh.geometry.dim == 3 and n_cells(mesh) == int(np.prod(cells))
    assert total(1.0 * dx(meshes.BODY, subdomain_data=ct)) == pytest.approx(
        total(1.0 * dx), rel=1e-14)
    # each layer of trilinear hexahedra between sections turned by d: its section at height s
    # of the layer is the root's mapped by (1 - s) I + s R(d), of area c t (1 - 2 s (1-s)(1-cos d))
    d = th / cells[0]
    exact = span * c * t
    volume = total(1.0 * dx)
    assert volume == pytest.approx(exact * (1 - (1 - math.cos(d)) / 3), rel=1e-12)
    assert 0 <= 1 - volume / exact <= (1 - math.cos(d)) / 3 + 1e-12
    for tag, at in ((meshes.ROOT, hub), (meshes.TIP, hub + span)):
        assert total(1.0 * ds(tag)) == pytest.approx(c * t, rel=1e-12)
        assert total(x[0] * ds(tag)) == pytest.approx(at * c * t, rel=1e-12)
    # second moments of the tip face: the root's rectangle turned by the twist about +x
    moment = c * t / 12
    assert total(x[1] ** 2 * ds(meshes.TIP)) == pytest.approx(
        moment * (c**2 * math.cos(th) ** 2 + t**2 * math.sin(th) ** 2), rel=1e-10)
    assert total(x[1] * x[2] * ds(meshes.TIP)) == pytest.approx(
        moment * (c**2 - t**2) * math.sin(th) * math.cos(th), rel=1e-10)
    assert total(x[1] * x[2] * ds(meshes.ROOT)) == pytest.approx(0.0, abs=1e-20)
    assert total(x[1] ** 2 * ds(meshes.ROOT)) == pytest.approx(moment * c**2, rel=1e-10)


def test_twisted_blade_file():
    """meshes/twisted_blade.msh: 0.3 x 0.05 x 0.004 m, 30 degrees, 30 x 5 x 1 hexahedra."""
    mesh, ct, ft = meshes.read("twisted_blade", COMM)
    blade_checks(mesh, ct, ft, 0.3, 0.05, 0.004, 30.0, 0.0, (30, 5, 1))


def test_twisted_blade_builder():
    """Another blade: off the axis, more twist, fewer layers (a larger volume deficit)."""
    args = dict(span=0.5, chord=0.08, thickness=0.01, twist_degrees=60.0, hub_radius=0.1,
                cells=(6, 3, 2))
    mesh, ct, ft = meshes.twisted_blade(COMM, **args)
    blade_checks(mesh, ct, ft, *args.values())


# --- the strips

@pytest.mark.parametrize("source", ["krb_strip", "crank", "coupler", "builders"])
def test_strips(source):
    """The 2D strips: area length x height, root and tip edges of length height."""
    if source == "builders":
        cases = [(meshes.strip(COMM, cells=(7, 2)), 10.0, meshes.KRB_HEIGHT, 14)]
        (crank, coupler) = meshes.links(COMM, cells=((3, 1), (5, 2)))
        cases += [(crank, 0.1, 0.01, 3), (coupler, 0.3, 0.01, 10)]
    else:
        length, height, n = {"krb_strip": (10.0, math.sqrt(12 * 14000 / 2.8e7), 40),
                             "crank": (0.1, 0.01, 16), "coupler": (0.3, 0.01, 48)}[source]
        cases = [(meshes.read(source, COMM), length, height, n)]
    for (mesh, ct, ft), length, height, n in cases:
        dx, ds = measures(mesh, ft)
        x = ufl.SpatialCoordinate(mesh)
        assert mesh.geometry.dim == 2 and n_cells(mesh) == n
        assert total(1.0 * dx) == pytest.approx(length * height, rel=1e-13)
        assert total(1.0 * dx(meshes.BODY, subdomain_data=ct)) == pytest.approx(
            length * height, rel=1e-13)
        for tag, at in ((meshes.ROOT, 0.0), (meshes.TIP, length)):
            assert total(1.0 * ds(tag)) == pytest.approx(height, rel=1e-13)
            assert total(x[0] * ds(tag)) == pytest.approx(at * height, abs=1e-13)
        assert total(x[1] * dx) == pytest.approx(0.0, abs=1e-15)


# --- the rotor

SHAFT_L, SHAFT_R, DISK_R, DISK_T = 0.6, 0.02, 0.12, 0.02
BLADE_L, BLADE_W, BLADE_T = 0.08, 0.03, 0.004


def rotor_volume(blades):
    """Shaft and disk, and the blades' boxes less their parts inside the disk."""
    v = math.pi * SHAFT_R**2 * SHAFT_L + math.pi * (DISK_R**2 - SHAFT_R**2) * DISK_T
    y, R = BLADE_T / 2, DISK_R
    inside = 2 * (y * math.sqrt(R**2 - y**2) + R**2 * math.asin(y / R)) / 2 - 0.95 * R * BLADE_T
    return v + blades * ((BLADE_L + 0.05 * R) * BLADE_T * BLADE_W - DISK_T * inside)


def rotor_checks(mesh, ft, blades):
    """Curved (second-order) cells: the bearing faces are the shaft's circle and the volume the
    rotor's, to the geometric error of quadratic faces; straight-sided cells: polygons."""
    dx, ds = measures(mesh, ft)
    if compat.geometry_degree(mesh) == 2:
        # these meshes are coarse (size 0.025-0.03 m on a 0.02 m radius: a few segments round
        # the shaft, whose polygon would miss 17 %); quadratic arcs miss about 1e-3
        for tag in (meshes.BEARING_A, meshes.BEARING_B):
            assert total(1.0 * ds(tag)) == pytest.approx(math.pi * SHAFT_R**2, rel=3e-3)
        assert total(1.0 * dx) == pytest.approx(rotor_volume(blades), rel=3e-3)
        return
    x = mesh.geometry.x
    # corners of the bearing faces' polygons, counted over all ranks
    corners = []
    for z in (0.0, SHAFT_L):
        on = np.isclose(x[:, 2], z, rtol=0, atol=1e-12) & \
            np.isclose(np.hypot(x[:, 0], x[:, 1]), SHAFT_R, rtol=1e-9)
        mine = {tuple(np.round(p[:2] / SHAFT_R, 9)) for p in x[on]}
        corners.append(len(set().union(*COMM.allgather(mine))))
    assert corners[0] == corners[1] and corners[0] >= 6
    n = corners[0]
    polygon = n / 2 * SHAFT_R**2 * math.sin(2 * math.pi / n)
    for tag in (meshes.BEARING_A, meshes.BEARING_B):
        assert total(1.0 * ds(tag)) == pytest.approx(polygon, rel=1e-9)
    # nodes on the exact surfaces, faces flat or chords of convex cylinders: the mesh is inside
    # the rotor and misses at most the shaft polygon's share of the area (the coarsest circle)
    exact = rotor_volume(blades)
    deficit = 1 - n * math.sin(2 * math.pi / n) / (2 * math.pi)
    assert exact * (1 - deficit) < total(1.0 * dx) < exact


@pytest.mark.parametrize("name,blades", [("rotor", 0), ("bladed_rotor", 8)])
def test_rotor_files(name, blades):
    mesh, ct, ft = meshes.read(name, COMM)
    assert mesh.geometry.dim == 3
    rotor_checks(mesh, ft, blades)
    # the same file on one process: the same volume and bearing areas
    one = meshes.read(name, MPI.COMM_SELF)
    dx, ds = measures(mesh, ft)
    dx1, ds1 = measures(one[0], one[2])
    assert total(1.0 * dx1, MPI.COMM_SELF) == pytest.approx(total(1.0 * dx), rel=1e-12)
    assert total(1.0 * ds1(meshes.BEARING_B), MPI.COMM_SELF) == pytest.approx(
        total(1.0 * ds(meshes.BEARING_B)), rel=1e-12)


@pytest.mark.parametrize("order", [2, 1])
def test_rotor_builder(order):
    mesh, ct, ft = meshes.rotor(COMM, size=0.03, order=order)
    assert compat.geometry_degree(mesh) == order
    rotor_checks(mesh, ft, 0)


@pytest.mark.parametrize("order", [2, 1])
def test_shaft_section(order):
    """The shaft at its default radius and size (10 mm cells on a 20 mm radius): on curved
    cells (the default) its section's area and second moment are the circle's, pi r^2 and
    pi r^4 / 4, to 1e-3; straight-sided cells make a polygon, several per cent short."""
    length = 0.1
    mesh, ct, ft = meshes.shaft(COMM, length=length, cuts=(0.05,), order=order)
    dx, ds = measures(mesh, ft)
    x = ufl.SpatialCoordinate(mesh)
    r = 0.02
    area, second = total(1.0 * dx) / length, total(x[0] ** 2 * dx) / length
    area_b = total(1.0 * ds(meshes.BEARING_B))
    if order == 2:
        assert area == pytest.approx(math.pi * r**2, rel=1e-3)
        assert area_b == pytest.approx(math.pi * r**2, rel=1e-3)
        assert second == pytest.approx(math.pi * r**4 / 4, rel=1e-3)
    else:
        assert area < (1 - 5e-3) * math.pi * r**2
        assert second < (1 - 1e-2) * math.pi * r**4 / 4


def test_body_degree_follows_curved_cells():
    """A body on curved cells takes their degree by default, which holds a rigid rotation
    exactly: the strain of u = e_z x X, int eps:eps / int grad u:grad u, is round-off
    (below 1e-20); degree 1 there warns (SubparametricWarning), and its rotation is strained
    (ratio above 1e-4: 2.1e-3 measured)."""
    import dolfinx_mbs as mbs
    from dolfinx_mbs.checks import SubparametricWarning

    mesh, _, _ = meshes.shaft(COMM, 0.2, 0.05, 0.03)
    steel = mbs.materials.LinearElastic(E=2e11, nu=0.3, density=7800.0)

    def strained(body):
        body.u.interpolate(lambda x: np.vstack([-x[1], x[0], 0.0 * x[2]]))
        eps, g = ufl.sym(ufl.grad(body.u)), ufl.grad(body.u)
        return total(ufl.inner(eps, eps) * ufl.dx) / total(ufl.inner(g, g) * ufl.dx)

    body = mbs.Body(mesh, steel, mbs.frames.Stationary((0, 0, 1), 0.0))
    assert body.degree == 2 and strained(body) < 1e-20
    with pytest.warns(SubparametricWarning, match="degree 1 on cells of degree 2"):
        low = mbs.Body(mesh, steel, mbs.frames.Stationary((0, 0, 1), 0.0), degree=1,
                       name="shaft")
    assert low.degree == 1 and strained(low) > 1e-4
    straight, _, _ = meshes.shaft(COMM, 0.2, 0.05, 0.03, order=1)
    assert mbs.Body(straight, steel, mbs.frames.Stationary((0, 0, 1), 0.0)).degree == 1


@pytest.mark.parametrize("blades", [0, 8])
def test_rotor_geometry_volume(blades):
    """The OpenCASCADE geometry before meshing (on every process by itself) has the closed-form
    volume: rotor_model builds the solid it says."""
    import gmsh

    with meshes.gmsh_session("check"):
        meshes.rotor_model(size=0.05, blades=blades)
        vols = gmsh.model.getEntities(3)
        volume = sum(gmsh.model.occ.getMass(*v) for v in vols)
    assert volume == pytest.approx(rotor_volume(blades), rel=1e-9)


# --- errors on every rank

def test_bad_name_raises_everywhere():
    with pytest.raises(FileNotFoundError, match="no mesh 'no_such_mesh'.*twisted_blade"):
        meshes.read("no_such_mesh", COMM)
    with pytest.raises(FileNotFoundError, match="no_such_dir"):
        meshes.read("no_such_dir/x.msh", COMM)
    with pytest.raises(TypeError, match="path_or_name must be .* got Intracomm"):
        meshes.read(COMM, "shaft")   # the arguments swapped


def test_gmsh_errors_on_rank_0_raise_everywhere():
    """A file gmsh cannot read, a mesh without physical groups and a builder whose geometry
    fails in gmsh: rank 0 alone meets the error, every rank raises it."""
    with contextlib.ExitStack() as stack:
        # rank 0's folder (pytest's tmp_path under mpirun: two ranks clean the same base)
        folder = stack.enter_context(tempfile.TemporaryDirectory()) if COMM.rank == 0 else None
        check_errors(COMM.bcast(folder, root=0))
        COMM.Barrier()


def check_errors(folder):
    import gmsh

    bad, bare = os.path.join(folder, "bad.msh"), os.path.join(folder, "bare.msh")
    if COMM.rank == 0:
        with open(bad, "w") as f:
            f.write("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\ngarbage\n")
        with meshes.gmsh_session("bare"):
            gmsh.model.occ.addRectangle(0, 0, 0, 1, 1)
            gmsh.model.occ.synchronize()
            gmsh.model.mesh.generate(2)
            gmsh.option.setNumber("Mesh.SaveAll", 1)
            gmsh.write(bare)
            gmsh.option.setNumber("Mesh.SaveAll", 0)
    COMM.Barrier()
    with pytest.raises(RuntimeError, match="bad.msh: Could not read nodes"):
        meshes.read(bad, COMM)
    with pytest.raises(ValueError, match="bare.msh: the gmsh model has no physical groups"):
        meshes.read(bare, COMM)
    with pytest.raises(ValueError, match="twist_degrees and hub_radius must be finite"):
        meshes.twisted_blade(COMM, twist_degrees=float("nan"))
    with pytest.raises(ValueError, match="cells must be 3 positive integers"):
        meshes.twisted_blade(COMM, cells=(4, 0, 1))


@pytest.mark.serial
def test_wheel_carries_the_committed_meshes(tmp_path):
    """A built wheel, unpacked away from the source tree, reads the committed meshes: the strip
    read there has the cells and area of the strip read from meshes/ here."""
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    root = Path(meshes.__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file():
        pytest.skip("not a source checkout")
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                          "--no-build-isolation", "-w", str(tmp_path / "dist"), str(root)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    wheel, = (tmp_path / "dist").glob("dolfinx_mbs-*.whl")
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    script = ("import mpi4py.MPI, ufl\n"
              "from dolfinx import fem\n"
              "from dolfinx_mbs import meshes\n"
              "m, _, _ = meshes.read('krb_strip')\n"
              "area = fem.assemble_scalar(fem.form(1.0 * ufl.dx(domain=m)))\n"
              "print(meshes.__file__, m.topology.index_map(2).size_global, area)\n")
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("DOLFINX_MBS_MESHES", None)
    res = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    where, n, area = res.stdout.split()
    assert Path(where).is_relative_to(site)
    mesh, _, _ = meshes.read("krb_strip")
    here = fem.assemble_scalar(fem.form(1.0 * ufl.dx(domain=mesh)))
    assert int(n) == mesh.topology.index_map(2).size_global
    assert abs(float(area) - here) < 1e-12 * here
    assert abs(here - 10.0 * meshes.KRB_HEIGHT) < 1e-12 * here
