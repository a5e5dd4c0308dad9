"""AppTest: the Presentation's slide "Does the model know a sentence is ambiguous?" (issue #43 point 4).

The deck ends with it once the Research page has measured ambiguity detection in this session: its
words and numbers (checked against values written out by hand here, not from the function that
renders them), its bar chart, its place in ``&slide=`` navigation; no slide without a measurement
(the sidebar says where to measure); and one end-to-end run on the tiny model.
"""

from __future__ import annotations

import html

import pytest
from app_helpers import APP, TIMEOUT, assert_ok, goto, plotly_spec, texts

from amp.data import generate as gen
from amp.detection.hidden_states import Pooling
from amp.detection.probe import ProbeReport, ProbeResult
from amp.detection.report import DetectionReport
from amp.detection.signals import PromptKind, Signal, SignalAuroc, SignalsReport
from amp.evaluation.bootstrap import Interval
from amp.teaching.poll import PollItem, PollStore
from ui.classroom import detection_slide, present
from ui.classroom.lesson_url import LessonParam
from ui.inspection.detection_view import DETECTION_KEY

RUN_TIMEOUT = 600  # the Research section's probes on the tiny model; the shared test machine can be slow


def iv(estimate: float, low: float, high: float, n: int) -> Interval:
    return Interval(estimate=estimate, low=low, high=high, n=n)


#: Three hand-made outcomes: (signals' best, probe's best, words, the words the slide must say).
CASES = {
    "chance": (iv(0.53, 0.41, 0.66, 40), iv(0.81, 0.70, 0.90, 24), iv(0.79, 0.68, 0.88, 24),
               "Its uncertainty does not tell ambiguous sentences from unambiguous ones: AUROC 0.53 [0.41, 0.66] (n 40)",
               "scores AUROC 0.81 [0.70, 0.90] (n 24) — but no better than the words themselves (a probe on the "
               "sentence's words alone: 0.79 [0.68, 0.88] (n 24))"),
    "beats": (iv(0.75, 0.62, 0.86, 40), iv(0.95, 0.90, 0.99, 24), iv(0.60, 0.48, 0.72, 24),
              "Its uncertainty tells ambiguous sentences from unambiguous ones better than chance: "
              "AUROC 0.75 [0.62, 0.86] (n 40)",
              "scores AUROC 0.95 [0.90, 0.99] (n 24) — better than the words themselves (a probe on the "
              "sentence's words alone: 0.60 [0.48, 0.72] (n 24))"),
    "wrong way": (iv(0.30, 0.18, 0.42, 40), iv(0.52, 0.40, 0.64, 24), iv(0.50, 0.38, 0.62, 24),
                  "Its uncertainty points the wrong way (it is surer of the ambiguous sentences): "
                  "AUROC 0.30 [0.18, 0.42] (n 40)",
                  "scores AUROC 0.52 [0.40, 0.64] (n 24) — no better than chance (a probe on the sentence's "
                  "words alone: 0.50 [0.38, 0.62] (n 24))"),
}


def _report(signal: Interval, probe: Interval, words: Interval) -> DetectionReport:
    """Semantic entropy under the zero-shot prompt is the best signal (``signal``); every other
    signal and prompt lower; the probe's best is layer 1, last token (``probe``)."""
    low = iv(signal.estimate - 0.1, signal.low - 0.1, signal.high - 0.1, 40)
    aurocs = tuple(SignalAuroc(signal=s, prompt=k, type="all", part="all",
                               auroc=signal if (s, k) == (Signal.SEMANTIC_ENTROPY, PromptKind.ZERO_SHOT) else low)
                   for k in PromptKind for s in Signal)
    # the rows the slide must not take: one type alone, and the test part only (both higher)
    aurocs += tuple(SignalAuroc(signal=s, prompt=k, type=t, part=part, auroc=iv(0.99, 0.98, 1.0, 12))
                    for k in PromptKind for s in Signal for t, part in (("pp", "all"), ("all", "test")))
    signals = SignalsReport(model="tiny", prompts=tuple(PromptKind), sentences=(), aurocs=aurocs, beams=5, seed=3,
                            resamples=100)
    weaker = iv(probe.estimate - 0.2, probe.low - 0.2, probe.high - 0.2, 24)
    shuffled = iv(0.49, 0.40, 0.58, 10)
    results = tuple(ProbeResult(layer=layer, pooling=p, auroc=probe if (layer, p) == (1, Pooling.LAST) else weaker,
                                shuffled=shuffled, c=1.0)
                    for p in Pooling for layer in range(3))
    probes = ProbeReport(model="tiny", results=results, words=words, words_c=1.0, n_train=40, n_test=24, seed=3,
                         resamples=100)
    return DetectionReport(model="tiny-gpt2;abc123", seed=3, per_type=8, test_share=0.3, types=("pp", "scope"),
                           held_out=("cat",), n_train=40, n_test=24, signals=signals, probes=probes)


