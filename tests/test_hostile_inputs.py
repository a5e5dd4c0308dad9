"""Hostile and careless input (issue #12): every front end refuses it with a clear message.

CLI: every subcommand with a table of bad arguments gives exactly one ``error:`` line on
stderr, no traceback, and exit status 2 (usage) or 1 (data); a model folder with its own
Python code is never run without ``--trust-remote-code``, whatever stdin says.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from amp.settings import REPO_ROOT

PROMPT = "Human: every boy saw a cat\nComputer:\n"
LF0 = "exists x . forall y . boy(y) AND cat(x)"


def amp_cli(args: list[str], tmp_path: Path, *, stdin: bytes | None = None,
            env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m amp ARGS`` in a real process (its own cache, offline)."""
    full_env = {**os.environ, "AMP_CACHE_DIR": str(tmp_path / "amp-cache"), "HF_HUB_OFFLINE": "1",
                "PYTHONPATH": str(REPO_ROOT), **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "amp", *args], cwd=tmp_path, env=full_env,
                          input=stdin if stdin is not None else b"", capture_output=True,
                          timeout=timeout, check=False)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def assert_one_error_line(proc: subprocess.CompletedProcess[str], code: int) -> str:
    """Exactly one ``error:`` line on stderr, no traceback, exit ``code``; returns that line."""
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, proc.stderr
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    return errors[0]


# --------------------------------------------------------------------------------------------
# 3. no code execution on stdin


