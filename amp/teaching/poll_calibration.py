"""Stored class polls as model-vs-class points (the paper's Fig. 5 analogue).

:func:`agreement_points` turns poll results into the plain ``(surface, model_p_lf0,
class_p_lf0)`` tuples that :func:`amp.evaluation.calibration.poll_agreement` compares: one per
poll item that has both the model's P(LF0) *stored with the item* (no model is run here) and at
least one vote (the class's P(LF0), Appendix A.5; docs/paper-notes.md §13.7).  A sentence polled twice
gives two points, one per poll: each poll's A.5 conversion normalises its own annotators.
:func:`stored_agreement` does it for the polls of a :class:`~amp.teaching.poll_store.PollStore`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from amp.evaluation.calibration import PollAgreement, poll_agreement
from amp.teaching.poll_records import PollResults
from amp.teaching.poll_store import PollStore

__all__ = ["MAX_POLLS", "agreement_points", "stored_agreement"]

#: At most this many polls (the newest) are read by :func:`stored_agreement`.
MAX_POLLS = 200


def agreement_points(results: Iterable[PollResults]) -> list[tuple[str, float, float]]:
    """``(surface, model P(LF0), class P(LF0))`` of every item with a stored model P(LF0) and a vote."""
    return [
        (item.surface, item.model_p_lf0, item.human_p_lf0)
        for res in results
        for item in res.items
        if item.model_p_lf0 is not None and item.human_p_lf0 is not None and item.n_voters > 0
    ]


def stored_agreement(store: PollStore, codes: Sequence[str] | None = None) -> PollAgreement:
    """:func:`~amp.evaluation.calibration.poll_agreement` over stored polls.

    ``codes``: only these polls (each must exist: :class:`~amp.teaching.errors.PollNotFoundError`);
    ``None``: the :data:`MAX_POLLS` newest polls of the store.
    """
    chosen = list(codes) if codes is not None else [p.code for p in store.list_polls()[:MAX_POLLS]]
    return poll_agreement(agreement_points(store.results(code) for code in chosen[:MAX_POLLS]))
