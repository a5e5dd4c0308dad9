"""The beam tree (:mod:`amp.evaluation.beam_tree`) as a plotly node-link figure (issue #15 point 3).

x is the token position in the LF (a node sits at its last token; a branch starts where the beams
part), y the order of the beams' ends, best beam on top.  Edges are elbows: down from the parent
at its position, then along to the node.  Each branch shows its text (ellipsised to the room it
has; the hover keeps everything), each node's marker is coloured by its probability given the
prefix (Viridis, 0–1, raw or renormalised over the grammar), a diamond marks a split, and the end
of each beam is a larger marker in its label's colour (LF0 blue, LF1 orange,
:mod:`amp.reporting.style`; LF0 = LF1 reddish purple; neither reading grey, unparseable a grey
cross) with ``beam r · label`` beside it.  Hover any node for its tokens, their probabilities, the
prefix's log-probability and the beams through it.  Every trace's ``meta`` says what it draws
(``{"kind": "end", "label": "lf0"}``, ``"split"``, ``"node"``, …), so tests read the spec.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from amp.evaluation.beam_tree import BeamTree, TreeNode
from amp.evaluation.matching import MATCHES, Match
from amp.reporting.beam_table import MATCH_NAMES
from amp.reporting.style import (
    IDEAL_COLOR,
    LF0_COLOR,
    LF1_COLOR,
    NEITHER_COLOR,
    PROB_COLORSCALE,
    apply_layout,
    empty_figure,
    plain_label,
)
from amp.reporting.token_layout import fit_text
from amp.reporting.token_plots import ProbKind

__all__ = ["BOTH_COLOR", "LABEL_COLORS", "LABEL_SYMBOLS", "beam_tree_figure", "node_rows"]

#: Colour of a beam that is both gold LFs (they canonicalise alike): Okabe–Ito reddish purple.
BOTH_COLOR = "#CC79A7"
#: The colour of a beam's end per label of :func:`~amp.evaluation.matching.match_lf`.
LABEL_COLORS: dict[Match, str] = {Match.LF0: LF0_COLOR, Match.LF1: LF1_COLOR, Match.BOTH: BOTH_COLOR,
                                  Match.NEITHER: NEITHER_COLOR, Match.UNPARSEABLE: NEITHER_COLOR}
#: Marker symbols of the ends: shape tells neither and unparseable apart (same grey).
LABEL_SYMBOLS: dict[Match, str] = {**dict.fromkeys(Match, "circle"), Match.UNPARSEABLE: "x"}
#: Width of the plot area assumed when fitting branch texts (the chart stretches to ~1000 px).
PLOT_PX = 1000.0
#: Pixels of one character of the 12 px label font.
LABEL_CHAR_PX = 7.5
#: Pixels from the plot area's bottom to the legend (below the tick labels and the axis title).
_LEGEND_PX = 62.0
#: Tokens listed one by one in a segment's hover (more are summarised).
HOVER_TOKENS = 12


def node_rows(tree: BeamTree) -> list[float]:
    """The y of every node (index = node id): the beams' ends get rows 0, 1, … in depth-first
    order (best beam first), and a node sits midway between the first and last end below it."""
    row = 0
    lo: list[float] = [0.0] * len(tree.nodes)
    hi: list[float] = [0.0] * len(tree.nodes)
    own: dict[int, int] = {}
    for node in tree.nodes:  # pre-order: a shorter beam's end comes before its longer siblings'
        if node.ends or not node.children:
            own[node.id] = row
            row += 1
    for node in reversed(tree.nodes):  # children before parents
        spans = [(lo[c], hi[c]) for c in node.children]
        if node.id in own:
            spans.append((own[node.id], own[node.id]))
        lo[node.id] = min(s[0] for s in spans)
        hi[node.id] = max(s[1] for s in spans)
    return [(a + b) / 2 for a, b in zip(lo, hi, strict=True)]


def _shown(text: str) -> str:
    """A branch's text on the figure: newline as ⏎, outer spaces dropped, pure space as ␣."""
    shown = text.replace("\n", "⏎").strip()
    return shown or ("␣" if text else "")


def _p(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3f}"


