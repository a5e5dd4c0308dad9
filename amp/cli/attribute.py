"""``python -m amp attribute``: which prompt tokens, test-sentence words and examples push the model
toward LF0 or LF1 where the two readings part (docs/paper-notes.md §18).

    python -m amp attribute --prompt-file prompt.json [--lf0 "…" --lf1 "…"] [--target divergence|sequence]
        [--method integrated_gradients|input_x_gradient] [--steps N] [--influence] [--json]
        [--model default] [--device …] [--dtype …] [--no-cache]

The prompt file is what ``python -m amp prompt mixed … --json`` and the Prompt builder write (or
the rendered text).  The target is log p(LF0's token) − log p(LF1's token) at the divergence
point (``sequence``: log P(LF0) − log P(LF1)); the attribution is per prompt token, summed per
word of the test sentence and per example (positive: toward LF0).  ``--influence`` also
computes each example's influence (``python -m amp influence``) and prints it beside the
example's attribution with Spearman's ρ.  Needs a local model (``--server`` is refused) on an
engine that gives gradients: without ``--engine`` (or ``$AMP_ENGINE``) the first engine whose
capabilities have them, where the default rule's has none (llama.cpp).  See
:mod:`amp.evaluation.attribution`.
"""

from __future__ import annotations

import argparse
from typing import Any

from amp.cli import common
from amp.cli.influence import add_reading_arguments, stderr_progress
from amp.cli.model_options import needs_gradients
from amp.cli.parse import run_with_model
from amp.evaluation.attribution import DEFAULT_STEPS, METHODS, TARGETS, Attribution, attribute, beside_influence
from amp.evaluation.influence import Influence, example_influence
from amp.parser.core import limits
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


def run(args: argparse.Namespace) -> int:
    if getattr(args, "server", None):
        return common.fail("attribute needs the model's weights in this process: drop --server")

    def compute(parser: Any, read: PromptRead) -> tuple[Attribution, Influence | None]:
        attr = attribute(parser, read.prompt, args.lf0, args.lf1, target=args.target, method=args.method,
                         steps=args.steps, progress=stderr_progress("gradient passes"))
        inf = example_influence(parser, read.prompt, attr.lf0, attr.lf1) if args.influence else None
        return attr, inf

    return run_with_model(args, compute, _as_json, format_attribution)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("attribute", help="which prompt words and examples push toward LF0 or LF1 (gradients)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_reading_arguments(p)
    p.add_argument("--target", choices=TARGETS, default=TARGETS[0],
                   help="log-odds at the divergence point (default) or of the whole sequences")
    p.add_argument("--method", choices=METHODS, default="integrated_gradients", help="attribution method")
    p.add_argument("--steps", type=common.count(1, limits.MAX_ATTRIBUTION_STEPS), default=DEFAULT_STEPS,
                   help=f"integrated-gradients steps (default {DEFAULT_STEPS})")
    p.add_argument("--influence", action="store_true",
                   help="also compute each example's influence and show it beside its attribution (Spearman rho)")
    p.set_defaults(func=run, need=needs_gradients)  # an engine with gradients unless one is chosen
