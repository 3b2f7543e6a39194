"""Springs between bodies on prescribed frames (``Model.spring`` without a computed frame),
against closed forms; the model then runs the coupled equations with the springs' forces as
their only unknowns beside the elastic ones.

The bars are plane-stress strips with nu = 0 and a rigid end face (``model.rigid``), so that
their axial motion is exactly that of a 1D bar (u_x(x), c = (E / rho)^(1/2)), clamped at x = 0
and held at x = L by a spring of stiffness k along the bar: the axial frequencies solve

    EA beta cos(beta L) + k sin(beta L) = 0,   omega = beta c.

Each run starts from the continuous first mode, u_x = a sin(beta x), and runs the
``"second-order"`` formulation, generalized-alpha at spectral radius 1, the implicit midpoint
rule: for a linear system it maps a frequency omega to (2 / dt) atan(omega dt / 2) exactly, so
the measured frequency is compared with the closed form passed through that map (the time
step's own error, 1.3e-3 at 50 steps a period, taken out); what is left is the mesh's error and
that of reading the frequency off the zero crossings: 3.5e-6 at 8 P2 elements (1.6e-6 at 16,
1.5e-6 at 32) in the first test, against a tolerance of 2e-5.

* a bar on a prescribed frame at rest with a spring from its end node to the ground (also in
  Hamilton's form, ``"hamiltonian"``: the implicit midpoint rule too);
* two bars on two prescribed frames, the second turned by pi (its own coordinates run the other
  way), tied end to end by one spring, started in their mirror mode: the spring's middle stays
  put, so that each bar sees a spring 2k to the ground;
* a bar on a ``ConstantSpin`` frame (its transverse motion held, so that the Coriolis force is
  the constraint's) tied by the spring to a rigid point of the same frame: the spring turns with
  the frame, and the axial frequency is omega^2 = (beta c)^2 - Omega^2 (the spin softening),
  about the static stretch of the centrifugal load;
* bad input is refused by name, a refused call leaves the model as it was, and the analyses
  about a state refuse a model with springs by name.
"""

import math

import numpy as np
import pytest
import scipy.optimize
from dolfinx import fem

import dolfinx_mbs as mbs
from tests.models.springbar import AMP, EA, GAP, C, L, _bar, _beta, _mode


def _crossings(t, y):
    """The frequency (rad/s) from the zero crossings of y(t) (linear interpolation)."""
    s = np.sign(y)
    i = np.flatnonzero(s[:-1] * s[1:] < 0)
    tz = t[i] - y[i] * (t[i + 1] - t[i]) / (y[i + 1] - y[i])
    assert len(tz) >= 3, tz
    return math.pi * (len(tz) - 1) / (tz[-1] - tz[0])


def _fit(t, y, guess):
    """The frequency of y(t) = a + b cos(w t) + c sin(w t) by least squares (rad/s)."""
    def res(w):
        A = np.column_stack([np.ones_like(t), np.cos(w * t), np.sin(w * t)])
        return np.linalg.lstsq(A, y, rcond=None)[1].sum()
    out = scipy.optimize.minimize_scalar(res, bounds=(0.97 * guess, 1.03 * guess),
                                         method="bounded", options={"xatol": 1e-9 * guess})
    return out.x


def _midpoint(w, dt):
    """The implicit midpoint rule's frequency of an undamped mode of frequency w."""
    return 2.0 / dt * math.atan(w * dt / 2.0)


def _run(model, u0, w, periods=2.0, n=50, formulation="second-order"):
    dt = 2 * math.pi / w / n
    r = model.integrate(t_end=periods * 2 * math.pi / w, dt=dt, u0=u0,
                        formulation=formulation, progress=False)
    return r, dt


