"""A teacher's own sentences (issue #11 point 1): the record, its checks, prompts, closest type, library."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from amp.data.generate import pairs
from amp.data.types import type_ids
from amp.logic.grammar import lark_parser
from amp.prompts import DEFAULT_MIXED_RATIO, EXAMPLES_PER_PROMPT
from amp.teaching.errors import OwnLibraryError, OwnSentenceError
from amp.teaching.own_library import (
    MAX_SENTENCES,
    OWN_SENTENCES_ENV_VAR,
    OwnLibrary,
    default_library_path,
    find_own,
    library_json,
)
from amp.teaching.own_sentences import OwnSentence, examples_from_text, examples_text
from amp.teaching.own_types import closest_type, difference
from amp.teaching.poll_records import PollItem

DUCK = "I saw her duck"
DUCK0 = "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)"
DUCK1 = "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"
BOOK = "every student read a book"
BOOK0 = "exists x . forall y . exists a . student(y) AND book(x) AND read(a) AND agent(a, y) AND patient(a, x)"
BOOK1 = "forall x . exists y . exists a . student(x) AND book(y) AND read(a) AND agent(a, x) AND patient(a, y)"


def duck(**changes) -> OwnSentence:
    fields = {"surface": DUCK, "lf0": DUCK0, "lf1": DUCK1, "paraphrase0": "she ducked",
              "paraphrase1": "her bird"} | changes
    return OwnSentence(**fields)


# --- the record ------------------------------------------------------------------------------


def test_duck_sentence_words_type_and_normalised_spacing() -> None:
    s = duck(lf0=DUCK0.replace(" . ", ".").replace(", ", ",").replace(") AND", ")AND"), surface="  I saw\nher duck ")
    assert s.surface == DUCK
    assert s.lf0 == DUCK0 and s.lf1 == DUCK1  # strict AmP spacing, as the decoding grammar demands
    assert s.words.unary == ("duck",) and s.words.binary == () and s.words.constants == ("Her", "Me")
    assert s.words.describe() == "duck (one place), Her (name), Me (name)"
    assert s.type == "pp"  # closest_type: the readings differ in their predicates (have), as PP's do
    parser = lark_parser("fol", "decoding", words=s.words)
    for lf in s.readings:
        parser.parse(f" {lf}\n")  # the model can write both readings under its extended grammar


def test_json_round_trip_and_given_type() -> None:
    s = duck(type="bound", name0="she ducked", examples=[("I saw her swim", "exists a . exists e . saw(a) AND "
                                                          "agent(a, Me) AND swim(e) AND agent(e, Her) AND patient(a, e)")])
    assert s.type == "bound" and s.examples[0][0] == "I saw her swim"
    assert OwnSentence.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    assert "swim" in s.words.unary


@pytest.mark.parametrize(("changes", "field", "needle"), [
    ({"surface": "  "}, "sentence", "sentence is empty"),
    ({"surface": "x" * 201}, "sentence", "at most 200"),
    ({"paraphrase0": ""}, "paraphrase0", "paraphrase0 is empty"),
    ({"name1": "n" * 41}, "name1", "at most 40"),
    ({"lf0": "duck(x"}, "lf0", "LF0 does not read"),
    ({"lf1": "saw(a) AND agent(a, Me)"}, "lf1", "free variable 'a'"),
    ({"lf1": "exists p . exists q . exists r . exists s . duck(p) AND man(q) AND boy(r) AND cat(s)"}, "lf1", "more than three entity variables"),
    ({"lf1": "exists e . duck(e) AND agent(e, her)"}, "lf1", "a name is capitalised (Her)"),
    ({"lf1": "exists a . saw(a) AND agent(Her, a)"}, "lf1", "expected one of: a variable"),
    ({"lf1": DUCK0.replace("exists a . exists e", "exists e . exists a")}, "lf1", "mean the same"),
    ({"lf1": DUCK1.replace("duck(x)", "duck(x, Her)")}, "words", "one argument and with two"),
    ({"type": "nope"}, "type", "not a registered ambiguity type"),
    ({"lf0": "x" * 2001}, "lf0", "at most 2000"),
    ({"examples": [("only a sentence",)]}, "examples", "(sentence, LF) pair"),
    ({"examples": [("a", "exists x . man(x)")] * 21}, "examples", "at most 20"),
    ({"examples": [("ok", "man(x)")]}, "example 1 LF", "free variable"),
])
def test_each_check_names_its_field(changes: dict, field: str, needle: str) -> None:
    with pytest.raises(OwnSentenceError) as info:
        duck(**changes)
    assert info.value.field == field and needle in str(info.value)


def test_from_dict_gives_the_check_error_not_a_schema_dump() -> None:
    bad = duck().to_dict() | {"lf1": "duck(x"}
    with pytest.raises(OwnSentenceError, match="LF1 does not read") as info:
        OwnSentence.from_dict(bad)
    assert info.value.field == "lf1"
    with pytest.raises(OwnSentenceError, match="not an own sentence"):
        OwnSentence.from_dict({"surface": DUCK})


# --- pair, poll item, prompts -------------------------------------------------------------------


# A teacher's spelling of the two readings: other letters, another order of the quantifiers.
TYPED0 = "exists q . exists b . saw(b) AND agent(b, Me) AND duck(q) AND agent(q, Her) AND patient(b, q)"
TYPED1 = "exists e . exists bird . duck(bird) AND have(bird, Her) AND saw(e) AND agent(e, Me) AND patient(e, bird)"


def test_typed_readings_are_kept_and_scored_in_the_prompt_convention() -> None:
    """Issue #26 point 2: stored as typed, scored (pair, prompt, poll) as the prompts spell it."""
    s = duck(lf0=TYPED0, lf1=TYPED1, examples=[("I saw her swim", TYPED0.replace("duck", "swim"))])
    assert (s.lf0, s.lf1) == s.typed_readings == (TYPED0, TYPED1)
    assert s.readings == (DUCK0, DUCK1)
    assert (s.pair().lf0.lf, s.pair().lf1.lf) == (DUCK0, DUCK1)
    assert (s.poll_item().lf0, s.poll_item().lf1) == (DUCK0, DUCK1)
    for mode in ("mixed", "own examples"):
        prompt = s.prompt(mode)
        assert (prompt.gold_lf0, prompt.gold_lf1) == (DUCK0, DUCK1)
    assert s.prompt("own examples").examples[0].lf == DUCK0.replace("duck", "swim")
    assert s.type == duck().type
    assert OwnSentence.from_dict(s.to_dict()) == s  # the library keeps the typed spelling


