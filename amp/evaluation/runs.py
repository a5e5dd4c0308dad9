"""Method-aware sweep runs and run manifests: the records behind the paper's tables and figures.

* :func:`run_method` runs planned :class:`~amp.evaluation.sweep_plan.SweepItem` s with one of
  :data:`amp.evaluation.interpretations.METHODS`: ``beam`` (the paper's constrained beam, via
  :func:`amp.evaluation.sweep_run.run_items`), ``distinct`` (distinct-interpretation top-k from a
  wider beam) or ``sampling`` (interpretations by estimated probability).  Every method yields
  :class:`~amp.evaluation.sweep_run.SweepRecord` s whose ``beams`` are the ranked LF list, so the
  summaries (ZM_k, FDM, FIM) work unchanged.  Everything goes through the result cache.
* Run manifests (``<cache root>/runs/<name>.json``: settings + records, :func:`save_manifest`,
  :func:`load_manifest`, :func:`list_runs`) let the Research and Compare pages show any saved run
  without a model.  ``python -m amp reproduce`` writes them, and so does a sweep finished in the
  app (:func:`save_sweep`: the same place and format, one run per model and sweep configuration).
  Every manifest says where the run computed (:mod:`amp.evaluation.run_context`) and when, in what
  wall time and with which versions (:mod:`amp.evaluation.provenance`: stamped by
  :func:`save_manifest` where the settings do not say it); manifests written before have neither and
  still load.
  The report written from records is :mod:`amp.reporting.report`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from amp.evaluation.errors import ReportError
from amp.evaluation.interpretations import (
    METHODS,
    Interpretation,
    distinct_topk,
    sample_interpretations,
    samples_cached,
)
from amp.evaluation.provenance import stamped
from amp.evaluation.run_context import RunContext
from amp.evaluation.sweep_plan import FewShotConfig, SweepItem, ZeroShotConfig, config_to_dict
from amp.evaluation.sweep_run import SweepRecord, record_from_result, run_items
from amp.logic.vocabulary import DEFAULT_MODE
from amp.parser.core import limits
from amp.parser.core.errors import EndpointUnreachable
from amp.parser.core.results import BatchItemResult, Beam, ParseResult
from amp.parser.models.loading import EXACT_DTYPE
from amp.parser.search.settings import DEFAULT_SEARCH, SearchKeywords, SearchSettings
from amp.settings import cache_root

if TYPE_CHECKING:
    from amp.parser.parser import Parser

__all__ = [
    "ReportError",
    "list_runs",
    "load_manifest",
    "record_from_dict",
    "record_to_dict",
    "run_method",
    "runs_dir",
    "save_manifest",
    "save_sweep",
    "sweep_run_name",
    "sweep_settings",
]


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class _Method:
    """One method's settings (see :func:`run_method`), checked against :mod:`amp.parser.core.limits`
    on construction (SettingError / RequestTooLarge): a bad setting would fail every item.  The
    search record bounds its own beams and budget; a ``distinct`` method's wider search is built
    (and so bounded) here."""

    name: str
    search: SearchSettings
    mode: str
    width: int
    n_samples: int
    temperature: float
    seed: int

    def __post_init__(self) -> None:

        if self.name not in METHODS:
            raise ReportError(f"method must be one of {METHODS}, not {self.name!r}")
        limits.check_seed(self.seed)
        if self.name == "distinct":
            limits.check_count(self.width, "width", limits.MAX_WIDTH)
            self.widest()
        if self.name == "sampling":
            limits.check_samples(self.n_samples)
            limits.check_temperature(self.temperature)

    def widest(self) -> SearchSettings:
        """The search ``distinct`` runs: a beam of ``width`` (at least the ``search.beams`` kept)."""
        return SearchSettings.of(self.search, beams=max(self.width, self.search.beams), constrained=True)

    def ranked(self, parser: Parser, item: SweepItem) -> tuple[ParseResult, bool]:
        """The item's ranked LFs as a parse, and whether they came from the cache."""
        prompt, fmt, search = item.prompt_text, item.fmt, self.search
        if self.name == "beam":  # with a generation budget: one cached parse per item
            was = parser.cached_parse(prompt, search, fmt=fmt) is not None
            return parser.parse(prompt, search, fmt=fmt), was
        if self.name == "distinct":
            was = parser.cached_parse(prompt, self.widest(), fmt=fmt) is not None
            found = distinct_topk(parser, prompt, k=search.beams, width=self.width, mode=self.mode, fmt=fmt,
                                  alpha=search.alpha, max_new_tokens=search.max_new_tokens)
            return _interpretations_result(found.interpretations, fmt), was
        was = samples_cached(parser, prompt, self.n_samples, self.temperature, self.seed, fmt, search.max_new_tokens)
        sampled = sample_interpretations(parser, prompt, n=self.n_samples, temperature=self.temperature,
                                         seed=self.seed, fmt=fmt, lf0=item.lf0, lf1=item.lf1, mode=self.mode,
                                         max_new_tokens=search.max_new_tokens)
        return _interpretations_result(sampled.interpretations[: search.beams], fmt), was


