"""``python -m amp attribute``: which prompt tokens, test-sentence words and examples push the model
toward LF0 or LF1 where the two readings part (docs/paper-notes.md §18).

    python -m amp attribute --prompt-file prompt.json [--lf0 "…" --lf1 "…"] [--target divergence|sequence]
        [--method integrated_gradients|input_x_gradient] [--baseline zero|pad|mean] [--steps N]
        [--gap-target SHARE | --fixed-steps] [--max-steps N] [--influence] [--json]
        [--model default] [--device …] [--dtype …] [--no-cache]
    python -m amp attribute --many (--sentences FILE | --template ID [--count N]) [--ratio R] [--seed S]
        [--k K] [--csv PATH] [same settings] [--json]

The prompt file is what ``python -m amp prompt mixed … --json`` and the Prompt builder write (or
the rendered text).  The target is log p(LF0's token) − log p(LF1's token) at the divergence
point (``sequence``: log P(LF0) − log P(LF1)); the attribution is per prompt token, summed per
word of the test sentence and per example (positive: toward LF0).  ``--influence`` also
computes each example's influence (``python -m amp influence``) and prints it beside the
example's attribution with Spearman's ρ.

Integrated gradients (midpoint rule) start at ``--steps`` and triple up to ``--max-steps`` until
the completeness gap is at most ``--gap-target`` of |f(x) − f(x′)| (default 5 %); the output says
whether it was met and at which steps (``--fixed-steps``: exactly ``--steps``).  ``--baseline``
chooses x′: zero embeddings, the pad token's embedding, or the mean embedding.

``--many`` attributes many pool sentences (one a line in ``--sentences``, or ``--count`` drawn from
a template's pool, ``--template pp/visual/a``) by both methods, each with its mixed prompt
(``--ratio``, ``--seed``, ``--k``), and prints per role/word each method's mean with a 95 %
bootstrap interval and the share of sentences where the methods' signs differ (``--csv``: that
table; ``--json``: everything; :mod:`amp.evaluation.attribution_many`).  Needs a local model (``--server`` is refused) on an
engine that gives gradients: without ``--engine`` (or ``$AMP_ENGINE``) the first engine whose
capabilities have them, where the default rule's has none (llama.cpp).  See
:mod:`amp.evaluation.attribution`.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
from typing import Any

from amp.cli import common
from amp.cli.influence import add_reading_arguments, stderr_progress
from amp.cli.model_options import make_parser, model_header, model_payload, needs_gradients
from amp.cli.parse import run_with_model
from amp.cli.progress import api_progress
from amp.errors import AmpError
from amp.evaluation.attribution import (
    DEFAULT_GAP_TARGET,
    DEFAULT_MAX_STEPS,
    DEFAULT_STEPS,
    METHODS,
    TARGETS,
    Attribution,
    Baseline,
    Settings,
    attribute,
    beside_influence,
    check_settings,
)
from amp.evaluation.attribution_many import (
    MAX_SENTENCES,
    ManyAttribution,
    attribute_many,
    sentences_from_template,
    sentences_from_text,
)
from amp.evaluation.influence import Influence, example_influence
from amp.parser.core import limits
from amp.prompts import EXAMPLES_PER_PROMPT, check_ratio
from amp.teaching.prompt_file import PromptRead

#: Tokens listed in the text output (largest |attribution| first).
TOP_TOKENS = 12


def format_attribution(value: tuple[Attribution, Influence | None]) -> list[str]:
    attr, inf = value
    lines = [f"test sentence: {attr.test_utterance}",
             f"target: {attr.target} — LF token {attr.divergence}: {attr.token_lf0!r} (LF0) vs {attr.token_lf1!r} (LF1)",
             f"f(prompt) = {attr.value:+.4f}, f(baseline) = {attr.baseline_value:+.4f}; {attr.method} "
             f"({attr.steps} step(s), {attr.baseline} baseline): Σ attributions = {attr.total:+.4f}, "
             f"completeness gap = {attr.completeness_gap:.4f}",
             f"note: {attr.note}",
             "test-sentence words (> 0 pushes toward LF0):"]
    lines += [f"  {w.word:<16} {w.attribution:+.4f}" for w in attr.words]
    rows, rho = beside_influence(attr, inf) if inf is not None else ((), None)
    lines.append("examples (attribution" + (", Δ P(LF0) when removed)" if inf is not None else ")") + ":")
    for i, e in enumerate(attr.examples):
        shown = "plain" if e.label is None else f"LF{e.label}"
        extra = ""
        if inf is not None:
            d = rows[i].influence
            extra = "   –" if d is None else f"  {d:+.4f}"
        lines.append(f"  {e.index + 1:>2}. [{shown:>5}] {e.attribution:+.4f}{extra}  {e.utterance}")
    if inf is not None:
        lines.append(f"Spearman rho(attribution, Δ removed) = {'–' if rho is None else f'{rho:+.2f}'}")
    top = sorted((t for t in attr.tokens if t.attributed), key=lambda t: -abs(t.attribution))[:TOP_TOKENS]
    lines.append("largest token attributions: " + ", ".join(f"{t.token!r} {t.attribution:+.3f}" for t in top))
    return lines


def _as_json(value: tuple[Attribution, Influence | None]) -> dict[str, Any]:
    attr, inf = value
    out: dict[str, Any] = {"attribution": attr.to_dict()}
    if inf is not None:
        rows, rho = beside_influence(attr, inf)
        out["influence"] = inf.to_dict()
        out["beside_influence"] = {"rows": [r.to_dict() for r in rows], "spearman": rho}
    return out


def _settings(args: argparse.Namespace) -> Settings:
    """The command line's attribution settings, checked by the library's one check."""
    return check_settings(args.target, args.method, args.steps, args.max_steps, args.baseline,
                          None if args.fixed_steps else args.gap_target)


def format_many(many: ManyAttribution) -> list[str]:
    n = len(many.sentences) // len(METHODS)
    gap = "no target" if many.gap_target is None else f"{many.gap_target:.0%} target met on {many.gap_met} of {n}"
    lines = [f"{n} sentences, mixed prompts (ratio {many.ratio:g}, seed {many.seed}, k {many.k}); target "
             f"{many.target}, {many.baseline} baseline; integrated gradients from {many.steps} steps ({gap})",
             "mean attribution per role/word (> 0 pushes toward LF0), 95 % bootstrap intervals over sentences:",
             f"  {'unit':<10} {'input x gradient':<30} {'integrated gradients':<30} signs differ"]
    for u in many.summary:
        lines.append(f"  {u.unit:<10} {u.input_x_gradient.text(3):<30} {u.integrated_gradients.text(3):<30} "
                     f"{u.sign_disagreement.text(2)}")
    lines.append(f"Spearman rho between the methods' word attributions, mean over sentences: "
                 f"{many.rank_agreement.text(2)}")
    return lines


def _many_csv(many: ManyAttribution) -> str:
    rows = many.rows()
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["unit"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def run_many(args: argparse.Namespace) -> int:
    """``--many``: the sentences, both methods on each, the per-unit summary (text, JSON, CSV)."""
    try:
        s = _settings(args)
        check_ratio(args.ratio)
        if args.sentences:
            try:
                text = Path(args.sentences).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                return common.fail(f"cannot read the sentence file {args.sentences}: {exc}")
            sentences = sentences_from_text(text)
        else:
            sentences = sentences_from_template(args.template, args.count, args.seed)
        parser = make_parser(args)
        with api_progress(parser.spec):
            many = attribute_many(parser, sentences, ratio=args.ratio, seed=args.seed, k=args.k, target=s.target,
                                  baseline=s.baseline, steps=s.steps, gap_target=s.gap_target,
                                  max_steps=s.max_steps, progress=stderr_progress("attributions"))
    except AmpError as exc:
        return common.fail(exc)
    if args.csv:
        try:
            Path(args.csv).write_text(_many_csv(many), encoding="utf-8")
        except OSError as exc:
            return common.fail(f"cannot write {args.csv}: {exc}")
    if args.json:
        print(common.terminal_json(json.dumps({**model_payload(args, parser), "many": many.to_dict()},
                                              ensure_ascii=False, indent=2)))
    else:
        print(common.terminal_text("\n".join([model_header(parser), *format_many(many)])))
    return 0


def run(args: argparse.Namespace) -> int:
    if getattr(args, "server", None):
        return common.fail("attribute needs the model's weights in this process: drop --server")
    if args.many:
        if args.prompt_file or bool(args.sentences) == bool(args.template):
            return common.fail("--many takes either --sentences FILE or --template ID (and no --prompt-file)")
        return run_many(args)
    if not args.prompt_file:
        return common.fail("the following argument is required: --prompt-file (or --many)")

    def compute(parser: Any, read: PromptRead) -> tuple[Attribution, Influence | None]:
        s = _settings(args)
        attr = attribute(parser, read.prompt, args.lf0, args.lf1, target=s.target, method=s.method, steps=s.steps,
                         baseline=s.baseline, gap_target=s.gap_target, max_steps=s.max_steps,
                         progress=stderr_progress("gradient passes"))
        inf = example_influence(parser, read.prompt, attr.lf0, attr.lf1) if args.influence else None
        return attr, inf

    return run_with_model(args, compute, _as_json, format_attribution, check=lambda _read: _settings(args))


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("attribute", help="which prompt words and examples push toward LF0 or LF1 (gradients)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_reading_arguments(p)
    p.add_argument("--target", choices=TARGETS, default=TARGETS[0],
                   help="log-odds at the divergence point (default) or of the whole sequences")
    p.add_argument("--method", choices=METHODS, default="integrated_gradients", help="attribution method")
    p.add_argument("--baseline", choices=[b.value for b in Baseline], default=Baseline.ZERO.value,
                   help="the baseline x': zero embeddings (default), the pad token's embedding, the mean embedding")
    p.add_argument("--steps", type=common.count(1, limits.MAX_ATTRIBUTION_STEPS), default=DEFAULT_STEPS,
                   help=f"integrated-gradients steps to start from (default {DEFAULT_STEPS})")
    p.add_argument("--gap-target", type=float, default=DEFAULT_GAP_TARGET, metavar="SHARE",
                   help=f"triple the steps until the completeness gap is at most this share of |f(x) - f(x')| "
                        f"(default {DEFAULT_GAP_TARGET:g})")
    p.add_argument("--fixed-steps", action="store_true", help="exactly --steps: no gap target, no increase")
    p.add_argument("--max-steps", type=common.count(1, limits.MAX_ATTRIBUTION_STEPS), default=None,
                   help=f"the most steps the increase may reach (default {DEFAULT_MAX_STEPS}, or --steps if more)")
    many = p.add_argument_group("many sentences (--many)")
    many.add_argument("--many", action="store_true",
                      help="attribute many pool sentences by both methods and summarise per role/word")
    many.add_argument("--sentences", default=None, help="file of pool sentences, one a line")
    many.add_argument("--template", default=None, help="draw sentences from this template's pool (e.g. pp/visual/a)")
    many.add_argument("--count", type=common.count(1, MAX_SENTENCES), default=20, help="sentences drawn from --template")
    many.add_argument("--ratio", type=float, default=0.3, help="share of LF0 examples in each prompt (default 0.3)")
    many.add_argument("--seed", type=common.seed, default=0, help="the prompts' and the draw's seed (default 0)")
    many.add_argument("--k", type=common.count(0, limits.MAX_PROMPT_EXAMPLES), default=EXAMPLES_PER_PROMPT,
                      help=f"examples per prompt (default {EXAMPLES_PER_PROMPT})")
    many.add_argument("--csv", default=None, help="also write the per-unit table as CSV to this path")
    p.add_argument("--influence", action="store_true",
                   help="also compute each example's influence and show it beside its attribution (Spearman rho)")
    for action in p._actions:  # --many needs no prompt file: run() asks for one otherwise
        if action.dest == "prompt_file":
            action.required = False
    p.set_defaults(func=run, need=needs_gradients)  # an engine with gradients unless one is chosen
