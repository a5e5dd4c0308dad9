"""Records on the cache's hot path: hand-written to_dict/from_dict vs pydantic v2 vs msgspec (issue #14).

Times, in one run, decoding N cached ``ParseResult`` and ``PairScore`` JSON values into records
and encoding records back to JSON, for

* **hand** — the hand-written ``to_dict``/``from_dict`` of ``amp/parser/core/results.py`` as they were
  before issue #14 (read from git, commit :data:`HAND_COMMIT`), with ``json.loads``/``json.dumps``;
* **pydantic** — the records as they are now (:mod:`amp.records`: one ``TypeAdapter`` per
  record over the frozen dataclasses), both through dicts (``from_dict``/``to_dict``, what
  :class:`amp.cache.ResultCache` callers do) and straight from/to JSON text
  (``validate_json``/``dump_json``);
* **msgspec** — ``msgspec.Struct`` mirrors built from the same record classes (:func:`msgspec_mirror`) (``msgspec.json.decode(...,
  strict=False)`` reads ``"nan"``/``"inf"``), if msgspec is installed.  msgspec writes NaN and
  infinities as ``null``: its plain encode is lossy, so "msgspec encode+fix" adds the Python pass
  over the floats that byte-compatible output (``"nan"``, ``"inf"``, ``"-inf"``) needs.

Values are realistic: a parse of 5 beams × 40 token steps × 5 alternatives (raw and under the
grammar), an unconstrained beam's NaN grammar probabilities included; a pair score of two
40-step forced scores.

Decision: **pydantic v2** (:mod:`amp.records`).  Measured (``bench/results/records.txt``, 2 shared
CPU cores, so ±30 %): pydantic decodes a parse in ~0.45× the hand-written time and encodes it in
0.15× (``to_json``) to 0.65×; msgspec decodes in ~0.1× but cannot write the cache's ``"nan"``/
``"inf"`` floats (it writes ``null``), and the Python pass that restores them makes its encode
0.9–1.5× the hand-written code.  Byte-compatible values and one schema for encode, decode and
validation decide it; the decode hot path is already faster than before.

    .venv/bin/python bench/records_bench.py [--n 200] [--repeat 3] [--out bench/results/records.txt]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib.util
import json
import math
import operator
import platform
import random
import subprocess
import sys
import tempfile
import time
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, TokenAlternative, TokenStep  # noqa: E402
from amp.records import enc_float  # noqa: E402

#: The last commit with the hand-written record methods.
HAND_COMMIT = "43fac41"


def hand_module() -> Any:
    """``amp/parser/core/results.py`` at :data:`HAND_COMMIT`, imported as a module of its own."""
    text = subprocess.run(["git", "show", f"{HAND_COMMIT}:amp/parser/core/results.py"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "hand_results.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("hand_results", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["hand_results"] = module
    spec.loader.exec_module(module)
    return module


def _step(rng: random.Random, i: int, grammar_nan: bool) -> TokenStep:
    alts = tuple(TokenAlternative(f"tok{rng.randrange(400)}", rng.randrange(40000), rng.random()) for _ in range(5))
    return TokenStep(token=f" t{i}", token_id=rng.randrange(40000), prob=rng.random(),
                     prob_grammar=math.nan if grammar_nan else rng.random(), alternatives=alts,
                     alternatives_grammar=() if grammar_nan else alts[::-1])


def sample_parse(rng: random.Random, beams: int = 5, steps: int = 40) -> ParseResult:
    out = []
    for rank in range(beams):
        unconstrained = rank == beams - 1
        st = tuple(_step(rng, i, unconstrained) for i in range(steps))
        out.append(Beam(rank=rank, text="exists x . man(x)", raw_text=" exists x . man(x)\n",
                        token_ids=tuple(s.token_id for s in st), tokens=tuple(s.token for s in st),
                        logprob=-rng.random() * 10, score=-rng.random(), finished=True, parses=not unconstrained,
                        steps=st))
    return ParseResult(beams=tuple(out), constrained=True, fmt="fol",
                       settings={"beams": beams, "alpha": 0.7, "max_new_tokens": None}, prompt_tokens=321)


def sample_pair(rng: random.Random, steps: int = 40) -> PairScore:
    def forced(lf: str) -> ForcedScore:
        st = tuple(_step(rng, i, False) for i in range(steps))
        return ForcedScore(lf=lf, token_ids=tuple(s.token_id for s in st), tokens=tuple(s.token for s in st),
                           steps=st, sum_logprob=-3.5, mean_logprob=-0.1, sum_logprob_grammar=-1.0,
                           min_prob=0.01, min_prob_grammar=0.2)
    return PairScore(lf0=forced("exists x . man(x)"), lf1=forced("exists y . girl(y)"), p_lf0=0.4, p_lf0_total=0.6)


def msgspec_mirror(cls: Any, made: dict[Any, Any]) -> Any:
    """A ``msgspec.Struct`` with the fields, types and defaults of the record ``cls`` (the same
    schema, no second declaration); nested records are mirrored too."""
    import msgspec  # late: optional dependency (msgspec: compared only where it is installed)

    if cls in made:
        return made[cls]

    def mirrored(tp: Any) -> Any:
        args = typing.get_args(tp)
        if dataclasses.is_dataclass(tp):
            return msgspec_mirror(tp, made)
        if typing.get_origin(tp) is tuple:
            return tuple[mirrored(args[0]), ...]  # type: ignore[valid-type]
        if typing.get_origin(tp) in (typing.Union, types.UnionType):
            return functools.reduce(operator.or_, [mirrored(a) for a in args])
        return tp

    hints = typing.get_type_hints(cls)  # JsonFloat -> float: msgspec has no per-type serializer
    fields = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            fields.append((f.name, mirrored(hints[f.name]), f.default))
        elif f.default_factory is not dataclasses.MISSING:
            fields.append((f.name, mirrored(hints[f.name]), msgspec.field(default_factory=f.default_factory)))
        else:
            fields.append((f.name, mirrored(hints[f.name])))
    made[cls] = msgspec.defstruct(f"M{cls.__name__}", fields, frozen=True)
    return made[cls]


def msgspec_types() -> dict[str, Any] | None:
    """``msgspec.Struct`` mirrors of ParseResult and PairScore (None without msgspec)."""
    try:
        import msgspec  # late: optional dependency (msgspec: compared only where it is installed)
    except ImportError:
        return None
    made: dict[Any, Any] = {}
    return {"msgspec": msgspec, "parse": msgspec_mirror(ParseResult, made), "pair": msgspec_mirror(PairScore, made)}


def _fix_floats(obj: Any) -> Any:
    """The Python pass msgspec output needs to write non-finite floats as the cache did."""
    if isinstance(obj, float):
        return enc_float(obj)
    if isinstance(obj, dict):
        return {k: _fix_floats(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_fix_floats(v) for v in obj]
    return obj


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(kind: str, records: list[Any], hand: Any, repeat: int) -> list[str]:
    """The timing lines of one record kind: every case, per value, with its ratio to hand."""
    n = len(records)
    new_cls = type(records[0])
    ms = msgspec_types()
    lines: list[str] = []
    texts = [json.dumps(r.to_dict(), separators=(",", ":")) for r in records]
    hand_cls = getattr(hand, kind)
    hand_records = [hand_cls.from_dict(json.loads(t)) for t in texts]
    assert all(json.dumps(h.to_dict(), separators=(",", ":")) == t for h, t in zip(hand_records, texts))
    cases: dict[str, Callable[[], Any]] = {
        "hand decode (json.loads + from_dict)": lambda: [hand_cls.from_dict(json.loads(t)) for t in texts],
        "pydantic decode (json.loads + from_dict)": lambda: [new_cls.from_dict(json.loads(t)) for t in texts],
        "pydantic decode (from_json)": lambda: [new_cls.from_json(t) for t in texts],
        "hand encode (to_dict + json.dumps)": lambda: [json.dumps(r.to_dict(), separators=(",", ":"))
                                                       for r in hand_records],
        "pydantic encode (to_dict + json.dumps)": lambda: [json.dumps(r.to_dict(), separators=(",", ":"))
                                                           for r in records],
        "pydantic encode (to_json)": lambda: [r.to_json() for r in records],
    }
    if ms is not None:
        mtype, msgspec = ms["parse" if kind == "ParseResult" else "pair"], ms["msgspec"]
        mrecords = [msgspec.json.decode(t, type=mtype, strict=False) for t in texts]
        cases["msgspec decode (json.decode, strict=False)"] = \
            lambda: [msgspec.json.decode(t, type=mtype, strict=False) for t in texts]
        cases["msgspec encode (lossy: NaN -> null)"] = lambda: [msgspec.json.encode(r) for r in mrecords]
        cases["msgspec encode+fix (to_builtins + floats + json.dumps)"] = \
            lambda: [json.dumps(_fix_floats(msgspec.to_builtins(r)), separators=(",", ":")) for r in mrecords]
    size = sum(map(len, texts)) / n
    lines.append(f"\n{kind}: {size / 1000:.1f} kB of JSON per value")
    base: dict[str, float] = {}
    for name, fn in cases.items():
        us = best(fn, repeat) / n * 1e6
        direction = "decode" if "decode" in name else "encode"
        base.setdefault(direction, us)  # the hand-written case comes first in each direction
        lines.append(f"  {name:<58} {us:9.1f} us  ({us / base[direction]:.2f}x hand)")
    return lines


def run(n: int, repeat: int) -> list[str]:
    rng = random.Random(0)
    hand = hand_module()
    lines = [f"records bench: N={n} values per kind, best of {repeat}; python {platform.python_version()}; "
             f"{platform.machine()}",
             "per value, microseconds (ratio to hand)"]
    for kind, make in (("ParseResult", sample_parse), ("PairScore", sample_pair)):
        lines += measure(kind, [make(rng) for _ in range(n)], hand, repeat)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    lines = run(args.n, args.repeat)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
