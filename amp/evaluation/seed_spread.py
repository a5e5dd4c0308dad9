"""How much a table moves with the split seed (``amp reproduce --seeds 0,1,2``), pure.

Each seed draws other test sentences and other prompt examples (``sample_pairs(type, n, seed)`` and
the prompt seeds derived from it, :mod:`amp.evaluation.sweep_plan`).  :func:`seed_spread` lines up
one summary frame per seed by its key columns (type, and ratio for Fig. 6) and gives, for every
cell, its value under each seed and their mean, sample standard deviation, minimum and maximum
(docs/paper-notes.md §21: this spread is across samples of sentences *and* prompts, which the
bootstrap interval of one run, over its sentences only, does not see).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from amp.evaluation.errors import ExperimentError

__all__ = ["SPREAD_COLUMNS", "seed_spread", "spread"]

#: The summary columns of :func:`seed_spread`, after the keys, the statistic's name and one
#: ``seed_<s>`` column per seed.
SPREAD_COLUMNS: tuple[str, ...] = ("mean", "sd", "min", "max", "n_seeds")


def spread(values: Sequence[float]) -> dict[str, float]:
    """Mean, sample sd (ddof 1), min, max and count of the non-NaN ``values`` (sd NaN below 2; all NaN on none)."""
    got = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not got:
        return {**dict.fromkeys(SPREAD_COLUMNS[:-1], math.nan), "n_seeds": 0}
    mean = math.fsum(got) / len(got)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in got) / (len(got) - 1)) if len(got) > 1 else math.nan
    return {"mean": mean, "sd": sd, "min": min(got), "max": max(got), "n_seeds": len(got)}


def seed_spread(by_seed: Mapping[int, pd.DataFrame], keys: Sequence[str], stats: Sequence[str]) -> pd.DataFrame:
    """One row per (key values, statistic): ``seed_<s>`` per seed, then :data:`SPREAD_COLUMNS`.

    A cell missing under some seed (a type or ratio that seed did not reach) is NaN there and left
    out of its spread.  Frames lacking a key or statistic column are an :class:`ExperimentError`.
    """
    seeds = list(by_seed)
    columns = [*keys, "stat", *(f"seed_{s}" for s in seeds), *SPREAD_COLUMNS]
    values: dict[tuple[object, ...], dict[int, float]] = {}
    for seed, df in by_seed.items():
        missing = [c for c in (*keys, *stats) if c not in df.columns]
        if missing:
            raise ExperimentError(f"the seed-{seed} table lacks column(s) {missing}")
        for row in df.to_dict("records"):
            for stat in stats:
                cell = (*(row[k] for k in keys), stat)
                values.setdefault(cell, {})[seed] = float(row[stat])
    rows = []
    for cell, got in values.items():
        per_seed = [got.get(s, math.nan) for s in seeds]
        rows.append([*cell, *per_seed, *spread(per_seed).values()])
    out = pd.DataFrame(rows, columns=columns)
    out["n_seeds"] = out["n_seeds"].astype("int64")
    return out
