"""Real browser: a whole lesson, as a teacher and two students would give it (issue #11).

The app listens on every interface, as in a classroom, but inside a network namespace of this
test's own (:func:`conftest.lan_lab`): its only device is a loopback holding a documentation
address (``192.0.2.10``) that the app finds as its LAN address, so nothing leaves the machine.
The server and the Chromium run in that namespace.

1. The teacher signs in with the passphrase (the app is reachable beyond loopback) and adds
   "I saw her duck" with its two readings on *Your own sentences*.
2. "Parse this sentence" → Parse & inspect parses it with the embedded default model: the
   model's parse in words and the beam table, no error box.
3. The sentence is ticked "In the poll" and a titled poll created; the Class poll page shows the
   student link and its QR code.
4. The QR code (a screenshot of the image, decoded with zxing-cpp) is that link, on the LAN
   address — not loopback — although the teacher opened the app as ``127.0.0.1``.
5. Two students (two browser contexts) open the decoded URL (the light vote page, /vote) and vote; a reload keeps the voter
   (its cookie for the poll) and cannot vote again; the teacher sees 2 votes live.
6. The Presentation (of the open poll: the duck) at 1280×720 with the sidebar collapsed: its
   readings under the teacher's names, controls below the header and reachable, the class's 2
   votes, and Reveal says what the model wrote (a reading's paraphrase, or "neither reading")
   and then which reading it scores higher, in words.

Every page: no console error, no page error, no request off loopback and the namespace's address.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

from playwright.sync_api import Page, expect
from test_browser import PARSE_TIMEOUT, assert_clean, goto_page, shot, wait_idle
from test_present_browser import _GEOMETRY, _set_sidebar

PASSPHRASE = "duck-lesson-passphrase"
DUCK = "I saw her duck"
DUCK0 = "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)"
DUCK1 = "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"
NAMES = ("she ducked", "her bird")
PARAPHRASES = ("I saw her lower her head", "I saw the duck that she owns")
TITLE = "Ducks"
ERRORS = '[data-testid="stAlertContentError"], [data-testid="stException"]'
PRESENT_CONTROLS = ("Previous", "Next", "Reveal the model's choice", "Full screen")


def _no_error_box(pg: Page) -> None:
    boxes = pg.locator(ERRORS)
    assert boxes.count() == 0, f"error box(es) on the page: {boxes.all_inner_texts()}"


def _type(pg: Page, label: str, text: str) -> None:
    """Type into a text input or area as a person does, and leave it (Streamlit takes the value on blur)."""
    box = pg.get_by_label(label, exact=True)
    box.click()
    box.fill(text)
    box.press("Tab")
    wait_idle(pg)


def _sign_in(pg: Page) -> None:
    pg.goto(pg.base_url)  # type: ignore[attr-defined]
    wait_idle(pg)
    expect(pg.get_by_text("Teacher sign-in")).to_be_visible(timeout=60_000)
    expect(pg.locator('[data-testid="stSidebarNav"]')).to_have_count(0)  # nothing before the passphrase
    pg.get_by_label("Teacher passphrase", exact=True).fill(PASSPHRASE)
    pg.get_by_role("button", name="Sign in").click()
    expect(pg.locator("h1").filter(has_text="Templates & examples")).to_be_visible(timeout=60_000)
    wait_idle(pg)


def _add_the_duck(pg: Page) -> None:
    goto_page(pg, "Your own sentences")
    _type(pg, "Your ambiguous sentence", DUCK)
    for i in (0, 1):
        _type(pg, f"Reading {i} name (optional)", NAMES[i])
        _type(pg, f"Reading {i} in words", PARAPHRASES[i])
        _type(pg, f"LF{i} (FOL)", (DUCK0, DUCK1)[i])
    pg.get_by_role("button", name="Save to my library").click()
    expect(pg.get_by_text(f"Saved “{DUCK}”")).to_be_visible(timeout=30_000)
    wait_idle(pg)
    expect(pg.get_by_text("duck (one place)").first).to_be_visible()
    expect(pg.locator("h2").filter(has_text="Your library (1)")).to_be_visible()
    _no_error_box(pg)
    shot(pg, "lesson-own-sentence")


def _parse(pg: Page) -> None:
    pg.get_by_role("button", name="Parse this sentence").click()
    expect(pg.locator("h1").filter(has_text="Parse & inspect")).to_be_visible(timeout=60_000)
    expect(pg.get_by_text(f"Test sentence: {DUCK}")).to_be_visible(timeout=30_000)
    wait_idle(pg)
    pg.get_by_role("button", name="Parse", exact=True).click()
    expect(pg.locator("h3").filter(has_text="Beams")).to_be_visible(timeout=PARSE_TIMEOUT)
    wait_idle(pg, PARSE_TIMEOUT)
    expect(pg.get_by_text("Top beam matches")).to_be_visible()
    expect(pg.get_by_text("The model's parse in words:")).to_be_visible()
    expect(pg.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    _no_error_box(pg)
    shot(pg, "lesson-parse")


def _create_poll(pg: Page) -> str:
    """Tick the sentence for the poll, title it, create it: the Class poll page; its student link."""
    goto_page(pg, "Your own sentences")
    pg.locator('[data-testid="stCheckbox"] label').filter(has_text="In the poll").click()
    expect(pg.get_by_role("checkbox", name="In the poll")).to_be_checked()
    wait_idle(pg)
    _type(pg, "Poll title", TITLE)
    pg.get_by_role("button", name="Create a class poll (1 sentences)").click()
    expect(pg.locator("h1").filter(has_text="Class poll")).to_be_visible(timeout=60_000)
    wait_idle(pg)
    link = pg.get_by_text(re.compile(r"^http://\S+/vote\?poll=[A-Z2-9]{6}$"))
    expect(link).to_be_visible(timeout=30_000)
    expect(pg.get_by_text(f"{TITLE} · 1 item(s) · open")).to_be_visible()
    expect(pg.locator('[data-testid="stMetricValue"]').first).to_have_text("0", timeout=30_000)
    _no_error_box(pg)
    return link.inner_text().strip()


def _qr_url(pg: Page, tmp_path) -> str:
    """The URL in the poll page's QR code: a screenshot of the image, decoded by zxing-cpp."""
    import zxingcpp
    from PIL import Image

    image = pg.locator('[data-testid="stImage"]').filter(has_text="Scan to join").locator("img")
    expect(image).to_be_visible()
    image.scroll_into_view_if_needed()
    path = tmp_path / "qr.png"
    image.screenshot(path=str(path))
    found = zxingcpp.read_barcodes(Image.open(path))
    assert len(found) == 1, f"{len(found)} codes decoded from the QR image"
    assert found[0].format == zxingcpp.BarcodeFormat.QRCode
    return found[0].text


