"""Token ids → text, the vocabulary trie and grammar masks (docs/decoding-notes.md §4a, "Token → bytes").

Two tokenizer families are supported, detected from the tokenizer itself
(:func:`detect_family`):

* ``"sentencepiece"`` (Gemma, Llama-2 style): ``▁`` stands for a space and ``<0xNN>`` tokens are
  byte fallback.  Gemma's tokenizer has **no dummy prefix**: ``" exists"`` encodes as
  ``▁exists`` and ``"Computer:"`` as ``Computer`` ``:`` — so the grammar's leading space
  (docs/paper-notes.md §9) is carried by the first generated token, as for GPT-2.
* ``"byte_level"`` (GPT-2, Llama-3, SmolLM, Qwen): every byte is one printable unicode character
  (GPT-2's ``bytes_to_unicode``), ``Ġ`` is a space.  Its pre-tokenizer regex splits *before* a
  space, so ``" exists"`` is one token both alone and after ``"Computer:"``.

Prompt and output are tokenized **separately** (:func:`encode_prompt`, :func:`encode_output`),
the way generation produces them (docs/decoding-notes.md §5 item 5): the prompt ends with ``Computer:``
and the LF text as the grammar frames it, ``" " + lf + "\\n"``, is encoded without special
tokens.  :func:`encode_output` checks that the ids spell the text back exactly; a tokenizer that
inserts a dummy-prefix space raises :class:`~amp.parser.core.errors.DecodingError`.

Special tokens (BOS/EOS/PAD/…, ``added_tokens`` marked special) have no text and are never
allowed by a grammar mask; non-special added tokens (Gemma's ``"\\n"``, ``"\\n\\n"``, tabs,
HTML tags) are plain text.

Token text is kept as a ``str`` with **one character per byte** (latin-1 view of the bytes):
the grammar is ASCII, so a byte ≥ 0x80 can never be grammatical and byte-fallback pieces of a
multi-byte character are handled without decoding.  :attr:`Vocabulary.display` holds the
human-readable form (UTF-8 decoded, special tokens by name).
"""

from __future__ import annotations

import bisect
import json
import re
import threading
import weakref
from typing import Any, Literal

import torch

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.memo import LruCache
from amp.parser.core.errors import DecodingError
from amp.parser.search.automaton import DEAD, GrammarAutomaton, State, get_automaton

Family = Literal["byte_level", "sentencepiece"]

_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
#: DFS pseudo-state: the sentence is complete, only trailing layout may follow in the token.
_TRAIL: State = frozenset({((-1,), "<trailing>")})


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte → printable-character table (used by every byte-level BPE)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    bs += list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs), strict=True))


_BYTE_DECODER: dict[str, int] = {c: b for b, c in bytes_to_unicode().items()}


