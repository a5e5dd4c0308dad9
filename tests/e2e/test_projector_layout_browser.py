"""Real browser: the Presentation and the Class poll on a projector (issue #27 item 4).

Two polls of two items (the model's P(LF0) stored with them, so no model loads) and votes: one
with the reading names :data:`NAMES`, one with :data:`LONG_NAMES`.

* At 1280×720, 1600×900 and 1920×1080, sidebar open and collapsed: no button label and no
  metric label is cut (``scrollWidth <= clientWidth`` for the label and everything in it), and
  the vote chart and the class tally end inside the window's width.
* Type and chart scale with the window: the sentence's type and the chart are larger at
  1920×1080 than at 1280×720.
* Full screen at 1280×720 and 1920×1080: the chart and the tally are on the screen without
  scrolling.
* The Class poll page at 1280 px with the sidebar open: no button or metric label cut.
* The vote chart (150 votes on the first sentence, a long reading name; issue #40 point 7) at
  1280×720 and 1920×1080, sidebar open, collapsed and full screen: its vote ticks are integers from
  0 to at least the largest count and their labels do not overlap, and the reading names stand
  horizontal and whole (every character of each name, inside the chart).
* Reading names of 40 characters (issue #44 point 5; one of them a single word, which shrank the
  plot area to 64 px and cut its label): at 1280×720 and 1920×1080, sidebar open and collapsed, and
  in full screen at 1280×720, the plot area keeps at least :data:`PLOT_SHARE` of the chart box's
  width and of its height, every tick label lies inside the chart box, the two names do not
  overlap, each name is its label as built (:func:`amp.reporting.poll_plots.reading_label`, whole
  or ending in "…") and the hover holds it whole.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from axe import audit, axe_script, report
from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, shot, wait_idle
from test_detection_browser import start_probe_measurement

SIZES = ((1280, 720), (1600, 900), (1920, 1080))
#: The votes on the first sentence (LF0, LF1): a class of 150 (issue #40 point 7: ticks piled up at 30).
VOTES = (110, 40)
#: The readings' names on the poll: the second long enough to wrap at 1280 px.
NAMES = ("the man had the telescope", "the boy used the telescope as an instrument")
#: Reading names of 40 characters, the most an own sentence allows (issue #44 point 5): words, and
#: one word that no space breaks.
LONG_NAMES = ("the man who stood on the hill had a lens", "Fernrohrbenutzungsinstrumentalbedeutung!")
#: The least share of the chart box's width and of its height the plot area keeps.
PLOT_SHARE = 0.4

#: The vote chart's tick labels and their boxes, and the chart's box.
_TICKS = r"""() => {
  const gd = document.querySelector('[data-testid="stMain"] .js-plotly-plot');
  if (!gd) return null;
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const ticks = (cls) => [...gd.querySelectorAll(`.${cls} text`)].map((t) => ({
      text: t.textContent, box: box(t), rotated: /rotate\((?!0[,)])/.test(t.getAttribute('transform') || '')}));
  return {y: ticks('ytick'), x: ticks('xtick'), chart: box(gd)};
}"""

#: Every cut label among buttons and metric labels of the main area (text wider than its box).
_CUT = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const labels = [...main.querySelectorAll('button, [data-testid="stMetricLabel"]')]
      .filter((e) => e.getBoundingClientRect().width > 0);
  const out = [];
  for (const label of labels) {
    for (const e of [label, ...label.querySelectorAll('*')]) {
      if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible') {
        out.push((label.innerText || label.getAttribute('aria-label') || '').trim().slice(0, 40));
        break;
      }
    }
  }
  return out;
}"""

#: The box of the vote chart and of the tally caption, and the window's size.
_BOXES = """() => {
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
                       return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; };
  const tally = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
      .find((e) => e.innerText.startsWith('Class:'));
  const sentence = document.querySelector('.present-s');
  return {chart: box(document.querySelector('[data-testid="stMain"] .js-plotly-plot')), tally: box(tally),
          font: sentence ? parseFloat(getComputedStyle(sentence).fontSize) : 0,
          width: window.innerWidth, height: window.innerHeight};
}"""


@pytest.fixture(scope="module")
def poll_server(launch_streamlit, tmp_path_factory):
    from amp.data import generate as gen
    from amp.teaching.poll import PollItem, PollStore

    cache = tmp_path_factory.mktemp("projector") / "cache"
    cache.mkdir()
    from amp.prompts import mixed_prompt

    store = PollStore(cache / "polls.sqlite")
    codes = []
    for names in (NAMES, LONG_NAMES):
        # the model's parse and P(LF0) stored with each item, with the lesson's prompt they came from (no model loads)
        items = [replace(PollItem.from_pair(pair, p, "lf0", prompt=mixed_prompt(pair, 0.3, seed=0, k=10)),
                         name0=names[0], name1=names[1])
                 for pair, p in zip(gen.pairs("pp")[:2], (0.7, 0.3), strict=True)]
        poll = store.create_poll(items, "projector")
        for i, choice in enumerate([0] * VOTES[0] + [1] * VOTES[1]):
            store.submit_vote(poll.code, 0, f"student{i}", choice, 1 + i % 3)
        codes.append(poll.code)
    server = launch_streamlit({"AMP_CACHE_DIR": str(cache)})
    yield server, *codes
    server.stop()


