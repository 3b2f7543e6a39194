"""The models, closed forms and cases the tests share.

Imported as ``from tests.models.<module> import ...`` (the repository's root on ``sys.path``:
pytest puts it there, as the parent of the ``tests`` package). The ``*_cases`` modules and
``readback`` also run as scripts in processes of their own, with the root on ``PYTHONPATH``.
"""

from pathlib import Path

#: this folder (the scripts the tests run in processes of their own)
HERE = Path(__file__).resolve().parent
#: the repository's root
ROOT = HERE.parents[1]
