"""Linear probes for ambiguity on the model's hidden states, per layer, with two controls
(issue #43; docs/paper-notes.md §22).

For every layer ``ℓ = 0 … L`` (0 the embeddings) and pooling (:class:`~amp.detection.hidden_states.Pooling`)
the sentence's pooled state (:mod:`amp.detection.hidden_states`) is the feature vector; a logistic
regression (scikit-learn ``LogisticRegressionCV``, L2, on standardised features) learns
"ambiguous" from the **TRAIN** part of the detection set only — its C chosen from
:data:`CS` by :data:`CV_FOLDS`-fold stratified cross-validation (ROC AUC, folds shuffled by the
seed) inside TRAIN — and is scored on the **TEST** part, whose content words it never saw
(:mod:`amp.detection.dataset`).  A layer's figure is the AUROC of the probe's decision values on
TEST with its stratified percentile-bootstrap interval (:func:`amp.detection.auroc.auroc_interval`,
docs/paper-notes.md §21).

Two controls say what a figure is worth:

* **labels shuffled** — per layer, :data:`SHUFFLES` probes with the layer's chosen C, each
  trained on the TRAIN labels permuted by ``numpy.random.default_rng(seed)`` and scored against the
  true TEST labels: they can only learn noise, so they sit near 0.5.  Its figure is the mean of the
  :data:`SHUFFLES` AUROCs, its band their 2.5 and 97.5 percentiles (where chance lands on these
  sentences).  One permutation alone is not enough: its AUROC depends on how a random direction
  happens to line up with the states' structure, and swings far from 0.5 when that is strong;
* **bag of words** — the same logistic regression on the sentence's word counts alone
  (scikit-learn ``CountVectorizer``, no model): a probe that does no better has learned words
  (with held-out content words, what is left to learn from are the function words: *and*, *or*,
  *with*, *every*, …).

Only numbers are kept (AUROCs, intervals, the chosen C): no fitted model is stored or pickled.
The report is cached under the parser's keys (model, tokenizer, runtime, code digest) with the
detection set, layers, poolings, seed, resamples and scikit-learn's version.
"""

from __future__ import annotations

import contextlib
import hashlib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

import numpy as np

from amp.detection.auroc import auroc, auroc_interval
from amp.detection.dataset import DetectionPart, DetectionSet
from amp.detection.errors import ProbeError
from amp.detection.hidden_states import Pooling, hidden_states, state_count
from amp.errors import CacheError
from amp.evaluation.bootstrap import DEFAULT_RESAMPLES, Interval
from amp.parser.core.errors import SearchCancelled
from amp.records import JsonFloat, JsonRecord

if TYPE_CHECKING:
    from amp.parser.parser import Parser

__all__ = ["CS", "CV_FOLDS", "POOLINGS", "SHUFFLES", "ProbeReport", "ProbeResult", "fit_and_score", "probe_layers",
           "run_probes", "shuffled_control", "word_baseline"]

#: Folds of the cross-validation that chooses C (inside TRAIN; fewer when a class has fewer items).
CV_FOLDS = 5
#: The C grid: ``numpy.logspace(-4, 4, CS)`` (scikit-learn's own for an integer ``Cs``).
CS = 10
#: Iterations of the lbfgs solver per fit, and its tolerance (a probe's ranking settles long before
#: its weights do; the default 1e-4 doubles the time of the cross-validation for no change of C).
MAX_ITER, TOL = 500, 1e-3
#: Label permutations of the shuffled-label control, per layer.
SHUFFLES = 10
#: Both poolings, the default of :func:`run_probes`.
POOLINGS: tuple[Pooling, ...] = tuple(Pooling)


@dataclass(frozen=True)
class ProbeResult(JsonRecord):
    """One layer and pooling: the probe's TEST AUROC with its bootstrap interval, the shuffled-label
    control (mean AUROC of :data:`SHUFFLES` permutations, ``low``/``high`` their 2.5/97.5 percentiles,
    ``resamples`` = the permutations), and the C that cross-validation chose on TRAIN."""

    layer: int
    pooling: Pooling
    auroc: Interval
    shuffled: Interval
    c: JsonFloat


