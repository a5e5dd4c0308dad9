"""Templates as data and the fill engine (docs/paper-notes.md §3, §4)."""

from __future__ import annotations

import pytest

from amp.data.errors import TemplateError
from amp.data.generate import pool, templates
from amp.data.templates import (
    Slot,
    Template,
    expand,
    fill,
    get_template,
    make_fluent,
    parse_slots,
    register_template,
    register_word_list,
    unregister_template,
)
from amp.data.templates.engine import WORD_LISTS, _product
from amp.logic import lexicon

# --- per-template sizes (docs/paper-notes.md §4; counts are per LF) -----------------------------------

TEMPLATE_SIZES = {
    "pp/visual/a": 192, "pp/visual/b": 640, "pp/visual/c": 640, "pp/visual/d": 1440,
    "pp/tactile/a": 144, "pp/tactile/c": 480,
    "scope/every": 2000, "scope/each": 2000, "revscope/every": 2000, "revscope/each": 2000,
    "bound/female/a": 400, "bound/female/b": 200, "bound/female/c": 200, "bound/female/d": 40,
    "bound/male/a": 400, "bound/male/b": 200, "bound/male/c": 200, "bound/male/d": 40,
    "conj/and_first": 5040, "conj/or_first": 5040,
    "basic/the/noun_noun": 2000, "basic/the/noun_name": 800, "basic/the/name_noun": 2080,
    "basic/the/name_name": 720, "basic/the/noun_intrans": 140, "basic/the/name_intrans": 140,
    "basic/a/noun_noun": 2000, "basic/a/noun_name": 800, "basic/a/name_noun": 2080,
    "basic/a/noun_intrans": 140,
    "single_conj/noun_and": 1820, "single_conj/name_or": 1820,
    "double_conj/and": 5040, "double_conj/or": 5040,
    "scope_unambig/every/trans": 2000, "scope_unambig/each/intrans": 90,
    "pp_unambig/a": 336, "pp_unambig/c": 1120,
    "bound_unambig/female/a/subj": 500, "bound_unambig/male/b/obj": 200,
    "bound_unambig/female/c/obj": 200, "bound_unambig/male/d/subj": 80,
    "instrument/visual/noun": 64, "instrument/tactile/noun": 48,
    "instrument/visual/name": 160, "instrument/tactile/name": 120,
    "possession/visual/noun": 16, "possession/visual/name": 40,
    "possession/tactile/noun": 12, "possession/tactile/name": 30,
    "quant/every": 26, "quant/each": 26,
}


@pytest.mark.parametrize(("template_id", "size"), sorted(TEMPLATE_SIZES.items()))
def test_template_sizes(template_id: str, size: int) -> None:
    template = get_template(template_id)
    assert template.size() == size
    assert len(fill(template)) == size * len(template.lfs)


def test_ambiguous_templates_have_two_lfs_and_unambiguous_one() -> None:
    for t in templates():
        if t.is_ambiguous:
            assert len(t.lfs) == 2 and t.template_idx == (0, 1), t.id
        elif t.pool == "double_conj":
            assert t.template_idx == (0, 1)
        else:
            assert len(t.lfs) == 1 and t.template_idx == (0,), t.id


def test_record_types_follow_the_original() -> None:
    types = {t.id: t.type for t in templates()}
    assert types["revscope/every"] == "scope_reverse"
    assert types["instrument/visual/name"] == "pp"  # the original's labelling bug
    assert types["instrument/visual/noun"] == "instr_unambig"
    assert types["double_conj/or"] == "unambig_conj"
    assert types["single_conj/noun_and"] == types["basic/a/noun_noun"] == "unambig"
    assert types["quant/each"] == "unambig_quant"


# --- exact LF strings and records -------------------------------------------------------------


def test_first_pp_record_is_exact() -> None:
    first = fill(get_template("pp/visual/a"))[0]
    assert first.surface == "the boy saw the girl with the telescope"
    assert first.lf == (
        "exists x . exists y . exists z . exists a . exists e . boy(x) AND girl(y) AND saw(a) "
        "AND agent(a, x) AND patient(a, y) AND telescope(z) AND have(e) AND agent(e, y) "
        "AND patient(e, z)"
    )
    assert first.unfilled_template.startswith("exists x . exists y . exists z . exists a . exists e . {np1}(x)")
    assert first.template_tags == (None, "np1", "vp1", None, "np2", None, "np3")
    assert first.var_bindings == {"np1": "boy", "vp1": "saw", "np2": "girl", "np3": "telescope"}
    assert list(first.var_bindings) == ["np1", "vp1", "np2", "np3"]  # slot order
    assert first.template_idx == 0 and first.type == "pp" and first.template == "pp/visual/a"


