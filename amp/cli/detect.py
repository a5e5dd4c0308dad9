"""``python -m amp detect``: does the model know a sentence is ambiguous? (docs/paper-notes.md §22)

    python -m amp detect [--signals] [--probe] [--prompts zero-shot mixed] [--layers L …]
        [--per-type 40] [--types pp scope …] [--seed 0] [--beams 5] [--max-new-tokens N]
        [--resamples 1000] [--csv] [--model default] [--engine …] [--device …] [--dtype …]
        [--no-cache] [--server URL]

Builds the detection data — ``--per-type`` ambiguous sentences per type against as many
unambiguous ones of the same type, split on held-out content words (``--seed``) — and measures
how well the model tells them apart, as AUROC with a 95 % bootstrap interval:

* ``--signals`` (the default when neither is given): semantic entropy over the beams' meanings,
  |P(top meaning) − 0.5| (min-token and total), and the top-2 meaning gap, under each of
  ``--prompts``, per type and overall;
* ``--probe``: a logistic-regression probe on every layer's hidden states (``--layers`` to choose
  some; 0 = the embeddings), trained on the training words and scored on the held-out ones, with
  the shuffled-label control and the bag-of-words baseline.  The probes need the model's
  per-layer states, which only the transformers engine gives: without ``--engine`` the signals run
  on the default rule's engine (llama.cpp for the default GGUF on a CPU) and the probes on
  transformers (the same model).

Prints the report as JSON (default) or, with ``--csv``, one row per AUROC (kind, name, prompt,
layer, type, part, auroc, low, high, n).  Progress goes to stderr; Ctrl-C stops at once.  Every
search, forced decode, signals report and probe report is cached: a rerun is instant.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from amp.cli import common
from amp.cli.interrupt import quick_interrupt
from amp.cli.model_options import add_model_options, make_parser, model_payload, needs_gradients
from amp.detection.dataset import DEFAULT_PER_TYPE
from amp.detection.report import detection_report, report_csv
from amp.detection.signals import PromptKind, Signal
from amp.errors import AmpError
from amp.evaluation.bootstrap import DEFAULT_RESAMPLES
from amp.parser.parser import Parser
from amp.parser.search.settings import DEFAULT_SEARCH, SearchSettings
from amp.reporting.png_export import write_pngs

#: The most bootstrap resamples ``--resamples`` takes.
MAX_RESAMPLES = 100_000
#: The most sentences per type ``--per-type`` takes (the pools hold a few hundred usable ones).
MAX_PER_TYPE = 1_000
#: The highest layer number ``--layers`` takes (a model's own depth is checked by the probes).
MAX_LAYER = 1_000


def _progress() -> Any:
    """``[done/total] signals|probes (elapsed)`` on stderr, at most one line a second and the last."""
    start = time.monotonic()
    last = [0.0]

    def say(step: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < 1.0:
            return
        last[0] = now
        print(f"[{done}/{total}] {step} ({now - start:.0f} s)", file=sys.stderr, flush=True)

    return say


#: The file ``amp reproduce --detect N`` writes into its folder.
DETECTION_CSV = "ambiguity_detection.csv"


def detection_figure_stem(kind: PromptKind | str) -> str:
    """The file stem of the signals' ROC figure under prompt ``kind`` (``ambiguity_detection_zero-shot``)."""
    return f"{DETECTION_CSV.removesuffix('.csv')}_{PromptKind(kind).value}"


