#!/usr/bin/env bash
# Installs a built wheel the way a user does and uses it: a fresh virtualenv in an empty
# directory (no source tree on sys.path), `pip install` of the wheel with each extra, then the
# README's install quick start, `python -m lancelet --help` and the `lancelet` console script.
#
#   bash scripts/wheel_check.sh dist/lancelet-*.whl
#
# Each extra must install what it names: the check reads the extras from the installed
# metadata and imports each requirement's module.
set -euo pipefail
WHEEL="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/lancelet-wheel.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# The quick start is the python block that follows the marker in README.md.
"$PY" - "$ROOT/README.md" > quickstart.py <<'EOF'
import sys
text = open(sys.argv[1], encoding="utf-8").read()
marker = "<!-- wheel quick start -->"
assert marker in text, f"README.md has no {marker!r}"
block = text.split(marker, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
print(block)
EOF
"$PY" -m venv venv
VPY="$WORK/venv/bin/python"
PIP=("$VPY" -m pip install -q --disable-pip-version-check)
"${PIP[@]}" --upgrade pip >/dev/null
echo "== pip install $(basename "$WHEEL")"
"${PIP[@]}" "$WHEEL"
"$VPY" -I - <<'EOF'
import lancelet, sys
# The package comes from the virtualenv, not from a source tree.
assert lancelet.__file__.startswith(sys.prefix), lancelet.__file__
# The extension's submodules import by their dotted names (the stub directory beside the
# compiled module does not shadow it).
import lancelet._native.file
from lancelet._native import dataset, index, loader, storage
assert lancelet._native.__file__.startswith(sys.prefix), lancelet._native.__file__
print(f"lancelet {lancelet.__version__} from {lancelet.__file__}")
EOF
echo "== quick start (README.md, Install)"
"$VPY" -I quickstart.py
echo "== python -m lancelet --help"
"$VPY" -I -m lancelet --help | head -3
echo "== lancelet (console script)"
"$WORK/venv/bin/lancelet" --help | head -3
"$VPY" -I -c "import lancelet, pyarrow as pa; lancelet.write_dataset(pa.table({'x': [1, 2, 3]}), 'cli.lance')"
"$WORK/venv/bin/lancelet" versions cli.lance
EXTRAS=(progress namespace spark)
if ! "$VPY" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  # pyspark 4.1 (the Spark source's floor) needs Python 3.10: pip refuses lancelet[spark] on 3.9.
  EXTRAS=(progress namespace)
  echo "== lancelet[spark] skipped: pyspark 4.1 needs Python 3.10 or newer"
fi
for extra in "${EXTRAS[@]}"; do
  echo "== pip install lancelet[$extra]"
  "${PIP[@]}" "$WHEEL[$extra]"
  "$VPY" -I - "$extra" <<'EOF'
import importlib, importlib.metadata as md, re, sys
extra = sys.argv[1]
# Requirements of this extra, from the installed wheel's metadata.
reqs = [r for r in md.requires("lancelet") or [] if re.search(rf"extra\s*==\s*['\"]{extra}['\"]", r)]
assert reqs, f"lancelet[{extra}] names no requirement"
modules = {"lance-namespace": "lance_namespace"}
for req in reqs:
    name = re.match(r"[A-Za-z0-9_.\-]+", req).group(0)
    importlib.import_module(modules.get(name, name.replace("-", "_")))
    print(f"  {name} {md.version(name)}: installed and importable")
EOF
done
"$VPY" -I -c "import lancelet.namespace, lancelet.progress; print('  lancelet.namespace and lancelet.progress import')"
if [ "${#EXTRAS[@]}" = 3 ]; then
  "$VPY" -I -c "import lancelet.spark; print('  lancelet.spark imports')"
fi
echo "== the wheel works in a fresh virtualenv"
