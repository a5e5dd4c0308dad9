"""AppTest: every chart has a text alternative (issue #41 point 5, WCAG 1.1.1).

:func:`ui.shared.common.chart` puts a caller's ``summary`` under the chart as plain text; without
one, the figure's data in words in a collapsed "Chart as text" expander; with
``summary_beside=True`` nothing (the caller says it next to the chart).
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _script(summary: str | None, beside: bool) -> None:
    import plotly.graph_objects as go

    from amp.reporting.style import plain_label
    from ui.shared.common import chart

    fig = go.Figure()  # a name typed with markup, escaped for plotly as every figure builder does
    fig.add_bar(x=[plain_label("LF0 · <b>a</b>"), "LF1 · b"], y=[2, 5], name="votes")
    fig.update_layout(title="Votes")
    chart(fig, key="c", summary=summary, summary_beside=beside)


def _run(summary: str | None, beside: bool = False) -> AppTest:
    app = AppTest.from_function(_script, args=(summary, beside), default_timeout=60).run()
    assert not app.exception
    return app


def test_a_summary_is_shown_under_the_chart_as_plain_text() -> None:
    app = _run("Votes: LF0 · *a*: 2, LF1 · b: 5")
    assert [c.value for c in app.caption] == [r"Votes\: LF0 · \*a\*\: 2, LF1 · b\: 5"]  # Markdown escaped
    assert not app.expander


def test_without_a_summary_the_data_in_words_is_in_an_expander() -> None:
    app = _run(None)
    (box,) = app.expander
    assert box.label == "Chart as text" and not app.caption
    assert box.markdown[0].value == "- Votes\n- votes\\: LF0 · \\<b\\>a\\</b\\>\\: 2, LF1 · b\\: 5"


def test_a_summary_said_beside_the_chart_adds_nothing() -> None:
    app = _run("Votes: 2 and 5", beside=True)
    assert not app.caption and not app.expander
