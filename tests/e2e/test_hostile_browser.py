"""Real browser, hostile input (issue #12): markup in a poll link stays text — no live link, no
image fetched from anywhere — and with a teacher passphrase a browser gets only the sign-in form
until it gives the passphrase (then the whole app, for that browser session)."""

from __future__ import annotations

from urllib.parse import quote, urlparse

from playwright.sync_api import expect
from test_browser import assert_clean, goto_page, shot, wait_idle

MARKUP = "[link](http://evil.example/x) ![img](http://evil.example/x.png) <img src=http://evil.example/y.png>"

#: The server's clock for the sign-in limiter: a file holding seconds, set by the test.
CLOCK_ENV = "AMP_E2E_SIGNIN_CLOCK"
#: ``python -c`` launcher of the server: the app's sign-in limiter (its limits kept) reads the time
#: from the file named by :data:`CLOCK_ENV`, then Streamlit starts in the same process, so what the
#: form says never depends on how long a slow machine takes between attempts (issue #45 point 3).
CLOCKED_LIMITER = (
    "import os, pathlib, sys\n"
    "from amp.classroom import teacher_auth as ta\n"
    f"clock = pathlib.Path(os.environ[{CLOCK_ENV!r}])\n"
    "old = ta.LIMITER\n"
    "ta.LIMITER = ta.SignInLimiter(old.max_failures, old.window_s, max_clients=old.max_clients,\n"
    "                              clock=lambda: float(clock.read_text()))\n"
    "from streamlit.web.cli import main\n"
    "sys.exit(main(prog_name='streamlit'))\n"
)


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


def _submit_passphrase(pg, passphrase: str) -> None:
    pg.locator('input[aria-label="Teacher passphrase"]').fill(passphrase)
    pg.get_by_role("button", name="Sign in").click()


def test_teacher_passphrase_gates_the_app(page_on, launch_streamlit, tmp_path):
    """The form refuses an empty and a wrong passphrase; the right one signs in (and forgets the
    wrong one), and the sign-in survives a reload (on the same page) and a new tab; "Sign out" ends
    it; after 5 wrong passphrases the form says how long to wait, and once the window has passed the
    right one signs in (issues #27 item 2, #34 item 2).  The limiter's clock stands still until the
    test moves it (issue #45 point 3): a wrong passphrase never ages out while the test runs."""
    clock = tmp_path / "signin-clock"
    clock.write_text("0")
    server = launch_streamlit({"AMP_TEACHER_PASSWORD": "correct horse battery", CLOCK_ENV: str(clock)},
                              python_args=("-c", CLOCKED_LIMITER))
    try:
        pg = page_on(server)
        pg.goto(server.url)
        wait_idle(pg)
        expect(pg.get_by_text("Teacher sign-in")).to_be_visible(timeout=60_000)
        expect(pg.locator('[data-testid="stSidebarNav"]')).to_have_count(0)
        expect(pg.get_by_role("button", name="Clear result cache")).to_have_count(0)
        _submit_passphrase(pg, "")
        expect(pg.get_by_text("Type the teacher passphrase first.")).to_be_visible(timeout=30_000)
        expect(pg.get_by_role("button", name="Clear result cache")).to_have_count(0)
        _submit_passphrase(pg, "wrong")
        expect(pg.get_by_text("That is not the teacher passphrase (4 more tries")).to_be_visible(timeout=30_000)
        _submit_passphrase(pg, "correct horse battery")
        expect(pg.get_by_role("button", name="Clear result cache")).to_be_visible(timeout=60_000)
        wait_idle(pg)
        shot(pg, "hostile-teacher-signed-in")
        goto_page(pg, "About & cache", "About")
        about_url = pg.url
        missing: list[str] = []
        pg.on("response", lambda r: r.status == 404 and missing.append(r.url))
        pg.reload()  # F5: still signed in, still on the same page
        wait_idle(pg)
        expect(pg.get_by_role("button", name="Clear result cache")).to_be_visible(timeout=60_000)
        expect(pg.locator("h1").filter(has_text="About").first).to_be_visible()
        expect(pg.get_by_text("Teacher sign-in")).to_have_count(0)
        assert pg.url == about_url
        tab = pg.context.new_page()  # a new tab of the same browser: signed in too
        tab.goto(server.url)
        wait_idle(tab)
        expect(tab.get_by_role("button", name="Clear result cache")).to_be_visible(timeout=60_000)
        tab.close()
        pg.get_by_role("button", name="Sign out").click()
        expect(pg.get_by_text("Teacher sign-in")).to_be_visible(timeout=30_000)
        wait_idle(pg)
        pg.reload()  # the cookie is gone (and its token refused): the form again
        wait_idle(pg)
        expect(pg.get_by_text("Teacher sign-in")).to_be_visible(timeout=60_000)
        expect(pg.get_by_role("button", name="Clear result cache")).to_have_count(0)
        for i in range(5):  # guessing: after 5 wrong ones, even the right passphrase waits
            _submit_passphrase(pg, f"guess {i}")
            expect(pg.get_by_text(f"({4 - i} more tr")).to_be_visible(timeout=30_000)  # the right one reset it
        _submit_passphrase(pg, "correct horse battery")
        expect(pg.get_by_text("Too many wrong passphrases from this computer: wait 60 s")).to_be_visible(timeout=30_000)
        expect(pg.get_by_role("button", name="Clear result cache")).to_have_count(0)
        clock.write_text("60")  # the window of the first of the five has passed: the right one is checked again
        _submit_passphrase(pg, "correct horse battery")
        expect(pg.get_by_role("button", name="Clear result cache")).to_be_visible(timeout=60_000)
        # a reload of a deep link makes Streamlit's frontend probe for its base path (known; see
        # test_browser.goto_page): those 404s, and only those, are not errors of the app
        base = urlparse(about_url).path
        assert all(urlparse(u).path in (f"{base}/_stcore/health", f"{base}/_stcore/host-config") for u in missing), missing
        pg.rec.console_errors[:] = [e for e in pg.rec.console_errors if "status of 404" not in e]
        assert_clean(pg)
    finally:
        server.stop()
