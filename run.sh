#!/usr/bin/env bash
# AmP Explorer — the three commands of the README:
#
#   bash run.sh app     install everything, then start the app (embedded default model, local cache;
#                       with AMP_PARSER_URL=http://host:port it uses a parser service instead)
#   bash run.sh test    install everything (Chromium too, for the browser tests), then run the whole suite
#   bash run.sh serve   install everything, then host the parser as a service on Ray Serve
#                       (python -m amp serve; extra arguments go to it, e.g. --device cuda --port 8600)
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
  "$VENV/bin/python" -c "import torch, transformers, lark, streamlit, ray.serve" \
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
  serve)
    shift
    install_python
    exec "$VENV/bin/python" -m amp serve "$@"
    ;;
  test)
    shift
    install_python -r requirements-dev.txt
    install_chromium
    export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
    exec "$VENV/bin/python" -m pytest -p no:cacheprovider --durations=10 "$@"
    ;;
  *)
    echo "usage: bash run.sh app | test [pytest args] | serve [amp serve args]" >&2
    exit 2
    ;;
esac
