"""A cache value file over :data:`amp.cache_disk.MAX_VALUE_BYTES` is a miss, judged by its size alone
(issue #27 item 12: a 1 GB sparse ``.val`` cost 2.1 GB of memory before it was dropped)."""

from __future__ import annotations

import sqlite3
import tracemalloc
import warnings
from pathlib import Path

import pytest

from amp import cache_disk as cache_module
from amp.cache import ResultCache
from amp.errors import CacheError, CacheWarning

MAX_VALUE_BYTES = getattr(cache_module, "MAX_VALUE_BYTES", 64 * 2**20)


def test_a_huge_sparse_value_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    cache = ResultCache(folder)
    cache.set("k", {"blob": "y" * 100_000}, model="m1")  # stored in a value file
    cache.set("ok", {"blob": "z" * 100_000}, model="m1")
    cache.close()
    with sqlite3.connect(folder / "cache.db") as con:
        (filename,) = con.execute("SELECT filename FROM Cache WHERE key = 'k'").fetchone()
    with open(folder / filename, "r+b") as fh:  # a sparse file: no disk used, 16 × the cap long
        fh.truncate(16 * MAX_VALUE_BYTES)
    cache = ResultCache(folder)
    tracemalloc.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = cache.get("k")
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert value is None
    assert any(issubclass(w.category, CacheWarning) and "over the limit" in str(w.message) for w in caught)
    assert peak < MAX_VALUE_BYTES // 4, peak  # nothing near the file's size was allocated
    assert "k" not in cache  # dropped as corrupt: recomputed next time
    assert cache.get("ok") == {"blob": "z" * 100_000}  # an ordinary value still reads


def test_a_value_at_the_limit_is_still_read(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cache_module, "MAX_VALUE_BYTES", 200_000)
    cache = ResultCache(tmp_path / "results")
    cache.set("k", {"blob": "y" * 150_000}, model="m1")
    assert cache.get("k") == {"blob": "y" * 150_000}
    with pytest.raises(CacheError, match="over the result cache's limit"):  # the writer refuses it now
        cache.set("big", {"blob": "y" * 250_000}, model="m1")
    monkeypatch.setattr(cache_module, "MAX_VALUE_BYTES", 300_000)  # written under a larger cap …
    cache.set("big", {"blob": "y" * 250_000}, model="m1")
    monkeypatch.setattr(cache_module, "MAX_VALUE_BYTES", 200_000)  # … the reader still refuses it
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert cache.get("big") is None
