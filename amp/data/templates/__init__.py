"""Templates as data and the engine that fills them (docs/paper-notes.md §3, §4).

* :mod:`amp.data.templates.engine` — :class:`Template`, :class:`Slot`, word lists, the fill engine;
* :mod:`amp.data.templates.ambiguous` — pp, scope, revscope, bound, conj;
* :mod:`amp.data.templates.unambiguous` — the unambiguous sets;
* :mod:`amp.data.templates.records` — :class:`Example`, the record a template produces;
* :mod:`amp.data.templates.registry` — which templates the pools are built from.
"""

from amp.data.errors import RecordError
from amp.data.templates.engine import (
    WORD_LISTS,
    Slot,
    Template,
    expand,
    fill,
    make_fluent,
    parse_slots,
    register_word_list,
    registry_version,
)
from amp.data.templates.records import Example, ambiguity_type, record_type
from amp.data.templates.registry import (
    all_templates,
    get_template,
    pool_names,
    register_template,
    unregister_template,
)

__all__ = [
    "WORD_LISTS",
    "Example",
    "RecordError",
    "Slot",
    "Template",
    "all_templates",
    "ambiguity_type",
    "expand",
    "fill",
    "get_template",
    "make_fluent",
    "parse_slots",
    "pool_names",
    "record_type",
    "register_template",
    "register_word_list",
    "registry_version",
    "unregister_template",
]
