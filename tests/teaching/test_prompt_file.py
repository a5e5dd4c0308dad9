"""Prompt files (issue #15 point 6): the Prompt builder's text/JSON download and its checked JSON import."""

from __future__ import annotations

import json
import re

import pytest

from amp import prompts
from amp.parser.core import limits
from amp.teaching.errors import PromptFileError
from amp.teaching.prompt_file import MAX_PROMPT_FILE_BYTES, prompt_from_json, prompt_json, prompt_text

TEST = "the man saw the boy with the telescope"


@pytest.fixture(scope="module")
def prompt() -> prompts.Prompt:
    return prompts.mixed_prompt(TEST, 0.3, seed=0, k=10)


def test_text_is_the_rendered_prompt(prompt) -> None:
    assert prompt_text(prompt) == prompt.render() + "\n"
    assert prompt_text(prompt).endswith(f"Human: {TEST}\nComputer:\n")


def test_json_round_trip_and_the_text_field(prompt) -> None:
    data = prompt_json(prompt)
    payload = json.loads(data)
    assert payload["text"] == prompt.render() and list(payload)[:2] == ["header", "type"]
    assert prompt_from_json(data) == prompt
    del payload["text"]  # optional: the prompt is its fields
    assert prompt_from_json(json.dumps(payload).encode()) == prompt
    payload["text"] = prompt.render() + "\r\n"  # a line break at the end is no disagreement
    assert prompt_from_json(json.dumps(payload).encode()) == prompt
    lisp = prompts.mixed_prompt(TEST, 0.5, seed=1, k=4, fmt="lisp")
    assert prompt_from_json(prompt_json(lisp)) == lisp
    zero = prompts.zero_shot_prompt(TEST, seed=0)
    assert prompt_from_json(b"\xef\xbb\xbf" + prompt_json(zero)) == zero  # a BOM is fine


def test_an_edited_text_is_refused_saying_where_it_disagrees(prompt) -> None:
    """Issue #46 point 6: the model reads the prompt the fields render, so a ``text`` edited by hand
    (or left stale after editing the examples) is an error naming the first differing line and the
    ways out — never silently ignored."""
    payload = json.loads(prompt_json(prompt))
    lines = payload["text"].split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("Computer: "))
    lines[at] = "Computer: exists x . telescope(x)"
    payload["text"] = "\n".join(lines)
    with pytest.raises(PromptFileError) as info:
        prompt_from_json(json.dumps(payload).encode(), "mine.json")
    says = str(info.value)
    assert says.startswith("mine.json: its \"text\" differs from the prompt its fields render")
    assert f"line {at + 1}" in says and "exists x . telescope(x)" in says and prompts.HEADER not in says
    assert "the fields win" in says and "delete \"text\"" in says and "text file" in says
    stale = {**json.loads(prompt_json(prompt)), "test_utterance": "a boy saw a cat"}  # the fields edited instead
    with pytest.raises(PromptFileError, match=r"differs from the prompt its fields render .*line \d+"):
        prompt_from_json(json.dumps(stale).encode())
    shorter = {**json.loads(prompt_json(prompt)), "text": payload["text"].rsplit("\n\n", 1)[0]}
    with pytest.raises(PromptFileError, match="differs from the prompt its fields render"):
        prompt_from_json(json.dumps(shorter).encode())
    with pytest.raises(PromptFileError, match="\"text\" must be a string, not int"):
        prompt_from_json(json.dumps({**json.loads(prompt_json(prompt)), "text": 3}).encode())


def test_an_edited_text_is_refused_by_the_reader_of_every_command(prompt) -> None:
    """:func:`read_prompt_file` (the CLI's ``--prompt-file`` and the Prompt builder's import) refuses it too."""
    from amp.teaching.prompt_file import read_prompt_file

    payload = {**json.loads(prompt_json(prompt)), "text": "Human: a boy\nComputer:"}
    for literal in (False, True):
        with pytest.raises(PromptFileError, match="differs from the prompt its fields render"):
            read_prompt_file(json.dumps(payload).encode(), literal=literal)


def _bad(payload: object) -> bytes:
    return json.dumps(payload).encode()


