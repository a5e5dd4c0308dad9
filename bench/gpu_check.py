"""GPU check: throughput, memory and memory-bandwidth use of the parser on one accelerator.

One prepared, unattended script for a machine with an NVIDIA GPU (issue #10, point 7).  For the
embedded default model (Gemma 3 270M) and every ``--model PATH`` given, loaded in ``--dtype``
(default bfloat16) on ``--device`` (default cuda), it measures, calling the decode functions
directly (no result cache, no :class:`~amp.parser.parser.Parser`):

* ``beam5_bN`` — grammar-constrained beam-5 search (:func:`amp.parser.decode.beam_search_batch`)
  at batch 1 / 8 / 32 items per call: items/s, generated tokens/s (tokens of all returned
  beams), decode steps/s;
* ``score`` — forced scoring of LF0+LF1 (:func:`amp.parser.scoring.score_pairs`): items/s;
* ``joint_bN`` — parse + P(LF0) sharing one prompt pass
  (:func:`amp.parser.decode.parse_and_score_batch`) at ``--joint-batch`` items per call: items/s;
* peak GPU memory per phase (``torch.cuda.max_memory_allocated``, reset before each phase);
* the decode rate as a fraction of the memory-bandwidth bound: ``weight bytes × decode steps /
  time ÷ bandwidth`` — once over the phase's wall time (``bw%``) and once over the time spent
  inside the decode forwards only (``bw%fwd``; decode passes of the base model, timed with a
  device synchronise around each).  The bandwidth is ``--bandwidth-gbs`` if given, else looked
  up by device name (A100/H100/H200/L4/…), else 4800 GB/s (H200); the table says which.

Prompts are realistic and fixed: 10-example mixed (few-shot) prompts and zero-shot prompts for
the pp / scope / bound / conj types, planned with :mod:`amp.evaluation.experiments` (seed 0); half of each
phase's batches are few-shot, half zero-shot, a batch holding one kind (as a sweep runs its plan).
Every phase starts with an untimed warm-up call at its batch size; a phase stops early once it
has run ``--phase-s`` seconds (the items done are counted), and phases that would start after
the overall ``--budget-s`` are skipped, so the script finishes in bounded time.  A failing
phase (e.g. out of memory at batch 32) is reported and the rest still run.

Output: a table on stdout and a JSON file (``--json-out``; default ``$OUT/gpu_check.json`` when
``$OUT`` is set, else ``gpu_check.json`` in the current folder).

Usage::

    python bench/gpu_check.py                                   # default model, cuda, bf16
    python bench/gpu_check.py --model /path/to/model --model Qwen/Qwen2.5-0.5B
    python bench/gpu_check.py --device cpu --dtype float32 --quick --model tiny/ --skip-default

``--quick``: batch sizes 1/2 and 2 items per phase (a smoke test, e.g. on CPU).  Asking for
cuda where there is none exits with code 2 and one ``error:`` line.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import json
import os
import platform
import random
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: Peak memory bandwidth in GB/s by device-name fragment; the first match wins (most specific first).
BANDWIDTH_TABLE: tuple[tuple[str, float], ...] = (
    ("GH200", 4000.0),
    ("H200", 4800.0),
    ("H100 NVL", 3900.0),
    ("H100 PCIE", 2000.0),
    ("H100", 3350.0),  # SXM5
    ("H800", 3350.0),
    ("B200", 8000.0),
    ("A100-SXM4-80GB", 2039.0),
    ("A100 80GB PCIE", 1935.0),
    ("A100-PCIE-80GB", 1935.0),
    ("A100", 1555.0),  # 40 GB SXM4 / PCIe
    ("A800", 2039.0),
    ("L40S", 864.0),
    ("L40", 864.0),
    ("L4", 300.0),
    ("A10G", 600.0),
    ("A10", 600.0),
    ("A40", 696.0),
    ("A30", 933.0),
    ("V100", 900.0),
    ("T4", 320.0),
    ("RTX 4090", 1008.0),
    ("RTX 3090", 936.0),
)
DEFAULT_BANDWIDTH_GBS = 4800.0  # H200
TYPES = ("pp", "scope", "bound", "conj")
BEAMS = 5
SEED = 0


# --------------------------------------------------------------------------- helpers


def bandwidth_for(device_name: str, given: float | None) -> tuple[float, str]:
    """``(GB/s, where it came from)``: the flag, else the table by device name, else the H200 default."""
    if given is not None:
        return float(given), "--bandwidth-gbs"
    upper = device_name.upper()
    for fragment, gbs in BANDWIDTH_TABLE:
        if fragment.upper() in upper:
            return gbs, f"table ({fragment})"
    return DEFAULT_BANDWIDTH_GBS, f"default {DEFAULT_BANDWIDTH_GBS:.0f} GB/s (H200; {device_name!r} not in the table)"


def default_json_out() -> Path:
    out = os.environ.get("OUT", "").strip()
    return (Path(out) if out else Path.cwd()) / "gpu_check.json"


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]


def plan_items(quick: bool) -> tuple[list[Any], list[Any]]:
    """(few-shot items, zero-shot items), each interleaved round-robin over :data:`TYPES`."""
    from amp.evaluation import experiments as ex

    if quick:
        few = ex.plan_fewshot(ex.FewShotConfig(types=TYPES, ratios=(0.5,), n_per_ratio=1, k=10, seed=SEED, beams=BEAMS))
        zero = ex.plan_zeroshot(ex.ZeroShotConfig(types=TYPES, n=1, seed=SEED, beams=BEAMS))
    else:
        few = ex.plan_fewshot(
            ex.FewShotConfig(types=TYPES, ratios=(0.0, 0.3, 0.7, 1.0), n_per_ratio=2, k=10, seed=SEED, beams=BEAMS)
        )
        zero = ex.plan_zeroshot(ex.ZeroShotConfig(types=TYPES, n=8, seed=SEED, beams=BEAMS))

    def round_robin(items: list[Any]) -> list[Any]:
        by_type: dict[str, list[Any]] = {}
        for it in items:
            by_type.setdefault(it.type, []).append(it)
        out: list[Any] = []
        for j in range(max(len(v) for v in by_type.values())):
            out += [v[j] for v in by_type.values() if j < len(v)]
        return out

    return round_robin(few), round_robin(zero)


def batches_for(few: list[Any], zero: list[Any], n_items: int, batch_size: int) -> list[list[Any]]:
    """Full batches of ``batch_size`` covering ``n_items`` (rounded up to whole batches), half of
    the batches few-shot (rounded up) and half zero-shot, alternating; a batch holds one kind only.

    Items are reused cyclically if a pool is smaller than asked.
    """
    n_batches = -(-n_items // batch_size)
    kinds: list[list[list[Any]]] = []
    for pool, nb in ((few, (n_batches + 1) // 2), (zero, n_batches // 2)):
        chosen = [pool[i % len(pool)] for i in range(nb * batch_size)] if pool else []
        kinds.append([chosen[i : i + batch_size] for i in range(0, len(chosen), batch_size)])
    # Alternate the kinds, so that a phase stopped early by --phase-s still saw both.
    return [b for pair in zip(*kinds) for b in pair] + kinds[0][len(kinds[1]):] + kinds[1][len(kinds[0]):]


#: Widest input of a forward that still counts as a decode pass: one token per row for
#: ``generate``, and a short grammar-forced run fed ahead by the fast search; prompt passes are
#: hundreds of tokens wide.
DECODE_PASS_MAX_WIDTH = 8


class ForwardCounter:
    """Wraps the base model's ``forward`` (both ``generate``, through the LM's forward, and the fast
    search, which calls the base model and the output layer itself, go through it): counts decode
    passes (inputs at most :data:`DECODE_PASS_MAX_WIDTH` tokens wide) and their time (with a device
    synchronise before and after each, so the time is the GPU's)."""

    def __init__(self, model: Any, sync: Callable[[], None]) -> None:
        self.model = getattr(model, "base_model", None) or model
        self.sync = sync
        self.inner = self.model.forward
        self.steps = 0
        self.seconds = 0.0
        self.forwards = 0

        @functools.wraps(self.inner)  # keeps the signature generate() and prefix.py inspect
        def counted(*a: Any, **k: Any) -> Any:
            ids = k.get("input_ids")
            if ids is None and a:
                ids = a[0]
            if ids is None:
                ids = k.get("inputs_embeds")
            one = ids is not None and getattr(ids, "ndim", 0) >= 2 and int(ids.shape[1]) <= DECODE_PASS_MAX_WIDTH
            self.forwards += 1
            if not one:
                return self.inner(*a, **k)
            self.sync()
            t = time.perf_counter()
            out = self.inner(*a, **k)
            self.sync()
            self.seconds += time.perf_counter() - t
            self.steps += 1
            return out

        self.model.forward = counted

    def reset(self) -> None:
        self.steps, self.seconds, self.forwards = 0, 0.0, 0

    def remove(self) -> None:
        self.model.forward = self.inner


# --------------------------------------------------------------------------- phases


def run_model(spec: str, args: argparse.Namespace, few: list[Any], zero: list[Any], deadline: float,
              bandwidth_gbs: float, say: Callable[[str], None]) -> dict[str, Any]:
    """Load ``spec`` and run every phase on it; never raises (errors land in the record)."""
    import torch

    from amp.parser.decode import beam_search_batch, parse_and_score_batch
    from amp.parser.model_registry import load_model
    from amp.parser.scoring import score_pairs

    record: dict[str, Any] = {"spec": spec, "phases": []}
    cuda = args.device.startswith("cuda")

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    t0 = time.perf_counter()
    try:
        lm = load_model(spec, device=args.device, dtype=args.dtype)
    except Exception as exc:  # noqa: BLE001 - reported, the next model still runs
        record["error"] = f"load failed: {one_line(exc)}"
        say(f"[{spec}] {record['error']}")
        return record
    model, tok = lm.model, lm.tokenizer
    params = list(model.parameters())
    weight_bytes = sum(p.numel() * p.element_size() for p in params)
    record.update(
        source=lm.source,
        dtype=lm.dtype,
        load_s=round(time.perf_counter() - t0, 2),
        parameters=sum(p.numel() for p in params),
        weight_bytes=weight_bytes,
        weights_mib=round(weight_bytes / 2**20, 1),
        vocab=len(tok),
        resident_mib=round(torch.cuda.memory_allocated() / 2**20, 1) if cuda else None,
    )
    say(f"[{spec}] loaded in {record['load_s']:.1f} s: {lm.source}; {record['parameters']:,} parameters, "
        f"{record['weights_mib']:.0f} MiB of weights in {lm.dtype}, vocabulary {len(tok):,}")
    counter = ForwardCounter(model, sync)
    mnt = args.max_new_tokens

    def seed_all() -> None:
        random.seed(SEED)
        torch.manual_seed(SEED)

    try:
        # One full untimed search builds the grammar automaton, masker and its first masks.
        seed_all()
        t = time.perf_counter()
        try:
            beam_search_batch(model, tok, [few[0].prompt_text], beams=BEAMS, max_new_tokens=mnt)
            say(f"[{spec}] model warm-up (one full beam-{BEAMS} search): {time.perf_counter() - t:.1f} s")
        except Exception as exc:  # noqa: BLE001
            say(f"[{spec}] model warm-up failed: {one_line(exc)}")

        def beam_call(batch: list[Any], max_new: int | None) -> tuple[int, int]:
            results = beam_search_batch(model, tok, [it.prompt_text for it in batch], beams=BEAMS,
                                        max_new_tokens=max_new)
            return len(results), sum(len(b.token_ids) for r in results for b in r.beams)

        def score_call(batch: list[Any], _max_new: int | None) -> tuple[int, int]:
            out = score_pairs(model, tok, [(it.prompt_text, it.lf0, it.lf1) for it in batch])
            return len(out), 0

        def joint_call(batch: list[Any], max_new: int | None) -> tuple[int, int]:
            out = parse_and_score_batch(model, tok, [(it.prompt_text, it.lf0, it.lf1) for it in batch],
                                        beams=BEAMS, max_new_tokens=max_new)
            return len(out), sum(len(b.token_ids) for parse, _pair in out for b in parse.beams)

        phases: list[tuple[str, int, int, Callable[[list[Any], int | None], tuple[int, int]]]] = []
        for b, n in zip(args.batch_sizes, args.items, strict=True):
            phases.append((f"beam{BEAMS}_b{b}", b, n, beam_call))
        phases.append(("score", args.score_batch, args.score_items, score_call))
        phases.append((f"joint_b{args.joint_batch}", args.joint_batch, args.joint_items, joint_call))

        for name, bsize, n_items, call in phases:
            row: dict[str, Any] = {"phase": name, "batch_size": bsize}
            record["phases"].append(row)
            if time.perf_counter() >= deadline:
                row["error"] = "skipped: time budget (--budget-s) used up"
                say(f"[{spec}] {name}: {row['error']}")
                continue
            batches = batches_for(few, zero, n_items, bsize)
            try:
                seed_all()
                if cuda:
                    torch.cuda.empty_cache()
                # Warm-up at this batch size: same shapes, a short generation budget.
                call(batches[0], min(mnt, 16) if mnt else 16)
                sync()
                if cuda:
                    torch.cuda.reset_peak_memory_stats()
                counter.reset()
                done = tokens = 0
                ran: list[Any] = []
                cap = time.perf_counter() + args.phase_s
                start = time.perf_counter()
                for batch in batches:
                    if done and (time.perf_counter() >= cap or time.perf_counter() >= deadline):
                        row["note"] = f"stopped after {done}/{n_items} items (--phase-s / --budget-s)"
                        break
                    k, toks = call(batch, mnt)
                    done += k
                    tokens += toks
                    ran += batch
                sync()
                seconds = time.perf_counter() - start
                n_few = sum(1 for it in ran if it.ratio is not None)
                prompt_tokens = [len(tok(it.prompt_text).input_ids) for it in ran]
            except Exception as exc:  # noqa: BLE001 - e.g. OOM at batch 32: report, go on
                row["error"] = one_line(exc)
                if args.verbose:
                    traceback.print_exc()
                say(f"[{spec}] {name}: FAILED {row['error']}")
                with contextlib.suppress(Exception):
                    if cuda:
                        torch.cuda.empty_cache()
                continue
            steps, fwd_s = counter.steps, counter.seconds
            row.update(
                items=done,
                few_shot=n_few,
                zero_shot=done - n_few,
                mean_prompt_tokens=round(sum(prompt_tokens) / len(prompt_tokens), 1) if prompt_tokens else None,
                seconds=round(seconds, 3),
                items_per_s=done / seconds if seconds > 0 else None,
                gen_tokens=tokens,
                tokens_per_s=tokens / seconds if tokens and seconds > 0 else None,
                decode_steps=steps,
                steps_per_s=steps / seconds if steps and seconds > 0 else None,
                decode_forward_s=round(fwd_s, 3),
                forwards=counter.forwards,
                peak_mem_mib=round(torch.cuda.max_memory_allocated() / 2**20, 1) if cuda else None,
            )
            if steps:
                bound = bandwidth_gbs * 1e9
                row["bw_fraction"] = weight_bytes * steps / seconds / bound
                row["bw_fraction_forward"] = weight_bytes * steps / fwd_s / bound if fwd_s > 0 else None
            say(f"[{spec}] {name}: {done} items in {seconds:.1f} s ({row['items_per_s']:.2f} items/s)")
    finally:
        counter.remove()
        model = tok = lm = None  # drop this model before the next one loads
        with contextlib.suppress(Exception):
            from amp.parser.model_registry import unload_models

            unload_models()
        gc.collect()
        if cuda:
            with contextlib.suppress(Exception):
                torch.cuda.empty_cache()
    return record


# --------------------------------------------------------------------------- output


def _fmt(value: Any, spec: str) -> str:
    if value is None:
        return "-"
    return format(value, spec)


def table(result: dict[str, Any]) -> str:
    head = ("model", "phase", "batch", "items", "s", "items/s", "tok/s", "steps", "steps/s", "bw%", "bw%fwd",
            "peak MiB")
    rows: list[tuple[str, ...]] = []
    notes: list[str] = []
    for m in result["models"]:
        label = m["spec"] if len(m["spec"]) <= 28 else "…" + m["spec"][-27:]
        if m.get("error"):
            rows.append((label, "load", "", "", "", "", "", "", "", "", "", ""))
            notes.append(f"{label} load: {m['error']}")
        for p in m["phases"]:
            if p.get("error"):
                rows.append((label, p["phase"], str(p["batch_size"]), "", "", "FAILED", "", "", "", "", "", ""))
                notes.append(f"{label} {p['phase']}: {p['error']}")
                continue
            bw = p.get("bw_fraction")
            bwf = p.get("bw_fraction_forward")
            rows.append((
                label, p["phase"], str(p["batch_size"]), str(p["items"]), _fmt(p["seconds"], ".1f"),
                _fmt(p["items_per_s"], ".2f"), _fmt(p["tokens_per_s"], ".0f"), str(p["decode_steps"]),
                _fmt(p["steps_per_s"], ".1f"), _fmt(None if bw is None else 100 * bw, ".3g"),
                _fmt(None if bwf is None else 100 * bwf, ".3g"), _fmt(p["peak_mem_mib"], ".0f"),
            ))
            if p.get("note"):
                notes.append(f"{label} {p['phase']}: {p['note']}")
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths, strict=True)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", default=[], metavar="PATH",
                    help="a further model (folder, .gguf file or Hugging Face id); repeatable")
    ap.add_argument("--skip-default", action="store_true", help="do not measure the embedded default model")
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    ap.add_argument("--quick", action="store_true", help="batch sizes 1/2 and 2 items per phase (smoke test)")
    ap.add_argument("--batch-sizes", default=None, help="comma-separated beam-search batch sizes (default 1,8,32)")
    ap.add_argument("--joint-batch", type=int, default=None, help="items per parse+score call (default 8)")
    ap.add_argument("--max-new-tokens", type=int, default=None,
                    help="generation budget (default: the parser's own, 3 × the longest example LF)")
    ap.add_argument("--bandwidth-gbs", type=float, default=None,
                    help=f"device memory bandwidth in GB/s (default: by device name, else {DEFAULT_BANDWIDTH_GBS:.0f})")
    ap.add_argument("--phase-s", type=float, default=None, help="stop a phase after this many seconds (default 30)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="skip phases that would start after this many seconds in all (default 330)")
    ap.add_argument("--json-out", type=Path, default=None,
                    help="JSON output (default $OUT/gpu_check.json, else ./gpu_check.json)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    ap.add_argument("--verbose", action="store_true", help="print tracebacks of failing phases")
    args = ap.parse_args(argv)
    if args.batch_sizes:
        try:
            args.batch_sizes = [int(s) for s in args.batch_sizes.split(",") if s.strip()]
        except ValueError:
            ap.error(f"--batch-sizes must be comma-separated whole numbers, not {args.batch_sizes!r}")
    else:
        args.batch_sizes = [1, 2] if args.quick else [1, 8, 32]
    if not args.batch_sizes or min(args.batch_sizes) < 1:
        ap.error("--batch-sizes needs whole numbers of at least 1")
    if args.quick:
        args.items = [2] * len(args.batch_sizes)
        args.score_items = args.joint_items = 2
        args.score_batch = 2
        args.joint_batch = args.joint_batch or 2
    else:
        args.items = [max(8, 2 * b) for b in args.batch_sizes]  # 8 / 16 / 64
        args.score_items, args.score_batch = 64, 8
        args.joint_batch = args.joint_batch or 8
        args.joint_items = max(32, 2 * args.joint_batch)
    if args.joint_batch < 1:
        ap.error("--joint-batch must be at least 1")
    args.phase_s = args.phase_s if args.phase_s is not None else (600.0 if args.quick else 30.0)
    args.budget_s = args.budget_s if args.budget_s is not None else (1800.0 if args.quick else 330.0)
    args.specs = ([] if args.skip_default else ["default"]) + list(args.model)
    if not args.specs:
        ap.error("nothing to measure: --skip-default without --model")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    args = parse_args(argv)
    try:
        import torch
        import transformers
    except ImportError as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"error: --device {args.device} asked for but CUDA is not available here "
              f"(torch {torch.__version__}); use --device cpu --dtype float32", file=sys.stderr)
        return 2
    if not (args.device == "cpu" or args.device.startswith("cuda")):
        print(f"error: --device must be cpu, cuda or cuda:N, not {args.device!r}", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)

    def say(line: str) -> None:
        print(f"[{time.perf_counter() - started:5.0f} s] {line}", flush=True)

    cuda = args.device.startswith("cuda")
    if cuda:
        index = torch.device(args.device).index or 0
        torch.cuda.set_device(index)
        props = torch.cuda.get_device_properties(index)
        device_name = props.name
        device_extra = {"total_mem_gib": round(props.total_memory / 2**30, 1),
                        "capability": f"{props.major}.{props.minor}", "cuda": torch.version.cuda,
                        "multiprocessors": props.multi_processor_count}
    else:
        device_name = f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
        device_extra = {}
    bandwidth_gbs, bandwidth_source = bandwidth_for(device_name, args.bandwidth_gbs)
    meta = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "device": args.device,
        "device_name": device_name,
        **device_extra,
        "dtype": args.dtype,
        "bandwidth_gbs": bandwidth_gbs,
        "bandwidth_source": bandwidth_source,
        "beams": BEAMS,
        "seed": SEED,
        "quick": args.quick,
        "batch_sizes": args.batch_sizes,
        "joint_batch": args.joint_batch,
        "max_new_tokens": args.max_new_tokens,
        "phase_s": args.phase_s,
        "budget_s": args.budget_s,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    say(f"torch {meta['torch']}, transformers {meta['transformers']}, python {meta['python']}")
    say(f"device {args.device}: {device_name}" + (f", {device_extra['total_mem_gib']} GiB, CUDA {device_extra['cuda']}"
                                                  if cuda else ""))
    say(f"bandwidth bound: {bandwidth_gbs:.0f} GB/s from {bandwidth_source}")
    random.seed(SEED)
    torch.manual_seed(SEED)
    t = time.perf_counter()
    few, zero = plan_items(args.quick)
    say(f"prompts: {len(few)} few-shot (10 examples, mixed ratios) + {len(zero)} zero-shot, types "
        f"{'/'.join(TYPES)}, planned in {time.perf_counter() - t:.1f} s; beams {BEAMS}, dtype {args.dtype}")
    meta["pool"] = {"few_shot": len(few), "zero_shot": len(zero), "types": list(TYPES)}

    result: dict[str, Any] = {"meta": meta, "models": []}
    end = started + args.budget_s
    for i, spec in enumerate(args.specs):
        now = time.perf_counter()
        share = (end - now) / (len(args.specs) - i)  # later models keep their share of the budget
        result["models"].append(run_model(spec, args, few, zero, now + max(0.0, share), bandwidth_gbs, say))
    meta["total_s"] = round(time.perf_counter() - started, 1)

    print()
    print(f"== gpu_check: {device_name}, {args.dtype}, beam {BEAMS}; bandwidth {bandwidth_gbs:.0f} GB/s "
          f"({bandwidth_source}); torch {meta['torch']}, transformers {meta['transformers']} ==")
    print(table(result))
    print("bw% = weight bytes x decode steps / phase wall time / bandwidth; bw%fwd = the same over the time "
          "inside decode passes (inputs of at most 8 tokens) only")
    out = args.json_out or default_json_out()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"JSON: {out}  (total {meta['total_s']:.0f} s)")
    except OSError as exc:
        print(f"error: could not write {out}: {one_line(exc)}", file=sys.stderr)
        print(json.dumps(result, default=str))
        return 1
    loaded = [m for m in result["models"] if not m.get("error")]
    return 0 if loaded else 1


if __name__ == "__main__":
    sys.exit(main())
