"""Real browser: the Fig. 4 view of Parse & inspect at 1280×720 (issue #26 point 4).

A server of its own on a tiny local GPT-2 (``tiny_server``: its parse is noise, drawn by the same
code as on the default model) parses the default prompt (PP attachment).  In plotly's own data in
Chromium: three rows per block (parse, LF0, LF1) with no blank row, every row of every block
holding a token or an "(ended)" note, the solid box at a column where LF0 and LF1 hold different
tokens inside the items that differ in meaning (``have`` versus ``instrument``, not the quantifier
prefix), and the figure within the 1280 px page (no horizontal overflow).  Screenshot to artifacts/.

At 1280×720 and 1920×1080 (issue #40 point 7): every row label drawn whole inside the chart, the
"readings part in meaning" tag above the plot area (so over no cell), and each empty row's note
inside its own row and the plot area.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, shot, wait_idle

from amp.reporting.beam_table import MATCH_NAMES

RUN_TIMEOUT = 240_000

#: The figure's data as plotly holds it: per trace its rows, texts and cell values; the layout's
#: meta, shapes and annotations; the chart's box and the page's width.
FIG = """(el) => { const gd = el.querySelector('.js-plotly-plot'); const r = gd.getBoundingClientRect();
  return {data: gd.data.map(t => ({y: t.y, text: t.text, z: t.z, x: t.x})), meta: gd.layout.meta,
          shapes: (gd.layout.shapes || []).map(s => ({name: s.name, x0: s.x0, x1: s.x1, y0: s.y0, y1: s.y1})),
          notes: (gd.layout.annotations || []).map(a => ({name: a.name, y: a.y, text: a.text})),
          ticks: gd.layout.yaxis.ticktext, right: r.right, page: document.documentElement.clientWidth}; }"""


#: In page pixels: the plot area, the row labels' boxes and texts, each annotation's name, box and
#: row (plotly draws annotations in layout order).
GEOMETRY = """(el) => { const gd = el.querySelector('.js-plotly-plot'); const r = gd.getBoundingClientRect();
  const s = gd._fullLayout._size; const box = (e) => { const b = e.getBoundingClientRect();
    return {top: b.top, bottom: b.bottom, left: b.left, right: b.right}; };
  const notes = [...gd.querySelectorAll('.annotation')].map((a) => {
    const i = +a.getAttribute('data-index'); const n = gd.layout.annotations[i];
    return {name: n.name, text: n.text, y: n.y, yref: n.yref, box: box(a.querySelector('.annotation-text-g'))}; });
  return {chart: box(gd), plot: {top: r.top + s.t, bottom: r.top + s.t + s.h, left: r.left + s.l,
                                 right: r.left + s.l + s.w, row: s.h / (3 * gd.layout.meta.blocks.length)},
          labels: [...gd.querySelectorAll('.ytick text')].map((t) => ({text: t.textContent, box: box(t)})),
          want: gd.layout.meta.labels, notes}; }"""


def _layout_problems(geo: dict, where: str) -> list[str]:
    """Cut labels, a tag over the plot area, a row note outside its row (issue #40 point 7)."""
    problems = []
    plot, chart = geo["plot"], geo["chart"]
    whole = {f"parse: {name}" for name in MATCH_NAMES.values()} | {"LF0 (forced)", "LF1 (forced)"}
    if sorted({t["text"] for t in geo["labels"]}) != sorted(set(geo["want"])) or not set(geo["want"]) <= whole:
        problems.append(f"{where}: row labels {[t['text'] for t in geo['labels']]} are not {geo['want']}")
    for t in geo["labels"]:
        if t["box"]["left"] < chart["left"] - 0.5 or t["box"]["right"] > plot["left"] + 0.5:
            problems.append(f"{where}: row label {t['text']!r} cut or over the plot: {t['box']} in {chart}")
    for n in geo["notes"]:
        b = n["box"]
        if n["name"] == "divergence" and b["bottom"] > plot["top"] + 0.5:
            problems.append(f"{where}: the divergence tag reaches into the plot area: {b} vs top {plot['top']}")
        if n["name"] in ("ended", "continues"):
            row_top = plot["top"] + (n["y"] - 0) * plot["row"]  # y is the row's index; its band is y ± 0.5
            mid = (b["top"] + b["bottom"]) / 2
            if not (row_top - 0.5 <= mid <= row_top + plot["row"] + 0.5) or b["left"] < plot["left"] - 0.5:
                problems.append(f"{where}: {n['text']} at row {n['y']} leaves its row: {b}")
    return problems


def test_the_parse_and_both_readings_at_1280(tiny_server, page_on) -> None:
    page: Page = page_on(tiny_server)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(tiny_server.url)
    wait_idle(page)
    goto_page(page, "Parse & inspect")
    page.get_by_role("button", name="Parse").click()
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(
        has=page.locator(".gtitle").filter(has_text="both readings, token by token"))
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page, RUN_TIMEOUT)
    chart.scroll_into_view_if_needed()
    fig = chart.evaluate(FIG)
    blocks = fig["meta"]["blocks"]
    assert fig["meta"]["rows"] == 3
    rows = sorted({y for t in fig["data"] for y in t["y"]})
    assert rows == list(range(3 * len(blocks)))  # three rows per block, no blank row between blocks
    assert fig["ticks"][:3] == [fig["ticks"][0], "LF0 (forced)", "LF1 (forced)"] and fig["ticks"][0].startswith("parse")
    ended = {n["y"] for n in fig["notes"] if n["name"] in ("ended", "continues")}
    for t in fig["data"]:
        for y, zs in zip(t["y"], t["z"], strict=True):
            assert any(v is not None for v in zs) or y in ended, f"row {y} is empty"
    # the divergence: one solid box over the three rows of its block, at differing tokens in meaning
    (box,) = [s for s in fig["shapes"] if s["name"] == "divergence"]
    d = fig["meta"]["divergence"]
    b = next(i for i, cols in enumerate(blocks) if d in cols)
    k = blocks[b].index(d)
    trace = fig["data"][b]
    assert box["y0"] == 3 * b - 0.5 and box["y1"] == 3 * b + 2.5
    assert box["x0"] == trace["x"][k] and box["x1"] == trace["x"][k + 1]
    lf0_token, lf1_token = trace["text"][1][k], trace["text"][2][k]
    assert lf0_token != lf1_token and "exists" not in (lf0_token, lf1_token)
    meaning = [s for s in fig["shapes"] if s["name"] == "meaning"]
    assert len(meaning) >= 2 and any(s["x0"] <= trace["x"][k] + 2 <= s["x1"] for s in meaning)
    assert "have versus instrument" in (chart.locator(".gtitle").text_content() or "")
    assert fig["right"] <= fig["page"], "the figure is wider than the 1280 px page"
    shot(page, "readings-heatmap-1280x720")
    problems = _layout_problems(chart.evaluate(GEOMETRY), "1280x720")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.wait_for_timeout(700)  # plotly's resize is debounced
    chart.scroll_into_view_if_needed()
    problems += _layout_problems(chart.evaluate(GEOMETRY), "1920x1080")
    shot(page, "readings-heatmap-1920x1080")
    assert problems == [], "\n".join(problems)
    assert_clean(page)
