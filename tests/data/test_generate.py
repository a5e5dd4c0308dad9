"""Pools, pairs, sampling, filters and JSONL I/O (docs/paper-notes.md §3, §4, §6)."""

from __future__ import annotations

import io
import json
import random
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from amp.data.errors import DataError
from amp.data.generate import (
    AMBIGUOUS_TYPES,
    AmbiguousPair,
    Example,
    RecordError,
    ambiguity_type,
    find_pair,
    generate,
    pairs,
    pool,
    read_jsonl,
    sample_pairs,
    templates,
    write_jsonl,
)

# --- §4.7: every row of the pool-size table ----------------------------------------------------

POOL_SIZES = [
    # (pool, gender, records, unique surfaces)
    ("pp", None, 7072, 3536),
    ("pp_unambig", None, 1456, 1456),
    ("scope", None, 8000, 4000),
    ("revscope", None, 8000, 4000),
    ("scope_unambig", None, 4180, 4180),
    ("quant", None, 52, 52),
    ("conj", None, 20160, 10080),
    ("single_conj", None, 7280, 7280),
    ("double_conj", None, 20160, 10080),
    ("bound", "female", 1680, 840),
    ("bound", "male", 1680, 840),
    ("bound_unambig", "female", 1960, 1960),
    ("bound_unambig", "male", 1960, 1960),
    ("basic", None, 10900, 10900),
    ("instrument", None, 392, 392),
    ("possession", None, 98, 98),
]


@pytest.mark.parametrize(("name", "gender", "records", "surfaces"), POOL_SIZES)
def test_pool_sizes(name: str, gender: str | None, records: int, surfaces: int) -> None:
    examples = pool(name, gender=gender)
    assert len(examples) == records
    assert len({e.surface for e in examples}) == surfaces


def test_pool_sizes_both_genders_and_composites() -> None:
    assert len(pool("bound")) == 3360 and len(pool("bound_unambig")) == 3920
    assert len(pool("zeroshot_train")) == 38882  # §5.3
    assert Counter(e.type for e in pool("instrument")) == {"instr_unambig": 112, "pp": 280}
    assert len(pool("scope_reverse")) == 8000  # alias


@pytest.mark.parametrize("name", AMBIGUOUS_TYPES)
def test_pairs_cover_the_pool(name: str) -> None:
    ps = pairs(name)
    assert len(ps) * 2 == len(pool(name))
    assert len({p.surface for p in ps}) == len(ps)
    for p in ps[:50] + ps[-50:]:
        assert p.type == name and p.surface == p.lf0.surface == p.lf1.surface
        assert (p.lf0.template_idx, p.lf1.template_idx) == (0, 1)
        assert p.lf0.template == p.lf1.template == p.template
        assert p.lf0.lf != p.lf1.lf


# --- emission order (§4.1–§4.5) -----------------------------------------------------------------


def test_pp_emission_order() -> None:
    records = pool("pp")
    assert records[0].surface == "the boy saw the girl with the telescope"
    assert records[0].lf.startswith("exists x . exists y . exists z . exists a . exists e . boy(x)")
    assert records[-1].surface == "Mary lifted the woman with the ovenmitts"
    assert records[-1].template_idx == 1
    blocks = [(r.template, r.template_idx) for r in records]
    order = list(dict.fromkeys(blocks))
    assert order == [
        ("pp/visual/a", 0), ("pp/visual/a", 1), ("pp/visual/b", 0), ("pp/visual/b", 1),
        ("pp/visual/c", 0), ("pp/visual/c", 1), ("pp/visual/d", 0), ("pp/visual/d", 1),
        ("pp/tactile/a", 0), ("pp/tactile/a", 1), ("pp/tactile/c", 0), ("pp/tactile/c", 1),
    ]


@pytest.mark.parametrize(
    ("name", "template_order", "first", "last"),
    [
        ("scope", ["scope/every", "scope/each"], "every bird saw a boy", "each woman lifted a hat"),
        ("revscope", ["revscope/every", "revscope/each"], "a bird saw every boy",
         "a woman lifted each hat"),
        ("bound", [f"bound/{g}/{s}" for g in ("female", "male") for s in "abcd"],
         "Marie saw Ada and she waved", "the man spied the boy and he shouted"),
        ("conj", ["conj/and_first", "conj/or_first"], "the bird ate and drank or slept",
         "the woman napped or drew and moved"),
    ],
)
def test_ambiguous_emission_order(name: str, template_order: list[str], first: str, last: str) -> None:
    records = pool(name)
    assert list(dict.fromkeys(r.template for r in records)) == template_order
    assert records[0].surface == first and records[0].template_idx == 0
    assert records[-1].surface == last and records[-1].template_idx == 1
    assert [t.id for t in templates(name)] == template_order


