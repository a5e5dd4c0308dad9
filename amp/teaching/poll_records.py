"""The records of a classroom poll (paper Appendix A.5; docs/paper-notes.md §13.7): items, polls, votes,
their tallies, the poll errors, the size bounds and the share-code rules.

Everything here is pure data and validation; :mod:`amp.teaching.poll_results` tallies votes and
:mod:`amp.teaching.poll_store` keeps polls and votes in SQLite.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from enum import Enum
from typing import TYPE_CHECKING

from amp.errors import AmpError
from amp.evaluation.matching import MATCHES
from amp.prompts import Prompt
from amp.teaching.errors import InvalidPollError, InvalidVoteError, PollNotFoundError
from amp.teaching.paraphrase import interpretation_label, paraphrases
from amp.teaching.voter import check_voter_id

if TYPE_CHECKING:
    from amp.data.generate import AmbiguousPair

#: Poll codes: 6 characters from an alphabet without look-alikes (no I, L, O, 0, 1).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
_CODE_RE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")

MAX_ITEMS = 200
MAX_TEXT = 2000
#: At most this many characters in a reading's short name.
MAX_NAME = 60
MAX_TITLE = 200

#: The confidence slider of Appendix A.5, as three steps.
CONFIDENCE_LABELS: dict[int, str] = {1: "not confident", 2: "somewhat confident", 3: "very confident"}


# --- records -----------------------------------------------------------------------------------


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class PollItem:
    """One ambiguous sentence of a poll: both LFs, their paraphrases and the model's P(LF0).

    ``model_p_lf0`` is the model's probability of LF0 (docs/paper-notes.md §12, e.g. from a forced
    decode), or ``None`` when no model was run.
    """

    surface: str
    type: str
    lf0: str
    lf1: str
    paraphrase0: str
    paraphrase1: str
    model_p_lf0: float | None = None
    #: Short names of the two readings ("she ducked"), for a teacher's own sentence; empty: the
    #: type's reading names (paper Table 1).  Items stored before these fields read as empty.
    name0: str = ""
    name1: str = ""
    #: What the model *wrote* for this sentence: its top beam's match
    #: (:class:`~amp.evaluation.matching.Match` value); empty: its parse was not run (and items
    #: stored before this field).
    model_match: str = ""
    #: The prompt the model's numbers were computed under (:mod:`amp.teaching.lesson_prompt`), so
    #: that every page scores this item under the same one and names it; ``None``: items stored
    #: before this field and items without the model (:func:`amp.teaching.lesson.item_prompt`).
    prompt: Prompt | None = None

    def __post_init__(self) -> None:
        for name in ("surface", "type", "lf0", "lf1", "paraphrase0", "paraphrase1"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise InvalidPollError(f"poll item field {name!r} must be a non-empty string, got {value!r}")
            if len(value) > MAX_TEXT:
                raise InvalidPollError(f"poll item field {name!r} is longer than {MAX_TEXT} characters")
        for name in ("name0", "name1"):
            value = getattr(self, name)
            if not isinstance(value, str) or len(value) > MAX_NAME:
                raise InvalidPollError(f"poll item field {name!r} must be a string of at most {MAX_NAME} characters")
        if self.model_match not in ("", *MATCHES):
            raise InvalidPollError(f"model_match must be one of {', '.join(MATCHES)} or empty, got {self.model_match!r}")
        p = self.model_p_lf0
        if p is not None:
            if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p) or not 0 <= p <= 1:
                raise InvalidPollError(f"model_p_lf0 must be a probability in [0, 1] or None, got {p!r}")
            object.__setattr__(self, "model_p_lf0", float(p))
        if isinstance(self.prompt, dict):  # read back from the store's JSON
            try:
                object.__setattr__(self, "prompt", Prompt.from_dict(self.prompt))
            except AmpError as exc:
                raise InvalidPollError(f"poll item prompt: {exc}") from None
        if self.prompt is not None:
            if not isinstance(self.prompt, Prompt):
                raise InvalidPollError(f"poll item prompt must be a Prompt or None, got {type(self.prompt).__name__}")
            if self.prompt.test_utterance != self.surface:
                raise InvalidPollError(f"poll item prompt tests {self.prompt.test_utterance!r}, not the item's "
                                       f"sentence {self.surface!r}")

    def to_dict(self) -> dict:
        """The item as the store writes it (JSON types only; the prompt as its own JSON record)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "prompt"}
        if self.prompt is not None:
            data["prompt"] = self.prompt.to_dict()
        return data

    @classmethod
    def from_pair(cls, pair: AmbiguousPair, model_p_lf0: float | None = None, model_match: str = "",
                  prompt: Prompt | None = None) -> PollItem:
        """An item for a generated ambiguous pair, with :func:`amp.teaching.paraphrase.paraphrases`."""

        p0, p1 = paraphrases(pair)
        return cls(pair.surface, pair.type, pair.lf0.lf, pair.lf1.lf, p0, p1, model_p_lf0, model_match=model_match,
                   prompt=prompt)

    def paraphrase(self, choice: int) -> str:
        return self.paraphrase0 if choice == 0 else self.paraphrase1

    def reading_name(self, choice: int) -> str:
        """The short name of reading ``choice``: the item's own name, else the type's ("instrument")."""
        own = self.name0 if choice == 0 else self.name1
        if own:
            return own

        try:
            return interpretation_label(self.type, choice)
        except (AmpError, KeyError, ValueError):
            return f"reading {choice}"


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
        """The URL query that opens this poll on the app's Streamlit student page: ``?poll=<code>``."""
        return f"?poll={self.code}"

    @property
    def vote_query(self) -> str:
        """The student's link, relative to the app: the light vote page (``vote?poll=<code>``,
        :mod:`amp.classroom.vote_routes`), which a class of phones can use at once."""
        return f"vote{self.query}"


