"""bench/gpu_check.py: a quick CPU run on the tiny model fills every phase; cuda without CUDA fails cleanly;
the random-weight shapes, the CUDA = CPU check and the carried folder for an offline GPU machine (issue #33)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "gpu_check.py"


@pytest.fixture(scope="module")
def gpu_check():
    import sys

    spec = importlib.util.spec_from_file_location("gpu_check_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread for these tiny models (two gain nothing and suffer on a busy machine)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny_4096(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tiny_models import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("gpu-check") / "tiny", n_positions=4096)


def test_quick_cpu_run_reports_every_phase(gpu_check, tiny_4096: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "check.json"
    rc = gpu_check.main([
        "--device", "cpu", "--dtype", "float32", "--quick", "--skip-default",
        "--model", str(tiny_4096), "--max-new-tokens", "12", "--json-out", str(out),
    ])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "beam5_b1" in printed and "bw%" in printed and "bandwidth bound" in printed
    data = json.loads(out.read_text())
    assert data["meta"]["device"] == "cpu" and data["meta"]["bandwidth_gbs"] > 0
    assert data["meta"]["torch"] and data["meta"]["transformers"]
    (model,) = data["models"]
    assert "error" not in model and model["weight_bytes"] > 0
    phases = {p["phase"]: p for p in model["phases"]}
    assert set(phases) == {"beam5_b1", "beam5_b2", "score", "joint_b2"}
    for name, p in phases.items():
        assert "error" not in p, (name, p)
        assert p["items"] == 2 and p["seconds"] > 0 and p["items_per_s"] > 0, (name, p)
    for name in ("beam5_b1", "beam5_b2", "joint_b2"):
        p = phases[name]
        assert p["gen_tokens"] > 0 and p["tokens_per_s"] > 0, (name, p)
        assert p["decode_steps"] > 0 and p["steps_per_s"] > 0, (name, p)
        assert p["bw_fraction"] > 0 and p["bw_fraction_forward"] > 0, (name, p)
        assert p["few_shot"] + p["zero_shot"] == 2


def test_cuda_without_cuda_is_one_error_line(gpu_check, monkeypatch, capsys) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    rc = gpu_check.main(["--device", "cuda", "--skip-default", "--model", "whatever"])
    assert rc == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "CUDA" in lines[0]
    assert "Traceback" not in captured.err + captured.out


def test_bandwidth_lookup(gpu_check) -> None:
    assert gpu_check.bandwidth_for("NVIDIA H200", None) == (4800.0, "table (H200)")
    assert gpu_check.bandwidth_for("NVIDIA H100 80GB HBM3", None)[0] == 3350.0
    assert gpu_check.bandwidth_for("NVIDIA A100-SXM4-80GB", None)[0] == 2039.0
    assert gpu_check.bandwidth_for("NVIDIA L4", None)[0] == 300.0
    assert gpu_check.bandwidth_for("NVIDIA L4", 123.0) == (123.0, "--bandwidth-gbs")
    gbs, source = gpu_check.bandwidth_for("Mystery GPU", None)
    assert gbs == 4800.0 and "not in the table" in source


def test_a_failing_phase_is_reported_and_the_rest_run(gpu_check, tiny_4096: Path, tmp_path: Path, monkeypatch,
                                                      capsys) -> None:
    from amp.parser.search import decode

    real = decode.beam_search_batch

    def flaky(model, tokenizer, prompts, **kw):
        if len(prompts) == 2:
            raise RuntimeError("CUDA out of memory (simulated)\nsecond line")
        return real(model, tokenizer, prompts, **kw)

    monkeypatch.setattr(decode, "beam_search_batch", flaky)
    out = tmp_path / "check.json"
    rc = gpu_check.main([
        "--device", "cpu", "--dtype", "float32", "--quick", "--skip-default", "--batch-sizes", "2",
        "--model", str(tiny_4096), "--max-new-tokens", "8", "--json-out", str(out),
    ])
    assert rc == 0
    phases = {p["phase"]: p for p in json.loads(out.read_text())["models"][0]["phases"]}
    assert phases["beam5_b2"]["error"] == "RuntimeError: CUDA out of memory (simulated) second line"
    assert phases["score"]["items_per_s"] > 0 and phases["joint_b2"]["items_per_s"] > 0
    printed = capsys.readouterr().out
    assert "FAILED" in printed and "Traceback" not in printed


# --------------------------------------------------------------------------- random weights (issue #33)

BENCH = SCRIPT.parent
REPO = BENCH.parent

#: The embedded Gemma 3 270M's config as the GGUF describes it (the carried config.json holds the
#: same; the slow test below checks that).
GEMMA_270M = {
    "model_type": "gemma3_text", "hidden_size": 640, "intermediate_size": 2048, "num_hidden_layers": 18,
    "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "query_pre_attn_scalar": 256,
    "sliding_window": 512, "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "vocab_size": 262144,
    "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True, "final_logit_softcapping": None,
    "attn_logit_softcapping": None, "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0,
}


@pytest.fixture(scope="module")
def bench_modules(gpu_check):
    """The bench modules beside gpu_check.py (loading it put bench/ on sys.path)."""
    import gpu_carry
    import gpu_check_parity
    import gpu_check_random

    return gpu_check_random, gpu_check_parity, gpu_carry


@pytest.fixture(scope="module")
def tiny_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Model files for the random shapes: the tiny GPT-2's tokenizer and a Gemma 3 text config."""
    import shutil

    from tiny_models import build_tiny_model

    tiny = build_tiny_model(tmp_path_factory.mktemp("tiny-tok") / "tiny")
    folder = tmp_path_factory.mktemp("tiny-files")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(tiny / name, folder / name)
    (folder / "config.json").write_text(json.dumps(GEMMA_270M), encoding="utf-8")
    return folder