def _token_lines(node: TreeNode, prob: ProbKind) -> list[str]:
    probs = node.probs_grammar if prob == "grammar" else node.probs
    shown = [f"&nbsp;&nbsp;{node.start + i}: {plain_label(repr(t))}  p = {_p(p)}"
             for i, (t, p) in enumerate(zip(node.tokens, probs, strict=True))]
    if len(shown) > HOVER_TOKENS:
        shown = [*shown[: HOVER_TOKENS - 2], f"&nbsp;&nbsp;… {len(shown) - HOVER_TOKENS + 1} more …", shown[-1]]
    return shown


def _hover(node: TreeNode, prob: ProbKind) -> str:
    """Everything about one node: tokens, probabilities (both kinds), prefix log-probability, beams."""
    if node.parent is None:
        return f"<b>start</b> (the prompt)<br>beams {', '.join(map(str, node.ranks))} start here"
    kind = "renormalised over the grammar" if prob == "grammar" else "raw model"
    p, p_other = (node.prob_grammar, node.prob) if prob == "grammar" else (node.prob, node.prob_grammar)
    other = "raw model" if prob == "grammar" else "grammar"
    if len(node.tokens) == 1:
        lines = [f"token {node.depth}: <b>{plain_label(repr(node.tokens[0]))}</b>",
                 f"p ({kind}) = {_p(p)} · {other} {_p(p_other)}"]
    else:
        lines = [f"tokens {node.start}–{node.depth}: <b>{plain_label(fit_text(repr(node.text), 70))}</b>",
                 f"p of all {len(node.tokens)} ({kind}) = {_p(p)} · {other} {_p(p_other)}",
                 f"least likely token p = {_p(node.min_prob_grammar if prob == 'grammar' else node.min_prob)}",
                 *_token_lines(node, prob)]
    cum = node.cum_logprob_grammar if prob == "grammar" else node.cum_logprob
    lines.append(f"log P of the prefix = {cum:.3f}")
    lines.append(f"beams through it: {', '.join(map(str, node.ranks))}")
    if node.is_split:
        lines.append(f"<b>split</b>: the beams part into {len(node.children)} branches after it")
    for end in node.ends:
        state = "finished" if end.finished else "cut off by the length limit"
        lines.append(f"<b>beam {end.rank} ends</b>: {MATCH_NAMES.get(end.label, end.label)}, "  # type: ignore[call-overload]
                     f"score {_p(end.score)} ({state})")
    return "<br>".join(lines)


def _label_budget(node: TreeNode, parent: TreeNode, px_per_position: float) -> int:
    """Characters a branch's text may take: the room between its parent and itself."""
    return int((node.depth - parent.depth) * px_per_position / LABEL_CHAR_PX)


def _edges(tree: BeamTree, ys: Sequence[float]) -> go.Scatter:
    xs: list[float | None] = []
    yy: list[float | None] = []
    for node in tree.nodes[1:]:
        parent = tree.nodes[node.parent] if node.parent is not None else tree.root
        xs += [parent.depth, parent.depth, node.depth, None]
        yy += [ys[parent.id], ys[node.id], ys[node.id], None]
    return go.Scatter(x=xs, y=yy, mode="lines", line={"color": IDEAL_COLOR, "width": 2}, hoverinfo="skip",
                      showlegend=False, meta={"kind": "edges"})


def _texts(tree: BeamTree, ys: Sequence[float], px_per_position: float) -> go.Scatter:
    xs, yy, text = [], [], []
    for node in tree.nodes[1:]:
        parent = tree.nodes[node.parent] if node.parent is not None else tree.root
        budget = _label_budget(node, parent, px_per_position)
        if budget >= 2:
            xs.append((parent.depth + node.depth) / 2)
            yy.append(ys[node.id])
            text.append(plain_label(fit_text(_shown(node.text), budget)))
    return go.Scatter(x=xs, y=yy, text=text, mode="text", textposition="top center", textfont={"size": 12},
                      hoverinfo="skip", showlegend=False, meta={"kind": "texts"})


def _markers(nodes: Sequence[TreeNode], ys: Sequence[float], prob: ProbKind, *, name: str, meta: dict[str, Any],
             marker: dict[str, Any], showlegend: bool = True, text: Sequence[str] | None = None) -> go.Scatter:
    return go.Scatter(
        x=[n.depth for n in nodes], y=[ys[n.id] for n in nodes], mode="markers+text" if text else "markers",
        text=list(text) if text else None, textposition="middle right", textfont={"size": 13},
        hovertext=[_hover(n, prob) for n in nodes], hoverinfo="text", name=name, marker=marker,
        customdata=[n.id for n in nodes], showlegend=showlegend, meta=meta)


