"""``python -m amp attribute`` on the tiny model: JSON and text output, one-line errors."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path

import pytest

from amp.cli import main
from amp.teaching.prompt_file import prompt_from_file

SENTENCE = "the man saw the boy with the telescope"


def test_attribute_json_and_text(saved_tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["prompt", "mixed", "--sentence", SENTENCE, "--ratio", "0.5", "--seed", "0", "--k", "2",
                 "--json"]) == 0
    file = tmp_path / "prompt.json"
    file.write_text(capsys.readouterr().out)
    prompt = prompt_from_file(file.read_bytes())
    model = ["--model", str(saved_tiny_model), "--device", "cpu"]
    assert main(["attribute", "--prompt-file", str(file), *model, "--steps", "4", "--json"]) == 0
    out = capsys.readouterr()
    attr = json.loads(out.out)["attribution"]
    assert [e["utterance"] for e in attr["examples"]] == [e.utterance for e in prompt.examples]
    assert [w["word"] for w in attr["words"]] == SENTENCE.split()
    assert attr["method"] == "integrated_gradients" and attr["steps"] == 4
    assert sum(w["attribution"] for w in attr["words"]) == pytest.approx(
        sum(t["attribution"] for t in attr["tokens"] if t["word"] is not None))
    assert "[4/4] gradient passes" in out.err
    assert main(["attribute", "--prompt-file", str(file), *model, "--steps", "4", "--influence"]) == 0
    text = capsys.readouterr().out
    assert f"test sentence: {SENTENCE}" in text and "Spearman rho(attribution" in text
    assert "completeness gap" in text


@pytest.mark.parametrize(("extra", "message"), [
    (["--server", "http://127.0.0.1:9"], "needs the model's weights"),
    (["--steps", "0"], "must be from 1 to"),
])
def test_bad_settings_give_one_error_line(extra: list[str], message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "p.txt"
    file.write_text("Human: a boy\nComputer: exists x . boy(x)\n\nHuman: a girl\nComputer:")
    with pytest.raises(SystemExit) if extra[0] == "--steps" else nullcontext():
        code = main(["attribute", "--prompt-file", str(file), *extra])
        assert code != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "error:" in err[-1]

