"""``amp score`` / ``amp parse --lf`` (issue #40 point 1, done when): two conjunct orders of one
reading print the same P(LF0); the prompt's test sentence orders the events; the output says the
conjuncts were reordered (docs/paper-notes.md §16, "Conjunct order")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amp.cli import main
from amp.logic.prompt_convention import REORDERED_NOTE

SENTENCE = "the boy ate and drank"
LF0 = "exists x . exists a . exists e . boy(x) AND ate(a) AND agent(a, x) AND drank(e) AND agent(e, x)"
LF1 = "exists x . exists a . exists e . boy(x) AND ( ate(a) AND agent(a, x) ) OR ( drank(e) AND agent(e, x) )"
#: LF0 typed the other way round: drank's block first, the noun last, other letters.
LF0_TYPED = "exists q . exists b . exists c . drank(c) AND agent(c, q) AND agent(b, q) AND ate(b) AND boy(q)"


@pytest.fixture
def prompt_file(tmp_path: Path) -> Path:
    f = tmp_path / "prompt.txt"
    f.write_text(f"Human: {SENTENCE}\nComputer:\n", encoding="utf-8")
    return f


def test_score_prints_one_p_lf0_for_both_conjunct_orders(saved_tiny_model: Path, prompt_file: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    base = ["score", "--model", str(saved_tiny_model), "--prompt-file", str(prompt_file), "--device", "cpu"]
    assert main([*base, "--json", "--lf", LF0, "--lf", LF1]) == 0
    written = json.loads(capsys.readouterr().out)
    assert main([*base, "--json", "--lf", LF0_TYPED, "--lf", LF1]) == 0
    typed = json.loads(capsys.readouterr().out)
    assert typed["scores"][0]["lf"] == written["scores"][0]["lf"] == LF0
    assert typed["pair"]["p_lf0"] == written["pair"]["p_lf0"]
    assert (written["conjuncts_reordered"], typed["conjuncts_reordered"]) == ([False, False], [True, False])
    assert main([*base, "--lf", LF0_TYPED, "--lf", LF1]) == 0
    assert REORDERED_NOTE in capsys.readouterr().out
    assert main([*base, "--lf", LF0, "--lf", LF1]) == 0
    assert REORDERED_NOTE not in capsys.readouterr().out
    # As typed (--literal), the other order is other tokens: another P(LF0).
    literal = "exists x . exists a . exists e . drank(e) AND agent(e, x) AND agent(a, x) AND ate(a) AND boy(x)"
    assert main([*base, "--json", "--literal", "--lf", literal, "--lf", LF1]) == 0
    assert json.loads(capsys.readouterr().out)["pair"]["p_lf0"] != written["pair"]["p_lf0"]


def test_parse_scores_the_readings_in_the_sentences_order(saved_tiny_model: Path, prompt_file: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    base = ["parse", "--model", str(saved_tiny_model), "--prompt-file", str(prompt_file), "--device", "cpu",
            "--beams", "2", "--max-new-tokens", "8", "--json"]
    assert main([*base, "--lf", LF0, "--lf", LF1]) == 0
    written = json.loads(capsys.readouterr().out)["verdict"]
    assert main([*base, "--lf", LF0_TYPED, "--lf", LF1]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == written
