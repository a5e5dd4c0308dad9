"""Real browser (issue #41 points 3 and 4): a phone that voted sees its vote after a reload and in a
new tab (read from the store under its cookie), changes it before the reveal (the tally counts it
once), is refused after the teacher's Reveal on the Presentation, and the teacher's per-voter CSV
is the votes cast.  The poll's items carry the model's numbers, so nothing loads a model.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace

from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, shot, wait_idle

OTHER_PHONE = "b" * 32


def _tab(context, rec_cls) -> Page:
    """A new tab of the same phone (browser context), recorded like the fixture's pages."""
    pg = context.new_page()
    rec = rec_cls()
    pg.on("console", lambda m: m.type == "error" and rec.console_errors.append(m.text))
    pg.on("pageerror", lambda e: rec.page_errors.append(str(e)))
    pg.on("request", lambda r: rec.requests.append(r.url))
    pg.rec = rec  # type: ignore[attr-defined]
    return pg


def _open(pg: Page, url: str, surface: str) -> None:
    pg.goto(url)
    wait_idle(pg)
    expect(pg.locator("h1").filter(has_text="Class poll")).to_be_visible(timeout=60_000)
    expect(pg.locator("h2").filter(has_text=surface)).to_be_visible(timeout=30_000)


def _pick(pg: Page, reading: int) -> None:
    pg.locator('[role="radiogroup"] label').nth(reading).click()
    expect(pg.get_by_role("radio").nth(reading)).to_be_checked()
    wait_idle(pg)


def _shows_vote(pg: Page, paraphrase: str) -> None:
    """The phone's vote on the first sentence, not the form with Submit active."""
    pg.get_by_role("button", name="Previous sentence").click()
    expect(pg.get_by_text(f"Your answer: “{paraphrase}”, somewhat confident.")).to_be_visible(timeout=30_000)
    expect(pg.get_by_role("button", name="Submit")).to_have_count(0)
    expect(pg.get_by_role("radio")).to_have_count(0)


def test_a_phone_sees_changes_and_is_locked_out_of_its_vote(page_on, launch_streamlit, tmp_path):
    from amp.data import generate as gen
    from amp.teaching.poll import PollItem, PollStore, anonymous_voter

    cache = tmp_path / "cache"
    cache.mkdir()
    store = PollStore(cache / "polls.sqlite")
    items = [replace(PollItem.from_pair(p, 0.8), model_match="lf0") for p in gen.pairs("pp")[:2]]
    poll = store.create_poll(items, "change until the reveal")
    code = poll.code
    store.answer(code, 0, OTHER_PHONE, 0, 2)  # another phone
    p0, p1 = items[0].paraphrase0, items[0].paraphrase1
    server = launch_streamlit({"AMP_CACHE_DIR": str(cache)})
    try:
        phone = page_on(server)
        _open(phone, f"{server.url}/?poll={code}", items[0].surface)
        _pick(phone, 0)
        phone.get_by_role("button", name="Submit").click()
        expect(phone.get_by_text("Thanks! Your answer is in.")).to_be_visible(timeout=30_000)
        expect(phone.locator('[data-testid="stAlert"]')).to_have_count(1)  # one message at a time
        cookies = {c["name"]: c["value"] for c in phone.context.cookies()}
        me = cookies[f"amp_voter_{code}"]
        assert [(v.voter_id, v.choice) for v in store.votes(code)] == [(OTHER_PHONE, 0), (me, 0)]

        # a reload: a new session with the same cookie starts at the sentence not answered, and the
        # first shows the vote
        phone.reload()
        _open(phone, phone.url, items[1].surface)
        _shows_vote(phone, p0)
        tab = _tab(phone.context, type(phone.rec))  # a new tab of the same phone
        _open(tab, f"{server.url}/?poll={code}", items[1].surface)
        _shows_vote(tab, p0)
        assert_clean(tab)
        tab.close()

        # a change before the reveal: confirmed to the phone, counted once
        phone.get_by_role("button", name="Change my answer").click()
        _pick(phone, 1)
        phone.get_by_role("button", name="Submit").click()
        expect(phone.get_by_text(f"Changed to “{p1}”, somewhat confident.")).to_be_visible(timeout=30_000)
        expect(phone.locator('[data-testid="stAlert"]')).to_have_count(1)
        assert [(v.voter_id, v.choice) for v in store.votes(code)] == [(OTHER_PHONE, 0), (me, 1)]
        assert store.results(code).items[0].counts == (1, 1)
        shot(phone, "vote-changed")

        # the form open again when the teacher reveals the sentence on the Presentation
        phone.get_by_role("button", name="Change my answer").click()
        _pick(phone, 0)
        teacher = page_on(server)
        teacher.goto(server.url)
        wait_idle(teacher)
        teacher.locator('[data-testid="stSidebarNav"]').get_by_text("Presentation", exact=True).click()
        box = teacher.get_by_label("Poll code (optional)")
        expect(box).to_be_visible(timeout=60_000)
        wait_idle(teacher)
        box.fill(code)
        box.press("Enter")
        wait_idle(teacher)
        expect(teacher.get_by_text(re.compile(rf"poll {code}"))).to_be_visible(timeout=30_000)
        teacher.get_by_role("button", name="Reveal the model's choice").click()
        expect(teacher.get_by_text("Model P(LF0)")).to_be_visible(timeout=60_000)
        wait_idle(teacher)
        assert store.revealed_items(code) == frozenset({0})

        phone.get_by_role("button", name="Submit").click()  # refused: the vote stays
        expect(phone.get_by_text(f"Not recorded: Your teacher has revealed this sentence's answer, so its answers "
                                 f"are locked. Your answer stays “{p1}”, somewhat confident.")).to_be_visible(
            timeout=30_000)
        expect(phone.locator('[data-testid="stAlert"]')).to_have_count(1)
        expect(phone.get_by_role("button", name="Change my answer")).to_have_count(0)
        assert [(v.voter_id, v.choice) for v in store.votes(code)] == [(OTHER_PHONE, 0), (me, 1)]
        shot(phone, "vote-locked")
        assert_clean(phone)

        # the teacher's per-voter CSV is the votes cast
        goto_page(teacher, "Class poll")
        teacher.get_by_text("Open an existing poll").click()
        teacher.get_by_label("Poll code").fill(code)
        teacher.locator(".st-key-tp_open button").click()
        button = teacher.get_by_role("button", name="Per voter (CSV)")
        expect(button).to_be_visible(timeout=60_000)
        wait_idle(teacher)
        with teacher.expect_download() as got:
            button.click()
        rows = list(csv.DictReader(io.StringIO(got.value.path().read_text(encoding="utf-8"))))
        cast = {(anonymous_voter(code, v.voter_id), str(v.item_index)): (str(v.choice), str(v.confidence),
                                                                         v.created, v.updated)
                for v in store.votes(code)}
        assert {(r["voter"], r["item"]): (r["choice"], r["confidence"], r["first_answer"], r["last_answer"])
                for r in rows} == cast
        assert len(rows) == 2 and me not in got.value.path().read_text(encoding="utf-8")  # a pseudonym
        mine = next(r for r in rows if r["voter"] == anonymous_voter(code, me))
        assert mine["choice"] == "1" and mine["last_answer"] > mine["first_answer"]
        assert_clean(teacher)
    finally:
        server.stop()
