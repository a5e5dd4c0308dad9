"""Class polls (amp.teaching.poll): concurrency, validation, the Appendix A.5 conversion, export."""

from __future__ import annotations

import csv
import io
import multiprocessing as mp
import sqlite3
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from amp.teaching.poll import (
    CODE_ALPHABET,
    DuplicateVoteError,
    InvalidPollError,
    InvalidVoteError,
    PollClosedError,
    PollError,
    PollItem,
    PollNotFoundError,
    PollStore,
    PollStoreError,
    Vote,
    confidence_to_p_lf0,
    default_poll_path,
    normalise_code,
    tidy_code,
)


def _item(i: int = 0, p: float | None = 0.7) -> PollItem:
    return PollItem(
        surface=f"the boy saw the man with the telescope {i}",
        type="pp",
        lf0=f"lf zero {i}",
        lf1=f"lf one {i}",
        paraphrase0="the boy saw the man, who had the telescope",
        paraphrase1="the boy used the telescope to see the man",
        model_p_lf0=p,
    )


@pytest.fixture
def store(tmp_path: Path) -> PollStore:
    return PollStore(tmp_path / "polls.sqlite")


# --- creating and reading -------------------------------------------------------------------


def test_create_get_and_persist_across_stores(store: PollStore) -> None:
    poll = store.create_poll([_item(0), _item(1, None)], title="Week 3")
    assert len(poll.code) == 6 and set(poll.code) <= set(CODE_ALPHABET)
    assert poll.query == f"?poll={poll.code}" and not poll.closed
    store.submit_vote(poll.code, 1, "s1", 0, 3)
    again = PollStore(store.path)  # a fresh store = a restarted process
    got = again.get_poll(f"  {poll.code.lower()} ")
    assert got == poll
    assert [v.voter_id for v in again.votes(poll.code)] == ["s1"]
    assert [p.code for p in again.list_polls()] == [poll.code]
    con = sqlite3.connect(store.path)
    try:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        con.close()


#: The poll database as schema 1 wrote it (before the one voter id): the voter was ``session_id``.
_SCHEMA_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE polls (code TEXT PRIMARY KEY, title TEXT NOT NULL, items TEXT NOT NULL, n_items INTEGER NOT NULL,
                    created TEXT NOT NULL, closed_at TEXT);
