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
    from amp.evaluation.verdict import score_verdict
    from amp.parser.core.results import PairScore

    pair = PairScore.from_dict({k: out["pair"][k] for k in ("lf0", "lf1", "p_lf0", "p_lf0_total")})
    v = score_verdict(None, pair)  # issue #40 point 2: by P(LF0) where the readings part, named
    assert f"verdict: {v.scores_text}" in text  # issue #26 point 5: LF0, LF1 or undecided
    assert out["verdict"] == {"scores_higher": v.preference.value, "measure": "p_lf0_parted", "p_lf0": v.p_lf0,
                              "text": v.scores_text}
    assert out["pair"]["p_lf0_parted"] == pair.p_lf0_parted and out["pair"]["parting_index"] == pair.parting_index
    assert out["pair"]["shared_minimum"] == pair.shared_minimum
    # the three P(LF0)s, the verdict's first, then the paper's min-token one and the total one
    lines = text.splitlines()
    where = [i for i, line in enumerate(lines) if line.startswith((f"P(LF0) = {pair.p_lf0_parted:.4f}  (",
                                                                  f"P(LF0), min-token (paper) = {pair.p_lf0:.4f}  (",
                                                                  f"P(LF0), total prob. = {pair.p_lf0_total:.4f}"))]
    assert len(where) == 3 and where == sorted(where) and lines[where[0]].startswith("P(LF0) = ")
    assert f"from token {pair.parting_index}, where the readings part" in lines[where[0]]


