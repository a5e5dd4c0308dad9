"""LF0 against LF1, token by token: where they part and how strongly each position prefers one
(issue #15 point 2).

Both readings are force-decoded after the same prompt (paper §2, :class:`~amp.parser.core.results.PairScore`).
Their token sequences share a prefix and then part at the **divergence** position ``d``: there
the two tokens compete under the same context, so ``log p(LF0 token) − log p(LF1 token)`` is the
model's log-odds between the readings at the point where it must choose (positive: it prefers
LF0).  After ``d`` each reading follows its own context; the per-position difference says where
each reading is cheap or costly.  A position one reading lacks counts its own token only, so the
log-odds summed over all positions is exactly ``log P(LF0) − log P(LF1)`` of the whole forced
decodes (the total-probability comparison behind ``p_lf0_total``).

With ``prob="grammar"`` the probabilities are renormalised over the tokens the grammar allows
(``prob_grammar``), and the sum is the difference of ``sum_logprob_grammar``.  The grammar-
allowed alternatives at ``d`` (the forced decode's ``alternatives_grammar``: the top tokens
the constrained decoder could have written there) come with their probabilities.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from amp.evaluation.errors import ContrastError
from amp.parser.core.results import PairScore, TokenAlternative, TokenStep
from amp.records import JsonRecord, OptJsonFloat

__all__ = ["Contrast", "ContrastColumn", "ContrastError", "contrast"]

Prob = Literal["raw", "grammar"]


@dataclass(frozen=True)
class ContrastColumn(JsonRecord):
    """One position: each reading's token and log-probability there (``None`` where a reading
    has ended), and ``log_odds`` = log p(LF0 token) − log p(LF1 token), a missing side counting 0.
    ``shared`` marks the common prefix (same token, same context: log-odds 0)."""

    position: int
    token_lf0: str | None
    token_lf1: str | None
    logprob_lf0: OptJsonFloat
    logprob_lf1: OptJsonFloat
    log_odds: float
    shared: bool


@dataclass(frozen=True)
class Contrast(JsonRecord):
    """The readings aligned position by position (module docstring).

    ``divergence`` is the first position whose tokens differ (``None`` when the two token
    sequences are identical), ``log_odds_at_divergence`` the log-odds there, ``total_log_odds``
    the sum over all columns (= the difference of the two sequence log-probabilities),
    ``alternatives`` the grammar-allowed tokens at the divergence with their probabilities
    renormalised over the allowed tokens (whatever ``prob``) — the forced decode's top ones, and
    each reading's own token after them when it is not among those —, ``alternative_lf0`` /
    ``alternative_lf1`` the index among them of each reading's own token (``None`` for a
    reading that has ended there).
    """

    prob: str
    divergence: int | None
    columns: tuple[ContrastColumn, ...]
    log_odds_at_divergence: OptJsonFloat
    total_log_odds: float
    alternatives: tuple[TokenAlternative, ...] = ()
    alternative_lf0: int | None = None
    alternative_lf1: int | None = None

    def after_divergence(self) -> tuple[ContrastColumn, ...]:
        """The columns from the divergence on (none when the readings never part)."""
        return () if self.divergence is None else self.columns[self.divergence:]


def _logprob(step: TokenStep, prob: Prob) -> float:
    p = step.prob_grammar if prob == "grammar" else step.prob
    return math.log(p) if p > 0 else -math.inf


def _divergence(a: Sequence[TokenStep], b: Sequence[TokenStep]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x.token_id != y.token_id:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def _column(i: int, a: TokenStep | None, b: TokenStep | None, prob: Prob, shared: bool) -> ContrastColumn:
    la = _logprob(a, prob) if a is not None else None
    lb = _logprob(b, prob) if b is not None else None
    odds = 0.0 if shared else (la or 0.0) - (lb or 0.0)
    return ContrastColumn(position=i, token_lf0=a.token if a else None, token_lf1=b.token if b else None,
                          logprob_lf0=la, logprob_lf1=lb, log_odds=odds, shared=shared)


def contrast(pair: PairScore, prob: Prob = "raw") -> Contrast:
    """Align ``pair``'s two forced decodes (module docstring)."""
    if prob not in ("raw", "grammar"):
        raise ContrastError(f"prob must be 'raw' or 'grammar', not {prob!r}")
    a, b = pair.lf0.steps, pair.lf1.steps
    if not a or not b:
        raise ContrastError("the pair score has no token steps to contrast (score it again with steps)")
    d = _divergence(a, b)
    columns = tuple(
        _column(i, a[i] if i < len(a) else None, b[i] if i < len(b) else None, prob, d is None or i < d)
        for i in range(max(len(a), len(b)))
    )
    if d is None:
        return Contrast(prob=prob, divergence=None, columns=columns, log_odds_at_divergence=None, total_log_odds=0.0)
    at = columns[d]
    step = a[d] if d < len(a) else b[d]
    alternatives = list(step.alternatives_grammar)  # what the constrained decoder could write there
    for steps in (a, b):  # each reading's own token is listed, if it is not among the top ones
        if d < len(steps) and steps[d].token_id not in {alt.token_id for alt in alternatives}:
            alternatives.append(TokenAlternative(steps[d].token, steps[d].token_id, steps[d].prob_grammar))
    ids = [alt.token_id for alt in alternatives]

    def where(steps: Sequence[TokenStep]) -> int | None:
        return ids.index(steps[d].token_id) if d < len(steps) else None

    return Contrast(prob=prob, divergence=d, columns=columns,
                    log_odds_at_divergence=at.log_odds if math.isfinite(at.log_odds) else None,
                    total_log_odds=sum(c.log_odds for c in columns), alternatives=tuple(alternatives),
                    alternative_lf0=where(a), alternative_lf1=where(b))
