"""Benchmark: examples per second of the zero-shot and few-shot loops, and the warm rerun.

Usage: ``python bench/experiments_bench.py [--model default] [--types pp] [--n-zero 2] [--n-few 1]
[--ratios 0,0.5,1] [--beams 5] [--threads 2]``

Runs :func:`amp.experiments.run_items` (constrained beam search + forced scoring of LF0/LF1 for
every item) on a zero-shot plan and on a few-shot plan, against a *temporary* result cache so the
first pass is cold; then reruns both plans on the same cache (what a second run of a sweep in
the app, or a resumed ``reproduce``, sees).  Prints examples/second for each loop and the warm /
cold time ratio — figures from one run, no assertions.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp import experiments as ex
from amp.cache import ResultCache
from amp.parser.parser import Parser


def timed_run(parser: Parser, items: list[ex.SweepItem], beams: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    records = list(ex.run_items(parser, items, beams=beams))
    errors = sum(1 for r in records if r.error)
    return time.perf_counter() - t0, errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--types", default="pp")
    ap.add_argument("--n-zero", type=int, default=2)
    ap.add_argument("--n-few", type=int, default=1)
    ap.add_argument("--ratios", default="0,0.5,1")
    ap.add_argument("--beams", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    types = tuple(t.strip() for t in args.types.split(",") if t.strip())
    ratios = tuple(float(r) for r in args.ratios.split(","))
    zero = ex.plan_zeroshot(ex.ZeroShotConfig(types=types, n=args.n_zero, beams=args.beams))
    few = ex.plan_fewshot(ex.FewShotConfig(types=types, ratios=ratios, n_per_ratio=args.n_few, beams=args.beams))

    with tempfile.TemporaryDirectory() as tmp:
        parser = Parser(args.model, device="cpu", cache=ResultCache(tmp))
        t0 = time.perf_counter()
        parser.load()
        print(f"model load: {time.perf_counter() - t0:.1f} s (not counted below)")
        rows = []
        for name, items in (("zero-shot", zero), ("few-shot", few)):
            cold, errors = timed_run(parser, items, args.beams)
            warm, _ = timed_run(Parser(args.model, device="cpu", cache=ResultCache(tmp)), items, args.beams)
            rows.append((name, len(items), cold, warm, errors))
        for name, n, cold, warm, errors in rows:
            print(f"{name:9s} loop: {n} examples, {n / cold:.3f} examples/s cold ({cold / n:.1f} s each), "
                  f"{n / warm:.1f} examples/s warm; warm/cold = {warm / cold:.5f}; errors {errors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