class _VocabOnly:
    """What shape_config reads of a tokenizer: its length and special ids (the real model's)."""

    bos_token_id, eos_token_id, pad_token_id = 2, 1, 0

    def __len__(self) -> int:
        return 262144


def _parameters(config) -> int:
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())


def test_shapes_have_the_sizes_they_claim(bench_modules) -> None:
    rw, _parity, _carry = bench_modules
    from amp.parser.models.embedded import DEFAULT_PARAMETERS

    tok = _VocabOnly()
    own = rw.shape_config(GEMMA_270M, rw.SHAPES["270m"], tok, quick=False)
    assert _parameters(own) == DEFAULT_PARAMETERS == 268_098_176  # the embedded model's own architecture
    assert own.layer_types == (["sliding_attention"] * 5 + ["full_attention"]) * 3
    one = rw.shape_config(GEMMA_270M, rw.SHAPES["1b"], tok, quick=False)
    seven = rw.shape_config(GEMMA_270M, rw.SHAPES["7b"], tok, quick=False)
    assert 0.95e9 <= _parameters(one) <= 1.05e9 and one.num_hidden_layers == 26 and one.vocab_size == 262144
    assert 7.0e9 <= _parameters(seven) <= 7.5e9 and seven.num_hidden_layers == 28
    assert seven.layer_types[5] == "full_attention" and seven.layer_types.count("full_attention") == 4
    cut = rw.shape_config(GEMMA_270M, rw.SHAPES["7b"], tok, quick=True)
    assert cut.num_hidden_layers == 2 and cut.layer_types == ["sliding_attention", "full_attention"]
    assert cut.hidden_size == 3840 and cut.intermediate_size == 15360
    assert rw.parse_shapes("270m, 7b") == ["270m", "7b"]
    with pytest.raises(ValueError, match="unknown shape '3b'"):
        rw.parse_shapes("270m,3b")


