#!/usr/bin/env bash
# Builds gpu_carry/ (at most 60 MiB, git-ignored): the wheels, tokenizer and config an offline GPU
# machine needs for the GPU check, and its run.sh (bench/gpu_carry.py says what and why; docs/gpu.md
# how to use it).  Options go to bench/gpu_carry.py (--out, --limit-mib, --model-files).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x "$repo/.venv/bin/python" ]; then py="$repo/.venv/bin/python"; else py=python3; fi
fi
cd "$repo"
exec "$py" bench/gpu_carry.py "$@"
