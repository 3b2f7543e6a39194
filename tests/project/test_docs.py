"""The documentation points inside the repository.

The theory page is ``docs/theory.md``: every citation of it, in the package, the tests, the
demos, the docs and the README, names that path and a section the page has. The
cross-references of the package's docstrings (``:func:``, ``:class:``, ``:mod:``, ...) name
objects that exist.
"""

import importlib
import pathlib
import re

from tests.models import ROOT

THEORY = ROOT / "docs" / "theory.md"


def texts():
    """The repository's own text files: (path relative to the root, text)."""
    files = [ROOT / "README.md"]
    for folder, pattern in (("dolfinx_mbs", "*.py"), ("tests", "*.py"), ("demos", "*.py"),
                            ("demos", "*.toml"), ("docs", "*.py"), ("docs", "*.md"),
                            ("bench", "*.py")):
        files += sorted((ROOT / folder).rglob(pattern))
    here = pathlib.Path(__file__).resolve()
    # the site's generated pages (copies of the demos, the API and benchmark pages, the build)
    generated = [ROOT / "docs" / d for d in ("_build", "demos", "reference")]
    return [(f.relative_to(ROOT).as_posix(), f.read_text()) for f in files
            if f not in (THEORY, here) and not any(g in f.parents for g in generated)]


def sections():
    """The numbers of the theory page's numbered sections."""
    return [int(n) for n in re.findall(r"^## (\d+)\. ", THEORY.read_text(), flags=re.M)]


def test_theory_page_has_the_implemented_sections():
    """Sections 1 to 10, in order (8: frames whose motion is computed; 9: axisymmetric rotors
    in the stationary frame; 10: cyclic symmetry); the planned features are not numbered
    sections."""
    assert sections() == list(range(1, 11))
    assert "## Planned, not implemented" in THEORY.read_text()


def test_every_citation_points_at_the_page():
    """No bare ``theory.md``; every "docs/theory.md section(s) ..." names sections it has."""
    have = set(sections())
    bare, missing, cited = [], [], 0
    for name, text in texts():
        for m in re.finditer(r"(\S*)theory\.md", text):
            line = text.count("\n", 0, m.start()) + 1
            if not m.group(1).lstrip("`(*[").endswith("docs/"):
                bare.append(f"{name}:{line}")
                continue
            cited += 1
            after = re.match(r"`*\s+(?:sections?|§)\s*((?:\d+(?:,\s*|\s+and\s+)?)+)",
                             text[m.end():])
            if after:
                numbers = {int(n) for n in re.findall(r"\d+", after.group(1))}
                missing += [f"{name}:{line}: section {n}" for n in sorted(numbers - have)]
    assert not bare, f"citations of theory.md without docs/: {bare}"
    assert not missing, missing
    assert cited > 15


def test_docstring_references_resolve():
    """Every cross-reference to dolfinx_mbs in the package's docstrings names an object.

    The references are ``:func:``, ``:class:``, ``:meth:``, ``:mod:``, ``:attr:``, ``:data:``
    and ``:exc:``.
    """
    pattern = re.compile(r":(func|class|mod|meth|attr|data|exc):`~?(dolfinx_mbs[\w.]*)`")
    broken = []
    for path in sorted((ROOT / "dolfinx_mbs").rglob("*.py")):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            for kind, ref in pattern.findall(line):
                if not _resolves(ref, kind):
                    broken.append(f"{path.relative_to(ROOT)}:{lineno}: {ref}")
    assert not broken, broken


def _resolves(ref: str, kind: str) -> bool:
    """True when the dotted ``ref`` names a module or an attribute of one."""
    parts = ref.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return kind != "mod" or hasattr(obj, "__file__")
    return False
