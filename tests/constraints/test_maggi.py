"""The Maggi reducer against independent references.

* PETSc's PtAP products A^T X A equal the same products formed with scipy from the gathered A
  and X, on 1, 2 and 3 ranks; A spans exactly the null space of the constraint rows (B A = 0,
  n_reduced = N - rank B) and a0 satisfies them (B a0 = c).
* The jets of :func:`relative_motion` are the time derivatives of its values (central finite
  differences of C = R_dst^T R_src and z computed directly from the rotation callables).
* A rigid region moves rigidly, equals hand-written rigid-motion rows, and is the limit of a
  stiff end region (tied second body).
* Inconsistent constraints raise on every rank naming both; redundant ones are reported by name
  with the number of rows counted from the mesh.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.constraints import GROUND, relative_motion
from dolfinx_mbs.frames import rotation_about
from tests.models import ROOT
from tests.models.gather import gather_aij, gather_vec

COMM = MPI.COMM_WORLD


# -- helpers -----------------------------------------------------------------------------------
def constraint_matrix(model, t=0.0):
    """B (scipy CSR) and c of every constraint's rows, gathered over the ranks."""
    N = model.space.n_global
    rows, cols, vals, rhs = [], [], [], []
    m = 0
    for c in model.constraints:
        r = c.rows(model.space, t)
        for indptr, cc, coef, rr in COMM.allgather((r.indptr, r.cols, r.coef[:, 0],
                                                    r.rhs[:, 0])):
            n = len(indptr) - 1
            rows.append(m + np.repeat(np.arange(n), np.diff(indptr)))
            cols.append(np.asarray(cc, np.int64))
            vals.append(np.asarray(coef))
            rhs.append(np.asarray(rr))
            m += n
    B = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(m, N))
    return B, np.concatenate(rhs)


def nodal_field(body):
    """(coordinates (n, gdim), displacement (n, gdim)) of every node, on every rank, sorted
    by coordinates (independent of the partition)."""
    V = body.V
    n = V.dofmap.index_map.size_local
    g = body.gdim
    x = V.tabulate_dof_coordinates()[:n, :g]
    u = body.u.x.array[: n * g].reshape(n, g)
    x = np.concatenate(COMM.allgather(x))
    u = np.concatenate(COMM.allgather(u))
    order = np.lexsort(np.round(x, 10).T[::-1])
    return x[order], u[order]


def count_facet_nodes(body, marker):
    """Global number of dof nodes on the boundary facets where ``marker`` holds, counted through
    DOLFINx's facet topology (not through the package's node selection)."""
    mesh = body.mesh
    fdim = mesh.topology.dim - 1
    mesh.topology.create_connectivity(fdim, fdim + 1)
    facets = dmesh.locate_entities_boundary(mesh, fdim, marker)
    nodes = fem.locate_dofs_topological(body.V, fdim, facets)
    own = np.count_nonzero(nodes < body.V.dofmap.index_map.size_local)
    return COMM.allreduce(int(own), op=MPI.SUM)


# -- 1, 2: PtAP and the null space ---------------------------------------------------------------
def two_box_model(comm):
    """Two P2 hex boxes end to end (different materials, one spinning frame): clamp at x=0,
    tie at x=0.5, rigid end region near x=1 and one general row with a nonzero right side."""
    frame = mbs.frames.ConstantSpin(axis=(0.3, 0.2, 1.0), rate=60.0, origin=(0.0, 0.05, 0.0))
    bodies = []
    for name, (x0, x1), mat in (
            ("a", (0.0, 0.5), mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0)),
            ("b", (0.5, 1.0), mbs.materials.LinearElastic(E=70e9, nu=0.33, density=2700.0))):
        mesh = dmesh.create_box(comm, [np.array([x0, 0.0, 0.0]), np.array([x1, 0.1, 0.05])],
                                [4, 2, 2], dmesh.CellType.hexahedron)
        bodies.append(mbs.Body(mesh, mat, frame, degree=2, name=name))
    a, b = bodies
    model = mbs.Model(bodies)
    model.clamp(a, lambda x: np.isclose(x[0], 0.0), name="root")
    model.tie(a, b, lambda x: np.isclose(x[0], 0.5), name="glue")
    model.rigid(b, lambda x: x[0] >= 0.9, name="end")
    # a tie-dependent dof of b and a rigid-region dof of b: eliminated through both chains
    row = {model.dof(b, (0.5, 0.1, 0.05), 0): 1.0, model.dof(b, (1.0, 0.0, 0.0), 1): -0.5}
    model.constrain([row], rhs=[1.0e-3], name="link")
    return model


