"""The registry of templates: the built-in ones of docs/paper-notes.md §4, plus any a user registers.

Pools (``amp.data.generate.pool``) are the registered templates of one ``pool`` name, in
registration order; so a user extends a pool — or makes a new one — with
:func:`register_template`, without touching the engine.
"""

from __future__ import annotations

from amp.data.errors import TemplateError
from amp.data.templates import engine
from amp.data.templates.ambiguous import AMBIGUOUS_TEMPLATES
from amp.data.templates.engine import Template
from amp.data.templates.unambiguous import UNAMBIGUOUS_TEMPLATES

_TEMPLATES: dict[str, Template] = {t.id: t for t in AMBIGUOUS_TEMPLATES + UNAMBIGUOUS_TEMPLATES}
if len(_TEMPLATES) != len(AMBIGUOUS_TEMPLATES) + len(UNAMBIGUOUS_TEMPLATES):  # pragma: no cover
    raise TemplateError("duplicate built-in template ids")


def register_template(template: Template, *, replace: bool = False) -> None:
    """Add a template (appended to its pool).  Ids are unique unless ``replace`` is true."""
    if not isinstance(template, Template):
        raise TemplateError(f"expected a Template, got {type(template).__name__}")
    if template.id in _TEMPLATES and not replace:
        raise TemplateError(f"template id {template.id!r} is already registered (pass replace=True)")
    template.choices()  # fail now on unknown word lists, naming the template and slot
    _TEMPLATES[template.id] = template
    engine._bump()


def unregister_template(template_id: str) -> None:
    """Remove a registered template (built-in or not)."""
    if _TEMPLATES.pop(template_id, None) is None:
        raise TemplateError(f"no template with id {template_id!r}")
    engine._bump()


def all_templates() -> list[Template]:
    """Every registered template, in registration (= pool) order."""
    return list(_TEMPLATES.values())


def get_template(template_id: str) -> Template:
    """The template with this id; :class:`TemplateError` if there is none."""
    try:
        return _TEMPLATES[template_id]
    except KeyError:
        raise TemplateError(f"no template with id {template_id!r}") from None


def pool_names() -> list[str]:
    """The pool names of the registered templates, in first-registration order."""
    return list(dict.fromkeys(t.pool for t in _TEMPLATES.values()))
