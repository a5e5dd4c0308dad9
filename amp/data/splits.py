"""Rebuild the released AmP v1 split folders from the generator (docs/paper-notes.md §5, §6).

The released data may not be redistributed as text (§6), so this module *regenerates* it
from the pools of :mod:`amp.data.generate`, replaying the original split scripts:

* ``create_splits.py`` (§5.1, §5.2) → the 22 few-shot folders
  ``fewshot/<X>-<100-X>-5k-train-100-perc-ambig_{fol,lisp}/`` (§6.1) and the
  ``fewshot/50-50-5k-train-10-perc-ambig_{fol,lisp}/`` pair (§6.2);
* ``create_fewshot_splits.py`` (§5.3) → the 5 zero-shot folders ``zeroshot/<type>_fol/``
  (§6.3).

Faithfulness rests on replaying the random stream exactly (§5.5): a local legacy
``numpy.random.RandomState(12)``, consumed in the original call order, with the original
sampling primitives — keep-paired splitting that draws ``choice(list(set_of_group_indices),
n, replace=False)`` (legacy ``choice`` without replacement permutes the *whole* population,
so a draw of size 0 still advances the stream), the size-0 ``split_random`` draws on the
general unambiguous pool, and one biased coin ``choice([0, 1], p=[r, 1 - r])`` per sampled
ambiguous surface.  The published realised LF0 counts (§6.1 table) and test compositions
(§6.1, §6.3) are reproduced exactly; ``tests/data/test_splits.py`` checks them.  Two released
parts came from older code and are reproduced in layout and size only: the 10-perc pair's
sample and the zero-shot training pools of pp, revscope and bound (``docs/v1-splits.md``).

Write the output only outside the repository or under a git-ignored folder (``out/``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from amp.data.errors import SplitError
from amp.data.generate import pool
from amp.data.split_configs import (
    FEWSHOT_RATIOS,
    KEY_POOLS,
    SAMPLE_KEYS,
    SEED,
    SPLIT_KEYS,
    SPLITS,
    ZEROSHOT_KEYS,
    ZEROSHOT_N,
    ZEROSHOT_TYPES,
    FewshotConfig,
    SplitSpec,
    fewshot_10perc_config,
    fewshot_config,
)
from amp.data.split_sampling import keep_paired_split, pool_groups, ratio_sample, sample_records, split_random
from amp.data.splits_render import FORMATS, rerender
from amp.data.templates.records import Example
from amp.logic.vocabulary import Format

#: The replay (this module) and the configs and primitives it replays with
#: (:mod:`amp.data.split_configs`, :mod:`amp.data.split_sampling`), as one public API.
__all__ = [
    "FEWSHOT_RATIOS",
    "FORMATS",
    "SEED",
    "SPLITS",
    "ZEROSHOT_TYPES",
    "FewshotConfig",
    "SplitError",
    "SplitFolder",
    "SplitSpec",
    "build_fewshot",
    "build_zeroshot",
    "fewshot_10perc_config",
    "fewshot_config",
    "keep_paired_split",
    "ratio_sample",
    "split_random",
    "v1_folders",
    "write_folder",
]


# --- folders --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SplitFolder:
    """One released folder: its path relative to the data root, and file name → records.

    Records are final: LFs already re-rendered where the original re-rendered them.
    """

    path: str
    files: dict[str, list[Example]] = field(default_factory=dict)

    def line_counts(self) -> dict[str, int]:
        return {name: len(records) for name, records in self.files.items()}


@dataclass(frozen=True)
class _KeySplit:
    """What keep-paired splitting gave one key: per split, ambiguous and unambiguous records."""

    ambiguous: dict[str, list[Example]]
    unambiguous: dict[str, list[Example]]


def _split_keys(rng: np.random.RandomState, config: FewshotConfig) -> dict[str, _KeySplit]:
    """§5.1 step 2: keep-paired splitting per key, ambiguous pool then unambiguous pool."""
    out: dict[str, _KeySplit] = {}
    for key in SPLIT_KEYS:
        amb_pool, unamb_pool = KEY_POOLS[key]
        amb = keep_paired_split(rng, pool_groups(amb_pool),
                                [config.spec(s).ambiguous_n(config.perc_key) for s in SPLITS])
        unamb = keep_paired_split(rng, pool_groups(unamb_pool),
                                  [config.spec(s).unambiguous_n(config.perc_key) for s in SPLITS])
        out[key] = _KeySplit(dict(zip(SPLITS, amb, strict=True)),
                             dict(zip(SPLITS, unamb, strict=True)))
    return out


def _sample_split(
    rng: np.random.RandomState, keys: dict[str, _KeySplit], config: FewshotConfig, split: str
) -> list[Example]:
    """§5.1 steps 4–5: per key (pp, conj, bound, scope, revscope) the unambiguous draw, then
    the ratio-sampled ambiguous records; concatenated, not shuffled."""
    spec = config.spec(split)
    out: list[Example] = []
    for key in SAMPLE_KEYS:
        part = keys[key]
        out += sample_records(rng, part.unambiguous[split],
                              spec.sampled_n(config.perc_key, ambiguous=False))
        out += ratio_sample(rng, part.ambiguous[split],
                            spec.sampled_n(config.perc_key, ambiguous=True), spec.ratio)
    return out


def _eval_records(keys: dict[str, _KeySplit], split: str) -> list[Example]:
    """§5.1 step 7: per key in step-2 order, the split's ambiguous records (both LFs,
    adjacent) followed by its unambiguous records."""
    out: list[Example] = []
    for key in SPLIT_KEYS:
        out += keys[key].ambiguous[split] + keys[key].unambiguous[split]
    return out


def build_fewshot(config: FewshotConfig) -> SplitFolder:
    """Replay ``create_splits.py`` (with bug (a) fixed) for one config (§5.1).

    Re-rendering (step 6): dev/test always (ordered, sorted); train when
    ``canonicalize_train``; ``*_eval`` only in Lisp.  FOL files not re-rendered keep the raw
    template-order LFs (§6.1, §14 item 4).
    """
    rng = np.random.RandomState(SEED)
    keys = _split_keys(rng, config)
    split_random(rng, pool("basic"), [config.spec(s).random_n() for s in SPLITS])
    files: dict[str, list[Example]] = {}
    for split in SPLITS:
        records = _sample_split(rng, keys, config, split)
        if split != "train" or config.canonicalize_train:
            records = rerender(records, config.fmt)
        files[f"{split}.jsonl"] = records
        if config.write_eval:
            evals = _eval_records(keys, split)
            if config.fmt == Format.LISP:  # FOL eval files keep the raw template-order LFs
                evals = rerender(evals, Format.LISP)
            files[f"{split}_eval.jsonl"] = evals
    return SplitFolder(f"fewshot/{config.name}", files)


def _zeroshot_groups(key: str) -> tuple[tuple[Example, ...], ...]:
    """The zero-shot script's ambiguous pools; its bound generator is female-only (§4.4)."""
    return pool_groups("bound", "female") if key == "bound" else pool_groups(key)


