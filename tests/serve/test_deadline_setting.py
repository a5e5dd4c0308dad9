"""The service's deadline (``amp serve --deadline``, :attr:`ServeConfig.deadline_s`) is checked once,
where the service is configured (issue #44 "What to build" 1): above 0 and below the client's own
wait (:data:`~amp.parser.backends.remote.WORK_TIMEOUT_S`, 1,800 s), so that the client hears the
503 that names it instead of giving up first.  (That the deadline stops a request with that 503:
``test_service.py::test_a_request_past_the_deadline_is_stopped_with_a_503_naming_it``.)"""

from __future__ import annotations

import math

import pytest

from amp.parser.backends.remote import WORK_TIMEOUT_S
from amp.serve.errors import ServeError
from amp.serve.launch import config_from_args
from amp.serve.work import DEFAULT_DEADLINE_S, ServeConfig


def _config(deadline_s: float) -> ServeConfig:
    return config_from_args(spec="default", device="cpu", dtype="float32", replicas=1, host="127.0.0.1", port=8600,
                            address=None, token=None, engine="transformers", deadline_s=deadline_s)


def test_the_default_deadline_is_well_under_the_clients_wait() -> None:
    assert ServeConfig().deadline_s == DEFAULT_DEADLINE_S <= WORK_TIMEOUT_S / 4
    assert _config(20.0).deadline_s == 20.0


@pytest.mark.parametrize("seconds", [0.0, -5.0, WORK_TIMEOUT_S, 1e9, math.nan, math.inf])
def test_a_deadline_outside_its_range_is_refused_naming_the_option(seconds: float) -> None:
    with pytest.raises(ServeError, match=f"--deadline: the deadline must be above 0 and below {WORK_TIMEOUT_S:g} s"):
        _config(seconds)


def test_the_command_line_refuses_it_in_one_line_before_starting_anything(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from amp import cli
    from amp.serve import launch

    def start(*_: object) -> str:
        pytest.fail("the service was started with a deadline it should have refused")

    monkeypatch.setattr(launch, "start", start)
    assert cli.main(["serve", "--deadline", "1800"]) != 0
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: --deadline: the deadline must be above 0 and below 1800 s")
    assert err.count("\n") == 1 and "Traceback" not in err