def _component(tokenizer: Any, name: str) -> Any:
    """A tokenizer.json component (``decoder``, ``pre_tokenizer``) as plain data, or None."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    part = getattr(backend, name, None) if backend is not None else None
    if part is None:
        return None
    try:
        return json.loads(part.__getstate__())
    except Exception:  # noqa: BLE001 - any failure means "no description"
        return None


def _types(node: Any) -> set[str]:
    """Every ``"type"`` value in a (nested) tokenizer.json component description."""
    out: set[str] = set()
    if isinstance(node, dict):
        if isinstance(node.get("type"), str):
            out.add(node["type"])
        for value in node.values():
            out |= _types(value)
    elif isinstance(node, list):
        for value in node:
            out |= _types(value)
    return out


def detect_family(tokenizer: Any) -> Family:
    """``"byte_level"`` or ``"sentencepiece"``, read from the tokenizer's decoder/pre-tokenizer.

    Falls back to counting ``Ġ``- and ``▁``-initial vocabulary entries.
    """
    decoder = _types(_component(tokenizer, "decoder"))
    kinds = decoder | _types(_component(tokenizer, "pre_tokenizer"))
    if "ByteLevel" in kinds:
        return "byte_level"
    if kinds & {"ByteFallback", "Metaspace"} or "Replace" in decoder:
        return "sentencepiece"
    vocab = tokenizer.get_vocab()
    n_g = sum(1 for t in vocab if t.startswith("Ġ"))
    n_sp = sum(1 for t in vocab if t.startswith("▁"))
    if n_g == 0 and n_sp == 0:
        raise DecodingError("cannot tell the tokenizer family (neither 'Ġ' nor '▁' tokens)")
    return "byte_level" if n_g >= n_sp else "sentencepiece"


def _piece_bytes(piece: str, family: Family) -> bytes | None:
    if family == "byte_level":
        try:
            return bytes(_BYTE_DECODER[c] for c in piece)
        except KeyError:
            return piece.encode("utf-8")
    m = _BYTE_FALLBACK.match(piece)
    if m:
        return bytes([int(m.group(1), 16)])
    return piece.replace("▁", " ").encode("utf-8")


class Vocabulary:
    """Per-token text of one tokenizer, plus the sorted-array trie used for masks.

    Attributes: ``family``, ``size`` (number of ids, ``len(tokenizer)``), ``texts`` (one
    latin-1 character per byte, ``None`` for special tokens), ``display`` (readable strings),
    ``eos_ids`` and ``pad_id``.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.family: Family = detect_family(tokenizer)
        size = len(tokenizer)
        self.size = size
        texts: list[str | None] = [None] * size
        display: list[str] = [""] * size
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        added = dict(getattr(tokenizer, "added_tokens_decoder", {}) or {})
        for piece, idx in tokenizer.get_vocab().items():
            if idx >= size:
                continue
            tok = added.get(idx)
            if idx in special or (tok is not None and tok.special):
                display[idx] = piece
                continue
            if tok is not None:
                content = tok.content
                if self.family == "sentencepiece" and getattr(tok, "normalized", False):
                    content = content.replace("▁", " ")
                raw = content.encode("utf-8")
            else:
                raw = _piece_bytes(piece, self.family)
            if not raw:
                display[idx] = piece
                continue
            texts[idx] = raw.decode("latin-1")
            display[idx] = raw.decode("utf-8", errors="backslashreplace")
        self.texts = texts
        self.display = display
        eos = getattr(tokenizer, "eos_token_id", None)
        self.eos_ids: tuple[int, ...] = (eos,) if isinstance(eos, int) else ()
        pad = getattr(tokenizer, "pad_token_id", None)
        self.pad_id: int | None = pad if isinstance(pad, int) else (eos if isinstance(eos, int) else None)
        # Sorted-array trie: unique texts in sorted order; tokens sharing a prefix are a
        # contiguous range found with bisect (compact even for a 262k vocabulary).
        by_text: dict[str, list[int]] = {}
        for idx, text in enumerate(texts):
            if text is not None:
                by_text.setdefault(text, []).append(idx)
        self.sorted_texts: list[str] = sorted(by_text)
        self.sorted_ids: list[tuple[int, ...]] = [tuple(by_text[t]) for t in self.sorted_texts]

    def text_of(self, ids: list[int] | tuple[int, ...]) -> str:
        """The readable text of a token sequence (special tokens contribute nothing)."""
        raw = b"".join((self.texts[i] or "").encode("latin-1") for i in ids if 0 <= i < self.size)
        return raw.decode("utf-8", errors="replace")

    def token_text(self, idx: int) -> str | None:
        """The latin-1 text of one id (``None`` for special or out-of-vocabulary ids)."""
        return self.texts[idx] if 0 <= idx < self.size else None

    def token_display(self, idx: int) -> str:
        return self.display[idx] if 0 <= idx < self.size else f"<id {idx}>"


_VOCABS: weakref.WeakKeyDictionary[Any, Vocabulary] = weakref.WeakKeyDictionary()
_MASKERS: weakref.WeakKeyDictionary[Any, dict[GrammarAutomaton, VocabMasker]] = weakref.WeakKeyDictionary()
#: Fallback for tokenizers that cannot be weakly referenced: keyed by id, kept alive.
_STRONG: dict[int, tuple[Any, Vocabulary, dict[GrammarAutomaton, VocabMasker]]] = {}
_BUILD_LOCK = threading.RLock()


def _entry(tokenizer: Any) -> tuple[Vocabulary, dict[GrammarAutomaton, VocabMasker]]:
    with _BUILD_LOCK:
        try:
            return _VOCABS[tokenizer], _MASKERS[tokenizer]
        except KeyError:
            pass
        except TypeError:
            held = _STRONG.get(id(tokenizer))
            if held is not None and held[0] is tokenizer:
                return held[1], held[2]
        vocab = Vocabulary(tokenizer)
        maskers: dict[GrammarAutomaton, VocabMasker] = {}
        try:
            _VOCABS[tokenizer] = vocab
            _MASKERS[tokenizer] = maskers
        except TypeError:
            _STRONG[id(tokenizer)] = (tokenizer, vocab, maskers)
        return vocab, maskers