@pytest.fixture
def poll_code(app_env) -> str:
    store = PollStore()  # under $AMP_CACHE_DIR (the app_env fixture)
    return store.create_poll([PollItem.from_pair(p) for p in gen.pairs("pp")[:3]], "detect").code


def _fresh(report: DetectionReport | None, **params: str):
    """A new session on the Presentation (``params`` in its address), ``report`` as the Research page's."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.run()
    for name, value in params.items():
        app.query_params[name] = value
    if report is not None:
        app.session_state[DETECTION_KEY] = {"ask": None, "report": report}
    return goto(app, "teach_present")


def _nav(app) -> str:
    (nav,) = [c for c in texts(app, "caption") if " / " in c and "·" in c]
    return nav


def _slide_words(app) -> str:
    return html.unescape(" ".join(texts(app, "markdown")))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_deck_ends_with_the_slide_in_words_and_numbers(poll_code: str, case: str) -> None:
    signal, probe, words, said_signals, said_probe = CASES[case]
    app = _fresh(_report(signal, probe, words), code=poll_code)
    assert _nav(app).startswith("1 / 4 · ")  # three sentences, then the slide
    assert app.checkbox(key=detection_slide.TOGGLE_KEY).value
    for _ in range(3):
        app.button(key="present_next").click().run()
    assert_ok(app)
    assert _nav(app).startswith("4 / 4 · Does the model know it is ambiguous?")
    assert app.query_params[LessonParam.SLIDE] == "4" and app.button(key="present_next").disabled
    words_shown = _slide_words(app)
    assert "Does the model know a sentence is ambiguous?" in words_shown
    assert said_signals in words_shown
    assert "(the most telling of 8 signals and prompts: semantic entropy over meanings, zero-shot prompt)" \
        in words_shown
    assert f"at layer 1 (the sentence's last token) {said_probe}" in words_shown
    assert "Best of 6 probes (3 layers, 2 ways each), chosen on the test sentences: a generous figure." \
        in words_shown
    source = " ".join(texts(app, "caption")).replace("\\", "")  # plain text: Markdown escaped
    assert "model tiny-gpt2 ·" in source and "64 sentences of 2 types" in source and "seed 3" in source
    assert "8 per type and class; 24 test sentences" in source and "zero-shot, mixed" in source
    assert not [b for b in app.button if b.key and b.key.startswith("present_reveal")]  # nothing to reveal here
    # the chart: top to bottom the most telling signal, the probe, its shuffled control, the words
    (bars,) = plotly_spec(app)["data"]
    assert bars["y"][::-1] == ["uncertainty: semantic entropy (zero-shot)", "probe, layer 1",
                               "probe, labels shuffled (layer 1)", "probe on the words alone"]
    assert bars["x"][::-1] == [signal.estimate, probe.estimate, 0.49, words.estimate]
    assert bars["error_x"]["arrayminus"][::-1][1] == pytest.approx(probe.estimate - probe.low)
    assert bars["error_x"]["array"][::-1][0] == pytest.approx(signal.high - signal.estimate)

    app.button(key="present_prev").click().run()  # back to the last sentence
    assert_ok(app)
    assert _nav(app).startswith("3 / 4 · ") and app.query_params[LessonParam.SLIDE] == "3"
    assert gen.pairs("pp")[2].surface in _slide_words(app)


def test_the_slide_can_be_left_out_and_a_reload_without_the_measurement_clamps(poll_code: str) -> None:
    app = _fresh(_report(*CASES["chance"][:3]), code=poll_code, slide="4")
    assert _nav(app).startswith("4 / 4 · Does the model know")  # the address's slide 4 is the detection slide
    app.checkbox(key=detection_slide.TOGGLE_KEY).uncheck().run()
    assert_ok(app)
    assert _nav(app).startswith("3 / 3 · ") and app.query_params[LessonParam.SLIDE] == "3"
    again = _fresh(None, code=poll_code, slide="4")  # F5, and nothing measured was kept on disk
    assert _nav(again).startswith("3 / 3 · ")


def test_a_reload_keeps_the_slide_from_the_measurement_kept_on_disk(poll_code: str, app_cache_dir) -> None:
    from amp.detection.saved import save_latest

    save_latest(_report(*CASES["beats"][:3]), app_cache_dir / "detection")  # what the Research section keeps
    app = _fresh(None, code=poll_code, slide="4")  # F5: a new session, nothing in it
    assert _nav(app).startswith("4 / 4 · Does the model know it is ambiguous?")
    assert CASES["beats"][3] in _slide_words(app)
    (app_cache_dir / "detection" / "latest.json").write_text("{damaged")  # a damaged file: said, no slide
    broken = _fresh(None, code=poll_code, slide="4")
    assert _nav(broken).startswith("3 / 3 · ")
    said = [w.value.replace("\\", "") for w in broken.sidebar.warning]  # plain text: Markdown escaped
    assert any("latest.json" in w and "not a detection report" in w for w in said), said


def test_without_a_measurement_no_slide_and_the_sidebar_says_where_to_measure(app_env) -> None:
    app = _fresh(None)
    n = app.session_state["present_n"]
    app.session_state[present.POS_KEY] = n  # one past the last sentence
    app.run()
    assert_ok(app)
    assert _nav(app).startswith(f"{n} / {n} · ") and app.button(key="present_next").disabled
    assert not [c for c in app.checkbox if c.key == detection_slide.TOGGLE_KEY]
    assert any("measured on the Research page" in c for c in texts(app.sidebar, "caption"))
    assert "Does the model know a sentence is ambiguous?" not in _slide_words(app)


@pytest.mark.slow
def test_a_measurement_on_the_tiny_model_becomes_the_last_slide(at) -> None:
    """The Research section's probes (no signals) on the tiny model; the slide's numbers are the report's,
    its best layer found and formatted here by hand."""
    goto(at, "research")
    at.number_input(key="det_per_type").set_value(5).run()
    at.checkbox(key="det_signals").uncheck().run()
    at.button(key="det_run").click().run(timeout=RUN_TIMEOUT)
    assert_ok(at)
    report = at.session_state[DETECTION_KEY]["report"]
    from amp.detection.saved import load_latest

    assert load_latest() == report  # kept for the slide after a reload
    best = report.probes.results[0]
    for r in report.probes.results:  # the highest AUROC; on a tie the lower layer
        if r.auroc.estimate > best.auroc.estimate or (r.auroc.estimate == best.auroc.estimate and r.layer < best.layer):
            best = r
    goto(at, "teach_present")
    n = at.session_state["present_n"]
    at.session_state[present.POS_KEY] = n
    at.run()
    assert_ok(at)
    assert _nav(at).startswith(f"{n + 1} / {n + 1} · Does the model know")
    words_shown = _slide_words(at)
    a, w = best.auroc, report.probes.words
    assert f"at layer {best.layer} (" in words_shown
    assert f"AUROC {a.estimate:.2f} [{a.low:.2f}, {a.high:.2f}] (n {a.n})" in words_shown
    assert f"words alone: {w.estimate:.2f} [{w.low:.2f}, {w.high:.2f}] (n {w.n})" in words_shown
    assert "Its uncertainty was not measured this time" in words_shown
    assert f"{report.n_train + report.n_test} sentences of 5 types" in " ".join(texts(at, "caption")).replace("\\", "")
    (bars,) = plotly_spec(at)["data"]
    assert len(bars["x"]) == 3 and bars["x"][-1] == pytest.approx(a.estimate)  # probe, shuffled, words: top first
