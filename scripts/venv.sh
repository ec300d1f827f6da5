# Sourced by scripts/env.sh and scripts/wheel.sh: goes to the repository root and makes
# .venv there if it is missing (with $PYTHON, default python3); sets ROOT and VPY.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
VPY="$ROOT/.venv/bin/python"
