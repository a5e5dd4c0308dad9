"""``python -m amp canon`` and ``python -m amp metrics`` (amp.cli.canon, amp.cli.metrics)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from amp.cli import main

LF0 = "exists x . forall y . exists a . cow(y) AND dog(x) AND saw(a) AND agent(a, y) AND patient(a, x)"
LF1 = "forall x . exists y . exists a . cow(x) AND dog(y) AND saw(a) AND agent(a, x) AND patient(a, y)"
OTHER = "exists x . exists a . man(x) AND slept(a) AND agent(a, x)"


def _canon(monkeypatch, capsys, text: str, *args: str) -> tuple[int, list[str], str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    code = main(["canon", *args])
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


# ---------------------------------------------------------------------------- canon


def test_canon_lines(monkeypatch, capsys) -> None:
    code, lines, err = _canon(monkeypatch, capsys,
                              "exists x . exists y . man(y) AND boy(x)\n\nexists x.man(x)\n")
    assert code == 0 and err == ""
    assert lines == ["exists v0 . exists v1 . boy(v0) AND man(v1)", "", "exists v0 . man(v0)"]


def test_canon_paper_mode(monkeypatch, capsys) -> None:
    code, lines, _ = _canon(monkeypatch, capsys, "exists x . exists y . man(y) AND boy(x)\n",
                            "--mode", "paper")
    assert code == 0 and lines == ["exists v0 . exists v1 . boy(v0) AND man(v1)"]
    code, lines, _ = _canon(monkeypatch, capsys, "exists x . exists y . man(x) AND boy(y)\n",
                            "--mode", "paper")
    assert lines == ["exists v0 . exists v1 . boy(v1) AND man(v0)"]


def test_canon_lisp_input(monkeypatch, capsys) -> None:
    code, lines, _ = _canon(monkeypatch, capsys, "( exists x ( AND ( man x ) ( boy x ) ) )\n",
                            "--format", "lisp")
    assert code == 0 and lines == ["exists v0 . boy(v0) AND man(v0)"]


def test_canon_errors_in_place(monkeypatch, capsys) -> None:
    code, lines, _ = _canon(monkeypatch, capsys, "exists x . man(x)\nexists x . Dragon(x)\nexists x . man(x)")
    assert code == 1
    assert lines[0] == lines[2] == "exists v0 . man(v0)"
    assert lines[1] == ("ERROR: cannot parse FOL at column 12: found 'Dragon', expected one of: "
                        '"(", "exists", "forall", a predicate')
    code, lines, _ = _canon(monkeypatch, capsys, "exists x . man(y)\n", "--mode", "paper")
    assert code == 1 and lines[0].startswith("ERROR:") and "unbound variable 'y'" in lines[0]


def test_canon_reads_any_words(monkeypatch, capsys) -> None:
    """Words outside the lexicon (the paper's Table 1 uses ``swam``; unconstrained models write
    other variable names) are read and canonicalised in both modes."""
    for mode, expected in (("paper", "exists v0 . swam(v0)"), ("logical", "exists v0 . swam(v0)")):
        code, lines, _ = _canon(monkeypatch, capsys, "exists w . swam(w)\n", "--mode", mode)
        assert code == 0 and lines == [expected]
    code, lines, _ = _canon(monkeypatch, capsys, "exists q . exists r . dragon(r) AND agent(q, Bob)\n")
    assert code == 0 and lines == ["exists v0 . exists v1 . agent(v0, Bob) AND dragon(v1)"]


def test_canon_prompt_mode(monkeypatch, capsys) -> None:
    """``--mode prompt`` (issue #26): the LF in the paper's prompt convention, in the input's format;
    a line that does not read is one ERROR line in its place, exit 1."""
    typed = "exists b . exists q . man(q) AND walked(b) AND agent(b, q)\nexists x . man(x\n"
    code, lines, _ = _canon(monkeypatch, capsys, typed, "--mode", "prompt")
    assert code == 1
    assert lines[0] == "exists x . exists a . man(x) AND walked(a) AND agent(a, x)"
    assert lines[1].startswith("ERROR: cannot parse FOL") and len(lines) == 2
    code, lines, _ = _canon(monkeypatch, capsys, "( exists e ( exists q ( AND ( man q ) ( walked e ) ( agent e q ) ) ) )\n",
                            "--mode", "prompt", "--format", "lisp")
    assert code == 0 and lines == ["( exists x ( exists a ( AND ( man x ) ( walked a ) ( agent a x ) ) ) )"]


def test_canon_prompt_mode_with_the_sentence_prints_one_text_for_both_conjunct_orders(monkeypatch, capsys) -> None:
    """Issue #40: the chicken's LF1 typed in two conjunct orders is one text with ``--sentence``;
    without it, the two unary atoms of one thing keep their written order."""
    typed = ("exists v . exists w . eat(v) AND patient(v, w) AND chicken(w) AND ready(w)\n"
             "exists v . exists w . ready(w) AND chicken(w) AND patient(v, w) AND eat(v)\n")
    code, lines, err = _canon(monkeypatch, capsys, typed, "--mode", "prompt", "--sentence", "the chicken is ready to eat")
    assert code == 0 and err == ""
    assert lines == ["exists x . exists a . chicken(x) AND ready(x) AND eat(a) AND patient(a, x)"] * 2
    code, lines, _ = _canon(monkeypatch, capsys, typed, "--mode", "prompt")
    assert code == 0 and lines == ["exists x . exists a . chicken(x) AND ready(x) AND eat(a) AND patient(a, x)",
                                   "exists x . exists a . ready(x) AND chicken(x) AND eat(a) AND patient(a, x)"]


def test_canon_sentence_needs_prompt_mode(monkeypatch, capsys) -> None:
    code, lines, err = _canon(monkeypatch, capsys, "exists x . man(x)\n", "--sentence", "a man")
    assert code == 2 and lines == []
    assert err.splitlines()[-1].endswith("canon: error: --sentence applies to --mode prompt only")


def test_canon_bad_arguments(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["canon", "--mode", "exact"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_canon_as_a_module() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "amp", "canon"], input="exists x . man(x)\n(\n", text=True,
        capture_output=True, cwd=root, timeout=120, check=False,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stdout.splitlines()[0] == "exists v0 . man(v0)"
    assert done.stdout.splitlines()[1].startswith("ERROR: cannot parse FOL")


# ---------------------------------------------------------------------------- metrics


def _write(tmp_path: Path, rows: list, name: str = "preds.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


ROWS = [
    {"type": "scope", "predictions": [LF1, LF0], "lf0": LF0, "lf1": LF1},
    {"type": "scope", "predictions": [LF0, OTHER], "lf0": LF0, "lf1": LF1},
    {"type": "scope_reverse", "predictions": [LF1, LF0], "lf0": LF0, "lf1": LF1},
    {"type": "scope", "ratio": 1.0, "p_lf0": 1.0, "predictions": [LF0], "lf0": LF0, "lf1": LF1},
    {"type": "scope", "ratio": 0.0, "p_lf0": 0.5, "predictions": [LF0], "lf0": LF0, "lf1": LF1},
    {"type": "scope", "ratio": 0.0, "p_lf0": None, "predictions": ["junk"], "lf0": LF0, "lf1": LF1},
]


def test_metrics_json(tmp_path, capsys) -> None:
    path = _write(tmp_path, ROWS)
    assert main(["metrics", "--predictions", str(path), "--json", "--k", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["k"] == 2 and report["mode"] == "logical" and report["n"] == 6
    zero = report["zero_shot"]
    assert set(zero) == {"scope", "revscope"}  # scope_reverse is revscope, not an empty group
    assert zero["scope"]["zm_k"] == 50.0 and zero["revscope"]["zm_k"] == 100.0
    assert zero["scope"]["top1"]["lf0"] == 0.5 and zero["scope"]["top1"]["lf1"] == 0.5
    few = report["few_shot"]["scope"]
    assert few["ratios"] == [0.0, 1.0] and few["n"] == 3
    # r=1: a0=1, a1=0 → 0;  r=0: a0=1/2, a1=0 → 0.5 + 1 = 1.5;  mean 0.75
    assert few["fdm"] == pytest.approx(0.75)
    # r=1: (1-1)^2 = 0;  r=0: (0.5-0)^2 = 0.25 (the null p_lf0 is skipped);  mean 0.125
    assert few["fim"] == pytest.approx(0.125) and few["fim_n"] == 2
    assert few["top1"]["unparseable"] == pytest.approx(1 / 3)


def test_metrics_text_report(tmp_path, capsys) -> None:
    path = _write(tmp_path, ROWS)
    assert main(["metrics", "--predictions", str(path)]) == 0
    out = capsys.readouterr().out
    assert "ZM_5%" in out and "FDM" in out and "revscope" in out
    assert "range 0-2" in out


def test_metrics_paper_mode(tmp_path, capsys) -> None:
    reordered = "forall x . exists a . exists y . cow(x) AND dog(y) AND saw(a) AND agent(a, x) AND patient(a, y)"
    path = _write(tmp_path, [{"type": "scope", "predictions": [LF0, reordered], "lf0": LF0, "lf1": LF1}])
    assert main(["metrics", "--predictions", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["zero_shot"]["scope"]["zm_k"] == 100.0
    assert main(["metrics", "--predictions", str(path), "--json", "--mode", "paper"]) == 0
    assert json.loads(capsys.readouterr().out)["zero_shot"]["scope"]["zm_k"] == 0.0


def test_metrics_stdin_and_empty(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    assert main(["metrics", "--predictions", "-"]) == 0
    assert "no items" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("{not json", "line 2: not valid JSON"),
        ('["a list"]', "line 2: expected a JSON object"),
        ({"type": "pp", "lf0": LF0, "lf1": LF1}, 'line 2: missing field "predictions"'),
        ({"type": "pp", "predictions": LF0, "lf0": LF0, "lf1": LF1}, "list of strings"),
        ({"type": "pp", "predictions": [], "lf0": "junk", "lf1": LF1}, 'line 2: "lf0": gold LF does not parse'),
        ({"type": "pp", "predictions": [], "lf0": LF0, "lf1": LF1, "ratio": 1.5}, '"ratio"'),
        ({"type": "pp", "predictions": [], "lf0": LF0, "lf1": LF1, "ratio": 0.5, "p_lf0": 2}, '"p_lf0"'),
        ({"type": "", "predictions": [], "lf0": LF0, "lf1": LF1}, '"type"'),
    ],
)
def test_metrics_malformed_line(tmp_path, capsys, row, message: str) -> None:
    path = _write(tmp_path, [ROWS[0], row])
    assert main(["metrics", "--predictions", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("usage:") and "Traceback" not in err


def test_metrics_bad_arguments(tmp_path, capsys) -> None:
    assert main(["metrics", "--predictions", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    path = _write(tmp_path, ROWS)
    for argv in (["--k", "0"], ["--k", "five"], ["--mode", "exact"]):
        with pytest.raises(SystemExit) as info:
            main(["metrics", "--predictions", str(path), *argv])
        assert info.value.code == 2
    with pytest.raises(SystemExit):
        main(["metrics"])
    capsys.readouterr()


def test_metrics_help_documents_the_format(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["metrics", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for field in ('"type"', '"predictions"', '"lf0"', '"lf1"', '"ratio"', '"p_lf0"', "FDM", "0-2"):
        assert field in out
