"""``python -m amp parse``: constrained beam search for one prompt.

    python -m amp parse --model default --prompt-file prompt.txt [--format fol|lisp]
        [--beams 5] [--alpha 0.7] [--unconstrained] [--max-new-tokens N] [--lf LF0 --lf LF1] [--json]
        [--device cpu|cuda|mps] [--dtype float32|float16|bfloat16|auto|int8] [--no-cache]

The prompt file is the rendered prompt text or the JSON the Prompt builder and ``amp prompt
--json`` write (checked whole; a JSON file that is not a prompt is refused); ``--prompt-file -``
reads it from stdin.  Output: the ranked beams with GNMT score,
summed log-prob and finished/parses flags, then the top beam's tokens with their probabilities
and its minimum token probability (the paper's confidence); with ``--lf LF0 --lf LF1`` also the
verdict (what the model wrote: LF0, LF1 or neither, then which reading it scores higher where
the readings part, :func:`amp.evaluation.verdict.score_verdict`); or the result as JSON.  A model
that cannot load prints one ``error: …`` line and exits with status 2.

The model-related options and helpers here are shared with ``python -m amp score``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from amp.cli import common
from amp.cli.interrupt import quick_interrupt
from amp.cli.model_options import add_model_options, make_parser, model_header, model_payload
from amp.errors import AmpError
from amp.evaluation.matching import match_lf
from amp.evaluation.verdict import Verdict, score_verdict
from amp.logic.prompt_convention import prompt_text
from amp.parser.core import limits
from amp.parser.core.results import PairScore, ParseResult, TokenStep
from amp.parser.search.settings import DEFAULT_SEARCH, SearchSettings
from amp.records import enc_float
from amp.teaching.prompt_file import MAX_PROMPT_FILE_BYTES, PromptRead, read_prompt_file

T = TypeVar("T")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the commands that parse or score one prompt (parse, score, influence)."""
    add_model_options(parser)
    parser.add_argument("--prompt-file", required=True, help="file holding the prompt, or - for stdin")
    common.add_format_argument(parser)
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def read_prompt(path: str, *, literal: bool = False) -> PromptRead:
    """The prompt file ``path`` (``-`` = stdin), read by the one prompt reader
    (:func:`amp.teaching.prompt_file.read_prompt_file`): the JSON the Prompt builder and
    ``amp prompt --json`` write, or the rendered prompt text, checked whole."""
    where = "the prompt on stdin" if path == "-" else f"the prompt file {path!r}"
    limit = MAX_PROMPT_FILE_BYTES + 1  # one byte over tells a file over the limit
    try:
        if path == "-":
            raw = getattr(sys.stdin, "buffer", None)
            data = raw.read(limit) if raw is not None else sys.stdin.read(limit).encode("utf-8", "surrogateescape")
        else:
            with open(path, "rb") as fh:
                data = fh.read(limit)
    except OSError as exc:
        raise AmpError(f"cannot read {where}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise AmpError(f"{where} is not UTF-8 text (byte {exc.start})") from None
    return read_prompt_file(data, where, literal=literal)


def format_steps(steps: tuple[TokenStep, ...] | list[TokenStep], indent: str = "  ") -> list[str]:
    """One line per token: the token, its probability and its grammar-renormalised probability."""
    lines = []
    for i, s in enumerate(steps):
        lines.append(f"{indent}{i:>3}  {s.token!r:<18} p={s.prob:.4f}  p_grammar={s.prob_grammar:.4f}")
    return lines


def format_parse(result: ParseResult) -> list[str]:
    mode = "constrained" if result.constrained else "unconstrained"
    settings = result.settings
    head = (f"beams ({mode}, {result.fmt}, beam {settings.get('beams', len(result.beams))}, "
            f"alpha {settings.get('alpha', '?')}, prompt {result.prompt_tokens} tokens):")
    lines = [head]
    for b in result.beams:
        flags = ("finished" if b.finished else "cut-off") + (" parses" if b.parses else " no-parse")
        lines.append(f"  {b.rank + 1}. score {b.score:9.4f}  logprob {b.logprob:9.4f}  [{flags}]  {b.text}")
    top = result.beams[0] if result.beams else None
    if top is not None and top.steps:
        lines.append("top beam tokens:")
        lines.extend(format_steps(top.steps))
        lines.append(f"confidence (min token prob): {min(s.prob for s in top.steps):.4f}")
    return lines


def run_with_model(args: argparse.Namespace, compute: Callable[[Any, PromptRead], T],
                   as_json: Callable[[T], dict], as_lines: Callable[[T], list[str]],
                   check: Callable[[PromptRead], object] | None = None) -> int:
    """The frame of a model command: read the prompt file (:func:`read_prompt`), ``check(read)``
    (the command's own input checks, before any model is named or loaded), make the parser,
    ``compute(parser, read)``;
    one ``error:`` line on failure; then the value as JSON (after :func:`model_payload`) or as text."""
    try:
        prompt = read_prompt(args.prompt_file, literal=getattr(args, "literal", False))
        if check is not None:
            check(prompt)
        parser = make_parser(args)
        value = compute(parser, prompt)
    except AmpError as exc:
        return common.fail(exc)
    if args.json:
        print(common.terminal_json(json.dumps({**model_payload(args, parser), **as_json(value)}, ensure_ascii=False,
                                              indent=2)))
    else:
        print(common.terminal_text("\n".join([model_header(parser), *as_lines(value)])))
    return 0


def format_verdict(result: ParseResult, pair: PairScore | None, lfs: list[str], fmt: str) -> Verdict | None:
    """The verdict on the top beam against two given readings (``None`` without them):
    what the model wrote, then which reading it scores higher (:func:`amp.evaluation.verdict.score_verdict`)."""
    if pair is None or len(lfs) != 2:
        return None
    top = result.beams[0].text if result.beams else None
    return score_verdict(match_lf(top, lfs[0], lfs[1], fmt=fmt), pair)


def run(args: argparse.Namespace) -> int:
    lfs = args.lf or []
    if len(lfs) not in (0, 2):
        return common.fail(AmpError(f"--lf takes the two readings, LF0 then LF1 (got {len(lfs)})"))
    try:  # scored in the prompt convention, as amp score does (docs/paper-notes.md §16); read before any model loads
        for lf in lfs:
            prompt_text(lf, args.fmt)
    except AmpError as exc:
        return common.fail(exc)
    search = SearchSettings(beams=args.beams, alpha=args.alpha, constrained=not args.unconstrained,
                            max_new_tokens=args.max_new_tokens)

    def parse(parser: Any, read: PromptRead) -> tuple[ParseResult, Verdict | None]:
        if not lfs:
            return parser.parse(read.text, search, fmt=args.fmt), None
        spelled = [prompt_text(lf, args.fmt, read.prompt.test_utterance) for lf in lfs]  # its sentence's order
        ((result, pair),) = parser.parse_and_score_many([(read.text, spelled[0], spelled[1])], search, fmt=args.fmt)
        return result, format_verdict(result, pair, spelled, args.fmt)

    def as_json(value: tuple[ParseResult, Verdict | None]) -> dict:
        result, v = value
        payload: dict[str, Any] = {"result": result.to_dict()}
        if v is not None:
            payload["verdict"] = {"wrote": v.wrote.value if v.wrote else None, "scores_higher": v.preference.value,
                                  "p_lf0": v.p_lf0, "measure": v.measure.value if v.measure else None,
                                  "p_lf0_paper": enc_float(v.p_lf0_paper), "shared_minimum": v.shared_minimum,
                                  "text": v.text}
        return payload

    def as_lines(value: tuple[ParseResult, Verdict | None]) -> list[str]:
        result, v = value
        return format_parse(result) + ([f"verdict: {v.wrote_text}", f"         {v.scores_text}"] if v else [])

    return run_with_model(args, parse, as_json, as_lines)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("parse", help="constrained beam search for one prompt",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(p)
    default = DEFAULT_SEARCH  # the CLI declares no defaults of its own
    p.add_argument("--beams", type=common.beams, default=default.beams, help=f"beam size (default {default.beams})")
    p.add_argument("--alpha", type=common.bounded(limits.check_alpha), default=default.alpha,
                   help=f"GNMT length-penalty alpha (default {default.alpha})")
    p.add_argument("--unconstrained", action="store_true", help="plain beam search without the grammar")
    p.add_argument("--max-new-tokens", type=common.max_new_tokens, default=None, help="generation budget (default: from the prompt)")
    p.add_argument("--lf", action="append", default=None,
                   help="the two readings, LF0 then LF1 (repeat): the top beam is matched against them and "
                        "both are scored in the prompt convention (what the model wrote, then which reading it "
                        "scores higher)")
    p.set_defaults(func=run)
    quick_interrupt(p)  # Ctrl-C ends it at once, even inside llama.cpp (issue #44 point 5)
