"""The sampling primitives of the original split scripts (docs/paper-notes.md §5.1 steps 2–4, §5.5).

Each consumes a legacy ``numpy.random.RandomState`` exactly as the original did, so that
:mod:`amp.data.splits` reproduces the released folders draw for draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from amp.data.errors import SplitError
from amp.data.generate import group_by_surface, pool
from amp.data.templates.records import Example

__all__ = [
    "coin_flips",
    "keep_paired_split",
    "pool_groups",
    "ratio_sample",
    "sample_records",
    "split_random",
]


@lru_cache(maxsize=32)
def pool_groups(name: str, gender: str | None = None) -> tuple[tuple[Example, ...], ...]:
    """A pool's surface groups, computed once per process (pools never change)."""
    return tuple(tuple(g) for g in group_by_surface(pool(name, gender=gender)))


def keep_paired_split(
    rng: np.random.RandomState, groups: Sequence[Sequence[Example]], counts: Sequence[int]
) -> list[list[Example]]:
    """Keep-paired splitting (§5.1 step 2): disjoint sets of surface groups, one per count.

    ``groups`` are a pool's surface groups (:func:`group_by_surface`).  For each count in
    turn: ``choice(list(remaining), n, replace=False)`` over the Python set of remaining group
    indices, then remove the drawn ones.  Each part gets *all* records of its groups (both
    LFs), groups in drawn order.  A count of 0 still consumes a permutation of the remaining
    groups — that is what the original did.
    """
    remaining = set(range(len(groups)))
    parts: list[list[Example]] = []
    for n in counts:
        if n > len(remaining):
            raise SplitError(f"cannot draw {n} surfaces from {len(remaining)}")
        drawn = rng.choice(list(remaining), n, replace=False).tolist()
        remaining = remaining - set(drawn)
        parts.append([r for i in drawn for r in groups[i]])
    return parts


def split_random(
    rng: np.random.RandomState, records: Sequence[Example], counts: Sequence[int]
) -> list[list[Example]]:
    """``split_random`` of the general "basic" pool (§5.1 step 3): records, not groups.

    The released configs draw 0 records (100-perc) or never use the result (bug (b)), but the
    draws still advance the stream: one ``choice`` without replacement per split.
    """
    return keep_paired_split(rng, [(r,) for r in records], counts)


def sample_records(rng: np.random.RandomState, records: Sequence[Example], n: int) -> list[Example]:
    """``n`` records without replacement, in drawn order (step 4's unambiguous draw)."""
    if not records:
        return []
    return [records[i] for i in rng.choice(len(records), n, replace=False).tolist()]


def coin_flips(rng: np.random.RandomState, n: int, r: float) -> list[int]:
    """``n`` biased coins, exactly as ``n`` calls of ``rng.choice([0, 1], p=[r, 1 − r])``.

    Legacy ``choice`` with ``p`` normalises the cumulative sum of ``p``, draws one
    ``random_sample()`` and takes ``searchsorted(cdf, u, side="right")``; drawing the ``n``
    uniforms at once consumes the same stream and gives the same coins (tested against the
    call-by-call form), about 50 times faster.
    """
    cdf = np.array([r, 1 - r]).cumsum()
    cdf /= cdf[-1]
    return np.searchsorted(cdf, rng.random_sample(n), side="right").tolist()


def ratio_sample(
    rng: np.random.RandomState, records: Sequence[Example], total_n: int, ratio: float
) -> list[Example]:
    """Ratio sampling of ambiguous records (§5.1 step 4).

    Draw ``total_n`` surface groups without replacement; for each, in drawn order, flip one
    biased coin ``choice([0, 1], p=[r, 1 − r])`` with ``r = n0 / (n0 + n1)``,
    ``n0 = int(total_n × ratio)``: 0 takes the surface's LF0 record, 1 its LF1 record.
    Returns all LF0-chosen records, then all LF1-chosen ones — so the realised LF0 share is
    binomial, not exact (§6.1 table).
    """
    groups = group_by_surface(records)
    if total_n == 0 or not groups:
        return []
    drawn = rng.choice(list(set(range(len(groups)))), total_n, replace=False).tolist()
    n0 = int(total_n * ratio)
    n1 = total_n - n0
    coins = coin_flips(rng, len(drawn), n0 / (n0 + n1))
    chosen: tuple[list[Example], list[Example]] = ([], [])
    for i, coin in zip(drawn, coins, strict=True):
        chosen[coin].append(_reading(groups[i], coin))
    return chosen[0] + chosen[1]


def _reading(group: Sequence[Example], idx: int) -> Example:
    for r in group:
        if r.template_idx == idx:
            return r
    raise SplitError(f"surface {group[0].surface!r} has no LF{idx} record")