def run_method(
    parser: Parser,
    items: Iterable[SweepItem],
    search: SearchSettings | None = None,
    *,
    method: str = "beam",
    mode: str = DEFAULT_MODE,
    width: int = 20,
    n_samples: int = 20,
    temperature: float = 1.0,
    seed: int = 0,
    on_progress: Callable[[int, int, SweepRecord], None] | None = None,
    batch_size: int | None = None,
    **settings: Unpack[SearchKeywords],
) -> Iterator[SweepRecord]:
    """Records for ``items`` with ``method`` (see the module docstring); P(LF0) by forced decoding.

    ``search``: the search settings record (a sweep's ``config.search``; the defaults when None,
    keywords override its fields).  Its ``max_new_tokens`` bounds generation (None: from the
    prompt, as in the paper; ``beam`` then runs batched through
    :func:`amp.evaluation.sweep_run.run_items`, ``batch_size`` items per model call).  Its
    ``beams`` is the beam size (``beam``) or the number of distinct interpretations kept
    (``distinct``, from a beam of ``width``; ``sampling``, from ``n_samples`` samples).
    """
    search = SearchSettings.of(search, **settings)
    chosen = _Method(method, search, mode, width, n_samples, temperature, seed)  # checked now
    planned = list(items)
    if method == "beam" and search.max_new_tokens is None:  # the paper's path: batched, cached run_items
        yield from run_items(parser, planned, search, mode=mode, on_progress=on_progress, batch_size=batch_size)
        return
    total = len(planned)
    for done, item in enumerate(planned, 1):
        try:
            parse, was = chosen.ranked(parser, item)
            scores = parser.scores  # a model behind an API without log-probs has no P(LF0)
            pair_cached = not scores or parser.cached_pair(item.prompt_text, item.lf0, item.lf1,
                                                           fmt=item.fmt) is not None
            pair = parser.score_pair(item.prompt_text, item.lf0, item.lf1, fmt=item.fmt) if scores else None
            result = BatchItemResult(item.id, parse, pair, cached=bool(was and pair_cached))
        except EndpointUnreachable:
            raise  # the endpoint is gone: one error for the run (what finished is cached)
        except Exception as exc:  # noqa: BLE001 — one bad item must not end a long run
            result = BatchItemResult(item.id, None, None, cached=False, error=f"{type(exc).__name__}: {exc}")
        record = record_from_result(item, result, mode=mode)
        if on_progress is not None:
            on_progress(done, total, record)
        yield record


def _interpretations_result(interpretations: Sequence[Interpretation], fmt: str) -> ParseResult:
    """Interpretations (best first) as the ranked beams of a parse, for :func:`record_from_result`:
    each beam's text is the representative LF and its score the interpretation's weight (no tokens)."""
    beams = tuple(Beam(rank=i, text=it.text, raw_text=f" {it.text}\n", token_ids=(), tokens=(), logprob=math.nan,
                       score=it.score, finished=True, parses=True) for i, it in enumerate(interpretations))
    return ParseResult(beams=beams, constrained=True, fmt=fmt)


# --------------------------------------------------------------------------- records <-> JSON


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple):
        return list(value)
    return value


def record_to_dict(record: SweepRecord) -> dict[str, Any]:
    """A record as strict JSON data."""
    return {k: _clean(v) for k, v in asdict(record).items()}


_RECORD_FIELDS = {f.name for f in fields(SweepRecord)}


def record_from_dict(d: dict[str, Any]) -> SweepRecord:
    """Inverse of :func:`record_to_dict` (unknown keys are ignored)."""
    data = {k: v for k, v in d.items() if k in _RECORD_FIELDS}
    data["beams"] = tuple(data.get("beams") or ())
    data["beam_shares"] = tuple(float(v) for v in data.get("beam_shares") or ())
    return SweepRecord(**data)


def runs_dir() -> Path:
    """``<cache root>/runs`` (``$AMP_CACHE_DIR/runs`` when set); not created here."""

    return cache_root() / "runs"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "run"


def seed_run_name(name: str, seed: int) -> str:
    """The saved run of ``name`` under split seed ``seed``: ``name`` itself for seed 0, else
    ``<name>-seed<seed>`` — so a run under another seed never overwrites the seed-0 run."""
    return name if seed == 0 else f"{name}-seed{seed}"


def save_manifest(name: str, settings: dict[str, Any], records_zero: Sequence[SweepRecord],
                  records_few: Sequence[SweepRecord], directory: Path | None = None, *,
                  wall_time_s: float | None = None) -> Path:
    """Write ``<directory or runs_dir()>/<name>.json`` with the settings and all records; the settings
    get the date, ``wall_time_s`` and the versions of this process where they do not say them
    (:func:`amp.evaluation.provenance.stamped`)."""
    folder = Path(directory) if directory is not None else runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_slug(name)}.json"
    payload = {"name": name, "settings": stamped(settings, wall_time_s),
               "zero_shot": [record_to_dict(r) for r in records_zero],
               "few_shot": [record_to_dict(r) for r in records_few]}
    # atomic (a temporary file, then a rename): a page listing runs never reads half of one
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    partial.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(partial, path)
    return path


