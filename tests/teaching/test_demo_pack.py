"""Portable demo packs (amp.teaching.demo_pack): round trip, and every kind of tampering refused."""

from __future__ import annotations

import hashlib
import json
import pickle
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.teaching.demo_pack import (
    SCHEMA_VERSION,
    DemoPackError,
    PackLimits,
    export_pack,
    import_pack,
    inspect_pack,
)

Members = list[tuple[str, bytes]]


def _key(i: int) -> str:
    """A result key of a kind the parser never reads, so its free-form test values pass the schema
    check (values of the parser's kinds are checked in tests/test_hostile_inputs.py)."""
    return ResultCache.key("note", prompt=f"Human: sentence {i}\nComputer:", model="m")


def _fill(cache: ResultCache) -> dict[str, tuple[dict, str | None]]:
    entries = {
        _key(0): ({"lf": "exists x . boy(x)", "p": 0.5, "tokens": ["exists", " x"]}, "model-a"),
        _key(1): ({"lf": "forall y . dog(y)", "nested": {"a": [1, 2, None]}}, "model-a"),
        _key(2): ({"text": "ünïcode ✓"}, "model-b"),
        _key(3): ({"untagged": True}, None),
    }
    for key, (value, model) in entries.items():
        cache.set(key, value, model=model)
    return entries


def _snapshot(cache: ResultCache) -> dict[str, tuple[dict | None, str | None]]:
    from amp.teaching.demo_pack import _tagged_keys

    return {k: (cache.get(k), tag) for k, tag in _tagged_keys(cache).items()}


@pytest.fixture
def source(tmp_path: Path) -> ResultCache:
    cache = ResultCache(tmp_path / "source")
    _fill(cache)
    return cache


@pytest.fixture
def target(tmp_path: Path) -> ResultCache:
    cache = ResultCache(tmp_path / "target")
    cache.set(_key(99), {"already": "here"}, model="old-model")
    return cache


@pytest.fixture
def pack(source: ResultCache, tmp_path: Path) -> Path:
    path = tmp_path / "demo.zip"
    export_pack(source, None, path, note="week 3 demo")
    return path


# --- round trip -------------------------------------------------------------------------------


def test_round_trip_into_an_empty_cache(source: ResultCache, pack: Path, tmp_path: Path) -> None:
    empty = ResultCache(tmp_path / "empty")
    info = import_pack(pack, empty)
    assert info.entry_count == 4 and info.replaced == 0 and info.note == "week 3 demo"
    assert info.models == ("model-a", "model-b") and info.schema_version == SCHEMA_VERSION
    assert _snapshot(empty) == _snapshot(source)
    assert empty.stats()["models"] == source.stats()["models"]


def test_pack_is_json_only_with_a_full_manifest(pack: Path) -> None:
    with zipfile.ZipFile(pack) as zf:
        names = zf.namelist()
        manifest = json.loads(zf.read("manifest.json"))
        assert names[0] == "manifest.json" and len(names) == 5
        for entry in manifest["entries"]:
            data = zf.read(entry["file"])
            assert hashlib.sha256(data).hexdigest() == entry["sha256"] and len(data) == entry["size"]
            record = json.loads(data)
            assert set(record) == {"key", "model", "value"} and record["key"] == entry["key"]
    assert manifest["format"] == "amp-demo-pack" and manifest["schema_version"] == 1
    assert manifest["entry_count"] == 4 and manifest["models"] == ["model-a", "model-b"]
    assert manifest["created"].endswith("+00:00")


def test_export_selected_keys_and_model_filter(source: ResultCache, tmp_path: Path) -> None:
    info = export_pack(source, [_key(2), _key(0), _key(42)], tmp_path / "some.zip")
    assert info.keys == (_key(2), _key(0)) and info.missing == (_key(42),)
    only_a = export_pack(source, None, tmp_path / "a.zip", models=["model-a"])
    assert set(only_a.keys) == {_key(0), _key(1)} and only_a.models == ("model-a",)
    assert inspect_pack(tmp_path / "a.zip").keys == only_a.keys
    with pytest.raises(DemoPackError, match="not a result key"):
        export_pack(source, ["not-a-key"], tmp_path / "bad.zip")
    assert not (tmp_path / "bad.zip").exists()
    source.set("not-a-result-key", {"x": 1})
    everything = export_pack(source, None, tmp_path / "all.zip")
    assert everything.skipped == ("not-a-result-key",) and everything.entry_count == 4


def test_import_over_existing_entries_counts_replacements(source: ResultCache, pack: Path) -> None:
    assert import_pack(pack, source).replaced == 4


# --- tampering --------------------------------------------------------------------------------


