"""A prompt as a file: the Prompt builder's download (text, JSON) and its bounded JSON import.

The JSON is the :class:`amp.prompts.Prompt` record (:meth:`~amp.prompts.Prompt.to_dict`) with the
rendered prompt added as ``text`` — the same object ``python -m amp prompt … --json`` prints, so
either reads back here.  The prompt is its fields (the examples with their readings and labels,
the test sentence and its gold LFs — what influence flips and verdicts score), and the model reads
what they render; ``text`` is a copy for people, optional on import, and must agree with that
rendering (up to a final line break): a ``text`` edited by hand, or left stale after the fields
were edited, is refused (:func:`check_text`), naming the first line where the two part and the
ways out — delete ``text`` to use the fields, or save the edited text alone as a text prompt file
to have the model read it as written.  Nothing is silently ignored (issue #46 point 6).

A file may also hold the rendered prompt text (:func:`prompt_from_file`, read back by
:func:`amp.prompts.prompt_from_text`: examples that are pool sentences get their labels back).
:func:`read_prompt_file` is the one reader of every command and page: it tells the two kinds
apart (a file whose text is JSON is read as JSON and must be a prompt — never as prompt text)
and returns the prompt with the text the model reads.

An import is checked whole before it is used (:func:`prompt_from_json`): at most
:data:`MAX_PROMPT_FILE_BYTES` bytes of UTF-8 JSON, one object of the Prompt schema, at most
:data:`~amp.parser.core.limits.MAX_PROMPT_EXAMPLES` examples, a known ambiguity type (or none), gold
LFs that parse and fit :data:`~amp.parser.core.limits.MAX_LF_CHARS`, and a rendered prompt within
:data:`~amp.parser.core.limits.MAX_PROMPT_CHARS`.  Anything else is a :class:`PromptFileError`
saying what and where; nothing is half-read.

An imported prompt is put in the paper's prompt convention (:func:`in_prompt_convention`,
docs/paper-notes.md §16): its examples' LFs and its gold LFs are spelled as the templates spell
them (entity variables x, y, z, event variables a, e, i in the templates' order, conjuncts in
the pools' order with each LF's own sentence deciding the ties), so a file
written by hand with other letters scores meanings, not spellings; ``literal=True`` keeps the
file's spelling.  :func:`respelled_count` says how many LFs an import changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from amp.data.types import find_type, type_ids
from amp.errors import AmpError
from amp.logic.errors import LFParseError
from amp.logic.prompt_convention import conjuncts_reordered, names_follow
from amp.logic.prompt_convention import prompt_text as lf_prompt_text
from amp.logic.reader import parse_lf
from amp.logic.vocabulary import Format
from amp.parser.core import limits
from amp.prompts import Prompt, prompt_from_text
from amp.teaching.errors import PromptFileError

__all__ = ["MAX_PROMPT_FILE_BYTES", "PromptFileError", "PromptFileKind", "PromptRead", "check_text", "conjuncts_were_reordered",
           "in_prompt_convention", "prompt_from_file", "prompt_from_json", "prompt_json", "prompt_text", "read_prompt_file", "respelled_count"]

#: The largest prompt file read (1 MB: a prompt at MAX_PROMPT_CHARS, with its JSON around it).
MAX_PROMPT_FILE_BYTES = 1_000_000


def prompt_text(prompt: Prompt) -> str:
    """The rendered prompt, as the model sees it (docs/paper-notes.md §10), with a final newline for a text file."""
    return prompt.render() + "\n"


def prompt_json(prompt: Prompt) -> bytes:
    """The prompt record with its rendered ``text``, as indented UTF-8 JSON."""
    payload: dict[str, Any] = {**prompt.to_dict(), "text": prompt.render()}
    return (json.dumps(payload, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _decode(data: bytes, where: str) -> Any:
    if len(data) > MAX_PROMPT_FILE_BYTES:
        raise PromptFileError(f"{where} has {len(data):,} bytes, over the limit of {MAX_PROMPT_FILE_BYTES:,}")
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise PromptFileError(f"{where} is not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise PromptFileError(f"{where} is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise PromptFileError(f"{where} nests too deeply to be a prompt") from None


def _check(prompt: Prompt, where: str) -> None:
    if len(prompt.examples) > limits.MAX_PROMPT_EXAMPLES:
        raise PromptFileError(f"{where} has {len(prompt.examples)} examples, over the limit of "
                              f"{limits.MAX_PROMPT_EXAMPLES}")
    if prompt.type is not None and find_type(prompt.type) is None:
        raise PromptFileError(f"{where}: unknown ambiguity type {prompt.type!r}; known: {', '.join(type_ids())}")
    fmt = prompt.lf_format
    for name in ("gold_lf0", "gold_lf1"):
        gold = getattr(prompt, name)
        if gold is None:
            continue
        try:
            limits.check_text(gold, f"{where}: {name}", limits.MAX_LF_CHARS)
            parse_lf(gold, fmt)
        except AmpError as exc:
            raise PromptFileError(f"{where}: {name} is not a usable {fmt.upper()} LF: {exc}") from None
    try:
        limits.check_prompt(prompt.render())
    except AmpError as exc:
        raise PromptFileError(f"{where}: {exc}") from None


def in_prompt_convention(prompt: Prompt) -> Prompt:
    """``prompt`` with its example LFs and gold LFs in the prompt convention.

    An LF whose variables already follow the convention's naming (:func:`~amp.logic.prompt_convention.names_follow`)
    is kept as it is: the project's Lisp prompts show the original's sorted form, whose displayed
    body no longer gives the template's first-use order (docs/paper-notes.md §10), and their
    spelling is already the model's.  In FOL such an LF is kept only when its conjuncts are in the
    convention's order too (§16, "Conjunct order": an example's decided by its utterance, the gold
    LFs' by the test sentence).  An example LF that does not read is kept too (the model sees it
    as written)."""
    fmt = prompt.lf_format

    def spelled(lf: str | None, sentence: str) -> str | None:
        if lf is None:
            return None
        try:
            if names_follow(lf, fmt) and (fmt == Format.LISP or not conjuncts_reordered(lf, fmt, sentence)):
                return lf
            return lf_prompt_text(lf, fmt, sentence)
        except LFParseError:
            return lf

    examples = tuple(replace(ex, lf=spelled(ex.lf, ex.utterance) or ex.lf, alt_lf=spelled(ex.alt_lf, ex.utterance))
                     for ex in prompt.examples)
    test = prompt.test_utterance
    return replace(prompt, examples=examples, gold_lf0=spelled(prompt.gold_lf0, test),
                   gold_lf1=spelled(prompt.gold_lf1, test))


def respelled_count(before: Prompt, after: Prompt) -> int:
    """How many example and gold LFs differ between two versions of a prompt."""
    pairs: list[tuple[str | None, str | None]] = [(a.lf, b.lf) for a, b in zip(before.examples, after.examples,
                                                                               strict=True)]
    pairs += [(before.gold_lf0, after.gold_lf0), (before.gold_lf1, after.gold_lf1)]
    return sum(a != b for a, b in pairs)


def conjuncts_were_reordered(before: Prompt, after: Prompt) -> bool:
    """Whether putting ``before`` in the convention (``after``) reordered the conjuncts of one of its
    LFs (then :data:`~amp.logic.prompt_convention.REORDERED_NOTE` says so)."""
    fmt = before.lf_format
    pairs: list[tuple[str | None, str | None, str]] = [(a.lf, b.lf, a.utterance)
                                                       for a, b in zip(before.examples, after.examples, strict=True)]
    pairs += [(before.gold_lf0, after.gold_lf0, before.test_utterance),
              (before.gold_lf1, after.gold_lf1, before.test_utterance)]

    def reordered(lf: str | None, spelled: str | None, sentence: str) -> bool:
        try:
            return lf is not None and lf != spelled and conjuncts_reordered(lf, fmt, sentence)
        except LFParseError:  # an example kept as written because it does not read
            return False

    return any(reordered(*p) for p in pairs)


def prompt_from_json(data: bytes, where: str = "the prompt file", *, literal: bool = False) -> Prompt:
    """Read a prompt file written by :func:`prompt_json` (or ``amp prompt --json``), checked whole,
    in the prompt convention unless ``literal`` (module docstring).

    ``where`` names the file in messages.  Raises :class:`PromptFileError`.
    """
    if not isinstance(data, bytes | bytearray):
        raise PromptFileError(f"{where} must be bytes, not {type(data).__name__}")
    value = _decode(bytes(data), where)
    if not isinstance(value, dict):
        raise PromptFileError(f"{where} must hold one JSON object (a prompt), not {type(value).__name__}")
    try:
        prompt = Prompt.from_dict(value)
    except AmpError as exc:
        raise PromptFileError(f"{where} holds JSON that is not a prompt (the object `amp prompt --json` and the "
                              f"Prompt builder write): {exc}") from None
    _check(prompt, where)
    if "text" in value:
        check_text(value["text"], prompt, where)
    return prompt if literal else _respelled(prompt, where)


def _line_of(lines: list[str], i: int) -> str:
    if i >= len(lines):
        return "nothing (it has ended)"
    line = lines[i]
    return repr(line if len(line) <= 70 else line[:69] + "…")


def check_text(text: Any, prompt: Prompt, where: str = "the prompt file") -> None:
    """Refuse a prompt file's ``text`` that is not the rendering of its fields, ``prompt`` as the
    file spells it (module docstring): :class:`PromptFileError` names the first line where they part
    and says that the fields win and how to use either."""
    if not isinstance(text, str):
        raise PromptFileError(f'{where}: its "text" must be a string, not {type(text).__name__}')
    rendered = prompt.render()
    mine = text.replace("\r\n", "\n").rstrip("\n")
    if mine == rendered:
        return
    have, want = mine.split("\n"), rendered.split("\n")
    at = next((i for i, (a, b) in enumerate(zip(have, want, strict=False)) if a != b), min(len(have), len(want)))
    raise PromptFileError(
        f'{where}: its "text" differs from the prompt its fields render (line {at + 1}: the text has '
        f"{_line_of(have, at)}, the fields render {_line_of(want, at)}). The model reads what the fields "
        '("examples", "test_utterance", "header") render, so the fields win: to use them, delete "text" '
        "(or make it agree); to have the model read your text as written, save the text alone as a text "
        "file (the rendered prompt, as `amp prompt` prints it) and give that file instead.")


def _respelled(prompt: Prompt, where: str) -> Prompt:
    out = in_prompt_convention(prompt)
    try:
        limits.check_prompt(out.render())
    except AmpError as exc:  # pragma: no cover - respelling never lengthens past the bound by much
        raise PromptFileError(f"{where}: {exc}") from None
    return out


class PromptFileKind(StrEnum):
    """What a prompt file holds."""

    JSON = "json"  #: the prompt record (:func:`prompt_json`, ``amp prompt --json``)
    TEXT = "text"  #: the rendered prompt (:func:`prompt_text`, ``amp prompt``)


@dataclass(frozen=True)
class PromptRead:
    """A prompt file read and checked whole: the prompt, the text the model reads, and the kind."""

    prompt: Prompt
    #: What the model reads: the rendered prompt of a JSON file or of a respelled text file, else
    #: the file's own text (without its final line break).
    text: str
    kind: PromptFileKind


def _holds_json(text: str) -> bool:
    """Whether ``text`` is meant as JSON: it opens an object, array or string, or parses as JSON
    (a rendered prompt opens with its header or ``Human:``, which never does)."""
    head = text.lstrip()[:1]
    if head in ("{", "[", '"'):
        return True
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def read_prompt_file(data: bytes, where: str = "the prompt file", *, literal: bool = False) -> PromptRead:
    """A prompt file of either kind, told apart and checked whole — the one reader of the CLI's
    ``--prompt-file`` and the Prompt builder's import; in the prompt convention unless ``literal``.

    JSON (:func:`prompt_from_json`: a JSON file that is not a prompt is refused, never read as
    prompt text) or the rendered prompt text (:func:`amp.prompts.prompt_from_text`, within
    :data:`~amp.parser.core.limits.MAX_PROMPT_CHARS`).  Raises :class:`PromptFileError` naming ``where``."""
    if not isinstance(data, bytes | bytearray):
        raise PromptFileError(f"{where} must be bytes, not {type(data).__name__}")
    if len(data) > MAX_PROMPT_FILE_BYTES:
        raise PromptFileError(f"{where} has {len(data):,} bytes, over the limit of {MAX_PROMPT_FILE_BYTES:,}")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PromptFileError(f"{where} is not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise PromptFileError(f"{where} is empty")
    if _holds_json(text):
        prompt = prompt_from_json(bytes(data), where, literal=literal)
        return PromptRead(prompt, prompt.render(), PromptFileKind.JSON)
    text = text.rstrip("\r\n")
    try:
        limits.check_prompt(text)
        prompt = prompt_from_text(text)
    except AmpError as exc:
        raise PromptFileError(f"{where}: {exc}") from None
    _check(prompt, where)
    if literal:
        return PromptRead(prompt, text, PromptFileKind.TEXT)
    out = _respelled(prompt, where)
    return PromptRead(out, text if out == prompt else out.render(), PromptFileKind.TEXT)


def prompt_from_file(data: bytes, where: str = "the prompt file", *, literal: bool = False) -> Prompt:
    """The prompt of a file of either kind, checked whole (:func:`read_prompt_file`)."""
    return read_prompt_file(data, where, literal=literal).prompt
