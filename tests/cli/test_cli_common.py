"""amp.cli: one fail() for every command, the shared --format/--mode options, every command registered."""

from __future__ import annotations

import argparse

import pytest

from amp.cli import build_parser
from amp.cli.common import EXIT_ERROR, add_format_argument, add_mode_argument, fail


def test_fail_without_a_parser_is_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert fail(ValueError("bad\n  input \udcff")) == EXIT_ERROR == 2
    assert capsys.readouterr().err == "error: bad input \\udcff\n"
    assert fail(KeyError()) == 2
    assert capsys.readouterr().err == "error: KeyError\n"


def test_fail_with_a_parser_is_argparse_style(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="amp thing")
    assert fail("give --x", parser) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: amp thing") and err.endswith("amp thing: error: give --x\n")
    assert [line for line in err.splitlines() if "error:" in line] == ["amp thing: error: give --x"]


def test_format_and_mode_options_offer_the_declared_words() -> None:
    parser = argparse.ArgumentParser()
    add_format_argument(parser)
    add_mode_argument(parser)
    assert vars(parser.parse_args([])) == {"fmt": "fol", "mode": "logical"}
    assert vars(parser.parse_args(["--format", "lisp", "--mode", "paper"])) == {"fmt": "lisp", "mode": "paper"}
    with pytest.raises(SystemExit):
        parser.parse_args(["--format", "xml"])


def test_every_command_is_registered_in_help_order() -> None:
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == ["generate", "canon", "prompt", "metrics", "parse", "score", "influence", "attribute",
                                 "detect", "v1-splits", "reproduce", "demo-pack", "serve", "app"]
