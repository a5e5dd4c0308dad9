"""A GGUF model run by llama.cpp as it is (no dequantisation), through ``llama-cpp-python``'s low-level API.

:func:`load_gguf` loads a ``.gguf`` file with llama.cpp's own loader (a file that is not a GGUF
model raises :class:`~amp.parser.core.errors.ModelLoadError`) and gives a :class:`GgufModel`:
the model, its :class:`GgufTokenizer` (the GGUF's own vocabulary, in the shape
:class:`amp.parser.search.vocab.Vocabulary` reads) and :class:`SeqCells` contexts.

A :class:`SeqCells` context keeps the KV cells of several *sequences* in one unified cache: a
prompt evaluated once on one sequence is shared by the others with
``llama_memory_seq_cp`` (the cells are shared, nothing is recomputed), a sequence advances by one
or more tokens per :meth:`SeqCells.decode` (all sequences together in one batch), and
``llama_memory_seq_rm`` frees a sequence's cells.  :meth:`SeqCells.decode` returns log-probs:
llama.cpp's raw logits log-softmaxed over the full vocabulary in float32, read in place and
log-softmaxed one call's rows at once (one copy; the rows given back are views of that block).

Batch invariance (measured on the embedded model).  A row fed as *one token of its sequence*
gives the same log-probs, to the bit, whatever else is in the batch and wherever its cells lie, if
four things hold; each was found by a measurement, and each costs a test when broken:

* llama.cpp's repacked weights are off (``use_extra_bufts = False``; with them a row moved by up
  to 0.38 nats with the number of sequences in the batch);
* flash attention is on (:class:`SeqCells` asks for it; without it a row moved by up to 0.23 nats
  with the cells the cache held);
* every call holds between :data:`STEP_CALL_MIN` and :data:`STEP_CALL_MAX` tokens.  llama.cpp's CPU
  kernels choose their path by the number of tokens in a call: one token alone has its attention
  split over the cells in the cache and the parts added (the result moved with how full the cache
  was, up to 0.58 nats); from 2 to 7 tokens the matrix products run row by row; from 8 in blocks,
  and from 64 yet another way, each with its own float sums (a row moved by up to 0.13 nats between
  a call of 7 sequences and one of 8 in issue #29's measurement, though not on issue #42's tokens,
  where row 0 of a 7- and a 35-row step was the same on both paths; with a one-token call left
  unpadded the invariance test fails; from 64 a row moved by up to 0.99 nats).  Every call of one
  token per sequence takes the row-by-row path: :meth:`SeqCells.decode` adds a padding row on a
  sequence of its own to a call of one token (:meth:`SeqCells.release_padding` frees its cells) and
  splits a step of more single tokens into near-equal calls.  The blocked path is faster per row
  (measured, issue #42, load 6 to 12 so ratios only: a step of 7 rows 2.0x, of 35 rows 3.4x; a
  one-row step 0.73x), but its numbers failed the default rule on what a researcher reads (one
  reading flip in 200 items against transformers in float32, where the row path has none:
  docs/paper-notes.md §24), and on it a row moved by 0.013 nats when another prompt's rows shared
  its call, where on the row path it does not move (tested);
* a sequence's cells lie in the cache in the order of their positions, since attention adds them
  up in cache order: the caller never frees cells while the sequences decoded after them live
  (:mod:`amp.parser.search.cell_search` keeps a dropped beam's cells until the search ends).

Several tokens of one sequence in one call take another path (up to 0.25 nats away from one
token at a time), so only a prompt is fed that way, and everything after it one token per
sequence and call.  A prompt's cells do not depend on how the prompt is cut into calls as long as
every call holds :data:`PROMPT_CALL_MIN` to :data:`BATCH_TOKENS` tokens (measured, issue #42: a
176- and a 597-token prompt fed in two parts, cut anywhere from 64 tokens in to 64 before the end,
gave the last row of the whole feed to the bit; a part of fewer than 64 tokens moved it by up to
1.0 nats; a feed shorter than 64 padded at its end is exact, its padding cells after its own, but
padding cells left *between* a prompt's cells moved it by 0.65 nats, so they are freed before the
next part).  :meth:`SeqCells.feed_prompt` feeds that way, so the cells of a prefix that two
prompts share are kept and only the rest is fed (:class:`amp.parser.search.cell_decoder.CellDecoder`).
Where a prompt's cells lie matters on that path: fed after 100 cells of another sequence, a
300-token prompt's last row moved by 0.87 nats (after 64 or 256 cells it did not), so a prompt is
always fed at the start of the cache, or after a prefix that lies there.  :meth:`SeqCells.save_state`
and :meth:`SeqCells.load_state` keep a prefix's cells as bytes and put them back at the start of a
cleared cache (:mod:`amp.parser.search.prefix_states`), whole only up to :attr:`SeqCells.state_window`
positions (a sliding-window layer keeps its last ones only).

The number of threads is the caller's (:mod:`amp.parser.backends.llama_threads`).
"""

