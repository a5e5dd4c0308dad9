"""Root fixtures: an isolated cache for every test, the real default model, a tiny saved model.

**No test reads or writes the repository's ``cache/``.**  A warm ``cache/`` (cached parses,
polls) would let a test pass without decoding anything, and a test run would leave results
behind in it.  So:

* at start-up (:func:`pytest_configure`) ``AMP_CACHE_DIR`` points at a temporary folder for
  the whole run (session fixtures, Streamlit servers and collection see it), and
  ``AMP_MODELS_DIR`` at the shared models folder (below); ``AMP_ENGINE`` is ``transformers``
  unless the run sets it (the default model's expectations in the suite were derived on the
  exact float32 path; the default rule that gives a GGUF on the CPU to llama.cpp has its own
  tests, which unset it: ``tests/parser/test_llama_engine.py``);
* the autouse :func:`isolated_cache` gives **every test** a fresh, empty cache root of its own
  (result cache, polls, run manifests): ``$AMP_CACHE_DIR = <tmp_path>/amp-cache``;
* the converted default model is the only thing shared, read-only in practice: it lives in
  ``$AMP_MODELS_DIR`` if that was set before the run (a folder holding converted weights only,
  e.g. ``AMP_MODELS_DIR=~/amp-models`` to convert once for many runs), else in a temporary
  folder where it is converted once per run, the first time a ``slow`` test needs it (about
  100 s), and deleted at the end;
* :func:`repo_cache_untouched` fails the run (under CI; warns locally, where the app may be
  running) if anything under the repository's ``cache/`` changed during it.

**Hypothesis profiles.**  ``ci`` (selected when ``CI=true``): derandomised, at most
``suite_settings.CI_MAX_EXAMPLES`` examples, no example database; ``dev`` (otherwise): random, more
examples, database in the system temp folder (never in the repository).  Both print the
``@reproduce_failure`` blob of a failure.  ``HYPOTHESIS_PROFILE=ci|dev`` picks one explicitly.
Tests with their own ``@settings(max_examples=...)`` keep their count under both profiles.

**The grammar oracle.**  :func:`grammar_oracle_installed` checks every beam that constrained
decoding produces in a test or its fixtures, token by token, with lark
(``tests/grammar_oracle.py``), independently of the decoder's automaton; a leaking mask fails
the test even where the test itself only looks at the top beam.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import settings
from suite_settings import hypothesis_profile
from tiny_models import build_tiny_model

REPO = Path(__file__).resolve().parents[1]
REPO_CACHE = REPO / "cache"

settings.load_profile(hypothesis_profile())

_RUN: dict[str, Path] = {}
_SAVED_ENV: dict[str, str | None] = {}


def _snapshot(folder: Path, skip: Path | None) -> dict[str, tuple[int, int]]:
    """``{relative path: (size, mtime_ns)}`` of everything under ``folder`` (except ``skip``)."""
    out: dict[str, tuple[int, int]] = {}
    if not folder.exists():
        return out
    for path in folder.rglob("*"):
        if skip is not None and path.resolve().is_relative_to(skip):
            continue
        try:
            st = path.stat()
        except OSError:
            continue
        out[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns) if path.is_file() else (0, 0)
    return out


def pytest_configure(config: pytest.Config) -> None:
    """Point the whole run at a temporary cache root and the shared models folder."""
    if _RUN:  # pytester runs nested sessions in this process
        return
    base = Path(tempfile.mkdtemp(prefix="amp-tests-"))
    _RUN["base"] = base
    preset = os.environ.get("AMP_MODELS_DIR", "").strip()
    if preset:
        models = Path(preset).expanduser().resolve()
        for cache_file in ("results", "polls.sqlite", "runs"):
            if (models / cache_file).exists():
                raise pytest.UsageError(
                    f"AMP_MODELS_DIR={models} holds {cache_file!r}: it is a cache root, not a models folder. "
                    f"Point it at a folder of converted weights only (e.g. {models / 'models'})."
                )
    else:
        models = base / "models"
    _RUN["models"] = models
    pinned = [("AMP_CACHE_DIR", base / "cache"), ("AMP_MODELS_DIR", models)]
    if not os.environ.get("AMP_ENGINE", "").strip():
        pinned.append(("AMP_ENGINE", "transformers"))
    for name, value in pinned:
        _SAVED_ENV[name] = os.environ.get(name)
        os.environ[name] = str(value)


def pytest_unconfigure(config: pytest.Config) -> None:
    base = _RUN.pop("base", None)
    _RUN.pop("models", None)
    for name, value in _SAVED_ENV.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _SAVED_ENV.clear()
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)


def shared_models_dir() -> Path:
    """The run's models folder (``$AMP_MODELS_DIR``): converted weights only, shared by all tests."""
    return _RUN["models"]


@pytest.fixture(scope="session", autouse=True)
def repo_cache_untouched() -> Iterator[None]:
    """Fail the run (under CI) if anything under the repository's ``cache/`` changed during it.

    Locally it warns instead: the app or the CLI may legitimately write there while the tests
    run.  The models folder is not watched when ``AMP_MODELS_DIR`` points inside ``cache/``.
    """
    models = _RUN.get("models")
    skip = models if models is not None and models.is_relative_to(REPO_CACHE) else None
    before = _snapshot(REPO_CACHE, skip)
    yield
    after = _snapshot(REPO_CACHE, skip)
    changed = sorted(set(before) ^ set(after) | {p for p in before if p in after and before[p] != after[p]})
    if not changed:
        return
    message = f"the repository's cache/ ({REPO_CACHE}) changed during the tests: {changed[:20]}"
    if hypothesis_profile() == "ci":  # CI: nothing else runs in this checkout, so a test did it
        pytest.fail(message, pytrace=False)
    # locally the app or the CLI may be writing there at the same time: say so, do not fail
    warnings.warn(message + " (a test, or the app/CLI running alongside)", UserWarning, stacklevel=1)