def write_detection_csv(parser: Parser, folder: str | Path, *, per_type: int, seed: int,
                        types: Sequence[str] | None = None, search: SearchSettings | None = None) -> Path:
    """The uncertainty signals' AUROCs (both prompt kinds, per type and overall, docs/paper-notes.md §22)
    on ``per_type`` sentences per type of ``types`` (default: every type with an unambiguous set),
    written as :data:`DETECTION_CSV` into ``folder`` (progress on stderr), with its figure: the signals'
    ROC curves under each prompt, as HTML (``<stem>.html``, :func:`detection_figure_stem`) and PNG
    where a browser can draw it (as the report's other figures)."""
    from amp.reporting.detection_plots import roc_figure  # late: start-up cost (plotly)

    report = detection_report(parser, seed=seed, per_type=per_type, types=types, search=search, progress=_progress())
    path = Path(folder) / DETECTION_CSV
    path.write_text(report_csv(report), encoding="utf-8")
    if report.signals is not None:
        figures = []
        for kind in report.signals.prompts:
            curves = {s.label: report.signals.scores(s, kind) for s in Signal}
            fig = roc_figure(curves, subtitle=f"{PromptKind(kind).value} prompt · every sentence · "
                                              "higher score = more ambiguous")
            stem = Path(folder) / detection_figure_stem(kind)
            fig.write_html(str(stem.with_suffix(".html")), include_plotlyjs=True, full_html=True)
            figures.append((fig, stem.with_suffix(".png")))
        write_pngs(figures)
    return path


def _probe_parser(args: argparse.Namespace, parser: Parser) -> Parser:
    """The parser the probes read states from: ``parser`` when its engine keeps the weights here
    (transformers), else — the default rule chose llama.cpp, faster for the signals' searches — the
    same model on an engine with them, unless ``--engine`` named one (the probes then say why not)."""
    if args.engine is not None or args.server or parser.backend.capabilities().gradients:
        return parser
    return make_parser(argparse.Namespace(**{**vars(args), "need": needs_gradients}))


def run(args: argparse.Namespace) -> int:
    signals = args.signals or not args.probe
    try:
        search = SearchSettings.of(None, beams=args.beams, max_new_tokens=args.max_new_tokens)
        parser = make_parser(args)
        report = detection_report(
            parser, seed=args.seed, per_type=args.per_type, types=args.types, signals=signals, probes=args.probe,
            prompts=args.prompts, search=search, layers=args.layers, resamples=args.resamples,
            probe_parser=_probe_parser(args, parser) if args.probe else None, progress=_progress())
    except AmpError as exc:
        return common.fail(exc)
    if args.csv:
        sys.stdout.write(common.terminal_text(report_csv(report)))
    else:
        payload = {**model_payload(args, parser), "report": report.to_dict()}
        print(common.terminal_json(json.dumps(payload, ensure_ascii=False, indent=2)))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("detect", help="does the model know a sentence is ambiguous? (signals, probes, AUROC)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--signals", action="store_true",
                   help="the uncertainty signals' AUROCs (the default when --probe is not given)")
    p.add_argument("--probe", action="store_true", help="linear probes on every layer's hidden states (transformers)")
    p.add_argument("--prompts", nargs="+", choices=[str(k) for k in PromptKind], default=[str(k) for k in PromptKind],
                   help="the prompts the signals read each sentence in (default: both)")
    p.add_argument("--layers", nargs="+", type=common.count(0, MAX_LAYER), default=None, metavar="L",
                   help="the layers to probe (default: all; 0 = the embeddings)")
    p.add_argument("--per-type", type=common.count(2, MAX_PER_TYPE), default=DEFAULT_PER_TYPE,
                   help=f"ambiguous sentences per type, and as many unambiguous (default {DEFAULT_PER_TYPE})")
    p.add_argument("--types", nargs="+", type=common.ambiguity_type, default=None,
                   help=common.types_help("the types to detect (default: every type with an unambiguous set)"))
    p.add_argument("--seed", type=common.seed, default=0, help="seed of the held-out words, the draws and the bootstrap")
    p.add_argument("--beams", type=common.beams, default=DEFAULT_SEARCH.beams,
                   help=f"beams of each search (default {DEFAULT_SEARCH.beams})")
    p.add_argument("--max-new-tokens", type=common.max_new_tokens, default=None,
                   help="generation budget (default: from the prompt)")
    p.add_argument("--resamples", type=common.count(1, MAX_RESAMPLES), default=DEFAULT_RESAMPLES,
                   help=f"bootstrap resamples of each interval (default {DEFAULT_RESAMPLES})")
    p.add_argument("--csv", action="store_true", help="print one CSV row per AUROC instead of the JSON report")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    add_model_options(p)
    p.set_defaults(func=run)
    quick_interrupt(p)  # Ctrl-C ends it at once, even inside a model call
