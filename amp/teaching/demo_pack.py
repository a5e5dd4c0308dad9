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

:func:`import_pack` checks the whole pack **before** writing anything: zip integrity, file
names (no absolute paths, ``..``, folders, duplicates, unlisted or missing files), declared and
actual sizes against :class:`PackLimits` (members are read with a byte limit, so a zip bomb
cannot expand), the manifest's format, version and fields, every entry's sha256, keys (64 hex
digits, optionally ``kind:`` first as :meth:`amp.cache.ResultCache.key` makes them), that
values are JSON objects and, for the parser's result kinds, that each value has exactly the
layout and field types the parser writes (:func:`value_problem`); the expansion from zip to
entries is bounded (:class:`PackLimits`).  Any problem raises :class:`DemoPackError` saying what is wrong, and
the cache is left as it was.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sqlite3
import tempfile
import types
import typing
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from amp.cache import SIZE_LIMIT_BYTES, ResultCache, canonical_json
from amp.errors import AmpError, CacheError

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

FORMAT = "amp-demo-pack"
SCHEMA_VERSION = 1
MANIFEST_NAME = "manifest.json"

#: Result keys: 64 lowercase hex digits (sha256), optionally prefixed ``kind:`` (amp.cache).
KEY_RE = re.compile(r"(?:[a-z][a-z0-9_]{0,31}:)?[0-9a-f]{64}")
_FILE_RE = re.compile(r"entries/[0-9]{6,9}\.json")
_SHA_RE = re.compile(r"[0-9a-f]{64}")
_MANIFEST_FIELDS = frozenset(
    {"format", "schema_version", "created", "note", "models", "entry_count", "total_bytes", "entries"}
)
_ENTRY_FIELDS = frozenset({"key", "file", "sha256", "size", "model"})
_RECORD_FIELDS = frozenset({"key", "model", "value"})
_MAX_NOTE = 10_000
_MAX_MODEL_ID = 1_000


class DemoPackError(AmpError, ValueError):
    """A pack that cannot be written or read; the message names the file or entry at fault."""


@dataclass(frozen=True)
class PackLimits:
    """Bounds checked before anything is decompressed or written (zip-bomb safety).

    ``max_total_bytes`` (uncompressed entries) is well below the result cache's own size limit
    (:data:`amp.cache.SIZE_LIMIT_BYTES`, an eighth of it), and ``max_expansion`` bounds how much
    larger the entries are than the zip file, so a small pack cannot flood the cache.
    """

    max_entries: int = 100_000
    max_entry_bytes: int = 16 * 2**20
    max_total_bytes: int = SIZE_LIMIT_BYTES // 8
    max_manifest_bytes: int = 64 * 2**20
    max_file_bytes: int = SIZE_LIMIT_BYTES // 8
    max_expansion: int = 100


