"""``python -m lancelet``: the command line (see :mod:`lancelet.cli`)."""

import sys

from .cli import main

sys.exit(main())
