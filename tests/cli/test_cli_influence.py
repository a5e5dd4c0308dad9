"""``python -m amp influence`` on the tiny model: JSON and text output, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amp.cli import main
from amp.evaluation.influence import Influence, influence_from_scores
from amp.prompts import mixed_prompt
from amp.teaching.prompt_file import prompt_from_file

SENTENCE = "the man saw the boy with the telescope"


def test_influence_json_and_text(saved_tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["prompt", "mixed", "--sentence", SENTENCE, "--ratio", "0.5", "--seed", "0", "--k", "2",
                 "--json"]) == 0
    file = tmp_path / "prompt.json"
    file.write_text(capsys.readouterr().out)
    prompt = prompt_from_file(file.read_bytes())
    model = ["--model", str(saved_tiny_model), "--device", "cpu"]
    assert main(["influence", "--prompt-file", str(file), *model, "--json"]) == 0
    out = capsys.readouterr()
    inf = json.loads(out.out)["influence"]
    assert [e["utterance"] for e in inf["examples"]] == [e.utterance for e in prompt.examples]
    assert inf["lf0"] == prompt.gold_lf0 and inf["lf1"] == prompt.gold_lf1
    assert "[5/5] pair scores" in out.err  # 2k + 1
    assert main(["influence", "--prompt-file", str(file), *model]) == 0  # text, from the cache
    text = capsys.readouterr().out
    assert f"test sentence: {SENTENCE}" in text and "Spearman" in text
    assert sum(line.lstrip().startswith(("1.", "2.")) for line in text.splitlines()) == 2
    listed = [int(line.split(".")[0]) for line in text.splitlines() if line.lstrip()[:1].isdigit()]
    assert listed == [e.index + 1 for e in Influence.from_dict(inf).ranked()]  # the order of every front end
    rendered = tmp_path / "prompt.txt"  # the rendered text works too: the same examples and labels
    rendered.write_text(prompt.render())
    assert main(["influence", "--prompt-file", str(rendered), *model, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["influence"] == inf


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "is not JSON"),
    ("Human: a\nComputer:", "no examples"),
    ("Human: a boy\nComputer: exists x . boy(x)\n", "does not end with the test block"),
    ("Let's translate.\n\nHuman: a boy\nComputer: exists x . boy(x)\n\nHuman: a girl\nComputer:", "no gold LF0"),
])
def test_bad_prompts_give_one_error_line(content: str, message: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "p.txt"
    file.write_text(content)
    assert main(["influence", "--prompt-file", str(file), "--model", str(tmp_path / "no-model")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0]


def test_text_prompt_keeps_labels_for_flipping() -> None:
    prompt = mixed_prompt(SENTENCE, 0.5, seed=3, k=4)
    assert prompt_from_file(prompt.render().encode()) == prompt
    assert prompt_from_file(json.dumps({**prompt.to_dict(), "text": prompt.render()}).encode()) == prompt


def test_the_text_lists_turns_first_then_by_the_larger_change() -> None:
    """Issue #46 point 6: a large flip is not listed below every removal; a change that turns the
    preferred reading is marked ⇄ and listed first."""
    from amp.cli.influence import format_influence
    from tests.evaluation.test_influence import LF0, LF1, _pair, _prompt

    # base 0.7 (LF0); a: removed 0.75, flipped 0.3 (turns); b: removed 0.9; c: removed 0.72, flipped 0.95
    scores = [_pair(0.7), _pair(0.75), _pair(0.9), _pair(0.72), _pair(0.3), _pair(0.95)]
    lines = format_influence(influence_from_scores(_prompt(), LF0, LF1, "fol", scores))
    rows = [line for line in lines if line.lstrip()[:1].isdigit()]
    assert [int(r.split(".")[0]) for r in rows] == [1, 3, 2]  # a (turns), c (flip 0.25), b (removal 0.2)
    assert "⇄ a" in rows[0] and "⇄" not in rows[1] + rows[2]
