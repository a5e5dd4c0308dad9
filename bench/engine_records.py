"""One engine's per-item results of ``bench/engine_bench.py --agreement N``, as a JSON-lines file.

The first line is the :class:`RecordsHeader` (the engine, the model, the settings its numbers depend
on, the git commit and the date); every further line is an :class:`ItemLine`: the item's
:class:`ItemKey` (type, zero- or few-shot, ratio, sentence, a digest of the prompt) and its
:class:`~amp.evaluation.sweep_run.SweepRecord` (top beams, match, ``p_lf0`` …), exactly as a sweep
makes it.  Lines are appended as items finish, so a run that stops keeps what it did and
``--reuse`` goes on from there (:func:`read_records`, :func:`missing_items`).

Whether a file can be reused is decided by :meth:`RecordsHeader.same_numbers`: the same engine,
model and settings (a different commit is fine: the table says which commit each side came from).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from errors import AgreementError

from amp.evaluation.sweep_plan import SweepItem
from amp.evaluation.sweep_run import SweepRecord
from amp.records import JsonRecord

__all__ = [
    "ItemKey",
    "ItemLine",
    "RecordsHeader",
    "append_lines",
    "item_key",
    "missing_items",
    "open_records",
    "prompt_digest",
    "read_records",
    "record_key",
    "write_header",
]

#: Hex digits of the prompt digest kept in a key (64 bits: no two prompts of a sweep collide).
DIGEST_CHARS = 16
#: The two kinds of item an agreement run holds (``ItemKey.shot``).
SHOTS: tuple[str, str] = ("zero", "few")


def prompt_digest(prompt_text: str) -> str:
    """The first :data:`DIGEST_CHARS` hex digits of the SHA-256 of the prompt's text."""
    return hashlib.sha256(prompt_text.encode("utf-8")).hexdigest()[:DIGEST_CHARS]


@dataclass(frozen=True)
class ItemKey(JsonRecord):
    """What names an item across engines: its sentence type, ``shot`` (``zero``/``few``), ratio
    (None for zero-shot), the test sentence and the digest of its prompt."""

    type: str
    shot: str
    ratio: float | None
    sentence: str
    prompt: str

    def __post_init__(self) -> None:
        if self.shot not in SHOTS:
            raise AgreementError(f"an item key's shot must be one of {SHOTS}, not {self.shot!r}")

    def text(self) -> str:
        """``pp few r=0.50 'The man saw …'``: the key as a table shows it."""
        ratio = "" if self.ratio is None else f" r={self.ratio:.2f}"
        return f"{self.type} {self.shot}{ratio} {self.sentence!r}"


def item_key(item: SweepItem) -> ItemKey:
    """The key of a planned sweep item."""
    return ItemKey(type=item.type, shot="zero" if item.ratio is None else "few", ratio=item.ratio,
                   sentence=item.surface, prompt=prompt_digest(item.prompt_text))


@dataclass(frozen=True)
class ItemLine(JsonRecord):
    """One item's result on one engine: its key and the sweep record the engine gave."""

    key: ItemKey
    record: SweepRecord


@dataclass(frozen=True)
class RecordsHeader(JsonRecord):
    """The first line of an engine's file: ``engine``, ``model``, ``settings`` (the keywords the
    numbers depend on: dtype, device, beams, canonical mode …), ``threads`` (recorded, not compared:
    the same numbers on any count), the git ``commit`` the numbers came from and the ``date``."""

    engine: str
    model: str
    settings: dict[str, str]
    commit: str
    date: str
    threads: int = 0

    def same_numbers(self, other: RecordsHeader) -> bool:
        """Whether the two files' numbers are interchangeable: the same engine, model and settings."""
        return (self.engine, self.model, self.settings) == (other.engine, other.model, other.settings)


def now_text() -> str:
    """The date and time in UTC as the headers and reports write it."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def write_header(path: Path, header: RecordsHeader) -> None:
    """Start ``path`` afresh with ``header`` as its only line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header.to_json() + b"\n")


def append_lines(path: Path, lines: Iterable[ItemLine]) -> int:
    """Append each line as it comes (flushed, so a stopped run keeps it); returns how many."""
    n = 0
    with path.open("ab") as fh:
        for line in lines:
            fh.write(line.to_json() + b"\n")
            fh.flush()
            n += 1
    return n


def read_records(path: Path) -> tuple[RecordsHeader, dict[ItemKey, ItemLine]]:
    """The header and the item lines of ``path`` by key (a later line for a key replaces an earlier one);
    :class:`~errors.AgreementError` naming the file and line when a line does not parse."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AgreementError(f"cannot read the records file {path}: {exc.strerror or exc}") from None
    rows = text.splitlines()
    if not rows:
        raise AgreementError(f"the records file {path} is empty (no header line)")
    try:
        header = RecordsHeader.from_json(rows[0])
    except ValueError as exc:
        raise AgreementError(f"{path}:1: not a records header ({_first_line(exc)})") from None
    lines: dict[ItemKey, ItemLine] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row.strip():
            continue
        try:
            line = ItemLine.from_json(row)
        except (ValueError, AgreementError) as exc:
            if number == len(rows) and not _complete_json(row):
                break  # a run stopped while writing its last line: that item is computed again
            raise AgreementError(f"{path}:{number}: not an item line ({_first_line(exc)})") from None
        lines[line.key] = line
    return header, lines


def _complete_json(row: str) -> bool:
    try:
        json.loads(row)
    except ValueError:
        return False
    return True


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def missing_items(items: Sequence[SweepItem], done: dict[ItemKey, Any]) -> list[SweepItem]:
    """The planned items whose key is not among ``done``, in plan order."""
    return [it for it in items if item_key(it) not in done]


def record_key(record: SweepRecord, prompt_text: str) -> ItemKey:
    """The key of a record made from an item with ``prompt_text`` (for records made outside a plan)."""
    return ItemKey(type=record.type, shot="zero" if record.ratio is None else "few", ratio=record.ratio,
                   sentence=record.surface, prompt=prompt_digest(prompt_text))


def open_records(path: Path, header: RecordsHeader, items: Sequence[SweepItem], *,
                 reuse: bool) -> tuple[dict[ItemKey, ItemLine], list[SweepItem], str]:
    """Get ``path`` ready for an engine's run of ``items``: (the lines already done, the items still to
    run, a note for people).  With ``reuse`` and a file whose :meth:`RecordsHeader.same_numbers` holds,
    its lines are kept; when items remain, the file is written again (a half-written last line
    dropped) with the header's commit and date saying ``<old>, then <new>`` if they differ.  Otherwise
    the file starts afresh with ``header``."""
    done: dict[ItemKey, ItemLine] = {}
    note = ""
    old = header
    if reuse and path.is_file():
        old, lines = read_records(path)
        if old.same_numbers(header):
            done, note = lines, f"reusing {len(lines)} records of {path} (commit {old.commit})"
        else:
            note = f"{path} was made with other settings ({old.model}, {old.settings}): computing afresh"
    todo = missing_items(items, done)
    if not done:
        write_header(path, header)
    elif todo:
        if old.commit.split(", then ")[-1] != header.commit:
            old = replace(old, commit=f"{old.commit}, then {header.commit}", date=f"{old.date}, then {header.date}")
        write_header(path, old)
        append_lines(path, done.values())
    return done, todo, note
