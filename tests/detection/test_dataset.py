"""The detection data: balanced per type and part, split on held-out words, deterministic, a record."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from amp.data.generate import find_pair
from amp.detection.dataset import (
    DetectionItem,
    DetectionPart,
    DetectionSet,
    build_detection_set,
    detection_types,
)
from amp.detection.errors import DetectionError
from amp.errors import AmpError


@pytest.fixture(scope="module")
def dataset() -> DetectionSet:
    return build_detection_set(seed=3, per_type=20)


def _words(items: tuple[DetectionItem, ...]) -> set[str]:
    return {w for item in items for w in item.words}


def test_no_content_word_is_shared_between_train_and_test(dataset: DetectionSet) -> None:
    train, test = dataset.part(DetectionPart.TRAIN), dataset.part(DetectionPart.TEST)
    assert train and test
    assert _words(train) & _words(test) == set()
    assert _words(test) <= set(dataset.held_out)
    assert _words(train) & set(dataset.held_out) == set()
    # the words are really in the sentences: no held-out word appears in any training sentence
    for item in train:
        padded = f" {item.sentence} "
        assert not [w for w in dataset.held_out if f" {w} " in padded], item.sentence
    for item in dataset.items:
        assert all(f" {w} " in f" {item.sentence} " for w in item.words), item


def test_balanced_per_type_and_part(dataset: DetectionSet) -> None:
    counts = Counter((item.type, item.part, item.ambiguous) for item in dataset.items)
    assert dataset.types == detection_types()
    for type_id in detection_types():
        assert counts[(type_id, DetectionPart.TEST, True)] == counts[(type_id, DetectionPart.TEST, False)] == 6
        assert counts[(type_id, DetectionPart.TRAIN, True)] == counts[(type_id, DetectionPart.TRAIN, False)] == 14
    assert len({item.sentence for item in dataset.items}) == len(dataset.items)  # scope/revscope share a set


def test_labels_pools_and_readings(dataset: DetectionSet) -> None:
    for item in dataset.items:
        pair = find_pair(item.sentence)
        if item.ambiguous:
            assert pair is not None and pair.type == item.type == item.pool
            assert item.lfs == (pair.lf0.lf, pair.lf1.lf)
        else:
            assert pair is None and item.pool.endswith(("unambig", "conj"))
            assert len(item.lfs) == 1


def test_deterministic_by_seed(dataset: DetectionSet) -> None:
    assert build_detection_set(seed=3, per_type=20) == dataset
    other = build_detection_set(seed=4, per_type=20)
    assert other.held_out != dataset.held_out
    assert [i.sentence for i in other.items] != [i.sentence for i in dataset.items]


def test_the_record_round_trips(dataset: DetectionSet) -> None:
    data = json.loads(json.dumps(dataset.to_dict()))
    assert data["items"][0]["part"] in ("train", "test")
    assert DetectionSet.from_dict(data) == dataset
    assert DetectionSet.from_json(dataset.to_json()) == dataset


def test_types_choose_and_alias() -> None:
    small = build_detection_set(seed=0, per_type=4, types=["scope_reverse", "conj"])
    assert small.types == ("revscope", "conj")
    assert len(small.items) == 2 * 2 * 4


@pytest.mark.parametrize("kwargs", [
    {"per_type": 1}, {"per_type": 0}, {"per_type": True}, {"per_type": 2.5}, {"seed": -1}, {"seed": "1"},
    {"test_share": 0.0}, {"test_share": 1.0}, {"test_share": float("nan")}, {"per_type": 3, "test_share": 0.1},
    {"types": []}, {"types": "pp"}, {"types": ["nope"]}, {"per_type": 5000},
])
def test_bad_settings_are_typed_errors(kwargs: dict) -> None:
    with pytest.raises(DetectionError) as info:
        build_detection_set(**kwargs)
    assert isinstance(info.value, AmpError) and isinstance(info.value, ValueError)
    assert str(info.value)
