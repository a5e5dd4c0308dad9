"""Real browser, hostile input (issue #12): markup in a poll link stays text — no live link, no
image fetched from anywhere — and with a teacher passphrase a browser gets only the sign-in form
until it gives the passphrase (then the whole app, for that browser session)."""

from __future__ import annotations

from urllib.parse import quote

from playwright.sync_api import expect
from test_browser import assert_clean, shot, wait_idle

MARKUP = "[link](http://evil.example/x) ![img](http://evil.example/x.png) <img src=http://evil.example/y.png>"


def test_poll_link_markup_is_plain_text(page, st_server):
    page.goto(f"{st_server.url}/?poll={quote(MARKUP)}")
    wait_idle(page)
    alert = page.locator('[data-testid="stAlert"]').first
    expect(alert).to_contain_text("There is no poll with the code", timeout=60_000)
    expect(alert).to_contain_text("[link](http:")  # shown as the characters typed
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('img[src*="evil.example"]').count() == 0
    shot(page, "hostile-poll-link")
    assert_clean(page)  # includes: no request left the machine (the image was never fetched)


def test_teacher_passphrase_gates_the_app(page_on, launch_streamlit):
    server = launch_streamlit({"AMP_TEACHER_PASSWORD": "correct horse battery"})
    try:
        pg = page_on(server)
        pg.goto(server.url)
        wait_idle(pg)
        expect(pg.get_by_text("Teacher sign-in")).to_be_visible(timeout=60_000)
        expect(pg.locator('[data-testid="stSidebarNav"]')).to_have_count(0)
        expect(pg.get_by_role("button", name="Clear result cache")).to_have_count(0)
        pg.locator('input[aria-label="Teacher passphrase"]').fill("wrong")
        pg.get_by_role("button", name="Sign in").click()
        expect(pg.get_by_text("That is not the teacher passphrase.")).to_be_visible(timeout=30_000)
        pg.locator('input[aria-label="Teacher passphrase"]').fill("correct horse battery")
        pg.get_by_role("button", name="Sign in").click()
        expect(pg.get_by_role("button", name="Clear result cache")).to_be_visible(timeout=60_000)
        wait_idle(pg)
        shot(pg, "hostile-teacher-signed-in")
        assert_clean(pg)
    finally:
        server.stop()
