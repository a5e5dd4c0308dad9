"""``amp app``: start the Streamlit app (the same as ``bash run.sh app``, without the install).

    amp app                                   # http://127.0.0.1:8501
    AMP_ADDRESS=0.0.0.0 amp app --port 8502   # a classroom network: set AMP_TEACHER_PASSWORD, or a
                                              # passphrase is generated and printed here at start

The app's pages (``app.py``, ``views/``, ``ui/``) live in the repository beside the ``amp``
package, so the command works from any folder with a source checkout or an editable install
(``pip install -e .``); an installed wheel holds the library and the CLI only, and the command
then says so.  Arguments after ``--`` go to ``streamlit run``.  SIGTERM, SIGINT and SIGHUP are passed
on to the app, and ``amp app`` waits for it to stop (:func:`run_child`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
import time

from amp.classroom import teacher_auth
from amp.settings import REPO_ROOT


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "app",
        help="start the Streamlit app (from a source checkout or editable install)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--address", default=os.environ.get("AMP_ADDRESS", "127.0.0.1"),
                        help="address to listen on (default: $AMP_ADDRESS or 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8501, help="port (default: 8501)")
    parser.add_argument("streamlit_args", nargs=argparse.REMAINDER,
                        help="further arguments for `streamlit run` (after --)")
    parser.set_defaults(func=run, _parser=parser)


def command(address: str, port: int, extra: list[str]) -> list[str]:
    """The ``streamlit run`` command line that starts the app."""
    extra = extra[1:] if extra[:1] == ["--"] else extra
    return [sys.executable, "-m", "streamlit", "run", str(REPO_ROOT / "asgi.py"),
            "--server.address", address, "--server.port", str(port), *extra]


def app_environment(address: str, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The app's environment: beyond loopback with no ``AMP_TEACHER_PASSWORD`` set, a passphrase
    is generated now, printed in the terminal at start, and handed to the app."""

    env = dict(os.environ if environ is None else environ)
    if not env.get(teacher_auth.ENV) and not teacher_auth.listens_on_loopback(address):
        env[teacher_auth.ENV] = teacher_auth.generated_passphrase()
    return env


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args._parser
    if not (REPO_ROOT / "app.py").is_file():
        print(f"{parser.prog}: error: the app's pages are not installed with the package; start it from a "
              "clone of the repository (bash run.sh app) or install that clone with pip install -e .",
              file=sys.stderr)
        return 1
    if not 0 < args.port < 65536:
        print(f"{parser.prog}: error: --port must be between 1 and 65535, not {args.port}", file=sys.stderr)
        return 2
    if importlib.util.find_spec("streamlit") is None:
        print(f"{parser.prog}: error: streamlit is not installed: pip install 'amp-explorer[app]'", file=sys.stderr)
        return 1
    return run_child(command(args.address, args.port, list(args.streamlit_args)), env=app_environment(args.address))


#: Signals ``amp app`` passes on to its ``streamlit run`` child.
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: Seconds the child has to stop after a forwarded signal before it is killed.
STOP_GRACE_S = 20.0


def run_child(cmd: list[str], *, env: dict[str, str], grace_s: float = STOP_GRACE_S) -> int:
    """Run ``cmd`` (the app) in the repository and wait for it; SIGTERM, SIGINT and SIGHUP sent to
    this process are forwarded to it, so a service manager or ``kill`` stopping ``amp app`` stops
    the app too (it is killed if it has not stopped ``grace_s`` seconds after the signal).

    Returns the child's exit status (a signal's number as ``128 + n``, the shell's convention).
    """
    child = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env)
    received: list[float] = []  # when each forwarded signal arrived (monotonic seconds)

    def forward(signum: int, _frame: object) -> None:
        received.append(time.monotonic())
        if child.poll() is None:
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        while True:
            try:
                code = child.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if received and time.monotonic() - received[0] > grace_s:
                    child.kill()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 - code if code < 0 else code