def _members(path: Path) -> tuple[dict, Members]:
    with zipfile.ZipFile(path) as zf:
        members = [(i.filename, zf.read(i)) for i in zf.infolist()]
    manifest = json.loads(dict(members)["manifest.json"])
    return manifest, [(n, d) for n, d in members if n != "manifest.json"]


def _write(path: Path, manifest: dict | bytes | None, members: Members) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names on purpose
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            if manifest is not None:
                zf.writestr("manifest.json", manifest if isinstance(manifest, bytes) else json.dumps(manifest))
            for name, data in members:
                zf.writestr(name, data)
    return path


def _replace_entry(manifest: dict, members: Members, data: bytes, *, fix_manifest: bool) -> Members:
    name = manifest["entries"][0]["file"]
    if fix_manifest:
        manifest["entries"][0]["sha256"] = hashlib.sha256(data).hexdigest()
        manifest["entries"][0]["size"] = len(data)
        manifest["total_bytes"] = sum(e["size"] for e in manifest["entries"])
    return [(n, data if n == name else d) for n, d in members]


def _flip_byte(m: dict, ms: Members) -> tuple[dict, Members]:
    data = ms[0][1]
    i = data.index(b'"value"') + 10
    changed = data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]
    return m, _replace_entry(m, ms, changed, fix_manifest=False)


def _record(m: dict, value: object) -> bytes:
    e = m["entries"][0]
    return json.dumps({"key": e["key"], "model": e["model"], "value": value}).encode()


def _set(m: dict, **fields: object) -> dict:
    m.update(fields)
    return m


def _set_entry(m: dict, **fields: object) -> dict:
    m["entries"][0].update(fields)
    return m


TAMPERS: dict[str, tuple[Callable[[dict, Members], tuple[dict | bytes | None, Members]], str]] = {
    "changed byte in an entry": (_flip_byte, "does not match its sha256"),
    "changed manifest hash": (lambda m, ms: (_set_entry(m, sha256="0" * 64), ms), "does not match its sha256"),
    "extra unlisted file": (lambda m, ms: (m, [*ms, ("entries/999999.json", b"{}")]), "not listed in the manifest"),
    "extra readme": (lambda m, ms: (m, [*ms, ("README.txt", b"hi")]), "not listed in the manifest"),
    "path traversal": (lambda m, ms: (m, [*ms, ("../x", b"{}")]), "unsafe file name '../x'"),
    "absolute path": (lambda m, ms: (m, [*ms, ("/tmp/evil", b"{}")]), "unsafe file name"),
    "nested traversal": (lambda m, ms: (m, [*ms, ("entries/../../x", b"{}")]), "unsafe file name"),
    "duplicate member": (lambda m, ms: (m, [*ms, ms[0]]), "appears twice"),
    "missing entry file": (lambda m, ms: (m, ms[1:]), "missing from the zip"),
    "missing manifest": (lambda m, ms: (None, ms), "no manifest.json"),
    "manifest not JSON": (lambda m, ms: (b"{not json", ms), "manifest.json is not valid JSON"),
    "wrong schema version": (lambda m, ms: (_set(m, schema_version=2), ms), "schema version 2 is not supported"),
    "schema version as string": (lambda m, ms: (_set(m, schema_version="1"), ms), "schema version '1'"),
    "not a demo pack": (lambda m, ms: (_set(m, format="something-else"), ms), "does not describe"),
    "unknown manifest field": (lambda m, ms: (_set(m, run="rm -rf /"), ms), "unknown fields"),
    "entry count lies": (lambda m, ms: (_set(m, entry_count=3), ms), "entry_count 3 does not match"),
    "bad key": (lambda m, ms: (_set_entry(m, key="abc"), ms), "'abc' is not a result key"),
    "non-hex key": (lambda m, ms: (_set_entry(m, key="parse:" + "g" * 64), ms), "is not a result key"),
    "file name outside entries/": (lambda m, ms: (_set_entry(m, file="x.json"), ms), "not of the form"),
    "non-JSON entry": (
        lambda m, ms: (m, _replace_entry(m, ms, b"\x00\x01 not json", fix_manifest=True)),
        "is not valid JSON",
    ),
    "pickled entry": (
        lambda m, ms: (m, _replace_entry(m, ms, pickle.dumps({"value": 1}), fix_manifest=True)),
        "is not valid JSON",
    ),
    "NaN in value": (
        lambda m, ms: (m, _replace_entry(m, ms, _record(m, {"p": float("nan")}), fix_manifest=True)),
        "NaN is not JSON",
    ),
    "value not an object": (
        lambda m, ms: (m, _replace_entry(m, ms, _record(m, [1, 2]), fix_manifest=True)),
        "not a JSON object",
    ),
    "record key differs from manifest": (
        lambda m, ms: (m, _replace_entry(m, ms, json.dumps(
            {"key": _key(7), "model": m["entries"][0]["model"], "value": {}}).encode(), fix_manifest=True)),
        "not those of the manifest",
    ),
}


