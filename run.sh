#!/usr/bin/env bash
# AmP Explorer — the two commands of the README:
#
#   bash run.sh app     install everything, then start the app (embedded default model, local cache)
#   bash run.sh test    install everything (Chromium too, for the browser tests), then run the whole suite
#
# Everything goes into a project-local virtual environment (.venv, or $AMP_VENV).
# On a GPU machine install a CUDA build of torch into that venv first (see README).
set -euo pipefail
cd "$(dirname "$0")"
export PIP_DISABLE_PIP_VERSION_CHECK=1
VENV=${AMP_VENV:-.venv}

install_python() {
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q -r requirements.txt "$@" 2>&1 | grep -v "^WARNING: Location" || true
  "$VENV/bin/python" -c "import torch, transformers, lark, streamlit" \
    || { echo "run.sh: the Python install failed (see pip's output above)" >&2; exit 1; }
}

install_chromium() {
  # Browser tests use Debian's chromium through the PyPI playwright package (never `playwright install`).
  if ! [ -x /usr/bin/chromium ]; then
    echo "run.sh: installing Debian chromium for the browser tests…"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/tmp/amp-apt.log 2>&1 \
      || { tail -30 /tmp/amp-apt.log; exit 1; }
  fi
}

case "${1:-}" in
  app)
    shift
    install_python
    exec "$VENV/bin/python" -m streamlit run app.py --server.address "${AMP_ADDRESS:-127.0.0.1}" "$@"
    ;;
  test)
    shift
    install_python -r requirements-dev.txt
    install_chromium
    export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
    exec "$VENV/bin/python" -m pytest -p no:cacheprovider --durations=10 "$@"
    ;;
  *)
    echo "usage: bash run.sh app | test [pytest args]" >&2
    exit 2
    ;;
esac
