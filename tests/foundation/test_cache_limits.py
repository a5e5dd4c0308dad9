"""The result cache's writer refuses a value over its cap before writing it, and its messages name
the real cause of a failure — a full disk or a damaged ``cache.db`` is not "read-only" (issue #44
points 4 and 7).  The full disk is a real one: a 512 KiB tmpfs in a private mount namespace (the
test skips where none can be made)."""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from amp import cache_disk as cache_module
from amp.cache import CacheTrouble, ResultCache
from amp.errors import CacheError, CacheWarning

REPO_ROOT = Path(__file__).resolve().parents[2]


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.val"))


def test_a_value_over_the_cap_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """The real cap (64 MiB): a bigger value is one CacheError and no file; the cache is as before."""
    cache = ResultCache(tmp_path / "results")
    cache.set("small", {"x": 1}, model="m")
    before = _files(cache.directory)
    with pytest.raises(CacheError, match=r"a result of 67,108,9\d\d bytes is over the result cache's limit of "
                                         r"67,108,864 bytes: not stored"):
        cache.set("huge", {"blob": "y" * cache_module.MAX_VALUE_BYTES}, model="m")
    assert "huge" not in cache and _files(cache.directory) == before and cache.get("small") == {"x": 1}


def test_the_writer_counts_utf8_bytes_and_set_many_stores_none_of_a_batch_with_one_too_big(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "MAX_VALUE_BYTES", 100_000)
    cache = ResultCache(tmp_path / "results")
    cache.set("ascii", {"blob": "y" * 90_000}, model="m")  # 90 kB of text, 90 kB of UTF-8: stored
    with pytest.raises(CacheError, match="over the result cache's limit of 100,000 bytes"):
        cache.set("greek", {"blob": "λ" * 50_000}, model="m")  # 50,000 characters, 100,000 bytes and more
    with pytest.raises(CacheError, match="over the result cache's limit"):
        cache.set_many([("a", {"x": 1}, "m"), ("b", {"blob": "z" * 120_000}, "m")])
    assert "greek" not in cache and "a" not in cache and "b" not in cache
    assert cache.get("ascii") == {"blob": "y" * 90_000}


def _garble(db: Path, how: str) -> None:
    data = bytearray(db.read_bytes())
    if how == "random":
        data = bytearray(random.Random(1).randbytes(len(data)))
    else:  # the header kept, pages in the middle zeroed: SQLite opens it and calls it malformed later
        data[4096:3 * 4096] = bytes(min(len(data), 3 * 4096) - 4096)
    for side in db.parent.glob(db.name + "-*"):
        side.unlink()
    db.write_bytes(bytes(data))


def _filled(folder: Path) -> ResultCache:
    cache = ResultCache(folder)
    for i in range(50):
        cache.set(f"k{i}", {"x": "y" * 500}, model="m")
    cache.close()
    return cache


def test_a_cache_db_that_is_no_database_is_named_damaged_not_read_only(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    _garble(_filled(folder).database, "random")
    with pytest.raises(CacheError) as caught:
        ResultCache(folder)
    message = str(caught.value)
    assert message.startswith(f"the cache file is damaged ({folder / 'cache.db'}): file is not a database")
    assert "read-only" not in message and "results are recomputed meanwhile" in message


def test_a_malformed_cache_db_is_read_where_it_can_be_and_named_damaged(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    _garble(_filled(folder).database, "zeros")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = ResultCache(folder)
    assert cache.read_only and cache.trouble is CacheTrouble.DAMAGED
    assert cache.hint().startswith(f"the cache file is damaged ({folder / 'cache.db'}): database disk image is "
                                   "malformed; cached results are read from it, new results are not stored")
    assert [str(w.message) for w in caught if issubclass(w.category, CacheWarning)] == [cache.hint()]
    with pytest.raises(CacheError, match="the cache file is damaged") as refused:
        cache.set("new", {"a": 1}, model="m")
    assert "read-only" not in cache.hint() + str(refused.value)


@pytest.mark.parametrize(("exc", "trouble"), [
    (OSError(errno.ENOSPC, "No space left on device"), CacheTrouble.DISK_FULL),
    (sqlite3.OperationalError("database or disk is full"), CacheTrouble.DISK_FULL),
    (sqlite3.DatabaseError("file is not a database"), CacheTrouble.DAMAGED),
    (sqlite3.DatabaseError("database disk image is malformed"), CacheTrouble.DAMAGED),
    (OSError(errno.EROFS, "Read-only file system"), CacheTrouble.READ_ONLY),
    (sqlite3.OperationalError("attempt to write a readonly database"), CacheTrouble.READ_ONLY),
    (sqlite3.OperationalError("disk I/O error"), CacheTrouble.UNWRITABLE)])
def test_the_cause_of_a_failure(exc: BaseException, trouble: CacheTrouble) -> None:
    assert CacheTrouble.of(exc) is trouble


_FULL_DISK = """
import json, sys, warnings
from pathlib import Path
from amp.cache import ResultCache
root = Path(sys.argv[1])
cache = ResultCache(root / "results")
cache.set("k", {"a": 1}, model="m")
cache.close()
with open(root / "fill", "wb") as fh:  # the disk is full from here on
    try:
        fh.write(b"x" * 10_000_000)
    except OSError:
        pass
out = {}
try:
    cache.set("big", {"blob": "y" * 100_000}, model="m")
except Exception as exc:
    out["write"] = f"{type(exc).__name__}: {exc}"
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    again = ResultCache(root / "results")
    out.update(read=again.get("k"), read_only=again.read_only, hint=again.hint(),
               warned=[str(w.message) for w in caught])
try:
    ResultCache(root / "fresh")
except Exception as exc:
    out["fresh"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def test_a_full_disk_is_named_full_not_read_only(tmp_path: Path) -> None:
    """On a real full disk: a write says the disk is full; reopening reads what is there and says
    the disk is full; a new cache there cannot open and says so (the callers then go on without)."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) for a private tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = tmp_path / "full.py"
    script.write_text(_FULL_DISK, encoding="utf-8")
    command = f"mount -t tmpfs -o size=512k tmpfs '{disk}' && exec '{sys.executable}' '{script}' '{disk}'"
    proc = subprocess.run(["unshare", "-m", "sh", "-c", command], capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    if proc.returncode != 0 and "mount" in proc.stderr:
        pytest.skip(f"no private tmpfs here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    folder = disk / "results"
    assert out["write"].startswith(f"CacheError: cannot write to the result cache in {folder}: the disk is full (")
    assert out["read"] == {"a": 1} and out["read_only"]
    assert out["hint"] == (f"the disk holding the result cache in {folder} is full: cached results are read from "
                           "it, new results are not stored (free some space, or point AMP_CACHE_DIR at another disk)")
    assert out["warned"] == [out["hint"]]
    assert out["fresh"].startswith(f"CacheError: cannot open the result cache in {disk / 'fresh'}: the disk is full")
    assert "read-only" not in out["write"] + out["hint"] + out["fresh"]
