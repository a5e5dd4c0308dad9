"""On-disk result cache: JSON text only, never pickle.

Parses and forced scores are deterministic for a given model, tokenizer, grammar, prompt, LF and
decoding settings, and they are slow on a CPU.  :class:`ResultCache` stores each result as one
JSON document in a :class:`diskcache.Cache` (SQLite + files), so a rerun of the app, the CLI or
an experiment answers instantly.

Safety: a cache folder may come from somewhere else (copied, downloaded, shared).  Loading a
pickle executes code, so this module **never unpickles**: keys and values are plain ``str``
(diskcache stores strings raw, in the SQLite row or in a UTF-8 ``.val`` file), and the
:class:`JSONTextDisk` serializer refuses any row written in diskcache's pickle mode, any
non-text value and any file path that leaves the cache folder.  A refused, unreadable or
malformed entry counts as a miss: it is deleted and a :class:`CacheWarning` is emitted, and the
caller recomputes.

Keys are sha256 digests over canonical JSON of everything the result depends on (see
:meth:`ResultCache.key`), including :func:`amp.code_digest.code_digest` — a digest of the source
text of the modules that compute results (:data:`amp.code_digest.CODE_MODULES`) — and
:data:`amp.code_digest.CODE_VERSION`.  Any edit to decoding, scoring, the grammar automaton, the
grammar or the prompts changes every key, so old entries simply stop being found; nobody has to
remember to bump a constant.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import diskcache
from diskcache.core import MODE_RAW, MODE_TEXT

import amp.code_digest as code
from amp.errors import CacheError, CacheWarning, UnsafeEntryError
from amp.settings import results_dir

#: Layout version of the stored envelope ``{"schema", "model", "value"}``.
SCHEMA = 1

#: diskcache eviction: least recently stored first, once the folder exceeds this size.
SIZE_LIMIT_BYTES = 2**30
#: The largest value file read (a parse with every beam's per-token alternatives is well under a
#: megabyte): a larger one is refused as corrupt on its size alone, before a byte is read.
MAX_VALUE_BYTES = 64 * 2**20


def canonical_json(obj: Any) -> str:
    """Deterministic JSON text: sorted keys, no spaces, tuples as lists, UTF-8 kept.

    Raises ``TypeError`` for anything JSON cannot represent (so a key can never silently
    depend on an object's ``repr``) and ``ValueError`` for NaN/infinity (not JSON; the result
    records encode them as strings).
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class JSONTextDisk(diskcache.Disk):
    """A diskcache serializer that only handles ``str`` keys and ``str`` values.

    Strings are stored exactly as diskcache stores them by default (raw in SQLite below
    ``min_file_size``, else a UTF-8 text file), so nothing is pickled on the way in; on the way
    out every other storage mode, pickle included, raises :class:`UnsafeEntryError` *before*
    any byte is interpreted.
    """

    def __init__(self, directory: str, min_file_size: int = 0, pickle_protocol: int = 0, **_ignored: Any) -> None:
        # Unknown ``disk_*`` settings read from a foreign Settings table are ignored.
        super().__init__(directory, min_file_size=min_file_size, pickle_protocol=pickle_protocol)

    def put(self, key: Any) -> tuple[Any, bool]:
        if type(key) is not str:
            raise TypeError(f"ResultCache keys must be str, not {type(key).__name__}")
        return key, True

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            raise UnsafeEntryError("refusing a pickled cache key")
        if isinstance(key, (bytes, memoryview)):
            raise UnsafeEntryError("refusing a binary cache key")
        return key

    def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> tuple:
        if read or type(value) is not str:
            raise TypeError("ResultCache stores JSON text (str) only")
        return super().store(value, read, key=key)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> str:
        if read:
            raise UnsafeEntryError("file handles are not supported")
        if mode == MODE_RAW:
            if type(value) is not str:
                raise UnsafeEntryError(f"stored value is {type(value).__name__}, not text")
            return value
        if mode == MODE_TEXT and filename:
            return _read_regular_text(self._checked_path(filename))
        raise UnsafeEntryError(f"refusing a value stored in diskcache mode {mode} (not JSON text)")

    def remove(self, file_path: str) -> None:
        try:
            self._checked_path(file_path)
        except UnsafeEntryError:
            return  # never delete outside the cache folder
        super().remove(file_path)

    def _checked_path(self, filename: str) -> str:
        root = os.path.realpath(self._directory)
        full = os.path.realpath(os.path.join(root, filename))
        if os.path.isabs(filename) or os.path.commonpath([root, full]) != root:
            raise UnsafeEntryError(f"value file {filename!r} lies outside the cache folder")
        return full


