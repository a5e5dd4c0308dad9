"""Real browser: WCAG 2.1 AA on every page (issue #41 point 5), checked by axe-core.

One server (a tiny local model, in a classroom network of the test's own: :func:`conftest.lan_lab`,
so the Class poll page shows its QR code and the teacher signs in) and one Chromium.  axe-core's
WCAG 2.0/2.1 A and AA rules (:mod:`axe`) run on the teacher's sign-in, on each of the app's 11
pages (a poll open, with votes, so the Class poll page shows its link, QR code and charts), on the
student page (before and after a vote) and on the Presentation before and after a reveal: **no
violation of any impact**.  A failure lists every violation: page, rule id, impact, summary, and
each element's selector, HTML and what is wrong with it.

axe does not look inside a plotly chart's SVG: every chart carries a text alternative of its own
(:func:`ui.shared.common.chart`), asserted here on the Class poll page and the Presentation.

Then a student votes with the keyboard alone (Tab, arrow keys, Space, Enter): the vote is recorded.
"""

from __future__ import annotations

from pathlib import Path

from axe import Violation, audit, axe_script, report
from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, shot, wait_idle

PASSPHRASE = "axe-lesson-passphrase"
#: The app's pages (``app.py``'s navigation): the sidebar title and the page's h1 (None: no h1).
PAGES = (
    ("Templates & examples", "Templates & examples"),
    ("Your own sentences", "Your own sentences"),
    ("Prompt builder", "Prompt builder"),
    ("Parse & inspect", "Parse & inspect"),
    ("Ratio sweep (few-shot)", "Ratio sweep (few-shot)"),
    ("Zero-shot", "Zero-shot"),
    ("Research (reproduce)", "Research: reproduced tables and figures"),
    ("Compare models", "Compare two models"),
    ("About & cache", "About AmP Explorer"),
    ("Class poll", "Class poll"),
    ("Presentation", None),
)


def _poll(cache: Path):
    """A poll of two sentences made through the library's store, the first with the model's numbers
    stored (the reveal runs no model) and two votes on it, one per reading; its code and first item."""
    from amp.data import generate as gen
    from amp.teaching.poll import PollItem, PollStore

    pairs = gen.pairs("pp")
    store = PollStore(cache / "polls.sqlite")
    first = PollItem.from_pair(pairs[0], 0.3, "lf1")
    poll = store.create_poll([first, PollItem.from_pair(pairs[1])], "Axe")
    store.submit_vote(poll.code, 0, "a" * 32, 0, 3)
    store.submit_vote(poll.code, 0, "b" * 32, 1, 1)
    return poll.code, first


def _votes_in_words(item, lf0: int, lf1: int) -> str:
    """What the vote chart of ``item`` says in words (its text alternative), readings named with LF0/LF1."""
    return f"Votes: LF0 · {item.reading_name(0)}: {lf0}, LF1 · {item.reading_name(1)}: {lf1}"


def _sign_in(pg: Page, found: list[Violation], script: str) -> None:
    pg.goto(pg.base_url)  # type: ignore[attr-defined]
    wait_idle(pg)
    expect(pg.get_by_text("Teacher sign-in")).to_be_visible(timeout=60_000)
    found += audit(pg, "teacher sign-in", script)
    pg.get_by_label("Teacher passphrase", exact=True).fill(PASSPHRASE)
    pg.get_by_role("button", name="Sign in").click()
    expect(pg.locator("h1").filter(has_text="Templates & examples")).to_be_visible(timeout=60_000)
    wait_idle(pg)


def _open_poll(pg: Page, code: str) -> None:
    goto_page(pg, "Class poll")
    pg.get_by_text("Open an existing poll").click()
    pg.get_by_label("Poll code", exact=True).fill(code)
    pg.locator(".st-key-tp_open button").click()
    expect(pg.get_by_text(f"?poll={code}", exact=False).first).to_be_visible(timeout=60_000)
    expect(pg.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)
    wait_idle(pg)


def _lang(pg: Page) -> str:
    return str(pg.evaluate("document.documentElement.lang"))


