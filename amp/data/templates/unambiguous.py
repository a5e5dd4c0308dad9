"""The unambiguous templates (docs/paper-notes.md §4.6): the prompt-ingredient and training sets.

Sets (pool names): ``basic``, ``single_conj``, ``double_conj``, ``possession``,
``instrument``, ``quant``, ``pp_unambig``, ``scope_unambig``, ``bound_unambig``.  Every template
has ``template_idx`` 0 except the double conjunctions, which have two equivalent bracketings
(idx 0 and 1).  Record ``type`` strings follow the original, bugs included: the Name-subject
instrument sentences are typed ``pp`` (§4.6, §14 item 1).
"""

from __future__ import annotations

from amp.data.templates.ambiguous import (
    BOUND_SHAPES,
    GENDERS,
    PP_A_LF0,
    PP_C_LF0,
    SCOPE_LF0,
)
from amp.data.templates.engine import Template

# --- basic `unambig`: article "the" pass, then "a" --------------------------------------------

_BASIC_SHAPES: tuple[tuple[str, str, str, bool], ...] = (
    # (shape, slots with ART for the article, LF, only in the "the" pass)
    ("noun_noun", "ART {np1:INDEFINITE_SENTIENT_NPS} {vp1:TRANSITIVE_VPS} ART {np2:INDEFINITE_NPS}",
     ("exists x . exists y . exists a . {np1}(x) AND {np2}(y) AND {vp1}(a) AND agent(a, x) "
      "AND patient(a, y)"), False),
    ("noun_name", "ART {np1:INDEFINITE_SENTIENT_NPS} {vp1:TRANSITIVE_VPS} {np2:NAMES}",
     "exists x . exists a . {np1}(x) AND {vp1}(a) AND agent(a, x) AND patient(a, {np2})", False),
    ("name_noun", "{np1:NAMES} {vp1:TRANSITIVE_VPS} ART {np2:INDEFINITE_NPS}",
     "exists x . exists a . {np2}(x) AND {vp1}(a) AND agent(a, {np1}) AND patient(a, x)", False),
    ("name_name", "{np1:NAMES} {vp1:TRANSITIVE_VPS} {np2:NAMES}",
     "exists a . {vp1}(a) AND agent(a, {np1}) AND patient(a, {np2})", True),
    ("noun_intrans", "ART {np1:INDEFINITE_SENTIENT_NPS} {vp1:INTRANSITIVE_AND_BOUND_VPS}",
     "exists x . exists a . {np1}(x) AND {vp1}(a) AND agent(a, x)", False),
    ("name_intrans", "{np1:NAMES} {vp1:INTRANSITIVE_AND_BOUND_VPS}",
     "exists a . {vp1}(a) AND agent(a, {np1})", True),
)

BASIC_TEMPLATES: tuple[Template, ...] = tuple(
    Template(
        id=f"basic/{article}/{shape}",
        pool="basic",
        type="unambig",
        slots=slots.replace("ART", article),
        lfs=(lf,),
    )
    for article in ("the", "a")
    for shape, slots, lf, the_only in _BASIC_SHAPES
    if article == "the" or not the_only
)

# --- single conjunction (type `unambig`), W = Int ∪ Bd ----------------------------------------

SINGLE_CONJ_TEMPLATES: tuple[Template, ...] = tuple(
    Template(id=f"single_conj/{shape}", pool="single_conj", type="unambig", slots=slots, lfs=(lf,))
    for shape, slots, lf in (
        ("noun_and",
         ("the {np1:INDEFINITE_SENTIENT_NPS} {vp1:INTRANSITIVE_AND_BOUND_VPS} and "
          "{vp2:INTRANSITIVE_AND_BOUND_VPS}"),
         ("exists x . exists a . exists e . {np1}(x) AND {vp1}(a) AND agent(a, x) AND {vp2}(e) "
          "AND agent(e, x)")),
        ("name_and",
         "{np1:NAMES} {vp1:INTRANSITIVE_AND_BOUND_VPS} and {vp2:INTRANSITIVE_AND_BOUND_VPS}",
         "exists a . exists e . {vp1}(a) AND agent(a, {np1}) AND {vp2}(e) AND agent(e, {np1})"),
        ("noun_or",
         ("the {np1:INDEFINITE_SENTIENT_NPS} {vp1:INTRANSITIVE_AND_BOUND_VPS} or "
          "{vp2:INTRANSITIVE_AND_BOUND_VPS}"),
         ("exists x . exists a . exists e . {np1}(x) AND ( {vp1}(a) AND agent(a, x) ) OR "
          "( {vp2}(e) AND agent(e, x) )")),
        ("name_or",
         "{np1:NAMES} {vp1:INTRANSITIVE_AND_BOUND_VPS} or {vp2:INTRANSITIVE_AND_BOUND_VPS}",
         "exists a . exists e . ( {vp1}(a) AND agent(a, {np1}) ) OR ( {vp2}(e) AND agent(e, {np1}) )"),
    )
)

