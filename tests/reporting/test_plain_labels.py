"""No user text reaches a plotly figure as markup (issue #27 item 3).

Plotly renders a subset of HTML in every string of a figure (``<a href>`` a live link, ``<b>``
bold, ``<br>`` a break).  This walks **every** figure builder of :mod:`amp.reporting` (found by
introspection: a new builder without a case here fails :func:`test_every_builder_has_a_case`)
with hostile text in each field a user can fill (type names, sentences, reading names,
utterances, tokens, titles), and checks that the figure's spec holds the text only escaped
(:func:`amp.reporting.style.plain_label`).
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from collections.abc import Callable
from types import SimpleNamespace

import pandas as pd
import plotly.graph_objects as go
import pytest

import amp.reporting
from amp.evaluation.attribution import Attribution, BesideRow, ExampleAttribution, TokenAttribution, WordAttribution
from amp.evaluation.beam_tree import beam_tree
from amp.evaluation.calibration import calibrate, poll_agreement
from amp.evaluation.contrastive import contrast
from amp.evaluation.influence import influence_from_scores
from amp.parser.core.results import Beam, TokenStep
from amp.prompts import Prompt, PromptExample
from amp.reporting import (
    attribution_plots,
    beam_tree_plot,
    calibration_plots,
    coverage_plots,
    detection_plots,
    influence_plots,
    poll_plots,
    readings_heatmap,
    sweep_plots,
    token_plots,
)
from amp.reporting.style import plain_label
from tests.evaluation.test_calibration import rec
from tests.evaluation.test_contrastive import PAIR
from tests.evaluation.test_influence import LF0, LF1, _pair
from tests.reporting.test_plots import Div, make_steps

#: What a user might type: a link, bold text, a line break, an entity.
HOSTILE = '<a href="https://evil.example/x">click</a><b>bold</b><br>&amp;'
#: Markup from :data:`HOSTILE` that must never appear raw in a figure's spec.
RAW = ("<a ", "<a\u0020href", "</a>", "<b>bold", "bold</b>")

#: Helpers that take text the *builder* composed (titles with ``<br><sup>``), not user text.
HELPERS = {"apply_layout", "empty_figure"}


def _builders() -> dict[str, Callable[..., go.Figure]]:
    found = {}
    for info in pkgutil.iter_modules(amp.reporting.__path__):
        module = importlib.import_module(f"amp.reporting.{info.name}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ != module.__name__ or name.startswith("_") or name in HELPERS:
                continue
            ret = inspect.signature(fn).return_annotation
            if ret in ("go.Figure", go.Figure):
                found[f"{info.name}.{name}"] = fn
    return found


def _per_ratio() -> pd.DataFrame:
    return pd.DataFrame({
        "type": [HOSTILE, HOSTILE, "pp"], "ratio": [0.0, 1.0, 0.5], "n": [4, 4, 5],
        "acc_lf0": [0.5, 0.2, 0.4], "acc_lf1": [0.3, 0.6, 0.4], "neither": [0.2, 0.2, 0.2],
        "mean_p_lf0": [0.6, 0.3, 0.5], "std_p_lf0": [0.2, 0.1, 0.1], "sem_p_lf0": [0.1, 0.05, 0.04],
    })


def _zeroshot() -> pd.DataFrame:
    return pd.DataFrame({"type": [HOSTILE, "pp"], "n": [10, 10], "ZM_5": [10.0, 60.0], "acc_lf0": [0.5, 0.3],
                         "acc_lf1": [0.2, 0.6], "neither": [0.3, 0.1], "FDM": [0.2, 0.4], "FIM": [0.1, 0.3]})


def _records() -> pd.DataFrame:
    return pd.DataFrame({"type": [HOSTILE, "pp"], "surface": [HOSTILE, HOSTILE], "ratio": [0.5, 0.5],
                         "p_lf0": [0.2, 0.9]})


def _coverage() -> pd.DataFrame:
    return pd.DataFrame({"type": [HOSTILE, HOSTILE], "k": [1, 2], "n": [3, 3], "recall": [0.5, 1.0],
                         "precision": [1.0, 0.5], "both_found": [0.0, 1.0], "zm": [0.0, 100.0],
                         "n_precision": [3, 3], "mean_distinct": [1.0, 2.0]})


def _tree_fig() -> go.Figure:
    ids = ((1, 2, 3), (1, 2, 4))
    beams = [Beam(rank=i, text=HOSTILE, raw_text=HOSTILE, token_ids=t, tokens=(HOSTILE,) * len(t), logprob=-1.0,
                  score=-1.0, finished=True, parses=True) for i, t in enumerate(ids)]
    steps = [tuple(TokenStep(token=HOSTILE, token_id=t, prob=0.5, prob_grammar=0.6) for t in b) for b in ids]
    return beam_tree_plot.beam_tree_figure(beam_tree(beams, steps, ("lf0", "lf1")), title=HOSTILE)


def _influence():
    examples = (PromptExample(HOSTILE, "A0", "A1", 0), PromptExample(HOSTILE + " b", "B", None, None))
    prompt = Prompt(examples, HOSTILE, gold_lf0=LF0, gold_lf1=LF1)
    return influence_from_scores(prompt, LF0, LF1, "fol", [_pair(0.5), _pair(0.2), _pair(0.6), _pair(0.9)])


def _hostile_pair():
    from dataclasses import replace

    steps = tuple(replace(s, token=HOSTILE) for s in PAIR.lf0.steps)
    return replace(PAIR, lf0=replace(PAIR.lf0, steps=steps))


def _inspection():
    steps = make_steps([HOSTILE, " x"], [0.9, 0.8])
    return SimpleNamespace(predicted_match="lf1", alternative="lf0", predicted_steps=steps,
                           alternative_steps=make_steps([HOSTILE, " y"], [0.4, 0.8], tag="b"), divergence=Div(0))


def _attribution() -> Attribution:
    return Attribution(
        prompt=HOSTILE, test_utterance=HOSTILE, lf0=HOSTILE, lf1=HOSTILE, fmt="fol", target="divergence",
        method="input_x_gradient", steps=1, baseline="zero", divergence=0, token_lf0=HOSTILE, token_lf1=HOSTILE,
        value=1.0, baseline_value=0.0, completeness_gap=0.0,
        tokens=(TokenAttribution(0, HOSTILE, 0, len(HOSTILE), 0.5, example=0),),
        words=(WordAttribution(0, HOSTILE, -1.0), WordAttribution(1, HOSTILE + "2", 0.5)),
        examples=(ExampleAttribution(0, HOSTILE, 0, 0.3),))


def _readings_inspection() -> SimpleNamespace:
    pair = SimpleNamespace(lf0=SimpleNamespace(steps=make_steps([HOSTILE, " x"], [0.9, 0.8])),
                           lf1=SimpleNamespace(steps=make_steps([HOSTILE, " y"], [0.4, 0.8], tag="b")))
    return SimpleNamespace(predicted_steps=make_steps([HOSTILE, " x"], [0.9, 0.8]), pair=pair,
                           lf0="exists x . boy(x)", lf1="exists x . girl(x)", fmt="fol", predicted_match="neither")


#: One hostile case per builder: ``name → () -> figure``.
def _probe_report():
    """A probe report of a model whose name a user typed (the figure's subtitle shows it)."""
    from amp.detection.hidden_states import Pooling
    from amp.detection.probe import ProbeReport, ProbeResult
    from amp.evaluation.bootstrap import Interval

    iv = Interval(estimate=0.7, low=0.6, high=0.8, n=20)
    return ProbeReport(model=HOSTILE, results=(ProbeResult(layer=0, pooling=Pooling.LAST, auroc=iv, shuffled=iv, c=1.0),),
                       words=iv, words_c=1.0, n_train=40, n_test=20, seed=0, resamples=100)


CASES: dict[str, Callable[[], go.Figure]] = {
    "sweep_plots.p_lf0_vs_ratio": lambda: sweep_plots.p_lf0_vs_ratio(_per_ratio()),
    "sweep_plots.accuracy_vs_ratio": lambda: sweep_plots.accuracy_vs_ratio(_per_ratio()),
    "sweep_plots.zm_bars": lambda: sweep_plots.zm_bars(_zeroshot(), 5),
    "sweep_plots.fdm_fim_table": lambda: sweep_plots.fdm_fim_table(_zeroshot()),
    "sweep_plots.accuracy_bars": lambda: sweep_plots.accuracy_bars(_zeroshot()),
    "sweep_plots.p_lf0_distribution": lambda: sweep_plots.p_lf0_distribution(_records()),
    "sweep_plots.overlay_fewshot": lambda: sweep_plots.overlay_fewshot({HOSTILE: _per_ratio()}),
    "coverage_plots.coverage_curves_figure": lambda: coverage_plots.coverage_curves_figure(_coverage(), HOSTILE),
    "calibration_plots.reliability_diagram": lambda: calibration_plots.reliability_diagram(
        calibrate([rec(0.2, "lf0", type_=HOSTILE), rec(0.8, "lf1", type_=HOSTILE)]), "type"),
    "calibration_plots.poll_scatter": lambda: calibration_plots.poll_scatter(
        poll_agreement([(HOSTILE, 0.2, 0.4), (HOSTILE + "2", 0.7, 0.9), ("x", 0.5, 0.5)])),
    "poll_plots.poll_bars": lambda: poll_plots.poll_bars([f"LF0 · {HOSTILE}", f"LF1 · {HOSTILE}"], [1, 2],
                                                         [HOSTILE, HOSTILE]),
    "beam_tree_plot.beam_tree_figure": _tree_fig,
    "influence_plots.influence_bars": lambda: influence_plots.influence_bars(_influence()),
    "influence_plots.influence_by_position": lambda: influence_plots.influence_by_position(_influence()),
    "influence_plots.contrast_strip": lambda: influence_plots.contrast_strip(contrast(_hostile_pair())),
    "influence_plots.contrast_alternatives": lambda: influence_plots.contrast_alternatives(contrast(_hostile_pair())),
    "token_plots.token_heatmap": lambda: token_plots.token_heatmap(
        make_steps([HOSTILE, " x"], [0.9, 0.8]), make_steps([HOSTILE, " y"], [0.4, 0.8], tag="b"), title=HOSTILE),
    "token_plots.inspection_heatmap": lambda: token_plots.inspection_heatmap(_inspection()),
    "attribution_plots.word_bars": lambda: attribution_plots.word_bars(_attribution()),
    "attribution_plots.example_scatter": lambda: attribution_plots.example_scatter(
        (BesideRow(index=0, utterance=HOSTILE, label=0, attribution=0.3, influence=0.1),
         BesideRow(index=1, utterance=HOSTILE + "2", label=1, attribution=-0.2, influence=-0.1)), 0.5),
    "readings_heatmap.readings_heatmap": lambda: readings_heatmap.readings_heatmap(_readings_inspection(),
                                                                                   title=HOSTILE),
    "token_plots.char_heatmap": lambda: token_plots.char_heatmap({HOSTILE: ([HOSTILE, "x"], [0.5, 0.6])},
                                                                 title=HOSTILE),
    "detection_plots.probe_layer_figure": lambda: detection_plots.probe_layer_figure(_probe_report()),
    "detection_plots.auroc_bars": lambda: detection_plots.auroc_bars(
        [detection_plots.AurocBar(HOSTILE, _probe_report().words, detection_plots.BarKind.SIGNAL)]),
    "detection_plots.roc_figure": lambda: detection_plots.roc_figure({HOSTILE: ([0.9, 0.2, 0.5], [True, False, True])},
                                                                     subtitle=HOSTILE),
}


#: Cases whose hostile text is not drawn at all (the alternatives bar shows the model's other
#: candidate tokens at the divergence, not the forced ones): only "no raw markup" is checked.
SHOWS_NO_USER_TEXT = {"influence_plots.contrast_alternatives"}


def test_every_builder_has_a_case() -> None:
    assert sorted(_builders()) == sorted(CASES)


def _strings(value: object, path: str = ""):
    """Every string of a figure spec with its path; ``meta`` (data a template could reference,
    never drawn by itself; no builder's template reads ``%{meta}``) is skipped."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k != "meta":
                yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_text_reaches_the_figure_only_escaped(name: str) -> None:
    spec = json.loads(CASES[name]().to_json())
    found = list(_strings(spec))
    leaks = [(path, s) for path, s in found if any(raw in s for raw in RAW)]
    assert not leaks, f"{name}: raw markup in the figure: {leaks[:3]}"
    assert not any("%{meta" in s for _, s in found), f"{name}: a template shows meta (check it is escaped)"
    if name not in SHOWS_NO_USER_TEXT:
        assert any("&lt;b&gt;" in s for _, s in found), f"{name}: the hostile text is not shown at all"


def test_plain_label_escapes_every_markup_character() -> None:
    assert plain_label('<a href="x">x</a> & <b>') == '&lt;a href="x"&gt;x&lt;/a&gt; &amp; &lt;b&gt;'
    assert plain_label(3) == "3"
