"""How deep a JSON value nests, measured without recursion, and its bound.

Free-form JSON that a service stores and sends back (a job's ``meta``) is checked against
:data:`~amp.parser.core.limits.MAX_JSON_DEPTH` before it is kept: a value nested hundreds of
levels deep fits any byte cap, yet breaks every serialiser that recurses (pydantic's stops at a
few hundred levels) each time it is sent again.
"""

from __future__ import annotations

from typing import Any

from amp.parser.core import limits
from amp.parser.core.errors import RequestTooLarge


def json_depth(value: Any) -> int:
    """Objects and arrays nested inside one another: a scalar is 0 deep, ``{}`` and ``[]`` 1,
    ``{"a": [1]}`` 2.  Iterative, so a value of any depth is measured (no ``RecursionError``)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest


def check_json_depth(value: Any, name: str) -> Any:
    """``value`` if it nests at most :data:`~amp.parser.core.limits.MAX_JSON_DEPTH` levels; else
    :class:`~amp.parser.core.errors.RequestTooLarge` naming the bound."""
    depth = json_depth(value)
    if depth > limits.MAX_JSON_DEPTH:
        raise RequestTooLarge(f"{name} is nested {depth:,} levels deep, over the limit of "
                              f"{limits.MAX_JSON_DEPTH} (MAX_JSON_DEPTH)")
    return value
