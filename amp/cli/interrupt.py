"""Ctrl-C that ends a model command at once (issue #44 point 5): one ``error: interrupted`` line,
exit status :data:`EXIT_INTERRUPTED`, within about :data:`GRACE_S` of the signal.

Python raises ``KeyboardInterrupt`` in the main thread only, and only between two bytecodes: a
SIGINT that arrives while a C call runs — llama.cpp loading a GGUF, or decoding a 512-token chunk
of the prompt, seconds each on two cores — waits for that call to return; and once the command has
returned, the interpreter's teardown (freeing the model, unloading torch) takes about another
second.  Measured on ``amp parse`` with the embedded GGUF: 2.2–2.9 s from the signal to the exit
during the search, 5.8–7.7 s during start-up.

A command that opts in (:func:`quick_interrupt`, e.g. ``amp parse``) runs inside
:func:`watched`: a thread of its own learns of a SIGINT at once, through
:func:`signal.set_wakeup_fd` (the C-level signal handler writes to it whatever the main thread is
running).  The main thread gets :data:`GRACE_S` to raise ``KeyboardInterrupt`` and leave the
command the ordinary way (``finally`` blocks run, a cache write completes or rolls back); if it is
still inside a C call then, the watcher writes the error line and ends the process
(:func:`os._exit`).  Either way the interpreter's teardown is skipped (:func:`exit_now`).

The result cache stays consistent: :mod:`diskcache` writes a value's file before the SQLite row
that names it, in one transaction, so a process ended between the two leaves a file no row names,
never a row with a half-written value.

A command that installs its own SIGINT handler (``amp app``, ``amp serve``) is never ended by the
watcher: it acts only while SIGINT has Python's default handler.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

#: Exit status of a command ended by Ctrl-C (the shell's 128 + SIGINT).
EXIT_INTERRUPTED = 128 + int(signal.SIGINT)
#: The one line an interrupted command prints on stderr.
INTERRUPTED_LINE = "error: interrupted"
#: Seconds the main thread gets to leave the command after a SIGINT before the process is ended.
GRACE_S = 0.5
#: The ``argparse`` default by which a command opts in (:func:`quick_interrupt`).
_OPT_IN = "quick_interrupt"


def quick_interrupt(parser: argparse.ArgumentParser) -> None:
    """Mark the command of ``parser`` as one whose Ctrl-C ends the process at once (:func:`watched`,
    :func:`exit_now`): its work is one computation in this process, with no child to wait for."""
    parser.set_defaults(**{_OPT_IN: True})


def wants_quick_interrupt(args: argparse.Namespace) -> bool:
    """Whether the parsed command opted in with :func:`quick_interrupt`."""
    return bool(getattr(args, _OPT_IN, False))


def exit_now(status: int = EXIT_INTERRUPTED) -> NoReturn:
    """Flush stdout and stderr and end the process with ``status``, skipping the interpreter's
    teardown (seconds with a model loaded).  Only for a process that is the command line itself."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed or broken pipe: nothing left to say
            stream.flush()
    os._exit(status)


@contextlib.contextmanager
def watched(grace_s: float = GRACE_S) -> Iterator[None]:
    """Run the body with a SIGINT watcher (see the module docstring); outside the main thread
    (where no signal arrives) it only runs the body.  Leaving restores the previous wakeup fd."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reader, writer = socket.socketpair()
    writer.setblocking(False)  # set_wakeup_fd needs it: a signal handler never blocks
    done = threading.Event()
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    hook = sys.unraisablehook
    sys.unraisablehook = _quiet_interrupt(hook)
    watcher = threading.Thread(target=_watch, args=(reader, done, grace_s), name="amp-interrupt", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        sys.unraisablehook = hook
        signal.set_wakeup_fd(previous)
        writer.close()  # the watcher reads the end of its socket and stops


def _quiet_interrupt(hook: Callable[[Any], object]) -> Callable[[Any], object]:
    """``hook`` except for a ``KeyboardInterrupt`` raised inside a callback from C (llama.cpp's log
    callback during a load): C drops it, the watcher ends the process, and nothing else is said."""

    def unraisable(info: Any) -> object:
        if isinstance(info.exc_value, KeyboardInterrupt):
            return None
        return hook(info)

    return unraisable


def _watch(reader: socket.socket, done: threading.Event, grace_s: float) -> None:
    """Until the socket ends: on a SIGINT with Python's default handler in place, wait ``grace_s``
    for the body to end, else print :data:`INTERRUPTED_LINE` and exit :data:`EXIT_INTERRUPTED`."""
    with reader:
        while data := reader.recv(64):
            if int(signal.SIGINT) not in data or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
                continue
            if not done.wait(grace_s):
                with contextlib.suppress(OSError):  # stderr closed: the status still says it
                    os.write(2, f"{INTERRUPTED_LINE}\n".encode())
                os._exit(EXIT_INTERRUPTED)
