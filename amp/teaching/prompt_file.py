"""A prompt as a file: the Prompt builder's download (text, JSON) and its bounded JSON import.

The JSON is the :class:`amp.prompts.Prompt` record (:meth:`~amp.prompts.Prompt.to_dict`) with the
rendered prompt added as ``text`` — the same object ``python -m amp prompt … --json`` prints, so
either reads back here.  ``text`` is for people and ignored on import: the prompt is rebuilt from
its fields, so an edited ``text`` changes nothing.

A file may also hold the rendered prompt text (:func:`prompt_from_file`, read back by
:func:`amp.prompts.prompt_from_text`: examples that are pool sentences get their labels back).

An import is checked whole before it is used (:func:`prompt_from_json`): at most
:data:`MAX_PROMPT_FILE_BYTES` bytes of UTF-8 JSON, one object of the Prompt schema, at most
:data:`~amp.parser.core.limits.MAX_PROMPT_EXAMPLES` examples, a known ambiguity type (or none), gold
LFs that parse and fit :data:`~amp.parser.core.limits.MAX_LF_CHARS`, and a rendered prompt within
:data:`~amp.parser.core.limits.MAX_PROMPT_CHARS`.  Anything else is a :class:`PromptFileError`
saying what and where; nothing is half-read.
"""

from __future__ import annotations

import json
from typing import Any

from amp.data.types import find_type, type_ids
from amp.errors import AmpError
from amp.logic.reader import parse_lf
from amp.parser.core import limits
from amp.prompts import Prompt, prompt_from_text
from amp.teaching.errors import PromptFileError

__all__ = ["MAX_PROMPT_FILE_BYTES", "PromptFileError", "prompt_from_file", "prompt_from_json", "prompt_json",
           "prompt_text"]

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
        raise PromptFileError(f"{where}: {exc}") from None
    _check(prompt, where)
    return prompt


def prompt_from_file(data: bytes, where: str = "the prompt file") -> Prompt:
    """A prompt file of either kind, checked whole: JSON (:func:`prompt_from_json`) when it holds
    an object, else the rendered prompt text (:func:`amp.prompts.prompt_from_text`).

    Raises :class:`PromptFileError` naming ``where``."""
    if not isinstance(data, bytes | bytearray):
        raise PromptFileError(f"{where} must be bytes, not {type(data).__name__}")
    if len(data) > MAX_PROMPT_FILE_BYTES:
        raise PromptFileError(f"{where} has {len(data):,} bytes, over the limit of {MAX_PROMPT_FILE_BYTES:,}")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PromptFileError(f"{where} is not UTF-8 text (byte {exc.start})") from None
    if text.lstrip().startswith("{"):
        return prompt_from_json(bytes(data), where)
    try:
        prompt = prompt_from_text(text)
    except AmpError as exc:
        raise PromptFileError(f"{where}: {exc}") from None
    _check(prompt, where)
    return prompt
