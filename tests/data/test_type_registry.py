"""An ambiguity type is declared once (amp.data.types) and every layer reads that declaration.

A small extra type — "toy": *the boy saw the cat while waved*-style depictives, LF0 the watcher
acts, LF1 the watched one acts — is registered with one template and its paraphrase templates
(the teaching layer's, amp.teaching.paraphrase_templates; cleaned up after each test) and goes
through generation, prompts, a parse on the tiny model, the metrics and two pages.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pytest

from amp.data import generate as gen
from amp.data import types
from amp.data.errors import AmbiguityTypeError, UnknownTypeError
from amp.data.templates import Template, register_template, unregister_template
from amp.data.templates.records import Example, ambiguity_type, record_type
from amp.data.types import AmbiguityType, get_type, register_type
from amp.errors import AmpError
from amp.evaluation import experiments as ex
from amp.evaluation import metrics
from amp.prompts import mixed_prompt, zero_shot_prompt
from amp.reporting import plots
from amp.teaching.paraphrase import interpretation_label, paraphrases
from amp.teaching.paraphrase_templates import register_paraphrases, unregister_paraphrases
from ui.shared.common import type_label

REPO = Path(__file__).resolve().parents[2]

TOY_LF0 = ("exists x . exists y . exists a . exists e . {np1}(x) AND {np2}(y) AND {vp1}(a) AND agent(a, x) "
           "AND patient(a, y) AND {vp2}(e) AND agent(e, x)")
TOY_LF1 = ("exists x . exists y . exists a . exists e . {np1}(x) AND {np2}(y) AND {vp1}(a) AND agent(a, x) "
           "AND patient(a, y) AND {vp2}(e) AND agent(e, y)")


def toy_ingredients(s: str, b: Mapping[str, str], rng: np.random.Generator) -> list[str]:
    """Three unambiguous sentences of the basic pool: the clause and who did vp2."""
    return [f"the {b['np1']} {b['vp1']} the {b['np2']}", f"the {b['np1']} {b['vp2']}", f"the {b['np2']} {b['vp2']}"]


TOY = AmbiguityType(
    "toy", "toy depictive", ("the watcher acts", "the watched one acts"),
    ("the subject did the second verb", "the object did the second verb"),
    record_type="toy_depictive", aliases=("depictive",), color="#123456", ingredients=toy_ingredients,
)
TOY_PARAPHRASES = {"toy/while": ("the {np1:noun} {vp2} while watching", "the {np2:noun} {vp2} while watched")}
TOY_TEMPLATE = Template(
    id="toy/while", pool="toy", ambiguity="toy", type="toy_depictive",
    slots="the {np1:INDEFINITE_HUMAN_NPS} {vp1:VISUAL_VPS} the {np2:INDEFINITE_NONHUMAN_SENTIENT_NPS} "
          "[while] {vp2:INTRANSITIVE_VPS_FOR_BOUND}",
    lfs=(TOY_LF0, TOY_LF1),
    description="the N V the N while V",
)


@pytest.fixture
def toy() -> Iterator[AmbiguityType]:
    register_type(TOY)
    register_template(TOY_TEMPLATE)
    register_paraphrases(TOY.id, TOY_PARAPHRASES)
    try:
        yield TOY
    finally:
        unregister_paraphrases(TOY.id)
        unregister_template(TOY_TEMPLATE.id)
        types.unregister_type(TOY.id)


# --- the registry itself -----------------------------------------------------------------------


def test_builtin_types_in_the_papers_order_with_one_wording() -> None:
    assert types.type_ids()[:5] == gen.AMBIGUOUS_TYPES == ("pp", "scope", "revscope", "bound", "conj")
    assert get_type("scope_reverse") is get_type("revscope") and get_type(" revscope ").id == "revscope"
    assert record_type("revscope") == "scope_reverse" and ambiguity_type("scope_reverse") == "revscope"
    # one display name everywhere: figures, select boxes
    assert types.display_name("scope") == "quantifier scope" and type_label("scope") == "quantifier scope (scope)"
    assert type_label("conj") == "conjunction scope (conj)"
    assert metrics.normalise_type(" scope_reverse ") == "revscope" and metrics.normalise_type("unambig") == "unambig"


def test_unknown_type_is_a_typed_error_naming_the_known_ones() -> None:
    with pytest.raises(UnknownTypeError, match="unknown ambiguity type 'nope'") as info:
        get_type("nope")
    assert isinstance(info.value, AmpError)
    for known in ("pp", "scope", "revscope", "bound", "conj", "scope_reverse"):
        assert known in str(info.value)
    with pytest.raises(UnknownTypeError, match="no ambiguity type 'nope'"):
        types.unregister_type("nope")


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(AmbiguityTypeError, match="already registered"):
        register_type(get_type("pp"))
    with pytest.raises(AmbiguityTypeError, match="already name"):
        register_type(AmbiguityType("pp2", "x", ("a", "b"), ("a", "b"), aliases=("scope_reverse",)))
    with pytest.raises(AmbiguityTypeError, match="two non-empty strings"):
        AmbiguityType("x", "x", ("only one",), ("a", "b"))  # type: ignore[arg-type]
    assert "pp2" not in types.type_ids()


def test_registering_and_removing_a_type(toy: AmbiguityType) -> None:
    assert types.type_ids()[-1] == "toy" and get_type("depictive") is toy and get_type("toy_depictive") is toy
    assert types.order_types(["zzz", "toy", "conj", "pp"]) == ["pp", "conj", "toy", "zzz"]
    assert plots.type_color("toy") == "#123456" and types.display_name("toy_depictive") == "toy depictive"


# --- every layer reads the declaration ---------------------------------------------------------


def test_generation(toy: AmbiguityType) -> None:
    records = gen.pool("toy")
    assert len(records) == 2 * 4 * 4 * 6 * 5  # two LFs × humans × visual verbs × animals × Bd verbs
    assert gen.pool("depictive") == records == gen.pool("toy_depictive")  # aliases resolve to the pool
    ps = gen.pairs("toy")
    assert len(ps) == len(records) // 2 and {p.type for p in ps} == {"toy"}
    first = ps[0]
    assert first.surface == "the boy saw the bird while waved"
    assert first.lf0.type == "toy_depictive" and first.lf0.ambiguity == "toy"
    assert first.lf1.lf.endswith("agent(e, y)") and gen.find_pair(first.surface) == first
    drawn = gen.sample_pairs("toy", 3, seed=4)
    assert len({p.surface for p in drawn}) == 3 and all(p.type == "toy" for p in drawn)
    text = gen.dumps_jsonl(gen.generate("toy", n=1, seed=0))
    assert [r.ambiguity for r in gen.read_jsonl(io.StringIO(text))] == ["toy", "toy"]
    assert Example.from_record({"surface": "s", "lf": "x", "type": "toy"}).type == "toy_depictive"


def test_prompts(toy: AmbiguityType) -> None:
    pair = gen.pairs("toy", word="cat")[0]
    prompt = zero_shot_prompt(pair.surface, seed=3)
    assert prompt.type == "toy" and prompt.gold_lf0 == pair.lf0.lf and prompt.gold_lf1 == pair.lf1.lf
    b = pair.var_bindings
    assert sorted(e.utterance for e in prompt.examples) == sorted(
        [f"the {b['np1']} {b['vp1']} the {b['np2']}", f"the {b['np1']} {b['vp2']}", f"the {b['np2']} {b['vp2']}"]
    )
    assert all(e.label is None for e in prompt.examples)  # unambiguous ingredients
    mixed = mixed_prompt(pair.surface, 0.5, seed=1, k=4)
    assert mixed.type == "toy" and [e.label for e in mixed.examples].count(0) == 2
    assert {gen.find_pair(e.utterance).type for e in mixed.examples} == {"toy"}
    assert pair.surface not in {e.utterance for e in mixed.examples}


def test_paraphrases_and_labels(toy: AmbiguityType) -> None:
    pair = gen.pairs("toy")[0]
    assert paraphrases(pair) == ("the boy waved while watching", "the bird waved while watched")
    assert interpretation_label("toy_depictive", 1) == "the watched one acts"


def test_a_type_without_ingredients_has_no_zero_shot_prompt(toy: AmbiguityType) -> None:
    register_type(AmbiguityType("toy", "toy depictive", TOY.readings, TOY.notes, record_type="toy_depictive"),
                  replace=True)
    with pytest.raises(AmpError, match="no zero-shot ingredients are defined for type 'toy'"):
        zero_shot_prompt(gen.pairs("toy")[0].surface)


def test_parse_and_metrics_on_the_tiny_model(toy: AmbiguityType, saved_tiny_model: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from amp.cache import ResultCache
    from amp.parser.parser import Parser
    from amp.parser.search.settings import SearchSettings

    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "amp-cache"))
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))
    search = SearchSettings(beams=2)
    zs = ex.ZeroShotConfig(types=("depictive",), n=2, seed=0, search=search)  # an alias names the type
    few = ex.FewShotConfig(types=("toy",), ratios=(0.0, 1.0), n_per_ratio=1, seed=0, k=2, search=search)
    assert zs.types == few.types == ("toy",)
    items = ex.plan_zeroshot(zs) + ex.plan_fewshot(few)
    assert {i.type for i in items} == {"toy"} and len(items) == 4
    records = list(ex.run_items(parser, items, search))
    assert len(records) == 4 and all(r.type == "toy" and not r.error for r in records)
    # the LF grammar covers the type's predicates: beams were searched and both gold LFs scored
    assert all(r.beams and r.match != "missing" for r in records)
    assert all(r.p_lf0 is not None and 0.0 <= r.p_lf0 <= 1.0 for r in records)
    zero = ex.zeroshot_summary([r for r in records if r.ratio is None], k=2)
    assert list(zero["type"]) == ["toy"] and int(zero["n"].iloc[0]) == 2
    outcomes = [(r.beams, r.lf0, r.lf1) for r in records if r.ratio is None]
    assert zero["ZM_2"].iloc[0] == pytest.approx(metrics.zm_k(outcomes, k=2))
    per_ratio, per_type = ex.fewshot_summary([r for r in records if r.ratio is not None])
    assert list(per_type["type"]) == ["toy"] and set(per_ratio["ratio"]) == {0.0, 1.0}
    by_ratio = {r.ratio: [r.p_lf0] for r in records if r.ratio is not None}
    assert per_type["FIM"].iloc[0] == pytest.approx(metrics.fim(by_ratio))


def test_the_command_line_and_the_sweep_defaults_read_the_registry_live(toy: AmbiguityType,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A type registered at run time is a choice of --type/--types, named in their help, and in the
    default types of both sweeps (issue #25 point 5)."""
    from amp.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["reproduce", "--types", "toy", "pp"]).types == ["toy", "pp"]
    assert parser.parse_args(["prompt", "zero-shot", "--type", "toy", "--seed", "1"]).type == "toy"
    with pytest.raises(SystemExit):
        parser.parse_args(["reproduce", "--types", "nosuch"])
    assert "known: pp, scope, revscope, bound, conj, toy" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["reproduce", "--help"])
    assert "toy" in capsys.readouterr().out
    assert "toy" in ex.FewShotConfig().types and "toy" in ex.ZeroShotConfig().types
    types.unregister_type("toy")
    try:
        assert "toy" not in ex.FewShotConfig().types
    finally:
        register_type(TOY)


