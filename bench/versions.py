"""Benchmark: the same integration on two DOLFINx installations, side by side in one run.

    python bench/versions.py --pythons .venv/bin/python,.venv-debian/bin/python

Runs ``bench/integration.py --studies scaling`` (the spinning bar of hexahedra, second-order
form, MUMPS LU, dt = 1e-4, 20 timed steps after a warm-up step; see that file's docstring)
under each interpreter in turn, ``--pairs`` times alternating (A B A B ...), each in a fresh
process, and reports for each size the time per step of ``model.integrate`` and of the plain
DOLFINx Newmark loop under each installation (median over the pairs) and the ratio of the
first installation to the second. Under MPI (``--ranks 2``) each run is started with the
launcher that belongs to its interpreter (MPICH's beside a PyPI-wheel venv, Open MPI's for
Debian's packages).

Results: bench/results/versions.json (all runs) and a section appended to
bench/results/versions.md.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from benchlib import (append_results, git_rev, loadavg, machine, machine_line, md_table, parser,
                      run_json, utc_now, versions_line)

HERE = Path(__file__).resolve().parent


def one_run(python: str, args) -> dict:
    return run_json([HERE / "integration.py", "--studies", "scaling", "--sizes", args.sizes,
                     "--second-order-only-from", "0", "--steps", args.steps, "--no-profile",
                     "--no-write", "--max-wait", args.max_wait], ranks=args.ranks,
                    python=python, timeout=args.timeout)


def main():
    ap = parser(__doc__, load=None, max_wait=30.0)
    ap.add_argument("--pythons", required=True, help="two interpreters, comma-separated")
    ap.add_argument("--sizes", default="1e4,1e5")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1800.0)
    args = ap.parse_args()
    pys = [os.path.abspath(p) if os.sep in p else p for p in args.pythons.split(",")]
    if len(pys) != 2:
        sys.exit("--pythons: give exactly two interpreters")

    t0 = utc_now()
    runs = {p: [] for p in pys}
    for k in range(args.pairs):
        for p in pys:
            r = one_run(p, args)
            runs[p].append(r)
            so = [row["formulations"]["second-order"]["per_step"] * 1e3 for row in r["scaling"]
                  if "formulations" in row]
            print(f"pair {k + 1}: {r['versions']['dolfinx']}: second-order "
                  f"{', '.join(f'{x:.1f}' for x in so)} ms/step", flush=True)

    def per_size(p, key):
        out = {}
        for r in runs[p]:
            for row in r["scaling"]:
                if "formulations" not in row:
                    continue
                v = (row["formulations"]["second-order"]["per_step"] if key == "mbs"
                     else row["plain"]["per_step"])
                out.setdefault(row["dofs"], []).append(v)
        return {d: statistics.median(v) for d, v in out.items()}

    ver = [runs[p][0]["versions"] for p in pys]
    rows = []
    a_mbs, b_mbs = per_size(pys[0], "mbs"), per_size(pys[1], "mbs")
    a_pl, b_pl = per_size(pys[0], "plain"), per_size(pys[1], "plain")
    for dofs in sorted(set(a_mbs) & set(b_mbs)):
        rows.append([f"{dofs:,}", f"{a_mbs[dofs] * 1e3:.2f}", f"{b_mbs[dofs] * 1e3:.2f}",
                     f"**{a_mbs[dofs] / b_mbs[dofs]:.2f}**", f"{a_pl[dofs] * 1e3:.2f}",
                     f"{b_pl[dofs] * 1e3:.2f}", f"{a_pl[dofs] / b_pl[dofs]:.2f}"])
    va, vb = ver[0]["dolfinx"], ver[1]["dolfinx"]
    md = [f"## {t0}: DOLFINx {va} vs {vb}, {args.ranks} rank(s)", "", machine_line(machine()),
          *[versions_line(v) for v in ver],
          f"- dolfinx_mbs at {git_rev()}; {args.pairs} alternating pairs of fresh processes, "
          f"median per size; {args.steps} timed steps at dt = 1e-4 after a warm-up step; load "
          f"at end {' '.join(loadavg())}",
          "",
          md_table(["dofs", f"mbs second-order {va} [ms/step]", f"{vb} [ms/step]",
                    f"{va} / {vb}", f"plain Newmark {va} [ms/step]", f"{vb} [ms/step]",
                    f"plain {va} / {vb}"], rows), ""]
    text = "\n".join(md)
    print(text)
    if not args.no_write:
        append_results("versions", dict(date=t0, ranks=args.ranks,
                                        pythons=pys, runs=runs), text,
                       "The same integration on two DOLFINx versions, side by side",
                       args.results_dir)


if __name__ == "__main__":
    main()