@pytest.mark.parametrize("case", list(TAMPERS))
def test_tampered_pack_is_refused_and_cache_untouched(case: str, pack: Path, target: ResultCache, tmp_path: Path) -> None:
    tamper, message = TAMPERS[case]
    manifest, members = _members(pack)
    new_manifest, new_members = tamper(manifest, members)
    bad = _write(tmp_path / "tampered.zip", new_manifest, new_members)
    before = _snapshot(target)
    with pytest.raises(DemoPackError, match="nothing was imported") as err:
        import_pack(bad, target)
    assert message in str(err.value)
    assert _snapshot(target) == before


def test_not_a_zip_and_missing_file(tmp_path: Path, target: ResultCache) -> None:
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 definitely not a zip" * 10)
    with pytest.raises(DemoPackError, match="not a readable zip"):
        import_pack(junk, target)
    with pytest.raises(DemoPackError, match="no demo pack file"):
        import_pack(tmp_path / "nowhere.zip", target)
    assert len(target) == 1


def test_oversize_entry_and_zip_bomb_are_refused_before_reading(
    source: ResultCache, tmp_path: Path, target: ResultCache
) -> None:
    source.set(_key(50), {"padding": " " * 200_000}, model="model-a")  # compresses to ~1 kB
    pack = tmp_path / "big.zip"
    export_pack(source, None, pack)
    assert pack.stat().st_size < 5_000
    with pytest.raises(DemoPackError, match="over the limit of 100000"):
        import_pack(pack, target, limits=PackLimits(max_entry_bytes=100_000))
    with pytest.raises(DemoPackError, match="over the limit"):
        import_pack(pack, target, limits=PackLimits(max_total_bytes=50_000))
    with pytest.raises(DemoPackError, match="files, over the limit"):
        import_pack(pack, target, limits=PackLimits(max_entries=2))
    with pytest.raises(DemoPackError, match="over the limit"):
        export_pack(source, None, tmp_path / "refused.zip", limits=PackLimits(max_entry_bytes=100_000))
    assert len(target) == 1 and not (tmp_path / "refused.zip").exists()


def test_failed_write_is_undone(pack: Path, target: ResultCache, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills up on the third value written and stays full: nothing of the pack is kept."""
    from amp.cache import JSONTextDisk

    before = _snapshot(target)
    real_store = JSONTextDisk.store
    calls = {"n": 0}

    def full_disk(self: JSONTextDisk, value: object, read: bool, key: object = None) -> tuple:
        calls["n"] += 1
        if calls["n"] >= 3:
            raise OSError(28, "No space left on device")
        return real_store(self, value, read, key=key)

    monkeypatch.setattr(JSONTextDisk, "store", full_disk)
    with pytest.raises(DemoPackError, match="No space left"):
        import_pack(pack, target)
    monkeypatch.setattr(JSONTextDisk, "store", real_store)
    assert _snapshot(target) == before


def test_value_problem_names_the_field_and_what_is_wrong() -> None:
    """Parser-kind values are checked against their record's schema (amp.records): the problem
    says where (the field path) and what; a value that only re-encodes differently is refused too."""
    import copy

    from amp.teaching.pack_format import value_problem
    from tests.foundation.test_records import FIXTURE

    parse = FIXTURE["inspection"]["parse"]
    key = "parse:" + "0" * 64
    assert value_problem(key, parse) is None
    bad = copy.deepcopy(parse)
    bad["beams"][0]["text"] = {"not": "text"}
    problem = value_problem(key, bad)
    assert problem is not None and "ParseResult" in problem and "beams.0.text" in problem
    extra = {**copy.deepcopy(parse), "surprise": 1}
    assert "layout" in (value_problem(key, extra) or "")
    retyped = copy.deepcopy(parse)
    retyped["beams"][0]["logprob"] = 1  # an int where the parser writes a float
    assert "layout" in (value_problem(key, retyped) or "")
    steps = {"steps": FIXTURE["inspection"]["predicted_steps"]}
    assert value_problem("steps:" + "0" * 64, steps) is None
    assert "samples.1" in (value_problem("sample:" + "0" * 64, {"samples": ["a", 3]}) or "")
    assert value_problem("other:" + "0" * 64, {"anything": [1]}) is None
