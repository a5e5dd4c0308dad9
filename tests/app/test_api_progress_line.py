"""The live line of a parse by a model behind an API (ui.model.progress, issue #46 point 2): it
says the endpoint's requests — done of planned, retries, in flight, time left — instead of decode
steps it does not have, and the backend's between-replies check neither counts as a decode step
nor stops the parse without a Cancel."""

from __future__ import annotations

import pytest

from amp.parser.backends.api_progress import RequestProgress
from ui.inspection.parse_progress import ParseProgress
from ui.model import progress as live


class _Slot:
    def __init__(self) -> None:
        self.text = ""

    def caption(self, text: str) -> None:
        self.text = text


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(live, "time", fake)
    monkeypatch.setattr(live, "rerun_requested", lambda: False)
    return fake


def _p(done: int, total: int, retries: int = 0, left: float | None = None) -> RequestProgress:
    return RequestProgress(done=done, total=total, retries=retries, in_flight=total - done, limit=2, timeout_s=120.0,
                           elapsed_s=5.0, left_s=left)


def test_an_api_parse_says_its_requests_not_decode_steps(clock: _Clock) -> None:
    slot = _Slot()
    line = ParseProgress(slot, max_steps=64)
    clock.now = 112.0
    line.heard_requests(_p(0, 2))
    assert slot.text == "Asking the model endpoint: 0 of 2 requests done · 2 in flight · 12 s elapsed · estimating…"
    assert line.check() is False
    clock.now = 140.0
    line.heard_requests(_p(1, 2, retries=1, left=28.0))
    assert line.line() == ("Asking the model endpoint: 1 of 2 requests done · 1 retry · 1 in flight · 40 s elapsed"
                           " · about 28 s left")
    line.heard_requests(_p(2, 2))
    assert line.line() == "Asking the model endpoint: 2 of 2 requests done · 40 s elapsed"
    assert line.steps == 0 and "decode step" not in line.summary()
