"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import sys


def fail(parser: argparse.ArgumentParser, message: str) -> int:
    """argparse-style error: usage and ``prog: error: message`` on stderr, exit code 2."""
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return 2