def test_ptap_matches_scipy():
    model = two_box_model(COMM)
    red = model.reducer
    A = gather_aij(red.A)
    N, n = A.shape
    assert N == model.space.n_global and n == red.n_reduced
    assert not red.redundant
    diffs = {}
    for key, X in (("M", model.assembly.mass()), ("K", model.assembly.stiffness(0.0))):
        Xs = gather_aij(X)
        ref = (A.T @ Xs @ A).tocsr()
        got = gather_aij(red.reduce(X))
        assert got.shape == (n, n)
        diffs[key] = spla.norm(ref - got) / spla.norm(ref)
        assert diffs[key] <= 1e-12, (key, diffs[key])
    # A spans the null space of the constraint rows, and a0 satisfies them
    B, c = constraint_matrix(model)
    BA = spla.norm(B @ A) / (spla.norm(B) * spla.norm(A))
    assert BA <= 1e-12, BA
    a0 = gather_vec(red.a0)
    res = np.linalg.norm(B @ a0 - c) / np.linalg.norm(c)
    assert res <= 1e-12, res
    assert np.abs(a0).max() > 0.0  # the general row's right side reaches a0
    rank_B = np.linalg.matrix_rank(B.toarray())
    assert rank_B == B.shape[0]  # no redundant row in this set
    assert n + rank_B == N  # dim null(B) ...
    assert np.linalg.matrix_rank(A.toarray()) == n  # ... spanned by A's independent columns
    if COMM.rank == 0:
        print(f"\n[ranks={COMM.size}] N={N} n={n} rows={B.shape[0]} |dM|={diffs['M']:.2e} "
              f"|dK|={diffs['K']:.2e} |BA|={BA:.2e} |Ba0-c|={res:.2e}")


@pytest.mark.serial
def test_ptap_three_ranks():
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1")
    cmd = mbs.compat.mpiexec_command(3) + [sys.executable, "-m", "mpi4py", "-m",
           "pytest", "-q", "-p", "no:cacheprovider", "tests/constraints/test_maggi.py", "-k",
           "test_ptap_matches_scipy"]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "1 passed" in text, text


# -- 3: jets of the relative motion -------------------------------------------------------------
AX_S = np.array([0.3, -0.5, 0.8])
AX_D = np.array([-0.6, 0.2, 0.4])


def rot_src(t):
    return rotation_about(AX_S, 0.3 * np.sin(2 * t) + 0.5 * t * t)


def org_src(t):
    return np.array([0.1 * np.cos(t), 0.2 * t, 0.05 * t * t])


def rot_dst(t):
    return rotation_about(AX_D, -0.4 * np.cos(1.5 * t) + 0.2 * t)


def org_dst(t):
    return np.array([0.3 * np.sin(t), -0.1 * t * t, 0.02 * t ** 3])


def direct(t, X_s, X_d, ground):
    """C = R_d^T R_s and z = R_d^T (r_s + R_s X_s - r_d) - X_d from the callables themselves."""
    Rs, rs = rot_src(t), org_src(t)
    Rd, rd = (np.eye(3), np.zeros(3)) if ground else (rot_dst(t), org_dst(t))
    return Rd.T @ Rs, (rs + X_s @ Rs.T - rd) @ Rd - X_d


