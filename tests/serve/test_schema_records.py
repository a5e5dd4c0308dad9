"""The service's request models are the library's records and bounds, field for field (issue #25).

A job item is a :class:`~amp.parser.core.results.BatchItem`, the search settings a
:class:`~amp.parser.search.settings.SearchSettings`: same fields, same defaults, and every value at
or just past a bound is accepted or refused alike by the wire schema and by the library.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from pydantic import ValidationError

from amp.errors import AmpError
from amp.parser.core import limits
from amp.parser.core.results import BatchItem
from amp.parser.search.settings import SearchSettings
from amp.serve.schema import JobItem, SampleRequest, Search, wire_model


def _fields(record: type) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(record)}


def test_search_is_the_settings_record_field_for_field() -> None:
    wire = {name: info.default for name, info in Search.model_fields.items()}
    assert wire == _fields(SearchSettings)


def test_a_job_item_is_a_batch_item_field_for_field() -> None:
    record = _fields(BatchItem)
    wire = {name: info.default for name, info in JobItem.model_fields.items()}
    assert set(wire) == set(record)
    assert {k: v for k, v in wire.items() if k not in {"id", "prompt"}} == {
        k: v for k, v in record.items() if k not in {"id", "prompt"}}


def _library_accepts(**settings: Any) -> bool:
    try:
        SearchSettings(**settings)
    except AmpError:
        return False
    return True


def _wire_accepts(model: type, **fields: Any) -> bool:
    try:
        model(**fields)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize(("name", "values"), [
    ("beams", [0, 1, limits.MAX_BEAMS, limits.MAX_BEAMS + 1]),
    ("alpha", [-0.01, 0.0, limits.MAX_ALPHA, limits.MAX_ALPHA + 0.01, math.inf, math.nan]),
    ("max_new_tokens", [0, 1, limits.MAX_NEW_TOKENS, limits.MAX_NEW_TOKENS + 1, None]),
])
def test_one_bound_per_search_setting(name: str, values: list[Any]) -> None:
    for value in values:
        assert _wire_accepts(Search, **{name: value}) == _library_accepts(**{name: value}), (name, value)


@pytest.mark.parametrize("temperature", [0.0, limits.MIN_TEMPERATURE / 2, limits.MIN_TEMPERATURE, 1.0,
                                         limits.MAX_TEMPERATURE, limits.MAX_TEMPERATURE * 1.01, math.inf])
def test_one_bound_for_the_sampling_temperature(temperature: float) -> None:
    try:
        limits.check_temperature(temperature)
        library = True
    except AmpError:
        library = False
    assert _wire_accepts(SampleRequest, prompt="p", temperature=temperature) == library


def test_the_job_item_keeps_its_wire_bounds_and_refuses_unknown_keys() -> None:
    """Derived from the record, the wire model still bounds every field, refuses what the record
    would not know, and is the ``JobItem`` of the API's schema (no ``additionalProperties``)."""
    good = {"id": "a", "prompt": "p", "lf0": "exists x . man(x)", "lf1": None}
    assert _wire_accepts(JobItem, **good)
    assert JobItem(**good).model_dump() == {**dataclasses.asdict(BatchItem(**good))}
    for bad in ({"id": ""}, {"id": "x" * (limits.MAX_ID_CHARS + 1)}, {"prompt": ""},
                {"prompt": "p" * (limits.MAX_PROMPT_CHARS + 1)}, {"lf0": ""}, {"lf1": "l" * (limits.MAX_LF_CHARS + 1)},
                {"fmt": "prolog"}, {"parse": "maybe"}, {"beams": 5}):
        assert not _wire_accepts(JobItem, **{**good, **bad}), bad
    schema = JobItem.model_json_schema()
    assert schema["title"] == "JobItem" and schema["additionalProperties"] is False
    assert schema["required"] == ["id", "prompt"] and list(schema["properties"]) == list(_fields(BatchItem))


def test_a_wire_bound_must_name_a_field_of_the_record() -> None:
    with pytest.raises(TypeError, match=r"bounds for fields that BatchItem does not have: \['prompts'\]"):
        wire_model(BatchItem, {"prompts": str}, "a typo", name="Typo")
