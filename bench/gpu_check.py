"""GPU check: throughput, memory and memory-bandwidth use of the parser on one accelerator.

One prepared, unattended script for a machine with an NVIDIA GPU (issue #10, point 7).  For the
embedded default model (Gemma 3 270M) and every ``--model PATH`` given, loaded in ``--dtype``
(default bfloat16) on ``--device`` (default cuda), it measures, calling the decode functions
directly (no result cache, no :class:`~amp.parser.parser.Parser`):

* ``beam5_bN`` — grammar-constrained beam-5 search (:func:`amp.parser.search.decode.beam_search_batch`)
  at batch 1 / 8 / 32 items per call: items/s, generated tokens/s (tokens of all returned
  beams), decode steps/s;
* ``score`` — forced scoring of LF0+LF1 (:func:`amp.parser.search.scoring.score_pairs`): items/s;
* ``joint_bN`` — parse + P(LF0) sharing one prompt pass
  (:func:`amp.parser.search.decode.parse_and_score_batch`) at ``--joint-batch`` items per call: items/s;
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

**Random weights** (``--random-weights``, issue #33; :mod:`gpu_check_random`): instead of the
default model, models built from configs with seeded random weights on the device, for a GPU
machine that cannot receive the weights: the embedded model's own shape (Gemma 3 270M), a
1B-class and a 7B-class shape (``--shapes``), all with the embedded model's tokenizer, their
generation budgets pinned to the real model's decode steps per item.  ``bench/gpu_carry.sh``
prepares what such a machine needs; ``docs/gpu.md`` says how to run it.

**CUDA = CPU** (:mod:`gpu_check_parity`): on a GPU, before anything is measured, a seeded tiny
float32 model runs the same parse + P(LF0) calls on the GPU and on the CPU; the beams must be
the same and the log-probs agree within 1e-4.  The comparison is printed first; if it does not
hold, the run still measures but exits with code 1 (``--skip-parity`` leaves it out; on the CPU
it is skipped with a note).

Output: a table on stdout and a JSON file (``--json-out``; default ``$OUT/gpu_check.json`` when
``$OUT`` is set, else ``gpu_check.json`` in the current folder).

Usage::

    python bench/gpu_check.py                                   # default model, cuda, bf16
    python bench/gpu_check.py --model /path/to/model --model Qwen/Qwen2.5-0.5B
    python bench/gpu_check.py --device cpu --dtype float32 --quick --model tiny/ --skip-default
    python bench/gpu_check.py --random-weights                  # 270m, 1b, 7b shapes, random weights
    bash gpu_carry/run.sh                                       # the same on an offline GPU machine

``--quick``: batch sizes 1/2 and 2 items per phase (a smoke test, e.g. on CPU); random-weight
shapes keep two of their layers and 12/8 pinned steps.  Asking for cuda where there is none
exits with code 2 and one ``error:`` line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # gpu_check_steps beside it, also when loaded by path

import gpu_check_parity as parity
import gpu_check_random as rw
from gpu_check_steps import BEAMS, SEED, TYPES, Budget, Loader, one_line, plan_items, run_model

from amp.parser.models.embedded import ensure_default_model

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
    ap.add_argument("--random-weights", action="store_true",
                    help="measure random-weight models of real shapes instead of the default model (offline machines)")
    ap.add_argument("--shapes", default=",".join(rw.DEFAULT_SHAPES),
                    help=f"random-weight shapes, comma-separated, of {', '.join(rw.SHAPES)} (default %(default)s)")
    ap.add_argument("--model-files", type=Path, default=None, metavar="DIR",
                    help="folder with the config.json and tokenizer of the random-weight shapes and of the CUDA = CPU "
                         f"check (default: ${rw.CARRY_ENV}/model, else the embedded model's)")
    ap.add_argument("--skip-parity", action="store_true", help="leave out the CUDA = CPU check")
    args = ap.parse_args(argv)
    try:
        args.shapes = rw.parse_shapes(args.shapes)
    except ValueError as exc:
        ap.error(f"--shapes: {exc}")
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
    # Random weights: three shapes in one command of a lease (well under 10 minutes, docs/gpu.md).
    args.phase_s = args.phase_s if args.phase_s is not None else (
        600.0 if args.quick else 15.0 if args.random_weights else 30.0)
    args.budget_s = args.budget_s if args.budget_s is not None else (
        1800.0 if args.quick else 400.0 if args.random_weights else 330.0)
    shapes = [f"random:{name}" for name in args.shapes] if args.random_weights else []
    default = [] if args.skip_default or args.random_weights else ["default"]
    args.specs = shapes + default + list(args.model)
    if not args.specs:
        ap.error("nothing to measure: --skip-default without --model")
    return args


def check_environment(args: argparse.Namespace) -> str | None:
    """The one ``error:`` line when torch/transformers or the asked device is missing, else None."""
    try:
        import torch  # late: optional dependency (torch: a machine without it gets one error line)
        import transformers  # noqa: F401 - only that it imports  # late: optional dependency (transformers: same)
    except ImportError as exc:
        return f"error: {one_line(exc)}"
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        return (f"error: --device {args.device} asked for but CUDA is not available here "
                f"(torch {torch.__version__}); use --device cpu --dtype float32")
    if not (args.device == "cpu" or args.device.startswith("cuda")):
        return f"error: --device must be cpu, cuda or cuda:N, not {args.device!r}"
    return None


def describe_device(device: str) -> tuple[str, dict[str, Any]]:
    """(device name, CUDA figures for the JSON meta; none on CPU); selects the CUDA device."""
    import torch  # late: optional dependency (torch: checked by check_environment)

    if not device.startswith("cuda"):
        return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)", {}
    index = torch.device(device).index or 0
    torch.cuda.set_device(index)
    props = torch.cuda.get_device_properties(index)
    return props.name, {"total_mem_gib": round(props.total_memory / 2**30, 1),
                        "capability": f"{props.major}.{props.minor}", "cuda": torch.version.cuda,
                        "multiprocessors": props.multi_processor_count}


def run_meta(args: argparse.Namespace, device_name: str, device_extra: dict[str, Any]) -> dict[str, Any]:
    """The JSON file's ``meta``: versions, device, bandwidth bound and the run's settings."""
    import torch  # late: optional dependency (torch: checked by check_environment)
    import transformers  # late: optional dependency (transformers: checked by check_environment)

    bandwidth_gbs, bandwidth_source = bandwidth_for(device_name, args.bandwidth_gbs)
    return {
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
        "random_weights": args.random_weights,
        "shapes": args.shapes if args.random_weights else [],
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def plan_prompts(args: argparse.Namespace, meta: dict[str, Any],
                 say: Callable[[str], None]) -> tuple[list[Any], list[Any]]:
    """The seeded few-shot and zero-shot pools, announced and counted in ``meta``."""
    import torch  # late: optional dependency (torch: checked by check_environment)

    random.seed(SEED)
    torch.manual_seed(SEED)
    t = time.perf_counter()
    few, zero = plan_items(args.quick)
    say(f"prompts: {len(few)} few-shot (10 examples, mixed ratios) + {len(zero)} zero-shot, types "
        f"{'/'.join(TYPES)}, planned in {time.perf_counter() - t:.1f} s; beams {BEAMS}, dtype {args.dtype}")
    meta["pool"] = {"few_shot": len(few), "zero_shot": len(zero), "types": list(TYPES)}
    return few, zero


@dataclass(frozen=True)
class ModelFiles:
    """The embedded model's config and tokenizer, loaded once for every random shape and the
    CUDA = CPU check (one tokenizer object: its grammar masks are built once)."""

    base: dict[str, Any]
    tokenizer: Any
    newline_ids: list[int]


def model_files_for(args: argparse.Namespace, meta: dict[str, Any], say: Callable[[str], None]) -> ModelFiles | None:
    """The model files when random shapes or the CUDA = CPU check need them, else None."""
    if not (args.random_weights or wants_parity(args)):
        return None
    if "default" in args.specs and args.model_files is None and not os.environ.get(rw.CARRY_ENV):
        ensure_default_model(progress=say)  # converted anyway for the default model; its files are then at hand
    t = time.perf_counter()
    folder, source = rw.model_files(args.model_files, say)
    tokenizer = rw.load_tokenizer(folder)
    ids = rw.newline_ids(tokenizer) if args.random_weights else []
    meta["model_files"] = {"source": source, "vocab": len(tokenizer), "newline_tokens": len(ids)}
    carry = os.environ.get(rw.CARRY_ENV, "").strip()
    if carry and (Path(carry) / "MANIFEST.json").is_file():
        meta["carry"] = json.loads((Path(carry) / "MANIFEST.json").read_text(encoding="utf-8"))
        meta["carried_in_use"] = carried_in_use(meta["carry"])
        say("carried packages in use: " + ", ".join(f"{k} {v or 'MISSING'}" for k, v in meta["carried_in_use"].items()))
    say(f"model files from {source}: vocabulary {len(tokenizer):,} ({time.perf_counter() - t:.1f} s)")
    if args.random_weights:
        meta["pinned_steps"] = args.max_new_tokens or pinned_steps(args)
    return ModelFiles(rw.base_config(folder), tokenizer, ids)


def carried_in_use(manifest: dict[str, Any]) -> dict[str, str | None]:
    """The version of each carried package that this process sees (the carried one, or the
    machine's own where run.sh fell back to it); None where none is installed."""
    found: dict[str, str | None] = {}
    for wheel in manifest.get("wheels", []):
        try:
            found[wheel["name"]] = metadata.version(wheel["name"])
        except metadata.PackageNotFoundError:
            found[wheel["name"]] = None
    return found


def wants_parity(args: argparse.Namespace) -> bool:
    return args.device.startswith("cuda") and not args.skip_parity


def run_parity(args: argparse.Namespace, files: ModelFiles | None, few: list[Any], zero: list[Any],
               say: Callable[[str], None]) -> dict[str, Any]:
    """The CUDA = CPU record (skipped on the CPU and with --skip-parity; never raises)."""
    if args.skip_parity:
        return {"ok": True, "skipped": "--skip-parity"}
    if not args.device.startswith("cuda") or files is None:
        return {"ok": True, "skipped": f"--device {args.device}: no GPU to compare with the CPU"}
    say(f"CUDA = CPU: a tiny seeded float32 model on {args.device} and on the CPU …")
    n = parity.ITEMS_PER_KIND
    try:
        return parity.check(args.device, files.base, files.tokenizer, [few[:n], zero[:n]], SEED, say)
    except Exception as exc:  # noqa: BLE001 - a broken check fails the run, the measurements still run
        if args.verbose:
            traceback.print_exc()
        return {"ok": False, "error": one_line(exc)}


def random_model(spec: str, args: argparse.Namespace, files: ModelFiles | None) -> tuple[Loader | None, Budget | None]:
    """(loader, budget) of a ``random:SHAPE`` spec; (None, None) for a model to load."""
    if not spec.startswith("random:") or files is None:
        return None, None
    shape = rw.SHAPES[spec.removeprefix("random:")]
    loader = rw.random_loader(shape, files.base, files.tokenizer, files.newline_ids, device=args.device,
                              dtype=args.dtype, seed=SEED, quick=args.quick)
    given, steps = args.max_new_tokens, pinned_steps(args)
    return loader, (lambda batch: given) if given else (lambda batch: rw.pinned_budget(batch, steps))


def pinned_steps(args: argparse.Namespace) -> dict[str, int]:
    """The random shapes' generation budgets per kind (few-shot, zero-shot)."""
    return rw.QUICK_PINNED_STEPS if args.quick else rw.PINNED_STEPS


def report(result: dict[str, Any], args: argparse.Namespace) -> int:
    """Print the table and write the JSON file; 1 when it cannot be written or no model loaded."""
    meta = result["meta"]
    print()
    print(f"== gpu_check: {meta['device_name']}, {args.dtype}, beam {BEAMS}; bandwidth {meta['bandwidth_gbs']:.0f} GB/s "
          f"({meta['bandwidth_source']}); torch {meta['torch']}, transformers {meta['transformers']} ==")
    print(parity.summary(meta["parity"]))
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
    if not meta["parity"].get("ok"):
        print("error: CUDA = CPU did not hold (above): this run is marked failed", file=sys.stderr)
        return 1
    return 0 if loaded else 1


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    args = parse_args(argv)
    error = check_environment(args)
    if error:
        print(error, file=sys.stderr)
        return 2
    import torch  # late: optional dependency (torch: checked by check_environment)

    if args.threads:
        torch.set_num_threads(args.threads)

    def say(line: str) -> None:
        print(f"[{time.perf_counter() - started:5.0f} s] {line}", flush=True)

    device_name, device_extra = describe_device(args.device)
    meta = run_meta(args, device_name, device_extra)
    say(f"torch {meta['torch']}, transformers {meta['transformers']}, python {meta['python']}")
    say(f"device {args.device}: {device_name}" + (f", {device_extra['total_mem_gib']} GiB, CUDA {device_extra['cuda']}"
                                                  if device_extra else ""))
    say(f"bandwidth bound: {meta['bandwidth_gbs']:.0f} GB/s from {meta['bandwidth_source']}")
    few, zero = plan_prompts(args, meta, say)
    try:
        files = model_files_for(args, meta, say)
    except Exception as exc:  # noqa: BLE001 - the random shapes need them: nothing to measure
        print(f"error: the model files (config and tokenizer) could not be had: {one_line(exc)}", file=sys.stderr)
        return 2
    meta["parity"] = run_parity(args, files, few, zero, say)
    say(parity.summary(meta["parity"]))

    result: dict[str, Any] = {"meta": meta, "models": []}
    end = started + args.budget_s
    for i, spec in enumerate(args.specs):
        now = time.perf_counter()
        share = (end - now) / (len(args.specs) - i)  # later models keep their share of the budget
        loader, budget = random_model(spec, args, files)
        result["models"].append(run_model(spec, args, few, zero, now + max(0.0, share), meta["bandwidth_gbs"], say,
                                          loader=loader, budget=budget))
    meta["total_s"] = round(time.perf_counter() - started, 1)
    return report(result, args)


if __name__ == "__main__":
    sys.exit(main())
