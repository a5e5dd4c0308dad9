"""One vote per voter per item *of a poll* (issue #45; :class:`amp.teaching.poll_store.PollStore`).

The poll's code is part of what makes a vote unique: a voter who answered item 1 of one poll
answers item 1 of the next poll too (a class runs several polls with the same phone), and
cannot answer one item of one poll twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from amp.teaching.errors import DuplicateVoteError
from amp.teaching.poll_records import PollItem
from amp.teaching.poll_store import PollStore

VOTER = "phone-1"


def _items(n: int = 2) -> list[PollItem]:
    return [PollItem(surface=f"I saw her duck {i}", type="pp", lf0=f"lf zero {i}", lf1=f"lf one {i}",
                     paraphrase0="I saw the duck that she owns", paraphrase1="I saw her lower her head",
                     model_p_lf0=0.6) for i in range(n)]


@pytest.fixture
def store(tmp_path: Path) -> PollStore:
    return PollStore(tmp_path / "polls.sqlite")


def test_the_same_voter_answers_the_same_item_of_two_polls(store: PollStore) -> None:
    poll_a, poll_b = store.create_poll(_items(), "A"), store.create_poll(_items(), "B")
    assert poll_a.code != poll_b.code
    store.submit_vote(poll_a.code, 1, VOTER, 0, 3)
    store.submit_vote(poll_b.code, 1, VOTER, 1, 2)  # another poll: not a second vote
    assert [(v.item_index, v.voter_id, v.choice, v.confidence) for v in store.votes(poll_a.code)] == [(1, VOTER, 0, 3)]
    assert [(v.item_index, v.voter_id, v.choice, v.confidence) for v in store.votes(poll_b.code)] == [(1, VOTER, 1, 2)]
    assert store.results(poll_a.code).items[1].counts == (1, 0)
    assert store.results(poll_b.code).items[1].counts == (0, 1)


def test_the_same_voter_twice_on_one_item_of_one_poll_is_refused(store: PollStore) -> None:
    poll_a, poll_b = store.create_poll(_items(), "A"), store.create_poll(_items(), "B")
    store.submit_vote(poll_a.code, 1, VOTER, 0, 3)
    store.submit_vote(poll_b.code, 1, VOTER, 0, 3)
    for code in (poll_a.code, poll_b.code):
        with pytest.raises(DuplicateVoteError, match="already voted"):
            store.submit_vote(code, 1, VOTER, 1, 1)
        assert len(store.votes(code)) == 1  # the first answer stands
    store.submit_vote(poll_a.code, 0, VOTER, 1, 1)  # another item of the same poll: fine
    store.submit_vote(poll_a.code, 1, "phone-2", 1, 1)  # another voter on the same item: fine
    assert store.results(poll_a.code).items[1].counts == (1, 1)
