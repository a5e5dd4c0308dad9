"""The suite's own safety nets (``tests/conftest.py``): isolated caches, profiles, the oracle.

These tests fail if a test could read a warm repository ``cache/``, if the Hypothesis profiles
stop being reproducible, or if the lark grammar oracle stops catching what it is there for.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from grammar_oracle import check_parse_result, prefix_violation
from hypothesis import settings
from suite_settings import (
    CI_MAX_EXAMPLES,
    DEV_DATABASE,
    DEV_MAX_EXAMPLES,
    hypothesis_profile,
)

from amp.logic import lexicon
from amp.settings import REPO_ROOT, cache_root, models_dir, results_dir
from amp.teaching.poll import default_poll_path

REPO_CACHE = REPO_ROOT / "cache"


def _prefixes(text: str) -> list[str]:
    return [text[: i + 1] for i in range(len(text))]


# -- isolation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("where", [cache_root, results_dir, default_poll_path])
def test_every_cache_path_is_outside_the_repository(where) -> None:
    path = where()
    assert not path.resolve().is_relative_to(REPO_ROOT), path


def test_each_test_starts_with_an_empty_cache_root() -> None:
    root = cache_root()
    assert root.is_dir() and not any(root.iterdir()), list(root.iterdir())
    (root / "marker").write_text("x")  # the next test must not see it (checked by the test above, re-run)


def test_the_cache_root_differs_between_tests(isolated_cache: Path) -> None:
    assert cache_root() == isolated_cache.resolve()
    assert not (isolated_cache / "marker").exists()


def test_models_are_shared_but_not_the_cache_root() -> None:
    shared = Path(os.environ["AMP_MODELS_DIR"]).resolve()
    assert models_dir() == shared
    assert not shared.is_relative_to(cache_root())


def test_models_dir_follows_its_own_variable_or_the_cache_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.setenv("AMP_MODELS_DIR", str(tmp_path / "weights"))
    assert models_dir() == (tmp_path / "weights").resolve()
    assert results_dir() == (tmp_path / "root" / "results").resolve()
    monkeypatch.setenv("AMP_MODELS_DIR", "  ")
    assert models_dir() == (tmp_path / "root" / "models").resolve()
    monkeypatch.delenv("AMP_MODELS_DIR")
    monkeypatch.delenv("AMP_CACHE_DIR")
    assert models_dir() == REPO_CACHE / "models" and cache_root() == REPO_CACHE  # the app's default


# -- Hypothesis profiles -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "profile"),
    [({"CI": "true"}, "ci"), ({"CI": "1"}, "ci"), ({}, "dev"), ({"CI": "false"}, "dev"),
     ({"CI": "true", "HYPOTHESIS_PROFILE": "dev"}, "dev")],
)
def test_profile_selection(env: dict[str, str], profile: str) -> None:
    assert hypothesis_profile(env) == profile


def test_profiles_are_reproducible_and_keep_the_database_out_of_the_repository() -> None:
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.database is None and ci.print_blob
    assert ci.max_examples == CI_MAX_EXAMPLES
    dev = settings.get_profile("dev")
    assert dev.print_blob and dev.max_examples == DEV_MAX_EXAMPLES > CI_MAX_EXAMPLES
    assert not DEV_DATABASE.resolve().is_relative_to(REPO_ROOT)
    assert settings.default.print_blob  # the loaded profile is one of the two
    assert settings.default.max_examples in (CI_MAX_EXAMPLES, DEV_MAX_EXAMPLES)


# -- the grammar oracle --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["fol", "lisp"])
@pytest.mark.parametrize("var", lexicon.VARIABLES)
def test_oracle_refuses_every_variable_quantified_twice(fmt: str, var: str) -> None:
    other = next(v for v in lexicon.VARIABLES if v != var)
    if fmt == "fol":
        good = f" exists {var} . exists {other} . man({var}) AND boy({other})\n"
        bad = f" exists {var} . exists {other} . forall {var} . man({var})\n"
    else:
        good = f" ( exists {var} ( exists {other} ( AND ( man {var} ) ( boy {other} ) ) ) )\n"
        bad = f" ( exists {var} ( exists {other} ( forall {var} ( man {var} ) ) ) )\n"
    assert prefix_violation(fmt, _prefixes(good), True) is None
    problem = prefix_violation(fmt, _prefixes(bad), True)
    assert problem is not None and f"variable {var!r} quantified twice" in problem


@pytest.mark.parametrize(
    ("text", "finished", "says"),
    [
        (" exists x . man(y)\n", True, "'y' used before it is quantified"),
        (" exists x . man(x) ANX", False, "is not a prefix"),
        (" exists x . man(x)", True, "not a complete"),
        ("exists x . man(x)\n", True, "is not a prefix"),  # the grammar's leading space is missing
    ],
)
def test_oracle_finds_grammar_violations(text: str, finished: bool, says: str) -> None:
    problem = prefix_violation("fol", _prefixes(text), finished)
    assert problem is not None and says in problem


def test_oracle_accepts_unfinished_prefixes() -> None:
    assert prefix_violation("fol", _prefixes(" exists x . exists a . man(x) AND agent(a, x) AND ag"), False) is None


class _CharTokenizer:
    """Decodes ids as characters (id = code point), enough for :func:`check_parse_result`."""

    def decode(self, ids, **_kw) -> str:
        return "".join(chr(i) for i in ids)


def _result(raw: str, finished: bool):
    from amp.parser.core.results import Beam, ParseResult

    beam = Beam(rank=0, text=raw.strip(), raw_text=raw, token_ids=tuple(ord(c) for c in raw),
                tokens=tuple(raw), logprob=-1.0, score=-1.0, finished=finished, parses=finished)
    return ParseResult(beams=(beam,), constrained=True, fmt="fol")


def test_oracle_checks_each_token_of_a_beam() -> None:
    tok = _CharTokenizer()
    assert check_parse_result(_result(" exists x . man(x)\n", True), tok) == []
    leaked = check_parse_result(_result(" exists x . man(x) man", False), tok)  # "m" (token 19) cannot follow " "
    assert len(leaked) == 1 and "token 19" in leaked[0]


def test_oracle_catches_a_leaking_mask_in_a_real_beam_search(
    saved_tiny_model: Path, monkeypatch: pytest.MonkeyPatch, grammar_oracle
) -> None:
    """Plant a leak (a few token ids always allowed) and run the real decoder: the oracle fails it."""
    import torch

    from amp.parser.models.registry import load_model
    from amp.parser.search import decode
    from amp.parser.search.processors import GrammarLogitsProcessor

    assert getattr(decode.parse_and_score_batch, "grammar_oracle", False)
    lm = load_model(str(saved_tiny_model), device="cpu", dtype="float32")
    prompt = "Human: the man saw a girl\nComputer:"
    clean = decode.beam_search(lm.model, lm.tokenizer, prompt, beams=3, max_new_tokens=12, steps_for=0)
    assert grammar_oracle.checked == 1 and not grammar_oracle.problems
    assert clean.beams and all(b.token_ids for b in clean.beams)

    leaked = torch.arange(3, 40)  # byte tokens (!"#…): wrong almost everywhere in an LF
    real_allowed = GrammarLogitsProcessor.allowed

    def leaky(self, state):  # type: ignore[no-untyped-def]
        ids = real_allowed(self, state)
        return torch.unique(torch.cat([ids, leaked]))

    monkeypatch.setattr(GrammarLogitsProcessor, "allowed", leaky)
    with pytest.raises(AssertionError, match="left the grammar"):
        decode.beam_search(lm.model, lm.tokenizer, prompt, beams=3, max_new_tokens=12, steps_for=0)
    assert grammar_oracle.problems and "is not a prefix" in grammar_oracle.problems[0]
    grammar_oracle.problems.clear()  # expected here; any other violation still fails the test
