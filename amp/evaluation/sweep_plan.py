"""Sweep planning (pure, no model): a frozen config becomes the list of prompts a sweep parses.

A :class:`FewShotConfig` or :class:`ZeroShotConfig` becomes a list of :class:`SweepItem` — one
prompt per test sentence (and per ratio, few-shot).  Everything random is seeded from the config,
so the same config gives the same prompts, which then hit the result cache on a rerun.  The
running layer is :mod:`amp.evaluation.sweep_run`, the summaries :mod:`amp.evaluation.sweep_summary`.

Paper: Stengel-Eskin et al. 2023, "Zero and Few-shot Semantic Parsing with Ambiguous Inputs"
(arXiv 2306.00824); section numbers "§n" refer to ``docs/paper-notes.md``.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from amp.data.generate import sample_pairs
from amp.data.types import find_type, get_type, type_ids
from amp.errors import RatioError
from amp.evaluation.errors import ExperimentError
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE, Format, check_format, check_mode
from amp.parser.search.settings import DEFAULT_SEARCH, SearchSettings
from amp.prompts import EXAMPLES_PER_PROMPT, Prompt, check_ratio, mixed_prompt, zero_shot_prompt

__all__ = [
    "DEFAULT_RATIOS",
    "ExperimentError",
    "FewShotConfig",
    "SweepConfig",
    "SweepItem",
    "SweepSentence",
    "ZeroShotConfig",
    "config_from_dict",
    "config_to_dict",
    "plan",
    "plan_fewshot",
    "plan_zeroshot",
]


#: The paper's 11 LF0 ratios r = 0, 0.1, …, 1 (§0.6).
DEFAULT_RATIOS: tuple[float, ...] = tuple(i / 10 for i in range(11))

# --------------------------------------------------------------------------- configs


def _whole(name: str, value: Any, minimum: int | None = 1) -> int:
    """``value`` as an int (numpy ints accepted, bools and floats not), at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ExperimentError(f"{name} must be a whole number, not {value!r}")
    if minimum is not None and value < minimum:
        raise ExperimentError(f"{name} must be a whole number >= {minimum}, not {value!r}")
    return int(value)


def _check_common(types: Sequence[str], search: Any, fmt: str, mode: str) -> tuple[str, ...]:
    if isinstance(types, str):
        types = (types,)
    if not types:
        raise ExperimentError(f"types is empty; choose some of {', '.join(type_ids())}")
    unknown = [str(t) for t in types if find_type(str(t)) is None]  # aliases (scope_reverse) are known
    if unknown:
        raise ExperimentError(f"unknown ambiguity type(s) {unknown}; choose from {', '.join(type_ids())}")
    normalised = tuple(get_type(str(t)).id for t in types)
    if len(set(normalised)) != len(normalised):
        raise ExperimentError(f"types {list(normalised)} lists a type twice")
    if not isinstance(search, SearchSettings):  # its own construction bounds it (beams, cost of one prompt)
        raise ExperimentError(f"search must be a SearchSettings, not {type(search).__name__}")
    check_format(fmt, ExperimentError)
    check_mode(mode, ExperimentError)
    return normalised


@dataclass(frozen=True)
class FewShotConfig:
    """A few-shot ("mixed prompt") sweep, paper §4 / Fig. 6 (docs/paper-notes.md §11).

    For every type, ``n_per_ratio`` test sentences are drawn once (``sample_pairs(type, n,
    seed)``) and each is parsed under one prompt per ratio r in ``ratios``: ``k`` random
    same-type examples, int(k·r) of them shown with LF0 and the rest with LF1
    (:func:`amp.prompts.lf0_count`, robust to float error).  So the test set
    is the same for all ratios, as in the paper.  ``search`` is the search every prompt is parsed
    with (:class:`~amp.parser.search.settings.SearchSettings`: beams, …; validated by its own
    construction), ``mode`` the canonicaliser used for matching (``"logical"`` or the faithful ``"paper"``).

    Paired design (the default, as in the original, docs/paper-notes.md §11): a test sentence sees the
    *same* ``k`` example sentences in the same positions at every ratio; only which of them
    carry LF0 changes.  ``independent_draws=True`` draws fresh examples per ratio instead
    (more noise in FDM/FIM and the P(LF0) curve; kept for comparison only).
    """

    types: tuple[str, ...] = field(default_factory=type_ids)  # every registered type, read when made
    ratios: tuple[float, ...] = DEFAULT_RATIOS
    n_per_ratio: int = 5
    seed: int = 0
    k: int = EXAMPLES_PER_PROMPT
    fmt: str = DEFAULT_FORMAT
    search: SearchSettings = DEFAULT_SEARCH
    mode: str = DEFAULT_MODE
    independent_draws: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "types", _check_common(self.types, self.search, self.fmt, self.mode))
        if not isinstance(self.independent_draws, bool) and type(self.independent_draws).__name__ != "bool_":
            raise ExperimentError(f"independent_draws must be True or False, not {self.independent_draws!r}")
        object.__setattr__(self, "independent_draws", bool(self.independent_draws))
        ratios = (self.ratios,) if isinstance(self.ratios, int | float) else tuple(self.ratios)
        if not ratios:
            raise ExperimentError("ratios is empty; the paper uses 0, 0.1, …, 1")
        clean: list[float] = []
        for r in ratios:
            try:
                value = check_ratio(r)
            except RatioError as exc:  # a configuration error, with the one ratio check's words
                raise ExperimentError(str(exc)) from None
            clean.append(round(value, 6))  # 0.1 * 3 and 0.3 are the same ratio
        if len(set(clean)) != len(clean):
            raise ExperimentError(f"ratios {clean} lists a ratio twice")
        object.__setattr__(self, "ratios", tuple(clean))
        object.__setattr__(self, "n_per_ratio", _whole("n_per_ratio", self.n_per_ratio))
        object.__setattr__(self, "k", _whole("k (examples per prompt)", self.k))
        object.__setattr__(self, "seed", _whole("seed", self.seed, None))

    @property
    def n_items(self) -> int:
        """How many prompts the sweep parses: types × ratios × n_per_ratio."""
        return len(self.types) * len(self.ratios) * self.n_per_ratio


