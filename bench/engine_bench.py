"""Benchmark (issue #29 point 5): transformers float32 (the fast search) against llama.cpp (the GGUF as shipped).

Usage: ``python bench/engine_bench.py [--n-zero 4] [--n-few 2] [--ratios 0,0.5,1] [--threads 2]
[--out bench/results/engine_bench.txt]``

On the same sweep items, in one run (each engine in its own child process, one after the other,
so each one's peak RSS is its own): ``--n-zero`` zero-shot items per type and ``--n-few`` few-shot
items per type and ratio (the defaults: 20 + 30 = 50 items over the five types), each parsed and
scored (:meth:`amp.parser.Parser.parse_and_score_many`, constrained beam 5) against a temporary
result cache, with the model loaded before the timing:

* time per zero-shot and per few-shot item, and the ratio transformers / llama.cpp;
* Parse & inspect of one sentence under a 10-example prompt (:func:`amp.evaluation.inspection.inspect`,
  cold cache, warm model): wall time;
* decode steps (llama.cpp: logical steps and batched decode calls per item);
* peak RSS of each engine's process;
* the agreement table of the issue's rule for making llama.cpp the default for a GGUF on a CPU:
  the same LF0/LF1/both/neither match of the top beam on >= 48/50 items, mean |dP(LF0)| <= 0.02,
  no reading flip (P(LF0) >= 0.5 on one side, < 0.5 on the other).

Ratios are measured in this one run; no assertions.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp.cache import ResultCache
from amp.evaluation.inspection import inspect
from amp.evaluation.matching import match_lf
from amp.parser.engines import LLAMA_CPP, TRANSFORMERS
from amp.parser.parser import Parser

TYPES = ("pp", "scope", "revscope", "bound", "conj")
ENGINES = (TRANSFORMERS, LLAMA_CPP)


def sweep_items(n_zero: int, n_few: int, ratios: str, types: tuple[str, ...] = TYPES) -> list[Any]:
    from amp.evaluation import experiments as ex  # late: start-up cost (pandas: only the children plan items)

    rs = tuple(float(r) for r in ratios.split(","))
    zero = ex.plan_zeroshot(ex.ZeroShotConfig(types=types, n=n_zero)) if n_zero else []
    few = ex.plan_fewshot(ex.FewShotConfig(types=types, ratios=rs, n_per_ratio=n_few)) if n_few else []
    items = list(zero) + list(few)
    items.sort(key=lambda it: it.fmt)  # one format per call
    return items


def child(args: argparse.Namespace) -> int:
    """One engine's run; prints one JSON line."""
    import torch  # late: start-up cost (torch: only the children load a model)

    torch.set_num_threads(args.threads)
    items = sweep_items(args.n_zero, args.n_few, args.ratios, tuple(args.types.split(",")))
    engine = args.child
    kw: dict[str, Any] = {"dtype": "float32", "device": "cpu"} if engine == TRANSFORMERS else {}
    out: dict[str, Any] = {"engine": engine, "items": []}
    with tempfile.TemporaryDirectory() as tmp:
        parser = Parser(args.model, engine=engine, cache=ResultCache(tmp), **kw)
        if engine == LLAMA_CPP:
            parser.backend.threads = args.threads  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        parser.load()
        out["load_s"] = time.perf_counter() - t0
        warm = items[0]
        parser.parse_and_score_many([(warm.prompt_text + " ", warm.lf0, warm.lf1)], fmt=warm.fmt, beams=5)
        decoder = getattr(parser.backend, "_decoder", None)
        for it in items:
            steps0 = (decoder.stats.steps, decoder.stats.passes) if decoder is not None else (0, 0)
            t0 = time.perf_counter()
            parse, pair = parser.parse_and_score_many([(it.prompt_text, it.lf0, it.lf1)], fmt=it.fmt, beams=5)[0]
            dt = time.perf_counter() - t0
            top = parse.beams[0] if parse.beams else None
            steps = ((decoder.stats.steps - steps0[0], decoder.stats.passes - steps0[1])
                     if decoder is not None else (None, None))
            out["items"].append({"few": it.ratio is not None, "fmt": it.fmt, "lf0": it.lf0, "lf1": it.lf1,
                                 "top": top.text if top else None, "top_ids": list(top.token_ids) if top else None,
                                 "p_lf0": pair.p_lf0 if pair else None, "seconds": dt, "steps": steps[0],
                                 "passes": steps[1]})
            print(f"# {engine} item {len(out['items'])}/{len(items)} {dt:.1f} s", file=sys.stderr, flush=True)
        few = next(it for it in items if it.ratio is not None and it.fmt == "fol") if any(
            it.ratio is not None for it in items) else items[0]
        t0 = time.perf_counter()
        inspect(parser, few.prompt_text + "  ", few.lf0, few.lf1, fmt=few.fmt)  # a prompt not yet cached
        out["inspect_s"] = time.perf_counter() - t0
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
    return 0


