"""The configs of the original split scripts (docs/paper-notes.md §5.1 "Config fields", §5.2, §5.3).

Constants (seed, split names, key orders, key pools, ratios, sizes) and the
``vary_ambiguity_global`` configs as :class:`FewshotConfig` records; :mod:`amp.data.splits`
replays the scripts with them.
"""

from __future__ import annotations

from dataclasses import dataclass

from amp.data.errors import SplitError
from amp.logic.vocabulary import DEFAULT_FORMAT, Format, check_format

__all__ = [
    "FEWSHOT_RATIOS",
    "KEY_POOLS",
    "SAMPLE_KEYS",
    "SEED",
    "SPLITS",
    "SPLIT_KEYS",
    "ZEROSHOT_KEYS",
    "ZEROSHOT_N",
    "ZEROSHOT_TYPES",
    "FewshotConfig",
    "SplitError",
    "SplitSpec",
    "fewshot_10perc_config",
    "fewshot_config",
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


def fewshot_config(ratio_pct: int, fmt: str = DEFAULT_FORMAT) -> FewshotConfig:
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
        canonicalize_train=fmt == Format.LISP,
    )


def fewshot_10perc_config(fmt: str = DEFAULT_FORMAT) -> FewshotConfig:
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