@pytest.mark.parametrize("ground", [False, True], ids=["frame", "ground"])
def test_relative_motion_jets(ground):
    src = mbs.frames.Prescribed(rot_src, org_src)
    dst = mbs.frames.Prescribed(rot_dst, org_dst)
    X_s = np.array([[0.2, -0.1, 0.3], [1.0, 0.5, -0.2], [0.0, 0.0, 0.0]])
    X_d = np.array([[0.1, 0.1, 0.1], [-0.3, 0.7, 0.2], [0.5, 0.0, -0.4]])
    h = 1e-4
    worst = 0.0
    for t in (0.37, 1.3):
        C, z = relative_motion(src.state(t), GROUND if ground else dst.state(t), X_s, X_d)
        assert C.shape == (3, 3, 3) and z.shape == (3, 3, 3)
        (C0, z0), (Cp, zp), (Cm, zm) = (direct(s, X_s, X_d, ground) for s in (t, t + h, t - h))
        for jet, f0, fp, fm in ((C, C0, Cp, Cm), (z, z0, zp, zm)):
            if jet is z:
                jet = jet.transpose(1, 0, 2)  # (n, jet, xyz) -> (jet, n, xyz)
            ref = [f0, (fp - fm) / (2 * h), (fp - 2 * f0 + fm) / (h * h)]
            for k in range(3):
                err = np.abs(jet[k] - ref[k]).max() / max(np.abs(ref[k]).max(), 1e-3)
                worst = max(worst, err)
                assert err <= (1e-12 if k == 0 else 1e-6), (t, k, err)
    if ground:  # z is the global gap r_s + R_s X_s - X_d and C = R_s
        C, z = relative_motion(src.state(0.5), GROUND, X_s, X_d)
        assert np.allclose(C[0], rot_src(0.5), rtol=0, atol=1e-14)
        assert np.allclose(z[:, 0], org_src(0.5) + X_s @ rot_src(0.5).T - X_d, atol=1e-14)
    if COMM.rank == 0:
        print(f"\n[relative_motion ground={ground}] worst relative jet error {worst:.2e}")


# -- 4: rigid region -------------------------------------------------------------------------
L, H, X_RIGID = 1.0, 0.2, 0.9
E2 = 70e9
TRACTION = (2.0e5, -1.0e6)
FRAME2 = mbs.frames.Planar()


def strip(x0, x1, nx, E, name):
    mesh = dmesh.create_rectangle(COMM, [np.array([x0, 0.0]), np.array([x1, H])], [nx, 4],
                                  dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=E, nu=0.3, density=2700.0, thickness=0.01)
    return mbs.Body(mesh, mat, FRAME2, degree=2, name=name)



def in_region(x):
    return x[0] >= X_RIGID - 1e-9


def solve_rigid_model(how):
    body = strip(0.0, L, 20, E2, "strip")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0), name="root")
    if how == "rigid":
        model.rigid(body, in_region, name="end")
    else:  # the same rigid motion as hand-written rows over two reference nodes
        xs, _ = nodal_field(body)
        pts = xs[in_region(xs.T)]
        p0, p1 = np.array([X_RIGID, 0.0]), np.array([L, 0.0])
        i0 = int(np.argmin(np.linalg.norm(pts - p0, axis=1)))
        i1 = int(np.argmin(np.linalg.norm(pts - p1, axis=1)))
        dx = p1[0] - p0[0]
        d = {(i, k): model.dof(body, pts[i], k) for i in range(len(pts)) for k in range(2)}
        rows = []
        for i, (xi, yi) in enumerate(pts):
            if i == i0:
                continue
            # theta = (u1y - u0y) / dx;  u_i = u_0 + theta e_z x (x_i - x_0)
            ry, rx = (yi - p0[1]) / dx, (xi - p0[0]) / dx
            rx_row = {d[i, 0]: 1.0, d[i0, 0]: -1.0}
            if ry != 0.0:
                rx_row[d[i1, 1]] = ry
                rx_row[d[i0, 1]] = -ry
            rows.append(rx_row)
            if i == i1:
                continue
            ry_row = {d[i, 1]: 1.0, d[i1, 1]: -rx, d[i0, 1]: rx - 1.0}
            rows.append({k: v for k, v in ry_row.items() if v != 0.0})
        model.constrain(rows, name="end rows")
        assert len(rows) == 2 * len(pts) - 3
    model.apply_load(body, traction=TRACTION, where=lambda x: np.isclose(x[0], L))
    model.solve_static()
    return model, body


def solve_stiff_end(factor):
    soft = strip(0.0, X_RIGID, 18, E2, "soft")
    hard = strip(X_RIGID, L, 2, factor * E2, "hard")
    model = mbs.Model([soft, hard])
    model.clamp(soft, lambda x: np.isclose(x[0], 0.0), name="root")
    model.tie(soft, hard, lambda x: np.isclose(x[0], X_RIGID), name="glue")
    model.apply_load(hard, traction=TRACTION, where=lambda x: np.isclose(x[0], L))
    model.solve_static()
    return nodal_field(soft), nodal_field(hard)


