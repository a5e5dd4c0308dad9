"""Demo packs carry the teacher's own sentences with their results (issue #11 point 1).

An own sentence extends the grammar with its own words: its cached results mean nothing in class
without it, so a pack holds the sentences (``own_sentences.json``, the library's export format),
an import adds them to the library (one it holds already is kept), and a tampered or oversized
sentence file is refused before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.teaching.demo_pack import DemoPackError, export_pack, import_pack, inspect_pack
from amp.teaching.own_library import MAX_SENTENCES, OwnLibrary, library_json
from tests.teaching.test_demo_pack import _fill, _members, _snapshot, _write
from tests.teaching.test_own_sentences import BOOK, DUCK, book, duck


@pytest.fixture
def source(tmp_path: Path) -> ResultCache:
    cache = ResultCache(tmp_path / "source")
    _fill(cache)
    return cache


@pytest.fixture
def own_pack(source: ResultCache, tmp_path: Path) -> Path:
    path = tmp_path / "own.zip"
    info = export_pack(source, None, path, own_sentences=[duck(), book()])
    assert info.own_sentences == (DUCK, BOOK)
    return path


def test_round_trip_adds_the_sentences_to_the_library(own_pack: Path, source: ResultCache, tmp_path: Path) -> None:
    cache, library = ResultCache(tmp_path / "class"), OwnLibrary(tmp_path / "class" / "own.json")
    info = import_pack(own_pack, cache, library=library)
    assert info.own_sentences == (DUCK, BOOK) and info.own_added == (DUCK, BOOK)
    assert library.list() == (duck(), book())  # the same records, field for field
    assert _snapshot(cache) == _snapshot(source)
    assert inspect_pack(own_pack).own_sentences == (DUCK, BOOK)


def test_the_sentences_are_the_library_export_format(own_pack: Path) -> None:
    with zipfile.ZipFile(own_pack) as zf:
        data = zf.read("own_sentences.json")
        manifest = json.loads(zf.read("manifest.json"))
    assert data == library_json([duck(), book()])
    assert manifest["own_sentences"] == {"file": "own_sentences.json", "count": 2, "size": len(data),
                                         "sha256": hashlib.sha256(data).hexdigest()}


def test_a_pack_without_own_sentences_keeps_the_old_manifest(source: ResultCache, tmp_path: Path) -> None:
    export_pack(source, None, tmp_path / "plain.zip", own_sentences=())
    manifest, members = _members(tmp_path / "plain.zip")
    assert "own_sentences" not in manifest and all(n.startswith("entries/") for n, _ in members)
    library = OwnLibrary(tmp_path / "own.json")
    assert import_pack(tmp_path / "plain.zip", ResultCache(tmp_path / "c"), library=library).own_added == ()
    assert not library.path.exists()


def test_a_sentence_the_library_holds_is_kept(own_pack: Path, tmp_path: Path) -> None:
    library = OwnLibrary(tmp_path / "own.json")
    mine = duck(paraphrase0="she bent down")
    library.add(mine)
    info = import_pack(own_pack, ResultCache(tmp_path / "c"), library=library)
    assert info.own_added == (BOOK,)
    assert library.get(DUCK) == mine and library.get(BOOK) == book()
    assert import_pack(own_pack, ResultCache(tmp_path / "c"), library=library).own_added == ()  # again: nothing


def test_without_a_library_the_sentences_are_only_listed(own_pack: Path, tmp_path: Path) -> None:
    info = import_pack(own_pack, ResultCache(tmp_path / "c"))
    assert info.own_sentences == (DUCK, BOOK) and info.own_added == ()


def _tampered(own_pack: Path, tmp_path: Path, data: bytes, *, fix_manifest: bool = True) -> Path:
    manifest, members = _members(own_pack)
    members = [(n, data if n == "own_sentences.json" else d) for n, d in members]
    if fix_manifest:
        manifest["own_sentences"] |= {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return _write(tmp_path / "bad.zip", manifest, members)


@pytest.mark.parametrize(("change", "fix", "message"), [
    (lambda d: d.replace(b"she ducked", b"she ducke!"), False, "does not match its sha256"),
    (lambda d: d + b" ", False, r"\d+ bytes but the manifest says \d+"),
    (lambda d: d.replace(b'"exists a . exists e', b'"exists a . (exists e'), True, "lf0"),
    (lambda d: b"{not json", True, "not JSON"),
    (lambda d: d.replace(b"amp-own-sentences", b"something-else"), True, "not an own-sentence library"),
])
def test_a_tampered_sentence_file_is_refused_and_nothing_written(own_pack: Path, tmp_path: Path, change, fix,
                                                                  message: str) -> None:
    with zipfile.ZipFile(own_pack) as zf:
        data = zf.read("own_sentences.json")
    bad = _tampered(own_pack, tmp_path, change(data), fix_manifest=fix)
    cache, library = ResultCache(tmp_path / "c"), OwnLibrary(tmp_path / "own.json")
    with pytest.raises(DemoPackError, match=message):
        import_pack(bad, cache, library=library)
    assert _snapshot(cache) == {} and not library.path.exists()


def test_manifest_field_and_member_must_agree(own_pack: Path, tmp_path: Path) -> None:
    manifest, members = _members(own_pack)
    without_file = _write(tmp_path / "a.zip", manifest, [(n, d) for n, d in members if n != "own_sentences.json"])
    with pytest.raises(DemoPackError, match="missing from the zip"):
        inspect_pack(without_file)
    unlisted = _write(tmp_path / "b.zip", {k: v for k, v in manifest.items() if k != "own_sentences"}, members)
    with pytest.raises(DemoPackError, match="not listed in the manifest"):
        inspect_pack(unlisted)
    wrong_count = _write(tmp_path / "c.zip", manifest | {"own_sentences": manifest["own_sentences"] | {"count": 3}},
                         members)
    with pytest.raises(DemoPackError, match="holds 2 different sentences but the manifest says 3"):
        inspect_pack(wrong_count)
    extra = _write(tmp_path / "d.zip", manifest | {"own_sentences": manifest["own_sentences"] | {"x": 1}}, members)
    with pytest.raises(DemoPackError, match="exactly the fields"):
        inspect_pack(extra)


def test_a_full_library_refuses_the_import_before_anything_is_written(own_pack: Path, tmp_path: Path) -> None:
    library = OwnLibrary(tmp_path / "own.json")
    library.import_json(library_json([replace(duck(), surface=f"I saw her duck {i}") for i in range(MAX_SENTENCES)]))
    cache = ResultCache(tmp_path / "c")
    with pytest.raises(DemoPackError, match=f"at most {MAX_SENTENCES}"):
        import_pack(own_pack, cache, library=library)
    assert _snapshot(cache) == {} and len(library.list()) == MAX_SENTENCES


def test_export_refuses_what_is_not_an_own_sentence(source: ResultCache, tmp_path: Path) -> None:
    with pytest.raises(DemoPackError, match="OwnSentence"):
        export_pack(source, None, tmp_path / "x.zip", own_sentences=[DUCK])  # type: ignore[list-item]
    assert not (tmp_path / "x.zip").exists()
