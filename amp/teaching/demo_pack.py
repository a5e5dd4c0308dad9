"""Portable demo packs: cached model results in one zip of JSON, for a classroom without a GPU.

A teacher runs the slow parses and forced scores once (AmP paper §4–§5 experiments; reference
§12), exports the cached results behind the demo sentences to a pack, and imports it on the
classroom machine, where the app then answers from the cache (:mod:`amp.cache`).

Pack layout (``SCHEMA_VERSION`` 1), JSON only — nothing is ever pickled or unpickled::

    manifest.json          {"format": "amp-demo-pack", "schema_version": 1, "created": ISO-8601,
                            "note": str, "models": [identity, …], "entry_count": n,
                            "total_bytes": n, "entries": [{"key", "file", "sha256", "size",
                            "model"}, …]}
    entries/000000.json    {"key": …, "model": identity | null, "value": {…}}  (canonical JSON)
    own_sentences.json     optional: the teacher's own sentences behind the results (the own-
                           sentence library's export JSON); the manifest then has
                           "own_sentences": {"file", "sha256", "size", "count"}

A teacher's own sentence (:mod:`amp.teaching.own_sentences`) extends the grammar with its own
words, so its cached results are useless in class without it: a pack carries the sentences with
their results, and :func:`import_pack` adds them to the classroom machine's library (a sentence
the library already holds is kept as it is, like a cached result).

:func:`import_pack` checks the whole pack **before** writing anything: zip integrity, file
names (no absolute paths, ``..``, folders, duplicates, unlisted or missing files), declared and
actual sizes against :class:`PackLimits` (members are read with a byte limit, so a zip bomb
cannot expand), the manifest's format, version and fields, every entry's sha256, keys (64 hex
digits, optionally ``kind:`` first as :meth:`amp.cache.ResultCache.key` makes them), that
values are JSON objects and, for the parser's result kinds, that each value has exactly the
layout and field types the parser writes (:func:`amp.teaching.pack_format.value_problem`: the record schemas of :mod:`amp.records`); the expansion from zip to
entries is bounded (:class:`PackLimits`).  Any problem raises :class:`DemoPackError` saying what is wrong, and
the cache is left as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from amp.cache import SIZE_LIMIT_BYTES, ResultCache, canonical_json
from amp.errors import AmpError, CacheError
from amp.teaching.errors import DemoPackError, OwnLibraryError
from amp.teaching.own_library import MAX_LIBRARY_BYTES, MAX_SENTENCES, OwnLibrary, library_json
from amp.teaching.own_sentences import OwnSentence
from amp.teaching.pack_format import (
    FORMAT,
    KEY_RE,
    MANIFEST_NAME,
    MAX_NOTE,
    OWN_NAME,
    SCHEMA_VERSION,
    PackLimits,
    read_pack,
    refused,
)

__all__ = [
    "FORMAT",
    "SCHEMA_VERSION",
    "DemoPackError",
    "PackInfo",
    "PackLimits",
    "export_pack",
    "import_pack",
    "inspect_pack",
]


@dataclass(frozen=True)
class PackInfo:
    """What a pack holds.  ``total_bytes`` counts uncompressed entry bytes.

    Export only: ``missing`` lists requested keys that were not (or no longer readably) in the
    cache, ``skipped`` cached keys that are not result keys (see :data:`KEY_RE`).
    Import only: ``replaced`` counts entries whose key the cache already held; the local result
    was kept (a pack never overwrites one; the name is kept for compatibility).
    ``own_sentences``: the surfaces of the own sentences the pack carries; on import
    ``own_added`` those added to the library (the others it held already and kept).
    """

    path: str
    schema_version: int
    created: str
    note: str
    models: tuple[str, ...]
    entry_count: int
    total_bytes: int
    keys: tuple[str, ...]
    missing: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    replaced: int = 0
    own_sentences: tuple[str, ...] = ()
    own_added: tuple[str, ...] = ()


# --- export ------------------------------------------------------------------------------------


def _check_cache(cache: object) -> ResultCache:
    if not isinstance(cache, ResultCache):
        raise TypeError(f"expected an amp.cache.ResultCache, got {type(cache).__name__}")
    return cache


def _tagged_keys(cache: ResultCache) -> dict[str, str | None]:
    """Every text key of the cache with its model tag (:meth:`ResultCache.tagged_keys`)."""
    try:
        return cache.tagged_keys()
    except CacheError as exc:
        raise DemoPackError(f"cannot list the result cache: {exc}") from exc


def export_pack(
    cache: ResultCache,
    keys: Iterable[str] | None,
    path: str | os.PathLike[str],
    *,
    note: str = "",
    models: Iterable[str] | None = None,
    limits: PackLimits | None = None,
    own_sentences: Iterable[OwnSentence] = (),
) -> PackInfo:
    """Write the cached results behind ``keys`` (``None`` = every entry) to a zip at ``path``.

    ``models`` keeps only entries tagged with one of these model identities.  ``own_sentences``
    go into the pack with the results (the teacher's sentences those results are for).  Requested keys
    that the cache lacks are reported in :attr:`PackInfo.missing`, not an error.  The zip is
    written to a temporary file and renamed into place, so ``path`` is never half-written.
    Raises :class:`DemoPackError` for a malformed key or a pack that :func:`import_pack` would
    refuse under ``limits``.
    """
    cache = _check_cache(cache)
    limits = limits or PackLimits()
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise DemoPackError(f"note must be a string of at most {MAX_NOTE} characters")
    wanted_models = None if models is None else set(_str_list(models, "models"))
    tags = _tagged_keys(cache)
    selected, skipped = _select_keys(tags, keys)
    missing: list[str] = []
    records: list[tuple[str, str | None, bytes]] = []
    for key in selected:
        if key not in tags:
            missing.append(key)
            continue
        model = tags[key]
        if wanted_models is not None and model not in wanted_models:
            continue
        value = cache.get(key)
        if value is None:
            missing.append(key)
            continue
        data = canonical_json({"key": key, "model": model, "value": value}).encode("utf-8")
        if len(data) > limits.max_entry_bytes:
            raise DemoPackError(f"entry {key} is {len(data)} bytes, over the limit of {limits.max_entry_bytes}")
        records.append((key, model, data))
    if len(records) > limits.max_entries:
        raise DemoPackError(f"{len(records)} entries is over the limit of {limits.max_entries}")
    total = sum(len(d) for _, _, d in records)
    if total > limits.max_total_bytes:
        raise DemoPackError(f"{total} bytes of entries is over the limit of {limits.max_total_bytes}")
    manifest = _manifest(records, note)
    files = [(str(e["file"]), d) for e, (_, _, d) in zip(manifest["entries"], records, strict=True)]
    own = _own_member(own_sentences)
    if own is not None:
        manifest["own_sentences"] = own[0]
        files.append((OWN_NAME, own[1]))
    target = Path(path)
    _write_zip(target, manifest, files)
    return _info(target, manifest, missing=tuple(missing), skipped=tuple(skipped),
                 own_sentences=own[2] if own else ())


def _own_member(own_sentences: Iterable[OwnSentence]) -> tuple[dict[str, Any], bytes, tuple[str, ...]] | None:
    """The manifest field, the bytes of ``own_sentences.json`` and the sentences' surfaces
    (``None`` without sentences)."""
    if isinstance(own_sentences, OwnSentence | str):
        raise DemoPackError("own_sentences must be an iterable of OwnSentence")
    given = list(own_sentences)
    bad = [s for s in given if not isinstance(s, OwnSentence)]
    if bad:
        raise DemoPackError(f"own_sentences must be OwnSentence values, not {type(bad[0]).__name__}")
    sentences = list({s.surface: s for s in given}.values())
    if not sentences:
        return None
    if len(sentences) > MAX_SENTENCES:
        raise DemoPackError(f"{len(sentences)} own sentences is over the limit of {MAX_SENTENCES}")
    data = library_json(sentences)
    if len(data) > MAX_LIBRARY_BYTES:
        raise DemoPackError(f"the own sentences take {len(data):,} bytes, over the limit of {MAX_LIBRARY_BYTES:,}")
    field = {"file": OWN_NAME, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "count": len(sentences)}
    return field, data, tuple(s.surface for s in sentences)


def _select_keys(tags: dict[str, str | None], keys: Iterable[str] | None) -> tuple[list[str], list[str]]:
    """``(selected, skipped)``: the requested keys (every result key when ``None``) and the cache's
    keys that are not result keys (skipped when exporting everything; an error when requested)."""
    if keys is None:
        return [k for k in tags if KEY_RE.fullmatch(k)], [k for k in tags if not KEY_RE.fullmatch(k)]
    selected = list(dict.fromkeys(_str_list(keys, "keys")))
    bad = [k for k in selected if not KEY_RE.fullmatch(k)]
    if bad:
        raise DemoPackError(f"{bad[0]!r} is not a result key (64 hex digits, optionally 'kind:' first)")
    return selected, []


def _manifest(records: list[tuple[str, str | None, bytes]], note: str) -> dict[str, Any]:
    """The manifest of a pack holding ``records`` (``(key, model, entry bytes)``, in file order)."""
    entries = [
        {"key": key, "file": f"entries/{i:06d}.json", "sha256": hashlib.sha256(data).hexdigest(),
         "size": len(data), "model": model}
        for i, (key, model, data) in enumerate(records)
    ]
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "note": note,
        "models": sorted({m for _, m, _ in records if m is not None}),
        "entry_count": len(entries),
        "total_bytes": sum(len(d) for _, _, d in records),
        "entries": entries,
    }


def _write_zip(target: Path, manifest: dict[str, Any], files: list[tuple[str, bytes]]) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
                zf.writestr(MANIFEST_NAME, json.dumps(manifest, indent=1, ensure_ascii=False, allow_nan=False))
                for name, data in files:
                    zf.writestr(name, data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise DemoPackError(f"cannot write the pack {target}: {exc}") from exc


def _info(path: Path, manifest: dict[str, Any], **extra: Any) -> PackInfo:
    return PackInfo(
        path=str(path),
        schema_version=manifest["schema_version"],
        created=manifest["created"],
        note=manifest["note"],
        models=tuple(manifest["models"]),
        entry_count=manifest["entry_count"],
        total_bytes=manifest["total_bytes"],
        keys=tuple(e["key"] for e in manifest["entries"]),
        **extra,
    )


def _str_list(items: Iterable[str], what: str) -> list[str]:
    if isinstance(items, str | bytes):
        raise DemoPackError(f"{what} must be an iterable of strings, not a single string")
    out = list(items)
    bad = [x for x in out if not isinstance(x, str)]
    if bad:
        raise DemoPackError(f"{what} must be strings; got {bad[0]!r}")
    return out


# --- import -----------------------------------------------------------------------------------


def inspect_pack(path: str | os.PathLike[str], *, limits: PackLimits | None = None) -> PackInfo:
    """Validate a pack fully (as :func:`import_pack` does) and describe it; writes nothing."""
    target = Path(path)
    manifest, _, own = read_pack(target, limits or PackLimits())
    return _info(target, manifest, own_sentences=tuple(s.surface for s in own))


def import_pack(
    path: str | os.PathLike[str], cache: ResultCache, *, limits: PackLimits | None = None,
    library: OwnLibrary | None = None,
) -> PackInfo:
    """Validate the pack at ``path`` completely, then store every entry in ``cache``.

    Nothing is written unless the whole pack is valid (see the module docstring).  Results the
    cache already holds are kept, never replaced (a pack cannot overwrite a local result; they
    are counted in :attr:`PackInfo.replaced` as "already present").  The new entries are stored
    in one transaction (:meth:`ResultCache.set_many`): a write that fails midway (disk full)
    leaves the cache exactly as it was.  An import that would push the cache past its size
    limit — evicting earlier results, the teacher's included — is refused, saying so.

    The pack's own sentences are added to ``library`` (those it holds already are kept; with
    ``library=None`` they are only listed in :attr:`PackInfo.own_sentences`).  A library that
    could not take them all (at most :data:`~amp.teaching.own_library.MAX_SENTENCES`) refuses
    the import before anything is written.
    """
    cache = _check_cache(cache)
    target = Path(path)
    manifest, records, own = read_pack(target, limits or PackLimits())
    if own and library is not None:
        try:
            library.add_missing(own, dry_run=True)
        except OwnLibraryError as exc:
            raise refused(target, f"its {len(own)} own sentence(s) do not fit: {exc}") from None
    present = _tagged_keys(cache)
    new = [(key, value, model) for key, model, value in records if key not in present]
    adding = sum(len(canonical_json(value)) for _, value, _ in new)
    if new and cache.volume() + adding > SIZE_LIMIT_BYTES:
        raise refused(target, f"its {adding:,} bytes would push the result cache past its {SIZE_LIMIT_BYTES:,}-byte "
                    f"limit ({cache.volume():,} used) and evict earlier results; clear some cached results first")
    try:
        cache.set_many(new)
    except (AmpError, OSError, sqlite3.Error, TypeError, ValueError) as exc:
        raise DemoPackError(f"demo pack {target.name}: writing to {cache.directory} failed ({exc}); "
                            "nothing was imported") from exc
    added: tuple[str, ...] = ()
    if own and library is not None:
        try:
            added = library.add_missing(own).added
        except OwnLibraryError as exc:  # the results are in (an import again adds nothing twice)
            raise DemoPackError(f"demo pack {target.name}: the cached results were imported, but its own "
                                f"sentences could not be saved ({exc}); import the pack again once fixed") from exc
    return _info(target, manifest, replaced=len(records) - len(new), own_sentences=tuple(s.surface for s in own),
                 own_added=added)
