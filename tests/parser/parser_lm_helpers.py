"""Helpers of the decoding tests: AmP-style text, small tokenizers and a tiny trained GPT-2.

The tiny model is trained for a few hundred steps on ``Human: …\\nComputer: <LF>\\n`` lines made
from the templates of docs/paper-notes.md §4, so that its beams end at the newline the way a real model's
do (docs/decoding-notes.md §2).  Its pre-tokenizer keeps a punctuation run together with the newlines
after it, so the vocabulary has tokens such as ``')\\n'`` and ``')\\n\\n'`` that span grammar
terminals and end an LF.  Everything is seeded; the session fixture takes well under a minute
on two CPU cores.

The fixtures that use these live in ``tests/parser/conftest.py``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from amp.logic import lexicon

HEADER = "Let's translate what a human user says into what a computer might say."

# A punctuation run may absorb the newlines after it (")\n", ")\n\n"); otherwise GPT-2's split.
SPLIT_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+\n*|\s+(?!\S)|\s+"


def _names(rng: random.Random, k: int) -> list[str]:
    return rng.sample(list(lexicon.NAMES), k)


def amp_examples(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` (sentence, FOL LF) pairs from simplified §4 templates (PP, scope, bound, conj, simple)."""
    rng = random.Random(seed)
    hum = list(lexicon.INDEFINITE_HUMAN_NPS)
    vis = list(lexicon.VISUAL_VPS)
    inst = list(lexicon.VISUAL_INSTRUMENT_NPS)
    sent = list(lexicon.INDEFINITE_SENTIENT_NPS)
    ind = list(lexicon.INDEFINITE_NPS)
    intr = list(lexicon.INTRANSITIVE_VPS)
    bd = list(lexicon.INTRANSITIVE_VPS_FOR_BOUND)
    out: list[tuple[str, str]] = []
    while len(out) < n:
        kind = rng.randrange(7)
        if kind == 0:  # PP-d
            a, b = _names(rng, 2)
            v, z = rng.choice(vis), rng.choice(inst)
            s = f"{a} {v} {b} with the {z}"
            if rng.random() < 0.5:
                lf = (f"exists x . exists a . exists e . {z}(x) AND {v}(a) AND agent(a, {a}) AND "
                      f"patient(a, {b}) AND have(e) AND agent(e, {b}) AND patient(e, x)")
            else:
                lf = (f"exists x . exists a . {z}(x) AND {v}(a) AND agent(a, {a}) AND "
                      f"patient(a, {b}) AND instrument(a, x)")
        elif kind == 1:  # PP ingredients
            a, b = _names(rng, 2)
            v, z = rng.choice(vis), rng.choice(inst)
            s, lf = rng.choice([
                (f"{a} {v} {b}", f"exists a . {v}(a) AND agent(a, {a}) AND patient(a, {b})"),
                (f"{a} {v} with the {z}",
                 f"exists x . exists a . {z}(x) AND {v}(a) AND agent(a, {a}) AND instrument(a, x)"),
                (f"{b} with the {z}",
                 f"exists x . exists a . {z}(x) AND have(a) AND agent(a, {b}) AND patient(a, x)"),
            ])
        elif kind == 2:  # scope
            q = rng.choice(["every", "each"])
            n1, n2 = rng.sample(sent, 1)[0], rng.choice(ind)
            if n1 == n2:
                continue
            v = rng.choice(list(lexicon.TRANSITIVE_VPS))
            p = lexicon.denotation(v)
            s = f"{q} {n1} {v} a {n2}"
            if rng.random() < 0.5:
                lf = f"exists x . forall y . exists a . {n1}(y) AND {n2}(x) AND {p}(a) AND agent(a, y) AND patient(a, x)"
            else:
                lf = f"forall x . exists y . exists a . {n1}(x) AND {n2}(y) AND {p}(a) AND agent(a, x) AND patient(a, y)"
        elif kind == 3:  # bound B-a
            a, b = rng.sample(list(lexicon.FEMALE_NAMES), 2)
            v, w = rng.choice(vis), rng.choice(bd)
            s = f"{a} {v} {b} and she {w}"
            who = a if rng.random() < 0.5 else b
            lf = f"exists a . exists e . {v}(a) AND agent(a, {a}) AND patient(a, {b}) AND {w}(e) AND agent(e, {who})"
        elif kind == 4:  # conj
            n1 = rng.choice(sent)
            v1, v2, v3 = rng.sample(intr, 3)
            s = f"the {n1} {v1} and {v2} or {v3}"
            if rng.random() < 0.5:
                lf = (f"exists x . exists a . exists e . exists i . {n1}(x) AND ( {v1}(a) AND agent(a, x) AND "
                      f"( ( {v2}(e) AND agent(e, x) ) OR ( {v3}(i) AND agent(i, x) ) ) )")
            else:
                lf = (f"exists x . exists a . exists e . exists i . {n1}(x) AND ( ( {v1}(a) AND agent(a, x) AND "
                      f"{v2}(e) AND agent(e, x) ) OR ( {v3}(i) AND agent(i, x) ) )")
        elif kind == 5:  # the N V Name
            n1, (b,) = rng.choice(hum), _names(rng, 1)
            v = rng.choice(vis)
            s = f"the {n1} {v} {b}"
            lf = f"exists x . exists a . {n1}(x) AND {v}(a) AND agent(a, x) AND patient(a, {b})"
        else:  # intransitive
            n1, w = rng.choice(sent), rng.choice(intr)
            s = f"the {n1} {w}"
            lf = f"exists x . exists a . {n1}(x) AND {w}(a) AND agent(a, x)"
        out.append((s, lf))
    return out


