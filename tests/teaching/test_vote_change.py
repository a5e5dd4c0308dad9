"""A phone may change its vote until the teacher reveals the item (issue #41 point 3), the per-voter
export (point 4) and the cheap vote path's store (point 2): kept connections, one indexed query."""

from __future__ import annotations

import csv
import io
import json
import pickle
import sqlite3
import threading
from dataclasses import asdict
from pathlib import Path

import pytest

from amp.teaching import poll_store
from amp.teaching.poll import (
    VOTER_COLUMNS,
    AnswerOutcome,
    DuplicateVoteError,
    InvalidPollError,
    ItemRevealedError,
    PollItem,
    PollNotFoundError,
    PollStore,
    anonymous_voter,
    shared_store,
    voter_rows,
    voters_csv,
    voters_json,
)

PHONE = "a" * 32
OTHER = "b" * 32


def _item(i: int = 0) -> PollItem:
    return PollItem(surface=f"the boy saw the man with the telescope {i}", type="pp", lf0=f"lf zero {i}",
                    lf1=f"lf one {i}", paraphrase0="the boy saw the man, who had the telescope",
                    paraphrase1="the boy used the telescope to see the man", model_p_lf0=0.7)


@pytest.fixture
def store(tmp_path: Path) -> PollStore:
    return PollStore(tmp_path / "polls.sqlite")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The store's clock, one second further on each reading (the real one reads milliseconds, and
    a test's answers come faster); returns the times it gave."""
    given: list[str] = []

    def tick() -> str:
        given.append(f"2026-01-05T10:{len(given) // 60:02d}:{len(given) % 60:02d}.000+00:00")
        return given[-1]

    monkeypatch.setattr(poll_store, "_now", tick)
    return given


# --- change until the reveal -------------------------------------------------------------------


def test_a_changed_answer_is_counted_once_with_its_first_and_last_times(store: PollStore, clock: list[str]) -> None:
    code = store.create_poll([_item(0), _item(1)]).code
    first = store.answer(code, 0, PHONE, 0, 1)
    assert first.outcome is AnswerOutcome.RECORDED
    assert first.vote.created == first.vote.updated != ""
    store.answer(code, 0, OTHER, 0, 2)
    again = store.answer(code, 0, PHONE, 0, 1)  # a double click: the same answer again
    assert again.outcome is AnswerOutcome.UNCHANGED and again.vote == first.vote
    changed = store.answer(code, 0, PHONE, 1, 3)
    assert changed.outcome is AnswerOutcome.CHANGED
    assert (changed.vote.choice, changed.vote.confidence) == (1, 3)
    assert changed.vote.created == first.vote.created  # the first answer's time is kept
    assert changed.vote.updated == clock[-1] > first.vote.updated  # the change's time
    votes = store.votes(code)
    assert [(v.voter_id, v.choice, v.confidence) for v in votes] == [(PHONE, 1, 3), (OTHER, 0, 2)]
    assert votes[0] == changed.vote  # what the store reads back is what the answer returned
    item = store.results(code).items[0]
    assert (item.n_voters, item.counts) == (2, (1, 1))  # the phone's latest answer, once
    assert store.voter_votes(code, PHONE) == {0: changed.vote}
    assert store.voter_votes(code, "c" * 32) == {}


def test_a_first_vote_cannot_be_submitted_twice_but_can_be_changed(store: PollStore) -> None:
    code = store.create_poll([_item()]).code
    store.submit_vote(code, 0, PHONE, 0, 2)
    with pytest.raises(DuplicateVoteError):
        store.submit_vote(code, 0, PHONE, 1, 2)
    assert store.answer(code, 0, PHONE, 1, 2).outcome is AnswerOutcome.CHANGED
    assert [(v.choice, v.confidence) for v in store.votes(code)] == [(1, 2)]


def test_the_reveal_locks_the_items_answers_and_survives_a_new_store(store: PollStore) -> None:
    code = store.create_poll([_item(0), _item(1)]).code
    store.answer(code, 0, PHONE, 0, 2)
    assert store.revealed_items(code) == frozenset()
    when = store.reveal_item(code, 0)
    assert store.reveal_item(code, 0) == when  # idempotent: the first reveal's time
    with pytest.raises(ItemRevealedError, match="revealed"):
        store.answer(code, 0, PHONE, 1, 3)  # a change after the reveal
    with pytest.raises(ItemRevealedError):
        store.answer(code, 0, OTHER, 1, 3)  # a first answer after the reveal
    with pytest.raises(ItemRevealedError):
        store.submit_vote(code, 0, OTHER, 1, 3)
    assert [(v.voter_id, v.choice, v.confidence) for v in store.votes(code)] == [(PHONE, 0, 2)]
    store.answer(code, 1, PHONE, 1, 1)  # the other item is still open
    assert PollStore(store.path).revealed_items(code) == frozenset({0})  # a reload, a restarted app


