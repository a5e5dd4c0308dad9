"""CLI: ``python -m amp generate`` and ``python -m amp prompt`` (exit codes, outputs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from amp.cli import main
from amp.data.generate import find_pair, read_jsonl, sample_pairs
from amp.prompts import Prompt, zero_shot_prompt

ROOT = Path(__file__).resolve().parents[2]


def run_module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amp", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


def run_main(*args: str) -> int:
    """amp.cli.main, with argparse's parse-time SystemExit turned into its code."""
    try:
        return main(list(args))
    except SystemExit as exc:
        return int(exc.code)


def test_generate_pp_all_via_subprocess() -> None:
    out = run_module("generate", "--type", "pp", "--all")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 7072
    first = json.loads(lines[0])
    assert first["surface"] == "the boy saw the girl with the telescope"
    assert first["template_idx"] == 0 and first["type"] == "pp" and "template" not in first


def test_generate_sample_is_seeded(capsys) -> None:
    assert run_main("generate", "--type", "scope", "--n", "3", "--seed", "5") == 0
    first = capsys.readouterr().out
    assert run_main("generate", "--type", "scope", "--n", "3", "--seed", "5") == 0
    assert capsys.readouterr().out == first
    records = [json.loads(line) for line in first.splitlines()]
    assert len(records) == 6
    assert [r["surface"] for r in records[::2]] == [p.surface for p in sample_pairs("scope", 3, 5)]


def test_generate_filters_and_out_file(tmp_path, capsys) -> None:
    path = tmp_path / "d.jsonl"
    code = run_main("generate", "--type", "revscope", "--all", "--template", "revscope/each",
                    "--word", "elephant", "--out", str(path), "--with-template")
    assert code == 0 and capsys.readouterr().out == ""
    records = read_jsonl(path)
    assert records and all(r.template == "revscope/each" and "elephant" in r.surface for r in records)
    assert all(r.type == "scope_reverse" for r in records)
    assert run_main("generate", "--type", "bound", "--all", "--gender", "male") == 0
    assert len(capsys.readouterr().out.splitlines()) == 1680


def test_generate_lisp(capsys) -> None:
    pytest.importorskip("amp.logic.convert")
    assert run_main("generate", "--type", "conj", "--n", "1", "--seed", "0", "--format", "lisp") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(json.loads(x)["lf"].startswith("( ") for x in lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generate", "--type", "nope", "--all"], "invalid choice"),
        (["generate", "--type", "pp", "--n", "3"], "--n needs --seed"),
        (["generate", "--type", "pp"], "one of the arguments --all --n is required"),
        (["generate", "--type", "pp", "--all", "--n", "2", "--seed", "1"], "not allowed"),
        (["generate", "--type", "pp", "--all", "--template", "pp/nope"], "no template 'pp/nope'"),
        (["generate", "--type", "bound", "--n", "5000", "--seed", "1"], "cannot sample"),
        (["prompt", "mixed", "--type", "pp", "--ratio", "1.5", "--seed", "1"], "range [0, 1]"),
        (["prompt", "mixed", "--type", "pp", "--ratio", "0.5"], "--seed"),
        (["prompt", "mixed", "--type", "pp", "--ratio", "0.5", "--seed", "1", "--k", "-2"], "--k"),
        (["prompt", "zero-shot", "--type", "nope", "--seed", "1"], "unknown ambiguity type 'nope'; known: pp"),
        (["prompt", "zero-shot", "--seed", "1"], "give --type or --sentence"),
        (["prompt", "zero-shot", "--seed", "1", "--sentence", "the bird saw the boy"],
         "not an ambiguous sentence"),
        (["prompt", "zero-shot", "--type", "scope", "--seed", "1", "--sentence",
          "a dog spotted each hat"], "is a revscope sentence"),
    ],
)
def test_bad_arguments_exit_2_with_error(args: list[str], message: str, capsys) -> None:
    assert run_main(*args) == 2
    err = capsys.readouterr().err
    assert "error:" in err and message in err and "Traceback" not in err