def test_scope_lfs_exact() -> None:
    p = pairs("scope")[0]
    assert p.lf0.lf == ("exists x . forall y . exists a . bird(y) AND boy(x) AND saw(a) "
                        "AND agent(a, y) AND patient(a, x)")
    assert p.lf1.lf == ("forall x . exists y . exists a . bird(x) AND boy(y) AND saw(a) "
                        "AND agent(a, x) AND patient(a, y)")
    r = pairs("revscope")[0]
    assert r.lf0.type == "scope_reverse" and r.type == "revscope"
    assert r.lf1.lf == ("forall x . exists y . exists a . bird(y) AND boy(x) AND saw(a) "
                        "AND agent(a, y) AND patient(a, x)")


def test_unambiguous_pool_order() -> None:
    basic = pool("basic")
    assert basic[0].surface == "the bird saw the boy" and basic[-1].surface == "a woman shouted"
    assert list(dict.fromkeys(r.template for r in basic))[:7] == [
        "basic/the/noun_noun", "basic/the/noun_name", "basic/the/name_noun", "basic/the/name_name",
        "basic/the/noun_intrans", "basic/the/name_intrans", "basic/a/noun_noun"]
    dc = pool("double_conj")
    assert [r.template_idx for r in dc[:5040]] == [0] * 5040 and dc[5040].template_idx == 1
    assert pool("bound_unambig")[0].template == "bound_unambig/female/a/subj"
    assert pool("bound_unambig")[500].template == "bound_unambig/female/a/obj"


def test_pool_returns_a_copy() -> None:
    first = pool("quant")
    first.clear()
    assert len(pool("quant")) == 52


def test_unknown_pool_and_gender() -> None:
    with pytest.raises(DataError, match="unknown pool 'nope'"):
        pool("nope")
    with pytest.raises(DataError, match="gender"):
        pool("bound", gender="other")
    with pytest.raises(DataError, match="not ambiguous"):
        pairs("basic")


# --- filters and sampling -------------------------------------------------------------------------


def test_filter_by_template_and_word() -> None:
    assert len(pairs("pp", template="pp/visual/d")) == 1440
    assert len(pairs("pp", template="pp/visual")) == 192 + 640 + 640 + 1440
    assert all(p.template.startswith("pp/tactile/") for p in pairs("pp", template="pp/tactile"))
    with pytest.raises(DataError, match="no template 'pp/nope'"):
        pairs("pp", template="pp/nope")
    assert len(pairs("pp", word="Galileo")) == len(
        [p for p in pairs("pp") if "Galileo" in p.surface.split()])
    both = pairs("pp", word="picked up")
    assert both and both == pairs("pp", word="picked_up")
    assert all("telescope" in p.surface for p in pairs("pp", word="telescope"))
    assert pairs("scope", word="pair of gloves") == [
        p for p in pairs("scope") if p.surface.endswith("pair of gloves")]


def test_sample_pairs_is_seeded_and_local() -> None:
    np_state = np.random.get_state()[1].copy()
    py_state = random.getstate()
    a = sample_pairs("conj", 5, seed=7)
    b = sample_pairs("conj", 5, seed=7)
    c = sample_pairs("conj", 5, seed=8)
    assert a == b and a != c
    assert len({p.surface for p in a}) == 5
    assert np.array_equal(np.random.get_state()[1], np_state) and random.getstate() == py_state
    filtered = sample_pairs("pp", 3, seed=1, template="pp/tactile/c", word="Mary")
    assert len(filtered) == 3
    assert all(p.template == "pp/tactile/c" and p.surface.startswith("Mary ") for p in filtered)
    with pytest.raises(DataError, match="cannot sample 5000"):
        sample_pairs("bound", 5000, seed=0)


def test_generate_all_and_sampled() -> None:
    assert generate("pp") == pool("pp")
    sample = generate("bound", n=4, seed=3)
    assert len(sample) == 8
    for r0, r1 in zip(sample[::2], sample[1::2], strict=True):
        assert r0.surface == r1.surface and (r0.template_idx, r1.template_idx) == (0, 1)
    assert [r.surface for r in sample[::2]] == [p.surface for p in sample_pairs("bound", 4, seed=3)]
    assert generate("bound", n=4, seed=3) == sample
    assert len(generate("basic", n=10, seed=0)) == 10
    assert len(generate("double_conj", n=10, seed=0)) == 20
    with pytest.raises(DataError, match="seed"):
        generate("pp", n=3)
    only = generate("pp", template="pp/visual/b", word="camera")
    assert len(only) == 2 * 160 and all("camera" in r.surface for r in only)


