"""The one voter id (amp.teaching.voter): minted and checked in one place, one format that keeps
the cookies phones already hold."""

from __future__ import annotations

import re
import uuid

import pytest

from amp.errors import AmpError
from amp.teaching.errors import InvalidVoteError
from amp.teaching.voter import MAX_VOTER_ID, check_voter_id, is_voter_id, new_voter_id


def test_a_new_voter_id_is_32_hex_digits_and_fresh() -> None:
    ids = {new_voter_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(re.fullmatch(r"[0-9a-f]{32}", v) and is_voter_id(v) and check_voter_id(v) == v for v in ids)


def test_the_ids_phones_already_hold_stay_voter_ids() -> None:
    """The student page used to mint ``uuid4().hex`` into the cookie ``amp_voter_<CODE>``."""
    for _ in range(50):
        old = uuid.uuid4().hex
        assert check_voter_id(old) == old


@pytest.mark.parametrize("value", ["s1", "a", "proc-3", "thread-7", "a.b_c-D9", "x" * MAX_VOTER_ID, "7" * 32])
def test_short_ids_of_scripts_are_voter_ids(value: str) -> None:
    assert is_voter_id(value) and check_voter_id(value) == value


@pytest.mark.parametrize(
    "value",
    ["", "x" * (MAX_VOTER_ID + 1), "has space", "a:b", "a@b", "a;b", "a,b", 'a"b', "=cmd()", "-2+3", "-x", "-1",
     "+1", "@sum", ".hidden", "_x", "été", "ab\n", "\nab", None, 5, b"ab"],
)
def test_anything_else_is_a_typed_error_naming_the_field(value: object) -> None:
    assert not is_voter_id(value)
    with pytest.raises(InvalidVoteError, match="voter_id must be") as info:
        check_voter_id(value)
    assert isinstance(info.value, AmpError)
