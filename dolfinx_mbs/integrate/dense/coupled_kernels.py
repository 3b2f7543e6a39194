"""The kernels of the dense coupled path: the coupled rows, their Jacobian, Newton's method and
whole stretches of steps of the TS path's schemes, on flat arrays.

:class:`~dolfinx_mbs.systems.coupled_dense.DenseCoupled` turns a coupled model into a handful
of arrays once (:class:`~dolfinx_mbs.systems.coupled_dense.Plan`: the bodies' inertia
invariants, their stiffness, damping and prestress matrices, the frames' constants); everything
here reads only those arrays, so that a step costs its arithmetic. With numba installed (an
optional dependency, as in dolfinx_mpc) the kernels are compiled on first use and cached on
disk (numba's cache keyed to all the kernels' sources, :data:`KERNEL_SOURCES`: the first run on a
machine compiles them once, later runs load them);
without it, or with ``DOLFINX_MBS_NUMBA=0`` in the environment, they run as NumPy code
(:func:`variant` gives either one, for the tests). The two differ where it pays: the compiled
ones are scalar loops (no temporaries, and they compile in seconds where array expressions
take minutes), the NumPy ones products of whole arrays; the Newton iteration and the schemes
are one source for both.

Layouts (``Plan`` builds them):

* the state y = (q, v, f): the elastic reduced coordinates, their rates, the frames' unknowns
  f = (z of every frame, w of every frame) as :class:`~dolfinx_mbs.systems.coupled.
  CoupledSystem` orders them;
* a frame's state vector (:data:`ST`): R (row by row), r_O, omega, alpha, v_O, a_O (local
  components but R and r_O), g_loc = R^T g;
* the state variables S = (omega, alpha, a_O - g_loc) that the bodies' terms depend on, and
  their derivatives by the frame's coordinates z, speeds w and speeds' rates w' (9 x k);
* ``fi`` (frame, :data:`FI`): kind, offsets of z and w in f, their sizes; ``ff``: the kind's
  constants (a hinge's axis n, pivot c, n x c, n x (n x c), skew(n) and its square), then the
  partial velocities T and Om (3 x 6 each); ``par``: each frame's parent state at the time (R,
  r_O, omega, alpha, v_O, a_O; the ground's is the identity at rest);
* ``bi`` (body, :data:`BI`) and ``bf``: each body's invariants P(E_ab) (g^2 stacked nz x nz, and
  transposed), P(I), the applied loads' projections, K, D and the prestress cases (``ci``: kind,
  i, j, offset of the reduced matrix), the nonlinear strain's tensors where the body has it
  (:func:`~dolfinx_mbs.systems.coupled_dense.nonlinear_tensors`: its tangent's excess K_n(q) =
  H(q) + 1/2 C(q, q), force (1/2 H(q) + 1/6 C(q, q)) q, energy q.(1/6 H(q) + 1/24 C(q, q)) q,
  added to the elastic rows as K q is); a rigid body is a body without modes.

The body's terms (module docstring of :mod:`dolfinx_mbs.systems.coupled_dense`): with xi = (1,
0, q), b0 = (0, a_O - g_loc, q''), b1 = (0, 0, q'), W_g = 2 skew(omega), W_k = skew(omega)^2 +
skew(alpha), e = P(I) b0 + P(W_g) b1 + P(W_k) xi gives the elastic rows (its last n entries, with
K q + D q' less the loads) and the resultant (its translation entries); the moment about O is
-sum_r xi^T P(S_k W_r) b_r.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, TypeVar, cast

import numpy as np

__all__ = ["COMPILED", "variant", "residual", "kinematic_pairs", "newton_iter", "newton",
           "newton_work", "alpha_run", "bdf_run", "bdf_weights", "frame_states", "monitors",
           "ST", "FI", "BI", "FF", "PAR"]

_PLAIN = bool(globals().get("_PLAIN", False))


def _numba() -> Any:
    if _PLAIN or os.environ.get("DOLFINX_MBS_NUMBA", "1") == "0":
        return None
    try:
        import numba
    except ImportError:
        return None
    return numba


_NB = _numba()
#: whether the kernels are compiled (numba) or run as NumPy code
COMPILED = _NB is not None


def _counts_optional() -> bool:
    """Whether this numba compiles a kernel without reference counting (its ``_nrt``
    option: an internal one, checked rather than assumed)."""
    try:
        from numba.core import cpu
    except ImportError:  # pragma: no cover - numba's layout of another release
        return False
    return hasattr(cpu.CPUTargetOptions, "_nrt")


#: kernels that allocate nothing are compiled without reference counting (:func:`jit_leaf`)
#: where numba offers it; with reference counting elsewhere (the same results, slower)
LEAF = COMPILED and _counts_optional()

#: the files (in the package) whose code or constants the compiled kernels hold: numba keys a
#: cached kernel to its own file alone, but a kernel of ``joint_kernels`` inlines this
#: module's and reads ``coupled_joints``' FD_STEP, so the caches are keyed to all of them
#: (:func:`sources_stamp`): a change to any one compiles every kernel again
KERNEL_SOURCES = ("integrate/dense/coupled_kernels.py", "integrate/dense/joint_kernels.py",
                  "systems/coupled_joints.py")


def sources_stamp(paths: tuple[str, ...] = KERNEL_SOURCES,
                  root: Path | None = None) -> bytes | None:
    """The hash of the files ``paths`` together, or None where one cannot be read (numba's
    own key, the kernel's file, serves then).

    Args:
        paths: the files, relative to ``root``.
        root: their directory (default: the package's).

    Returns:
        The SHA-256 digest, or None.
    """
    root = Path(__file__).resolve().parents[2] if root is None else root
    h = hashlib.sha256()
    try:
        for rel in paths:
            h.update(rel.encode())
            h.update((root / rel).read_bytes())
    except OSError:
        return None
    return h.digest()


def _cache_class(stamp: bytes | None) -> Any:
    """Numba's cache of a function with its source stamp replaced by ``stamp`` (its
    locators' order and places as numba's own: a ``NUMBA_CACHE_DIR``, the ``__pycache__``
    beside the file, the user-wide one), or None (numba's default cache then) without a
    stamp or where this numba lays its caches out otherwise."""
    if stamp is None:
        return None
    try:
        from numba.core import caching

        def keyed(name: str) -> type:   # (numba < 0.57 names its locators with a "_")
            base = getattr(caching, name, None) or getattr(caching, "_" + name)
            return type("Kernels" + name, (base,), {"get_source_stamp": lambda self: stamp})

        impl = type("KernelsCacheImpl", (caching.CompileResultCacheImpl,), {
            "_locator_classes": [keyed("UserProvidedCacheLocator"),
                                 keyed("InTreeCacheLocator"),
                                 keyed("UserWideCacheLocator")]})
        return type("KernelsFunctionCache", (caching.FunctionCache,), {"_impl_class": impl})
    except (ImportError, AttributeError):  # pragma: no cover - another numba's layout
        return None


_CACHE = _cache_class(sources_stamp()) if COMPILED else None


_Fn = TypeVar("_Fn", bound=Callable)


def jit(fn: _Fn, refcounts: bool = True) -> _Fn:
    """``fn`` compiled by numba (cached on disk), or ``fn`` itself without it.

    Args:
        fn: the function.
        refcounts: numba's reference counting; False for a kernel that allocates no array
            (:func:`jit_leaf`): the counts cost two atomic operations for each array it takes
            or view it makes, most of a small kernel's time (the frames' states, a joint's
            rows).

    Returns:
        The compiled function, or ``fn``.
    """
    if _NB is None:
        return fn
    opts = {} if refcounts or not LEAF else {"_nrt": False}
    compiled = _NB.njit(cache=_CACHE is None, **opts)(fn)
    if _CACHE is not None:   # cached, keyed to all the kernels' sources (KERNEL_SOURCES)
        compiled._cache = _CACHE(fn)
    return cast(_Fn, compiled)


def jit_leaf(fn: _Fn) -> _Fn:
    """:func:`jit` without reference counting, for a kernel that allocates no array (nor
    returns one).

    Args:
        fn: the function.

    Returns:
        The compiled function, or ``fn``.
    """
    return jit(fn, refcounts=False)


def variant(compiled: bool) -> ModuleType:
    """This module compiled (as imported, when numba is installed) or as NumPy code (its
    source executed once more with the compiler off).

    Args:
        compiled: which one.

    Returns:
        The module.
    """
    if compiled:
        return sys.modules[__name__]
    name = __name__ + "_plain"
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, __file__)
        assert spec is not None and spec.loader is not None  # (this module's own file)
        mod = importlib.util.module_from_spec(spec)
        mod.__dict__["_PLAIN"] = True
        spec.loader.exec_module(mod)
        sys.modules[name] = mod
    return mod


#: the frame state vector's size (R 0:9, r_O 9:12, omega 12:15, alpha 15:18, v_O 18:21,
#: a_O 21:24, g_loc 24:27)
ST = 27
#: the frames' integer table: kind, z offset, w offset, z size, w size (offsets in f), the
#: offset of the auxiliary momenta (a free frame's; -1 for none), their number
FI = 7
#: the frames' constants: the kind's (30), T (3 x 6) at 30, Om (3 x 6) at 48
FF = 66
#: a parent frame's state: R (9), r_O, omega, alpha, v_O, a_O
PAR = 24
#: the bodies' integer table: frame, g, nz, n modes, q offset, then offsets in bf of P(E)
#: (g^2 nz x nz), its transposes, P(I), T^T f, (F, M_O) of the loads, their dM/dq (3 x n), K,
#: D; the prestress cases' first row in ci and their number; the offsets of the nonlinear
#: strain's tensors H (n x n x n) and C (the pairs i <= j, n (n + 1) / 2 x n x n), and 1 for
#: a body with nonlinear strain (0, 0, 0 without)
BI = 18
#: the largest numbers of coordinates and speeds of a frame
MAXZ, MAXW = 7, 6
#: the work space of a frame's state (:func:`hinge_state`, :func:`free_state`): the
#: compiled kernels' temporaries as slices of one array allocated by their caller (an array
#: allocated in a kernel costs about as much as a frame's arithmetic)
WK_FRAME = 64
#: the work space of a rigid body's terms (:func:`_rigid_loops`)
WK_RIGID = 177
#: the frames' kinds: a hinge (in the ground or a prescribed parent), a free frame on a 2D
#: mesh (x, y, theta; global velocity, theta'), a free frame in 3D (r_O, quaternion; global
#: velocity, local omega); the free frames' translation rows are their momentum balance
KIND_HINGE, KIND_FREE2, KIND_FREE3 = 0, 1, 2

#: skew(e_k), k = 0, 1, 2
_SK = np.array([[[0.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]],
                [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 0.0]],
                [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]])
#: S(e_k) S(e_c) and S(e_c)^T S(e_d) (the energies' and momenta's products with S(omega))
_SK_SK = np.einsum("kim,cmj->kcij", _SK, _SK)
_SKT_SK = np.einsum("cmi,dmj->cdij", _SK, _SK)
#: Newton: an update below this fraction of its block (or of the step's increment of it) is
#: round-off
ROUNDOFF = 1e-13
#: an exact Newton step that leaves the residual as it was, with an update below this fraction
#: of its block, is at the round-off plateau
PLATEAU = 1e-7
#: Newton's iterations at most
MAXIT = 25
#: Newton: done where the error an update leaves, a_k^2 / a_(k-1) for updates a_k of a
#: contracting iteration, is below this fraction of its block (or of the step's increment of
#: it), the TS path's ``snes_stol`` default; the run's ``options={"snes_stol": ...}`` sets it
#: on both paths
STOL = 1e-9
#: status codes of a stretch of steps
OK, NOT_CONVERGED, NOT_FINITE, SINGULAR = 0, 1, 2, 3
#: Newton's memory between iterations (:func:`newton_iter`): the last residual's norm,
#: whether there was an update before, the largest frame block, whether the last update was
#: an exact Newton step (the Jacobian of its iterate), whether the next one must be; then the
#: last update's size and the reference of each block
M_FNORM, M_PREV, M_TOP, M_EXACT, M_REFRESH = 0, 1, 2, 3, 4
#: and the update test's tolerance (:data:`STOL`, or the run's ``snes_stol``), set by the
#: caller
M_STOL = 5
M_HEAD = 6
#: a slower contraction of the updates than this asks for a new Jacobian (the factors of the
#: stage's first iterate serve while the updates shrink faster)
REFRESH = 0.1


# -- small vector algebra -------------------------------------------------------------------
def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


def _skew(a: np.ndarray) -> np.ndarray:
    out = np.zeros((3, 3))
    out[0, 1], out[0, 2] = -a[2], a[1]
    out[1, 0], out[1, 2] = a[2], -a[0]
    out[2, 0], out[2, 1] = -a[1], a[0]
    return out


def _vec(W: np.ndarray, g: int) -> np.ndarray:
    """The g x g block of W row by row (the invariants' stacking index a g + b)."""
    return np.ascontiguousarray(W[:g, :g]).reshape(-1)


@jit_leaf
def _cx(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """Out = a x b (scalar code)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@jit_leaf
def _mv3(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """Out = A x, A 3 x 3 flat row by row."""
    for i in range(3):
        out[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2]


@jit_leaf
def _mtv3(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """Out = A^T x, A 3 x 3 flat row by row."""
    for i in range(3):
        out[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2]


@jit_leaf
def _combine(a: float, x: np.ndarray, b: float, y: np.ndarray, out: np.ndarray) -> None:
    """Out = a x + b y (scalar code)."""
    for i in range(out.shape[0]):
        out[i] = a * x[i] + b * y[i]


# -- a hinge's state ------------------------------------------------------------------------
def _hinge_arrays(p: np.ndarray, par: np.ndarray, th: float, thd: float, thdd: float,
                  grav: np.ndarray, st: np.ndarray, dSz: np.ndarray, dSw: np.ndarray,
                  dSwd: np.ndarray, wk: np.ndarray) -> None:
    """A hinge's state (``st``) and the derivatives of S = (omega, alpha, a_O - g_loc) by
    theta, theta' and theta'' (first columns of ``dSz``, ``dSw``, ``dSwd``): the composition
    of :meth:`~dolfinx_mbs.frames.Hinge._compose` in closed form, differentiated exactly
    (NumPy)."""
    n, c, nc, nnc = p[0:3], p[3:6], p[6:9], p[9:12]
    K = p[12:21].reshape((3, 3))
    KK = p[21:30].reshape((3, 3))
    Rc = np.eye(3) + math.sin(th) * K + (1.0 - math.cos(th)) * KK
    rc = c - Rc @ c
    wc = thd * n
    vc = -thd * nc
    aac = -thdd * nc - thd * thd * nnc
    Rp = par[0:9].reshape((3, 3))
    rp, wp, alp, vp, ap = par[9:12], par[12:15], par[15:18], par[18:21], par[21:24]
    w_p = Rc.T @ wp
    R = Rp @ Rc
    om = w_p + wc
    al = Rc.T @ alp + thdd * n + _cross(w_p, wc)
    vrel = Rc @ vc
    t1 = _cross(wp, rc)
    apar = ap + _cross(alp, rc) + _cross(wp, t1) + 2.0 * _cross(wp, vrel)
    st[0:9] = R.ravel()
    st[9:12] = rp + Rp @ rc
    st[12:15] = om
    st[15:18] = al
    st[18:21] = Rc.T @ (vp + t1) + vc
    st[21:24] = Rc.T @ apar + aac
    gl = R.T @ grav
    st[24:27] = gl
    # by theta: d(Rc^T x) = -n x (Rc^T x), d rc = -Rc (n x c), d(Rc vc) = Rc (n x vc)
    dom = -_cross(n, w_p)
    drc = -(Rc @ nc)
    dapar = (_cross(alp, drc) + _cross(wp, _cross(wp, drc))
             + 2.0 * _cross(wp, Rc @ _cross(n, vc)))
    dSz[0:3, 0] = dom
    dSz[3:6, 0] = -_cross(n, Rc.T @ alp) + _cross(dom, wc)
    dSz[6:9, 0] = -_cross(n, Rc.T @ apar) + Rc.T @ dapar + _cross(n, gl)
    # by theta'
    dSw[0:3, 0] = n
    dSw[3:6, 0] = _cross(w_p, n)
    dSw[6:9, 0] = Rc.T @ (2.0 * _cross(wp, drc)) - 2.0 * thd * nnc
    # by theta''
    dSwd[3:6, 0] = n
    dSwd[6:9, 0] = -nc


def _hinge_loops(p: np.ndarray, par: np.ndarray, th: float, thd: float, thdd: float,
                 grav: np.ndarray, st: np.ndarray, dSz: np.ndarray, dSw: np.ndarray,
                 dSwd: np.ndarray, wk: np.ndarray) -> None:
    """:func:`_hinge_arrays` in scalar code (compiled; its temporaries in ``wk``)."""
    sn = math.sin(th)
    cs = 1.0 - math.cos(th)
    Rc = wk[0:9]
    for i in range(3):
        for j in range(3):
            Rc[3 * i + j] = (1.0 if i == j else 0.0) + sn * p[12 + 3 * i + j] \
                + cs * p[21 + 3 * i + j]
    n = p[0:3]
    nc = p[6:9]
    nnc = p[9:12]
    wp = par[12:15]
    alp = par[15:18]
    tmp = wk[9:12]
    t1 = wk[12:15]
    t2 = wk[15:18]
    rc = wk[18:21]
    _mv3(Rc, p[3:6], rc)
    for i in range(3):
        rc[i] = p[3 + i] - rc[i]
    w_p = wk[21:24]
    _mtv3(Rc, wp, w_p)
    wc = wk[24:27]
    vc = wk[27:30]
    for i in range(3):
        wc[i] = thd * n[i]
        vc[i] = -thd * nc[i]
    for i in range(3):    # R = R_p R_c, r_O = r_p + R_p r_c
        for j in range(3):
            acc = 0.0
            for k in range(3):
                acc += par[3 * i + k] * Rc[3 * k + j]
            st[3 * i + j] = acc
    _mv3(par, rc, tmp)
    for i in range(3):
        st[9 + i] = par[9 + i] + tmp[i]
        st[12 + i] = w_p[i] + wc[i]
    al = wk[30:33]
    _mtv3(Rc, alp, al)
    _cx(w_p, wc, tmp)
    for i in range(3):
        st[15 + i] = al[i] + thdd * n[i] + tmp[i]
    vrel = wk[33:36]
    _mv3(Rc, vc, vrel)
    _cx(wp, rc, t1)
    apar = wk[36:39]
    _cx(alp, rc, tmp)
    _cx(wp, t1, t2)
    for i in range(3):
        apar[i] = par[21 + i] + tmp[i] + t2[i]
    _cx(wp, vrel, tmp)
    for i in range(3):
        apar[i] += 2.0 * tmp[i]
        t2[i] = par[18 + i] + t1[i]
    _mtv3(Rc, t2, tmp)
    for i in range(3):
        st[18 + i] = tmp[i] + vc[i]
    ra = wk[39:42]
    _mtv3(Rc, apar, ra)
    for i in range(3):
        st[21 + i] = ra[i] - thdd * nc[i] - thd * thd * nnc[i]
    gl = wk[42:45]
    _mtv3(st, grav, gl)
    for i in range(3):
        st[24 + i] = gl[i]
    # by theta
    dom = wk[45:48]
    _cx(n, w_p, dom)
    drc = wk[48:51]
    _mv3(Rc, nc, drc)
    for i in range(3):
        dom[i] = -dom[i]
        drc[i] = -drc[i]
    u = wk[51:54]
    _cx(n, vc, tmp)
    _mv3(Rc, tmp, u)
    dap = wk[54:57]
    _cx(alp, drc, dap)
    _cx(wp, drc, tmp)
    _cx(wp, tmp, t2)
    _cx(wp, u, t1)
    for i in range(3):
        dap[i] += t2[i] + 2.0 * t1[i]
        dSz[i, 0] = dom[i]
    _cx(n, al, tmp)
    _cx(dom, wc, t2)
    for i in range(3):
        dSz[3 + i, 0] = -tmp[i] + t2[i]
    _cx(n, ra, tmp)
    _mtv3(Rc, dap, t1)
    _cx(n, gl, t2)
    for i in range(3):
        dSz[6 + i, 0] = -tmp[i] + t1[i] + t2[i]
    # by theta', theta''
    _cx(w_p, n, tmp)
    _cx(wp, drc, t2)
    for i in range(3):
        t2[i] *= 2.0
    _mtv3(Rc, t2, t1)
    for i in range(3):
        dSw[i, 0] = n[i]
        dSw[3 + i, 0] = tmp[i]
        dSw[6 + i, 0] = t1[i] - 2.0 * thd * nnc[i]
        dSwd[3 + i, 0] = n[i]
        dSwd[6 + i, 0] = -nc[i]


#: a hinge's state: scalar code where compiled, NumPy otherwise
hinge_state = jit_leaf(_hinge_loops) if COMPILED else _hinge_arrays


@jit_leaf
def free_state(kind: int, z: np.ndarray, w: np.ndarray, wd: np.ndarray, grav: np.ndarray,
               st: np.ndarray, dSz: np.ndarray, dSw: np.ndarray, dSwd: np.ndarray,
               dphi: np.ndarray, wk: np.ndarray) -> None:
    """A free frame's state (as :meth:`~dolfinx_mbs.frames.Free.jet`) and the derivatives of
    S = (omega, alpha, a_O - g_loc) by its coordinates, speeds and speeds' rates; ``dphi``
    the rotation's d phi/dz (3 x nz; dR = R skew(d phi)). Scalar code (both variants; its
    temporaries in ``wk``)."""
    R = wk[0:9]
    vG = wk[9:12]
    aG = wk[12:15]
    tmp = wk[15:18]
    ab = wk[18:21]
    for k in range(9):
        R[k] = 0.0
    if kind == KIND_FREE2:
        c, sn = math.cos(z[2]), math.sin(z[2])
        R[0], R[1], R[3], R[4], R[8] = c, -sn, sn, c, 1.0
        st[9], st[10], st[11] = z[0], z[1], 0.0
        st[12], st[13], st[14] = 0.0, 0.0, w[2]
        st[15], st[16], st[17] = 0.0, 0.0, wd[2]
        vG[0], vG[1], vG[2] = w[0], w[1], 0.0
        aG[0], aG[1], aG[2] = wd[0], wd[1], 0.0
        dphi[2, 2] = 1.0
        dSw[2, 2] = 1.0
        dSwd[5, 2] = 1.0
        nt = 2
    else:
        nq = math.sqrt(z[3] * z[3] + z[4] * z[4] + z[5] * z[5] + z[6] * z[6])
        qw, qx, qy, qz = z[3] / nq, z[4] / nq, z[5] / nq, z[6] / nq
        R[0] = 1 - 2 * (qy * qy + qz * qz)
        R[1] = 2 * (qx * qy - qw * qz)
        R[2] = 2 * (qx * qz + qw * qy)
        R[3] = 2 * (qx * qy + qw * qz)
        R[4] = 1 - 2 * (qx * qx + qz * qz)
        R[5] = 2 * (qy * qz - qw * qx)
        R[6] = 2 * (qx * qz - qw * qy)
        R[7] = 2 * (qy * qz + qw * qx)
        R[8] = 1 - 2 * (qx * qx + qy * qy)
        for k in range(3):
            st[9 + k] = z[k]
            st[12 + k] = w[3 + k]
            st[15 + k] = wd[3 + k]
            dSw[k, 3 + k] = 1.0
            dSwd[3 + k, 3 + k] = 1.0
        for k in range(3):
            vG[k] = w[k]
            aG[k] = wd[k]
        # d phi/dq = 2 G(q^)/|q|, G = [[-x, w, z, -y], [-y, -z, w, x], [-z, y, -x, w]]
        Gq = wk[21:33]
        Gq[0], Gq[1], Gq[2], Gq[3] = -qx, qw, qz, -qy
        Gq[4], Gq[5], Gq[6], Gq[7] = -qy, -qz, qw, qx
        Gq[8], Gq[9], Gq[10], Gq[11] = -qz, qy, -qx, qw
        for a in range(3):
            for b in range(4):
                dphi[a, 3 + b] = 2.0 * Gq[4 * a + b] / nq
        nt = 3
    for k in range(9):
        st[k] = R[k]
    _mtv3(R, vG, tmp)
    for k in range(3):
        st[18 + k] = tmp[k]
    _mtv3(R, aG, tmp)
    for k in range(3):
        st[21 + k] = tmp[k]
    _mtv3(R, grav, tmp)
    for k in range(3):
        st[24 + k] = tmp[k]
    # a_O - g_loc = R^T (a_G - g): by the speeds' rates R^T, by the rotation skew(.) d phi
    for a in range(3):
        for k in range(nt):
            dSwd[6 + a, k] = R[3 * k + a]
    for a in range(3):
        ab[a] = st[21 + a] - st[24 + a]
    for c in range(dphi.shape[1]):
        d = dphi[:, c]
        dSz[6, c] += ab[1] * d[2] - ab[2] * d[1]
        dSz[7, c] += ab[2] * d[0] - ab[0] * d[2]
        dSz[8, c] += ab[0] * d[1] - ab[1] * d[0]


@jit_leaf
def _frame(fi: np.ndarray, ff: np.ndarray, par: np.ndarray, o: int, y: np.ndarray,
           yd: np.ndarray, grav: np.ndarray, st: np.ndarray, dSz: np.ndarray, dSw: np.ndarray,
           dSwd: np.ndarray, dphi: np.ndarray, wk: np.ndarray) -> None:
    """One frame's state and its derivatives at (y, y'); a free frame's d phi/dz too
    (``wk``: :data:`WK_FRAME` floats of work space)."""
    fz, fw = fi[1], fi[2]
    if fi[0] == KIND_HINGE:
        hinge_state(ff, par, y[o + fz], y[o + fw], yd[o + fw], grav, st, dSz, dSw, dSwd, wk)
    else:
        free_state(fi[0], y[o + fz:o + fz + fi[3]], y[o + fw:o + fw + fi[4]],
                   yd[o + fw:o + fw + fi[4]], grav, st, dSz, dSw, dSwd, dphi, wk)


# -- a body's terms -------------------------------------------------------------------------
def _nonlinear_arrays(bf: np.ndarray, bi: np.ndarray, nb: int, q: np.ndarray
                      ) -> tuple:
    """(H(q), C(q, q)) = (sum_i q_i H_i, sum_ij q_i q_j C_ij) of a body's nonlinear strain
    (``bi``'s offsets 15, 16; q the body's coordinates, rows of states or one state)."""
    npair = nb * (nb + 1) // 2
    H = bf[bi[15]:bi[15] + nb * nb * nb].reshape((nb, nb * nb))
    C = bf[bi[16]:bi[16] + npair * nb * nb].reshape((npair, nb * nb))
    iu, ju = np.triu_indices(nb)
    qq = q[..., iu] * q[..., ju]
    shape = q.shape[:-1] + (nb, nb)
    return (q @ H).reshape(shape), (qq @ C).reshape(shape)


def _body_arrays(bi: np.ndarray, bf: np.ndarray, ci: np.ndarray, n: int, o: int,
                 fi: np.ndarray, ff: np.ndarray, state: tuple, motion: tuple, jac: bool,
                 F: np.ndarray, J: np.ndarray, bw: np.ndarray, bo: np.ndarray) -> None:
    """Add one body's terms to F (and J): its elastic rows and its share of its frame's rows
    (NumPy: products of the invariants' stack with the fields' coefficient vectors).
    ``state``: the frame's (st, dSz, dSw, dSwd); ``motion``: (y, y', the Jacobian's shift);
    ``bw``, ``bo``: the compiled loops' work space (not read here)."""
    st, dSz, dSw, dSwd = state
    y, yd, shift = motion
    g, nz, nb, qo = bi[1], bi[2], bi[3], bi[4]
    gg = g * g
    Pe = bf[bi[5]:bi[5] + gg * nz * nz].reshape((gg * nz, nz))
    PI = bf[bi[7]:bi[7] + nz * nz].reshape((nz, nz))
    fz, fw, nzi, nwi = fi[1], fi[2], fi[3], fi[4]
    Tm = ff[30:48].reshape((3, 6))[:, :nwi]
    Om = ff[48:66].reshape((3, 6))[:, :nwi]
    q = y[qo:qo + nb]
    v = y[n + qo:n + qo + nb]
    vd = yd[n + qo:n + qo + nb]
    om = st[12:15]
    al = st[15:18]
    ab = st[21:24] - st[24:27]
    ts = 1 + g
    xi = np.zeros(nz)
    xi[0] = 1.0
    xi[ts:] = q
    b0 = np.zeros(nz)
    b0[1:ts] = ab[:g]
    b0[ts:] = vd
    b1 = np.zeros(nz)
    b1[ts:] = v
    Pb0 = (Pe @ b0).reshape((gg, nz))
    Pb1 = (Pe @ b1).reshape((gg, nz))
    Pb2 = (Pe @ xi).reshape((gg, nz))
    Sw = _skew(om)
    Wg = 2.0 * Sw
    Wk = Sw @ Sw + _skew(al)
    w1 = _vec(Wg, g)
    w2 = _vec(Wk, g)
    e = PI @ b0 + w1 @ Pb1 + w2 @ Pb2
    # K q with the prestress cases at the state
    K0 = bf[bi[11]:bi[11] + nb * nb].reshape((nb, nb))
    D = bf[bi[12]:bi[12] + nb * nb].reshape((nb, nb))
    Kq = K0.copy()
    for c in range(bi[13], bi[13] + bi[14]):
        Mc = bf[ci[c, 3]:ci[c, 3] + nb * nb].reshape((nb, nb))
        if ci[c, 0] == 0:
            Kq += (om[ci[c, 1]] * om[ci[c, 2]]) * Mc
        else:
            Kq -= ab[ci[c, 1]] * Mc
    app = bf[bi[9]:bi[9] + 6]
    appMq = bf[bi[10]:bi[10] + 3 * nb].reshape((3, nb))
    F[n + qo:n + qo + nb] += e[ts:] - bf[bi[8]:bi[8] + nb] + Kq @ q + D @ v
    if bi[17] != 0:     # the nonlinear strain: force and tangent
        Hq, Cq = _nonlinear_arrays(bf, bi, nb, q)
        F[n + qo:n + qo + nb] += (0.5 * Hq + Cq / 6.0) @ q
        if jac:
            J[n + qo:n + qo + nb, qo:qo + nb] += Hq + 0.5 * Cq
    Sf = np.zeros(3)
    Sf[:g] = e[1:ts]
    Sf -= app[0:3]
    C0 = Pb0 @ xi
    C1 = Pb1 @ xi
    C2 = Pb2 @ xi
    k0 = 2 if g == 2 else 0
    SW = np.zeros((3, 3, gg))
    Mom = np.zeros(3)
    for k in range(k0, 3):
        Sk = _SK[k]
        SW[k, 0] = _vec(Sk, g)
        SW[k, 1] = _vec(Sk @ Wg, g)
        SW[k, 2] = _vec(Sk @ Wk, g)
        Mom[k] = -(SW[k, 0] @ C0 + SW[k, 1] @ C1 + SW[k, 2] @ C2)
    Mom -= app[3:6] + appMq @ q
    rows = o + fw
    F[rows:rows + nwi] += Tm.T @ Sf + Om.T @ Mom
    if not jac:
        return
    Pa = bf[bi[5]:bi[5] + gg * nz * nz].reshape((gg, nz * nz))
    PT = bf[bi[6]:bi[6] + gg * nz * nz].reshape((gg * nz, nz))
    PW1 = (w1 @ Pa).reshape((nz, nz))
    PW2 = (w2 @ Pa).reshape((nz, nz))
    J[n + qo:n + qo + nb, qo:qo + nb] += PW2[ts:, ts:] + Kq
    J[n + qo:n + qo + nb, n + qo:n + qo + nb] += PW1[ts:, ts:] + D + shift * PI[ts:, ts:]
    dSf_dq = np.zeros((3, nb))
    dSf_dv = np.zeros((3, nb))
    dSf_dq[:g] = PW2[1:ts, ts:]
    dSf_dv[:g] = PW1[1:ts, ts:] + shift * PI[1:ts, ts:]
    xP = (PT @ xi).reshape((gg, nz))
    dM_dq = np.zeros((3, nb))
    dM_dv = np.zeros((3, nb))
    for k in range(k0, 3):
        left = SW[k, 0] @ Pb0 + SW[k, 1] @ Pb1 + SW[k, 2] @ Pb2
        r0 = SW[k, 0] @ xP
        r1 = SW[k, 1] @ xP
        r2 = SW[k, 2] @ xP
        dM_dq[k] = -(left[ts:] + r2[ts:])
        dM_dv[k] = -(r1[ts:] + shift * r0[ts:])
    dM_dq -= appMq
    J[rows:rows + nwi, qo:qo + nb] += Tm.T @ dSf_dq + Om.T @ dM_dq
    J[rows:rows + nwi, n + qo:n + qo + nb] += Tm.T @ dSf_dv + Om.T @ dM_dv
    # by the state variables S = (omega, alpha, a_O - g_loc)
    GE = np.zeros((nz, 9))
    GM = np.zeros((3, 9))
    for j in range(3):
        Sj = _SK[j]
        dWk = Sj @ Sw + Sw @ Sj
        a1 = _vec(2.0 * Sj, g)
        a2 = _vec(dWk, g)
        a3 = _vec(Sj, g)
        GE[:, j] = a1 @ Pb1 + a2 @ Pb2
        GE[:, 3 + j] = a3 @ Pb2
        for k in range(k0, 3):
            Sk = _SK[k]
            GM[k, j] = -(_vec(Sk @ (2.0 * Sj), g) @ C1 + _vec(Sk @ dWk, g) @ C2)
            GM[k, 3 + j] = -(_vec(Sk @ Sj, g) @ C2)
    for j in range(g):
        GE[:, 6 + j] = PI[:, 1 + j]
        for k in range(k0, 3):
            GM[k, 6 + j] = -(SW[k, 0] @ xP[:, 1 + j])
    Gel = np.ascontiguousarray(GE[ts:, :])
    for c in range(bi[13], bi[13] + bi[14]):
        Mc = bf[ci[c, 3]:ci[c, 3] + nb * nb].reshape((nb, nb))
        Mq = Mc @ q
        if ci[c, 0] == 0:
            i, jj = ci[c, 1], ci[c, 2]
            Gel[:, i] += om[jj] * Mq
            Gel[:, jj] += om[i] * Mq
        else:
            Gel[:, 6 + ci[c, 1]] -= Mq
    GS = np.zeros((3, 9))
    GS[:g] = GE[1:ts]
    GF = Tm.T @ GS + Om.T @ GM
    Cz = np.ascontiguousarray(dSz[:, :nzi])
    Cw = np.ascontiguousarray(dSw[:, :nwi] + shift * dSwd[:, :nwi])
    J[n + qo:n + qo + nb, o + fz:o + fz + nzi] += Gel @ Cz
    J[n + qo:n + qo + nb, o + fw:o + fw + nwi] += Gel @ Cw
    J[rows:rows + nwi, o + fz:o + fz + nzi] += GF @ Cz
    J[rows:rows + nwi, o + fw:o + fw + nwi] += GF @ Cw


@jit_leaf
def _nonlinear_loops(bf: np.ndarray, ho: int, co: int, nb: int, n: int, qo: int,
                     y: np.ndarray, jac: bool, F: np.ndarray, J: np.ndarray,
                     qq: np.ndarray, Hq: np.ndarray, Cq: np.ndarray) -> None:
    """A body's nonlinear strain in scalar loops: its force (1/2 H(q) + 1/6 C(q, q)) q added
    to its elastic rows of F, with ``jac`` its tangent H(q) + 1/2 C(q, q) to J's block of
    them by q (H, C at the offsets ``ho``, ``co`` in bf; :func:`_nonlinear_arrays`). ``qq``
    (the pairs' products), ``Hq`` and ``Cq`` (nb x nb, flat): work space."""
    nn = nb * nb
    k = 0
    for i in range(nb):
        for j in range(i, nb):
            qq[k] = y[qo + i] * y[qo + j]
            k += 1
    # the flattened tensors' rows combined, each row a view indexed from zero (an index
    # known to be non-negative: the inner loops vectorize)
    for a in range(nn):
        Hq[a] = 0.0
        Cq[a] = 0.0
    for i in range(nb):
        c = y[qo + i]
        row = bf[ho + i * nn:ho + (i + 1) * nn]
        for a in range(nn):
            Hq[a] += c * row[a]
    for p in range(k):
        c = qq[p]
        row = bf[co + p * nn:co + (p + 1) * nn]
        for a in range(nn):
            Cq[a] += c * row[a]
    for i in range(nb):
        acc = 0.0
        for j in range(nb):
            acc += (0.5 * Hq[i * nb + j] + Cq[i * nb + j] / 6.0) * y[qo + j]
        F[n + qo + i] += acc
    if jac:
        for i in range(nb):
            for j in range(nb):
                J[n + qo + i, qo + j] += Hq[i * nb + j] + 0.5 * Cq[i * nb + j]


@jit_leaf
def _frame_rows_add(ff: np.ndarray, Sf: np.ndarray, Mom: np.ndarray, nwi: int, rows: int,
                    F: np.ndarray) -> None:
    """A body's resultant ``Sf`` and moment ``Mom`` (local components) added to its frame's
    rows ``rows`` .. ``rows + nwi`` through the frame's partial velocities T, Om (``ff``)."""
    for jw in range(nwi):
        acc = 0.0
        for c in range(3):
            acc += ff[30 + c * 6 + jw] * Sf[c] + ff[48 + c * 6 + jw] * Mom[c]
        F[rows + jw] += acc


@jit_leaf
def _frame_columns_add(GF: np.ndarray, dSz: np.ndarray, dSw: np.ndarray, dSwd: np.ndarray,
                       shift: float, nzi: int, nwi: int, rows: int, cz0: int, cw0: int,
                       J: np.ndarray) -> None:
    """The frame rows' derivatives by the state variables S (``GF``, nwi x 9) carried to the
    frame's coordinates (columns ``cz0`` ..) and speeds (``cw0`` ..): dS/dz, dS/dw + shift
    dS/dw'."""
    for cz in range(nzi):
        for jw in range(nwi):
            acc = 0.0
            for v in range(9):
                acc += GF[jw, v] * dSz[v, cz]
            J[rows + jw, cz0 + cz] += acc
    for cw in range(nwi):
        for jw in range(nwi):
            acc = 0.0
            for v in range(9):
                acc += GF[jw, v] * (dSw[v, cw] + shift * dSwd[v, cw])
            J[rows + jw, cw0 + cw] += acc


def _body_loops(bi: np.ndarray, bf: np.ndarray, ci: np.ndarray, n: int, o: int,
                fi: np.ndarray, ff: np.ndarray, state: tuple, motion: tuple, jac: bool,
                F: np.ndarray, J: np.ndarray, bw: np.ndarray, bo: np.ndarray) -> None:
    """:func:`_body_arrays` in scalar loops (compiled: no temporaries of the small products),
    its temporaries slices of ``bw`` at the offsets ``bo`` (:func:`_body_offsets`; zeroed
    where they accumulate, as new ones would be): no array made."""
    st, dSz, dSw, dSwd = state
    y, yd, shift = motion
    g, nz, nb, qo = bi[1], bi[2], bi[3], bi[4]
    gg = g * g
    pe, pio = bi[5], bi[7]
    fz, fw, nzi, nwi = fi[1], fi[2], fi[3], fi[4]
    ts = 1 + g
    om = st[12:15]
    al = st[15:18]
    ab = bw[bo[0]:bo[1]]
    for a in range(3):
        ab[a] = st[21 + a] - st[24 + a]
    # the fields' coefficient vectors b0, b1, xi
    B = bw[bo[1]:bo[2]].reshape((3, nz))
    B[:, :] = 0.0
    B[2, 0] = 1.0
    for a in range(g):
        B[0, 1 + a] = ab[a]
    for i in range(nb):
        B[0, ts + i] = yd[n + qo + i]
        B[1, ts + i] = y[n + qo + i]
        B[2, ts + i] = y[qo + i]
    # Pb[r, a, i] = P(E_a) b_r (the invariants as views: rows indexed from zero, whose
    # indices are known to be non-negative, vectorize; an offset sum is checked at each use)
    Pe = bf[pe:pe + gg * nz * nz].reshape((gg, nz, nz))
    Pb = bw[bo[2]:bo[3]].reshape((3, gg, nz))
    B0, B1, B2 = B[0], B[1], B[2]
    for a in range(gg):
        for i in range(nz):
            prow = Pe[a, i]
            s0 = 0.0
            s1 = 0.0
            s2 = prow[0]
            for j in range(1, nz):
                pij = prow[j]
                s0 += pij * B0[j]
                s1 += pij * B1[j]
                s2 += pij * B2[j]
            Pb[0, a, i] = s0
            Pb[1, a, i] = s1
            Pb[2, a, i] = s2
    # skew(omega), W_k = skew(omega)^2 + skew(alpha); w[r] the g x g blocks of I, W_g, W_k
    Sw = bw[bo[3]:bo[4]].reshape((3, 3))
    Sw[:, :] = 0.0
    Sw[0, 1], Sw[0, 2], Sw[1, 2] = -om[2], om[1], -om[0]
    Sw[1, 0], Sw[2, 0], Sw[2, 1] = om[2], -om[1], om[0]
    w2 = om[0] * om[0] + om[1] * om[1] + om[2] * om[2]
    Wk = bw[bo[4]:bo[5]].reshape((3, 3))
    for a in range(3):
        for b in range(3):
            Wk[a, b] = om[a] * om[b] - (w2 if a == b else 0.0)
    Wk[0, 1] -= al[2]
    Wk[0, 2] += al[1]
    Wk[1, 0] += al[2]
    Wk[1, 2] -= al[0]
    Wk[2, 0] -= al[1]
    Wk[2, 1] += al[0]
    w = bw[bo[5]:bo[6]].reshape((3, gg))
    for a in range(g):
        for b in range(g):
            w[0, a * g + b] = 1.0 if a == b else 0.0
            w[1, a * g + b] = 2.0 * Sw[a, b]
            w[2, a * g + b] = Wk[a, b]
    e = bw[bo[6]:bo[7]]
    e[:] = 0.0
    for r in range(3):
        for a in range(gg):
            c = w[r, a]
            if c != 0.0:
                for i in range(nz):
                    e[i] += c * Pb[r, a, i]
    # K q with the prestress cases at the state
    k0o, do = bi[11], bi[12]
    Kq = bw[bo[7]:bo[8]].reshape((nb, nb))
    for i in range(nb):
        for j in range(nb):
            Kq[i, j] = bf[k0o + i * nb + j]
    for c in range(bi[13], bi[13] + bi[14]):
        coef = om[ci[c, 1]] * om[ci[c, 2]] if ci[c, 0] == 0 else -ab[ci[c, 1]]
        mo = ci[c, 3]
        for i in range(nb):
            for j in range(nb):
                Kq[i, j] += coef * bf[mo + i * nb + j]
    ato, appo, mqo = bi[8], bi[9], bi[10]
    for i in range(nb):
        acc = e[ts + i] - bf[ato + i]
        for j in range(nb):
            acc += Kq[i, j] * y[qo + j] + bf[do + i * nb + j] * y[n + qo + j]
        F[n + qo + i] += acc
    if bi[17] != 0:     # the nonlinear strain
        _nonlinear_loops(bf, bi[15], bi[16], nb, n, qo, y, jac, F, J, bw[bo[12]:bo[13]],
                         bw[bo[13]:bo[14]], bw[bo[14]:bo[15]])
    Sf = bw[bo[8]:bo[9]]
    Sf[:] = 0.0
    for a in range(g):
        Sf[a] = e[1 + a]
    for a in range(3):
        Sf[a] -= bf[appo + a]
    # C[r, a] = xi . P(E_a) b_r
    C = bw[bo[9]:bo[10]].reshape((3, gg))
    for r in range(3):
        for a in range(gg):
            acc = 0.0
            for i in range(nz):
                acc += B[2, i] * Pb[r, a, i]
            C[r, a] = acc
    k0 = 2 if g == 2 else 0
    # SW[k, r, a]: the g x g block of S_k W_r, W_0 = I, W_1 = W_g, W_2 = W_k
    SW = bw[bo[10]:bo[11]].reshape((3, 3, gg))
    SW[:, :, :] = 0.0
    Mom = bw[bo[11]:bo[12]]
    Mom[:] = 0.0
    for k in range(k0, 3):
        for a in range(g):
            for b in range(g):
                s1 = 0.0
                s2 = 0.0
                for c in range(3):
                    s1 += _SK[k, a, c] * 2.0 * Sw[c, b]
                    s2 += _SK[k, a, c] * Wk[c, b]
                SW[k, 0, a * g + b] = _SK[k, a, b]
                SW[k, 1, a * g + b] = s1
                SW[k, 2, a * g + b] = s2
        acc = 0.0
        for r in range(3):
            for a in range(gg):
                acc += SW[k, r, a] * C[r, a]
        Mom[k] = -acc
    for k in range(3):
        acc = bf[appo + 3 + k]
        for j in range(nb):
            acc += bf[mqo + k * nb + j] * y[qo + j]
        Mom[k] -= acc
    rows = o + fw
    _frame_rows_add(ff, Sf, Mom, nwi, rows, F)
    if not jac:
        return
    # P(W_g), P(W_k) on the rows after the first, the columns of the modes
    PW = bw[bo[15]:bo[16]].reshape((2, nz, nb))
    PW[:, :, :] = 0.0
    for r in range(2):
        for a in range(gg):
            c = w[r + 1, a]
            if c != 0.0:
                for i in range(1, nz):
                    prow = Pe[a, i, ts:]
                    out = PW[r, i]
                    for j in range(nb):
                        out[j] += c * prow[j]
    for i in range(nb):
        for j in range(nb):
            J[n + qo + i, qo + j] += PW[1, ts + i, j] + Kq[i, j]
            J[n + qo + i, n + qo + j] += (PW[0, ts + i, j] + bf[do + i * nb + j]
                                         + shift * bf[pio + (ts + i) * nz + ts + j])
    dSq = bw[bo[16]:bo[17]].reshape((3, nb))
    dSv = bw[bo[17]:bo[18]].reshape((3, nb))
    dSq[:, :] = 0.0
    dSv[:, :] = 0.0
    for a in range(g):
        for j in range(nb):
            dSq[a, j] = PW[1, 1 + a, j]
            dSv[a, j] = PW[0, 1 + a, j] + shift * bf[pio + (1 + a) * nz + ts + j]
    # xP[a, i] = xi . P(E_a)[:, i]
    xP = bw[bo[18]:bo[19]].reshape((gg, nz))
    xP[:, :] = 0.0
    for a in range(gg):
        out = xP[a]
        for j in range(nz):
            xj = B2[j]
            if xj != 0.0:
                prow = Pe[a, j]
                for i in range(nz):
                    out[i] += xj * prow[i]
    dMq = bw[bo[19]:bo[20]].reshape((3, nb))
    dMv = bw[bo[20]:bo[21]].reshape((3, nb))
    dMq[:, :] = 0.0
    dMv[:, :] = 0.0
    for k in range(k0, 3):
        for j in range(nb):
            i = ts + j
            left = 0.0
            r0 = 0.0
            r1 = 0.0
            r2 = 0.0
            for a in range(gg):
                left += (SW[k, 0, a] * Pb[0, a, i] + SW[k, 1, a] * Pb[1, a, i]
                         + SW[k, 2, a] * Pb[2, a, i])
                r0 += SW[k, 0, a] * xP[a, i]
                r1 += SW[k, 1, a] * xP[a, i]
                r2 += SW[k, 2, a] * xP[a, i]
            dMq[k, j] = -(left + r2)
            dMv[k, j] = -(r1 + shift * r0)
    for k in range(3):
        for j in range(nb):
            dMq[k, j] -= bf[mqo + k * nb + j]
    for jw in range(nwi):
        for j in range(nb):
            aq = 0.0
            av = 0.0
            for c in range(3):
                tc = ff[30 + c * 6 + jw]
                oc = ff[48 + c * 6 + jw]
                aq += tc * dSq[c, j] + oc * dMq[c, j]
                av += tc * dSv[c, j] + oc * dMv[c, j]
            J[rows + jw, qo + j] += aq
            J[rows + jw, n + qo + j] += av
    # by the state variables S = (omega, alpha, a_O - g_loc): GE (rows 1.. of e), GM (moment)
    GE = bw[bo[21]:bo[22]].reshape((nz, 9))
    GM = bw[bo[22]:bo[23]].reshape((3, 9))
    GE[:, :] = 0.0
    GM[:, :] = 0.0
    dW1 = bw[bo[23]:bo[24]]
    dW2 = bw[bo[24]:bo[25]]
    dW3 = bw[bo[25]:bo[26]]
    dWk = bw[bo[26]:bo[27]].reshape((3, 3))
    for jv in range(3):
        for a in range(3):        # d W_k / d omega_j = S_j S_w + S_w S_j
            for b in range(3):
                acc = 0.0
                for c in range(3):
                    acc += _SK[jv, a, c] * Sw[c, b] + Sw[a, c] * _SK[jv, c, b]
                dWk[a, b] = acc
        for a in range(g):
            for b in range(g):
                dW1[a * g + b] = 2.0 * _SK[jv, a, b]
                dW2[a * g + b] = dWk[a, b]
                dW3[a * g + b] = _SK[jv, a, b]
        for i in range(1, nz):
            s1 = 0.0
            s3 = 0.0
            for a in range(gg):
                s1 += dW1[a] * Pb[1, a, i] + dW2[a] * Pb[2, a, i]
                s3 += dW3[a] * Pb[2, a, i]
            GE[i, jv] = s1
            GE[i, 3 + jv] = s3
        for k in range(k0, 3):
            m1 = 0.0
            m3 = 0.0
            for a in range(g):
                for b in range(g):
                    x1 = 0.0
                    x2 = 0.0
                    x3 = 0.0
                    for c in range(3):
                        x1 += _SK[k, a, c] * 2.0 * _SK[jv, c, b]
                        x2 += _SK[k, a, c] * dWk[c, b]
                        x3 += _SK[k, a, c] * _SK[jv, c, b]
                    m1 += x1 * C[1, a * g + b] + x2 * C[2, a * g + b]
                    m3 += x3 * C[2, a * g + b]
            GM[k, jv] = -m1
            GM[k, 3 + jv] = -m3
    for jv in range(g):
        for i in range(1, nz):
            GE[i, 6 + jv] = bf[pio + i * nz + 1 + jv]
        for k in range(k0, 3):
            acc = 0.0
            for a in range(gg):
                acc += SW[k, 0, a] * xP[a, 1 + jv]
            GM[k, 6 + jv] = -acc
    Gel = bw[bo[27]:bo[28]].reshape((nb, 9))
    for i in range(nb):
        for v in range(9):
            Gel[i, v] = GE[ts + i, v]
    for c in range(bi[13], bi[13] + bi[14]):
        mo = ci[c, 3]
        for i in range(nb):
            mq = 0.0
            for j in range(nb):
                mq += bf[mo + i * nb + j] * y[qo + j]
            if ci[c, 0] == 0:
                Gel[i, ci[c, 1]] += om[ci[c, 2]] * mq
                Gel[i, ci[c, 2]] += om[ci[c, 1]] * mq
            else:
                Gel[i, 6 + ci[c, 1]] -= mq
    GF = bw[bo[28]:bo[28] + nwi * 9].reshape((nwi, 9))
    for jw in range(nwi):
        for v in range(9):
            acc = 0.0
            for c in range(3):
                acc += ff[48 + c * 6 + jw] * GM[c, v]
                if c < g:
                    acc += ff[30 + c * 6 + jw] * GE[1 + c, v]
            GF[jw, v] = acc
    for cz in range(nzi):
        for i in range(nb):
            acc = 0.0
            for v in range(9):
                acc += Gel[i, v] * dSz[v, cz]
            J[n + qo + i, o + fz + cz] += acc
    for cw in range(nwi):
        for i in range(nb):
            acc = 0.0
            for v in range(9):
                acc += Gel[i, v] * (dSw[v, cw] + shift * dSwd[v, cw])
            J[n + qo + i, o + fw + cw] += acc
    _frame_columns_add(GF, dSz, dSw, dSwd, shift, nzi, nwi, rows, o + fz, o + fw, J)


#: a body's terms: scalar loops where compiled, array products otherwise
_body = jit_leaf(_body_loops) if COMPILED else _body_arrays


def _rigid_loops(bi: np.ndarray, bf: np.ndarray, o: int, fi: np.ndarray, ff: np.ndarray,
                 state: tuple, shift: float, jac: bool, F: np.ndarray, J: np.ndarray,
                 wk: np.ndarray) -> None:
    """:func:`_body_loops` for a body without elastic coordinates (a rigid body), compiled.

    Its coordinates' rates and its fields' coefficients on the modes vanish: of the products
    P(E_a) b only those with the frame's acceleration and the body's first moment remain, and
    its terms are its frame's rows alone. The same sums as :func:`_body_loops` in the same
    order without their zero terms (the same numbers), its temporaries in ``wk``
    (:data:`WK_RIGID` floats). ``state``: the frame's (st, dSz, dSw, dSwd)."""
    st, dSz, dSw, dSwd = state
    g, nz = bi[1], bi[2]
    gg = g * g
    pe, pio, appo = bi[5], bi[7], bi[9]
    fz, fw, nzi, nwi = fi[1], fi[2], fi[3], fi[4]
    k0 = 2 if g == 2 else 0
    rows = o + fw
    Wk, Sw, Pb0 = wk[0:9], wk[9:18], wk[18:54]
    Sf, Mom, GE, GM, dWk, GF = wk[54:57], wk[57:60], wk[60:87], wk[87:114], wk[114:123], \
        wk[123:177]
    om0, om1, om2 = st[12], st[13], st[14]
    for a in range(9):
        Sw[a] = 0.0
    Sw[1], Sw[2], Sw[5] = -om2, om1, -om0
    Sw[3], Sw[6], Sw[7] = om2, -om1, om0
    w2 = om0 * om0 + om1 * om1 + om2 * om2
    for a in range(3):
        for b in range(3):
            Wk[3 * a + b] = st[12 + a] * st[12 + b] - (w2 if a == b else 0.0)
    Wk[1] -= st[17]
    Wk[2] += st[16]
    Wk[3] += st[17]
    Wk[5] -= st[15]
    Wk[6] -= st[16]
    Wk[7] += st[15]
    # Pb0[a, i] = P(E_a)[i, 1:] . (a_O - g_loc), i = 0 .. g
    for a in range(gg):
        for i in range(nz):
            row = pe + a * nz * nz + i * nz
            s0 = 0.0
            for j in range(1, nz):
                s0 += bf[row + j] * (st[20 + j] - st[23 + j])
            Pb0[a * nz + i] = s0
    # the translation rows: e[1 + c] (the identity's and W_k's blocks), less the loads
    for c in range(3):
        e = 0.0
        if c < g:
            i = 1 + c
            for a in range(g):
                e += Pb0[(a * g + a) * nz + i]
            for a in range(g):
                for b in range(g):
                    w = Wk[3 * a + b]
                    if w != 0.0:
                        e += w * bf[pe + (a * g + b) * nz * nz + i * nz]
        Sf[c] = e - bf[appo + c]
    # the moment rows: S_k against C[0] = Pb0[:, 0], S_k W_k against C[2] = P(E_a)[0, 0]
    for k in range(3):
        Mom[k] = 0.0
    for k in range(k0, 3):
        acc = 0.0
        for a in range(g):
            for b in range(g):
                acc += _SK[k, a, b] * Pb0[(a * g + b) * nz]
        for a in range(g):
            for b in range(g):
                s2 = 0.0
                for c in range(3):
                    s2 += _SK[k, a, c] * Wk[3 * c + b]
                acc += s2 * bf[pe + (a * g + b) * nz * nz]
        Mom[k] = -acc
    for k in range(3):
        Mom[k] -= bf[appo + 3 + k]
    _frame_rows_add(ff, Sf, Mom, nwi, rows, F)
    if not jac:
        return
    # by the state variables S = (omega, alpha, a_O - g_loc): GE (translation rows 1 .. g,
    # as GE[(i - 1) * 9 + v]), GM (the moments, GM[k * 9 + v])
    for a in range(27):
        GE[a] = 0.0
        GM[a] = 0.0
    for jv in range(3):
        for a in range(3):        # d W_k / d omega_j = S_j S_w + S_w S_j
            for b in range(3):
                acc = 0.0
                for c in range(3):
                    acc += _SK[jv, a, c] * Sw[3 * c + b] + Sw[3 * a + c] * _SK[jv, c, b]
                dWk[3 * a + b] = acc
        for i in range(1, nz):
            s1 = 0.0
            s3 = 0.0
            for a in range(g):
                for b in range(g):
                    pa = bf[pe + (a * g + b) * nz * nz + i * nz]
                    s1 += dWk[3 * a + b] * pa
                    s3 += _SK[jv, a, b] * pa
            GE[(i - 1) * 9 + jv] = s1
            GE[(i - 1) * 9 + 3 + jv] = s3
        for k in range(k0, 3):
            m1 = 0.0
            m3 = 0.0
            for a in range(g):
                for b in range(g):
                    x2 = 0.0
                    x3 = 0.0
                    for c in range(3):
                        x2 += _SK[k, a, c] * dWk[3 * c + b]
                        x3 += _SK[k, a, c] * _SK[jv, c, b]
                    c2 = bf[pe + (a * g + b) * nz * nz]
                    m1 += x2 * c2
                    m3 += x3 * c2
            GM[k * 9 + jv] = -m1
            GM[k * 9 + 3 + jv] = -m3
    for jv in range(g):
        for i in range(1, nz):
            GE[(i - 1) * 9 + 6 + jv] = bf[pio + i * nz + 1 + jv]
        for k in range(k0, 3):
            acc = 0.0
            for a in range(g):
                for b in range(g):
                    acc += _SK[k, a, b] * bf[pe + (a * g + b) * nz * nz + 1 + jv]
            GM[k * 9 + 6 + jv] = -acc
    GF2 = GF[:nwi * 9].reshape((nwi, 9))
    for jw in range(nwi):
        for v in range(9):
            acc = 0.0
            for c in range(3):
                acc += ff[48 + c * 6 + jw] * GM[c * 9 + v]
                if c < g:
                    acc += ff[30 + c * 6 + jw] * GE[c * 9 + v]
            GF2[jw, v] = acc
    _frame_columns_add(GF2, dSz, dSw, dSwd, shift, nzi, nwi, rows, o + fz, o + fw, J)


#: a rigid body's terms, compiled (the NumPy variant takes them in :func:`_body_arrays`)
_rigid = jit_leaf(_rigid_loops) if COMPILED else _rigid_loops


# -- the Newton step's linear algebra -------------------------------------------------------
def _factor_loops(A: np.ndarray, piv: np.ndarray) -> bool:
    """A = P L U in place (Gaussian elimination with partial pivoting, whole rows swapped,
    the swaps in ``piv``); False where a pivot vanishes (compiled: no LAPACK call for a few
    dozen unknowns)."""
    n = A.shape[0]
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for i in range(k + 1, n):
            if abs(A[i, k]) > big:
                big = abs(A[i, k])
                p = i
        piv[k] = p
        if not big > 0.0:
            return False
        rk = A[k]
        if p != k:
            rp = A[p]
            for j in range(n):
                rk[j], rp[j] = rp[j], rk[j]
        inv = 1.0 / rk[k]
        for i in range(k + 1, n):   # (the rows as views indexed from zero: they vectorize)
            ri = A[i]
            f = ri[k] * inv
            ri[k] = f
            if f != 0.0:
                for j in range(k + 1, n):
                    ri[j] -= f * rk[j]
    return True


def _back_in_loops(A: np.ndarray, piv: np.ndarray, x: np.ndarray) -> None:
    """The solution of (P L U) x = b of :func:`_factor_loops`' factors, in place: ``x``
    holds b on entry, the solution on return (no array made)."""
    n = A.shape[0]
    for k in range(n):   # the rows swapped as the factorization swapped them
        p = piv[k]
        if p != k:
            x[k], x[p] = x[p], x[k]
    for k in range(n):
        for i in range(k + 1, n):
            x[i] -= A[i, k] * x[k]
    for k in range(n - 1, -1, -1):
        acc = x[k]
        for j in range(k + 1, n):
            acc -= A[k, j] * x[j]
        x[k] = acc / A[k, k]


def _back_in_t_loops(A: np.ndarray, piv: np.ndarray, x: np.ndarray) -> None:
    """The solution of (P L U)^T x = b of :func:`_factor_loops`' factors, in place (the
    transposed system by the same factors: U^T, then L^T, then the swaps undone in reverse
    order; no array made)."""
    n = A.shape[0]
    for k in range(n):
        acc = x[k]
        for j in range(k):
            acc -= A[j, k] * x[j]
        x[k] = acc / A[k, k]
    for k in range(n - 1, -1, -1):
        acc = x[k]
        for i in range(k + 1, n):
            acc -= A[i, k] * x[i]
        x[k] = acc
    for k in range(n - 1, -1, -1):
        p = piv[k]
        if p != k:
            x[k], x[p] = x[p], x[k]


def _factor_lapack(A: np.ndarray, piv: np.ndarray) -> bool:
    """:func:`_factor_loops` by LAPACK (scipy's getrf)."""
    import scipy.linalg as sla
    lu, p = sla.lu_factor(A, check_finite=False)
    A[:] = lu
    piv[:] = p
    return bool(np.all(np.diag(lu) != 0.0))


def _back_in_lapack(A: np.ndarray, piv: np.ndarray, x: np.ndarray) -> None:
    """:func:`_back_in_loops` by LAPACK (scipy's getrs)."""
    import scipy.linalg as sla
    x[:] = sla.lu_solve((A, piv), x, check_finite=False)


def _back_in_t_lapack(A: np.ndarray, piv: np.ndarray, x: np.ndarray) -> None:
    """:func:`_back_in_t_loops` by LAPACK (scipy's getrs, transposed)."""
    import scipy.linalg as sla
    x[:] = sla.lu_solve((A, piv), x, trans=1, check_finite=False)


#: the Newton step's factorization and its solves in place (``x`` b on entry), of A and of
#: its transpose: loops where compiled (no array kept), LAPACK otherwise
_factor = jit_leaf(_factor_loops) if COMPILED else _factor_lapack
_back_in = jit_leaf(_back_in_loops) if COMPILED else _back_in_lapack
_back_in_t = jit_leaf(_back_in_t_loops) if COMPILED else _back_in_t_lapack


# -- the residual, Newton's method, the schemes ---------------------------------------------
@jit
def residual(plan: tuple, par: np.ndarray, y: np.ndarray, yd: np.ndarray, shift: float,
             Q: np.ndarray, DQ: np.ndarray, jac: bool, F: np.ndarray, J: np.ndarray) -> None:
    """The coupled residual F(t, y, y') and, with ``jac``, J = dF/dy + shift dF/dy'.

    Args:
        plan: the model's arrays (bi, bf, ci, fi, ff, grav, n): the bodies' integer table,
            their floats, the prestress cases, the frames' integer table, their constants,
            gravity (global components; zero for none), the number of elastic reduced
            coordinates (:meth:`~dolfinx_mbs.systems.coupled_dense.Plan.arrays`).
        par: the frames' parent states at the time (nf x :data:`PAR`).
        y: the state (q, v, f).
        yd: its rate.
        shift: the Jacobian's shift.
        Q: the applied frame loads' generalized forces (at the speeds' places in f; an array
            or a sequence).
        DQ: -dQ/df (rows at the speeds' places).
        jac: form J too.
        F: the residual (filled).
        J: the Jacobian (filled with ``jac``).
    """
    residual_into(plan, par, y, yd, shift, np.asarray(Q), DQ, jac, F, J, residual_work(plan))


#: the temporaries of a body's terms in :func:`_body_loops`' work space (:func:`_body_offsets`)
NBW = 29


@jit
def _body_offsets(g: int, nz: int, nb: int, out: np.ndarray) -> None:
    """The offsets in :func:`_body_loops`' work space of its temporaries (``out``, NBW + 1:
    the last the size) for a body of dimension g, nz fields' coefficients and nb modes, in
    the order (k: out[k] .. out[k + 1]) ab, B, Pb, Sw, Wk, w, e, Kq, Sf, C, SW, Mom, then the
    nonlinear strain's qq, Hq, Cq (12-14), then the Jacobian's PW, dSq, dSv, xP, dMq, dMv,
    GE, GM, dW1, dW2, dW3, dWk, Gel, GF (15-28)."""
    gg = g * g
    sizes = (3, 3 * nz, 3 * gg * nz, 9, 9, 3 * gg, nz, nb * nb, 3, 3 * gg, 9 * gg, 3,
             nb * (nb + 1) // 2, nb * nb, nb * nb, 2 * nz * nb, 3 * nb, 3 * nb, gg * nz,
             3 * nb, 3 * nb, 9 * nz, 27, gg, gg, gg, 9, 9 * nb, 9 * MAXW)
    out[0] = 0
    for k in range(NBW):
        out[k + 1] = out[k] + sizes[k]


@jit
def residual_work(plan: tuple) -> tuple:
    """The work space of :func:`residual_into` for ``plan``'s frames and bodies (made once by
    a caller that evaluates the residual many times: an array made in a kernel costs about as
    much as a frame's arithmetic): the frames' states, their derivatives by z, w and w',
    d phi/dz, the frames' and rigid bodies' temporaries, the elastic bodies' (one array, the
    largest body's size) and their offsets in it (a row a body)."""
    bi = plan[0]
    nf = max(plan[3].shape[0], 1)
    boff = np.zeros((max(bi.shape[0], 1), NBW + 1), dtype=np.int64)
    size = 1
    for b in range(bi.shape[0]):
        _body_offsets(bi[b, 1], bi[b, 2], bi[b, 3], boff[b])
        size = max(size, boff[b, NBW])
    return (np.zeros((nf, ST)), np.zeros((nf, 9, MAXZ)), np.zeros((nf, 9, MAXW)),
            np.zeros((nf, 9, MAXW)), np.zeros((nf, 3, MAXZ)),
            np.empty(max(WK_FRAME, WK_RIGID)), np.empty(size), boff)


@jit_leaf
def residual_into(plan: tuple, par: np.ndarray, y: np.ndarray, yd: np.ndarray, shift: float,
                  Q: np.ndarray, DQ: np.ndarray, jac: bool, F: np.ndarray, J: np.ndarray,
                  rw: tuple) -> None:
    """:func:`residual` in the work space ``rw`` (:func:`residual_work`; its arrays zeroed
    first, as new ones would be): the same arithmetic."""
    st, dSz, dSw, dSwd, dphi, wk, bw, boff = rw
    st[:, :] = 0.0
    dSz[:, :, :] = 0.0
    dSw[:, :, :] = 0.0
    dSwd[:, :, :] = 0.0
    dphi[:, :, :] = 0.0
    bi, bf, ci, fi, ff, grav, n = plan
    o = 2 * n
    N = y.shape[0]
    m = N - o
    for k in range(N):
        F[k] = 0.0
    if jac:
        for k in range(N):
            for j in range(N):
                J[k, j] = 0.0
    for k in range(n):
        F[k] = yd[k] - y[n + k]
        if jac:
            J[k, k] = shift
            J[k, n + k] = -1.0
    nf = fi.shape[0]
    for i in range(nf):   # (wk: the frames' temporaries, the rigid bodies', the momenta's)
        _frame(fi[i], ff[i], par[i], o, y, yd, grav, st[i], dSz[i], dSw[i], dSwd[i], dphi[i],
               wk)
        _kinematics(fi[i], o, y, yd, shift, jac, F, J, wk)
        fw, nwi = fi[i, 2], fi[i, 4]
        for j in range(nwi):
            F[o + fw + j] -= Q[fw + j]
            if jac:
                for k in range(m):
                    J[o + fw + j, o + k] += DQ[fw + j, k]
    for b in range(bi.shape[0]):
        i = bi[b, 0]
        if COMPILED and bi[b, 3] == 0:
            _rigid(bi[b], bf, o, fi[i], ff[i], (st[i], dSz[i], dSw[i], dSwd[i]), shift, jac,
                   F, J, wk)
        else:
            _body(bi[b], bf, ci, n, o, fi[i], ff[i], (st[i], dSz[i], dSw[i], dSwd[i]),
                  (y, yd, shift), jac, F, J, bw, boff[b])
    for i in range(nf):
        if fi[i, 5] >= 0:
            _momentum_rows(bi, bf, i, fi[i], (st[i], dSw[i], dphi[i]), n, o, (y, yd, shift),
                           jac, F, J, wk)


@jit_leaf
def _kinematics(fi: np.ndarray, o: int, y: np.ndarray, yd: np.ndarray, shift: float,
                jac: bool, F: np.ndarray, J: np.ndarray, wk: np.ndarray) -> None:
    """A frame's kinematic rows z' = rates(z, w): a hinge's and a planar free frame's the
    speeds themselves, a free frame's in 3D r_O' = v_O (global) and q' = G(q)^T omega / 2
    (``wk``: 28 floats of work space)."""
    kind, fz, fw, nzi = fi[0], fi[1], fi[2], fi[3]
    if kind == KIND_HINGE or kind == KIND_FREE2:
        for k in range(nzi):
            F[o + fz + k] = yd[o + fz + k] - y[o + fw + k]
            if jac:
                J[o + fz + k, o + fz + k] = shift
                J[o + fz + k, o + fw + k] = -1.0
        return
    for k in range(3):
        F[o + fz + k] = yd[o + fz + k] - y[o + fw + k]
        if jac:
            J[o + fz + k, o + fz + k] = shift
            J[o + fz + k, o + fw + k] = -1.0
    qw, qx, qy, qz = y[o + fz + 3], y[o + fz + 4], y[o + fz + 5], y[o + fz + 6]
    Gq = wk[0:12].reshape((3, 4))
    Gq[0, 0], Gq[0, 1], Gq[0, 2], Gq[0, 3] = -qx, qw, qz, -qy
    Gq[1, 0], Gq[1, 1], Gq[1, 2], Gq[1, 3] = -qy, -qz, qw, qx
    Gq[2, 0], Gq[2, 1], Gq[2, 2], Gq[2, 3] = -qz, qy, -qx, qw
    om = y[o + fw + 3:o + fw + 6]
    for r in range(4):
        acc = 0.0
        for a in range(3):
            acc += Gq[a, r] * om[a]
        F[o + fz + 3 + r] = yd[o + fz + 3 + r] - 0.5 * acc
        if jac:
            J[o + fz + 3 + r, o + fz + 3 + r] = shift
            for a in range(3):
                J[o + fz + 3 + r, o + fw + 3 + a] -= 0.5 * Gq[a, r]
    if jac:   # d(G^T omega)/dq: the rows of [[0, -o], [o, -skew(o)]] (the quaternion's rate)
        o0, o1, o2 = om[0], om[1], om[2]
        M = wk[12:28].reshape((4, 4))
        M[0, 0], M[0, 1], M[0, 2], M[0, 3] = 0.0, -o0, -o1, -o2
        M[1, 0], M[1, 1], M[1, 2], M[1, 3] = o0, 0.0, o2, -o1
        M[2, 0], M[2, 1], M[2, 2], M[2, 3] = o1, -o2, 0.0, o0
        M[3, 0], M[3, 1], M[3, 2], M[3, 3] = o2, o1, -o0, 0.0
        for r in range(4):
            for c in range(4):
                J[o + fz + 3 + r, o + fz + 3 + c] -= 0.5 * M[r, c]


@jit_leaf
def _momentum_rows(bi: np.ndarray, bf: np.ndarray, i: int, fi: np.ndarray, state: tuple,
                   n: int, o: int, motion: tuple, jac: bool, F: np.ndarray,
                   J: np.ndarray, wk: np.ndarray) -> None:
    """A free frame's translation rows, its momentum balance m v_O' + pi' - R F = 0 (global;
    F the carried bodies' applied loads with gravity, local), and its auxiliary rows pi - R
    p_rel = 0, p_rel = omega x s + int rho u' (s = int rho x): what
    :meth:`~dolfinx_mbs.systems.coupled.CoupledSystem.evaluate` writes over the rows of the
    translation speeds (the bodies' terms left none there: T = 0 in ``ff``). ``state``: the
    frame's (st, dSw, dphi); ``motion``: (y, y', the Jacobian's shift); ``wk``: work space
    (27 floats)."""
    st, dSw, dphi = state
    y, yd, shift = motion
    fz, fw, nzi, nwi, fa, nt = fi[1], fi[2], fi[3], fi[4], fi[5], fi[6]
    mass = 0.0
    # app: the loads without gravity (R m g_loc = m g does not turn)
    s1, sd, app = wk[0:3], wk[3:6], wk[6:9]
    for a in range(9):
        wk[a] = 0.0
    for b in range(bi.shape[0]):
        if bi[b, 0] != i:
            continue
        g, nz, nb, qo = bi[b, 1], bi[b, 2], bi[b, 3], bi[b, 4]
        pio = bi[b, 7]
        m_b = bf[pio + 1 * nz + 1]
        mass += m_b
        for a in range(g):
            acc = bf[pio + (1 + a) * nz]
            acd = 0.0
            for j in range(nb):
                acc += bf[pio + (1 + a) * nz + 1 + g + j] * y[qo + j]
                acd += bf[pio + (1 + a) * nz + 1 + g + j] * y[n + qo + j]
            s1[a] += acc
            sd[a] += acd
        for a in range(3):
            app[a] += bf[bi[b, 9] + a]
    R = st[0:9]
    om = st[12:15]
    # the applied loads with gravity in global components: R app + m g
    Rapp, prel, Rp, tmp, tmp2, col = wk[9:12], wk[12:15], wk[15:18], wk[18:21], wk[21:24], \
        wk[24:27]
    _mv3(R, app, Rapp)
    _cx(om, s1, prel)
    for a in range(3):
        prel[a] += sd[a]
    _mv3(R, prel, Rp)
    rows = o + fw
    aux = o + fa
    for k in range(nt):
        F[rows + k] += mass * yd[o + fw + k] + yd[aux + k] - Rapp[k] - mass * grav_of(st, k)
        F[aux + k] += y[aux + k] - Rp[k]
    if not jac:
        return
    for k in range(nt):
        J[rows + k, o + fw + k] += shift * mass
        J[rows + k, aux + k] += shift
        J[aux + k, aux + k] += 1.0
    # by the rotation: d(R x) = R (d phi x x)
    for c in range(nzi):
        d = dphi[:, c]
        _cx(d, app, tmp)
        _mv3(R, tmp, tmp2)
        for k in range(nt):
            J[rows + k, o + fz + c] -= tmp2[k]
        _cx(d, prel, tmp)
        _mv3(R, tmp, tmp2)
        for k in range(nt):
            J[aux + k, o + fz + c] -= tmp2[k]
    # by omega (through the speeds: d omega/dw = dSw[0:3]): -R (d omega x s)
    for c in range(nwi):
        dw = dSw[0:3, c]
        if dw[0] == 0.0 and dw[1] == 0.0 and dw[2] == 0.0:
            continue
        _cx(dw, s1, tmp)
        _mv3(R, tmp, tmp2)
        for k in range(nt):
            J[aux + k, o + fw + c] -= tmp2[k]
    # by the modal coordinates and rates: s = ... + int rho u, int rho u'
    for b in range(bi.shape[0]):
        if bi[b, 0] != i:
            continue
        g, nz, nb, qo = bi[b, 1], bi[b, 2], bi[b, 3], bi[b, 4]
        pio = bi[b, 7]
        for j in range(nb):
            col[:] = 0.0
            for a in range(g):
                col[a] = bf[pio + (1 + a) * nz + 1 + g + j]
            _cx(om, col, tmp)
            _mv3(R, tmp, tmp2)
            _mv3(R, col, tmp)
            for k in range(nt):
                J[aux + k, qo + j] -= tmp2[k]
                J[aux + k, n + qo + j] -= tmp[k]


@jit_leaf
def grav_of(st: np.ndarray, k: int) -> float:
    """Component k of gravity (global) from a frame's state: R g_loc."""
    g: float = st[3 * k] * st[24] + st[3 * k + 1] * st[25] + st[3 * k + 2] * st[26]
    return g


@jit
def kinematic_pairs(fi: np.ndarray, n: int, N: int) -> np.ndarray:
    """For each unknown: the index of the coordinate whose kinematic row is x' = it (an
    elastic rate's coordinate, a hinge speed's angle, a free frame's position and a planar
    one's angle), -2 for such a coordinate, -1 else.

    Args:
        fi: the frames' integer table.
        n: the number of elastic reduced coordinates.
        N: the number of unknowns.

    Returns:
        The pairs.
    """
    kv = np.full(N, -1, dtype=np.int64)
    for i in range(n):
        kv[n + i] = i
        kv[i] = -2
    o = 2 * n
    for f in range(fi.shape[0]):
        npair = fi[f, 3] if fi[f, 0] != KIND_FREE3 else 3   # a quaternion's rows are not
        for k in range(npair):
            kv[o + fi[f, 2] + k] = o + fi[f, 1] + k
            kv[o + fi[f, 1] + k] = -2
    return kv


def _condense_loops(J: np.ndarray, F: np.ndarray, kv: np.ndarray, r: float, Jc: np.ndarray,
                    Fc: np.ndarray) -> bool:
    """The rows and columns of the unknowns that remain (kv != -2): Jc = J + r J[:, p] for
    an unknown whose coordinate p follows it, Fc = F; False where J is not finite."""
    N = J.shape[0]
    a = 0
    for i in range(N):
        if kv[i] == -2:
            continue
        Fc[a] = F[i]
        b = 0
        for j in range(N):
            if kv[j] == -2:
                continue
            x = J[i, j]
            if kv[j] >= 0:
                x += r * J[i, kv[j]]
            if not abs(x) < np.inf:
                return False
            Jc[a, b] = x
            b += 1
        a += 1
    return True


def _condense_arrays(J: np.ndarray, F: np.ndarray, kv: np.ndarray, r: float, Jc: np.ndarray,
                     Fc: np.ndarray) -> bool:
    """:func:`_condense_loops` in array products."""
    keep = np.flatnonzero(kv != -2)
    cols = J[:, keep]
    paired = kv[keep] >= 0
    cols[:, paired] += r * J[:, kv[keep][paired]]
    Jc[:, :] = cols[keep]
    Fc[:] = F[keep]
    return bool(np.all(np.isfinite(Jc)))


#: the Newton matrix of the remaining unknowns: loops where compiled, arrays otherwise
_condense = jit(_condense_loops) if COMPILED else _condense_arrays


@jit
def _block_sizes(dX: np.ndarray, X: np.ndarray, Xs: np.ndarray, n: int, sizes: np.ndarray,
                 ref: np.ndarray) -> float:
    """Each block's update size and reference (the elastic coordinates, their rates, each
    frame unknown: the update test of :func:`newton_iter` and of Maggi's stages) into
    ``sizes`` and ``ref``; returns the frames' largest reference."""
    nb = sizes.shape[0]
    top = 0.0
    for b in range(nb):
        lo = 0 if b == 0 else (n if b == 1 else 2 * n + b - 2)
        hi = n if b == 0 else (2 * n if b == 1 else lo + 1)
        a_ = 0.0
        rr = 0.0
        for k in range(lo, hi):
            a_ = max(a_, abs(dX[k]))
            rr = max(rr, abs(X[k]), abs(X[k] - Xs[k]))
        sizes[b] = a_
        ref[b] = rr
        if b > 1:
            top = max(top, rr)
    return top


@jit
def newton_work(plan: tuple, N: int) -> tuple:
    """The work space of :func:`newton_iter` for ``plan`` and ``N`` unknowns (made once by
    its caller): the residual, its Jacobian, the state and its rate, the condensed residual,
    the update, the blocks' sizes and references, the kinematic pairs
    (:func:`kinematic_pairs`) and the residual's own (:func:`residual_work`)."""
    kv = kinematic_pairs(plan[3], plan[6], N)
    Nc = 0
    for i in range(N):
        if kv[i] != -2:
            Nc += 1
    nb = 2 + N - 2 * plan[6]
    return (np.empty(N), np.empty((N, N)), np.empty(N), np.empty(N), np.empty(Nc),
            np.empty(N), np.empty(nb), np.empty(nb), kv, residual_work(plan))


@jit
def newton_iter(plan: tuple, par: np.ndarray, comb: tuple, Q: np.ndarray, DQ: np.ndarray,
                X: np.ndarray, Xs: np.ndarray, it: int, mem: np.ndarray, LU: np.ndarray,
                piv: np.ndarray, work: tuple) -> int:
    """Iteration ``it`` of Newton's method on F(t, ca X + da, cb X + db) = 0, X updated in
    place (``comb`` = (ca, da, cb, db); ``plan`` as :func:`residual` takes it): the stage's
    unknown X at the time whose parent states are ``par``, the loads ``Q`` and their
    derivative ``DQ`` at (that time, ca X + da).

    The kinematic rows x' = u of the elastic coordinates and the hinges' angles
    (:func:`kinematic_pairs`) are linear: each such coordinate is set from its rate's unknown
    so that its row holds exactly, and Newton's matrix is that of the other unknowns (the
    same iterates, a system of half the size). It is formed and factored (into ``LU``,
    ``piv``) at the stage's first iterate and again wherever the updates stop shrinking at
    least :data:`REFRESH`-fold from one iteration to the next; between, the factors of an
    earlier iterate serve (the same solution: only the rate of convergence depends on them).
    Converged when the update is round-off of its block (the elastic coordinates, their
    rates, each frame unknown; relative to the block or to its increment from ``Xs``, the
    step's start), or the error it leaves as the last contraction extrapolates it is below
    ``mem[M_STOL]`` of the block (:data:`STOL`), or when an exact step no longer reduces the
    residual (the round-off plateau). ``mem`` (:data:`M_HEAD` + 2 (2 + m) numbers, zero at
    the stage's start but for :data:`M_STOL`) carries what one iteration leaves the next;
    ``work`` is :func:`newton_work`'s.

    Returns:
        0 to go on, the iterations taken when converged, or minus a status
        (:data:`NOT_FINITE`, :data:`SINGULAR`).
    """
    n = plan[6]
    ca, da, cb, db = comb
    N = X.shape[0]
    nb = 2 + N - 2 * n
    hp = M_HEAD
    hr = M_HEAD + nb
    F, J, y, yd, Fc, dX, sizes, refs, kv, rw = work
    Nc = Fc.shape[0]
    r = ca / cb
    for i in range(N):    # the coordinates that follow their rates' unknowns
        if kv[i] >= 0:
            X[kv[i]] = (ca * X[i] + da[i] - db[kv[i]]) / cb
    have_prev = mem[M_PREV] > 0.0
    jac = it == 0 or mem[M_REFRESH] > 0.0
    _combine(ca, X, 1.0, da, y)
    _combine(cb, X, 1.0, db, yd)
    residual_into(plan, par, y, yd, cb / ca, Q, DQ, jac, F, J, rw)
    fnorm = 0.0
    for k in range(N):
        a = abs(F[k])
        if not a < np.inf:
            return -NOT_FINITE
        if kv[k] != -2:
            fnorm = max(fnorm, a)
    if have_prev and mem[M_EXACT] > 0.0 and fnorm > 0.5 * mem[M_FNORM]:
        plateau = True
        for b in range(nb):
            if mem[hp + b] > PLATEAU * max(mem[hr + b], ROUNDOFF * mem[M_TOP]):
                plateau = False
        if plateau:
            return it
    mem[M_FNORM] = fnorm
    Jc = LU.reshape(-1)[:Nc * Nc].reshape((Nc, Nc))
    if jac:
        if not _condense(J, F, kv, r, Jc, Fc):
            return -NOT_FINITE
        if not _factor(Jc, piv[:Nc]):
            return -SINGULAR
        mem[M_EXACT] = 1.0
    else:
        a = 0
        for i in range(N):
            if kv[i] != -2:
                Fc[a] = F[i]
                a += 1
        mem[M_EXACT] = 0.0
    dU = Fc
    _back_in(Jc, piv[:Nc], dU)
    dX[:] = 0.0
    a = 0
    for i in range(N):
        if kv[i] == -2:
            continue
        dX[i] = dU[a] / ca
        if kv[i] >= 0:
            dX[kv[i]] = r * dX[i]
        a += 1
    for k in range(N):
        X[k] -= dX[k]
        if not abs(X[k]) < np.inf:
            return -NOT_FINITE
    done = True
    slow = False
    top = _block_sizes(dX, X, Xs, n, sizes, refs)
    mem[M_TOP] = top
    for b in range(nb):
        a_, rr = sizes[b], refs[b]
        pa = mem[hp + b] if have_prev else a_
        ok = (a_ <= ROUNDOFF * rr or (b > 1 and a_ <= ROUNDOFF * top)
              or (have_prev and a_ * a_ <= mem[M_STOL] * rr * max(pa, 1e-300)))
        if not ok:
            done = False
            if have_prev and a_ > REFRESH * pa:
                slow = True
        mem[hp + b] = a_
        mem[hr + b] = rr
    if done and it > 0:
        return it + 1
    mem[M_REFRESH] = 1.0 if slow else 0.0
    mem[M_PREV] = 1.0
    return 0


@jit
def newton(plan: tuple, par: np.ndarray, comb: tuple, Q: np.ndarray, DQ: np.ndarray,
           X: np.ndarray, Xs: np.ndarray, stol: float, work: tuple) -> int:
    """Newton's method (:func:`newton_iter`, its update test's tolerance ``stol``, its work
    space ``work``: :func:`newton_work`'s) with loads that do not depend on X.

    Returns:
        The iterations (> 0), or minus a status (:data:`NOT_CONVERGED`, :data:`NOT_FINITE`,
        :data:`SINGULAR`).
    """
    N = X.shape[0]
    mem = np.zeros(M_HEAD + 2 * (2 + N - 2 * plan[6]))
    mem[M_STOL] = stol
    LU = np.empty((N, N))
    piv = np.zeros(N, dtype=np.int64)
    for it in range(MAXIT):
        code = newton_iter(plan, par, comb, Q, DQ, X, Xs, it, mem, LU, piv, work)
        if code != 0:
            return code
    return -NOT_CONVERGED


@jit
def alpha_run(plan: tuple, spar: np.ndarray, sQ: np.ndarray, DQ: np.ndarray, tt: np.ndarray,
              scheme: tuple, started: bool, X: np.ndarray, V: np.ndarray, Y: np.ndarray,
              info: np.ndarray) -> None:
    """Steps of PETSc's TSALPHA (first order) from (X, V) through the times ``tt``, one stage
    a step at t + af h, the predictor X + h V (the run's first step: two backward-Euler half
    steps give the rate, its backward difference divided by ``restart_step`` h). The stages'
    parent states ``spar`` and loads ``sQ`` in order (one row: the same at every stage). X, V
    are updated in place, the step ends' states written to the rows of ``Y``; ``info``: steps
    done, status, iterations, stages solved (the last two added to). ``plan`` as
    :func:`residual` takes it; ``scheme``: (alpha_m, alpha_f, gamma, restart_step, Newton's
    tolerance :data:`STOL`)."""
    am, af, gm, restart_step, stol = scheme
    info[0] = 0
    info[1] = OK
    N = X.shape[0]
    si = 0
    one_p = spar.shape[0] == 1
    one_q = sQ.shape[0] == 1
    zero = np.zeros(N)
    work = newton_work(plan, N)
    da = np.empty(N)
    db = np.empty(N)
    for s in range(tt.shape[0] - 1):
        h = tt[s + 1] - tt[s]
        X0 = X.copy()
        if not started:
            hh = 0.5 * h
            X1 = X0.copy()
            _combine(-1.0 / hh, X0, 0.0, X0, db)
            it = newton(plan, spar[0 if one_p else si], (1.0, zero, 1.0 / hh, db),
                        sQ[0 if one_q else si], DQ, X1, X0, stol, work)
            si += 1
            if it < 0:
                info[1] = -it
                return
            X2 = X1.copy()
            _combine(-1.0 / hh, X1, 0.0, X1, db)
            it2 = newton(plan, spar[0 if one_p else si], (1.0, zero, 1.0 / hh, db),
                         sQ[0 if one_q else si], DQ, X2, X1, stol, work)
            si += 1
            if it2 < 0:
                info[1] = -it2
                return
            info[2] += it + it2
            info[3] += 2
            for k in range(N):
                V[k] = (-3.0 * X0[k] + 4.0 * X1[k] - X2[k]) / (restart_step * h)
            started = True
        X1 = np.empty(N)
        _combine(1.0, X0, h, V, X1)
        _combine(1.0 - af, X0, 0.0, X0, da)
        _combine(1.0 - am / gm, V, -am / (gm * h), X0, db)
        it = newton(plan, spar[0 if one_p else si], (af, da, am / (gm * h), db),
                    sQ[0 if one_q else si], DQ, X1, X0, stol, work)
        si += 1
        if it < 0:
            info[1] = -it
            return
        info[2] += it
        info[3] += 1
        for k in range(N):
            V[k] = (X1[k] - X0[k]) / (gm * h) + (1.0 - 1.0 / gm) * V[k]
            X[k] = X1[k]
            Y[s, k] = X1[k]
        info[0] = s + 1


@jit
def bdf_weights(t1: float, t0: float, tm: float, two: bool) -> np.ndarray:
    """The derivatives at t1 of the Lagrange basis on (t1, t0[, tm]) (TSBDF's weights).

    Args:
        t1: the new time.
        t0: the last one.
        tm: the one before (with ``two``).
        two: order 2 (else 1).

    Returns:
        The weights.
    """
    if not two:
        w = np.empty(2)
        w[0] = 1.0 / (t1 - t0)
        w[1] = -w[0]
        return w
    ts = np.empty(3)
    ts[0], ts[1], ts[2] = t1, t0, tm
    w = np.zeros(3)
    for k in range(3):
        dk = 0.0
        for j in range(3):
            if j == k:
                continue
            L = 1.0 / (ts[k] - ts[j])
            for i in range(3):
                if i != j and i != k:
                    L *= (t1 - ts[i]) / (ts[k] - ts[i])
            dk += L
        w[k] = dk
    return w


@jit
def bdf_run(plan: tuple, spar: np.ndarray, sQ: np.ndarray, DQ: np.ndarray, tt: np.ndarray,
            started: bool, X: np.ndarray, hist_t: np.ndarray, hist_X: np.ndarray, Y: np.ndarray,
            info: np.ndarray, stol: float) -> None:
    """Steps of PETSc's TSBDF of order 2 from X through the times ``tt`` (the run's first
    step: a backward-Euler half step, then BDF2 on t, t + h/2, t + h), the predictor the line
    through the last two states; ``hist_t``, ``hist_X`` hold the state one step back
    (updated); ``stol`` Newton's tolerance (:data:`STOL`). As :func:`alpha_run` otherwise."""
    info[0] = 0
    info[1] = OK
    N = X.shape[0]
    si = 0
    one_p = spar.shape[0] == 1
    one_q = sQ.shape[0] == 1
    zero = np.zeros(N)
    work = newton_work(plan, N)
    db = np.empty(N)
    for s in range(tt.shape[0] - 1):
        t, t1 = tt[s], tt[s + 1]
        X0 = X.copy()
        if not started:
            th = t + 0.5 * (t1 - t)
            w = bdf_weights(th, t, t, False)
            Xm = X0.copy()
            _combine(w[1], X0, 0.0, X0, db)
            it = newton(plan, spar[0 if one_p else si], (1.0, zero, w[0], db),
                        sQ[0 if one_q else si], DQ, Xm, X0, stol, work)
            si += 1
            if it < 0:
                info[1] = -it
                return
            info[2] += it
            info[3] += 1
            tm = th
            started = True
        else:
            tm = hist_t[0]
            Xm = hist_X[0].copy()
        w = bdf_weights(t1, t, tm, True)
        X1 = np.empty(N)
        _combine(1.0 + (t1 - t) / (t - tm), X0, -(t1 - t) / (t - tm), Xm, X1)
        _combine(w[1], X0, w[2], Xm, db)
        it = newton(plan, spar[0 if one_p else si], (1.0, zero, w[0], db),
                    sQ[0 if one_q else si], DQ, X1, X0, stol, work)
        si += 1
        if it < 0:
            info[1] = -it
            return
        info[2] += it
        info[3] += 1
        hist_t[0] = t
        for k in range(N):
            hist_X[0, k] = X0[k]
            X[k] = X1[k]
            Y[s, k] = X1[k]
        info[0] = s + 1


@jit
def frame_states(fi: np.ndarray, ff: np.ndarray, spar: np.ndarray, grav: np.ndarray, n: int,
                 Y: np.ndarray) -> np.ndarray:
    """The frames' state vectors at the states ``Y`` (rows; zero speeds' rates), each at its
    parents' states ``spar`` (one row: the same for all): (rows, nf, :data:`ST`).

    Args:
        fi: the frames' integer table.
        ff: the frames' constants.
        spar: the parents' states.
        grav: gravity.
        n: the number of elastic reduced coordinates.
        Y: the states.

    Returns:
        The frames' states.
    """
    nf = fi.shape[0]
    S = Y.shape[0]
    out = np.zeros((S, nf, ST))
    yd = np.zeros(Y.shape[1])
    dSz = np.zeros((9, MAXZ))
    dSw = np.zeros((9, MAXW))
    dSwd = np.zeros((9, MAXW))
    dphi = np.zeros((3, MAXZ))
    wk = np.empty(WK_FRAME)
    for s in range(S):
        for i in range(nf):
            _frame(fi[i], ff[i], spar[0 if spar.shape[0] == 1 else s, i], 2 * n, Y[s], yd,
                   grav, out[s, i], dSz, dSw, dSwd, dphi, wk)
    return out


def monitors(plan: tuple, spar: np.ndarray, Y: np.ndarray, out: np.ndarray,
             states: np.ndarray | None = None) -> None:
    """Energies and momenta of the states ``Y`` (rows, all at once in array products), each
    at its parents' states (one row: the same for all): ``out`` rows (kinetic, elastic,
    gravity, total, P (3), H (3)); P and H global, H about the global origin (as
    :func:`~dolfinx_mbs.systems.coupled.monitors`).

    Args:
        plan: the model's arrays, as :func:`residual` takes them.
        spar: the parents' states.
        Y: the states.
        out: the rows (filled).
        states: the frames' states at ``Y`` where known (:func:`frame_states`).
    """
    bi, bf, ci, fi, ff, grav, n = plan
    S = Y.shape[0]
    if states is None:
        states = frame_states(fi, ff, spar, grav, n, Y)
    out[:, :] = 0.0
    for b in range(bi.shape[0]):
        bb = bi[b]
        g, nz, nb, qo = int(bb[1]), int(bb[2]), int(bb[3]), int(bb[4])
        gg = g * g
        ts = 1 + g
        Pe = bf[bb[5]:bb[5] + gg * nz * nz].reshape(gg * nz, nz)
        PI = bf[bb[7]:bb[7] + nz * nz].reshape(nz, nz)
        st = states[:, bb[0]]
        R = st[:, 0:9].reshape(S, 3, 3)
        rO, om = st[:, 9:12], st[:, 12:15]
        q, v = Y[:, qo:qo + nb], Y[:, n + qo:n + qo + nb]
        xi = np.zeros((S, nz))
        xi[:, 0] = 1.0
        xi[:, ts:] = q
        lin = np.zeros((S, nz))
        lin[:, 1:ts] = st[:, 18:18 + g]
        lin[:, ts:] = v
        Px = (Pe @ xi.T).reshape(gg, nz, S)
        Pl = (Pe @ lin.T).reshape(gg, nz, S)
        Axx = (Px * xi.T[None]).sum(axis=1).T
        Axl = (Pl * xi.T[None]).sum(axis=1).T
        # S(omega) = sum_c omega_c S(e_c): the products with it as sums over c (and d)
        SK = _SK[:, :g, :g].reshape(3, gg)
        oo = (om[:, :, None] * om[:, None, :]).reshape(S, 9)
        T = 0.5 * (((lin @ PI) * lin).sum(axis=1)
                   - 2.0 * ((Axl @ SK.T) * om).sum(axis=1)
                   + ((Axx @ _SKT_SK[:, :, :g, :g].reshape(9, gg).T) * oo).sum(axis=1))
        K0 = bf[bb[11]:bb[11] + nb * nb].reshape(nb, nb)
        Vel = 0.5 * ((q @ K0) * q).sum(axis=1)
        ab = st[:, 21:24] - st[:, 24:27]
        for c in range(bb[13], bb[13] + bb[14]):
            Mc = bf[ci[c, 3]:ci[c, 3] + nb * nb].reshape(nb, nb)
            coef = om[:, ci[c, 1]] * om[:, ci[c, 2]] if ci[c, 0] == 0 else -ab[:, ci[c, 1]]
            Vel += 0.5 * coef * ((q @ Mc) * q).sum(axis=1)
        if bb[17] != 0:     # the nonlinear strain energy's excess: q (H(q)/6 + C(q,q)/24) q
            # H(q) and C(q, q) are symmetric: q M q = sum over the pairs k <= l of
            # (2 - [k = l]) M_kl q_k q_l, products with the pairs' monomials
            npair = nb * (nb + 1) // 2
            H = bf[bb[15]:bb[15] + nb * nb * nb].reshape((nb, nb * nb))
            C = bf[bb[16]:bb[16] + npair * nb * nb].reshape((npair, nb * nb))
            iu, ju = np.triu_indices(nb)
            kl = iu * nb + ju
            twice = np.where(iu == ju, 1.0, 2.0)
            qq = q[:, iu] * q[:, ju]
            Vel += ((q @ (H[:, kl] * (twice / 6.0)) + qq @ (C[:, kl] * (twice / 24.0))) * qq
                    ).sum(axis=1)
        Pl_ = np.zeros((S, 3))
        SPx = (SK @ Px[:, 1:ts].reshape(gg, g * S)).reshape(3, g, S)
        Pl_[:, :g] = (lin @ PI.T)[:, 1:ts] + np.einsum("sc,cis->si", om, SPx)
        Hl = np.zeros((S, 3))
        for k in range(2 if g == 2 else 0, 3):
            Hl[:, k] = -(Axl @ SK[k] + ((Axx @ _SK_SK[k, :, :g, :g].reshape(3, gg).T) * om
                                        ).sum(axis=1))
        s1 = np.zeros((S, 3))
        s1[:, :g] = (xi @ PI.T)[:, 1:ts]
        Pg = np.einsum("sij,sj->si", R, Pl_)
        out[:, 0] += T
        out[:, 1] += Vel
        out[:, 2] -= (PI[1, 1] * rO + np.einsum("sij,sj->si", R, s1)) @ grav
        out[:, 4:7] += Pg
        out[:, 7:10] += np.einsum("sij,sj->si", R, Hl) + np.cross(rO, Pg)
    out[:, 3] = out[:, 0] + out[:, 1] + out[:, 2]