def test_bad_arguments_via_subprocess_have_no_traceback(capsys) -> None:
    out = run_module("prompt", "mixed", "--type", "pp", "--ratio", "1.5", "--seed", "1")
    assert out.returncode == 2
    assert "error: --ratio must be in the range [0, 1]" in out.stderr and "Traceback" not in out.stderr
    capsys.readouterr()
    # the second in this process (one interpreter start is enough): an exception escaping main fails the test
    assert run_main("generate", "--type", "pp", "--n", "2") == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err


def test_prompt_zero_shot_text_and_gold(capsys) -> None:
    sentence = "Galileo saw Mary with the camera"
    assert run_main("prompt", "zero-shot", "--type", "pp", "--seed", "5", "--sentence", sentence) == 0
    captured = capsys.readouterr()
    expected = zero_shot_prompt(sentence, seed=5)
    assert captured.out == expected.render() + "\n"
    assert captured.err == f"gold LF0: {expected.gold_lf0}\ngold LF1: {expected.gold_lf1}\n"


def test_prompt_zero_shot_samples_a_test_sentence(capsys) -> None:
    assert run_main("prompt", "zero-shot", "--type", "bound", "--seed", "3", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    pair = sample_pairs("bound", 1, 3)[0]
    assert data["test_utterance"] == pair.surface and data["type"] == "bound"
    assert Prompt.from_dict(data).render() == data["text"]
    assert run_main("prompt", "zero-shot", "--type", "bound", "--seed", "3", "--gender", "male",
                    "--json") == 0
    assert " and he " in json.loads(capsys.readouterr().out)["test_utterance"]


@pytest.mark.parametrize("ratio", ["0", "0.3", "1"])
def test_prompt_mixed_json(ratio: str, capsys) -> None:
    args = ["prompt", "mixed", "--type", "conj", "--ratio", ratio, "--seed", "2", "--k", "10", "--json"]
    assert run_main(*args) == 0
    data = json.loads(capsys.readouterr().out)
    labels = [ex["label"] for ex in data["examples"]]
    assert len(labels) == 10 and labels.count(0) == round(10 * float(ratio))
    assert data["test_utterance"] not in {ex["utterance"] for ex in data["examples"]}
    pair = find_pair(data["test_utterance"])
    assert (data["gold_lf0"], data["gold_lf1"]) == (pair.lf0.lf, pair.lf1.lf)
    assert data["text"].endswith(f"Human: {pair.surface}\nComputer:")


def test_prompt_mixed_text_via_subprocess() -> None:
    out = run_module("prompt", "mixed", "--type", "scope", "--ratio", "0.5", "--seed", "1",
                     "--sentence", "each bird held a sweater", "--k", "4")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Let's translate what a human user says into what a computer might say.\n\n\n")
    assert out.stdout.count("Human: ") == 5 and out.stdout.endswith("Human: each bird held a sweater\nComputer:\n")
    assert out.stderr.startswith("gold LF0: exists x . forall y .")


def _mixed_json(capsys, *extra: str) -> dict:
    args = ["prompt", "mixed", "--type", "pp", "--sentence", "Galileo saw Mary with the camera", "--seed", "1",
            "--json", *extra]
    assert run_main(*args) == 0
    return json.loads(capsys.readouterr().out)


def test_prompt_mixed_is_paired_across_ratios(capsys) -> None:
    """Same seed and sentence at ratios 0.2 and 0.8: the same 10 sentences in the same positions
    (the original's paired design, docs/paper-notes.md §11); the 2 LF0 examples at 0.2 are among the 8 at
    0.8 (the first int(10·r) drawn carry LF0)."""
    low, high = _mixed_json(capsys, "--ratio", "0.2"), _mixed_json(capsys, "--ratio", "0.8")
    assert [e["utterance"] for e in low["examples"]] == [e["utterance"] for e in high["examples"]]
    lf0_low = {j for j, e in enumerate(low["examples"]) if e["label"] == 0}
    lf0_high = {j for j, e in enumerate(high["examples"]) if e["label"] == 0}
    assert len(lf0_low) == 2 and len(lf0_high) == 8 and lf0_low < lf0_high
    other = _mixed_json(capsys, "--ratio", "0.8", "--independent-draws")
    assert {e["utterance"] for e in other["examples"]} != {e["utterance"] for e in high["examples"]}
    assert [e["label"] for e in other["examples"]].count(0) == 8
