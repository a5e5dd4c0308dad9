"""Command-line interface: ``python -m amp <command> …``.

Each command lives in its own module of this package and exposes
``register(subparsers) -> None``, which adds its sub-parser and sets ``func`` (a callable taking
the parsed ``argparse.Namespace`` and returning an exit code).  :data:`COMMANDS` lists them in
the order ``--help`` shows them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from amp.cli import (
    app,
    attribute,
    canon,
    demo_pack,
    detect,
    generate,
    influence,
    interrupt,
    metrics,
    parse,
    prompt,
    reproduce,
    score,
    serve,
    v1_splits,
)
from amp.cli.common import printable
from amp.errors import AmpError
from amp.version import __version__

#: Command modules, in the order ``--help`` lists them.
COMMANDS = (generate, canon, prompt, metrics, parse, score, influence, attribute, detect, v1_splits, reproduce, demo_pack,
            serve, app)


def build_parser() -> argparse.ArgumentParser:

    parser = argparse.ArgumentParser(
        prog=_prog(),
        description="AmP Explorer: ambiguity in semantic parsing with language models.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.register(sub)
    return parser


def _prog() -> str:
    """``amp`` when started as the console command, ``python -m amp`` otherwise."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "amp" if name in ("amp", "amp.exe") else "python -m amp"


def _undecodable_argument(args: argparse.Namespace) -> str | None:
    """The option whose value holds bytes that are not UTF-8 (Python keeps them as surrogates)."""
    for name, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and any("\udc80" <= ch <= "\udcff" for ch in v) for v in values):
            return "--" + name.replace("_", "-")
    return None


def main(argv: list[str] | None = None) -> int:
    """Run one command.  Every failure is one ``error:`` line on stderr, never a traceback:
    usage errors exit 2 (argparse), data errors 1 unless the command says otherwise; Ctrl-C
    ``error: interrupted`` and 130 (a command marked :func:`amp.cli.interrupt.quick_interrupt`, run
    as the command line, ``argv=None``: within :data:`amp.cli.interrupt.GRACE_S`).
    ``AMP_DEBUG=1`` re-raises unexpected exceptions (for a traceback)."""

    quick = False
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        bad = _undecodable_argument(args)
        if bad is not None:
            parser.error(f"{bad}: the value is not valid UTF-8 text")
        quick = interrupt.wants_quick_interrupt(args) and argv is None  # this process is the command line itself
        with interrupt.watched() if quick else contextlib.nullcontext():
            return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `python -m amp generate --all | head`
        return 0
    except KeyboardInterrupt:
        print(interrupt.INTERRUPTED_LINE, file=sys.stderr)
        if quick:
            interrupt.exit_now(interrupt.EXIT_INTERRUPTED)  # no teardown: seconds with a model loaded
        return interrupt.EXIT_INTERRUPTED
    except AmpError as exc:
        print(f"error: {printable(str(exc)) or type(exc).__name__}", file=sys.stderr)
        return 1
    except UnicodeDecodeError:
        print("error: the input is not UTF-8 text", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - last resort: one line, the traceback only on request
        if os.environ.get("AMP_DEBUG"):
            raise
        print(f"error: unexpected {type(exc).__name__}: {printable(str(exc))} (AMP_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