def _sidebar_open(page: Page) -> bool:
    return page.locator('[data-testid="stSidebar"]').evaluate("(s) => s.getBoundingClientRect().right > 50")


def _set_sidebar(page: Page, open_: bool) -> None:
    if _sidebar_open(page) == open_:
        return
    if open_:
        page.get_by_role("button", name="Expand sidebar").click()
    else:
        page.locator('[data-testid="stSidebar"]').hover()
        page.get_by_role("button", name="Collapse sidebar").click()
    page.wait_for_timeout(600)  # the sidebar's slide transition


def _present(page: Page, code: str) -> None:
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Presentation", exact=True).click()
    box = page.get_by_label("Poll code (optional)")
    expect(box).to_be_visible(timeout=60_000)
    wait_idle(page)
    box.fill(code)
    box.press("Enter")
    expect(page.get_by_text(f"Class: {sum(VOTES)} vote(s)")).to_be_visible(timeout=60_000)
    page.get_by_role("button", name="Reveal the model's choice").click()
    expect(page.get_by_text("Model P(LF0)")).to_be_visible(timeout=60_000)
    wait_idle(page)


def _vote_chart_problems(page: Page, where: str) -> list[str]:
    """Vote ticks: integers from 0 to at least the largest count, labels apart; reading names:
    horizontal, whole, inside the chart (issue #40 point 7)."""
    ticks = page.evaluate(_TICKS)
    if ticks is None:
        return [f"{where}: no vote chart"]
    problems = []
    values = [t["text"] for t in ticks["y"]]
    if not all(v.isdigit() for v in values) or not values or int(values[0]) != 0 or int(values[-1]) < max(VOTES):
        problems.append(f"{where}: vote ticks {values}")
    ys = sorted(ticks["y"], key=lambda t: t["box"]["top"])
    if any(a["box"]["bottom"] > b["box"]["top"] + 0.5 for a, b in zip(ys, ys[1:], strict=False)):
        problems.append(f"{where}: vote tick labels overlap: {values}")
    names = sorted("".join(t["text"].split()) for t in ticks["x"])
    if names != sorted("".join(f"LF{i} · {n}".split()) for i, n in enumerate(NAMES)):
        problems.append(f"{where}: reading names not whole: {[t['text'] for t in ticks['x']]}")
    chart = ticks["chart"]
    for t in ticks["x"]:
        b = t["box"]
        if t["rotated"] or b["left"] < chart["left"] - 0.5 or b["right"] > chart["right"] + 0.5 \
                or b["bottom"] > chart["bottom"] + 0.5:
            problems.append(f"{where}: reading name rotated or outside the chart: {t}")
    return problems


#: The vote chart's box, its plot area, every tick label's box and text, and the bars' hovers.
_PLOT = r"""() => {
  const gd = document.querySelector('[data-testid="stMain"] .js-plotly-plot');
  if (!gd || !gd._fullLayout) return null;
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const size = gd._fullLayout._size;
  return {chart: box(gd), plot: {width: size.w, height: size.h},
          x: [...gd.querySelectorAll('.xtick text')].map((t) => ({text: t.textContent, box: box(t)})),
          y: [...gd.querySelectorAll('.ytick text')].map((t) => ({text: t.textContent, box: box(t)})),
          hovers: gd.data.map((trace) => trace.hovertext[0])};
}"""


