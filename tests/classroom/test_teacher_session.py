"""The teacher's session token and the sign-in attempt limit (issue #27 item 2; pure logic of
:mod:`amp.classroom.teacher_auth`, the widgets are tested in ``tests/app/test_app_hostile.py``)."""

from __future__ import annotations

from amp.classroom import teacher_auth as ta


def test_a_session_token_is_valid_for_its_passphrase_until_it_expires() -> None:
    token = ta.issue_session("s3cret", now=1_000, ttl_s=100)
    assert ta.session_valid(token, "s3cret", now=1_050)
    assert ta.session_seconds_left(token, now=1_050) == 50
    assert not ta.session_valid(token, "s3cret", now=1_100)  # expired
    assert not ta.session_valid(token, "other passphrase", now=1_050)


def test_a_forged_or_edited_token_is_refused() -> None:
    token = ta.issue_session("s3cret", now=1_000, ttl_s=100)
    expiry, nonce, sig = token.split(".")
    later = f"{int(expiry) + 10_000}.{nonce}.{sig}"  # a longer life, same signature
    flipped = f"{expiry}.{nonce}.{sig[:-1]}{'0' if sig[-1] != '0' else '1'}"
    for bad in (later, flipped, "", "x", None, 42, "1.2.3", token + ".", token * 3):
        assert not ta.session_valid(bad, "s3cret", now=1_050), bad


def test_signing_out_ends_the_token_everywhere() -> None:
    token = ta.issue_session("s3cret")
    other = ta.issue_session("s3cret")
    assert ta.session_valid(token, "s3cret")
    ta.end_session(token)
    assert not ta.session_valid(token, "s3cret")
    assert ta.session_valid(other, "s3cret")  # another sign-in is not affected


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_wrong_passphrases_are_limited_per_client() -> None:
    clock = _Clock()
    limiter = ta.SignInLimiter(max_failures=5, window_s=60, clock=clock)
    for _ in range(4):
        assert limiter.wait_s("a") == 0
        limiter.failed("a")
        clock.now += 1
    assert limiter.wait_s("a") == 0  # 4 failures: may still try
    limiter.failed("a")  # the 5th, at t=4
    assert limiter.wait_s("a") == 56  # until the first failure (t=0) is 60 s old
    assert limiter.wait_s("b") == 0  # another client is not affected
    clock.now = 60
    assert limiter.wait_s("a") == 0  # the oldest failure left the window
    limiter.failed("a")
    assert limiter.wait_s("a") == 1  # 5 in the window again (t=1..4 and 60): until t=61
    limiter.succeeded("a")
    assert limiter.wait_s("a") == 0


def test_the_limiter_keeps_a_bounded_number_of_clients() -> None:
    clock = _Clock()
    limiter = ta.SignInLimiter(max_failures=2, window_s=60, max_clients=3, clock=clock)
    for i in range(10):
        clock.now += 0.1
        limiter.failed(f"c{i}")
    assert len(limiter._failures) == 3
