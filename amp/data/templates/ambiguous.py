"""The ambiguous templates: pp, scope, revscope, bound, conj (docs/paper-notes.md §4.1–§4.5).

Each template has two LF templates: LF0 and LF1 (the readings of §0).  The tuples below are
in the original emission order; the LF strings are exactly those of the original code.
"""

from __future__ import annotations

from amp.data.templates.engine import Template
from amp.data.templates.records import record_type

# --- §4.1 PP attachment: LF0 possessive (have), LF1 instrument ----------------------------

PP_A_LF0 = (
    "exists x . exists y . exists z . exists a . exists e . {np1}(x) AND {np2}(y) AND {vp1}(a) "
    "AND agent(a, x) AND patient(a, y) AND {np3}(z) AND have(e) AND agent(e, y) AND patient(e, z)"
)
PP_A_LF1 = (
    "exists x . exists y . exists z . exists a . {np1}(x) AND {np2}(y) AND {np3}(z) AND {vp1}(a) "
    "AND agent(a, x) AND patient(a, y) AND instrument(a, z)"
)
PP_B_LF0 = (
    "exists x . exists y . exists a . exists e . {np1}(x) AND {np3}(y) AND {vp1}(a) AND agent(a, x) "
    "AND patient(a, {np2}) AND have(e) AND agent(e, {np2}) AND patient(e, y)"
)
PP_B_LF1 = (
    "exists x . exists y . exists a . {np1}(x) AND {np3}(y) AND {vp1}(a) AND agent(a, x) "
    "AND patient(a, {np2}) AND instrument(a, y)"
)
PP_C_LF0 = (
    "exists x . exists y . exists a . exists e . {np2}(x) AND {np3}(y) AND {vp1}(a) "
    "AND agent(a, {np1}) AND patient(a, x) AND have(e) AND agent(e, x) AND patient(e, y)"
)
PP_C_LF1 = (
    "exists x . exists y . exists a . {np2}(x) AND {np3}(y) AND {vp1}(a) AND agent(a, {np1}) "
    "AND patient(a, x) AND instrument(a, y)"
)
PP_D_LF0 = (
    "exists x . exists a . exists e . {np3}(x) AND {vp1}(a) AND agent(a, {np1}) "
    "AND patient(a, {np2}) AND have(e) AND agent(e, {np2}) AND patient(e, x)"
)
PP_D_LF1 = (
    "exists x . exists a . {np3}(x) AND {vp1}(a) AND agent(a, {np1}) AND patient(a, {np2}) "
    "AND instrument(a, x)"
)

#: (block, verb list, instrument list, shapes).  PP-b and PP-d exist only in the visual block
#: ("not ambiguous" for tactile verbs, says the original).
_PP_BLOCKS = (
    ("visual", "VISUAL_VPS", "VISUAL_INSTRUMENT_NPS", "abcd"),
    ("tactile", "TACTILE_VPS", "TACTILE_INSTRUMENT_NPS", "ac"),
)
_PP_SHAPES = {
    "a": ("the {np1:INDEFINITE_HUMAN_NPS} {vp1:V} the {np2:INDEFINITE_HUMAN_NPS} [with the] {np3:I}",
          PP_A_LF0, PP_A_LF1, "the N V the N with the I"),
    "b": ("the {np1:INDEFINITE_HUMAN_NPS} {vp1:V} {np2:NAMES} [with the] {np3:I}",
          PP_B_LF0, PP_B_LF1, "the N V Name with the I"),
    "c": ("{np1:NAMES} {vp1:V} the {np2:INDEFINITE_HUMAN_NPS} [with the] {np3:I}",
          PP_C_LF0, PP_C_LF1, "Name V the N with the I"),
    "d": ("{np1:NAMES} {vp1:V} {np2:NAMES} [with the] {np3:I}",
          PP_D_LF0, PP_D_LF1, "Name V Name with the I"),
}

PP_TEMPLATES: tuple[Template, ...] = tuple(
    Template(
        id=f"pp/{block}/{shape}",
        pool="pp",
        ambiguity="pp",
        type="pp",
        slots=_PP_SHAPES[shape][0].replace(":V}", f":{verbs}}}").replace(":I}", f":{instr}}}"),
        lfs=(_PP_SHAPES[shape][1], _PP_SHAPES[shape][2]),
        description=f"PP-{shape} ({block}): {_PP_SHAPES[shape][3]}",
    )
    for block, verbs, instr, shapes in _PP_BLOCKS
    for shape in shapes
)

