"""Benchmark (issue #46 point 1): llama.cpp's adaptive thread count against fixed counts, quiet and busy.

Usage: ``python bench/threads_bench.py [--reps 3] [--fixed 1,2] [--type pp] [--out bench/results/threads.txt]``

The default model's GGUF (the embedded model, as :class:`amp.parser.Parser` loads it for the
llama.cpp engine) parses and scores one zero-shot sweep item (constrained beam 5, no result
cache), loaded and warmed before any timing, under two conditions:

* quiet: nothing started by the bench (other programs on the machine are measured and reported);
* busy: one competing process spinning on one core (``while True: pass``), started by the bench
  before the condition and stopped after it.

In each condition the thread settings take turns, ``--reps`` rounds of: the adaptive default
(:mod:`amp.parser.backends.llama_threads`: the free cores, measured again at each parse) and each
fixed count of ``--fixed``.  Reported: every parse's seconds, the median per setting, the counts the
adaptive default chose, the median's ratio to the best fixed count's (the goal: within 1.3x, in
both conditions), the CPU other processes used during each condition (``/proc/stat`` less this
process), and the load average.  Ratios are measured in this one run; no assertions.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp.parser.backends.llama_threads import available_cores, load_between, read_cpu_times
from amp.parser.engines import LLAMA_CPP
from amp.parser.parser import Parser

#: The goal: the adaptive default's median within this factor of the best fixed count's.
GOAL = 1.3
ADAPTIVE = "adaptive"


def _item(kind: str) -> Any:
    from amp.evaluation import experiments as ex  # late: start-up cost (pandas)

    return ex.plan_zeroshot(ex.ZeroShotConfig(types=(kind,), n=1))[0]


def _loadavg() -> str:
    with open("/proc/loadavg") as fh:
        return fh.read().split()[0]


def condition(parser: Parser, item: Any, settings: list[int | None], reps: int) -> dict[str, Any]:
    """``reps`` rounds of one timed parse per setting; the seconds and chosen counts per setting."""
    backend: Any = parser.backend
    seconds: dict[str, list[float]] = {_name(s): [] for s in settings}
    chosen: list[int] = []
    before = read_cpu_times()
    for r in range(reps):
        for s in settings:
            backend.threads = s
            t0 = time.perf_counter()
            parser.parse_and_score_many([(item.prompt_text, item.lf0, item.lf1)], fmt=item.fmt, beams=5)
            dt = time.perf_counter() - t0
            seconds[_name(s)].append(dt)
            if s is None:
                chosen.append(backend.threads_now)
            print(f"# round {r + 1}/{reps} {_name(s)}: {dt:.2f} s (threads {backend.threads_now})",
                  file=sys.stderr, flush=True)
    after = read_cpu_times()
    others = (load_between(before, after).others(available_cores())
              if before is not None and after is not None else float("nan"))
    return {"seconds": seconds, "chosen": chosen, "others": others}


def _name(s: int | None) -> str:
    return ADAPTIVE if s is None else f"fixed {s}"


def report(label: str, res: dict[str, Any], lines: list[str]) -> float:
    """Lines for one condition; returns the adaptive default's ratio to the best fixed count."""
    med = {name: statistics.median(xs) for name, xs in res["seconds"].items()}
    fixed = {name: m for name, m in med.items() if name != ADAPTIVE}
    best = min(fixed, key=lambda n: fixed[n])
    ratio = med[ADAPTIVE] / fixed[best]
    lines.append(f"{label}: other processes used {res['others']:.2f} cores during it")
    for name, xs in res["seconds"].items():
        lines.append(f"  {name:9s} median {med[name]:6.2f} s  ({', '.join(f'{x:.2f}' for x in xs)})"
                     + (f"  threads chosen: {res['chosen']}" if name == ADAPTIVE else ""))
    ratios = ", ".join(f"{name} {med[name] / med[ADAPTIVE]:.2f}x" for name in fixed)
    lines.append(f"  adaptive / best fixed ({best}): {ratio:.2f}x  ({'within' if ratio <= GOAL else 'NOT within'} "
                 f"{GOAL}x); each fixed count / adaptive: {ratios}")
    return ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--fixed", default="1,2", help="fixed thread counts to compare (comma-separated)")
    ap.add_argument("--type", default="pp", help="sentence type of the zero-shot item")
    ap.add_argument("--conditions", default="quiet,busy", help="which conditions to run (default: both)")
    ap.add_argument("--out", default=None, help="also write the report to this file (after each condition)")
    args = ap.parse_args()
    conditions = args.conditions.split(",")
    if not conditions or not set(conditions) <= {"quiet", "busy"}:
        raise SystemExit("error: --conditions takes quiet, busy or quiet,busy")
    settings: list[int | None] = [None, *(int(x) for x in args.fixed.split(","))]
    item = _item(args.type)
    parser = Parser("default", engine=LLAMA_CPP, cache=False)
    parser.load()
    parser.parse_and_score_many([(item.prompt_text, item.lf0, item.lf1)], fmt=item.fmt, beams=5)  # warm
    lines = [f"threads bench: one zero-shot {args.type} item, beam 5, --reps {args.reps}, fixed {args.fixed}; "
             f"{len(available_cores())} cores in this process's affinity; "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
             f"load average at start: {_loadavg()}"]
    ratios = {}
    if "quiet" in conditions:
        res = condition(parser, item, settings, args.reps)
        ratios["quiet"] = report("quiet (nothing started by the bench)", res, lines)
        _write(lines, args.out)
    if "busy" in conditions:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            time.sleep(1.0)
            res = condition(parser, item, settings, args.reps)
        finally:
            spinner.terminate()
            spinner.wait()
        ratios["busy"] = report("busy (one process spinning on one core)", res, lines)
    lines.append(f"load average at the end: {_loadavg()}")
    ok = all(r <= GOAL for r in ratios.values())
    lines.append(f"goal (adaptive within {GOAL}x of the best fixed count, {' and '.join(ratios)}): "
                 f"{'met' if ok else 'not met'}")
    _write(lines, args.out)
    print("\n".join(lines))
    return 0


def _write(lines: list[str], out: str | None) -> None:
    """The report so far, to ``out`` (a run cut short keeps its finished conditions)."""
    if out:
        Path(out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
