"""Plain-English paraphrases of the two readings of an ambiguous sentence.

The AmP paper (Table 1, "Interpretation" lines; §3.2) explains each logical form in words —
PP: "the boy saw the man, who was holding the telescope" (LF0, possessive) versus "the boy used
the telescope to see the man" (LF1, instrument); scope: "there is exactly one dog" versus "there
may be more than one dog"; bound: who smiled; conj: the two bracketings.  Human annotators chose
between such paraphrases (Appendix A.5), and so do students in the classroom poll
(:mod:`amp.teaching.poll`).

Paraphrases are *data*: one pair of templates per template id (registered per type in
:mod:`amp.teaching.paraphrase_templates`, or the optional ``paraphrases`` field of
:class:`~amp.data.templates.engine.Template`, which wins), written with holes filled from the
pair's ``var_bindings``:

* ``{np1}`` — the surface word of the binding (``picked_up`` → "picked up", bare plurals);
* ``{np2:noun}`` — a singular noun phrase ("pair of binoculars"), for after the/every/each;
* ``{np2:a}`` — an indefinite noun phrase with a/an ("an elephant", "a pair of gloves");
* ``{vp1:base}`` — the verb's base form ("saw" → "see", "picked up" → "pick up");
* ``{vp1:part}`` — the past participle ("saw" → "seen", "held" → "held");
* ``{np1:pron}`` — a subject pronoun (he / she / it / they).

Fallback for templates without a paraphrase (e.g. user-registered ones): each LF is rendered in
words by :func:`verbalise_lf` over the parsed LF (:func:`amp.logic.reader.parse_lf`), prefixed
``"reading 0: "`` / ``"reading 1: "``; if the LF does not parse either, the text is
``"reading LF0 of template <id>"`` / ``"reading LF1 of template <id>"``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

from amp.data.errors import TemplateError
from amp.data.generate import AmbiguousPair, find_pair
from amp.data.templates import registry as _registry
from amp.data.types import find_type
from amp.errors import AmpError
from amp.logic import lexicon
from amp.logic.ast import Atom, Formula, Junction, Quantified, atoms, quantifier_prefix
from amp.logic.lexicon import surface_word
from amp.logic.reader import parse_lf
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.teaching.errors import ParaphraseError
from amp.teaching.paraphrase_templates import template_paraphrases

__all__ = [
    "ParaphraseError",
    "base_form",
    "fill_paraphrase",
    "indefinite",
    "interpretation_label",
    "noun_phrase",
    "paraphrases",
    "past_participle",
    "pronoun",
    "verbalise_lf",
]


# --- labels (Table 1) ------------------------------------------------------------------------


def interpretation_label(type: str, idx: int) -> str:
    """A short label for reading ``idx`` (0 = LF0, 1 = LF1) of an ambiguity type (paper Table 1;
    ``AmbiguityType.readings`` in :mod:`amp.data.types`).

    Accepts the record spelling ``scope_reverse`` for ``revscope``; any registered type
    (:func:`amp.data.types.register_type`) has its own labels.  Unregistered names get
    ``"reading 0"`` / ``"reading 1"``.
    """
    if isinstance(idx, bool) or idx not in (0, 1):
        raise ParaphraseError(f"an ambiguous sentence has readings 0 and 1, not {idx!r}")
    kind = find_type(type)
    return kind.readings[idx] if kind is not None else f"reading {idx}"


# --- word forms ----------------------------------------------------------------------------

#: Past tense (as in the surfaces) → (base form, past participle) for every verb of the lexicon.
VERB_FORMS: dict[str, tuple[str, str]] = {
    "saw": ("see", "seen"),
    "observed": ("observe", "observed"),
    "spotted": ("spot", "spotted"),
    "spied": ("spy", "spied"),
    "picked up": ("pick up", "picked up"),
    "grabbed": ("grab", "grabbed"),
    "held": ("hold", "held"),
    "lifted": ("lift", "lifted"),
    "heard": ("hear", "heard"),
    "listened to": ("listen to", "listened to"),
    "chased": ("chase", "chased"),
    "followed": ("follow", "followed"),
    "called": ("call", "called"),
    "ate": ("eat", "eaten"),
    "drank": ("drink", "drunk"),
    "slept": ("sleep", "slept"),
    "walked": ("walk", "walked"),
    "left": ("leave", "left"),
    "played": ("play", "played"),
    "moved": ("move", "moved"),
    "drew": ("draw", "drawn"),
    "napped": ("nap", "napped"),
    "waved": ("wave", "waved"),
    "smiled": ("smile", "smiled"),
    "lept": ("leap", "leapt"),
    "frowned": ("frown", "frowned"),
    "shouted": ("shout", "shouted"),
}

_CVC = re.compile(r"^[^aeiou]*[aeiou][^aeiouwxy]$")  # one short syllable: mov, smil, chas


def _regular_base(word: str) -> str:
    """Best-effort base form of a regular past tense ("hugged" → "hug", "loved" → "love")."""
    if word.endswith("ied") and len(word) > 4:
        return word[:-3] + "y"
    if not word.endswith("ed") or len(word) < 4:
        return word
    stem = word[:-2]
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiouyls":
        return stem[:-1]
    if stem.endswith(("v", "c")) or _CVC.match(stem):
        return stem + "e"
    return stem


def base_form(verb: str) -> str:
    """The base form of a past-tense verb: "saw" → "see", "picked up" → "pick up".

    Lexicon verbs come from :data:`VERB_FORMS`; any other verb gets regular English rules on
    its first word ("hugged" → "hug", "carried" → "carry", "loved" → "love").
    """
    verb = surface_word(verb)
    if verb in VERB_FORMS:
        return VERB_FORMS[verb][0]
    head, sep, rest = verb.partition(" ")
    return _regular_base(head) + sep + rest


def past_participle(verb: str) -> str:
    """The past participle: "saw" → "seen", "drew" → "drawn"; regular verbs keep their past."""
    verb = surface_word(verb)
    return VERB_FORMS[verb][1] if verb in VERB_FORMS else verb


def noun_phrase(noun: str) -> str:
    """A singular noun phrase: plural-only nouns become "pair of …"/"set of …" (docs/paper-notes.md §3)."""
    noun = surface_word(noun)
    return lexicon.PLURAL_PHRASES.get(noun, noun)


def indefinite(noun: str) -> str:
    """"a"/"an" + :func:`noun_phrase`: "an elephant", "a pair of binoculars", "a cat"."""
    phrase = noun_phrase(noun)
    return ("an " if phrase[:1].lower() in "aeiou" and phrase[:1] else "a ") + phrase


_MALE = frozenset(lexicon.MALE_NAMES + lexicon.INDEFINITE_MALE_NPS)
_FEMALE = frozenset(lexicon.FEMALE_NAMES + lexicon.INDEFINITE_FEMALE_NPS)
_NONHUMAN = frozenset(
    lexicon.INDEFINITE_NONHUMAN_SENTIENT_NPS
    + lexicon.INDEFINITE_NONHUMAN_NONSENTIENT_NPS
    + lexicon.VISUAL_INSTRUMENT_NPS
    + lexicon.TACTILE_INSTRUMENT_NPS
    + lexicon.CLOTHING_NPS
)


def pronoun(noun: str) -> str:
    """Subject pronoun for a referent: he/she for gendered names and nouns, it for animals and
    things, they for plural-only nouns and anything unknown."""
    noun = surface_word(noun)
    if noun in _MALE:
        return "he"
    if noun in _FEMALE:
        return "she"
    if noun in lexicon.PLURAL_PHRASES:
        return "they"
    return "it" if noun in _NONHUMAN else "they"


_FORMS = {
    "": surface_word,
    "noun": noun_phrase,
    "a": indefinite,
    "base": base_form,
    "part": past_participle,
    "pron": pronoun,
}


# --- filling paraphrase templates --------------------------------------------------------------


def fill_paraphrase(text: str, bindings: Mapping[str, str], *, template_id: str = "?") -> str:
    """Fill a paraphrase template's ``{tag}`` / ``{tag:form}`` holes from LF-side bindings."""
    out: list[str] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ParaphraseError(f"template {template_id!r}: paraphrase {text!r} is malformed: {exc}") from None
    for literal, tag, form, conversion in parsed:
        out.append(literal)
        if tag is None:
            continue
        if conversion or tag not in bindings or (form or "") not in _FORMS:
            problem = (
                f"uses {{{tag}}}, which the template does not bind (bindings: {', '.join(bindings)})"
                if tag not in bindings
                else f"uses unknown form {{{tag}:{form}}} (forms: {', '.join(f for f in _FORMS if f)})"
            )
            raise ParaphraseError(f"template {template_id!r}: paraphrase {text!r} {problem}")
        out.append(_FORMS[form or ""](bindings[tag]))
    return "".join(out)


