"""``bench/class_load.py`` on a class of 3 phones (loopback, its own app, no model), on the light vote page
and on the Streamlit student page: every vote is in
the store once, every phone saw its confirmation, the teacher's page and the store's tally reached
every vote, the table says so; and its arguments are checked."""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "class_load.py"


@pytest.fixture(scope="module")
def class_load():
    spec = importlib.util.spec_from_file_location("class_load_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", ["light", "streamlit"])
def test_three_phones_vote_twice_each_vote_recorded_once(class_load, tmp_path: Path, page: str) -> None:
    [row] = class_load.run([3], items=2, window=1.0, seed=1, timeout=90, cache_dir=tmp_path / "cache", page=page)
    assert row.errors == () and row.failed == 0
    assert row.sent == (3, 3)
    assert row.recorded == (3, 3)  # read back from the store: 3 voters on each item
    assert row.doubled == 0
    assert row.confirmed == 6 and row.refused == 0  # each click answered by "your answer is in"
    assert 0 < row.p50 <= row.p95 <= row.worst
    assert all(math.isfinite(t) for t in row.tally_s)  # the store's tally reached 3 on both items
    assert all(math.isfinite(t) for t in row.teacher_s)  # and the teacher's page showed 3, then 6 votes
    assert row.server_cpu_s > 0 and row.rss_after_mb > 0
    text = class_load.table([row])
    assert "| 3 | 3/3, 3/3 | 0 |" in text


@pytest.mark.parametrize("given", ["", "0", "30,x", "2000"])
def test_phone_counts_are_checked(class_load, given: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="--phones"):
        class_load._counts(given)


def test_phone_counts_read(class_load) -> None:
    assert class_load._counts("30,100,150") == [30, 100, 150]