def test_pinned_lengths_push_exactly_the_newline_tokens_down(bench_modules, tiny_files: Path) -> None:
    import torch

    rw, _parity, _carry = bench_modules
    tok = rw.load_tokenizer(tiny_files)
    config = rw.shape_config(rw.base_config(tiny_files), rw.SHAPES["tiny"], tok, quick=False)
    model = rw.build_model(config, "cpu", "float32", seed=0)
    again = rw.build_model(config, "cpu", "float32", seed=0)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))
    ids = rw.newline_ids(tok)
    assert ids and all("\n" in tok.decode([i]) for i in ids)
    assert not any("\n" in tok.decode([i]) for i in range(len(tok)) if i not in set(ids))
    x = tok("Human: every boy saw a girl\nComputer:", return_tensors="pt").input_ids
    with torch.inference_mode():
        before = model(x).logits
        handle = rw.pin_lengths(model, ids)
        after = model(x).logits
        handle.remove()
    delta = after - before
    assert torch.allclose(delta[..., ids], torch.full_like(delta[..., ids], -rw.NEWLINE_PENALTY))
    others = torch.ones(delta.shape[-1], dtype=torch.bool)
    others[ids] = False
    assert torch.count_nonzero(delta[..., others]) == 0


def _parity_batches(gpu_check):
    few, zero = gpu_check.plan_items(True)
    return [few[:1], zero[:1]]


def test_cuda_cpu_check_holds_for_the_same_model(gpu_check, bench_modules, tiny_files: Path) -> None:
    rw, parity, _carry = bench_modules
    tok = rw.load_tokenizer(tiny_files)
    record = parity.check("cpu", rw.base_config(tiny_files), tok, _parity_batches(gpu_check), 0, print)
    assert record["ok"] is True and record["items"] == 2
    assert record["beams"] == record["same_beams"] == 10 and record["first_difference"] is None
    assert record["max_abs_diff"] == {"logprob": 0.0, "step_prob": 0.0, "forced_logprob": 0.0, "p_lf0": 0.0}
    assert parity.summary(record).startswith("CUDA = CPU: PASS: 10/10 beams the same on cpu")


def test_cuda_cpu_check_fails_on_a_planted_difference(gpu_check, bench_modules, tiny_files: Path) -> None:
    rw, parity, _carry = bench_modules
    tok = rw.load_tokenizer(tiny_files)
    record = parity.check("cpu", rw.base_config(tiny_files), tok, _parity_batches(gpu_check), 0, print, perturb=0.5)
    assert record["ok"] is False and record["first_difference"]
    assert record["same_beams"] < record["beams"] or max(record["max_abs_diff"].values()) > parity.TOLERANCE
    assert parity.summary(record).startswith("CUDA = CPU: FAILED: ")


def test_a_failed_cuda_cpu_check_marks_the_run_failed(gpu_check, tiny_4096: Path, tmp_path: Path, monkeypatch,
                                                      capsys) -> None:
    failed = {"ok": False, "error": "RuntimeError: planted"}
    monkeypatch.setattr(gpu_check, "run_parity", lambda *a, **k: failed)
    out = tmp_path / "check.json"
    rc = gpu_check.main(["--device", "cpu", "--dtype", "float32", "--quick", "--skip-default", "--batch-sizes", "1",
                         "--model", str(tiny_4096), "--max-new-tokens", "4", "--json-out", str(out)])
    assert rc == 1
    captured = capsys.readouterr()
    assert "CUDA = CPU: FAILED to run (RuntimeError: planted)" in captured.out
    errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
    assert errors == ["error: CUDA = CPU did not hold (above): this run is marked failed"]
    data = json.loads(out.read_text())
    assert data["meta"]["parity"] == failed and data["models"][0]["phases"][0]["items"] == 2


# --------------------------------------------------------------------------- the carried folder

PROBE = ("amp-carry-probe", "1.0")


