"""A tiny random byte-level BPE GPT-2 the tests build themselves (no hub, about a second)."""

from __future__ import annotations

from pathlib import Path


def build_tiny_model(folder: Path, *, seed: int = 0, n_positions: int = 1024) -> Path:
    """Save a tiny random byte-level BPE GPT-2 (model + tokenizer) into ``folder``.

    Trained offline on a few FOL strings in a second; good enough to exercise loading,
    caching and batching code paths (its outputs are noise, but deterministic).  ``n_positions``
    is its context length (the app tests need 4096 for 10-example mixed prompts).
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from amp.logic import lexicon

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
        vocab_size=fast.vocab_size, n_positions=n_positions, n_embd=32, n_layer=2, n_head=2,
        bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id,
    )
    model = GPT2LMHeadModel(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    fast.save_pretrained(str(folder))
    return folder
