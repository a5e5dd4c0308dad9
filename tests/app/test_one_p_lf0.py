"""One sentence, one prompt, one P(LF0) on every page (issue #40 point 3).

A poll is created with the model's numbers for the telescope sentence under the lesson's prompt;
the Class poll's "Model P(LF0)", the Presentation's reveal of that poll item and Parse & inspect
after "Parse this sentence" must all show the same number — and that number is computed here
independently of the pages and of :attr:`PairScore.p_lf0_parted`: from the forced decodes' token
ids and probabilities, the minimum of each reading from the first token where the two differ
(docs/paper-notes.md §12), normalised.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import assert_ok, goto, texts

from amp.data import generate as gen
from amp.evaluation.p_lf0_measures import PLf0Measure
from amp.prompts import mixed_prompt, zero_shot_prompt
from amp.teaching.poll import PollStore
from tests.by_hand import parted_p_lf0

TELESCOPE = "the boy saw the man with the telescope"


def _captions(at) -> list[str]:
    """Captions as read (Markdown escapes of plain text removed)."""
    return [c.replace("\\", "") for c in texts(at, "caption")]


def _metric(at, label: str) -> str:
    (value,) = [m.value for m in at.metric if m.label == label]
    return str(value)


@pytest.mark.parametrize("zero_shot", [False, True])
def test_the_poll_the_reveal_and_parse_and_inspect_show_one_p_lf0(at, app_env: Path, zero_shot: bool) -> None:
    pair = gen.find_pair(TELESCOPE)
    assert pair is not None
    goto(at, "teach_poll")
    if zero_shot:
        at.segmented_control(key="tp_lesson_kind").set_value("zero-shot").run()
    at.radio(key="tp_how").set_value("one sentence").run()
    at.text_input(key="tp_word").set_value("telescope").run()
    at.selectbox(key="tp_surface").set_value(TELESCOPE).run()
    at.button(key="tp_create").click().run()
    assert_ok(at)
    code = at.session_state["teach_poll_code"]
    (item,) = PollStore().get_poll(code).items
    prompt = zero_shot_prompt(pair) if zero_shot else mixed_prompt(pair, 0.3, seed=0, k=10)
    assert item.prompt == prompt  # the poll keeps the prompt it scored the sentence under
    expected = parted_p_lf0(app_env, prompt.render(), pair.lf0.lf, pair.lf1.lf)
    assert item.model_p_lf0 == pytest.approx(expected, abs=1e-9)

    # the Class poll: the model's number, and the prompt named
    assert _metric(at, "Model P(LF0)") == f"{expected:.2f}"
    name = ("under the zero-shot prompt (3 examples, none ambiguous)" if zero_shot
            else "under 10 examples, 3 of them LF0")
    assert f"Scored {name}." in _captions(at)

    # the Presentation: the poll's item, revealed, under the same prompt, named on the slide
    at.button(key="tp_route_present").click().run()
    assert_ok(at)
    at.button(key="present_reveal_0").click().run()
    assert_ok(at)
    assert _metric(at, "Model P(LF0)") == f"{expected:.2f}"
    assert any(name in c for c in _captions(at))

    # Parse & inspect, from "Parse this sentence": exactly the poll's prompt, the same number
    goto(at, "teach_poll")
    at.button(key="tp_route_parse").click().run()
    assert_ok(at)
    assert at.session_state["prompt"] == prompt
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert _metric(at, PLf0Measure.PARTED.label) == f"{expected:.3f}"
