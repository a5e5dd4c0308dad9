"""The classroom-poll store: polls and votes in one SQLite file (stdlib :mod:`sqlite3`).

The file is in WAL mode; every write runs in a ``BEGIN IMMEDIATE`` transaction and "one vote
per voter per item" is a ``UNIQUE`` constraint, so several app processes and threads can
write at once without losing or doubling votes.  A voter's vote on an item is its latest answer:
:meth:`PollStore.answer` changes it until the teacher reveals the item
(:meth:`PollStore.reveal_item`), which locks the item's answers.  A store keeps its connections
(a few idle ones, shared by its threads) and :func:`shared_store` keeps one store per file per
process, so a vote costs one transaction, not a connection and a schema check.

Only JSON and plain columns are stored — nothing is pickled.  The default file is
``<cache root>/polls.sqlite`` (``cache/`` or ``$AMP_CACHE_DIR``, see :mod:`amp.settings`).  A file
of an older schema is upgraded when a store opens it (schema 1 called the voter column
``session_id``; schema 2 had no reveals and no last-answer time; their votes keep counting).
Records and rules: :mod:`amp.teaching.poll_records`; voter ids: :mod:`amp.teaching.voter`;
tallies: :mod:`amp.teaching.poll_results`.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from amp.settings import cache_root
from amp.teaching.errors import (
    DuplicateVoteError,
    InvalidPollError,
    InvalidVoteError,
    ItemRevealedError,
    PollClosedError,
    PollNotFoundError,
    PollStoreError,
)
from amp.teaching.poll_records import (
    CODE_ALPHABET,
    CODE_LENGTH,
    MAX_ITEMS,
    MAX_TITLE,
    Answered,
    AnswerOutcome,
    Poll,
    PollItem,
    PollResults,
    Vote,
    check_vote_fields,
    is_int,
    normalise_code,
)
from amp.teaching.poll_results import results_frame, summarise, voters_csv, voters_json, votes_csv

if TYPE_CHECKING:
    import pandas as pd

# long: ~590 lines — the poll file's one writer: its schema and upgrades (schema 1 → 3), a pool of
# connections shared by the app's threads, every operation as one transaction with its typed refusal,
# and one kept store per file; the records and the tally live in poll_records and poll_results.

T = TypeVar("T")

SCHEMA_VERSION = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS polls (
    code TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    items TEXT NOT NULL,            -- JSON list of PollItem objects
    n_items INTEGER NOT NULL,
    created TEXT NOT NULL,
    closed_at TEXT                  -- NULL while open
);
CREATE TABLE IF NOT EXISTS votes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    code TEXT NOT NULL REFERENCES polls(code),
    item_index INTEGER NOT NULL,
    voter_id TEXT NOT NULL,         -- amp.teaching.voter (schema 1 called it session_id)
    choice INTEGER NOT NULL CHECK (choice IN (0, 1)),
    confidence INTEGER NOT NULL CHECK (confidence IN (1, 2, 3)),
    created TEXT NOT NULL,          -- the voter's first answer on this item
    updated TEXT NOT NULL DEFAULT '', -- the answer that counts now (schema 3; = created until a change)
    UNIQUE (code, item_index, voter_id)
);
CREATE INDEX IF NOT EXISTS votes_by_code ON votes (code, id);
CREATE TABLE IF NOT EXISTS reveals (  -- items whose model answer the teacher revealed: answers locked
    code TEXT NOT NULL REFERENCES polls(code),
    item_index INTEGER NOT NULL,
    revealed_at TEXT NOT NULL,
    PRIMARY KEY (code, item_index)
);
"""

#: The columns of a vote as :class:`~amp.teaching.poll_records.Vote` takes them.
_VOTE_COLUMNS = "code, item_index, voter_id, choice, confidence, created, updated"