# --- §4.2 quantifier scope / §4.3 inverse scope --------------------------------------------

SCOPE_LF0 = (
    "exists x . forall y . exists a . {np1}(y) AND {np2}(x) AND {vp1}(a) AND agent(a, y) "
    "AND patient(a, x)"
)
SCOPE_LF1 = (
    "forall x . exists y . exists a . {np1}(x) AND {np2}(y) AND {vp1}(a) AND agent(a, x) "
    "AND patient(a, y)"
)
REVSCOPE_LF0 = (
    "exists x . forall y . exists a . {np1}(x) AND {np2}(y) AND {vp1}(a) AND agent(a, x) "
    "AND patient(a, y)"
)
REVSCOPE_LF1 = (
    "forall x . exists y . exists a . {np1}(y) AND {np2}(x) AND {vp1}(a) AND agent(a, y) "
    "AND patient(a, x)"
)

SCOPE_TEMPLATES: tuple[Template, ...] = tuple(
    Template(
        id=f"scope/{q}",
        pool="scope",
        ambiguity="scope",
        type="scope",
        slots=f"{q} {{np1:INDEFINITE_SENTIENT_NPS}} {{vp1:TRANSITIVE_VPS}} a {{np2:INDEFINITE_NPS}}",
        lfs=(SCOPE_LF0, SCOPE_LF1),
        description=f"{q} N V a N",
    )
    for q in ("every", "each")
)

REVSCOPE_TEMPLATES: tuple[Template, ...] = tuple(
    Template(
        id=f"revscope/{q}",
        pool="revscope",
        ambiguity="revscope",
        type=record_type("revscope"),  # "scope_reverse", declared with the type
        slots=f"a {{np1:INDEFINITE_SENTIENT_NPS}} {{vp1:TRANSITIVE_VPS}} {q} {{np2:INDEFINITE_NPS}}",
        lfs=(REVSCOPE_LF0, REVSCOPE_LF1),
        description=f"a N V {q} N",
    )
    for q in ("every", "each")
)

# --- §4.4 pronoun coreference: LF0 pronoun = subject, LF1 pronoun = object ------------------

BOUND_A_LF0 = (
    "exists a . exists e . {vp1}(a) AND agent(a, {np1}) AND patient(a, {np2}) AND {vp2}(e) "
    "AND agent(e, {np1})"
)
BOUND_A_LF1 = (
    "exists a . exists e . {vp1}(a) AND agent(a, {np1}) AND patient(a, {np2}) AND {vp2}(e) "
    "AND agent(e, {np2})"
)
BOUND_B_LF0 = (
    "exists x . exists a . exists e . {np1}(x) AND {vp1}(a) AND agent(a, x) AND patient(a, {np2}) "
    "AND {vp2}(e) AND agent(e, x)"
)
BOUND_B_LF1 = (
    "exists x . exists a . exists e . {np1}(x) AND {vp1}(a) AND agent(a, x) AND patient(a, {np2}) "
    "AND {vp2}(e) AND agent(e, {np2})"
)
BOUND_C_LF0 = (
    "exists x . exists a . exists e . {np2}(x) AND {vp1}(a) AND agent(a, {np1}) AND patient(a, x) "
    "AND {vp2}(e) AND agent(e, {np1})"
)
BOUND_C_LF1 = (
    "exists x . exists a . exists e . {np2}(x) AND {vp1}(a) AND agent(a, {np1}) AND patient(a, x) "
    "AND {vp2}(e) AND agent(e, x)"
)
BOUND_D_LF0 = (
    "exists x . exists y . exists a . exists e . {np1}(x) AND {np2}(y) AND {vp1}(a) AND agent(a, x) "
    "AND patient(a, y) AND {vp2}(e) AND agent(e, x)"
)
BOUND_D_LF1 = (
    "exists x . exists y . exists a . exists e . {np1}(x) AND {np2}(y) AND {vp1}(a) AND agent(a, x) "
    "AND patient(a, y) AND {vp2}(e) AND agent(e, y)"
)

