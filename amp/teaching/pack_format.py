"""The demo-pack format and its checks: what a pack must look like before anything is imported.

A pack (:mod:`amp.teaching.demo_pack`) is a zip of a ``manifest.json``, one canonical-JSON
file per cached result and, optionally, ``own_sentences.json``: the teacher's own sentences
behind those results, in the own-sentence library's export format
(:mod:`amp.teaching.own_library`, validated sentence by sentence as an import of the library is).  :func:`read_pack` checks all of it — zip members (safe names, sizes
against :class:`PackLimits`, bounded expansion), the manifest's format, version and fields,
every entry's sha256, key and record fields — and every value of a parser result kind against
its record's schema (:func:`value_problem`, :mod:`amp.records`).  Any problem raises
:class:`DemoPackError` naming the file or entry and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from amp.cache import SIZE_LIMIT_BYTES, canonical_json
from amp.parser.core.results import ForcedScore, PairScore, ParseResult, SamplesValue, StepsValue
from amp.records import JsonRecord, describe
from amp.teaching.errors import DemoPackError, OwnLibraryError
from amp.teaching.own_library import MAX_LIBRARY_BYTES, parse_library
from amp.teaching.own_sentences import OwnSentence

FORMAT = "amp-demo-pack"
SCHEMA_VERSION = 1
MANIFEST_NAME = "manifest.json"
#: The optional member holding the pack's own sentences (the library export JSON).
OWN_NAME = "own_sentences.json"

#: Result keys: 64 lowercase hex digits (sha256), optionally prefixed ``kind:`` (amp.cache).
KEY_RE = re.compile(r"(?:[a-z][a-z0-9_]{0,31}:)?[0-9a-f]{64}")
_FILE_RE = re.compile(r"entries/[0-9]{6,9}\.json")
_SHA_RE = re.compile(r"[0-9a-f]{64}")
_MANIFEST_FIELDS = frozenset(
    {"format", "schema_version", "created", "note", "models", "entry_count", "total_bytes", "entries"}
)
#: Present only in a pack that carries own sentences: ``{"file", "sha256", "size", "count"}``.
_OPTIONAL_MANIFEST_FIELDS = frozenset({"own_sentences"})
_OWN_FIELDS = frozenset({"file", "sha256", "size", "count"})
_ENTRY_FIELDS = frozenset({"key", "file", "sha256", "size", "model"})
_RECORD_FIELDS = frozenset({"key", "model", "value"})
MAX_NOTE = 10_000
_MAX_MODEL_ID = 1_000


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


def refused(path: Path, message: str) -> DemoPackError:
    """The error for a pack that cannot be imported: the file, what is wrong, nothing imported."""
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
        raise refused(path, f"{what} is not valid JSON ({exc})") from None


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, path: Path) -> bytes:
    """Read one member, never decompressing more than ``limit + 1`` bytes."""
    try:
        with zf.open(info) as fh:
            data = fh.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, RuntimeError, NotImplementedError) as exc:
        raise refused(path, f"{info.filename} is damaged ({exc})") from None
    if len(data) > limit:
        raise refused(path, f"{info.filename} expands past {limit} bytes")
    if len(data) != info.file_size:
        raise refused(path, f"{info.filename} holds {len(data)} bytes but its zip header says {info.file_size}")
    return data


def _check_manifest(manifest: Any, limits: PackLimits, path: Path) -> list[dict[str, Any]]:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise refused(path, f"manifest.json does not describe an {FORMAT!r} (wrong file?)")
    version = manifest.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:
        raise refused(path, f"schema version {version!r} is not supported (this code reads {SCHEMA_VERSION})")
    if not _MANIFEST_FIELDS <= set(manifest) <= _MANIFEST_FIELDS | _OPTIONAL_MANIFEST_FIELDS:
        extra = sorted(set(manifest) - _MANIFEST_FIELDS - _OPTIONAL_MANIFEST_FIELDS)
        lacking = sorted(_MANIFEST_FIELDS - set(manifest))
        raise refused(path, f"manifest.json has unknown fields {extra} / lacks fields {lacking}")
    if "own_sentences" in manifest:
        _check_own_field(manifest["own_sentences"], path)
    if not isinstance(manifest["created"], str) or not isinstance(manifest["note"], str):
        raise refused(path, "manifest fields 'created' and 'note' must be strings")
    if len(manifest["note"]) > MAX_NOTE:
        raise refused(path, f"the note is longer than {MAX_NOTE} characters")
    models, entries = manifest["models"], manifest["entries"]
    if not isinstance(models, list) or not all(isinstance(m, str) and len(m) <= _MAX_MODEL_ID for m in models):
        raise refused(path, "manifest field 'models' must be a list of model identity strings")
    if not isinstance(entries, list) or len(entries) > limits.max_entries:
        raise refused(path, f"manifest field 'entries' must be a list of at most {limits.max_entries} entries")
    for i, entry in enumerate(entries):
        _check_entry(entry, i, limits, path)
    if type(manifest["entry_count"]) is not int or manifest["entry_count"] != len(entries):
        raise refused(path, f"entry_count {manifest['entry_count']!r} does not match the {len(entries)} entries listed")
    total = sum(e["size"] for e in entries)
    if type(manifest["total_bytes"]) is not int or manifest["total_bytes"] != total:
        raise refused(path, f"total_bytes {manifest['total_bytes']!r} does not match the entry sizes ({total})")
    if total > limits.max_total_bytes:
        raise refused(path, f"entries total {total} bytes, over the limit of {limits.max_total_bytes}")
    for field in ("key", "file"):
        seen: set[str] = set()
        for e in entries:
            if e[field] in seen:
                raise refused(path, f"the manifest lists {field} {e[field]!r} twice")
            seen.add(e[field])
    if models != sorted({e["model"] for e in entries if e["model"] is not None}):
        raise refused(path, "manifest field 'models' does not match the entries' model identities")
    return entries


def _check_own_field(own: Any, path: Path) -> None:
    """The manifest's description of ``own_sentences.json``."""
    if not isinstance(own, dict) or set(own) != _OWN_FIELDS:
        raise refused(path, f"manifest field 'own_sentences' must have exactly the fields {sorted(_OWN_FIELDS)}")
    if own["file"] != OWN_NAME:
        raise refused(path, f"manifest field 'own_sentences' must name the file {OWN_NAME!r}")
    if not isinstance(own["sha256"], str) or not _SHA_RE.fullmatch(own["sha256"]):
        raise refused(path, "manifest field 'own_sentences': sha256 is not 64 lowercase hex digits")
    for field in ("size", "count"):
        if type(own[field]) is not int or own[field] < 1:
            raise refused(path, f"manifest field 'own_sentences': {field} {own[field]!r} is not a positive whole number")
    if own["size"] > MAX_LIBRARY_BYTES:
        raise refused(path, f"{OWN_NAME} is {own['size']} bytes, over the limit of {MAX_LIBRARY_BYTES}")