def test_parse_with_both_readings_says_what_the_model_wrote(
    saved_tiny_model: Path, prompt_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #26 point 5: ``amp parse --lf LF0 --lf LF1`` says what the top beam is, then what it scores."""
    from amp.evaluation.matching import match_lf
    from amp.evaluation.p_lf0_measures import PLf0Measure
    from amp.evaluation.verdict import degenerate_sentence, verdict

    args = ["parse", "--model", str(saved_tiny_model), "--prompt-file", str(prompt_file), "--beams", "2",
            "--max-new-tokens", "8", "--device", "cpu", "--lf", LF0, "--lf", LF1]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    top = out["result"]["beams"][0]["text"]
    v = out["verdict"]
    assert v["wrote"] == match_lf(top, LF0, LF1) and v["wrote"] in ("neither", "unparseable")  # 8 tokens: no reading
    expected = verdict(v["wrote"], v["p_lf0"], measure=PLf0Measure.PARTED).text  # issue #40 point 2
    if v["shared_minimum"] is not None:
        expected += " " + degenerate_sentence(v["shared_minimum"], float(v["p_lf0_paper"]))
    assert v["measure"] == "p_lf0_parted" and v["text"] == expected
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
    assert "Traceback" not in proc.stderr and "offline mode is on (HF_HUB_OFFLINE=1)" in proc.stderr


# --- issue #28 point 1: one prompt reader for every command ---------------------------------------


@pytest.mark.parametrize("command", ["parse", "score"])
def test_a_json_prompt_is_the_prompt_it_holds(command: str, saved_tiny_model: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The Prompt builder's JSON (= ``amp prompt --json``) and the rendered text of the same prompt
    give the same numbers: the JSON is read as the prompt, never as a 2,000-token prompt text."""
    from amp.prompts import mixed_prompt
    from amp.teaching.prompt_file import prompt_json, prompt_text

    prompt = mixed_prompt("the man saw the boy with the telescope", 0.5, seed=0, k=2)
    as_json, as_text = tmp_path / "prompt.json", tmp_path / "prompt.txt"
    as_json.write_bytes(prompt_json(prompt))
    as_text.write_text(prompt_text(prompt), encoding="utf-8")
    extra = (["--lf", prompt.gold_lf0, "--lf", prompt.gold_lf1] if command == "score"
             else ["--beams", "2", "--max-new-tokens", "6"])
    outs = []
    for file in (as_json, as_text):
        assert main([command, "--model", str(saved_tiny_model), "--prompt-file", str(file), *extra, "--device", "cpu",
                     "--no-cache", "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    if command == "parse":  # the same readings, from the file's golds and from the test sentence's pool entry
        sources = [out["readings"].pop("source") for out in outs]
        assert sources == ["prompt_file", "pool"]
    assert outs[0] == outs[1]
    if command == "parse":
        rendered_tokens = outs[0]["result"]["prompt_tokens"]
        assert 0 < rendered_tokens < len(as_json.read_text(encoding="utf-8")) // 4  # the JSON was not the prompt


#: (file content, what the error line says): JSON or text that is not a prompt.
NOT_A_PROMPT = [
    ('{"sentences": ["a boy saw a cat"]}\n', "holds JSON that is not a prompt"),
    ('[{"utterance": "a"}]\n', "must hold one JSON object (a prompt), not list"),
    ('{"examples": [], "test_utterance": \n', "is not JSON: Expecting value at line 2"),
    ("42\n", "must hold one JSON object (a prompt), not int"),
    ("a boy saw a cat\n", "does not end with the test block 'Human: <sentence>'"),
]


def _not_a_prompt(command: str, content: str, tmp_path: Path) -> tuple[Path, list[str]]:
    """The file holding ``content`` and the ``command``'s arguments naming it (and a model folder that
    does not exist: the prompt file is refused before any model loads)."""
    file = tmp_path / "not-a-prompt.json"
    file.write_text(content, encoding="utf-8")
    extra = ["--lf", LF0] if command == "score" else []
    return file, [command, "--model", str(tmp_path / "no-model-needed"), "--prompt-file", str(file), *extra]


def _assert_not_a_prompt_error(stderr: str, file: Path, says: str) -> None:
    assert stderr.count("\n") == 1 and stderr.startswith(f"error: the prompt file {str(file)!r}"), stderr
    assert says in stderr and "does not exist" not in stderr


@pytest.mark.parametrize(("content", "says"), NOT_A_PROMPT)
@pytest.mark.parametrize("command", ["parse", "score", "influence"])
def test_a_file_that_is_not_a_prompt_is_one_error_line(command: str, content: str, says: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A JSON file that is not a prompt (or text that is not one) is one ``error:`` line naming the
    file, exit 2 — before any model loads (every command × every content, in this process)."""
    file, argv = _not_a_prompt(command, content, tmp_path)
    assert main(argv) == 2
    _assert_not_a_prompt_error(capsys.readouterr().err, file, says)


@pytest.mark.parametrize(("command", "case"), [("parse", 0), ("score", 2), ("influence", 4)])
def test_a_file_that_is_not_a_prompt_is_one_error_line_in_a_real_process(command: str, case: int,
                                                                         tmp_path: Path) -> None:
    """The same refusal from a real ``python -m amp`` process (one content per command): exit 2, and
    its whole stderr is that one line (no traceback, no warning printed on the way)."""
    content, says = NOT_A_PROMPT[case]
    file, argv = _not_a_prompt(command, content, tmp_path)
    proc = subprocess.run([sys.executable, "-m", "amp", *argv], cwd=REPO_ROOT,
                          env={**os.environ, "AMP_CACHE_DIR": str(tmp_path / "c")}, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    _assert_not_a_prompt_error(proc.stderr, file, says)


# --- issue #28 point 3: --model checked before anything loads ----------------------------------------


@pytest.mark.parametrize(("offline", "says"), [
    ("1", "offline mode is on (HF_HUB_OFFLINE=1)"),
    ("", "unknown model 'defualt'"),
])
def test_a_misspelt_model_is_one_error_line_with_the_close_name(offline: str, says: str, prompt_file: Path,
                                                                tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": offline, "TRANSFORMERS_OFFLINE": "", "HF_HOME": str(tmp_path / "hf"),
           "HF_HUB_CACHE": str(tmp_path / "hf" / "hub"), "AMP_CACHE_DIR": str(tmp_path / "c")}
    proc = subprocess.run(
        [sys.executable, "-m", "amp", "parse", "--model", "defualt", "--prompt-file", str(prompt_file),
         "--device", "cpu"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert says in proc.stderr and "did you mean 'default'?" in proc.stderr
    assert "huggingface.co" not in proc.stderr  # refused before any download was tried
