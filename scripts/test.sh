#!/usr/bin/env bash
# Runs every test: the Rust workspace (cargo test) and the Python suite (pytest),
# with pylance 14.0.2 installed as the interop oracle. Extra args go to pytest.
set -euo pipefail
REQS=test . "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
export PYO3_PYTHON="$VPY"
# Every gate fails the run: a missing tool is an error, never a skip (env.sh installs them).
echo "== cargo fmt / clippy"
cargo fmt --version >/dev/null 2>&1 || { echo "rustfmt is not installed (rustup component add rustfmt)" >&2; exit 1; }
cargo clippy --version >/dev/null 2>&1 || { echo "clippy is not installed (rustup component add clippy)" >&2; exit 1; }
cargo fmt --all --check
cargo clippy --release --workspace --all-targets --quiet -- -D warnings
echo "== ruff / mypy / stubtest (python/lancelet; configuration in pyproject.toml)"
"$VPY" -m ruff check python/lancelet
"$VPY" -m ruff format --check python/lancelet
"$VPY" -m mypy
"$VPY" -m mypy.stubtest lancelet._native --allowlist python/stubtest_allowlist.txt
echo "== cargo test"
cargo test --profile test-release --workspace --quiet
echo "== pytest"
"$VPY" -m pytest -q "$@"
if [ $# -eq 0 ]; then
  echo "== memory bounds (tests/test_dataset_memory.py, scaled down: 0.5 GB written, 0.25 GB scanned)"
  LANCELET_RUN_SLOW=1 LANCELET_MEMTEST_GB=0.25 "$VPY" -m pytest -q tests/test_dataset_memory.py
  echo "== benchmark suites, each case once on a small table (pytest benches --benchmark-only times them)"
  LANCELET_BENCH_ROWS=4000 "$VPY" -m pytest -q -p no:cacheprovider benches --benchmark-disable
fi