CREATE TABLE votes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    code TEXT NOT NULL REFERENCES polls(code),
    item_index INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    choice INTEGER NOT NULL CHECK (choice IN (0, 1)),
    confidence INTEGER NOT NULL CHECK (confidence IN (1, 2, 3)),
    created TEXT NOT NULL,
    UNIQUE (code, item_index, session_id)
);
CREATE INDEX votes_by_code ON votes (code, id);
INSERT INTO meta VALUES ('schema', '1');
"""
#: A phone's cookie from before (``uuid4().hex``), and an id a script gave the store.
_OLD_PHONE, _OLD_SCRIPT = "0f" * 16, "s1"


def _schema_1_database(path: Path) -> str:
    """A schema-1 file with one open poll of two items and three votes; returns the poll code."""
    import json
    from dataclasses import asdict

    con = sqlite3.connect(path)
    try:
        con.executescript(_SCHEMA_1)
        items = json.dumps([asdict(_item(0, 0.9)), asdict(_item(1))])
        con.execute("INSERT INTO polls VALUES ('K7QX2M', 'old poll', ?, 2, '2024-01-01T00:00:00.000+00:00', NULL)",
                    (items,))
        con.executemany("INSERT INTO votes (code, item_index, session_id, choice, confidence, created) "
                        "VALUES ('K7QX2M', ?, ?, ?, ?, '2024-01-01T00:00:01.000+00:00')",
                        [(0, _OLD_PHONE, 1, 3), (1, _OLD_PHONE, 0, 1), (0, _OLD_SCRIPT, 0, 2)])
        con.commit()
    finally:
        con.close()
    return "K7QX2M"


def test_a_schema_1_database_is_upgraded_and_keeps_its_votes(tmp_path: Path) -> None:
    """A polls.sqlite written before the one voter id opens: its votes still count, a voter who
    voted cannot vote again on that item, new votes come in, and the CSV says ``voter_id``."""
    path = tmp_path / "polls.sqlite"
    code = _schema_1_database(path)
    store = PollStore(path)
    assert [(v.item_index, v.voter_id) for v in store.votes(code)] == [(0, _OLD_PHONE), (1, _OLD_PHONE),
                                                                       (0, _OLD_SCRIPT)]
    results = store.results(code)
    assert (results.n_votes, results.n_voters, results.items[0].counts) == (3, 2, (1, 1))
    for voter in (_OLD_PHONE, _OLD_SCRIPT):
        with pytest.raises(DuplicateVoteError):
            store.submit_vote(code, 0, voter, 0, 1)
    store.submit_vote(code, 1, _OLD_SCRIPT, 1, 2)  # an item it had not answered
    store.submit_vote(code, 0, "ab" * 16, 1, 1)  # a new phone
    assert len(store.votes(code)) == 5
    rows = list(csv.DictReader(io.StringIO(store.export_csv(code))))
    assert [r["voter_id"] for r in rows[:3]] == [_OLD_PHONE, _OLD_PHONE, _OLD_SCRIPT] and "session_id" not in rows[0]
    con = sqlite3.connect(path)
    try:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("3",)  # 1 → 2 → 3
        assert {"voter_id", "updated"} <= {row[1] for row in con.execute("PRAGMA table_info(votes)")}
    finally:
        con.close()
    again = PollStore(path)  # opening an upgraded file again changes nothing
    assert again.votes(code) == store.votes(code)


def test_many_openers_of_a_schema_1_database_upgrade_it_once(tmp_path: Path) -> None:
    """Threads that open the same old file at once (app sessions after a restart): each gets a
    working store and the votes are there once."""
    path = tmp_path / "polls.sqlite"
    code = _schema_1_database(path)
    barrier = threading.Barrier(6)
    errors: list[BaseException] = []

    def opener() -> None:
        barrier.wait()
        try:
            PollStore(path).votes(code)
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert len(PollStore(path).votes(code)) == 3


def test_an_old_file_opens_while_another_process_is_writing_to_it(tmp_path: Path) -> None:
    """The old file is not yet in WAL mode; while another connection holds its write lock, the
    switch to WAL is answered "database is locked" at once (SQLite does not wait there).  The store
    waits for the writer instead of failing (seen in CI as the many-openers race)."""
    path = tmp_path / "polls.sqlite"
    code = _schema_1_database(path)
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE votes SET confidence = confidence")
    release = threading.Timer(0.3, lambda: writer.execute("COMMIT"))
    release.start()
    try:
        store = PollStore(path, timeout=10)
    finally:
        release.join()
        writer.close()
    assert len(store.votes(code)) == 3


def test_a_file_held_past_the_timeout_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "polls.sqlite"
    _schema_1_database(path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE votes SET confidence = confidence")
    try:
        with pytest.raises(PollStoreError, match="cannot open the poll database .*locked"):
            PollStore(path, timeout=0.2)
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_database_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "polls.sqlite"
    PollStore(path)
    con = sqlite3.connect(path)
    try:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
        con.commit()
    finally:
        con.close()
    with pytest.raises(PollStoreError, match="schema '99'"):
        PollStore(path)


def test_codes_are_unique(store: PollStore) -> None:
    codes = {store.create_poll([_item()]).code for _ in range(30)}
    assert len(codes) == 30


def test_default_path_follows_amp_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert default_poll_path() == (tmp_path / "elsewhere" / "polls.sqlite").resolve()
    assert PollStore().path == default_poll_path()


def test_bad_polls_and_items_are_refused(store: PollStore) -> None:
    with pytest.raises(InvalidPollError, match="1 to"):
        store.create_poll([])
    with pytest.raises(InvalidPollError, match="not PollItem"):
        store.create_poll([{"surface": "x"}])  # type: ignore[list-item]
    with pytest.raises(InvalidPollError, match="title"):
        store.create_poll([_item()], title="x" * 500)
    with pytest.raises(InvalidPollError, match="model_p_lf0"):
        _item(p=1.5)
    with pytest.raises(InvalidPollError, match="model_p_lf0"):
        _item(p=float("nan"))
    with pytest.raises(InvalidPollError, match="surface"):
        PollItem("", "pp", "a", "b", "c", "d")


def test_item_from_pair_uses_paraphrases() -> None:
    from amp.data.generate import find_pair

    item = PollItem.from_pair(find_pair("the boy saw the man with the telescope"), model_p_lf0=0.25)
    assert item.paraphrase1 == "the boy used the telescope to see the man"
    assert item.type == "pp" and item.model_p_lf0 == 0.25 and "instrument" in item.lf1


def test_unreadable_database_is_a_typed_error(tmp_path: Path) -> None:
    bad = tmp_path / "polls.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(PollStoreError, match="cannot open"):
        PollStore(bad)


# --- votes: validation, duplicates, closing -------------------------------------------------


def test_vote_then_duplicate_and_replay_are_rejected(store: PollStore) -> None:
    code = store.create_poll([_item(0), _item(1)]).code
    vote = store.submit_vote(code, 0, "sess-1", 1, 2)
    assert (vote.code, vote.item_index, vote.voter_id, vote.choice, vote.confidence) == (code, 0, "sess-1", 1, 2)
    with pytest.raises(DuplicateVoteError, match="already voted"):
        store.submit_vote(code, 0, "sess-1", 0, 3)  # changed mind: still one vote per item
    with pytest.raises(DuplicateVoteError):
        store.submit_vote(code, 0, "sess-1", 1, 2)  # exact replay
    store.submit_vote(code, 1, "sess-1", 0, 1)  # other item: fine
    store.submit_vote(code, 0, "sess-2", 0, 1)  # other voter: fine
    assert len(store.votes(code)) == 3


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"code": "ZZZZZZ"}, PollNotFoundError),
        ({"code": "nope"}, PollNotFoundError),
        ({"code": 123}, PollNotFoundError),
        ({"item_index": 2}, InvalidVoteError),
        ({"item_index": -1}, InvalidVoteError),
        ({"item_index": "0"}, InvalidVoteError),
        ({"item_index": 0.0}, InvalidVoteError),
        ({"item_index": True}, InvalidVoteError),
        ({"choice": 2}, InvalidVoteError),
        ({"choice": True}, InvalidVoteError),
        ({"choice": "0"}, InvalidVoteError),
        ({"confidence": 0}, InvalidVoteError),
        ({"confidence": 4}, InvalidVoteError),
        ({"confidence": 2.0}, InvalidVoteError),
        ({"voter_id": ""}, InvalidVoteError),
        ({"voter_id": "x" * 129}, InvalidVoteError),
        ({"voter_id": "has space"}, InvalidVoteError),
        ({"voter_id": "=cmd()"}, InvalidVoteError),
        ({"voter_id": "-2"}, InvalidVoteError),  # a spreadsheet would read it as a formula
        ({"voter_id": "@sum"}, InvalidVoteError),
        ({"voter_id": None}, InvalidVoteError),
    ],
)
def test_malformed_votes_are_rejected(store: PollStore, kwargs: dict, error: type[PollError]) -> None:
    code = store.create_poll([_item(0), _item(1)]).code
    args = {"code": code, "item_index": 0, "voter_id": "ok-voter", "choice": 0, "confidence": 2} | kwargs
    with pytest.raises(error):
        store.submit_vote(**args)
    assert store.votes(code) == ()


def test_close_keeps_data_and_stops_votes(store: PollStore) -> None:
    code = store.create_poll([_item()]).code
    store.submit_vote(code, 0, "a", 0, 3)
    closed = store.close_poll(code)
    assert closed.closed and closed.closed_at
    assert store.close_poll(code).closed_at == closed.closed_at  # idempotent
    with pytest.raises(PollClosedError):
        store.submit_vote(code, 0, "b", 1, 3)
    assert len(store.votes(code)) == 1
    assert store.results(code).items[0].counts == (1, 0) and store.results(code).closed
    with pytest.raises(PollNotFoundError):
        store.close_poll("ABCDEF")


# --- concurrency ----------------------------------------------------------------------------


def test_concurrent_threads_lose_nothing(store: PollStore) -> None:
    code = store.create_poll([_item(i) for i in range(10)]).code
    errors: list[BaseException] = []

    def voter(t: int) -> None:
        try:
            for i in range(10):
                store.submit_vote(code, i, f"thread-{t}", (t + i) % 2, 1 + (t * i) % 3)
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=voter, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    results = store.results(code)
    assert results.n_votes == 80 and results.n_voters == 8
    assert all(r.n_voters == 8 and sum(r.counts) == 8 for r in results.items)


def test_threads_racing_one_voter_item_have_one_winner(store: PollStore) -> None:
    code = store.create_poll([_item()]).code
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def racer() -> None:
        barrier.wait()
        try:
            store.submit_vote(code, 0, "same", 0, 2)
            outcomes.append("won")
        except DuplicateVoteError:
            outcomes.append("dup")

    threads = [threading.Thread(target=racer) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(outcomes) == ["dup"] * 5 + ["won"]


def _process_voter(path: str, code: str, worker: int, n_items: int) -> None:
    store = PollStore(path)
    for i in range(n_items):
        store.submit_vote(code, i, f"proc-{worker}", i % 2, 1 + (worker + i) % 3)


def _process_racer(path: str, code: str, n_items: int, barrier: Any, queue: Any) -> None:
    store = PollStore(path)
    barrier.wait()
    wins = []
    for i in range(n_items):
        try:
            store.submit_vote(code, i, "shared-voter", 1, 3)
            wins.append(i)
        except DuplicateVoteError:
            pass
    queue.put(wins)


def test_concurrent_processes_lose_nothing(store: PollStore) -> None:
    code = store.create_poll([_item(i) for i in range(25)]).code
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_process_voter, args=(str(store.path), code, w, 25)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    votes = store.votes(code)
    assert len(votes) == 100
    assert Counter(v.voter_id for v in votes) == {f"proc-{w}": 25 for w in range(4)}
    results = store.results(code)
    assert all(r.n_voters == 4 for r in results.items)
    assert [r.counts for r in results.items] == [(4, 0) if i % 2 == 0 else (0, 4) for i in range(25)]


def test_processes_racing_one_voter_have_exactly_one_winner_per_item(store: PollStore) -> None:
    n_items = 20
    code = store.create_poll([_item(i) for i in range(n_items)]).code
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_process_racer, args=(str(store.path), code, n_items, barrier, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    wins = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert sorted(wins[0] + wins[1]) == list(range(n_items))  # each item won exactly once
    assert len(store.votes(code)) == n_items


# --- the Appendix A.5 conversion -------------------------------------------------------------


def _v(voter: str, item: int, choice: int, confidence: int) -> Vote:
    return Vote("CODE22", item, voter, choice, confidence)


def test_confidence_conversion_hand_computed() -> None:
    votes = [
        _v("a", 0, 0, 1),  # a's lowest → P(chosen)=0.5 → P(LF0)=0.5
        _v("a", 1, 1, 3),  # a's highest → P(LF1)=1.0 → P(LF0)=0.0
        _v("a", 2, 0, 2),  # halfway → 0.75
        _v("b", 0, 1, 2),  # single vote: raw scale (2-1)/2=0.5 → P(LF1)=0.75 → 0.25
        _v("c", 0, 0, 3),  # all equal at "very": raw scale → 1.0
        _v("c", 1, 1, 3),  # → P(LF0) = 0.0
        _v("d", 0, 0, 2),  # d ranges 2..3: 2 → 0.5
        _v("d", 1, 0, 3),  # 3 → 1.0
        _v("e", 0, 1, 1),  # single "not confident" → 0.5 either way
    ]
    assert confidence_to_p_lf0(votes) == pytest.approx([0.5, 0.0, 0.75, 0.25, 1.0, 0.0, 0.5, 1.0, 0.5])
    assert confidence_to_p_lf0([]) == ()
    with pytest.raises(InvalidVoteError):
        confidence_to_p_lf0([_v("a", 0, 0, 5)])


def test_results_and_dataframe(store: PollStore) -> None:
    code = store.create_poll([_item(0, 0.9), _item(1, None)], title="T").code
    store.submit_vote(code, 0, "a", 0, 1)
    store.submit_vote(code, 1, "a", 1, 3)
    store.submit_vote(code, 0, "b", 1, 2)
    results = store.results(code)
    first, second = results.items
    assert (results.n_voters, results.n_votes, results.title) == (2, 3, "T")
    assert first.counts == (1, 1) and first.confidence_counts == (1, 1, 0)
    assert first.confidence_by_choice == ((1, 0, 0), (0, 1, 0))
    assert first.human_p_lf0 == pytest.approx((0.5 + 0.25) / 2) and first.model_p_lf0 == 0.9
    assert second.human_p_lf0 == pytest.approx(0.0) and second.model_p_lf0 is None
    frame = store.results_frame(code)
    assert list(frame["votes_lf0"]) == [1, 0] and list(frame["n_voters"]) == [2, 1]
    assert frame.loc[0, "difference"] == pytest.approx(0.9 - 0.375)
    empty = store.results(store.create_poll([_item()]).code)
    assert empty.items[0].human_p_lf0 is None and empty.n_voters == 0


def test_export_csv(store: PollStore) -> None:
    code = store.create_poll([_item(0, 0.9), _item(1)]).code
    store.submit_vote(code, 0, "a", 1, 3)
    store.submit_vote(code, 1, "a", 0, 1)
    rows = list(csv.DictReader(io.StringIO(store.export_csv(code))))
    assert len(rows) == 2
    first = rows[0]
    assert first["poll"] == code and first["item"] == "0" and first["voter_id"] == "a"
    assert first["choice"] == "1" and first["reading"] == "instrument"
    assert first["paraphrase"] == "the boy used the telescope to see the man"
    assert first["confidence"] == "3" and first["confidence_label"] == "very confident"
    assert float(first["p_lf0"]) == 0.0 and float(first["model_p_lf0"]) == 0.9
    assert rows[1]["reading"] == "possessive" and float(rows[1]["p_lf0"]) == 0.5
    assert rows[1]["model_p_lf0"] == "0.7"
    header_only = store.export_csv(store.create_poll([_item()]).code)
    assert header_only.count("\n") == 1
    assert header_only.strip().split(",") == [
        "poll", "item", "surface", "type", "voter_id", "choice", "reading", "paraphrase", "confidence",
        "confidence_label", "p_lf0", "model_p_lf0", "created",
    ]


def test_typed_codes_are_tidied_before_they_are_checked() -> None:
    assert tidy_code("  k7qx2m \n") == "K7QX2M"
    assert tidy_code("nope") == "NOPE"  # tidying never judges: the store's lookup does
    assert normalise_code(" k7qx2m ") == "K7QX2M"
    with pytest.raises(PollNotFoundError, match="not a poll code"):
        normalise_code(tidy_code("k7qx2o"))  # O is not in the code alphabet
