"""CUDA = CPU: the parser's search on the GPU gives the CPU's beams and log-probs (issue #33).

A seeded tiny model (:data:`gpu_check_random.SHAPES` ``"tiny"``, the embedded model's
tokenizer, float32) is built once on the CPU and copied to the GPU; both run the same
parse + P(LF0) calls (:func:`amp.parser.search.decode.parse_and_score_batch`, beam 5, a few-shot and a
zero-shot batch of :data:`ITEMS_PER_KIND` items each).  The check holds when every item has the
same beams (token ids, ranks, finished flags) on both devices and every beam's summed
log-prob, every per-token probability of the top beam, both LFs' forced log-probs and P(LF0)
agree within :data:`TOLERANCE`.  ``bench/gpu_check.py`` runs it first and marks the run failed
when it does not hold.

Float32 matrix products on the GPU run in full precision here (TF32 off), as on the CPU; what
remains are rounding differences of the order of 1e-6.

torch and the parser's search (which loads torch and transformers) are imported inside the
functions that use them: ``bench/gpu_check.py`` imports this module before it checks that both
are there, so a machine without them gets its one ``error:`` line instead of a traceback.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

from gpu_check_random import SHAPES, build_model, shape_config

#: Largest difference of a log-prob, a probability or P(LF0) between the two devices.
TOLERANCE = 1e-4
#: Items per batch; one few-shot and one zero-shot batch.
ITEMS_PER_KIND = 2
#: Generation budget of the check (the tiny model's beams end at random lengths within it).
BUDGET = 32


@contextlib.contextmanager
def full_precision() -> Iterator[None]:
    """Float32 matrix products in full precision (no TF32 on CUDA) while the body runs."""
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def run_batches(model: Any, tokenizer: Any, batches: list[list[Any]]) -> list[Any]:
    """``(ParseResult, PairScore)`` of every item, batch by batch."""
    # late: optional dependency (torch, transformers: checked by gpu_check.py)
    from amp.parser.search import decode

    out: list[Any] = []
    for batch in batches:
        out += decode.parse_and_score_batch(model, tokenizer, [(it.prompt_text, it.lf0, it.lf1) for it in batch],
                                            beams=5, max_new_tokens=BUDGET)
    return out


def _gap(a: float, b: float) -> float:
    """|a - b|, 0 where both are the same infinity or both NaN."""
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    return abs(a - b)


def compare(cpu: list[Any], other: list[Any], tolerance: float = TOLERANCE) -> dict[str, Any]:
    """The comparison record: ``ok``, beams compared and the same, the largest differences, and
    what differed first (``first_difference``)."""
    beams = same = 0
    worst = {"logprob": 0.0, "step_prob": 0.0, "forced_logprob": 0.0, "p_lf0": 0.0}
    first: str | None = None
    for i, ((parse_a, pair_a), (parse_b, pair_b)) in enumerate(zip(cpu, other, strict=True)):
        for rank, (a, b) in enumerate(zip(parse_a.beams, parse_b.beams)):
            beams += 1
            if (a.token_ids, a.finished) == (b.token_ids, b.finished):
                same += 1
                worst["logprob"] = max(worst["logprob"], _gap(a.logprob, b.logprob))
                for sa, sb in zip(a.steps, b.steps):
                    worst["step_prob"] = max(worst["step_prob"], _gap(sa.prob, sb.prob))
            elif first is None:
                first = f"item {i} beam {rank}: tokens {list(a.token_ids)[:12]} on the CPU, {list(b.token_ids)[:12]}"
        if len(parse_a.beams) != len(parse_b.beams):
            beams += abs(len(parse_a.beams) - len(parse_b.beams))
            first = first or f"item {i}: {len(parse_a.beams)} beams on the CPU, {len(parse_b.beams)}"
        if pair_a is not None and pair_b is not None:
            for fa, fb in ((pair_a.lf0, pair_b.lf0), (pair_a.lf1, pair_b.lf1)):
                worst["forced_logprob"] = max(worst["forced_logprob"], _gap(fa.sum_logprob, fb.sum_logprob))
            worst["p_lf0"] = max(worst["p_lf0"], _gap(pair_a.p_lf0, pair_b.p_lf0))
    over = [k for k, v in worst.items() if not v <= tolerance]
    if over and first is None:
        first = f"largest |Δ {over[0]}| {worst[over[0]]:.3g} > {tolerance:g}"
    return {"ok": same == beams and beams > 0 and not over, "items": len(cpu), "beams": beams, "same_beams": same,
            "max_abs_diff": worst, "tolerance": tolerance, "first_difference": first}


def check(device: str, base: dict[str, Any], tokenizer: Any, batches: list[list[Any]], seed: int,
          say: Callable[[str], None], *, perturb: float = 0.0) -> dict[str, Any]:
    """Build the tiny model on the CPU, copy it to ``device``, run both, compare.

    ``perturb`` adds that much to one weight of the copy (the tests' planted difference).
    """
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    started = time.perf_counter()
    config = shape_config(base, SHAPES["tiny"], tokenizer, quick=False)
    cpu_model = build_model(config, "cpu", "float32", seed)
    other = copy.deepcopy(cpu_model).to(device)
    if perturb:
        with torch.no_grad():
            other.get_output_embeddings().weight[:, 0] += perturb
    with full_precision():
        on_cpu = run_batches(cpu_model, tokenizer, batches)
        on_device = run_batches(other, tokenizer, batches)
    record = compare(on_cpu, on_device)
    record.update(device=device, seconds=round(time.perf_counter() - started, 1),
                  parameters=sum(p.numel() for p in cpu_model.parameters()))
    return record


def summary(record: dict[str, Any]) -> str:
    """One line saying whether CUDA = CPU held, and by how much."""
    if record.get("skipped"):
        return f"CUDA = CPU: skipped ({record['skipped']})"
    if record.get("error"):
        return f"CUDA = CPU: FAILED to run ({record['error']})"
    w = record["max_abs_diff"]
    verdict = "PASS" if record["ok"] else "FAILED"
    line = (f"CUDA = CPU: {verdict}: {record['same_beams']}/{record['beams']} beams the same on {record['device']} and "
            f"the CPU ({record['items']} items, tiny seeded float32 model, beam 5 + P(LF0)); max |Δ| beam log-prob "
            f"{w['logprob']:.2g}, token prob {w['step_prob']:.2g}, forced LF log-prob {w['forced_logprob']:.2g}, "
            f"P(LF0) {w['p_lf0']:.2g} (tolerance {record['tolerance']:g})")
    if not record["ok"] and record.get("first_difference"):
        line += f"; first difference: {record['first_difference']}"
    return line
