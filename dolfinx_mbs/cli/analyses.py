"""The analyses of a case file (:mod:`dolfinx_mbs.cli.case`) and their results as plain data
(numbers, lists, dicts: JSON as it is).

Results, by analysis (``u`` the displacement in the body frame, m; frequencies in rad/s):

* ``static``: for each probe ``{"x": ux, "y": uy[, "z": uz]}``, and ``max_displacement``
  (the largest nodal norm of u);
* ``frequencies``: ``{"w1": ..., "w2": ...}`` (signed: a negative value -s is a divergent mode,
  an imaginary frequency i s, growth rate s; the unstable ones first, fastest growth first,
  then the lowest stable ones: :mod:`dolfinx_mbs.modal`); :func:`imaginary` names the negative
  ones, and the command line exits with its own status when there are some;
* ``campbell``: ``stable`` (every branch at every speed), ``critical`` (a list of ``{speed,
  order, mode, frequency}``), ``series`` (speeds, rotating-frame and stationary frequencies
  per speed, whirl);
* ``transient``: for each probe and component ``{"peak": max |u|, "excursion": max
  |u - u(t0)|, "final": u(t_end)}``, ``steps``, ``series`` (times and each probe's history);
  with ``output = "stem"`` the run also writes ``stem.csv`` and the displacement fields
  (``stem_<body>.bp``, every ``output_every`` steps: :func:`dolfinx_mbs.integrate.integrate`).

``series`` holds the arrays; :func:`flatten` leaves them out of a sweep's CSV row. :func:`run`
gives them as :class:`CaseResults` (an analysis's results read by attribute or, as the dict
they were, by name); :meth:`CaseResults.to_json` is the JSON file's ``results``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Tuple, cast

import numpy as np
from mpi4py import MPI

from dolfinx_mbs.cli.build import build
from dolfinx_mbs.cli.casefile import sweep_values
from dolfinx_mbs.io import output as io
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.cli.casefile import Path_
    from dolfinx_mbs.cli.reader import CaseReader
    from dolfinx_mbs.model import Model

__all__ = ["run", "flatten", "imaginary", "CaseResults"]

_COMPONENTS = "xyz"


@dataclasses.dataclass(frozen=True, eq=False)
class CaseResults(Mapping[str, Dict[str, Any]]):
    """A case's results by analysis (the module's docstring says what each holds: plain data,
    JSON as it is), None for an analysis the case does not ask for; read also as a mapping of
    the analyses that ran (``results["frequencies"]``, ``"campbell" in results``), in the
    order they ran.

    Attributes:
        static: the static analysis's results.
        frequencies: the natural frequencies, ``{"w1": ..., ...}`` (rad/s, signed).
        campbell: the Campbell sweep's results.
        unbalance: the unbalance response's results.
        transient: the transient run's results.
    """

    static: Dict[str, Any] | None = None
    frequencies: Dict[str, float] | None = None
    campbell: Dict[str, Any] | None = None
    unbalance: Dict[str, Any] | None = None
    transient: Dict[str, Any] | None = None

    def _ran(self) -> List[str]:
        return [f.name for f in dataclasses.fields(self) if getattr(self, f.name) is not None]

    def __getitem__(self, key: str) -> Dict[str, Any]:
        if key not in self._ran():
            raise KeyError(key)
        return cast(Dict[str, Any], getattr(self, key))

    def __iter__(self) -> Iterator[str]:
        return iter(self._ran())

    def __len__(self) -> int:
        return len(self._ran())

    def to_json(self) -> Dict[str, Any]:
        """The results as the JSON file's ``results`` table (the analyses that ran).

        Returns:
            A new dict of the analyses' results (the data itself is not copied).
        """
        return {k: getattr(self, k) for k in self._ran()}


def run(case: CaseReader, comm: MPI.Comm, progress: bool = False) -> CaseResults:
    """Build ``case`` (a :class:`dolfinx_mbs.cli.reader.CaseReader`) on ``comm`` and run its
    analyses in the order static, frequencies, campbell, transient (collective).

    Args:
        case: the case.
        comm: the communicator (collective).
        progress: show a progress bar.

    Returns:
        The :class:`CaseResults`.
    """
    model, body, _, _ = build(case, comm)
    asked = case.get(("analysis",))
    out: Dict[str, Any] = {}
    if "static" in asked:
        out["static"] = _static(case, model, body)
    if "frequencies" in asked:
        p = ("analysis", "frequencies")
        w = case.call(p, model.natural_frequencies, t=case.value(p + ("t",), 0.0),
                       n=case.integer(p + ("n",), 4, 1),
                       gyroscopic=case.flag(p + ("gyroscopic",), False),
                       shift=case.value(p + ("shift",), 0.0))
        out["frequencies"] = {f"w{i + 1}": float(v) for i, v in enumerate(w)}
    if "campbell" in asked:
        out["campbell"] = _campbell(case, model)
    if "unbalance" in asked:
        out["unbalance"] = _unbalance(case, model, body)
    if "transient" in asked:
        out["transient"] = _transient(case, model, body, progress)
    return CaseResults(**out)


def _probes(case: CaseReader, path: Path_, body: Body) -> Tuple[List[str], List[np.ndarray]]:
    raw = case.get(path)
    if raw is None:
        return [], []
    if isinstance(raw, dict):
        names = list(raw)
        points = [case.value(path + (k,)) for k in names]
    elif isinstance(raw, list):
        if raw and not isinstance(raw[0], list):  # one point
            raw = [raw]
        names = [f"p{i + 1}" for i in range(len(raw))]
        points = [case.numbers(path, p, case.parameters) for p in raw]
    else:
        raise case.error(path, f"must be {{name = [x, y, z], ...}} or a list of points, "
                               f"got {raw!r}")
    pts = []
    for name, p in zip(names, points):
        try:
            pts.append(np.asarray(p, dtype=float).reshape(-1)[: body.gdim])
            if pts[-1].shape != (body.gdim,):
                raise ValueError
        except (TypeError, ValueError):
            raise case.error(path + (name,), f"must be a point of {body.gdim} coordinates, "
                                             f"got {p!r}") from None
    return names, pts


def _components(values: np.ndarray, gdim: int) -> Dict[str, float]:
    return {_COMPONENTS[c]: float(values[c]) for c in range(gdim)}


def _static(case: CaseReader, model: Model, body: Body) -> Dict:
    p = ("analysis", "static")
    names, points = _probes(case, p + ("probes",), body)
    case.call(p, model.solve_static, case.value(p + ("t",), 0.0))
    out: Dict = {}
    if names:
        values = case.call(p + ("probes",), io.Probes, [body], points).evaluate()
        out.update({n: _components(v, body.gdim) for n, v in zip(names, values)})
    n = body.V.dofmap.index_map.size_local * body.gdim
    u = body.u.x.array[:n].reshape(-1, body.gdim)
    local = float(np.max(np.linalg.norm(u, axis=1))) if len(u) else 0.0
    out["max_displacement"] = body.comm.allreduce(local, op=MPI.MAX)
    return out


def _campbell(case: CaseReader, model: Model) -> Dict:
    p = ("analysis", "campbell")
    raw = case.get(p + ("speeds",))
    if raw is None:
        raise case.error(p, "needs speeds = [...] or \"start:stop:count\" (rad/s)")
    try:
        speeds = sweep_values(raw) if isinstance(raw, str) else case.value(p + ("speeds",))
        speeds = np.asarray(speeds, dtype=float).reshape(-1)
    except (TypeError, ValueError) as e:
        raise case.error(p + ("speeds",), str(e)) from None
    orders = case.get(p + ("engine_orders",), [1, 2])
    damping = case.get(p + ("damping",))
    table = case.call(p, model.campbell, speeds, n=case.integer(p + ("n",), 6, 1),
                       engine_orders=orders, t=case.value(p + ("t",), 0.0),
                       shift=case.value(p + ("shift",), 0.0),
                       damping=None if damping is None else case.flag(p + ("damping",), False))
    return {"stable": bool(np.all(table.stable)),
            "critical": [{"speed": float(c.speed), "order": int(c.order), "mode": int(c.mode),
                          "frequency": float(c.frequency)} for c in table.critical_speeds],
            "series": {"speeds": table.speeds.tolist(),
                       "frequencies": table.frequencies.tolist(),
                       "stationary": table.stationary.tolist(),
                       "whirl": table.whirl.tolist(),
                       "log_dec": table.log_dec.tolist()}}


def _site(case: CaseReader, path: Path_, body: Body) -> Any:
    """An unbalance's or probe's place: a disk or bearing by name, or a point."""
    raw = case.get(path)
    if isinstance(raw, str):
        for a in body.attachments:
            if a.name == raw:
                return a
        raise case.error(path, f"no bearing or disk named {raw!r} (names: "
                               f"{', '.join(a.name for a in body.attachments) or 'none'})")
    return case.value(path)


def _unbalance(case: CaseReader, model: Model, body: Body) -> Dict:
    p = ("analysis", "unbalance")
    raw = case.get(p + ("speeds",))
    if raw is None:
        raise case.error(p, "needs speeds = [...] or \"start:stop:count\" (rad/s)")
    try:
        speeds = sweep_values(raw) if isinstance(raw, str) else case.value(p + ("speeds",))
        speeds = np.asarray(speeds, dtype=float).reshape(-1)
    except (TypeError, ValueError) as e:
        raise case.error(p + ("speeds",), str(e)) from None
    entries = case.get(p + ("unbalance",), [])
    if not isinstance(entries, list) or not entries:
        raise case.error(p, "needs unbalance = [{at = \"<disk name>\" or [x, y, z], m_e = "
                            "<kg m>, phase = <rad>}, ...]")
    unb = []
    for i, entry in enumerate(entries):
        q = p + ("unbalance", i)
        if not isinstance(entry, dict) or "at" not in entry or "m_e" not in entry:
            raise case.error(q, "must be {at = <disk name or point>, m_e = ..., phase = ...}")
        unb.append((_site(case, q + ("at",), body), case.value(q + ("m_e",)),
                    case.value(q + ("phase",), 0.0)))
    probes = case.get(p + ("probes",), [])
    sites = [_site(case, p + ("probes", i), body) if isinstance(x, str)
             else case.value(p + ("probes", i)) for i, x in enumerate(probes)]
    resp = case.call(p, model.unbalance_response, speeds, unbalances=unb, probes=sites,
                     t=case.value(p + ("t",), 0.0), directions=("major",))
    return {"peaks": [{"probe": resp.probes[k.probe], "direction": k.direction,
                       "speed": float(k.speed), "amplitude": float(k.amplitude),
                       "amplification": float(k.amplification)}
                      for k in resp.critical_speeds],
            "series": {"speeds": resp.speeds.tolist(),
                       "amplitude": resp.amplitude.tolist(),
                       "phase": resp.phase.tolist()}}


def _transient(case: CaseReader, model: Model, body: Body, progress: bool) -> Dict:
    p = ("analysis", "transient")
    for key in ("t_end", "dt"):
        if case.get(p + (key,)) is None:
            raise case.error(p, f"needs {key} = <seconds>")
    names, points = _probes(case, p + ("probes",), body)
    start = case.word(p + ("start",), ("rest", "static"), "rest")
    t0 = case.value(p + ("t0",), 0.0)
    u0 = case.call(p + ("start",), model.solve_static, t0) if start == "static" else None
    options = case.get(p + ("options",), {})
    if not isinstance(options, dict):
        raise case.error(p + ("options",), "must be a table of PETSc options (without prefix)")
    energy = case.flag(p + ("energy",), False)
    output = case.get(p + ("output",))
    if output is not None and (not isinstance(output, str) or not output):
        raise case.error(p + ("output",), f"must be a file stem (text), got {output!r}")
    r = case.call(p, model.integrate, t_end=case.value(p + ("t_end",)),
                   dt=case.value(p + ("dt",)), t0=t0,
                   formulation=case.get(p + ("formulation",), "second-order"), u0=u0,
                   probes=points, spectral_radius=case.value(p + ("spectral_radius",)),
                   options=options or None, energy=energy, progress=progress, output=output,
                   output_every=case.integer(p + ("output_every",), 1, 1))
    out: Dict = {"steps": int(r.steps)}
    series: Dict = {"times": r.times.tolist()}
    for j, name in enumerate(names):
        h = r.probes[:, j, : body.gdim]
        out[name] = {_COMPONENTS[c]: {"peak": float(np.max(np.abs(h[:, c]))),
                                      "excursion": float(np.max(np.abs(h[:, c] - h[0, c]))),
                                      "final": float(h[-1, c])} for c in range(body.gdim)}
        series[name] = h.tolist()
    if energy:
        series["energy"] = {k: v.tolist() for k, v in r.energy.items()}
    out["series"] = series
    return out


def imaginary(results: Mapping[str, Any]) -> Mapping[str, float]:
    """The reported frequencies that are imaginary (a divergent mode, reported as -s for
    lambda = +/- s): ``{"frequencies.w1": -s, ...}``, empty for a stable state.

    Args:
        results: the results of :func:`run`.

    Returns:
        The flattened names and values of the negative frequencies (read-only).
    """
    freq = results.get("frequencies", {}) if isinstance(results, Mapping) else {}
    return FrozenMapping({f"frequencies.{k}": float(v) for k, v in freq.items()
                          if float(v) < 0.0})


def flatten(results: Mapping[str, Any] | list, prefix: str = "") -> Mapping[str, object]:
    """The scalars of nested results as ``{"static.tip.x": ..., "frequencies.w1": ...}``
    (lists by index: ``campbell.critical.0.speed``), ``series`` left out: a sweep's CSV row.

    Args:
        results: the results.
        prefix: the keys' prefix.

    Returns:
        The scalars by key (read-only).
    """
    flat: Dict[str, object] = {}
    items = results.items() if isinstance(results, Mapping) else enumerate(results)
    for k, v in items:
        if k == "series":
            continue
        key = f"{prefix}{k}"
        if isinstance(v, (Mapping, list)):
            flat.update(flatten(v, key + "."))
        else:
            flat[key] = v
    return FrozenMapping(flat)