@dataclass(frozen=True)
class Vote:
    """The answer of voter ``voter_id`` (:mod:`amp.teaching.voter`) on one item: ``choice`` 0 = LF0,
    1 = LF1; ``confidence`` 1–3 (not/somewhat/very).

    A voter has one vote per item, its latest answer: it may change it until the item is revealed
    (:meth:`amp.teaching.poll_store.PollStore.answer`).  ``created`` is the time of its first
    answer, ``updated`` that of its last (equal to ``created`` until a change; empty on a record
    made by hand)."""

    code: str
    item_index: int
    voter_id: str
    choice: int
    confidence: int
    created: str = ""
    updated: str = ""


class AnswerOutcome(Enum):
    """What an answer did to the voter's vote on an item."""

    RECORDED = "recorded"  # its first answer on this item
    CHANGED = "changed"  # another reading or confidence than before: the vote now says this
    UNCHANGED = "unchanged"  # the same answer again (a double click, a replay): nothing changed


@dataclass(frozen=True)
class Answered:
    """The vote as it stands after an answer, and what the answer did."""

    vote: Vote
    outcome: AnswerOutcome


@dataclass(frozen=True)
class ItemResult:
    """Per-item tallies (docs/paper-notes.md §13.7 conversion in ``human_p_lf0``).

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
    """All items' results; ``n_voters`` counts distinct voters over the whole poll."""

    code: str
    title: str
    closed: bool
    n_voters: int
    n_votes: int
    items: tuple[ItemResult, ...]


# --- rules shared by the store and the tallies ---------------------------------------------------


def tidy_code(text: str) -> str:
    """A typed poll code as stored and shown: trimmed and upper-case (not yet checked)."""
    return text.strip().upper()


def normalise_code(code: object) -> str:
    """Upper-case, trimmed poll code; :class:`PollNotFoundError` if it cannot be a code."""
    if not isinstance(code, str) or not _CODE_RE.fullmatch(tidy_code(code)):
        raise PollNotFoundError(
            f"{code!r} is not a poll code (codes are {CODE_LENGTH} letters and digits, e.g. 'K7QX2M')"
        )
    return tidy_code(code)


def check_answer(choice: object, confidence: object) -> None:
    """:class:`InvalidVoteError` unless ``choice`` is the int 0 (LF0) or 1 (LF1) and
    ``confidence`` the int 1, 2 or 3 (not/somewhat/very, :data:`CONFIDENCE_LABELS`)."""
    if not is_int(choice) or choice not in (0, 1):
        raise InvalidVoteError(f"choice must be 0 (LF0) or 1 (LF1), got {choice!r}")
    if not is_int(confidence) or confidence not in CONFIDENCE_LABELS:
        raise InvalidVoteError(f"confidence must be 1, 2 or 3 (not/somewhat/very), got {confidence!r}")


def check_vote_fields(item_index: object, voter_id: object, choice: object, confidence: object) -> None:
    """:class:`InvalidVoteError` unless ``item_index`` is an int, the answer passes
    :func:`check_answer` and ``voter_id`` is a voter id (:func:`amp.teaching.voter.check_voter_id`)
    (whether the index is in range is the store's to check: it knows the poll)."""
    if not is_int(item_index):
        raise InvalidVoteError(f"item_index must be an int, got {item_index!r}")
    check_answer(choice, confidence)
    check_voter_id(voter_id)
