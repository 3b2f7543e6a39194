"""Probe (issue 43's speed criterion): a Schur complement on the cut faces, shared by every
harmonic index, against the present two-copy solve, on the sector of ``bench/cyclic.py``.

    mpirun -n 2 python bench/cyclic_schur.py 0.006 0.0035 1 compare   # the numbers recorded
    python bench/cyclic_schur.py 0.03 0.012 0,1,5,12 compare          # a quick check

Arguments: sector mesh size, blade mesh size, the harmonic indices (comma separated), and
``compare`` to time the package's own ``natural_frequencies(n=6, harmonic=k)`` first (same run,
same load). Printed, not written: the numbers recorded in ``bench/results/cyclic.md`` are this
script's output, copied with its command and load average.

The method (not in the package: measured slower here, see the results' Reading). With the
other constraints (the clamped bore) eliminated by a Maggi reducer of their own, the sector's
free dofs F split into the high face H, the low face L (pairwise: u_H = R u_L for k = 0) and the
interior I. The operator X = K - sigma M (prestress, spin softening; no Coriolis) of harmonic
index k on (I_c, I_s, L_c, L_s) is [[X_II, 0, .], [0, X_II, .], [., ., .]]: its interior block
is the same sector matrix for both copies and every k. So X_II is factored once (MUMPS LDL^T,
distributed; its negative pivots give the inertia), W = X_II^-1 X_IB (MatMatSolve, dense, B =
L + H, rows distributed) and the one-copy Schur complement P = X_BB - X_BI W (replicated) are
made once; per k the dense Schur complement of the two copies is
S(k) = [[A, s (b^T - b)], [s (b - b^T), A]], A = a + d + c (b + b^T), with a = P_LL,
b = P_LH Rb, d = Rb^T P_HH Rb (Rb the turn of each face node, c, s = cos, sin of k 2 pi / N; one
copy and c = +-1 for k = 0, N/2), Cholesky-factored on every rank (the inertia: Haynsworth,
copies x inertia(X_II) + inertia(S(k))). SLEPc's Krylov-Schur runs on shell matrices of the
reduced K and M (``E^T diag(X, X) E``, the face values gathered) with an exact solve as a
Python preconditioner of its shift-and-invert: condensation with W, the dense S(k) solve, an
interior solve of both copies (one MatMatSolve of two columns).

Timed: the parts (factor of X_II, W, P), each k, and the share of each operation in the
shift-and-invert applications. One BLAS thread per process.
"""
import os, sys, time
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from mpi4py import MPI
from petsc4py import PETSc
from slepc4py import SLEPc
from dolfinx_mbs.constraints.maggi import MaggiReducer

comm = MPI.COMM_WORLD
R0 = comm.rank == 0


TIMES = {}


def tick(key, t):
    TIMES[key] = TIMES.get(key, 0.0) + time.perf_counter() - t


def log(*a):
    if R0:
        print(*a, flush=True)


