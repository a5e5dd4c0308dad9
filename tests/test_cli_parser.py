"""``python -m amp parse`` / ``score``: output, JSON, stdin, exit codes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from amp.cli import main
from amp.settings import REPO_ROOT

PROMPT = "Human: every boy saw a cat\nComputer:\n"
LF0 = "exists x . forall y . boy(y) AND cat(x)"
LF1 = "forall y . exists x . boy(y) AND cat(x)"
LF1_PROMPT = "forall x . exists y . boy(x) AND cat(y)"


@pytest.fixture(autouse=True)
def _tmp_cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "amp-cache"))


@pytest.fixture
def prompt_file(tmp_path: Path) -> Path:
    f = tmp_path / "prompt.txt"
    f.write_text(PROMPT, encoding="utf-8")
    return f


def test_parse_json(saved_tiny_model: Path, prompt_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["parse", "--model", str(saved_tiny_model), "--prompt-file", str(prompt_file),
               "--beams", "2", "--max-new-tokens", "8", "--device", "cpu", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["device"] == "cpu" and out["dtype"] == "float32"
    assert len(out["result"]["beams"]) == 2 and out["result"]["constrained"] is True


def test_parse_text_from_stdin(
    saved_tiny_model: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(PROMPT))
    rc = main(["parse", "--model", str(saved_tiny_model), "--prompt-file", "-", "--beams", "2",
               "--max-new-tokens", "8", "--device", "cpu", "--no-cache"])
    assert rc == 0
    out = capsys.readouterr().out
    assert out.startswith("model: ") and "beams (constrained, fol, beam 2" in out
    assert " 1. score" in out and ("finished" in out or "cut-off" in out)


def test_score_two_lfs(saved_tiny_model: Path, prompt_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["score", "--model", str(saved_tiny_model), "--prompt-file", str(prompt_file),
            "--lf", LF0, "--lf", LF1, "--device", "cpu"]
    assert main(args) == 0
    text = capsys.readouterr().out
    # Scored in the prompt convention (issue #26): LF1's entities are named x, y in prefix order.
    assert "Scored: the prompt convention" in text
    assert "LF0: " + LF0 in text and "LF1: " + LF1_PROMPT in text
    assert "confidence (min token prob)" in text and "P(LF0) = " in text
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["scores"]) == 2 and 0.0 <= out["pair"]["p_lf0"] <= 1.0
    assert out["scored_spelling"] == "prompt" and out["scores"][1]["lf"] == LF1_PROMPT
    from amp.evaluation.verdict import preference, scores_sentence

    p = out["pair"]["p_lf0"]
    assert f"verdict: {scores_sentence(p)}" in text  # issue #26 point 5: LF0, LF1 or undecided
    assert out["verdict"] == {"scores_higher": preference(p).value, "text": scores_sentence(p)}


def test_parse_with_both_readings_says_what_the_model_wrote(
    saved_tiny_model: Path, prompt_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #26 point 5: ``amp parse --lf LF0 --lf LF1`` says what the top beam is, then what it scores."""
    from amp.evaluation.matching import match_lf
    from amp.evaluation.verdict import verdict

    args = ["parse", "--model", str(saved_tiny_model), "--prompt-file", str(prompt_file), "--beams", "2",
            "--max-new-tokens", "8", "--device", "cpu", "--lf", LF0, "--lf", LF1]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    top = out["result"]["beams"][0]["text"]
    v = out["verdict"]
    assert v["wrote"] == match_lf(top, LF0, LF1) and v["wrote"] in ("neither", "unparseable")  # 8 tokens: no reading
    assert v["text"] == verdict(v["wrote"], v["p_lf0"]).text
    assert v["text"].startswith("The model wrote neither reading")
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "verdict: The model wrote neither reading" in text
    assert main([*args[:-2], "--json"]) == 2  # one reading is not a pair
    assert capsys.readouterr().err.startswith("error: --lf takes the two readings")


def test_score_literal_and_a_teachers_spelling(saved_tiny_model: Path, prompt_file: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Odd letters and quantifier order score as the convention's spelling; ``--literal`` as typed."""
    base = ["score", "--model", str(saved_tiny_model), "--prompt-file", str(prompt_file), "--device", "cpu", "--json"]
    assert main([*base, "--lf", LF0, "--lf", LF1_PROMPT]) == 0
    plain = json.loads(capsys.readouterr().out)
    odd0, odd1 = "exists q . forall b . boy(b) AND cat(q)", "forall p . exists u . boy(p) AND cat(u)"
    assert main([*base, "--lf", odd0, "--lf", odd1]) == 0
    spelled = json.loads(capsys.readouterr().out)
    assert spelled["pair"]["p_lf0"] == plain["pair"]["p_lf0"]
    assert [s["lf"] for s in spelled["scores"]] == [LF0, LF1_PROMPT]
    assert main([*base, "--lf", LF0, "--lf", LF1, "--literal"]) == 0
    literal = json.loads(capsys.readouterr().out)
    assert literal["scored_spelling"] == "literal" and literal["scores"][1]["lf"] == LF1
    assert main([*base[:-1], "--lf", LF0, "--lf", LF1, "--literal"]) == 0
    assert "Scored: the LFs as typed (--literal)" in capsys.readouterr().out
    assert main([*base, "--lf", "exists x . man(x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --lf number 1 does not read") and err.count("\n") == 1


def test_score_lf_outside_grammar(saved_tiny_model: Path, prompt_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["score", "--model", str(saved_tiny_model), "--prompt-file", str(prompt_file),
               "--lf", "exists x . notaword(x)", "--device", "cpu"])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "'notaword' is not in the lexicon — add it as your own word" in err


@pytest.mark.parametrize("command", ["parse", "score"])
def test_model_that_cannot_load(command: str, tmp_path: Path, prompt_file: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    extra = ["--lf", LF0] if command == "score" else []
    rc = main([command, "--model", str(tmp_path / "missing-model"), "--prompt-file", str(prompt_file), *extra])
    assert rc == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1
    assert "does not exist" in captured.err


def test_missing_prompt_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["parse", "--prompt-file", str(tmp_path / "nope.txt")]) == 2
    assert capsys.readouterr().err.startswith("error: cannot read the prompt file")


def test_unknown_hub_model_offline_subprocess(prompt_file: Path, tmp_path: Path) -> None:
    """A real process: one error line, exit 2, no traceback, no network wait."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"),
           "AMP_CACHE_DIR": str(tmp_path / "c")}
    proc = subprocess.run(
        [sys.executable, "-m", "amp", "parse", "--model", "amp-tests/no-such-model", "--prompt-file",
         str(prompt_file), "--device", "cpu"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: could not load Hugging Face model 'amp-tests/no-such-model'")
    assert "Traceback" not in proc.stderr and "No network" in proc.stderr