@dataclass(frozen=True)
class ProbeReport(JsonRecord):
    """Every layer's probe (:class:`ProbeResult`, layer-major within each pooling) and the
    bag-of-words baseline, on ``n_train``/``n_test`` sentences of a detection set (its seed)."""

    model: str
    results: tuple[ProbeResult, ...]
    words: Interval
    words_c: JsonFloat
    n_train: int
    n_test: int
    seed: int
    resamples: int

    def of(self, pooling: Pooling) -> tuple[ProbeResult, ...]:
        """The results of one pooling, by layer."""
        return tuple(r for r in self.results if r.pooling == pooling)

    def best(self, pooling: Pooling | None = None) -> ProbeResult | None:
        """The result with the highest TEST AUROC (of ``pooling``, or of any); None when there is none."""
        pool = [r for r in self.results if pooling is None or r.pooling == pooling]
        return max(pool, key=lambda r: (r.auroc.estimate, -r.layer), default=None)


def _classifier(seed: int, folds: int, c: float | None = None) -> Any:
    """Standardised features → L2 logistic regression: C cross-validated (``c`` None) or given."""
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV  # late: start-up cost (scikit-learn)
    from sklearn.model_selection import StratifiedKFold  # late: start-up cost (scikit-learn)
    from sklearn.pipeline import make_pipeline  # late: start-up cost (scikit-learn)
    from sklearn.preprocessing import StandardScaler  # late: start-up cost (scikit-learn)

    if c is not None:
        return make_pipeline(StandardScaler(), LogisticRegression(C=c, solver="lbfgs", max_iter=MAX_ITER, tol=TOL))
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    return make_pipeline(StandardScaler(), LogisticRegressionCV(
        Cs=CS, l1_ratios=(0.0,), cv=cv, scoring="roc_auc", solver="lbfgs", max_iter=MAX_ITER, tol=TOL,
        use_legacy_attributes=False))


def fit_and_score(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, *,
                  seed: int = 0, c: float | None = None) -> tuple[np.ndarray, float]:
    """Fit the probe on ``train_x``/``train_y`` (C by cross-validation inside them, or ``c``) and
    return its decision values on ``test_x`` and its C.  :class:`ProbeError` when a class of the
    training labels has fewer than two items (no fold could hold both)."""
    y = np.asarray(train_y, dtype=int)
    smallest = min(int((y == 0).sum()), int((y == 1).sum()))
    if smallest < 2:
        raise ProbeError(f"a probe needs at least two training items of each class, got {smallest} of one")
    from sklearn.exceptions import ConvergenceWarning  # late: start-up cost (scikit-learn)

    model = _classifier(seed, min(CV_FOLDS, smallest), c)
    with warnings.catch_warnings():
        # lbfgs at the grid's largest C on separable folds stops at MAX_ITER; that C then loses the
        # cross-validation, so the warning says nothing about the chosen probe.
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(np.asarray(train_x, dtype=np.float64), y)
    scores = model.decision_function(np.asarray(test_x, dtype=np.float64))
    return np.asarray(scores, dtype=np.float64), float(model[-1].C if c is not None else model[-1].C_)


def shuffled_control(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray, *,
                     c: float, seed: int = 0, shuffles: int = SHUFFLES) -> Interval:
    """The shuffled-label control (module docstring): ``shuffles`` probes with C ``c`` on permuted
    TRAIN labels, scored on the true TEST labels; their mean AUROC and 2.5/97.5 percentiles."""
    rng = np.random.default_rng(seed)
    y = np.asarray(train_y, dtype=int)
    values = [auroc(fit_and_score(train_x, rng.permutation(y), test_x, seed=seed, c=c)[0], test_y)
              for _ in range(shuffles)]
    low, high = np.percentile(values, [2.5, 97.5])
    return Interval(estimate=float(np.mean(values)), low=float(low), high=float(high), n=len(test_y),
                    resamples=shuffles)