#: Gender → (names list, nouns list, pronoun).  Female first: that is the pool order.
GENDERS: dict[str, tuple[str, str, str]] = {
    "female": ("FEMALE_NAMES", "INDEFINITE_FEMALE_NPS", "she"),
    "male": ("MALE_NAMES", "INDEFINITE_MALE_NPS", "he"),
}

#: Shape → (subject spec, object spec, LF0, LF1).  ``NAMES``/``NOUNS`` are replaced per gender.
BOUND_SHAPES: dict[str, tuple[str, str, str, str]] = {
    "a": ("{np1:NAMES}", "{np2:NAMES}", BOUND_A_LF0, BOUND_A_LF1),
    "b": ("the {np1:NOUNS}", "{np2:NAMES}", BOUND_B_LF0, BOUND_B_LF1),
    "c": ("{np1:NAMES}", "the {np2:NOUNS}", BOUND_C_LF0, BOUND_C_LF1),
    "d": ("the {np1:NOUNS}", "the {np2:NOUNS}", BOUND_D_LF0, BOUND_D_LF1),
}


def _gendered(spec: str, gender: str) -> str:
    names, nouns, _ = GENDERS[gender]
    return spec.replace(":NAMES}", f":{names}}}").replace(":NOUNS}", f":{nouns}}}")


BOUND_TEMPLATES: tuple[Template, ...] = tuple(
    Template(
        id=f"bound/{gender}/{shape}",
        pool="bound",
        ambiguity="bound",
        type="bound",
        slots=(
            f"{_gendered(subj, gender)} {{vp1:VISUAL_VPS}} {_gendered(obj, gender)} "
            f"[and {GENDERS[gender][2]}] {{vp2:INTRANSITIVE_VPS_FOR_BOUND}}"
        ),
        lfs=(lf0, lf1),
        gender=gender,
        description=f"B-{shape} ({gender})",
    )
    for gender in GENDERS
    for shape, (subj, obj, lf0, lf1) in BOUND_SHAPES.items()
)

# --- §4.5 conjunction scope: LF0 AND is the main connective, LF1 OR ------------------------

CONJ_AND_FIRST_LF0 = (
    "exists x . exists a . exists e . exists i . {np1}(x) AND ( {vp1}(a) AND agent(a, x) AND "
    "( ( {vp2}(e) AND agent(e, x) ) OR ( {vp3}(i) AND agent(i, x) ) ) )"
)
CONJ_AND_FIRST_LF1 = (
    "exists x . exists a . exists e . exists i . {np1}(x) AND ( ( {vp1}(a) AND agent(a, x) AND "
    "{vp2}(e) AND agent(e, x) ) OR ( {vp3}(i) AND agent(i, x) ) )"
)
CONJ_OR_FIRST_LF0 = (
    "exists x . exists a . exists e . exists i . {np1}(x) AND ( ( ( {vp1}(a) AND agent(a, x) ) OR "
    "( {vp2}(e) AND agent(e, x) ) ) AND {vp3}(i) AND agent(i, x) )"
)
CONJ_OR_FIRST_LF1 = (
    "exists x . exists a . exists e . exists i . {np1}(x) AND ( ( {vp1}(a) AND agent(a, x) ) OR "
    "( {vp2}(e) AND agent(e, x) AND {vp3}(i) AND agent(i, x) ) )"
)

CONJ_TEMPLATES: tuple[Template, ...] = tuple(
    Template(
        id=f"conj/{first}_first",
        pool="conj",
        ambiguity="conj",
        type="conj",
        slots=f"the {{np1:INDEFINITE_SENTIENT_NPS}} {{vp1:INTRANSITIVE_VPS}} {first} {{vp2:INTRANSITIVE_VPS}} "
              f"{second} {{vp3:INTRANSITIVE_VPS}}",
        lfs=lfs,
        description=f"the N V {first} V {second} V",
    )
    for first, second, lfs in (
        ("and", "or", (CONJ_AND_FIRST_LF0, CONJ_AND_FIRST_LF1)),
        ("or", "and", (CONJ_OR_FIRST_LF0, CONJ_OR_FIRST_LF1)),
    )
)

#: All ambiguous templates, in pool order within each type.
AMBIGUOUS_TEMPLATES: tuple[Template, ...] = (
    PP_TEMPLATES + SCOPE_TEMPLATES + REVSCOPE_TEMPLATES + BOUND_TEMPLATES + CONJ_TEMPLATES
)
