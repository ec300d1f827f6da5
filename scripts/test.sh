#!/usr/bin/env bash
# Runs every test: the gates, the Rust workspace (cargo test) and the Python suite (pytest on
# both cores), with pylance 14.0.2 installed as the interop oracle. Extra args go to pytest
# (and then only pytest runs after the gates). Each stage prints how long it took.
set -euo pipefail
START=$SECONDS
STAGE_START=$SECONDS
STAGE=""
stage() {
  if [ -n "$STAGE" ]; then
    echo "   (${STAGE}: $((SECONDS - STAGE_START)) s)"
  fi
  STAGE="$1"
  STAGE_START=$SECONDS
  [ -n "$STAGE" ] && echo "== $STAGE"
  return 0
}
stage "environment and extension build (scripts/env.sh)"
REQS=test . "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
export PYO3_PYTHON="$VPY"
if [ -n "${CI:-}" ]; then
  # CI is deterministic: property tests draw the same cases on every run (hypothesis is
  # derandomized by tests/conftest.py under CI). Local runs draw new ones each time.
  export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261128}"
fi
# Every gate fails the run: a missing tool is an error, never a skip (env.sh installs them).
stage "cargo fmt / clippy"
cargo fmt --version >/dev/null 2>&1 || { echo "rustfmt is not installed (rustup component add rustfmt)" >&2; exit 1; }
cargo clippy --version >/dev/null 2>&1 || { echo "clippy is not installed (rustup component add clippy)" >&2; exit 1; }
cargo fmt --all --check
cargo clippy --release --workspace --all-targets --quiet -- -D warnings
stage "fuzz targets compile (fuzz/ is outside the workspace: cargo-fuzz builds it with nightly flags)"
cargo check --manifest-path fuzz/Cargo.toml --release --target-dir target --quiet
stage "ruff / mypy / stubtest (python/lancelet; configuration in pyproject.toml); workflow lint (.github/workflows)"
"$VPY" -m ruff check python/lancelet
"$VPY" -m ruff format --check python/lancelet
"$VPY" -m mypy
# stubtest checks the package and each submodule it finds a stub of (python/lancelet/_native/*.pyi);
# tests/test_module_layout.py checks that every submodule of the extension has one.
"$VPY" -m mypy.stubtest lancelet._native --allowlist python/stubtest_allowlist.txt
"$VPY" -m check_jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
"$ROOT/.venv/bin/zizmor" --offline --quiet .github/workflows
stage "cargo test"
cargo test --profile test-release --workspace --quiet
# pytest-xdist: two workers (this machine's two cores); work stealing evens out slow files.
PYTEST_PAR=(-n "${LANCELET_TEST_WORKERS:-2}" --dist worksteal)
stage "pytest"
"$VPY" -m pytest -q "${PYTEST_PAR[@]}" --durations=15 "$@"
if [ $# -eq 0 ]; then
  stage "memory bounds (tests/test_dataset_memory.py, scaled down: 0.5 GB written, 0.25 GB scanned)"
  LANCELET_RUN_SLOW=1 LANCELET_MEMTEST_GB=0.25 "$VPY" -m pytest -q tests/test_dataset_memory.py
  stage "benchmark suites, each case once on a small table (pytest benches --benchmark-only times them)"
  LANCELET_BENCH_ROWS=4000 "$VPY" -m pytest -q -p no:cacheprovider "${PYTEST_PAR[@]}" benches --benchmark-disable
  stage "wheel: built from the compiled test-release tree, installed into a fresh virtualenv, used (scripts/wheel_check.sh)"
  WHEEL_DIR="$(mktemp -d "${TMPDIR:-/tmp}/lancelet-dist.XXXXXX")"
  bash scripts/wheel.sh --profile test-release --host-glibc --no-sdist --out "$WHEEL_DIR"
  bash scripts/wheel_check.sh "$WHEEL_DIR"/lancelet-*.whl
  rm -rf "$WHEEL_DIR"
fi
stage ""
echo "== all stages: $((SECONDS - START)) s"