def _long_name_problems(page: Page, where: str) -> list[str]:
    """The plot keeps :data:`PLOT_SHARE` of the box each way; every tick label inside the box; the
    names apart, as built, and whole in the hover (issue #44 point 5)."""
    from amp.reporting.poll_plots import PROJECTOR_LINE_CHARS, PROJECTOR_MAX_LINES, reading_label
    from amp.reporting.style import plain_label

    m = page.evaluate(_PLOT)
    if m is None:
        return [f"{where}: no vote chart"]
    problems = []
    chart, plot = m["chart"], m["plot"]
    width, height = chart["right"] - chart["left"], chart["bottom"] - chart["top"]
    if plot["width"] < PLOT_SHARE * width or plot["height"] < PLOT_SHARE * height:
        problems.append(f"{where}: plot area {plot['width']:.0f}x{plot['height']:.0f} px in a chart box of "
                        f"{width:.0f}x{height:.0f} px")
    for t in m["x"] + m["y"]:
        b = t["box"]
        if b["left"] < chart["left"] - 0.5 or b["right"] > chart["right"] + 0.5 or b["top"] < chart["top"] - 0.5 \
                or b["bottom"] > chart["bottom"] + 0.5:
            problems.append(f"{where}: tick label {t['text']!r} outside the chart box {chart}: {b}")
    xs = sorted(m["x"], key=lambda t: t["box"]["left"])
    if len(xs) != 2 or xs[0]["box"]["right"] > xs[1]["box"]["left"] + 0.5:
        problems.append(f"{where}: reading names overlap or are missing: {xs}")
    names = [f"LF{i} · {n}" for i, n in enumerate(LONG_NAMES)]
    built = sorted("".join(reading_label(n, PROJECTOR_LINE_CHARS, PROJECTOR_MAX_LINES).replace("<br>", "").split())
                   for n in names)
    if sorted("".join(t["text"].split()) for t in m["x"]) != built:
        problems.append(f"{where}: reading names {[t['text'] for t in m['x']]} are not the labels built: {built}")
    if [h.split("<br>")[0] for h in m["hovers"]] != [plain_label(n) for n in names]:
        problems.append(f"{where}: the hovers do not hold the names whole: {m['hovers']}")
    return problems


def _settle(page: Page, width: int, height: int) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(700)  # plotly's resize is debounced
    page.evaluate("window.scrollTo(0, 0)")


def test_presentation_scales_and_nothing_is_cut_or_falls_off(page_on, poll_server) -> None:
    server, code, _long = poll_server
    page = page_on(server)
    page.goto(server.url)
    wait_idle(page)
    _present(page, code)
    problems: list[str] = []
    seen: dict[tuple, dict] = {}
    for sidebar in (True, False):
        for width, height in SIZES:
            _settle(page, width, height)
            _set_sidebar(page, sidebar)
            _settle(page, width, height)
            where = f"{width}x{height} sidebar {'open' if sidebar else 'collapsed'}"
            cut = page.evaluate(_CUT)
            if cut:
                problems.append(f"{where}: cut labels {cut}")
            if width != 1600:
                problems += _vote_chart_problems(page, where)
            boxes = page.evaluate(_BOXES)
            seen[(width, sidebar)] = boxes
            for name in ("chart", "tally"):
                if boxes[name] is None:
                    problems.append(f"{where}: no {name}")
                elif boxes[name]["right"] > boxes["width"] + 0.5:
                    problems.append(f"{where}: the {name} ends at {boxes[name]['right']:.0f} px > {boxes['width']}")
            shot(page, f"projector-{width}x{height}-{'open' if sidebar else 'collapsed'}")
    small, large = seen[(1280, False)], seen[(1920, False)]
    if not large["font"] >= 1.25 * small["font"]:
        problems.append(f"the sentence's type does not scale: {small['font']} px → {large['font']} px")
    if not large["chart"]["height"] >= 1.2 * small["chart"]["height"]:
        problems.append(f"the chart does not scale: {small['chart']['height']} px → {large['chart']['height']} px")
    # full screen (the layout; headless Chromium may refuse the browser's own full screen)
    page.get_by_role("button", name="Full screen").click()
    expect(page.get_by_role("button", name="Exit full screen")).to_be_visible(timeout=30_000)
    wait_idle(page)
    for width, height in ((1280, 720), (1920, 1080)):
        _settle(page, width, height)
        boxes = page.evaluate(_BOXES)
        for name in ("chart", "tally"):
            if boxes[name] is None or boxes[name]["bottom"] > boxes["height"] + 0.5:
                problems.append(f"full screen {width}x{height}: the {name} falls off the screen: {boxes[name]}")
        cut = page.evaluate(_CUT)
        if cut:
            problems.append(f"full screen {width}x{height}: cut labels {cut}")
        problems += _vote_chart_problems(page, f"full screen {width}x{height}")
        shot(page, f"projector-full-{width}x{height}")
    assert problems == [], '\n'.join(problems)
    assert_clean(page)


def test_class_poll_labels_are_not_cut_at_1280_with_the_sidebar_open(page_on, poll_server) -> None:
    server, code, _long = poll_server
    page = page_on(server)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(server.url)
    wait_idle(page)
    goto_page(page, "Class poll")
    page.get_by_text("Open an existing poll").click()
    page.get_by_label("Poll code").fill(code)
    page.locator(".st-key-tp_open button").click()
    expect(page.get_by_role("button", name="Present this sentence")).to_be_visible(timeout=60_000)
    wait_idle(page)
    _set_sidebar(page, True)
    _settle(page, 1280, 720)
    cut = page.evaluate(_CUT)
    shot(page, "projector-class-poll-1280")
    assert cut == [], cut
    assert _vote_chart_problems(page, "class poll at 1280") == []
    assert_clean(page)