@pytest.fixture
def custom_code_model(saved_tiny_model: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The tiny model with a config whose ``auto_map`` names Python in the folder, and the file
    that Python writes when it is ever imported."""
    folder = tmp_path / "custom-code-model"
    shutil.copytree(saved_tiny_model, folder)
    marker = tmp_path / "custom-code-ran"
    (folder / "custom_model.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
        "from transformers import GPT2Config, GPT2LMHeadModel\n"
        "class CustomConfig(GPT2Config):\n    model_type = 'amp_custom_test'\n"
        "class CustomModel(GPT2LMHeadModel):\n    config_class = CustomConfig\n",
        encoding="utf-8")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["model_type"] = "amp_custom_test"  # unknown to transformers: only the folder's code reads it
    config["auto_map"] = {"AutoConfig": "custom_model.CustomConfig",
                          "AutoModelForCausalLM": "custom_model.CustomModel"}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder, marker


def test_custom_code_never_runs_on_a_y_from_stdin(custom_code_model: tuple[Path, Path], tmp_path: Path) -> None:
    folder, marker = custom_code_model
    (tmp_path / "prompt.txt").write_text(PROMPT, encoding="utf-8")
    proc = amp_cli(["parse", "--model", str(folder), "--prompt-file", "prompt.txt", "--device", "cpu",
                    "--max-new-tokens", "4", "--no-cache"], tmp_path, stdin=b"y\ny\ny\n")
    line = assert_one_error_line(proc, 2)
    assert "--trust-remote-code" in line
    assert not marker.exists(), "the folder's own Python ran"


def test_custom_code_refused_in_the_library(custom_code_model: tuple[Path, Path]) -> None:
    from amp.parser.core.errors import ModelLoadError
    from amp.parser.models.registry import load_model

    folder, marker = custom_code_model
    with pytest.raises(ModelLoadError, match="trust.remote.code"):
        load_model(str(folder), device="cpu")
    assert not marker.exists()


def test_unknown_hub_id_without_network_fails_fast(tmp_path: Path) -> None:
    """No HF_HUB_OFFLINE, a Hub that cannot be reached (a host that does not resolve): one error line
    that says so, long before huggingface_hub's retries would give up."""
    (tmp_path / "prompt.txt").write_text(PROMPT, encoding="utf-8")
    env = {"HF_HUB_OFFLINE": "", "TRANSFORMERS_OFFLINE": "", "HF_ENDPOINT": "http://amp-no-such-host.invalid",
           "HF_HOME": str(tmp_path / "hf")}
    proc = amp_cli(["parse", "--model", "amp-tests/no-such-model", "--prompt-file", "prompt.txt",
                    "--device", "cpu"], tmp_path, env=env, timeout=60)
    line = assert_one_error_line(proc, 2)
    assert "cannot be reached" in line and "HF_HUB_OFFLINE=1" in line
    assert "Retrying" not in proc.stderr  # huggingface_hub's backoff loop (about a minute) never started


# --------------------------------------------------------------------------------------------
# 4 + 6. bounded work; every CLI error is one line


def run_main(args: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    """``python -m amp ARGS`` in this process: (exit status, stdout, stderr); stdin as raw bytes.

    An exception escaping ``main`` is a traceback in a real process: it fails the test."""
    import contextlib
    import io

    from amp.cli import main

    out, err = io.StringIO(), io.StringIO()
    real_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exc:  # argparse's usage errors
                code = int(exc.code or 0)
    finally:
        sys.stdin = real_stdin
    return code, out.getvalue(), err.getvalue()


DEEP_JSON = b"[" * 100_000 + b"]" * 100_000 + b"\n"
LONG_PROMPT = "Human: a boy saw a cat\n" * 10_000  # 230,000 characters, over MAX_PROMPT_CHARS
NOT_UTF8 = b"Human: \xff\xfe a boy\nComputer:\n"

#: (id, argv with MODEL / PROMPT / NOT_UTF8_FILE / LONG_FILE / UNWRITABLE placeholders, stdin, exit, text in the error)
BAD_ARGUMENTS: list[tuple[str, list[str], bytes, int, str]] = [
    ("generate-seed", ["generate", "--type", "pp", "--n", "3", "--seed", "-1"], b"", 2, "--seed"),
    ("generate-n", ["generate", "--type", "pp", "--n", "-3", "--seed", "0"], b"", 2, "--n"),
    ("generate-type", ["generate", "--type", "nope", "--all"], b"", 2, "--type"),
    ("generate-out", ["generate", "--type", "pp", "--all", "--out", "UNWRITABLE/x.jsonl"], b"", 2, "x.jsonl"),
    ("canon-mode", ["canon", "--mode", "nope"], b"", 2, "--mode"),
    ("prompt-seed", ["prompt", "zero-shot", "--type", "pp", "--seed", "-1"], b"", 2, "--seed"),
    ("prompt-mixed-seed", ["prompt", "mixed", "--type", "pp", "--ratio", "0.5", "--seed", "-1"], b"", 2, "--seed"),
    ("prompt-ratio", ["prompt", "mixed", "--type", "pp", "--ratio", "nan", "--seed", "0"], b"", 2, "--ratio"),
    ("prompt-k", ["prompt", "mixed", "--type", "pp", "--ratio", "0.5", "--seed", "0", "--k", "100000"], b"", 2, "--k"),
    ("metrics-deep-json", ["metrics", "--predictions", "-"], DEEP_JSON, 2, "line 1"),
    ("metrics-bytes", ["metrics", "--predictions", "-"], b"\xff\xfe\n", 2, "UTF-8"),
    ("metrics-missing", ["metrics", "--predictions", "no-such-file.jsonl"], b"", 2, "no-such-file"),
    ("metrics-k", ["metrics", "--predictions", "-", "--k", "0"], b"", 2, "--k"),
    ("parse-beams-huge", ["parse", "--model", "MODEL", "--prompt-file", "PROMPT", "--beams", "10000"], b"", 2, "beams"),
    ("parse-beams-zero", ["parse", "--model", "MODEL", "--prompt-file", "PROMPT", "--beams", "0"], b"", 2, "beams"),
    ("parse-max-new-negative", ["parse", "--model", "MODEL", "--prompt-file", "PROMPT", "--max-new-tokens", "-5"],
     b"", 2, "max"),
    ("parse-max-new-zero", ["parse", "--model", "MODEL", "--prompt-file", "PROMPT", "--max-new-tokens", "0"],
     b"", 2, "max"),
    ("parse-max-new-huge", ["parse", "--model", "MODEL", "--prompt-file", "PROMPT", "--max-new-tokens", "100000"],
     b"", 2, "max"),
    ("parse-alpha-nan", ["parse", "--model", "MODEL", "--prompt-file", "PROMPT", "--alpha", "nan"], b"", 2, "alpha"),
    ("parse-alpha-nan-no-cache", ["parse", "--model", "MODEL", "--prompt-file", "PROMPT", "--alpha", "nan",
                                  "--no-cache"], b"", 2, "alpha"),
    ("parse-prompt-not-utf8", ["parse", "--model", "MODEL", "--prompt-file", "NOT_UTF8_FILE"], b"", 2, "UTF-8"),
    ("parse-stdin-not-utf8", ["parse", "--model", "MODEL", "--prompt-file", "-"], NOT_UTF8, 2, "UTF-8"),
    ("parse-prompt-too-long", ["parse", "--model", "MODEL", "--prompt-file", "LONG_FILE"], b"", 2, "characters"),
    ("parse-prompt-folder", ["parse", "--model", "MODEL", "--prompt-file", "."], b"", 2, "prompt file"),
    ("score-lf-bad-bytes", ["score", "--model", "MODEL", "--prompt-file", "PROMPT", "--lf", "exists x . m\udcff(x)"],
     b"", 2, "--lf"),
    ("score-lf-too-long", ["score", "--model", "MODEL", "--prompt-file", "PROMPT", "--lf", "man(x) AND " * 3000
                           + "man(x)"], b"", 2, "characters"),
    ("score-too-many-lfs", ["score", "--model", "MODEL", "--prompt-file", "PROMPT", *["--lf", LF0] * 65], b"", 2,
     "LFs"),
    ("influence-prompt-not-utf8", ["influence", "--model", "MODEL", "--prompt-file", "NOT_UTF8_FILE"], b"", 2, "UTF-8"),
    ("influence-prompt-folder", ["influence", "--model", "MODEL", "--prompt-file", "."], b"", 2, "prompt file"),
    ("influence-deep-json", ["influence", "--model", "MODEL", "--prompt-file", "-"],
     b'{"examples": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 2, "nests too deeply"),
    ("influence-prompt-too-long", ["influence", "--model", "MODEL", "--prompt-file", "LONG_FILE"], b"", 2,
     "characters"),
    ("influence-not-a-prompt", ["influence", "--model", "MODEL", "--prompt-file", "-"], b"a boy saw a cat\n", 2,
     "does not end with the test block"),
    ("parse-json-not-a-prompt", ["parse", "--model", "MODEL", "--prompt-file", "-"], b'{"sentence": "a boy"}', 2,
     "not a prompt"),
    ("attribute-prompt-not-utf8", ["attribute", "--model", "MODEL", "--prompt-file", "NOT_UTF8_FILE"], b"", 2,
     "UTF-8"),
    ("attribute-deep-json", ["attribute", "--model", "MODEL", "--prompt-file", "-"],
     b'{"examples": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 2, "nests too deeply"),
    ("attribute-steps", ["attribute", "--model", "MODEL", "--prompt-file", "PROMPT", "--steps", "100000"], b"", 2,
     "--steps"),
    ("v1-ratios", ["v1-splits", "--out", "out/x", "--ratios", "abc"], b"", 2, "--ratios"),
    ("v1-formats", ["v1-splits", "--out", "out/x", "--formats", "xml"], b"", 2, "--formats"),
    ("reproduce-seed", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--seed", "-1"], b"", 2, "--seed"),
    ("reproduce-beams", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--beams", "10000"], b"", 2, "beams"),
    ("reproduce-samples", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--method", "sampling", "--samples", "0"], b"", 2,
     "samples"),
    ("reproduce-temperature-zero", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--method", "sampling", "--temperature", "0"],
     b"", 2, "temperature"),
    ("reproduce-temperature-nan", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--method", "sampling", "--temperature", "nan"],
     b"", 2, "temperature"),
    ("reproduce-batch", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--batch-size", "0"], b"", 2, "batch"),
    ("reproduce-batch-huge", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--batch-size", "100000"], b"", 2, "batch"),
    ("reproduce-max-new", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--max-new-tokens", "-5"], b"", 2, "max"),
    ("reproduce-width", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--method", "distinct", "--width", "100000"], b"", 2,
     "width"),
    ("reproduce-k", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--k", "-1"], b"", 2, "--k"),
    ("reproduce-types", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--types", "nope"], b"", 2, "nope"),
    ("reproduce-out", ["reproduce", "--model", "MODEL", "--n-zero", "1", "--n-few", "0", "--out",
                       "UNWRITABLE/report"], b"", 2, "report"),
    ("serve-port", ["serve", "--port", "70000"], b"", 2, "port"),
    ("serve-replicas", ["serve", "--replicas", "0"], b"", 2, "replicas"),
    ("serve-batch", ["serve", "--batch-size", "0"], b"", 2, "batch"),
    ("demo-pack-sentence", ["demo-pack", "--out", "pack.zip", "--model", "MODEL", "--sentence", "<b>not</b> a pool one"],
     b"", 2, "not a pool sentence"),
    ("demo-pack-out", ["demo-pack", "--out", "UNWRITABLE/x.zip", "--model", "MODEL"], b"", 2, "does not exist"),
    ("demo-pack-dtype", ["demo-pack", "--out", "pack.zip", "--dtype", "int3"], b"", 2, "--dtype"),
]


@pytest.mark.parametrize(("argv", "stdin", "code", "needle"), [row[1:] for row in BAD_ARGUMENTS],
                         ids=[row[0] for row in BAD_ARGUMENTS])
def test_cli_bad_arguments_give_one_error_line(argv: list[str], stdin: bytes, code: int, needle: str,
                                               saved_tiny_model: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prompt.txt").write_text(PROMPT, encoding="utf-8")
    (tmp_path / "not-utf8.txt").write_bytes(NOT_UTF8)
    (tmp_path / "long.txt").write_text(LONG_PROMPT, encoding="utf-8")
    blocker = tmp_path / "a-file"  # a path under a regular file cannot be created, even by root
    blocker.write_text("x", encoding="utf-8")
    swap = {"MODEL": str(saved_tiny_model), "PROMPT": "prompt.txt", "NOT_UTF8_FILE": "not-utf8.txt",
            "LONG_FILE": "long.txt"}
    args = [swap.get(a, a).replace("UNWRITABLE", str(blocker)) for a in argv]
    if argv[0] == "v1-splits":
        args[args.index("--out") + 1] = str(tmp_path / "v1")
    rc, out, err = run_main(args, stdin)
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert rc == code, (rc, err)
    assert needle in errors[0], errors[0]
    if argv[0] == "reproduce":
        assert not list(tmp_path.glob("reproduce-*")) and "zero-shot:" not in err  # refused before running


# --------------------------------------------------------------------------------------------
# 5. deep or huge LFs


def _deep_lfs(levels: int) -> dict[str, tuple[str, str]]:
    """LFs nested ``levels`` deep, by brackets, by quantifiers and in Lisp: {name: (text, fmt)}."""
    quantified = " ".join(f"exists v{i} ." for i in range(levels - 1)) + " man(v0)"
    return {
        "brackets": ("exists x . " + "( man(x) AND " * (levels - 2) + "boy(x)" + " )" * (levels - 2), "fol"),
        "quantifiers": (quantified, "fol"),
        "lisp": ("( exists x " + "( AND ( man x ) " * (levels - 2) + "( boy x )" + " )" * (levels - 2) + " )",
                 "lisp"),
    }


@pytest.mark.parametrize("shape", ["brackets", "quantifiers", "lisp"])
def test_too_deep_lf_is_a_typed_error(shape: str) -> None:
    from amp.logic.errors import LFParseError
    from amp.logic.reader import parse_lf

    text, fmt = _deep_lfs(200)[shape]
    with pytest.raises(LFParseError, match="nested more than 100 levels"):
        parse_lf(text, fmt)


def _with_stack_in_use(frames: int, work):  # noqa: ANN001, ANN202 - a test helper
    """Run ``work()`` below ``frames`` frames of the caller (a Streamlit script runs deep in a thread)."""
    return work() if frames == 0 else _with_stack_in_use(frames - 1, work)


@pytest.mark.parametrize("shape", ["brackets", "quantifiers", "lisp"])
def test_every_lf_the_reader_accepts_survives_the_recursive_functions(shape: str) -> None:
    """The deepest LF the reader accepts goes through rendering, conversion and every canonical
    mode without RecursionError, with 200 frames of the stack already in use."""
    from amp.logic.canonical import canonical
    from amp.logic.reader import depth, parse_lf
    from amp.logic.render import render
    from amp.logic.vocabulary import MODES
    from amp.parser.core.limits import MAX_LF_DEPTH

    text, fmt = _deep_lfs(MAX_LF_DEPTH)[shape]
    tree = parse_lf(text, fmt)
    assert depth(tree) == MAX_LF_DEPTH

    def work() -> None:
        for out_fmt in ("fol", "lisp"):
            again = parse_lf(render(tree, out_fmt), out_fmt)
            assert depth(again) <= MAX_LF_DEPTH
        for mode in MODES:
            assert canonical(text, mode, fmt)

    _with_stack_in_use(200, work)


def test_long_chain_is_one_junction() -> None:
    """A 30,000-atom chain (352 kB) is read as one n-ary conjunction (no tuple copied per atom)."""
    from amp.logic.ast import Junction
    from amp.logic.reader import parse_lf

    text = "exists x . " + " AND ".join(f"man(x{i % 7}) AND boy(x)" for i in range(15_000))
    tree = parse_lf(text.replace("exists x . ", ""), "fol")
    assert isinstance(tree, Junction) and len(tree.children) == 30_000


def test_canon_keeps_processing_after_a_deep_or_undecodable_line(tmp_path: Path) -> None:
    deep, _ = _deep_lfs(200)["brackets"]
    stdin = (deep + "\n\xff\xfe\nexists x . man(x)\n").encode("utf-8").replace("\xff\xfe".encode(), b"\xff\xfe")
    proc = amp_cli(["canon"], tmp_path, stdin=stdin)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("ERROR: ") and "nested more than" in lines[0]
    assert lines[1].startswith("ERROR: ") and "UTF-8" in lines[1]
    assert lines[2] == "exists v0 . man(v0)"


def test_metrics_with_a_deep_gold_lf_is_one_error_line(tmp_path: Path) -> None:
    deep, _ = _deep_lfs(200)["brackets"]
    row = json.dumps({"type": "pp", "predictions": [deep], "lf0": deep, "lf1": LF0})
    code, out, err = run_main(["metrics", "--predictions", "-"], (row + "\n").encode())
    assert code == 2 and "Traceback" not in err
    assert [line for line in err.splitlines() if "error:" in line] == [
        next(line for line in err.splitlines() if "error:" in line)]
    assert "line 1" in err and "nested more than" in err


# --------------------------------------------------------------------------------------------
# 1. teacher sign-in (the pure part; the app's form is tested in tests/app/test_app_hostile.py)


@pytest.mark.parametrize(("address", "loopback"), [
    ("127.0.0.1", True), ("127.5.5.5", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("", False), (None, False), ("192.168.1.20", False),
    ("classroom-box", False),
])
def test_which_addresses_are_loopback(address: str | None, loopback: bool) -> None:
    from amp.classroom.teacher_auth import listens_on_loopback

    assert listens_on_loopback(address) is loopback


def test_required_passphrase() -> None:
    from amp.classroom.teacher_auth import ENV, generated_passphrase, passphrase_matches, required_passphrase

    assert required_passphrase("127.0.0.1", {}) is None  # the laptop case: open
    assert required_passphrase("127.0.0.1", {ENV: "s3cret phrase"}) == "s3cret phrase"
    assert required_passphrase("0.0.0.0", {ENV: "s3cret phrase"}) == "s3cret phrase"
    generated = required_passphrase("0.0.0.0", {})
    assert generated == generated_passphrase() and len(generated) >= 20  # one per process
    assert passphrase_matches("s3cret phrase", "s3cret phrase")
    assert not passphrase_matches("s3cret phras", "s3cret phrase") and not passphrase_matches("", "x")


def test_model_folder_error_never_lists_the_folder(tmp_path: Path) -> None:
    from amp.parser.core.errors import ModelLoadError
    from amp.parser.models.spec import resolve_spec

    (tmp_path / ".bashrc").write_text("x", encoding="utf-8")
    (tmp_path / "secret-notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(ModelLoadError) as caught:
        resolve_spec(str(tmp_path))
    assert "no config.json" in str(caught.value)
    assert ".bashrc" not in str(caught.value) and "secret-notes" not in str(caught.value)


# --------------------------------------------------------------------------------------------
# 8. models unload


def test_model_memo_is_bounded_and_evicted_models_are_freed(saved_tiny_model: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Three parsers of three models, a memo of two: the first model's weights are freed (its
    weak reference dies after gc) although its Parser is still alive, and it reloads on demand."""
    import gc
    import weakref

    from amp.parser import Parser
    from amp.parser.models import registry as model_registry

    monkeypatch.setenv("AMP_MAX_MODELS", "2")
    model_registry.unload_models()
    parsers = [Parser(str(saved_tiny_model), device="cpu", dtype=dt, cache=False)
               for dt in ("float32", "bfloat16", "float16")]
    first = parsers[0].load()
    assert first is not None
    weights = weakref.ref(first.model)
    del first
    for p in parsers[1:]:
        p.load()
    gc.collect()
    assert len(model_registry.loaded_models()) == 2
    assert weights() is None, "an evicted model stayed in memory"
    assert not parsers[0].loaded
    assert parsers[0].parse(PROMPT, beams=1, max_new_tokens=2).beams  # loads again when needed
    assert len(model_registry.loaded_models()) == 2
    model_registry.unload_models()


# --------------------------------------------------------------------------------------------
# 9. cache edge cases

_FIFO_READER = """
import json, os, sys, warnings
from amp.cache import ResultCache
cache = ResultCache(sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(json.dumps({"value": cache.get("k"), "warned": [str(w.message) for w in caught]}))
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_value_file_is_a_miss_not_a_hang(tmp_path: Path) -> None:
    import sqlite3

    from amp.cache import ResultCache

    folder = tmp_path / "results"
    cache = ResultCache(folder)
    cache.set("k", {"blob": "y" * 100_000}, model="m1")  # large: stored in a value file
    cache.close()
    with sqlite3.connect(folder / "cache.db") as con:
        (filename,) = con.execute("SELECT filename FROM Cache WHERE key = 'k'").fetchone()
    (folder / filename).unlink()
    os.mkfifo(folder / filename)
    proc = subprocess.run([sys.executable, "-c", _FIFO_READER, str(folder)], capture_output=True, text=True,
                          timeout=60, check=False, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["value"] is None and any("not a regular file" in w for w in result["warned"])


_READ_ONLY_READER = """
import json, sys, warnings
from amp.cache import ResultCache
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    cache = ResultCache(sys.argv[1])
    value = cache.get("k")
    big = cache.get("big")
    try:
        cache.set("new", {"x": 1})
        wrote = "stored"
    except Exception as exc:
        wrote = type(exc).__name__
print(json.dumps({"value": value, "big": len(big["blob"]) if big else 0, "entries": len(cache), "wrote": wrote,
                  "read_only": cache.read_only, "hint": cache.hint(), "warned": [str(w.message) for w in caught]}))
"""


def test_read_only_cache_is_still_read(tmp_path: Path) -> None:
    """A cache folder on a read-only mount (a private mount namespace: root ignores file modes) is
    read — small and large values — and says why nothing new is stored."""
    from amp.cache import ResultCache

    folder = tmp_path / "results"
    cache = ResultCache(folder)
    cache.set("k", {"a": 1}, model="m1")
    cache.set("big", {"blob": "y" * 100_000}, model="m1")
    cache.close()
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) for a read-only mount")
    script = tmp_path / "reader.py"
    script.write_text(_READ_ONLY_READER, encoding="utf-8")
    command = (f"mount --bind -o ro '{folder}' '{folder}' && touch '{folder}/probe' 2>/dev/null && exit 9; "
               f"exec '{sys.executable}' '{script}' '{folder}'")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", command], capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    if proc.returncode != 0 and "mount" in proc.stderr:
        pytest.skip(f"no private read-only mount here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["value"] == {"a": 1} and result["big"] == 100_000 and result["entries"] == 2
    assert result["read_only"] and result["wrote"] == "CacheError"
    assert "read-only" in result["hint"] and "are read" in result["hint"]
    assert any("read-only" in w for w in result["warned"])


# --------------------------------------------------------------------------------------------
# 7. demo packs


def _pack_with_overlap(tmp_path: Path) -> tuple[Path, object, list[str]]:
    """A pack of ten results (four large: value files) and a target cache that already holds two
    of its keys with the teacher's own values, plus one more result."""
    from amp.cache import ResultCache
    from amp.teaching.demo_pack import export_pack

    keys = [ResultCache.key("note", prompt=f"Human: s{i}\nComputer:", model="m") for i in range(11)]
    source = ResultCache(tmp_path / "source")
    for i, key in enumerate(keys[:10]):
        noise = "".join(hashlib.sha256(f"{i}/{j}".encode()).hexdigest() for j in range(1_600))  # ~100 kB, incompressible
        source.set(key, {"blob": noise if i % 3 == 0 else f"pack {i}"}, model="m")
    pack = tmp_path / "pack.zip"
    export_pack(source, None, pack)
    target = ResultCache(tmp_path / "target")
    for key in (keys[1], keys[3], keys[10]):
        target.set(key, {"blob": "the teacher's own result"}, model="m")
    return pack, target, keys


def _state(cache, keys: list[str]) -> tuple:  # noqa: ANN001
    files = sorted(str(p.relative_to(cache.directory)) for p in cache.directory.rglob("*.val"))
    return {k: cache.get(k) for k in keys}, cache.tagged_keys(), files


def test_demo_pack_import_failing_half_way_leaves_the_cache_exactly_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from amp.cache import JSONTextDisk
    from amp.errors import AmpError
    from amp.teaching.demo_pack import import_pack

    pack, target, keys = _pack_with_overlap(tmp_path)
    before = _state(target, keys)
    real_store = JSONTextDisk.store
    calls = {"n": 0}

    def disk_full_from_the_seventh_write(self: JSONTextDisk, value: object, read: bool, key: object = None) -> tuple:
        calls["n"] += 1
        if calls["n"] >= 7:  # and it stays full: an undo that writes fails too
            raise OSError(28, "No space left on device")
        return real_store(self, value, read, key=key)

    monkeypatch.setattr(JSONTextDisk, "store", disk_full_from_the_seventh_write)
    with pytest.raises(AmpError):
        import_pack(pack, target)
    monkeypatch.setattr(JSONTextDisk, "store", real_store)
    assert _state(target, keys) == before


def test_demo_pack_never_replaces_local_results(tmp_path: Path) -> None:
    from amp.teaching.demo_pack import import_pack

    pack, target, keys = _pack_with_overlap(tmp_path)
    info = import_pack(pack, target)
    assert info.replaced == 2  # already present: kept
    assert target.get(keys[1]) == target.get(keys[3]) == {"blob": "the teacher's own result"}
    assert target.get(keys[2]) == {"blob": "pack 2"} and len(target) == 11


def test_demo_pack_that_expands_a_hundredfold_is_refused(tmp_path: Path) -> None:
    """1 MB of zip must not become 1 GB of cache: the expansion ratio is bounded."""
    from amp.cache import ResultCache
    from amp.teaching.demo_pack import DemoPackError, export_pack, import_pack

    source = ResultCache(tmp_path / "source")
    for i in range(20):
        source.set(ResultCache.key("note", prompt=str(i)), {"padding": " " * 1_000_000}, model="m")
    pack = tmp_path / "bomb.zip"
    export_pack(source, None, pack)
    target = ResultCache(tmp_path / "target")
    with pytest.raises(DemoPackError, match="times its size"):
        import_pack(pack, target)
    assert len(target) == 0


def test_demo_pack_that_would_evict_earlier_results_is_refused(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from amp.cache import ResultCache
    from amp.teaching import demo_pack
    from amp.teaching.demo_pack import DemoPackError, import_pack

    pack, target, keys = _pack_with_overlap(tmp_path)
    monkeypatch.setattr(demo_pack, "SIZE_LIMIT_BYTES", target.volume() + 50_000)  # room for less than the pack
    before = _state(target, keys)
    with pytest.raises(DemoPackError, match="evict earlier results"):
        import_pack(pack, target)
    assert _state(target, keys) == before
    assert isinstance(target, ResultCache)


def test_demo_pack_values_must_have_the_parsers_layout(tmp_path: Path, saved_tiny_model: Path) -> None:
    """A real cached parse round-trips; the same entry with a beam text that is an object (which
    broke Parse & inspect until the cache was cleared) is refused, and nothing is imported."""
    import copy

    from amp.cache import ResultCache
    from amp.parser import Parser
    from amp.teaching.demo_pack import DemoPackError, export_pack, import_pack

    source = ResultCache(tmp_path / "source")
    parser = Parser(str(saved_tiny_model), device="cpu", cache=source)
    parser.parse(PROMPT, beams=2, max_new_tokens=4)
    good = tmp_path / "good.zip"
    export_pack(source, None, good)
    assert import_pack(good, ResultCache(tmp_path / "ok")).entry_count == len(source)

    (key,) = [k for k in source.tagged_keys() if k.startswith("parse:")]
    value = copy.deepcopy(source.get(key))
    value["beams"][0]["text"] = {"not": "text"}
    source.set(key, value, model=source.tagged_keys()[key])
    bad = tmp_path / "bad.zip"
    export_pack(source, None, bad)
    target = ResultCache(tmp_path / "target")
    with pytest.raises(DemoPackError, match="not a result the parser writes"):
        import_pack(bad, target)
    assert len(target) == 0


@pytest.mark.parametrize(("settings", "message"), [
    ({"method": "sampling", "temperature": 0.0}, "temperature"),
    ({"method": "sampling", "temperature": float("nan")}, "temperature"),
    ({"method": "sampling", "n_samples": 0}, "samples"),
    ({"method": "beam", "beams": 10_000}, "beams"),
    ({"method": "distinct", "width": 10_000}, "width"),
    ({"method": "beam", "max_new_tokens": 0}, "max_new_tokens"),
])
def test_research_run_refuses_bad_settings_before_any_item(settings: dict, message: str) -> None:
    """Bad sampling settings used to fail every item and then crash the report: now the run is
    refused up front with a typed error, for the app and the CLI alike."""
    from amp.errors import AmpError
    from amp.evaluation import runs

    class NoModel:
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"the model was used ({name})")

    with pytest.raises(AmpError, match=message):
        list(runs.run_method(NoModel(), [object()], **settings))