def tip(x, u):
    """Mean displacement over the nodes at x = L."""
    return u[np.isclose(x[:, 0], L)].mean(axis=0)


def test_rigid_region_moves_rigidly():
    _, body = solve_rigid_model("rigid")
    x, u = nodal_field(body)
    sel = in_region(x.T)
    assert np.count_nonzero(sel) == 5 * 9  # two cells deep: 5 P2 node columns of 2 * 4 + 1
    xr, ur = x[sel], u[sel]
    xm = xr.mean(axis=0)
    T = np.zeros((len(xr), 2, 3))
    T[:, 0, 0] = T[:, 1, 1] = 1.0
    T[:, 0, 2] = -(xr[:, 1] - xm[1])
    T[:, 1, 2] = xr[:, 0] - xm[0]
    T = T.reshape(-1, 3)
    p, *_ = np.linalg.lstsq(T, ur.reshape(-1), rcond=None)
    fit = np.abs(T @ p - ur.reshape(-1)).max() / np.abs(u).max()
    assert fit <= 1e-10, fit
    assert abs(p[2]) * H > 1e-3 * np.abs(ur).max()  # the region does rotate
    # the same constraint written by hand as linear rows gives the same solution
    _, body2 = solve_rigid_model("rows")
    x2, u2 = nodal_field(body2)
    assert np.allclose(x, x2, atol=1e-12)
    rows_diff = np.abs(u - u2).max() / np.abs(u).max()
    assert rows_diff <= 1e-9, rows_diff
    # a stiff end region (tied second body, E x factor) tends to the rigid one like 1/factor
    ref = tip(x, u)
    diffs = []
    for factor in (1e2, 1e4):
        (xs, us), (xh, uh) = solve_stiff_end(factor)
        diffs.append(np.linalg.norm(tip(xh, uh) - ref) / np.linalg.norm(ref))
        soft_part = x[:, 0] <= X_RIGID + 1e-9
        assert np.allclose(xs, x[soft_part], atol=1e-12)
    assert diffs[1] <= 5e-6, diffs
    assert 30.0 <= diffs[0] / diffs[1] <= 300.0, diffs
    if COMM.rank == 0:
        print(f"\n[rigid region] fit residual {fit:.2e}, rows vs rigid {rows_diff:.2e}, "
              f"stiff-end tip differences (1e2, 1e4) {diffs[0]:.2e} {diffs[1]:.2e}, "
              f"tip {ref}")


# -- 5: inconsistent and redundant constraints ---------------------------------------------
def small_box(name="box"):
    mesh = dmesh.create_box(COMM, [np.array([0.0, 0.0, 0.0]), np.array([0.4, 0.1, 0.1])],
                            [4, 2, 2], dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0)
    return mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=0.0), degree=2, name=name)


def at_root(x):
    return np.isclose(x[0], 0.0)


@pytest.mark.parametrize("order", ["prescribe-first", "clamp-first"])
def test_inconsistent_error_everywhere(order):
    body = small_box()
    model = mbs.Model([body])
    if order == "prescribe-first":
        model.prescribe(body, value=(1e-3, 0.0, 0.0), where=at_root, name="push")
        model.clamp(body, at_root, name="hold")
    else:
        model.clamp(body, at_root, name="hold")
        model.prescribe(body, value=(1e-3, 0.0, 0.0), where=at_root, name="push")
    msg = None
    try:
        model.reducer
    except ValueError as e:
        msg = str(e)
    msgs = COMM.allgather(msg)
    assert all(m is not None for m in msgs), msgs
    assert len(set(msgs)) == 1, msgs
    assert "'push'" in msg and "'hold'" in msg and "1.000e-03" in msg, msg


def test_redundant_reported_by_name():
    body = small_box()
    model = mbs.Model([body])
    model.clamp(body, at_root, name="first")
    model.clamp(body, at_root, name="second")
    red = model.reducer
    n_face = count_facet_nodes(body, at_root)
    assert n_face == (2 * 2 + 1) ** 2  # P2 nodes of a 2 x 2 face
    report = red.redundancy()
    assert report == {("second", ("first",)): 3 * n_face}, report
    assert all(r == report for r in COMM.allgather(report))
    assert red.n_dependent == 3 * n_face
    assert red.n_reduced == model.space.n_global - 3 * n_face
    assert all(r["constraint"] == "second" and r["implied_by"] == ["first"]
               for r in red.redundant)
