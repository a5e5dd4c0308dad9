"""Enumerate, sample, filter and read/write the AmP pools (docs/paper-notes.md §3, §4, §6).

Pools are deterministic, so they are built once per process (``functools.lru_cache``, keyed on
the template registry version so that a newly registered template shows up).

Pool names (:data:`POOLS`):

* ambiguous types (:data:`AMBIGUOUS_TYPES`, declared in :mod:`amp.data.types`): ``pp``,
  ``scope``, ``revscope``, ``bound`` (female then male), ``conj`` — every surface has an LF0 and
  an LF1 record; a type added with :func:`amp.data.types.register_type` is the pool of its
  templates;
* unambiguous sets (§4.6): ``basic``, ``single_conj``, ``double_conj`` (two bracketings,
  idx 0/1), ``possession``, ``instrument``, ``quant``, ``pp_unambig``, ``scope_unambig``,
  ``bound_unambig`` (female then male);
* composite: ``zeroshot_train`` = basic + possession + instrument + double_conj + single_conj +
  quant, the zero-shot ingredient pool of §5.3 (38,882 records).

Aliases accepted wherever a pool name is: a type's aliases (``scope_reverse`` → ``revscope``),
``unambig_conj`` → ``double_conj``, ``unambig_quant`` → ``quant``, ``instr`` → ``instrument``.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import IO

import numpy as np

from amp.data.errors import DataError, RecordError
from amp.data.templates import engine as _model
from amp.data.templates import registry as _registry
from amp.data.templates.engine import Template, fill
from amp.data.templates.records import Example, ambiguity_type, record_type
from amp.data.types import BUILTIN_TYPES, find_type, type_ids
from amp.logic.convert import convert
from amp.logic.vocabulary import DEFAULT_FORMAT, Format, check_format

__all__ = [
    "AMBIGUOUS_TYPES",
    "POOLS",
    "AmbiguousPair",
    "DataError",
    "Example",
    "RecordError",
    "ambiguity_type",
    "find_pair",
    "generate",
    "group_by_surface",
    "pairs",
    "pool",
    "read_jsonl",
    "record_type",
    "sample_pairs",
    "templates",
    "write_jsonl",
]

#: The five built-in ambiguity types, in the paper's order (docs/paper-notes.md §0): the paper's
#: set, for its pools and tables.  Every registered type, added ones included, is
#: :func:`amp.data.types.type_ids` — what choices and defaults read.
AMBIGUOUS_TYPES: tuple[str, ...] = tuple(t.id for t in BUILTIN_TYPES)

#: The unambiguous sets of §4.6, by pool name.
UNAMBIGUOUS_SETS: tuple[str, ...] = (
    "basic", "single_conj", "double_conj", "possession", "instrument", "quant",
    "pp_unambig", "scope_unambig", "bound_unambig",
)

#: Composite pools: name → member pools, concatenated in this order.
COMPOSITE_POOLS: dict[str, tuple[str, ...]] = {
    "zeroshot_train": ("basic", "possession", "instrument", "double_conj", "single_conj", "quant"),
}

#: Every built-in pool name.
POOLS: tuple[str, ...] = AMBIGUOUS_TYPES + UNAMBIGUOUS_SETS + tuple(COMPOSITE_POOLS)

#: Aliases of unambiguous set names (a type's aliases are declared with the type).
_SET_ALIASES: dict[str, str] = {
    "unambig_conj": "double_conj",
    "unambig_quant": "quant",
    "instr": "instrument",
    "instr_unambig": "instrument",
}

GENDERS: tuple[str, ...] = ("female", "male")


@dataclass(frozen=True)
class AmbiguousPair:
    """One ambiguous surface with both of its records (docs/paper-notes.md §0: exactly two LFs).

    ``type`` is the ambiguity type name (``revscope``, not the record string
    ``scope_reverse``); ``template`` is the template id.
    """

    surface: str
    type: str
    template: str
    lf0: Example
    lf1: Example

    def lf(self, idx: int) -> Example:
        """The record of reading ``idx`` (0 or 1)."""
        if idx not in (0, 1):
            raise DataError(f"an ambiguous pair has readings 0 and 1, not {idx!r}")
        return self.lf0 if idx == 0 else self.lf1

    @property
    def var_bindings(self) -> dict[str, str]:
        return self.lf0.var_bindings


# --- pools ---------------------------------------------------------------------------------


def pool_names() -> list[str]:
    """Every pool name that :func:`pool` accepts (built-in and user-registered)."""
    return list(dict.fromkeys(POOLS + tuple(_registry.pool_names())))


def _resolve(name: str) -> str:
    if not isinstance(name, str):
        raise DataError(f"a pool name must be a string, got {name!r}")
    kind = find_type(name)
    name = kind.id if kind is not None else _SET_ALIASES.get(name, name)
    if name not in COMPOSITE_POOLS and name not in _registry.pool_names():
        raise DataError(f"unknown pool {name!r}; choose one of: {', '.join(pool_names())}")
    return name


def _check_gender(gender: str | None) -> None:
    if gender is not None and gender not in GENDERS:
        raise DataError(f"gender must be one of {', '.join(GENDERS)}, not {gender!r}")


def templates(type: str | None = None, *, gender: str | None = None) -> list[Template]:
    """The templates of a pool (or all registered templates), in pool order."""
    _check_gender(gender)
    if type is None:
        found = _registry.all_templates()
    else:
        name = _resolve(type)
        members = COMPOSITE_POOLS.get(name, (name,))
        found = [t for m in members for t in _registry.all_templates() if t.pool == m]
    return [t for t in found if gender is None or t.gender in (None, gender)]


@lru_cache(maxsize=512)
def _template_records(template: Template, version: int) -> tuple[Example, ...]:
    return tuple(fill(template))


@lru_cache(maxsize=64)
def _pool(name: str, gender: str | None, version: int) -> tuple[Example, ...]:
    out: list[Example] = []
    for t in templates(name, gender=gender):
        out.extend(_template_records(t, version))
    return tuple(out)


def pool(name: str, *, gender: str | None = None) -> list[Example]:
    """The full pool ``name`` in original order (docs/paper-notes.md §4; counts §4.7).

    ``gender`` (``female``/``male``) keeps one gender of the gendered sets (``bound``,
    ``bound_unambig``); other templates are unaffected.  For ambiguous templates the records
    are all LF0 records of a template, then all its LF1 records (§3, Ordering).
    """
    _check_gender(gender)
    return list(_pool(_resolve(name), gender, _model.registry_version()))


@lru_cache(maxsize=64)
def _pairs(name: str, gender: str | None, version: int) -> tuple[AmbiguousPair, ...]:
    out: list[AmbiguousPair] = []
    for t in templates(name, gender=gender):
        if t.ambiguity is None or len(t.lfs) != 2:
            raise DataError(f"pool {name!r} is not ambiguous (template {t.id!r} has no LF0/LF1)")
        records = _template_records(t, version)
        half = len(records) // 2
        for r0, r1 in zip(records[:half], records[half:], strict=True):
            out.append(AmbiguousPair(r0.surface, t.ambiguity, t.id, r0, r1))
    return tuple(out)


def _filter_pairs(
    items: Iterable[AmbiguousPair], template: str | None, word: str | None
) -> list[AmbiguousPair]:
    out = list(items)
    if template is not None:
        out = [p for p in out if _template_matches(p.template, template)]
    if word is not None:
        out = [p for p in out if _word_matches(p.lf0, word)]
    return out


def _template_matches(template_id: str | None, wanted: str) -> bool:
    """Exact id, or an id prefix ending at a ``/`` (``pp/visual`` selects pp/visual/*)."""
    if template_id is None:
        return False
    return template_id == wanted or template_id.startswith(wanted.rstrip("/") + "/")


def _word_matches(example: Example, word: str) -> bool:
    """A var_binding value equal to ``word`` or ``word`` as whole word(s) of the surface."""
    return word in example.var_bindings.values() or f" {word} " in f" {example.surface} "


def _check_template_filter(name: str, template: str | None, gender: str | None) -> None:
    if template is None:
        return
    ids = [t.id for t in templates(name, gender=gender)]
    if not any(_template_matches(i, template) for i in ids):
        raise DataError(
            f"no template {template!r} in pool {name!r}; its templates are: {', '.join(ids)}"
        )


def pairs(
    type: str,
    *,
    template: str | None = None,
    word: str | None = None,
    gender: str | None = None,
) -> list[AmbiguousPair]:
    """The ambiguous pairs of a type in pool order, optionally filtered.

    ``template`` keeps one template id (or an id prefix such as ``pp/visual``); ``word`` keeps
    pairs whose var_bindings contain the value or whose surface contains the word(s).
    """
    _check_gender(gender)
    name = _resolve(type)
    _check_template_filter(name, template, gender)
    return _filter_pairs(_pairs(name, gender, _model.registry_version()), template, word)


def sample_pairs(
    type: str,
    n: int,
    seed: int,
    *,
    template: str | None = None,
    word: str | None = None,
    gender: str | None = None,
) -> list[AmbiguousPair]:
    """``n`` distinct pairs drawn uniformly without replacement, in drawn order.

    Seeded with a local ``numpy.random.default_rng(seed)``; the global RNG is never touched.
    """
    candidates = pairs(type, template=template, word=word, gender=gender)
    idx = _sample_indices(len(candidates), n, seed, what=f"{type} pairs")
    return [candidates[i] for i in idx]


def _sample_indices(size: int, n: int, seed: int, *, what: str) -> list[int]:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise DataError(f"n must be a non-negative integer, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise DataError(f"seed must be an integer, got {seed!r}")
    if n > size:
        raise DataError(f"cannot sample {n} from {size} {what}")
    rng = np.random.default_rng(int(seed))
    return [int(i) for i in rng.choice(size, size=int(n), replace=False)]


def group_by_surface(records: Iterable[Example]) -> list[list[Example]]:
    """Records grouped by surface, groups in first-appearance order (docs/paper-notes.md §5.1 step 2)."""
    groups: dict[str, list[Example]] = {}
    for r in records:
        groups.setdefault(r.surface, []).append(r)
    return list(groups.values())


def generate(
    type: str,
    *,
    template: str | None = None,
    word: str | None = None,
    n: int | None = None,
    seed: int | None = None,
    fmt: str = DEFAULT_FORMAT,
    gender: str | None = None,
) -> list[Example]:
    """Records of a pool: all of them (``n=None``) or those of ``n`` seeded sample surfaces.

    With ``n``, ``seed`` is required; ``n`` surfaces are drawn uniformly without replacement
    (local ``default_rng(seed)``) and each contributes all its records, adjacent (LF0 then LF1
    for ambiguous types), in drawn order.  Without ``n`` the pool order is kept.
    ``fmt="lisp"`` converts every ``lf`` with :func:`amp.logic.convert.convert`; the
    ``unfilled_template`` stays FOL, as in the original Lisp files (§6.1).
    """
    check_format(fmt, DataError)
    if n is not None and seed is None:
        raise DataError("sampling n surfaces needs a seed")
    name = _resolve(type)
    _check_template_filter(name, template, gender)
    records = pool(name, gender=gender)
    if template is not None:
        records = [r for r in records if _template_matches(r.template, template)]
    if word is not None:
        keep = {r.surface for r in records if _word_matches(r, word)}
        records = [r for r in records if r.surface in keep]
    if n is not None:
        groups = group_by_surface(records)
        idx = _sample_indices(len(groups), n, seed, what=f"{name} surfaces")  # type: ignore[arg-type]
        records = [r for i in idx for r in groups[i]]
    if fmt == Format.LISP:
        records = to_lisp(records)
    return records


def to_lisp(records: Iterable[Example]) -> list[Example]:
    """The records with their ``lf`` converted FOL → Lisp (docs/paper-notes.md §7.3)."""

    return [replace(r, lf=convert(r.lf, src=Format.FOL, dst=Format.LISP)) for r in records]


@lru_cache(maxsize=4)
def _pair_index(version: int, types: tuple[str, ...]) -> dict[str, AmbiguousPair]:
    index: dict[str, AmbiguousPair] = {}
    pools = set(_registry.pool_names())
    for name in types:
        if name not in pools:  # a registered type without templates yet
            continue
        for p in _pairs(name, None, version):
            index.setdefault(p.surface, p)
    return index


def find_pair(surface: str) -> AmbiguousPair | None:
    """The ambiguous pair with this exact surface (any registered type, both genders), or ``None``."""
    return _pair_index(_model.registry_version(), type_ids()).get(surface)


# --- JSONL ---------------------------------------------------------------------------------

PathOrFile = str | os.PathLike[str] | IO[str]


def write_jsonl(
    examples: Iterable[Example], path_or_file: PathOrFile, *, include_template: bool = False
) -> int:
    """Write records in the original layout, one JSON object a line; returns the count.

    Field order and separators are those of the original files (docs/paper-notes.md §6).
    ``include_template`` adds our ``template`` id as an extra field.
    """
    if isinstance(path_or_file, str | os.PathLike):
        with open(path_or_file, "w", encoding="utf-8") as fh:
            return write_jsonl(examples, fh, include_template=include_template)
    count = 0
    for ex in examples:
        path_or_file.write(json.dumps(ex.to_record(include_template=include_template)) + "\n")
        count += 1
    return count


def read_jsonl(path_or_file: PathOrFile) -> list[Example]:
    """Read original-layout records (blank lines skipped).

    Accepts the original ``scope_reverse`` type string (and ``revscope``, normalised to it).
    A malformed line raises :class:`RecordError` whose ``line`` is the 1-based line number.
    """
    if isinstance(path_or_file, str | os.PathLike):
        with open(Path(path_or_file), encoding="utf-8") as fh:
            return read_jsonl(fh)
    out: list[Example] = []
    for number, text in enumerate(path_or_file, start=1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"not valid JSON ({exc.msg} at column {exc.colno})", line=number) from None
        out.append(Example.from_record(obj, line=number))
    return out


def dumps_jsonl(examples: Iterable[Example], *, include_template: bool = False) -> str:
    """The JSONL text of :func:`write_jsonl`, as a string."""
    buf = io.StringIO()
    write_jsonl(examples, buf, include_template=include_template)
    return buf.getvalue()
