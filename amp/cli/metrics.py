"""``python -m amp metrics``: ZM_k, FDM, FIM and top-1 rates of a predictions file (ref. §13).

    python -m amp metrics --predictions preds.jsonl
    python -m amp metrics --predictions preds.jsonl --mode paper --k 5 --json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from amp.cli import common
from amp.cli.common import fail
from amp.cli.errors import PredictionsError
from amp.errors import MetricError
from amp.evaluation.matching import gold_key
from amp.evaluation.metrics import fdm_by_ratio, fim, normalise_type, top1_accuracy, zm_k
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE
from amp.prompts import check_ratio

_DESCRIPTION = """\
Score a JSONL file of model predictions with the AmP metrics (docs/paper-notes.md §13).

Input: one JSON object per line (blank lines are skipped), one per test item:

  {"type": "pp",                      ambiguity type; "scope_reverse" counts as "revscope"
   "predictions": ["...", "..."],     the beam, best first (may be empty)
   "lf0": "...", "lf1": "...",        the two gold LFs
   "ratio": 0.3,                      optional: few-shot items only, fraction of LF0 examples
                                      in the prompt, in [0, 1]
   "p_lf0": 0.42}                     optional: few-shot P(LF0) from forced decoding, in [0, 1]
                                      (null or NaN = undefined, skipped by FIM)

Output, per type:
  zero-shot (items without "ratio"): ZM_k in %% (both LFs in the top k, paper Eq. 1)
  few-shot (items with "ratio"):     FDM (Eq. 2; range 0-2, lower is better) and
                                     FIM (Eq. 3; range 0-1, over items with "p_lf0")
  both: top-1 rates in %% (LF0, LF1, either, neither, unparseable).
Predictions that do not parse never match.  --json prints the same numbers as one JSON object
(NaN as null).  A malformed line is an error (exit code 2) naming its line number.
"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "metrics",
        help="ZM_k / FDM / FIM of a JSONL predictions file",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--predictions", required=True, metavar="FILE",
                        help="JSONL predictions file ('-' for stdin)")
    common.add_mode_argument(parser)
    parser.add_argument("--k", type=_positive_int, default=5, help="k of ZM_k (default: 5)")
    common.add_format_argument(parser, help="format of predictions and gold LFs (default: fol)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=lambda args: run(args, parser))


# --------------------------------------------------------------------------------------
# input


@dataclass(frozen=True)
class Item:
    """One line of the predictions file."""

    line: int
    type: str
    predictions: tuple[str, ...]
    lf0: str
    lf1: str
    ratio: float | None = None
    p_lf0: float | None = None


def read_items(lines: Iterable[str], *, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT) -> list[Item]:
    """Parse and validate JSONL lines (gold LFs must parse); raises :class:`PredictionsError`."""

    items: list[Item] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue

        def bad(message: str, number: int = number) -> PredictionsError:
            return PredictionsError(f"line {number}: {message}")

        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise bad(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise bad("JSON nested too deeply") from None
        if not isinstance(obj, dict):
            raise bad("expected a JSON object")
        for name in ("type", "predictions", "lf0", "lf1"):
            if name not in obj:
                raise bad(f'missing field "{name}"')
        if not isinstance(obj["type"], str) or not obj["type"].strip():
            raise bad('"type" must be a non-empty string')
        predictions = obj["predictions"]
        if not isinstance(predictions, list) or not all(isinstance(p, str) for p in predictions):
            raise bad('"predictions" must be a list of strings (the beam, best first)')
        for name in ("lf0", "lf1"):
            if not isinstance(obj[name], str):
                raise bad(f'"{name}" must be a string')
            try:
                gold_key(obj[name], mode, fmt)
            except MetricError as exc:
                raise bad(f'"{name}": {exc}') from None
        ratio = obj.get("ratio")
        if ratio is not None:
            try:
                ratio = check_ratio(ratio)
            except MetricError as exc:
                raise bad(f'"ratio": {exc}') from None
        p = obj.get("p_lf0")
        if p is not None:
            if isinstance(p, bool) or not isinstance(p, (int, float)):
                raise bad('"p_lf0" must be a number in [0, 1] or null')
            p = float(p)
            if not math.isnan(p) and not 0 <= p <= 1:
                raise bad(f'"p_lf0" must lie in [0, 1], got {p}')
        items.append(Item(number, normalise_type(obj["type"]), tuple(predictions),
                          obj["lf0"], obj["lf1"], ratio, p))
    return items


# --------------------------------------------------------------------------------------
# scoring


def score(items: list[Item], *, mode: str = DEFAULT_MODE, k: int = 5, fmt: str = DEFAULT_FORMAT) -> dict[str, Any]:
    """All metrics per type, as plain data (the ``--json`` output)."""

    def top1(group: list[Item]) -> dict[str, float]:
        return top1_accuracy([i.predictions[0] if i.predictions else None for i in group],
                             [i.lf0 for i in group], [i.lf1 for i in group], mode, fmt=fmt)

    zero: dict[str, Any] = {}
    few: dict[str, Any] = {}
    for type_name in sorted({i.type for i in items}):
        group = [i for i in items if i.type == type_name and i.ratio is None]
        if group:
            zero[type_name] = {
                "n": len(group),
                "zm_k": zm_k([(i.predictions, i.lf0, i.lf1) for i in group], k, mode, fmt=fmt),
                "top1": top1(group),
            }
        group = [i for i in items if i.type == type_name and i.ratio is not None]
        if group:
            by_ratio: dict[float, list[Item]] = {}
            for i in group:
                by_ratio.setdefault(i.ratio, []).append(i)  # type: ignore[arg-type]
            ratios = sorted(by_ratio)
            terms = fdm_by_ratio(
                {r: [(i.predictions[0] if i.predictions else None, i.lf0, i.lf1) for i in by_ratio[r]]
                 for r in ratios}, mode, fmt=fmt)
            probs = {r: [i.p_lf0 for i in by_ratio[r] if i.p_lf0 is not None] for r in ratios}
            few[type_name] = {
                "n": len(group),
                "ratios": ratios,
                "fdm": sum(terms.values()) / len(terms),
                "fdm_by_ratio": {str(r): terms[r] for r in ratios},
                "fim": fim(probs),
                "fim_n": sum(1 for values in probs.values() for p in values if not math.isnan(p)),
                "top1": top1(group),
            }
    return {"mode": mode, "k": k, "format": fmt, "n": len(items), "zero_shot": zero, "few_shot": few}


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _nan_to_none(v) for key, v in value.items()}
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    return value


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}"


