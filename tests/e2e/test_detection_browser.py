"""Real browser: "Does the model know it is ambiguous?" on the Research page (issue #43).

A server of its own runs on a tiny local GPT-2 (its numbers are noise, drawn by the same code as on
the default model).  The test asks for the probes on 5 sentences per type and class, watches the
bar, and reads the drawn curve in plotly's own data: a probe line per pooling with its shuffled-label
control, the bag-of-words level, chance at 0.5, one point per layer (the embeddings and the tiny
model's 2 blocks).  No console error, no page error, nothing requested off the loopback.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, shot, wait_idle

RUN_TIMEOUT = 300_000  # a tiny model: tens of seconds, but the machine may be busy

TRACES = """(el) => { const gd = el.querySelector('.js-plotly-plot');
  return gd.data.map(t => ({group: (t.meta || {}).group || '', n: (t.x || []).length, y: t.y})); }"""


def start_probe_measurement(page: Page, url: str) -> None:
    """On the Research page's detection section: 5 sentences per type and class, probes only (the
    signals' searches are slow on the tiny model), **Measure** clicked; the caller waits for what it checks."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(url)
    wait_idle(page)
    goto_page(page, "Research (reproduce)", "Research")
    expect(page.get_by_role("heading", name="Does the model know it is ambiguous?")).to_be_visible()
    per_type = page.get_by_role("spinbutton", name="Sentences per type and class")
    per_type.fill("5")
    per_type.press("Enter")
    wait_idle(page)
    page.get_by_text("Uncertainty signals", exact=True).click()
    wait_idle(page)
    run = page.get_by_role("button", name="Measure")
    run.scroll_into_view_if_needed()
    run.click()


def test_the_probe_curve_renders_with_its_controls(tiny_server, page_on) -> None:
    page: Page = page_on(tiny_server)
    start_probe_measurement(page, tiny_server.url)
    expect(page.get_by_text(re.compile(r"probes: \d+ of \d+")).first).to_be_visible(timeout=RUN_TIMEOUT)
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(
        has=page.locator(".gtitle").filter(has_text="Linear probes per layer"))
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page, RUN_TIMEOUT)
    chart.scroll_into_view_if_needed()
    traces = chart.evaluate(TRACES)
    groups = [t["group"] for t in traces]
    assert groups.count("probe") == 2 and groups.count("shuffled") == 2
    assert "words" in groups and "chance" in groups
    assert all(t["n"] == 3 for t in traces if t["group"] in ("probe", "shuffled"))
    assert all(0 <= y <= 1 for t in traces if t["group"] == "probe" for y in t["y"])
    expect(page.get_by_text(re.compile(r"Best probe: layer \d"))).to_be_visible()
    expect(page.get_by_role("button", name="AUROCs CSV")).to_be_visible()
    shot(page, "ambiguity_probes")
    assert_clean(page)
