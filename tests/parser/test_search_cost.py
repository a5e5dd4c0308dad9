"""The search cost bound, prompts × beams × tokens (issue #27 item 7), in the library and the CLI.

Each bound alone admitted 64 beams × 1,024 tokens, a search that held a CPU replica for minutes;
:data:`amp.parser.core.limits.MAX_SEARCH_COST` bounds the product, and the prompt tokens of one
call are bounded by :data:`~amp.parser.core.limits.MAX_CALL_PROMPT_TOKENS`, both before any model
work.  The service's side is in ``tests/serve/test_service.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from amp.cli import main
from amp.parser.core import limits
from amp.parser.core.errors import RequestTooLarge
from amp.parser.core.results import BatchItem
from amp.parser.parser import Parser
from amp.parser.search.settings import SearchSettings

PROMPT = "Human: the man saw a girl\nComputer:"


def test_the_product_of_the_bounds_is_bounded_and_named():
    with pytest.raises(RequestTooLarge, match=r"1 prompt\(s\) × 64 beams × 1024 tokens = 65,536 .*MAX_SEARCH_COST"):
        SearchSettings(beams=64, max_new_tokens=1024)
    assert SearchSettings(beams=32, max_new_tokens=1024).beams == 32  # exactly at the bound
    assert SearchSettings(beams=64).beams == 64  # a derived budget counts as its cap, 256 tokens
    assert limits.prompts_per_call(16, None, 8) == 8 and limits.prompts_per_call(32, 1024, 8) == 1
    assert limits.prompts_per_call(5, None, 64) == limits.MAX_SEARCH_COST // (5 * 256)


def test_a_call_over_the_cost_is_refused_before_the_model_loads(saved_tiny_model: Path, tmp_path: Path):
    parser = Parser(str(saved_tiny_model), device="cpu", dtype="float32", cache=None)
    with pytest.raises(RequestTooLarge, match="9 prompt"):
        parser.parse_many([f"{PROMPT} {k}" for k in range(9)], beams=16)
    with pytest.raises(RequestTooLarge, match="MAX_SEARCH_COST"):
        parser.parse_and_score_many([(PROMPT, None, None)] * 3, beams=32, max_new_tokens=512)
    assert not parser.loaded


def test_a_sweep_over_the_cost_per_batch_runs_in_smaller_calls(saved_tiny_model: Path, monkeypatch):
    from amp.parser.batch import run_batch

    monkeypatch.setattr(limits, "MAX_SEARCH_COST", 5 * 256)  # the default search fits; 2 prompts of 20 × 32
    parser = Parser(str(saved_tiny_model), device="cpu", dtype="float32", cache=None)
    sizes: list[int] = []
    real = parser.parse_and_score_many

    def counted(items, *args, **kwargs):
        sizes.append(len(items))
        return real(items, *args, **kwargs)

    monkeypatch.setattr(parser, "parse_and_score_many", counted)
    items = [BatchItem(id=f"i{k}", prompt=f"{PROMPT} {k}", lf0="exists x . man(x)", lf1="exists y . man(y)")
             for k in range(5)]
    results = list(run_batch(parser, items, beams=20, max_new_tokens=32, batch_size=8, ordered=True))
    assert [r.id for r in results] == [it.id for it in items] and all(r.ok for r in results)
    assert sizes == [2, 2, 1]


def test_the_prompt_tokens_of_one_call_are_bounded(monkeypatch):
    limits.check_prompt_tokens([limits.MAX_CALL_PROMPT_TOKENS // 2] * 2)
    with pytest.raises(RequestTooLarge, match="MAX_CALL_PROMPT_TOKENS"):
        limits.check_prompt_tokens([limits.MAX_CALL_PROMPT_TOKENS // 2 + 1] * 2)


def test_the_prompt_token_bound_is_checked_before_the_search(saved_tiny_model: Path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_CALL_PROMPT_TOKENS", 20)
    parser = Parser(str(saved_tiny_model), device="cpu", dtype="float32", cache=None)
    with pytest.raises(RequestTooLarge, match="MAX_CALL_PROMPT_TOKENS"):
        parser.parse_many([PROMPT, PROMPT + " again"], beams=2, max_new_tokens=4)


def test_the_cli_says_so_in_one_line(saved_tiny_model: Path, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    rc = main(["parse", "--model", str(saved_tiny_model), "--prompt-file", str(prompt), "--beams", "64",
               "--max-new-tokens", "1024"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc != 0 and len(err) == 1 and err[0].startswith("error:") and "MAX_SEARCH_COST" in err[0]
