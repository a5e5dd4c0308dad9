"""Saved prompt prefixes: the KV cells of recent prompts' first tokens, least recently used first out,
bounded in bytes.

An engine that keeps KV cells per sequence (:class:`amp.parser.search.cell_search.Cells`) holds one
prompt at a time; a prompt that shares its first tokens with that one keeps their cells
(:meth:`amp.parser.search.cell_decoder.CellDecoder.prompt`).  A sweep sorted by prompt needs no
more, but requests that alternate between prompt families (two clients of one service, a teacher
going back to an earlier slide) would feed each family's header and examples again every time.
:class:`PrefixStates` keeps the cells of several such prefixes (the engine's own bytes, at most
:data:`PREFIX_STATE_BYTES` in all), so that the decoder puts back the one that shares the most
with a new prompt and feeds only the rest (docs/paper-notes.md §19).

Only the container lives here (pure Python, keys are token-id tuples); what a state holds and when
it is exact is the engine's (:meth:`amp.parser.models.gguf_cells.SeqCells.save_state`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from amp.errors import SettingError

#: The bytes all saved prefixes may hold together (about five 512-token prefixes of the embedded model).
PREFIX_STATE_BYTES = 48 * 2**20


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PrefixStates:
    """Saved prefixes by their token ids, least recently used evicted first; ``max_bytes`` (checked
    here: an integer of 0 or more; 0 keeps nothing) bounds their bytes together, and a state larger
    than the bound is not kept."""

    def __init__(self, max_bytes: int = PREFIX_STATE_BYTES) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise SettingError(f"the bytes of saved prompt prefixes must be an integer of 0 or more, not {max_bytes!r}")
        self.max_bytes = max_bytes
        self._states: OrderedDict[tuple[int, ...], bytearray] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, key: object) -> bool:
        return key in self._states

    @property
    def nbytes(self) -> int:
        """The bytes held now (never above :attr:`max_bytes`)."""
        return self._bytes

    def keys(self) -> list[tuple[int, ...]]:
        """The saved prefixes, least recently used first."""
        return list(self._states)

    def best(self, ids: Sequence[int], *, limit: int) -> tuple[tuple[int, ...], int] | None:
        """The saved prefix sharing the most leading tokens with ``ids`` (at most ``limit`` counted),
        and that count; None when none shares a token."""
        found: tuple[tuple[int, ...], int] | None = None
        for key in self._states:
            n = min(shared_prefix(key, ids), limit)
            if n > 0 and (found is None or n > found[1]):
                found = (key, n)
        return found

    def get(self, key: tuple[int, ...]) -> bytearray | None:
        """The state of ``key`` (now the most recently used), or None."""
        data = self._states.get(key)
        if data is not None:
            self._states.move_to_end(key)
        return data

    def put(self, key: tuple[int, ...], data: bytearray) -> bool:
        """Keep ``data`` as the state of ``key``, evicting the least recently used until it fits;
        False (nothing evicted) when it alone is larger than the bound."""
        if len(data) > self.max_bytes:
            return False
        old = self._states.pop(key, None)
        if old is not None:
            self._bytes -= len(old)
        while self._states and self._bytes + len(data) > self.max_bytes:
            _k, gone = self._states.popitem(last=False)
            self._bytes -= len(gone)
        self._states[key] = data
        self._bytes += len(data)
        return True

    def clear(self) -> None:
        self._states.clear()
        self._bytes = 0
