"""``python -m amp influence``: which of a few-shot prompt's examples moved the model's P(LF0).

    python -m amp influence --prompt-file prompt.json [--lf0 "…" --lf1 "…"] [--json]
        [--model default] [--device …] [--dtype …] [--no-cache] [--server URL]

The prompt file is JSON (what ``python -m amp prompt mixed … --json`` and the Prompt builder's
download write) or the rendered prompt text (examples that are pool sentences get their labels
back, so they can be flipped).  The test sentence's readings are ``--lf0``/``--lf1``, else the
prompt's golds.  The model scores both readings after the prompt, after each example removed
and after each ambiguous example flipped (2k + 1 cached pair scores; progress on stderr), and
the command prints each example's change in P(LF0) — the paper's min-token version and the
total-probability one — with the position summary, in the order of every front end
(:meth:`amp.evaluation.influence.Influence.ranked`): the examples whose removal or flip turns the
model's preferred reading first (marked ⇄), then the rest, each by its larger change.  See
:mod:`amp.evaluation.influence`.  The prompt's LFs and ``--lf0``/``--lf1`` are scored in the paper's
prompt convention (docs/paper-notes.md §16) unless ``--literal``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from amp.cli.parse import add_model_arguments, run_with_model
from amp.cli.score import scored_lfs
from amp.evaluation.influence import Influence, example_influence, influence_golds
from amp.teaching.prompt_file import PromptRead


def stderr_progress(unit: str) -> Callable[[int, int], None]:
    """A progress callback of a model command: ``[done/total] <unit>`` on stderr, one line a call."""

    def say(done: int, total: int) -> None:
        print(f"[{done}/{total}] {unit}", file=sys.stderr, flush=True)

    return say


def add_reading_arguments(p: argparse.ArgumentParser) -> None:
    """The model options of a prompt command (:func:`amp.cli.parse.add_model_arguments`) and the test
    sentence's two readings, ``--lf0``/``--lf1`` (default: the prompt's golds)."""
    add_model_arguments(p)
    p.add_argument("--lf0", default=None, help="the test sentence's LF0 (default: the prompt's gold LF0)")
    p.add_argument("--lf1", default=None, help="the test sentence's LF1 (default: the prompt's gold LF1)")


def _signed(x: float | None) -> str:
    return "     –" if x is None else f"{x:+.3f}"


def format_influence(inf: Influence) -> list[str]:
    base = "–" if inf.base_p_lf0 is None else f"{inf.base_p_lf0:.4f}"
    total = "–" if inf.base_p_lf0_total is None else f"{inf.base_p_lf0_total:.4f}"
    lines = [f"test sentence: {inf.test_utterance}", f"base P(LF0) = {base}  (total-probability {total})",
             "ΔP(LF0) when the example is removed / flipped (min-token; total-probability in brackets), "
             "⇄ where it turns the preferred reading (those first), then by the larger change:"]
    for e in inf.ranked():
        shown = "plain" if e.label is None else f"LF{e.label}"
        turn = "⇄" if any(inf.turns(e, c) for c in ("removed", "flipped")) else " "
        lines.append(f"  {e.index + 1:>2}. [{shown:>5}] removed {_signed(e.delta_removed)} "
                     f"({_signed(e.delta_removed_total)})  flipped {_signed(e.delta_flipped)} "
                     f"({_signed(e.delta_flipped_total)}) {turn} {e.utterance}")
    summary = inf.position_summary()
    rho = "–" if summary.spearman is None else f"{summary.spearman:+.2f}"
    first = "–" if summary.first_mean is None else f"{summary.first_mean:.3f}"
    last = "–" if summary.last_mean is None else f"{summary.last_mean:.3f}"
    lines.append(f"position: Spearman rho(position, |Δ removed|) = {rho}; mean |Δ| first third {first}, "
                 f"last third {last}")
    return lines


def run(args: argparse.Namespace) -> int:
    def compute(parser: Any, read: PromptRead) -> Influence:
        lf0, lf1 = (None if lf is None else scored_lfs([lf], read.prompt.lf_format, args.literal,
                                                       read.prompt.test_utterance)[0]
                    for lf in (args.lf0, args.lf1))
        return example_influence(parser, read.prompt, lf0, lf1, progress=stderr_progress("pair scores"))

    return run_with_model(args, compute, lambda inf: {"influence": inf.to_dict()}, format_influence,
                          check=lambda read: influence_golds(read.prompt, args.lf0, args.lf1))


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("influence", help="each prompt example's influence on P(LF0) (removed / flipped)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_reading_arguments(p)
    p.add_argument("--literal", action="store_true",
                   help="keep the file's and --lf0/--lf1's spelling (default: the prompt convention, x, y, z / a, e, i)")
    p.set_defaults(func=run)