# --- double conjunction `unambig_conj`: two equivalent bracketings (idx 0, 1) ------------------

DOUBLE_CONJ_TEMPLATES: tuple[Template, ...] = (
    Template(
        id="double_conj/and",
        pool="double_conj",
        type="unambig_conj",
        slots="the {np1:INDEFINITE_SENTIENT_NPS} {vp1:INTRANSITIVE_VPS} and {vp2:INTRANSITIVE_VPS} "
              "and {vp3:INTRANSITIVE_VPS}",
        lfs=(
            ("exists x . exists a . exists e . exists i . {np1}(x) AND {vp1}(a) AND agent(a, x) AND "
             "( ( {vp2}(e) AND agent(e, x) ) AND ( {vp3}(i) AND agent(i, x) ) )"),
            ("exists x . exists a . exists e . exists i . {np1}(x) AND ( {vp1}(a) AND agent(a, x) AND "
             "{vp2}(e) AND agent(e, x) ) AND {vp3}(i) AND agent(i, x)"),
        ),
    ),
    Template(
        id="double_conj/or",
        pool="double_conj",
        type="unambig_conj",
        slots="the {np1:INDEFINITE_SENTIENT_NPS} {vp1:INTRANSITIVE_VPS} or {vp2:INTRANSITIVE_VPS} "
              "or {vp3:INTRANSITIVE_VPS}",
        lfs=(
            ("exists x . exists a . exists e . exists i . {np1}(x) AND ( ( {vp1}(a) AND agent(a, x) ) "
             "OR ( {vp2}(e) AND agent(e, x) ) ) OR ( {vp3}(i) AND agent(i, x) )"),
            ("exists x . exists a . exists e . exists i . {np1}(x) AND ( {vp1}(a) AND agent(a, x) ) OR "
             "( ( {vp2}(e) AND agent(e, x) ) OR ( {vp3}(i) AND agent(i, x) ) )"),
        ),
    ),
)

# --- possession and instrument-only: visual block, then tactile --------------------------------

_SENSES = (("visual", "VISUAL_VPS", "VISUAL_INSTRUMENT_NPS"),
           ("tactile", "TACTILE_VPS", "TACTILE_INSTRUMENT_NPS"))

POSSESSION_TEMPLATES: tuple[Template, ...] = tuple(
    t
    for sense, _, instr in _SENSES
    for t in (
        Template(
            id=f"possession/{sense}/noun", pool="possession", type="possession",
            slots=f"the {{np1:INDEFINITE_HUMAN_NPS}} [with the] {{np2:{instr}}}",
            lfs=(("exists x . exists y . exists a . {np1}(x) AND {np2}(y) AND have(a) "
                  "AND agent(a, x) AND patient(a, y)"),),
        ),
        Template(
            id=f"possession/{sense}/name", pool="possession", type="possession",
            slots=f"{{np1:NAMES}} [with the] {{np2:{instr}}}",
            lfs=("exists x . exists a . {np2}(x) AND have(a) AND agent(a, {np1}) AND patient(a, x)",),
        ),
    )
)

INSTRUMENT_TEMPLATES: tuple[Template, ...] = tuple(
    t
    for sense, verbs, instr in _SENSES
    for t in (
        Template(
            id=f"instrument/{sense}/noun", pool="instrument", type="instr_unambig",
            slots=f"the {{np1:INDEFINITE_HUMAN_NPS}} {{vp1:{verbs}}} [with the] {{np2:{instr}}}",
            lfs=(("exists x . exists y . exists a . {np1}(x) AND {np2}(y) AND {vp1}(a) "
                  "AND agent(a, x) AND instrument(a, y)"),),
        ),
        Template(
            id=f"instrument/{sense}/name", pool="instrument",
            type="pp",  # sic: the original labels these "pp" (docs/paper-notes.md §4.6)
            slots=f"{{np1:NAMES}} {{vp1:{verbs}}} [with the] {{np2:{instr}}}",
            lfs=(("exists x . exists a . {np2}(x) AND {vp1}(a) AND agent(a, {np1}) "
                  "AND instrument(a, x)"),),
        ),
    )
)