def build_zeroshot(type: str) -> SplitFolder:
    """Replay ``create_fewshot_splits.py`` for one target type (§5.3, §6.3).

    Every key is keep-paired split in the order pp, conj, scope, revscope, bound — 0/0/0
    surfaces for the non-target keys, whose draws still consume the stream (their empty
    unambiguous pools do not) — then the target's dev and test are ratio-sampled at ratio 0
    (LF1 records).  Train is the unambiguous ingredient pool (38,882 records, unshuffled);
    ``train_eval`` is empty.  Nothing is re-rendered: all LFs are in template order.
    """
    if type not in ZEROSHOT_TYPES:
        raise SplitError(f"zero-shot type must be one of {', '.join(ZEROSHOT_TYPES)}, not {type!r}")
    rng = np.random.RandomState(SEED)
    parts: dict[str, list[list[Example]]] = {}
    for key in ZEROSHOT_KEYS:
        counts = [0, ZEROSHOT_N, ZEROSHOT_N] if key == type else [0, 0, 0]
        parts[key] = keep_paired_split(rng, _zeroshot_groups(key), counts)
    _, dev_eval, test_eval = parts[type]
    dev = ratio_sample(rng, dev_eval, ZEROSHOT_N, 0.0)
    test = ratio_sample(rng, test_eval, ZEROSHOT_N, 0.0)
    files = {
        "train.jsonl": pool("zeroshot_train"),
        "train_eval.jsonl": [],
        "dev.jsonl": dev,
        "dev_eval.jsonl": dev_eval,
        "test.jsonl": test,
        "test_eval.jsonl": test_eval,
    }
    return SplitFolder(f"zeroshot/{type}_fol", files)


def v1_folders(
    only: str | None = None,
    ratios: Iterable[int] = FEWSHOT_RATIOS,
    formats: Iterable[str] = FORMATS,
) -> Iterable[SplitFolder]:
    """The released v1 folders, lazily: few-shot 100-perc (per ratio, per format), the
    10-perc pair, zero-shot (§6).  ``only`` is ``fewshot``, ``fewshot-10perc``, ``zeroshot``
    or ``None`` (all)."""
    if only not in (None, "fewshot", "fewshot-10perc", "zeroshot"):
        raise SplitError(f"only must be fewshot, fewshot-10perc or zeroshot, not {only!r}")
    ratios, formats = list(ratios), list(formats)
    if only in (None, "fewshot"):
        for ratio in ratios:
            for fmt in formats:
                yield build_fewshot(fewshot_config(ratio, fmt))
    if only in (None, "fewshot-10perc"):
        for fmt in formats:
            yield build_fewshot(fewshot_10perc_config(fmt))
    if only in (None, "zeroshot"):
        for type in ZEROSHOT_TYPES:
            yield build_zeroshot(type)


def write_folder(folder: SplitFolder, root: str | Path) -> Path:
    """Write a folder's files under ``root`` in the original JSONL layout; returns its path.

    One ``json.dumps`` object a line, default separators, original field order (§6).
    """
    target = Path(root) / folder.path
    target.mkdir(parents=True, exist_ok=True)
    for name, records in folder.files.items():
        with open(target / name, "w", encoding="utf-8") as fh:
            fh.writelines(_json_line(r) for r in records)
    return target


@lru_cache(maxsize=1 << 18)
def _json_line(record: Example) -> str:
    """One JSONL line, as :func:`amp.data.generate.write_jsonl` writes it (memoised per record:
    the folders share most records)."""
    return json.dumps(record.to_record()) + "\n"
