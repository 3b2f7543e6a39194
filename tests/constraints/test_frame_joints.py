"""The joint elements' rows on their own (constraints.frame_joints), against differences in time.

Each element's rows are given two points' kinematics (:class:`End`); for any motion of the two
frames, a position row's velocity value h is the time derivative of its value g (the rows are
what the coupled equations hold at position and velocity level), and a spring's tension is
k (L - L0) + c L'. Here the frames turn about fixed axes with closed-form angles and origins
(prescribed: no speed coefficients), and h is checked against central differences of g, L'
against differences of L.
"""

import numpy as np
import pytest

from dolfinx_mbs.constraints.frame_joints import (
    End,
    JointPoint,
    Prismatic,
    Revolute,
    Spring,
)


def _rot(n, th):
    n = np.asarray(n, float) / np.linalg.norm(n)
    K = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K


class _Motion:
    """A frame turning about ``n`` by th(t) = w t + a t^2, its origin o + v t + b t^2: the
    kinematics of a point X in it (global r, r'; local omega)."""

    def __init__(self, n, w, a, o, v, b):
        self.n = np.asarray(n, float) / np.linalg.norm(n)
        self.w, self.a = w, a
        self.o, self.v, self.b = (np.asarray(x, float) for x in (o, v, b))

    def end(self, t, X):
        R = _rot(self.n, self.w * t + self.a * t * t)
        om = self.n * (self.w + 2 * self.a * t)           # R n = n: local = global
        rO = self.o + self.v * t + self.b * t * t
        vO = self.v + 2 * self.b * t
        X = np.asarray(X, float)
        return End(r=rO + R @ X, rd=vO + R @ np.cross(om, X), Pw=None, R=R, x=X, omega=om,
                   domega=None, dphi=None, drO=None, index=None)


def _values(el, ma, mb, Xa, Xb, t, lam=None):
    g, h = np.zeros(el.n_rows), np.zeros(el.n_rows)
    G = [dict() for _ in range(el.n_rows)]
    el.rows(ma.end(t, Xa), mb.end(t, Xb), np.zeros(el.n_rows) if lam is None else lam, g, h,
            G)
    assert all(not d for d in G)   # prescribed frames: no speeds
    return g, h


def _joint(cls, gdim, p, axis):
    a, b = JointPoint(frame=None, X=np.asarray(p, float)), JointPoint(frame=None,
                                                                      X=np.asarray(p, float))
    return cls(a, b, gdim, axis=axis, name="j")


@pytest.mark.parametrize("cls,gdim", [(Revolute, 2), (Revolute, 3), (Prismatic, 2),
                                      (Prismatic, 3)])
def test_velocity_rows_are_the_rate_of_the_position_rows(cls, gdim):
    if gdim == 2:
        axis = (0.0, 0.0, 1.0) if cls is Revolute else (0.6, 0.8, 0.0)
        ma = _Motion((0, 0, 1), 0.7, 0.3, (0.1, -0.2, 0), (0.3, 0.1, 0), (0.05, -0.1, 0))
        mb = _Motion((0, 0, 1), -1.1, 0.2, (0.4, 0.1, 0), (-0.2, 0.5, 0), (0.1, 0.02, 0))
        Xa, Xb = (0.3, 0.1, 0.0), (-0.2, 0.25, 0.0)
    else:
        axis = (0.2, -0.3, 0.9)
        ma = _Motion((1, 2, 2), 0.7, 0.3, (0.1, -0.2, 0.3), (0.3, 0.1, -0.2), (0.05, -0.1, 0.2))
        mb = _Motion((-2, 1, 0.5), -1.1, 0.2, (0.4, 0.1, -0.1), (-0.2, 0.5, 0.1), (0.1, 0, 0.3))
        Xa, Xb = (0.3, 0.1, -0.2), (-0.2, 0.25, 0.1)
    el = _joint(cls, gdim, (0.5, 0.2, 0.0), axis)
    assert el.n_position == el.n_rows and el.n_rows == {
        (Revolute, 2): 2, (Revolute, 3): 5, (Prismatic, 2): 2, (Prismatic, 3): 5}[(cls, gdim)]
    for t in (0.0, 0.4, 1.3):
        _, h = _values(el, ma, mb, Xa, Xb, t)
        e = 1e-6
        gp, _ = _values(el, ma, mb, Xa, Xb, t + e)
        gm, _ = _values(el, ma, mb, Xa, Xb, t - e)
        assert np.abs(h - (gp - gm) / (2 * e)).max() < 1e-7, (h, (gp - gm) / (2 * e))


def test_spring_tension_length_and_rows():
    k, c, L0 = 300.0, 2.5, 0.4
    a = JointPoint(frame=None, X=np.array([0.0, 0.0, 0.0]))
    b = JointPoint(frame=None, X=np.array([0.5, 0.1, 0.0]))
    sp = Spring(a, b, 3, stiffness=k, damping=c, length=L0, name="s")
    assert sp.n_rows == 3 and sp.n_position == 0 and sp.n_point_rows == 3
    ma = _Motion((0, 0, 1), 0.7, 0.3, (0.1, -0.2, 0.3), (0.3, 0.1, -0.2), (0.05, -0.1, 0.2))
    mb = _Motion((1, 0, 1), -1.1, 0.2, (0.4, 0.1, -0.1), (-0.2, 0.5, 0.1), (0.1, 0, 0.3))
    Xa, Xb = (0.3, 0.1, -0.2), (-0.2, 0.25, 0.1)

    def length(t):
        return float(np.linalg.norm(ma.end(t, Xa).r - mb.end(t, Xb).r))
    t, e = 0.6, 1e-6
    Ld = (length(t + e) - length(t - e)) / (2 * e)
    A, B = ma.end(t, Xa), mb.end(t, Xb)
    out = sp.output(A, B, np.zeros(3), np.zeros(0))
    assert abs(out.length - length(t)) < 1e-14
    assert abs(out.tension - (k * (length(t) - L0) + c * Ld)) < 1e-6 * k
    assert dict(out) == {"tension": out.tension, "length": out.length}
    # the rows F - s e vanish at the spring's force on b (s e, e from b to a)
    d = A.r - B.r
    F = out.tension * d / np.linalg.norm(d)
    _, h = _values(sp, ma, mb, Xa, Xb, t, lam=F)
    assert np.abs(h).max() < 1e-12
    assert abs(sp.energy(A, B) - 0.5 * k * (length(t) - L0) ** 2) < 1e-12


def test_element_errors():
    p = JointPoint(frame=None, X=np.zeros(3))
    with pytest.raises(ValueError, match="in 3D needs its axis"):
        Revolute(p, p, 3, name="r")
    with pytest.raises(ValueError, match="in 2D a revolute joint turns about z"):
        Revolute(p, p, 2, axis=(1.0, 0.0, 0.0), name="r")
    with pytest.raises(ValueError, match="coincide"):
        Spring(p, p, 2, stiffness=1.0, name="s")
    q = JointPoint(frame=None, X=np.ones(3))
    with pytest.raises(ValueError, match="stiffness and damping must be >= 0"):
        Spring(p, q, 3, stiffness=-1.0, name="s")
