"""The voter id of a class poll: minted and checked here, and nowhere else.

A voter is one browser on one poll (the student page keeps the id in the cookie
``amp_voter_<CODE>``, :mod:`ui.classroom.class_poll`); the store allows one vote per voter per item
(:meth:`amp.teaching.poll_store.PollStore.submit_vote`), the tallies normalise each voter's
confidences (:func:`amp.teaching.poll_results.confidence_to_p_lf0`) and the CSV export has one
``voter_id`` column.

**The one format** (:data:`VOTER_ID_RE`): 1–128 characters of ``[A-Za-z0-9._-]``, the first a
letter or a digit.  Why this one:

* it holds every id minted so far: :func:`new_voter_id` makes 32 lowercase hex digits, as the
  student page always did (``uuid4().hex``), so a phone that voted yesterday keeps its cookie
  and stays the same voter;
* it is a cookie value as it stands (a subset of what :mod:`ui.shared.browser_store` writes), so
  an id read back from a cookie can be written again unchanged;
* it holds the short ids scripts and tests hand to :class:`~amp.teaching.poll_store.PollStore`
  (``"s1"``, ``"proc-3"``);
* it starts with a letter or a digit, so a spreadsheet never reads a cell of the CSV export as
  a formula (``=``, ``+``, ``-``, ``@``), and it has no blank, quote or separator.

Votes stored under ids the store once took besides (``:`` and ``@`` were allowed) are still
read and counted; such an id only cannot vote again.
"""

from __future__ import annotations

import re
import secrets
from typing import TypeGuard

from amp.teaching.errors import InvalidVoteError

__all__ = ["MAX_VOTER_ID", "VOTER_COOKIE", "VOTER_COOKIE_AGE_S", "VOTER_ID_RE", "check_voter_id", "is_voter_id",
           "new_voter_id", "voter_cookie"]

#: At most this many characters in a voter id.
MAX_VOTER_ID = 128
#: Name prefix of the cookie holding a browser's voter id for one poll (``amp_voter_<CODE>``): the
#: same cookie on the Streamlit student page and on the light vote page (:mod:`amp.classroom.vote_routes`).
VOTER_COOKIE = "amp_voter_"
#: How long a browser keeps its voter id for a poll (a class term; polls are short-lived).
VOTER_COOKIE_AGE_S = 120 * 24 * 3600
#: The one format of a voter id (see the module docstring for why).
VOTER_ID_RE = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_VOTER_ID - 1}}}")


def new_voter_id() -> str:
    """A fresh anonymous voter id: 32 lowercase hex digits (128 random bits)."""
    return secrets.token_hex(16)


def is_voter_id(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a voter id (:data:`VOTER_ID_RE`)."""
    return isinstance(value, str) and VOTER_ID_RE.fullmatch(value) is not None


def check_voter_id(value: object) -> str:
    """``value`` if it is a voter id, else :class:`~amp.teaching.errors.InvalidVoteError` saying
    what a voter id is (the value is shown cut to 60 characters)."""
    if not is_voter_id(value):
        raise InvalidVoteError(
            f"voter_id must be 1–{MAX_VOTER_ID} characters of letters, digits and ._-, starting with a "
            f"letter or a digit (got {value!r:.60})"
        )
    return value


def voter_cookie(code: str) -> str:
    """The name of the cookie that holds a browser's voter id for poll ``code``."""
    return VOTER_COOKIE + code
