"""Benchmark (issues #29 point 5, #42): transformers float32 (the fast search) against llama.cpp (the GGUF as shipped).

Usage: ``python bench/engine_bench.py [--n-zero 4] [--n-few 2] [--ratios 0,0.5,1] [--threads 2]
[--reproduction] [--out bench/results/engine_bench.txt]``, or
``python bench/engine_bench.py --agreement N [--engines transformers,llama.cpp] [--reuse]
[--records-dir bench/results/agreement] [--out bench/results/engine_agreement.txt]``.

**Timing** (the default): on the same sweep items, in one run (each engine in its own child process,
one after the other, so each one's peak RSS is its own): ``--n-zero`` zero-shot items per type and
``--n-few`` few-shot items per type and ratio, each parsed and scored
(:meth:`amp.parser.Parser.parse_and_score_many`, constrained beam 5) against a temporary result
cache, with the model loaded before the timing:

* time per zero-shot and per few-shot item, and the ratio transformers / llama.cpp;
* Parse & inspect of one sentence under a 10-example prompt (:func:`amp.evaluation.inspection.inspect`,
  cold cache, warm model): wall time;
* decode steps (llama.cpp: logical steps and batched decode calls per item);
* peak RSS of each engine's process;
* item-level agreement (same top-beam match, |dP(LF0)|, flips at 0.5): reported, not a rule;
* with ``--reproduction``: ``amp reproduce --n-zero 10 --n-few 5`` on llama.cpp in a child with its
  own cache folder, wall time and peak RSS;
* the goals' table of issue #42 (:mod:`engine_goals`): each goal, the value, met or not.

**Agreement** (``--agreement N``, issue #42 point 4): each engine of ``--engines`` parses and scores
about N sweep items (:func:`engine_agreement.split_items`: N = 200 gives 10 zero-shot and 10
few-shot sentences per type, the few-shot ones at ratios 0, 0.5 and 1: 200 items) the way a sweep
does (:func:`amp.evaluation.sweep_run.run_items`, beam 5), in a child, and writes its records to
``<records-dir>/<engine>.jsonl`` (:mod:`engine_records`; ``--reuse`` goes on from a file whose
engine, model and settings match).  When both files are there, the default rule
(:mod:`engine_agreement`) is applied on what a researcher reads and the table, the flips, mean
|dP(LF0)|, item-level match and the verdict are printed and written (with the date and load) to ``--out``.

Ratios are measured in this one run; no assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine_agreement import AgreementRule, Verdict, judge, pair_items, split_items, statistic_rows
from engine_goals import INSPECT_RATIO, INSPECT_SECONDS, PEAK_RSS, REPRODUCTION_SECONDS, goals_lines
from engine_records import (
    ItemLine,
    RecordsHeader,
    append_lines,
    item_key,
    now_text,
    open_records,
    read_records,
)
from errors import AgreementError

from amp.cache import ResultCache
from amp.evaluation import experiments as ex
from amp.evaluation.inspection import inspect
from amp.evaluation.matching import match_lf
from amp.evaluation.sweep_run import run_items
from amp.logic.vocabulary import DEFAULT_MODE
from amp.parser.engines import LLAMA_CPP, TRANSFORMERS
from amp.parser.parser import Parser
from amp.parser.search.settings import SearchSettings

TYPES = ("pp", "scope", "revscope", "bound", "conj")
ENGINES = (TRANSFORMERS, LLAMA_CPP)
#: The beam count of every parse of the bench (ZM_k's k in the agreement table).
BEAMS = 5
RESULTS = Path(__file__).resolve().parent / "results"
#: Where ``--agreement`` keeps each engine's per-item records (one JSON-lines file per engine).
AGREEMENT_DIR = RESULTS / "agreement"
#: Where ``--agreement`` writes its report.
AGREEMENT_OUT = RESULTS / "engine_agreement.txt"


def sweep_items(n_zero: int, n_few: int, ratios: str, types: tuple[str, ...] = TYPES) -> list[Any]:
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


def engine_kwargs(engine: str) -> dict[str, Any]:
    """The Parser keywords of each engine in this bench: transformers in float32 on the CPU, llama.cpp as shipped."""
    return {"dtype": "float32", "device": "cpu"} if engine == TRANSFORMERS else {}


def git_commit() -> str:
    """The commit the working tree is at, ``+dirty`` when it has uncommitted changes (``unknown`` without git)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def records_path(records_dir: Path, engine: str) -> Path:
    """The records file of ``engine`` under ``records_dir``."""
    return records_dir / f"{engine}.jsonl"


def agreement_items(n: int, ratios: str, types: tuple[str, ...]) -> list[Any]:
    """The planned items of ``--agreement n``: :func:`engine_agreement.split_items` per type, all five types."""
    rs = tuple(float(r) for r in ratios.split(","))
    n_zero, n_few = split_items(n, len(types), len(rs))
    return sweep_items(n_zero, n_few, ratios, types)


