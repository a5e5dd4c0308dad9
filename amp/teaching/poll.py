"""Classroom polls: students choose a reading of each ambiguous sentence and say how sure they are.

This repeats the paper's human annotation (Appendix A.5; reference §13.7) with a class: each
student (one browser *session*) picks the interpretation they prefer for every item and sets a
confidence of 1 = not, 2 = somewhat or 3 = very confident.  :func:`confidence_to_p_lf0` turns
those answers into a probability of LF0 exactly as the paper did, so the class's P(LF0) can be
set beside the model's (FIM-style, reference §13.5).

Storage is one SQLite file (stdlib :mod:`sqlite3`) in WAL mode; every write runs in a
``BEGIN IMMEDIATE`` transaction and "one vote per session per item" is a ``UNIQUE`` constraint,
so several app processes and threads can write at once without losing or doubling votes.  Only
JSON and plain columns are stored — nothing is pickled.  The default file is
``<cache root>/polls.sqlite`` (``cache/`` or ``$AMP_CACHE_DIR``, see :mod:`amp.settings`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import secrets
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from amp.errors import AmpError
from amp.settings import cache_root

if TYPE_CHECKING:
    import pandas as pd

    from amp.data.generate import AmbiguousPair

__all__ = [
    "CONFIDENCE_LABELS",
    "DuplicateVoteError",
    "InvalidPollError",
    "InvalidVoteError",
    "ItemResult",
    "Poll",
    "PollClosedError",
    "PollError",
    "PollItem",
    "PollNotFoundError",
    "PollResults",
    "PollStore",
    "PollStoreError",
    "Vote",
    "confidence_to_p_lf0",
    "default_poll_path",
    "normalise_code",
    "results_frame",
    "summarise",
]

#: Poll codes: 6 characters from an alphabet without look-alikes (no I, L, O, 0, 1).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
_CODE_RE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")

#: Session ids are opaque tokens (e.g. a UUID): 1–128 characters of ``[A-Za-z0-9._:@-]``.
_SESSION_RE = re.compile(r"[A-Za-z0-9._:@-]{1,128}")

MAX_ITEMS = 200
MAX_TEXT = 2000
MAX_TITLE = 200

#: The confidence slider of Appendix A.5, as three steps.
CONFIDENCE_LABELS: dict[int, str] = {1: "not confident", 2: "somewhat confident", 3: "very confident"}

SCHEMA_VERSION = 1

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
    session_id TEXT NOT NULL,
    choice INTEGER NOT NULL CHECK (choice IN (0, 1)),
    confidence INTEGER NOT NULL CHECK (confidence IN (1, 2, 3)),
    created TEXT NOT NULL,
    UNIQUE (code, item_index, session_id)
);
CREATE INDEX IF NOT EXISTS votes_by_code ON votes (code, id);
"""


# --- errors ------------------------------------------------------------------------------------


class PollError(AmpError):
    """Base class of every poll error."""


class PollNotFoundError(PollError, LookupError):
    """No poll has this code (or the text is not a poll code at all)."""


class PollClosedError(PollError):
    """The poll is closed: its votes stay readable, but it takes no new ones."""


class DuplicateVoteError(PollError):
    """This session already voted on this item (a second or replayed submission)."""


class InvalidVoteError(PollError, ValueError):
    """A vote with a malformed field (type, range, session id)."""


class InvalidPollError(PollError, ValueError):
    """A poll or poll item that cannot be created (no items, bad field, too long)."""


class PollStoreError(PollError, RuntimeError):
    """The poll database cannot be opened, read or written."""


