"""AppTest fixtures: the app on a tiny local model, an isolated result cache, fresh st caches.

**The model hook.**  The sidebar's initial model is ``$AMP_MODEL`` (see :mod:`ui.model`), so
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

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # AppTest adds the script's folder itself; the tests import ui/amp
    sys.path.insert(0, str(REPO))

from app_helpers import APP, TIMEOUT, clear_streamlit_caches


def build_long_context_tiny_model(folder: Path, *, seed: int = 0) -> Path:
    """A tiny random byte-level-BPE GPT-2 with 4096 positions, trained offline in about a second."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from amp import lexicon

    corpus = [
        f"Human: the {p} saw a girl\nComputer: exists x . {p}(x) AND saw(a) AND agent(a, x)\n"
        for p in lexicon.predicates()
    ] + [" ( exists x ( AND ( man x ) ) )\n", " forall y . exists z . OR ( )\n"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=fast.vocab_size, n_positions=4096, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id)
    model = GPT2LMHeadModel(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    fast.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="session")
def app_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_long_context_tiny_model(tmp_path_factory.mktemp("app-model") / "tiny-gpt2-4k")


@pytest.fixture(scope="session")
def app_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One result cache for the session (tests that need an empty one clear it)."""
    return tmp_path_factory.mktemp("app-cache")


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
