"""Result-cache keys follow the code: an edit to a module that computes results changes every key.

:data:`amp.code_digest.CODE_MODULES` declares those modules once; :func:`amp.code_digest.code_digest`
hashes their source into :meth:`amp.cache.ResultCache.key`, so a change to decoding or scoring
can never be answered by results the old code stored.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import amp.code_digest as digest_mod
from amp.cache import ResultCache
from amp.code_digest import CODE_MODULES, PACKAGE_DIR, code_digest, source_digest

#: amp/parser modules that do not decide what a cached result holds (see CODE_MODULES' comment):
#: the package, model loading (identified by weight hashes), the backend interface and its
#: capabilities record, the engine registry (which backend runs; the backend's runtime is in every
#: key), the remote client, its job protocol and request bounds, the API backend's HTTP transport
#: (it bounds how long and how much an endpoint may send; it decides nothing a result holds) and
#: its pace and progress (how many requests are in flight, their timeout, what a listener hears), the
#: JSON depth bound of a request, and the fair-share gate that orders requests' search steps on a
#: replica (when a step runs, never what it computes).
NOT_RESULT_CODE = {"parser/__init__.py", "parser/backend.py", "parser/jobs.py", "parser/engines.py",
                   "parser/core/__init__.py", "parser/core/errors.py", "parser/core/limits.py",
                   "parser/core/capabilities.py", "parser/core/json_bounds.py",
                   "parser/search/__init__.py", "parser/search/settings.py", "parser/search/fair_share.py",
                   "parser/models/__init__.py", "parser/models/spec.py", "parser/models/embedded.py",
                   "parser/models/loading.py", "parser/models/registry.py", "parser/models/names.py",
                   "parser/backends/__init__.py", "parser/backends/remote.py", "parser/backends/api_transport.py",
                   "parser/backends/api_pace.py", "parser/backends/api_progress.py",
                   "parser/backends/llama_threads.py"}  # how many threads: the same results to the bit


def _copy_package(dest: Path) -> Path:
    for rel in CODE_MODULES:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PACKAGE_DIR / rel, target)
    return dest


def test_every_declared_module_exists() -> None:
    missing = [rel for rel in CODE_MODULES if not (PACKAGE_DIR / rel).is_file()]
    assert not missing
    assert len(set(CODE_MODULES)) == len(CODE_MODULES)


def test_every_parser_module_is_classified() -> None:
    """A new module in amp/parser/ must be added to CODE_MODULES or, on purpose, to the exceptions."""
    found = {p.relative_to(PACKAGE_DIR).as_posix() for p in (PACKAGE_DIR / "parser").rglob("*.py")}
    assert found - set(CODE_MODULES) - NOT_RESULT_CODE == set()
    for rel in ("parser/search/decode.py", "parser/search/scoring.py", "parser/search/automaton.py",
                "parser/search/vocab.py", "parser/search/processors.py", "logic/grammar.py", "prompts.py"):
        assert rel in CODE_MODULES


def test_the_key_contains_the_digest_of_the_running_code() -> None:
    assert code_digest() == source_digest(PACKAGE_DIR)
    key = ResultCache.key("parse", prompt="p")
    assert key == ResultCache.key("parse", prompt="p") and key.startswith("parse:")


@pytest.mark.parametrize("module", CODE_MODULES)
def test_changing_a_module_changes_every_key(module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = _copy_package(tmp_path / "amp")
    monkeypatch.setattr(digest_mod, "PACKAGE_DIR", package)
    digest_mod._cached_digest.cache_clear()
    try:
        before = ResultCache.key("parse", model="m", prompt="p")
        assert before == ResultCache.key("parse", model="m", prompt="p")  # the copy hashes like the original
        source = package / module
        source.write_text(source.read_text(encoding="utf-8") + "\n# a one-line change\n", encoding="utf-8")
        digest_mod._cached_digest.cache_clear()  # a new process on the new code
        after = ResultCache.key("parse", model="m", prompt="p")
        assert after != before
        assert ResultCache.key("score", model="m", prompt="p") != before
    finally:
        digest_mod._cached_digest.cache_clear()


def test_a_missing_module_is_an_error_not_a_smaller_key(tmp_path: Path) -> None:
    package = _copy_package(tmp_path / "amp")
    (package / CODE_MODULES[0]).unlink()
    with pytest.raises(FileNotFoundError):
        source_digest(package)


def test_a_stale_entry_from_older_code_is_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry stored by other code (here: one byte different in decode.py) is a miss for this code."""
    store = ResultCache(tmp_path / "results")
    package = _copy_package(tmp_path / "amp")
    decode = package / "parser" / "search" / "decode.py"
    text = decode.read_text(encoding="utf-8")
    changed = text.replace("MIN_NEW_TOKENS = 64", "MIN_NEW_TOKENS = 65", 1)
    assert changed != text  # the edit took place
    decode.write_text(changed, encoding="utf-8")
    monkeypatch.setattr(digest_mod, "PACKAGE_DIR", package)
    digest_mod._cached_digest.cache_clear()
    try:
        old_key = ResultCache.key("parse", model="m", prompt="p")
        store.set(old_key, {"beams": "stale"}, model="m")
    finally:
        monkeypatch.undo()
        digest_mod._cached_digest.cache_clear()
    assert ResultCache.key("parse", model="m", prompt="p") != old_key
    assert store.get(ResultCache.key("parse", model="m", prompt="p")) is None