def _paraphrase_templates(pair: AmbiguousPair) -> tuple[str, ...] | None:
    """The template's own paraphrases, else those registered for it with its type
    (:func:`amp.teaching.paraphrase_templates.register_paraphrases`), else ``None``."""
    try:
        own = _registry.get_template(pair.template).paraphrases
    except TemplateError:
        own = None
    kind = find_type(pair.type)
    return own if own is not None or kind is None else template_paraphrases(kind.id, pair.template)


def _as_pair(pair_or_surface: AmbiguousPair | str) -> AmbiguousPair:
    if isinstance(pair_or_surface, AmbiguousPair):
        return pair_or_surface
    if isinstance(pair_or_surface, str):
        pair = find_pair(pair_or_surface.strip())
        if pair is None:
            raise ParaphraseError(f"{pair_or_surface!r} is not an ambiguous sentence of any template")
        return pair
    raise ParaphraseError(f"expected an AmbiguousPair or a surface string, got {type(pair_or_surface).__name__}")


def paraphrases(pair_or_surface: AmbiguousPair | str) -> tuple[str, str]:
    """The (LF0, LF1) paraphrases of an ambiguous sentence (paper Table 1 / §3.2 wording).

    ``pair_or_surface`` is an :class:`~amp.data.generate.AmbiguousPair` or a surface that
    :func:`~amp.data.generate.find_pair` knows.  See the module docstring for the fallback used by
    templates without paraphrase data.
    """
    pair = _as_pair(pair_or_surface)
    texts = _paraphrase_templates(pair)
    if texts is not None and len(texts) >= 2:
        bindings = pair.var_bindings
        return (
            fill_paraphrase(texts[0], bindings, template_id=pair.template),
            fill_paraphrase(texts[1], bindings, template_id=pair.template),
        )
    return (_fallback(pair, 0), _fallback(pair, 1))


