"""How the result cache keeps its values on disk, and why it may fail to (:mod:`amp.cache`).

* :class:`JSONTextDisk` — diskcache's serializer reduced to ``str`` keys and ``str`` values:
  nothing is pickled on the way in, and on the way out every other storage mode (pickle
  included), a value file outside the cache folder, a non-regular file and a file over
  :data:`MAX_VALUE_BYTES` are refused (:class:`~amp.errors.UnsafeEntryError`) before a byte is
  interpreted.
* :class:`ReadOnlyStore` — the read side of a cache folder that cannot be written.
* :class:`CacheTrouble` — the real cause of a failure to write or open (read-only, disk full,
  damaged ``cache.db``), as every message names it.
* :func:`canonical_json` — the deterministic JSON text keys and values are made of.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sqlite3
import stat
import threading
import time
from enum import StrEnum
from pathlib import Path
from typing import Any

import diskcache
from diskcache.core import MODE_RAW, MODE_TEXT

from amp.errors import UnsafeEntryError

#: The largest value written or read (a parse with every beam's per-token alternatives is well under
#: a megabyte): the writer refuses a larger one before writing it; the reader refuses a larger value
#: file as corrupt on its size alone, before a byte is read.
MAX_VALUE_BYTES = 64 * 2**20


#: Free bytes on the cache's disk under which a failure to write is put down to a full disk (SQLite
#: then often says only "disk I/O error").
FULL_DISK_BYTES = 2**20


class CacheTrouble(StrEnum):
    """Why the result cache cannot store (or open) what it should, as its messages name it."""

    READ_ONLY = "read-only"  # the folder or its file may not be written (permissions, a read-only mount)
    DISK_FULL = "disk full"  # ENOSPC / EDQUOT, SQLite's "database or disk is full"
    DAMAGED = "damaged"  # cache.db is no SQLite file or a malformed one
    UNWRITABLE = "unwritable"  # any other failure to write

    @classmethod
    def of(cls, exc: BaseException) -> CacheTrouble:
        """The cause of an ``OSError`` or ``sqlite3.Error`` (its errno, SQLite's code or its words)."""
        code = getattr(exc, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        words = str(exc).lower()
        if getattr(exc, "errno", None) in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)) \
                or primary == sqlite3.SQLITE_FULL or "disk is full" in words:
            return cls.DISK_FULL
        if primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) \
                or "not a database" in words or "malformed" in words:
            return cls.DAMAGED
        if getattr(exc, "errno", None) in (errno.EACCES, errno.EPERM, errno.EROFS) \
                or primary in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN) \
                or "read-only" in words or "readonly" in words:
            return cls.READ_ONLY
        return cls.UNWRITABLE

    @classmethod
    def at(cls, exc: BaseException, folder: Path) -> CacheTrouble:
        """:meth:`of`, with a failure of no named cause put down to a full disk when the disk holding
        ``folder`` has under :data:`FULL_DISK_BYTES` free."""
        trouble = cls.of(exc)
        if trouble is cls.UNWRITABLE:
            existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
            with contextlib.suppress(OSError):
                if existing is not None and shutil.disk_usage(existing).free < FULL_DISK_BYTES:
                    return cls.DISK_FULL
        return trouble


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
            return read_regular_text(self._checked_path(filename))
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


def read_regular_text(path: str) -> str:
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


class ReadOnlyStore:
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