def test_generate_lisp() -> None:
    pytest.importorskip("amp.logic.convert")
    out = generate("scope", n=2, seed=0, fmt="lisp")
    assert all(r.lf.startswith("( ") for r in out)
    assert all(r.unfilled_template.startswith("exists") or r.unfilled_template.startswith("forall")
               for r in out)


def test_find_pair() -> None:
    p = find_pair("Galileo saw Mary with the camera")
    assert isinstance(p, AmbiguousPair) and p.type == "pp" and p.template == "pp/visual/d"
    assert find_pair("a dog spotted each hat").type == "revscope"
    assert find_pair("the man spied the boy and he shouted").type == "bound"
    assert find_pair("the bird saw the boy") is None  # unambiguous
    assert find_pair("nonsense") is None


# --- records and JSONL ------------------------------------------------------------------------------


def test_jsonl_round_trip(tmp_path) -> None:
    records = pool("pp")[:3] + pool("revscope")[-2:] + pool("double_conj")[:1]
    path = tmp_path / "out.jsonl"
    assert write_jsonl(records, path) == 6
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    assert list(first) == ["surface", "lf", "unfilled_template", "template_tags", "var_bindings",
                           "template_idx", "type"]
    assert first["template_tags"] == [None, "np1", "vp1", None, "np2", None, "np3"]
    assert '"template_tags": [null, "np1"' in lines[0] and isinstance(first["template_idx"], int)
    assert json.loads(lines[3])["type"] == "scope_reverse"
    back = read_jsonl(path)
    assert back == [replace(r, template=None) for r in records]
    buf = io.StringIO()
    write_jsonl(records, buf, include_template=True)
    buf.seek(0)
    assert read_jsonl(buf) == records


def test_read_accepts_scope_reverse_and_revscope() -> None:
    line = {"surface": "a dog spotted each hat", "lf": "x", "unfilled_template": "x",
            "template_tags": [None, "np1", "vp1", None, "np2"],
            "var_bindings": {"np1": "dog", "vp1": "spotted", "np2": "hat"},
            "template_idx": 1, "type": "scope_reverse"}
    text = json.dumps(line) + "\n\n" + json.dumps({**line, "type": "revscope", "template_idx": "0"})
    a, b = read_jsonl(io.StringIO(text))
    assert a.type == b.type == "scope_reverse" and a.ambiguity == "revscope"
    assert (a.template_idx, b.template_idx) == (1, 0)
    assert ambiguity_type("scope_reverse") == "revscope"
    assert ambiguity_type("pp") == "pp" and ambiguity_type("unambig") == "unambig"


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "JSON object"),
        ('{"lf": "x"}', "surface"),
        ('{"surface": "s", "lf": "x", "template_idx": "one"}', "template_idx"),
        ('{"surface": "s", "lf": "x", "template_tags": "np1"}', "template_tags"),
        ('{"surface": "s", "lf": "x", "var_bindings": {"np1": 3}}', "var_bindings"),
    ],
)
def test_malformed_jsonl_names_the_line(bad_line: str, message: str) -> None:
    good = json.dumps(pool("quant")[0].to_record())
    with pytest.raises(RecordError, match=f"line 3: .*{message}") as info:
        read_jsonl(io.StringIO(f"{good}\n{good}\n{bad_line}\n"))
    assert info.value.line == 3


def test_example_is_frozen_and_hashable() -> None:
    ex = pool("quant")[0]
    with pytest.raises(AttributeError):
        ex.surface = "x"  # type: ignore[misc]
    assert len({ex, Example.from_record(ex.to_record(include_template=True))}) == 1


def test_lfs_parse_and_readings_differ_after_canonicalisation() -> None:
    """§4.7: after canonicalisation LF0 ≠ LF1 for every ambiguous surface (sampled here)."""
    pytest.importorskip("amp.logic.canonical")
    from amp.logic.canonical import canonical
    from amp.logic.reader import parse_lf

    for type_ in AMBIGUOUS_TYPES:
        for p in sample_pairs(type_, 15, seed=2):
            for mode in ("logical", "paper"):
                assert canonical(p.lf0.lf, mode=mode) != canonical(p.lf1.lf, mode=mode), p.surface
    for name in ("basic", "single_conj", "double_conj", "possession", "instrument", "quant",
                 "pp_unambig", "scope_unambig", "bound_unambig"):
        for r in pool(name)[::400]:
            parse_lf(r.lf)
