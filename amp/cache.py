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

Sizes and failures: the writer refuses a value over :data:`amp.cache_disk.MAX_VALUE_BYTES` before writing it (the
reader refuses one too, on its size alone), and every message names the real cause of a failure
(:class:`CacheTrouble`): a folder that cannot be written, a full disk, or a damaged ``cache.db``
(``file is not a database``, ``malformed``) — the last two are not "read-only".  Whatever the
cause, a result that cannot be read is recomputed and one that cannot be stored is not stored.

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
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import diskcache

import amp.cache_disk as disk
import amp.code_digest as code
from amp.cache_disk import (
    CacheTrouble,
    JSONTextDisk,
    ReadOnlyStore,
    canonical_json,
)
from amp.errors import CacheError, CacheWarning, UnsafeEntryError
from amp.settings import results_dir

#: Layout version of the stored envelope ``{"schema", "model", "value"}``.
SCHEMA = 1

#: diskcache eviction: least recently stored first, once the folder exceeds this size.
SIZE_LIMIT_BYTES = 2**30
class ResultCache:
    """A JSON-only result store over :class:`diskcache.Cache`, tagged by model identity.

    ``directory`` defaults to :func:`amp.settings.results_dir` (``cache/results`` or
    ``$AMP_CACHE_DIR/results``).  Safe to share between threads and processes (diskcache uses
    SQLite transactions).  Raises :class:`~amp.errors.CacheError` if the folder cannot be
    opened (e.g. not writable, or ``cache.db`` is not a database).
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else results_dir()
        #: True when the folder could only be opened for reading (see :class:`ReadOnlyStore`);
        #: :attr:`trouble` says why and :meth:`hint` says so in words.
        self.read_only = False
        self.trouble: CacheTrouble | None = None
        self._trouble_text = ""
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
            trouble = CacheTrouble.at(exc, self.directory)
            try:  # a read-only folder (a shared or mounted cache) is still worth reading
                self._cache = ReadOnlyStore(self.directory)
            except (OSError, sqlite3.Error, ValueError) as read_exc:
                raise CacheError(self._cannot_open(trouble, exc)) from read_exc
            self.read_only = True
            self.trouble, self._trouble_text = trouble, str(exc)
            warnings.warn(self.hint(), CacheWarning, stacklevel=2)

    @property
    def database(self) -> Path:
        """The SQLite file of the cache (``cache.db``)."""
        return self.directory / diskcache.core.DBNAME

    def _cannot_open(self, trouble: CacheTrouble, exc: BaseException) -> str:
        if trouble is CacheTrouble.DAMAGED:
            return (f"the cache file is damaged ({self.database}): {exc}. Delete that folder (it only holds cached "
                    "results) or point AMP_CACHE_DIR elsewhere; results are recomputed meanwhile")
        if trouble is CacheTrouble.DISK_FULL:
            return (f"cannot open the result cache in {self.directory}: the disk is full ({exc}). Free some space "
                    "or point AMP_CACHE_DIR at another disk; results are recomputed meanwhile")
        return (f"cannot open the result cache in {self.directory}: {exc}. "
                "Delete that folder (it only holds cached results) or point AMP_CACHE_DIR elsewhere.")

    def hint(self) -> str:
        """What a user should know about this cache's folder (empty when it is an ordinary one), by
        its real cause (:attr:`trouble`)."""
        if not self.read_only:
            return ""
        stored = "cached results are read from it, new results are not stored"
        if self.trouble is CacheTrouble.DISK_FULL:
            return (f"the disk holding the result cache in {self.directory} is full: {stored} (free some space, "
                    "or point AMP_CACHE_DIR at another disk)")
        if self.trouble is CacheTrouble.DAMAGED:
            return (f"the cache file is damaged ({self.database}): {self._trouble_text}; {stored} (delete the "
                    f"folder {self.directory}: it only holds cached results)")
        if self.trouble is CacheTrouble.UNWRITABLE:
            return (f"the result cache in {self.directory} cannot be written ({self._trouble_text}): {stored} "
                    "(point AMP_CACHE_DIR at another folder)")
        return (f"the result cache in {self.directory} is read-only: {stored} "
                "(make the folder writable, or point AMP_CACHE_DIR at a writable folder)")

    def _cannot_write(self, exc: BaseException, done: str = "") -> CacheError:
        """The error of a failed write, naming its cause (``done``: what became of the batch)."""
        trouble = CacheTrouble.at(exc, self.directory)
        if trouble is CacheTrouble.DISK_FULL:
            why = f"the disk is full ({exc})"
        elif trouble is CacheTrouble.DAMAGED:
            why = f"the cache file is damaged ({self.database}): {exc}"
        else:
            why = str(exc)
        return CacheError(f"cannot write to the result cache in {self.directory}: {why}{done}")

    @staticmethod
    def _checked_size(text: str) -> str:
        """``text`` if it is within :data:`amp.cache_disk.MAX_VALUE_BYTES` in UTF-8, else :class:`CacheError` (nothing written)."""
        size = len(text) if len(text) > disk.MAX_VALUE_BYTES else len(text.encode("utf-8"))
        if size > disk.MAX_VALUE_BYTES:
            raise CacheError(f"a result of {size:,} bytes is over the result cache's limit of {disk.MAX_VALUE_BYTES:,} "
                             "bytes: not stored (it is recomputed when asked for again)")
        return text

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
            damaged = isinstance(exc, (OSError, sqlite3.Error)) and CacheTrouble.of(exc) is CacheTrouble.DAMAGED
            self.discard(key, f"the cache file is damaged ({self.database}): {exc}" if damaged
                         else f"unreadable entry ({exc})")
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
        :class:`~amp.errors.CacheError` if it is over :data:`amp.cache_disk.MAX_VALUE_BYTES` (before anything is
        written) or the write fails (its cause named: disk full, damaged file, read-only folder).
        """
        if not isinstance(value, Mapping):
            raise TypeError(f"cache values are dicts, not {type(value).__name__}")
        text = self._checked_size(canonical_json({"schema": SCHEMA, "model": model, "value": dict(value)}))
        if self.read_only:
            raise CacheError(self.hint())
        try:
            self._cache.set(key, text, tag=model)
        except (OSError, sqlite3.Error) as exc:
            raise self._cannot_write(exc) from exc

    def set_many(self, items: Sequence[tuple[str, Mapping[str, Any], str | None]]) -> None:
        """Store every ``(key, value, model)`` or none: one SQLite transaction, rolled back on any
        failure (disk full), and the value files it wrote removed again.  Keys already present
        are the caller's business (:func:`amp.teaching.demo_pack.import_pack` never replaces them).

        Raises :class:`~amp.errors.CacheError` (the cache is then as it was; a value over
        :data:`amp.cache_disk.MAX_VALUE_BYTES` is refused before anything is written), ``TypeError`` /
        ``ValueError`` for a value that is not strict JSON (checked before anything is written).
        """
        texts = [(key, self._checked_size(canonical_json({"schema": SCHEMA, "model": model, "value": dict(value)})),
                  model) for key, value, model in items]
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
            raise self._cannot_write(exc, "; nothing was stored") from exc

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