def report(runs: dict[str, dict[str, Any]], lines: list[str]) -> None:
    ref, fast = runs[TRANSFORMERS], runs[LLAMA_CPP]

    def per(run: dict[str, Any], few: bool) -> float:
        xs = [r["seconds"] for r in run["items"] if r["few"] == few]
        return statistics.fmean(xs) if xs else float("nan")

    for label, few in (("zero-shot", False), ("few-shot", True)):
        a, b = per(ref, few), per(fast, few)
        lines.append(f"time per {label} item: transformers float32 {a:.2f} s, llama.cpp {b:.2f} s "
                     f"(ratio {a / b:.2f}x)")
    lines.append(f"Parse & inspect (10-example prompt, cold cache, warm model): transformers {ref['inspect_s']:.2f} s, "
                 f"llama.cpp {fast['inspect_s']:.2f} s (ratio {ref['inspect_s'] / fast['inspect_s']:.2f}x)")
    steps = [r["steps"] for r in fast["items"] if r["steps"] is not None]
    passes = [r["passes"] for r in fast["items"] if r["passes"] is not None]
    if steps:
        lines.append(f"llama.cpp decode steps per item: mean {statistics.fmean(steps):.1f} logical steps, "
                     f"{statistics.fmean(passes):.1f} batched decode calls of the search")
    lines.append(f"model load: transformers {ref['load_s']:.1f} s, llama.cpp {fast['load_s']:.1f} s; "
                 f"peak RSS: transformers {ref['peak_rss_mb']:.0f} MB, llama.cpp {fast['peak_rss_mb']:.0f} MB")
    n = len(ref["items"])
    same_match = same_top = flips = 0
    deltas = []
    for r, f in zip(ref["items"], fast["items"], strict=True):
        same_top += r["top_ids"] == f["top_ids"]
        same_match += match_lf(r["top"], r["lf0"], r["lf1"], fmt=r["fmt"]) == \
            match_lf(f["top"], f["lf0"], f["lf1"], fmt=f["fmt"])
        if r["p_lf0"] is not None and f["p_lf0"] is not None:
            deltas.append(abs(r["p_lf0"] - f["p_lf0"]))
            flips += (r["p_lf0"] >= 0.5) != (f["p_lf0"] >= 0.5)
    mean_d = statistics.fmean(deltas) if deltas else float("nan")
    need = n - 2 * n // 50 if n >= 50 else None
    lines.append(f"agreement on {n} items: same LF0/LF1/both/neither match {same_match}/{n}, same top-beam tokens "
                 f"{same_top}/{n}; |dP(LF0)| mean {mean_d:.4f}, max {max(deltas, default=float('nan')):.4f}; "
                 f"reading flips {flips}/{n}")
    holds = n >= 50 and same_match >= (need or 0) and mean_d <= 0.02 and flips == 0
    lines.append(f"default rule (>= 48/50 same match, mean |dP(LF0)| <= 0.02, no flip, on 50 items): "
                 f"{'holds' if holds else 'does not hold' if n >= 50 else f'not decidable on {n} items'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--n-zero", type=int, default=4)
    ap.add_argument("--n-few", type=int, default=2)
    ap.add_argument("--ratios", default="0,0.5,1")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--types", default=",".join(TYPES), help="sentence types (default: all five)")
    ap.add_argument("--parallel", action="store_true",
                    help="run the two engines at the same time (a busy machine; times then share the CPU)")
    ap.add_argument("--out", default=None, help="also write the report to this file")
    ap.add_argument("--child", choices=ENGINES, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    runs: dict[str, dict[str, Any]] = {}
    lines = [f"engine bench: --n-zero {args.n_zero} --n-few {args.n_few} --ratios {args.ratios} "
             f"--types {args.types} --threads {args.threads}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]
    with open("/proc/loadavg") as fh:
        lines.append(f"load average at start: {fh.read().split()[0]}")
    procs = {}
    for engine in (LLAMA_CPP, TRANSFORMERS):
        cmd = [sys.executable, __file__, "--child", engine, "--model", args.model, "--n-zero", str(args.n_zero),
               "--n-few", str(args.n_few), "--ratios", args.ratios, "--threads", str(args.threads),
               "--types", args.types]
        procs[engine] = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        if not args.parallel:
            procs[engine].wait()
    for engine, proc in procs.items():
        stdout, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"the {engine} run failed (exit {proc.returncode})")
        runs[engine] = json.loads(stdout.strip().splitlines()[-1])
    if args.parallel:
        lines.append("the two engines ran at the same time (--parallel): their times shared the CPU")
    with open("/proc/loadavg") as fh:
        lines.append(f"load average at the end: {fh.read().split()[0]}")
    report(runs, lines)
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
