"""The record a template produces: one (surface, LF) pair in the AmP field layout (docs/paper-notes.md §3).

The original data files hold exactly the fields of :data:`RECORD_FIELDS`; :class:`Example`
carries them plus our ``template`` id, which is not written to JSONL unless asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from amp.data.errors import RecordError
from amp.data.types import find_type

#: The fields of an original AmP JSONL record, in the original order (docs/paper-notes.md §3, §6).
RECORD_FIELDS: tuple[str, ...] = (
    "surface",
    "lf",
    "unfilled_template",
    "template_tags",
    "var_bindings",
    "template_idx",
    "type",
)


def ambiguity_type(record_type: str) -> str:
    """The ambiguity type name of a record ``type`` string: ``scope_reverse`` → ``revscope``.

    The original data calls inverse scope ``scope_reverse`` while its configs and the paper say
    ``revscope`` (docs/paper-notes.md §4.3, §14 item 1); the spellings are declared once, in
    :mod:`amp.data.types`.  Every other string is returned unchanged.
    """
    kind = find_type(record_type)
    return kind.id if kind is not None else record_type


def record_type(ambiguity: str) -> str:
    """Inverse of :func:`ambiguity_type`: ``revscope`` → ``scope_reverse``, others unchanged."""
    kind = find_type(ambiguity)
    return kind.record_type if kind is not None else ambiguity


@dataclass(frozen=True)
class Example:
    """One generated (surface, LF) record (docs/paper-notes.md §3, "Output record").

    ``var_bindings`` maps each slot tag to its **LF-side** value (``picked_up``, not
    "picked up"); treat it as read-only.  ``template_tags`` has one entry per surface slot,
    ``None`` for fixed strings.  ``type`` is the original record type string (``scope_reverse``
    for inverse scope); ``template`` is our template id (``pp/visual/a``), ``None`` for records
    read from files that do not carry it.
    """

    surface: str
    lf: str
    unfilled_template: str = ""
    template_tags: tuple[str | None, ...] = ()
    var_bindings: dict[str, str] = field(default_factory=dict)
    template_idx: int = 0
    type: str = ""
    template: str | None = None

    def __hash__(self) -> int:  # var_bindings is a dict, so hash the identifying fields only
        return hash((self.surface, self.lf, self.template_idx, self.type, self.template))

    @property
    def ambiguity(self) -> str:
        """The ambiguity type name of this record's ``type`` (see :func:`ambiguity_type`)."""
        return ambiguity_type(self.type)

    def to_record(self, *, include_template: bool = False) -> dict[str, Any]:
        """The original JSON layout (``template_tags`` as a list with nulls, int index)."""
        record: dict[str, Any] = {
            "surface": self.surface,
            "lf": self.lf,
            "unfilled_template": self.unfilled_template,
            "template_tags": list(self.template_tags),
            "var_bindings": dict(self.var_bindings),
            "template_idx": self.template_idx,
            "type": self.type,
        }
        if include_template:
            record["template"] = self.template
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, line: int | None = None) -> Example:
        """Build an Example from an original-layout record.

        ``surface`` and ``lf`` are required; the other fields default as in the dataclass.
        ``template_idx`` may be an int or a digit string (BenchCLAMP datums store strings);
        the type ``revscope`` is normalised to the original string ``scope_reverse``.
        Raises :class:`RecordError` (with ``line`` when given) on a malformed record.
        """
        if not isinstance(record, Mapping):
            raise RecordError(f"expected a JSON object, got {type(record).__name__}", line=line)
        for key in ("surface", "lf"):
            if not isinstance(record.get(key), str):
                raise RecordError(f"field {key!r} is missing or not a string", line=line)
        tags = record.get("template_tags", [])
        if not isinstance(tags, list | tuple) or not all(t is None or isinstance(t, str) for t in tags):
            raise RecordError("field 'template_tags' must be a list of strings and nulls", line=line)
        bindings = record.get("var_bindings", {})
        if not isinstance(bindings, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in bindings.items()
        ):
            raise RecordError("field 'var_bindings' must be an object of strings", line=line)
        idx = record.get("template_idx", 0)
        if isinstance(idx, str) and idx.isdigit():
            idx = int(idx)
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise RecordError(f"field 'template_idx' must be an integer, got {idx!r}", line=line)
        rtype = record.get("type", "")
        unfilled = record.get("unfilled_template", "")
        template = record.get("template")
        for key, value in (("type", rtype), ("unfilled_template", unfilled)):
            if not isinstance(value, str):
                raise RecordError(f"field {key!r} must be a string", line=line)
        if template is not None and not isinstance(template, str):
            raise RecordError("field 'template' must be a string or null", line=line)
        return cls(
            surface=record["surface"],
            lf=record["lf"],
            unfilled_template=unfilled,
            template_tags=tuple(tags),
            var_bindings=dict(bindings),
            template_idx=idx,
            type=record_type(rtype),
            template=template,
        )