def load_manifest(path: str | Path) -> dict[str, Any]:
    """A manifest as ``{"name", "settings", "zero_shot": [SweepRecord…], "few_shot": […]}``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return {"name": str(data.get("name") or Path(path).stem), "settings": dict(data.get("settings") or {}),
                "zero_shot": [record_from_dict(d) for d in data.get("zero_shot") or []],
                "few_shot": [record_from_dict(d) for d in data.get("few_shot") or []]}
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise ReportError(f"cannot read the run manifest {path}: {exc}") from exc


def list_runs(directory: Path | None = None) -> list[Path]:
    """Saved run manifests, newest first."""
    folder = Path(directory) if directory is not None else runs_dir()
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.json"), key=lambda p: (-p.stat().st_mtime, p.name))


# --------------------------------------------------------------------------- sweeps of the app


def _model_short(model: str) -> str:
    """The last part of a model spec (``org/name`` → ``name``, a folder → its name)."""
    parts = [p for p in re.split(r"[\\/]", str(model)) if p]
    return parts[-1] if parts else "model"


def precision_suffix(dtype: str | None) -> str:
    """``-int8``/``-bfloat16`` for a run computed in a dtype other than float32 (exact), else ``""``:
    the tail of run names, so an approximate run never replaces the exact one."""
    return f"-{dtype}" if dtype and dtype != EXACT_DTYPE else ""


def _named_config(config: ZeroShotConfig | FewShotConfig) -> dict[str, Any]:
    """:func:`config_to_dict` as older code wrote it where that says it all: a flat ``beams`` for a
    search that differs from the default in its beams alone (every search a sweep page builds), so
    a sweep saved before the config held its search record keeps its run name."""
    data = config_to_dict(config)
    if SearchSettings.of(config.search, beams=DEFAULT_SEARCH.beams) == DEFAULT_SEARCH:
        del data["search"]
        data["beams"] = config.search.beams
    return data


def sweep_run_name(config: ZeroShotConfig | FewShotConfig, *, model: str, identity: str, dtype: str = "") -> str:
    """``app-zero-shot-pp-<model>-<digest>``: one name per model identity, sweep configuration and
    precision other than float32 (``-int8``, ``-bfloat16``), so a rerun of the same sweep replaces
    its run instead of adding a copy, and an approximate sweep never replaces the exact one."""
    kind = "few-shot" if isinstance(config, FewShotConfig) else "zero-shot"
    parts: dict[str, Any] = {"config": _named_config(config), "identity": identity}
    tail = precision_suffix(dtype)
    if tail:
        parts["dtype"] = dtype
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:10]
    return _slug(f"app-{kind}-{'+'.join(config.types)}-{_model_short(model)[:40]}{tail}-{digest}")


def sweep_settings(config: ZeroShotConfig | FewShotConfig, records: Sequence[SweepRecord], *, model: str,
                   identity: str, page: str = "", dtype: str = "",
                   context: RunContext | None = None) -> dict[str, Any]:
    """A run manifest's settings for a sweep of the app, with the keys ``reproduce`` writes
    (``context``: where it ran, :mod:`amp.evaluation.run_context`)."""
    settings: dict[str, Any] = {"model": model, "identity": identity, "method": "beam", "mode": config.mode,
                                "types": ",".join(config.types)}
    if isinstance(config, FewShotConfig):
        settings.update(n_zero=0, n_few=config.n_per_ratio, examples_per_prompt=config.k,
                        ratios=len(config.ratios), fmt=config.fmt)
    else:
        settings.update(n_zero=config.n, n_few=0)
    settings.update(beams=config.search.beams, seed=config.seed,
                    cached=f"{sum(r.cached for r in records)}/{len(records)}",
                    source=f"app ({page})" if page else "app")
    if context is not None:
        settings.update(context.as_settings())
    if dtype:
        settings["dtype"] = dtype
    return settings


def save_sweep(config: ZeroShotConfig | FewShotConfig, records: Sequence[SweepRecord], *, model: str,
               identity: str, page: str = "", dtype: str = "", directory: Path | None = None,
               context: RunContext | None = None, wall_time_s: float | None = None) -> Path:
    """Save a finished sweep of the app as a run manifest (:func:`save_manifest`, named by
    :func:`sweep_run_name`), so the Research and Compare pages list it like a ``reproduce`` run;
    ``wall_time_s``: how long the sweep took (a job's: by the service's clock)."""
    if not isinstance(config, ZeroShotConfig | FewShotConfig):
        raise ReportError(f"expected a sweep configuration, not {type(config).__name__}")
    name = sweep_run_name(config, model=model, identity=identity, dtype=dtype)
    settings = sweep_settings(config, records, model=model, identity=identity, page=page, dtype=dtype,
                              context=context)
    few = isinstance(config, FewShotConfig)
    return save_manifest(name, settings, [] if few else records, records if few else [], directory,
                         wall_time_s=wall_time_s)