def _labels(y: Sequence[bool] | np.ndarray) -> np.ndarray:
    return np.asarray(y, dtype=int)


def probe_layers(
    features: np.ndarray, labels: Sequence[bool] | np.ndarray, train: Sequence[bool] | np.ndarray, *,
    pooling: Pooling, layers: Sequence[int], seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
    step: Callable[[], None] | None = None, cancelled: Callable[[], bool] | None = None,
) -> list[ProbeResult]:
    """The probe and its shuffled-label control at every layer of ``layers``.

    ``features`` is ``(n, L + 1, H)`` (one pooling's states), ``labels`` true for ambiguous,
    ``train`` true for the TRAIN items (the rest are scored).  ``step()`` after each layer;
    ``cancelled()`` before each (then :class:`~amp.parser.core.errors.SearchCancelled`)."""
    x = np.asarray(features)
    y = _labels(labels)
    is_train = np.asarray(train, dtype=bool)
    if x.ndim != 3 or len(x) != len(y) or len(y) != len(is_train):
        raise ProbeError(f"features {x.shape}, {len(y)} labels and {len(is_train)} part flags do not fit together")
    out = []
    for layer in layers:
        if cancelled is not None and cancelled():
            raise SearchCancelled("probes cancelled")
        train_x, test_x = x[is_train, layer], x[~is_train, layer]
        scores, c = fit_and_score(train_x, y[is_train], test_x, seed=seed)
        out.append(ProbeResult(
            layer=int(layer), pooling=pooling, c=c,
            auroc=auroc_interval(scores, y[~is_train], seed=seed, resamples=resamples),
            shuffled=shuffled_control(train_x, y[is_train], test_x, y[~is_train], c=c, seed=seed)))
        if step is not None:
            step()
    return out


def word_baseline(sentences: Sequence[str], labels: Sequence[bool] | np.ndarray, train: Sequence[bool] | np.ndarray,
                  *, seed: int = 0, resamples: int = DEFAULT_RESAMPLES) -> tuple[Interval, float]:
    """The bag-of-words control: word counts of the TRAIN sentences (vocabulary from TRAIN only),
    the same logistic regression, AUROC on TEST with its interval, and the chosen C."""
    from sklearn.feature_extraction.text import CountVectorizer  # late: start-up cost (scikit-learn)

    y = _labels(labels)
    is_train = np.asarray(train, dtype=bool)
    text = np.asarray(list(sentences), dtype=object)
    vectorizer = CountVectorizer(lowercase=True, token_pattern=r"(?u)\b\w+\b")
    train_x = vectorizer.fit_transform(text[is_train]).toarray()
    test_x = vectorizer.transform(text[~is_train]).toarray()
    scores, c = fit_and_score(train_x, y[is_train], test_x, seed=seed)
    return auroc_interval(scores, y[~is_train], seed=seed, resamples=resamples), c


def _check_poolings(pooling: Pooling | Sequence[Pooling]) -> tuple[Pooling, ...]:
    chosen = (pooling,) if isinstance(pooling, str) else tuple(pooling)
    try:
        out = tuple(dict.fromkeys(Pooling(p) for p in chosen))
    except ValueError:
        raise ProbeError(f"pooling must be among {', '.join(POOLINGS)}, not {pooling!r}") from None
    if not out:
        raise ProbeError("choose at least one pooling")
    return out


def _check_layers(layers: Sequence[int] | None) -> tuple[int, ...] | None:
    if layers is None:
        return None
    chosen = tuple(layers)
    bad = [v for v in chosen if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0]
    if bad or not chosen:
        raise ProbeError(f"layers must be non-negative whole numbers (0 = the embeddings), not {list(layers)!r}")
    return tuple(sorted({int(v) for v in chosen}))


def _check_depth(layers: Sequence[int], n_states: int) -> None:
    if max(layers) >= n_states:
        raise ProbeError(f"layer {max(layers)} is beyond this model's {n_states - 1} layers (0 = the embeddings)")