def test_pair_and_poll_item() -> None:
    s = duck(name0="she ducked")
    pair = s.pair()
    assert (pair.surface, pair.type, pair.template) == (DUCK, "pp", "own")
    assert (pair.lf0.lf, pair.lf1.lf, pair.lf0.template_idx, pair.lf1.template_idx) == (DUCK0, DUCK1, 0, 1)
    item = s.poll_item(0.25)
    assert item == PollItem(DUCK, "pp", DUCK0, DUCK1, "she ducked", "her bird", 0.25, "she ducked", "")
    assert (item.reading_name(0), item.reading_name(1)) == ("she ducked", "instrument")  # unnamed: the type's


def test_mixed_prompt_has_the_words_and_ten_examples_of_the_type() -> None:
    prompt = duck().prompt()
    assert prompt.words == duck().words and prompt.test_utterance == DUCK
    assert (prompt.gold_lf0, prompt.gold_lf1) == (DUCK0, DUCK1)
    assert len(prompt.examples) == EXAMPLES_PER_PROMPT == 10 and prompt.lf0_fraction == DEFAULT_MIXED_RATIO
    pp = {p.surface for p in pairs("pp")}
    assert all(ex.utterance in pp for ex in prompt.examples)
    assert "words" in prompt.to_dict()
    chosen = duck(type="scope").prompt(ratio=0.5, k=4, seed=3)
    scope = {p.surface for p in pairs("scope")}
    assert len(chosen.examples) == 4 and all(ex.utterance in scope for ex in chosen.examples)
    assert chosen.lf0_fraction == 0.5


