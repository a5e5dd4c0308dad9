"""Real browser: a teacher creates a class poll, two students (two browser contexts) vote, and the
teacher's live results show both votes; a second tab in one phone and a student's reload are the
same voter (the browser's cookie for the poll), shown its vote, and cannot vote again: 2 votes, not 3.  No console errors, no request off the loopback interface.

The poll is created in the teacher UI without the model's P(LF0) (the server runs the 270M model;
scoring is covered by the AppTest suite), so this test never loads model weights.
"""

from __future__ import annotations

import re
from dataclasses import replace

from playwright.sync_api import expect
from test_browser import assert_clean, goto_page, shot, wait_idle


def _recorded(context, rec):
    pg = context.new_page()
    pg.on("console", lambda m: m.type == "error" and rec.console_errors.append(m.text))
    pg.on("pageerror", lambda e: rec.page_errors.append(str(e)))
    pg.on("request", lambda r: rec.requests.append(r.url))
    pg.rec = rec
    return pg


def _open_poll(pg, base_url: str, code: str) -> None:
    pg.goto(f"{base_url}/?poll={code}")
    wait_idle(pg)
    expect(pg.locator("h1").filter(has_text="Class poll")).to_be_visible(timeout=60_000)
    expect(pg.locator('[data-testid="stSidebarNav"]')).to_have_count(0)


def _submit(pg, reading: int) -> None:
    pg.locator('[role="radiogroup"] label').nth(reading).click()
    expect(pg.get_by_role("radio").nth(reading)).to_be_checked()
    wait_idle(pg)
    pg.get_by_role("button", name="Submit").click()


def _vote(browser, base_url: str, code: str, reading: int, recorder_cls) -> None:
    """One phone (a browser context of its own) votes; then, in the same phone, a second tab on
    the plain link (no ``&voter=``) and a reload are the same voter: their vote is refused."""
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        pg = _recorded(context, recorder_cls())
        _open_poll(pg, base_url, code)
        _submit(pg, reading)
        expect(pg.get_by_text("Thanks! Your answer is in.")).to_be_visible(timeout=30_000)
        wait_idle(pg)
        shot(pg, f"poll-student-{reading}")
        assert "voter=" not in pg.url  # the identity is the browser's cookie, not the link
        cookies = {c["name"]: c["value"] for c in context.cookies()}
        assert re.fullmatch(r"[0-9a-f]{32}", cookies.get(f"amp_voter_{code}", "")), cookies
        # a second tab in the same phone, opened on the link without any voter id: the same voter,
        # shown its vote (issue #41 point 3), not a form for a second one
        tab = _recorded(context, recorder_cls())
        _open_poll(tab, base_url, code)
        expect(tab.get_by_text(re.compile("your answer: “"))).to_be_visible(timeout=30_000)
        expect(tab.get_by_role("button", name="Submit")).to_have_count(0)
        assert_clean(tab)
        tab.close()
        # a reload is a new session with the same cookie: the same vote, no second one either
        pg.reload()
        _open_poll(pg, base_url, code)
        expect(pg.get_by_text(re.compile("your answer: “"))).to_be_visible(timeout=30_000)
        expect(pg.get_by_role("button", name="Submit")).to_have_count(0)
        assert_clean(pg)
    finally:
        context.close()


def test_two_students_vote_teacher_sees_live(page, browser, st_server):
    Recorder = type(page.rec)  # the page fixture's recorder class

    page.goto(st_server.url)
    wait_idle(page)
    goto_page(page, "Class poll")
    page.get_by_text("Include the model's parse and P(LF0)").click()  # uncheck: no model load in this test
    wait_idle(page)
    page.get_by_role("button", name="Create poll").click()
    link = page.get_by_text(re.compile(r"\?poll=[A-Z2-9]{6}"))
    expect(link).to_be_visible(timeout=60_000)
    code = re.search(r"\?poll=([A-Z2-9]{6})", link.inner_text()).group(1)
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("0", timeout=30_000)

    _vote(browser, st_server.url, code, 0, Recorder)
    _vote(browser, st_server.url, code, 1, Recorder)

    # the teacher's fragment refreshes every second: no reload, no click
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("2", timeout=30_000)
    page.wait_for_timeout(2500)  # one more refresh of the live results: still 2, not 3
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("2")
    shot(page, "poll-teacher")
    assert_clean(page)


