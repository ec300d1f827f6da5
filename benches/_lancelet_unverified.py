"""lancelet with checksum verification turned off on read: a ``formatbench.py`` backend, so
the cost of verifying can be measured against the default in one run::

    python benches/formatbench.py --rows 2000000 --backends lance \\
        --backend ours=lancelet --backend unverified=_lancelet_unverified \\
        --ratio ours/unverified

(run from ``benches/`` or with it on ``PYTHONPATH``). Files are written as lancelet
always writes them, with checksums.
"""

import functools

import lancelet
from lancelet import __version__, write_dataset  # noqa: F401

#: ``lancelet.dataset`` reading without checking checksums.
dataset = functools.partial(lancelet.dataset, verify_checksums=False)