def _wheel(dest: Path, name: str, version: str) -> Path:
    """A small, valid pure-Python wheel of ``name`` (what pip install --no-index takes)."""
    import base64
    import hashlib
    import zipfile

    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{dist}/__init__.py": f"VERSION = {version!r}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: amp-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
              f"{len(text.encode())}" for path, text in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    file = dest / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(file, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return file


def _standin_download(wheels, dest: Path) -> None:
    for w in wheels:
        _wheel(dest, w.name, w.version)


@pytest.fixture(scope="module")
def standin_carry(bench_modules, tiny_files: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A carried folder built with a stand-in wheel (no network), inside a stand-in checkout
    (``amp`` and ``bench`` linked), as ``run.sh`` expects it at the repository root."""
    _rw, _parity, carry = bench_modules
    repo = tmp_path_factory.mktemp("checkout")
    for name in ("amp", "bench"):
        (repo / name).symlink_to(REPO / name)
    carry.build(repo / "gpu_carry", wheels=[carry.Wheel(*PROBE, "the tests' stand-in")], model_files=tiny_files,
                download=_standin_download, say=print)
    return repo / "gpu_carry"


def test_carry_folder_holds_the_wheels_model_files_and_run_script(bench_modules, standin_carry: Path,
                                                                  tiny_files: Path) -> None:
    import gzip

    _rw, _parity, carry = bench_modules
    files = sorted(str(p.relative_to(standin_carry)) for p in standin_carry.rglob("*") if p.is_file())
    assert files == ["MANIFEST.json", "model/config.json", "model/tokenizer.json.gz", "model/tokenizer_config.json",
                     "run.sh", "wheels/amp_carry_probe-1.0-py3-none-any.whl"]
    assert gzip.decompress((standin_carry / "model/tokenizer.json.gz").read_bytes()) == \
        (tiny_files / "tokenizer.json").read_bytes()
    assert (standin_carry / "run.sh").read_bytes() == (BENCH / "gpu_carry_run.sh").read_bytes()
    assert (standin_carry / "run.sh").stat().st_mode & 0o111
    manifest = json.loads((standin_carry / "MANIFEST.json").read_text())
    assert manifest["total_bytes"] == carry.folder_bytes(standin_carry) <= manifest["limit_bytes"] == 60 * 2**20
    assert [(w["name"], w["version"]) for w in manifest["wheels"]] == [PROBE]
    assert manifest["python"] == "3.12" and manifest["model"]["model_type"] == "gemma3_text"


def test_carry_over_its_limit_fails_and_leaves_nothing(bench_modules, tiny_files: Path, tmp_path: Path) -> None:
    _rw, _parity, carry = bench_modules
    with pytest.raises(carry.CarryError, match=r"gpu_carry/ would hold 0\.0\d MiB, over its 0\.001 MiB limit "
                                               r"\(largest: [\w/.]+ 0\.0\d MiB, "):
        carry.build(tmp_path / "gpu_carry", limit_mib=0.001, wheels=[carry.Wheel(*PROBE, "")], model_files=tiny_files,
                    download=_standin_download, say=print)
    assert list(tmp_path.iterdir()) == []


def test_carry_refuses_a_wrong_or_missing_wheel(bench_modules, tiny_files: Path, tmp_path: Path) -> None:
    _rw, _parity, carry = bench_modules
    wrong = lambda wheels, dest: _wheel(dest, PROBE[0], "2.0")  # noqa: E731
    with pytest.raises(carry.CarryError, match=r"amp_carry_probe-2\.0-py3-none-any\.whl is not version 1\.0"):
        carry.build(tmp_path / "a", wheels=[carry.Wheel(*PROBE, "")], model_files=tiny_files, download=wrong)
    with pytest.raises(carry.CarryError, match=r"expected one wheel of amp-carry-probe==1\.0, found none"):
        carry.build(tmp_path / "b", wheels=[carry.Wheel(*PROBE, "")], model_files=tiny_files,
                    download=lambda wheels, dest: None)
    assert list(tmp_path.iterdir()) == []
    assert carry.wheel_fits(Path("pydantic_core-2.50.5-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"))
    assert not carry.wheel_fits(Path("pydantic_core-2.50.5-cp311-cp311-manylinux_2_17_x86_64.whl"))
    assert not carry.wheel_fits(Path("pydantic_core-2.50.5-cp312-cp312-macosx_11_0_arm64.whl"))


_RECORDER = '''
import atexit, builtins, json, os
_roots = tuple(os.environ["AMP_IMPORT_ROOTS"].split(os.pathsep))
_seen = set()
_original = builtins.__import__

def _record(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and globals and str(globals.get("__file__") or "").startswith(_roots):
        _seen.add(name.partition(".")[0])
    return _original(name, globals, locals, fromlist, level)

builtins.__import__ = _record
atexit.register(lambda: open(os.environ["AMP_IMPORT_LOG"], "w").write(json.dumps(sorted(_seen))))
'''


@pytest.fixture(scope="module")
def carried_run(standin_carry: Path, tmp_path_factory: pytest.TempPathFactory):
    """``bash gpu_carry/run.sh`` on the CPU with the tiny shape, as on the GPU machine: the
    wheels installed into a temporary folder, the tokenizer unpacked from the carried folder.
    A recorder notes every module the project's own code imports."""
    import os
    import subprocess
    import sys

    work = tmp_path_factory.mktemp("carried-run")
    (work / "sitecustomize.py").write_text(_RECORDER, encoding="utf-8")
    checkout = standin_carry.parent
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(work),
           "AMP_IMPORT_ROOTS": os.pathsep.join(str(r / d) for r in (REPO, checkout) for d in ("amp", "bench")),
           "AMP_IMPORT_LOG": str(work / "imports.json")}
    env.pop("OUT", None)
    done = subprocess.run(
        ["bash", str(standin_carry / "run.sh"), "--device", "cpu", "--quick", "--shapes", "tiny", "--threads", "1",
         "--json-out", str(work / "check.json")],
        cwd=str(work), env=env, capture_output=True, text=True, timeout=600, check=False)
    data = json.loads((work / "check.json").read_text()) if (work / "check.json").exists() else None
    imports = json.loads((work / "imports.json").read_text()) if (work / "imports.json").exists() else None
    return done, data, imports


def test_run_sh_installs_the_carried_wheels_and_runs_the_random_shapes(carried_run, bench_modules) -> None:
    rw, _parity, _carry = bench_modules
    done, data, _imports = carried_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    meta = data["meta"]
    assert meta["carried_in_use"] == {PROBE[0]: PROBE[1]}  # installed into the temporary folder and on the path
    assert meta["model_files"]["source"].startswith("the carried folder ")
    assert meta["random_weights"] is True and meta["shapes"] == ["tiny"]
    assert meta["pinned_steps"] == rw.QUICK_PINNED_STEPS == {"few": 12, "zero": 8}
    assert meta["parity"] == {"ok": True, "skipped": "--device cpu: no GPU to compare with the CPU"}
    assert "CUDA = CPU: skipped (--device cpu: no GPU to compare with the CPU)" in done.stdout
    (model,) = data["models"]
    assert model["spec"] == "random:tiny" and model["source"].startswith("random weights (seed 0), tiny")
    phases = {p["phase"]: p for p in model["phases"]}
    assert set(phases) == {"beam5_b1", "beam5_b2", "score", "joint_b2"}
    # Every beam of every item runs to its pinned budget: 5 beams x 12 tokens few-shot, x 8 zero-shot.
    assert (phases["beam5_b1"]["few_shot"], phases["beam5_b1"]["zero_shot"]) == (1, 1)
    assert phases["beam5_b1"]["gen_tokens"] == 5 * 12 + 5 * 8
    assert phases["beam5_b2"]["few_shot"] == phases["joint_b2"]["few_shot"] == 2
    assert phases["beam5_b2"]["gen_tokens"] == phases["joint_b2"]["gen_tokens"] == 2 * 5 * 12
    assert phases["score"]["items"] == 2 and phases["score"]["items_per_s"] > 0
    assert all(p["decode_steps"] > 0 for name, p in phases.items() if name != "score")


def test_every_package_the_check_needs_is_on_the_gpu_machine_or_carried(carried_run, bench_modules) -> None:
    import sys
    from importlib import metadata

    from packaging.requirements import Requirement

    _rw, _parity, carry = bench_modules
    done, _data, imports = carried_run
    assert done.returncode == 0 and imports, done.stderr[-2000:]
    there = carry.BOX_PACKAGES | {carry.normalize(w.name) for w in carry.WHEELS}
    owners = metadata.packages_distributions()
    local = {p.stem for p in BENCH.glob("*.py")} | {"amp"}
    needed = set()
    for name in imports:
        if name in sys.stdlib_module_names or name in local or name == "__future__":
            continue
        assert name in owners, f"{name} is imported by the check but belongs to no installed distribution"
        needed |= {carry.normalize(d) for d in owners[name]}
    assert {"torch", "transformers", "lark", "pydantic", "diskcache"} <= needed
    assert needed <= there, f"neither on the GPU machine nor carried: {sorted(needed - there)}"
    # ... and what the carried packages need in turn (their installed metadata, as on CPython 3.12 Linux).
    env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
           "platform_system": "Linux", "platform_machine": "x86_64", "implementation_name": "cpython",
           "platform_python_implementation": "CPython", "extra": ""}
    for w in carry.WHEELS:
        assert metadata.version(w.name) == w.version, f"the checks here run {w.name} {metadata.version(w.name)}"
        for text in metadata.requires(w.name) or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate(env):
                assert carry.normalize(req.name) in there, f"{w.name} needs {req}, neither there nor carried"


