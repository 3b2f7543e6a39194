"""The unit frame loads of a body on straight simplices as products of its mass and c_E
matrices with the nodes' positions and the unit translations (``BodyLoads(matrices=...)``,
no form compiled) against the assembled unit load forms (a second formulation), in 2D and
3D, serially and on 2 ranks."""

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.assembly.body_loads import BodyLoads, exact_unit_loads
from dolfinx_mbs.assembly.operators import BodyOperators, coupling_basis

COMM = MPI.COMM_WORLD


def _body(dim, degree):
    frame = mbs.frames.Hinge(axis=(0, 0, 1), name="hub")
    if dim == 2:
        msh = dmesh.create_rectangle(COMM, [np.array([0.1, -0.05]), np.array([1.1, 0.07])],
                                     [7, 3])
        mat = mbs.materials.PlaneStress(E=1e7, nu=0.3, density=900.0, thickness=0.02)
    else:
        msh = dmesh.create_box(COMM, [np.array([0.1, -0.05, -0.03]),
                                      np.array([1.1, 0.07, 0.04])], [4, 2, 1],
                               dmesh.CellType.tetrahedron)
        mat = mbs.materials.LinearElastic(E=1e7, nu=0.3, density=900.0)
    return mbs.Body(msh, mat, frame, degree=degree)


@pytest.mark.parametrize("dim,degree", [(2, 1), (2, 2), (3, 2)])
def test_unit_loads_from_the_matrices_equal_the_forms(dim, degree):
    body = _body(dim, degree)
    assert exact_unit_loads(body)
    ops = BodyOperators(body, strategy="basis")
    basis = [(c, E) for c, E in coupling_basis(body.gdim)]
    by_forms = BodyLoads(body, basis).unit_loads
    mats = (ops.M, [B for _, B in ops.coupling_matrices])
    by_mats = BodyLoads(body, basis, matrices=mats).unit_loads
    assert by_forms is not None and by_mats is not None
    pairs = [(a, b) for (_, a), (_, b) in zip(by_forms.spin, by_mats.spin)]
    pairs += list(zip(by_forms.accel, by_mats.accel))
    assert len(pairs) == len(basis) + body.gdim
    for a, b in pairs:
        ref = COMM.allreduce(np.abs(a.array).max(initial=0.0), op=MPI.MAX)
        err = COMM.allreduce(np.abs(a.array - b.array).max(initial=0.0), op=MPI.MAX)
        assert ref > 0.0 and err < 1e-13 * ref, (err, ref)


def test_not_exact_on_quadrilaterals():
    msh = dmesh.create_rectangle(COMM, [np.array([0.0, 0.0]), np.array([1.0, 0.1])], [4, 1],
                                 dmesh.CellType.quadrilateral)
    body = mbs.Body(msh, mbs.materials.PlaneStress(E=1e7, nu=0.3, density=900.0),
                    mbs.frames.Hinge(name="hub"), degree=2)
    assert not exact_unit_loads(body)
