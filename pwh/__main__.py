"""``python -m pwh``: the same as the ``pwh`` command."""

import sys

from ._cli import main

sys.exit(main())