def _read_regular_text(path: str) -> str:
    """The UTF-8 text of the regular file at ``path``, opened without blocking: a FIFO, device or
    other non-regular file planted as a value file is refused (:class:`UnsafeEntryError`) instead
    of hanging the reader, and so is a file over :data:`MAX_VALUE_BYTES` (judged by its size,
    never read whole)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeEntryError("the value file is not a regular file")
        if info.st_size > MAX_VALUE_BYTES:
            raise UnsafeEntryError(f"the value file has {info.st_size:,} bytes, over the limit of {MAX_VALUE_BYTES:,}")
        with os.fdopen(fd, "rb", closefd=True) as reader:
            fd = -1
            data = reader.read(MAX_VALUE_BYTES + 1)  # a file that grew since: still bounded
        if len(data) > MAX_VALUE_BYTES:
            raise UnsafeEntryError(f"the value file grew over the limit of {MAX_VALUE_BYTES:,} bytes")
        return data.decode("utf-8")
    finally:
        if fd >= 0:
            os.close(fd)


class _ReadOnlyStore:
    """The read side of a :class:`diskcache.Cache` whose folder cannot be written.

    diskcache itself cannot open such a folder (it creates tables and a WAL journal); this opens
    its SQLite file read-only and immutable and reads value files through :class:`JSONTextDisk`,
    with the same refusals.  Writes raise ``sqlite3.OperationalError``; deletes do nothing.
    """

    def __init__(self, directory: Path) -> None:
        db = directory / diskcache.core.DBNAME
        if not db.is_file():
            raise sqlite3.OperationalError(f"no {diskcache.core.DBNAME} in {directory}")
        self._uri = f"{db.resolve().as_uri()}?mode=ro&immutable=1"
        self._disk = JSONTextDisk(str(directory))
        self._local = threading.local()
        self._one("SELECT COUNT(*) FROM Cache")  # a folder that is not a cache fails here

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._local.con = sqlite3.connect(self._uri, uri=True)
        row: tuple[Any, ...] | None = con.execute(sql, params).fetchone()
        return row

    def get(self, key: str, default: Any = None) -> Any:
        row = self._one("SELECT mode, filename, value FROM Cache WHERE key = ? AND raw = 1 "
                        "AND (expire_time IS NULL OR expire_time > ?)", (key, time.time()))
        if row is None:
            return default
        mode, filename, value = row
        return self._disk.fetch(mode, filename, value, False)

    def __contains__(self, key: object) -> bool:
        return self._one("SELECT 1 FROM Cache WHERE key = ? AND raw = 1", (key,)) is not None

    def __len__(self) -> int:
        row = self._one("SELECT COUNT(*) FROM Cache")
        return int(row[0]) if row else 0

    def volume(self) -> int:
        pages = self._one("PRAGMA page_count")
        size = self._one("PRAGMA page_size")
        files = self._one("SELECT COALESCE(SUM(size), 0) FROM Cache WHERE filename IS NOT NULL")
        return int(pages[0] * size[0] + files[0]) if pages and size and files else 0

    def set(self, *_: Any, **__: Any) -> None:
        raise sqlite3.OperationalError("the cache folder is read-only")

    def delete(self, *_: Any, **__: Any) -> bool:
        return False

    def clear(self, *_: Any, **__: Any) -> int:
        raise sqlite3.OperationalError("the cache folder is read-only")

    evict = clear

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


class ResultCache:
    """A JSON-only result store over :class:`diskcache.Cache`, tagged by model identity.

    ``directory`` defaults to :func:`amp.settings.results_dir` (``cache/results`` or
    ``$AMP_CACHE_DIR/results``).  Safe to share between threads and processes (diskcache uses
    SQLite transactions).  Raises :class:`~amp.errors.CacheError` if the folder cannot be
    opened (e.g. not writable, or ``cache.db`` is not a database).
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else results_dir()
        #: True when the folder could only be opened for reading (see :class:`_ReadOnlyStore`).
        self.read_only = False
        self._cache: Any
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._cache = diskcache.Cache(
                str(self.directory),
                disk=JSONTextDisk,
                eviction_policy="least-recently-stored",
                size_limit=SIZE_LIMIT_BYTES,
                tag_index=True,
                statistics=False,
            )
        except (OSError, sqlite3.Error, ValueError, TypeError) as exc:
            try:  # a read-only folder (a shared or mounted cache) is still worth reading
                self._cache = _ReadOnlyStore(self.directory)
            except (OSError, sqlite3.Error, ValueError) as read_exc:
                raise CacheError(
                    f"cannot open the result cache in {self.directory}: {exc}. "
                    "Delete that folder (it only holds cached results) or point AMP_CACHE_DIR elsewhere."
                ) from read_exc
            self.read_only = True
            warnings.warn(self.hint(), CacheWarning, stacklevel=2)

    def hint(self) -> str:
        """What a user should know about this cache's folder (empty when it is an ordinary one)."""
        if not self.read_only:
            return ""
        return (f"the result cache in {self.directory} is read-only: cached results are read from it, new "
                "results are not stored (make the folder writable, or point AMP_CACHE_DIR at a writable folder)")

    # -- keys --------------------------------------------------------------------------------

    @staticmethod
    def key(kind: str, **parts: Any) -> str:
        """A stable key: ``"<kind>:<sha256 of canonical JSON>"``.

        ``parts`` must hold everything the result depends on — model and tokenizer identity,
        grammar text, prompt, LF(s), every decoding setting; :data:`amp.code_digest.CODE_VERSION`
        and :func:`amp.code_digest.code_digest` (the source of the modules that compute results)
        are added here.
        Values must be JSON-representable (``TypeError`` otherwise); dict order does not
        matter, so two calls with the same settings and the same code always agree across
        processes.
        """
        payload = {"kind": kind, "code_version": code.CODE_VERSION, "code": code.code_digest(), "parts": parts}
        digest = hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()
        return f"{kind}:{digest}"

    # -- reading and writing -----------------------------------------------------------------

    def get(self, key: str) -> dict | None:
        """The stored dict, or ``None`` on a miss.

        An entry that cannot be used — refused storage mode (e.g. a planted pickle), bytes that
        are not UTF-8, text that is not JSON, JSON of the wrong layout — is deleted, reported
        with a :class:`CacheWarning`, and treated as a miss.
        """
        try:
            text = self._cache.get(key, default=None)
        except (UnsafeEntryError, UnicodeDecodeError, ValueError, OSError, sqlite3.Error) as exc:
            self.discard(key, f"unreadable entry ({exc})")
            return None
        if text is None:
            return None
        try:
            envelope = json.loads(text)
        except ValueError as exc:
            self.discard(key, f"not valid JSON ({exc})")
            return None
        if (
            not isinstance(envelope, dict)
            or envelope.get("schema") != SCHEMA
            or not isinstance(envelope.get("value"), dict)
        ):
            self.discard(key, "unexpected layout")
            return None
        return envelope["value"]

    def set(self, key: str, value: Mapping[str, Any], *, model: str | None = None) -> None:
        """Store ``value`` (a JSON-representable mapping) as JSON text, tagged with ``model``.

        Raises ``TypeError``/``ValueError`` if ``value`` is not strict JSON and
        :class:`~amp.errors.CacheError` if the write fails (disk full, read-only folder).
        """
        if not isinstance(value, Mapping):
            raise TypeError(f"cache values are dicts, not {type(value).__name__}")
        text = canonical_json({"schema": SCHEMA, "model": model, "value": dict(value)})
        try:
            self._cache.set(key, text, tag=model)
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"cannot write to the result cache in {self.directory}: {exc}") from exc

    def set_many(self, items: Sequence[tuple[str, Mapping[str, Any], str | None]]) -> None:
        """Store every ``(key, value, model)`` or none: one SQLite transaction, rolled back on any
        failure (disk full), and the value files it wrote removed again.  Keys already present
        are the caller's business (:func:`amp.teaching.demo_pack.import_pack` never replaces them).

        Raises :class:`~amp.errors.CacheError` (the cache is then as it was), ``TypeError`` /
        ``ValueError`` for a value that is not strict JSON (checked before anything is written).
        """
        texts = [(key, canonical_json({"schema": SCHEMA, "model": model, "value": dict(value)}), model)
                 for key, value, model in items]
        if self.read_only:
            raise CacheError(self.hint())
        files_before = self._value_files()
        try:
            with self._cache.transact(retry=True):
                for key, text, model in texts:
                    self._cache.set(key, text, tag=model)
        except (OSError, sqlite3.Error) as exc:
            for name in self._value_files() - files_before:  # written for rows that were rolled back
                with contextlib.suppress(OSError):
                    os.remove(self.directory / name)
            raise CacheError(f"cannot write to the result cache in {self.directory}: {exc}; nothing was stored") \
                from exc

    def volume(self) -> int:
        """Bytes the cache occupies (SQLite file plus value files), as diskcache's eviction counts."""
        try:
            return int(self._cache.volume())
        except (OSError, sqlite3.Error):
            return 0

    def _value_files(self) -> builtins.set[str]:
        """Relative paths of the value files under the folder (not the SQLite files)."""
        out: builtins.set[str] = builtins.set()
        for root, _dirs, files in os.walk(self.directory):
            for name in files:
                if not name.startswith(diskcache.core.DBNAME):
                    out.add(os.path.relpath(os.path.join(root, name), self.directory))
        return out

    def delete(self, key: str) -> bool:
        """Remove one entry; ``True`` if it existed."""
        try:
            return bool(self._cache.delete(key))
        except (OSError, sqlite3.Error):
            return False

    def discard(self, key: str, reason: str) -> None:
        """Delete an unusable entry and say so with a :class:`CacheWarning`.

        Callers use this too when a stored dict does not rebuild into its record type.
        """
        self.delete(key)
        warnings.warn(
            f"dropped cache entry {key} in {self.directory}: {reason}; it will be recomputed",
            CacheWarning,
            stacklevel=3,
        )

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._cache

    def __len__(self) -> int:
        return len(self._cache)

    def __bool__(self) -> bool:  # an empty cache is still a cache (``if cache:`` must not fail)
        return True

    # -- maintenance -------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """``{"directory", "entries", "bytes", "models": {identity: count}}``.

        ``bytes`` is diskcache's volume (SQLite file plus value files).  Untagged entries are
        counted under ``""``.
        """
        models: dict[str, int] = {}
        try:
            rows = self._read_rows("SELECT tag, COUNT(*) FROM Cache GROUP BY tag")
        except CacheError:
            rows = []
        for tag, count in rows:
            models[tag if isinstance(tag, str) else ""] = models.get(tag if isinstance(tag, str) else "", 0) + count
        return {
            "directory": str(self.directory),
            "entries": len(self._cache),
            "bytes": int(self._cache.volume()),
            "models": models,
        }

    def tagged_keys(self) -> dict[str, str | None]:
        """Every text key in the cache with its model tag (None when untagged), sorted by key.

        Rows whose key is not text (e.g. a pickled key planted by another program) are skipped.
        """
        rows = self._read_rows("SELECT key, tag FROM Cache WHERE raw = 1 ORDER BY key")
        return {k: (t if isinstance(t, str) else None) for k, t in rows if isinstance(k, str)}

    def _read_rows(self, sql: str) -> list[tuple[Any, ...]]:
        """Run a read-only query on diskcache's ``Cache`` table (its own API cannot list tags)."""
        db = self.directory / diskcache.core.DBNAME
        try:
            con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro{'&immutable=1' if self.read_only else ''}",
                                  uri=True)
            try:
                return con.execute(sql).fetchall()
            finally:
                con.close()
        except sqlite3.Error as exc:
            raise CacheError(f"cannot read the result cache in {self.directory}: {exc}") from exc

    def clear(self, model: str | None = None) -> int:
        """Delete every entry, or only those tagged with ``model``; returns how many."""
        try:
            if model is None:
                return int(self._cache.clear(retry=True))
            return int(self._cache.evict(model, retry=True))
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"cannot clear the result cache in {self.directory}: {exc}") from exc

    def close(self) -> None:
        """Close the SQLite connections of this thread (the object stays usable)."""
        self._cache.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultCache({str(self.directory)!r})"
