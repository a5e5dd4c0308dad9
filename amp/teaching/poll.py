"""Classroom polls: students choose a reading of each ambiguous sentence and say how sure they are.

This repeats the paper's human annotation (Appendix A.5; docs/paper-notes.md §13.7) with a class: each
student (one *voter*: one browser on one poll, with its voter id) picks the interpretation they
prefer for every item and sets a confidence of 1 = not, 2 = somewhat or 3 = very confident.  :func:`confidence_to_p_lf0` turns
those answers into a probability of LF0 exactly as the paper did, so the class's P(LF0) can be
set beside the model's (FIM-style, docs/paper-notes.md §13.5).

The public names of the three modules that hold it, in one place:

* :mod:`amp.teaching.poll_records` — items, polls, votes, results, errors, bounds, code rules;
* :mod:`amp.teaching.voter` — the voter id: minted and checked in one place, one format;
* :mod:`amp.teaching.poll_results` — the A.5 conversion, the tallies, their table and CSV, the
  per-voter export (pure);
* :mod:`amp.teaching.poll_store` — the SQLite :class:`PollStore` and its schema; a vote may change
  until the teacher reveals its item.
"""

from __future__ import annotations

from amp.teaching.errors import (
    DuplicateVoteError,
    InvalidPollError,
    InvalidVoteError,
    ItemRevealedError,
    PollClosedError,
    PollError,
    PollNotFoundError,
    PollStoreError,
)
from amp.teaching.poll_records import (
    CODE_ALPHABET,
    CODE_LENGTH,
    CONFIDENCE_LABELS,
    MAX_ITEMS,
    MAX_TEXT,
    MAX_TITLE,
    Answered,
    AnswerOutcome,
    ItemResult,
    Poll,
    PollItem,
    PollResults,
    Vote,
    check_answer,
    check_vote_fields,
    normalise_code,
    tidy_code,
)
from amp.teaching.poll_results import (
    VOTER_COLUMNS,
    VOTES_CSV_COLUMNS,
    anonymous_voter,
    confidence_to_p_lf0,
    results_frame,
    summarise,
    voter_rows,
    voters_csv,
    voters_json,
    votes_csv,
)
from amp.teaching.poll_store import SCHEMA_VERSION, PollStore, default_poll_path, shared_store
from amp.teaching.voter import check_voter_id, is_voter_id, new_voter_id

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "CONFIDENCE_LABELS",
    "MAX_ITEMS",
    "MAX_TEXT",
    "MAX_TITLE",
    "SCHEMA_VERSION",
    "VOTER_COLUMNS",
    "VOTES_CSV_COLUMNS",
    "AnswerOutcome",
    "Answered",
    "DuplicateVoteError",
    "InvalidPollError",
    "InvalidVoteError",
    "ItemResult",
    "ItemRevealedError",
    "Poll",
    "PollClosedError",
    "PollError",
    "PollItem",
    "PollNotFoundError",
    "PollResults",
    "PollStore",
    "PollStoreError",
    "Vote",
    "check_answer",
    "check_vote_fields",
    "anonymous_voter",
    "check_voter_id",
    "confidence_to_p_lf0",
    "default_poll_path",
    "is_voter_id",
    "new_voter_id",
    "normalise_code",
    "results_frame",
    "shared_store",
    "summarise",
    "tidy_code",
    "voter_rows",
    "voters_csv",
    "voters_json",
    "votes_csv",
]