class Parts:
    def __init__(self, base, wheel, constraints):
        others = [c for c in constraints if c is not wheel.rows]
        self.T = T = MaggiReducer(base.space, others)
        self.base = base
        A = T.A
        ai, aj, av = A.getValuesCSR()
        cnt = np.diff(ai)
        r0 = base.space.rstart
        # status of owned full dofs: 1 free, 0 fixed, -1 other
        st = np.where(cnt == 0, 0, -1)
        st[T.independent - r0] = 1
        hi = np.concatenate([p.high.reshape(-1, p.high.shape[1]) for p in wheel.pairs])
        lo = np.concatenate([p.low for p in wheel.pairs])
        R = [np.kron(np.eye(len(p.high)), p.R) for p in wheel.pairs]
        self.g = wheel.pairs[0].R.shape[0]
        H = comm.allgather(hi)
        Lw = comm.allgather(lo)
        self.Rlist = comm.allgather(wheel.pairs[0].R)  # same per body assumed in proto
        H = np.concatenate(H).reshape(-1)
        Lw = np.concatenate(Lw).reshape(-1)
        n = base.space.n_local
        def status(full):
            own = (full >= r0) & (full < r0 + n)
            s = np.full(len(full), -9)
            s[own] = st[full[own] - r0]
            out = np.empty_like(s); comm.Allreduce(s, out, op=MPI.MAX); return out
        sH, sL = status(H), status(Lw)
        nodeH = sH.reshape(-1, self.g)
        nodeL = sL.reshape(-1, self.g)
        free = (nodeH == 1).all(1) & (nodeL == 1).all(1)
        fixed = (nodeH == 0).all(1) & (nodeL == 0).all(1)
        assert (free | fixed).all(), "not applicable"
        Hn = H.reshape(-1, self.g)[free].reshape(-1)
        Ln = Lw.reshape(-1, self.g)[free].reshape(-1)
        assert len(np.intersect1d(Hn, Ln)) == 0 and len(np.unique(Ln)) == len(Ln)
        dep = T.dependent_global
        self.Hr = Hn - np.searchsorted(dep, Hn)
        self.Lr = Ln - np.searchsorted(dep, Ln)
        self.nL = len(self.Lr)
        R = self.Rlist[0]
        self.Rb = sp.kron(sp.eye(len(self.Lr) // self.g), sp.csr_matrix(R)).tocsr()
        self.B = np.concatenate([self.Lr, self.Hr])   # global reduced indices, B order
        self.nB = len(self.B)
        # local
        rs, re = T.A.getOwnershipRangeColumn()
        self.rs, self.re = rs, re
        isB = np.zeros(re - rs, bool)
        ownB = (self.B >= rs) & (self.B < re)
        isB[self.B[ownB] - rs] = True
        self.ownB_pos = np.flatnonzero(ownB)           # positions in B order
        self.ownB_loc = self.B[ownB] - rs               # local index in F
        self.Iloc = np.flatnonzero(~isB)               # local interior indices in F
        self.nI_loc = len(self.Iloc)
        self.I_is = PETSc.IS().createGeneral((self.Iloc + rs).astype(PETSc.IntType), comm=comm)
        self.B_is_seq = PETSc.IS().createGeneral(self.B.astype(PETSc.IntType), comm=PETSc.COMM_SELF)
        log(f"F {T.n_reduced}, nL {self.nL}, nB {self.nB}")

    def factor(self, X):
        """X: the reduced F matrix (K - sigma M)."""
        t = time.perf_counter()
        self.X = X
        XII = X.createSubMatrix(self.I_is, self.I_is)
        XII.setOption(PETSc.Mat.Option.SYMMETRIC, True)
        ksp = PETSc.KSP().create(comm)
        ksp.setType("preonly")
        pc = ksp.getPC()
        pc.setType(sys_fact)
        pc.setFactorSolverType("mumps")
        ksp.setOperators(XII)
        ksp.setUp()
        self.F = pc.getFactorMatrix()
        self.negII = self.F.getMumpsInfog(12)
        self.ksp, self.XII = ksp, XII
        t1 = time.perf_counter()
        # X_IB dense, columns in B order
        nI = XII.getSize()[0]
        # build X_IB via getValues on local rows
        ai, aj, av = X.getValuesCSR()
        Xloc = sp.csr_matrix((av, aj, ai), shape=(self.re - self.rs, X.getSize()[1]))
        XIB = Xloc[self.Iloc][:, self.B]              # sparse (nIloc, nB)
        self.XIB = XIB.tocsr()
        Bd = PETSc.Mat().createDense([(self.nI_loc, nI), (None, self.nB)], comm=comm)
        Bd.setUp()
        Bd.getDenseArray()[:] = XIB.toarray()
        Bd.assemble()
        W = Bd.duplicate()
        self.F.matSolve(Bd, W)
        self.W = W.getDenseArray().copy()
        Bd.destroy(); W.destroy()
        t2 = time.perf_counter()
        # P = X_BB - X_BI W
        sub = X.createSubMatrices(self.B_is_seq, self.B_is_seq)[0]
        XBB = sub.convert("dense").getDenseArray().copy()
        part = np.asarray(self.XIB.T @ self.W)
        tot = np.empty_like(part); comm.Allreduce(np.ascontiguousarray(part), tot, op=MPI.SUM); P = XBB - tot
        nL = self.nL
        Rb = self.Rb
        a = P[:nL, :nL]
        b = (Rb.T @ P[nL:, :nL]).T           # P_LH Rb
        d = np.asarray(Rb.T @ (Rb.T @ P[nL:, nL:]).T).T
        self.a, self.b, self.d = a, b, d
        t3 = time.perf_counter()
        log(f"factor XII {t1 - t:.2f} s, W {t2 - t1:.2f} s, P {t3 - t2:.2f} s; negII {self.negII}")


sys_fact = "cholesky"


class Harm:
    """Operators of one k."""

    def __init__(self, parts, k, N, Xf, Mf):
        self.p = p = parts
        self.k = k
        self.copies = 1 if (2 * k) % N == 0 else 2
        al = 2 * np.pi * k / N
        self.c, self.s = np.cos(al), np.sin(al)
        if self.copies == 1:
            self.c, self.s = round(self.c), 0.0
        a, b, d = p.a, p.b, p.d
        A = a + d + self.c * (b + b.T)
        if self.copies == 2:
            C = self.s * (b.T - b)
            S = np.block([[A, C], [-C, A]])
        else:
            S = A
        t = time.perf_counter()
        try:
            self.cho = sla.cho_factor(S)
            self.negS = 0
        except np.linalg.LinAlgError:
            self.cho = None
            self.lu = sla.lu_factor(S)
            self.negS = int(np.sum(np.linalg.eigvalsh(S) < 0))
        log(f"k {k}: S {S.shape} {time.perf_counter() - t:.2f} s, neg {self.negS}")
        self.nb = p.nL * self.copies
        nloc = p.nI_loc * self.copies + (self.nb if R0 else 0)
        self.nloc = nloc
        self.Xf, self.Mf = Xf, Mf
        self.u = [Xf.createVecRight() for _ in range(2)]
        self.v = [Xf.createVecLeft() for _ in range(2)]

    def sizes(self):
        return (self.nloc, None)

    # y layout: [I^c, (I^s), (B^c, B^s on rank 0)]
    def split(self, y):
        p, m = self.p, self.p.nI_loc
        yI = [y[j * m:(j + 1) * m] for j in range(self.copies)]
        yB = y[self.copies * m:] if R0 else None
        yB = comm.bcast(yB, root=0)
        return yI, yB.reshape(self.copies, -1)

    def EB(self, yB):
        """(copies, nB) full B values (L then H) of each copy."""
        p = self.p
        out = np.zeros((self.copies, p.nB))
        if self.copies == 1:
            out[0, :p.nL] = yB[0]
            out[0, p.nL:] = self.c * (p.Rb @ yB[0])
        else:
            c, s = self.c, self.s
            out[0, :p.nL] = yB[0]
            out[0, p.nL:] = p.Rb @ (c * yB[0] - s * yB[1])
            out[1, :p.nL] = yB[1]
            out[1, p.nL:] = p.Rb @ (s * yB[0] + c * yB[1])
        return out

    def EBt(self, V):
        """E^T of (copies, nB) B values -> (copies, nL)."""
        p = self.p
        VL, VH = V[:, :p.nL], V[:, p.nL:]
        RH = np.array([p.Rb.T @ VH[j] for j in range(self.copies)])
        if self.copies == 1:
            return VL + self.c * RH
        c, s = self.c, self.s
        return np.array([VL[0] + c * RH[0] + s * RH[1], VL[1] - s * RH[0] + c * RH[1]])

    def apply(self, X, y):
        t0 = time.perf_counter()
        try:
            return self._apply(X, y)
        finally:
            tick("operator mults", t0)

    def _apply(self, X, y):
        p = self.p
        yI, yB = self.split(y)
        uB = self.EB(yB)
        out = np.empty_like(y)
        Vb = np.zeros((self.copies, p.nB))
        m = p.nI_loc
        for j in range(self.copies):
            u = self.u[j].array
            u[p.Iloc] = yI[j]
            u[p.ownB_loc] = uB[j, p.ownB_pos]
            X.mult(self.u[j], self.v[j])
            v = self.v[j].getArray(readonly=True)
            out[j * m:(j + 1) * m] = v[p.Iloc]
            Vb[j, p.ownB_pos] = v[p.ownB_loc]
        Vr = np.empty_like(Vb); comm.Reduce(Vb, Vr, op=MPI.SUM, root=0); Vb = Vr
        if R0:
            out[self.copies * m:] = self.EBt(Vb).reshape(-1)
        return out

    def solve(self, b):
        p = self.p
        m = p.nI_loc
        bI = [b[j * m:(j + 1) * m] for j in range(self.copies)]
        bIm = np.array(bI).T                      # (m, copies)
        t0 = time.perf_counter()
        g = p.W.T @ bIm                           # (nB, copies) partial
        tick("W pass", t0)
        g = np.ascontiguousarray(g); gt = np.empty_like(g); comm.Allreduce(g, gt, op=MPI.SUM); g = gt.T       # (copies, nB)
        bB = comm.bcast(b[self.copies * m:] if R0 else None, root=0).reshape(self.copies, -1)
        rhs = (bB - self.EBt(g)).reshape(-1)
        t0 = time.perf_counter()
        xB = sla.cho_solve(self.cho, rhs) if self.cho is not None else sla.lu_solve(self.lu, rhs)
        uB = self.EB(xB.reshape(self.copies, -1))   # (copies, nB)
        # interior: X_II^{-1} (b_I - X_IB uB)
        tick("dense S solve", t0)
        r = bIm - p.XIB @ uB.T
        t0 = time.perf_counter()
        x = np.empty_like(b)
        Rm = PETSc.Mat().createDense([(m, None), (None, self.copies)], comm=comm)
        Rm.setUp()
        Rm.getDenseArray()[:] = r
        Rm.assemble()
        Xm = Rm.duplicate()
        p.F.matSolve(Rm, Xm)
        xi = Xm.getDenseArray()
        tick("interior solve", t0)
        for j in range(self.copies):
            x[j * m:(j + 1) * m] = xi[:, j]
        Rm.destroy(); Xm.destroy()
        if R0:
            x[self.copies * m:] = xB
        return x


class ShellOp:
    def __init__(self, h, X):
        self.h, self.X = h, X

    def mult(self, A, x, y):
        y.array[:] = self.h.apply(self.X, x.getArray(readonly=True))


class ShellPC:
    def __init__(self, h):
        self.h = h
        self.count = 0

    def apply(self, pc, x, y):
        self.count += 1
        y.array[:] = self.h.solve(x.getArray(readonly=True))


def eigs(h, n=6, tol=1e-12):
    sz = h.sizes()
    A = PETSc.Mat().createPython((sz, sz), ShellOp(h, h.Xf), comm=comm); A.setUp()
    B = PETSc.Mat().createPython((sz, sz), ShellOp(h, h.Mf), comm=comm); B.setUp()
    eps = SLEPc.EPS().create(comm)
    eps.setOperators(A, B)
    eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
    eps.setDimensions(nev=n)
    eps.setTarget(0.0)
    eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
    eps.setTolerances(tol=tol, max_it=1000)
    st = eps.getST()
    st.setType(SLEPc.ST.Type.SINVERT)
    st.setMatMode(SLEPc.ST.MatMode.SHELL)
    ksp = st.getKSP()
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("python")
    ctx = ShellPC(h)
    pc.setPythonContext(ctx)
    eps.solve()
    nconv = eps.getConverged()
    lam = np.array([eps.getEigenvalue(i).real for i in range(nconv)])
    lam = comm.bcast(lam, root=0)
    lam = np.sort(lam[np.argsort(np.abs(lam))[:n]])
    eps.destroy()
    return np.sign(lam) * np.sqrt(np.abs(lam)), ctx.count


if __name__ == "__main__":
    import cyclic as bc
    size = float(sys.argv[1]); bsize = float(sys.argv[2])
    ks = [int(k) for k in sys.argv[3].split(",")]
    compare = len(sys.argv) > 4 and sys.argv[4] == "compare"
    log("load at start", os.getloadavg())
    t0 = time.perf_counter()
    model, body, sector, mesh = bc.sector_model(size, bsize, 10000 * np.pi / 30)
    model.assembly.at(0.0)
    log("setup", time.perf_counter() - t0, "dofs", body.V.dofmap.index_map.size_global * 3)
    base = model.derived.second_order()
    REF = {}
    if compare:
        for k in ks:
            t = time.perf_counter()
            w0 = REF[k] = model.natural_frequencies(n=6, harmonic=k)
            log(f"present path k {k}: {time.perf_counter() - t:.2f} s {w0 / 2 / np.pi}")
        model.derived.systems.clear()
        import gc; gc.collect()
    t = time.perf_counter()
    parts = Parts(base, model.wheel, model.constraints)
    asm = base.assembly
    Kf = parts.T.reduce(asm.stiffness(0.0, angular_acceleration=False), key="K")
    Mf = parts.T.reduce(asm.mass(), key="M")
    log("parts", time.perf_counter() - t)
    parts.factor(Kf)
    log("prep total", time.perf_counter() - t)
    tot = time.perf_counter() - t
    for k in ks:
        t = time.perf_counter()
        h = Harm(parts, k, 24, Kf, Mf)
        w, cnt = eigs(h)
        dt = time.perf_counter() - t
        tot += dt
        log(f"k {k}: {dt:.2f} s, {cnt} solves, {w / 2 / np.pi}")
        if k in REF:
            log(f"   max rel. diff from the present path {np.max(np.abs(w - REF[k]) / REF[k]):.1e}")
    log(f"total {tot:.1f} s")
    log("split", {k: round(v, 2) for k, v in TIMES.items()})
    log("load at end", os.getloadavg())
