"""Bounded memo tables, declared once: a least-recently-used cache and a memoised method.

Two shapes of remembering recomputable values, used wherever the library keeps them:

* :class:`LruCache` — thread-safe, at most ``maxsize`` entries (a number, or a function read at
  every insertion, e.g. an environment setting); the least recently used entry goes first.  The
  grammar masks per automaton state and the loaded models per spec use it.
* :class:`Memo` — a function's results per argument, computed on the first lookup, in a table
  cleared when it reaches ``cap`` entries (cheap on the hot path: one dictionary lookup on a hit;
  every value is recomputable, so clearing only costs time).  The grammar automaton uses it.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """A thread-safe mapping of at most ``maxsize`` entries, least recently used out first.

    ``maxsize`` is a positive number or a function returning one (read at every insertion).
    ``hits``/``misses`` count :meth:`get` lookups.
    """

    def __init__(self, maxsize: int | Callable[[], int]) -> None:
        self._maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def maxsize(self) -> int:
        size = self._maxsize() if callable(self._maxsize) else self._maxsize
        return max(1, int(size))

    def get(self, key: K) -> V | None:
        """The value under ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: K, value: V) -> V:
        """Store ``value`` under ``key`` (evicting the least recently used beyond the bound)."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            limit = self.maxsize
            while len(self._data) > limit:
                self._data.popitem(last=False)
        return value

    def get_or_compute(self, key: K, compute: Callable[[], V]) -> V:
        """The cached value, else ``compute()`` stored (computed outside the lock: two threads may
        both compute a missing value; the later one is kept)."""
        found = self.get(key)
        return found if found is not None else self.put(key, compute())

    def values(self) -> list[V]:
        with self._lock:
            return list(self._data.values())

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


class Memo(dict):
    """A function's results by argument, computed on first lookup: ``memo[args]``.

    A ``compute`` of several parameters is called with the key's items (``memo[state, ch]`` calls
    ``compute(state, ch)``), one of one parameter with the key itself (which may be a tuple).  The table is cleared when it reaches
    ``cap`` entries.  A hit is one C-level dictionary lookup (no Python frame), which matters on
    the grammar automaton's hot path.
    """

    def __init__(self, compute: Callable[..., Any], cap: int) -> None:
        super().__init__()
        self._compute = compute
        self._spread = len(inspect.signature(compute).parameters) > 1
        self._cap = cap

    def __missing__(self, key: Any) -> Any:
        value = self._compute(*key) if self._spread else self._compute(key)
        if len(self) >= self._cap:
            self.clear()
        self[key] = value
        return value
