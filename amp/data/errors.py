"""Every error the data package raises on purpose, in one place.

Templates that cannot be filled, malformed template records, split configurations, the
ambiguity-type registry and generation; each derives from :class:`amp.errors.AmpError`.
"""

from __future__ import annotations

from amp.errors import AmpError


class TemplateError(AmpError, ValueError):
    """A template that cannot be filled (unknown slot, unknown word list, bad constraint)."""


class RecordError(AmpError, ValueError):
    """A record (or a JSONL line) that does not have the AmP field layout.

    ``line`` is the 1-based line number when the record came from a JSONL file, else ``None``.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


class SplitError(AmpError, ValueError):
    """A split request the original procedure cannot serve (bad ratio, format, or size)."""


class AmbiguityTypeError(AmpError, ValueError):
    """An ambiguity type declaration or registration that cannot be used (the message says why)."""


class UnknownTypeError(AmbiguityTypeError):
    """An ambiguity type name that is neither a registered id nor an alias of one."""


class DataError(AmpError, ValueError):
    """A request for data that cannot be served: unknown pool, bad filter, sample too large."""
