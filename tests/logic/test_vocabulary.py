"""amp.logic.vocabulary: the one declaration of LF formats and canonical modes, and their checks."""

from __future__ import annotations

import pytest

from amp.data.errors import DataError
from amp.errors import AmpError, PromptError, SettingError
from amp.logic import vocabulary
from amp.logic.vocabulary import FORMATS, MODES, check_format, check_mode


def test_the_declared_words() -> None:
    assert FORMATS == ("fol", "lisp") and MODES == ("logical", "paper")


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_format_returns_a_known_format(fmt: str) -> None:
    assert check_format(fmt) == fmt


@pytest.mark.parametrize("bad", ["FOL", "sql", "", None, 1])
def test_check_format_refuses_with_the_callers_error(bad: object) -> None:
    with pytest.raises(SettingError, match=r"fmt must be an LF format, one of fol, lisp"):
        check_format(bad)
    with pytest.raises(PromptError, match="format") as info:
        check_format(bad, PromptError)
    assert isinstance(info.value, AmpError) and isinstance(info.value, ValueError)
    with pytest.raises(DataError):
        check_format(bad, DataError)


@pytest.mark.parametrize("bad", ["Logical", "exact", None])
def test_check_mode_refuses_with_the_callers_error(bad: object) -> None:
    assert check_mode("paper") == "paper"
    with pytest.raises(SettingError, match=r"mode must be a canonical mode, one of logical, paper"):
        check_mode(bad)
    with pytest.raises(PromptError):
        check_mode(bad, PromptError)


def test_every_checker_in_the_library_uses_the_declaration() -> None:
    """Readers, renderers, canonicalisers, generation, prompts and splits refuse the same words."""
    from amp.data.generate import generate
    from amp.data.splits_render import render_ordered
    from amp.logic.canonical import canonical
    from amp.logic.convert import convert
    from amp.logic.grammar import grammar_text
    from amp.logic.reader import parse_lf

    lf = "exists x . man(x)"
    calls = [lambda: parse_lf(lf, "xml"), lambda: convert(lf, "fol", "xml"), lambda: canonical(lf, "logical", "xml"),
             lambda: canonical(lf, "exact", "fol"), lambda: grammar_text("xml", "decoding"),  # type: ignore[arg-type]
             lambda: render_ordered(lf, "xml"), lambda: generate("pp", fmt="xml")]
    for call in calls:
        with pytest.raises(AmpError, match="must be an? (LF format|canonical mode)"):
            call()
    assert vocabulary.is_format("lisp") and not vocabulary.is_mode("lisp")
