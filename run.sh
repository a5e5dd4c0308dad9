#!/usr/bin/env bash
# AmP Explorer — the three commands of the README:
#
#   bash run.sh app     install everything, then start the app (embedded default model, local cache;
#                       with AMP_PARSER_URL=http://host:port it uses a parser service instead)
#   bash run.sh test    install everything (Chromium too, for the browser tests), run the checks
#                       (ruff, mypy), then the whole suite
#   bash run.sh serve   install everything, then host the parser as a service on Ray Serve
#                       (python -m amp serve; extra arguments go to it, e.g. --device cuda --port 8600)
#
# Everything goes into a project-local virtual environment (.venv, or $AMP_VENV): the project
# itself as an editable install (pip install -e ".[extras]", see pyproject.toml), which also gives
# the `amp` command ($VENV/bin/amp).
# On a GPU machine install a CUDA build of torch into that venv first (see README).
set -euo pipefail
cd "$(dirname "$0")"
export PIP_DISABLE_PIP_VERSION_CHECK=1
VENV=${AMP_VENV:-.venv}

install_build_tools() {
  # llama-cpp-python (the llama.cpp engine) is a source distribution: its first pip install compiles
  # llama.cpp, which needs a C/C++ compiler and cmake.  Installed through apt when missing.
  local want=()
  command -v cc >/dev/null || command -v gcc >/dev/null || want+=(gcc)
  command -v c++ >/dev/null || command -v g++ >/dev/null || want+=(g++)
  command -v cmake >/dev/null || want+=(cmake)
  if [ ${#want[@]} -gt 0 ]; then
    echo "run.sh: installing Debian ${want[*]} to compile llama.cpp (llama-cpp-python ships as source only)…"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${want[@]}" >/tmp/amp-apt.log 2>&1 \
      || { tail -30 /tmp/amp-apt.log; exit 1; }
  fi
}

install_python() {
  # The project itself, editable, with the extras the command needs (pyproject.toml declares them);
  # skipped when this venv already holds an install from the same pyproject.toml.
  local extras=$1 stamp="$VENV/.amp-install-stamp" want
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  want="$extras $(sha256sum pyproject.toml | cut -c1-64)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    install_build_tools
    "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null \
      || echo "run.sh: compiling llama.cpp for llama-cpp-python (a few minutes on 2 cores, once; pip caches it)…"
    CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$VENV/bin/python" -m pip install -q -e ".[$extras]" 2>&1 | grep -v "^WARNING: Location" || true
    "$VENV/bin/python" -c "import torch, transformers, lark, streamlit, ray.serve, llama_cpp" && "$VENV/bin/amp" --version >/dev/null \
      || { echo "run.sh: the Python install failed (see pip's output above)" >&2; exit 1; }
    echo "$want" > "$stamp"
  fi
}

run_checks() {
  # The checks CI enforces before the tests (configuration in pyproject.toml).
  echo "run.sh: ruff check" >&2
  "$VENV/bin/ruff" check .
  echo "run.sh: mypy (amp/)" >&2
  "$VENV/bin/mypy"
}

install_chromium() {
  # Browser tests use Debian's chromium through the PyPI playwright package (never `playwright install`);
  # the classroom lesson test puts its server and browser in a network namespace of its own (iproute2's `ip`).
  local want=()
  [ -x /usr/bin/chromium ] || want+=(chromium)
  command -v ip >/dev/null || want+=(iproute2)
  if [ ${#want[@]} -gt 0 ]; then
    echo "run.sh: installing Debian ${want[*]} for the browser tests…"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${want[@]}" >/tmp/amp-apt.log 2>&1 \
      || { tail -30 /tmp/amp-apt.log; exit 1; }
  fi
}

case "${1:-}" in
  app)
    shift
    install_python app,serve,api
    # amp app: streamlit run app.py on $AMP_ADDRESS (default loopback); beyond loopback without
    # AMP_TEACHER_PASSWORD it prints a generated teacher passphrase at start.
    exec "$VENV/bin/amp" app --address "${AMP_ADDRESS:-127.0.0.1}" -- "$@"
    ;;
  serve)
    shift
    install_python app,serve,api
    exec "$VENV/bin/python" -m amp serve "$@"
    ;;
  test)
    shift
    install_python dev
    install_chromium
    run_checks
    export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
    exec "$VENV/bin/python" -m pytest -p no:cacheprovider --durations=10 "$@"
    ;;
  *)
    echo "usage: bash run.sh app | test [pytest args] | serve [amp serve args]" >&2
    exit 2
    ;;
esac