def test_own_examples_prompt_and_no_zero_shot() -> None:
    with pytest.raises(OwnSentenceError, match="no examples of its own"):
        duck().prompt("own examples")
    ex = ("I saw her swim", "exists a . exists e . saw(a) AND agent(a, Me) AND swim(e) AND agent(e, Her) "
                            "AND patient(a, e)")
    prompt = duck(examples=[ex]).prompt("own examples")
    assert [(e.utterance, e.lf) for e in prompt.examples] == [ex]
    assert "swim" in prompt.words.unary and "duck" in prompt.words.unary
    with pytest.raises(OwnSentenceError, match="no zero-shot prompt"):
        duck().prompt("zero-shot")
    with pytest.raises(OwnSentenceError, match="unknown prompt mode"):
        duck().prompt("nonsense")


def test_examples_typed_one_per_line() -> None:
    text = "I saw her swim | exists a . saw(a)\n\n  a | b | exists x . man(x)  "
    assert examples_from_text(text) == (("I saw her swim", "exists a . saw(a)"), ("a | b", "exists x . man(x)"))
    assert examples_from_text(examples_text(examples_from_text(text))) == examples_from_text(text)
    assert examples_from_text("") == ()
    with pytest.raises(OwnSentenceError, match="example line 2 has no '[|]'") as info:
        examples_from_text("a | exists x . man(x)\nno separator")
    assert info.value.field == "examples"


