#!/usr/bin/env bash
# Build the wheel, install it in a fresh virtual environment and use it from OUTSIDE the repository:
# `pipeweave predict` and the Python API must work from the installed package data alone (plus the
# measurement directory, which is never shipped). Dependencies come from the system site-packages
# (no re-download); the pipeweave package itself must come from the wheel (checked).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/pipeweave-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export PIPEWEAVE_DATA="${PIPEWEAVE_DATA:-$(cd "$repo/.." && pwd)/shared/datasets}"

pip wheel -q --no-deps -w "$work/dist" "$repo"
python -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --no-deps "$work"/dist/pipeweave-*.whl
mkdir "$work/outside" && cd "$work/outside"

"$work/venv/bin/python" - "$work/venv" <<'PY'
import sys
from pathlib import Path

import pipeweave as pw
from pipeweave import _paths

venv = Path(sys.argv[1]).resolve()
assert Path(pw.__file__).resolve().is_relative_to(venv), f"pipeweave imported from {pw.__file__}, not the wheel"
assert not _paths.IN_CHECKOUT and _paths.MODELS_DIR.is_relative_to(venv), _paths.MODELS_DIR
for f in ("datasets/gpus.toml", "models/pipeweave_default.ubj", "models/diagnose_ranker.ubj",
          "features/sass/instruction_mix.csv"):
    assert (_paths.PACKAGE_DATA_DIR / f).is_file(), f"wheel lacks {f}"
gemm = {"family": "gemm", "dtype": "bfloat16", "m": 8192, "n": 8192, "k": 8192}
pred = pw.predict(gemm, gpu="B300")
assert pred.iloc[0] > 0, pred
print(f"wheel smoke: pw.predict on B300 = {pred.iloc[0]:.1f} us (pipeweave from {Path(pw.__file__).parent})")
PY
"$work/venv/bin/pipeweave" predict --gpu B300 --family gemm --dtype bfloat16 --m 8192 --n 8192 --k 8192
"$work/venv/bin/pipeweave" gpus > /dev/null
echo "wheel smoke: ok"
