"""Real browser, two tabs on one server (issue #32): a sweep in one and a comparison in the other both finish.

The walk that got the app stuck for good: tab X runs a zero-shot sweep (seed 7, 4 sentences);
while it holds the model, tab Y (Compare models, model B a small local model folder) clicks
Compare, and Compare again 1.5 s later.  The first click's run, stopped while it waited for the
model, took the model as the sweep gave it back and ended without giving it back: X stopped at
"1 / 4 prompts" and Y showed "Model A: parsing and scoring…" for ever.  Here, on a server of its
own with two tiny local models (model A the sidebar's, model B another folder), the test checks
that Y's wait is in plain sight with a Cancel while X's sweep holds the model, and that both
runs finish (every wait bounded).  No console error, no page error, nothing off the loopback.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from test_browser import assert_clean, goto_page, shot, wait_idle
from tiny_models import build_tiny_model

#: The longest either run may take (the tiny sweep takes 10–80 s on a busy 2-core machine).
RUN_TIMEOUT = 240_000


@pytest.fixture(scope="module")
def two_tab_server(launch_streamlit, tmp_path_factory: pytest.TempPathFactory):
    """A server on tiny model A with an empty private cache; yields (server, path A, path B)."""
    root = tmp_path_factory.mktemp("two-tabs")
    model_a = build_tiny_model(root / "tiny-a", seed=0, n_positions=4096)
    model_b = build_tiny_model(root / "tiny-b", seed=1, n_positions=4096)
    server = launch_streamlit({"AMP_MODEL": str(model_a), "AMP_CACHE_DIR": str(root / "cache")})
    yield server, model_a, model_b
    server.stop()


def _number(page: Page, label: str, value: int) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)


def test_a_sweep_and_a_comparison_in_two_tabs_both_finish(two_tab_server, page_on) -> None:
    server, model_a, model_b = two_tab_server
    x: Page = page_on(server)  # two tabs: two pages, each in a browser context of its own
    y: Page = page_on(server)
    # tab Y waits on Compare models with model B typed in
    y.goto(server.url)
    wait_idle(y)
    goto_page(y, "Compare models", "Compare two models")
    spec_b = y.get_by_label("Model B (id or path)", exact=True)
    spec_b.fill(str(model_b))
    spec_b.press("Enter")
    wait_idle(y)
    # tab X: Zero-shot, seed 7, 4 sentences, Run sweep
    x.goto(server.url)
    wait_idle(x)
    goto_page(x, "Zero-shot")
    _number(x, "Test sentences per type", 4)
    _number(x, "Seed", 7)
    x.get_by_role("button", name="Run sweep").click()
    expect(x.locator('[data-testid="stProgress"]')).to_be_visible(timeout=60_000)  # it holds the model now

    # tab Y: Compare; it waits for the model, saying so in plain sight; Compare again 1.5 s later
    compare = y.get_by_role("button", name="Compare", exact=True)
    compare.click()
    note = y.locator('[data-testid="stAlert"]').filter(has_text="Waiting for the model")
    expect(note).to_be_visible(timeout=60_000)
    expect(note).to_contain_text("a sweep on the Zero-shot page")
    expect(note).to_contain_text("in another tab")
    expect(y.get_by_role("button", name="Cancel", exact=True)).to_be_visible()
    shot(y, "two_tabs_waiting")
    y.wait_for_timeout(1500)
    compare.click()

    # both finish
    expect(x.get_by_text(re.compile(r"^Sweep finished: 4 prompts in"))).to_be_visible(timeout=RUN_TIMEOUT)
    heads = y.locator('[data-testid="stMain"] [data-testid="stHeading"]').filter(has_text=re.compile(r"^Model [AB]: "))
    expect(heads).to_have_count(2, timeout=RUN_TIMEOUT)
    expect(heads.nth(0)).to_have_text(f"Model A: {model_a}")
    expect(heads.nth(1)).to_have_text(f"Model B: {model_b}")
    wait_idle(x, RUN_TIMEOUT)
    wait_idle(y, RUN_TIMEOUT)
    expect(note).to_have_count(0)
    expect(y.locator('[data-testid="stMetricLabel"]')).to_have_count(2)
    for pg in (x, y):
        assert not pg.locator('[data-testid="stException"]').count()
    shot(y, "two_tabs_compare")
    shot(x, "two_tabs_sweep")
    assert_clean(x)
    assert_clean(y)