def test_markup_in_reading_names_is_plain_text_in_the_charts(page_on, launch_streamlit, tmp_path):
    """Issue #27 item 3: a teacher's reading names ``<a href=…>`` and ``<b>`` are shown as typed
    in the poll chart and the Presentation chart: no link, no bold, nothing fetched."""
    from amp.data import generate as gen
    from amp.teaching.poll import PollItem, PollStore

    cache = tmp_path / "cache"
    cache.mkdir()
    link, bold = '<a href="http://evil.example/x">evil link</a>', "<b>bold name</b>"
    item = PollItem.from_pair(gen.pairs("pp")[0], 0.6)
    item = replace(item, name0=link, name1=bold)
    store = PollStore(cache / "polls.sqlite")
    poll = store.create_poll([item], "markup")
    store.submit_vote(poll.code, 0, "s1", 0, 3)
    store.submit_vote(poll.code, 0, "s2", 1, 2)
    server = launch_streamlit({"AMP_CACHE_DIR": str(cache)})
    try:
        pg = page_on(server)
        pg.goto(server.url)
        wait_idle(pg)
        goto_page(pg, "Class poll")
        pg.get_by_text("Open an existing poll").click()
        pg.get_by_label("Poll code").fill(poll.code)
        pg.locator(".st-key-tp_open button").click()
        chart = pg.locator(".js-plotly-plot").first
        expect(chart).to_be_visible(timeout=60_000)
        expect(chart.get_by_text("evil", exact=False).first).to_be_attached(timeout=30_000)
        texts = "".join("".join(chart.locator("text").all_text_contents()).split())
        # the characters typed, as text (a long name wraps at its spaces: compared without them)
        assert "".join(link.split()) in texts and "".join(bold.split()) in texts, texts
        assert pg.locator('a[href*="evil.example"]').count() == 0
        assert chart.locator("a").count() == 0 and chart.locator('[style*="bold"]').count() == 0
        shot(pg, "poll-chart-markup")
        pg.locator('[data-testid="stSidebarNav"]').get_by_text("Presentation", exact=True).click()
        expect(pg.get_by_label("Poll code (optional)")).to_be_visible(timeout=60_000)
        wait_idle(pg)
        pg.get_by_label("Poll code (optional)").fill(poll.code)
        pg.get_by_label("Poll code (optional)").press("Enter")
        wait_idle(pg)
        chart = pg.locator(".js-plotly-plot").first
        expect(chart).to_be_visible(timeout=60_000)
        texts = "".join("".join(chart.locator("text").all_text_contents()).split())
        assert "".join(link.split()) in texts and "".join(bold.split()) in texts, texts
        assert pg.locator('a[href*="evil.example"]').count() == 0 and chart.locator("a").count() == 0
        shot(pg, "present-chart-markup")
        assert_clean(pg)
    finally:
        server.stop()


