"""Typed JSON records: one pydantic schema per record type encodes, decodes and validates it.

Every record that travels as JSON (cache values, demo packs, the parser service, job status) is a
frozen stdlib dataclass that inherits :class:`JsonRecord`.  Its fields *are* its schema: a
``pydantic.TypeAdapter`` built once per class turns the dataclass into JSON-safe dicts
(:meth:`JsonRecord.to_dict`), back (:meth:`JsonRecord.from_dict`) and validates what it reads
(wrong types, missing fields: :class:`pydantic.ValidationError`, a ``ValueError``).  There is no
hand-written ``to_dict``/``from_dict`` per record any more.

Why pydantic v2 and not msgspec (``bench/records_bench.py``, ``bench/results/records.txt``, on
a cached parse of 5 beams × 40 steps × 5 alternatives): pydantic decodes it in 0.44–0.47× the
hand-written code's time (0.66–0.81× for a pair score) and encodes it in 0.15× (``to_json``)
to 0.65× (``to_dict``); msgspec decodes ~5× faster still (0.09×) but writes NaN and infinities
as ``null``, so the values written before (``"nan"``, ``"inf"``, ``"-inf"``) cannot be written
again byte for byte without a Python pass over every float, which makes its encode slower than
the hand-written code (0.87–1.54×).  pydantic reads those strings as floats natively and writes
them through one serializer on the float type (:data:`JsonFloat`), validates the stdlib frozen
dataclasses the records already were (``replace``, equality, hashing unchanged), and is what
the parser service's request schema (:mod:`amp.serve.schema`) and mypy's plugin use already.

JSON has no NaN or infinities, so **non-finite floats are written as the strings ``"nan"``,
``"inf"`` and ``"-inf"``** (:func:`enc_float`) and read back as floats; a round trip is exact
(``R.from_dict(json.loads(json.dumps(r.to_dict()))) == r``, except that NaN never equals itself).
Unknown keys are ignored when reading (a value written by a newer version still reads).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Self

from pydantic import BeforeValidator, PlainSerializer, TypeAdapter, ValidationError


def enc_float(x: float | None) -> float | str | None:
    """A float as JSON allows it: finite floats as is, NaN/±inf as ``"nan"``/``"inf"``/``"-inf"``."""
    if x is None:
        return None
    x = float(x)
    if math.isfinite(x):
        return x
    if math.isnan(x):
        return "nan"
    return "inf" if x > 0 else "-inf"


#: A float field that may be NaN or infinite (written as a string, read back as a float).
JsonFloat = Annotated[float, PlainSerializer(enc_float, return_type=Any, when_used="json")]

#: :data:`JsonFloat` or ``None``.
OptJsonFloat = Annotated[float | None, PlainSerializer(enc_float, return_type=Any, when_used="json")]

#: A float that is NaN when unknown, written as ``null`` (and ``null`` read back as NaN).
NanAsNull = Annotated[
    float,
    BeforeValidator(lambda v: math.nan if v is None else v),
    PlainSerializer(lambda x: None if math.isnan(x) else x, return_type=Any, when_used="json"),
]

#: A JSON object where ``null`` reads as ``{}``.
JsonObject = Annotated[dict[str, Any], BeforeValidator(lambda v: {} if v is None else v)]

#: A JSON object of strings where ``null`` reads as ``{}``.
StrObject = Annotated[dict[str, str], BeforeValidator(lambda v: {} if v is None else v)]


def describe(exc: ValidationError, limit: int = 3) -> str:
    """What is wrong and where, for people: ``"beams.0.steps.3.prob: Input should be a valid number"``."""
    parts = [f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:limit]]
    more = exc.error_count() - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def adapter(cls: type) -> TypeAdapter[Any]:
    """The one schema of a record class (built on first use, then shared)."""
    found = _ADAPTERS.get(cls)
    if found is None:
        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


class JsonRecord:
    """Mixin of the JSON records: ``to_dict``/``from_dict``/``to_json``/``from_json`` from the schema.

    Subclasses are frozen dataclasses; their annotations (with :data:`JsonFloat` where a float
    may be non-finite) are the schema.
    """

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-safe plain data (field order as declared)."""
        out: dict[str, Any] = adapter(type(self)).dump_python(self, mode="json")
        return out

    def to_json(self) -> bytes:
        """The record as compact JSON bytes (the same data as :meth:`to_dict`)."""
        return adapter(type(self)).dump_json(self)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Validate plain data against the schema; :class:`pydantic.ValidationError` if it does not fit."""
        out: Self = adapter(cls).validate_python(data)
        return out

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Validate JSON text against the schema (no intermediate dicts)."""
        out: Self = adapter(cls).validate_json(text)
        return out
