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
    with pytest.raises(RuntimeError, match=r"static solve failed.*leave 6 rigid motion\(s\) free: "
                                           r"body 'body\d+': translation along x; .*rotation "
                                           r"about z: constrain them"):
        model.solve_static()
    # held in x on the face x = 0 only: free to translate in y and z and to rotate about x
    mesh = body.mesh
    held = mbs.Body(mesh, M.LinearElastic(E=1e9, nu=0.3, density=1.0),
                    mbs.frames.ConstantSpin(rate=1.0), name="held")
    model = mbs.Model([held])
    model.clamp(held, lambda x: np.isclose(x[0], 0.0), components=[0])
    with pytest.raises(RuntimeError, match=r"leave 3 rigid motion\(s\) free: body 'held': "
                                           r"translation along y; body 'held': translation "
                                           r"along z; body 'held': rotation about x: "):
        model.solve_static()


def test_body_not_in_model(mesh3):
    b1 = mbs.Body(mesh3, M.LinearElastic(E=1e9, nu=0.3, density=1.0), mbs.frames.Planar())
    b2 = mbs.Body(mesh3, M.LinearElastic(E=1e9, nu=0.3, density=1.0), mbs.frames.Planar())
    with pytest.raises(ValueError, match="not part of this model"):
        mbs.Model([b1]).clamp(b2, lambda x: x[0] < 0.1)


def test_points_and_axes_checked_everywhere(mesh3):
    """One parser for points and axes: the slider's point and Model.dof's point are checked
    like the pin's (they were taken as given), on every rank."""
    body = mbs.Body(mesh3, M.LinearElastic(E=1e9, nu=0.3, density=1.0),
                    mbs.frames.ConstantSpin(rate=1.0))
    model = mbs.Model([body])
    with pytest.raises(ValueError, match="point must be a finite 2- or 3-vector"):
        model.slider(body, (np.nan, 0.0, 0.0), (1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="axis must be a finite 2- or 3-vector"):
        model.slider(body, (1.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="point must be a finite 2- or 3-vector"):
        model.dof(body, (1.0, 0.0, 0.0, 0.0), 0)
    with pytest.raises(ValueError, match="point must be a finite 2- or 3-vector"):
        model.pin(None, body, (1.0, np.inf, 0.0))
    with pytest.raises(ValueError, match="probe point must be a finite 2- or 3-vector"):
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.integrate(t_end=1e-3, dt=1e-3, probes=[(1.0,)], progress=False)


def test_numpy_scalars_are_numbers():
    """Times and material constants given as numpy scalars (float32, int64) run like floats:
    the same tip history as the same run with Python floats."""
    def run(E, t_end, dt):
        mesh = dmesh.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0, 0.1, 0.1])],
                                [4, 1, 1], dmesh.CellType.hexahedron)
        body = mbs.Body(mesh, M.LinearElastic(E=E, nu=0.3, density=1000.0),
                        mbs.frames.ConstantSpin(rate=5.0))
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        return model.integrate(t_end=t_end, dt=dt, probes=[(1.0, 0.05, 0.05)],
                               progress=False).probes

    dt = 2.0**-10  # exact in float32: the two runs take the same steps
    ref = run(1e7, 10 * dt, dt)
    got = run(np.int64(10**7), np.float64(10 * dt), np.float32(dt))
    assert ref.shape == got.shape == (11, 1, 3)
    assert np.abs(got - ref).max() <= 1e-12 * np.abs(ref).max()
    assert np.abs(ref).max() > 0.0


def test_duplicate_body_names_refused(mesh3):
    """Two bodies of one name would write the same output file (one body's fields lost, or an
    HDF5 error on one rank): refused on every rank."""
    mat = M.LinearElastic(E=1e9, nu=0.3, density=1.0)
    a = mbs.Body(mesh3, mat, mbs.frames.ConstantSpin(rate=1.0), name="blade")
    b = mbs.Body(mesh3, mat, mbs.frames.ConstantSpin(rate=1.0), name="blade")
    with pytest.raises(ValueError, match=r"distinct names.*\['blade'\]"):
        mbs.Model([a, b])
    c = mbs.Body(mesh3, mat, mbs.frames.ConstantSpin(rate=1.0))
    d = mbs.Body(mesh3, mat, mbs.frames.ConstantSpin(rate=1.0))
    assert len(mbs.Model([c, d]).bodies) == 2  # default names are distinct


def test_null_pivot_count_is_not_silenced():
    """With MUMPS as the factorization, a failure to read its null-pivot count is raised, not
    read as 0 (which turned the singularity check off); other factorizations report 0 and
    leave a singular matrix to the KSP's reason."""
    from petsc4py import PETSc

    from dolfinx_mbs.static import null_pivots

    class FailingFactor:
        def getMumpsInfog(self, i):
            raise PETSc.Error(73)

    class PC:
        def __init__(self, solver):
            self.solver = solver

        def getType(self):
            return PETSc.PC.Type.LU

        def getFactorSolverType(self):
            return self.solver

        def getFactorMatrix(self):
            return FailingFactor()

    class KSP:
        def __init__(self, solver):
            self.pc = PC(solver)

        def getPC(self):
            return self.pc

    with pytest.raises(PETSc.Error):
        null_pivots(KSP("mumps"))
    assert null_pivots(KSP("petsc")) == 0



def test_bad_system_requests(mesh3):
    """model.system names a bad formulation or constraint form; the assembly refuses frame
    states that are not one per body; on every rank."""
    body = mbs.Body(mesh3, mbs.materials.LinearElastic(E=2e11, nu=0.3, density=7800.0),
                    mbs.frames.ConstantSpin(rate=10.0))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    with pytest.raises(ValueError, match="formulation must be one of"):
        model.system("newmark")
    with pytest.raises(ValueError, match="constraints must be 'maggi' or 'multipliers'"):
        model.system("second-order", constraints="penalty")
    with pytest.raises(ValueError, match="multipliers' works with the second-order"):
        model.system("hamiltonian", constraints="multipliers")
    with pytest.raises(ValueError, match="one FrameState per body"):
        model.assembly.stiffness(0.0, states=[])
    assert isinstance(model.system("hamiltonian"), mbs.systems.HamiltonSystem)
