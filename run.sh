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

# llama.cpp is compiled for this machine's CPU (-march=native), but never with AMX: a CPU can list
# AMX while its kernel or hypervisor does not enable the tile registers, and the first large batch
# (a prompt pass) then dies with SIGILL, taking the app or the server with it (seen on this
# project's x86-64 VMs).  CMAKE_ARGS set by the caller wins.
LLAMA_BUILD="no-amx-1"
if [ "$(uname -m)" = x86_64 ]; then
  NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  export CMAKE_ARGS=${CMAKE_ARGS:-"-DCMAKE_C_FLAGS='$NO_AMX' -DCMAKE_CXX_FLAGS='$NO_AMX'"}
fi

install_llama_cpp() {
  # llama-cpp-python ships as source: it is compiled once per machine into a wheel of its own
  # (keyed by LLAMA_BUILD, so a wheel built with other flags, e.g. by pip's cache, is never taken)
  # and installed from there; a venv holding an older build gets this one.
  local ver house mark="$VENV/.amp-llama-build"
  ver=$(grep -o 'llama-cpp-python==[0-9.]*' pyproject.toml | head -1 | cut -d= -f3)
  house="${AMP_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/amp-wheels}/$LLAMA_BUILD"
  if ! ls "$house"/llama_cpp_python-"$ver"-*.whl >/dev/null 2>&1; then
    install_build_tools
    echo "run.sh: compiling llama.cpp for llama-cpp-python $ver (a few minutes on 2 cores, once per machine)…"
    mkdir -p "$house"
    CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$VENV/bin/python" -m pip wheel -q --no-deps \
      --no-cache-dir -w "$house" "llama-cpp-python==$ver" 2>&1 | grep -v "^WARNING: Location" || true
    ls "$house"/llama_cpp_python-"$ver"-*.whl >/dev/null 2>&1 \
      || { echo "run.sh: compiling llama.cpp failed (see pip's output above)" >&2; exit 1; }
  fi
  export PIP_FIND_LINKS="$house"
  if [ "$(cat "$mark" 2>/dev/null)" != "$LLAMA_BUILD-$ver" ] && "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
    "$VENV/bin/python" -m pip install -q --force-reinstall --no-deps "$house"/llama_cpp_python-"$ver"-*.whl
  fi
  echo "$LLAMA_BUILD-$ver" > "$mark"
}

install_python() {
  # The project itself, editable, with the extras the command needs (pyproject.toml declares them);
  # skipped when this venv already holds an install from the same pyproject.toml.
  local extras=$1 stamp="$VENV/.amp-install-stamp" want
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  want="$extras $(sha256sum pyproject.toml | cut -c1-64) $LLAMA_BUILD"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    install_build_tools
    install_llama_cpp
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
