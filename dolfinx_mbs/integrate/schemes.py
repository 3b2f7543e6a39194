"""The time-stepping schemes' coefficients, written once for every backend that steps them."""

from __future__ import annotations

from typing import List, Optional

__all__ = ["alpha2_parameters", "BACKWARD_EULER", "MATCHSTEP", "step_times"]


def alpha2_parameters(radius: Optional[float]) -> tuple:
    """(alpha_m, alpha_f, gamma, beta) of PETSc's TSALPHA2 for the high-frequency spectral
    ``radius`` (None: 1)."""
    r = 1.0 if radius is None else float(radius)
    am, af = (2.0 - r) / (1.0 + r), 1.0 / (1.0 + r)
    return am, af, 0.5 + am - af, 0.25 * (1.0 + am - af) ** 2


#: the parameters of TSALPHA2's restart: a backward-Euler step
BACKWARD_EULER = (1.0, 1.0, 1.0, 0.5)


#: PETSc's TSAdapt ``matchstepfac``: a last step up to 1 % longer than dt is taken whole, one
#: up to twice dt is split in two equal steps
MATCHSTEP = (0.01, 2.0)


def step_times(t0: float, t_end: float, dt: float) -> List[float]:
    """The times the TS path steps to (PETSc's ``TS_EXACTFINALTIME_MATCHSTEP`` with fixed
    steps of ``dt``: a first step past ``t_end`` shortened, the steps near the end adjusted
    by :data:`MATCHSTEP`), accumulated as PETSc does."""
    a, b = 1.0 + MATCHSTEP[0], MATCHSTEP[1]
    t, h = t0, (t_end - t0 if t0 + dt > t_end else dt)
    out = []
    while t < t_end:
        t += h
        out.append(t)
        hmax, tend, h0 = t_end - t, t + h, h
        if tend > t_end:
            h = hmax
        if tend < t_end and h0 * b > hmax:
            h = hmax / 2
        if tend < t_end and h0 * a > hmax:
            h = hmax
    return out
