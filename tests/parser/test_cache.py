"""The JSON-only result cache (amp/cache.py): keys, round trips, corruption, pickles, tags."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import warnings
from pathlib import Path

import diskcache
import pytest

from amp.cache import ResultCache
from amp.code_digest import CODE_VERSION
from amp.errors import CacheError, CacheWarning

BASE = {
    "model": "m1",
    "tokenizer": "t1",
    "grammar": "start: sent",
    "prompt": "Human: a boy saw a girl\nComputer:",
    "lfs": ["exists x . boy(x)"],
    "beams": 5,
    "alpha": 0.7,
    "constrained": True,
    "max_new_tokens": None,
}


@pytest.fixture
def cache(tmp_path: Path) -> ResultCache:
    return ResultCache(tmp_path / "results")


def _db_rows(directory: Path) -> list[tuple]:
    con = sqlite3.connect(directory / "cache.db")
    try:
        return con.execute("SELECT key, mode, value, filename, tag FROM Cache").fetchall()
    finally:
        con.close()


def test_key_is_stable_and_order_independent() -> None:
    k1 = ResultCache.key("parse", **BASE)
    k2 = ResultCache.key("parse", **dict(reversed(list(BASE.items()))))
    assert k1 == k2
    assert k1.startswith("parse:") and len(k1.split(":")[1]) == 64


@pytest.mark.parametrize(
    "field, value",
    [
        ("model", "m2"),
        ("tokenizer", "t2"),
        ("grammar", "start: other"),
        ("prompt", "Human: a girl saw a boy\nComputer:"),
        ("lfs", ["exists y . boy(y)"]),
        ("beams", 4),
        ("alpha", 0.6),
        ("constrained", False),
        ("max_new_tokens", 64),
    ],
)
def test_key_changes_when_any_part_changes(field: str, value: object) -> None:
    assert ResultCache.key("parse", **BASE) != ResultCache.key("parse", **{**BASE, field: value})


def test_key_depends_on_kind_and_code_version(monkeypatch: pytest.MonkeyPatch) -> None:
    k = ResultCache.key("parse", **BASE)
    assert k.split(":")[1] != ResultCache.key("score", **BASE).split(":")[1]
    monkeypatch.setattr("amp.code_digest.CODE_VERSION", CODE_VERSION + "-next")
    assert ResultCache.key("parse", **BASE) != k


def test_key_rejects_non_json_parts() -> None:
    with pytest.raises(TypeError):
        ResultCache.key("parse", thing=object())


def test_round_trip_is_json_text(cache: ResultCache) -> None:
    value = {"beams": [{"text": " exists x . boy(x)\n", "score": -1.5, "finished": True}], "n": 1, "u": "é"}
    key = ResultCache.key("parse", **BASE)
    assert cache.get(key) is None
    cache.set(key, value, model="m1")
    assert cache.get(key) == value
    assert key in cache and len(cache) == 1
    # what is on disk is readable JSON text, not a pickle
    ((_, mode, raw, _, tag),) = _db_rows(cache.directory)
    assert mode == diskcache.core.MODE_RAW and isinstance(raw, str) and tag == "m1"
    assert json.loads(raw)["value"] == value
    # a second object on the same folder (another process) sees it
    assert ResultCache(cache.directory).get(key) == value


def test_large_values_go_to_text_files(cache: ResultCache) -> None:
    value = {"blob": "x" * 100_000}
    cache.set("k", value, model="m1")
    ((_, mode, _, filename, _),) = _db_rows(cache.directory)
    assert mode == diskcache.core.MODE_TEXT
    assert json.loads((cache.directory / filename).read_text(encoding="utf-8"))["value"] == value
    assert cache.get("k") == value


def test_set_rejects_non_json(cache: ResultCache) -> None:
    with pytest.raises(TypeError):
        cache.set("k", {"x": object()})
    with pytest.raises(TypeError):
        cache.set("k", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        cache.set("k", {"x": float("nan")})  # strict JSON: records encode NaN as "nan"


@pytest.mark.parametrize(
    "garbage",
    [b"\x80\x81\xfe\xff garbage", "{not json", json.dumps(["wrong", "layout"]), json.dumps({"schema": 99, "value": {}})],
)
def test_corrupt_entry_is_a_miss_with_warning_and_recompute_works(cache: ResultCache, garbage: object) -> None:
    cache.set("k", {"a": 1}, model="m1")
    con = sqlite3.connect(cache.directory / "cache.db")
    con.execute("UPDATE Cache SET value = ? WHERE key = ?", (garbage, "k"))
    con.commit()
    con.close()
    with pytest.warns(CacheWarning, match="dropped cache entry k"):
        assert cache.get("k") is None
    assert "k" not in cache  # deleted
    cache.set("k", {"a": 2}, model="m1")
    assert cache.get("k") == {"a": 2}


def test_corrupt_value_file_is_a_miss(cache: ResultCache) -> None:
    cache.set("k", {"blob": "y" * 100_000}, model="m1")
    ((_, _, _, filename, _),) = _db_rows(cache.directory)
    (cache.directory / filename).write_bytes(b"\xff\xfe\x00 not utf-8 \x80")
    with pytest.warns(CacheWarning):
        assert cache.get("k") is None
    assert not (cache.directory / filename).exists()


def test_value_file_outside_the_folder_is_refused(cache: ResultCache, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(json.dumps({"schema": 1, "model": None, "value": {"leak": True}}))
    cache.set("k", {"blob": "z" * 100_000}, model="m1")
    con = sqlite3.connect(cache.directory / "cache.db")
    con.execute("UPDATE Cache SET filename = ? WHERE key = ?", (str(secret), "k"))
    con.commit()
    con.close()
    with pytest.warns(CacheWarning, match="outside the cache folder"):
        assert cache.get("k") is None
    assert secret.exists()  # and deleting the row did not delete the foreign file


class _Bomb:
    """Unpickling this creates a marker file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (str(self.marker), "w"))