def _student(lab, url: str, reading: int, *, reload: bool) -> None:
    """A student's phone (its own browser context) opens the link (the light vote page), picks a
    reading, says how sure, submits; with ``reload``, a reload keeps the voter (its cookie) and shows
    its vote, not the form."""
    pg = lab.new_page(url, viewport={"width": 420, "height": 860})
    try:
        pg.goto(url)
        expect(pg.locator("h1")).to_have_text("Class poll", timeout=60_000)
        expect(pg.locator('[data-testid="stSidebarNav"]')).to_have_count(0)  # no teacher pages
        expect(pg.get_by_text(TITLE, exact=True).first).to_be_visible()
        expect(pg.locator("h2").filter(has_text=DUCK)).to_be_visible()
        pg.get_by_label(PARAPHRASES[reading], exact=True).check()
        expect(pg.get_by_role("radio").nth(reading)).to_be_checked()
        pg.get_by_label("very confident", exact=True).check()  # "How confident are you?": the top
        pg.get_by_role("button", name="Submit").click()
        expect(pg.get_by_text("Thanks! Your answer is in.", exact=False)).to_be_visible(timeout=30_000)
        shot(pg, f"lesson-student-{reading}")
        assert "voter=" not in pg.url  # the voter id is the browser's cookie for this poll
        assert urlparse(pg.url).hostname == lab.address
        if reload:  # a new page load with the same cookie: the phone's vote, not a second form
            pg.reload()
            expect(pg.locator("h1")).to_have_text("Class poll", timeout=60_000)
            expect(pg.get_by_text(f"your answer: “{PARAPHRASES[reading]}”, very confident", exact=False)).to_be_visible(
                timeout=30_000)  # issue #41 point 3: read from the store under the cookie
            expect(pg.get_by_role("button", name="Submit")).to_have_count(0)
            shot(pg, "lesson-student-reload")
        expect(pg.locator(".box.error")).to_have_count(0)
        assert_clean(pg)
    finally:
        pg.context.close()