# --- closest type -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", type_ids())
def test_closest_type_of_pool_pairs_is_their_type(kind: str) -> None:
    pool = pairs(kind)
    for p in (pool[0], pool[len(pool) // 2], pool[-1]):
        assert closest_type(p.lf0.lf, p.lf1.lf) == kind, p.surface


def test_closest_type_of_own_readings() -> None:
    assert closest_type(DUCK0, DUCK1) == "pp"  # documented in amp.teaching.own_types
    assert closest_type(BOOK0, BOOK1) == "scope"  # the subject's universal takes wide scope in LF1
    assert closest_type(BOOK0.replace("agent(a, y) AND patient(a, x)", "agent(a, x) AND patient(a, y)"),
                        BOOK1.replace("agent(a, x) AND patient(a, y)", "agent(a, y) AND patient(a, x)")) == "revscope"
    assert difference(DUCK0, DUCK1).predicates == "differ"


# --- the library --------------------------------------------------------------------------------


def book() -> OwnSentence:
    return OwnSentence(BOOK, BOOK0, BOOK1, "one book for all", "each their own book")


def test_library_round_trip_replace_remove(tmp_path) -> None:
    lib = OwnLibrary(tmp_path / "sub" / "own.json")
    assert lib.list() == () and lib.get(DUCK) is None
    assert lib.add(duck()) is False and lib.add(book()) is False
    assert lib.add(duck(type="bound")) is True  # same surface: replaced, in place
    assert [s.surface for s in lib.list()] == [DUCK, BOOK]
    assert lib.get("  I saw  her duck").type == "bound"
    assert OwnLibrary(lib.path).list() == lib.list()  # another instance reads the same file
    assert lib.remove(DUCK) is True and lib.remove(DUCK) is False
    assert [s.surface for s in lib.list()] == [BOOK]
    assert not [p for p in lib.path.parent.iterdir() if p.name.endswith(".tmp")]


def test_default_path_env_and_find_own(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(OWN_SENTENCES_ENV_VAR, raising=False)
    assert default_library_path() == (tmp_path / "cache").resolve() / "own_sentences.json"
    monkeypatch.setenv(OWN_SENTENCES_ENV_VAR, str(tmp_path / "mine.json"))
    assert default_library_path() == tmp_path / "mine.json"
    assert find_own(DUCK) is None
    OwnLibrary().add(duck())
    assert find_own(DUCK) == duck()


def test_broken_file_is_an_error_and_left_alone(tmp_path) -> None:
    path = tmp_path / "own.json"
    path.write_text("{not json")
    lib = OwnLibrary(path)
    with pytest.raises(OwnLibraryError, match="broken and was left as it is"):
        lib.list()
    with pytest.raises(OwnLibraryError):
        lib.add(duck())
    assert path.read_text() == "{not json"


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch) -> None:
    lib = OwnLibrary(tmp_path / "own.json")
    lib.add(duck())
    before = lib.path.read_bytes()

    def fail(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OwnLibraryError, match="disk full"):
        lib.add(book())
    assert lib.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["own.json"]  # no temporary file left


def test_export_import_merge_and_report(tmp_path) -> None:
    src = OwnLibrary(tmp_path / "a.json")
    src.add(duck(type="scope"))
    src.add(book())
    dst = OwnLibrary(tmp_path / "b.json")
    dst.add(duck())
    report = dst.import_json(src.export_json())
    assert report.added == (BOOK,) and report.replaced == (DUCK,) and report.describe() == "1 added, 1 replaced"
    assert dst.list() == src.list()


@pytest.mark.parametrize(("data", "needle"), [
    (b"[1, 2", "is not JSON"),
    (b'{"sentences": []}', "not an own-sentence library"),
    (b'{"format": "amp-own-sentences", "version": 9, "sentences": []}', "version 9"),
    (b'{"format": "amp-own-sentences", "version": 1, "sentences": {}}', "must be a list"),
    (b"x" * 4_000_001, "at most 4,000,000"),
])
def test_bad_imports_say_why_and_change_nothing(tmp_path, data: bytes, needle: str) -> None:
    lib = OwnLibrary(tmp_path / "own.json")
    lib.add(duck())
    before = lib.path.read_bytes()
    with pytest.raises(OwnLibraryError, match=needle):
        lib.import_json(data, "upload.json")
    assert lib.path.read_bytes() == before


def test_import_with_one_bad_sentence_names_it_and_changes_nothing(tmp_path) -> None:
    lib = OwnLibrary(tmp_path / "own.json")
    lib.add(duck())
    before = lib.path.read_bytes()
    doc = json.loads(library_json([book()]))
    doc["sentences"].append(duck().to_dict() | {"surface": "broken one", "lf1": "exists p . exists q . exists r . exists s . duck(p) AND man(q) AND boy(r) AND cat(s)"})
    with pytest.raises(OwnLibraryError, match=r"upload.json, sentence 2 \('broken one'\), lf1: LF1: more than three"):
        lib.import_json(json.dumps(doc), "upload.json")
    assert lib.path.read_bytes() == before


def test_library_size_bound(tmp_path) -> None:
    lib = OwnLibrary(tmp_path / "own.json")
    many = [replace(duck(), surface=f"I saw her duck {i}") for i in range(MAX_SENTENCES)]
    lib.import_json(library_json(many))
    assert len(lib.list()) == MAX_SENTENCES
    with pytest.raises(OwnLibraryError, match=f"at most {MAX_SENTENCES}"):
        lib.add(book())
    assert len(lib.list()) == MAX_SENTENCES


def test_concurrent_adds_keep_every_sentence(tmp_path) -> None:
    """The app's sessions are threads: saves at the same time must not lose one another."""
    from concurrent.futures import ThreadPoolExecutor

    lib = OwnLibrary(tmp_path / "own.json")
    many = [replace(duck(), surface=f"I saw her duck {i}") for i in range(24)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lib.add, many))
    assert sorted(s.surface for s in lib.list()) == sorted(s.surface for s in many)
