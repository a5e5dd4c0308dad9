"""Parse & inspect's headline by meaning (issue #40 point 4).

The tiny model's parse is noise, so the page is shown once on its own parse (not an LF: the
readings' known difference, then where its tokens leave the other reading, written out in the
test) and once on the same inspection with the top beam replaced by LF0 itself (the readings then part at ``have(e)`` versus
``instrument(a, z)``; the expected token is found here from the token texts, not by the page's
code).
"""

from __future__ import annotations

import html
from dataclasses import replace

from app_helpers import assert_ok, texts

from amp.parser.search.divergence import divergence
from ui.inspection.inspect_view import divergence_sentence
from ui.shared.common import fmt_prob

HEADLINE = "<div class='amp-headline'>"


def _headline(app) -> str:
    (found,) = [m for m in texts(app, "markdown") if m.startswith(HEADLINE)]
    return found


def _p_at_divergence(app) -> str:
    (metric,) = [m for m in app.metric if m.label == "p at divergence"]
    return str(metric.value)


def _as_lf0(ins):
    """The inspection with LF0 itself as the top beam (its forced steps as the beam's steps)."""
    beam = replace(ins.parse.beams[0], text=ins.lf0) if ins.parse.beams else None
    steps = ins.pair.lf0.steps
    return replace(ins, predicted=beam, predicted_match="lf0", predicted_steps=steps, alternative="lf1",
                   alternative_lf=ins.pair.lf1.lf, alternative_steps=ins.pair.lf1.steps,
                   divergence=divergence(steps, ins.pair.lf1.steps))


def _first_token_of(steps, text: str) -> int:
    """The index of the token holding the first character of ``text`` in the steps' joined text."""
    joined = "".join(s.token for s in steps)
    at = joined.index(text)
    pos = 0
    for i, s in enumerate(steps):
        if pos <= at < pos + len(s.token) and s.token.strip():
            return i
        pos += len(s.token)
    raise AssertionError(f"{text!r} not on a token")


def test_the_headline_says_where_the_readings_part_then_where_the_parse_leaves_them(parsed) -> None:
    """The tiny model's parse (no LF): the readings' known difference first, then the parse's first
    token against the other reading's, each p as the metric shows it — written out here, not by the
    page's code (issue #45)."""
    ins = parsed.session_state["inspection"]["result"]
    assert ins.predicted_match == "unparseable" and ins.alternative == "lf1"  # the seed-fixed tiny model's noise
    div = ins.divergence
    wrote, other = html.escape(div.token_a.strip(), quote=False), html.escape(div.token_b.strip(), quote=False)
    assert _headline(parsed) == (
        f"{HEADLINE}<strong>The readings part in meaning at <code>have(e)</code> (LF0) versus "
        "<code>instrument(a, z)</code> (LF1).</strong><br>The model's parse is not a well-formed LF, so its meaning "
        f"cannot be compared; its tokens part from the LF1 reading at token {div.index}: it wrote <code>{wrote}</code> "
        f"(p = {div.prob_a:.3f}) where the LF1 reading continues with <code>{other}</code> (p = {div.prob_b:.3f}).</div>")
    assert _p_at_divergence(parsed) == f"{div.prob_a:.3f}"


def test_the_headline_leads_with_the_meaning_and_puts_p_on_its_first_token(parsed) -> None:
    stored = parsed.session_state["inspection"]
    ins = _as_lf0(stored["result"])
    stored["result"] = ins
    parsed.run()
    assert_ok(parsed)
    shown = _headline(parsed)
    meaning, tokens = shown.removeprefix(HEADLINE).removesuffix("</div>").split("<br>")
    assert meaning == ("<strong>The readings part in meaning at <code>have(e)</code> (LF0) versus "
                       "<code>instrument(a, z)</code> (LF1).</strong>")
    at = _first_token_of(ins.predicted_steps, " have(e)")
    assert tokens.startswith(f"The model's parse parts in meaning from the LF1 reading at its token {at}: it wrote "
                             f"<code>{html.escape(ins.predicted_steps[at].token.strip(), quote=False)}</code>")
    assert at != ins.divergence.index  # not where the tokens first part (the quantifier prefix)
    assert _p_at_divergence(parsed) == fmt_prob(ins.predicted_steps[at].prob)
    parsed.segmented_control(key="pi_prob").set_value("grammar").run()
    assert_ok(parsed)
    assert _p_at_divergence(parsed) == fmt_prob(ins.predicted_steps[at].prob_grammar)


def test_model_and_teacher_text_in_the_headline_is_never_markup() -> None:
    from amp.evaluation.divergence_headline import DivergenceHeadline, HeadlinePart

    hostile = '<b>bold</b> *em* <a href="http://x.y">l</a>'
    head = DivergenceHeadline((HeadlinePart("at "), HeadlinePart(hostile, code=True)), (HeadlinePart(hostile),),
                              None, None, "none")
    shown = divergence_sentence(head)
    assert "<b>" not in shown and "<a " not in shown and shown.count("&lt;b&gt;") == 2
    assert shown == (f"{HEADLINE}<strong>at <code>{html.escape(hostile, quote=False)}</code></strong><br>"
                     f"{html.escape(hostile, quote=False)}</div>")
