"""The measuring steps of ``bench/gpu_check.py``: the prompt plan, the decode-pass counter and the
phases run on one model (load, warm-up, one timed phase each, release).

Imported by ``bench/gpu_check.py`` from beside it; the command line, the table and the JSON file
are that script's (its docstring says what each phase measures).

torch and transformers (and the parser's search, which loads them) are imported inside the
functions that use them: ``bench/gpu_check.py`` imports this module before it checks that both
are there, so a machine without them gets its one ``error:`` line instead of a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import random
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from amp.evaluation import experiments as ex
from amp.parser import load_model
from amp.parser.models.registry import unload_models

TYPES = ("pp", "scope", "bound", "conj")
BEAMS = 5
SEED = 0

#: Widest input of a forward that still counts as a decode pass: one token per row for
#: ``generate``, and a short grammar-forced run fed ahead by the fast search; prompt passes are
#: hundreds of tokens wide.
DECODE_PASS_MAX_WIDTH = 8

#: One phase's model call on a batch of sweep items with a generation budget: (items done, generated tokens).
PhaseCall = Callable[[list[Any], int | None], tuple[int, int]]
#: A batch's generation budget (None: the parser's own, from the prompt's examples).
Budget = Callable[[list[Any]], int | None]
#: Builds or loads one model to measure: an object with ``model``, ``tokenizer``, ``source`` and
#: ``dtype`` (:class:`amp.parser.LoadedModel`, or a random-weight model of ``gpu_check_random``).
Loader = Callable[[], Any]


# --------------------------------------------------------------------------- helpers


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]


def plan_items(quick: bool) -> tuple[list[Any], list[Any]]:
    """(few-shot items, zero-shot items), each interleaved round-robin over :data:`TYPES`."""
    if quick:
        few = ex.plan_fewshot(ex.FewShotConfig(types=TYPES, ratios=(0.5,), n_per_ratio=1, k=10, seed=SEED))
        zero = ex.plan_zeroshot(ex.ZeroShotConfig(types=TYPES, n=1, seed=SEED))
    else:
        few = ex.plan_fewshot(
            ex.FewShotConfig(types=TYPES, ratios=(0.0, 0.3, 0.7, 1.0), n_per_ratio=2, k=10, seed=SEED)
        )
        zero = ex.plan_zeroshot(ex.ZeroShotConfig(types=TYPES, n=8, seed=SEED))

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


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Bench:
    """One loaded model and what every phase on it shares."""

    spec: str
    model: Any
    tok: Any
    cuda: bool
    weight_bytes: int
    counter: ForwardCounter
    say: Callable[[str], None]
    budget: Budget

    def sync(self) -> None:
        self.counter.sync()


@dataclass(frozen=True)
class Phase:
    """One measurement: its name, items per call, items in all and the call it times."""

    name: str
    batch_size: int
    n_items: int
    call: PhaseCall


@dataclass(frozen=True)
class Tally:
    """What one timed phase ran: items and generated tokens done, the items themselves, wall seconds."""

    done: int
    tokens: int
    ran: list[Any]
    seconds: float


# --------------------------------------------------------------------------- phases


def device_sync(cuda: bool) -> Callable[[], None]:
    """Waits for the device's queued work (a no-op on CPU)."""
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    return sync


def seed_all() -> None:
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    random.seed(SEED)
    torch.manual_seed(SEED)