@pytest.mark.parametrize("big", [False, True])
def test_planted_pickle_is_refused_without_unpickling(
    cache: ResultCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, big: bool
) -> None:
    marker = tmp_path / "pwned"
    key = ResultCache.key("parse", **BASE)
    # plant with diskcache's default (pickling) Disk, as a foreign cache folder would hold it
    planted = diskcache.Cache(str(cache.directory))
    planted.set(key, [_Bomb(marker), "x" * (100_000 if big else 1)])
    planted.close()
    assert not marker.exists()
    assert [row[1] for row in _db_rows(cache.directory)] == [diskcache.core.MODE_PICKLE]

    def no_unpickling(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cache tried to unpickle")

    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    reopened = ResultCache(cache.directory)
    with pytest.warns(CacheWarning, match="refusing"):
        assert reopened.get(key) is None
    assert not marker.exists()
    assert key not in reopened
    reopened.set(key, {"ok": True}, model="m1")
    assert reopened.get(key) == {"ok": True}


def test_clear_by_model_only_removes_that_model(cache: ResultCache) -> None:
    for i in range(3):
        cache.set(f"a{i}", {"i": i}, model="model-a")
    for i in range(2):
        cache.set(f"b{i}", {"i": i}, model="model-b")
    stats = cache.stats()
    assert stats["entries"] == 5 and stats["bytes"] > 0
    assert stats["models"] == {"model-a": 3, "model-b": 2}
    assert cache.clear(model="model-a") == 3
    assert cache.get("a0") is None and cache.get("b1") == {"i": 1}
    assert cache.stats()["models"] == {"model-b": 2}
    assert cache.clear() == 2
    assert len(cache) == 0


def test_unopenable_folder_raises_cache_error(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "cache.db").write_bytes(os.urandom(4096))
    with pytest.raises(CacheError, match="Delete that folder"):
        ResultCache(folder)


def test_default_directory_follows_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "root"))
    cache = ResultCache()
    assert cache.directory == (tmp_path / "root" / "results").resolve()
    assert cache.directory.is_dir()


def test_no_warning_on_plain_miss(cache: ResultCache) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get("absent") is None
