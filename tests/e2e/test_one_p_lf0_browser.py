"""Real browser: one sentence, one prompt, one P(LF0) on every page (issue #40 point 3).

A server of its own on a tiny local GPT-2 (its numbers are noise, drawn by the code the default
model runs through).  The teacher creates a Class poll of a telescope sentence with the model's
parse and P(LF0) under the lesson's default prompt; the poll's "Model P(LF0)", the Presentation's
reveal of that item (whose slide names the prompt: "under 10 examples, 3 of them LF0") and Parse &
inspect after "Parse this sentence" show one number — the number this test computes itself from
the two forced decodes' tokens (the minimum of each reading from the first token where they
differ, docs/paper-notes.md §12.1), not from the pages' code.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, shot, wait_idle

from tests.by_hand import parted_p_lf0

RUN_TIMEOUT = 240_000
PROMPT_NAME = "under 10 examples, 3 of them LF0"


@pytest.fixture(scope="module")
def tiny(launch_streamlit, tmp_path_factory: pytest.TempPathFactory):
    from tiny_models import build_tiny_model

    root = tmp_path_factory.mktemp("one-p-lf0")
    model = build_tiny_model(root / "tiny", seed=0, n_positions=4096)  # the 10-example prompt is ~1,000 tokens
    server = launch_streamlit({"AMP_MODEL": str(model), "AMP_CACHE_DIR": str(root / "cache")})
    yield server, model, root / "cache"
    server.stop()


def _metric(pg: Page, label: str) -> str:
    tile = pg.locator('[data-testid="stMetric"]').filter(has_text=label).first
    expect(tile).to_be_visible(timeout=RUN_TIMEOUT)
    return tile.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_the_poll_the_reveal_and_parse_and_inspect_show_one_p_lf0(tiny, page_on) -> None:
    from amp.prompts import mixed_prompt
    from amp.teaching.poll import PollStore

    server, model, cache = tiny
    pg = page_on(server)
    pg.set_viewport_size({"width": 1280, "height": 900})
    pg.goto(server.url)
    wait_idle(pg)
    goto_page(pg, "Class poll")
    wait_idle(pg)
    box = pg.get_by_label("Filter sentences")
    box.fill("telescope")
    box.press("Tab")
    wait_idle(pg)
    pg.get_by_role("button", name="Create poll").click()
    poll_p = _metric(pg, "Model P(LF0)")
    wait_idle(pg, RUN_TIMEOUT)

    (poll,) = PollStore(cache / "polls.sqlite").list_polls()
    (item,) = poll.items
    assert "telescope" in item.surface
    from amp.data.generate import find_pair

    pair = find_pair(item.surface)
    assert pair is not None and item.prompt == mixed_prompt(pair, 0.3, seed=0, k=10)
    expected = parted_p_lf0(model, item.prompt.render(), pair.lf0.lf, pair.lf1.lf)
    assert poll_p == f"{expected:.2f}"
    expect(pg.get_by_text(f"Scored {PROMPT_NAME}.").first).to_be_visible()
    shot(pg, "one-p-lf0-poll")

    pg.get_by_role("button", name="Present this sentence").click()
    expect(pg.get_by_role("button", name="Reveal the model's choice")).to_be_visible(timeout=60_000)
    wait_idle(pg)
    expect(pg.get_by_text(PROMPT_NAME, exact=False).first).to_be_visible()  # the slide names the prompt
    pg.get_by_role("button", name="Reveal the model's choice").click()
    assert _metric(pg, "Model P(LF0)") == f"{expected:.2f}"
    shot(pg, "one-p-lf0-reveal")

    goto_page(pg, "Class poll")
    wait_idle(pg)
    pg.get_by_role("button", name="Parse this sentence").click()
    expect(pg.locator("h1").filter(has_text="Parse & inspect").first).to_be_visible(timeout=60_000)
    wait_idle(pg)
    pg.locator(".st-key-pi_parse button").click()
    assert _metric(pg, "P(LF0) where the readings part") == f"{expected:.3f}"
    shot(pg, "one-p-lf0-parse")
    assert_clean(pg)
