#!/usr/bin/env bash
# Builds lancelet (release) into .venv and runs the end-to-end demo on local disk.
set -euo pipefail
REQS=demo . "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
"$VPY" examples/demo.py "$@"