from __future__ import annotations

# long: ~480 lines — one llama.cpp context (SeqCells) and the tokenizer and loader it needs; the 70-line
# docstring is the measured conditions under which its numbers do not depend on how its calls are shaped.
import ctypes
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from amp.parser.core.errors import DecodingError, ModelLoadError

#: The first bytes of every GGUF file.
GGUF_MAGIC = b"GGUF"
#: Tokens per llama.cpp batch (a longer feed is decoded in several calls).
BATCH_TOKENS = 512
#: The fewest tokens of a llama.cpp call (padding rows fill a shorter one) and the most tokens of
#: a call of one token per sequence (a search step, a forced step, a sampling step; a longer one
#: is split): between the two, llama.cpp's CPU kernels take their row-by-row path, the one whose
#: numbers hold the default rule (docs/paper-notes.md §24), so a row's log-probs do not depend on
#: the call it is in (measured on this build; see the module docstring and
#: ``tests/parser/test_llama_engine.py``).
STEP_CALL_MIN = 2
STEP_CALL_MAX = 7
#: The fewest tokens of a call that feeds a prompt (or the part of one a shared prefix leaves):
#: from this many, llama.cpp's kernels give a token's cells the same values however the prompt is
#: cut into calls, so a prefix's cells can be kept and the rest fed after them (module docstring).
#: A shorter feed is padded, its padding cells after its own.
PROMPT_CALL_MIN = 64

_INIT_LOCK = threading.Lock()
_INITIALISED = False
_LOG_CALLBACK: Any = None  # kept alive: llama.cpp calls it from C


def llama_cpp_module() -> Any:
    """``llama_cpp``, or :class:`ModelLoadError` saying how to install it."""
    try:
        import llama_cpp  # late: optional dependency (llama_cpp)
    except ImportError as exc:
        raise ModelLoadError(
            "the llama.cpp engine needs llama-cpp-python (pip install 'llama-cpp-python==0.3.36', "
            "or bash run.sh app, which installs it with a C/C++ compiler); or use --engine transformers"
        ) from exc
    return llama_cpp


def _init(llama: Any) -> None:
    """Initialise llama.cpp once and keep its log quiet except for errors."""
    global _INITIALISED, _LOG_CALLBACK
    with _INIT_LOCK:
        if _INITIALISED:
            return
        llama.llama_backend_init()

        def quiet(level: int, text: bytes, user_data: Any) -> None:
            return None

        _LOG_CALLBACK = llama.llama_log_callback(quiet)
        llama.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))
        _INITIALISED = True


def check_gguf_file(path: Path) -> None:
    """:class:`ModelLoadError` unless ``path`` is a readable file that starts like a GGUF."""
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelLoadError(f"cannot read the GGUF file {str(path)!r}: {exc.strerror or exc}") from exc
    if magic != GGUF_MAGIC:
        raise ModelLoadError(
            f"{str(path)!r} is not a GGUF model file (it does not start with 'GGUF'); "
            "pass a .gguf file, or use --engine transformers for a model folder"
        )


