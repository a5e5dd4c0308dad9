"""``python -m amp score``: forced decoding of one or more LFs after a prompt.

    python -m amp score --model default --prompt-file prompt.txt --lf "exists x . ..." \\
        [--lf "forall x . ..."] [--format fol|lisp] [--json] [--device …] [--dtype …] [--no-cache]

Prints each LF's tokens with their probabilities (raw and renormalised over the grammar), the
summed log-prob and the minimum token probability (the paper's confidence, §2); with exactly two
LFs also the three P(LF0)s (:class:`amp.evaluation.p_lf0_measures.PLf0Measure`): first the one
the verdict uses, m0 / (m0 + m1) over the tokens from where the readings part, then the paper's
over every token (and the shared token that pins it at 0.5, if one does) and the
total-probability one; and which reading the model scores higher (or *undecided* within
:data:`amp.evaluation.verdict.UNDECIDED_BAND` of 0.5, docs/paper-notes.md §12).  ``--json``
prints the records instead (``pair`` with ``p_lf0_parted``, ``parting_index`` and
``shared_minimum`` added).  A model that cannot load prints one ``error: …`` line and exits with 2.

Each ``--lf`` is scored in the paper's prompt convention (docs/paper-notes.md §16: entity variables
x, y, z, event variables a, e, i, same-kind quantifiers in the templates' order, conjuncts in the
pools' order with the prompt's test sentence deciding the ties), so P(LF0) compares meanings, not
letters or conjunct order; ``--literal`` scores the LFs as typed.  The output says which spelling
was scored, and when the conjuncts were reordered.  An LF that does not read is one ``error:`` line (before any model loads).
"""

from __future__ import annotations

import argparse
from typing import Any

from amp.cli import common
from amp.cli.parse import add_model_arguments, format_steps, run_with_model
from amp.errors import AmpError
from amp.evaluation.p_lf0_measures import PLf0Measure
from amp.evaluation.verdict import score_verdict
from amp.logic.errors import LFParseError
from amp.logic.prompt_convention import REORDERED_NOTE, conjuncts_reordered, prompt_text
from amp.parser.core.results import ForcedScore, PairScore
from amp.records import enc_float
from amp.teaching.prompt_file import PromptRead


def format_scores(scores: list[ForcedScore], pair: PairScore | None) -> list[str]:
    lines: list[str] = []
    for i, s in enumerate(scores):
        lines.append(f"LF{i}: {s.lf}")
        lines.extend(format_steps(s.steps))
        lines.append(f"  sum logprob {s.sum_logprob:.4f}  mean {s.mean_logprob:.4f}  "
                     f"grammar sum {s.sum_logprob_grammar:.4f}")
        lines.append(f"  confidence (min token prob) {s.min_prob:.4f}  (grammar {s.min_prob_grammar:.4f})")
    if pair is not None:
        lines.extend(format_p_lf0(pair))
        lines.append(f"verdict: {score_verdict(None, pair).scores_text}")
    return lines


def format_p_lf0(pair: PairScore) -> list[str]:
    """The three P(LF0)s, the verdict's first (docs/paper-notes.md §12)."""
    d, shared = pair.parting_index, pair.shared_minimum
    where = ("the two LFs have the same tokens" if d is None
             else f"minimum token probabilities from token {d}, where the readings part, to the end")
    paper = f"{PLf0Measure.PAPER.label} = {pair.p_lf0:.4f}  (minimum token probabilities over every token"
    paper += f"; both readings' is the token “{shared}”, which they share)" if shared is not None else ")"
    return [f"P(LF0) = {pair.p_lf0_parted:.4f}  ({where})", paper,
            f"{PLf0Measure.TOTAL.label} = {pair.p_lf0_total:.4f}"]


Scored = tuple[list[ForcedScore], PairScore | None]


#: What the output says was scored.
SPELLING_PROMPT = "the prompt convention (x, y, z for entities, a, e, i for events; --literal scores the LFs as typed)"
SPELLING_LITERAL = "the LFs as typed (--literal)"


def scored_lfs(lfs: list[str], fmt: str, literal: bool, sentence: str | None = None) -> list[str]:
    """The LFs as they are scored: in the prompt convention unless ``literal``, ``sentence`` (the
    prompt's test sentence) deciding the conjunct-order ties (raises
    :class:`~amp.logic.errors.LFParseError`, naming the ``--lf``, for one that does not read)."""
    if literal:
        return list(lfs)
    out = []
    for n, lf in enumerate(lfs):
        try:
            out.append(prompt_text(lf, fmt, sentence))
        except LFParseError as exc:
            raise LFParseError(f"--lf number {n + 1} does not read: {exc}", text=exc.text, position=exc.position,
                               line=exc.line, column=exc.column, found=exc.found, expected=exc.expected,
                               fmt=exc.fmt) from None
    return out


def run(args: argparse.Namespace) -> int:
    try:
        scored_lfs(args.lf, args.fmt, args.literal)  # an LF that does not read fails before any model loads
    except AmpError as exc:
        return common.fail(exc)
    spelling = SPELLING_LITERAL if args.literal else SPELLING_PROMPT
    reordered: list[bool] = []

    def score(parser: Any, read: PromptRead) -> Scored:
        sentence = read.prompt.test_utterance
        lfs = scored_lfs(args.lf, args.fmt, args.literal, sentence)
        reordered[:] = [not args.literal and conjuncts_reordered(lf, args.fmt, sentence) for lf in args.lf]
        if len(lfs) == 2:
            pair = parser.score_pair(read.text, lfs[0], lfs[1], fmt=args.fmt)
            return [pair.lf0, pair.lf1], pair
        return parser.score(read.text, lfs, fmt=args.fmt), None

    return run_with_model(args, score, lambda scored: {"scored_spelling": "literal" if args.literal else "prompt",
                                                       "conjuncts_reordered": reordered, **_as_json(scored)},
                          lambda scored: [f"Scored: {spelling}", *([REORDERED_NOTE] if any(reordered) else []),
                                          *format_scores(*scored)])


def _as_json(scored: Scored) -> dict[str, Any]:
    scores, pair = scored
    payload: dict[str, Any] = {"scores": [s.to_dict() for s in scores]}
    if pair is not None:
        payload["pair"] = {**pair.to_dict(), PLf0Measure.PARTED.value: enc_float(pair.p_lf0_parted),
                           "parting_index": pair.parting_index, "shared_minimum": pair.shared_minimum}
        v = score_verdict(None, pair)
        payload["verdict"] = {"scores_higher": v.preference.value, "measure": v.measure.value if v.measure else None,
                              "p_lf0": v.p_lf0, "text": v.scores_text}
    return payload


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("score", help="forced decoding of LFs after a prompt (P(LF0) for two)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(p)
    p.add_argument("--lf", action="append", required=True, help="a logical form to score (repeat for two: P(LF0))")
    p.add_argument("--literal", action="store_true",
                   help="score the LFs as typed, not in the prompt convention (x, y, z / a, e, i; the default)")
    p.set_defaults(func=run)
