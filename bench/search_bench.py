"""Benchmark (issue #16): transformers' ``generate`` against the fast constrained search, same items.

Usage: ``python bench/search_bench.py [--model default] [--n-zero 4] [--n-few 4] [--batch 8]
[--searches generate,stepwise,fast] [--inspect] [--dtype float32] [--threads 2]``

For each search (``generate``: the reference step-by-step search; ``stepwise``: the fast search's
own loop feeding one token per pass; ``fast``: with forced-text runs fed ahead and prompts
leaving the batch when done), runs :func:`amp.parser.search.decode.parse_and_score_batch` (parse + P(LF0)
from one prompt pass, as sweeps do) on the same zero-shot and few-shot items, ``--batch`` items
per call, and prints time per item, logical decode steps per item (each prompt counts only the
steps it was live), model passes, and the share of fed tokens that were forced runs fed ahead.
It checks that every search returned the same beams (token ids) as the first one.  ``--inspect``
also times one live Parse & inspect of a 10-example prompt (warm model, no result cache): the old
page path (search, then a separate pair score, then a third forced pass for the top beam's steps)
against the one-pass path.  Ratios are from this one run; no assertions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp.evaluation import experiments as ex
from amp.parser.models.registry import load_model
from amp.parser.search.decode import beam_search_batch, beam_steps, parse_and_score_batch
from amp.parser.search.fastsearch import SearchStats
from amp.parser.search.scoring import score_pair


def run_search(lm, items, algorithm: str, batch: int) -> tuple[float, SearchStats, list]:  # type: ignore[no-untyped-def]
    stats = SearchStats()
    out = []
    t0 = time.perf_counter()
    for start in range(0, len(items), batch):
        chunk = items[start:start + batch]
        asks = [(it.prompt_text, it.lf0, it.lf1) for it in chunk]
        out += parse_and_score_batch(lm.model, lm.tokenizer, asks, beams=5, algorithm=algorithm, stats=stats)
    return time.perf_counter() - t0, stats, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--n-zero", type=int, default=4)
    ap.add_argument("--n-few", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--searches", default="generate,fast")
    ap.add_argument("--inspect", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", default="float32", help="the model's dtype (float32, int8, bfloat16)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    lm = load_model(args.model, device="cpu", dtype=args.dtype)
    plans = {
        "zero-shot": ex.plan_zeroshot(ex.ZeroShotConfig(types=("pp",), n=max(1, args.n_zero)))[: args.n_zero],
        "few-shot": ex.plan_fewshot(ex.FewShotConfig(types=("pp",), ratios=(0, 0.5, 1),
                                                     n_per_ratio=max(1, args.n_few)))[: args.n_few],
    }
    searches = [s.strip() for s in args.searches.split(",") if s.strip()]
    parse_and_score_batch(lm.model, lm.tokenizer, [(plans["few-shot"][0].prompt_text if args.n_few else
                                                    plans["zero-shot"][0].prompt_text, None, None)],
                          beams=2, max_new_tokens=2)  # masks and trie built once, outside the timings
    for name, items in plans.items():
        if not items:
            continue
        times: dict[str, float] = {}
        beams_of: dict[str, list] = {}
        for search in searches:
            seconds, st, out = run_search(lm, items, search, args.batch)
            times[search] = seconds
            beams_of[search] = [[b.token_ids for b in parse.beams] for parse, _pair in out]
            n = len(items)
            line = f"{name:9s} {search:8s}: {seconds / n:6.1f} s/item"
            if st.items:
                line += (f", {st.item_steps / n:5.1f} decode steps/item, {st.passes} passes for {st.steps} steps, "
                         f"forced runs {st.forced_tokens / max(1, st.fed_tokens):.0%} of fed tokens")
            print(line, flush=True)
        first = searches[0]
        for search in searches[1:]:
            same = beams_of[search] == beams_of[first]
            print(f"{name:9s} {search} / {first}: time {times[search] / times[first]:.2f}, same beams: {same}")
    if args.inspect:
        it = ex.plan_fewshot(ex.FewShotConfig(types=("pp",), ratios=(0.5,), n_per_ratio=1))[0]
        prompt, lf0, lf1 = it.prompt_text, it.lf0, it.lf1
        t0 = time.perf_counter()
        (parse,) = beam_search_batch(lm.model, lm.tokenizer, [prompt], beams=5, steps_for=0, algorithm="generate")
        score_pair(lm.model, lm.tokenizer, prompt, lf0, lf1)
        beam_steps(lm.model, lm.tokenizer, prompt, parse.beams[0])
        old = time.perf_counter() - t0
        t0 = time.perf_counter()
        parse_and_score_batch(lm.model, lm.tokenizer, [(prompt, lf0, lf1)], beams=5, algorithm="fast")
        new = time.perf_counter() - t0
        print(f"Parse & inspect, {len(it.prompt.examples)}-example prompt: old path {old:.1f} s, one-pass fast "
              f"{new:.1f} s, ratio {new / old:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