@dataclass(frozen=True)
class PackInfo:
    """What a pack holds.  ``total_bytes`` counts uncompressed entry bytes.

    Export only: ``missing`` lists requested keys that were not (or no longer readably) in the
    cache, ``skipped`` cached keys that are not result keys (see :data:`KEY_RE`).
    Import only: ``replaced`` counts entries whose key the cache already held; the local result
    was kept (a pack never overwrites one; the name is kept for compatibility).
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
) -> PackInfo:
    """Write the cached results behind ``keys`` (``None`` = every entry) to a zip at ``path``.

    ``models`` keeps only entries tagged with one of these model identities.  Requested keys
    that the cache lacks are reported in :attr:`PackInfo.missing`, not an error.  The zip is
    written to a temporary file and renamed into place, so ``path`` is never half-written.
    Raises :class:`DemoPackError` for a malformed key or a pack that :func:`import_pack` would
    refuse under ``limits``.
    """
    cache = _check_cache(cache)
    limits = limits or PackLimits()
    if not isinstance(note, str) or len(note) > _MAX_NOTE:
        raise DemoPackError(f"note must be a string of at most {_MAX_NOTE} characters")
    wanted_models = None if models is None else set(_str_list(models, "models"))
    tags = _tagged_keys(cache)
    skipped: list[str] = []
    if keys is None:
        selected = [k for k in tags if KEY_RE.fullmatch(k)]
        skipped = [k for k in tags if not KEY_RE.fullmatch(k)]
    else:
        selected = list(dict.fromkeys(_str_list(keys, "keys")))
        bad = [k for k in selected if not KEY_RE.fullmatch(k)]
        if bad:
            raise DemoPackError(f"{bad[0]!r} is not a result key (64 hex digits, optionally 'kind:' first)")
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
    entries = [
        {"key": key, "file": f"entries/{i:06d}.json", "sha256": hashlib.sha256(data).hexdigest(),
         "size": len(data), "model": model}
        for i, (key, model, data) in enumerate(records)
    ]
    manifest = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "note": note,
        "models": sorted({m for _, m, _ in records if m is not None}),
        "entry_count": len(entries),
        "total_bytes": total,
        "entries": entries,
    }
    target = Path(path)
    _write_zip(target, manifest, [(str(e["file"]), d) for e, (_, _, d) in zip(entries, records, strict=True)])
    return _info(target, manifest, missing=tuple(missing), skipped=tuple(skipped))


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


# --- validation --------------------------------------------------------------------------------


def _fail(path: Path, message: str) -> DemoPackError:
    return DemoPackError(f"demo pack {path.name}: {message}; nothing was imported")


def _unsafe_name(name: str) -> bool:
    parts = name.split("/")
    return (
        not name
        or "\\" in name
        or name.startswith("/")
        or ":" in name
        or any(part in ("", ".", "..") for part in parts)
        or any(ord(c) < 32 for c in name)
    )


def _strict_json(data: bytes, what: str, path: Path) -> Any:
    def no_constants(token: str) -> Any:
        raise ValueError(f"{token} is not JSON")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            raise ValueError("an object has a duplicate field")
        return out

    try:
        return json.loads(data.decode("utf-8"), parse_constant=no_constants, object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _fail(path, f"{what} is not valid JSON ({exc})") from None


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, path: Path) -> bytes:
    """Read one member, never decompressing more than ``limit + 1`` bytes."""
    try:
        with zf.open(info) as fh:
            data = fh.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, RuntimeError, NotImplementedError) as exc:
        raise _fail(path, f"{info.filename} is damaged ({exc})") from None
    if len(data) > limit:
        raise _fail(path, f"{info.filename} expands past {limit} bytes")
    if len(data) != info.file_size:
        raise _fail(path, f"{info.filename} holds {len(data)} bytes but its zip header says {info.file_size}")
    return data


def _check_manifest(manifest: Any, limits: PackLimits, path: Path) -> list[dict[str, Any]]:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _fail(path, f"manifest.json does not describe an {FORMAT!r} (wrong file?)")
    version = manifest.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:
        raise _fail(path, f"schema version {version!r} is not supported (this code reads {SCHEMA_VERSION})")
    if set(manifest) != _MANIFEST_FIELDS:
        extra, lacking = sorted(set(manifest) - _MANIFEST_FIELDS), sorted(_MANIFEST_FIELDS - set(manifest))
        raise _fail(path, f"manifest.json has unknown fields {extra} / lacks fields {lacking}")
    if not isinstance(manifest["created"], str) or not isinstance(manifest["note"], str):
        raise _fail(path, "manifest fields 'created' and 'note' must be strings")
    if len(manifest["note"]) > _MAX_NOTE:
        raise _fail(path, f"the note is longer than {_MAX_NOTE} characters")
    models, entries = manifest["models"], manifest["entries"]
    if not isinstance(models, list) or not all(isinstance(m, str) and len(m) <= _MAX_MODEL_ID for m in models):
        raise _fail(path, "manifest field 'models' must be a list of model identity strings")
    if not isinstance(entries, list) or len(entries) > limits.max_entries:
        raise _fail(path, f"manifest field 'entries' must be a list of at most {limits.max_entries} entries")
    for i, entry in enumerate(entries):
        _check_entry(entry, i, limits, path)
    if type(manifest["entry_count"]) is not int or manifest["entry_count"] != len(entries):
        raise _fail(path, f"entry_count {manifest['entry_count']!r} does not match the {len(entries)} entries listed")
    total = sum(e["size"] for e in entries)
    if type(manifest["total_bytes"]) is not int or manifest["total_bytes"] != total:
        raise _fail(path, f"total_bytes {manifest['total_bytes']!r} does not match the entry sizes ({total})")
    if total > limits.max_total_bytes:
        raise _fail(path, f"entries total {total} bytes, over the limit of {limits.max_total_bytes}")
    for field in ("key", "file"):
        seen: set[str] = set()
        for e in entries:
            if e[field] in seen:
                raise _fail(path, f"the manifest lists {field} {e[field]!r} twice")
            seen.add(e[field])
    if models != sorted({e["model"] for e in entries if e["model"] is not None}):
        raise _fail(path, "manifest field 'models' does not match the entries' model identities")
    return entries


def _check_entry(entry: Any, i: int, limits: PackLimits, path: Path) -> None:
    where = f"manifest entry {i}"
    if not isinstance(entry, dict) or set(entry) != _ENTRY_FIELDS:
        raise _fail(path, f"{where} must have exactly the fields {sorted(_ENTRY_FIELDS)}")
    key, file, sha, size, model = (entry[f] for f in ("key", "file", "sha256", "size", "model"))
    if not isinstance(key, str) or not KEY_RE.fullmatch(key):
        raise _fail(path, f"{where}: key {key!r} is not a result key (64 hex digits, optionally 'kind:' first)")
    if not isinstance(file, str) or not _FILE_RE.fullmatch(file):
        raise _fail(path, f"{where}: file name {file!r} is not of the form entries/NNNNNN.json")
    if not isinstance(sha, str) or not _SHA_RE.fullmatch(sha):
        raise _fail(path, f"{where}: sha256 {sha!r} is not 64 lowercase hex digits")
    if type(size) is not int or not 0 < size <= limits.max_entry_bytes:
        raise _fail(path, f"{where}: size {size!r} is not between 1 and {limits.max_entry_bytes} bytes")
    if model is not None and (not isinstance(model, str) or len(model) > _MAX_MODEL_ID):
        raise _fail(path, f"{where}: model must be a string or null")


def _validate(path: Path, limits: PackLimits) -> tuple[dict[str, Any], list[tuple[str, str | None, dict]]]:
    """Check everything and return the manifest and the (key, model, value) records."""
    if not path.is_file():
        raise DemoPackError(f"no demo pack file at {path}")
    if path.stat().st_size > limits.max_file_bytes:
        raise _fail(path, f"the file is {path.stat().st_size} bytes, over the limit of {limits.max_file_bytes}")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise _fail(path, f"not a readable zip file ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_entries + 1:
            raise _fail(path, f"{len(infos)} files, over the limit of {limits.max_entries} entries")
        by_name: dict[str, zipfile.ZipInfo] = {}
        total = 0
        for info in infos:
            name = info.filename
            if _unsafe_name(name):
                raise _fail(path, f"unsafe file name {name!r} (absolute path, '..' or odd characters)")
            if info.is_dir():
                raise _fail(path, f"unexpected folder entry {name!r}")
            if name in by_name:
                raise _fail(path, f"file {name!r} appears twice in the zip")
            if info.flag_bits & 0x1:
                raise _fail(path, f"{name} is encrypted")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise _fail(path, f"{name} uses an unsupported compression method {info.compress_type}")
            limit = limits.max_manifest_bytes if name == MANIFEST_NAME else limits.max_entry_bytes
            if info.file_size > limit:
                raise _fail(path, f"{name} declares {info.file_size} bytes, over the limit of {limit}")
            total += info.file_size
            by_name[name] = info
        if total > limits.max_total_bytes + limits.max_manifest_bytes:
            raise _fail(path, f"the files declare {total} bytes in all, over the limit")
        packed = max(path.stat().st_size, 1)
        if total > limits.max_expansion * packed:
            raise _fail(path, f"the files expand to {total} bytes from a {packed}-byte zip, over the limit of "
                        f"{limits.max_expansion} times its size")
        if MANIFEST_NAME not in by_name:
            raise _fail(path, "there is no manifest.json")
        manifest = _strict_json(
            _read_member(zf, by_name[MANIFEST_NAME], limits.max_manifest_bytes, path), "manifest.json", path
        )
        entries = _check_manifest(manifest, limits, path)
        listed = {e["file"] for e in entries}
        unlisted = sorted(set(by_name) - listed - {MANIFEST_NAME})
        if unlisted:
            raise _fail(path, f"file(s) {unlisted[:5]} are not listed in the manifest")
        absent = sorted(listed - set(by_name))
        if absent:
            raise _fail(path, f"file(s) {absent[:5]} are listed in the manifest but missing from the zip")
        records: list[tuple[str, str | None, dict]] = []
        for entry in entries:
            name, info = entry["file"], by_name[entry["file"]]
            if info.file_size != entry["size"]:
                raise _fail(path, f"{name} is {info.file_size} bytes but the manifest says {entry['size']}")
            data = _read_member(zf, info, limits.max_entry_bytes, path)
            if hashlib.sha256(data).hexdigest() != entry["sha256"]:
                raise _fail(
                    path,
                    f"{name} (key {entry['key']}) does not match its sha256 in the manifest "
                    "(changed or corrupted)",
                )
            record = _strict_json(data, name, path)
            if not isinstance(record, dict) or set(record) != _RECORD_FIELDS:
                raise _fail(path, f"{name} must be a JSON object with exactly the fields {sorted(_RECORD_FIELDS)}")
            if record["key"] != entry["key"] or record["model"] != entry["model"]:
                raise _fail(
                    path,
                    f"{name} holds key/model {record['key']!r}/{record['model']!r}, not those of the manifest",
                )
            if not isinstance(record["value"], dict):
                raise _fail(path, f"{name}: the value is {type(record['value']).__name__}, not a JSON object")
            problem = value_problem(entry["key"], record["value"])
            if problem is not None:
                raise _fail(path, f"{name} (key {entry['key']}) is not a result the parser writes: {problem}")
            records.append((entry["key"], entry["model"], record["value"]))
    return manifest, records


# --- result schemas ----------------------------------------------------------------------------


def _record_types() -> dict[str, Any]:
    """Result kind (the key's ``kind:`` prefix) → the record type the parser stores under it."""
    from amp.parser.results import ForcedScore, PairScore, ParseResult, TokenStep

    return {"parse": ParseResult, "forced": ForcedScore, "pair": PairScore,
            "steps": {"steps": list[TokenStep]}, "sample": {"samples": list[str | None]}}


def value_problem(key: str, value: dict[str, Any]) -> str | None:
    """Why ``value`` is not what :class:`amp.parser.Parser` stores under ``key``'s kind (None if it is).

    The value must rebuild into its record (:mod:`amp.parser.results`), every field of the
    rebuilt record must have its declared type (a beam whose text is an object is refused), and
    writing the record out again must give the same JSON.  Keys of other kinds are not read by
    the parser and pass as plain JSON objects.
    """
    kind = key.partition(":")[0] if ":" in key else ""
    schema = _record_types().get(kind)
    if schema is None:
        return None
    try:
        if isinstance(schema, dict):
            if set(value) != set(schema):
                return f"expected exactly the fields {sorted(schema)}"
            for field_name, hint in schema.items():
                item_type = typing.get_args(hint)[0]
                items = value[field_name]
                if not isinstance(items, list):
                    return f"{field_name!r} must be a list"
                for item in items:
                    rebuilt = (cast(Any, item_type).from_dict(item) if dataclasses.is_dataclass(item_type)
                               else item)
                    if not _typed(rebuilt, item_type) or (dataclasses.is_dataclass(item_type)
                                                          and canonical_json(rebuilt.to_dict()) != canonical_json(item)):
                        return f"an item of {field_name!r} does not have the stored layout"
            return None
        record = schema.from_dict(value)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"does not rebuild into a {getattr(schema, '__name__', kind)} ({type(exc).__name__}: {exc})"
    if not _typed(record, schema):
        return f"a field of the {schema.__name__} has the wrong type"
    if canonical_json(record.to_dict()) != canonical_json(value):
        return f"it does not have the {schema.__name__} layout (unknown or missing fields)"
    return None


def _typed(obj: Any, hint: Any) -> bool:
    """Whether ``obj`` has the type ``hint`` (the subset of typing the result records use)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if hint is type(None):
        return obj is None
    if origin in (typing.Union, types.UnionType):
        return any(_typed(obj, a) for a in args)
    if origin is typing.Literal:
        return obj in args
    if origin in (tuple, list):
        if not isinstance(obj, origin):
            return False
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return len(obj) == len(args) and all(_typed(o, a) for o, a in zip(obj, args, strict=True))
        return all(_typed(o, args[0]) for o in obj) if args else True
    if origin is dict or hint is dict:
        return isinstance(obj, dict)
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        return isinstance(obj, cast(type, hint)) and all(_typed(getattr(obj, f.name), hints[f.name])
                                             for f in dataclasses.fields(hint))
    if hint is float:
        return isinstance(obj, int | float) and not isinstance(obj, bool)
    if hint in (int, str, bool):
        return isinstance(obj, hint) and (hint is bool or not isinstance(obj, bool))
    return True  # a type the records do not use: not checked here


# --- import -----------------------------------------------------------------------------------


def inspect_pack(path: str | os.PathLike[str], *, limits: PackLimits | None = None) -> PackInfo:
    """Validate a pack fully (as :func:`import_pack` does) and describe it; writes nothing."""
    target = Path(path)
    manifest, _ = _validate(target, limits or PackLimits())
    return _info(target, manifest)


def import_pack(
    path: str | os.PathLike[str], cache: ResultCache, *, limits: PackLimits | None = None
) -> PackInfo:
    """Validate the pack at ``path`` completely, then store every entry in ``cache``.

    Nothing is written unless the whole pack is valid (see the module docstring).  Results the
    cache already holds are kept, never replaced (a pack cannot overwrite a local result; they
    are counted in :attr:`PackInfo.replaced` as "already present").  The new entries are stored
    in one transaction (:meth:`ResultCache.set_many`): a write that fails midway (disk full)
    leaves the cache exactly as it was.  An import that would push the cache past its size
    limit — evicting earlier results, the teacher's included — is refused, saying so.
    """
    cache = _check_cache(cache)
    target = Path(path)
    manifest, records = _validate(target, limits or PackLimits())
    present = _tagged_keys(cache)
    new = [(key, value, model) for key, model, value in records if key not in present]
    adding = sum(len(canonical_json(value)) for _, value, _ in new)
    if new and cache.volume() + adding > SIZE_LIMIT_BYTES:
        raise _fail(target, f"its {adding:,} bytes would push the result cache past its {SIZE_LIMIT_BYTES:,}-byte "
                    f"limit ({cache.volume():,} used) and evict earlier results; clear some cached results first")
    try:
        cache.set_many(new)
    except (AmpError, OSError, sqlite3.Error, TypeError, ValueError) as exc:
        raise DemoPackError(f"demo pack {target.name}: writing to {cache.directory} failed ({exc}); "
                            "nothing was imported") from exc
    return _info(target, manifest, replaced=len(records) - len(new))