def _prob_marker(nodes: Sequence[TreeNode], prob: ProbKind, *, symbol: str, size: int, colorbar: bool) -> dict:
    colours = [n.prob_grammar if prob == "grammar" else n.prob for n in nodes]
    marker: dict[str, Any] = {"symbol": symbol, "size": size, "color": [None if math.isnan(c) else c for c in colours],
                              "colorscale": PROB_COLORSCALE, "cmin": 0.0, "cmax": 1.0,
                              "line": {"color": "black", "width": 1.5 if symbol == "diamond" else 0.5}}
    if colorbar:
        marker["colorbar"] = {"title": {"text": "p"}, "tickformat": ".1f", "len": 0.8}
    return marker


def _node_traces(tree: BeamTree, ys: Sequence[float], prob: ProbKind) -> list[go.Scatter]:
    inner = [n for n in tree.nodes[1:] if not n.is_split and not n.ends]
    splits = [n for n in tree.nodes[1:] if n.is_split]
    traces = [
        _markers([tree.root], ys, prob, name="start", meta={"kind": "root"},
                 marker={"symbol": "square", "size": 12, "color": IDEAL_COLOR}),
        _markers(inner, ys, prob, name="token(s) · colour: p", meta={"kind": "node"},
                 marker=_prob_marker(inner, prob, symbol="circle", size=9, colorbar=True)),
        _markers(splits, ys, prob, name="split: the beams part", meta={"kind": "split"},
                 marker=_prob_marker(splits, prob, symbol="diamond", size=15, colorbar=not inner)),
    ]
    for label in MATCHES:
        ends = [n for n in tree.nodes if n.label == label]
        if ends:
            colour = LABEL_COLORS[label]
            texts = [plain_label(f"beam {' = '.join(str(e.rank) for e in n.ends)} · {MATCH_NAMES[label]}")
                     for n in ends]
            traces.append(_markers(
                ends, ys, prob, name=MATCH_NAMES[label], meta={"kind": "end", "label": label}, text=texts,
                marker={"symbol": LABEL_SYMBOLS[label], "size": 18, "color": colour,
                        "line": {"color": "white" if label != "unparseable" else colour, "width": 1.5}}))
    return traces


def beam_tree_figure(tree: BeamTree, *, prob: ProbKind = "raw", title: str | None = None) -> go.Figure:
    """The beam tree as a node-link figure (full or compressed, as ``tree`` is); see the module docstring.

    Readable for 1–10 beams (the height grows with the number of ends); more beams still draw.
    """
    if prob not in ("raw", "grammar"):
        raise ValueError(f"prob must be 'raw' or 'grammar', not {prob!r}")
    title = plain_label(title) if title else f"Beam tree: where the {tree.n_beams} beam{'s' if tree.n_beams != 1 else ''} part"
    if tree.n_beams == 0 or not tree.root.children:
        return empty_figure(title, "No beam has any token to draw.")
    ys = node_rows(tree)
    depth = tree.max_depth
    x_max = depth + max(2.0, 0.25 * depth)  # room right of the last tokens for "beam r · label"
    px_per_position = PLOT_PX / (x_max + 0.6)
    fig = go.Figure([_edges(tree, ys), _texts(tree, ys, px_per_position), *_node_traces(tree, ys, prob)])
    rows = int(max(ys)) + 1
    kind = "renormalised over the grammar" if prob == "grammar" else "raw model"
    view = "chains of single tokens merged" if tree.compressed else "one node per token"
    height = max(340, 170 + 56 * rows)
    apply_layout(fig, f"{title}<br><sup>x: token position · node colour: p of its token(s) given the prefix "
                      f"({kind}) · {view} · hover a node</sup>",
                 height=height, margin={"t": 90, "b": 110, "l": 30, "r": 30},  # the legend under the axis title
                 legend={"orientation": "h", "y": -_LEGEND_PX / (height - 200), "x": 0, "yanchor": "top"},
                 meta={"compressed": tree.compressed, "prob": prob, "rows": rows})
    fig.update_xaxes(title_text="token position in the LF", range=[-0.6, x_max], zeroline=False, showgrid=True)
    fig.update_yaxes(visible=False, range=[rows - 0.4, -0.8])  # best beam on top
    return fig
