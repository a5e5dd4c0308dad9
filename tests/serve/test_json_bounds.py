"""JSON depth (issue #44 point 3): how deep a value nests, its bound, and the service schema's
free-form fields (a job's ``meta``, a beam to detail) refused past it with a 422 naming
:data:`~amp.parser.core.limits.MAX_JSON_DEPTH`."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from service_helpers import nested

from amp.parser.core import limits
from amp.parser.core.errors import RequestTooLarge
from amp.parser.core.json_bounds import check_json_depth, json_depth
from amp.serve.schema import JobRequest, StepsRequest


def test_json_depth_counts_objects_and_arrays_inside_one_another_at_any_depth():
    assert [json_depth(v) for v in (7, "x", None, {}, [], {"a": [1]}, [[], [[{}]]], {"a": 1, "b": {"c": []}})] == [
        0, 0, 0, 1, 1, 2, 4, 3]
    deep: list = []
    for _ in range(100_000):  # far past Python's recursion limit
        deep = [deep]
    assert json_depth(deep) == 100_001
    assert check_json_depth(nested(limits.MAX_JSON_DEPTH), "meta") == nested(limits.MAX_JSON_DEPTH)
    bound = limits.MAX_JSON_DEPTH
    with pytest.raises(RequestTooLarge, match=rf"meta is nested {bound + 1} levels deep, over the limit of {bound} "
                                              r"\(MAX_JSON_DEPTH\)"):
        check_json_depth(nested(bound + 1), "meta")


def test_the_schema_refuses_a_meta_or_a_beam_nested_past_the_bound():
    item = {"id": "a", "prompt": "Human: a\nComputer:"}
    assert JobRequest.model_validate({"items": [item], "meta": nested(limits.MAX_JSON_DEPTH)}).meta
    for body, model in (({"items": [item], "meta": nested(900)}, JobRequest),
                        ({"prompt": "Human: a\nComputer:", "beam": {"steps": [nested(40)]}}, StepsRequest)):
        with pytest.raises(ValidationError, match="MAX_JSON_DEPTH"):
            model.model_validate(body)
