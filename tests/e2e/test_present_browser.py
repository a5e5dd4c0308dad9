"""Real browser: the Presentation page on a projector (issue #11 point 3).

At 1280×720, 1400×1000 and 1920×1080, with the sidebar open and collapsed, Previous, Next and
Reveal are below Streamlit's fixed header (the element at each button's centre is the button
itself, so a click reaches it) and their labels are not cut off.  No model is loaded: the
reveal's wording is covered by the AppTest suite.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from test_browser import assert_clean, open_app, shot, wait_idle

SIZES = ((1280, 720), (1400, 1000), (1920, 1080))
CONTROLS = ("Previous", "Next", "Reveal the model's choice", "Full screen")

#: For a button: its box, the header's bottom, whether the element at its centre is inside it,
#: and whether its label is cut (text wider than the space it is given).
_GEOMETRY = """(button) => {
  const box = button.getBoundingClientRect();
  const header = document.querySelector('[data-testid="stHeader"]');
  const headerBottom = header ? header.getBoundingClientRect().bottom : 0;
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  const cut = [button, ...button.querySelectorAll('*')].some(
      (e) => e.scrollWidth > e.clientWidth + 1 || getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth);
  return {top: box.top, headerBottom: headerBottom, reachable: !!hit && button.contains(hit), cut: cut};
}"""


def _sidebar_open(page: Page) -> bool:
    return page.get_by_role("button", name="Collapse sidebar").count() > 0 and page.locator(
        '[data-testid="stSidebar"]').evaluate("(s) => s.getBoundingClientRect().right > 50")


def _set_sidebar(page: Page, open_: bool) -> None:
    if _sidebar_open(page) == open_:
        return
    if open_:
        page.get_by_role("button", name="Expand sidebar").click()
    else:
        page.locator('[data-testid="stSidebar"]').hover()
        page.get_by_role("button", name="Collapse sidebar").click()
    page.wait_for_timeout(600)  # the sidebar's slide transition
    assert _sidebar_open(page) == open_


@pytest.mark.parametrize("sidebar_open", [True, False], ids=["sidebar-open", "sidebar-collapsed"])
def test_presentation_controls_are_clickable_on_a_projector(page: Page, sidebar_open: bool) -> None:
    open_app(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Presentation", exact=True).click()
    expect(page.get_by_role("button", name="Reveal the model's choice")).to_be_visible(timeout=60_000)
    wait_idle(page)
    problems = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(300)
        _set_sidebar(page, sidebar_open)
        page.evaluate("window.scrollTo(0, 0)")
        for name in CONTROLS:
            button = page.get_by_role("button", name=name)
            g = button.evaluate(_GEOMETRY)
            where = f"{width}x{height} {'open' if sidebar_open else 'collapsed'} {name!r}"
            if g["top"] < g["headerBottom"] - 0.5:
                problems.append(f"{where}: under the header (top {g['top']:.0f} < {g['headerBottom']:.0f})")
            if not g["reachable"]:
                problems.append(f"{where}: covered by another element")
            if g["cut"]:
                problems.append(f"{where}: label cut off")
        shot(page, f"present-{width}x{height}-{'open' if sidebar_open else 'collapsed'}")
    assert problems == []
    # the controls work: Next moves to sentence 2
    page.get_by_role("button", name="Next").click()
    wait_idle(page)
    expect(page.get_by_text("2 / 5")).to_be_visible(timeout=30_000)
    assert_clean(page)


def test_presentation_shows_the_class_votes_live(page: Page, st_server) -> None:
    """With a poll code, the presentation's vote chart refreshes by itself while students vote."""
    from amp.data import generate as gen
    from amp.teaching.poll import PollItem, PollStore

    store = PollStore(st_server.log.parent / "amp-cache" / "polls.sqlite")
    poll = store.create_poll([PollItem.from_pair(gen.pairs("pp")[0])], "live")
    open_app(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Presentation", exact=True).click()
    box = page.get_by_label("Poll code (optional)")
    box.fill(poll.code)
    box.press("Enter")
    expect(page.get_by_text("Class: 0 vote(s)")).to_be_visible(timeout=60_000)
    store.submit_vote(poll.code, 0, "a" * 32, 1, 3)  # a student votes; nobody touches the page
    expect(page.get_by_text("Class: 1 vote(s)")).to_be_visible(timeout=30_000)
    assert_clean(page)


def test_the_reveal_says_neither_and_undecided_in_words(page: Page, st_server) -> None:
    """Issue #26 point 5: a sentence whose parse was neither reading, at P(LF0) = 0.5 (stored with
    the poll item, so no model runs): the reveal says "neither reading", then "undecided", and
    names no reading's paraphrase."""
    import dataclasses

    from amp.data import generate as gen
    from amp.teaching.poll import PollItem, PollStore

    store = PollStore(st_server.log.parent / "amp-cache" / "polls.sqlite")
    item = dataclasses.replace(PollItem.from_pair(gen.pairs("pp")[1], 0.5), model_match="neither")
    poll = store.create_poll([item], "neither")
    open_app(page)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Presentation", exact=True).click()
    box = page.get_by_label("Poll code (optional)")
    box.fill(poll.code)
    box.press("Enter")
    expect(page.get_by_text("Class: 0 vote(s)")).to_be_visible(timeout=60_000)
    page.get_by_role("button", name="Reveal the model's choice").click()
    wrote = page.locator(".amp-wrote")
    expect(wrote).to_have_text("The model wrote neither reading: its parse is a different formula from both LFs.",
                               timeout=30_000)
    expect(page.locator(".amp-scores")).to_have_text(  # an item stored without its prompt: the paper's measure
        "Forced to write each reading, it is undecided by each reading's least likely token: P(LF0) = 0.50 "
        "is within 0.05 of 0.5.")
    wait_idle(page)
    shown = wrote.inner_text() + page.locator(".amp-scores").inner_text()
    assert item.paraphrase0 not in shown and item.paraphrase1 not in shown
    shot(page, "present-reveal-neither-undecided")
    assert_clean(page)