# --- records -----------------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class PollItem:
    """One ambiguous sentence of a poll: both LFs, their paraphrases and the model's P(LF0).

    ``model_p_lf0`` is the model's probability of LF0 (reference §12, e.g. from a forced
    decode), or ``None`` when no model was run.
    """

    surface: str
    type: str
    lf0: str
    lf1: str
    paraphrase0: str
    paraphrase1: str
    model_p_lf0: float | None = None

    def __post_init__(self) -> None:
        for name in ("surface", "type", "lf0", "lf1", "paraphrase0", "paraphrase1"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise InvalidPollError(f"poll item field {name!r} must be a non-empty string, got {value!r}")
            if len(value) > MAX_TEXT:
                raise InvalidPollError(f"poll item field {name!r} is longer than {MAX_TEXT} characters")
        p = self.model_p_lf0
        if p is not None:
            if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p) or not 0 <= p <= 1:
                raise InvalidPollError(f"model_p_lf0 must be a probability in [0, 1] or None, got {p!r}")
            object.__setattr__(self, "model_p_lf0", float(p))

    @classmethod
    def from_pair(cls, pair: AmbiguousPair, model_p_lf0: float | None = None) -> PollItem:
        """An item for a generated ambiguous pair, with :func:`amp.teaching.paraphrase.paraphrases`."""
        from amp.teaching.paraphrase import paraphrases

        p0, p1 = paraphrases(pair)
        return cls(pair.surface, pair.type, pair.lf0.lf, pair.lf1.lf, p0, p1, model_p_lf0)

    def paraphrase(self, choice: int) -> str:
        return self.paraphrase0 if choice == 0 else self.paraphrase1


@dataclass(frozen=True)
class Poll:
    """A poll: its share code, title, items and state (``closed_at`` is ``None`` while open)."""

    code: str
    title: str
    items: tuple[PollItem, ...]
    created: str
    closed_at: str | None = None

    @property
    def closed(self) -> bool:
        return self.closed_at is not None

    @property
    def query(self) -> str:
        """The URL query that opens this poll in the app: ``?poll=<code>``."""
        return f"?poll={self.code}"


@dataclass(frozen=True)
class Vote:
    """One answer: ``choice`` 0 = LF0, 1 = LF1; ``confidence`` 1–3 (not/somewhat/very)."""

    code: str
    item_index: int
    session_id: str
    choice: int
    confidence: int
    created: str = ""


@dataclass(frozen=True)
class ItemResult:
    """Per-item tallies (reference §13.7 conversion in ``human_p_lf0``).

    ``counts`` = votes for (LF0, LF1); ``confidence_counts`` = votes at confidence (1, 2, 3);
    ``confidence_by_choice[c]`` the same, for the voters who chose reading ``c``.
    ``human_p_lf0`` is the mean of :func:`confidence_to_p_lf0` over this item's votes (``None``
    without votes); ``model_p_lf0`` is the model's P(LF0) stored with the item.
    """

    index: int
    surface: str
    type: str
    n_voters: int
    counts: tuple[int, int]
    confidence_counts: tuple[int, int, int]
    confidence_by_choice: tuple[tuple[int, int, int], tuple[int, int, int]]
    human_p_lf0: float | None
    model_p_lf0: float | None


@dataclass(frozen=True)
class PollResults:
    """All items' results; ``n_voters`` counts distinct sessions over the whole poll."""

    code: str
    title: str
    closed: bool
    n_voters: int
    n_votes: int
    items: tuple[ItemResult, ...]


# --- the A.5 conversion (pure) -------------------------------------------------------------


