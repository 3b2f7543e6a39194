"""Faults that happen on one rank only, run by tests/foundation/test_collective.py under
mpiexec -n 2: ``python collective_cases.py CASE DIR``. Each rank writes ``DIR/rank<R>.txt``
holding ``TYPE: MESSAGE`` of the error it raised (or ``no error``); a hang is caught by the
test's timeout."""

import sys

import numpy as np
from dolfinx import mesh as dm
from mpi4py import MPI  # first: DOLFINx's PyPI wheel loads its MPI through mpi4py

import dolfinx_mbs as mbs

comm = MPI.COMM_WORLD
case, folder = sys.argv[1], sys.argv[2]


def beam():
    mesh = dm.create_rectangle(comm, [np.zeros(2), np.array([1.0, 0.1])], [8, 1],
                               dm.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=70e9, nu=0.3, density=2700.0, thickness=0.01)
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=10.0))
    return body, mbs.Model([body])


def run():
    body, model = beam()
    if case == "point-load-nan":
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.apply_load(body, point=(1, 0), force=lambda t: (0, np.nan if t >= 0.05 else 1e3))
        model.integrate(t_end=0.1, dt=0.01, progress=False)
    elif case == "point-load-raises":
        def force(t):
            if t >= 0.05:
                raise ZeroDivisionError("the user's force table ends at t = 0.05")
            return (0.0, 1e3)
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.apply_load(body, point=(1, 0), force=force)
        model.integrate(t_end=0.1, dt=0.01, progress=False)
    elif case == "output-under-a-file":
        if comm.rank == 0:
            open(f"{folder}/f", "w").close()
        comm.Barrier()
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.integrate(t_end=2e-3, dt=1e-3, output=f"{folder}/f/run", progress=False)
    elif case == "where-raises-on-one-rank":
        def where(x):
            if comm.rank == comm.size - 1:
                raise KeyError("the user's node table has no entry for this rank's nodes")
            return np.isclose(x[0], 0.0)
        model.clamp(body, where)
    elif case == "traction-where-raises-on-one-rank":
        def where(x):
            if comm.rank == comm.size - 1:
                raise ValueError("a predicate that fails on the last rank only")
            return np.isclose(x[0], 1.0)
        model.apply_load(body, traction=(0.0, 1.0), where=where)
    elif case == "callback-raises-on-one-rank":
        def callback(t, u, v):
            if comm.rank == comm.size - 1 and t > 0.02:
                raise RuntimeError("the user's monitor fails on the last rank")
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.integrate(t_end=0.05, dt=0.01, callback=callback, progress=False)
    elif case == "hinge-callback-raises-on-one-rank":
        def watch(state):
            if comm.rank == comm.size - 1 and state.t > 0.02:
                raise RuntimeError("the user's monitor fails on the last rank")
        hub = mbs.frames.Hinge(axis=(0, 0, 1), rate=1.0, name="hub")
        rigid = mbs.Model([mbs.RigidBody(mass=1.0, inertia=np.diag([0.1, 0.1, 0.1]),
                                         frame=hub)])
        rigid.integrate(t_end=0.05, dt=0.01, callback=watch, progress=False)
    elif case == "motion-raises-on-one-rank":
        def rotation(t):
            if comm.rank == comm.size - 1 and t >= 0.03:
                raise RuntimeError("the user's motion table fails on the last rank")
            return mbs.frames.rotation_about((0.0, 0.0, 1.0), 10.0 * t)
        mesh = dm.create_rectangle(comm, [np.zeros(2), np.array([1.0, 0.1])], [8, 1],
                                   dm.CellType.quadrilateral)
        mat = mbs.materials.PlaneStress(E=70e9, nu=0.3, density=2700.0, thickness=0.01)
        body = mbs.Body(mesh, mat, mbs.frames.Prescribed(rotation, time_scale=1e-3))
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.integrate(t_end=0.05, dt=0.01, progress=False)
    elif case == "output-unwritable":
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.integrate(t_end=2e-3, dt=1e-3, output="/proc/no-such-place/run", progress=False)
    else:
        raise SystemExit(f"unknown case {case}")


try:
    run()
    text = "no error"
except Exception as e:  # noqa: BLE001
    text = f"{type(e).__name__}: {' '.join(str(e).split())}"
with open(f"{folder}/rank{comm.rank}.txt", "w") as f:
    f.write(text)
