"""Issue #28 point 3: a model name is checked before anything loads (no network, no torch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from amp.parser.core.errors import ModelLoadError, ModelNameError
from amp.parser.models.names import cached_hub_ids, check_model_name


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real Hugging Face cache folder holding one model's snapshot (amp-tests/cached-model)."""
    root = tmp_path / "hf-hub"
    snapshot = root / "models--amp-tests--cached-model" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (root / "models--amp-tests--empty" / "snapshots").mkdir(parents=True)  # no snapshot: not cached
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    return root


def test_usable_names(hub_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cached_hub_ids() == ["amp-tests/cached-model"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert check_model_name("default").kind == "default"
    assert check_model_name("amp-tests/cached-model").kind == "hub"  # cached: fine offline
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    assert check_model_name(str(tmp_path / "m.gguf")).kind == "gguf"
    monkeypatch.setenv("HF_HUB_OFFLINE", "")
    assert check_model_name("Qwen/Qwen2.5-0.5B").kind == "hub"  # a known id, online
    assert check_model_name("someone/some-model").kind == "hub"  # any org/name online: the Hub decides


@pytest.mark.parametrize("offline", ["1", ""])
def test_a_misspelt_name_suggests_the_close_one(offline: str, hub_cache: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", offline)
    with pytest.raises(ModelNameError, match=r"did you mean 'default'\?") as info:
        check_model_name("defualt")
    assert info.value.suggestions == ("default",)
    assert ("HF_HUB_OFFLINE=1" in str(info.value)) == bool(offline)
    with pytest.raises(ModelNameError, match=r"did you mean 'amp-tests/cached-model'\?"):
        check_model_name("amp-tests/cahced-model")


def test_offline_mode_is_named_for_an_uncached_id(hub_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("Qwen/Qwen2.5-0.5B", "amp-tests/empty", "someone/some-model"):
        with pytest.raises(ModelNameError, match="offline mode is on .HF_HUB_OFFLINE=1. and the local Hugging "
                                                 "Face cache"):
            check_model_name(name)


def test_a_missing_path_stays_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="does not exist") as info:
        check_model_name(str(tmp_path / "no-such-model"))
    assert not isinstance(info.value, ModelNameError)
