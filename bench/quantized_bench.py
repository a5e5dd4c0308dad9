"""Benchmark (issue #16 point 3): the int8 CPU path against float32, on the same items, in one run.

Usage: ``python bench/quantized_bench.py [--model default] [--n-zero 4] [--n-few 2] [--ratios 0,0.5,1]
[--dtypes int8,bfloat16] [--batch 8] [--threads 2] [--layers]``

1. **Agreement on sweep items** — ``--n-zero`` zero-shot items per type and ``--n-few`` few-shot
   items per type and ratio (the defaults make 50 items over the five types), each parsed and
   scored (:meth:`amp.parser.Parser.parse_and_score_many`, constrained beam 5, the exact fast
   search) by the float32 model and by each of ``--dtypes`` (the ``int8`` path; ``bfloat16``,
   which is fast only on CPUs with bf16 instructions) against temporary result caches: top-beam
   agreement with float32 (same tokens; same match against LF0/LF1), |ΔP(LF0)| (mean, median,
   max), the share of items whose predicted reading (P(LF0) ≥ 0.5) flips, and time per item
   relative to float32.
2. ``--layers`` — which layers are worth quantising: the next-token log-probabilities of one
   10-example few-shot prompt with nothing, the output layer only (the ``int8`` path), every
   linear layer, and every linear layer but the MLP's output projection quantised, against
   float32: top-token agreement, mean |Δ log p(next)|, and the time of one 8-row decode step
   relative to float32 (the figures in :mod:`amp.parser.models.quantize`'s docstring).

Ratios are measured in this one run; no assertions.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import torch
from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp.cache import ResultCache
from amp.evaluation import experiments as ex
from amp.evaluation.matching import match_lf
from amp.parser.engines import TRANSFORMERS
from amp.parser.models.quantize import INT8, quantize_output_layer
from amp.parser.models.registry import load_model
from amp.parser.parser import Parser

TYPES = ("pp", "scope", "revscope", "bound", "conj")


def sweep_items(args: argparse.Namespace) -> list[ex.SweepItem]:
    ratios = tuple(float(r) for r in args.ratios.split(","))
    zero = ex.plan_zeroshot(ex.ZeroShotConfig(types=TYPES, n=args.n_zero)) if args.n_zero else []
    few = ex.plan_fewshot(ex.FewShotConfig(types=TYPES, ratios=ratios, n_per_ratio=args.n_few)) \
        if args.n_few else []
    return list(zero) + list(few)


def run(parser: Parser, items: list[ex.SweepItem], batch: int) -> tuple[float, list[Any]]:
    out: list[Any] = []
    t0 = time.perf_counter()
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        out += parser.parse_and_score_many([(it.prompt_text, it.lf0, it.lf1) for it in chunk], fmt=chunk[0].fmt,
                                           beams=5)
    return time.perf_counter() - t0, out


def agreement(args: argparse.Namespace) -> None:
    items = sweep_items(args)
    # one format per call: group by format, keep the plan's order within it
    items.sort(key=lambda it: it.fmt)
    results: dict[str, tuple[float, list[Any]]] = {}
    dtypes = ["float32", *[d.strip() for d in args.dtypes.split(",") if d.strip() and d.strip() != "float32"]]
    for dtype in dtypes:
        with tempfile.TemporaryDirectory() as tmp:
            parser = Parser(args.model, device="cpu", dtype=dtype, engine=TRANSFORMERS, cache=ResultCache(tmp))
            t0 = time.perf_counter()
            parser.load()
            print(f"{dtype:7s} model load {time.perf_counter() - t0:.1f} s (not counted)", flush=True)
            run(parser, items[:1], 1)  # grammar masks built outside the timing
            with tempfile.TemporaryDirectory() as tmp2:
                timed = Parser(args.model, device="cpu", dtype=dtype, engine=TRANSFORMERS, cache=ResultCache(tmp2))
                timed.backend.adopt(parser.backend.loaded_model())  # type: ignore[attr-defined]
                results[dtype] = run(timed, items, args.batch)
        print(f"{dtype:7s} {len(items)} items: {results[dtype][0] / len(items):.2f} s/item", flush=True)
    for dtype in dtypes[1:]:
        compare(dtype, items, results["float32"], results[dtype])


def compare(dtype: str, items: list[ex.SweepItem], exact: tuple[float, list[Any]], other: tuple[float, list[Any]]) -> None:
    (t_ref, ref), (t_q, quick) = exact, other
    same_top = same_match = flips = 0
    deltas = []
    for it, (p_ref, s_ref), (p_q, s_q) in zip(items, ref, quick, strict=True):
        top_ref = p_ref.beams[0] if p_ref.beams else None
        top_q = p_q.beams[0] if p_q.beams else None
        same_top += (top_ref.token_ids if top_ref else None) == (top_q.token_ids if top_q else None)
        same_match += match_lf(top_ref.text if top_ref else None, it.lf0, it.lf1, fmt=it.fmt) == \
            match_lf(top_q.text if top_q else None, it.lf0, it.lf1, fmt=it.fmt)
        deltas.append(abs(s_ref.p_lf0 - s_q.p_lf0))
        flips += (s_ref.p_lf0 >= 0.5) != (s_q.p_lf0 >= 0.5)
    n = len(items)
    print(f"{dtype} vs float32, top beam: same tokens {same_top}/{n}, same match (lf0/lf1/both/neither) "
          f"{same_match}/{n}")
    print(f"{dtype} vs float32, |dP(LF0)|: mean {statistics.fmean(deltas):.4f}, median "
          f"{statistics.median(deltas):.4f}, max {max(deltas):.4f}; predicted reading (P(LF0) >= 0.5) flips on "
          f"{flips}/{n}")
    print(f"{dtype} vs float32, time per item: {t_q / t_ref:.2f} ({t_ref / n:.2f} s -> {t_q / n:.2f} s)")


def layers(args: argparse.Namespace) -> None:
    lm = load_model(args.model, device="cpu", dtype="float32")
    item = ex.plan_fewshot(ex.FewShotConfig(types=("pp",), ratios=(0.5,), n_per_ratio=1))[0]
    ids = lm.tokenizer(item.prompt_text + " " + item.lf0, return_tensors="pt").input_ids

    def step_time(model: Any) -> tuple[float, torch.Tensor]:
        with torch.inference_mode():
            out = model(ids, use_cache=True)
            cache = out.past_key_values
            for layer in cache.layers:
                layer.keys = layer.keys.expand(8, -1, -1, -1).contiguous()
                layer.values = layer.values.expand(8, -1, -1, -1).contiguous()
            n, times = ids.shape[1], []
            for i in range(7):
                t0 = time.perf_counter()
                o = model(ids[:, -1:].expand(8, 1), past_key_values=cache, use_cache=True,
                          attention_mask=torch.ones(8, n + 1 + i, dtype=torch.long))
                torch.log_softmax(o.logits[:, -1].float(), -1)
                times.append(time.perf_counter() - t0)
            return statistics.median(times), torch.log_softmax(out.logits[0].float(), -1)

    def body(pred: Any) -> Any:
        model = copy.deepcopy(lm.model)
        names = {name for name, mod in model.named_modules() if isinstance(mod, torch.nn.Linear) and pred(name)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return quantize_dynamic(model, {name: per_channel_dynamic_qconfig for name in names}, dtype=torch.qint8)

    base, ref = step_time(lm.model)
    nxt = ids[0, 1:, None]
    variants = {
        "output layer only (int8)": lambda: quantize_output_layer(copy.deepcopy(lm.model)),
        "every linear layer": lambda: body(lambda name: True),
        "every linear but MLP out": lambda: body(lambda name: "down_proj" not in name),
        "bfloat16 (no int8)": lambda: copy.deepcopy(lm.model).to(torch.bfloat16),
    }
    print(f"{'float32':26s} step 1.00, top token agrees 100.0%, mean |dlogp| 0.000 ({ids.shape[1]} tokens)")
    for label, make in variants.items():
        t, lp = step_time(make())
        agree = (ref[:-1].argmax(-1) == lp[:-1].argmax(-1)).float().mean().item()
        dlogp = (ref[:-1].gather(1, nxt) - lp[:-1].gather(1, nxt)).abs().mean().item()
        print(f"{label:26s} step {t / base:.2f}, top token agrees {agree:.1%}, mean |dlogp| {dlogp:.3f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--n-zero", type=int, default=4)
    ap.add_argument("--n-few", type=int, default=2)
    ap.add_argument("--ratios", default="0,0.5,1")
    ap.add_argument("--dtypes", default=f"{INT8},bfloat16", help="dtypes compared with float32")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--layers", action="store_true", help="also compare which layers are quantised")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.layers:
        layers(args)
    agreement(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