def test_reveal_of_an_unknown_poll_or_item_is_a_typed_error(store: PollStore) -> None:
    code = store.create_poll([_item()]).code
    with pytest.raises(PollNotFoundError):
        store.reveal_item("ZZZZZZ", 0)
    for bad in (1, -1, True, "0"):
        with pytest.raises(InvalidPollError):
            store.reveal_item(code, bad)  # type: ignore[arg-type]
    assert store.revealed_items(code) == frozenset()


def test_threads_changing_one_phones_vote_leave_one_row(store: PollStore) -> None:
    code = store.create_poll([_item()]).code
    barrier = threading.Barrier(6)
    outcomes: list[AnswerOutcome] = []

    def tap(n: int) -> None:
        barrier.wait()
        outcomes.append(store.answer(code, 0, PHONE, n % 2, 1 + n % 3).outcome)

    threads = [threading.Thread(target=tap, args=(n,)) for n in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert outcomes.count(AnswerOutcome.RECORDED) == 1 and len(outcomes) == 6
    (vote,) = store.votes(code)
    assert sum(store.results(code).items[0].counts) == 1 and vote.voter_id == PHONE


# --- the schema upgrade --------------------------------------------------------------------------

#: The poll database as schema 2 wrote it: no reveals, no last-answer time.
_SCHEMA_2 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE polls (code TEXT PRIMARY KEY, title TEXT NOT NULL, items TEXT NOT NULL, n_items INTEGER NOT NULL,
                    created TEXT NOT NULL, closed_at TEXT);
CREATE TABLE votes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    code TEXT NOT NULL REFERENCES polls(code),
    item_index INTEGER NOT NULL,
    voter_id TEXT NOT NULL,
    choice INTEGER NOT NULL CHECK (choice IN (0, 1)),
    confidence INTEGER NOT NULL CHECK (confidence IN (1, 2, 3)),
    created TEXT NOT NULL,
    UNIQUE (code, item_index, voter_id)
);
CREATE INDEX votes_by_code ON votes (code, id);
INSERT INTO meta VALUES ('schema', '2');
"""
_T0 = "2025-03-01T09:00:00.000+00:00"


def test_a_schema_2_database_is_upgraded_and_keeps_its_votes(tmp_path: Path) -> None:
    path = tmp_path / "polls.sqlite"
    con = sqlite3.connect(path)
    try:
        con.executescript(_SCHEMA_2)
        con.execute("INSERT INTO polls VALUES ('K7QX2M', 'old', ?, 2, ?, NULL)",
                    (json.dumps([asdict(_item(0)), asdict(_item(1))]), _T0))
        con.executemany("INSERT INTO votes (code, item_index, voter_id, choice, confidence, created) "
                        "VALUES ('K7QX2M', ?, ?, ?, ?, ?)", [(0, PHONE, 1, 3, _T0), (0, OTHER, 0, 2, _T0)])
        con.commit()
    finally:
        con.close()
    store = PollStore(path)
    votes = store.votes("K7QX2M")
    assert [(v.voter_id, v.choice, v.created, v.updated) for v in votes] == [(PHONE, 1, _T0, _T0),
                                                                            (OTHER, 0, _T0, _T0)]
    assert store.results("K7QX2M").items[0].counts == (1, 1)
    changed = store.answer("K7QX2M", 0, PHONE, 0, 1)  # an old vote may change: it is the same phone's
    assert changed.outcome is AnswerOutcome.CHANGED and changed.vote.created == _T0 and changed.vote.updated > _T0
    store.reveal_item("K7QX2M", 0)
    with pytest.raises(ItemRevealedError):
        store.answer("K7QX2M", 0, OTHER, 1, 1)
    assert store.results("K7QX2M").items[0].counts == (2, 0)
    con = sqlite3.connect(path)
    try:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("3",)
    finally:
        con.close()
    assert PollStore(path).votes("K7QX2M") == store.votes("K7QX2M")  # opening it again changes nothing


# --- the per-voter export --------------------------------------------------------------------------


def test_the_per_voter_export_is_the_votes_cast(store: PollStore, clock: list[str]) -> None:
    code = store.create_poll([_item(0), _item(1)]).code
    store.answer(code, 1, PHONE, 1, 1)
    store.answer(code, 0, OTHER, 0, 3)
    store.answer(code, 0, PHONE, 0, 2)
    store.answer(code, 1, PHONE, 0, 2)  # changed: the latest answer is exported, once
    cast = {(PHONE, 0): (0, 2), (PHONE, 1): (0, 2), (OTHER, 0): (0, 3)}
    votes = store.votes(code)
    rows = voter_rows(votes)
    names = {anonymous_voter(code, PHONE): PHONE, anonymous_voter(code, OTHER): OTHER}
    assert len(names) == 2 and not set(names) & {PHONE, OTHER}  # a pseudonym, not the phone's cookie
    assert {(names[str(r["voter"])], r["item"]): (r["choice"], r["confidence"]) for r in rows} == cast
    assert len(rows) == len(cast)
    assert [(names[str(r["voter"])], r["item"]) for r in rows] == [(PHONE, 0), (PHONE, 1), (OTHER, 0)]
    by_key = {(v.voter_id, v.item_index): v for v in votes}
    for r in rows:
        vote = by_key[(names[str(r["voter"])], r["item"])]
        assert (r["poll"], r["first_answer"], r["last_answer"]) == (code, vote.created, vote.updated)
    changed = by_key[(PHONE, 1)]
    assert changed.updated > changed.created
    csv_rows = list(csv.DictReader(io.StringIO(store.export_voters_csv(code))))
    assert tuple(csv_rows[0]) == VOTER_COLUMNS
    assert csv_rows == [{k: str(v) for k, v in r.items()} for r in rows]
    assert json.loads(store.export_voters_json(code)) == list(rows)
    assert voters_csv(()) == ",".join(VOTER_COLUMNS) + "\n" and json.loads(voters_json(())) == []


# --- the cheap path: kept connections, one store per file, one indexed query ----------------------


def test_a_store_keeps_its_connection_across_calls(store: PollStore, monkeypatch: pytest.MonkeyPatch) -> None:
    code = store.create_poll([_item()]).code
    opened: list[int] = []
    real = PollStore._connect

    def counting(self: PollStore) -> sqlite3.Connection:
        opened.append(1)
        return real(self)

    monkeypatch.setattr(PollStore, "_connect", counting)
    store.close()  # start with no idle connection
    for n in range(20):
        store.answer(code, 0, f"phone-{n}", n % 2, 2)
        store.results(code)
    assert len(opened) == 1
    clone = pickle.loads(pickle.dumps(store))  # to another process: the path, not the connections
    assert clone.path == store.path and len(clone.votes(code)) == 20


def test_shared_store_is_one_per_file_and_follows_a_replaced_file(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "a"))
    first = shared_store()
    assert shared_store() is first and first.path == tmp_path / "a" / "polls.sqlite"
    code = first.create_poll([_item()]).code
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "b"))  # the default path is read on every call
    assert shared_store() is not first and shared_store().path == tmp_path / "b" / "polls.sqlite"
    first.path.unlink()  # the file removed (a cleared cache): a kept connection would write to the old one
    for suffix in ("-wal", "-shm"):
        Path(f"{first.path}{suffix}").unlink(missing_ok=True)
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "a"))
    fresh = shared_store()
    assert fresh is not first
    with pytest.raises(PollNotFoundError):
        fresh.get_poll(code)


def test_shared_store_keeps_a_few_files_stores(tmp_path: Path) -> None:
    stores = [shared_store(tmp_path / f"{n}.sqlite") for n in range(poll_store.MAX_SHARED_STORES + 2)]
    assert shared_store(stores[-1].path) is stores[-1]  # the newest are kept ...
    assert shared_store(stores[0].path) is not stores[0]  # ... the oldest let go
    assert len(poll_store._SHARED) <= poll_store.MAX_SHARED_STORES


def test_the_teachers_tally_reads_the_votes_with_one_indexed_query(store: PollStore) -> None:
    con = sqlite3.connect(store.path)
    try:
        plan = con.execute("EXPLAIN QUERY PLAN " + poll_store.POLL_VOTES_SQL, ("K7QX2M",)).fetchall()
    finally:
        con.close()
    details = " ".join(str(row[-1]) for row in plan)
    assert "USING INDEX votes_by_code" in details and "TEMP B-TREE" not in details, details
