"""Benchmark: warm-cache call vs cold call for parse and score on the default model.

Usage: ``python bench/cache_bench.py [--model default] [--beams 5] [--repeat 20] [--device cpu]``

Loads the model once (timed on its own; the first ever run also converts the embedded GGUF,
about a minute), then times for a zero-shot scope prompt (docs/paper-notes.md §10):

* ``parse``: constrained beam search, cold (cache miss, model call) and warm (cache hit);
* ``score``: ``score_pair`` of the two gold LFs, cold and warm;
* warm calls from a *fresh* ``Parser`` on the same cache folder, whose model is never loaded
  (what a rerun of the CLI or a new Streamlit session sees).

The result cache is a temporary folder, so every run starts cold.  Prints one figure per line.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp.cache import ResultCache
from amp.data.generate import pool
from amp.parser.engines import TRANSFORMERS
from amp.parser.parser import Parser
from amp.prompts import zero_shot_prompt

FALLBACK_PROMPT = (
    "Let's translate what a human user says into what a computer might say.\n\n"
    "Human: every boy\nComputer: forall x . boy(x)\n\n"
    "Human: a cat\nComputer: exists x . cat(x)\n\n"
    "Human: every boy saw a cat\nComputer:"
)
FALLBACK_LFS = (
    "exists x . forall y . exists a . boy(y) AND cat(x) AND saw(a) AND agent(a, y) AND patient(a, x)",
    "forall x . exists y . exists a . boy(x) AND cat(y) AND saw(a) AND agent(a, x) AND patient(a, y)",
)


def scope_prompt() -> tuple[str, str, str]:
    """A zero-shot prompt for the first scope sentence and its two gold LFs."""
    try:
        prompt = zero_shot_prompt(pool("scope")[0].surface)
        return prompt.render(), prompt.gold_lf0 or FALLBACK_LFS[0], prompt.gold_lf1 or FALLBACK_LFS[1]
    except Exception:  # noqa: BLE001 - the benchmark still runs on a fixed prompt
        return FALLBACK_PROMPT, *FALLBACK_LFS


def timed(fn: Callable[[], object], repeat: int = 1) -> float:
    """Median wall time of ``fn`` over ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="default")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--beams", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()

    prompt, lf0, lf1 = scope_prompt()
    with tempfile.TemporaryDirectory(prefix="amp-cache-bench-") as folder:
        cache = ResultCache(folder)
        parser = Parser(args.model, device=args.device, dtype=args.dtype, engine=TRANSFORMERS, cache=cache)
        load_s = timed(parser.load)
        print(f"model: {parser.spec} ({parser.identity}) on {parser.device}, {parser.dtype}")
        print(f"model load (this process): {load_s:.2f} s")

        def parse() -> object:
            return parser.parse(prompt, beams=args.beams)

        def score() -> object:
            return parser.score_pair(prompt, lf0, lf1)

        rows = []
        for name, call in (("parse", parse), ("score", score)):
            cold = timed(call)
            warm = timed(call, args.repeat)
            rows.append((name, cold, warm))

        fresh = Parser(args.model, device=args.device, dtype=args.dtype, engine=TRANSFORMERS, cache=ResultCache(folder))
        fresh_parse = timed(lambda: fresh.parse(prompt, beams=args.beams), args.repeat)
        fresh_score = timed(lambda: fresh.score_pair(prompt, lf0, lf1), args.repeat)
        assert not fresh.loaded, "a warm call loaded the model"

        print(f"prompt: {len(prompt)} chars; beams {args.beams}; warm figures are medians of {args.repeat}")
        for name, cold, warm in rows:
            print(f"{name:6s} cold {cold * 1000:10.1f} ms   warm {warm * 1000:7.2f} ms   "
                  f"warm/cold {warm / cold:.5f}   speed-up x{cold / warm:,.0f}")
        print(f"fresh Parser, same cache (model never loaded): parse {fresh_parse * 1000:.2f} ms, "
              f"score {fresh_score * 1000:.2f} ms")
        print(f"cache: {cache.stats()['entries']} entries, {cache.stats()['bytes']:,} bytes")


if __name__ == "__main__":
    main()
