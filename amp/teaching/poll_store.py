"""The classroom-poll store: polls and votes in one SQLite file (stdlib :mod:`sqlite3`).

The file is in WAL mode; every write runs in a ``BEGIN IMMEDIATE`` transaction and "one vote
per voter per item" is a ``UNIQUE`` constraint, so several app processes and threads can
write at once without losing or doubling votes.  Only JSON and plain columns are stored —
nothing is pickled.  The default file is ``<cache root>/polls.sqlite`` (``cache/`` or
``$AMP_CACHE_DIR``, see :mod:`amp.settings`).  A file of an older schema is upgraded when a store
opens it (schema 1 called the voter column ``session_id``; its votes keep counting).  Records and
rules: :mod:`amp.teaching.poll_records`; voter ids: :mod:`amp.teaching.voter`; tallies:
:mod:`amp.teaching.poll_results`.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
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
    PollClosedError,
    PollNotFoundError,
    PollStoreError,
)
from amp.teaching.poll_records import (
    CODE_ALPHABET,
    CODE_LENGTH,
    MAX_ITEMS,
    MAX_TITLE,
    Poll,
    PollItem,
    PollResults,
    Vote,
    check_vote_fields,
    normalise_code,
)
from amp.teaching.poll_results import results_frame, summarise, votes_csv

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")

SCHEMA_VERSION = 2

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
    created TEXT NOT NULL,
    UNIQUE (code, item_index, voter_id)
);
CREATE INDEX IF NOT EXISTS votes_by_code ON votes (code, id);
"""


#: How a file of an older schema is brought up to date: schema → (its next schema, the SQL that
#: gets there).  Each step runs in one ``BEGIN IMMEDIATE`` transaction, so processes that open an
#: old file at once upgrade it once.
_UPGRADES: dict[str, tuple[str, str]] = {
    "1": ("2", "ALTER TABLE votes RENAME COLUMN session_id TO voter_id"),  # the one voter id (amp.teaching.voter)
}


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
                con.execute(step[1])
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


class PollStore:
    """Polls and votes in one SQLite file, safe for concurrent threads and processes.

    ``path`` defaults to :func:`default_poll_path`; a new store on the same path sees
    everything written before (also by other processes).  Each call opens its own connection,
    so one store object may be shared between threads.
    """

    def __init__(self, path: str | Path | None = None, *, timeout: float = 30.0) -> None:
        self.path = Path(path) if path is not None else default_poll_path()
        self.timeout = timeout
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
        con = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        con.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        con.execute("PRAGMA foreign_keys = ON")
        con.execute("PRAGMA synchronous = NORMAL")
        return con

    @contextmanager
    def _transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """One connection, one transaction: ``BEGIN IMMEDIATE`` takes the write lock up front,
        so a read-check-insert sequence cannot interleave with another writer."""
        try:
            con = self._connect()
        except sqlite3.Error as exc:
            raise PollStoreError(f"cannot open the poll database {self.path}: {exc}") from exc
        try:
            con.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            yield con
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        finally:
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
        """Record one answer; one per voter per item.

        Raises :class:`PollNotFoundError` (unknown code), :class:`PollClosedError`,
        :class:`InvalidVoteError` (index out of range, choice not 0/1, confidence not 1–3,
        non-int values, a ``voter_id`` that is not one, :func:`amp.teaching.voter.check_voter_id`)
        and :class:`DuplicateVoteError` (this voter already answered this item — also when two
        submissions race).
        """
        code = normalise_code(code)
        check_vote_fields(item_index, voter_id, choice, confidence)
        created = _now()

        def insert(con: sqlite3.Connection) -> None:
            row = con.execute("SELECT n_items, closed_at FROM polls WHERE code = ?", (code,)).fetchone()
            if row is None:
                raise PollNotFoundError(f"no poll with code {code!r}")
            n_items, closed_at = row
            if closed_at is not None:
                raise PollClosedError(f"poll {code} was closed at {closed_at}; it takes no new votes")
            if not 0 <= item_index < n_items:
                raise InvalidVoteError(f"item_index {item_index} is out of range: poll {code} has {n_items} items")
            con.execute(
                "INSERT INTO votes (code, item_index, voter_id, choice, confidence, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (code, item_index, voter_id, choice, confidence, created),
            )

        try:
            self._run("record a vote", insert)
        except sqlite3.IntegrityError:
            raise DuplicateVoteError(
                f"voter {voter_id!r} already voted on item {item_index} of poll {code}"
            ) from None
        return Vote(code, item_index, voter_id, choice, confidence, created)

    def votes(self, code: str) -> tuple[Vote, ...]:
        """All votes of a poll in submission order (open or closed)."""
        code = self.get_poll(code).code
        rows = self._run(
            "read votes",
            lambda con: con.execute(
                "SELECT code, item_index, voter_id, choice, confidence, created FROM votes "
                "WHERE code = ? ORDER BY id",
                (code,),
            ).fetchall(),
            write=False,
        )
        return tuple(Vote(*row) for row in rows)

    # -- results ----------------------------------------------------------------------------

    def results(self, code: str) -> PollResults:
        """Per-item tallies with the A.5 human P(LF0) beside the model's (see :func:`summarise`)."""
        poll = self.get_poll(code)
        return summarise(poll, self.votes(poll.code))

    def results_frame(self, code: str) -> pd.DataFrame:
        """:func:`results_frame` of :meth:`results`: one DataFrame row per item."""
        return results_frame(self.results(code))

    def export_csv(self, code: str) -> str:
        """CSV text, one row per vote (see :func:`amp.teaching.poll_results.votes_csv`)."""
        poll = self.get_poll(code)
        return votes_csv(poll, self.votes(poll.code))
