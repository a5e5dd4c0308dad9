"""Word lists of the AmP generator (docs/paper-notes.md §2), in source order.

The order matters: enumeration (and therefore every seed and split) walks these lists
left to right.  Each surface word maps to one LF predicate or constant (its *denotation*);
only "picked up" → ``picked_up`` and "listened to" → ``listened`` differ from the word.

The grammar of logical forms (:mod:`amp.logic.grammar`) is built from :func:`predicates`
and :func:`constants`, so adding a word here extends the grammar automatically.
"""

from __future__ import annotations

# --- proper names (constants) -------------------------------------------------------
MALE_NAMES: tuple[str, ...] = ("Galileo", "Sherlock", "Alan", "Watson", "Bill")
FEMALE_NAMES: tuple[str, ...] = ("Marie", "Ada", "Katherine", "Adele", "Mary")
NAMES: tuple[str, ...] = (
    "Galileo", "Marie", "Sherlock", "Ada", "Alan", "Katherine", "Watson", "Adele", "Bill", "Mary",
)

# --- common nouns --------------------------------------------------------------------
INDEFINITE_HUMAN_NPS: tuple[str, ...] = ("boy", "girl", "man", "woman")
INDEFINITE_MALE_NPS: tuple[str, ...] = ("boy", "man")
INDEFINITE_FEMALE_NPS: tuple[str, ...] = ("woman", "girl")  # sic: this order in the source
INDEFINITE_NONHUMAN_SENTIENT_NPS: tuple[str, ...] = ("bird", "cat", "dog", "fish", "cow", "elephant")
INDEFINITE_NONHUMAN_NONSENTIENT_NPS: tuple[str, ...] = ("book", "rock", "table", "cup", "crayon")
VISUAL_INSTRUMENT_NPS: tuple[str, ...] = ("telescope", "binoculars", "camera", "spyglass")
TACTILE_INSTRUMENT_NPS: tuple[str, ...] = ("gloves", "mittens", "ovenmitts")
CLOTHING_NPS: tuple[str, ...] = ("pyjamas", "pants", "sweater", "hat")
NONVISUAL_NPS: tuple[str, ...] = TACTILE_INSTRUMENT_NPS + CLOTHING_NPS
INDEFINITE_NPS: tuple[str, ...] = (
    INDEFINITE_HUMAN_NPS
    + INDEFINITE_NONHUMAN_SENTIENT_NPS
    + INDEFINITE_NONHUMAN_NONSENTIENT_NPS
    + VISUAL_INSTRUMENT_NPS
    + TACTILE_INSTRUMENT_NPS
    + CLOTHING_NPS
)
INDEFINITE_SENTIENT_NPS: tuple[str, ...] = INDEFINITE_NONHUMAN_SENTIENT_NPS + INDEFINITE_HUMAN_NPS

#: Plural nouns get a "pair of"/"set of" phrase after the single-word slots a/every/each/the
#: (docs/paper-notes.md §3, fluency rule 1).  The LF always keeps the plural word as predicate.
PLURAL_PHRASES: dict[str, str] = {
    "pyjamas": "set of pyjamas",
    "pants": "pair of pants",
    "binoculars": "pair of binoculars",
    "mittens": "pair of mittens",
    "ovenmitts": "pair of ovenmitts",
    "gloves": "pair of gloves",
}

# --- verbs ---------------------------------------------------------------------------
VISUAL_VPS: tuple[str, ...] = ("saw", "observed", "spotted", "spied")
TACTILE_VPS: tuple[str, ...] = ("picked up", "grabbed", "held", "lifted")
AUDITORY_VPS: tuple[str, ...] = ("heard", "listened to")  # defined, never used by a template
OTHER_VPS: tuple[str, ...] = ("chased", "followed", "called")  # defined, never used
TRANSITIVE_VPS: tuple[str, ...] = VISUAL_VPS + TACTILE_VPS
INTRANSITIVE_VPS: tuple[str, ...] = (
    "ate", "drank", "slept", "walked", "left", "played", "moved", "drew", "napped",
)
INTRANSITIVE_VPS_FOR_BOUND: tuple[str, ...] = ("waved", "smiled", "lept", "frowned", "shouted")

#: Fixed role predicates of the neo-Davidsonian LFs.
ROLE_PREDICATES: tuple[str, ...] = ("agent", "patient", "instrument", "have")

#: The six variable names of the AmP LFs: entities x, y, z and events a, e, i.
ENTITY_VARIABLES: tuple[str, ...] = ("x", "y", "z")
EVENT_VARIABLES: tuple[str, ...] = ("a", "e", "i")
VARIABLES: tuple[str, ...] = ENTITY_VARIABLES + EVENT_VARIABLES

_SPECIAL_DENOTATIONS = {"picked up": "picked_up", "listened to": "listened"}


def denotation(word: str) -> str:
    """The LF predicate (or constant) a surface word stands for."""
    return _SPECIAL_DENOTATIONS.get(word, word)


_SURFACE_WORDS = {lf: word for word, lf in _SPECIAL_DENOTATIONS.items()}


def surface_word(value: str) -> str:
    """The surface word of an LF-side value, the inverse of :func:`denotation`
    (``picked_up`` → "picked up"; every other value is its own word)."""
    return _SURFACE_WORDS.get(value, value)


def all_nouns() -> tuple[str, ...]:
    return tuple(dict.fromkeys(INDEFINITE_NPS))


def all_verbs() -> tuple[str, ...]:
    return tuple(
        dict.fromkeys(
            TRANSITIVE_VPS + AUDITORY_VPS + OTHER_VPS + INTRANSITIVE_VPS + INTRANSITIVE_VPS_FOR_BOUND
        )
    )


def verb_predicates() -> tuple[str, ...]:
    """Predicates that denote events (used to tell event variables from entity variables)."""
    return tuple(dict.fromkeys(denotation(v) for v in all_verbs()))


def predicates(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every predicate name the LF grammar accepts, deduplicated, in a stable order."""
    words = tuple(denotation(w) for w in all_nouns()) + verb_predicates() + ROLE_PREDICATES + extra
    return tuple(dict.fromkeys(words))


def constants(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every constant (proper name) the LF grammar accepts."""
    return tuple(dict.fromkeys(NAMES + extra))