def get_vocabulary(tokenizer: Any) -> Vocabulary:
    """The :class:`Vocabulary` of ``tokenizer``, built once per tokenizer object."""
    return _entry(tokenizer)[0]


class VocabMasker:
    """Grammar masks over a tokenizer's vocabulary (docs/decoding-notes.md §4a, "Mask = DFS over a trie").

    :meth:`allowed_ids` walks the vocabulary trie only along characters the automaton allows
    in each state, so its cost grows with the number of *allowed* tokens, not with |V|.
    Results are cached per state (LRU, ``cache_size`` entries of index tensors; dense masks
    from :meth:`mask` in a smaller LRU).  Special tokens are never allowed; the caller decides
    what a dead or final state allows (:mod:`amp.parser.search.processors` allows only EOS).
    """

    def __init__(
        self,
        automaton: GrammarAutomaton,
        tokenizer: Any,
        *,
        cache_size: int = 8192,
        dense_cache_size: int = 64,
    ) -> None:
        self.automaton = automaton
        self.vocab = get_vocabulary(tokenizer)
        self._ids: LruCache[State, torch.Tensor] = LruCache(cache_size)
        self._dense: LruCache[tuple[State, int], torch.Tensor] = LruCache(dense_cache_size)
        self._groups: LruCache[State, tuple[tuple[int, torch.Tensor], ...]] = LruCache(cache_size)

    @property
    def hits(self) -> int:
        """Lookups of :meth:`allowed_ids` answered from its cache."""
        return self._ids.hits

    @property
    def misses(self) -> int:
        return self._ids.misses

    def allowed_ids(self, state: State) -> torch.Tensor:
        """Sorted int64 ids of the tokens whose text keeps ``state`` alive
        (:meth:`~amp.parser.search.automaton.GrammarAutomaton.advance_token`)."""
        return self._ids.get_or_compute(state, lambda: torch.tensor(self._dfs(state), dtype=torch.long))

    def _dfs(self, state: State) -> list[int]:
        if not state:
            return []
        automaton = self.automaton
        step = automaton.step
        next_chars = automaton.next_chars
        is_final = automaton.is_final
        trailing = automaton.trailing
        texts = self.vocab.sorted_texts
        ids_of = self.vocab.sorted_ids
        left = bisect.bisect_left
        out: list[int] = []
        # A node is (state, lo, hi, prefix): tokens texts[lo:hi] all start with prefix.  The
        # _TRAIL pseudo-state reads only trailing layout after a completed sentence.
        todo: list[tuple[State, int, int, str]] = [(state, 0, len(texts), "")]
        while todo:
            st, lo, hi, prefix = todo.pop()
            if prefix and texts[lo] == prefix:
                out.extend(ids_of[lo])
            moves: list[tuple[str, State | None]]
            if st is _TRAIL:
                moves = [(ch, _TRAIL) for ch in trailing]
            else:
                moves = [(ch, None) for ch in next_chars(st)]
                if prefix and is_final(st):
                    moves += [(ch, _TRAIL) for ch in trailing]
            for ch, child in moves:
                p2 = prefix + ch
                l2 = left(texts, p2, lo, hi)
                if l2 == hi or not texts[l2].startswith(p2):
                    continue
                h2 = left(texts, prefix + chr(ord(ch) + 1), l2, hi)
                todo.append((child if child is not None else step(st, ch), l2, h2, p2))
        return sorted(set(out))

    def end_groups(self, state: State) -> tuple[tuple[int, torch.Tensor], ...]:
        """Allowed tokens that *end* the sentence, grouped by the text up to its end.

        Each group with several members (e.g. Gemma's ``"\n"``, ``"\n\n"``, ``"\n\n\n"``…)
        is one event, "the LF ends here": :mod:`amp.parser.search.processors` and
        :mod:`amp.parser.search.scoring` give its total probability to the canonical member (the one
        whose text is exactly the ending, else the shortest) and mask the others.  Returns
        ``(canonical id, all member ids)`` pairs; cached per state.
        """
        return self._groups.get_or_compute(state, lambda: self._end_groups(state))

    def _end_groups(self, state: State) -> tuple[tuple[int, torch.Tensor], ...]:
        groups: dict[str, list[int]] = {}
        texts = self.vocab.texts
        trailing = self.automaton.trailing
        for idx in self.allowed_ids(state).tolist():
            text = texts[idx]
            if text is None or not any(c in text for c in trailing):
                continue
            content = self.automaton.end_content(state, text)
            if content is not None:
                groups.setdefault(content, []).append(idx)
        result: list[tuple[int, torch.Tensor]] = []
        for content, members in groups.items():
            if len(members) < 2:
                continue
            canon = min(members, key=lambda i: (texts[i] != content, len(texts[i] or ""), i))
            result.append((canon, torch.tensor(sorted(members), dtype=torch.long)))
        return tuple(result)

    def mask(self, state: State, size: int | None = None) -> torch.Tensor:
        """A dense bool mask of length ``size`` (default ``len(tokenizer)``), True = allowed."""
        size = self.vocab.size if size is None else size
        return self._dense.get_or_compute((state, size), lambda: self._dense_mask(state, size))

    def _dense_mask(self, state: State, size: int) -> torch.Tensor:
        dense = torch.zeros(size, dtype=torch.bool)
        ids = self.allowed_ids(state)
        dense[ids[ids < size]] = True
        return dense

    def brute_force_ids(self, state: State) -> list[int]:
        """The allowed ids by checking every token's text (slow; for tests)."""
        advance = self.automaton.advance_token
        return [
            i for i, text in enumerate(self.vocab.texts) if text is not None and advance(state, text) != DEAD
        ]