@pytest.mark.parametrize(("data", "says"), [
    (b"{", "is not JSON: Expecting property name enclosed in double quotes at line 1, column 2"),
    (b"\xff\xfe{}", "is not UTF-8 text (byte 0)"),
    (b"[1, 2]", "must hold one JSON object (a prompt), not list"),
    (_bad({"examples": []}), "test_utterance: Field required"),
    (_bad({"examples": [{"utterance": "a"}], "test_utterance": "t"}), "examples.0.lf: Field required"),
    (_bad({"examples": [], "test_utterance": "t", "type": "idiom"}), "unknown ambiguity type 'idiom'"),
    (_bad({"examples": [], "test_utterance": "t", "gold_lf0": "exists x . ("}), "gold_lf0 is not a usable FOL LF"),
    (b"[" * 50_000 + b"]" * 50_000, "nests too deeply"),
])
def test_bad_files_say_what_is_wrong(data: bytes, says: str) -> None:
    with pytest.raises(PromptFileError, match="^the prompt file") as info:
        prompt_from_json(data)
    assert says in str(info.value)


def test_bounds() -> None:
    with pytest.raises(PromptFileError, match=f"over the limit of {MAX_PROMPT_FILE_BYTES:,}"):
        prompt_from_json(b" " * (MAX_PROMPT_FILE_BYTES + 1))
    many = {"examples": [{"utterance": "a", "lf": "b"}] * (limits.MAX_PROMPT_EXAMPLES + 1), "test_utterance": "t"}
    with pytest.raises(PromptFileError, match=f"{limits.MAX_PROMPT_EXAMPLES + 1} examples, over the limit"):
        prompt_from_json(_bad(many))
    long = {"examples": [{"utterance": "a" * 150_000, "lf": "b" * 60_000}], "test_utterance": "t"}
    with pytest.raises(PromptFileError, match="the prompt has 210,"):
        prompt_from_json(_bad(long), "mine.json")
    with pytest.raises(PromptFileError, match="must be bytes"):
        prompt_from_json("{}")  # type: ignore[arg-type]


def test_a_text_file_reads_back_the_rendered_prompt() -> None:
    """The text download reads back to the same prompt (pool examples get their labels back)."""
    from amp.teaching.prompt_file import prompt_from_file, prompt_text

    prompt = prompts.mixed_prompt("the man saw the boy with the telescope", 0.3, seed=2, k=6)
    assert prompt_from_file(prompt_text(prompt).encode()) == prompt
    assert prompt_from_file(prompt_json(prompt)) == prompt
    lisp = prompts.mixed_prompt("the man saw the boy with the telescope", 0.3, seed=2, k=3, fmt="lisp")
    assert prompt_from_file(prompt_text(lisp).encode()) == lisp
    with pytest.raises(PromptFileError, match="line 3: expected 'Human: <sentence>'"):
        prompt_from_file(b"Human: a\nComputer: exists x . boy(x)\nHuman\n")
    with pytest.raises(PromptFileError, match="not UTF-8"):
        prompt_from_file(b"\xff\xfe")


def test_an_import_is_respelled_in_the_prompt_convention_unless_literal() -> None:
    """Issue #26 point 2: a hand-written file with other letters scores as the templates spell it;
    the project's own prompts (FOL and the sorted Lisp form) read back unchanged."""
    from amp.logic.prompt_convention import prompt_text as convention
    from amp.teaching.prompt_file import prompt_from_file, respelled_count

    prompt = prompts.mixed_prompt(TEST, 0.3, seed=0, k=4)
    payload = json.loads(prompt_json(prompt))
    odd = {"x": "p", "y": "q", "z": "r", "a": "b", "e": "c"}
    for ex in payload["examples"]:
        ex["lf"] = re.sub(r"\b([xyzae])\b", lambda m: odd[m.group(1)], ex["lf"])
    assert prompt.gold_lf0.startswith("exists x . exists y . exists z . exists a . exists e . ")
    body = re.sub(r"\b([xyzae])\b", lambda m: odd[m.group(1)], prompt.gold_lf0.split(" . ", 5)[5])
    payload["gold_lf0"] = "exists c . exists q . exists p . exists r . exists b . " + body
    del payload["text"]  # written by hand: no rendered copy (a stale one is refused, issue #46 point 6)
    data = json.dumps(payload).encode()
    literal = prompt_from_file(data, literal=True)
    respelled = prompt_from_file(data)
    assert literal.gold_lf0 != prompt.gold_lf0
    assert [ex.lf for ex in respelled.examples] == [convention(ex.lf) for ex in prompt.examples]
    assert respelled.gold_lf0 == convention(literal.gold_lf0) == prompt.gold_lf0
    assert respelled_count(literal, respelled) == len(prompt.examples) + 1
    for fmt in ("fol", "lisp"):
        own = prompts.mixed_prompt(TEST, 0.5, seed=1, k=10, fmt=fmt)
        assert prompt_from_file(prompt_json(own)) == own
