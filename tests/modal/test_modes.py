"""Complex modes: damping ratios of Rayleigh damping against the closed form, and the mode
shapes written for ParaView."""

import os
import pathlib

import dolfinx.mesh as dm
import numpy as np
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.readback import read_back


def test_rayleigh_damping_ratios_and_shapes(tmp_path_factory):
    """For proportional damping a M + b K the modes are the undamped ones and
    zeta_k = a / (2 w_k) + b w_k / 2, lambda_k = w_k (-zeta_k + i sqrt(1 - zeta_k^2))."""
    comm = MPI.COMM_WORLD
    mesh = dm.create_box(comm, [np.zeros(3), np.array([1.0, 0.05, 0.03])], [20, 2, 1],
                         dm.CellType.hexahedron)
    w1 = 2 * np.pi * 25.0
    a, b = 2 * 0.01 * w1 * 0.5, 2 * 0.01 / w1 * 0.5
    mat = mbs.materials.LinearElastic(E=70e9, nu=0.3, density=2700.0, rayleigh=(a, b))
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=0.0), degree=2, name="plate")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    w = model.natural_frequencies(n=4)
    stem = comm.bcast(str(tmp_path_factory.mktemp("modes") / "m") if comm.rank == 0 else None)
    r = model.modes(n=4, output=stem)
    zeta = a / (2 * w) + b * w / 2
    # a result object; read as the dict it was, too
    assert isinstance(r, mbs.modal.ModalResult) and r["frequencies"] is r.frequencies
    assert {"eigenvalues", "frequencies", "damping_ratios", "rigid_dim"} <= set(r)
    assert np.allclose(r.damping_ratios, zeta, rtol=1e-7, atol=0), (r.damping_ratios, zeta)
    assert np.allclose(np.abs(r.eigenvalues), w, rtol=1e-8, atol=0)
    assert np.allclose(r.frequencies, w * np.sqrt(1 - zeta**2), rtol=1e-8, atol=0)
    if comm.rank == 0 and mbs.compat.has_vtx:
        data = read_back(stem + "_plate.bp")
        if not isinstance(data, str):  # else no reader: the file is there, at least
            names = [f"mode{k}_{p}" for k in range(4) for p in ("re", "im")]
            assert all(data[n].shape == (1, len(data["ids"]), 3) for n in names)
            # normalized to a unit largest displacement over both parts
            assert all(np.isclose(max(np.abs(data[f"mode{k}_re"]).max(),
                                      np.abs(data[f"mode{k}_im"]).max()), 1.0, rtol=1e-12)
                       for k in range(4))
        assert os.path.isdir(stem + "_plate.bp")
    elif comm.rank == 0:
        text = pathlib.Path(stem + "_plate.xdmf").read_text()
        assert all(f"mode{k}_re" in text and f"mode{k}_im" in text for k in range(4))
