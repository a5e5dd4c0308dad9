"""Command-line interface: ``python -m amp <command> …``.

Each command lives in its own module of this package and exposes
``register(subparsers) -> None``, which adds its sub-parser and sets ``func`` (a callable taking
the parsed ``argparse.Namespace`` and returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

#: Command modules, in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "generate", "canon", "prompt", "metrics", "parse", "score", "v1_splits", "reproduce", "serve", "app",
)


def build_parser() -> argparse.ArgumentParser:
    from amp.version import __version__

    parser = argparse.ArgumentParser(
        prog=_prog(),
        description="AmP Explorer: ambiguity in semantic parsing with language models.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"amp.cli.{name}")
        except ModuleNotFoundError as exc:  # a command whose module is not written yet
            if exc.name != f"amp.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def _prog() -> str:
    """``amp`` when started as the console command, ``python -m amp`` otherwise."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "amp" if name in ("amp", "amp.exe") else "python -m amp"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `python -m amp generate --all | head`
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
