"""``python -m amp parse``: constrained beam search for one prompt.

    python -m amp parse --model default --prompt-file prompt.txt [--format fol|lisp]
        [--beams 5] [--alpha 0.7] [--unconstrained] [--max-new-tokens N] [--lf LF0 --lf LF1] [--json]
        [--device cpu|cuda|mps] [--dtype float32|float16|bfloat16|auto|int8] [--no-cache]

The prompt file is the rendered prompt text or the JSON the Prompt builder and ``amp prompt
--json`` write (checked whole; a JSON file that is not a prompt is refused); ``--prompt-file -``
reads it from stdin.  Output: the ranked beams with GNMT score,
summed log-prob and finished/parses flags, then the top beam's tokens with their probabilities
and its minimum token probability (the paper's confidence), and the beams' semantic entropy
with its meaning classes' masses (:func:`amp.evaluation.semantic_entropy.semantic_entropy`,
docs/paper-notes.md §17); with two readings also the verdict (what the model wrote: LF0, LF1 or
neither, then which reading it scores higher where the readings part,
:func:`amp.evaluation.verdict.score_verdict`); or all of it as JSON.  The readings are
``--lf LF0 --lf LF1``, else the ones the prompt carries — a JSON file's ``gold_lf0``/``gold_lf1``,
or, for a text file whose test sentence is a pool sentence, its two pool readings — and the output
says which (:class:`ReadingsSource`).  A model that cannot load prints one ``error: …`` line and
exits with status 2.

The model-related options and helpers here are shared with ``python -m amp score``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from amp.cli import common
from amp.cli.interrupt import quick_interrupt
from amp.cli.model_options import add_model_options, make_parser, model_header, model_payload
from amp.cli.progress import api_progress
from amp.errors import AmpError
from amp.evaluation.errors import SemanticEntropyError
from amp.evaluation.matching import match_lf
from amp.evaluation.semantic_entropy import SemanticEntropy, beam_shares, semantic_entropy
from amp.evaluation.verdict import Verdict, score_verdict
from amp.logic.prompt_convention import prompt_text
from amp.parser.core import limits
from amp.parser.core.errors import LogprobsUnavailable
from amp.parser.core.results import PairScore, ParseResult, TokenStep
from amp.parser.search.settings import DEFAULT_SEARCH, SearchSettings
from amp.records import enc_float
from amp.teaching.prompt_file import MAX_PROMPT_FILE_BYTES, PromptFileKind, PromptRead, read_prompt_file

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
        with api_progress(parser.spec):  # a model behind an API: its requests' progress on stderr
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


class ReadingsSource(StrEnum):
    """Where the two readings a parse is judged against came from."""

    OPTION = "lf_option"  #: ``--lf LF0 --lf LF1``
    PROMPT_FILE = "prompt_file"  #: a JSON prompt file's ``gold_lf0``/``gold_lf1``
    POOL = "pool"  #: a text prompt file whose test sentence is a pool sentence: its two pool readings

    @property
    def described(self) -> str:
        return {ReadingsSource.OPTION: "--lf",
                ReadingsSource.PROMPT_FILE: "the prompt file's gold_lf0/gold_lf1",
                ReadingsSource.POOL: "the pool's two readings of the test sentence"}[self]


@dataclass(frozen=True)
class Readings:
    """The test sentence's two readings, in the parse's notation, and where they came from."""

    lf0: str
    lf1: str
    source: ReadingsSource


def prompt_readings(read: PromptRead, fmt: str) -> tuple[Readings | None, str | None]:
    """The readings ``read``'s prompt carries (``None`` without both), or ``None`` and a note saying
    why they do not apply (they are in another notation than the parse's ``fmt``)."""
    p = read.prompt
    if not p.gold_lf0 or not p.gold_lf1:
        return None, None
    if p.lf_format != fmt:
        return None, (f"the prompt's gold LFs are {p.lf_format.upper()} but the parse is {fmt.upper()}, so no "
                      f"verdict (parse with --format {p.lf_format}, or give --lf twice)")
    source = ReadingsSource.PROMPT_FILE if read.kind is PromptFileKind.JSON else ReadingsSource.POOL
    return Readings(p.gold_lf0, p.gold_lf1, source), None


def beams_semantic_entropy(result: ParseResult, readings: Readings | None, fmt: str) -> SemanticEntropy | None:
    """Semantic entropy of the beams' meanings, each beam weighed by its share of the beams'
    probability (:func:`~amp.evaluation.semantic_entropy.beam_shares`; equal weights where none is
    known), against ``readings`` (docs/paper-notes.md §17); ``None`` without beams of positive weight."""
    if not result.beams:
        return None
    shares = beam_shares([b.logprob for b in result.beams])
    lf0, lf1 = (readings.lf0, readings.lf1) if readings is not None else (None, None)
    try:
        return semantic_entropy([b.text for b in result.beams], list(shares) or None, lf0, lf1, fmt=fmt)
    except SemanticEntropyError:
        return None


def format_semantic_entropy(se: SemanticEntropy | None, judged: bool) -> str:
    """The one text line of the beams' semantic entropy: with readings (``judged``) the mass on LF0,
    LF1 and neither, else the largest meaning's mass."""
    if se is None:
        return "semantic entropy: – (no beam with a probability)"
    head = (f"semantic entropy: {se.entropy:.3f} nats over {se.n_meanings} meaning{'s' * (se.n_meanings != 1)} "
            f"of {se.n} beam{'s' * (se.n != 1)}")
    if judged:
        return f"{head}; mass on LF0 {se.p_lf0:.1%}, LF1 {se.p_lf1:.1%}, neither {se.p_neither:.1%}"
    return f"{head}; largest {se.classes[0].mass:.1%}: {se.classes[0].text}"


@dataclass(frozen=True)
class Parsed:
    """What ``amp parse`` prints: the search, the readings (and a note where the prompt's do not
    apply), the verdict against them and the beams' semantic entropy."""

    result: ParseResult
    readings: Readings | None
    note: str | None
    verdict: Verdict | None
    meanings: SemanticEntropy | None


def run(args: argparse.Namespace) -> int:
    # long: the readings (given, the prompt's, or none), the parse with or without its verdict, and its two outputs
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

    def parse(parser: Any, read: PromptRead) -> Parsed:
        readings: Readings | None
        if lfs:
            spelled = [prompt_text(lf, args.fmt, read.prompt.test_utterance) for lf in lfs]  # its sentence's order
            readings, note = Readings(spelled[0], spelled[1], ReadingsSource.OPTION), None
        else:  # the prompt's own readings, as the prompt convention spells them already
            readings, note = prompt_readings(read, args.fmt)
        if readings is None:
            result = parser.parse(read.text, search, fmt=args.fmt)
            return Parsed(result, None, note, None, beams_semantic_entropy(result, None, args.fmt))
        try:
            ((result, pair),) = parser.parse_and_score_many([(read.text, readings.lf0, readings.lf1)], search,
                                                            fmt=args.fmt)
        except LogprobsUnavailable as exc:
            if readings.source is ReadingsSource.OPTION:  # asked for by name: say it cannot be done
                raise
            # the prompt's own readings, not asked for: the parse without its verdict, and why
            result = parser.parse(read.text, search, fmt=args.fmt)
            return Parsed(result, readings, f"not scored: {exc}", None,
                          beams_semantic_entropy(result, readings, args.fmt))
        return Parsed(result, readings, None, format_verdict(result, pair, [readings.lf0, readings.lf1], args.fmt),
                      beams_semantic_entropy(result, readings, args.fmt))

    def as_json(value: Parsed) -> dict:
        v = value.verdict
        payload: dict[str, Any] = {"result": value.result.to_dict()}
        r = value.readings
        payload["readings"] = None if r is None else {"lf0": r.lf0, "lf1": r.lf1, "source": r.source.value}
        if value.note is not None:
            payload["readings_note"] = value.note
        payload["semantic_entropy"] = None if value.meanings is None else value.meanings.to_dict()
        if v is not None:
            payload["verdict"] = {"wrote": v.wrote.value if v.wrote else None, "scores_higher": v.preference.value,
                                  "p_lf0": v.p_lf0, "measure": v.measure.value if v.measure else None,
                                  "p_lf0_paper": enc_float(v.p_lf0_paper), "shared_minimum": v.shared_minimum,
                                  "text": v.text}
        return payload

    def as_lines(value: Parsed) -> list[str]:
        v, r = value.verdict, value.readings
        lines = [*format_parse(value.result), format_semantic_entropy(value.meanings, r is not None)]
        if r is not None:
            lines.append(f"readings: LF0 and LF1 from {r.source.described}")
            if value.note is not None:  # the prompt's readings, which this model cannot score
                lines.append(f"verdict: {value.note}")
        elif value.note is not None:
            lines.append(f"readings: {value.note}")
        return lines + ([f"verdict: {v.wrote_text}", f"         {v.scores_text}"] if v else [])

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