#: How a file of an older schema is brought up to date: schema → (its next schema, the SQL
#: statements that get there).  Each step runs in one ``BEGIN IMMEDIATE`` transaction, so
#: processes that open an old file at once upgrade it once.
_UPGRADES: dict[str, tuple[str, tuple[str, ...]]] = {
    "1": ("2", ("ALTER TABLE votes RENAME COLUMN session_id TO voter_id",)),  # the one voter id (amp.teaching.voter)
    "2": ("3", (  # a vote may change until its item is revealed: its last-answer time, the reveals
        "ALTER TABLE votes ADD COLUMN updated TEXT NOT NULL DEFAULT ''",
        "UPDATE votes SET updated = created",
        "CREATE TABLE IF NOT EXISTS reveals (code TEXT NOT NULL REFERENCES polls(code), "
        "item_index INTEGER NOT NULL, revealed_at TEXT NOT NULL, PRIMARY KEY (code, item_index))",
    )),
}

#: The votes of one poll in the order of their first answers: the teacher's tally reads them with
#: this one query, on the ``votes_by_code`` index.
POLL_VOTES_SQL = f"SELECT {_VOTE_COLUMNS} FROM votes WHERE code = ? ORDER BY id"

#: At most this many idle connections a store keeps for its next calls (more threads at once
#: open more; those beyond this are closed when they finish).
MAX_IDLE_CONNECTIONS = 8


def default_poll_path() -> Path:
    """``<cache root>/polls.sqlite`` (``cache/`` or ``$AMP_CACHE_DIR``)."""
    return cache_root() / "polls.sqlite"


def _upgrade(con: sqlite3.Connection) -> tuple[str] | None:
    """Bring the file's schema up to :data:`SCHEMA_VERSION` through :data:`_UPGRADES`, one step
    per transaction; returns the ``meta`` row of the schema as it then is (``None``: no row)."""
    while True:
        con.execute("BEGIN IMMEDIATE")
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            step = _UPGRADES.get(row[0]) if row is not None else None
            if step is not None:
                for statement in step[1]:
                    con.execute(statement)
                con.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (step[0],))
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        if step is None:
            return row


def _busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _set_up(con: sqlite3.Connection) -> tuple[str] | None:
    """WAL mode, the tables, the schema row and any upgrades; returns the schema row."""
    con.execute("PRAGMA journal_mode=WAL")
    con.executescript(
        f"BEGIN IMMEDIATE; {_SCHEMA} INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA_VERSION}'); COMMIT;"
    )
    return _upgrade(con)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _open_item(con: sqlite3.Connection, code: str, item_index: int) -> None:
    """Raise unless item ``item_index`` of poll ``code`` takes answers: the poll exists and is
    open, the index is in range and the item was not revealed."""
    row = con.execute("SELECT n_items, closed_at FROM polls WHERE code = ?", (code,)).fetchone()
    if row is None:
        raise PollNotFoundError(f"no poll with code {code!r}")
    n_items, closed_at = row
    if closed_at is not None:
        raise PollClosedError(f"poll {code} was closed at {closed_at}; it takes no new votes")
    if not 0 <= item_index < n_items:
        raise InvalidVoteError(f"item_index {item_index} is out of range: poll {code} has {n_items} items")
    revealed = con.execute("SELECT revealed_at FROM reveals WHERE code = ? AND item_index = ?",
                           (code, item_index)).fetchone()
    if revealed is not None:
        raise ItemRevealedError(f"item {item_index} of poll {code} was revealed at {revealed[0]}: "
                                "its answers are locked")


#: Connections a forked child inherited from its parent: never closed in the child (closing one
#: would drop the locks the child's own connections hold on the same file), never used.
_INHERITED: list[sqlite3.Connection] = []


