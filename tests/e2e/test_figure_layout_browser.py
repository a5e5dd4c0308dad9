"""The report's figures as Chromium lays them out (issue #46): no text over other text, nothing cut at
an edge.  Fig. 6's legend used to cover its note, which ran past the right edge.

Each figure is the standalone HTML that ``amp reproduce`` writes, at the PNG size (900 px wide);
the boxes of the title, legend, annotations (notes and panel titles) and axis titles are read with
``getBoundingClientRect``.
"""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest
from conftest import new_page

from amp.reporting import sweep_plots
from amp.reporting.png_export import PNG_SIZE

TYPES = ("pp", "scope", "revscope", "bound", "conj")
RATIOS = [round(0.1 * i, 1) for i in range(11)]

BOXES_JS = """() => {
  const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const svg = document.querySelector('.main-svg');
  const named = [];
  const add = (what, e) => { if (e && e.getBoundingClientRect().width > 0) named.push([what, box(e)]); };
  add('title', document.querySelector('.g-gtitle'));
  add('legend', document.querySelector('.legend'));
  document.querySelectorAll('.infolayer .annotation').forEach((a, i) => add('annotation ' + a.textContent, a));
  document.querySelectorAll('.infolayer text').forEach(t => {
    if (/^[xy]\\d*title$/.test(t.getAttribute('class') || '')) add('axis title ' + t.textContent, t);
  });
  return {svg: box(svg), named};
}"""


def _per_ratio() -> pd.DataFrame:
    """Five types × 11 ratios with intervals; pp's and conj's curves meet (the coincide note shows)."""
    rng = random.Random(3)
    rows = []
    for t in TYPES:
        for r in RATIOS:
            a0 = 0.0 if t in ("pp", "conj") else rng.random() / 2
            a1 = 0.0 if t in ("pp", "conj") else rng.random() / 2
            rows.append({"type": t, "ratio": r, "n": 100, "acc_lf0": a0, "acc_lf0_low": max(a0 - 0.1, 0),
                         "acc_lf0_high": a0 + 0.1, "acc_lf1": a1, "acc_lf1_low": max(a1 - 0.1, 0),
                         "acc_lf1_high": a1 + 0.1, "mean_p_lf0": r, "mean_p_lf0_low": max(r - 0.05, 0),
                         "mean_p_lf0_high": min(r + 0.05, 1)})
    return pd.DataFrame(rows)


def _zero() -> pd.DataFrame:
    return pd.DataFrame([{"type": t, "n": 200, "ZM_5": 40.0, "ZM_5_low": 33.0, "ZM_5_high": 47.0, "acc_lf0": 0.4,
                          "acc_lf0_low": 0.33, "acc_lf0_high": 0.47, "acc_lf1": 0.3, "acc_lf1_low": 0.24,
                          "acc_lf1_high": 0.37, "mean_p_lf0": 0.5, "mean_p_lf0_low": 0.45, "mean_p_lf0_high": 0.55}
                         for t in TYPES])


def _records(n: int) -> pd.DataFrame:
    return pd.DataFrame([{"type": t, "surface": f"s{i}", "ratio": math.nan, "p_lf0": (i + 1) / (n + 1)}
                         for t in TYPES for i in range(n)])


FIGURES = {
    "fig6_fewshot_accuracy": lambda: sweep_plots.accuracy_vs_ratio(_per_ratio()),
    "fig6_fewshot_p_lf0": lambda: sweep_plots.p_lf0_vs_ratio(_per_ratio()),
    "table2_zm": lambda: sweep_plots.zm_bars(_zero(), 5),
    "fig2_zeroshot_accuracy": lambda: sweep_plots.accuracy_bars(_zero()),
    "fig3_p_lf0": lambda: sweep_plots.p_lf0_distribution(_records(1), means=_zero()),
}


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


@pytest.mark.parametrize("stem", list(FIGURES))
def test_report_figure_text_neither_overlaps_nor_is_cut(browser, stem):
    fig = FIGURES[stem]()
    width = int(fig.layout.width or PNG_SIZE[0])
    height = int(fig.layout.height or PNG_SIZE[1])
    page = new_page(browser, "about:blank", viewport={"width": width, "height": height})
    try:
        page.set_content(fig.to_html(include_plotlyjs=True, full_html=True, default_width=f"{width}px",
                                     default_height=f"{height}px"))
        page.wait_for_selector(".main-svg .legend, .main-svg .g-gtitle")
        got = page.evaluate(BOXES_JS)
    finally:
        page.context.close()
    svg, named = got["svg"], got["named"]
    assert any(what == "title" for what, _ in named)
    if stem == "fig6_fewshot_accuracy":
        assert any(what.startswith("annotation Where the LF0") for what, _ in named), named
        assert any(what == "legend" for what, _ in named)
    for what, box in named:  # nothing cut at an edge
        assert box[0] >= svg[0] - 1 and box[2] <= svg[2] + 1, f"{stem}: {what} runs past the side: {box} vs {svg}"
        assert box[1] >= svg[1] - 1 and box[3] <= svg[3] + 1, f"{stem}: {what} runs past top/bottom: {box} vs {svg}"
    clashes = [(a, b) for i, (a, ba) in enumerate(named) for b, bb in named[i + 1:] if _overlap(ba, bb)]
    assert not clashes, f"{stem}: text over text: {clashes}"