@pytest.fixture(autouse=True)
def isolated_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every test gets a fresh, empty cache root (results, polls, runs); models stay shared."""
    root = tmp_path_factory.mktemp("amp-cache")
    monkeypatch.setenv("AMP_CACHE_DIR", str(root))
    monkeypatch.setenv("AMP_MODELS_DIR", str(shared_models_dir()))
    return root


@dataclass
class OracleLog:
    """What :func:`grammar_oracle` saw in one test: checked results and the violations found."""

    checked: int = 0
    problems: list[str] = field(default_factory=list)


#: The log of the running test on top; the bottom one collects what session/module fixtures decode.
_ORACLE_LOGS: list[OracleLog] = [OracleLog()]


_DECODE = "amp.parser.search.decode"


def _checked(original):  # type: ignore[no-untyped-def]
    """``original`` (``parse_and_score_batch``) with every constrained beam checked by lark."""
    from grammar_oracle import check_parse_result

    def checked(model, tokenizer, items, *args, **kwargs):  # type: ignore[no-untyped-def]
        results = original(model, tokenizer, items, *args, **kwargs)
        words = kwargs.get("words") or None  # a teacher's own words extend the grammar the beams follow
        found = [p for parse, _pair in results for p in check_parse_result(parse, tokenizer, words)]
        log = _ORACLE_LOGS[-1]
        log.checked += len(results)
        if found:
            log.problems.extend(found)
            raise AssertionError("constrained decoding left the grammar:\n" + "\n".join(found))
        return results

    checked.grammar_oracle = True  # type: ignore[attr-defined]
    checked.__wrapped__ = original  # type: ignore[attr-defined]
    return checked


def _wrap(module) -> None:  # type: ignore[no-untyped-def]
    if not getattr(module.parse_and_score_batch, "grammar_oracle", False):
        module.parse_and_score_batch = _checked(module.parse_and_score_batch)


class _WrapDecodeOnImport(importlib.abc.MetaPathFinder):
    """Wraps ``amp.parser.search.decode`` the moment it is first imported (by a test body, the app…)."""

    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name != _DECODE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_wrap(module):  # type: ignore[no-untyped-def]
            exec_module(module)
            _wrap(module)

        spec.loader.exec_module = exec_and_wrap  # type: ignore[method-assign]
        return spec


@pytest.fixture(scope="session", autouse=True)
def grammar_oracle_installed() -> Iterator[None]:
    """Wrap :func:`amp.parser.search.decode.parse_and_score_batch` with the lark grammar oracle.

    Every beam search goes through that function (``beam_search``, ``beam_search_batch``, the
    ``Parser`` facade, batches, the app), including those that module- and session-scoped
    fixtures run.  The module is wrapped now if it is imported, else when it first is (no
    torch import just for this).  A violation raises ``AssertionError`` at once and is also
    logged, so the test (or the session) fails even if the code under test swallowed it.
    """
    finder = _WrapDecodeOnImport()
    if _DECODE in sys.modules:
        _wrap(sys.modules[_DECODE])
    else:
        sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        module = sys.modules.get(_DECODE)
        if module is not None and getattr(module.parse_and_score_batch, "grammar_oracle", False):
            module.parse_and_score_batch = module.parse_and_score_batch.__wrapped__
    outside = _ORACLE_LOGS[0].problems
    assert not outside, "constrained decoding in a fixture left the grammar:\n" + "\n".join(outside)


@pytest.fixture(autouse=True)
def grammar_oracle(grammar_oracle_installed: None) -> Iterator[OracleLog]:
    """This test's :class:`OracleLog`; the test fails if any beam it produced left the grammar.

    A test that must really decode asks for this fixture and checks ``checked``.
    """
    log = OracleLog()
    _ORACLE_LOGS.append(log)
    try:
        yield log
    finally:
        _ORACLE_LOGS.remove(log)
    assert not log.problems, "constrained decoding left the grammar (see above):\n" + "\n".join(log.problems)


@pytest.fixture(scope="session")
def default_lm():
    """The embedded Gemma 3 270M on CPU float32, loaded once per test session.

    Loaded from the run's shared models folder (``$AMP_MODELS_DIR``, see the module
    docstring): converted there once per run (about 100 s) unless that folder already holds the
    converted weights.  Results and polls are never shared (:func:`isolated_cache`).  Tests
    using this fixture must be marked ``@pytest.mark.slow``.
    """
    from amp.parser.models.registry import load_model

    return load_model("default", device="cpu", dtype="float32")


@pytest.fixture(scope="session")
def default_model_converted() -> Path:
    """The embedded model converted for the transformers engine in the run's shared models folder
    (once per run, about 100 s unless that folder already holds it), without loading it: for tests
    whose own timed steps (an AppTest run) would otherwise pay the conversion."""
    from amp.parser.models.embedded import ensure_default_model

    return ensure_default_model()


@pytest.fixture(scope="session")
def saved_tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a tiny GPT-2 saved with ``save_pretrained`` (built once per session)."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model") / "tiny-gpt2")
