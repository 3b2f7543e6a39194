"""Bad input gets a clear error naming the argument, raised on every rank (no hang)."""

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

M = mbs.materials


@pytest.fixture(scope="module")
def mesh3():
    return dmesh.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0, 0.2, 0.2])],
                            [6, 2, 2], dmesh.CellType.tetrahedron)


@pytest.mark.parametrize("law,kwargs,match", [
    (M.LinearElastic, dict(E=0.0, nu=0.3, density=1.0), "E must be positive"),
    (M.LinearElastic, dict(E=-1e9, nu=0.3, density=1.0), "E must be positive"),
    (M.LinearElastic, dict(E=1e9, nu=0.5, density=1.0), "nu"),
    (M.LinearElastic, dict(E=1e9, nu=0.7, density=1.0), "nu"),
    (M.LinearElastic, dict(E=1e9, nu=0.3, density=0.0), "density must be positive"),
    (M.LinearElastic, dict(E=1e9, nu=0.3, density=-5.0), "density must be positive"),
    (M.PlaneStress, dict(E=1e9, nu=0.3, density=1.0, thickness=0.0), "thickness"),
    (M.LinearElastic, dict(E="steel", nu=0.3, density=1.0), "E must be a real number"),
    (M.LinearElastic, dict(E=1e9, nu=0.3, density=1.0, rayleigh=(-1.0, 0.0)), "rayleigh"),
])
def test_bad_material(law, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        law(**kwargs)


def test_2d_material_on_3d_mesh(mesh3):
    mat = M.PlaneStress(E=1e9, nu=0.3, density=1.0, thickness=0.1)
    with pytest.raises(ValueError, match="plane-stress law for 2D meshes.*dimension 3"):
        mbs.Body(mesh3, mat, mbs.frames.ConstantSpin(rate=1.0))


def test_3d_material_on_2d_mesh():
    mesh = dmesh.create_unit_square(MPI.COMM_WORLD, 2, 2)
    with pytest.raises(ValueError, match="3D law for 3D meshes"):
        mbs.Body(mesh, M.LinearElastic(E=1e9, nu=0.3, density=1.0), mbs.frames.Planar())


def test_zero_axis():
    with pytest.raises(ValueError, match="axis must have nonzero length"):
        mbs.frames.ConstantSpin(axis=(0.0, 0.0, 0.0), rate=1.0)
    with pytest.raises(ValueError, match="axis must have nonzero length"):
        mbs.frames.SpinUp(axis=(0.0, 0.0, 0.0), final_rate=1.0, ramp_time=1.0)


def test_clamp_selecting_nothing(mesh3):
    body = mbs.Body(mesh3, M.LinearElastic(E=1e9, nu=0.3, density=1.0),
                    mbs.frames.ConstantSpin(rate=1.0))
    model = mbs.Model([body])
    with pytest.raises(ValueError, match="selection holds no node"):
        model.clamp(body, lambda x: np.isclose(x[0], 2.0))
    # a selection that lives on one rank only is fine
    model.clamp(body, lambda x: np.isclose(x[0], 0.0) & np.isclose(x[1], 0.0)
                & np.isclose(x[2], 0.0))
    with pytest.raises(ValueError, match="components"):
        model.clamp(body, lambda x: np.isclose(x[0], 0.0), components=[3])


def test_spatial_frame_on_2d_body():
    mesh = dmesh.create_unit_square(MPI.COMM_WORLD, 2, 2)
    frame = mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=2.0)
    body = mbs.Body(mesh, M.PlaneStrain(E=1e9, nu=0.3, density=1.0), frame)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    with pytest.raises(ValueError, match="does not move in the xy-plane"):
        model.solve_static()


def test_unconstrained_static_solve_fails_clearly(mesh3):
    body = mbs.Body(mesh3, M.LinearElastic(E=1e9, nu=0.3, density=1.0),
                    mbs.frames.ConstantSpin(rate=1.0))
    model = mbs.Model([body])
    with pytest.raises(RuntimeError, match="static solve failed"):
        model.solve_static()


def test_body_not_in_model(mesh3):
    b1 = mbs.Body(mesh3, M.LinearElastic(E=1e9, nu=0.3, density=1.0), mbs.frames.Planar())
    b2 = mbs.Body(mesh3, M.LinearElastic(E=1e9, nu=0.3, density=1.0), mbs.frames.Planar())
    with pytest.raises(ValueError, match="not part of this model"):
        mbs.Model([b1]).clamp(b2, lambda x: x[0] < 0.1)
