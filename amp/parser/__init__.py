"""Language-model side of AmP Explorer: model loading, constrained decoding, scoring, caching.

The few names most callers need::

    from amp.parser import Parser
    parser = Parser("default")            # the embedded Gemma 3 270M; loads on first cache miss
    result = parser.parse(prompt)         # ParseResult: ranked beams
    pair = parser.score_pair(prompt, lf0, lf1)   # PairScore: P(LF0)

The decoding functions themselves (:mod:`amp.parser.search.decode`, :mod:`amp.parser.search.scoring`,
:mod:`amp.parser.search.divergence`) take ``(model, tokenizer)`` and import torch; importing this
package does not.
"""

from amp.parser.batch import BatchRun, run_batch
from amp.parser.core.results import (
    BatchItem,
    BatchItemResult,
    Beam,
    Divergence,
    ForcedScore,
    PairScore,
    ParseResult,
    TokenStep,
)
from amp.parser.models.embedded import default_model_info
from amp.parser.models.loading import LoadedModel
from amp.parser.models.registry import load_model
from amp.parser.parser import Parser

__all__ = [
    "BatchItem",
    "BatchItemResult",
    "BatchRun",
    "Beam",
    "Divergence",
    "ForcedScore",
    "LoadedModel",
    "PairScore",
    "ParseResult",
    "Parser",
    "TokenStep",
    "default_model_info",
    "load_model",
    "run_batch",
]
