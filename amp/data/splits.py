"""Rebuild the released AmP v1 split folders from the generator (reference §5, §6).

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
(§6.1, §6.3) are reproduced exactly; ``tests/test_splits.py`` checks them.  Two released
parts came from older code and are reproduced in layout and size only: the 10-perc pair's
sample and the zero-shot training pools of pp, revscope and bound (``docs/v1-splits.md``).

Write the output only outside the repository or under a git-ignored folder (``out/``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from amp.data.generate import pool
from amp.data.splits_render import FORMATS, rerender
from amp.data.templates.records import Example
from amp.errors import AmpError
from amp.logic.vocabulary import check_format

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

#: The seed of both original split scripts (§5.1, §5.3).
SEED = 12

#: The splits, in the order the original processed them.
SPLITS: tuple[str, ...] = ("train", "dev", "test")

#: §5.1 step 2 (keep-paired splitting) and the key order of the ``*_eval`` files (step 7).
SPLIT_KEYS: tuple[str, ...] = ("pp", "scope", "revscope", "conj", "bound")

#: §5.1 step 4 (ratio sampling) — a different order from step 2, hence train.jsonl's grouping.
SAMPLE_KEYS: tuple[str, ...] = ("pp", "conj", "bound", "scope", "revscope")

#: §5.3: the zero-shot script's key order, and the folder types of §6.3.
ZEROSHOT_KEYS: tuple[str, ...] = ("pp", "conj", "scope", "revscope", "bound")
ZEROSHOT_TYPES: tuple[str, ...] = ("pp", "scope", "revscope", "bound", "conj")

#: Config key → (ambiguous pool, unambiguous pool), §5.1 step 2 (scope_unambig serves twice).
KEY_POOLS: dict[str, tuple[str, str]] = {
    "pp": ("pp", "pp_unambig"),
    "scope": ("scope", "scope_unambig"),
    "revscope": ("revscope", "scope_unambig"),
    "conj": ("conj", "single_conj"),
    "bound": ("bound", "bound_unambig"),
}

#: The train-ratio percentages X of the ``X-(100-X)`` folders (§5.2).
FEWSHOT_RATIOS: tuple[int, ...] = tuple(range(0, 101, 10))

#: Zero-shot dev/test size per target type (§5.3).
ZEROSHOT_N = 200


class SplitError(AmpError, ValueError):
    """A split request the original procedure cannot serve (bad ratio, format, or size)."""


# --- configs (§5.1 "Config fields", §5.2) ---------------------------------------------------


@dataclass(frozen=True)
class SplitSpec:
    """One split's section of a ``create_splits`` config, the same for every type key.

    ``perc_ambig`` is ``perc_K_ambig``, ``ratio`` is ``K_ratio`` (§5.1); ``perc_unambig`` is
    the share of the general "basic" pool handed to ``split_random`` (step 3).
    """

    total: int
    perc_ambig: float
    ratio: float
    perc_unambig: float = 0.0

    def ambiguous_n(self, perc_key: float) -> int:
        """Ambiguous surfaces per key: ``int(total × perc_K_ambig × perc_K)`` (step 2)."""
        return int(self.total * self.perc_ambig * perc_key)

    def unambiguous_n(self, perc_key: float) -> int:
        """Unambiguous surfaces per key: ``int(total × (1 − perc_K_ambig) × perc_K)``."""
        return int(self.total * (1 - self.perc_ambig) * perc_key)

    def sampled_n(self, perc_key: float, *, ambiguous: bool) -> int:
        """Step 4's sample sizes, in the original's own expression order
        ``int(perc_K × perc_K_{ambig,unambig} × total)`` (``perc_K_unambig`` is
        ``1 − perc_K_ambig`` in every released config)."""
        share = self.perc_ambig if ambiguous else 1 - self.perc_ambig
        return int(perc_key * share * self.total)

    def random_n(self) -> int:
        """The size of the ``split_random`` draw on the basic pool (step 3)."""
        return int(self.total * self.perc_unambig)


@dataclass(frozen=True)
class FewshotConfig:
    """A ``vary_ambiguity_global`` config as the original script saw it after filling (§5.1).

    ``perc_key`` is the even share ``perc_K`` of each type key (1/5 for the 100-perc configs,
    1/6 for the 10-perc ones, which also list ``perc_unambig``).  ``canonicalize_train``
    re-renders train.jsonl (§5.1 step 6); ``write_eval`` writes the ``*_eval`` files, which
    the released 10-perc folders lack (§6.2).
    """

    name: str
    fmt: str
    train: SplitSpec
    dev: SplitSpec
    test: SplitSpec
    perc_key: float
    canonicalize_train: bool
    write_eval: bool = True

    def spec(self, split: str) -> SplitSpec:
        return {"train": self.train, "dev": self.dev, "test": self.test}[split]


def _check_fmt(fmt: str) -> None:
    check_format(fmt, SplitError)


def fewshot_config(ratio_pct: int, fmt: str = "fol") -> FewshotConfig:
    """The ``<X>-<100-X>-5k-train-100-perc-ambig`` config (§5.2).

    Train: 5,000 surfaces, all ambiguous, 1/5 per type, LF0 with probability X/100.
    Dev/test: 500 each, ratio 0.0 (so their files hold LF1 records).  Lisp configs re-render
    train too (every released Lisp file is Lisp, §6.1); FOL train stays raw.
    """
    _check_fmt(fmt)
    if ratio_pct not in FEWSHOT_RATIOS:
        raise SplitError(f"ratio must be one of {', '.join(map(str, FEWSHOT_RATIOS))}, "
                         f"not {ratio_pct!r}")
    held_out = SplitSpec(total=500, perc_ambig=1.0, ratio=0.0)
    return FewshotConfig(
        name=f"{ratio_pct}-{100 - ratio_pct}-5k-train-100-perc-ambig_{fmt}",
        fmt=fmt,
        train=SplitSpec(total=5000, perc_ambig=1.0, ratio=ratio_pct / 100),
        dev=held_out,
        test=held_out,
        perc_key=1 / 5,
        canonicalize_train=fmt == "lisp",
    )


def fewshot_10perc_config(fmt: str = "fol") -> FewshotConfig:
    """The ``50-50-5k-train-10-perc-ambig`` config, with its committed defects fixed (§5.2).

    Train: 10% ambiguous, 1/6 per key (``perc_unambig`` is listed, so it takes a share too:
    its ``split_random`` draw of 833/166/166 basic records still happens, but bug (b) means
    it is never sampled).  Dev/test: 1,000 each, all ambiguous (``perc_K_ambig: 1.0``), 166
    per key, ratio 0.0.  The committed YAML says ``canonicalize`` instead of
    ``canonicalize_train``; the released train *is* canonical, so we read it as
    ``canonicalize_train: true``.  No ``*_eval`` files, as released (§6.2).

    The released pair was written by an older script and generator version; this replay
    reproduces its layout and sizes, not its exact sample (see ``docs/v1-splits.md``).
    """
    _check_fmt(fmt)
    perc_key = 1 / 6
    held_out = SplitSpec(total=1000, perc_ambig=1.0, ratio=0.0, perc_unambig=perc_key)
    return FewshotConfig(
        name=f"50-50-5k-train-10-perc-ambig_{fmt}",
        fmt=fmt,
        train=SplitSpec(total=5000, perc_ambig=0.1, ratio=0.5, perc_unambig=perc_key),
        dev=held_out,
        test=held_out,
        perc_key=perc_key,
        canonicalize_train=True,
        write_eval=False,
    )


# --- sampling primitives (§5.1 steps 2–4, §5.5) ---------------------------------------------


def group_by_surface(records: Iterable[Example]) -> list[list[Example]]:
    """Records grouped by surface, groups in first-appearance order (§5.1 step 2)."""
    groups: dict[str, list[Example]] = {}
    for r in records:
        groups.setdefault(r.surface, []).append(r)
    return list(groups.values())


@lru_cache(maxsize=32)
def _pool_groups(name: str, gender: str | None = None) -> tuple[tuple[Example, ...], ...]:
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
        amb = keep_paired_split(rng, _pool_groups(amb_pool),
                                [config.spec(s).ambiguous_n(config.perc_key) for s in SPLITS])
        unamb = keep_paired_split(rng, _pool_groups(unamb_pool),
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
            if config.fmt == "lisp":  # FOL eval files keep the raw template-order LFs
                evals = rerender(evals, "lisp")
            files[f"{split}_eval.jsonl"] = evals
    return SplitFolder(f"fewshot/{config.name}", files)


def _zeroshot_groups(key: str) -> tuple[tuple[Example, ...], ...]:
    """The zero-shot script's ambiguous pools; its bound generator is female-only (§4.4)."""
    return _pool_groups("bound", "female") if key == "bound" else _pool_groups(key)


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
