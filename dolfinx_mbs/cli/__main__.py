"""``python -m dolfinx_mbs.cli``: the ``dolfinx-mbs`` command."""

import sys

from dolfinx_mbs.cli.main import main

sys.exit(main())
