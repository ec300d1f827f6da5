"""pytest configuration of the benchmark suites (``pytest benches --benchmark-only``)."""

import os
import sys

# The suites import the data builders of the benchmark scripts next to them.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("LANCE_LOG", "error")  # pylance's per-query deprecation warnings
