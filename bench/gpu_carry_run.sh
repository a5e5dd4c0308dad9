#!/usr/bin/env bash
# The GPU check on a bare, offline GPU machine (docs/gpu.md, issue #33).  Copied into gpu_carry/run.sh
# by bench/gpu_carry.sh; run it from anywhere: bash gpu_carry/run.sh [gpu_check.py options].
#
# It installs the carried wheels into a temporary folder (the machine reaches no registry; the
# installed packages stay as they are), puts that folder first on PYTHONPATH, and runs
# bench/gpu_check.py --random-weights with the carried tokenizer and config.  PYTHON names the
# interpreter (default python3, the one that holds the machine's CUDA torch).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
py="${PYTHON:-python3}"
site="$(mktemp -d "${TMPDIR:-/tmp}/amp-gpu-site.XXXXXX")"
trap 'rm -rf "$site"' EXIT
"$py" -m pip install --quiet --no-index --no-deps --no-compile --no-cache-dir --disable-pip-version-check \
  --target "$site" "$here"/wheels/*.whl
export PYTHONPATH="$site:$repo${PYTHONPATH:+:$PYTHONPATH}"
# The carried transformers is the project's pin.  Should it not import against this machine's
# packages, the machine's own transformers runs the check instead (its JSON names the version).
if ! "$py" -c "import transformers.models.gemma3.modeling_gemma3" >/dev/null 2>&1; then
  echo "note: the carried transformers does not import here; using this machine's own" >&2
  rm -rf "$site"/transformers "$site"/transformers-*.dist-info
fi
export AMP_GPU_CARRY="$here" HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
cd "$repo"
"$py" bench/gpu_check.py --random-weights "$@"
