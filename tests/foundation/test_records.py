"""Typed JSON records (:mod:`amp.records`): values written by the hand-written code still read and
re-encode to the same JSON text.

``tests/fixtures/records_v1.json`` was captured from the ``to_dict`` methods as they were before
issue #14 (a tiny random model's inspection, an unconstrained parse with NaN grammar
probabilities, a divergence with NaN/±inf, and the other JSON records).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from amp.errors import PromptError
from amp.evaluation.inspection import Inspection
from amp.evaluation.interpretations import DistinctTopK, SampledInterpretations
from amp.parser.core.results import Beam, Divergence, ForcedScore, JobStatus, PairScore, ParseResult, Runtime, TokenStep
from amp.prompts import Prompt, PromptExample
from amp.records import describe, enc_float

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "records_v1.json").read_text())
INSPECTION = FIXTURE["inspection"]

CASES: list[tuple[str, type, Any]] = [
    ("inspection", Inspection, INSPECTION),
    ("parse", ParseResult, INSPECTION["parse"]),
    ("pair", PairScore, INSPECTION["pair"]),
    ("forced", ForcedScore, INSPECTION["pair"]["lf0"]),
    ("beam", Beam, INSPECTION["predicted"]),
    ("step", TokenStep, INSPECTION["predicted_steps"][0]),
    ("divergence", Divergence, INSPECTION["divergence"]),
    ("parse_unconstrained", ParseResult, FIXTURE["parse_unconstrained"]),
    ("divergence_nonfinite", Divergence, FIXTURE["divergence_nonfinite"]),
    ("runtime", Runtime, FIXTURE["runtime"]),
    ("job_status", JobStatus, FIXTURE["job_status"]),
    ("distinct_topk", DistinctTopK, FIXTURE["distinct_topk"]),
    ("sampled", SampledInterpretations, FIXTURE["sampled"]),
    ("prompt", Prompt, FIXTURE["prompt"]),
]


def _text(d: Any) -> str:
    return json.dumps(d, allow_nan=False)


@pytest.mark.parametrize(("name", "cls", "value"), CASES, ids=[c[0] for c in CASES])
def test_old_values_read_and_reencode_byte_for_byte(name: str, cls: Any, value: Any) -> None:
    record = cls.from_dict(value)
    assert isinstance(record, cls)
    assert _text(record.to_dict()) == _text(value)  # same keys, same order, same float spelling
    assert json.loads(record.to_json()) == value
    assert _text(cls.from_json(_text(value)).to_dict()) == _text(value)


def test_non_finite_floats_are_strings_in_json_and_floats_in_records() -> None:
    div = Divergence.from_dict(FIXTURE["divergence_nonfinite"])
    assert math.isnan(div.prob_a) and div.prob_a_grammar == math.inf and div.prob_b_grammar == -math.inf
    assert div.prob_b is None and div.window_a == (0.5, 0.25)
    unconstrained = ParseResult.from_dict(FIXTURE["parse_unconstrained"])
    assert any(math.isnan(s.prob_grammar) for b in unconstrained.beams for s in b.steps)
    assert [enc_float(x) for x in (math.nan, math.inf, -math.inf, 0.5, None)] == ["nan", "inf", "-inf", 0.5, None]


def test_sampled_unknown_probabilities_are_null() -> None:
    sampled = SampledInterpretations.from_dict(FIXTURE["sampled"])
    assert math.isnan(sampled.p_lf0) and FIXTURE["sampled"]["p_lf0"] is None
    assert sampled.samples == ("a", None) and sampled.interpretations[0].count == 1


def test_records_are_frozen_and_tuples() -> None:
    parse = ParseResult.from_dict(INSPECTION["parse"])
    assert isinstance(parse.beams, tuple) and isinstance(parse.beams[0].token_ids, tuple)
    with pytest.raises(AttributeError):
        parse.fmt = "x"  # type: ignore[misc]


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda d: d["beams"][0]["steps"][0].update(prob=None), "beams.0.steps.0.prob"),
    (lambda d: d["beams"][0].pop("rank"), "beams.0.rank"),
    (lambda d: d["beams"][0].update(token_ids="abc"), "beams.0.token_ids"),
    (lambda d: d.update(constrained=[1]), "constrained"),
])
def test_bad_values_name_the_field(mutate: Any, where: str) -> None:
    value = json.loads(_text(INSPECTION["parse"]))
    mutate(value)
    with pytest.raises(ValidationError) as info:
        ParseResult.from_dict(value)
    assert describe(info.value).startswith(where)


def test_job_state_and_prompt_label_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown job state"):
        JobStatus.from_dict({**FIXTURE["job_status"], "state": "sleeping"})
    with pytest.raises(PromptError, match="label"):
        PromptExample.from_dict({"utterance": "u", "lf": "x", "label": True})
    with pytest.raises(PromptError, match="examples"):
        Prompt.from_dict({"examples": [{"utterance": "u"}], "test_utterance": "t"})
