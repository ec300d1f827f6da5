#!/usr/bin/env bash
# Runs every test: the Rust workspace (cargo test) and the Python suite (pytest),
# with pylance 14.0.2 installed as the interop oracle. Extra args go to pytest.
set -euo pipefail
REQS=test . "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
export PYO3_PYTHON="$VPY"
echo "== cargo fmt / clippy"
if cargo fmt --version >/dev/null 2>&1; then cargo fmt --all --check; else echo "rustfmt not installed: skipped"; fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --release --workspace --all-targets --quiet -- -D warnings
else
  echo "clippy not installed: skipped"
fi
echo "== cargo test"
cargo test --release --workspace --quiet
echo "== pytest"
"$VPY" -m pytest -q "$@"
if [ $# -eq 0 ]; then
  echo "== memory bounds (tests/test_dataset_memory.py, scaled down: 0.5 GB written, 0.25 GB scanned)"
  LANCELET_RUN_SLOW=1 LANCELET_MEMTEST_GB=0.25 "$VPY" -m pytest -q tests/test_dataset_memory.py
fi
