"""The CLI's progress line for a model behind an API (amp.cli.progress, issue #46 point 2): quiet
for quick work; then on a terminal one line redrawn in place and ended with the work, in a pipe
or a log a new line when the counts change (or every LOG_EVERY_S), never a terminal control of an
endpoint's own text.  (``amp parse`` against a slow endpoint printing it: tests/parser/test_api_plan.py.)"""

from __future__ import annotations

import io

import pytest

from amp.cli import progress as cli_progress
from amp.cli.progress import ProgressPrinter, api_progress
from amp.parser.backends.api_progress import RequestProgress, current_watch


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(cli_progress, "time", fake)
    return fake


def _p(done: int, total: int = 5, retries: int = 0, left: float | None = 30.0) -> RequestProgress:
    return RequestProgress(done=done, total=total, retries=retries, in_flight=1, limit=2, timeout_s=480.0,
                           elapsed_s=40.0, left_s=left)


def test_quick_work_prints_nothing(clock: _Clock) -> None:
    out = io.StringIO()
    printer = ProgressPrinter(out, label="openai:gemma", quiet_s=2.0)
    clock.now = 1.9
    printer(_p(5, 5))
    printer.end()
    assert out.getvalue() == ""


def test_a_log_gets_a_line_when_the_counts_change(clock: _Clock) -> None:
    out = io.StringIO()
    printer = ProgressPrinter(out, label="openai:gemma", quiet_s=2.0, every_s=10.0)
    for t, p in ((2.0, _p(0, left=None)), (3.0, _p(0, left=None)), (4.0, _p(1, retries=1)), (14.5, _p(1, retries=1)),
                 (15.0, _p(5, 5)), (16.0, _p(5, 5))):
        clock.now = t
        printer(p)
    printer.end()
    assert out.getvalue().splitlines() == [
        "openai:gemma: 0 of 5 requests done · 1 in flight · 40 s elapsed · estimating… · timeout 8 min",
        "openai:gemma: 1 of 5 requests done · 1 retry · 1 in flight · 40 s elapsed · about 30 s left · timeout 8 min",
        "openai:gemma: 1 of 5 requests done · 1 retry · 1 in flight · 40 s elapsed · about 30 s left · timeout 8 min",
        "openai:gemma: 5 of 5 requests done · 1 in flight · 40 s elapsed · timeout 8 min",
    ]


def test_a_terminal_gets_one_line_redrawn_and_ended(clock: _Clock) -> None:
    out = _Terminal()
    printer = ProgressPrinter(out, label="openai:\x1b[2Jgemma", quiet_s=0.0)
    printer(_p(1))
    printer(_p(2))
    printer.end()
    text = out.getvalue()
    assert text.startswith("\ropenai:gemma: 1 of 5") and "\ropenai:gemma: 2 of 5" in text
    assert text.endswith("\n") and text.count("\n") == 1 and "\x1b" not in text


def test_the_scope_is_installed_only_inside() -> None:
    out = io.StringIO()
    with api_progress("openai:m", out=out) as printer:
        watch = current_watch()
        assert watch is not None and watch.listener is printer
    assert current_watch() is None
