"""The ambiguity-detection data: ambiguous sentences against unambiguous ones, split on held-out words
(docs/paper-notes.md §22).

For each ambiguity type, its ambiguous sentences (the type's pool, :func:`amp.data.generate.pairs`)
are set against the unambiguous set the original split scripts pair with it
(:data:`amp.data.split_configs.KEY_POOLS`: pp ↔ pp_unambig, scope and revscope ↔ scope_unambig,
conj ↔ single_conj, bound ↔ bound_unambig).  Every sentence is built from the same few content
words (the slot fillers of its template), so a detector could succeed by memorising words rather
than by knowing the sentence is ambiguous.  The split prevents it:

1. **The content words are partitioned.**  A content word is a filler of a template slot (nouns,
   verbs, names; shown as its surface word, ``picked up``).  Words that fill exactly the same
   (pool, slot) positions are interchangeable, so each such group is shuffled with
   ``numpy.random.default_rng(seed)`` and half of it is held out (an odd group's extra word goes
   to either half by the same RNG).  Every group thus has words on both sides.
2. **Sentences that mix are dropped.**  A sentence whose content words are all held out may go to
   the test part, one with none held out to the train part; every other sentence is used nowhere.
   No content word of a test sentence occurs in any train sentence.
3. **Balanced draws.**  Per type, ``round(per_type × test_share)`` ambiguous sentences are drawn
   for the test part and the rest of ``per_type`` for the train part, and exactly as many
   unambiguous ones for each (uniformly without replacement, in that order, from one RNG); an
   unambiguous sentence serves one type only (scope and revscope share their set).

Everything follows from ``seed``, ``per_type``, ``types`` and ``test_share``: the same arguments
give the same :class:`DetectionSet`, which is a JSON record (:meth:`DetectionSet.to_dict`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from amp.data.generate import pairs, pool
from amp.data.split_configs import KEY_POOLS
from amp.data.templates.records import Example
from amp.data.types import UnknownTypeError, get_type
from amp.detection.errors import DetectionError
from amp.logic.lexicon import surface_word
from amp.records import JsonRecord

__all__ = [
    "DEFAULT_PER_TYPE",
    "DEFAULT_TEST_SHARE",
    "DetectionItem",
    "DetectionPart",
    "DetectionSet",
    "build_detection_set",
    "content_words",
    "detection_types",
]

#: Ambiguous sentences per type (and as many unambiguous ones), both parts together.
DEFAULT_PER_TYPE = 40
#: The share of each type's sentences that goes to the test part.
DEFAULT_TEST_SHARE = 0.3


class DetectionPart(StrEnum):
    """Which part of the split a sentence belongs to (module docstring)."""

    TRAIN = "train"
    TEST = "test"


@dataclass(frozen=True)
class DetectionItem(JsonRecord):
    """One sentence of the detection data.

    ``ambiguous`` is the label; ``type`` the ambiguity type it stands for (an unambiguous sentence:
    the type whose unambiguous set it was drawn from); ``pool`` the pool it comes from; ``words``
    its content words (surface words, sorted); ``lfs`` its readings — LF0 and LF1 of an
    ambiguous sentence, the one gold LF of an unambiguous one (FOL, as the pools hold them).
    """

    sentence: str
    ambiguous: bool
    type: str
    pool: str
    part: DetectionPart
    words: tuple[str, ...]
    lfs: tuple[str, ...]


@dataclass(frozen=True)
class DetectionSet(JsonRecord):
    """The detection data: ``items`` (per type: train ambiguous, train unambiguous, test ambiguous,
    test unambiguous), the ``seed`` and ``per_type`` that built it, ``test_share``, and ``held_out``
    — the content words only test sentences use (sorted)."""

    items: tuple[DetectionItem, ...]
    seed: int
    held_out: tuple[str, ...]
    per_type: int
    test_share: float = DEFAULT_TEST_SHARE

    def part(self, part: DetectionPart) -> tuple[DetectionItem, ...]:
        """The items of one part, in set order."""
        return tuple(item for item in self.items if item.part == part)

    @property
    def types(self) -> tuple[str, ...]:
        """The types present, in set order."""
        return tuple(dict.fromkeys(item.type for item in self.items))


def detection_types() -> tuple[str, ...]:
    """The types that have an unambiguous set to stand against (:data:`KEY_POOLS`), in the paper's order."""
    return tuple(KEY_POOLS)


def content_words(record: Example) -> tuple[str, ...]:
    """The content words of a pool record: its slot fillers as surface words, sorted."""
    return tuple(sorted({surface_word(v) for v in record.var_bindings.values()}))


def _check_settings(seed: object, per_type: object, test_share: object) -> tuple[int, int, float]:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise DetectionError(f"seed must be a non-negative whole number, not {seed!r}")
    if isinstance(per_type, bool) or not isinstance(per_type, int | np.integer) or per_type < 2:
        raise DetectionError(f"per_type must be a whole number of at least 2, not {per_type!r}")
    if (isinstance(test_share, bool) or not isinstance(test_share, int | float)
            or not 0.0 < float(test_share) < 1.0):
        raise DetectionError(f"test_share must be a number strictly between 0 and 1, not {test_share!r}")
    n_test = _test_count(int(per_type), float(test_share))
    if n_test < 1 or n_test >= per_type:
        raise DetectionError(
            f"per_type {per_type} with test_share {test_share} leaves {n_test} test and {int(per_type) - n_test} "
            "train sentences per type; both parts need at least one")
    return int(seed), int(per_type), float(test_share)


def _test_count(per_type: int, test_share: float) -> int:
    return int(math.floor(per_type * test_share + 0.5))  # round half up, not to even