class PollStore:
    """Polls and votes in one SQLite file, safe for concurrent threads and processes.

    ``path`` defaults to :func:`default_poll_path`; a new store on the same path sees
    everything written before (also by other processes).  Each call borrows a connection for
    one transaction and gives it back (at most :data:`MAX_IDLE_CONNECTIONS` are kept), so one
    store object may be shared between threads; :func:`shared_store` is the one store of a file
    in this process.
    """

    def __init__(self, path: str | Path | None = None, *, timeout: float = 30.0) -> None:
        self.path = Path(path) if path is not None else default_poll_path()
        self.timeout = timeout
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            row = self._set_up_with_retries()
        except (OSError, sqlite3.Error) as exc:
            raise PollStoreError(
                f"cannot open the poll database {self.path}: {exc}. "
                "Point PollStore(path=...) or AMP_CACHE_DIR at a writable folder."
            ) from exc
        if row is None or row[0] != str(SCHEMA_VERSION):
            raise PollStoreError(
                f"{self.path} holds poll schema {row and row[0]!r}; this code reads {SCHEMA_VERSION}"
            )

    def __repr__(self) -> str:
        return f"PollStore({str(self.path)!r})"

    def __getstate__(self) -> dict:
        """A pickled store (sent to another process) carries its path, not its connections."""
        return {"path": self.path, "timeout": self.timeout}

    def __setstate__(self, state: dict) -> None:
        self.path, self.timeout = state["path"], state["timeout"]
        self._idle, self._lock, self._pid = [], threading.Lock(), os.getpid()

    def close(self) -> None:
        """Close the idle connections (the store stays usable: a later call opens another)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for con in idle:
            con.close()

    # -- plumbing ---------------------------------------------------------------------------

    def _set_up_with_retries(self) -> tuple[str] | None:
        """:func:`_set_up` on a connection of its own, again while the file is busy, up to
        ``timeout``.  Switching a file to WAL needs it to itself, and SQLite answers "database is
        locked" at once there, without waiting out ``busy_timeout`` (several app sessions that open
        an old file together after a restart); every step is its own transaction, so a retry
        starts clean."""
        deadline = time.monotonic() + self.timeout
        delay = 0.005
        while True:
            con = self._connect()
            try:
                return _set_up(con)
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() >= deadline:
                    raise
            finally:
                con.close()  # rolls back a half-run script
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def _connect(self) -> sqlite3.Connection:
        # check_same_thread=False: an idle connection may serve another thread next (one at a time)
        con = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        con.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        con.execute("PRAGMA foreign_keys = ON")
        con.execute("PRAGMA synchronous = NORMAL")
        return con

    @contextmanager
    def _transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """One connection, one transaction: ``BEGIN IMMEDIATE`` takes the write lock up front,
        so a read-check-insert sequence cannot interleave with another writer."""
        try:
            con = self._borrow()
        except sqlite3.Error as exc:
            raise PollStoreError(f"cannot open the poll database {self.path}: {exc}") from exc
        healthy = False
        try:
            con.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            yield con
            con.execute("COMMIT")
            healthy = True
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            healthy = not con.in_transaction
            raise
        finally:
            self._give_back(con, healthy)

    def _borrow(self) -> sqlite3.Connection:
        """An idle connection of this store, or a new one."""
        with self._lock:
            if self._pid != os.getpid():  # a forked child: its parent's connections are not its own
                _INHERITED.extend(self._idle)
                self._idle, self._pid = [], os.getpid()
            if self._idle:
                return self._idle.pop()
        return self._connect()

    def _give_back(self, con: sqlite3.Connection, healthy: bool) -> None:
        """Keep ``con`` for a next call (up to :data:`MAX_IDLE_CONNECTIONS`), else close it."""
        if healthy:
            with self._lock:
                if self._pid == os.getpid() and len(self._idle) < MAX_IDLE_CONNECTIONS:
                    self._idle.append(con)
                    return
        con.close()

    def _run(self, action: str, fn: Callable[[sqlite3.Connection], T], *, write: bool = True) -> T:
        try:
            with self._transaction(write=write) as con:
                return fn(con)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise PollStoreError(f"cannot {action} in {self.path}: {exc}") from exc

    @staticmethod
    def _poll_from_row(row: tuple) -> Poll:
        code, title, items_json, created, closed_at = row
        try:
            items = tuple(PollItem(**item) for item in json.loads(items_json))
        except (ValueError, TypeError) as exc:
            raise PollStoreError(f"poll {code} has unreadable items: {exc}") from exc
        return Poll(code, title, items, created, closed_at)

    # -- polls ------------------------------------------------------------------------------

    def create_poll(self, items: Sequence[PollItem], title: str = "") -> Poll:
        """Create an open poll with a fresh, unique share code (see :attr:`Poll.query`)."""
        if isinstance(items, str | bytes) or not isinstance(items, Sequence):
            raise InvalidPollError(f"items must be a sequence of PollItem, got {type(items).__name__}")
        items = tuple(items)
        if not 1 <= len(items) <= MAX_ITEMS:
            raise InvalidPollError(f"a poll needs 1 to {MAX_ITEMS} items, got {len(items)}")
        bad = [i for i, item in enumerate(items) if not isinstance(item, PollItem)]
        if bad:
            raise InvalidPollError(f"items {bad} are not PollItem objects")
        if not isinstance(title, str) or len(title) > MAX_TITLE:
            raise InvalidPollError(f"title must be a string of at most {MAX_TITLE} characters")
        payload = json.dumps([item.to_dict() for item in items], allow_nan=False, ensure_ascii=False)
        created = _now()
        for _ in range(50):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))

            def insert(con: sqlite3.Connection, code: str = code) -> None:
                con.execute("INSERT INTO polls VALUES (?, ?, ?, ?, ?, NULL)",
                            (code, title, payload, len(items), created))

            try:
                self._run("create a poll", insert)
            except sqlite3.IntegrityError:
                continue  # code already taken: draw another
            return Poll(code, title, items, created, None)
        raise PollStoreError("could not find a free poll code after 50 tries")  # pragma: no cover

    def get_poll(self, code: str) -> Poll:
        """The poll with this code (case and surrounding spaces ignored)."""
        code = normalise_code(code)
        row = self._run(
            "read a poll",
            lambda con: con.execute(
                "SELECT code, title, items, created, closed_at FROM polls WHERE code = ?", (code,)
            ).fetchone(),
            write=False,
        )
        if row is None:
            raise PollNotFoundError(f"no poll with code {code!r}")
        return self._poll_from_row(row)

    def list_polls(self) -> list[Poll]:
        """Every poll, newest first."""
        rows = self._run(
            "list polls",
            lambda con: con.execute(
                "SELECT code, title, items, created, closed_at FROM polls ORDER BY created DESC, code"
            ).fetchall(),
            write=False,
        )
        return [self._poll_from_row(row) for row in rows]

    def close_poll(self, code: str) -> Poll:
        """Stop accepting votes; the poll and its votes stay readable.  Idempotent."""
        code = normalise_code(code)

        def close(con: sqlite3.Connection) -> int:
            return con.execute(
                "UPDATE polls SET closed_at = COALESCE(closed_at, ?) WHERE code = ?", (_now(), code)
            ).rowcount

        if not self._run("close a poll", close):
            raise PollNotFoundError(f"no poll with code {code!r}")
        return self.get_poll(code)

    # -- votes ------------------------------------------------------------------------------

    def submit_vote(
        self, code: str, item_index: int, voter_id: str, choice: int, confidence: int
    ) -> Vote:
        """Record a voter's first answer on an item; one per voter per item (to change it, see
        :meth:`answer`).

        Raises :class:`PollNotFoundError` (unknown code), :class:`PollClosedError`,
        :class:`ItemRevealedError` (the teacher revealed the item: :meth:`reveal_item`),
        :class:`InvalidVoteError` (index out of range, choice not 0/1, confidence not 1–3,
        non-int values, a ``voter_id`` that is not one, :func:`amp.teaching.voter.check_voter_id`)
        and :class:`DuplicateVoteError` (this voter already answered this item — also when two
        submissions race).
        """
        code = normalise_code(code)
        check_vote_fields(item_index, voter_id, choice, confidence)
        created = _now()

        def insert(con: sqlite3.Connection) -> None:
            _open_item(con, code, item_index)
            con.execute(
                f"INSERT INTO votes ({_VOTE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (code, item_index, voter_id, choice, confidence, created, created),
            )

        try:
            self._run("record a vote", insert)
        except sqlite3.IntegrityError:
            raise DuplicateVoteError(
                f"voter {voter_id!r} already voted on item {item_index} of poll {code}"
            ) from None
        return Vote(code, item_index, voter_id, choice, confidence, created, created)

    def answer(
        self, code: str, item_index: int, voter_id: str, choice: int, confidence: int
    ) -> Answered:
        """Record a voter's answer on an item: its first, or a change of its vote, until the
        teacher reveals the item.  The voter keeps one vote per item — this answer — so the
        tallies count it once; the first answer's time stays ``created``, ``updated`` becomes the
        time of this answer when it changes the vote (the same answer again changes nothing).

        Raises what :meth:`submit_vote` raises, but never :class:`DuplicateVoteError`; after
        :meth:`reveal_item`, :class:`ItemRevealedError` (the vote stays as it was).
        """
        code = normalise_code(code)
        check_vote_fields(item_index, voter_id, choice, confidence)
        now = _now()
        key = (code, item_index, voter_id)

        def upsert(con: sqlite3.Connection) -> Answered:
            _open_item(con, code, item_index)
            row = con.execute(
                "SELECT choice, confidence, created, updated FROM votes "
                "WHERE code = ? AND item_index = ? AND voter_id = ?", key,
            ).fetchone()
            if row is None:
                con.execute(f"INSERT INTO votes ({_VOTE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (*key, choice, confidence, now, now))
                return Answered(Vote(*key, choice, confidence, now, now), AnswerOutcome.RECORDED)
            before_choice, before_confidence, created, updated = row
            if (before_choice, before_confidence) == (choice, confidence):
                return Answered(Vote(*key, choice, confidence, created, updated or created),
                                AnswerOutcome.UNCHANGED)
            con.execute("UPDATE votes SET choice = ?, confidence = ?, updated = ? "
                        "WHERE code = ? AND item_index = ? AND voter_id = ?", (choice, confidence, now, *key))
            return Answered(Vote(*key, choice, confidence, created, now), AnswerOutcome.CHANGED)

        return self._run("record an answer", upsert)

    def reveal_item(self, code: str, item_index: int) -> str:
        """Mark item ``item_index`` as revealed (the teacher showed the model's answer): from now
        on its answers are locked.  Idempotent; returns the time of the (first) reveal.

        Raises :class:`PollNotFoundError` and :class:`InvalidPollError` (no such item).
        """
        code = normalise_code(code)
        if not is_int(item_index):
            raise InvalidPollError(f"item_index must be an int, got {item_index!r}")
        now = _now()

        def reveal(con: sqlite3.Connection) -> str:
            row = con.execute("SELECT n_items FROM polls WHERE code = ?", (code,)).fetchone()
            if row is None:
                raise PollNotFoundError(f"no poll with code {code!r}")
            if not 0 <= item_index < row[0]:
                raise InvalidPollError(f"item_index {item_index} is out of range: poll {code} has {row[0]} items")
            con.execute("INSERT OR IGNORE INTO reveals VALUES (?, ?, ?)", (code, item_index, now))
            return con.execute("SELECT revealed_at FROM reveals WHERE code = ? AND item_index = ?",
                               (code, item_index)).fetchone()[0]

        return self._run("reveal an item", reveal)

    def revealed_items(self, code: str) -> frozenset[int]:
        """The indices of the poll's items the teacher revealed (their answers are locked)."""
        code = normalise_code(code)
        rows = self._run(
            "read the reveals",
            lambda con: con.execute("SELECT item_index FROM reveals WHERE code = ?", (code,)).fetchall(),
            write=False,
        )
        return frozenset(row[0] for row in rows)

    def voter_votes(self, code: str, voter_id: str) -> dict[int, Vote]:
        """One voter's votes on a poll, by item index (its latest answers; empty: none yet)."""
        code = normalise_code(code)
        rows = self._run(
            "read a voter's votes",
            lambda con: con.execute(
                f"SELECT {_VOTE_COLUMNS} FROM votes WHERE code = ? AND voter_id = ?", (code, voter_id)
            ).fetchall(),
            write=False,
        )
        return {row[1]: Vote(*row) for row in rows}

    def votes(self, code: str) -> tuple[Vote, ...]:
        """All votes of a poll (each voter's latest answer per item) in the order of their first
        answers (open or closed)."""
        return self._poll_and_votes(code)[1]

    def _poll_and_votes(self, code: str) -> tuple[Poll, tuple[Vote, ...]]:
        """The poll and its votes in one read transaction (the votes: one query on the
        ``votes_by_code`` index)."""
        code = normalise_code(code)

        def read(con: sqlite3.Connection) -> tuple[tuple | None, list[tuple]]:
            row = con.execute(
                "SELECT code, title, items, created, closed_at FROM polls WHERE code = ?", (code,)
            ).fetchone()
            if row is None:
                return None, []
            return row, con.execute(POLL_VOTES_SQL, (code,)).fetchall()

        row, rows = self._run("read votes", read, write=False)
        if row is None:
            raise PollNotFoundError(f"no poll with code {code!r}")
        return self._poll_from_row(row), tuple(Vote(*vote) for vote in rows)

    # -- results ----------------------------------------------------------------------------

    def results(self, code: str) -> PollResults:
        """Per-item tallies with the A.5 human P(LF0) beside the model's (see :func:`summarise`);
        the poll and its votes are read in one transaction."""
        return summarise(*self._poll_and_votes(code))

    def results_frame(self, code: str) -> pd.DataFrame:
        """:func:`results_frame` of :meth:`results`: one DataFrame row per item."""
        return results_frame(self.results(code))

    def export_csv(self, code: str) -> str:
        """CSV text, one row per vote (see :func:`amp.teaching.poll_results.votes_csv`)."""
        return votes_csv(*self._poll_and_votes(code))

    def export_voters_csv(self, code: str) -> str:
        """The per-voter export as CSV (:func:`amp.teaching.poll_results.voters_csv`)."""
        return voters_csv(self._poll_and_votes(code)[1])

    def export_voters_json(self, code: str) -> str:
        """The per-voter export as JSON (:func:`amp.teaching.poll_results.voters_json`)."""
        return voters_json(self._poll_and_votes(code)[1])


#: The stores :func:`shared_store` keeps: path → (store, the file's identity when it was opened).
_SHARED: dict[Path, tuple[PollStore, tuple[int, int]]] = {}
_SHARED_LOCK = threading.Lock()
#: At most this many files' stores are kept (an app has one; a test run opens many folders): the
#: oldest is let go, its idle connections closed.
MAX_SHARED_STORES = 4


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def shared_store(path: str | Path | None = None) -> PollStore:
    """The one :class:`PollStore` of this file in this process (``path`` defaults to
    :func:`default_poll_path`, read on every call), made once and kept with its connections, so
    a page that calls this on every rerun costs no new connection and no schema check.  A file
    removed or replaced since gets a fresh store (a kept connection would write to the old one)."""
    where = (Path(path) if path is not None else default_poll_path()).absolute()
    with _SHARED_LOCK:
        kept = _SHARED.get(where)
        if kept is not None and kept[1] == _identity(where):
            return kept[0]
        store = PollStore(where)
        identity = _identity(where)
        gone = [kept[0]] if kept is not None else []
        _SHARED.pop(where, None)
        if identity is not None:
            _SHARED[where] = (store, identity)
        while len(_SHARED) > MAX_SHARED_STORES:
            gone.append(_SHARED.pop(next(iter(_SHARED)))[0])
        for old in gone:
            old.close()
        return store
