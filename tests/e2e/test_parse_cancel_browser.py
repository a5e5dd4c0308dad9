"""Real browser: a parse on Parse & inspect shows its stage, elapsed time and a Cancel that stops
it (issue #27 item 5).  The embedded default model: loading and decoding take long enough to
click Cancel mid-parse on any machine."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, open_app, shot, wait_idle


def test_a_running_parse_shows_its_stage_and_can_be_cancelled(page: Page) -> None:
    open_app(page)
    goto_page(page, "Parse & inspect")
    # 4 beams: a search no other test of the session runs, so its result is never cached already
    beams = page.get_by_label("Beams k")
    beams.fill("4")
    beams.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Parse", exact=True).click()
    cancel = page.get_by_role("button", name="Cancel")
    expect(cancel).to_be_visible(timeout=60_000)
    expect(page.get_by_text(re.compile(r"(Starting|Beam search: decode step \d+).* · \d+ s elapsed"))).to_be_visible()
    shot(page, "parse-running")
    cancel.click()
    expect(page.get_by_text("Parse cancelled: the model stopped.")).to_be_visible(timeout=300_000)
    wait_idle(page, 300_000)
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)
    expect(page.get_by_text("Press Parse to run the model on this prompt.")).to_be_visible()
    shot(page, "parse-cancelled")
    assert_clean(page)
