"""The tallies of a classroom poll (pure): the paper's confidence → P(LF0) conversion
(Appendix A.5; docs/paper-notes.md §13.7), per-item results, their table, the per-vote CSV and
the per-voter export (CSV and JSON: each voter's answers under a pseudonym, with their times).

The class's P(LF0) is set beside the model's (FIM-style, docs/paper-notes.md §13.5).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from amp.teaching.paraphrase import interpretation_label
from amp.teaching.poll_records import (
    CONFIDENCE_LABELS,
    ItemResult,
    Poll,
    PollResults,
    Vote,
    check_answer,
)

if TYPE_CHECKING:
    import pandas as pd


#: The columns of :func:`votes_csv`, one row per vote (``voter_id``: :mod:`amp.teaching.voter`;
#: files exported before the one voter id call that column ``session_id``).
VOTES_CSV_COLUMNS: tuple[str, ...] = (
    "poll", "item", "surface", "type", "voter_id", "choice", "reading",
    "paraphrase", "confidence", "confidence_label", "p_lf0", "model_p_lf0", "created",
)


#: The columns of the per-voter export (:func:`voter_rows`), one row per voter and item:
#: ``voter`` is :func:`anonymous_voter`; ``first_answer`` / ``last_answer`` the times of the
#: voter's first answer and of the one that counts (the same until it changed its vote).
VOTER_COLUMNS: tuple[str, ...] = ("poll", "voter", "item", "choice", "confidence", "first_answer", "last_answer")


def anonymous_voter(code: str, voter_id: str) -> str:
    """The name of voter ``voter_id`` in poll ``code``'s per-voter export: 16 hex digits of a
    SHA-256 of both — the same voter on every export of this poll, but not its cookie, so
    whoever reads the export cannot answer as that phone (a vote may change until the reveal)."""
    return hashlib.sha256(f"{code}:{voter_id}".encode()).hexdigest()[:16]


def voter_rows(votes: Sequence[Vote]) -> tuple[dict[str, str | int], ...]:
    """The per-voter export: one row (:data:`VOTER_COLUMNS`) per vote — each voter's latest
    answer on each item it answered — grouped by voter in the order they first answered, then
    by item."""
    first_seen: dict[str, int] = {}
    for n, vote in enumerate(votes):
        first_seen.setdefault(vote.voter_id, n)
    ordered = sorted(votes, key=lambda v: (first_seen[v.voter_id], v.item_index))
    return tuple(
        {"poll": v.code, "voter": anonymous_voter(v.code, v.voter_id), "item": v.item_index, "choice": v.choice,
         "confidence": v.confidence, "first_answer": v.created, "last_answer": v.updated or v.created}
        for v in ordered
    )


def voters_csv(votes: Sequence[Vote]) -> str:
    """:func:`voter_rows` as CSV text (header :data:`VOTER_COLUMNS`)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=VOTER_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(voter_rows(votes))
    return buf.getvalue()


def voters_json(votes: Sequence[Vote]) -> str:
    """:func:`voter_rows` as a JSON list of objects (keys :data:`VOTER_COLUMNS`)."""
    return json.dumps(list(voter_rows(votes)), ensure_ascii=False, indent=1)


def confidence_to_p_lf0(votes: Iterable[Vote]) -> tuple[float, ...]:
    """P(LF0) of each vote, in input order (paper Appendix A.5; docs/paper-notes.md §13.7).

    Per annotator (a ``voter_id``, :mod:`amp.teaching.voter`) the confidences are min–max
    normalised over the items they voted on, then mapped linearly so that their lowest confidence
    gives P(chosen reading) = 0.5 and their highest 1.0; P(LF0) is that value if they chose LF0,
    else one minus it.

    Degenerate case (decided here): an annotator with a single vote, or with the same
    confidence everywhere, has no range to normalise over; their raw slider position is used
    instead, (c − 1) / 2 mapped to 0.5–1.0 — so "not" ↦ 0.5, "somewhat" ↦ 0.75,
    "very" ↦ 1.0.  Empty input gives ``()``.
    """
    votes = list(votes)
    ranges: dict[str, tuple[int, int]] = {}
    for vote in votes:
        check_answer(vote.choice, vote.confidence)
        lo, hi = ranges.get(vote.voter_id, (vote.confidence, vote.confidence))
        ranges[vote.voter_id] = (min(lo, vote.confidence), max(hi, vote.confidence))
    out: list[float] = []
    for vote in votes:
        lo, hi = ranges[vote.voter_id]
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
        n_voters=len({v.voter_id for v in votes}),
        n_votes=len(votes),
        items=tuple(items),
    )


def results_frame(results: PollResults) -> pd.DataFrame:
    """One row per item: tallies, the class's P(LF0) (A.5) and the model's, and their gap."""
    import pandas as pd  # late: start-up cost (pandas)

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


def votes_csv(poll: Poll, votes: Sequence[Vote]) -> str:
    """CSV text, one row per vote, with the chosen reading's label and paraphrase and the
    vote's A.5 P(LF0) (what :meth:`amp.teaching.poll_store.PollStore.export_csv` returns).
    Its columns are :data:`VOTES_CSV_COLUMNS`."""

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(VOTES_CSV_COLUMNS)
    for vote, p in zip(votes, confidence_to_p_lf0(votes), strict=True):
        item = poll.items[vote.item_index]
        writer.writerow([
            poll.code, vote.item_index, item.surface, item.type, vote.voter_id, vote.choice,
            interpretation_label(item.type, vote.choice), item.paraphrase(vote.choice),
            vote.confidence, CONFIDENCE_LABELS[vote.confidence], f"{p:.6g}",
            "" if item.model_p_lf0 is None else f"{item.model_p_lf0:.6g}", vote.created,
        ])
    return buf.getvalue()
