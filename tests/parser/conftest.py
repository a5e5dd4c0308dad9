"""Fixtures of the decoding tests (helpers in ``parser_lm_helpers.py``).

``tiny_lm``: a tiny byte-level BPE GPT-2 trained here on AmP-style text (session-scoped, seeded,
well under a minute on two cores).  ``gemma``: the real default model through the root
``default_lm`` fixture, for ``slow`` tests only; skips when that fixture is missing.
"""

from __future__ import annotations

from typing import Any

import pytest
from parser_lm_helpers import (
    TinyLM,
    amp_examples,
    build_tiny_lm,
    simple_prompt,
    train_sentencepiece_tokenizer,
    train_tokenizer,
)


@pytest.fixture(scope="session")
def tiny_lm() -> TinyLM:
    """The tiny trained byte-level BPE GPT-2 (built once per session)."""
    return build_tiny_lm()


@pytest.fixture(scope="session")
def gemma(request: pytest.FixtureRequest) -> Any:
    """The real default model via the root ``default_lm`` fixture; skips if it is unavailable."""
    try:
        return request.getfixturevalue("default_lm")
    except pytest.FixtureLookupError:
        pytest.skip("the default_lm fixture (tests/conftest.py) is not available")


@pytest.fixture(scope="session")
def corpus() -> list[str]:
    """AmP-style training text for the small tokenizers."""
    return [simple_prompt(s) + " " + lf + "\n" for s, lf in amp_examples(300, seed=3)]


@pytest.fixture(scope="session")
def bpe_noregex(corpus: list[str]) -> Any:
    """Byte-level BPE without a pre-tokenizer: tokens span many terminals ('man(x) AND ')."""
    return train_tokenizer(corpus, use_split=False)


@pytest.fixture(scope="session")
def sp_tokenizer(corpus: list[str]) -> Any:
    """A Gemma-style SentencePiece tokenizer (``▁``, ``<0xNN>`` byte fallback)."""
    return train_sentencepiece_tokenizer(corpus)
