"""The beams of one constrained beam search as a tree of shared prefixes (issue #15 point 3).

Beam search (docs/paper-notes.md §12) keeps ``k`` hypotheses that mostly share their opening tokens and part
where the model hesitates: for an ambiguous sentence, often exactly where the two readings part
(paper Fig. 4).  :func:`beam_tree` puts the beams' token-id sequences into a prefix tree (a trie):
each node is one token, reached from its parent by that token; the beams through a node share the
prefix it ends.  :func:`compress` merges chains of single-child nodes into one segment, so a
60-token LF with 5 beams reads as a handful of segments whose ends are where the beams part.

**Probabilities.**  A node's probability is ``p(token | prompt, prefix)``, raw (softmax over the
vocabulary) and renormalised over the grammar (:class:`~amp.parser.core.results.TokenStep`).  Beams
through one node share its whole prefix, so their forced passes give it the same probability
(up to floating-point noise of separate passes): the tree takes it **from the first beam (best
rank) through the node**.  ``cum_logprob`` is the natural-log probability of the node's whole
prefix, the sum of the log-probabilities from the root; at a beam's end it is the sum of that
beam's step log-probabilities (its :attr:`~amp.parser.core.results.Beam.logprob`).

**Ranks** are 1-based, as in the beam table (:func:`amp.reporting.beam_table.beam_table`): rank
``r`` is ``beams[r - 1]`` and its label ``labels[r - 1]``.  A tree holds at most
:data:`~amp.parser.core.limits.MAX_BEAMS` beams (one parse); nodes are in depth-first pre-order with
children ordered by their best rank, so the best beam's path comes first and ``nodes[i].id == i``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amp.evaluation.errors import BeamTreeError
from amp.evaluation.matching import MATCHES
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core.errors import RequestTooLarge
from amp.parser.core.limits import MAX_BEAMS
from amp.parser.core.results import Beam, TokenStep
from amp.records import JsonFloat, JsonRecord

if TYPE_CHECKING:
    from amp.evaluation.inspection import Inspection
    from amp.parser.parser import Parser

__all__ = ["BEAM_TREE_COLUMNS", "BeamEnd", "BeamTree", "BeamTreeError", "TreeNode", "beam_tree", "beam_tree_of",
           "compress", "tree_rows"]


@dataclass(frozen=True)
class BeamEnd(JsonRecord):
    """A beam that ends at a node: its rank (1 = best), gold label (:data:`~amp.evaluation.matching.MATCHES`),
    GNMT score, summed raw log-probability, whether it finished, and its LF text."""

    rank: int
    label: str
    score: JsonFloat
    logprob: JsonFloat
    finished: bool
    text: str


@dataclass(frozen=True)
class TreeNode(JsonRecord):
    """One node of a beam tree: one token (full tree) or a chain of tokens (compressed tree).

    ``start``/``depth`` are the positions (1-based) of its first and last token in the LF; the
    root has no token and ``start = depth = 0``.  ``probs``/``probs_grammar`` hold each token's
    probability given everything before it; ``cum_logprob``/``cum_logprob_grammar`` the log-probability
    of the whole prefix up to its last token.  ``ranks``: the beams through it; ``ends``: the beams
    that end at it (a leaf, or an inner node where a shorter beam stops); ``children``: node ids.
    """

    id: int
    parent: int | None
    start: int
    depth: int
    token_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    probs: tuple[JsonFloat, ...]
    probs_grammar: tuple[JsonFloat, ...]
    cum_logprob: JsonFloat
    cum_logprob_grammar: JsonFloat
    ranks: tuple[int, ...]
    children: tuple[int, ...] = ()
    ends: tuple[BeamEnd, ...] = ()

    @property
    def text(self) -> str:
        """Its tokens joined (as generated: the LF's leading space and final newline included)."""
        return "".join(self.tokens)

    @property
    def prob(self) -> float:
        """The probability of its tokens given the parent's prefix: the product of ``probs`` (1 for the root)."""
        return math.prod(self.probs)

    @property
    def prob_grammar(self) -> float:
        return math.prod(self.probs_grammar)

    @property
    def min_prob(self) -> float:
        """Its least likely token's probability (the paper's confidence, §2); NaN for the root."""
        return min(self.probs) if self.probs else math.nan

    @property
    def min_prob_grammar(self) -> float:
        return min(self.probs_grammar) if self.probs_grammar else math.nan

    @property
    def is_split(self) -> bool:
        """Whether beams part here (more than one child)."""
        return len(self.children) > 1

    @property
    def label(self) -> str | None:
        """The label of the best beam ending here (None where no beam ends)."""
        return self.ends[0].label if self.ends else None


@dataclass(frozen=True)
class BeamTree(JsonRecord):
    """The prefix tree of one parse's beams (``nodes[0]`` the root, ``nodes[i].id == i``)."""

    nodes: tuple[TreeNode, ...]
    n_beams: int
    compressed: bool = False

    @property
    def root(self) -> TreeNode:
        return self.nodes[0]

    @property
    def leaves(self) -> list[TreeNode]:
        return [n for n in self.nodes if not n.children]

    @property
    def splits(self) -> list[TreeNode]:
        return [n for n in self.nodes if n.is_split]

    @property
    def max_depth(self) -> int:
        return max(n.depth for n in self.nodes)

    def path(self, rank: int) -> list[TreeNode]:
        """The nodes from the root to where beam ``rank`` ends."""
        end = next((n for n in self.nodes if any(e.rank == rank for e in n.ends)), None)
        if end is None:
            raise BeamTreeError(f"beam {rank} is not in this tree of {self.n_beams} beams")
        out = [end]
        while out[-1].parent is not None:
            out.append(self.nodes[out[-1].parent])
        return out[::-1]


def _check(beams: Sequence[Beam], steps_per_beam: Sequence[Sequence[TokenStep]], labels: Sequence[str]) -> None:
    if len(beams) > MAX_BEAMS:
        raise RequestTooLarge(f"a beam tree holds at most {MAX_BEAMS} beams, not {len(beams)}")
    if not len(beams) == len(steps_per_beam) == len(labels):
        raise BeamTreeError(f"{len(beams)} beams, {len(steps_per_beam)} step lists and {len(labels)} labels: "
                            "give one of each per beam")
    for rank, (beam, steps, label) in enumerate(zip(beams, steps_per_beam, labels, strict=True), start=1):
        if label not in MATCHES:
            raise BeamTreeError(f"beam {rank}: label {label!r} is none of {', '.join(MATCHES)}")
        if len(steps) != len(beam.token_ids):
            raise BeamTreeError(f"beam {rank}: {len(steps)} token steps for {len(beam.token_ids)} tokens")
        for i, (step, token_id) in enumerate(zip(steps, beam.token_ids, strict=True), start=1):
            if step.token_id != token_id:
                raise BeamTreeError(f"beam {rank}, token {i}: the step is of token id {step.token_id}, "
                                    f"the beam has {token_id}")


def _trie(beams: Sequence[Beam], steps_per_beam: Sequence[Sequence[TokenStep]]) -> list[dict[str, Any]]:
    """Mutable trie nodes (index 0 the root) in insertion order; each node's values come from its first beam."""
    nodes: list[dict[str, Any]] = [{"kids": {}, "ranks": [], "ends": [], "depth": 0, "cum": 0.0, "cum_g": 0.0}]
    for rank, (beam, steps) in enumerate(zip(beams, steps_per_beam, strict=True), start=1):
        tokens = beam.tokens if len(beam.tokens) == len(beam.token_ids) else tuple(s.token for s in steps)
        here = 0
        nodes[0]["ranks"].append(rank)
        for token_id, token, step in zip(beam.token_ids, tokens, steps, strict=True):
            kid = nodes[here]["kids"].get(token_id)
            if kid is None:
                parent = nodes[here]
                kid = len(nodes)
                parent["kids"][token_id] = kid
                nodes.append({"kids": {}, "ranks": [], "ends": [], "parent": here, "depth": parent["depth"] + 1,
                              "id": token_id, "token": token, "p": step.prob, "pg": step.prob_grammar,
                              "cum": parent["cum"] + step.logprob, "cum_g": parent["cum_g"] + step.logprob_grammar})
            here = kid
            nodes[here]["ranks"].append(rank)
        nodes[here]["ends"].append(rank)
    return nodes


def beam_tree(beams: Sequence[Beam], steps_per_beam: Sequence[Sequence[TokenStep]],
              labels: Sequence[str]) -> BeamTree:
    """The prefix tree of ``beams`` (rank order), one node per token (the full tree).

    ``steps_per_beam[i]`` are beam ``i``'s token steps (:meth:`amp.parser.Parser.beam_steps`),
    one per token id; ``labels[i]`` its :func:`~amp.evaluation.matching.match_lf` label.  Identical
    beams end at one node (both listed in its ``ends``); a beam that is a prefix of another ends
    at an inner node; a beam without tokens ends at the root.  Raises :class:`BeamTreeError` when
    the three do not fit together, :class:`~amp.parser.core.errors.RequestTooLarge` over ``MAX_BEAMS``.
    """
    _check(beams, steps_per_beam, labels)
    trie = _trie(beams, steps_per_beam)
    order: list[int] = []  # depth-first pre-order, children by first (best) beam; no recursion (1024 tokens)
    stack = [0]
    while stack:
        here = stack.pop()
        order.append(here)
        stack.extend(reversed(list(trie[here]["kids"].values())))
    new_id = {old: new for new, old in enumerate(order)}
    nodes = []
    for old in order:
        t = trie[old]
        ends = tuple(BeamEnd(rank=r, label=labels[r - 1], score=beams[r - 1].score, logprob=beams[r - 1].logprob,
                             finished=beams[r - 1].finished, text=beams[r - 1].text) for r in t["ends"])
        root = old == 0
        nodes.append(TreeNode(
            id=new_id[old], parent=None if root else new_id[t["parent"]], start=t["depth"], depth=t["depth"],
            token_ids=() if root else (t["id"],), tokens=() if root else (t["token"],),
            probs=() if root else (t["p"],), probs_grammar=() if root else (t["pg"],),
            cum_logprob=t["cum"], cum_logprob_grammar=t["cum_g"], ranks=tuple(t["ranks"]),
            children=tuple(new_id[k] for k in t["kids"].values()), ends=ends))
    return BeamTree(nodes=tuple(nodes), n_beams=len(beams))


def compress(tree: BeamTree) -> BeamTree:
    """``tree`` with every chain of single-child nodes merged into one segment.

    A segment starts at a child of the root, of a split node or of a node where a beam ends, and
    runs on while its node has exactly one child and no beam ends there; its tokens and
    probabilities are the chain's, so its ``prob`` is their product and ``min_prob`` their minimum.
    Split points, beam ends, ranks and cumulative log-probabilities are kept; ids are renumbered
    in the same order.
    """
    if tree.compressed:
        return tree
    segment_of: dict[int, int] = {0: 0}  # full node id -> segment id
    chains: list[list[TreeNode]] = [[tree.root]]
    for node in tree.nodes[1:]:  # pre-order: a parent's segment exists before its children
        parent = tree.nodes[node.parent] if node.parent is not None else tree.root
        if parent.id != 0 and len(parent.children) == 1 and not parent.ends:
            segment_of[node.id] = segment_of[parent.id]
            chains[segment_of[node.id]].append(node)
        else:
            segment_of[node.id] = len(chains)
            chains.append([node])
    segments = []
    for sid, chain in enumerate(chains):
        first, last = chain[0], chain[-1]
        segments.append(TreeNode(
            id=sid, parent=None if first.parent is None else segment_of[first.parent], start=first.start,
            depth=last.depth, token_ids=tuple(t for n in chain for t in n.token_ids),
            tokens=tuple(t for n in chain for t in n.tokens), probs=tuple(p for n in chain for p in n.probs),
            probs_grammar=tuple(p for n in chain for p in n.probs_grammar), cum_logprob=last.cum_logprob,
            cum_logprob_grammar=last.cum_logprob_grammar, ranks=first.ranks,
            children=tuple(segment_of[c] for c in last.children), ends=last.ends))
    return BeamTree(nodes=tuple(segments), n_beams=tree.n_beams, compressed=True)


#: The columns of :func:`tree_rows` (one row per node or segment).
BEAM_TREE_COLUMNS = ("node", "parent", "start", "depth", "text", "tokens", "prob", "prob_grammar", "min_prob",
                     "min_prob_grammar", "cum_logprob", "cum_logprob_grammar", "beams", "split", "ends", "label",
                     "score")


def _nan_none(x: float) -> float | None:
    return None if math.isnan(x) else x


def tree_rows(tree: BeamTree) -> list[dict[str, Any]]:
    """One plain row per node for a CSV (:data:`BEAM_TREE_COLUMNS`): ``beams``/``ends`` are ranks
    joined by spaces, ``label`` the labels of the beams ending there (distinct, best rank first),
    ``score`` the best ending beam's GNMT score; the root's ``parent``, ``min_prob`` and the ending
    columns of inner nodes are empty."""
    rows = []
    for n in tree.nodes:
        labels = list(dict.fromkeys(e.label for e in n.ends))
        rows.append({
            "node": n.id, "parent": n.parent, "start": n.start, "depth": n.depth, "text": n.text,
            "tokens": len(n.token_ids), "prob": n.prob, "prob_grammar": n.prob_grammar,
            "min_prob": _nan_none(n.min_prob), "min_prob_grammar": _nan_none(n.min_prob_grammar),
            "cum_logprob": n.cum_logprob, "cum_logprob_grammar": n.cum_logprob_grammar,
            "beams": " ".join(map(str, n.ranks)), "split": n.is_split,
            "ends": " ".join(str(e.rank) for e in n.ends), "label": " ".join(labels),
            "score": n.ends[0].score if n.ends else None,
        })
    return rows


def beam_tree_of(parser: Parser, inspection: Inspection, *, words: OwnWords = NO_WORDS) -> BeamTree:
    """The (full) beam tree of an inspection's parse, its beams labelled by ``inspection.matches``.

    Each beam's steps come from :meth:`~amp.parser.Parser.beam_steps` (one forced pass per beam,
    cached by the parser; the top beam's are the inspection's own).  ``words``: the own words the
    parse used (part of the steps' cache key).
    """
    parse = inspection.parse
    steps: list[Sequence[TokenStep]] = []
    for i, beam in enumerate(parse.beams):
        if i == 0 and inspection.predicted == beam and inspection.predicted_steps:
            steps.append(inspection.predicted_steps)
        else:
            steps.append(parser.beam_steps(inspection.prompt, beam, fmt=inspection.fmt,
                                           constrained=parse.constrained, words=words))
    return beam_tree(parse.beams, steps, inspection.matches)
