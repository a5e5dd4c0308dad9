"""The cell search re-ranks its beams with the *search settings'* α (issue #45;
:class:`amp.parser.search.cell_decoder.CellDecoder`, docs/paper-notes.md §12).

A re-ranking with the default α passed every fast test: the only check ran on the embedded GGUF
(``test_llama_rerank_alpha.py``, slow).  Here the cell decoder runs on the tiny trained GPT-2
through a stand-in for llama.cpp's cells (each sequence keeps its token ids, each decode
recomputes them), so the rule is checked in seconds: α = 0 scores each beam by its log-prob,
α = 1 by ``logprob / ((5 + len) / 6)`` — written out here, not taken from the code's penalty
function — and the beams are ranked by that score, finished ones first.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from list_cells import ListCells
from parser_lm_helpers import simple_prompt

from amp.parser.search.cell_decoder import CellDecoder
from amp.parser.search.settings import SearchSettings


@pytest.fixture(scope="module")
def decoder(tiny_lm: Any) -> CellDecoder:
    tok = tiny_lm.tokenizer
    return CellDecoder(ListCells(tiny_lm.model), tok, [tok.eos_token_id],
                       context=tiny_lm.model.config.n_positions)


PROMPT = simple_prompt("Ada saw Bob with the telescope")


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_the_cell_searchs_beams_are_scored_with_the_settings_alpha(decoder: CellDecoder, alpha: float) -> None:
    ((result, score),) = decoder.parse_and_score([(PROMPT, None, None)],
                                                 SearchSettings(beams=3, alpha=alpha, max_new_tokens=24),
                                                 fmt="fol", top_n=3)
    assert score is None and result.settings["alpha"] == alpha
    beams = result.beams
    assert len(beams) == 3 and all(math.isfinite(b.logprob) for b in beams)
    assert len({len(b.token_ids) for b in beams}) > 1 or min(len(b.token_ids) for b in beams) > 1  # a penalty shows
    for beam in beams:
        expected = beam.logprob if alpha == 0 else beam.logprob * 6 / (5 + len(beam.token_ids))
        assert beam.score == pytest.approx(expected, rel=1e-9, abs=1e-12), (alpha, beam.text)
    assert [b.rank for b in beams] == [0, 1, 2]
    ordered = sorted(beams, key=lambda b: (not b.finished, -b.score))
    assert [b.text for b in beams] == [b.text for b in ordered]  # ranked by that score, finished first
