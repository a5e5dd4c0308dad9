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
    assert main(["attribute", "--prompt-file", str(file), *model, "--steps", "4", "--fixed-steps", "--json"]) == 0
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



def test_attribute_says_whether_the_gap_target_was_met_and_takes_a_baseline(
        saved_tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["prompt", "mixed", "--sentence", SENTENCE, "--ratio", "0.5", "--seed", "0", "--k", "2",
                 "--json"]) == 0
    file = tmp_path / "prompt.json"
    file.write_text(capsys.readouterr().out)
    model = ["--model", str(saved_tiny_model), "--device", "cpu"]
    assert main(["attribute", "--prompt-file", str(file), *model, "--steps", "2", "--max-steps", "6",
                 "--gap-target", "0.000001", "--baseline", "mean", "--json"]) == 0
    out = capsys.readouterr()
    attr = json.loads(out.out)["attribution"]
    assert attr["baseline"] == "mean" and [r["steps"] for r in attr["rungs"]] == [2, 6]
    assert attr["gap_target"] == 0.000001 and attr["steps"] == 6 and attr["rule"] == "midpoint"
    assert "[2/2] gradient passes" in out.err and "[6/6] gradient passes" in out.err  # 2 points, then 4 more
    assert main(["attribute", "--prompt-file", str(file), *model, "--steps", "2", "--max-steps", "6",
                 "--gap-target", "0.000001", "--baseline", "mean"]) == 0
    assert "target was NOT met (tried 2, 6" in capsys.readouterr().out
    assert main(["attribute", "--prompt-file", str(file), *model, "--steps", "2", "--fixed-steps", "--json"]) == 0
    fixed = json.loads(capsys.readouterr().out)["attribution"]
    assert fixed["gap_target"] is None and [r["steps"] for r in fixed["rungs"]] == [2]


def test_attribute_many_sentences_both_methods_with_intervals(saved_tiny_model: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    sentences = tmp_path / "s.txt"
    sentences.write_text("# two pool sentences\nthe man saw the boy with the telescope\n\n"
                         "the boy saw the girl with the binoculars\n")
    table = tmp_path / "units.csv"
    model = ["--model", str(saved_tiny_model), "--device", "cpu"]
    assert main(["attribute", "--many", "--sentences", str(sentences), *model, "--k", "2", "--steps", "2",
                 "--max-steps", "4", "--csv", str(table), "--json"]) == 0
    out = capsys.readouterr()
    many = json.loads(out.out)["many"]
    assert "[4/4] attributions" in out.err
    rows = many["sentences"]
    assert [(r["sentence"], r["method"]) for r in rows] == [
        ("the man saw the boy with the telescope", "input_x_gradient"),
        ("the boy saw the girl with the binoculars", "input_x_gradient"),
        ("the man saw the boy with the telescope", "integrated_gradients"),
        ("the boy saw the girl with the binoculars", "integrated_gradients")]
    units = {u["unit"]: u for u in many["summary"]}
    assert {"np1", "vp1", "np2", "np3", "the", "with"} <= set(units)
    assert units["np3"]["role"] and not units["the"]["role"]
    for name in ("np1", "np3"):  # the mean over the two sentences of each method's value for the role
        for method in ("input_x_gradient", "integrated_gradients"):
            values = [next(v["attribution"] for v in r["units"] if v["unit"] == name) for r in rows
                      if r["method"] == method]
            iv = units[name][method]
            assert iv["n"] == 2 and iv["estimate"] == pytest.approx(sum(values) / 2)
            assert iv["low"] <= iv["estimate"] <= iv["high"]
    the = [next(v for v in r["units"] if v["unit"] == "the") for r in rows]
    assert all(v["words"] == "the the the" for v in the)  # the three "the"s are one unit
    with table.open() as f:
        csv_rows = list(__import__("csv").DictReader(f))
    assert [r["unit"] for r in csv_rows] == [u["unit"] for u in many["summary"]]
    assert float(csv_rows[0]["integrated_gradients_mean"]) == pytest.approx(
        many["summary"][0]["integrated_gradients"]["estimate"])
    assert main(["attribute", "--many", "--template", "pp/visual/a", "--count", "2", *model, "--k", "2",
                 "--steps", "2", "--max-steps", "2"]) == 0
    text = capsys.readouterr().out
    assert "2 sentences, mixed prompts" in text and "signs differ" in text and "Spearman rho" in text


@pytest.mark.parametrize(("extra", "message"), [
    (["--many"], "either --sentences FILE or --template ID"),
    (["--many", "--template", "nothing/at/all"], "names no template"),
    (["--many", "--template", "pp/visual/a", "--ratio", "2"], "outside the range"),
    (["--gap-target", "1.5"], "gap target must be a share"),
    (["--steps", "32", "--max-steps", "16"], "max steps (16) must be at least steps (32)"),
    ([], "required: --prompt-file"),
])
def test_bad_many_and_gap_settings_give_one_error_line(extra: list[str], message: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "p.txt"
    file.write_text("Human: a boy\nComputer: exists x . boy(x)\n\nHuman: a girl\nComputer:")
    args = ["attribute", *extra] if not extra or extra[0] == "--many" else ["attribute", "--prompt-file", str(file),
                                                                            *extra]
    assert main([*args, "--model", "nowhere/no-model"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "error:" in err[-1]
