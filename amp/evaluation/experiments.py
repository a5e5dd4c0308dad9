"""Sweeps of the AmP paper's experiments: one import for the three layers.

The layers live in their own modules, so that each can be tested and reused on its own
(``docs/style.md``); this module re-exports their public names (``from amp.evaluation import
experiments as ex; ex.plan_fewshot(...)``):

1. **Planning** (pure, no model), :mod:`amp.evaluation.sweep_plan`: a frozen config
   (:class:`FewShotConfig`, :class:`ZeroShotConfig`) becomes a list of :class:`SweepItem`.
2. **Running**, :mod:`amp.evaluation.sweep_run`: :func:`run_items` streams the items through
   the parser and yields one :class:`SweepRecord` per item; :func:`rematch` re-labels records.
3. **Summaries** (pure), :mod:`amp.evaluation.sweep_summary`: :func:`fewshot_summary`,
   :func:`zeroshot_summary`, :func:`records_frame`.

Paper: Stengel-Eskin et al. 2023, "Zero and Few-shot Semantic Parsing with Ambiguous Inputs"
(arXiv 2306.00824); section numbers "§n" refer to ``docs/paper-notes.md``.

Differences from the original, on purpose:

* few-shot: the LF0 and LF1 forced decodes of a sentence are scored under the **same** prompt
  (the original drew a fresh random prompt for each, §11 end);
* ZM_k counts revscope like every other type (the original's type-name mismatch made it 0,
  §13.3), and FDM is reported with its true range 0–2 (§13.4).
"""

from __future__ import annotations

from amp.evaluation.errors import ExperimentError
from amp.evaluation.sweep_plan import (
    DEFAULT_RATIOS,
    FewShotConfig,
    SweepConfig,
    SweepItem,
    SweepSentence,
    ZeroShotConfig,
    config_from_dict,
    config_to_dict,
    plan,
    plan_fewshot,
    plan_zeroshot,
)
from amp.evaluation.sweep_run import (
    MATCH_LABELS,
    RECORD_COLUMNS,
    SweepMatch,
    SweepRecord,
    match_fields,
    record_from_result,
    rematch,
    run_items,
    run_sweep,
)
from amp.evaluation.sweep_summary import (
    FEWSHOT_PER_RATIO_COLUMNS,
    FEWSHOT_PER_TYPE_COLUMNS,
    MEANING_COLUMNS,
    fewshot_summary,
    records_frame,
    zeroshot_columns,
    zeroshot_summary,
)

__all__ = [
    "DEFAULT_RATIOS",
    "FEWSHOT_PER_RATIO_COLUMNS",
    "FEWSHOT_PER_TYPE_COLUMNS",
    "MATCH_LABELS",
    "MEANING_COLUMNS",
    "RECORD_COLUMNS",
    "ExperimentError",
    "FewShotConfig",
    "SweepConfig",
    "SweepItem",
    "SweepMatch",
    "SweepRecord",
    "SweepSentence",
    "ZeroShotConfig",
    "config_from_dict",
    "config_to_dict",
    "fewshot_summary",
    "match_fields",
    "plan",
    "plan_fewshot",
    "plan_zeroshot",
    "record_from_result",
    "records_frame",
    "rematch",
    "run_items",
    "run_sweep",
    "zeroshot_columns",
    "zeroshot_summary",
]