def test_lf0_block_then_lf1_block() -> None:
    records = fill(get_template("pp/visual/a"))
    assert [r.template_idx for r in records] == [0] * 192 + [1] * 192
    assert [r.surface for r in records[:192]] == [r.surface for r in records[192:]]
    assert records[192].lf == (
        "exists x . exists y . exists z . exists a . boy(x) AND girl(y) AND telescope(z) AND "
        "saw(a) AND agent(a, x) AND patient(a, y) AND instrument(a, z)"
    )


def test_first_slot_varies_slowest() -> None:
    surfaces = [c.surface for c in expand(get_template("quant/every"))]
    assert surfaces[:3] == ["every boy", "every girl", "every man"]
    combos = expand(get_template("pp/visual/a"))
    assert [c.words[1] for c in combos[:48]] == ["boy"] * 48
    assert combos[0].words[-1] == "telescope" and combos[1].words[-1] == "binoculars"


def test_var_bindings_hold_lf_side_values() -> None:
    records = fill(get_template("pp/tactile/c"))
    picked = [r for r in records if r.var_bindings["vp1"] == "picked_up"]
    assert picked and all("picked up" in r.surface for r in picked)
    assert all("picked_up(a)" in r.lf for r in picked)
    assert not any(r.var_bindings["vp1"] == "picked up" for r in records)


# --- fluency (§3) -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "surface"),
    [
        (("every", "cat", "saw", "a", "elephant"), "every cat saw an elephant"),
        (("a", "elephant", "saw", "every", "cat"), "an elephant saw every cat"),
        (("every", "cat", "saw", "a", "binoculars"), "every cat saw a pair of binoculars"),
        (("a", "cat", "saw", "every", "binoculars"), "a cat saw every pair of binoculars"),
        (("each", "pyjamas"), "each set of pyjamas"),
        (("the", "man", "saw", "the", "boy", "with the", "binoculars"),
         "the man saw the boy with the binoculars"),
        (("Ada", "grabbed", "the", "gloves"), "Ada grabbed the pair of gloves"),
        (("a", "cow", "held", "a", "ovenmitts"), "a cow held a pair of ovenmitts"),
        (("Ada", "ate"), "Ada ate"),
        (("Alan", "saw", "Ada"), "Alan saw Ada"),
        (("a", "Ada"), "a Ada"),  # only lowercase vowels trigger "an"
    ],
)
def test_make_fluent(words: tuple[str, ...], surface: str) -> None:
    assert make_fluent(words) == surface


def test_fluency_in_the_pools() -> None:
    scope = {r.surface for r in pool("scope")}
    assert "every cat saw an elephant" in scope
    assert "every cat saw a pair of binoculars" in scope
    assert "every cat saw a elephant" not in scope
    assert "every pair of binoculars" in {r.surface for r in pool("quant")}
    assert "the man saw the boy with the binoculars" in {r.surface for r in pool("pp")}
    assert "Ada grabbed the pair of gloves" in {r.surface for r in pool("basic")}
    assert "an elephant saw every pair of binoculars" in {r.surface for r in pool("revscope")}
    # the LF keeps the plural predicate
    rec = next(r for r in pool("scope") if r.surface == "every cat saw a pair of binoculars")
    assert "binoculars(" in rec.lf and rec.var_bindings["np2"] == "binoculars"


def test_with_the_never_gets_a_pair_of_phrase() -> None:
    for name in ("pp", "pp_unambig", "instrument", "possession"):
        for r in pool(name):
            assert "with the pair of" not in r.surface and "with the set of" not in r.surface


# --- no-repeat rule (§3) ----------------------------------------------------------------------


def test_product_skips_repeats() -> None:
    assert list(_product([("1", "2"), ("1", "2")], True)) == [("1", "2"), ("2", "1")]
    assert list(_product([("1", "2"), ("1", "2")], False)) == [
        ("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")]
    # single-candidate (fixed) slots are exempt; list words equal to an earlier string are not
    assert list(_product([("a",), ("a",)], True)) == [("a", "a")]
    assert list(_product([("the",), ("the", "x")], True)) == [("the", "x")]


def test_no_repeat_in_pools() -> None:
    for r in pool("scope") + pool("revscope"):
        assert r.var_bindings["np1"] != r.var_bindings["np2"]
    for r in fill(get_template("pp/visual/d")):
        assert r.var_bindings["np1"] != r.var_bindings["np2"]
    for r in pool("conj"):
        b = r.var_bindings
        assert len({b["vp1"], b["vp2"], b["vp3"]}) == 3
    # fixed strings may repeat: "a … a …" in the basic "a" pass
    assert "a cat saw a dog" in {r.surface for r in pool("basic")}