def load(spec: str, args: argparse.Namespace, record: dict[str, Any], say: Callable[[str], None],
         loader: Loader | None = None) -> Any:
    """The loaded model for ``spec`` (through ``loader`` if given, else the parser's registry) with
    its figures in ``record``, or None (the error in ``record``)."""
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    t0 = time.perf_counter()
    try:
        lm = loader() if loader is not None else load_model(spec, device=args.device, dtype=args.dtype)
    except Exception as exc:  # noqa: BLE001 - reported, the next model still runs
        record["error"] = f"load failed: {one_line(exc)}"
        say(f"[{spec}] {record['error']}")
        return None
    tok = lm.tokenizer
    params = list(lm.model.parameters())
    weight_bytes = sum(p.numel() * p.element_size() for p in params)
    record.update(
        source=lm.source,
        dtype=lm.dtype,
        load_s=round(time.perf_counter() - t0, 2),
        parameters=sum(p.numel() for p in params),
        weight_bytes=weight_bytes,
        weights_mib=round(weight_bytes / 2**20, 1),
        vocab=len(tok),
        resident_mib=round(torch.cuda.memory_allocated() / 2**20, 1) if args.device.startswith("cuda") else None,
    )
    say(f"[{spec}] loaded in {record['load_s']:.1f} s: {lm.source}; {record['parameters']:,} parameters, "
        f"{record['weights_mib']:.0f} MiB of weights in {lm.dtype}, vocabulary {len(tok):,}")
    return lm


def warm_up(bench: Bench, item: Any) -> None:
    """One full untimed search builds the grammar automaton, masker and its first masks."""
    # late: optional dependency (torch, transformers: checked by gpu_check.py)
    from amp.parser.search import decode

    seed_all()
    t = time.perf_counter()
    try:
        decode.beam_search_batch(bench.model, bench.tok, [item.prompt_text], beams=BEAMS,
                                 max_new_tokens=bench.budget([item]))
        bench.say(f"[{bench.spec}] model warm-up (one full beam-{BEAMS} search): {time.perf_counter() - t:.1f} s")
    except Exception as exc:  # noqa: BLE001
        bench.say(f"[{bench.spec}] model warm-up failed: {one_line(exc)}")


def phases_for(bench: Bench, args: argparse.Namespace) -> list[Phase]:
    """beam-5 search per batch size, forced scoring, and parse + score sharing one prompt pass."""
    # late: optional dependency (torch, transformers: checked by gpu_check.py)
    from amp.parser.search import decode, scoring

    model, tok = bench.model, bench.tok

    def beam_call(batch: list[Any], max_new: int | None) -> tuple[int, int]:
        results = decode.beam_search_batch(model, tok, [it.prompt_text for it in batch], beams=BEAMS,
                                           max_new_tokens=max_new)
        return len(results), sum(len(b.token_ids) for r in results for b in r.beams)

    def score_call(batch: list[Any], _max_new: int | None) -> tuple[int, int]:
        out = scoring.score_pairs(model, tok, [(it.prompt_text, it.lf0, it.lf1) for it in batch])
        return len(out), 0

    def joint_call(batch: list[Any], max_new: int | None) -> tuple[int, int]:
        out = decode.parse_and_score_batch(model, tok, [(it.prompt_text, it.lf0, it.lf1) for it in batch],
                                           beams=BEAMS, max_new_tokens=max_new)
        return len(out), sum(len(b.token_ids) for parse, _pair in out for b in parse.beams)

    phases = [Phase(f"beam{BEAMS}_b{b}", b, n, beam_call) for b, n in zip(args.batch_sizes, args.items, strict=True)]
    phases.append(Phase("score", args.score_batch, args.score_items, score_call))
    phases.append(Phase(f"joint_b{args.joint_batch}", args.joint_batch, args.joint_items, joint_call))
    return phases


def timed_phase(bench: Bench, phase: Phase, batches: list[list[Any]], args: argparse.Namespace, deadline: float,
                row: dict[str, Any]) -> Tally:
    """Warm the phase's shapes untimed, then time its batches until done, ``--phase-s`` or the deadline."""
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    seed_all()
    if bench.cuda:
        torch.cuda.empty_cache()
    # Untimed warm-up at this batch size: allocator, kernel shapes, a short generation budget.
    mnt = bench.budget(batches[0])
    phase.call(batches[0], min(mnt, 16) if mnt else 16)
    bench.sync()
    if bench.cuda:
        torch.cuda.reset_peak_memory_stats()
    bench.counter.reset()
    done = tokens = 0
    ran: list[Any] = []
    cap = time.perf_counter() + args.phase_s
    start = time.perf_counter()
    for batch in batches:
        if done and (time.perf_counter() >= cap or time.perf_counter() >= deadline):
            row["note"] = f"stopped after {done}/{phase.n_items} items (--phase-s / --budget-s)"
            break
        k, toks = phase.call(batch, bench.budget(batch))
        done += k
        tokens += toks
        ran += batch
    bench.sync()
    return Tally(done, tokens, ran, time.perf_counter() - start)


