"""Root fixtures: the real default model (one per session, ``slow``) and a tiny saved model.

Kept minimal on purpose; package-specific fixtures live next to their tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def default_lm():
    """The embedded Gemma 3 270M on CPU float32, loaded once per test session.

    Uses the real cache root (``cache/`` or ``$AMP_CACHE_DIR``), so the one-time GGUF →
    safetensors conversion (about a minute) is shared with the app and later runs.  Tests using
    this fixture must be marked ``@pytest.mark.slow``.
    """
    from amp.parser.models import load_model

    return load_model("default", device="cpu", dtype="float32")


def build_tiny_model(folder: Path, *, seed: int = 0) -> Path:
    """Save a tiny random byte-level BPE GPT-2 (model + tokenizer) into ``folder``.

    Trained offline on a few FOL strings in a second; good enough to exercise loading,
    caching and batching code paths (its outputs are noise, but deterministic).
    """
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
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=fast.vocab_size, n_positions=1024, n_embd=32, n_layer=2, n_head=2,
        bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id,
    )
    model = GPT2LMHeadModel(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    fast.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="session")
def saved_tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a tiny GPT-2 saved with ``save_pretrained`` (built once per session)."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model") / "tiny-gpt2")
