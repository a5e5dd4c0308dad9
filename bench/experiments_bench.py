"""Benchmark: examples per second of the zero-shot and few-shot loops, and the warm rerun.

Usage: ``python bench/experiments_bench.py [--model default] [--types pp] [--n-zero 2] [--n-few 1]
[--ratios 0,0.5,1] [--beams 5] [--threads 2] [--batch-sizes 1,8] [--separate] [--searches generate,fast]
[--dtype float32]``

Runs :func:`amp.evaluation.experiments.run_items` (constrained beam search + forced scoring of LF0/LF1 for
every item) on a zero-shot plan and on a few-shot plan, against a *temporary* result cache so
the first pass is cold, once per batch size (items per model call; each item's parse and P(LF0)
share one prompt pass); then reruns both plans on the warm cache (what a second run of a sweep
in the app, or a resumed ``reproduce``, sees).  ``--separate`` adds the baseline of separate
calls per item — :meth:`Parser.parse` then :meth:`Parser.score_pair`, each with its own prompt
pass — so the figures include "joint / separate".  ``--searches generate,fast`` runs every plan
once per constrained search (``$AMP_SEARCH``: transformers' ``generate``, the reference, against
the fast search of issue #16) on the same items and prints time fast / generate per plan
(``bench/search_bench.py`` adds decode steps per item and a same-beams check).  ``--dtype int8``
times the int8 CPU path.  Prints examples/second and ratios measured in this one run, no
assertions.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp.cache import ResultCache
from amp.evaluation import experiments as ex
from amp.parser.engines import TRANSFORMERS
from amp.parser.parser import Parser
from amp.parser.search.settings import SearchSettings


def timed_run(parser: Parser, items: list[ex.SweepItem], search: SearchSettings,
              batch_size: int | None) -> tuple[float, int]:
    t0 = time.perf_counter()
    records = list(ex.run_items(parser, items, search, batch_size=batch_size))
    errors = sum(1 for r in records if r.error)
    return time.perf_counter() - t0, errors


def timed_separate(parser: Parser, items: list[ex.SweepItem], search: SearchSettings) -> float:
    t0 = time.perf_counter()
    for it in items:
        parser.parse(it.prompt_text, search, fmt=it.fmt)
        parser.score_pair(it.prompt_text, it.lf0, it.lf1, fmt=it.fmt)
    return time.perf_counter() - t0


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--types", default="pp")
    ap.add_argument("--n-zero", type=int, default=2)
    ap.add_argument("--n-few", type=int, default=1)
    ap.add_argument("--ratios", default="0,0.5,1")
    ap.add_argument("--beams", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-sizes", default="8", help="comma-separated items per model call (e.g. 1,8)")
    ap.add_argument("--separate", action="store_true", help="also time separate parse + score calls per item")
    ap.add_argument("--searches", default="", help="comma-separated constrained searches to compare (generate,fast)")
    ap.add_argument("--dtype", default="float32", help="the model's dtype (float32, int8, bfloat16)")
    return ap.parse_args()


def measure_plan(name: str, items: list[ex.SweepItem], args: argparse.Namespace, sizes: list[int],
                 fresh: Callable[[str], Parser]) -> dict[str, float]:
    """Print one plan's examples/s cold per batch size, warm rerun / cold, and the ratios to the baseline."""
    n = len(items)
    search = SearchSettings(beams=args.beams)
    times: dict[str, float] = {}
    if args.separate:
        with tempfile.TemporaryDirectory() as tmp:
            times["separate"] = timed_separate(fresh(tmp), items, search)
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            cold, errors = timed_run(fresh(tmp), items, search, size)
            warm, _ = timed_run(fresh(tmp), items, search, size)
        times[f"batch {size}"] = cold
        print(f"{name:9s} loop, batch {size:2d}: {n} examples, {n / cold:.3f} examples/s cold "
              f"({cold / n:.1f} s each), warm rerun / cold = {warm / cold:.5f}; errors {errors}")
    if "separate" in times:
        print(f"{name:9s} loop, separate parse + score calls: {n / times['separate']:.3f} examples/s "
              f"({times['separate'] / n:.1f} s each)")
    base = times.get("separate") or times.get("batch 1")
    if base:
        for label, t in times.items():
            if t is not base:
                print(f"{name:9s} time {label} / {'separate' if 'separate' in times else 'batch 1'}: {t / base:.2f}")
    return times


def main() -> int:
    args = parse_args()
    torch.set_num_threads(args.threads)
    types = tuple(t.strip() for t in args.types.split(",") if t.strip())
    ratios = tuple(float(r) for r in args.ratios.split(","))
    sizes = [int(s) for s in args.batch_sizes.split(",") if s.strip()]
    plans = {
        "zero-shot": ex.plan_zeroshot(ex.ZeroShotConfig(types=types, n=args.n_zero)),
        "few-shot": ex.plan_fewshot(ex.FewShotConfig(types=types, ratios=ratios, n_per_ratio=args.n_few)),
    }
    loaded = Parser(args.model, device="cpu", dtype=args.dtype, engine=TRANSFORMERS)
    t0 = time.perf_counter()
    lm = loaded.load()
    print(f"model load: {time.perf_counter() - t0:.1f} s (not counted below)")

    def fresh(folder: str) -> Parser:
        parser = Parser(args.model, device="cpu", dtype=args.dtype, engine=TRANSFORMERS, cache=ResultCache(folder))
        parser.backend.adopt(lm)  # the loaded weights, shared between parsers
        return parser

    # Warm the grammar masks once so that no timed pass pays the one-off trie build.
    with tempfile.TemporaryDirectory() as tmp:
        first = plans["zero-shot"][:1] or plans["few-shot"][:1]
        timed_run(fresh(tmp), first, SearchSettings(beams=args.beams), 1)
    searches = [s.strip() for s in args.searches.split(",") if s.strip()] or [""]
    timed: dict[str, dict[str, dict[str, float]]] = {}
    for search in searches:
        if search:
            os.environ["AMP_SEARCH"] = search
            print(f"-- search: {search}")
        for name, items in plans.items():
            if items:
                timed.setdefault(name, {})[search] = measure_plan(name, items, args, sizes, fresh)
    if len(searches) > 1:
        first = searches[0]
        for name, per in timed.items():
            for search in searches[1:]:
                for label, t in per[search].items():
                    print(f"{name:9s} {label}: time {search} / {first} = {t / per[first][label]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