def _fallback(pair: AmbiguousPair, idx: int) -> str:
    try:
        return f"reading {idx}: {verbalise_lf(pair.lf(idx).lf)}"
    except (AmpError, ValueError):
        return f"reading LF{idx} of template {pair.template}"


# --- generic LF → English (the fallback) ---------------------------------------------------


def verbalise_lf(lf: str, fmt: str = DEFAULT_FORMAT) -> str:
    """Render a parsed LF in words, keeping variable names so that scope stays visible.

    E.g. ``forall x . exists y . exists a . dog(x) AND cat(y) AND saw(a) AND agent(a, x) AND
    patient(a, y)`` → "for every dog x, there is a cat y such that x saw y".  Event variables
    disappear into clauses ("x saw y using z", "y had z"); nested junctions are bracketed.
    Raises :class:`~amp.logic.errors.LFParseError` if the LF does not parse.
    """
    text = _Verbaliser(parse_lf(lf, fmt)).render(nested=False)
    return text.replace("such that for every", "such that, for every")


class _Verbaliser:
    """The steps of :func:`verbalise_lf` over one parsed formula: quantifier prefixes, event
    clauses, junctions and lone atoms.  Noun atoms folded into a quantifier phrase ("a cat y")
    are remembered in ``absorbed`` so that the body does not repeat them."""

    def __init__(self, formula: Formula) -> None:
        self.formula = formula
        self.verbs = set(lexicon.verb_predicates()) | {"have"}
        roles = {"agent", "patient", "instrument"}
        self.events = {
            a.args[0]
            for a in atoms(formula)
            if (a.pred in roles and len(a.args) == 2) or (a.pred in self.verbs and len(a.args) == 1)
        }
        self.absorbed: set[Atom] = set()

    def render(self, node: Formula | None = None, *, nested: bool) -> str:
        node = self.formula if node is None else node
        if isinstance(node, Quantified):
            text = self.quantified(node)
            return f"({text})" if nested else text
        if isinstance(node, Atom):
            return self.atom_text(node)
        return self.junction(node, nested=nested)

    def nouns_of(self, body: Formula) -> dict[str, Atom]:
        """Noun atoms directly under an AND body, by variable (a lone atom body stays the
        statement: "for every x, x is a dog")."""
        found: dict[str, Atom] = {}
        if not isinstance(body, Junction) or body.op != "AND":
            return found
        for child in body.children:
            if isinstance(child, Atom) and len(child.args) == 1 and child.pred not in self.verbs:
                found.setdefault(child.args[0], child)
        return found

    def quantified(self, node: Quantified) -> str:
        """"for every dog x, there is a cat y and a cup z such that …" (event variables dropped)."""
        prefix, body = quantifier_prefix(node)
        nouns = self.nouns_of(body)
        groups: list[tuple[str, list[str]]] = []
        for quant, var in prefix:
            if var in self.events:
                continue
            atom = nouns.get(var)
            if atom is None:
                phrase = f"some {var}" if quant == "exists" else var
            else:
                self.absorbed.add(atom)
                phrase = f"{indefinite(atom.pred) if quant == 'exists' else noun_phrase(atom.pred)} {var}"
            if groups and groups[-1][0] == quant == "exists":
                groups[-1][1].append(phrase)
            else:
                groups.append((quant, [phrase]))
        text = ""
        for quant, phrases in groups:
            listed = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
            text += f"there is {listed} such that " if quant == "exists" else f"for every {listed}, "
        return text + self.render(body, nested=False)

    def clause(self, parts: list[Atom]) -> str:
        """One event's atoms as "x saw y using z" / "y had z"."""
        verb = next((a.pred for a in parts if len(a.args) == 1), None)
        role = {a.pred: a.args[1] for a in parts if len(a.args) == 2}
        words = [role.get("agent", "someone"), "had" if verb == "have" else surface_word(verb or "did something")]
        if "patient" in role:
            words.append(role["patient"])
        if "instrument" in role:
            words.append(f"using {role['instrument']}")
        return " ".join(words)

    def junction(self, node: Junction, *, nested: bool) -> str:
        """An AND/OR: each event's atoms become one clause, absorbed nouns are skipped."""
        by_event: dict[str, list[Atom]] = {}
        order: list[Formula | tuple[str, str]] = []
        for child in node.children:
            if isinstance(child, Atom) and child in self.absorbed:
                continue
            if isinstance(child, Atom) and child.args and child.args[0] in self.events:
                if child.args[0] not in by_event:
                    by_event[child.args[0]] = []
                    order.append(("event", child.args[0]))
                by_event[child.args[0]].append(child)
            else:
                order.append(child)
        if len(order) == 1 and not isinstance(order[0], tuple):
            return self.render(order[0], nested=nested)  # the other children were absorbed
        pieces = [self.clause(by_event[item[1]]) if isinstance(item, tuple) else self.render(item, nested=True)
                  for item in order]
        text = f" {node.op.lower()} ".join(pieces)
        return f"({text})" if nested and len(pieces) > 1 else text

    def atom_text(self, atom: Atom) -> str:
        if len(atom.args) == 1 and atom.pred not in self.verbs:
            return f"{atom.args[0]} is {indefinite(atom.pred)}"
        if atom.args and atom.args[0] in self.events:
            return self.clause([atom])
        return f"{atom.pred}({', '.join(atom.args)})"