#: Maskers kept per tokenizer (one per grammar: the lexicon's, per format, and recent own-word ones).
_MASKERS_PER_TOKENIZER = 8


def get_masker(tokenizer: Any, fmt: str = DEFAULT_FORMAT, *, bound_variables: bool = True,
               words: OwnWords = NO_WORDS) -> VocabMasker:
    """The :class:`VocabMasker` of ``tokenizer`` and the current ``decoding`` grammar of ``fmt``,
    extended with a teacher's own ``words`` (:mod:`amp.logic.own_words`) when given.

    Cached per tokenizer object and grammar (a lexicon change gives a new grammar text, hence
    a new automaton and masker); masks are reused across calls and prompts.
    ``bound_variables``: see :func:`~amp.parser.search.automaton.get_automaton` (on by default).
    """
    automaton = get_automaton(fmt, bound_variables=bound_variables, words=words)
    _vocab, maskers = _entry(tokenizer)
    with _BUILD_LOCK:
        masker = maskers.get(automaton)
        if masker is None:
            masker = VocabMasker(automaton, tokenizer)
            while len(maskers) >= _MASKERS_PER_TOKENIZER:
                del maskers[next(iter(maskers))]
            maskers[automaton] = masker
        return masker


# --- tokenization at the prompt/output boundary -------------------------------------------
def frame_lf(lf: str) -> str:
    """The LF as the decoding grammar frames it: a leading space and a final newline (§9)."""
    return " " + lf + "\n"


def encode_prompt(tokenizer: Any, prompt: str) -> list[int]:
    """Prompt ids with the tokenizer's default special tokens (Gemma adds ``<bos>``)."""
    ids = list(tokenizer(prompt).input_ids)
    if not ids:
        raise DecodingError("the prompt encodes to no tokens; the first LF token needs a context")
    return ids


def encode_output(tokenizer: Any, text: str) -> list[int]:
    """Ids of generated-side ``text`` (e.g. :func:`frame_lf`), encoded alone, no specials.

    Raises :class:`DecodingError` if the ids do not spell ``text`` exactly (e.g. a tokenizer
    that adds a dummy-prefix space).
    """
    ids = list(tokenizer(text, add_special_tokens=False).input_ids)
    vocab = get_vocabulary(tokenizer)
    spelled = "".join(vocab.texts[i] or "" for i in ids)
    if spelled != text.encode("utf-8").decode("latin-1"):
        raise DecodingError(
            f"the tokenizer does not spell {text!r} back from its own ids (got "
            f"{spelled.encode('latin-1').decode('utf-8', 'replace')!r}); a dummy-prefix space?"
        )
    return ids


def model_context(model: Any) -> int | None:
    """The model's maximum number of positions (``config.max_position_embeddings``), if known."""
    config = getattr(model, "config", None)
    for cfg in (getattr(config, "text_config", None), config):
        value = getattr(cfg, "max_position_embeddings", None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def check_context(model: Any, prompt_tokens: int, new_tokens: int) -> None:
    """Raise :class:`DecodingError` when ``prompt_tokens + new_tokens`` exceed the model's
    context (the model itself would fail with a raw ``IndexError``)."""
    limit = model_context(model)
    if limit is not None and prompt_tokens + new_tokens > limit:
        raise DecodingError(
            f"prompt is {prompt_tokens} tokens (+ {new_tokens} for the LF), model context is "
            f"{limit}: use fewer examples or a shorter prompt"
        )
