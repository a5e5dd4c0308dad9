"""``python -m amp reproduce``: rerun the paper's zero-shot and few-shot experiments, write a report.

    python -m amp reproduce --model M [--n-zero 200] [--n-few 100] [--types pp scope …]
        [--method beam|distinct|sampling] [--mode logical|paper] [--seed 0 | --seeds 0,1,2] [--out DIR]
        [--name RUN] [--device …] [--dtype …] [--batch-size N] [--no-cache] [--server URL]

Zero-shot: ``--n-zero`` sentences per type, constrained beam 5 (Table 2, Fig. 2, Fig. 3).
Few-shot: ``--n-few`` sentences per type under 11 ratios of 10-example mixed prompts (Table 3,
Fig. 6).  Progress goes to stderr.  Every parse and forced decode is cached, so an interrupted
run resumes and a rerun is instant.  Writes CSV + HTML tables/figures and ``report.md`` into
``--out`` (default ``reproduce-<name>``) and a run manifest into ``<cache root>/runs/<name>.json``
for the app's Research page.  Every table cell and figure point carries its 95 % bootstrap
interval over test sentences and its n (docs/paper-notes.md §21).
``--detect N`` also writes ``ambiguity_detection.csv``: how well the model's uncertainty signals
tell N ambiguous from N unambiguous sentences per type (AUROCs, ``amp detect``, §22).

``--seed`` draws the test sentences (``sample_pairs(type, n, seed)``) and seeds every prompt's
examples; ``--seeds 0,1,2`` runs the whole experiment under each seed: the report is the first
seed's, with a section and ``seed_spread.csv`` giving every statistic's mean, sd and min–max
across the seeds; each seed's run is saved as ``<name>`` (seed 0) or ``<name>-seed<s>`` (any other seed, also under ``--seed``).

With ``--server URL`` (or ``$AMP_PARSER_URL``) the sweeps run as jobs of the parser service
(``python -m amp serve``): spread over its replicas, cached on the server as they finish, and
resumed without recomputation if this command is interrupted and run again.

With ``--model openai:<name> --api-base URL`` the model is one behind an OpenAI-compatible API
(the paper's GPT-3.5 protocol, README "Models behind an API"): Table 2 and Fig. 2 get its rows;
P(LF0), Fig. 3 and FIM need log-probs of the prompt, and the report says so where the endpoint
gives none.  An endpoint that goes away mid-run ends the command with one ``error:`` line; what
finished is cached, and the same command resumes.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from dataclasses import replace
from typing import Any

from amp.cli import common as argtypes
from amp.cli.api_options import api_run_settings
from amp.cli.common import fail
from amp.cli.detect import DETECTION_CSV, MAX_PER_TYPE, write_detection_csv
from amp.cli.model_options import add_model_options, make_parser
from amp.data.types import type_ids
from amp.errors import AmpError
from amp.evaluation import runs
from amp.evaluation.interpretations import METHODS
from amp.evaluation.provenance import Provenance
from amp.evaluation.run_context import run_context
from amp.parser.core import limits
from amp.parser.search.settings import DEFAULT_SEARCH, SearchSettings
from amp.prompts import EXAMPLES_PER_PROMPT


def _progress(label: str) -> Any:
    """A stderr progress line: done/total, from cache, elapsed, and an estimate of what is left."""
    start = time.monotonic()
    state = {"cached": 0}

    def report(done: int, total: int, record: Any) -> None:
        state["cached"] += bool(record.cached)
        elapsed = time.monotonic() - start
        computed = done - state["cached"]
        left = ""
        if computed and done < total:
            left = f", ~{_duration(elapsed / computed * (total - done))} left"
        print(f"\r{label}: {done}/{total} ({state['cached']} from cache, {_duration(elapsed)}{left})  ",
              end="\n" if done == total else "", file=sys.stderr, flush=True)

    return report


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def _check_writable(out: str) -> None:
    """Create the report folder ``out`` and write a probe file there (raises AmpError if impossible)."""

    try:
        os.makedirs(out, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".amp-probe-"):
            pass
    except OSError as exc:
        raise AmpError(f"cannot write the report to {out!r}: {exc.strerror or exc}") from None


def _seed_list(text: str) -> tuple[int, ...]:
    """``--seeds 0,1,2``: distinct seeds, each as ``--seed`` accepts it."""
    try:
        seeds = tuple(argtypes.seed(part.strip()) for part in text.split(","))
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"--seeds {text!r}: {exc}") from None
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"--seeds {text!r} names a seed twice")
    return seeds


def _engine_tag(parser: Any) -> str:
    """The precision label of an engine that computes in the model file's own precision (its
    capabilities' ``own_precision``: llama.cpp's ``llama.cpp-<build>``), for run names; "" otherwise."""
    return str(parser.dtype) if parser.backend.capabilities().own_precision else ""


def run(args: argparse.Namespace) -> int:
    # long: the command's one sequence (model, each seed's sweeps, report, manifests, detection), each step a call
    from amp.evaluation import experiments as ex  # late: start-up cost (pandas)
    from amp.reporting.report import write_report  # late: start-up cost (pandas, plotly)

    began = time.monotonic()  # the run's wall time: the model's load and both sweeps
    seeds: tuple[int, ...] = args.seeds or (args.seed,)  # the report's tables and figures are the first seed's
    try:
        if args.n_zero < 0 or args.n_few < 0 or not (args.n_zero or args.n_few):
            raise ex.ExperimentError("--n-zero and --n-few must be 0 (skip) or more, and not both 0")
        # One search record for both sweeps: beams (the k kept, for distinct and sampling) and budget.
        search = SearchSettings(beams=args.beams, max_new_tokens=args.max_new_tokens)
        # A skipped part (0) is planned with n = 1 only to name its settings; nothing of it runs.
        zero_cfg = ex.ZeroShotConfig(types=tuple(args.types or type_ids()), n=args.n_zero or 1, seed=args.seed,
                                     search=search, mode=args.mode)
        few_cfg = ex.FewShotConfig(types=tuple(args.types or type_ids()), n_per_ratio=args.n_few or 1, seed=args.seed,
                                   k=args.k, search=search, mode=args.mode, independent_draws=args.independent_draws)
        parser = make_parser(args)
        name = args.name or (f"{re.sub(r'[^A-Za-z0-9._-]+', '_', parser.identity)}-{args.method}-{args.mode}"
                             f"-z{args.n_zero}-f{args.n_few}{runs.precision_suffix(args.dtype or _engine_tag(parser))}")
        out = args.out or f"reproduce-{name}"
        _check_writable(out)  # before the run, not after hours of it
        by_seed: dict[int, tuple[list[Any], list[Any]]] = {}
        for seed in seeds:  # --seeds: the same run under each split seed (other sentences and prompts)
            label = f" (seed {seed})" if len(seeds) > 1 else ""
            zc, fc = replace(zero_cfg, seed=seed), replace(few_cfg, seed=seed)
            common = {"method": args.method, "width": args.width, "n_samples": args.samples,
                      "temperature": args.temperature, "seed": seed, "batch_size": args.batch_size}
            by_seed[seed] = (
                list(runs.run_method(parser, ex.plan_zeroshot(zc), zc.search, mode=zc.mode, **common,
                                     on_progress=_progress(f"zero-shot{label}"))) if args.n_zero else [],
                list(runs.run_method(parser, ex.plan_fewshot(fc), fc.search, mode=fc.mode, **common,
                                     on_progress=_progress(f"few-shot{label}"))) if args.n_few else [])
        zero, few = by_seed[seeds[0]]
    except AmpError as exc:
        return fail(exc)
    settings = {"model": args.model, "identity": parser.identity, "method": args.method, "mode": args.mode,
                "types": ",".join(zero_cfg.types), "n_zero": args.n_zero, "n_few": args.n_few,
                "examples_per_prompt": args.k, "ratios": len(few_cfg.ratios), "beams": search.beams,
                "seed": seeds[0], **({"seeds": ",".join(map(str, seeds))} if len(seeds) > 1 else {})}
    try:  # where it ran: server (no token), engine, device, dtype, model identity, code digest
        settings.update(run_context(parser).as_settings())
    except AmpError as exc:  # a server gone since the run: its records are kept, the context says so
        settings.update(server=str(getattr(parser.backend, "url", "")), context_error=str(exc))
    if args.dtype or _engine_tag(parser):
        settings["dtype"] = args.dtype or _engine_tag(parser)
    if args.method == "distinct":
        settings["width"] = args.width
    if args.method == "sampling":
        settings.update(samples=args.samples, temperature=args.temperature)
    settings.update(api_run_settings(parser))
    settings["cached"] = f"{sum(r.cached for r in zero + few)}/{len(zero) + len(few)}"
    settings.update(Provenance.now(wall_time_s=time.monotonic() - began).as_settings())  # date, wall time, versions
    written = write_report(zero, few, out, settings, seeds=by_seed if len(seeds) > 1 else None)
    if args.detect:  # does the model know a sentence is ambiguous? the signals' AUROCs (docs/paper-notes.md §22)
        try:
            written[DETECTION_CSV] = write_detection_csv(parser, out, per_type=args.detect, seed=seeds[0],
                                                         types=args.types, search=search)
        except AmpError as exc:
            return fail(exc)
    manifest = runs.save_manifest(runs.seed_run_name(name, seeds[0]), settings, zero, few)
    for seed in seeds[1:]:  # each further seed is a saved run of its own, for the Research page
        runs.save_manifest(runs.seed_run_name(name, seed), {**settings, "seed": seed}, *by_seed[seed])
    errors = sum(r.error is not None for r in zero + few)
    print(f"wrote {len(written)} files to {out} (report: {written['report.md']}); run manifest {manifest}"
          + (f"; {errors} item(s) failed" if errors else ""))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("reproduce", help="rerun the paper's experiments and write tables, figures, report",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n-zero", type=argtypes.count(0, limits.MAX_JOB_ITEMS), default=200, help="zero-shot sentences per type (paper: 200; 0 = skip)")
    p.add_argument("--n-few", type=argtypes.count(0, limits.MAX_JOB_ITEMS), default=100, help="few-shot sentences per type and ratio (0 = skip)")
    p.add_argument("--types", nargs="+", type=argtypes.ambiguity_type, default=None,
                   help=argtypes.types_help("ambiguity types; default: every registered type"))
    p.add_argument("--method", choices=METHODS, default="beam", help="how the top-k list is made (default beam)")
    argtypes.add_mode_argument(p, help="canonicaliser for matching (default: logical)")
    p.add_argument("--beams", type=argtypes.beams, default=DEFAULT_SEARCH.beams,
                   help=f"beam size / interpretations kept (k of ZM_k; default {DEFAULT_SEARCH.beams})")
    p.add_argument("--width", type=argtypes.count(1, limits.MAX_WIDTH), default=20, help="beam width for --method distinct (default 20)")
    p.add_argument("--samples", type=argtypes.count(1, limits.MAX_SAMPLES), default=20, help="samples per prompt for --method sampling")
    p.add_argument("--temperature", type=argtypes.bounded(limits.check_temperature), default=1.0,
                   help=f"sampling temperature ({limits.MIN_TEMPERATURE:g} to {limits.MAX_TEMPERATURE:g})")
    p.add_argument("--k", type=argtypes.count(0, limits.MAX_PROMPT_EXAMPLES), default=EXAMPLES_PER_PROMPT, help=f"examples per few-shot prompt (paper: {EXAMPLES_PER_PROMPT})")
    seeding = p.add_mutually_exclusive_group()
    seeding.add_argument("--seed", type=argtypes.seed, default=0, help="seed of the test sentences and prompts")
    seeding.add_argument("--seeds", type=_seed_list, default=None, metavar="S,S,…",
                         help="run under each of these split seeds (e.g. 0,1,2): the report's tables and figures "
                              "are the first seed's, plus each statistic's spread across seeds (seed_spread.csv)")
    p.add_argument("--independent-draws", action="store_true",
                   help="few-shot: other example sentences at every ratio (default: the original's "
                        "paired design, the same sentences in the same positions at every ratio)")
    p.add_argument("--max-new-tokens", type=argtypes.max_new_tokens, default=None, help="generation budget (default: from the prompt)")
    p.add_argument("--batch-size", type=argtypes.count(1, limits.MAX_JOB_BATCH), default=None,
                   help="items per model call (default: 8 on CPU and GPU; one prompt pass per item either way)")
    p.add_argument("--out", default=None, help="output folder (default reproduce-<name>)")
    p.add_argument("--name", default=None, help="run name for the manifest (default from model and settings)")
    p.add_argument("--detect", type=argtypes.count(0, MAX_PER_TYPE), default=0, metavar="N",
                   help=f"also write {DETECTION_CSV}: the uncertainty signals' AUROCs for ambiguity detection on N "
                        "ambiguous and N unambiguous sentences per type (0 = skip, the default; amp detect)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    add_model_options(p)
    p.set_defaults(func=run)
