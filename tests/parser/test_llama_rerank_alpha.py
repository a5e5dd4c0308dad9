"""The llama.cpp engine ranks its beams with the GNMT length penalty of the *search settings'* α
(#45: a re-ranking with the default α passed every test).  On the embedded model's GGUF, a short
search: α = 0 scores each beam by its log-prob; α = 1 by ``logprob / ((5 + len) / 6)`` — the
expectation written out here, not taken from the code's penalty function."""

from __future__ import annotations

import math

import pytest

from amp.parser import Parser
from amp.parser.core.errors import ModelLoadError
from amp.parser.engines import LLAMA_CPP
from amp.parser.search.settings import SearchSettings

pytest.importorskip("llama_cpp")

PROMPT = "Human: each bird\nComputer: forall x . bird(x)\n\nHuman: a cat\nComputer:"


@pytest.fixture(scope="module")
def llama_parser() -> Parser:
    from amp.parser.models.embedded import default_gguf

    try:
        default_gguf()
    except ModelLoadError as exc:
        pytest.skip(f"the embedded GGUF is not available: {exc}")
    return Parser("default", engine=LLAMA_CPP, cache=False)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_the_beams_scores_use_the_settings_alpha(llama_parser: Parser, alpha: float) -> None:
    result = llama_parser.parse_and_score_many([(PROMPT, None, None)],
                                               SearchSettings(beams=3, alpha=alpha, max_new_tokens=12))[0][0]
    assert len(result.beams) == 3 and result.settings["alpha"] == alpha
    lengths = {len(b.token_ids) for b in result.beams}
    assert all(math.isfinite(b.logprob) for b in result.beams) and max(lengths) > 1  # a penalty that shows
    for beam in result.beams:
        expected = beam.logprob if alpha == 0 else beam.logprob * 6 / (5 + len(beam.token_ids))
        assert beam.score == pytest.approx(expected, rel=1e-9, abs=1e-12), (alpha, beam.text)