def _check_dataset(dataset: DetectionSet) -> tuple[list[bool], list[bool]]:
    if not isinstance(dataset, DetectionSet):
        raise ProbeError(f"expected an amp.detection.dataset.DetectionSet, got {type(dataset).__name__}")
    train = [item.part == DetectionPart.TRAIN for item in dataset.items]
    labels = [bool(item.ambiguous) for item in dataset.items]
    for part, flag in (("TRAIN", True), ("TEST", False)):
        got = {lab for lab, t in zip(labels, train, strict=True) if t == flag}
        if got != {True, False}:
            raise ProbeError(f"the detection set's {part} part needs ambiguous and unambiguous sentences")
    return labels, train


def _sklearn_version() -> str:
    try:
        return metadata.version("scikit-learn")
    except metadata.PackageNotFoundError:
        return "none"


def _cached(parser: Parser, key: str) -> ProbeReport | None:
    cache = parser.cache
    stored = cache.get(key) if cache is not None else None
    if cache is None or stored is None:
        return None
    try:
        return ProbeReport.from_dict(stored)
    except (TypeError, ValueError):
        cache.discard(key, "does not rebuild into a probe report")
        return None


def run_probes(
    parser: Parser, dataset: DetectionSet, *, layers: Sequence[int] | None = None,
    pooling: Pooling | Sequence[Pooling] = POOLINGS, seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
    progress: Callable[[int, int], None] | None = None, cancelled: Callable[[], bool] | None = None,
) -> ProbeReport:
    """Probe every layer of ``layers`` (default: all, 0 = the embeddings) in each ``pooling`` on
    ``dataset`` (module docstring).  ``progress(done, total)`` counts the sentences' forward passes,
    then the layers' fits; ``cancelled()`` is asked between them
    (:class:`~amp.parser.core.errors.SearchCancelled`).  :class:`ProbeError` for bad settings, an
    engine without per-layer states, or a layer the model does not have."""
    poolings = _check_poolings(pooling)
    chosen = _check_layers(layers)
    labels, train = _check_dataset(dataset)
    digest = hashlib.sha256(dataset.to_json()).hexdigest()
    key = parser.cache_key("probes", dataset=digest, layers=list(chosen) if chosen is not None else None,
                           poolings=[str(p) for p in poolings], seed=int(seed), resamples=int(resamples),
                           cv=CV_FOLDS, cs=CS, shuffles=SHUFFLES, sklearn=_sklearn_version())
    stored = _cached(parser, key)
    if stored is not None:
        return stored
    items = dataset.items
    n_layers = state_count(parser)
    if chosen is None and n_layers is not None:
        chosen = tuple(range(n_layers))
    if chosen is not None and n_layers is not None:
        _check_depth(chosen, n_layers)  # before the forward passes
    total = len(items) + len(poolings) * (len(chosen) if chosen is not None else 0)

    def states_progress(d: int, n: int) -> None:
        if progress is not None:
            progress(d, total)

    states = hidden_states(parser, [(it.sentence, it.type) for it in items], progress=states_progress,
                           cancelled=cancelled)
    if chosen is None:  # a config that does not say: the states do
        chosen = tuple(range(states[0].layers))
        total = len(items) + len(poolings) * len(chosen)
    _check_depth(chosen, states[0].layers)
    done = len(items)

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    results: list[ProbeResult] = []
    for p in poolings:
        features = np.stack([s.pooled[p] for s in states])
        results += probe_layers(features, labels, train, pooling=p, layers=chosen, seed=seed, resamples=resamples,
                                step=step, cancelled=cancelled)
    words, words_c = word_baseline([it.sentence for it in items], labels, train, seed=seed, resamples=resamples)
    report = ProbeReport(model=parser.identity, results=tuple(results), words=words, words_c=words_c,
                         n_train=sum(train), n_test=len(train) - sum(train), seed=int(seed), resamples=int(resamples))
    if parser.cache is not None:
        with contextlib.suppress(CacheError, TypeError, ValueError):  # an uncached result is still a result
            parser.cache.set(key, report.to_dict(), model=parser.identity)
    return report
