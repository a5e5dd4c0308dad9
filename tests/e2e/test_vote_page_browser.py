"""Real browser: the light vote page a student's link opens (``/vote?poll=CODE``, issue #41).

The app as ``bash run.sh app`` starts it (``streamlit run asgi.py``: Streamlit's server with the vote
routes beside it) and one Chromium phone (390 × 800).  A poll of two sentences whose title and
readings hold markup: shown as text.  axe-core finds no WCAG 2.0/2.1 A or AA violation before and
after a vote.  The phone votes with the keyboard alone; a reload keeps its voter (the cookie) and
opens the next sentence; it answers that one, reviews, changes its first answer (the store keeps
one vote, the latest); the teacher reveals the first sentence and the open page says it is
locked without a reload.  No console error, no request off the machine.
"""

from __future__ import annotations

from axe import audit, axe_script, report
from playwright.sync_api import Page, expect
from test_accessibility_browser import _tab_to
from test_browser import assert_clean, shot

from amp.teaching.poll import PollItem, PollStore

ITEMS = [PollItem(surface="I saw her duck.", type="pp", lf0="a # 0", lf1="b # 0",
                  paraphrase0="I saw the duck that belongs to her", paraphrase1="I saw her <b>lower</b> her head"),
         PollItem(surface="Every student read a book.", type="scope", lf0="a # 1", lf1="b # 1",
                  paraphrase0="each read some book", paraphrase1="one book that all of them read")]
TITLE = "<i>Week 3</i> & ambiguity"
LOCKED = "Your teacher has revealed this sentence's answer, so its answers are locked."


def test_a_phone_votes_on_the_light_page_by_keyboard_changes_it_and_sees_the_reveal(page: Page, st_server) -> None:
    store = PollStore(st_server.log.parent / "amp-cache" / "polls.sqlite")
    code = store.create_poll(ITEMS, TITLE).code
    script = axe_script()
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{st_server.url}/vote?poll={code}")
    expect(page.locator("h1")).to_have_text("Class poll", timeout=30_000)
    expect(page.get_by_text(TITLE, exact=True)).to_be_visible()  # markup shown as text, not read as markup
    expect(page.locator("h2")).to_have_text("I saw her duck.")
    expect(page.get_by_text("Sentence 1 of 2")).to_be_visible()
    expect(page.get_by_label("I saw her <b>lower</b> her head")).to_be_attached()
    assert page.locator("#main b, #main i").count() == 0
    found = audit(page, "vote page, the form", script)

    page.locator("body").focus()
    _tab_to(page, lambda f: f["type"] == "radio", "a reading")
    page.keyboard.press("ArrowDown")  # the second reading (LF1), chosen as it gets the focus
    expect(page.get_by_label("I saw her <b>lower</b> her head")).to_be_checked()
    _tab_to(page, lambda f: f["type"] == "radio", "the confidence (the next group's checked radio)", limit=1)
    page.keyboard.press("ArrowDown")  # from "somewhat" (checked) to "very confident"
    expect(page.get_by_label("very confident")).to_be_checked()
    _tab_to(page, lambda f: f["role"] == "button" and f["text"] == "Submit", "Submit", limit=1)
    page.keyboard.press("Enter")
    expect(page.get_by_text("Thanks! Your answer is in. Your answer: “I saw her <b>lower</b> her head”, very "
                            "confident. You can change it until your teacher reveals this sentence.")).to_be_visible()
    voter = {v.voter_id for v in store.votes(code)}
    assert [(v.item_index, v.choice, v.confidence) for v in store.votes(code)] == [(0, 1, 3)]
    found += audit(page, "vote page, after a vote", script)
    assert not found, report(found)
    shot(page, "vote-page-voted")

    page.reload()  # the same browser: the same voter, at the sentence it has not answered
    expect(page.get_by_text("Sentence 2 of 2")).to_be_visible(timeout=30_000)
    page.get_by_label("each read some book").check()
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_text("Thanks! Your answer is in.", exact=False)).to_be_visible()
    page.get_by_role("button", name="Finish").click()
    expect(page.get_by_text("All done — thank you for taking part!", exact=False)).to_be_visible()
    expect(page.get_by_text("“I saw her duck.” — your answer: “I saw her <b>lower</b> her head”, very confident")
           ).to_be_visible()
    page.get_by_role("button", name="Review my answers").click()
    expect(page.get_by_text("Your answer: “I saw her <b>lower</b> her head”, very confident.", exact=False)
           ).to_be_visible()
    page.get_by_role("button", name="Change my answer").click()
    page.get_by_label("I saw the duck that belongs to her").check()
    page.get_by_label("not confident").check()
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_text("Changed to “I saw the duck that belongs to her”, not confident.")).to_be_visible()
    votes = sorted((v.item_index, v.voter_id, v.choice, v.confidence) for v in store.votes(code))
    (only,) = voter
    assert votes == [(0, only, 0, 1), (1, only, 0, 2)]  # one vote per sentence, the latest answer

    store.reveal_item(code, 0)  # the teacher's Reveal: the open page learns of it by itself
    expect(page.get_by_text(f"Your answer: “I saw the duck that belongs to her”, not confident. {LOCKED}")
           ).to_be_visible(timeout=25_000)
    expect(page.get_by_role("button", name="Change my answer")).to_have_count(0)
    shot(page, "vote-page-revealed")
    assert_clean(page)


def test_an_unknown_code_says_so_in_words(page: Page, st_server) -> None:
    page.goto(f"{st_server.url}/vote?poll=%3Cb%3ENOPE%3C%2Fb%3E")
    expect(page.get_by_text("There is no poll with the code <b>NOPE</b>. Check the link or ask your teacher "
                            "for the code.")).to_be_visible(timeout=30_000)
    assert page.locator("#main b").count() == 0
    rec = page.rec  # type: ignore[attr-defined]
    assert not rec.page_errors and not rec.external()
