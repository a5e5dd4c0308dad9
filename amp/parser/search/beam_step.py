"""One logical step of transformers' beam search for one prompt (for :mod:`amp.parser.search.fastsearch`).

:func:`advance` is ``_beam_search``'s bookkeeping with ``length_penalty=0.0`` and
``early_stopping=True``, in float32 as transformers keeps it: the top ``keep = max(2, 1 + #eos) · k``
candidates by summed log-prob, finished ones (the grammar complete, or the budget spent) pushed
down by ``1e9`` among the running ones, the ``k`` best finished kept, and the prompt done when
``k`` beams finished, the budget is spent, or no live beam is left.

transformers also asks "can the best running beam still beat the worst finished one?"; with
``length_penalty=0`` and ``early_stopping=True`` that test never decides anything: while a
finished slot is empty its bound is ``-1e9``, which every live beam beats, and once all ``k`` slots
are full the "all finished" test already stops the search (the only other way to fail it, no beam
above ``-1e9``, is the "no live beam" test).  So it is not computed here (see
``docs/decoding-notes.md`` §1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from amp.parser.search.processors import ScoreTracker

#: Scores at or below this are transformers' filler/penalised rows (real sums are far above).
_JUNK = -1e8
NEG = np.float32(-1e9)

Hyp = tuple[tuple[int, ...], np.float32]


@dataclass
class SearchItem:
    """The search state of one prompt, as transformers keeps it (float32 sums)."""

    index: int
    prompt_len: int
    last_prompt_token: int
    running: list[tuple[tuple[int, ...], np.float32]]
    finished: list[tuple[tuple[int, ...], np.float32, bool]]
    done: bool = False
    rows: list[int] = field(default_factory=list)


def _alive(score: np.float32) -> bool:
    return bool(score > _JUNK)


def alive(score: np.float32) -> bool:
    """Whether a running score belongs to a real hypothesis (not a filler or penalised row)."""
    return bool(score > _JUNK)


def advance(it: SearchItem, dists: dict, tracker: ScoreTracker, prefixes: Any, automaton: Any, beams: int,
            keep: int, budget: int, step: int, vocab_size: int) -> None:
    """One step of transformers' ``_beam_search`` for one prompt (length_penalty 0, early_stopping)."""
    cands = _top_candidates(it, dists, tracker, keep, vocab_size)
    hits = [s != -np.inf and (len(p) >= budget or automaton.is_final(prefixes.state(p))) for p, s in cands]
    # running: top k of the candidates with finished ones pushed down by 1e9
    pen = [np.float32(s + NEG) if h else s for (p, s), h in zip(cands, hits, strict=True)]
    ranked = sorted(range(len(cands)), key=lambda i: (-float(pen[i]), i))[:beams]
    it.running = [(cands[i][0], pen[i]) for i in ranked]
    _merge_finished(it, cands, hits, beams)
    all_done = all(f for _p, _s, f in it.finished)
    no_live = not any(alive(s) for _p, s in it.running)
    if all_done or step + 1 >= budget or no_live:
        it.done = True


def _top_candidates(it: SearchItem, dists: dict, tracker: ScoreTracker, keep: int, vocab_size: int) -> list[Hyp]:
    """The ``keep`` best (hypothesis, summed score) continuations of the live beams, padded with
    ``-inf`` fillers; the tracker learns each new hypothesis's summed raw log-prob."""
    scores: list[torch.Tensor] = []
    flat: list[torch.Tensor] = []
    values: list[torch.Tensor] = []
    for j, (p, s) in enumerate(it.running):
        if not alive(s):
            continue
        cols, vals = dists[(it.index, p)]
        scores.append(torch.tensor(s, dtype=torch.float32) + vals)
        flat.append(cols + j * vocab_size)
        values.append(vals)
    cands: list[Hyp] = []
    if scores:
        allv = torch.cat(scores).numpy()
        allf = torch.cat(flat).numpy()
        raw = torch.cat(values).double().numpy()
        finite = np.flatnonzero(np.isfinite(allv))
        order = finite[np.argsort(-allv[finite], kind="stable")][:keep]
        for i in order.tolist():
            f = int(allf[i])
            p = it.running[f // vocab_size][0]
            q = p + (f % vocab_size,)
            cands.append((q, np.float32(allv[i])))
            parent = tracker.sums.get((it.index, p))
            if parent is not None and (it.index, q) not in tracker.sums:
                tracker.sums[(it.index, q)] = parent + float(raw[i])
    while len(cands) < keep:
        cands.append(((), np.float32(-np.inf)))
    return cands


def _merge_finished(it: SearchItem, cands: list[Hyp], hits: list[bool], beams: int) -> None:
    """Merge the eligible finished candidates (among the top ``beams`` positions) into the ``k``
    best finished ones, penalising as transformers does (full heap, ineligible; its third penalty, for
    a search the early-stop heuristic has satisfied, never applies here: see the module docstring)."""
    full = all(f for _p, _s, f in it.finished)
    merged = list(it.finished)
    for i, ((p, s), h) in enumerate(zip(cands, hits, strict=True)):
        eligible = h and i < beams
        v = s
        if full:
            v = np.float32(v + NEG)
        if not eligible:
            v = np.float32(v + NEG)
        merged.append((p, v, eligible))
    ranked = sorted(range(len(merged)), key=lambda i: (-float(merged[i][1]), i))[:beams]
    it.finished = [merged[i] for i in ranked]
