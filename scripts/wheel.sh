#!/usr/bin/env bash
# Builds what users `pip install`: the abi3 wheel (one wheel for CPython >= 3.9) and the sdist.
#
#   bash scripts/wheel.sh                       # dist profile, manylinux_2_28 on Linux, into dist/
#   bash scripts/wheel.sh --profile release     # any Cargo profile (see [profile.dist] in Cargo.toml)
#   bash scripts/wheel.sh --host-glibc          # link against this machine's glibc (no zig); the
#                                               # wheel's tag is then the host's (CI uses this to
#                                               # reuse the compiled test-release tree)
#   bash scripts/wheel.sh --out DIR --no-sdist
#
# On Linux the wheel is linked through zig (the `ziglang` package on PyPI) against glibc 2.28, so
# it installs on glibc >= 2.28 (RHEL 8, Ubuntu 20.04, Debian 11) like pylance's; `auditwheel show`
# then checks that it needs no newer symbol. On macOS, maturin's default deployment target is used.
# .github/workflows/release.yml calls this script, so the two stay in step.
# Prints the wheel's name, tag and size, and the extension's size.
set -euo pipefail
PROFILE=dist
OUT=dist
SDIST=1
ZIG=1
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) PROFILE="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --no-sdist) SDIST=0; shift ;;
    --host-glibc) ZIG=0; shift ;;
    *) echo "scripts/wheel.sh: unknown argument $1 (see the header for usage)" >&2; exit 2 ;;
  esac
done
. "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
TOOLS=(maturin auditwheel)
if [ "$(uname -s)" = Linux ] && [ "$ZIG" = 1 ]; then
  TOOLS+=(ziglang)
fi
"$VPY" -m pip install -q --disable-pip-version-check "${TOOLS[@]}"
export PATH="$ROOT/.venv/bin:$PATH"
export PYO3_PYTHON="$VPY"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
# The wheel is named from the package version and the tag: remove an earlier build of this tag
# family so the report below names the one just built.
rm -f "$OUT"/lancelet-*.whl
BUILD=(maturin build --profile "$PROFILE" --out "$OUT")
if [ "$(uname -s)" = Linux ]; then
  if [ "$ZIG" = 1 ]; then
    BUILD+=(--zig --compatibility manylinux_2_28)
  fi
fi
echo "== ${BUILD[*]}"
START=$SECONDS
"${BUILD[@]}"
echo "   (wheel built in $((SECONDS - START)) s)"
if [ "$SDIST" = 1 ]; then
  rm -f "$OUT"/lancelet-*.tar.gz
  maturin sdist --out "$OUT"
fi
WHEEL="$(ls "$OUT"/lancelet-*.whl)"
"$VPY" - "$WHEEL" <<'EOF'
import sys, zipfile, os
wheel = sys.argv[1]
with zipfile.ZipFile(wheel) as z:
    # The compiled extension, not the stubs of python/lancelet/_native/.
    ext = [i for i in z.infolist() if os.path.basename(i.filename).startswith("_native.") and not i.filename.endswith(".pyi")]
    print(f"wheel: {os.path.basename(wheel)}")
    print(f"  size {os.path.getsize(wheel) / 2**20:.1f} MiB; extension {ext[0].filename} {ext[0].file_size / 2**20:.1f} MiB unpacked")
EOF
if [ "$(uname -s)" = Linux ] && [ "$ZIG" = 1 ]; then
  # auditwheel reads the extension's symbol versions: the wheel must be manylinux_2_28 or older.
  "$VPY" -m auditwheel show "$WHEEL" | tee "$OUT/auditwheel.txt"
  if ! grep -Eq 'manylinux_2_(1[0-9]|2[0-8])_' "$OUT/auditwheel.txt"; then
    echo "scripts/wheel.sh: the wheel needs a glibc newer than 2.28 (see auditwheel above)" >&2
    exit 1
  fi
fi
ls -la "$OUT"