def zero_shot_prompt(examples: list[tuple[str, str]], test: str) -> str:
    """The docs/paper-notes.md §10 layout: header, blank line, example blocks joined by a newline."""
    blocks = [f"Human: {u}\nComputer: {lf}\n" for u, lf in examples] + [f"Human: {test}\nComputer:"]
    return HEADER + "\n\n" + "\n".join(blocks)


def simple_prompt(sentence: str) -> str:
    return f"Human: {sentence}\nComputer:"


@dataclass
class TinyLM:
    model: Any
    tokenizer: Any
    examples: list[tuple[str, str]]


def train_tokenizer(texts: list[str], *, vocab_size: int = 3000, use_split: bool = True) -> Any:
    """A byte-level BPE (``PreTrainedTokenizerFast``) trained on ``texts``."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    if use_split:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(SPLIT_PATTERN), behavior="isolated"), byte_level]
        )
    else:
        tok.pre_tokenizer = byte_level
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>")


def train_sentencepiece_tokenizer(texts: list[str], *, vocab_size: int = 800) -> Any:
    """A Gemma-style tokenizer: ``▁`` for spaces, ``<0xNN>`` byte fallback, no pre-tokenizer."""
    import json

    from tokenizers import Tokenizer, decoders, models, normalizers, trainers
    from transformers import PreTrainedTokenizerFast

    base = Tokenizer(models.BPE())
    base.normalizer = normalizers.Replace(" ", "▁")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=["<pad>", "<eos>", "<bos>"],
                                  show_progress=False)
    base.train_from_iterator(texts, trainer)
    spec = json.loads(base.to_str())
    vocab: dict[str, int] = dict(spec["model"]["vocab"])
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in spec["model"]["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>", bos_token="<bos>")


def _training_sequences(tokenizer: Any, examples: list[tuple[str, str]]) -> list[list[int]]:
    """Prompt and output tokenized separately, as generation produces them (docs/decoding-notes.md §5 item 5)."""
    eos = tokenizer.eos_token_id
    return [
        tokenizer(simple_prompt(s)).input_ids + tokenizer(" " + lf + "\n", add_special_tokens=False).input_ids + [eos]
        for s, lf in examples
    ]


def build_tiny_lm(*, seed: int = 0, steps: int = 250, n_examples: int = 600) -> TinyLM:
    """Train the tokenizer (on simple and zero-shot-layout text) and a 2-layer GPT-2 (on simple
    prompts only, in length-bucketed batches to keep it fast)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.set_num_threads(min(2, torch.get_num_threads()))
    rng = random.Random(seed)
    examples = amp_examples(n_examples, seed=seed)
    texts = [simple_prompt(s) + " " + lf + "\n" for s, lf in examples]
    texts += [zero_shot_prompt(examples[i : i + 2], examples[i + 2][0]) for i in range(0, 120, 3)]
    tokenizer = train_tokenizer(texts)
    seqs = sorted(_training_sequences(tokenizer, examples), key=len)
    batch = 16
    batches = [seqs[k : k + batch] for k in range(0, len(seqs), batch)]
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=512, n_embd=64, n_layer=2, n_head=4,
        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )
    model = GPT2LMHeadModel(config)
    opt = torch.optim.AdamW(model.parameters(), lr=4e-3, weight_decay=0.0)
    model.train()
    pad = tokenizer.eos_token_id
    order: list[int] = []
    while len(order) < steps:
        perm = list(range(len(batches)))
        rng.shuffle(perm)
        order += perm
    for b in order[:steps]:
        chunk = batches[b]
        width = max(len(c) for c in chunk)
        ids = torch.full((len(chunk), width), pad, dtype=torch.long)
        labels = torch.full((len(chunk), width), -100, dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, c in enumerate(chunk):
            ids[r, : len(c)] = torch.tensor(c)
            labels[r, : len(c)] = torch.tensor(c)
            mask[r, : len(c)] = 1
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    return TinyLM(model=model, tokenizer=tokenizer, examples=examples)
