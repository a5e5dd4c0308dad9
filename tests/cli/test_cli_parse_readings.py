"""``python -m amp parse`` (issue #46 point 6): the readings a prompt carries give the verdict without
``--lf`` (and the output says where they came from); the beams' semantic entropy is in the output."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from amp.cli import main
from amp.evaluation.semantic_entropy import beam_shares, semantic_entropy
from amp.prompts import mixed_prompt
from amp.teaching.prompt_file import prompt_json, prompt_text

SENTENCE = "the man saw the boy with the telescope"
OWN = "a gardener saw a baker"  # no pool sentence: a text prompt of it has no readings


@pytest.fixture(autouse=True)
def _tmp_cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "amp-cache"))


def _parse(model: Path, file: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["parse", "--model", str(model), "--prompt-file", str(file), "--beams", "3",
                 "--max-new-tokens", "8", "--device", "cpu", *extra]) == 0
    return capsys.readouterr().out


def test_a_json_prompt_with_gold_lfs_gets_its_verdict_without_lf(saved_tiny_model: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    prompt = mixed_prompt(SENTENCE, 0.5, seed=0, k=2)
    assert prompt.gold_lf0 and prompt.gold_lf1
    file = tmp_path / "prompt.json"
    file.write_bytes(prompt_json(prompt))
    out = json.loads(_parse(saved_tiny_model, file, capsys, "--json"))
    assert out["readings"] == {"lf0": prompt.gold_lf0, "lf1": prompt.gold_lf1, "source": "prompt_file"}
    given = json.loads(_parse(saved_tiny_model, file, capsys, "--json", "--lf", prompt.gold_lf0,
                              "--lf", prompt.gold_lf1))
    assert given["readings"]["source"] == "lf_option"
    assert out["verdict"] == given["verdict"] and out["verdict"]["text"]  # the same verdict as with --lf twice
    text = _parse(saved_tiny_model, file, capsys)
    assert "readings: LF0 and LF1 from the prompt file's gold_lf0/gold_lf1" in text
    assert "verdict: " in text
    rendered = tmp_path / "prompt.txt"  # the rendered text: the test sentence's readings in its pool
    rendered.write_text(prompt_text(prompt), encoding="utf-8")
    pooled = json.loads(_parse(saved_tiny_model, rendered, capsys, "--json"))
    assert pooled["readings"]["source"] == "pool" and pooled["verdict"] == out["verdict"]
    assert "from the pool's two readings of the test sentence" in _parse(saved_tiny_model, rendered, capsys)


def test_no_readings_no_verdict_and_a_format_mismatch_says_so(saved_tiny_model: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    own = tmp_path / "own.txt"
    own.write_text(f"Human: {OWN}\nComputer:\n", encoding="utf-8")
    out = json.loads(_parse(saved_tiny_model, own, capsys, "--json"))
    assert out["readings"] is None and "verdict" not in out and "readings_note" not in out
    assert "verdict" not in _parse(saved_tiny_model, own, capsys)
    lisp = tmp_path / "lisp.json"
    lisp.write_bytes(prompt_json(mixed_prompt(SENTENCE, 0.5, seed=0, k=2, fmt="lisp")))
    out = json.loads(_parse(saved_tiny_model, lisp, capsys, "--json"))  # parsed in FOL: its Lisp golds do not apply
    assert out["readings"] is None and "verdict" not in out
    assert "LISP" in out["readings_note"] and "--format lisp" in out["readings_note"]
    assert f"readings: {out['readings_note']}" in _parse(saved_tiny_model, lisp, capsys)


def test_semantic_entropy_of_the_beams_is_in_the_json_and_the_text(saved_tiny_model: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    prompt = mixed_prompt(SENTENCE, 0.5, seed=0, k=2)
    file = tmp_path / "prompt.json"
    file.write_bytes(prompt_json(prompt))
    out = json.loads(_parse(saved_tiny_model, file, capsys, "--json"))
    beams = out["result"]["beams"]
    se = out["semantic_entropy"]
    shares = beam_shares([float(b["logprob"]) for b in beams])
    want = semantic_entropy([b["text"] for b in beams], list(shares) or None, prompt.gold_lf0, prompt.gold_lf1)
    assert se == json.loads(json.dumps(want.to_dict()))
    assert se["n"] == (sum(s > 0 for s in shares) if shares else len(beams))
    masses = [c["mass"] for c in se["classes"]]
    assert math.fsum(masses) == pytest.approx(1.0) and masses == sorted(masses, reverse=True)
    assert se["entropy"] == pytest.approx(-math.fsum(m * math.log(m) for m in masses if m > 0))
    assert se["p_lf0"] + se["p_lf1"] + se["p_neither"] == pytest.approx(1.0)
    text = _parse(saved_tiny_model, file, capsys)
    line = next(x for x in text.splitlines() if x.startswith("semantic entropy: "))
    assert f"{se['entropy']:.3f} nats" in line and f"{se['n_meanings']} meaning" in line
    assert f"LF0 {se['p_lf0']:.1%}" in line and f"neither {se['p_neither']:.1%}" in line
    own = tmp_path / "own.txt"  # without readings: the largest meaning's mass instead of LF0/LF1/neither
    own.write_text(f"Human: {OWN}\nComputer:\n", encoding="utf-8")
    out = json.loads(_parse(saved_tiny_model, own, capsys, "--json"))
    assert out["semantic_entropy"]["classes"] and out["semantic_entropy"]["p_lf0"] == 0.0
    line = next(x for x in _parse(saved_tiny_model, own, capsys).splitlines() if x.startswith("semantic entropy: "))
    assert "LF0" not in line and f"largest {out['semantic_entropy']['classes'][0]['mass']:.1%}" in line


@pytest.mark.parametrize("command", ["parse", "influence"])
def test_an_edited_text_in_a_json_prompt_is_one_error_line(command: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #46 point 6: the JSON's ``text`` edited by hand is refused before any model loads (the
    model reads what the fields render), naming the line where they part and the ways out."""
    payload = json.loads(prompt_json(mixed_prompt(SENTENCE, 0.5, seed=0, k=2)))
    payload["text"] = payload["text"].replace(f"Human: {SENTENCE}", "Human: the man saw the girl")
    file = tmp_path / "edited.json"
    file.write_text(json.dumps(payload), encoding="utf-8")
    assert main([command, "--model", str(tmp_path / "no-model-needed"), "--prompt-file", str(file)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"error: the prompt file {str(file)!r}: its \"text\" differs from the prompt")
    assert "'Human: the man saw the girl'" in captured.err and "the fields win" in captured.err
