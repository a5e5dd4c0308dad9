"""Issue #26, done when: "I saw her duck" with teacher-spelled readings (odd letters, odd
quantifier order) parses and scores as the prompts' spelling does — the same P(LF0), divergence
point, semantic divergence and reveal (docs/paper-notes.md §16).  A tiny model stands in for the
default one (the claim is about what is scored, not about which model scores it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.evaluation.inspection import inspect
from amp.evaluation.semantic_divergence import inspection_semantic
from amp.parser.parser import Parser
from amp.teaching import lesson
from amp.teaching.own_library import OwnLibrary
from amp.teaching.own_sentences import OwnSentence

# As the prompts spell them (x, y, z / a, e, i in the templates' order) ...
DUCK0 = "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)"
DUCK1 = "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"
# ... and as a teacher typed them: other letters, multi-letter names, another quantifier order.
TYPED0 = "exists q . exists b . saw(b) AND agent(b, Me) AND duck(q) AND agent(q, Her) AND patient(b, q)"
TYPED1 = "exists e . exists bird . duck(bird) AND have(bird, Her) AND saw(e) AND agent(e, Me) AND patient(e, bird)"
PARAPHRASES = ("she lowered her head and I saw it", "I saw the bird she owns")


def _duck(lf0: str, lf1: str) -> OwnSentence:
    return OwnSentence("I saw her duck", lf0, lf1, *PARAPHRASES, name0="she ducked", name1="her bird")


def test_a_teachers_spelling_parses_and_scores_as_the_prompts_spelling(saved_tiny_model: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))
    seen = []
    for lf0, lf1 in ((DUCK0, DUCK1), (TYPED0, TYPED1)):
        own = _duck(lf0, lf1)
        assert own.typed_readings == (lf0, lf1)  # stored as typed
        prompt = own.prompt("mixed", k=2)
        ins = inspect(parser, prompt.render(), *own.readings, words=prompt.words, beams=2, max_new_tokens=40)
        reveal = lesson.model_reading(PARAPHRASES, ins.pair.p_lf0)
        seen.append((prompt.render(), ins.lf0, ins.lf1, ins.pair.p_lf0, ins.divergence, ins.alternative,
                     ins.predicted_match, inspection_semantic(ins), reveal))
    assert seen[0][1:3] == (DUCK0, DUCK1)
    assert seen[1] == seen[0]
    # Through the library, the lesson's P(LF0) of the typed sentence is the prompts' spelling's.
    library = tmp_path / "own.json"
    monkeypatch.setenv("AMP_OWN_SENTENCES", str(library))
    OwnLibrary(library).add(_duck(TYPED0, TYPED1))
    p_typed = lesson.model_p_lf0(parser, "I saw her duck")
    default = _duck(DUCK0, DUCK1).prompt("mixed")
    assert p_typed == pytest.approx(parser.score_pair(default.render(), DUCK0, DUCK1, words=default.words).p_lf0)
    # A literal spelling is other tokens (odd letters are outside the decoding grammar altogether;
    # a swapped prefix is not): its score is not the one the class is shown.
    swapped = DUCK0.replace("exists a . exists e", "exists e . exists a")
    literal = parser.score_pair(default.render(), swapped, DUCK1, words=default.words)
    assert literal.lf0.lf == swapped
    convention = parser.score_pair(default.render(), DUCK0, DUCK1, words=default.words)
    assert [s.token for s in literal.lf0.steps] != [s.token for s in convention.lf0.steps]


@pytest.mark.slow
def test_on_the_default_model_the_teachers_spelling_is_the_prompts(default_lm, tmp_path: Path) -> None:
    """The same on the embedded Gemma: P(LF0), the divergence and the reveal of the typed
    spelling are those of the prompts' spelling (the second inspection is the first's cache hit)."""
    parser = Parser("default", device="cpu", dtype="float32", cache=ResultCache(tmp_path / "results"))
    seen = []
    for lf0, lf1 in ((DUCK0, DUCK1), (TYPED0, TYPED1)):
        own = _duck(lf0, lf1)
        prompt = own.prompt("mixed", k=4)
        ins = inspect(parser, prompt.render(), *own.readings, words=prompt.words, beams=2)
        seen.append((ins.pair.p_lf0, ins.divergence, ins.predicted_match, inspection_semantic(ins),
                     lesson.model_reading(PARAPHRASES, ins.pair.p_lf0)))
    assert seen[1] == seen[0] and seen[0][0] is not None