def confidence_to_p_lf0(votes: Iterable[Vote]) -> tuple[float, ...]:
    """P(LF0) of each vote, in input order (paper Appendix A.5; reference §13.7).

    Per annotator (``session_id``) the confidences are min–max normalised over the items they
    voted on, then mapped linearly so that their lowest confidence gives P(chosen reading) = 0.5
    and their highest 1.0; P(LF0) is that value if they chose LF0, else one minus it.

    Degenerate case (decided here): an annotator with a single vote, or with the same
    confidence everywhere, has no range to normalise over; their raw slider position is used
    instead, (c − 1) / 2 mapped to 0.5–1.0 — so "not" ↦ 0.5, "somewhat" ↦ 0.75,
    "very" ↦ 1.0.  Empty input gives ``()``.
    """
    votes = list(votes)
    ranges: dict[str, tuple[int, int]] = {}
    for vote in votes:
        if not _is_int(vote.confidence) or vote.confidence not in CONFIDENCE_LABELS:
            raise InvalidVoteError(f"confidence must be 1, 2 or 3, got {vote.confidence!r}")
        if not _is_int(vote.choice) or vote.choice not in (0, 1):
            raise InvalidVoteError(f"choice must be 0 or 1, got {vote.choice!r}")
        lo, hi = ranges.get(vote.session_id, (vote.confidence, vote.confidence))
        ranges[vote.session_id] = (min(lo, vote.confidence), max(hi, vote.confidence))
    out: list[float] = []
    for vote in votes:
        lo, hi = ranges[vote.session_id]
        scaled = (vote.confidence - lo) / (hi - lo) if hi > lo else (vote.confidence - 1) / 2
        p_chosen = 0.5 + 0.5 * scaled
        out.append(p_chosen if vote.choice == 0 else 1.0 - p_chosen)
    return tuple(out)


def summarise(poll: Poll, votes: Sequence[Vote]) -> PollResults:
    """Tally a poll's votes per item (pure; :meth:`PollStore.results` reads and calls this)."""
    p_lf0 = confidence_to_p_lf0(votes)
    per_item: list[list[tuple[Vote, float]]] = [[] for _ in poll.items]
    for vote, p in zip(votes, p_lf0, strict=True):
        if 0 <= vote.item_index < len(poll.items):
            per_item[vote.item_index].append((vote, p))
    items: list[ItemResult] = []
    for index, (item, answers) in enumerate(zip(poll.items, per_item, strict=True)):
        by_choice = [[0, 0, 0], [0, 0, 0]]
        for vote, _ in answers:
            by_choice[vote.choice][vote.confidence - 1] += 1
        conf = tuple(by_choice[0][k] + by_choice[1][k] for k in range(3))
        items.append(
            ItemResult(
                index=index,
                surface=item.surface,
                type=item.type,
                n_voters=len(answers),
                counts=(sum(by_choice[0]), sum(by_choice[1])),
                confidence_counts=conf,  # type: ignore[arg-type]
                confidence_by_choice=(tuple(by_choice[0]), tuple(by_choice[1])),  # type: ignore[arg-type]
                human_p_lf0=sum(p for _, p in answers) / len(answers) if answers else None,
                model_p_lf0=item.model_p_lf0,
            )
        )
    return PollResults(
        code=poll.code,
        title=poll.title,
        closed=poll.closed,
        n_voters=len({v.session_id for v in votes}),
        n_votes=len(votes),
        items=tuple(items),
    )


def results_frame(results: PollResults) -> pd.DataFrame:
    """One row per item: tallies, the class's P(LF0) (A.5) and the model's, and their gap."""
    import pandas as pd

    rows = [
        {
            "item": r.index,
            "surface": r.surface,
            "type": r.type,
            "n_voters": r.n_voters,
            "votes_lf0": r.counts[0],
            "votes_lf1": r.counts[1],
            "not_confident": r.confidence_counts[0],
            "somewhat_confident": r.confidence_counts[1],
            "very_confident": r.confidence_counts[2],
            "human_p_lf0": r.human_p_lf0,
            "model_p_lf0": r.model_p_lf0,
            "difference": (
                r.model_p_lf0 - r.human_p_lf0
                if r.model_p_lf0 is not None and r.human_p_lf0 is not None
                else None
            ),
        }
        for r in results.items
    ]
    return pd.DataFrame(rows, columns=list(rows[0]) if rows else None)


# --- the store ---------------------------------------------------------------------------------