# --- gender agreement and sense pairing (§4.1, §4.4) ----------------------------------------


@pytest.mark.parametrize("gender", ["female", "male"])
def test_bound_gender_agreement(gender: str) -> None:
    names = set(lexicon.FEMALE_NAMES if gender == "female" else lexicon.MALE_NAMES)
    nouns = set(lexicon.INDEFINITE_FEMALE_NPS if gender == "female" else lexicon.INDEFINITE_MALE_NPS)
    pronoun = "she" if gender == "female" else "he"
    records = pool("bound", gender=gender)
    assert len(records) == 1680
    for r in records:
        assert f" and {pronoun} " in r.surface
        for tag in ("np1", "np2"):
            assert r.var_bindings[tag] in names | nouns


def test_bound_unambig_referents_have_different_genders() -> None:
    female = set(lexicon.FEMALE_NAMES + lexicon.INDEFINITE_FEMALE_NPS)
    for r in pool("bound_unambig", gender="female"):
        assert r.var_bindings["np1"] in female and r.var_bindings["np2"] not in female
        if r.template.endswith("/subj"):
            assert " and she " in r.surface
        else:
            assert " and he " in r.surface


def test_pp_visual_verbs_pair_with_visual_instruments() -> None:
    for r in pool("pp"):
        verb, instr = r.var_bindings["vp1"], r.var_bindings["np3"]
        if verb in lexicon.VISUAL_VPS:
            assert instr in lexicon.VISUAL_INSTRUMENT_NPS
        else:
            assert verb in {lexicon.denotation(v) for v in lexicon.TACTILE_VPS}
            assert instr in lexicon.TACTILE_INSTRUMENT_NPS


# --- errors and extension ------------------------------------------------------------------------


def test_lf_hole_without_slot_raises_naming_template_and_slot() -> None:
    with pytest.raises(TemplateError, match=r"'my/t'.*np4"):
        Template(id="my/t", pool="mine", type="unambig",
                 slots="the {np1:INDEFINITE_NPS}", lfs=("{np1}(x) AND {np4}(y)",))


def test_unknown_word_list_raises_naming_template_and_slot() -> None:
    t = Template(id="my/t", pool="mine", type="unambig",
                 slots="the {np1:NO_SUCH_LIST}", lfs=("exists x . {np1}(x)",))
    with pytest.raises(TemplateError, match=r"'my/t'.*'np1'.*NO_SUCH_LIST"):
        fill(t)
    with pytest.raises(TemplateError, match="NO_SUCH_LIST"):
        register_template(t)


@pytest.mark.parametrize(
    "slots",
    ["the {np1}", "the {NP1:NAMES}", "{np1:NAMES} {np1:NAMES}", "the {np1:NAMES", "[]"],
)
def test_malformed_slots_raise(slots: str) -> None:
    with pytest.raises(TemplateError):
        Template(id="bad", pool="mine", type="unambig", slots=slots, lfs=("x",))


def test_parse_slots_keeps_multiword_fixed_slots() -> None:
    slots = parse_slots("the {np1:NAMES} [with the] {np2:VISUAL_INSTRUMENT_NPS}")
    assert slots == (Slot(text="the"), Slot(tag="np1", words="NAMES"), Slot(text="with the"),
                     Slot(tag="np2", words="VISUAL_INSTRUMENT_NPS"))
    t = get_template("pp/visual/a")
    assert parse_slots(t.spec) == t.slots


def test_slots_may_be_given_as_a_sequence() -> None:
    t = Template(id="seq", pool="mine", type="unambig",
                 slots=("every", ("np1", "CLOTHING_NPS")), lfs=("forall x . {np1}(x)",))
    assert [r.surface for r in fill(t)] == [
        "every set of pyjamas", "every pair of pants", "every sweater", "every hat"]


def test_user_template_and_word_list_extend_a_pool() -> None:
    register_word_list("TEST_ANIMALS", ("aardvark", "bat"), replace=True)
    t = Template(id="test/quant/all", pool="quant", type="unambig_quant",
                 slots="every {np1:TEST_ANIMALS}", lfs=("forall x . {np1}(x)",))
    register_template(t)
    try:
        surfaces = [r.surface for r in pool("quant")]
        assert len(surfaces) == 54 and surfaces[-2:] == ["every aardvark", "every bat"]
        with pytest.raises(TemplateError, match="already registered"):
            register_template(t)
    finally:
        unregister_template("test/quant/all")
        WORD_LISTS.pop("TEST_ANIMALS")
    assert len(pool("quant")) == 52