class _Ids:
    """What a tokenizer call returns: ``.input_ids``."""

    def __init__(self, ids: list[int]) -> None:
        self.input_ids = ids


class GgufTokenizer:
    """The GGUF's own tokenizer, in the shape :class:`amp.parser.search.vocab.Vocabulary` and
    the prompt encoders read (``len``, ``get_vocab``, special ids, ``__call__(...).input_ids``).

    Control, unknown and unused tokens are special (no text), except those the GGUF also marks
    user-defined (as a Hugging Face tokenizer treats its non-special added tokens).
    """

    backend_tokenizer = None  # no tokenizer.json: the family is read from the pieces

    def __init__(self, llama: Any, vocab: Any) -> None:
        self._llama = llama
        self._vocab = vocab
        n = int(llama.llama_vocab_n_tokens(vocab))
        self._n = n
        pieces: dict[str, int] = {}
        special: list[int] = []
        hidden = llama.LLAMA_TOKEN_ATTR_CONTROL | llama.LLAMA_TOKEN_ATTR_UNKNOWN | llama.LLAMA_TOKEN_ATTR_UNUSED
        for i in range(n):
            raw = llama.llama_vocab_get_text(vocab, i) or b""
            pieces.setdefault(raw.decode("utf-8", errors="surrogateescape"), i)
            attr = int(llama.llama_vocab_get_attr(vocab, i))
            if attr & hidden and not attr & llama.LLAMA_TOKEN_ATTR_USER_DEFINED:
                special.append(i)
        self._pieces = pieces
        self.all_special_ids = special
        self.added_tokens_decoder: dict[int, Any] = {}
        eos = int(llama.llama_vocab_eos(vocab))
        pad = int(llama.llama_vocab_pad(vocab))
        self.eos_token_id: int | None = eos if eos >= 0 else None
        self.pad_token_id: int | None = pad if pad >= 0 else self.eos_token_id
        self.add_bos = bool(llama.llama_vocab_get_add_bos(vocab))

    def __len__(self) -> int:
        return self._n

    def get_vocab(self) -> dict[str, int]:
        return dict(self._pieces)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        data = text.encode("utf-8")
        cap = len(data) + 8
        buf = (self._llama.llama_token * cap)()
        n = self._llama.llama_tokenize(self._vocab, data, len(data), buf, cap, add_special_tokens, True)
        if n < 0:  # (cannot happen: a token covers at least one byte)
            raise DecodingError(f"llama.cpp could not tokenize a text of {len(data)} bytes")
        return list(buf[:n])

    def __call__(self, text: str, add_special_tokens: bool = True) -> _Ids:
        return _Ids(self.encode(text, add_special_tokens))


@dataclass
class GgufModel:
    """A GGUF model loaded by llama.cpp: ``path``, the C model, its vocabulary and tokenizer."""

    path: Path
    model: Any
    tokenizer: GgufTokenizer
    n_vocab: int
    n_ctx_train: int
    eos: tuple[int, ...]
    lock: threading.RLock

    def cells(self, *, n_ctx: int, n_seq: int, threads: int) -> SeqCells:
        """A fresh context of ``n_ctx`` cells shared by up to ``n_seq`` sequences."""
        return SeqCells(self, n_ctx=n_ctx, n_seq=n_seq, threads=threads)

    def close(self) -> None:
        if self.model is not None:
            llama_cpp_module().llama_model_free(self.model)
            self.model = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
            pass