@pytest.mark.parametrize("formulation", ["second-order", "hamiltonian"])
def test_bar_end_spring_to_ground(formulation):
    """A bar on a frame at rest, a spring k = EA / L from its end node to the ground along
    it: beta L = 2.029; its tension, amplitude and energy (the spring's potential in it). The
    same in Hamilton's form (the implicit midpoint rule on the momenta: the same map of the
    frequency)."""
    bar = _bar(mbs.frames.ConstantSpin(rate=0.0), "bar")
    model = mbs.Model([bar])
    model.clamp(bar, lambda x: np.isclose(x[0], 0.0))
    model.rigid(bar, lambda x: np.isclose(x[0], L))
    k = EA / L
    model.spring(bar, (L, 0.0), None, (L + GAP, 0.0), stiffness=k, name="tip")
    beta = _beta(k)
    w = beta * C                                       # 10493 rad/s (beta L = 2.029)
    r, dt = _run(model, [_mode(bar, beta)], w, formulation=formulation)
    s = r.joints["tip"]
    tip = GAP - s.length                               # the end's axial displacement
    got = _crossings(r.times, tip)
    assert abs(got / _midpoint(w, dt) - 1.0) < 2e-5, (got, w, _midpoint(w, dt))
    # without the spring the bar would ring at beta L = pi/2 (23% lower)
    assert abs(got / w - 1.0) < 2e-3
    # the tension pulls the end back: k (L - L0), the same on every rank
    assert np.abs(s.tension - k * (s.length - GAP)).max() <= 1e-9 * k * AMP
    assert abs(np.abs(tip).max() / (AMP * math.sin(beta * L)) - 1.0) < 1e-3
    # the midpoint rule keeps the energy, the spring's potential included (a quarter of it
    # at the start: k a^2 sin^2(beta L) / 2 against the bar's strain energy)
    en = r.energy["total"]
    spring0 = 0.5 * k * (AMP * math.sin(beta * L)) ** 2
    assert spring0 > 0.2 * en[0]
    assert np.abs(en - en[0]).max() < 1e-8 * en[0], np.abs(en - en[0]).max() / en[0]
    assert r.frames == {}


def test_two_bars_tied_on_two_frames():
    """Bar a on a frame at rest (x from 0 to L), bar b on a frame turned by pi about z with its
    origin at 2L + g (its own x from 0 to L runs from 2L + g back to L + g): clamped at their
    outer ends, tied by a spring between their inner ends. Started in the mirror mode (both
    ends moving towards the spring's middle), each bar rings as one held by a spring 2k to the
    ground."""
    far = 2 * L + GAP
    fa = mbs.frames.ConstantSpin(rate=0.0)
    fb = mbs.frames.Planar(theta=math.pi, origin=(far, 0.0))
    a, b = _bar(fa, "a"), _bar(fb, "b")
    model = mbs.Model([a, b])
    for body in (a, b):
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.rigid(body, lambda x: np.isclose(x[0], L))
    k = 0.5 * EA / L
    model.spring(a, (L, 0.0), b, (L + GAP, 0.0), stiffness=k, name="tie")
    beta = _beta(2 * k)
    w = beta * C
    # b's own x runs the other way: the same displacement in its coordinates moves it towards
    # the middle too
    r, dt = _run(model, [_mode(a, beta), _mode(b, beta)], w)
    s = r.joints["tie"]
    stretch = s.length - GAP
    got = _crossings(r.times, stretch)
    assert abs(got / _midpoint(w, dt) - 1.0) < 2e-5, (got, w, _midpoint(w, dt))
    # the other mode (the bars moving together, the spring idle) has beta L = pi/2: far off
    assert abs(beta * L / (0.5 * math.pi) - 1.0) > 0.2
    assert abs(np.abs(stretch).max() / (2 * AMP * math.sin(beta * L)) - 1.0) < 1e-2
    en = r.energy["total"]
    assert np.abs(en - en[0]).max() < 1e-8 * en[0]


def test_spring_on_a_spinning_frame():
    """A bar on a ConstantSpin frame at Omega = 2000 rad/s about z through its clamped end,
    its end tied by a spring along it to a rigid point of the same frame (a RigidBody there):
    the spring turns with the frame. Transverse motion held (the Coriolis force is then the
    constraint's): the axial motion about the centrifugal stretch has omega^2 = (beta c)^2 -
    Omega^2, beta from the spring's k."""
    spin = 2000.0
    fr = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=spin)
    bar = _bar(fr, "blade")
    post = mbs.RigidBody(mass=1.0, inertia=1.0, frame=fr, centre=(L + GAP, 0.0, 0.0),
                         name="post")
    model = mbs.Model([bar, post])
    model.clamp(bar, lambda x: np.isclose(x[0], 0.0))
    model.clamp(bar, lambda x: np.full(x.shape[1], True), components=[1])
    model.rigid(bar, lambda x: np.isclose(x[0], L))
    k = EA / L
    model.spring(bar, (L, 0.0), post, (L + GAP, 0.0), stiffness=k, name="tip")
    beta = _beta(k)
    w = math.sqrt((beta * C) ** 2 - spin ** 2)          # 1.8% below the bar at rest
    # started from the static stretch under the centrifugal load (EA u'' + rho A Omega^2
    # (x + u) = 0, u(0) = 0, EA u'(L) = -k u(L): u = A sin(g x) - x, g = Omega / c) and the
    # first mode's shape, sin(beta x), whose frequency is measured about it
    g = spin / C
    a = (EA + k * L) / (EA * g * math.cos(g * L) + k * math.sin(g * L))
    u0 = fem.Function(bar.V)
    u0.interpolate(lambda x: np.vstack([a * np.sin(g * x[0]) - x[0]
                                        + 1e3 * AMP * np.sin(beta * x[0]),
                                        np.zeros(x.shape[1])]))
    r, dt = _run(model, [u0], w, periods=2.0)
    s = r.joints["tip"]
    tip = GAP - s.length
    got = _fit(r.times, tip, w)
    assert abs(got / _midpoint(w, dt) - 1.0) < 2e-5, (got, w, _midpoint(w, dt))
    assert abs(got / _midpoint(beta * C, dt) - 1.0) > 1e-2   # the spin's effect is seen
    # the spring stays along the bar: its tension is k times its stretch throughout
    assert np.abs(s.tension - k * (s.length - GAP)).max() <= 1e-9 * k * np.abs(tip).max()