def _read_own(zf: zipfile.ZipFile, own: dict[str, Any], info: zipfile.ZipInfo, path: Path) -> tuple[OwnSentence, ...]:
    """The own sentences of the pack: size and hash as the manifest says, each sentence valid."""
    if info.file_size != own["size"]:
        raise refused(path, f"{OWN_NAME} is {info.file_size} bytes but the manifest says {own['size']}")
    data = _read_member(zf, info, MAX_LIBRARY_BYTES, path)
    if hashlib.sha256(data).hexdigest() != own["sha256"]:
        raise refused(path, f"{OWN_NAME} does not match its sha256 in the manifest (changed or corrupted)")
    try:
        sentences = parse_library(data, OWN_NAME)
    except OwnLibraryError as exc:
        raise refused(path, str(exc)) from None
    if len(sentences) != own["count"]:
        raise refused(path, f"{OWN_NAME} holds {len(sentences)} different sentences but the manifest says {own['count']}")
    return sentences


def _check_entry(entry: Any, i: int, limits: PackLimits, path: Path) -> None:
    where = f"manifest entry {i}"
    if not isinstance(entry, dict) or set(entry) != _ENTRY_FIELDS:
        raise refused(path, f"{where} must have exactly the fields {sorted(_ENTRY_FIELDS)}")
    key, file, sha, size, model = (entry[f] for f in ("key", "file", "sha256", "size", "model"))
    if not isinstance(key, str) or not KEY_RE.fullmatch(key):
        raise refused(path, f"{where}: key {key!r} is not a result key (64 hex digits, optionally 'kind:' first)")
    if not isinstance(file, str) or not _FILE_RE.fullmatch(file):
        raise refused(path, f"{where}: file name {file!r} is not of the form entries/NNNNNN.json")
    if not isinstance(sha, str) or not _SHA_RE.fullmatch(sha):
        raise refused(path, f"{where}: sha256 {sha!r} is not 64 lowercase hex digits")
    if type(size) is not int or not 0 < size <= limits.max_entry_bytes:
        raise refused(path, f"{where}: size {size!r} is not between 1 and {limits.max_entry_bytes} bytes")
    if model is not None and (not isinstance(model, str) or len(model) > _MAX_MODEL_ID):
        raise refused(path, f"{where}: model must be a string or null")


def read_pack(path: Path, limits: PackLimits) -> tuple[dict[str, Any], list[tuple[str, str | None, dict]],
                                                       tuple[OwnSentence, ...]]:
    """Check everything and return the manifest, the (key, model, value) records and the own
    sentences (none when the pack carries none)."""
    if not path.is_file():
        raise DemoPackError(f"no demo pack file at {path}")
    if path.stat().st_size > limits.max_file_bytes:
        raise refused(path, f"the file is {path.stat().st_size} bytes, over the limit of {limits.max_file_bytes}")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise refused(path, f"not a readable zip file ({exc})") from None
    with zf:
        by_name = _check_members(zf.infolist(), limits, path)
        if MANIFEST_NAME not in by_name:
            raise refused(path, "there is no manifest.json")
        manifest = _strict_json(
            _read_member(zf, by_name[MANIFEST_NAME], limits.max_manifest_bytes, path), "manifest.json", path
        )
        entries = _check_manifest(manifest, limits, path)
        listed = {e["file"] for e in entries} | ({OWN_NAME} if "own_sentences" in manifest else set())
        unlisted = sorted(set(by_name) - listed - {MANIFEST_NAME})
        if unlisted:
            raise refused(path, f"file(s) {unlisted[:5]} are not listed in the manifest")
        absent = sorted(listed - set(by_name))
        if absent:
            raise refused(path, f"file(s) {absent[:5]} are listed in the manifest but missing from the zip")
        records = [_read_entry(zf, entry, by_name[entry["file"]], limits, path) for entry in entries]
        own = _read_own(zf, manifest["own_sentences"], by_name[OWN_NAME], path) if "own_sentences" in manifest else ()
    return manifest, records, own


