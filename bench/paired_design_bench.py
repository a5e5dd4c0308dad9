"""Benchmark: the paired few-shot design's effect on FDM/FIM and on the noise of the P(LF0) curve.

Usage: ``python bench/paired_design_bench.py [--model default] [--type pp] [--n 6]
[--ratios 0,0.3,0.5,0.7,1] [--seeds 0,1] [--parse] [--beams 5] [--threads 2] [--batch-size 8]``

Runs one small few-shot sweep (:func:`amp.evaluation.experiments.plan_fewshot` + :func:`run_items`: forced
decoding of LF0/LF1 for P(LF0) and FIM; with ``--parse`` also constrained beam search for the
top-1 prediction and FDM — on a shared 2-core CPU about 15 s per item without it, 2 minutes
with it) twice per seed with the same config: the **paired** design (the default, as in the original, docs/paper-notes.md §11: a test item
sees the same k example sentences in the same positions at every ratio, only their labels
change) and **independent** draws (``FewShotConfig.independent_draws=True``: fresh examples at
every ratio).  The result cache lives in a temporary ``AMP_CACHE_DIR``, so every figure is
computed; converted weights are read from the usual models folder (``AMP_MODELS_DIR``).

Prints, per design, numbers only (no AmP text):

* per seed and ratio: acc(LF0), acc(LF1) (``--parse``), mean P(LF0); FDM (paper Eq. 2, range
  0–2; ``--parse``) and FIM (Eq. 3) per seed, their mean and standard deviation over seeds;
* noise across ratio: the mean absolute change of an item's P(LF0) between adjacent ratios, the
  share of adjacent steps where it *falls* although r rises, and the share of adjacent steps
  where the top-1 label changes against the direction of r (LF1 → LF0 is expected as r rises);
* the example sentences a prompt shares with the same item's r = 0 prompt (paired: all k).

No assertions; ratios and differences are measured in this one run.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp import settings
from amp.cache import ResultCache
from amp.evaluation import experiments as ex
from amp.parser.engines import TRANSFORMERS
from amp.parser.parser import Parser
from amp.parser.search.settings import SearchSettings

DESIGNS: tuple[str, ...] = ("paired", "independent")


def _fmt(x: float) -> str:
    return "  nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _sd(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return statistics.stdev(values) if len(values) > 1 else math.nan


def _mean(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return statistics.fmean(values) if values else math.nan


class SeedRun(NamedTuple):
    """One design at one seed: the per-ratio and per-type frames and the records by (index, ratio)."""

    per_ratio: Any
    per_type: Any
    by_item: dict[tuple[int, float], Any]


@dataclass
class Noise:
    """Adjacent-ratio steps of one design over all seeds: |dP(LF0)| per step, steps where P(LF0)
    falls, top-1 label steps against the direction of r."""

    deltas: list[float] = field(default_factory=list)
    falls: int = 0
    steps: int = 0
    back: int = 0
    label_steps: int = 0


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--type", default="pp")
    ap.add_argument("--n", type=int, default=6, help="test sentences")
    ap.add_argument("--ratios", default="0,0.3,0.5,0.7,1")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--beams", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--mode", default="logical", choices=("logical", "paper"))
    ap.add_argument("--parse", action="store_true", help="also beam-search the top-1 prediction (FDM)")
    return ap.parse_args()


def run_design(parser: Any, args: argparse.Namespace, ratios: tuple[float, ...], seed: int, design: str,
               shared: list[int]) -> SeedRun:
    """Plan and run one design at one seed; the examples each prompt shares with r = ratios[0] go to ``shared``."""
    config = ex.FewShotConfig(types=(args.type,), ratios=ratios, n_per_ratio=args.n, seed=seed,
                              k=args.k, search=SearchSettings(beams=args.beams), mode=args.mode,
                              independent_draws=design == "independent")
    items = ex.plan_fewshot(config)
    first = {it.index: {e.utterance for e in it.prompt.examples} for it in items if it.ratio == ratios[0]}
    shared += [len(first[it.index] & {e.utterance for e in it.prompt.examples})
               for it in items if it.ratio != ratios[0]]
    t0 = time.perf_counter()
    records = list(ex.run_items(parser, items, config.search, mode=config.mode, parse=args.parse,
                                batch_size=args.batch_size))
    seconds = time.perf_counter() - t0
    errors = sum(1 for r in records if r.error)
    cached = sum(1 for r in records if r.cached)
    per_ratio, per_type = ex.fewshot_summary(records, args.mode)
    by_item = {(int(r.id.rsplit("/", 1)[1]), float(r.ratio)): r for r in records if not r.error}
    print(f"seed {seed} {design:11s}: {len(items)} items in {seconds:.0f} s "
          f"({seconds / max(1, len(items)):.1f} s each), cached {cached}, errors {errors}")
    return SeedRun(per_ratio, per_type, by_item)


def print_per_ratio(results: dict[str, dict[int, SeedRun]], ratios: tuple[float, ...], seeds: list[int]) -> None:
    print()
    print("per ratio (acc LF0 / acc LF1 / mean P(LF0)):")
    print(f"{'design':11s} {'seed':>4s} " + " ".join(f"{'r=' + format(r, 'g'):>17s}" for r in ratios))
    for design in DESIGNS:
        for seed in seeds:
            per_ratio = results[design][seed].per_ratio
            cells = []
            for r in ratios:
                row = per_ratio[per_ratio["ratio"] == r]
                if row.empty:
                    cells.append(f"{'-':>17s}")
                    continue
                row = row.iloc[0]
                cells.append(f"{_fmt(row.acc_lf0)}/{_fmt(row.acc_lf1)}/{_fmt(row.mean_p_lf0)}")
            print(f"{design:11s} {seed:4d} " + " ".join(f"{c:>17s}" for c in cells))


def noise(runs: list[SeedRun], n: int, ratios: tuple[float, ...]) -> Noise:
    """The adjacent-ratio steps of every item over ``runs`` (one per seed)."""
    out = Noise()
    for run in runs:
        for index in range(n):
            for lo, hi in zip(ratios, ratios[1:], strict=False):
                a, b = run.by_item.get((index, lo)), run.by_item.get((index, hi))
                if a is None or b is None:
                    continue
                if a.p_lf0 is not None and b.p_lf0 is not None and not (math.isnan(a.p_lf0) or math.isnan(b.p_lf0)):
                    out.deltas.append(abs(b.p_lf0 - a.p_lf0))
                    out.steps += 1
                    out.falls += b.p_lf0 < a.p_lf0
                if a.match in ("lf0", "lf1") and b.match in ("lf0", "lf1"):
                    out.label_steps += 1
                    out.back += a.match == "lf0" and b.match == "lf1"
    return out


def print_summary(results: dict[str, dict[int, SeedRun]], shared: dict[str, list[int]], args: argparse.Namespace,
                  ratios: tuple[float, ...], seeds: list[int]) -> None:
    print()
    header = (f"{'design':11s} {'FDM per seed':>20s} {'FDM mean':>8s} {'FDM sd':>7s} {'FIM per seed':>20s} "
              f"{'FIM mean':>8s} {'FIM sd':>7s} {'|dP| adj':>8s} {'P falls':>7s} {'label back':>10s} "
              f"{'shared/k':>8s}")
    print(header)
    summary: dict[str, dict[str, float]] = {}
    for design in DESIGNS:
        fdms = [float(results[design][s].per_type["FDM"].iloc[0]) for s in seeds]
        fims = [float(results[design][s].per_type["FIM"].iloc[0]) for s in seeds]
        steps = noise([results[design][s] for s in seeds], args.n, ratios)
        summary[design] = {"fdm": _mean(fdms), "fdm_sd": _sd(fdms), "fim": _mean(fims), "fim_sd": _sd(fims),
                           "delta": _mean(steps.deltas)}
        print(f"{design:11s} {' '.join(_fmt(x) for x in fdms):>20s} {_fmt(_mean(fdms)):>8s} {_fmt(_sd(fdms)):>7s} "
              f"{' '.join(_fmt(x) for x in fims):>20s} {_fmt(_mean(fims)):>8s} {_fmt(_sd(fims)):>7s} "
              f"{_fmt(_mean(steps.deltas)):>8s} {f'{steps.falls}/{steps.steps}':>7s} "
              f"{f'{steps.back}/{steps.label_steps}':>10s} "
              f"{_fmt(_mean([float(x) for x in shared[design]]) / args.k):>8s}")
    p, i = summary["paired"], summary["independent"]
    print()
    print(f"paired / independent: mean |dP(LF0)| between adjacent ratios {_fmt(p['delta'] / i['delta'])}, "
          f"FDM sd over seeds {_fmt(p['fdm_sd'] / i['fdm_sd']) if i['fdm_sd'] else 'n/a'}, "
          f"FIM sd over seeds {_fmt(p['fim_sd'] / i['fim_sd']) if i['fim_sd'] else 'n/a'}")


def main() -> int:
    args = parse_args()

    # Weights stay where they are; results go to a fresh temporary cache root.
    os.environ.setdefault(settings.MODELS_ENV_VAR, str(settings.models_dir()))
    tmp = tempfile.TemporaryDirectory(prefix="amp-paired-bench-")
    os.environ[settings.CACHE_ENV_VAR] = tmp.name
    torch.set_num_threads(args.threads)
    ratios = tuple(float(r) for r in args.ratios.split(","))
    seeds = [int(s) for s in args.seeds.split(",")]
    parser = Parser(args.model, device="cpu", engine=TRANSFORMERS, cache=ResultCache(str(Path(tmp.name) / "results")))
    t0 = time.perf_counter()
    parser.load()
    print(f"model {args.model} loaded in {time.perf_counter() - t0:.0f} s; type {args.type}, "
          f"{args.n} test sentences, ratios {list(ratios)}, seeds {seeds}, k {args.k}, "
          f"{'beams ' + str(args.beams) if args.parse else 'forced scoring only (no FDM)'}, mode {args.mode}")

    results: dict[str, dict[int, SeedRun]] = defaultdict(dict)
    shared: dict[str, list[int]] = defaultdict(list)
    for seed in seeds:
        for design in DESIGNS:
            results[design][seed] = run_design(parser, args, ratios, seed, design, shared[design])
    print_per_ratio(results, ratios, seeds)
    print_summary(results, shared, args, ratios, seeds)
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