def agreement_child(args: argparse.Namespace) -> int:
    """One engine's records of ``--agreement``: resumes the file under ``--reuse`` when its header's
    engine, model and settings match, computes the missing items (appended as they end); prints one JSON line."""
    engine = args.child
    items = agreement_items(args.agreement, args.ratios, tuple(args.types.split(",")))
    path = records_path(Path(args.records_dir), engine)
    with tempfile.TemporaryDirectory() as tmp:
        parser = Parser(args.model, engine=engine, cache=ResultCache(tmp), **engine_kwargs(engine))
        header = RecordsHeader(engine=engine, model=parser.identity,
                               settings={"dtype": parser.dtype, "device": parser.device, "beams": str(BEAMS),
                                         "mode": DEFAULT_MODE},
                               commit=git_commit(), date=now_text(), threads=args.threads)
        done, todo, note = open_records(path, header, items, reuse=args.reuse)
        if note:
            print(f"# {engine}: {note}", file=sys.stderr)
        if todo:
            if engine == LLAMA_CPP:
                parser.backend.threads = args.threads  # type: ignore[attr-defined]
            parser.load()
            by_id = {it.id: it for it in todo}
            t0 = time.perf_counter()

            def progress(i: int, total: int, record: Any) -> None:
                print(f"# {engine} item {i}/{total} {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

            records = run_items(parser, todo, SearchSettings.of(beams=BEAMS), mode=DEFAULT_MODE, on_progress=progress)
            append_lines(path, (ItemLine(key=item_key(by_id[r.id]), record=r) for r in records))
    print(json.dumps({"engine": engine, "items": len(items), "computed": len(todo), "reused": len(items) - len(todo)}))
    return 0


def load_average() -> str:
    with open("/proc/loadavg") as fh:
        return fh.read().split()[0]


def agreement_lines(verdict: Verdict, headers: dict[str, RecordsHeader], rule: AgreementRule) -> list[str]:
    """The agreement table, the flips, mean |dP(LF0)|, item-level match and the verdict, as text lines."""
    ref, cand = headers[TRANSFORMERS], headers[LLAMA_CPP]
    out = [f"transformers side: {ref.model} {ref.settings}, commit {ref.commit}, {ref.date}",
           f"llama.cpp side: {cand.model} {cand.settings}, commit {cand.commit}, {cand.date}",
           f"(a) each statistic of llama.cpp inside the {rule.level:.0%} bootstrap interval of transformers' estimate "
           f"({rule.resamples} resamples of the test sentences within each type, seed {rule.seed})",
           f"{'type':<9} {'statistic':<12} {'items':<10} {'transformers [low, high]':<28} {'llama.cpp':>9}  inside"]
    for r in verdict.rows:
        digits = 1 if r.statistic == rule.zm_name else 3
        est = f"{r.reference.estimate:.{digits}f} [{r.reference.low:.{digits}f}, {r.reference.high:.{digits}f}]"
        out.append(f"{r.type:<9} {r.statistic:<12} {r.where:<10} {est:<28} {r.candidate:>9.{digits}f}  "
                   f"{'yes' if r.inside else 'NO'}")
    out.append(f"(b) reading flips with |P(LF0) - 0.5| > {rule.flip_margin:g} on an engine: {len(verdict.flips)}")
    out += [f"    {p.key}: transformers {p.p_reference:.3f}, llama.cpp {p.p_candidate:.3f}" for p in verdict.flips]
    out.append(f"(c) mean |dP(LF0)| over {verdict.n_scored} scored items: {verdict.mean_abs_delta:.4f} "
               f"(max {verdict.max_abs_delta:.4f}; rule <= {rule.max_mean_delta:g})")
    out.append(f"item-level (reported, not gated): same LF0/LF1/both/neither match of the top beam "
               f"{verdict.same_match}/{verdict.n_paired}")
    out.append(f"default rule on {verdict.n_items} items: {'holds' if verdict.holds else 'does not hold'}")
    out += [f"  - {reason}" for reason in verdict.reasons]
    return out


def agreement_main(args: argparse.Namespace) -> int:
    """``--agreement N``: each engine of ``--engines`` writes (or, with ``--reuse``, completes) its records
    file in a child; when both files cover the plan, the table and the verdict are printed and written."""
    types = tuple(args.types.split(","))
    try:
        n_zero, n_few = split_items(args.agreement, len(types), len(args.ratios.split(",")))
    except AgreementError as exc:
        raise SystemExit(f"error: --agreement: {exc}") from None
    items = agreement_items(args.agreement, args.ratios, types)
    head = (f"engine agreement: --agreement {args.agreement} = {len(items)} items ({n_zero} zero-shot and "
            f"{n_few} few-shot sentences per type, the few-shot ones at ratios {args.ratios}; types {args.types}), "
            f"beams {BEAMS}, {now_text()}")
    print(head, file=sys.stderr)
    start_load = load_average()
    for engine in [e for e in args.engines.split(",") if e]:  # none: only the table, from the files
        if engine not in ENGINES:
            raise SystemExit(f"error: --engines lists {engine!r}; the engines are {', '.join(ENGINES)}")
        cmd = [sys.executable, __file__, "--child", engine, "--agreement", str(args.agreement), "--model", args.model,
               "--ratios", args.ratios, "--threads", str(args.threads), "--types", args.types,
               "--records-dir", args.records_dir, *(["--reuse"] if args.reuse else [])]
        if subprocess.run(cmd).returncode:
            raise SystemExit(f"error: the {engine} records run failed")
    files = {engine: records_path(Path(args.records_dir), engine) for engine in ENGINES}
    absent = [str(path) for path in files.values() if not path.is_file()]
    if absent:
        print(f"records written; no table yet: {', '.join(absent)} missing "
              "(run the other engine with --engines … --reuse)")
        return 0
    try:
        read = {engine: read_records(path) for engine, path in files.items()}
    except AgreementError as exc:
        raise SystemExit(f"error: {exc}") from None
    keys = [item_key(it) for it in items]
    by_key = {engine: {k: line.record for k, line in lines.items()} for engine, (_, lines) in read.items()}
    rule = AgreementRule(k=BEAMS)
    ref = [by_key[TRANSFORMERS][k] for k in keys if k in by_key[TRANSFORMERS]]
    cand = [by_key[LLAMA_CPP][k] for k in keys if k in by_key[LLAMA_CPP]]
    verdict = judge(statistic_rows(ref, cand, rule), pair_items(by_key[TRANSFORMERS], by_key[LLAMA_CPP], keys),
                    len(keys), rule)
    lines = [head, f"load average at start: {start_load}", f"load average at the end: {load_average()}",
             *agreement_lines(verdict, {e: h for e, (h, _) in read.items()}, rule)]
    text = "\n".join(lines)
    print(text)
    Path(args.out or AGREEMENT_OUT).write_text(text + "\n", encoding="utf-8")
    return 0


def reproduction(args: argparse.Namespace) -> tuple[float, float]:
    """``amp reproduce --n-zero 10 --n-few 5`` on llama.cpp in a child with its own cache and output
    folders: (wall seconds, the child's peak RSS in MB)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "amp", "reproduce", "--n-zero", "10", "--n-few", "5", "--engine", LLAMA_CPP,
               "--model", args.model, "--out", str(Path(tmp) / "out")]
        env = {**os.environ, "AMP_CACHE_DIR": str(Path(tmp) / "cache")}
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parent.parent, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"error: the reduced reproduction failed (exit {proc.returncode})")
    return seconds, usage.ru_maxrss / 1024


def report(runs: dict[str, dict[str, Any]], lines: list[str],
           reduced: tuple[float, float] | None = None) -> None:
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
    lines.append(f"agreement on {n} items: same LF0/LF1/both/neither match {same_match}/{n}, same top-beam tokens "
                 f"{same_top}/{n}; |dP(LF0)| mean {mean_d:.4f}, max {max(deltas, default=float('nan')):.4f}; "
                 f"reading flips {flips}/{n}")
    lines.append("(item level, reported only: the default rule is on what a researcher reads, --agreement N)")
    if reduced is not None:
        minutes, seconds = divmod(round(reduced[0]), 60)
        lines.append(f"reduced reproduction (amp reproduce --n-zero 10 --n-few 5, llama.cpp, own cache): "
                     f"{minutes} min {seconds} s, peak RSS {reduced[1]:.0f} MB")
    lines += goals_lines({INSPECT_SECONDS: fast["inspect_s"], INSPECT_RATIO: ref["inspect_s"] / fast["inspect_s"],
                          REPRODUCTION_SECONDS: reduced[0] if reduced else None,
                          PEAK_RSS: fast["peak_rss_mb"]})


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
    ap.add_argument("--reproduction", action="store_true",
                    help="also time amp reproduce --n-zero 10 --n-few 5 on llama.cpp (its own cache; ~10-25 min)")
    ap.add_argument("--agreement", type=int, default=None, metavar="N",
                    help="compare the engines on what a researcher reads, on about N sweep items (N >= 200 for a verdict)")
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help="with --agreement: which engines to run (the others' records are read from --records-dir)")
    ap.add_argument("--records-dir", default=str(AGREEMENT_DIR), help="with --agreement: one JSON-lines file per engine")
    ap.add_argument("--reuse", action="store_true",
                    help="with --agreement: go on from an engine's records file when its model and settings match")
    ap.add_argument("--child", choices=ENGINES, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return agreement_child(args) if args.agreement is not None else child(args)
    if args.agreement is not None:
        return agreement_main(args)
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
    reduced = reproduction(args) if args.reproduction else None
    with open("/proc/loadavg") as fh:
        lines.append(f"load average at the end: {fh.read().split()[0]}")
    report(runs, lines, reduced)
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
