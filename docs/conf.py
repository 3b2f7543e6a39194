"""Sphinx configuration of the dolfinx_mbs site (``make docs``).

Sphinx with MyST-NB, as DOLFINx builds its demos: every ``demos/*.py`` (a jupytext "light"
script) is copied to ``docs/demos/`` and executed into a page with its output and figures
(executed notebooks cached in ``_build/.jupyter_cache``: a page runs again only when its demo
changed); the API reference is generated from the docstrings, one page per part of the package
in the order of the flow (``tests/project/test_layers.py``); every ``bench/results/*.md`` is a page.
Generated pages go to the git-ignored folders ``demos/``, ``reference/`` and ``benchmarks/``:
a new demo, part or benchmark result needs no edit here, and a guide page is one file in
``guide/`` (listed by its index's glob).
"""

from __future__ import annotations

import ast
import importlib
import os
import pathlib
import pkgutil
import re
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

project = "dolfinx_mbs"
author = "the dolfinx_mbs developers"
copyright = "2026, the dolfinx_mbs developers"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.extlinks",
    "sphinx-mathjax-offline",  # MathJax served with the site: the pages need no network
]

# the site's own sources only: the scripts beside them are not pages
exclude_patterns = ["_build", "*.py", "architecture.md", "tests"]
templates_path: list[str] = []
html_theme = "sphinx_book_theme"
html_title = "dolfinx_mbs"
html_theme_options = {
    "repository_url": "",
    "use_download_button": True,
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
html_static_path: list[str] = []
html_last_updated_fmt = ""

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# --- demos: jupytext light scripts executed into pages
nb_custom_formats = {".py": ["jupytext.reads", {"fmt": "py:light"}]}
nb_execution_mode = os.environ.get("MBS_DOCS_EXECUTE", "cache")
# make docs-check builds with the demos' short versions (MBS_DEMO_QUICK=1), in a cache of its
# own: the same notebooks give other outputs there
QUICK_DEMOS = os.environ.get("MBS_DEMO_QUICK") == "1"
nb_execution_cache_path = str(DOCS / "_build" / (".jupyter_cache_quick" if QUICK_DEMOS
                                                 else ".jupyter_cache"))
nb_execution_timeout = 1800
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_in_temp = True
nb_merge_streams = True

# --- API reference
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_mock_imports: list[str] = []
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# a dataclass's "Attributes:" as fields of the class, not a second description of each
napoleon_use_ivar = True

# --- links to the documentation of the objects the pages name (no inventories are fetched:
# the build runs without network)
extlinks = {
    "dolfinx": ("https://docs.fenicsproject.org/dolfinx/main/python/generated/%s", "%s"),
    "ufl": ("https://docs.fenicsproject.org/ufl/main/%s", "%s"),
    "petsc": ("https://petsc.org/release/manualpages/%s/", "%s"),
    "slepc": ("https://slepc.upv.es/documentation/current/docs/manualpages/%s.html", "%s"),
}

# A dataclass's fields are documented as the class's variables; a field name that two classes
# share (FrameState.omega, FrameStates.omega) is an ambiguous reference to Sphinx, which then
# links the first: not an error of the page.
suppress_warnings = ["mystnb.unknown_mime_type", "ref.python"]


def _write(path: pathlib.Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it holds it already.

    Unchanged files keep their modification time, so Sphinx does not read them again.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _sync(folder: pathlib.Path, wanted: dict[str, str]) -> None:
    """Make ``folder`` hold exactly the files ``wanted`` (name -> text)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if old.is_file() and old.name not in wanted:
            old.unlink()
    for name, text in wanted.items():
        _write(folder / name, text)


def _title(text: str, fallback: str) -> str:
    """The first markdown heading of a jupytext light script."""
    for line in text.splitlines():
        m = re.match(r"#\s+#\s+(.+)", line)
        if m:
            return m.group(1).strip()
    return fallback


#: what jupytext needs to read a demo as a notebook of the Python kernel
JUPYTEXT_HEADER = """# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: light
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   language_info:
#     name: python
#     pygments_lexer: ipython3
# ---

"""


def generate_demos() -> None:
    """``demos/*.py`` copied to ``docs/demos/`` with an index in their order."""
    demos = sorted((ROOT / "demos").glob("*.py"))
    wanted = {p.name: JUPYTEXT_HEADER + p.read_text() for p in demos}
    lines = ["# Demos", "",
             "Every demo of `demos/` executed into a page with its output and figures (serially;",
             "each also runs under `mpirun`, and the test suite runs each on 1, 2 and 3 ranks in",
             "a shorter version, `MBS_DEMO_QUICK=1`). Each page is the script itself: download",
             "it with the button at the top, or take it from `demos/`."
             + (" This build shows the short versions." if QUICK_DEMOS else ""), "",
             "| demo | what it shows |", "|---|---|"]
    for p in demos:
        lines.append(f"| [{p.stem}]({p.stem}.py) | {_title(p.read_text(), p.stem)} |")
    lines += ["", "```{toctree}", ":hidden:", ""] + [p.stem for p in demos] + ["```", ""]
    wanted["index.md"] = "\n".join(lines)
    _sync(DOCS / "demos", wanted)


def _flow() -> list[str]:
    """The parts of the package in the order of the flow, as tests/project/test_layers.py holds
    it."""
    tree = ast.parse((ROOT / "tests" / "project" / "test_layers.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FLOW"
                                                for t in node.targets):
            return [e.value for e in node.value.elts]
    raise RuntimeError("tests/project/test_layers.py has no FLOW")


def api_modules() -> list[str]:
    """The documented modules: every part of the flow and the subpackages inside parts.

    In the order of the flow, a part's subpackages after it.
    """
    names = []
    for part in _flow():
        name = f"dolfinx_mbs.{part}"
        names.append(name)
        mod = importlib.import_module(name)
        if hasattr(mod, "__path__"):
            for info in pkgutil.iter_modules(mod.__path__):
                if info.ispkg:
                    names.append(f"{name}.{info.name}")
    return names


def _attr_doc(module_name: str, name: str) -> str:
    """The doc comment (``#:``) of the data ``name`` of a module; "" when it has none.

    Read from the module or, for a package, from the submodule that defines it.
    """
    from sphinx.pycode import ModuleAnalyzer

    mod = importlib.import_module(module_name)
    names = [module_name]
    if hasattr(mod, "__path__"):
        names += [f"{module_name}.{i.name}" for i in pkgutil.walk_packages(mod.__path__)]
    for m in names:
        try:
            docs = ModuleAnalyzer.for_module(m).find_attr_docs()
        except Exception:  # a module without source: nothing to read
            continue
        if ("", name) in docs:
            return " ".join(docs[("", name)]).strip()
    return ""


def _api_page(name: str) -> str:
    """A module's page: its docstring, classes and functions by autodoc, and its public data.

    The data are what its ``__all__`` names that is neither, with their doc comments.
    """
    import inspect

    mod = importlib.import_module(name)
    public = getattr(mod, "__all__", None)
    if public is None:
        return f"# `{name}`\n\n```{{eval-rst}}\n.. automodule:: {name}\n```\n"
    objs = {n: getattr(mod, n) for n in public}
    # the module's own top-level assignments are autodoc's to document; data imported from a
    # submodule is described here, with the doc comment where it is defined
    tree = ast.parse(pathlib.Path(mod.__file__).read_text())
    own = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
           for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
           if isinstance(t, ast.Name)}
    code = [n for n, o in objs.items() if inspect.isclass(o) or inspect.isroutine(o) or n in own]
    data = [n for n, o in objs.items() if n not in code and not inspect.ismodule(o)]
    lines = [f"# `{name}`", "", "```{eval-rst}", f".. automodule:: {name}"]
    lines += [f"   :members: {', '.join(code)}"] if code else ["   :no-members:"]
    for n in data:
        value = repr(objs[n])
        lines += ["", f".. py:data:: {n}", f"   :module: {name}"]
        if len(value) <= 80 and "\n" not in value:
            lines += [f"   :value: {value}"]
        lines += ["", "   " + (_attr_doc(name, n) or "(no description)")]
    lines += ["```", ""]
    return "\n".join(lines)


def generate_api() -> None:
    """One page per module of :func:`api_modules`, and the package's own page."""
    wanted = {}
    modules = api_modules()
    for name in modules:
        wanted[f"{name}.md"] = _api_page(name)
    import dolfinx_mbs

    faces = []
    for short in dolfinx_mbs.__all__:
        obj = getattr(dolfinx_mbs, short)
        if type(obj).__name__ == "module":
            page = obj.__name__ if obj.__name__ in modules else obj.__name__.rsplit(".", 1)[0]
            faces.append(f"| `mbs.{short}` | [`{obj.__name__}`]({page}.md) |")
            continue
        home = next(m for m in modules
                    if getattr(importlib.import_module(m), short, None) is obj
                    and short in getattr(importlib.import_module(m), "__all__", ()))
        faces.append(f"| `mbs.{short}` | {{py:obj}}`{home}.{short}` |")
    lines = ["# API reference", "",
             "Every public name, with its docstring, by the part of the package that defines",
             "it, in the order of the flow: a part imports only from those above it. A part's",
             "public names are those of its `__all__` (its face); the package itself lifts a",
             "few of them to the top (`mbs.Body`, `mbs.Model`, ...).", "",
             "```{eval-rst}", ".. automodule:: dolfinx_mbs", "   :no-members:", "```", "",
             "## The package's own names", "", "| name | is |", "|---|---|", *faces, "",
             "## Parts", "", "```{toctree}", ":maxdepth: 1", ""]
    lines += modules + ["```", ""]
    wanted["index.md"] = "\n".join(lines)
    _sync(DOCS / "reference" / "api", wanted)


def generate_benchmarks() -> None:
    """Every ``bench/results/*.md`` as a page, and an index with each one's machines and dates."""
    wanted = {}
    rows = []
    for p in sorted((ROOT / "bench" / "results").glob("*.md")):
        wanted[p.name] = f"```{{include}} ../../../bench/results/{p.name}\n:relative-images:\n```\n"
        text = p.read_text()
        title = text.splitlines()[0].lstrip("# ").strip() if text else p.stem
        dates = sorted(set(re.findall(r"(?<!\d)(20\d\d-\d\d-\d\d)(?!\d)", text)))
        machines = sorted({m.group(1).strip().rstrip(",") for m in
                           re.finditer(r"^- machine: ([^;(]+)", text, re.MULTILINE)})
        span = f"{dates[0]} to {dates[-1]}" if len(dates) > 1 else (dates[0] if dates else "")
        rows.append(f"| [{title}]({p.stem}.md) | {span} | {'; '.join(machines) or '-'} |")
    lines = ["# Benchmarks", "",
             "Each page is a results file of `bench/results/`, written by the script it names",
             "(in `bench/`); every section states its machine, versions, command, load and",
             "date, and the notes added by hand say what the numbers mean. The machine is",
             "shared by several developers: the load is given with every run, and times",
             "measured under load are marked as such in their notes.", "",
             "| results | dates | machine |", "|---|---|---|", *rows, "",
             "```{toctree}", ":hidden:", "", *[p[:-3] for p in wanted], "```", ""]
    wanted["index.md"] = "\n".join(lines)
    _sync(DOCS / "reference" / "benchmarks", wanted)


generate_demos()
generate_api()
generate_benchmarks()