def _check_types(types: Sequence[str] | None) -> tuple[str, ...]:
    if types is None:
        return detection_types()
    if isinstance(types, str) or not isinstance(types, Sequence) or not types:
        raise DetectionError(f"types must be a non-empty list of ambiguity type names, not {types!r}")
    out: list[str] = []
    for name in types:
        try:
            type_id = get_type(name).id
        except UnknownTypeError as exc:
            raise DetectionError(str(exc)) from None
        if type_id not in KEY_POOLS:
            raise DetectionError(f"type {type_id!r} has no unambiguous set to detect it against; "
                                 f"choose from {', '.join(detection_types())}")
        if type_id not in out:
            out.append(type_id)
    return tuple(out)


def _held_out_words(records: Iterable[tuple[str, Example]], rng: np.random.Generator) -> frozenset[str]:
    """Half of every group of interchangeable words (same (pool, slot) positions), by ``rng``."""
    positions: dict[str, set[tuple[str, str]]] = {}
    for pool_name, record in records:
        for slot, value in record.var_bindings.items():
            positions.setdefault(surface_word(value), set()).add((pool_name, slot))
    groups: dict[frozenset[tuple[str, str]], list[str]] = {}
    for word in sorted(positions):
        groups.setdefault(frozenset(positions[word]), []).append(word)
    held: set[str] = set()
    for key in sorted(groups, key=lambda g: sorted(g)):
        words = groups[key]
        order = [words[int(i)] for i in rng.permutation(len(words))]
        k = len(words) // 2 + (len(words) % 2 == 1 and bool(rng.random() < 0.5))
        held.update(order[:k])
    return frozenset(held)


def _part_of(words: tuple[str, ...], held: frozenset[str]) -> DetectionPart | None:
    inside = [w in held for w in words]
    if all(inside):
        return DetectionPart.TEST
    if not any(inside):
        return DetectionPart.TRAIN
    return None


def _draw(candidates: list[DetectionItem], n: int, rng: np.random.Generator, what: str) -> list[DetectionItem]:
    if n > len(candidates):
        raise DetectionError(
            f"only {len(candidates)} {what} use no word of the other part; ask for fewer per type "
            f"(a smaller per_type) or another seed")
    return [candidates[int(i)] for i in rng.choice(len(candidates), size=n, replace=False)]


#: An ambiguous pool sentence: (surface, (LF0, LF1), content words, its LF0 record).
_Candidate = tuple[str, tuple[str, ...], tuple[str, ...], Example]


def build_detection_set(*, seed: int = 0, per_type: int = DEFAULT_PER_TYPE, types: Sequence[str] | None = None,
                        test_share: float = DEFAULT_TEST_SHARE) -> DetectionSet:
    """The detection data of the module docstring (docs/paper-notes.md §22); :class:`DetectionError`
    for bad settings or when a type has too few sentences in a part."""
    seed, per_type, test_share = _check_settings(seed, per_type, test_share)
    chosen = _check_types(types)
    sources: dict[str, tuple[list[_Candidate], str]] = {}
    everything: list[tuple[str, Example]] = []
    for type_id in chosen:
        ambiguous_pool, unambiguous_pool = KEY_POOLS[type_id]
        amb: list[_Candidate] = [(p.surface, (p.lf0.lf, p.lf1.lf), content_words(p.lf0), p.lf0)
                                 for p in pairs(ambiguous_pool)]
        sources[type_id] = (amb, unambiguous_pool)
        everything += [(ambiguous_pool, p[3]) for p in amb]
        everything += [(unambiguous_pool, r) for r in pool(unambiguous_pool)]
    rng = np.random.default_rng(seed)
    held = _held_out_words(everything, rng)
    n_test = _test_count(per_type, test_share)
    counts = {DetectionPart.TRAIN: per_type - n_test, DetectionPart.TEST: n_test}
    used: set[str] = set()
    items: list[DetectionItem] = []
    for type_id in chosen:
        amb, unambiguous_pool = sources[type_id]
        ambiguous_pool = KEY_POOLS[type_id][0]
        for part in DetectionPart:
            amb_candidates = [
                DetectionItem(surface, True, type_id, ambiguous_pool, part, words, lfs)
                for surface, lfs, words, _ in amb if _part_of(words, held) == part and surface not in used]
            unamb_candidates = _unambiguous_candidates(unambiguous_pool, type_id, part, held, used)
            for found, what in ((amb_candidates, "ambiguous"), (unamb_candidates, "unambiguous")):
                drawn = _draw(found, counts[part], rng, f"{what} {type_id} sentences of the {part} part")
                used.update(item.sentence for item in drawn)
                items.extend(drawn)
    return DetectionSet(items=tuple(items), seed=seed, held_out=tuple(sorted(held)), per_type=per_type,
                        test_share=test_share)


def _unambiguous_candidates(pool_name: str, type_id: str, part: DetectionPart, held: frozenset[str],
                            used: set[str]) -> list[DetectionItem]:
    """One candidate per distinct surface of ``pool_name`` (a sentence with two bracketings is not
    unambiguous and is left out), in pool order."""
    by_surface: dict[str, list[Example]] = {}
    for record in pool(pool_name):
        by_surface.setdefault(record.surface, []).append(record)
    out: list[DetectionItem] = []
    for surface, records in by_surface.items():
        if len({r.lf for r in records}) != 1 or surface in used:
            continue
        words = content_words(records[0])
        if _part_of(words, held) == part:
            out.append(DetectionItem(surface, False, type_id, pool_name, part, words, (records[0].lf,)))
    return out