def test_long_reading_names_keep_the_plot_and_every_label_inside_the_chart(page_on, poll_server) -> None:
    server, _code, long_code = poll_server
    page = page_on(server)
    page.goto(server.url)
    wait_idle(page)
    _present(page, long_code)
    problems: list[str] = []
    for sidebar in (True, False):
        for width, height in ((1280, 720), (1920, 1080)):
            _settle(page, width, height)
            _set_sidebar(page, sidebar)
            _settle(page, width, height)
            where = f"{width}x{height} sidebar {'open' if sidebar else 'collapsed'}"
            problems += _long_name_problems(page, where)
            shot(page, f"projector-long-names-{width}x{height}-{'open' if sidebar else 'collapsed'}")
    page.get_by_role("button", name="Full screen").click()
    expect(page.get_by_role("button", name="Exit full screen")).to_be_visible(timeout=30_000)
    wait_idle(page)
    _settle(page, 1280, 720)
    problems += _long_name_problems(page, "full screen 1280x720")
    shot(page, "projector-long-names-full-1280x720")
    assert problems == [], "\n".join(problems)
    assert_clean(page)


#: The detection slide's boxes (issue #43 point 4): its heading, its two answers, its chart, its last caption.
_SLIDE = """() => {
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
                       return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; };
  const main = document.querySelector('[data-testid="stMain"]');
  const captions = [...main.querySelectorAll('[data-testid="stCaptionContainer"]')];
  return {heading: box(main.querySelector('h2.present-q')),
          answers: [...main.querySelectorAll('.present-r')].map(box),
          chart: box(main.querySelector('.js-plotly-plot')), source: box(captions[captions.length - 1]),
          headingFont: parseFloat(getComputedStyle(main.querySelector('h2.present-q')).fontSize),
          width: window.innerWidth, height: window.innerHeight};
}"""


def test_the_detection_slide_fits_the_projector_and_passes_axe(tiny_server, page_on) -> None:
    """The Research section's probes on the tiny model (5 sentences per type and class), then the
    Presentation's last slide: axe's WCAG A/AA rules pass on it; in full screen at 1280×720 and
    1920×1080 its heading, answers, chart and source caption are on the screen, nothing cut."""
    page: Page = page_on(tiny_server)
    start_probe_measurement(page, tiny_server.url)
    expect(page.get_by_text("Best probe: layer", exact=False)).to_be_visible(timeout=300_000)
    wait_idle(page, 300_000)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Presentation", exact=True).click()
    expect(page.get_by_text("Last slide:", exact=False)).to_be_visible(timeout=60_000)
    wait_idle(page)
    for slide in range(2, 7):  # a sample of 5 sentences, then the slide
        page.get_by_role("button", name="Next").click()
        expect(page.get_by_text(re.compile(rf"^{slide} / 6 · "))).to_be_visible(timeout=60_000)
        wait_idle(page)
    expect(page.get_by_role("heading", name="Does the model know a sentence is ambiguous?")).to_be_visible()
    expect(page.locator('[data-testid="stMain"] .js-plotly-plot')).to_be_visible(timeout=60_000)
    page.wait_for_timeout(500)
    found = audit(page, "Presentation, detection slide", axe_script())
    shot(page, "projector-detection-slide")
    page.get_by_role("button", name="Full screen").click()
    expect(page.get_by_role("button", name="Exit full screen")).to_be_visible(timeout=30_000)
    wait_idle(page)
    problems: list[str] = []
    for width, height in ((1280, 720), (1920, 1080)):
        _settle(page, width, height)
        boxes = page.evaluate(_SLIDE)
        where = f"full screen {width}x{height}"
        parts = {"heading": boxes["heading"], "chart": boxes["chart"], "source": boxes["source"],
                 **{f"answer {i + 1}": b for i, b in enumerate(boxes["answers"])}}
        if len(boxes["answers"]) != 2:
            problems.append(f"{where}: {len(boxes['answers'])} answers, not 2")
        for name, b in parts.items():
            if b is None or b["bottom"] > boxes["height"] + 0.5 or b["right"] > boxes["width"] + 0.5:
                problems.append(f"{where}: the {name} falls off the screen: {b}")
        if boxes["chart"] is not None and boxes["chart"]["height"] < 180:
            problems.append(f"{where}: the chart is only {boxes['chart']['height']:.0f} px high")
        cut = page.evaluate(_CUT)
        if cut:
            problems.append(f"{where}: cut labels {cut}")
        shot(page, f"projector-detection-full-{width}x{height}")
    found += audit(page, "Presentation, detection slide, full screen", axe_script())
    assert problems == [] and not found, "\n".join(problems) + "\n" + report(found)
    assert_clean(page)
