"""AppTest fixtures: the app on a tiny local model, an isolated result cache, fresh st caches.

**The model hook.**  The sidebar's initial model is ``$AMP_MODEL`` (see :mod:`ui.model.choice`), so
these tests point ``AMP_MODEL`` at a tiny random GPT-2 saved in a temporary folder and
``AMP_CACHE_DIR`` at a temporary cache: every page runs the real library code path
(:class:`amp.parser.Parser`, constrained beam search, forced scoring, the result cache) in a
fraction of a second per call, without the 270M model.  Its outputs are noise, so tests check
plumbing and data flow (labels, shapes, chart data), not linguistic quality.  One test in
``test_app_slow.py`` runs the real default model (``@pytest.mark.slow``).

The tiny model needs a context longer than the root fixture's (1024 positions): a 10-example
mixed prompt is about 1,000 tokens with its 400-token BPE.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # AppTest adds the script's folder itself; the tests import ui/amp
    sys.path.insert(0, str(REPO))

from app_helpers import APP, TIMEOUT, clear_streamlit_caches  # noqa: E402
from tiny_models import build_tiny_model  # noqa: E402


def build_long_context_tiny_model(folder: Path, *, seed: int = 0) -> Path:
    """The shared tiny GPT-2 (``tests/tiny_models.py``) with 4096 positions."""
    return build_tiny_model(folder, seed=seed, n_positions=4096)


@pytest.fixture(scope="session")
def app_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_long_context_tiny_model(tmp_path_factory.mktemp("app-model") / "tiny-gpt2-4k")


@pytest.fixture(scope="session")
def app_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One result cache for the session (tests that need an empty one clear it)."""
    return tmp_path_factory.mktemp("app-cache")


@pytest.fixture(autouse=True)
def _no_saved_detection(app_cache_dir: Path) -> None:
    """Each test starts without a kept detection measurement (it would add the lesson's last slide)."""
    shutil.rmtree(app_cache_dir / "detection", ignore_errors=True)


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, app_model_dir: Path, app_cache_dir: Path) -> Path:
    """``AMP_MODEL`` = the tiny model, ``AMP_CACHE_DIR`` = the session's temporary cache."""
    monkeypatch.setenv("AMP_MODEL", str(app_model_dir))
    monkeypatch.setenv("AMP_CACHE_DIR", str(app_cache_dir))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    clear_streamlit_caches()
    yield app_model_dir
    clear_streamlit_caches()


@pytest.fixture
def at(app_env: Path):
    """The app, started from its entrypoint and run once (lands on the Templates page)."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


@pytest.fixture
def parsed(at):
    """Parse & inspect after one **Parse** of its default prompt, with no error box."""
    from app_helpers import assert_ok, goto, texts

    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert not texts(at, "error")
    return at