@dataclass(frozen=True)
class ZeroShotConfig:
    """A zero-shot sweep, paper §3 / Fig. 2–3 / Table 2 (docs/paper-notes.md §10).

    ``n`` test sentences per type (the paper: 200), each under its zero-shot prompt of
    unambiguous "ingredient" examples, parsed with ``search``; its beams bound the ZM_k that can
    be computed (k ≤ ``search.beams``).
    """

    types: tuple[str, ...] = field(default_factory=type_ids)  # every registered type, read when made
    n: int = 20
    seed: int = 0
    search: SearchSettings = DEFAULT_SEARCH
    fmt: str = DEFAULT_FORMAT
    mode: str = DEFAULT_MODE

    def __post_init__(self) -> None:
        object.__setattr__(self, "types", _check_common(self.types, self.search, self.fmt, self.mode))
        if self.fmt != Format.FOL:
            raise ExperimentError(
                f"zero-shot prompts are FOL only (paper §3; docs/paper-notes.md §10), so fmt must be 'fol', not {self.fmt!r}"
            )
        object.__setattr__(self, "n", _whole("n (test sentences per type)", self.n))
        object.__setattr__(self, "seed", _whole("seed", self.seed, None))

    @property
    def n_items(self) -> int:
        """How many prompts the sweep parses: types × n."""
        return len(self.types) * self.n


#: A sweep's one settings record: its plan (types, ratios, n, seed, k, fmt, mode) and its ``search``.
SweepConfig = FewShotConfig | ZeroShotConfig


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class SweepSentence:
    """A test sentence within a sweep: what a planned :class:`SweepItem` and its outcome share.

    ``id`` is unique in the sweep, ``ratio`` None for zero-shot, ``lf0``/``lf1`` the gold LFs
    in the sweep's format.
    """

    id: str
    type: str
    ratio: float | None
    surface: str
    lf0: str
    lf1: str


@dataclass(frozen=True)
class SweepItem(SweepSentence):
    """One prompt of a sweep: a test sentence, its two gold LFs and the prompt to parse it with.

    ``ratio`` is None for zero-shot items.  ``lf0``/``lf1`` are in the sweep's ``fmt`` (the
    prompt's gold), ``prompt_text`` is the rendered prompt, ``index`` the sentence's position
    in its type's test set (the same across ratios).
    """

    prompt_text: str
    prompt: Prompt = field(repr=False, compare=False)
    index: int = 0
    fmt: str = DEFAULT_FORMAT
    seed: int = 0


def _derive_seed(*parts: object) -> int:
    """A stable 31-bit seed from the parts (unlike ``hash``, the same in every process)."""
    key = "\x1f".join("None" if p is None else (f"{p:.6f}" if isinstance(p, float) else str(p)) for p in parts)
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") & 0x7FFFFFFF


def _gold(prompt: Prompt, pair: Any, which: int) -> str:
    gold = getattr(prompt, f"gold_lf{which}", None)
    if gold is None:
        gold = getattr(pair, f"lf{which}").lf
    return str(gold)


