"""SearchSettings: the one record of the search settings, its defaults, its checks, its cache-key parts."""

from __future__ import annotations

import math

import pytest

from amp.errors import MetricError, PromptError, RatioError, SettingError
from amp.parser.core.errors import RequestTooLarge
from amp.parser.search.settings import DEFAULT_SEARCH, SearchSettings
from amp.prompts import check_ratio


def test_defaults_and_cache_key_parts() -> None:
    """The key parts keep their names and values: results cached before still read."""
    assert DEFAULT_SEARCH == SearchSettings()
    assert DEFAULT_SEARCH.as_dict() == {"beams": 5, "alpha": 0.7, "constrained": True, "max_new_tokens": None}
    assert list(SearchSettings(beams=2, max_new_tokens=9).as_dict()) == ["beams", "alpha", "constrained",
                                                                         "max_new_tokens"]


def test_of_applies_keywords_to_a_record() -> None:
    assert SearchSettings.of() == DEFAULT_SEARCH
    base = SearchSettings(beams=3, alpha=0.5)
    assert SearchSettings.of(base) is base
    assert SearchSettings.of(base, beams=4) == SearchSettings(beams=4, alpha=0.5)
    assert SearchSettings.of(None, constrained=False).constrained is False


@pytest.mark.parametrize(("changes", "error"), [
    ({"beams": 0}, SettingError), ({"beams": 10_000}, RequestTooLarge), ({"alpha": math.nan}, SettingError),
    ({"max_new_tokens": 0}, SettingError), ({"beams": 2.5}, SettingError),
])
def test_invalid_settings_are_refused_on_construction(changes: dict, error: type[Exception]) -> None:
    with pytest.raises(error):
        SearchSettings.of(**changes)
    with pytest.raises(error):
        SearchSettings.of(DEFAULT_SEARCH, **changes)


def test_one_ratio_check_one_error_class() -> None:
    assert check_ratio(0) == 0.0 and check_ratio(0.3) == 0.3 and check_ratio(1) == 1.0
    for bad, words in ((1.5, "outside"), (-0.1, "outside"), (math.nan, "outside"), ("0.5", "not a number"),
                       (True, "not a number"), (None, "not a number")):
        with pytest.raises(RatioError, match=words) as info:
            check_ratio(bad)
        assert isinstance(info.value, PromptError) and isinstance(info.value, MetricError)