# --- quantifier-only `unambig_quant` -----------------------------------------------------------

QUANT_TEMPLATES: tuple[Template, ...] = tuple(
    Template(id=f"quant/{q}", pool="quant", type="unambig_quant",
             slots=f"{q} {{np1:INDEFINITE_NPS}}", lfs=("forall x . {np1}(x)",))
    for q in ("every", "each")
)

# --- pp_unambig: visual verbs with non-visual nouns → possessive only -------------------------

PP_UNAMBIG_TEMPLATES: tuple[Template, ...] = (
    Template(
        id="pp_unambig/a", pool="pp_unambig", type="pp_unambig",
        slots="the {np1:INDEFINITE_HUMAN_NPS} {vp1:VISUAL_VPS} the {np2:INDEFINITE_HUMAN_NPS} "
              "[with the] {np3:NONVISUAL_NPS}",
        lfs=(PP_A_LF0,),
    ),
    Template(
        id="pp_unambig/c", pool="pp_unambig", type="pp_unambig",
        slots="{np1:NAMES} {vp1:VISUAL_VPS} the {np2:INDEFINITE_HUMAN_NPS} [with the] "
              "{np3:NONVISUAL_NPS}",
        lfs=(PP_C_LF0,),
    ),
)

# --- scope_unambig: transitive with "the" object (every, each), then intransitive -------------

SCOPE_UNAMBIG_TEMPLATES: tuple[Template, ...] = tuple(
    Template(
        id=f"scope_unambig/{q}/trans", pool="scope_unambig", type="scope_unambig",
        slots=f"{q} {{np1:INDEFINITE_SENTIENT_NPS}} {{vp1:TRANSITIVE_VPS}} the {{np2:INDEFINITE_NPS}}",
        lfs=(SCOPE_LF0,),
    )
    for q in ("every", "each")
) + tuple(
    Template(
        id=f"scope_unambig/{q}/intrans", pool="scope_unambig", type="scope_unambig",
        slots=f"{q} {{np1:INDEFINITE_SENTIENT_NPS}} {{vp1:INTRANSITIVE_VPS}}",
        lfs=("forall y . exists a . {np1}(y) AND {vp1}(a) AND agent(a, y)",),
    )
    for q in ("every", "each")
)

# --- bound_unambig: subject of gender G, object of G'; the pronoun picks the referent ---------


def _bound_unambig(gender: str) -> tuple[Template, ...]:
    other = "male" if gender == "female" else "female"
    subj_names, subj_nouns, subj_pron = GENDERS[gender]
    obj_names, obj_nouns, obj_pron = GENDERS[other]
    out: list[Template] = []
    for shape, (subj, obj, lf_subj, lf_obj) in BOUND_SHAPES.items():
        subj_spec = subj.replace(":NAMES}", f":{subj_names}}}").replace(":NOUNS}", f":{subj_nouns}}}")
        obj_spec = obj.replace(":NAMES}", f":{obj_names}}}").replace(":NOUNS}", f":{obj_nouns}}}")
        for variant, pronoun, lf in (("subj", subj_pron, lf_subj), ("obj", obj_pron, lf_obj)):
            out.append(
                Template(
                    id=f"bound_unambig/{gender}/{shape}/{variant}",
                    pool="bound_unambig",
                    type="bound_unambig",
                    slots=f"{subj_spec} {{vp1:VISUAL_VPS}} {obj_spec} [and {pronoun}] "
                          "{vp2:INTRANSITIVE_VPS_FOR_BOUND}",
                    lfs=(lf,),
                    gender=gender,
                )
            )
    return tuple(out)


BOUND_UNAMBIG_TEMPLATES: tuple[Template, ...] = _bound_unambig("female") + _bound_unambig("male")

#: All unambiguous templates, in pool order within each set.
UNAMBIGUOUS_TEMPLATES: tuple[Template, ...] = (
    BASIC_TEMPLATES
    + SINGLE_CONJ_TEMPLATES
    + DOUBLE_CONJ_TEMPLATES
    + POSSESSION_TEMPLATES
    + INSTRUMENT_TEMPLATES
    + QUANT_TEMPLATES
    + PP_UNAMBIG_TEMPLATES
    + SCOPE_UNAMBIG_TEMPLATES
    + BOUND_UNAMBIG_TEMPLATES
)