def _present(pg: Page) -> None:
    """From the poll page's "Present this sentence": the Presentation of that item of the open
    poll, with the class's votes, at 1280×720, sidebar collapsed; Reveal in words."""
    route = pg.get_by_role("button", name="Present this sentence")
    route.scroll_into_view_if_needed()
    route.click()
    reveal = pg.get_by_role("button", name="Reveal the model's choice")
    expect(reveal).to_be_visible(timeout=60_000)
    wait_idle(pg)
    pg.set_viewport_size({"width": 1280, "height": 720})
    pg.wait_for_timeout(300)
    _set_sidebar(pg, False)
    pg.evaluate("window.scrollTo(0, 0)")
    expect(pg.get_by_text(f"“{DUCK}”")).to_be_visible()
    expect(pg.get_by_label("Poll code (optional)")).to_have_value(re.compile(r"^[A-Z2-9]{6}$"))
    for i in (0, 1):  # the readings under the names the teacher gave them, in words
        expect(pg.get_by_text(f"LF{i} · {NAMES[i]}: {PARAPHRASES[i]}")).to_be_visible()
    expect(pg.get_by_text("Class: 2 vote(s)")).to_be_visible(timeout=30_000)
    problems = []
    for name in PRESENT_CONTROLS:
        g = pg.get_by_role("button", name=name, exact=True).evaluate(_GEOMETRY)
        if g["top"] < g["headerBottom"] - 0.5:
            problems.append(f"{name!r}: under the header (top {g['top']:.0f} < {g['headerBottom']:.0f})")
        if not g["reachable"]:
            problems.append(f"{name!r}: covered by another element")
        if g["cut"]:
            problems.append(f"{name!r}: label cut off")
    assert problems == []
    reveal.click()
    said = pg.locator(".amp-wrote")
    expect(said).to_be_visible(timeout=PARSE_TIMEOUT)
    wait_idle(pg, PARSE_TIMEOUT)
    wrote = said.inner_text().strip()  # issue #26 point 5: what it wrote, then what it scores
    assert wrote in {f"The model wrote LF{i} ({NAMES[i]}): “{PARAPHRASES[i]}”." for i in (0, 1)} or \
        wrote.startswith("The model wrote neither reading"), wrote
    assert re.match(r"^Forced to write each reading, it (scores LF[01] \(.+\) higher|is undecided)",
                    pg.locator(".amp-scores").inner_text().strip())
    expect(pg.get_by_text("Model P(LF0)")).to_be_visible()
    _no_error_box(pg)
    shot(pg, "lesson-present-1280x720-collapsed")


def test_a_whole_lesson_over_the_lan(lan_lab, tmp_path) -> None:
    server = lan_lab.start_streamlit({"AMP_TEACHER_PASSWORD": PASSPHRASE,
                                      "AMP_OWN_SENTENCES": str(tmp_path / "own_sentences.json")})
    teacher = lan_lab.new_page(server.url)  # the teacher's laptop opens it as 127.0.0.1
    _sign_in(teacher)
    _add_the_duck(teacher)
    _parse(teacher)

    link = _create_poll(teacher)
    url = _qr_url(teacher, tmp_path)
    shot(teacher, "lesson-poll")
    assert url == link, f"the QR code says {url!r}, the page {link!r}"
    parsed = urlparse(url)
    assert parsed.hostname == lan_lab.address, f"the student link is not on the LAN address: {url}"
    assert (parsed.port, parsed.path) == (urlparse(server.url).port, "/vote")  # the light vote page
    assert re.fullmatch(r"poll=[A-Z2-9]{6}", parsed.query)

    _student(lan_lab, url, 0, reload=True)
    _student(lan_lab, url, 1, reload=False)
    # the teacher's results refresh by themselves every second
    expect(teacher.locator('[data-testid="stMetricValue"]').first).to_have_text("2", timeout=30_000)
    expect(teacher.get_by_text("1. I saw her duck · 2 vote(s)")).to_be_visible()
    shot(teacher, "lesson-poll-2-votes")
    _no_error_box(teacher)

    _present(teacher)
    assert_clean(teacher)
