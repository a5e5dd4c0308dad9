"""Real browser: a teacher creates a class poll, two students (two browser contexts) vote, and the
teacher's live results show both votes; a student's reload cannot vote again.  No console errors, no request off the loopback interface.

The poll is created in the teacher UI without the model's P(LF0) (the server runs the 270M model;
scoring is covered by the AppTest suite), so this test never loads model weights.
"""

from __future__ import annotations

import re

from playwright.sync_api import expect
from test_browser import assert_clean, goto_page, shot, wait_idle


def _recorded(context, rec):
    pg = context.new_page()
    pg.on("console", lambda m: m.type == "error" and rec.console_errors.append(m.text))
    pg.on("pageerror", lambda e: rec.page_errors.append(str(e)))
    pg.on("request", lambda r: rec.requests.append(r.url))
    pg.rec = rec
    return pg


def _vote(browser, base_url: str, code: str, reading: int, recorder_cls) -> None:
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        pg = _recorded(context, recorder_cls())
        pg.goto(f"{base_url}/?poll={code}")
        wait_idle(pg)
        expect(pg.locator("h1").filter(has_text="Class poll")).to_be_visible(timeout=60_000)
        expect(pg.locator('[data-testid="stSidebarNav"]')).to_have_count(0)
        pg.locator('[role="radiogroup"] label').nth(reading).click()
        expect(pg.get_by_role("radio").nth(reading)).to_be_checked()
        wait_idle(pg)
        pg.get_by_role("button", name="Submit").click()
        expect(pg.get_by_text("Thanks! Your answer is in.")).to_be_visible(timeout=30_000)
        wait_idle(pg)
        shot(pg, f"poll-student-{reading}")
        # a reload is a new session with the same URL (it carries the voter id): no second vote
        expect(pg).to_have_url(re.compile(r"[?&]voter=[0-9a-f]{32}"), timeout=30_000)
        pg.reload()
        wait_idle(pg)
        expect(pg.locator("h1").filter(has_text="Class poll")).to_be_visible(timeout=60_000)
        pg.locator('[role="radiogroup"] label').nth(1 - reading).click()
        wait_idle(pg)
        pg.get_by_role("button", name="Submit").click()
        expect(pg.get_by_text("You already answered this sentence")).to_be_visible(timeout=30_000)
        assert_clean(pg)
    finally:
        context.close()


def test_two_students_vote_teacher_sees_live(page, browser, st_server):
    Recorder = type(page.rec)  # the page fixture's recorder class

    page.goto(st_server.url)
    wait_idle(page)
    goto_page(page, "Class poll")
    page.get_by_text("Include the model's P(LF0)").click()  # uncheck: no model load in this test
    wait_idle(page)
    page.get_by_role("button", name="Create poll").click()
    link = page.get_by_text(re.compile(r"\?poll=[A-Z2-9]{6}"))
    expect(link).to_be_visible(timeout=60_000)
    code = re.search(r"\?poll=([A-Z2-9]{6})", link.inner_text()).group(1)
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("0", timeout=30_000)

    _vote(browser, st_server.url, code, 0, Recorder)
    _vote(browser, st_server.url, code, 1, Recorder)

    # the teacher's fragment refreshes every 2 s: no reload, no click
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("2", timeout=30_000)
    shot(page, "poll-teacher")
    assert_clean(page)
