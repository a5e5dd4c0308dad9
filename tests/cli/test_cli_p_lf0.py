"""``amp score``'s three P(LF0)s in words (issue #40 point 2): the verdict's first, then the paper's and
the total; a shared least likely token is named where it pins the paper's measure at 0.5."""

from __future__ import annotations

import math

from amp.cli.score import _as_json, format_p_lf0, format_scores
from amp.parser.core.results import ForcedScore, PairScore, TokenStep
from amp.parser.search.scoring import pair_score


def _forced(steps: list[tuple[str, int, float]]) -> ForcedScore:
    probs = [p for _, _, p in steps]
    total = sum(math.log(p) for p in probs)
    return ForcedScore(lf="".join(t for t, _, _ in steps), token_ids=tuple(i for _, i, _ in steps),
                       tokens=tuple(t for t, _, _ in steps),
                       steps=tuple(TokenStep(token=t, token_id=i, prob=p, prob_grammar=p) for t, i, p in steps),
                       sum_logprob=total, mean_logprob=total / len(steps), sum_logprob_grammar=total,
                       min_prob=min(probs), min_prob_grammar=min(probs))


HEAD = [(" exists", 1, 0.9), (" chicken", 2, 0.0018), ("(x)", 3, 0.9)]
CHICKEN: PairScore = pair_score(_forced([*HEAD, (" eat", 4, 0.2), ("\n", 9, 0.9)]),
                                _forced([*HEAD, (" ready", 5, 0.05), ("\n", 9, 0.8)]))


def test_the_parted_measure_comes_first_and_the_shared_token_is_named() -> None:
    total = CHICKEN.p_lf0_total
    assert format_p_lf0(CHICKEN) == [
        "P(LF0) = 0.8000  (minimum token probabilities from token 3, where the readings part, to the end)",
        "P(LF0), min-token (paper) = 0.5000  (minimum token probabilities over every token; both readings' is "
        "the token “chicken”, which they share)",
        f"P(LF0), total prob. = {total:.4f}"]
    lines = format_scores([CHICKEN.lf0, CHICKEN.lf1], CHICKEN)
    assert lines[-4:-1] == format_p_lf0(CHICKEN)
    assert lines[-1] == ("verdict: Forced to write each reading, it scores LF0 higher where the readings part: "
                         "P(LF0) = 0.80. The paper's P(LF0) is 0.50 only because both readings' least likely token "
                         "is “chicken”, which they share.")


def test_json_has_the_parted_value_and_the_shared_token() -> None:
    out = _as_json(([CHICKEN.lf0, CHICKEN.lf1], CHICKEN))
    assert out["pair"]["p_lf0"] == 0.5 and out["pair"]["p_lf0_parted"] == CHICKEN.p_lf0_parted
    assert (out["pair"]["parting_index"], out["pair"]["shared_minimum"]) == (3, "chicken")
    assert out["verdict"]["measure"] == "p_lf0_parted" and out["verdict"]["scores_higher"] == "lf0"
    same = _as_json(([CHICKEN.lf0, CHICKEN.lf0], pair_score(CHICKEN.lf0, CHICKEN.lf0)))
    assert (same["pair"]["parting_index"], same["pair"]["shared_minimum"]) == (None, None)
    assert format_p_lf0(pair_score(CHICKEN.lf0, CHICKEN.lf0))[0] == "P(LF0) = 0.5000  (the two LFs have the same tokens)"