def default_poll_path() -> Path:
    """``<cache root>/polls.sqlite`` (``cache/`` or ``$AMP_CACHE_DIR``)."""
    return cache_root() / "polls.sqlite"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def normalise_code(code: object) -> str:
    """Upper-case, trimmed poll code; :class:`PollNotFoundError` if it cannot be a code."""
    if not isinstance(code, str) or not _CODE_RE.fullmatch(code.strip().upper()):
        raise PollNotFoundError(
            f"{code!r} is not a poll code (codes are {CODE_LENGTH} letters and digits, e.g. 'K7QX2M')"
        )
    return code.strip().upper()


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
            con = self._connect()
            try:
                con.execute("PRAGMA journal_mode=WAL")
                con.executescript(
                    f"BEGIN IMMEDIATE; {_SCHEMA} INSERT OR IGNORE INTO meta VALUES "
                    f"('schema', '{SCHEMA_VERSION}'); COMMIT;"
                )
                row = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            finally:
                con.close()  # rolls back a half-run script
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

    def _run(self, action: str, fn: Any, *, write: bool = True) -> Any:
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
        payload = json.dumps([asdict(item) for item in items], allow_nan=False, ensure_ascii=False)
        created = _now()
        for _ in range(50):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            try:
                self._run(
                    "create a poll",
                    lambda con, code=code: con.execute(
                        "INSERT INTO polls VALUES (?, ?, ?, ?, ?, NULL)",
                        (code, title, payload, len(items), created),
                    ),
                )
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
        self, code: str, item_index: int, session_id: str, choice: int, confidence: int
    ) -> Vote:
        """Record one answer; one per session per item.

        Raises :class:`PollNotFoundError` (unknown code), :class:`PollClosedError`,
        :class:`InvalidVoteError` (index out of range, choice not 0/1, confidence not 1–3,
        non-int values, empty/oversized/odd session id) and :class:`DuplicateVoteError` (this
        session already answered this item — also when two submissions race).
        """
        code = normalise_code(code)
        if not _is_int(item_index):
            raise InvalidVoteError(f"item_index must be an int, got {item_index!r}")
        if not _is_int(choice) or choice not in (0, 1):
            raise InvalidVoteError(f"choice must be 0 (LF0) or 1 (LF1), got {choice!r}")
        if not _is_int(confidence) or confidence not in CONFIDENCE_LABELS:
            raise InvalidVoteError(f"confidence must be 1, 2 or 3 (not/somewhat/very), got {confidence!r}")
        if not isinstance(session_id, str) or not _SESSION_RE.fullmatch(session_id):
            raise InvalidVoteError(
                "session_id must be 1–128 characters of letters, digits and ._:@- "
                f"(got {session_id!r:.60})"
            )
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
                "INSERT INTO votes (code, item_index, session_id, choice, confidence, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (code, item_index, session_id, choice, confidence, created),
            )

        try:
            self._run("record a vote", insert)
        except sqlite3.IntegrityError:
            raise DuplicateVoteError(
                f"session {session_id!r} already voted on item {item_index} of poll {code}"
            ) from None
        return Vote(code, item_index, session_id, choice, confidence, created)

    def votes(self, code: str) -> tuple[Vote, ...]:
        """All votes of a poll in submission order (open or closed)."""
        code = self.get_poll(code).code
        rows = self._run(
            "read votes",
            lambda con: con.execute(
                "SELECT code, item_index, session_id, choice, confidence, created FROM votes "
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
        """CSV text, one row per vote, with the chosen reading's label and paraphrase and the
        vote's A.5 P(LF0)."""
        from amp.teaching.paraphrase import interpretation_label

        poll = self.get_poll(code)
        votes = self.votes(poll.code)
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([
            "poll", "item", "surface", "type", "session_id", "choice", "reading",
            "paraphrase", "confidence", "confidence_label", "p_lf0", "model_p_lf0", "created",
        ])
        for vote, p in zip(votes, confidence_to_p_lf0(votes), strict=True):
            item = poll.items[vote.item_index]
            writer.writerow([
                poll.code, vote.item_index, item.surface, item.type, vote.session_id, vote.choice,
                interpretation_label(item.type, vote.choice), item.paraphrase(vote.choice),
                vote.confidence, CONFIDENCE_LABELS[vote.confidence], f"{p:.6g}",
                "" if item.model_p_lf0 is None else f"{item.model_p_lf0:.6g}", vote.created,
            ])
        return buf.getvalue()