def _small():
    bar = _bar(mbs.frames.ConstantSpin(rate=0.0), "bar", nx=4)
    model = mbs.Model([bar])
    model.clamp(bar, lambda x: np.isclose(x[0], 0.0))
    return model, bar


def test_bad_input_refused_and_model_unchanged():
    """Each bad argument is refused, naming it; a refused call adds nothing (the model's
    frequencies are those it had); a name taken is refused."""
    model, bar = _small()
    ref = model.natural_frequencies(n=2)
    other = _bar(mbs.frames.ConstantSpin(rate=0.0), "other", nx=2)
    end, ground = (L, 0.0), (L + GAP, 0.0)
    bad = [
        (dict(stiffness=float("nan")), "stiffness"),
        (dict(stiffness=float("inf")), "stiffness"),
        (dict(stiffness=-1.0), "stiffness"),
        (dict(stiffness=1.0, damping=float("nan")), "damping"),
        (dict(stiffness=1.0, length=-0.1), "length"),
        (dict(stiffness=1.0, point_b=end), "coincide"),
        (dict(stiffness=1.0, point_a=(0.5 * L + 0.013, 0.0)), "not at a node"),
        (dict(stiffness=1.0, body_a=other), "not part of this model"),
        (dict(stiffness=1.0, body_b=bar), "must differ"),
        (dict(stiffness=1.0, point_a=(L, 0.0, 0.0, 1.0)), "point_a"),
    ]
    for kw, words in bad:
        args = dict(body_a=bar, point_a=end, body_b=None, point_b=ground)
        args.update(kw)
        with pytest.raises(ValueError, match=words):
            model.spring(**args)
        assert model.frame_joints == [] and model.springs == []
    # the refused calls left nothing behind: the frequencies are not refused (as they are for a
    # model with a spring) and are the same to the eigensolver's tolerance (each solve starts
    # from another random vector: on 2 ranks two solves differed by 1e-9)
    got = model.natural_frequencies(n=2)
    assert np.allclose(got, ref, rtol=1e-8), (got, ref)
    model.spring(bar, end, None, ground, stiffness=1.0, name="k")
    with pytest.raises(ValueError, match="taken"):
        model.spring(bar, end, None, (L, GAP), stiffness=1.0, name="k")
    assert [j.name for j in model.frame_joints] == ["k"]


def test_analyses_refuse_springs_by_name():
    """The analyses about a state refuse a model with springs, naming the analysis and the
    springs; the multiplier form is refused; the default coupled formulation runs."""
    model, bar = _small()
    with pytest.raises(ValueError, match="no computed frame .* and no spring"):
        model.coupled_system()
    model.spring(bar, (L, 0.0), None, (L + GAP, 0.0), stiffness=1e6, name="tip")
    for call, name in [(lambda: model.natural_frequencies(n=2), "natural_frequencies"),
                       (lambda: model.modes(n=2), "modes"),
                       (lambda: model.solve_static(), "solve_static"),
                       (lambda: model.campbell([0.0, 1.0], n=2), "campbell"),
                       (lambda: model.reactions(), "reactions")]:
        with pytest.raises(ValueError, match=f"{name}.*springs \\('tip'\\)"):
            call()
    with pytest.raises(ValueError, match="constraints must be 'maggi'"):
        model.integrate(t_end=1e-4, dt=1e-5, constraints="multipliers", progress=False)
    # the default formulation with springs: BDF2 (first-order), and it runs
    r = model.integrate(t_end=3e-5, dt=1e-5, progress=False)
    assert r.formulation == "first-order" and np.all(np.isfinite(r.joints["tip"].tension))