def test_every_page_passes_axe_wcag_21_aa(lan_lab, tmp_path) -> None:
    from tiny_models import build_tiny_model

    cache = tmp_path / "cache"
    cache.mkdir()
    model = build_tiny_model(tmp_path / "tiny", seed=0, n_positions=4096)
    code, item = _poll(cache)
    server = lan_lab.start_streamlit({"AMP_TEACHER_PASSWORD": PASSPHRASE, "AMP_MODEL": str(model),
                                      "AMP_CACHE_DIR": str(cache),
                                      "AMP_OWN_SENTENCES": str(tmp_path / "own_sentences.json")})
    script = axe_script()
    found: list[Violation] = []
    teacher = lan_lab.new_page(server.url)
    _sign_in(teacher, found, script)
    _open_poll(teacher, code)  # the poll the Class poll page and the Presentation show
    # text alternatives: the QR code says the link; the vote chart its votes, in words; any other
    # chart (the class against the model) its data, in a "Chart as text" expander
    expect(teacher.get_by_role("img", name=f"QR code of the student link {lan_lab.lan_url(server)}/vote?poll={code}")
           ).to_be_visible()
    expect(teacher.get_by_text(_votes_in_words(item, 1, 1), exact=True).first).to_be_visible()
    expect(teacher.get_by_text("Chart as text").first).to_be_visible()
    for title, heading in PAGES:
        if heading is None:
            teacher.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
            expect(teacher.get_by_role("button", name="Reveal the model's choice")).to_be_visible(timeout=60_000)
            expect(teacher.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)
            wait_idle(teacher)
        else:
            goto_page(teacher, title, heading)
        if title == "Class poll":
            expect(teacher.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)
        teacher.wait_for_timeout(500)  # charts and images finish drawing
        found += audit(teacher, title, script)
    # a student votes (LF1) while the teacher shows the Presentation
    student = lan_lab.new_page(lan_lab.lan_url(server))
    student.goto(f"{lan_lab.lan_url(server)}/?poll={code}")
    wait_idle(student)
    expect(student.locator("h1").filter(has_text="Class poll")).to_be_visible(timeout=60_000)
    expect(student.get_by_role("radio").first).to_be_attached(timeout=30_000)
    found += audit(student, "student page", script)
    student.locator('[role="radiogroup"] label').nth(1).click()
    wait_idle(student)
    student.get_by_role("button", name="Submit").click()
    expect(student.get_by_text("Your answer is in", exact=False).first).to_be_visible(timeout=30_000)
    wait_idle(student)
    found += audit(student, "student page, voted", script)
    shot(student, "axe-student-voted")
    # the Presentation, revealed (the poll's first item: the model's numbers are stored with it)
    teacher.get_by_role("button", name="Reveal the model's choice").click()
    expect(teacher.locator(".amp-wrote")).to_be_visible(timeout=60_000)
    wait_idle(teacher)
    expect(teacher.get_by_text(_votes_in_words(item, 1, 2), exact=True)).to_be_visible(timeout=30_000)
    found += audit(teacher, "Presentation, revealed", script)
    shot(teacher, "axe-present-revealed")
    assert _lang(teacher) == "en"
    assert_clean(teacher)
    # the student's page once the sentence is revealed (locked)
    student.reload()  # a fresh session opens on the first sentence not answered: back to the voted one
    wait_idle(student)
    student.get_by_role("button", name="Previous sentence").click()
    expect(student.get_by_text("revealed", exact=False).first).to_be_visible(timeout=60_000)
    wait_idle(student)
    found += audit(student, "student page, revealed", script)
    shot(student, "axe-student-revealed")
    assert _lang(student) == "en"
    assert_clean(student)

    assert not found, report(found)


#: What has the keyboard focus: its role (or tag), type and accessible text.
_FOCUSED = """() => { const e = document.activeElement;
  return {role: e.getAttribute('role') || e.tagName.toLowerCase(), type: e.type || '',
          text: (e.innerText || e.getAttribute('aria-label') || '').trim()}; }"""


def _tab_to(pg: Page, want, what: str, limit: int = 30) -> None:
    """Press Tab until the focused element is ``want`` (a test on :data:`_FOCUSED`'s record)."""
    seen = []
    for _ in range(limit):
        pg.keyboard.press("Tab")
        focused = pg.evaluate(_FOCUSED)
        if want(focused):
            return
        seen.append(focused)
    raise AssertionError(f"Tab never reached {what}; it went through {seen}")


def test_a_student_votes_with_the_keyboard_alone(page: Page, st_server) -> None:
    """WCAG 2.1.1: Tab to the reading, an arrow key picks the second one, Tab to the confidence
    slider, an arrow key makes it "very", Tab to Submit, Enter: the vote is recorded as chosen."""
    from amp.data import generate as gen
    from amp.teaching.poll import PollItem, PollStore

    store = PollStore(st_server.log.parent / "amp-cache" / "polls.sqlite")
    poll = store.create_poll([PollItem.from_pair(gen.pairs("pp")[0])], "keyboard")
    page.goto(f"{st_server.url}/?poll={poll.code}")
    wait_idle(page)
    expect(page.get_by_role("radio").first).to_be_attached(timeout=60_000)
    page.locator("body").focus()
    _tab_to(page, lambda f: f["type"] == "radio", "a reading")
    page.keyboard.press("ArrowDown")  # the second reading (LF1), chosen as it gets the focus
    expect(page.get_by_role("radio").nth(1)).to_be_checked()
    wait_idle(page)
    _tab_to(page, lambda f: f["role"] == "slider" or f["type"] == "range", "the confidence slider")
    page.keyboard.press("ArrowRight")  # from "somewhat" to "very confident"
    wait_idle(page)
    _tab_to(page, lambda f: f["role"] == "button" and f["text"].split()[-1:] == ["Submit"], "Submit")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Your answer is in", exact=False).first).to_be_visible(timeout=30_000)
    votes = store.votes(poll.code)
    assert [(v.item_index, v.choice, v.confidence) for v in votes] == [(0, 1, 3)], votes
    assert_clean(page)