def test_sweeps_refuse_an_unknown_type_naming_the_known_ones(toy: AmbiguityType) -> None:
    with pytest.raises(ex.ExperimentError, match="unknown ambiguity type") as info:
        ex.ZeroShotConfig(types=("nope",))
    assert "toy" in str(info.value) and "revscope" in str(info.value)


# --- pages -------------------------------------------------------------------------------------


@pytest.fixture
def app(toy: AmbiguityType, saved_tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("AMP_MODEL", str(saved_tiny_model))
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "app-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    st.cache_data.clear()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    yield at
    st.cache_data.clear()


def test_templates_page_shows_the_new_type(app) -> None:
    assert "toy depictive (toy)" in app.selectbox(key="tpl_type").options
    app.selectbox(key="tpl_type").select("toy").run()
    assert not app.exception, [e.value for e in app.exception]
    assert any(e.label.startswith("toy depictive: 1 template(s)") for e in app.expander)
    shown = " ".join(str(m.value) for m in app.markdown)
    assert "the subject did the second verb" in shown and "the object did the second verb" in shown
    table = app.dataframe[-1].value
    assert list(table["sentence"]) == [p.surface for p in gen.sample_pairs("toy", 20, 0)]


def test_zero_shot_page_plans_the_new_type(app) -> None:
    app.switch_page("views/zero_shot.py").run()
    app.multiselect(key="zs_types").set_value(["toy"]).run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
    assert app.multiselect(key="zs_types").value == ["toy"]
