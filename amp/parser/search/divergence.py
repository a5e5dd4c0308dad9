"""Where two LFs' token sequences part ways (the data behind the paper's Figure 4).

The paper shows, for an ambiguous sentence, how confident the model is at the token where LF0
and LF1 first differ (e.g. ``exists`` vs ``forall`` for scope).  :func:`divergence` takes the
per-token steps of two forced decodings (:func:`amp.parser.search.scoring.forced_score`) or of two
beams and reports that position, both tokens and their probabilities (raw and
grammar-renormalised), and the raw probabilities in a window around it.  Pure function, no
model needed.

The readings it compares are forced in the prompt convention (docs/paper-notes.md §16): the
callers score an LF that did not come from the templates in that spelling, so two readings that
differ only in variable names or same-kind quantifier order have the same tokens (``index=None``)
and the first differing token is where the *normalised* readings part.
"""

from __future__ import annotations

from collections.abc import Sequence

from amp.parser.core.results import Divergence, TokenStep


def divergence(a: Sequence[TokenStep], b: Sequence[TokenStep], *, window: int = 3) -> Divergence:
    """First position where the token ids of ``a`` and ``b`` differ, with the local confidence.

    ``char_offset`` counts the characters of the shared prefix in the LF text (the grammar's
    leading space excluded).  Identical sequences give ``index=None`` and empty windows.  When
    one sequence is a prefix of the other, ``index`` is the shorter length and the shorter
    side's token and probabilities are ``None``.
    """
    n = min(len(a), len(b))
    index = next((i for i in range(n) if a[i].token_id != b[i].token_id), None)
    if index is None and len(a) != len(b):
        index = n
    if index is None:
        return Divergence(None, None, None, None, None, None, None, None)
    raw_offset = sum(len(step.token) for step in a[:index])
    start = max(0, index - window)
    sa = a[index] if index < len(a) else None
    sb = b[index] if index < len(b) else None
    return Divergence(
        index=index,
        char_offset=max(0, raw_offset - 1),
        token_a=sa.token if sa else None,
        token_b=sb.token if sb else None,
        prob_a=sa.prob if sa else None,
        prob_b=sb.prob if sb else None,
        prob_a_grammar=sa.prob_grammar if sa else None,
        prob_b_grammar=sb.prob_grammar if sb else None,
        window_a=tuple(s.prob for s in a[start : index + window + 1]),
        window_b=tuple(s.prob for s in b[start : index + window + 1]),
        window_start=start,
    )
