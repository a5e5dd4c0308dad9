"""Language-model side of AmP Explorer: model loading, constrained decoding, scoring, caching.

The few names most callers need::

    from amp.parser import Parser
    parser = Parser("default")            # the embedded Gemma 3 270M; loads on first cache miss
    result = parser.parse(prompt)         # ParseResult: ranked beams
    pair = parser.score_pair(prompt, lf0, lf1)   # PairScore: P(LF0)

The decoding functions themselves (:mod:`amp.parser.decode`, :mod:`amp.parser.scoring`,
:mod:`amp.parser.divergence`) take ``(model, tokenizer)`` and import torch; importing this
package does not.
"""

from amp.parser.batch import BatchItem, BatchItemResult, BatchRun, run_batch
from amp.parser.embedded_model import default_model_info
from amp.parser.model_loading import LoadedModel
from amp.parser.model_registry import load_model
from amp.parser.parser import Parser
from amp.parser.results import (
    Beam,
    Divergence,
    ForcedScore,
    PairScore,
    ParseResult,
    TokenStep,
)

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