def load_gguf(path: str | Path) -> GgufModel:
    """Load a ``.gguf`` file with llama.cpp (raises :class:`ModelLoadError` with the reason)."""
    target = Path(path)
    check_gguf_file(target)
    llama = llama_cpp_module()
    _init(llama)
    params = llama.llama_model_default_params()
    params.use_extra_bufts = False  # no repacked weights: see the module docstring (batch invariance)
    model = llama.llama_model_load_from_file(str(target).encode("utf-8"), params)
    if not model:
        raise ModelLoadError(
            f"llama.cpp could not load {str(target)!r}: a damaged or truncated GGUF, or an architecture "
            "this llama.cpp build does not know; check the file, or use --engine transformers"
        )
    vocab = llama.llama_model_get_vocab(model)
    tokenizer = GgufTokenizer(llama, vocab)
    eos = (tokenizer.eos_token_id,) if tokenizer.eos_token_id is not None else ()
    return GgufModel(target, model, tokenizer, len(tokenizer), int(llama.llama_model_n_ctx_train(model)), eos,
                     threading.RLock())


#: One token of a call: sequence, position, token, whether its log-probs are wanted, its feed (-1 for a
#: padding row) and its row in that feed.
_Row = tuple[int, int, int, bool, int, int]


def _prompt_calls(tokens: int) -> int:
    """How many calls a prompt feed of ``tokens`` takes (at most :data:`BATCH_TOKENS` each)."""
    return max(1, -(-tokens // BATCH_TOKENS))


def _step_calls(rows: int) -> int:
    """How many calls a step of ``rows`` single tokens takes (at most :data:`STEP_CALL_MAX` tokens each)."""
    return max(1, -(-rows // STEP_CALL_MAX))


class SeqCells:
    """A llama.cpp context: a unified KV cache whose cells belong to numbered sequences."""

    def __init__(self, gm: GgufModel, *, n_ctx: int, n_seq: int, threads: int) -> None:
        llama = llama_cpp_module()
        self._llama = llama
        self.gm = gm
        self.n_ctx = n_ctx
        self.n_seq = n_seq
        self.pad_seq = n_seq  # one more sequence, for the padding rows (see _calls)
        self._pad_pos = 0
        cp = llama.llama_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = BATCH_TOKENS
        cp.n_ubatch = BATCH_TOKENS
        cp.n_seq_max = n_seq + 1
        cp.kv_unified = True
        cp.flash_attn_type = llama.LLAMA_FLASH_ATTN_TYPE_ENABLED  # batch invariance: see the module docstring
        cp.n_threads = threads
        cp.n_threads_batch = threads
        cp.no_perf = True
        self.ctx = llama.llama_init_from_model(gm.model, cp)
        if not self.ctx:
            raise ModelLoadError(f"llama.cpp could not create a context of {n_ctx} cells for {n_seq} sequences "
                                 "(out of memory?)")
        self.mem = llama.llama_get_memory(self.ctx)
        self.batch = llama.llama_batch_init(BATCH_TOKENS, 0, 1)
        swa = int(llama.llama_model_n_swa(gm.model))
        #: The most positions a saved state holds whole (:meth:`save_state`): a model with
        #: sliding-window layers keeps only the window's cells there; None when it has none.
        self.state_window: int | None = swa if swa > 0 else None

    # -- cells ------------------------------------------------------------------------------------------

    def copy(self, src: int, dst: int) -> None:
        """Sequence ``dst`` (empty) gets the cells of ``src`` (shared, not recomputed)."""
        self._llama.llama_memory_seq_cp(self.mem, src, dst, -1, -1)

    def free(self, seq: int) -> None:
        """Forget every cell of ``seq``."""
        self._llama.llama_memory_seq_rm(self.mem, seq, -1, -1)

    def truncate(self, seq: int, keep: int) -> bool:
        """Keep the first ``keep`` positions of ``seq``; False if llama.cpp cannot (then free it)."""
        ok = bool(self._llama.llama_memory_seq_rm(self.mem, seq, keep, -1))
        if not ok:
            self.free(seq)
        return ok

    def clear(self) -> None:
        self._llama.llama_memory_clear(self.mem, True)
        self._pad_pos = 0

    def release_padding(self) -> None:
        """Free the padding row's cells (call when the sequences decoded with them are freed)."""
        if self._pad_pos:
            self._llama.llama_memory_seq_rm(self.mem, self.pad_seq, -1, -1)
            self._pad_pos = 0

    # -- saved states -----------------------------------------------------------------------------------

    def save_state(self, seq: int) -> bytearray | None:
        """The cells of ``seq`` as llama.cpp's bytes (``llama_state_seq_get_data``), or None when
        they would not be whole: ``seq`` holds more than :attr:`state_window` positions (a
        sliding-window layer keeps only the last ones; measured on the embedded model, a 600-token
        prompt put back that way moved the next row by 0.81 nats) or nothing at all."""
        llama = self._llama
        held = int(llama.llama_memory_seq_pos_max(self.mem, seq)) + 1
        if held <= 0 or (self.state_window is not None and held > self.state_window):
            return None
        size = int(llama.llama_state_seq_get_size(self.ctx, seq))
        data = bytearray(size)
        view = (ctypes.c_uint8 * size).from_buffer(data)
        n = int(llama.llama_state_seq_get_data(self.ctx, view, size, seq))
        del view  # (the bytearray can be resized once nothing points into it)
        if n <= 0:
            return None
        del data[n:]
        return data

    def load_state(self, seq: int, data: bytearray) -> bool:
        """Put a :meth:`save_state` back on ``seq``, in a cache that holds nothing else (the caller
        clears it): its cells are then where a fresh feed of the same tokens puts them, the first
        at the start of the cache, so every number computed on them is that feed's (tested to the
        bit; on llama.cpp's prompt path a cell's numbers depend on where it lies: a prompt fed after
        100 cells of another sequence moved its last row by 0.95 nats).  False if llama.cpp could
        not (no room: the sequence is left empty)."""
        llama = self._llama
        view = (ctypes.c_uint8 * len(data)).from_buffer(data)
        n = int(llama.llama_state_seq_set_data(self.ctx, view, len(data), seq))
        del view
        if n != len(data):
            self.free(seq)
            return False
        return True

    # -- decoding ---------------------------------------------------------------------------------------

    def decode(self, feeds: Sequence[tuple[int, int, Sequence[int], bool]]) -> list[torch.Tensor | None]:
        """Feed ``(seq, first position, tokens, want)`` entries in one batch (several llama.cpp
        calls past :data:`BATCH_TOKENS`); for each entry with ``want`` a ``(len(tokens), n_vocab)``
        float32 tensor of log-probs (row ``j``: the distribution after ``tokens[j]``), else None."""
        return self._decode(feeds, last_only=False)

    def decode_last(self, feeds: Sequence[tuple[int, int, Sequence[int]]]) -> list[torch.Tensor]:
        """Feed ``(seq, first position, tokens)`` entries; the log-probs after each one's last token."""
        out = self._decode([(s, p, t, True) for s, p, t in feeds], last_only=True)
        return [o for o in out if o is not None]

    def feed_prompt(self, seq: int, start: int, tokens: Sequence[int]) -> torch.Tensor:
        """Feed a prompt's ``tokens`` (from position ``start``: the part after a prefix ``seq``
        holds) in calls of :data:`PROMPT_CALL_MIN` tokens or more; the log-probs after the last.
        Its cells are the ones a feed of the whole prompt from position 0 computes (module docstring)."""
        if not tokens:
            raise DecodingError("a prompt feed needs at least one token")
        out = self._decode([(seq, start, tokens, True)], last_only=True, single=False)[0]
        assert out is not None
        return out[-1]

    def _decode(self, feeds: Sequence[tuple[int, int, Sequence[int], bool]],
                last_only: bool, single: bool | None = None) -> list[torch.Tensor | None]:
        llama, batch = self._llama, self.batch
        flat: list[_Row] = []  # seq, pos, token, logits?, entry, row
        for e, (seq, start, toks, want) in enumerate(feeds):
            for j, tok in enumerate(toks):
                need = want and (not last_only or j == len(toks) - 1)
                flat.append((seq, start + j, int(tok), need, e, j))
        rows: list[list[torch.Tensor]] = [[] for _ in feeds]
        if single is None:
            single = all(len(toks) == 1 for _s, _p, toks, _w in feeds)
        for chunk in self._calls(flat, single=single):
            for i, (seq, pos, tok, need, _e, _j) in enumerate(chunk):
                batch.token[i] = tok
                batch.pos[i] = pos
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = seq
                batch.logits[i] = 1 if need else 0
            batch.n_tokens = len(chunk)
            rc = llama.llama_decode(self.ctx, batch)
            if rc != 0:
                raise DecodingError(
                    f"llama.cpp could not decode a batch of {len(chunk)} tokens (code {rc}: "
                    f"{'no free cells in the context' if rc == 1 else 'error'})"
                )
            wanted = [(i, e) for i, (_s, _p, _t, need, e, _j) in enumerate(chunk) if need]
            if wanted:
                block = self._log_probs([i for i, _e in wanted])
                for k, (_i, e) in enumerate(wanted):
                    if e >= 0:
                        rows[e].append(block[k])
        out: list[torch.Tensor | None] = []
        for e, (_seq, _start, _toks, want) in enumerate(feeds):
            if not want or not rows[e]:
                out.append(None)
            elif len(rows[e]) == 1:
                out.append(rows[e][0].unsqueeze(0))  # a view of its call's block: no copy
            else:
                out.append(torch.stack(rows[e]))
        return out

    def _log_probs(self, batch_rows: list[int]) -> torch.Tensor:
        """The log-probs of the last call's rows ``batch_rows`` (batch indices with logits), one
        ``(len, n_vocab)`` float32 tensor: llama.cpp's logits read in place and log-softmaxed in one
        operation over the whole block (the only copy; each row's values are those of the row
        alone, the operation runs row by row)."""
        llama, n_vocab = self._llama, self.gm.n_vocab
        base = llama.llama_get_logits(self.ctx)
        start = ctypes.cast(base, ctypes.c_void_p).value or 0
        width = n_vocab * ctypes.sizeof(ctypes.c_float)
        where = [((ctypes.cast(llama.llama_get_logits_ith(self.ctx, i), ctypes.c_void_p).value or 0) - start) // width
                 for i in batch_rows]
        logits = torch.from_numpy(np.ctypeslib.as_array(base, shape=(max(where) + 1, n_vocab)))
        if where != list(range(len(where))):  # (llama.cpp keeps outputs in batch order; checked, not assumed)
            logits = logits[where]
        return torch.log_softmax(logits, dim=-1)

    @staticmethod
    def step_cells(rows: int) -> int:
        """The most cells one step of ``rows`` single tokens takes: its rows and its calls' padding."""
        return rows + _step_calls(rows) * (STEP_CALL_MIN - 1)

    def _calls(self, flat: list[_Row], single: bool) -> list[list[_Row]]:
        """``flat`` cut into llama.cpp calls, padding rows added to a short one: a feed of one token
        per sequence (``single``) into near-equal calls of :data:`STEP_CALL_MIN` to
        :data:`STEP_CALL_MAX` tokens; anything else (a prompt, or the rest of one) into near-equal
        calls of :data:`PROMPT_CALL_MIN` to :data:`BATCH_TOKENS` tokens (only a feed shorter than
        :data:`PROMPT_CALL_MIN` is padded, so the padding cells lie after all its own)."""
        if not flat:
            return []
        size = -(-len(flat) // (_step_calls(len(flat)) if single else _prompt_calls(len(flat))))
        least = STEP_CALL_MIN if single else PROMPT_CALL_MIN
        calls = []
        for lo in range(0, len(flat), size):
            chunk = flat[lo : lo + size]
            while len(chunk) < least:
                chunk.append((self.pad_seq, self._pad_pos, chunk[0][2], False, -1, 0))
                self._pad_pos += 1
            calls.append(chunk)
        return calls

    def close(self) -> None:
        llama = self._llama
        if getattr(self, "batch", None) is not None:
            llama.llama_batch_free(self.batch)
            self.batch = None
        if getattr(self, "ctx", None):
            llama.llama_free(self.ctx)
            self.ctx = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
            pass