def _check_members(infos: list[zipfile.ZipInfo], limits: PackLimits, path: Path) -> dict[str, zipfile.ZipInfo]:
    """The zip's members by name, each checked (safe name, plain file, size) before any is read."""
    if len(infos) > limits.max_entries + 1:
        raise refused(path, f"{len(infos)} files, over the limit of {limits.max_entries} entries")
    by_name: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in infos:
        name = info.filename
        if _unsafe_name(name):
            raise refused(path, f"unsafe file name {name!r} (absolute path, '..' or odd characters)")
        if info.is_dir():
            raise refused(path, f"unexpected folder entry {name!r}")
        if name in by_name:
            raise refused(path, f"file {name!r} appears twice in the zip")
        if info.flag_bits & 0x1:
            raise refused(path, f"{name} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise refused(path, f"{name} uses an unsupported compression method {info.compress_type}")
        limit = {MANIFEST_NAME: limits.max_manifest_bytes, OWN_NAME: MAX_LIBRARY_BYTES}.get(name, limits.max_entry_bytes)
        if info.file_size > limit:
            raise refused(path, f"{name} declares {info.file_size} bytes, over the limit of {limit}")
        total += info.file_size
        by_name[name] = info
    if total > limits.max_total_bytes + limits.max_manifest_bytes + MAX_LIBRARY_BYTES:
        raise refused(path, f"the files declare {total} bytes in all, over the limit")
    packed = max(path.stat().st_size, 1)
    if total > limits.max_expansion * packed:
        raise refused(path, f"the files expand to {total} bytes from a {packed}-byte zip, over the limit of "
                    f"{limits.max_expansion} times its size")
    return by_name


def _read_entry(zf: zipfile.ZipFile, entry: dict[str, Any], info: zipfile.ZipInfo, limits: PackLimits,
                path: Path) -> tuple[str, str | None, dict]:
    """One entry's ``(key, model, value)``, its size, hash, record fields and value checked."""
    name = entry["file"]
    if info.file_size != entry["size"]:
        raise refused(path, f"{name} is {info.file_size} bytes but the manifest says {entry['size']}")
    data = _read_member(zf, info, limits.max_entry_bytes, path)
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise refused(
            path,
            f"{name} (key {entry['key']}) does not match its sha256 in the manifest "
            "(changed or corrupted)",
        )
    record = _strict_json(data, name, path)
    if not isinstance(record, dict) or set(record) != _RECORD_FIELDS:
        raise refused(path, f"{name} must be a JSON object with exactly the fields {sorted(_RECORD_FIELDS)}")
    if record["key"] != entry["key"] or record["model"] != entry["model"]:
        raise refused(
            path,
            f"{name} holds key/model {record['key']!r}/{record['model']!r}, not those of the manifest",
        )
    if not isinstance(record["value"], dict):
        raise refused(path, f"{name}: the value is {type(record['value']).__name__}, not a JSON object")
    problem = value_problem(entry["key"], record["value"])
    if problem is not None:
        raise refused(path, f"{name} (key {entry['key']}) is not a result the parser writes: {problem}")
    return entry["key"], entry["model"], record["value"]


def _record_types() -> dict[str, type[JsonRecord]]:
    """Result kind (the key's ``kind:`` prefix) → the record the parser stores under it."""

    return {"parse": ParseResult, "forced": ForcedScore, "pair": PairScore, "steps": StepsValue,
            "sample": SamplesValue}


def value_problem(key: str, value: dict[str, Any]) -> str | None:
    """Why ``value`` is not what :class:`amp.parser.Parser` stores under ``key``'s kind (None if it is).

    The value must validate against its record's schema (:mod:`amp.records`; the error names the
    field and what is wrong with it, e.g. a beam whose text is an object), and writing the record
    out again must give the same JSON (no unknown, missing or coerced fields).  Keys of other
    kinds are not read by the parser and pass as plain JSON objects.
    """
    kind = key.partition(":")[0] if ":" in key else ""
    record_type = _record_types().get(kind)
    if record_type is None:
        return None
    try:
        record = record_type.from_dict(value)
    except ValidationError as exc:
        return f"it does not validate as a {record_type.__name__} ({describe(exc)})"
    if canonical_json(record.to_dict()) != canonical_json(value):
        return f"it does not have the {record_type.__name__} layout (unknown, missing or retyped fields)"
    return None