def test_carried_pins_are_the_projects(bench_modules) -> None:
    import tomllib

    _rw, _parity, carry = bench_modules
    pins = {}
    for dep in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]:
        name, _, version = dep.split("#")[0].strip().partition("==")
        pins[carry.normalize(name)] = version
    for w in carry.WHEELS:
        if pins.get(carry.normalize(w.name)):
            assert pins[carry.normalize(w.name)] == w.version, w
    assert {"transformers", "lark", "diskcache"} <= {carry.normalize(w.name) for w in carry.WHEELS}


@pytest.mark.slow
def test_real_carry_build_fits_and_holds_the_embedded_tokenizer(bench_modules, tmp_path: Path) -> None:
    """The real folder: wheels from PyPI for CPython 3.12 manylinux, the embedded model's files."""
    import gzip
    import hashlib
    import zipfile

    from packaging.requirements import Requirement

    from amp.parser.models.embedded import DEFAULT_PARAMETERS, ensure_default_model

    rw, _parity, carry = bench_modules
    converted = ensure_default_model()
    out = tmp_path / "gpu_carry"
    manifest = carry.build(out, say=print)
    assert carry.folder_bytes(out) == manifest["total_bytes"] <= 60 * 2**20
    wheels = sorted(out.glob("wheels/*.whl"))
    assert sorted(carry.wheel_name(w) for w in wheels) == sorted((carry.normalize(w.name), w.version)
                                                               for w in carry.WHEELS)
    assert all(carry.wheel_fits(w) for w in wheels)
    there = carry.BOX_PACKAGES | {carry.normalize(w.name) for w in carry.WHEELS}
    env = {"python_version": "3.12", "sys_platform": "linux", "platform_machine": "x86_64", "extra": ""}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zf:
            text = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        for line in text.splitlines():
            if line.startswith("Requires-Dist:"):
                req = Requirement(line.removeprefix("Requires-Dist:").strip())
                if req.marker is None or req.marker.evaluate(env):
                    assert carry.normalize(req.name) in there, (wheel.name, str(req))
    tokenizer = gzip.decompress((out / "model/tokenizer.json.gz").read_bytes())
    assert hashlib.sha256(tokenizer).hexdigest() == manifest["model"]["tokenizer_sha256"] == \
        hashlib.sha256((converted / "tokenizer.json").read_bytes()).hexdigest()
    unpacked = rw.unpack_carried(out, tmp_path / "unpacked")
    tok = rw.load_tokenizer(unpacked)
    assert len(tok) == 262144
    config = rw.shape_config(rw.base_config(unpacked), rw.SHAPES["270m"], tok, quick=False)
    assert _parameters(config) == DEFAULT_PARAMETERS
    assert {k: getattr(config, k) for k in ("hidden_size", "num_hidden_layers", "head_dim", "sliding_window")} == \
        {k: GEMMA_270M[k] for k in ("hidden_size", "num_hidden_layers", "head_dim", "sliding_window")}
