"""The paraphrase templates of the ambiguity types (paper Table 1, §3.2): per type, template id →
(LF0 text, LF1 text), with the holes :func:`amp.teaching.paraphrase.fill_paraphrase` fills.

The five built-in types' templates (docs/paper-notes.md §4.1–§4.5) are registered when this module
is imported.  A type added with :func:`amp.data.types.register_type` gives its own with one call::

    register_paraphrases("toy", {"toy/while": ("the {np1:noun} {vp2} while watching",
                                                "the {np2:noun} {vp2} while watched")})

A template's own ``paraphrases`` (:class:`amp.data.templates.engine.Template`, e.g. a teacher's own
template) wins over these; a template with neither is verbalised from its LFs
(:func:`amp.teaching.paraphrase.paraphrases`).  Teaching text lives here, beside the paraphraser,
not in the data layer's type registry.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from types import MappingProxyType

from amp.data.types import get_type
from amp.teaching.errors import ParaphraseError

__all__ = [
    "BUILTIN_PARAPHRASES",
    "register_paraphrases",
    "template_paraphrases",
    "unregister_paraphrases",
]

# --- the built-in templates (paper Table 1, §3.2) ------------------------------------------------

_PP_ROLES = {  # shape → (subject, object), written as the surface writes them (§4.1)
    "a": ("the {np1:noun}", "the {np2:noun}"),
    "b": ("the {np1:noun}", "{np2}"),
    "c": ("{np1}", "the {np2:noun}"),
    "d": ("{np1}", "{np2}"),
}
_BOUND_ROLES = {  # shape → (subject, object) of B-a … B-d (§4.4)
    "a": ("{np1}", "{np2}"),
    "b": ("the {np1:noun}", "{np2}"),
    "c": ("{np1}", "the {np2:noun}"),
    "d": ("the {np1:noun}", "the {np2:noun}"),
}


def _pp_paraphrases(shape: str) -> tuple[str, str]:
    subj, obj = _PP_ROLES[shape]
    return (
        f"{subj} {{vp1}} {obj}, who had the {{np3}}",  # LF0: have(e), agent(e, object)
        f"{subj} used the {{np3}} to {{vp1:base}} {obj}",  # LF1: instrument(a, z)
    )


def _bound_paraphrases(shape: str) -> tuple[str, str]:
    subj, obj = _BOUND_ROLES[shape]
    return (
        f"{subj} {{vp1}} {obj} and {subj} {{vp2}}",  # LF0: agent(e, subject)
        f"{subj} {{vp1}} {obj} and {obj} {{vp2}}",  # LF1: agent(e, object)
    )


_SCOPE_PARAPHRASES = (
    "there is one {np2:noun} that every {np1:noun} {vp1}",  # LF0: exists x . forall y
    "each {np1:noun} {vp1} a possibly different {np2:noun}",  # LF1: forall x . exists y
)
_REVSCOPE_PARAPHRASES = (
    "there is one {np1:noun} that {vp1} every {np2:noun}",  # LF0: one subject
    "each {np2:noun} was {vp1:part} by a possibly different {np1:noun}",  # LF1: forall object
)
_CONJ_PARAPHRASES = {  # in both templates LF0 has AND as the main connective, LF1 OR
    "conj/and_first": (  # A and B or C
        "the {np1:noun} {vp1}, and {np1:pron} also either {vp2} or {vp3}",  # A ∧ (B ∨ C)
        "either the {np1:noun} {vp1} and {vp2}, or {np1:pron} {vp3}",  # (A ∧ B) ∨ C
    ),
    "conj/or_first": (  # A or B and C
        "the {np1:noun} either {vp1} or {vp2}, and {np1:pron} also {vp3}",  # (A ∨ B) ∧ C
        "either the {np1:noun} {vp1}, or {np1:pron} {vp2} and {vp3}",  # A ∨ (B ∧ C)
    ),
}

#: Type id → template id → (LF0, LF1) paraphrase templates of the five built-in types.
BUILTIN_PARAPHRASES: Mapping[str, Mapping[str, tuple[str, str]]] = MappingProxyType({
    "pp": {**{f"pp/visual/{s}": _pp_paraphrases(s) for s in "abcd"},
           **{f"pp/tactile/{s}": _pp_paraphrases(s) for s in "ac"}},
    "scope": {f"scope/{q}": _SCOPE_PARAPHRASES for q in ("every", "each")},
    "revscope": {f"revscope/{q}": _REVSCOPE_PARAPHRASES for q in ("every", "each")},
    "bound": {f"bound/{g}/{s}": _bound_paraphrases(s) for g in ("female", "male") for s in "abcd"},
    "conj": _CONJ_PARAPHRASES,
})

# --- the registry ------------------------------------------------------------------------------

_BY_TYPE: dict[str, Mapping[str, tuple[str, str]]] = {}


def _checked(type_id: str, templates: object) -> dict[str, tuple[str, str]]:
    """``templates`` as a plain dict, or :class:`ParaphraseError` naming the entry at fault."""
    if not isinstance(templates, Mapping) or not templates:
        raise ParaphraseError(f"type {type_id!r}: paraphrases must be a non-empty mapping of template id → "
                              f"(LF0 text, LF1 text), got {type(templates).__name__}")
    out: dict[str, tuple[str, str]] = {}
    for template_id, texts in templates.items():
        if not isinstance(template_id, str) or not template_id.strip():
            raise ParaphraseError(f"type {type_id!r}: a template id must be a non-empty string, got {template_id!r}")
        if (isinstance(texts, str) or not isinstance(texts, tuple | list) or len(texts) != 2
                or not all(isinstance(t, str) and t.strip() for t in texts)):
            raise ParaphraseError(f"template {template_id!r}: paraphrases must be two non-empty strings "
                                  f"(LF0, LF1), got {texts!r}")
        for text in texts:
            try:
                list(string.Formatter().parse(text))
            except ValueError as exc:
                raise ParaphraseError(f"template {template_id!r}: paraphrase {text!r} is malformed: {exc}") from None
        out[template_id] = (texts[0], texts[1])
    return out


def register_paraphrases(type_name: str, templates: Mapping[str, tuple[str, str]], *,
                         replace: bool = False) -> None:
    """Give the templates of a registered type their (LF0, LF1) paraphrase templates.

    ``type_name`` is the type's id or an alias (:func:`amp.data.types.get_type`;
    :class:`~amp.data.errors.UnknownTypeError` if none); ``templates`` maps template id → two
    texts with ``{tag}`` / ``{tag:form}`` holes (:mod:`amp.teaching.paraphrase`).  One call per
    type: a second raises :class:`ParaphraseError` unless ``replace``, which replaces them all.
    """
    type_id = get_type(type_name).id
    if type_id in _BY_TYPE and not replace:
        raise ParaphraseError(f"type {type_id!r} already has paraphrase templates (pass replace=True)")
    _BY_TYPE[type_id] = MappingProxyType(_checked(type_id, templates))


def unregister_paraphrases(type_id: str) -> None:
    """Remove the paraphrase templates of ``type_id`` (:class:`ParaphraseError` if it has none)."""
    if _BY_TYPE.pop(type_id, None) is None:
        raise ParaphraseError(f"type {type_id!r} has no paraphrase templates; these have: {', '.join(_BY_TYPE)}")


def template_paraphrases(type_id: str, template_id: str) -> tuple[str, str] | None:
    """The (LF0, LF1) paraphrase templates registered for ``template_id`` of type ``type_id``
    (its id, not an alias), or ``None``."""
    return _BY_TYPE.get(type_id, {}).get(template_id)


for _type_id, _templates in BUILTIN_PARAPHRASES.items():
    register_paraphrases(_type_id, _templates)