def _num(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def format_report(report: dict[str, Any]) -> str:
    """The human-readable table of :func:`score`'s result."""
    k = report["k"]
    lines = [f"mode: {report['mode']}   format: {report['format']}   items: {report['n']}"]
    rates = f"{'LF0%':>6} {'LF1%':>6} {'either%':>8} {'neither%':>9} {'unparseable%':>13}"

    def rate_cells(top1: dict[str, float]) -> str:
        return (f"{_pct(top1['lf0']):>6} {_pct(top1['lf1']):>6} {_pct(top1['either']):>8} "
                f"{_pct(top1['neither']):>9} {_pct(top1['unparseable']):>13}")

    if report["zero_shot"]:
        lines += ["", "zero-shot (items without a ratio)",
                  f"{'type':<10} {'n':>6} {f'ZM_{k}%':>8}   top-1: {rates}"]
        for name, row in report["zero_shot"].items():
            zm = "n/a" if math.isnan(row["zm_k"]) else f"{row['zm_k']:.1f}"
            lines.append(f"{name:<10} {row['n']:>6} {zm:>8}          {rate_cells(row['top1'])}")
    if report["few_shot"]:
        lines += ["", "few-shot (items with a ratio; FDM range 0-2, FIM range 0-1, lower is better)",
                  f"{'type':<10} {'n':>6} {'ratios':>6} {'FDM':>6} {'FIM':>6} {'FIM n':>6}   top-1: {rates}"]
        for name, row in report["few_shot"].items():
            lines.append(
                f"{name:<10} {row['n']:>6} {len(row['ratios']):>6} {_num(row['fdm']):>6} "
                f"{_num(row['fim']):>6} {row['fim_n']:>6}          {rate_cells(row['top1'])}"
            )
    if not report["zero_shot"] and not report["few_shot"]:
        lines.append("no items")
    return "\n".join(lines)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    name = "<stdin>" if args.predictions == "-" else args.predictions
    try:
        if args.predictions == "-":
            items = read_items(sys.stdin, mode=args.mode, fmt=args.fmt)
        else:
            with open(args.predictions, encoding="utf-8") as handle:
                items = read_items(handle, mode=args.mode, fmt=args.fmt)
    except OSError as exc:
        return fail(f"cannot read {name}: {exc.strerror or exc}", parser)
    except UnicodeDecodeError:
        return fail(f"{name} is not UTF-8 text", parser)
    except PredictionsError as exc:
        return fail(f"{name} {exc}", parser)
    try:
        report = score(items, mode=args.mode, k=args.k, fmt=args.fmt)
    except MetricError as exc:
        return fail(str(exc), parser)
    if args.json:
        print(json.dumps(_nan_to_none(report), indent=2))
    else:
        print(format_report(report))
    return 0
