"""Real browser: the gradient attribution of Parse & inspect (issue #31).

A server of its own on the tiny local GPT-2 (module fixture ``tiny_server``).  The test parses the
default prompt, asks for the influential examples, opens *Which words pushed it?*, sets 2
integrated-gradients steps and presses **Attribute**; then reads the prompt map (one span per
token, each background LF0's blue, LF1's orange or transparent; the whole prompt's text),
the word bars (one per word of the test sentence), the scatter's Spearman ρ in its title, and saves
a screenshot.  No console error, no page error, nothing requested off the loopback.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, shot, wait_idle

from amp.prompts import Prompt
from ui.shared.prompt_state import default_prompt

RUN_TIMEOUT = 240_000


def _chart(page: Page, title: str):
    return page.locator('[data-testid="stPlotlyChart"]').filter(has=page.locator(".gtitle").filter(has_text=title))


def test_attribution_view(tiny_server, page_on) -> None:
    prompt: Prompt = default_prompt()
    page: Page = page_on(tiny_server)
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(tiny_server.url)
    wait_idle(page)
    goto_page(page, "Parse & inspect")
    page.get_by_role("button", name="Parse").click()
    expect(page.get_by_role("heading", name="Beams", exact=True)).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page, RUN_TIMEOUT)
    run = page.get_by_role("button", name="Find the influential examples")
    run.scroll_into_view_if_needed()
    run.click()
    expect(_chart(page, "Which examples moved P(LF0)? (each removed)").locator(".main-svg").first).to_be_visible(
        timeout=RUN_TIMEOUT)
    wait_idle(page, RUN_TIMEOUT)

    page.get_by_text("Which words pushed it? (gradient attribution)").click()
    steps = page.get_by_label("Steps (integrated gradients)")
    steps.fill("2")
    steps.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Attribute").click()
    chart = _chart(page, "Which words of the test sentence")
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page, RUN_TIMEOUT)
    spans = page.locator(".amp-attribution .amp-token")
    texts = spans.evaluate_all("els => els.map(e => e.textContent)")
    colours = spans.evaluate_all("els => els.map(e => getComputedStyle(e).backgroundColor)")
    assert "".join(texts) == prompt.render()  # the prompt as plain text, every character once
    allowed = re.compile(r"rgba\((0, 114, 178|179, 71, 0), [0-9.]+\)|rgba\(0, 0, 0, 0\)|rgb\((0, 114, 178|179, 71, 0)\)")
    assert all(allowed.fullmatch(c) for c in colours), set(colours)
    assert any("0, 114, 178" in c for c in colours) or any("179, 71, 0" in c for c in colours)
    words = chart.evaluate("el => el.querySelector('.js-plotly-plot').data[0].x.length")
    assert words == len(prompt.test_utterance.split())
    scatter = _chart(page, "Examples: attribution against influence")
    expect(scatter.locator(".gtitle")).to_contain_text(re.compile(r"Spearman ρ = ([+-]\d\.\d\d|–)"))
    expect(page.get_by_role("button", name="Prompt map (HTML)")).to_be_visible()
    shot(page, "attribution")
    assert_clean(page)
