"""How llama.cpp's calls cost on the row-by-row path: steps by size, items packed into one call, and a shared prompt prefix.

``python bench/llama_calls_bench.py [--threads 1] [--repeats 8] [--out FILE]`` (issue #42 points 2 and 3).

On the embedded GGUF, in one process, every shape interleaved ``--repeats`` times (the median and
the best of each are printed, with the load average):

* a search step of ``r`` rows (one token per sequence, each continuing a 300-token prompt), for r
  from 1 to 35: milliseconds per step and per row (calls of 2 to 7 tokens; a longer step is split);
* **items packed**: ``n`` items of 3 rows each (three beams), searched one after the other (a call
  each) against their rows packed into shared calls (rows of different prompts may share a call on
  this path, bit for bit: ``tests/parser/test_llama_engine.py``) — the ratio is what packing
  would gain;
* **a shared prefix**: a prompt of ~600 tokens fed whole against the same prompt after another one
  that shares all but its last ~100 tokens (the cells of the prefix kept,
  :meth:`~amp.parser.search.cell_decoder.CellDecoder.prompt`);
* **two prompt families alternating** (headers of 600 tokens, a 40-token sentence each, six prompts
  A B A B A B): the cell decoder with saved prefixes (the default bound) against none (0 bytes) —
  tokens fed and the time to put the six prompts;
* **where a prompt's cells lie**: a 300-token prompt fed after ``k`` cells of another sequence, the
  largest change of its last row against ``k = 0`` (why items with different prompts cannot share
  calls and keep their numbers, docs/paper-notes.md §19).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp.parser.backends.llama import shared_gguf  # noqa: E402
from amp.parser.models.embedded import default_gguf  # noqa: E402
from amp.parser.models.gguf_cells import STEP_CALL_MAX, STEP_CALL_MIN, SeqCells  # noqa: E402
from amp.parser.search.cell_decoder import CellDecoder  # noqa: E402
from amp.parser.search.prefix_states import PrefixStates  # noqa: E402

#: The prompts' sequences and token ids (arbitrary vocabulary ids, as the engine tests use).
PROMPTS = {0: list(range(1000, 1300)), 201: list(range(3000, 3170))}
STEP_ROWS = (1, 2, 3, 5, 7, 10, 14, 21, 35)
PACKED_ITEMS = (2, 4, 8)
ROWS_PER_ITEM = 3
#: Two prompt families alternating: a 600-token header each, then a 40-token sentence.
FAMILIES = [[*range(base, base + 600), *range(base + 1000 + 40 * k, base + 1040 + 40 * k)]
            for k in range(3) for base in (10000, 20000)]
#: Cells of another sequence before a prompt (where its cells lie).
OFFSETS = (0, 64, 100, 256, 300)


def step(cells: SeqCells, rows: list[tuple[int, int]]) -> None:
    """One search step: row ``k`` continues prompt ``rows[k][0]`` with token ``rows[k][1]``."""
    for k, (src, _tok) in enumerate(rows):
        cells.copy(src, 1 + k)
    cells.decode([(1 + k, len(PROMPTS[src]), [tok], True) for k, (src, tok) in enumerate(rows)])
    for k in range(len(rows)):
        cells.free(1 + k)
    cells.release_padding()


def timed(fn: Callable[[], None]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    gm = shared_gguf(default_gguf())
    cells = gm.cells(n_ctx=4096, n_seq=202, threads=args.threads)
    for seq, toks in PROMPTS.items():
        cells.decode([(seq, 0, toks, False)])
    items = {n: [[(0 if i % 2 else 201, 2000 + 10 * i + j) for j in range(ROWS_PER_ITEM)] for i in range(n)]
             for n in PACKED_ITEMS}
    shapes: dict[str, Callable[[], None]] = {}
    for r in STEP_ROWS:
        shapes[f"step of {r} rows"] = lambda r=r: step(cells, [(0, 2000 + k) for k in range(r)])
    for n, its in items.items():
        shapes[f"{n} items x {ROWS_PER_ITEM} rows, one after the other"] = lambda its=its: [step(cells, it) for it in its]
        shapes[f"{n} items x {ROWS_PER_ITEM} rows, packed"] = lambda its=its: step(cells, [r for it in its for r in it])
    long = list(range(5000, 5600))
    other = long[:500] + list(range(6000, 6100))

    def whole() -> None:
        cells.free(150)
        cells.feed_prompt(150, 0, long)
        cells.release_padding()
        cells.free(150)

    def shared() -> None:
        cells.free(150)
        cells.feed_prompt(150, 0, other)
        cells.release_padding()
        cells.truncate(150, 500)
        t = timed(lambda: cells.feed_prompt(150, 500, long[500:]))
        cells.release_padding()
        cells.free(150)
        shared_times.append(t)

    shared_times: list[float] = []
    whole_times: dict[str, list[float]] = {name: [] for name in shapes}
    whole_times["600-token prompt fed whole"] = []
    for _ in range(args.repeats):
        for name, fn in shapes.items():
            whole_times[name].append(timed(fn))
        whole_times["600-token prompt fed whole"].append(timed(whole))
        shared()
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[0]
    lines = [f"llama.cpp calls, row-by-row path (calls of {STEP_CALL_MIN}-{STEP_CALL_MAX} tokens), {args.threads} "
             f"thread(s), {args.repeats} repeats interleaved, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"load average at the end {load}"]
    med = {name: statistics.median(ts) for name, ts in whole_times.items()}
    for r in STEP_ROWS:
        name = f"step of {r} rows"
        lines.append(f"{name:<44} median {1000 * med[name]:7.1f} ms  ({1000 * med[name] / r:5.1f} ms a row)  "
                     f"best {1000 * min(whole_times[name]):7.1f} ms")
    for n in PACKED_ITEMS:
        apart = med[f"{n} items x {ROWS_PER_ITEM} rows, one after the other"]
        packed = med[f"{n} items x {ROWS_PER_ITEM} rows, packed"]
        lines.append(f"{n} items x {ROWS_PER_ITEM} rows: one after the other {1000 * apart:7.1f} ms, packed "
                     f"{1000 * packed:7.1f} ms (packing gains {apart / packed:.2f}x)")
    w, s = med["600-token prompt fed whole"], statistics.median(shared_times)
    lines.append(f"600-token prompt: fed whole {1000 * w:.0f} ms, after a prompt sharing its first 500 tokens "
                 f"{1000 * s:.0f} ms ({w / s:.2f}x)")
    lines += families(gm, args)
    lines += offsets(gm, args.threads)
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    cells.close()
    return 0


def families(gm: object, args: argparse.Namespace) -> list[str]:
    """Six prompts of two families put on a cell decoder, with saved prefixes and without."""
    fed: dict[str, int] = {}
    times: dict[str, list[float]] = {"saved": [], "none": []}
    for _ in range(args.repeats):
        for name, bound in (("saved", None), ("none", 0)):
            cells = gm.cells(n_ctx=2048, n_seq=4, threads=args.threads)  # type: ignore[attr-defined]
            prefixes = PrefixStates() if bound is None else PrefixStates(max_bytes=bound)
            decoder = CellDecoder(cells, gm.tokenizer, gm.eos, context=gm.n_ctx_train,  # type: ignore[attr-defined]
                                  prefixes=prefixes)
            times[name].append(timed(lambda d=decoder: [d.prompt(ids) for ids in FAMILIES]))
            fed[name] = decoder.prompt_tokens_fed
            cells.close()
    saved, none = statistics.median(times["saved"]), statistics.median(times["none"])
    return [f"two prompt families alternating (6 prompts of 640 tokens): saved prefixes {1000 * saved:.0f} ms, "
            f"{fed['saved']} tokens fed; none {1000 * none:.0f} ms, {fed['none']} tokens fed ({none / saved:.2f}x)"]


def offsets(gm: object, threads: int) -> list[str]:
    """How far a prompt's last row moves when ``k`` cells of another sequence lie before its own."""
    prompt = list(range(1000, 1300))
    rows = {}
    for k in OFFSETS:
        cells = gm.cells(n_ctx=2048, n_seq=4, threads=threads)  # type: ignore[attr-defined]
        if k:
            cells.decode([(2, 0, list(range(8000, 8000 + k)), False)])
        rows[k] = cells.feed_prompt(1, 0, prompt).clone()
        cells.close()
    moved = ", ".join(f"after {k} cells {float((rows[k] - rows[0]).abs().max()):.3f}" for k in OFFSETS[1:])
    return [f"a 300-token prompt's last row, largest change in nats against a prompt at the start of the cache: {moved}"]


if __name__ == "__main__":
    sys.exit(main())