def test_a_reload_mid_poll_keeps_the_poll_the_slide_and_the_votes(page_on, launch_streamlit, tmp_path):
    """Issue #40 point 6: the lesson survives the projector.  Signing in from a bookmark of
    ``/teach_poll?code=…`` lands on that poll (not on Templates); F5 on Class poll keeps the open
    poll and shows the votes cast meanwhile; on the Presentation, in full screen (no sidebar to
    retype a code in), F5 keeps the poll, the slide and its votes — twice, after a Next."""
    from urllib.parse import parse_qs, urlparse

    from amp.data import generate as gen
    from amp.teaching.poll import PollItem, PollStore

    cache = tmp_path / "cache"
    cache.mkdir()
    store = PollStore(cache / "polls.sqlite")
    poll = store.create_poll([PollItem.from_pair(p) for p in gen.pairs("pp")[:3]], "reload")
    store.submit_vote(poll.code, 1, "a" * 32, 0, 2)
    store.submit_vote(poll.code, 1, "b" * 32, 1, 3)
    server = launch_streamlit({"AMP_CACHE_DIR": str(cache), "AMP_TEACHER_PASSWORD": "correct horse battery"})
    try:
        pg = page_on(server)
        missing: list[str] = []
        pg.on("response", lambda r: r.status == 404 and missing.append(r.url))

        def query() -> dict[str, list[str]]:
            return parse_qs(urlparse(pg.url).query)

        def slide(text: str) -> None:
            expect(pg.get_by_text(re.compile(rf"^{re.escape(text)} · .* · poll {poll.code}$"))).to_be_visible(
                timeout=60_000)

        pg.goto(f"{server.url}/teach_poll?code={poll.code.lower()}")  # a bookmark, before signing in
        wait_idle(pg)
        expect(pg.get_by_text("Teacher sign-in")).to_be_visible(timeout=60_000)
        pg.get_by_label("Teacher passphrase", exact=True).fill("correct horse battery")
        pg.get_by_role("button", name="Sign in").click()
        expect(pg.locator("h1").filter(has_text="Class poll")).to_be_visible(timeout=60_000)
        expect(pg.get_by_text(f"?poll={poll.code}", exact=False).first).to_be_visible(timeout=30_000)
        expect(pg.locator('[data-testid="stMetricValue"]').first).to_have_text("2", timeout=30_000)
        assert urlparse(pg.url).path.endswith("/teach_poll") and query()["code"] == [poll.code]

        store.submit_vote(poll.code, 2, "a" * 32, 1, 1)  # a phone votes; then the teacher's laptop reloads
        pg.reload()
        wait_idle(pg)
        expect(pg.locator("h1").filter(has_text="Class poll")).to_be_visible(timeout=60_000)
        expect(pg.locator('[data-testid="stMetricValue"]').first).to_have_text("3", timeout=30_000)
        assert query()["code"] == [poll.code]
        shot(pg, "poll-reload-class-poll")

        pg.locator('[data-testid="stSidebarNav"]').get_by_text("Presentation", exact=True).click()
        slide("1 / 3")  # the Presentation of the open poll
        wait_idle(pg)
        pg.get_by_role("button", name="Next").click()
        slide("2 / 3")
        pg.get_by_role("button", name="Full screen").click()
        expect(pg.get_by_role("button", name="Exit full screen")).to_be_visible(timeout=30_000)
        wait_idle(pg)
        assert query() == {"code": [poll.code], "slide": ["2"], "full": ["1"]}, pg.url
        for shown, votes in (("2 / 3", 2), ("3 / 3", 1)):
            if shown == "3 / 3":
                pg.get_by_role("button", name="Next").click()
                slide(shown)
                wait_idle(pg)
            pg.reload()  # the projector's laptop wakes up
            wait_idle(pg)
            slide(shown)
            expect(pg.get_by_text(f"Class: {votes} vote(s)", exact=False)).to_be_visible(timeout=60_000)
            expect(pg.get_by_role("button", name="Exit full screen")).to_be_visible()
            expect(pg.locator('[data-testid="stSidebar"]')).to_be_hidden()  # nothing was retyped
            shot(pg, f"poll-reload-present-{shown[0]}")
        # a reload of a deep link makes Streamlit's frontend probe for its base path (known; see
        # test_browser.goto_page): those 404s, and only those, are not errors of the app
        assert all(urlparse(u).path.endswith(("/_stcore/health", "/_stcore/host-config")) for u in missing), missing
        pg.rec.console_errors[:] = [e for e in pg.rec.console_errors if "status of 404" not in e]
        assert_clean(pg)
    finally:
        server.stop()
