"""A prompt as a file: the Prompt builder's download (text, JSON) and its bounded JSON import.

The JSON is the :class:`amp.prompts.Prompt` record (:meth:`~amp.prompts.Prompt.to_dict`) with the
rendered prompt added as ``text`` — the same object ``python -m amp prompt … --json`` prints, so
either reads back here.  ``text`` is for people and ignored on import: the prompt is rebuilt from
its fields, so an edited ``text`` changes nothing.

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
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from amp.data.types import find_type, type_ids
from amp.errors import AmpError
from amp.logic.reader import parse_lf
from amp.parser.core import limits
from amp.prompts import Prompt, prompt_from_text
from amp.teaching.errors import PromptFileError

__all__ = ["MAX_PROMPT_FILE_BYTES", "PromptFileError", "PromptFileKind", "PromptRead", "prompt_from_file",
           "prompt_from_json", "prompt_json", "prompt_text", "read_prompt_file"]

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


def prompt_from_json(data: bytes, where: str = "the prompt file") -> Prompt:
    """Read a prompt file written by :func:`prompt_json` (or ``amp prompt --json``), checked whole.

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
    return prompt


class PromptFileKind(StrEnum):
    """What a prompt file holds."""

    JSON = "json"  #: the prompt record (:func:`prompt_json`, ``amp prompt --json``)
    TEXT = "text"  #: the rendered prompt (:func:`prompt_text`, ``amp prompt``)


@dataclass(frozen=True)
class PromptRead:
    """A prompt file read and checked whole: the prompt, the text the model reads, and the kind."""

    prompt: Prompt
    #: What the model reads: the rendered prompt of a JSON file, the file's own text (without its
    #: final line break) of a text file.
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


def read_prompt_file(data: bytes, where: str = "the prompt file") -> PromptRead:
    """A prompt file of either kind, told apart and checked whole — the one reader of the CLI's
    ``--prompt-file`` and the Prompt builder's import.

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
        prompt = prompt_from_json(bytes(data), where)
        return PromptRead(prompt, prompt.render(), PromptFileKind.JSON)
    text = text.rstrip("\r\n")
    try:
        limits.check_prompt(text)
        prompt = prompt_from_text(text)
    except AmpError as exc:
        raise PromptFileError(f"{where}: {exc}") from None
    _check(prompt, where)
    return PromptRead(prompt, text, PromptFileKind.TEXT)


def prompt_from_file(data: bytes, where: str = "the prompt file") -> Prompt:
    """The prompt of a file of either kind, checked whole (:func:`read_prompt_file`)."""
    return read_prompt_file(data, where).prompt
