"""Benchmark of grammar-constrained decoding and forced scoring on the default model.

Prints figures measured in one run (never asserted anywhere):

* trie build time (token texts + sorted-array trie of the 262k Gemma vocabulary);
* constrained beam-5 time / unconstrained beam-5 time over 10 AmP zero-shot prompts (goal
  <= 1.15), with cold mask caches (first pass) and warm ones (second pass);
* grammar processor time per beam step (building the (beams, |V|) mask), median and max;
* a cold per-state mask time (trie DFS) median and max;
* forced scoring of LF0+LF1 together / scoring LF0 alone (goal <= 1.3).

Usage: ``python bench/parser_bench.py [--prompts N]``.  Loads the model through
``amp.parser.models.registry.load_model("default")``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from amp.data.generate import pairs
from amp.parser.models.registry import load_model
from amp.parser.search import processors
from amp.parser.search.automaton import get_automaton
from amp.parser.search.decode import beam_search
from amp.parser.search.scoring import forced_score
from amp.parser.search.vocab import VocabMasker, Vocabulary, frame_lf, get_masker
from amp.prompts import zero_shot_prompt

HEADER = "Let's translate what a human user says into what a computer might say."


def load_default() -> tuple[Any, Any, str]:
    lm = load_model("default", device="cpu", dtype="float32")
    return lm.model, lm.tokenizer, "amp.parser.models.registry.load_model('default')"


def _pp_prompt(a: str, v: str, b: str, n: str) -> tuple[str, str, str]:
    ex = [
        (f"{a} {v} {b}", f"exists a . {v}(a) AND agent(a, {a}) AND patient(a, {b})"),
        (f"{a} {v} with the {n}", f"exists x . exists a . {n}(x) AND {v}(a) AND agent(a, {a}) AND instrument(a, x)"),
        (f"{b} with the {n}", f"exists x . exists a . {n}(x) AND have(a) AND agent(a, {b}) AND patient(a, x)"),
    ]
    blocks = [f"Human: {u}\nComputer: {lf}\n" for u, lf in ex] + [f"Human: {a} {v} {b} with the {n}\nComputer:"]
    lf0 = (f"exists x . exists a . exists e . {n}(x) AND {v}(a) AND agent(a, {a}) AND patient(a, {b}) AND "
           f"have(e) AND agent(e, {b}) AND patient(e, x)")
    lf1 = f"exists x . exists a . {n}(x) AND {v}(a) AND agent(a, {a}) AND patient(a, {b}) AND instrument(a, x)"
    return HEADER + "\n\n" + "\n".join(blocks), lf0, lf1


def amp_prompts(n: int) -> tuple[list[tuple[str, str, str]], str]:
    """``n`` (prompt, lf0, lf1): two per ambiguity type from amp.prompts if available."""
    try:
        out = []
        types = ["pp", "scope", "revscope", "bound", "conj"]
        for k in range(n):
            pair = pairs(types[k % len(types)])[37 * (k // len(types)) + 11]
            prompt = zero_shot_prompt(pair)
            out.append((prompt.render(), pair.lf0.lf, pair.lf1.lf))
        return out, "amp.prompts.zero_shot_prompt (2 per type)"
    except Exception as exc:  # noqa: BLE001 - fall back to self-made PP prompts
        names = ["Galileo", "Mary", "Ada", "Alan", "Bill", "Marie", "Watson", "Adele", "Sherlock", "Katherine"]
        verbs = ["saw", "observed", "spotted", "spied"]
        nouns = ["camera", "telescope", "binoculars", "spyglass"]
        out = [_pp_prompt(names[k % 10], verbs[k % 4], names[(k + 3) % 10], nouns[(k + 1) % 4]) for k in range(n)]
        return out, f"self-made PP prompts ({type(exc).__name__})"


class BeamRun(NamedTuple):
    """One beam search: wall and CPU seconds, longest-beam tokens, beams finished and parsing,
    model forwards and their CPU seconds."""

    wall: float
    cpu: float
    tokens: int
    parsed: int
    forwards: int
    forward_cpu: float


def summed(rows: list[BeamRun]) -> BeamRun:
    """Each figure summed over ``rows`` (in order)."""
    return BeamRun(*(sum(column) for column in zip(*rows)))


class ProcessorTimer:
    """Times every call of the grammar processor (one per beam step) while installed."""

    def __init__(self) -> None:
        self.cls = processors.GrammarLogitsProcessor
        self.original = self.cls.__call__
        self.times: list[float] = []
        original, times = self.original, self.times

        def timed(self: Any, input_ids: Any, scores: Any) -> Any:
            t = time.perf_counter()
            out = original(self, input_ids, scores)
            times.append(time.perf_counter() - t)
            return out

        self.cls.__call__ = timed  # type: ignore[method-assign]

    def take(self) -> list[float]:
        """The step times so far, and start afresh."""
        out = list(self.times)
        self.times.clear()
        return out

    def remove(self) -> None:
        self.cls.__call__ = self.original  # type: ignore[method-assign]


class ForwardClock:
    """Counts model forwards (one per beam step) and their CPU time, to separate the model's cost
    from the decoding overhead (processor, stopping criteria, bookkeeping)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.inner = model.forward
        self.n = 0
        self.cpu = 0.0

        @functools.wraps(self.inner)  # keeps the signature that generate() inspects
        def counted_forward(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            out = self.inner(*a, **k)
            self.cpu += time.process_time() - t
            self.n += 1
            return out

        model.forward = counted_forward

    def remove(self) -> None:
        self.model.forward = self.inner


def time_setup(tok: Any) -> Any:
    """Print the trie build and automaton + masker times; the masker."""
    t0 = time.perf_counter()
    Vocabulary(tok)
    print(f"trie build (token texts + sorted trie): {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    get_automaton("fol")
    masker = get_masker(tok, "fol")
    print(f"automaton + masker (cached per tokenizer): {time.perf_counter() - t0:.2f} s")
    return masker


def beam_passes(model: Any, tok: Any, prompts: list[str], beams: int, steps: ProcessorTimer,
                clock: ForwardClock) -> tuple[list[BeamRun], list[BeamRun], list[BeamRun], list[float], list[float]]:
    """(cold constrained, warm constrained, unconstrained runs, cold step times, warm step times)."""
    def one(prompt: str, constrained: bool) -> BeamRun:
        clock.n, clock.cpu = 0, 0.0
        w, c = time.perf_counter(), time.process_time()
        r = beam_search(model, tok, prompt, beams=beams, constrained=constrained, steps_for=0)
        w, c = time.perf_counter() - w, time.process_time() - c
        return BeamRun(w, c, max(len(b.token_ids) for b in r.beams), sum(b.finished and b.parses for b in r.beams),
                       clock.n, clock.cpu)

    # Pass 1: constrained with cold mask caches (automaton/masks are built on first use).
    cold = [one(p, True) for p in prompts]
    cold_steps = steps.take()
    # Pass 2: constrained (warm caches) and unconstrained interleaved per prompt, alternating
    # which goes first, so that load drift on a shared machine hits both alike.
    con: list[BeamRun] = []
    unc: list[BeamRun] = []
    for k, prompt in enumerate(prompts):
        if k % 2:
            unc.append(one(prompt, False))
            con.append(one(prompt, True))
        else:
            con.append(one(prompt, True))
            unc.append(one(prompt, False))
    return cold, con, unc, cold_steps, steps.take()


def print_beam_figures(cold_runs: list[BeamRun], con_runs: list[BeamRun], unc_runs: list[BeamRun],
                       cold_steps: list[float], warm_steps: list[float], beams: int, vocab: int) -> None:
    cold, con, unc = summed(cold_runs), summed(con_runs), summed(unc_runs)
    n_beams = len(con_runs) * beams
    print(f"constrained beam-{beams}: cold caches {cold.wall:.1f} s wall / {cold.cpu:.1f} s CPU; "
          f"warm {con.wall:.1f} s wall / {con.cpu:.1f} s CPU; {int(con.tokens)} longest-beam tokens; "
          f"{int(con.parsed)}/{n_beams} beams finished+parse")
    print(f"unconstrained beam-{beams}: {unc.wall:.1f} s wall / {unc.cpu:.1f} s CPU; "
          f"{int(unc.tokens)} longest-beam tokens; {int(unc.parsed)}/{n_beams} beams finished+parse")
    per_tok = (con.cpu / con.tokens) / (unc.cpu / unc.tokens)
    print(f"ratio constrained/unconstrained (goal <= 1.15): warm {con.wall / unc.wall:.3f} wall, "
          f"{con.cpu / unc.cpu:.3f} CPU, {per_tok:.3f} CPU per generated token; "
          f"cold {cold.wall / unc.wall:.3f} wall, {cold.cpu / unc.cpu:.3f} CPU")
    over_c = (con.cpu - con.forward_cpu) / con.forwards
    over_u = (unc.cpu - unc.forward_cpu) / unc.forwards
    per_step_c = con.cpu / con.forwards
    per_step_u = unc.cpu / unc.forwards
    print(f"per beam step (CPU): model forward {1000 * con.forward_cpu / con.forwards:.0f} ms constrained, "
          f"{1000 * unc.forward_cpu / unc.forwards:.0f} ms unconstrained; everything else {1000 * over_c:.1f} ms "
          f"constrained vs {1000 * over_u:.1f} ms unconstrained; ratio of CPU per step {per_step_c / per_step_u:.3f} "
          f"({int(con.forwards)} vs {int(unc.forwards)} steps) — the load-independent form of the 1.15 goal")
    ms = [t * 1000 for t in cold_steps]
    ms_w = [t * 1000 for t in warm_steps]
    print(f"processor per beam step ({beams} rows x {vocab}): median {statistics.median(ms):.2f} ms, "
          f"max {max(ms):.1f} ms cold; median {statistics.median(ms_w):.2f} ms, max {max(ms_w):.1f} ms warm; "
          f"{100 * sum(ms_w) / 1000 / con.wall:.1f}% of warm constrained wall time, "
          f"{100 * sum(ms) / 1000 / cold.wall:.1f}% cold")


def print_mask_times(masker: Any, tok: Any, items: list[tuple[str, str, str]]) -> None:
    """Cold single-state mask times on a fresh masker (trie DFS), states along the gold LFs."""
    fresh = VocabMasker(masker.automaton, tok)
    miss_ms: list[float] = []
    hit_ms: list[float] = []
    automaton = masker.automaton
    for _prompt, lf0, lf1 in items:
        for lf in (lf0, lf1):
            state = automaton.initial
            for ch in frame_lf(lf):
                misses = fresh.misses
                t = time.perf_counter()
                fresh.allowed_ids(state)
                (miss_ms if fresh.misses > misses else hit_ms).append((time.perf_counter() - t) * 1000)
                state = automaton.step(state, ch)
    print(f"mask per state, 262k vocab: trie DFS (cache miss) median {statistics.median(miss_ms):.3f} ms, "
          f"max {max(miss_ms):.1f} ms over {len(miss_ms)} states; cache hit median "
          f"{statistics.median(hit_ms) * 1000:.1f} us")


def print_scoring_ratio(model: Any, tok: Any, items: list[tuple[str, str, str]]) -> None:
    """Forced scoring of LF0+LF1 together against LF0 alone."""
    pair_t = one_t = 0.0
    for prompt, lf0, lf1 in items:
        forced_score(model, tok, prompt, [lf0])  # warm
        t = time.perf_counter()
        forced_score(model, tok, prompt, [lf0, lf1])
        pair_t += time.perf_counter() - t
        t = time.perf_counter()
        forced_score(model, tok, prompt, [lf0])
        one_t += time.perf_counter() - t
    print(f"forced scoring LF0+LF1 together: {pair_t:.2f} s; LF0 alone: {one_t:.2f} s; "
          f"ratio {pair_t / one_t:.3f} (goal <= 1.3)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=10)
    ap.add_argument("--beams", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(2)
    t0 = time.perf_counter()
    model, tok, source = load_default()
    print(f"model: {source} ({time.perf_counter() - t0:.1f} s), vocab {len(tok)}, torch threads 2")
    items, where = amp_prompts(args.prompts)
    print(f"prompts: {len(items)} from {where}")
    masker = time_setup(tok)
    steps = ProcessorTimer()
    beam_search(model, tok, items[0][0], beams=args.beams, constrained=False, steps_for=0, max_new_tokens=8)
    clock = ForwardClock(model)
    passes = beam_passes(model, tok, [p for p, _a, _b in items], args.beams, steps, clock)
    print_beam_figures(*passes, args.beams, len(tok))
    print_mask_times(masker, tok, items)
    print_scoring_ratio(model, tok, items)
    steps.remove()
    clock.remove()


if __name__ == "__main__":
    main()
