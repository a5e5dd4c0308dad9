"""The beam tree (amp/evaluation/beam_tree.py) and its figure (amp/reporting/beam_tree_plot.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.evaluation.beam_tree import BEAM_TREE_COLUMNS, BeamTree, beam_tree, beam_tree_of, compress, tree_rows
from amp.evaluation.errors import BeamTreeError
from amp.evaluation.matching import MATCHES
from amp.parser.core.errors import RequestTooLarge
from amp.parser.core.limits import MAX_BEAMS
from amp.parser.core.results import Beam, TokenStep
from amp.reporting.beam_table import MATCH_NAMES
from amp.reporting.beam_tree_plot import LABEL_COLORS, beam_tree_figure, node_rows
from amp.reporting.style import LF0_COLOR, LF1_COLOR, NEITHER_COLOR

#: Token id -> text of the hand-made beams.
TEXT = {1: " exists", 2: " x", 3: " .", 4: "\n", 5: " y", 6: "\n\n", 7: " AND"}
#: p(token | prefix) of every prefix (so identical prefixes have identical probabilities).
PROB = {(1,): 0.9, (1, 2): 0.8, (1, 2, 3): 0.6, (1, 2, 3, 4): 0.5, (1, 2, 5): 0.3, (1, 2, 5, 6): 0.7,
        (1, 2, 3, 7): 0.25}


def _steps(ids: tuple[int, ...], bump: float = 0.0) -> tuple[TokenStep, ...]:
    return tuple(TokenStep(token=TEXT[t], token_id=t, prob=PROB[ids[: i + 1]] + bump,
                           prob_grammar=min(1.0, 2 * PROB[ids[: i + 1]]))
                 for i, t in enumerate(ids))


def _beam(rank: int, ids: tuple[int, ...], *, finished: bool = True, score: float = -1.0) -> Beam:
    text = "".join(TEXT[t] for t in ids)
    steps = _steps(ids) if ids else ()
    return Beam(rank=rank, text=text.strip(), raw_text=text, token_ids=ids, tokens=tuple(TEXT[t] for t in ids),
                logprob=sum(s.logprob for s in steps) if ids else -math.inf, score=score, finished=finished,
                parses=finished)


#: Beams 1–5: a split after token 2 and after token 3, an unfinished beam 4 that is a prefix of the
#: others (it ends at an inner node), beam 5 identical to beam 2.
IDS = ((1, 2, 3, 4), (1, 2, 5, 6), (1, 2, 3, 7), (1, 2), (1, 2, 5, 6))
LABELS = ("lf0", "lf1", "neither", "unparseable", "lf1")


@pytest.fixture
def beams() -> list[Beam]:
    return [_beam(i, ids, finished=i != 3, score=-0.1 * (i + 1)) for i, ids in enumerate(IDS)]


@pytest.fixture
def tree(beams: list[Beam]) -> BeamTree:
    return beam_tree(beams, [_steps(b.token_ids) for b in beams], LABELS)


def _shape(tree: BeamTree) -> list[tuple]:
    return [(n.id, n.parent, n.start, n.depth, n.token_ids, n.ranks, n.children, tuple(e.rank for e in n.ends))
            for n in tree.nodes]


def test_full_tree_structure(tree: BeamTree) -> None:
    assert _shape(tree) == [
        (0, None, 0, 0, (), (1, 2, 3, 4, 5), (1,), ()),
        (1, 0, 1, 1, (1,), (1, 2, 3, 4, 5), (2,), ()),
        (2, 1, 2, 2, (2,), (1, 2, 3, 4, 5), (3, 6), (4,)),  # beams part after token 2; beam 4 ends here
        (3, 2, 3, 3, (3,), (1, 3), (4, 5), ()),  # beams 1 and 3 part after token 3
        (4, 3, 4, 4, (4,), (1,), (), (1,)),
        (5, 3, 4, 4, (7,), (3,), (), (3,)),
        (6, 2, 3, 3, (5,), (2, 5), (7,), ()),
        (7, 6, 4, 4, (6,), (2, 5), (), (2, 5)),  # identical beams 2 and 5 end at one node
    ]
    assert [n.id for n in tree.splits] == [2, 3]
    assert [n.id for n in tree.leaves] == [4, 5, 7]
    assert [n.label for n in tree.nodes] == [None, None, "unparseable", None, "lf0", "neither", None, "lf1"]
    assert [(e.rank, e.label, e.score, e.finished) for e in tree.nodes[2].ends] == [(4, "unparseable", -0.4, False)]
    assert [(e.rank, e.label, e.score) for e in tree.nodes[7].ends] == [(2, "lf1", -0.2), (5, "lf1", -0.5)]
    assert tree.nodes[7].tokens == ("\n\n",) and tree.nodes[7].text == "\n\n"
    assert (tree.n_beams, tree.compressed, tree.max_depth) == (5, False, 4)
    assert BeamTree.from_dict(tree.to_dict()) == tree


def test_probabilities_and_cumulative_logprob(tree: BeamTree, beams: list[Beam]) -> None:
    for node in tree.nodes[1:]:  # p(token | prefix) of the node's own prefix
        prefix, here = [], node
        while here.parent is not None:
            prefix.insert(0, here.token_ids[0])
            here = tree.nodes[here.parent]
        assert node.probs == (PROB[tuple(prefix)],)
        assert node.probs_grammar == (min(1.0, 2 * PROB[tuple(prefix)]),)
    assert tree.nodes[6].probs == (0.3,) and tree.nodes[6].probs_grammar == (0.6,)
    assert tree.root.prob == 1.0 and math.isnan(tree.root.min_prob) and tree.root.cum_logprob == 0.0
    for rank, beam in enumerate(beams, start=1):
        end = tree.path(rank)[-1]
        steps = _steps(beam.token_ids)
        assert end.cum_logprob == sum(s.logprob for s in steps) == beam.logprob
        assert end.cum_logprob_grammar == sum(s.logprob_grammar for s in steps)


def test_shared_prefix_probabilities_come_from_the_first_beam(beams: list[Beam]) -> None:
    steps = [_steps(b.token_ids, bump=0.01 * i) for i, b in enumerate(beams)]  # each pass a little different
    tree = beam_tree(beams, steps, LABELS)
    assert tree.nodes[1].probs == (0.9,)  # beam 1's, not beam 2's 0.91
    assert tree.nodes[6].probs == pytest.approx((0.31,))  # first through it: beam 2
    assert tree.nodes[7].cum_logprob == pytest.approx(math.log(0.9) + math.log(0.8) + math.log(0.31) + math.log(0.71))


def test_paths_spell_every_beam(tree: BeamTree, beams: list[Beam]) -> None:
    for rank, beam in enumerate(beams, start=1):
        path = tree.path(rank)
        assert path[0] is tree.root
        assert tuple(t for n in path for t in n.token_ids) == beam.token_ids
        assert "".join(n.text for n in path) == beam.raw_text
        assert all(rank in n.ranks for n in path)
    with pytest.raises(BeamTreeError, match="beam 6 is not in this tree of 5 beams"):
        tree.path(6)


def test_compression_merges_single_child_chains_and_keeps_splits(tree: BeamTree) -> None:
    small = compress(tree)
    assert small.compressed and compress(small) is small
    assert _shape(small) == [
        (0, None, 0, 0, (), (1, 2, 3, 4, 5), (1,), ()),
        (1, 0, 1, 2, (1, 2), (1, 2, 3, 4, 5), (2, 5), (4,)),  # " exists x": then the split
        (2, 1, 3, 3, (3,), (1, 3), (3, 4), ()),
        (3, 2, 4, 4, (4,), (1,), (), (1,)),
        (4, 2, 4, 4, (7,), (3,), (), (3,)),
        (5, 1, 3, 4, (5, 6), (2, 5), (), (2, 5)),  # " y\n\n" merged
    ]
    seg = small.nodes[5]
    assert seg.text == " y\n\n" and seg.probs == (0.3, 0.7)
    assert seg.prob == pytest.approx(0.21) and seg.min_prob == 0.3 and seg.min_prob_grammar == 0.6
    assert seg.cum_logprob == tree.nodes[7].cum_logprob
    assert [n.id for n in small.splits] == [1, 2]
    for rank in range(1, 6):
        assert tuple(t for n in small.path(rank) for t in n.token_ids) == IDS[rank - 1]


def test_a_long_shared_prefix_compresses_to_a_handful_of_segments() -> None:
    shared = tuple(range(100, 150))  # 50 shared tokens, then 5 beams of 10 tokens each
    ids = [shared + tuple(range(200 + 10 * b, 210 + 10 * b)) for b in range(5)]
    probs = {t: 0.5 + (t % 7) / 20 for t in range(100, 260)}
    beams = [Beam(rank=i, text="x", raw_text="x", token_ids=s, tokens=tuple(f"t{t}" for t in s), logprob=-1.0,
                  score=-1.0, finished=True, parses=True) for i, s in enumerate(ids)]
    steps = [tuple(TokenStep(token=f"t{t}", token_id=t, prob=probs[t], prob_grammar=probs[t]) for t in s) for s in ids]
    full = beam_tree(beams, steps, ["lf0", "lf1", "neither", "lf0", "lf1"])
    assert len(full.nodes) == 1 + 50 + 5 * 10
    small = compress(full)
    assert len(small.nodes) == 7
    trunk = small.nodes[1]
    assert (trunk.start, trunk.depth, trunk.children) == (1, 50, (2, 3, 4, 5, 6))
    assert trunk.prob == pytest.approx(math.prod(probs[t] for t in shared))
    assert trunk.min_prob == min(probs[t] for t in shared)
    assert trunk.text == "".join(f"t{t}" for t in shared)
    assert [(n.start, n.depth, n.label) for n in small.nodes[2:]] == [
        (51, 60, "lf0"), (51, 60, "lf1"), (51, 60, "neither"), (51, 60, "lf0"), (51, 60, "lf1")]


def test_a_beam_without_tokens_ends_at_the_root() -> None:
    empty = Beam(rank=1, text="", raw_text="", token_ids=(), tokens=(), logprob=-math.inf, score=-math.inf,
                 finished=False, parses=False)
    tree = beam_tree([_beam(0, (1, 2)), empty], [_steps((1, 2)), ()], ["unparseable", "unparseable"])
    assert [e.rank for e in tree.root.ends] == [2] and tree.root.ranks == (1, 2)
    assert compress(tree).root.ends == tree.root.ends


def test_bad_input_is_a_typed_error(beams: list[Beam]) -> None:
    steps = [_steps(b.token_ids) for b in beams]
    with pytest.raises(BeamTreeError, match="5 beams, 4 step lists and 5 labels"):
        beam_tree(beams, steps[:4], LABELS)
    with pytest.raises(BeamTreeError, match="beam 2: 3 token steps for 4 tokens"):
        beam_tree(beams, [steps[0], steps[1][:3], *steps[2:]], LABELS)
    with pytest.raises(BeamTreeError, match="beam 1, token 4: the step is of token id 7, the beam has 4"):
        beam_tree(beams, [steps[2], *steps[1:]], LABELS)
    with pytest.raises(BeamTreeError, match="label 'LF0' is none of"):
        beam_tree(beams, steps, ["LF0", *LABELS[1:]])
    many = [beams[0]] * (MAX_BEAMS + 1)
    with pytest.raises(RequestTooLarge, match=f"at most {MAX_BEAMS} beams, not {MAX_BEAMS + 1}"):
        beam_tree(many, [steps[0]] * len(many), ["lf0"] * len(many))


def test_rows_for_csv(tree: BeamTree) -> None:
    rows = tree_rows(compress(tree))
    assert all(tuple(r) == BEAM_TREE_COLUMNS for r in rows)
    assert rows[0]["parent"] is None and rows[0]["min_prob"] is None and rows[0]["prob"] == 1.0
    assert rows[1] == {
        "node": 1, "parent": 0, "start": 1, "depth": 2, "text": " exists x", "tokens": 2,
        "prob": pytest.approx(0.72), "prob_grammar": 1.0, "min_prob": 0.8, "min_prob_grammar": 1.0,
        "cum_logprob": pytest.approx(math.log(0.72)), "cum_logprob_grammar": 0.0, "beams": "1 2 3 4 5",
        "split": True, "ends": "4", "label": "unparseable", "score": pytest.approx(-0.4)}
    assert (rows[5]["ends"], rows[5]["label"], rows[5]["score"]) == ("2 5", "lf1", pytest.approx(-0.2))
    assert (rows[2]["ends"], rows[2]["label"], rows[2]["score"], rows[2]["split"]) == ("", "", None, True)


# -- the figure -------------------------------------------------------------------------------------


def _traces(fig, kind: str) -> list[dict]:
    return [t for t in fig.to_dict()["data"] if t["meta"]["kind"] == kind]


def test_figure_marks_ends_by_label_with_the_project_colours(tree: BeamTree) -> None:
    fig = beam_tree_figure(compress(tree))
    ends = _traces(fig, "end")
    assert [t["meta"]["label"] for t in ends] == ["lf0", "lf1", "neither", "unparseable"]  # MATCHES order
    assert [t["marker"]["color"] for t in ends] == [LF0_COLOR, LF1_COLOR, NEITHER_COLOR, NEITHER_COLOR]
    assert [t["name"] for t in ends] == [MATCH_NAMES[t["meta"]["label"]] for t in ends]
    assert [list(t["customdata"]) for t in ends] == [[3], [5], [4], [1]]  # node ids
    assert [list(t["text"]) for t in ends] == [["beam 1 · LF0"], ["beam 2 = 5 · LF1"], ["beam 3 · neither reading"],
                                               ["beam 4 · unparseable"]]
    assert ends[-1]["marker"]["symbol"] == "x" and ends[0]["marker"]["symbol"] == "circle"
    (split,) = _traces(fig, "split")
    assert list(split["customdata"]) == [1, 2] and split["marker"]["symbol"] == "diamond"
    assert split["marker"]["color"] == pytest.approx([0.72, 0.6])  # the segments' probabilities
    assert LABEL_COLORS["both"] not in (LF0_COLOR, LF1_COLOR, NEITHER_COLOR)


def test_figure_layout_rows_and_edges(tree: BeamTree) -> None:
    small = compress(tree)
    # ends in depth-first order: beam 4 (inner node 1) row 0, beam 1 row 1, beam 3 row 2, beams 2=5 row 3
    assert node_rows(small) == [1.5, 1.5, 1.5, 1.0, 2.0, 3.0]
    fig = beam_tree_figure(small)
    (edges,) = _traces(fig, "edges")
    assert list(edges["x"][:4]) == [0, 0, 2, None] and list(edges["x"][4:8]) == [2, 2, 3, None]
    assert list(edges["y"][16:20]) == [1.5, 3.0, 3.0, None]  # segment 5 hangs from segment 1
    assert fig.layout.meta == {"compressed": True, "prob": "raw", "rows": 4}
    assert fig.layout.yaxis.range == (3.6, -0.8)  # best beam on top
    (texts,) = _traces(fig, "texts")
    assert "exists x" in texts["text"] and "y⏎⏎" in texts["text"]


def test_hover_shows_tokens_and_probabilities(tree: BeamTree) -> None:
    (split,) = _traces(beam_tree_figure(compress(tree)), "split")
    hover = split["hovertext"][0]
    assert "tokens 1–2: <b>' exists x'</b>" in hover and "p of all 2 (raw model) = 0.720 · grammar 1.000" in hover
    assert "1: ' exists'  p = 0.900" in hover and "beams through it: 1, 2, 3, 4, 5" in hover
    assert "split</b>: the beams part into 2 branches" in hover and "beam 4 ends</b>: unparseable" in hover
    assert "cut off by the length limit" in hover
    (node,) = [t for t in _traces(beam_tree_figure(tree, prob="grammar"), "node") if t["customdata"]]
    first = node["hovertext"][0]
    assert first.startswith("token 1: <b>' exists'</b><br>p (renormalised over the grammar) = 1.000 · raw model 0.900")


def test_figure_switches_probability_kind_and_handles_no_tokens(tree: BeamTree) -> None:
    (split,) = _traces(beam_tree_figure(tree, prob="grammar"), "split")
    assert split["marker"]["color"] == pytest.approx([1.0, 1.0])
    assert "renormalised over the grammar" in beam_tree_figure(tree, prob="grammar").layout.title.text
    with pytest.raises(ValueError, match="prob must be"):
        beam_tree_figure(tree, prob="log")  # type: ignore[arg-type]
    empty = beam_tree([], [], [])
    assert "No beam has any token" in beam_tree_figure(empty).layout.title.text


@pytest.mark.parametrize("n", [1, 3, 10])
def test_figure_is_readable_for_one_to_ten_beams(n: int) -> None:
    ids = [(1, 2, 100 + b, 4) for b in range(n)]
    beams = [Beam(rank=b, text="x", raw_text="x", token_ids=s, tokens=(" a", " b", f" c{b}", "\n"), logprob=-1.0,
                  score=-1.0, finished=True, parses=True) for b, s in enumerate(ids)]
    steps = [tuple(TokenStep(token=t, token_id=i, prob=0.5, prob_grammar=0.5)
                   for t, i in zip(b.tokens, b.token_ids, strict=True)) for b in beams]
    labels = [MATCHES[b % 4] for b in range(n)]
    fig = beam_tree_figure(compress(beam_tree(beams, steps, labels)))
    ends = _traces(fig, "end")
    assert sum(len(t["customdata"]) for t in ends) == n
    ys = sorted(y for t in ends for y in t["y"])
    assert ys == list(range(n))  # one row per beam, none on top of another
    assert fig.layout.height == max(340, 170 + 56 * n)


# -- through a real (tiny) model --------------------------------------------------------------------


def test_beam_tree_of_a_tiny_model_parse(saved_tiny_model: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from amp.evaluation.inspection import inspect
    from amp.parser.parser import Parser

    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "amp-cache"))
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "c"))
    prompt = "Human: the boy saw a girl\nComputer:"
    ins = inspect(parser, prompt, "exists x . boy(x)", "exists x . girl(x)", beams=4, max_new_tokens=12)
    tree = beam_tree_of(parser, ins)
    assert tree.n_beams == len(ins.parse.beams) == 4
    for rank, beam in enumerate(ins.parse.beams, start=1):
        path = tree.path(rank)
        assert tuple(t for n in path for t in n.token_ids) == beam.token_ids
        assert path[-1].label == ins.matches[rank - 1]
        assert path[-1].cum_logprob == pytest.approx(beam.logprob, abs=1e-3)
        steps = parser.beam_steps(prompt, beam, fmt=ins.fmt, constrained=ins.parse.constrained)
        assert path[-1].cum_logprob == pytest.approx(sum(s.logprob for s in steps), abs=1e-4)
    small = compress(tree)
    for rank, beam in enumerate(ins.parse.beams, start=1):
        assert tuple(t for n in small.path(rank) for t in n.token_ids) == beam.token_ids
    assert len(small.nodes) <= 2 * len(ins.parse.beams)  # a trie of k paths has at most 2k - 1 segments + root
