"""The tests: one folder for each part of the package (``tests/<part>/``, as in ``dolfinx_mbs/``).

The models the tests share are in ``tests/models`` (imported as ``tests.models.<module>``).
"""