def phase_figures(bench: Bench, tally: Tally, bandwidth_gbs: float) -> dict[str, Any]:
    """The row figures of one timed phase, the bandwidth fractions when it decoded."""
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    done, tokens, seconds = tally.done, tally.tokens, tally.seconds
    n_few = sum(1 for it in tally.ran if it.ratio is not None)
    prompt_tokens = [len(bench.tok(it.prompt_text).input_ids) for it in tally.ran]
    steps, fwd_s = bench.counter.steps, bench.counter.seconds
    row: dict[str, Any] = dict(
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
        forwards=bench.counter.forwards,
        peak_mem_mib=round(torch.cuda.max_memory_allocated() / 2**20, 1) if bench.cuda else None,
    )
    if steps:
        bound = bandwidth_gbs * 1e9
        row["bw_fraction"] = bench.weight_bytes * steps / seconds / bound
        row["bw_fraction_forward"] = bench.weight_bytes * steps / fwd_s / bound if fwd_s > 0 else None
    return row


def run_phase(bench: Bench, phase: Phase, few: list[Any], zero: list[Any], args: argparse.Namespace,
              deadline: float, bandwidth_gbs: float) -> dict[str, Any]:
    """One phase's row: its figures, or why it was skipped or failed (never raises)."""
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    row: dict[str, Any] = {"phase": phase.name, "batch_size": phase.batch_size}
    if time.perf_counter() >= deadline:
        row["error"] = "skipped: time budget (--budget-s) used up"
        bench.say(f"[{bench.spec}] {phase.name}: {row['error']}")
        return row
    batches = batches_for(few, zero, phase.n_items, phase.batch_size)
    try:
        tally = timed_phase(bench, phase, batches, args, deadline, row)
        row.update(phase_figures(bench, tally, bandwidth_gbs))
    except Exception as exc:  # noqa: BLE001 - e.g. OOM at batch 32: report, go on
        row["error"] = one_line(exc)
        if args.verbose:
            traceback.print_exc()
        bench.say(f"[{bench.spec}] {phase.name}: FAILED {row['error']}")
        with contextlib.suppress(Exception):
            if bench.cuda:
                torch.cuda.empty_cache()
        return row
    bench.say(f"[{bench.spec}] {phase.name}: {tally.done} items in {tally.seconds:.1f} s "
              f"({row['items_per_s']:.2f} items/s)")
    return row


def release(cuda: bool) -> None:
    """Drop the loaded models before the next one loads."""
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    with contextlib.suppress(Exception):
        unload_models()
    gc.collect()
    if cuda:
        with contextlib.suppress(Exception):
            torch.cuda.empty_cache()


def run_model(spec: str, args: argparse.Namespace, few: list[Any], zero: list[Any], deadline: float,
              bandwidth_gbs: float, say: Callable[[str], None], *, loader: Loader | None = None,
              budget: Budget | None = None) -> dict[str, Any]:
    """Load ``spec`` (through ``loader`` if given) and run every phase on it, each batch with the
    generation budget ``budget`` gives it (default ``--max-new-tokens``); never raises (errors
    land in the record)."""
    record: dict[str, Any] = {"spec": spec, "phases": []}
    cuda = args.device.startswith("cuda")
    lm = load(spec, args, record, say, loader)
    if lm is None:
        return record
    counter = ForwardCounter(lm.model, device_sync(cuda))
    bench = Bench(spec, lm.model, lm.tokenizer, cuda, record["weight_bytes"], counter, say,
                  budget or (lambda _batch: args.max_new_tokens))
    try:
        warm_up(bench, few[0])
        for phase in phases_for(bench, args):
            record["phases"].append(run_phase(bench, phase, few, zero, args, deadline, bandwidth_gbs))
    finally:
        counter.remove()
        del bench, counter, lm  # drop this model before the next one loads
        release(cuda)
    return record
