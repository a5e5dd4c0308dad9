"""Real browser: the beam tree of Parse & inspect (issue #15 point 3) in headless Debian Chromium.

A server of its own (``launch_streamlit``) runs on a tiny local GPT-2 with a private, empty
``AMP_CACHE_DIR``, so the parse and the beams' token steps take seconds; its beams are noise, but
the tree is drawn by the same code as on the default model.  The test parses the default prompt
(PP attachment, r = 0.3), scrolls to the beam tree, checks in plotly's own data that there is one
end per beam in its reading's colour, hovers the best beam's end and reads a token and a
probability in the tooltip, switches to the full tree, and saves a screenshot to ``artifacts/``.
No console error, no page error, nothing requested off the loopback.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, shot, wait_idle

from amp.reporting.beam_tree_plot import LABEL_COLORS

RUN_TIMEOUT = 180_000  # a tiny model: seconds, but the machine may be busy

#: The beam tree's plotly data: per end trace its label, colour and the "beam r · …" texts, the
#: layout's meta, and the page position of the best beam's end (the first end trace's first point).
TREE = """(el) => { const gd = el.querySelector('.js-plotly-plot'); const L = gd._fullLayout;
  const r = gd.getBoundingClientRect();
  const ends = gd.data.filter(t => t.meta && t.meta.kind === 'end');
  const best = ends.find(t => t.text.some(s => /^beam 1\\b/.test(s)));
  const i = best.text.findIndex(s => /^beam 1\\b/.test(s));
  return {meta: gd.layout.meta,
          ends: ends.map(t => ({label: t.meta.label, color: t.marker.color, text: t.text})),
          x: r.left + L._size.l + L.xaxis.d2p(best.x[i]), y: r.top + L._size.t + L.yaxis.d2p(best.y[i])}; }"""


def _tree_chart(page: Page):
    return page.locator('[data-testid="stPlotlyChart"]').filter(
        has=page.locator(".gtitle").filter(has_text="Beam tree"))


def test_beam_tree_hover_and_views(tiny_server, page_on) -> None:
    page: Page = page_on(tiny_server)
    page.goto(tiny_server.url)
    wait_idle(page)
    goto_page(page, "Parse & inspect")
    page.get_by_role("button", name="Parse").click()
    expect(page.get_by_role("heading", name="Beam tree")).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page, RUN_TIMEOUT)
    draw = page.get_by_role("button", name="Draw the beam tree")
    draw.scroll_into_view_if_needed()
    draw.click()
    wait_idle(page, RUN_TIMEOUT)
    chart = _tree_chart(page)
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=60_000)
    chart.scroll_into_view_if_needed()
    tree = chart.evaluate(TREE)
    assert tree["meta"]["compressed"] is True and tree["meta"]["prob"] == "raw"
    ranks = []
    for end in tree["ends"]:
        assert end["color"] == LABEL_COLORS[end["label"]]
        for text in end["text"]:
            ranks += [int(r) for r in re.fullmatch(r"beam ([\d = ]+) · .+", text).group(1).split(" = ")]
    assert sorted(ranks) == [1, 2, 3, 4, 5]  # one end per beam of the default k = 5

    page.mouse.move(tree["x"], tree["y"])
    tooltip = page.locator(".hoverlayer .hovertext").first
    expect(tooltip).to_contain_text(re.compile(r"tokens? \d+"), timeout=15_000)
    expect(tooltip).to_contain_text(re.compile(r"p (of all \d+ )?\(raw model\) = (\d\.\d{3}|n/a)"))
    expect(tooltip).to_contain_text("beam 1 ends")
    expect(page.get_by_role("button", name="Download the tree (CSV)")).to_be_visible()
    shot(page, "beam_tree")

    page.locator('[data-testid="stButtonGroup"]').get_by_text("full (one node per token)", exact=True).click()
    expect(page.locator(".gtitle").filter(has_text="one node per token").first).to_be_visible(timeout=30_000)
    wait_idle(page)  # after the new tree is drawn: until the rerun ends, the old one may linger beside it
    expect(chart).to_have_count(1)
    expect(chart.locator(".gtitle")).to_contain_text("one node per token")
    assert chart.evaluate(TREE)["meta"]["compressed"] is False
    assert_clean(page)
