"""Real browser: the Presentation page's full-screen mode (issue #11 point 3).

At 1280×720, 1400×1000 and 1920×1080, after "Full screen": the browser is in full screen
(headless Chromium grants the Fullscreen API to a click), Streamlit's header and sidebar are
gone, Previous, Next, Reveal and "Exit full screen" are visible, reachable (the element at each
button's centre is the button) and not cut off; "Exit full screen" restores the normal layout.
Leaving the browser's full screen (what Esc does) keeps the layout and its exit control, and
shows the F11 caption; a reload keeps the layout (``?full=1``); the class's votes stay live.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from test_browser import assert_clean, open_app, shot, wait_idle
from test_present_browser import _GEOMETRY, SIZES, _set_sidebar

CONTROLS = ("Previous", "Next", "Reveal the model's choice", "Exit full screen")
HINT = "press F11 for the browser's full screen"


def _open_presentation(page: Page) -> None:
    open_app(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Presentation", exact=True).click()
    expect(page.get_by_role("button", name="Full screen", exact=True)).to_be_visible(timeout=60_000)
    wait_idle(page)


def _enter(page: Page) -> None:
    page.get_by_role("button", name="Full screen", exact=True).click()
    expect(page.get_by_role("button", name="Exit full screen")).to_be_visible(timeout=30_000)
    wait_idle(page)
    page.wait_for_timeout(300)  # the browser's switch to full screen


def _exit(page: Page) -> None:
    page.get_by_role("button", name="Exit full screen").click()
    expect(page.get_by_role("button", name="Full screen", exact=True)).to_be_visible(timeout=30_000)
    wait_idle(page)
    page.wait_for_timeout(300)


def _chrome_visible(page: Page) -> dict[str, bool]:
    """Whether Streamlit's header is shown, and its sidebar shown and open (on screen)."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    return {"stHeader": page.locator('[data-testid="stHeader"]').is_visible(),
            "stSidebar": sidebar.is_visible() and sidebar.evaluate("(s) => s.getBoundingClientRect().right > 50")}


def _control_problems(page: Page, where: str) -> list[str]:
    """What is wrong with the controls: hidden, covered, cut off or off screen."""
    problems = []
    page.evaluate("window.scrollTo(0, 0)")
    height = page.evaluate("innerHeight")
    for name in CONTROLS:
        button = page.get_by_role("button", name=name, exact=True)
        if not button.is_visible():
            problems.append(f"{where} {name!r}: not visible")
            continue
        g = button.evaluate(_GEOMETRY)
        if not 0 <= g["top"] < height:
            problems.append(f"{where} {name!r}: off screen (top {g['top']:.0f})")
        if not g["reachable"]:
            problems.append(f"{where} {name!r}: covered by another element")
        if g["cut"]:
            problems.append(f"{where} {name!r}: label cut off")
    return problems


@pytest.mark.parametrize("sidebar_open", [True, False], ids=["sidebar-open", "sidebar-collapsed"])
def test_full_screen_at_projector_sizes(page: Page, sidebar_open: bool) -> None:
    _open_presentation(page)
    _set_sidebar(page, sidebar_open)
    problems = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(300)
        _enter(page)
        where = f"{width}x{height} {'open' if sidebar_open else 'collapsed'}"
        assert page.evaluate("document.fullscreenElement === document.documentElement"), where
        assert "full=1" in page.url
        assert _chrome_visible(page) == {"stHeader": False, "stSidebar": False}, where
        expect(page.get_by_text(HINT)).to_be_hidden()  # the browser is in full screen: no F11 advice
        problems += _control_problems(page, where)
        # the control row stays on screen when the page is scrolled (the teacher can always leave)
        page.mouse.wheel(0, 2000)
        page.wait_for_timeout(200)
        g = page.get_by_role("button", name="Exit full screen").evaluate(_GEOMETRY)
        if not (0 <= g["top"] < height and g["reachable"]):
            problems.append(f"{where}: 'Exit full screen' scrolled away ({g})")
        shot(page, f"present-full-{width}x{height}-{'open' if sidebar_open else 'collapsed'}")
        _exit(page)  # the normal layout again, the sidebar as the teacher left it
        assert page.evaluate("document.fullscreenElement") is None, where
        assert "full=1" not in page.url
        assert _chrome_visible(page) == {"stHeader": True, "stSidebar": sidebar_open}, where
        expect(page.get_by_role("button", name="Full screen", exact=True)).to_be_visible()
    assert problems == []
    assert_clean(page)


def test_esc_and_reload_keep_the_exit_control(page: Page) -> None:
    _open_presentation(page)
    _enter(page)
    page.evaluate("document.exitFullscreen()")  # what Esc does: the browser leaves full screen
    page.wait_for_timeout(300)
    assert page.evaluate("document.fullscreenElement") is None
    expect(page.get_by_text(HINT)).to_be_visible()
    assert _chrome_visible(page) == {"stHeader": False, "stSidebar": False}
    assert _control_problems(page, "after Esc") == []
    # the controls still work in the chrome-free layout
    page.get_by_role("button", name="Next").click()
    wait_idle(page)
    expect(page.get_by_text("2 / 5")).to_be_visible(timeout=30_000)
    assert_clean(page)
    # a reload keeps the layout (no gesture: the browser stays windowed, the F11 caption says so)
    page.reload()
    expect(page.get_by_role("button", name="Exit full screen")).to_be_visible(timeout=60_000)
    wait_idle(page)
    expect(page.get_by_text(HINT)).to_be_visible()
    assert _chrome_visible(page) == {"stHeader": False, "stSidebar": False}
    _exit(page)
    assert _chrome_visible(page)["stHeader"]
    expect(page.get_by_text(HINT)).to_have_count(0)


def test_full_screen_shows_the_class_votes_live(page: Page, st_server) -> None:
    """In full screen the presentation's vote chart still refreshes by itself while students vote."""
    from amp.data import generate as gen
    from amp.teaching.poll import PollItem, PollStore

    store = PollStore(st_server.log.parent / "amp-cache" / "polls.sqlite")
    poll = store.create_poll([PollItem.from_pair(gen.pairs("pp")[0])], "live full screen")
    _open_presentation(page)
    box = page.get_by_label("Poll code (optional)")
    box.fill(poll.code)
    box.press("Enter")
    expect(page.get_by_text("Class: 0 vote(s)")).to_be_visible(timeout=60_000)
    _enter(page)
    expect(page.get_by_text("Class: 0 vote(s)")).to_be_visible()
    store.submit_vote(poll.code, 0, "b" * 32, 0, 3)  # a student votes; nobody touches the page
    expect(page.get_by_text("Class: 1 vote(s)")).to_be_visible(timeout=30_000)
    assert page.evaluate("document.fullscreenElement") is not None
    assert_clean(page)