def plan_fewshot(config: FewShotConfig) -> list[SweepItem]:
    """All items of a few-shot sweep, grouped by type, then ratio, then test sentence.

    The ``n_per_ratio`` test sentences of a type are drawn once with
    ``sample_pairs(type, n_per_ratio, config.seed)`` and reused for every ratio (paper §4: one
    test set, all ratios).  The prompt of (type, ratio, sentence index) is
    ``mixed_prompt(pair, ratio, seed=s, k=config.k, fmt=config.fmt)`` with ``s`` derived from
    (seed, type, index) — the same at every ratio, so the item sees the same example sentences
    in the same positions at every ratio (the original's paired design, docs/paper-notes.md §11) — or,
    with ``config.independent_draws``, from (seed, type, ratio, index).  The plan is a pure
    function of the config.
    """
    items: list[SweepItem] = []
    for type_ in config.types:
        pairs = list(sample_pairs(type_, config.n_per_ratio, config.seed))
        for ratio in config.ratios:
            for index, pair in enumerate(pairs):
                if config.independent_draws:
                    seed = _derive_seed("fewshot", config.seed, type_, ratio, index)
                else:
                    seed = _derive_seed("fewshot", config.seed, type_, index)
                prompt = mixed_prompt(pair, ratio, seed=seed, k=config.k, fmt=config.fmt)
                items.append(
                    _sweep_item(f"fewshot/{type_}/r={ratio:.2f}/{index:03d}", type_, ratio, pair,
                                prompt, index=index, fmt=config.fmt, seed=seed)
                )
    return items


def _sweep_item(
    id_: str, type_: str, ratio: float | None, pair: Any, prompt: Prompt, *, index: int, fmt: str, seed: int
) -> SweepItem:
    """One planned item: the test pair, its prompt (rendered once) and the gold LFs it is scored on."""
    return SweepItem(
        id=id_,
        type=type_,
        ratio=ratio,
        surface=pair.surface,
        lf0=_gold(prompt, pair, 0),
        lf1=_gold(prompt, pair, 1),
        prompt_text=prompt.render(),
        prompt=prompt,
        index=index,
        fmt=fmt,
        seed=seed,
    )


def plan_zeroshot(config: ZeroShotConfig) -> list[SweepItem]:
    """All items of a zero-shot sweep: ``n`` sentences per type, each with its zero-shot prompt.

    Sentences come from ``sample_pairs(type, n, config.seed)``; the prompt's example shuffle is
    seeded from (seed, type, index).  Zero-shot prompts are FOL (paper §3; docs/paper-notes.md §10).
    """
    items: list[SweepItem] = []
    for type_ in config.types:
        for index, pair in enumerate(sample_pairs(type_, config.n, config.seed)):
            seed = _derive_seed("zeroshot", config.seed, type_, index)
            prompt = zero_shot_prompt(pair, seed=seed)
            items.append(
                _sweep_item(f"zeroshot/{type_}/{index:03d}", type_, None, pair, prompt,
                            index=index, fmt=config.fmt, seed=seed)
            )
    return items


def config_to_dict(config: SweepConfig) -> dict[str, Any]:
    """A sweep config as JSON data (kept with a server job so a page can rebuild its plan): its
    fields, tuples as lists and ``search`` as :meth:`~amp.parser.search.settings.SearchSettings.as_dict`."""
    kind = "fewshot" if isinstance(config, FewShotConfig) else "zeroshot"
    data: dict[str, Any] = {"kind": kind}
    for f in fields(config):
        value = getattr(config, f.name)
        data[f.name] = value.as_dict() if isinstance(value, SearchSettings) else \
            list(value) if isinstance(value, tuple) else value
    return data


def config_from_dict(d: dict[str, Any]) -> SweepConfig:
    """Inverse of :func:`config_to_dict`, and of what older code saved (a flat ``beams`` where
    ``search`` is now); raises :class:`ExperimentError` for anything else (a bad search setting:
    the :class:`~amp.errors.SettingError` of its record)."""
    try:
        given = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k not in ("kind", "search")}
        search: Any = d.get("search")
        if search is None and "beams" in given:  # saved before the config held its search record
            search = {"beams": given.pop("beams")}
        cls = {"fewshot": FewShotConfig, "zeroshot": ZeroShotConfig}[d["kind"]]
        return cls(**given, search=SearchSettings(**({} if search is None else search)))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ExperimentError(f"not a sweep configuration: {exc}") from None


def plan(config: SweepConfig) -> list[SweepItem]:
    """:func:`plan_fewshot` or :func:`plan_zeroshot`, by the config's class."""
    if isinstance(config, FewShotConfig):
        return plan_fewshot(config)
    if isinstance(config, ZeroShotConfig):
        return plan_zeroshot(config)
    raise ExperimentError(f"expected a FewShotConfig or ZeroShotConfig, not {type(config).__name__}")
